#!/bin/sh
# A local Slurm on the simulated cluster of scripts/cluster.sh: slurmctld on h1, one slurmd
# per host (each in its host's network and UTS namespaces), munged on h1 (its socket is a
# file, reached from every host). Root only; Debian's slurmctld, slurmd, slurm-client and
# munge. Nothing listens outside the hosts' namespaces.
#
#   slurm-cluster.sh up N          cluster.sh up N, then munge and Slurm on h1..hN (partition
#       "sim", PT_SLURM_CPUS CPUs per node, default 2); waits until sinfo shows every node
#       idle; prints PT_CLUSTER_DIR=... (export it for the other sub-commands)
#   slurm-cluster.sh run CMD...    run CMD on h1 with SLURM_CONF set (sbatch, srun, sinfo...)
#   slurm-cluster.sh logs          print the tails of the daemons' logs
#   slurm-cluster.sh check         exit 77 with the reason when this machine cannot run it
#   slurm-cluster.sh down          stop the daemons and remove everything (cluster.sh down)
#
# The configuration, keys, spool and state directories and logs live in
# $PT_CLUSTER_DIR/slurm (slurm.conf there). cluster.sh's reaper (PT_CLUSTER_TTL) also ends
# the daemons, as they run inside the hosts' namespaces. Slurm commands must run on a host
# (`run`): outside the namespaces there is no route to the controller.
# Exit status: 0 ok, 1 failure, 2 usage, 77 this machine cannot run a simulated cluster.
set -u
me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
C=$(dirname "$me")/cluster.sh
die() { echo "slurm-cluster.sh: $*" >&2; exit 1; }
usage() { sed -n '7,13s/^# \{0,1\}//p' "$me" >&2; exit 2; }

can_run() {
    "$C" check || exit $?
    for t in munged mungekey slurmctld slurmd sinfo sbatch srun; do
        command -v "$t" >/dev/null 2>&1 ||
            die "$t not found (apt-get install slurmctld slurmd slurm-client munge)"
    done
}

state() {
    [ -n "${PT_CLUSTER_DIR:-}" ] || die "PT_CLUSTER_DIR is not set (slurm-cluster.sh up prints it)"
    dir=$PT_CLUSTER_DIR s=$PT_CLUSTER_DIR/slurm
    [ "${1:-}" = new ] || [ -f "$s/slurm.conf" ] || die "$dir holds no Slurm (slurm-cluster.sh up first)"
}

# on HOST CMD...: CMD on HOST with the cluster's Slurm configuration
on() {
    h=$1; shift
    "$C" exec "$h" env SLURM_CONF="$s/slurm.conf" "$@"
}

