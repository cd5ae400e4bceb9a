#!/bin/sh
# DataParallelASGD converges when workers are slow and uneven (issue 19): CNTK's
# SimpleMultiGPU config switched to DataParallelASGD (tests/data/simple2d-asgd.cfg, 4
# workers, syncPeriodPerWorker = 256) on CNTK's Simple2d data, with rank 1 slowed 3x
# (testSlowSeconds: twice a loaded worker's measured step) and 2 busy loops competing for
# the cores. Each of ASGD_RUNS runs (default 3; bench/asgd_converge.sh runs 10, about 30 s
# each on a loaded 2-core machine) must end within 1 % of one worker's test
# accuracy. CNTK's documentation's DataParallelASGD block (usePipeline,
# AdjustLearningRateAtBeginning with adjustCoefficient = 0.2) must learn: below 15 % test
# error (chance is 50 %); its warm-up keeps the first epochs slow, and it ended at 9.4 %
# once in CI's conditions, within 1 % in most runs. Before the fix 9 of 10 runs ended at
# chance and the docs' block did not learn at all.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
. "$S/tests/simple2d.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_asgd_converge: mpiexec not found"; exit 99; }
RUNS=${ASGD_RUNS:-3}
cd "$tmp"
simple2d_ctf 10000 12345 >train.ctf
simple2d_ctf 4000 777 >test.ctf
CFG=$S/tests/data/simple2d-asgd.cfg
PT=train.SGD.ParallelTrain
DOCS="$PT.DataParallelASGD=[syncPeriodPerWorker=256;usePipeline=true;AdjustLearningRateAtBeginning=[adjustCoefficient=0.2;adjustNBMiniBatch=1024]]"
# go NAME RANKS ARGS...: train and test; the log in NAME.err
go() {
    name=$1 n=$2; shift 2
    mpi -n "$n" "$T" configFile="$CFG" DataDir=. Dir="$name" numCPUThreads=1 "$@" >"$name.out" 2>"$name.err"
    st=$?
    [ $st -eq 0 ] && ok || { no "$name: exit $st"; tail -5 "$name.err"; }
}
go one 1 $PT.parallelizationMethod=None
e1=$(simple2d_err one.err)
echo "# one worker: test error $e1"
awk -v a="$e1" 'BEGIN { exit !(a != "" && a < 0.15) }' && ok || no "one worker did not learn ($e1)"
# within E1 ERR: ERR is at most one worker's error + 1 %
within() { awk -v a="$e1" -v b="$1" 'BEGIN { exit !(b != "" && b - a <= 0.01) }'; }

# the machine loaded: two busy loops on the cores, ended with the test
busy1= busy2=
trap 'kill $busy1 $busy2 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
sh -c 'while :; do :; done' & busy1=$!
sh -c 'while :; do :; done' & busy2=$!

# a loaded worker's step (rank 0's mean epoch time over its 400 local minibatches); rank 1
# then takes 3 such steps per minibatch
go calib 4
ec=$(simple2d_err calib.err)
within "$ec" && ok || no "ASGD (loaded) test error $ec is not within 1 % of one worker's $e1"
step=$(sed -n 's/^Finished Epoch.*epochTime=\([0-9.e-]*\)s.*/\1/p' calib.err |
    awk '{ t += $1 } END { s = NR ? t / NR / 400 : 0; if (s < 0.0005) s = 0.0005; printf "%.6f", s }')
slow=$(awk -v s="$step" 'BEGIN { printf "%.6f", 2 * s }')
echo "# a loaded worker's step ${step}s: rank 1 waits ${slow}s more after each minibatch"
SLOW="$PT.testSlowRank=1 $PT.testSlowSeconds=$slow"

i=0 bad=0 errs=
while [ $i -lt "$RUNS" ]; do
    i=$((i + 1))
    go run$i 4 $SLOW
    e=$(simple2d_err run$i.err)
    errs="$errs $e"
    within "$e" && ok || { bad=$((bad + 1)); no "run $i: ASGD test error $e is not within 1 % of one worker's $e1"
        grep -E '^Finished Epoch|staleness' run$i.err | sed 's/totalSamplesSeen.*//'; }
done
echo "# $RUNS runs, rank 1 slowed 3x, machine loaded: test errors$errs ($bad not within 1 % of $e1)"
grep 'staleness' run1.err | sed 's/^/# run 1: /'
# the slow worker is behind: some push saw at least 2 rounds of the others
awk '/staleness/ { if ($NF + 0 >= 6) hit = 1 } END { exit !hit }' run1.err && ok ||
    no "no push of run 1 was stale by 6 or more: rank 1 was not slow"

for k in 1 2; do
    go docs$k 4 $SLOW "$DOCS"
    e=$(simple2d_err docs$k.err)
    echo "# CNTK documentation's DataParallelASGD block, run $k: test error $e"
    awk -v e="$e" 'BEGIN { exit !(e < 0.15) }' && ok || { no "docs block run $k: test error $e: it did not learn (15 % or more)"
        grep -E '^Finished Epoch' docs$k.err | sed 's/totalSamplesSeen.*//'; }
done
finish asgd_converge
