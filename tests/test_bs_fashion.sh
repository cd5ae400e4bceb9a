#!/bin/sh
# The Fashion-MNIST MLP written in BrainScript (configs/fashion-mlp-bs.cfg: DenseLayer,
# LinearLayer, Sequential, PerDimMeanVarNormalization over Mean and InvStdDev) against the
# same network from SimpleNetworkBuilder (configs/fashion-mlp.cfg) on 2 ranks: the same
# initial parameters (the same draws in the same order), so the same criteria every epoch
# (within float summation-order noise) and the same test accuracy (issue 16).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
command -v "${MPIEXEC:-mpiexec}" >/dev/null || { echo "test_bs_fashion: mpiexec not found"; exit 99; }
fashion_data test_bs_fashion
cd "$tmp"
fashion() { # NAME CONFIG [ARGS...]
    name=$1 config=$2
    shift 2
    mpi -n 2 "$T" configFile="$S/configs/$config" DataDir="$data" ModelDir="$tmp/$name" \
        train.SGD.maxEpochs=3 numCPUThreads=1 "$@" >"$name.out" 2>"$name.err" && ok ||
        { no "$name: exit $?"; tail -5 "$name.err"; }
}
# the gradient allreduce on both sides (a BrainScript network is no team; SimpleNetworkBuilder's
# team sums in another order)
fashion snb fashion-mlp.cfg train.SGD.ParallelTrain.shareModelInHost=false
fashion bs fashion-mlp-bs.cfg
sed -n 's/^Finished Epoch.*\[Training\] CrossEntropyWithSoftmax = \([0-9.]*\) .*EvalClassificationError = \([0-9.]*\) .*/\1 \2/p' snb.err >snb.txt
sed -n 's/^Finished Epoch.*\[Training\] ce = \([0-9.]*\) .*errs = \([0-9.]*\)% .*/\1 \2/p' bs.err |
    awk '{ printf "%s %.8f\n", $1, $2 / 100 }' >bs.txt
[ "$(wc -l <bs.txt)" -eq 3 ] && ok || no "3 epochs expected: $(cat bs.txt)"
close snb.txt bs.txt 1e-4 && ok || { no "the BrainScript network trains differently"; paste snb.txt bs.txt; }
e1=$(test_err snb.err)
e2=$(sed -n 's/^Final Results: .*errs = \([0-9.]*\)% \* 10000;.*/\1/p' bs.err)
echo "# test error after 3 epochs: SimpleNetworkBuilder $e1, BrainScript $e2 %"
awk -v a="$e1" -v b="$e2" 'BEGIN { d = a * 100 - b; if (d < 0) d = -d; exit !(a != "" && b != "" && a < 0.13 && d <= 0.3) }' &&
    ok || no "BrainScript test error $e2 % is not within 0.3 % of SimpleNetworkBuilder's $e1"
has bs.err "perplexity = "
finish bs_fashion
