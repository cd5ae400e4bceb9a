#!/bin/sh
# DataParallelSGD (32 bits) under real mpiexec -n 2 and -n 4: the same updates as one worker
# on the same global minibatches (SPEC 10), CNTK's start line, models saved once, warm start,
# method None on 2 ranks (CNTK's: each rank trains alone), and clear errors for bad values.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_parallel: mpiexec not found"; exit 99; }
cd "$tmp"
toy_ctf 'x * x + y > 0.8' >d.ctf
toy_cfg 1 >p.cfg
expect 0 "$T" configFile=p.cfg Dir=one
crit "$tmp/err" >one.txt
[ "$(wc -l <one.txt)" -eq 3 ] && ok || no "single worker: no epoch lines"
for n in 2 4; do
    mpi -n $n "$T" configFile=p.cfg Dir=n$n >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 0 ] && ok || { no "-n $n failed"; cat "$tmp/err"; }
    crit "$tmp/err" >n$n.txt
    if close one.txt n$n.txt; then ok; else no "-n $n epochs differ from one worker"; paste one.txt n$n.txt; fi
    has "$tmp/err" "Starting minibatch loop, DataParallelSGD training (myRank = 0, numNodes = $n, numGradientBits = 32), distributed reading is ENABLED."
    c=$(count "$tmp/err" "Finished Epoch[ 3 of 3]")
    [ "$c" -eq 1 ] && ok || no "-n $n: epoch line printed $c times"
    has "$tmp/err" "Actual gradient aggregation time: "
    [ -f n$n/m.dnn.3 ] && [ -f n$n/m.dnn ] && ok || no "-n $n: models missing"
done
# train then test in one run on 4 ranks: no rank may read the model before rank 0 wrote it
cat >>p.cfg <<'CFG'
test = [ action = test ; modelPath = $Dir$/m.dnn ; minibatchSize = 100
    reader = [ readerType = CNTKTextFormatReader ; file = d.ctf ; randomize = false
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
for round in 1 2 3; do
    mpi -n 4 "$T" configFile=p.cfg Dir=tt$round command=train:test traceLevel=0 >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 0 ] && ok || { no "train:test on 4 ranks failed (round $round)"; cat "$tmp/err"; }
    c=$(count "$tmp/err" "Final Results: Minibatch[1-20]:")
    [ "$c" -eq 1 ] && ok || no "Final Results printed $c times"
done
# warm start: epoch 1 on all the data on every rank, parallel from epoch 2
mpi -n 2 "$T" configFile=p.cfg Dir=warm train.SGD.ParallelTrain.parallelizationStartEpoch=2 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && ok || no "warm start failed"
grep -q "^Starting minibatch loop\.$" "$tmp/err" && ok || no "warm start: no plain loop line for epoch 1"
crit "$tmp/err" >warm.txt
if close one.txt warm.txt; then ok; else no "warm start differs from one worker"; paste one.txt warm.txt; fi
# bad settings are refused clearly, on every rank, promptly
mpi -n 2 "$T" configFile=p.cfg Dir=x train.SGD.ParallelTrain.DataParallelSGD.gradientBits=3 >"$tmp/out" 2>"$tmp/err"
[ $? -ne 0 ] && ok || no "gradientBits=3 accepted"
c=$(count "$tmp/err" "gradientBits: 3 bits is not possible; each value must be 1, 2, 4, 8, 16 or 32")
[ "$c" -eq 1 ] && ok || { no "gradientBits=3: error printed $c times"; cat "$tmp/err"; }
# method None on 2 ranks, as in CNTK: every rank trains on all the data (one worker's
# numbers), rank 0 writes the models (everyRankSavesModel: rank 1's copy is the same)
mpi -n 2 "$T" configFile=p.cfg Dir=none train.SGD.ParallelTrain.parallelizationMethod=None \
    train.SGD.ParallelTrain.everyRankSavesModel=true >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && ok || { no "method None on 2 ranks failed"; cat "$tmp/err"; }
crit "$tmp/err" >none.txt
if close one.txt none.txt; then ok; else no "None on 2 ranks differs from one worker"; paste one.txt none.txt; fi
[ "$(grep -c '^Starting minibatch loop\.$' "$tmp/err")" -eq 3 ] && ok || no "None: no plain loop lines"
cmp -s none/m.dnn.3 none/m.dnn.3.rank1 && ok || no "None: rank 1's model differs from rank 0's"
finish parallel
