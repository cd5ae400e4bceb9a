#!/bin/sh
# Convolution and pooling in BrainScript end to end (the layers of CNTK's image examples:
# ConvolutionalLayer, MaxPoolingLayer, AveragePoolingLayer over an Input {W:H:C}, and
# 07_Deconvolution's MaxUnpoolingLayer and ConvolutionTransposeLayer), on
# 6 x 6 images whose class is the half a bright square lies in: training on 1 and 2 ranks
# (the same updates), the model file (action=test and action=write rebuild the network
# from it), a makeMode restart, a node of the network's own as the criterion, the errors
# that name the file, line and column, and the older form of CNTK's image configs (the
# primitive Convolution, a bias per map, FlattenDimensions).
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
# CNTK's counts of this network: a layer's W, b, Convolution (Times), Plus and activation
# each a node, the inputs, ce and errs; all but the inputs and errs with a gradient
has one.err "Model has 22 nodes. Using CPU."
has one.err "Training 138 parameters in 7 out of 7 parameter tensors and 19 nodes with gradient:"
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
has "$tmp/err" "error: ConvolutionalLayer: a window of 2 along the channels, of an input of 4 (a convolution across the maps, as CNTK's local response normalization makes) is not supported yet: the window's third value must be all 4 of them"
[ ! -e bad/m.dnn ] && ok || no "a failed start wrote a model"

# ---- the older form of CNTK's image configs (its QuickE2E test, the MNIST convolution
# examples before the Layers library): the primitive Convolution over a kernel written
# Parameter (outMap, inWCount), a bias ParameterTensor ((1 : 1 : outMap)) added to every
# cell of its map, the legacy MaxPooling / AveragePooling, FlattenDimensions into the
# dense layers. CNTK's counts of nodes and of those with a gradient (all but the inputs
# and the evaluation node; its QuickE2E baseline counts so), learning, 2 ranks alike, the
# test action
square_cfg >prim.cfg <<'CFG'
command = train:test
deviceId = -1
traceLevel = 1
train = [
    action = train
    modelPath = $Dir$/m.dnn
    BrainScriptNetworkBuilder = [
        ConvReLU (inp, outMap, inMap, kW, kH) = [
            convW = Parameter (outMap, kW * kH * inMap, init = "uniform", initValueScale = 10)
            conv = Convolution (convW, inp, (kW : kH : inMap), mapDims = outMap, stride = (1 : 1 : inMap), autoPadding = false, imageLayout = "cudnn")
            convB = ParameterTensor ((1 : 1 : outMap), init = "fixedValue", value = 0.1)
            out = RectifiedLinear (conv + convB)
        ]
        features = ImageInput (6, 6, 1, imageLayout = "cudnn", tag = "feature")
        labels = Input (2, tag = "label")
        c1 = ConvReLU (features, 4, 1, 3, 3).out
        p1 = MaxPooling (c1, 2, 2, 1, 1, imageLayout = "cudnn")
        c2 = ConvReLU (p1, 3, 4, 2, 2).out
        p2 = AveragePooling (c2, 2, 2, 1, 1, imageLayout = "cudnn")
        W1 = ParameterTensor ((8 : 0), init = "uniform", initValueScale = 10)
        b1 = ParameterTensor (8, init = "fixedValue", value = 0)
        h1 = Sigmoid (W1 * FlattenDimensions (p2, 1, 3) + b1)
        W2 = Parameter (2, 0)
        b2 = Parameter (2, 1, init = "fixedValue", value = 0)
        ol = W2 * h1 + b2
        ce = CrossEntropyWithSoftmax (labels, ol, tag = "criterion")
        errs = ClassificationError (labels, ol, tag = "evaluation")
    ]
    SGD = [ maxEpochs = 6 ; minibatchSize = 20 ; learningRatesPerSample = 0.02
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
CFG
expect 0 "$T" configFile=prim.cfg Dir=prim1
cp "$tmp/err" prim1.err
# 6 x 6 -> conv 3 x 3: 4 x 4 x 4 -> pool: 3 x 3 x 4 -> conv 2 x 2: 2 x 2 x 3 -> pool: 1 x 1 x 3
p=$((4 * 9 + 4 + 3 * 16 + 3 + 8 * 3 + 8 + 2 * 8 + 2))
has prim1.err "Model has 26 nodes. Using CPU."
has prim1.err "Training $p parameters in 8 out of 8 parameter tensors and 23 nodes with gradient:"
errs prim1.err >prim1.txt
awk 'NR == 1 { a = $2 } END { exit !(NR == 6 && $2 < 10 && $2 < a) }' prim1.txt && ok ||
    { no "the primitive convolution network did not learn"; cat prim1.txt; }
sed -n 's/^Final Results: .*errs = \([0-9.]*\)% .*/\1/p' prim1.err | awk '{ exit !($1 < 10) }' && ok ||
    no "the test of the primitive convolution network: $(grep 'Final Results' prim1.err)"
expect 0 mpi -n 2 "$T" configFile=prim.cfg Dir=prim2
errs "$tmp/err" >prim2.txt
close prim1.txt prim2.txt 1e-3 && ok || { no "2 ranks differ from 1 (primitive convolution)"; paste prim1.txt prim2.txt; }
sed 's/convB = ParameterTensor ((1 : 1 : outMap)/convB = ParameterTensor ((1 : 1 : outMap + 1)/' prim.cfg >bad6.cfg
expect 1 "$T" configFile=bad6.cfg Dir=bad
has "$tmp/err" "bad6.cfg:12:36: error: Plus: a value for each of 5 maps, applied to an image of 4 x 4 x 4"
finish bs_conv
