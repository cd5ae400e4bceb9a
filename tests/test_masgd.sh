#!/bin/sh
# ModelAveragingSGD and BlockMomentumSGD under real mpiexec: the engines step by step
# against references (tests/test_masgd, 2 and 4 ranks), then the trainer: CNTK's start and
# statistics lines, one worker of ModelAveragingSGD equals plain SGD, every rank's model
# file after every epoch equal to rank 0's, unequal shares (a data set of 1993 samples on 3
# ranks), a resumed run continuing exactly (block momentum in the checkpoint), warm start,
# local progress counts with global epoch totals, and bad keys.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_masgd: mpiexec not found"; exit 99; }
P=$(cd "${top_builddir:-.}" && pwd)/tests/test_masgd
[ -x "$P" ] || { echo "test_masgd: $P not built (make check builds it)"; exit 99; }
for n in 2 4; do
    mpi -n $n "$P" >"$tmp/out" 2>"$tmp/err" && ok || { no "test_masgd -n $n failed"; grep -v '^ok ' "$tmp/out" | head -20; head -5 "$tmp/err"; }
    c=$(grep -c '^ok ' "$tmp/out")
    [ "$c" -ge 141 ] && ok || no "test_masgd -n $n: only $c checks passed"
    echo "# test_masgd -n $n: $c checks passed"
done

cd "$tmp"
toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
toy_cfg 1 >p.cfg
PT=train.SGD.ParallelTrain
BM="$PT.parallelizationMethod=BlockMomentumSGD"
MA="$PT.parallelizationMethod=ModelAveragingSGD"

# start lines (CNTK's formats), default block momentum 1 - 1/N, statistics lines
run bm 2 "$BM" "$PT.BlockMomentumSGD=[blockSizePerWorker=100]" $PT.syncPerfStats=4 $PT.everyRankSavesModel=true
has bm.err "Parallel training (2 workers) using BlockMomentumSGD with block momentum = 0.5000, block momentum time constant (per worker) = 144.2695, block learning rate = 1.0000, block size per worker = 100 samples, using Nesterov-style block momentum, resetting SGD momentum after sync."
[ "$(count bm.err 'using BlockMomentumSGD')" -eq 3 ] && ok || no "BMUF start line not once per epoch"
has bm.err "Starting minibatch loop, distributed reading is ENABLED."
hasnt bm.err "DataParallelSGD training"
has bm.err "		(model aggregation stats): 1-th sync point was hit, introducing a "
# about 10 syncs an epoch; syncPerfStats = 4: the first 5 and every 4th are reported
has bm.err "		(model aggregation stats): 10-th sync point was hit, introducing a "
has bm.err "		(model aggregation stats) 5-th sync: "
has bm.err "samples processed by 2 workers ("
has bm.err "		(model aggregation stats) 8-th sync: totalThroughput = "
hasnt bm.err "		(model aggregation stats) 6-th sync: "
hasnt bm.err "		(model aggregation stats) 7-th sync: "
identical bm 2 3
# explicit time constant over blockSize = 2 x 200: bm = exp(-400/800); no Nesterov, no reset
run bmtc 2 "$BM" "$PT.BlockMomentumSGD=[blockSizePerWorker=200;blockMomentumAsTimeConstant=800;useNesterovMomentum=false;resetSGDMomentum=false;blockLearningRate=0.8]"
has bmtc.err "block momentum = 0.6065, block momentum time constant (per worker) = 400.0000, block learning rate = 0.8000, block size per worker = 200 samples, ."
# blockSize (total) gives the per-worker block
run bmtot 2 "$BM" "$PT.BlockMomentumSGD=[blockSize=1000]"
has bmtot.err "block size per worker = 500 samples"

# ModelAveragingSGD: the start line once, momentum kept, 4 ranks bit-identical
# (local SGD without momentum learns this toy in 3 epochs on 4 workers, as with BMUF below)
L="train.SGD.learningRatesPerSample=0.05 train.SGD.momentumPerMB=0"
run ma 4 "$MA" "$PT.ModelAveragingSGD=[blockSizePerWorker=100]" $PT.everyRankSavesModel=true $L
has ma.err "Parallel training (4 workers) using ModelAveraging"
[ "$(count ma.err 'using ModelAveraging')" -eq 1 ] && ok || no "MA start line not once"
identical ma 4 3
learns ma 0.25
# BMUF learns this problem as one worker does, and its 4 ranks agree after every epoch
run base 1
learns base 0.10
run bm4 4 "$BM" "$PT.BlockMomentumSGD=[blockSizePerWorker=100]" $PT.everyRankSavesModel=true $L
identical bm4 4 3
learns bm4 0.05

# one worker: ModelAveragingSGD is plain SGD, exactly (same criteria, same model bytes)
run ma1 1 "$MA" "$PT.ModelAveragingSGD=[syncPeriod=120]"
[ "$(cat base.txt)" = "$(cat ma1.txt)" ] && ok || { no "MA on 1 worker differs from SGD"; paste base.txt ma1.txt; }
cmp -s base/m.dnn ma1/m.dnn && ok || no "MA on 1 worker: model file differs from SGD's"
run bm1 1 "$BM" "$PT.BlockMomentumSGD=[blockSizePerWorker=120]"
has bm1.err "Parallel training (1 workers) using BlockMomentumSGD with block momentum = 0.0000, block momentum time constant (per worker) = 0.0000"

