#!/bin/sh
# elastic.sh: run a training under mpiexec and survive a lost worker (README "Surviving a
# lost worker"). When a rank dies by a signal (killed, out of memory, a crash) or a host's
# daemon is lost, the job is relaunched on the ranks (or hosts) that are left; the trainer
# resumes from the newest complete checkpoint (makeMode). A failure that a restart would
# not fix (the trainer's own exit 1, 2 or 3: bad input, usage, system failure) ends it.
#
#   scripts/elastic.sh [-n RANKS | --hostfile FILE] [--max-restarts K] [--min-ranks M]
#                      [--model PATH] [--mpiexec CMD] [--mpi-opt OPT]... [--] TRAINER ARGS...
#
# Exit status: 0 when the training finished; the trainer's status when it failed by itself;
# the last failure's status when the restarts ran out or fewer than --min-ranks are left;
# 2 for a usage error; 128+N when the launcher itself got signal N.
set -u

me=elastic
say() { echo "$me: $*" >&2; }
usage() {
    cat >&2 <<'EOF'
usage: elastic.sh [options] [--] TRAINER [ARGS...]
  -n, --np RANKS      ranks of the first launch (each lost rank is dropped)
  --hostfile FILE     Open MPI hostfile; a host whose rank died is dropped, and each launch
                      uses every slot of the hosts left (with -n: RANKS, then one less per loss)
  --max-restarts K    relaunch at most K times (default 3)
  --min-ranks M       give up when fewer than M ranks are left (default 1)
  --model PATH        the training's modelPath, to name the checkpoint a relaunch resumes from
  --mpiexec CMD       the launcher (default $MPIEXEC, else mpiexec)
  --mpi-opt OPT       one more mpiexec option, e.g. --oversubscribe (split at spaces; repeatable)
EOF
    exit 2
}

