#!/bin/sh
# Batch normalization in BrainScript end to end (BatchNormalizationLayer as CNTK's
# 04_OneConvBN uses it, spatial after a convolution and per row after a dense layer; the
# BatchNormalization node with its own parameters), on 6 x 6 images whose class is the half
# a bright square lies in: it learns on 1 rank and on 2 (DataParallelSGD: the ranks' running
# statistics are averaged at each epoch's end, else the models-agree check fails; the
# methods with a model per worker are refused), evaluation uses the running statistics (a
# test with minibatches of one sample, where a sample's own statistics would erase it),
# dumpNode, a makeMode restart, and the errors that name the file, line and column.
# The arithmetic is checked by tests/test_math_bn.c (the definition, and the gradients
# against central differences).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_bn: mpiexec not found"; exit 99; }
cd "$tmp"
square_ctf 7 20 >img.ctf
square_cfg >bn.cfg <<'CFG'
command = train:test
deviceId = -1
traceLevel = 1
train = [
    action = train
    modelPath = $Dir$/m.dnn
    BrainScriptNetworkBuilder = [
        features = Input {6:6:1} ; labels = Input {2}
        model = Sequential (
            ConvolutionalLayer {4, (3:3), pad = true, bias = false} :
            BatchNormalizationLayer {spatialRank = 2, normalizationTimeConstant = 0} : ReLU :
            MaxPoolingLayer {(2:2), stride = (2:2)} :
            LinearLayer {8} : BatchNormalizationLayer {normalizationTimeConstant = 0} : ReLU :
            LinearLayer {2})
        z = model (features)
        ce = CrossEntropyWithSoftmax (labels, z) ; errs = ClassificationError (labels, z)
        criterionNodes = (ce) ; evaluationNodes = (errs) ; outputNodes = (z)
    ]
    SGD = [ maxEpochs = 4 ; minibatchSize = 20 ; learningRatesPerSample = 0.02
        momentumPerMB = 0.9 ; numMBsToShowResult = 1000
        ParallelTrain = [ parallelizationMethod = DataParallelSGD
            DataParallelSGD = [ gradientBits = 32 ] ] ]
    @READER@
]
test = [
    action = test
    modelPath = $Dir$/m.dnn
    minibatchSize = 1
    @TESTREADER@
]
CFG
errs() { sed -n 's/^Finished Epoch.*\[Training\] ce = \([0-9.]*\) .*errs = \([0-9.]*\)% .*/\1 \2/p' "$1"; }
test_errs() { sed -n 's/^Final Results: .*errs = \([0-9.]*\)% \* 600;.*/\1/p' "$1"; }
# the inputs sit at 20 with a spread of 0.2 (the square adds 1): without normalization
# this learning rate gets nowhere in 4 epochs; with it, under 5 % errors. The running
# statistics are the last minibatch's (time constant 0): with a longer one they lag the
# model, which moves fast at this rate (and twice as many steps behind on 2 ranks, each of
# which counts its own half of a minibatch, as in CNTK); the node below has one of 50.
# (img.ctf is one chunk: in CNTK's distributionMode = chunk one rank reads it all, and the
# other's statistics get no weight; with sequence both read half of every minibatch)
for run in "1 DataParallelSGD chunk" "2 DataParallelSGD chunk" "2 DataParallelSGD sequence"; do
    set -- $run
    d=r$1$2$3
    mpi -n "$1" "$T" configFile=bn.cfg Dir=$d traceLevel=2 train.reader.distributionMode=$3 \
        train.SGD.ParallelTrain.parallelizationMethod=$2 >$d.out 2>$d.err &&
        ok || { no "$d: exit $?"; tail -5 $d.err; }
    errs $d.err >$d.txt
    awk 'END { exit !(NR == 4 && $2 < 5) }' $d.txt && ok || no "$d: last epoch: $(cat $d.txt)"
    # minibatches of one sample: only the running statistics can normalize them
    e=$(test_errs $d.err)
    awk -v e="$e" 'BEGIN { exit !(e != "" && e < 5) }' && ok || no "$d: test errors '$e' % (5 % at most)"
    [ "$1" = 1 ] || has $d.err "Epoch 4: the models of all 2 ranks are identical"