write_conf() {
    n=$1 cpus=${PT_SLURM_CPUS:-2}
    {
        cat <<EOF
# written by scripts/slurm-cluster.sh for the simulated hosts h1..h$n
ClusterName=ptsim
SlurmctldHost=h1(10.77.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$s/munge/munge.sock
StateSaveLocation=$s/ctld
SlurmdSpoolDir=$s/spool-%n
TmpFS=$s/tmp-%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd-%n.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
KillWait=5
MinJobAge=600
EOF
        i=1
        while [ "$i" -le "$n" ]; do
            echo "NodeName=h$i NodeAddr=10.77.0.$i CPUs=$cpus State=UNKNOWN"
            i=$((i + 1))
        done
        echo "PartitionName=sim Nodes=h[1-$n] Default=YES MaxTime=INFINITE State=UP"
    } >"$s/slurm.conf"
}

# wait_idle N: sinfo shows N idle nodes (60 s at most)
wait_idle() {
    i=0
    while [ $i -lt 120 ]; do
        idle=$(on h1 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
        [ "$idle" -eq "$1" ] && return 0
        sleep 0.5
        i=$((i + 1))
    done
    on h1 sinfo -N >&2
    logs >&2
    die "after 60 s, $idle of $1 nodes are idle"
}

# running PID: PID is a process, not a zombie (init reaps orphaned daemons late)
running() {
    [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null
}

# daemon PIDFILE: the pid in PIDFILE (munged.pid, slurmctld.pid, slurmd-hI.pid), if that
# process is still the daemon named by the file (a stale file's pid may be reused)
daemon() {
    p=$(cat "$1" 2>/dev/null) || return 1
    name=$(basename "$1" .pid)
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "${name%%-*}" ] && echo "$p"
}

logs() {
    for f in "$s"/*.log; do
        [ -f "$f" ] || continue
        echo "== $f"
        tail -15 "$f"
    done
}

cmd_up() {
    [ $# -eq 1 ] || usage
    n=$1
    case "$n" in [2-8]) ;; *) echo "slurm-cluster.sh: up N: N must be 2..8, not '$n'" >&2; exit 2 ;; esac
    can_run
    # the state directory (new unless given; it must not hold a cluster yet)
    PT_CLUSTER_DIR=$("$C" new-dir) || exit 1
    export PT_CLUSTER_DIR
    state new
    # from here on, a failure or a signal removes what was made; cluster.sh up runs as a
    # child that a signal to this script also ends (it cleans up after itself)
    up=""
    trap 'cmd_down' EXIT
    trap '[ -n "$up" ] && kill "$up" 2>/dev/null && wait "$up"; exit 1' HUP INT TERM
    "$C" up "$n" >"$dir/up.out" &
    up=$!
    wait "$up" || { up=""; exit 1; }
    up=""
    mkdir -m 755 "$s" "$s/munge" && mkdir -m 700 "$s/ctld" || die "cannot make $s"
    mungekey -c -k "$s/munge.key" -b 1024 || die "mungekey failed"
    write_conf "$n"
    # --force: munged wants a socket path that everybody may traverse; the state
    # directory is root's alone (only root uses this Slurm)
    "$C" exec h1 munged --force --socket="$s/munge/munge.sock" --key-file="$s/munge.key" \
        --pid-file="$s/munged.pid" --seed-file="$s/munged.seed" --log-file="$s/munged.log" \
        --origin=10.77.0.1 || { logs >&2; die "munged did not start on h1"; }
    on h1 slurmctld -c || { logs >&2; die "slurmctld did not start on h1"; }
    i=1
    while [ "$i" -le "$n" ]; do
        mkdir -p "$s/spool-h$i" "$s/tmp-h$i" || die "cannot make h$i's directories in $s"
        on "h$i" slurmd -N "h$i" || { logs >&2; die "slurmd did not start on h$i"; }
        i=$((i + 1))
    done
    wait_idle "$n"
    rm -f "$dir/up.out"
    trap - EXIT HUP INT TERM
    echo "PT_CLUSTER_DIR=$dir"
}

cmd_down() {
    state new
    if [ -d "$s" ]; then
        # TERM first (slurmd ends its steps), then cluster.sh down kills what is left
        for f in "$s"/*.pid; do
            p=$(daemon "$f") && kill "$p" 2>/dev/null
        done
        i=0
        while [ $i -lt 20 ]; do
            left=0
            for f in "$s"/*.pid; do
                p=$(daemon "$f") && running "$p" && left=1
            done
            [ $left -eq 0 ] && break
            sleep 0.25
            i=$((i + 1))
        done
    fi
    made=0
    [ -f "$dir/made" ] && made=1
    "$C" down
    rm -rf "$s"
    rm -f "$dir/up.out"
    [ $made -eq 1 ] && rm -f "$dir/made" && rmdir "$dir" 2>/dev/null
    return 0
}

[ $# -ge 1 ] || usage
c=$1
shift
case "$c" in
up) cmd_up "$@" ;;
down) cmd_down ;;
check) can_run ;;
logs) state; logs ;;
run)
    [ $# -ge 1 ] || usage
    state
    exec timeout -k 5 "${PT_CLUSTER_TIMEOUT:-900}" "$C" exec h1 env SLURM_CONF="$s/slurm.conf" "$@"
    ;;
*) usage ;;
esac
