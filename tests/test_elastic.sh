#!/bin/sh
# scripts/elastic.sh under real mpiexec: a 4-rank training loses rank 2 to SIGKILL in the
# middle of epoch 2; the launcher relaunches it on 3 ranks from the newest checkpoint, the
# job finishes all its epochs, exits 0, and its final model loads (action=test). A bad
# config fails once (exit 1, no restart loop); losing a rank below --min-ranks and running
# out of restarts give up with the failure's status. README "Surviving a lost worker".
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_elastic: mpiexec not found"; exit 99; }
E="$S/scripts/elastic.sh"
cd "$tmp"
toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
toy_cfg 1 >p.cfg
cat >>p.cfg <<'CFG'
test = [ action = test ; modelPath = $Dir$/m.dnn ; minibatchSize = 100
    reader = [ readerType = CNTKTextFormatReader ; file = d.ctf ; randomize = false
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
PT=train.SGD.ParallelTrain
# rank 0 busy-waits 50 ms after each of an epoch's 50 steps: an epoch takes 2.5 s or more (the
# kill below must land inside the epoch it waits for, on a loaded machine too)
SLOW="$PT.testSlowRank=0 $PT.testSlowSeconds=0.05 train.SGD.maxEpochs=4"

# elastic NAME OPTS ARGS...: the launcher with options OPTS (split at spaces) in the
# background (bounded), training with trainer arguments ARGS, Dir=NAME, log NAME.err
elastic() {
    name=$1 opts=$2; shift 2
    # shellcheck disable=SC2086
    timeout 150 sh "$E" --mpiexec "$MPIEXEC" --mpi-opt --allow-run-as-root --mpi-opt --oversubscribe \
        $opts "$T" configFile=p.cfg Dir="$name" "$@" >"$name.out" 2>"$name.err" &
    bg=$!
}
# rank_pid NAME RANK: the pid of the trainer process of Dir=NAME that is MPI rank RANK
rank_pid() {
    for d in /proc/[0-9]*; do
        { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -q "trainer configFile=p.cfg Dir=$1 " || continue
        { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "${d#/proc/}"; return; }
    done
}
# kill_in NAME RANK EPOCH: once NAME's log starts epoch EPOCH, SIGKILL rank RANK mid-epoch.
# The pid is found first (scanning /proc takes seconds on a loaded machine, under ASan
# longer than an epoch), so the kill follows the epoch's start within a poll.
kill_in() {
    i=0 pid=''
    until [ -n "$pid" ]; do
        i=$((i + 1))
        [ $i -lt 600 ] || { no "$1: rank $2 not found"; return; }
        pid=$(rank_pid "$1" "$2")
        [ -n "$pid" ] || sleep 0.1
    done
    i=0
    until grep -q "^Starting Epoch $3:" "$1.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 1200 ] || { no "$1 never started epoch $3"; return; }
        sleep 0.05
    done
    sleep 0.2
    kill -KILL "$pid" && ok || no "$1: rank $2 (pid $pid) could not be killed"
}
# status_is WANT NAME: the launcher's exit status is WANT (a number, or "failure")
status_is() {
    wait "$bg"
    st=$?
    if [ "$1" = failure ] && [ "$st" -ne 0 ] || [ "$st" = "$1" ]; then ok; else
        no "$2: launcher exited $st"
        grep '^elastic' "$2.err"
        tail -5 "$2.err"
    fi
}
pid='' bg=''

# lost worker: 4 ranks, rank 2 killed in epoch 2, restart on 3 ranks from epoch 1's checkpoint
elastic lost "-n 4 --model lost/m.dnn" $SLOW
kill_in lost 2 2
status_is 0 lost
grep -q "^elastic: rank 2 (pid $pid) died by signal 9 in epoch 2; restarting from checkpoint epoch 1 on 3 ranks (restart 1 of 3)$" lost.err && ok ||
    { no "no restart line"; grep '^elastic' lost.err; }
has lost.err "elastic: launching 3 ranks (restart 1 of 3)"
has lost.err "Starting from checkpoint. Loading network from 'lost/m.dnn.1'."
has lost.err "Resuming DataParallelSGD on 3 workers"
has lost.err "Starting minibatch loop, DataParallelSGD training (myRank = 0, numNodes = 3, numGradientBits = 32)"
has lost.err "Finished Epoch[ 4 of 4]: [Training] CrossEntropyWithSoftmax = "
has lost.err "totalSamplesSeen = 8000;"
has lost.err "elastic: training finished after 1 restart(s)"
[ "$(count lost.err 'Finished Epoch[ 2 of 4]: [Training]')" -eq 1 ] && ok || no "epoch 2 not finished exactly once"
[ -f lost/m.dnn ] && [ -f lost/m.dnn.4 ] && ok || no "no final model"
mpi -n 1 "$T" configFile=p.cfg Dir=lost command=test >test.out 2>test.err && ok || no "the final model does not load"
has test.err "Final Results: Minibatch[1-20]:"

# a bad config fails on every rank with exit 1: one launch, no restart
elastic bad "-n 3" train.SGD.learningRatesPerSample=-1
status_is 1 bad
[ "$(count bad.err 'elastic: launching')" -eq 1 ] && ok || no "bad config launched again"
has bad.err "elastic: the job failed with exit status 1 (bad input); a restart would not fix it: giving up"
# a usage error of the launcher itself
sh "$E" --max-restarts x "$T" >u.out 2>u.err
[ $? -eq 2 ] && ok || no "launcher usage error not exit 2"
has u.err "usage: elastic.sh"

# fewer ranks than --min-ranks left: gives up with the failure's status. Epochs of 5 s
# here (the kill ends the run): a loaded machine (the sanitized tier runs tests side by
# side) once saw "Starting Epoch 1" so late that the kill landed in epoch 2
elastic few "-n 2 --min-ranks 2" $PT.testSlowRank=0 $PT.testSlowSeconds=0.1 train.SGD.maxEpochs=4
kill_in few 1 1
status_is failure few
has few.err "elastic: rank 1 (pid $pid) died by signal 9 in epoch 1; 1 ranks left, fewer than --min-ranks 2: giving up"
# (on a failure, what the launcher and mpiexec said: has shows only the log's start)
grep -qF "died by signal 9 in epoch 1; 1 ranks left" few.err ||
    grep -E '^elastic|exited on signal|Exit code|^rank [0-9]+:' few.err | sed 's/^/  | /'
[ "$(count few.err 'elastic: launching')" -eq 1 ] && ok || no "relaunched below --min-ranks"
finish test_elastic
