#!/bin/sh
# A checkpoint written on N ranks resumes on M ranks at an epoch boundary, for every
# parallel method, both ways (2 -> 4, 4 -> 2, 2 -> 1). README "Surviving a lost worker".
#
# The exact statement: a checkpoint holds nothing that depends on the rank count (the
# model, the learner state, the counters and the engine's state, all equal on every rank at
# an epoch's end), so a resume on M ranks is a function of the checkpoint alone. Checked
# where two runs on different rank counts provably reach the same checkpoint: in a warm
# start (parallelizationStartEpoch=2) every rank trains epoch 1 on all the data. There the
# checkpoints of 1, 2 and 4 ranks are byte-identical, and resuming one on M ranks ends with
# the same model file as an uninterrupted M-rank run (deterministic methods; ASGD on one
# rank). Then from a checkpoint of a parallel epoch: each method resumes on M ranks, says
# what it carried over, finishes, and its ranks agree.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_rescale: mpiexec not found"; exit 99; }
cd "$tmp"
toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
toy_cfg 1 >p.cfg
# One BLAS thread on every rank count: by default one rank alone gets both cores' BLAS
# threads, and cpuGemm=auto then takes OpenBLAS, where ranks on one core each take
# partrain's AVX-512 kernel (on such CPUs); the two round differently, which is a matter of
# the kernel, not of what a checkpoint holds.
echo "numCPUThreads = 1" >>p.cfg
PT=train.SGD.ParallelTrain
DP32="$PT.parallelizationMethod=DataParallelSGD"
DP1="$PT.parallelizationMethod=DataParallelSGD $PT.DataParallelSGD=[gradientBits=1]"
MA="$PT.parallelizationMethod=ModelAveragingSGD $PT.ModelAveragingSGD=[blockSizePerWorker=150]"
# no reset: the learner's momentum survives the syncs, the harder case
BM="$PT.parallelizationMethod=BlockMomentumSGD $PT.BlockMomentumSGD=[blockSizePerWorker=150;blockMomentumPerSync=0.9;resetSGDMomentum=false]"
AS="$PT.parallelizationMethod=DataParallelASGD $PT.DataParallelASGD=[syncPeriodPerWorker=150]"
E1=train.SGD.maxEpochs=1
E2=train.SGD.maxEpochs=2

# resume FROM TO RANKS ARGS...: copy run FROM's directory to TO and finish it on RANKS ranks
resume() {
    from=$1 to=$2 n=$3; shift 3
    rm -rf "$to" && cp -r "$from" "$to" && rm -f "$to/m.dnn"
    run "$to" "$n" "$@"
    has "$to.err" "Starting from checkpoint. Loading network from '$to/m.dnn.$(ls "$from" | sed -n 's/^m\.dnn\.\([0-9]*\)\.ckp$/\1/p')'."
}
# agree NAME RANKS: every rank's model of epoch 3 equals rank 0's (everyRankSavesModel)
agree() {
    for k in $(seq 1 $(($2 - 1))); do
        cmp -s "$1/m.dnn.3" "$1/m.dnn.3.rank$k" && ok || no "$1: rank $k's model differs from rank 0's"
    done
}
# same A B: the final model files are equal bit for bit
same() { cmp -s "$1/m.dnn" "$2/m.dnn" && ok || { no "$2's model differs from $1's"; paste "$1.txt" "$2.txt"; }; }

# ---- warm start: the checkpoint does not depend on the rank count, the resume is exact
W="$PT.parallelizationStartEpoch=2"
for m in DP32 DP1 MA BM AS; do
    eval "M=\$$m"
    run w$m.1 1 $M $W $E1
    run w$m.2 2 $M $W $E1
    run w$m.4 4 $M $W $E1
    cmp -s w$m.1/m.dnn.1.ckp w$m.2/m.dnn.1.ckp && ok || no "$m: 1- and 2-rank checkpoints differ"
    cmp -s w$m.2/m.dnn.1.ckp w$m.4/m.dnn.1.ckp && ok || no "$m: 2- and 4-rank checkpoints differ"
    run f$m.1 1 $M $W
    resume w$m.2 r$m.21 1 $M $W
    same f$m.1 r$m.21
    resume w$m.4 r$m.41 1 $M $W
    same f$m.1 r$m.41
    [ $m = AS ] && continue # several asynchronous workers are not deterministic
    run f$m.2 2 $M $W
    run f$m.4 4 $M $W
    resume w$m.2 r$m.24 4 $M $W
    same f$m.4 r$m.24
    resume w$m.4 r$m.42 2 $M $W
    same f$m.2 r$m.42
done
# ASGD resumed inside a longer warm phase: the checkpoint it writes there holds the model
# of that epoch as the server model (not the one it resumed from)
W3="$PT.parallelizationStartEpoch=3"
run vAS.2 2 $AS $W3 $E1
run gAS.1 1 $AS $W3
resume vAS.2 vAS.21 1 $AS $W3 $E2
resume vAS.21 vAS.211 1 $AS $W3
same gAS.1 vAS.211
has rDP32.24.err "Resuming DataParallelSGD on 4 workers: the checkpoint holds no per-rank state"
has rMA.42.err "Resuming ModelAveragingSGD on 2 workers: the checkpoint holds no per-rank state"
has rBM.24.err "Resuming BlockMomentumSGD on 4 workers: block momentum and the model after the last sync carried over from the checkpoint (block momentum per sync now 0.9000)"
has rAS.21.err "Resuming DataParallelASGD on 1 workers: the checkpoint's server model (722 parameters) resharded over 1 ranks"

# ---- from a parallel epoch: 2 -> 4, 4 -> 2, 2 -> 1; every rank ends with the same model
# (everyRankSavesModel), the epoch totals go on, the log says what carried over
for m in DP32 DP1 MA BM AS; do
    eval "M=\$$m"
    run p$m.2 2 $M $E2
    run p$m.4 4 $M $E2
    resume p$m.2 q$m.24 4 $M $PT.everyRankSavesModel=true
    agree q$m.24 4
    resume p$m.4 q$m.42 2 $M $PT.everyRankSavesModel=true
    agree q$m.42 2
    resume p$m.2 q$m.21 1 $M
    for q in q$m.24 q$m.42 q$m.21; do
        has $q.err "Finished Epoch[ 3 of 3]: [Training] CrossEntropyWithSoftmax = "
        has $q.err "totalSamplesSeen = 6000;"
        [ -f $q/m.dnn ] && ok || no "$q: no final model"
    done
done
has qDP1.24.err "Resuming DataParallelSGD on 4 workers: the checkpoint holds no per-rank state (quantization residuals start at zero in every epoch)"
has qDP1.21.err "Resuming DataParallelSGD on 1 workers"
has qMA.21.err "Resuming ModelAveragingSGD on 1 workers"
has qBM.42.err "Resuming BlockMomentumSGD on 2 workers: block momentum and the model after the last sync carried over from the checkpoint (block momentum per sync now 0.9000)"
has qBM.21.err "Resuming BlockMomentumSGD on 1 workers: block momentum and the model after the last sync"
has qAS.24.err "Resuming DataParallelASGD on 4 workers: the checkpoint's server model (722 parameters) resharded over 4 ranks ("
has qAS.42.err "Resuming DataParallelASGD on 2 workers: the checkpoint's server model (722 parameters) resharded over 2 ranks (361 on this one); every worker continues at sync "
has qAS.21.err "resharded over 1 ranks (722 on this one)"
# the resumed data-parallel runs still learn
for q in qDP32.24 qDP32.42 qDP1.24 qDP1.42; do learns $q 0.25; done
finish test_rescale