# progress lines count this rank's samples; Finished Epoch counts all (sequence mode deals
# 20 of every 40 to each of 2 ranks)
run prog 2 "$MA" train.SGD.numMBsToShowResult=10 train.reader.distributionMode=sequence
has prog.err "Epoch[ 1 of 3]-Minibatch[   1-  10]: CrossEntropyWithSoftmax = "
has prog.err "* 200; EvalClassificationError = "
hasnt prog.err "* 400; EvalClassificationError = "
grep -q "Finished Epoch\[ 1 of 3\]: \[Training\] CrossEntropyWithSoftmax = [0-9.]* \* 2000; EvalClassificationError = [0-9.]* \* 2000; totalSamplesSeen = 2000;" prog.err && ok || no "Finished Epoch is not global"

# unequal shares: 1993 samples in chunks over 3 ranks; early ranks keep joining syncs
head -n 1993 d.ctf >odd.ctf
for m in "$BM" "$MA"; do
    run odd 3 "$m" train.reader.file=odd.ctf train.reader.chunkSizeInBytes=3000 "$PT.BlockMomentumSGD=[blockSizePerWorker=150]" "$PT.ModelAveragingSGD=[blockSizePerWorker=150]" $PT.everyRankSavesModel=true
    has odd.err "totalSamplesSeen = 5979;"
    has odd.err "Epoch[ 3 of 3]: [Training] CrossEntropyWithSoftmax = "
    identical odd 3 3
    rm -rf odd
done

# resume: a run stopped after epoch 2 continues with the block momentum of its checkpoint
# and prints the same epoch 3 and 4 lines as an uninterrupted run; without the checkpoint
# (state reset, with a warning) epoch 3 differs
R="$BM $PT.BlockMomentumSGD=[blockSizePerWorker=150] train.SGD.maxEpochs=4"
run full 2 $R
run part 2 $R train.SGD.maxEpochs=2
run part 2 $R
has part.err "Starting from checkpoint. Loading network from 'part/m.dnn.2'."
[ "$(tail -n 2 full.txt)" = "$(cat part.txt)" ] && ok || { no "resumed BMUF run differs"; tail -n 2 full.txt; cat part.txt; }
run lost 2 $R train.SGD.maxEpochs=2
rm lost/m.dnn.2.ckp
run lost 2 $R
has lost.err "without its checkpoint: learner state reset"
[ "$(tail -n 2 full.txt)" != "$(cat lost.txt)" ] && ok || no "block momentum made no difference"
# a checkpoint of another method: the block state starts afresh, with a warning
run other 2 $PT.parallelizationMethod=DataParallelSGD train.SGD.maxEpochs=2
run other 2 $R
has other.err "has no BlockMomentumSGD state (written by another method?): it starts afresh"

# warm start: epoch 1 on all data everywhere (as one worker), BMUF from epoch 2
run warm 2 "$BM" "$PT.BlockMomentumSGD=[blockSizePerWorker=200]" $PT.parallelizationStartEpoch=2
[ "$(count warm.err 'using BlockMomentumSGD')" -eq 2 ] && ok || no "warm start: BMUF lines"
[ "$(head -n 1 warm.txt)" = "$(head -n 1 base.txt)" ] && ok || no "warm start epoch 1 differs from one worker"
# distributedMBReading=false: each rank reads whole minibatches and keeps its share
run nodist 2 "$BM" "$PT.BlockMomentumSGD=[blockSizePerWorker=200]" $PT.distributedMBReading=false $PT.everyRankSavesModel=true
has nodist.err "Starting minibatch loop."
has nodist.err "totalSamplesSeen = 6000;"
identical nodist 2 3
# perfStatsFile: one JSON line per sync on each rank
run perf 2 "$MA" "$PT.ModelAveragingSGD=[blockSizePerWorker=250]" $PT.perfStatsFile=perf/s.jsonl
c0=$(count perf/s.jsonl '"method":"ModelAveragingSGD"') c1=$(count perf/s.jsonl.rank1 '"method":"ModelAveragingSGD"')
[ "$c0" -ge 12 ] && [ "$c0" = "$c1" ] && ok || no "perfStatsFile: $c0 and $c1 sync lines"

# bad keys
mpi -n 2 "$T" configFile=p.cfg Dir=bad "$BM" "$PT.BlockMomentumSGD=[blockSize=100;blockSizePerWorker=50]" >"$tmp/out" 2>bad.err
[ $? -ne 0 ] && ok || no "blockSize with blockSizePerWorker accepted"
has bad.err "blockSize"
mpi -n 2 "$T" configFile=p.cfg Dir=bad "$BM" "$PT.BlockMomentumSGD=[blockMomentumPerSync=0.5;blockMomentumAsTimeConstant=100]" >"$tmp/out" 2>bad.err
[ $? -ne 0 ] && ok || no "two block momentum keys accepted"
has bad.err "blockMomentumPerSync"
mpi -n 2 "$T" configFile=p.cfg Dir=bad "$BM" "$PT.BlockMomentumSGD=[blockMomentumPerSync=1]" >"$tmp/out" 2>bad.err
[ $? -ne 0 ] && ok || no "block momentum 1 accepted"
has bad.err "blockMomentumPerSync"
finish masgd
