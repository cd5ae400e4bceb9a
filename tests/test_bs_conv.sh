#!/bin/sh
# Convolution and pooling in BrainScript end to end (the layers of CNTK's image examples:
# ConvolutionalLayer, MaxPoolingLayer, AveragePoolingLayer over an Input {W:H:C}, and
# 07_Deconvolution's MaxUnpoolingLayer and ConvolutionTransposeLayer), on
# 6 x 6 images whose class is the half a bright square lies in: training on 1 and 2 ranks
# (the same updates), the model file (action=test and action=write rebuild the network
# from it), a makeMode restart, a node of the network's own as the criterion, and the
# errors that name the file, line and column.
# The arithmetic itself is checked by tests/test_math_conv.c (against direct sums) and
# tests/test_graph.c (gradients against finite differences).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_conv: mpiexec not found"; exit 99; }
cd "$tmp"
square_ctf 99 0 >img.ctf
square_cfg >conv.cfg <<'CFG'
command = train:test
deviceId = -1
traceLevel = 1
train = [
    action = train
    modelPath = $Dir$/m.dnn
    BrainScriptNetworkBuilder = [
        features = Input {6:6:1} ; labels = Input {2}
        model = Sequential (
            ConvolutionalLayer {4, (3:3), pad = true, activation = ReLU} :
            MaxPoolingLayer {(2:2), stride = (2:2)} :
            ConvolutionalLayer {3, (2:2), bias = false} : AveragePoolingLayer {(2:2)} :
            DenseLayer {8, activation = ReLU} : LinearLayer {2})
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
    @TESTREADER@
]
write = [
    action = write
    modelPath = $Dir$/m.dnn
    outputPath = $Dir$/out
    @TESTREADER@
]
CFG
errs() { sed -n 's/^Finished Epoch.*\[Training\] ce = \([0-9.]*\) .*errs = \([0-9.]*\)% .*/\1 \2/p' "$1"; }
mpi -n 1 "$T" configFile=conv.cfg Dir=one >one.out 2>one.err && ok || { no "1 rank: exit $?"; tail -5 one.err; }
mpi -n 2 "$T" configFile=conv.cfg Dir=two >two.out 2>two.err && ok || { no "2 ranks: exit $?"; tail -5 two.err; }
errs one.err >one.txt
errs two.err >two.txt
[ "$(wc -l <one.txt)" -eq 4 ] && ok || no "4 epochs expected: $(cat one.txt)"
close one.txt two.txt 1e-3 && ok || { no "2 ranks train differently from 1"; paste one.txt two.txt; }
# it learns the task: under 5 % errors in the last epoch and in the test
awk 'END { exit !($2 < 5) }' one.txt && ok || no "the last epoch's errors: $(tail -1 one.txt)"
e=$(sed -n 's/^Final Results: .*errs = \([0-9.]*\)% \* 600;.*/\1/p' two.err)
awk -v e="$e" 'BEGIN { exit !(e != "" && e < 5) }' && ok || no "test errors $e % (5 % at most)"
has one.err "Training 138 parameters in 7 out of 7 parameter tensors"
has one.err "Node 'model.W' (LearnableParameter operation) : [9 x 4]"
# action=write rebuilds the network from the model file: z for each of the 600 images
expect 0 "$T" configFile=conv.cfg Dir=one command=write
[ "$(awk 'NF == 2' one/out.z | wc -l)" -eq 600 ] && ok || no "one/out.z: not 600 rows of 2"
# makeMode: the 1-rank run continued to epoch 6 from its checkpoint
expect 0 "$T" configFile=conv.cfg Dir=one train.SGD.maxEpochs=6
has "$tmp/err" "Starting from checkpoint. Loading network from 'one/m.dnn.4'."
[ "$(errs "$tmp/err" | wc -l)" -eq 2 ] && ok || no "epochs 5 and 6 expected"
# a node of the network's own as the criterion (CNTK's 05_OneConvRegr): the RMSE of the
# outputs against the labels through ReduceSum, shown once where it is both groups
sed -e 's/ce = CrossEntropyWithSoftmax (labels, z) ; errs = ClassificationError (labels, z)/d = labels - z ; rmse = Sqrt (ReduceSum (d .* d) \/ 2)/' \
    -e 's/criterionNodes = (ce) ; evaluationNodes = (errs)/criterionNodes = (rmse) ; evaluationNodes = (rmse)/' \
    conv.cfg >regr.cfg
expect 0 "$T" configFile=regr.cfg Dir=regr
has "$tmp/err" "Training criterion:   rmse = Sqrt"
hasnt "$tmp/err" "Evaluation criterion"
sed -n 's/^Finished Epoch.*\[Training\] rmse = \([0-9.]*\) \* 600; totalSamplesSeen.*/\1/p' "$tmp/err" >regr.txt
[ "$(wc -l <regr.txt)" -eq 4 ] && ok || no "4 epochs of one rmse each expected: $(grep 'Finished Epoch' "$tmp/err")"
awk 'NR == 1 { a = $1 } END { exit !(NR == 4 && $1 < a / 2) }' regr.txt && ok || no "rmse did not halve: $(cat regr.txt)"
has "$tmp/err" "Final Results: Minibatch[1-1]: rmse = "
# CNTK's 07_Deconvolution on these images: convolution, max pooling, max unpooling to the
# convolution's cells, a transposed convolution back to the image; its RMSE falls by half,
# on 1 rank and on 2
square_cfg >deconv.cfg <<'CFG'
command = train:test
deviceId = -1
train = [
    action = train
    modelPath = $Dir$/m.dnn
    BrainScriptNetworkBuilder = [
        features = Input {6:6:1}
        c = ConvolutionalLayer {2, (3:3), pad = true, activation = ReLU} (features)
        p = MaxPoolingLayer {(2:2), stride = (2:2)} (c)
        u = MaxUnpoolingLayer {(2:2), stride = (2:2)} (p, c)
        z = ConvolutionTransposeLayer {1, (3:3), 2, pad = true, bias = false, initValueScale = 1} (u)
        d = z - features ; rmse = Sqrt (ReduceMean (d .* d))
        criterionNodes = (rmse) ; evaluationNodes = (rmse) ; outputNodes = (z)
    ]
    SGD = [ maxEpochs = 6 ; minibatchSize = 20 ; learningRatesPerSample = 0.002
        momentumPerMB = 0.9 ; numMBsToShowResult = 1000 ]
    @READER@
]
test = [
    action = test
    modelPath = $Dir$/m.dnn
    @TESTREADER@
]
CFG
for n in 1 2; do
    expect 0 mpi -n $n "$T" configFile=deconv.cfg Dir=deconv$n
    sed -n 's/^Finished Epoch.*\[Training\] rmse = \([0-9.]*\) \* 600; totalSamplesSeen.*/\1/p' \
        "$tmp/err" >deconv$n.txt
    awk 'NR == 1 { a = $1 } END { exit !(NR == 6 && $1 < a / 2) }' deconv$n.txt && ok ||
        no "deconvolution, $n ranks: rmse did not halve: $(cat deconv$n.txt)"
    has "$tmp/err" "Final Results: Minibatch[1-1]: rmse = "
done
sed 's/(p, c)$/(p)/' deconv.cfg >bad4.cfg
expect 1 "$T" configFile=bad4.cfg Dir=bad
has "$tmp/err" "error: MaxUnpoolingLayer's function takes 2 arguments (x, the pooling's input), got 1"
sed 's/pad = true, bias = false, initValueScale = 1}/outputShape = (6:6:1)}/' deconv.cfg >bad5.cfg
expect 1 "$T" configFile=bad5.cfg Dir=bad
has "$tmp/err" "error: ConvolutionTransposeLayer: outputShape is not supported yet"
# errors name the place: a window larger than the image, pooling a vector, a kernel
# whose channels are not the input's (at the layer's use: where its input is known); on
# 2 ranks both fail, and rank 0 says why
sed 's/ConvolutionalLayer {4, (3:3), pad = true/ConvolutionalLayer {4, (7:7), pad = false/' conv.cfg >bad1.cfg
expect 1 mpi -n 2 "$T" configFile=bad1.cfg Dir=bad
has "$tmp/err" "rank 0: bad1.cfg:14:13: error: ConvolutionalLayer: the window (7 cells along x) is larger than the input (6) (and 1 other rank failed)"
sed 's/features = Input {6:6:1}/features = Input {36}/' conv.cfg >bad2.cfg
expect 1 "$T" configFile=bad2.cfg Dir=bad
has "$tmp/err" "bad2.cfg:14:13: error: ConvolutionalLayer: the input must be an image (an Input {W:H:C} or what is computed from one), got a vector of 36 values"
sed 's/ConvolutionalLayer {3, (2:2), bias = false}/ConvolutionalLayer {3, (2:2:2), bias = false}/' conv.cfg >bad3.cfg
expect 1 "$T" configFile=bad3.cfg Dir=bad
has "$tmp/err" "error: ConvolutionalLayer: along the channels (the third value) the window must be 4 and a pooling's stride 1, got window 2 and stride 1"
[ ! -e bad/m.dnn ] && ok || no "a failed start wrote a model"
finish bs_conv