n='' hostfile='' max_restarts=3 min_ranks=1 model='' mpiexec=${MPIEXEC:-mpiexec} mpi_opts=''
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac; }
posint() { isnum "$1" && [ "$1" -ge 1 ]; }
while [ $# -gt 0 ]; do
    case $1 in
    -n | --np) posint "${2:-}" || usage; n=$2; shift 2 ;;
    --hostfile) [ -r "${2:-}" ] || usage; hostfile=$2; shift 2 ;;
    --max-restarts) isnum "${2:-}" || usage; max_restarts=$2; shift 2 ;;
    --min-ranks) posint "${2:-}" || usage; min_ranks=$2; shift 2 ;;
    --model) [ $# -ge 2 ] || usage; model=$2; shift 2 ;;
    --mpiexec) [ $# -ge 2 ] || usage; mpiexec=$2; shift 2 ;;
    --mpi-opt) [ $# -ge 2 ] || usage; mpi_opts="$mpi_opts $2"; shift 2 ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || usage
[ -n "$n" ] || [ -n "$hostfile" ] || usage

work=$(mktemp -d "${TMPDIR:-/tmp}/elastic.XXXXXX") || exit 3
child=''
cleanup() { rm -rf "$work"; }
stop() { # the launcher itself was told to stop: end the job, no restart
    say "got SIG$1: stopping the job"
    [ -n "$child" ] && [ -s "$work/mpipid" ] && kill -TERM "$(cat "$work/mpipid")" 2>/dev/null
    [ -n "$child" ] && wait "$child"
    cleanup
    exit "$2"
}
trap 'stop INT 130' INT
trap 'stop TERM 143' TERM
trap 'stop HUP 129' HUP
trap cleanup EXIT
if [ -n "$hostfile" ]; then
    cp "$hostfile" "$work/hosts" || exit 3
fi

# newest_ckp: the newest epoch E with modelPath.E and modelPath.E.ckp (0: none), or "?"
# without --model
newest_ckp() {
    [ -n "$model" ] || { echo '?'; return; }
    best=0
    for f in "$model".*.ckp; do
        [ -f "$f" ] || continue
        e=${f#"$model".}
        e=${e%.ckp}
        isnum "$e" && [ -f "$model.$e" ] && [ "$e" -gt "$best" ] && best=$e
    done
    echo "$best"
}

# launch ARGS...: one mpiexec run; its stderr goes on to ours and into $work/err, its status
# into $work/st, every rank's "rank pid host" into $work/pids
launch() {
    : >"$work/err"
    : >"$work/pids"
    rm -f "$work/st" "$work/mpipid"
    # shellcheck disable=SC2016 # expanded by each rank's shell
    set -- sh -c '{ echo "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-?}} $$ $(uname -n)" >>"$0"; } 2>/dev/null
        exec "$@"' \
        "$work/pids" "$@"
    if [ -n "$hostfile" ]; then
        set -- --hostfile "$work/hosts" ${ranks:+-n "$ranks"} "$@"
    else
        set -- -n "$ranks" "$@"
    fi
    # shellcheck disable=SC2086 # mpi_opts: options split at spaces, as documented
    {
        (
            $mpiexec $mpi_opts "$@" 2>&1 1>&4 4>&- &
            echo $! >"$work/mpipid"
            wait $!
            echo $? >"$work/st"
        ) | tee "$work/err" >&2
    } 4>&1 &
    child=$!
    wait "$child"
    child=''
    st=$(cat "$work/st" 2>/dev/null || echo 1)
}

# epoch_of: the epoch the log was in (its last "Starting Epoch E:" line), or "?"
epoch_of() {
    e=$(sed -n 's/^Starting Epoch \([0-9]*\):.*/\1/p' "$work/err" | tail -n 1)
    echo "${e:-?}"
}

ranks=$n
restarts=0
extra=''
while :; do
    on=''
    [ -z "$hostfile" ] || on=" on hosts $(awk 'NF && $1 !~ /^#/ { print $1 }' "$work/hosts" | tr '\n' ' ' | sed 's/ $//')"
    say "launching $([ -n "$ranks" ] && echo "$ranks ranks" || echo "every slot")$on${extra:+ (restart $restarts of $max_restarts)}"
    if [ -n "$extra" ]; then launch "$@" "$extra"; else launch "$@"; fi
    [ "$st" -eq 0 ] && { say "training finished${extra:+ after $restarts restart(s)}"; exit 0; }
    # Open MPI: "... process rank R with PID P on node H exited on signal S (Name)."
    line=$(grep -m 1 'process rank [0-9]* with PID [0-9]* on node .* exited on signal [0-9]*' "$work/err")
    lost=$(grep -A 3 -m 1 'lost communication with a remote daemon' "$work/err" |
        sed -n 's/.*Remote daemon:.* on node \([^ ]*\).*/\1/p' | head -n 1)
    if [ -n "$line" ]; then
        rank=$(echo "$line" | sed 's/.*process rank \([0-9]*\) .*/\1/')
        pid=$(echo "$line" | sed 's/.* with PID \([0-9]*\) .*/\1/')
        host=$(echo "$line" | sed 's/.* on node \([^ ]*\) exited.*/\1/')
        sig=$(echo "$line" | sed 's/.* exited on signal \([0-9]*\).*/\1/')
        [ "$pid" != 0 ] || pid=$(awk -v r="$rank" '$1 == r { p = $2 } END { print p }' "$work/pids")
        what="rank $rank (pid ${pid:-unknown}) died by signal $sig"
    elif [ -n "$lost" ]; then
        host=$lost
        what="host $host was lost"
    else
        case $st in
        1) why='bad input' ;;
        2) why='usage' ;;
        3) why='system failure' ;;
        *) why='not a lost worker' ;;
        esac
        say "the job failed with exit status $st ($why); a restart would not fix it: giving up"
        exit "$st"
    fi
    epoch=$(epoch_of)
    if [ "$restarts" -ge "$max_restarts" ]; then
        say "$what in epoch $epoch; no restarts left ($max_restarts used): giving up"
        exit "$st"
    fi
    if [ -n "$hostfile" ] && [ -n "${host:-}" ]; then
        awk -v h="$host" '$1 != h' "$work/hosts" >"$work/hosts.new"
        if cmp -s "$work/hosts" "$work/hosts.new"; then
            say "host $host is not named so in the hostfile: keeping every host"
        fi
        mv "$work/hosts.new" "$work/hosts"
        [ -s "$work/hosts" ] || { say "$what in epoch $epoch; no hosts left: giving up"; exit "$st"; }
        where="the hosts left"
    fi
    if [ -n "$ranks" ]; then
        ranks=$((ranks - 1))
        if [ "$ranks" -lt "$min_ranks" ]; then
            say "$what in epoch $epoch; $ranks ranks left, fewer than --min-ranks $min_ranks: giving up"
            exit "$st"
        fi
        [ -n "$hostfile" ] || where="$ranks ranks"
    fi
    restarts=$((restarts + 1))
    say "$what in epoch $epoch; restarting from checkpoint epoch $(newest_ckp) on $where (restart $restarts of $max_restarts)"
    extra=makeMode=true # resume from the newest checkpoint, whatever the config says
done