done
# the running statistics are in the model, not among the trained parameters
has r1DataParallelSGDchunk.err "Training 374 parameters in 9 out of 9 parameter tensors"
# dumpNode lists the states as CNTK does; the count is the samples of the 4 epochs
expect 0 "$T" command=dump "dump=[action=dumpNode]" modelPath=r1DataParallelSGDchunk/m.dnn deviceId=-1
f=r1DataParallelSGDchunk/m.dnn.__AllNodes__.txt
has $f "model.runVariance=LearnableParameter [4,1]   learningRateMultiplier=0.000000  NeedsGradient=false"
has $f "model.scale=LearnableParameter [4,1]   learningRateMultiplier=1.000000  NeedsGradient=true"
[ "$(sed -n '/^model.runCount=/{n;p}' $f)" = " 2400" ] && ok || no "runCount: $(grep -A1 '^model.runCount' $f)"
# makeMode: continued to epoch 6 from the checkpoint, the running statistics with it
expect 0 "$T" configFile=bn.cfg Dir=r1DataParallelSGDchunk train.SGD.maxEpochs=6
has "$tmp/err" "Starting from checkpoint. Loading network from 'r1DataParallelSGDchunk/m.dnn.4'."
[ "$(errs "$tmp/err" | wc -l)" -eq 2 ] && ok || no "epochs 5 and 6 expected"
e=$(test_errs "$tmp/err")
awk -v e="$e" 'BEGIN { exit !(e != "" && e < 5) }' && ok || no "restart: test errors '$e' %"
# the node itself, with parameters of the network's own (runCount left out: made)
sed -e 's/LinearLayer {8} : BatchNormalizationLayer {normalizationTimeConstant = 0} : ReLU :/LinearLayer {8} : bn : ReLU :/' \
    -e '/model = Sequential (/i\
        bn (x) = BatchNormalization (x, sc, b, m, v, normalizationTimeConstant = 50)\
        sc = ParameterTensor {8, initValue = 1} ; b = ParameterTensor {8, initValue = 0}\
        m = ParameterTensor {8, initValue = 0, learningRateMultiplier = 0}\
        v = ParameterTensor {8, initValue = 0, learningRateMultiplier = 0}' bn.cfg >node.cfg
expect 0 "$T" configFile=node.cfg Dir=node
errs "$tmp/err" >node.txt
awk 'END { exit !(NR == 4 && $2 < 5) }' node.txt && ok || no "node: last epoch: $(cat node.txt)"
e=$(test_errs "$tmp/err")
awk -v e="$e" 'BEGIN { exit !(e != "" && e < 5) }' && ok || no "node: test errors '$e' %"
# errors name the place
sed 's/{normalizationTimeConstant = 0}/{normalizationTimeConstant = 0, blendTimeConstant = 1}/' bn.cfg >bad1.cfg
expect 1 mpi -n 2 "$T" configFile=bad1.cfg Dir=bad
has "$tmp/err" "rank 0: bad1.cfg:13:31: error: BatchNormalizationLayer: blendTimeConstant = 1 is not supported yet (only 0: the minibatch's own statistics in training) (and 1 other rank failed)"
sed 's/{normalizationTimeConstant = 0}/{spatialRank = 2}/' bn.cfg >bad2.cfg
expect 1 "$T" configFile=bad2.cfg Dir=bad
has "$tmp/err" "bad2.cfg:15:13: error: BatchNormalization: spatial normalization needs an image input (W:H:C), got a vector of 8 values"
sed 's/learningRateMultiplier = 0}$/learningRateMultiplier = 0.5}/' node.cfg >bad3.cfg
expect 1 "$T" configFile=bad3.cfg Dir=bad
has "$tmp/err" "error: Parameter: learningRateMultiplier=0.5 is not supported yet (only 1, or 0: not learned)"
sed 's/m = ParameterTensor {8, initValue = 0, learningRateMultiplier = 0}/m = ParameterTensor {8, initValue = 0}/' node.cfg >bad4.cfg
expect 1 "$T" configFile=bad4.cfg Dir=bad
has "$tmp/err" "error: BatchNormalization: the running mean must be a parameter with learningRateMultiplier = 0 (it is not learned)"
# the methods where each worker trains a model of its own between synchronizations: its
# running statistics would not describe the synchronized model; refused on every rank
for m in ModelAveragingSGD BlockMomentumSGD DataParallelASGD; do
    expect 1 mpi -n 2 "$T" configFile=bn.cfg Dir=bad train.SGD.ParallelTrain.parallelizationMethod=$m
    has "$tmp/err" "rank 0: bn.cfg:15:13: error: BatchNormalization with $m is not supported yet: each worker's running statistics would describe its own model"
done
[ ! -e bad/m.dnn ] && ok || no "a failed start wrote a model"
finish bs_bn
