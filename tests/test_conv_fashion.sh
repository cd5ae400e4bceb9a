#!/bin/sh
# A convolutional network in BrainScript on Fashion-MNIST (configs/fashion-conv-bs.cfg:
# ConvolutionalLayer, ReLU, MaxPoolingLayer, DenseLayer, LinearLayer over Input {28:28:1},
# the network of CNTK's GettingStarted/02_OneConv.cntk), 20000 samples an epoch:
#   - on 2 ranks (DataParallelSGD, 32 bits, distributed reading) it computes the same
#     updates as on 1 rank: the same criteria every epoch, within float summation order;
#   - it learns (test error below 25 % after 2 epochs of 20000 samples) and the test action
#     rebuilds the network from the model file;
#   - a makeMode restart resumes from the last epoch's checkpoint and trains the next one
#     as the uninterrupted run does.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
command -v "${MPIEXEC:-mpiexec}" >/dev/null || { echo "test_conv_fashion: mpiexec not found"; exit 99; }
fashion_data test_conv_fashion
cd "$tmp"
conv() { # NAME RANKS EPOCHS [ARGS...]
    name=$1 n=$2 epochs=$3
    shift 3
    mpi -n "$n" "$T" configFile="$S/configs/fashion-conv-bs.cfg" DataDir="$data" \
        ModelDir="$tmp/$name" train.SGD.maxEpochs="$epochs" train.SGD.epochSize=20000 \
        numCPUThreads=1 "$@" >"$name.out" 2>"$name.err" && ok ||
        { no "$name: exit $?"; tail -5 "$name.err"; }
    sed -n 's/^Finished Epoch.*\[Training\] ce = \([0-9.]*\) .*errs = \([0-9.]*\)% .*/\1 \2/p' \
        "$name.err" >"$name.txt"
}
conv one 1 2
conv two 2 2
[ "$(wc -l <two.txt)" -eq 2 ] && ok || no "2 epochs expected: $(cat two.txt)"
close one.txt two.txt 2e-3 && ok || { no "2 ranks train differently from 1"; paste one.txt two.txt; }
awk 'NR == 1 { a = $1 } NR == 2 { b = $1 } END { exit !(b < a) }' two.txt && ok ||
    no "the criterion did not fall: $(cat two.txt)"
e=$(sed -n 's/^Final Results: .*errs = \([0-9.]*\)% \* 10000;.*/\1/p' two.err)
echo "# test error after 2 epochs of 20000 samples, 2 ranks: $e %"
awk -v e="$e" 'BEGIN { exit !(e != "" && e < 25) }' && ok || no "test error $e % (25 % expected at most)"
# CNTK's count: its 02_OneConv (21 nodes in its baseline) less the Constant and product of
# its feature scaling
has two.err "Model has 19 nodes. Using CPU."
has two.err "Training 201834 parameters in 6 out of 6 parameter tensors"
# makeMode: the 1-rank run continued to epoch 3 from its checkpoint, against 3 epochs at once
conv one 1 3
has one.err "Starting from checkpoint. Loading network from '$tmp/one/model.dnn.2'."
conv three 1 3
tail -1 one.txt >resumed.txt
tail -1 three.txt >straight.txt
close resumed.txt straight.txt 1e-6 && ok ||
    { no "the resumed epoch 3 differs from the uninterrupted run"; paste resumed.txt straight.txt; }
finish conv_fashion
