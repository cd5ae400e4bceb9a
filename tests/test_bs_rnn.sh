#!/bin/sh
# BrainScript's recurrent library as CNTK's language-understanding example (ATIS) uses it:
# BS.RNNs.RecurrentLSTMPStack over a RowStack of three sparse word inputs, the hooks
# passed by name, a local NoAuxInputHook, an array of layer dimensions, FSAdaGrad with
# clipping and DataParallelSGD from epoch 2. Checked: CNTK's parameter count for that
# network (each LSTMP gate its own weights), learning a task that needs the recurrence,
# the same updates on 2 ranks, projection and self-stabilizers counted as CNTK makes them, the
# bidirectional stack, a default naming another parameter, and the refusals.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_rnn: mpiexec not found"; exit 99; }
cd "$tmp"

# ATIS-shaped data: sentences of 4 to 11 words out of 40 (the previous, current and next
# word sparse, as ATIS's PW, CW, NW), the label (L, 6 classes) the previous word's class:
# the current window does not hold it two words back, so only the recurrence can learn it
awk 'BEGIN { s = 7; for (q = 0; q < 500; q++) { s = (s * 1103515245 + 12345) % 2147483648;
    n = 4 + int(s / 2147483648 * 8);
    for (t = 0; t < n; t++) { s = (s * 1103515245 + 12345) % 2147483648; w[t] = int(s / 2147483648 * 40) }
    for (t = 0; t < n; t++)
        printf "%d\t|PW %d:1\t|CW %d:1\t|NW %d:1\t|L %d:1\n", q, t ? w[t - 1] : 39, w[t],
            t + 1 < n ? w[t + 1] : 39, t < 2 ? 0 : 1 + w[t - 2] % 5 } }' >lu.ctf

# the network as ATIS writes it (dimensions $wordCount$, $labelCount$ and the sizes set here)
cat >lu.cfg <<'CFG'
command = Train
modelPath = $Dir$/lu.model
wordCount = 40
labelCount = 6
Train = [
    action = train
    BrainScriptNetworkBuilder = [
        inputDim = $wordCount$
        labelDim = $labelCount$
        featDim = inputDim*3
        embDim = 12
        hiddenDim = 16
        maxLayer = 1
        featuresPW = Input(inputDim)
        featuresCW = Input(inputDim)
        featuresNW = Input(inputDim)
        features = RowStack(featuresPW : featuresCW : featuresNW)
        labels = Input(labelDim, tag = "label")
        emb = Parameter(embDim, featDim)
        featEmbedded = emb * features
        lstmDims[i:0..maxLayer-1] = hiddenDim
        NoAuxInputHook (input, lstmState) = BS.Constants.None
        lstmStack = BS.RNNs.RecurrentLSTMPStack (lstmDims,
            cellDims=lstmDims,
            featEmbedded,
            inputDim=embDim,
            previousHook=BS.RNNs.PreviousHC,
            augmentInputHook=BS.RNNs.NoAuxInputHook,
            augmentInputDim=0,
            enableSelfStabilization=false)
        lstmOutputLayer = Length (lstmStack)-1
        LSTMoutput = lstmStack[lstmOutputLayer].h
        W = Parameter(labelDim, hiddenDim, init = "uniform", initValueScale=6)
        b = Parameter(labelDim, 1, init = "fixedValue", value=0)
        outputs = W * LSTMoutput + b
        cr = CrossEntropyWithSoftmax(labels, outputs)
        errs = ClassificationError(labels, outputs)
        criterionNodes = (cr)
        evaluationNodes = (errs)
        outputNodes = (outputs)
    ]
    SGD = [
        maxEpochs = 12
        epochSize = 0
        minibatchSize = 70
        learningRatesPerSample = 0.01
        gradUpdateType = "FSAdaGrad"
        gradientClippingWithTruncation = true
        clippingThresholdPerSample = 15.0
        parallelTrain = [
            parallelizationMethod = "DataParallelSGD"
            parallelizationStartEpoch = 2
            distributedMBReading = true
        ]
    ]
    reader = [
        readerType = "CNTKTextFormatReader"
        file = "lu.ctf"
        randomize = true
        input = [
            featuresPW = [ alias = "PW" ; dim = $wordCount$ ; format = "sparse" ]
            featuresCW = [ alias = "CW" ; dim = $wordCount$ ; format = "sparse" ]
            featuresNW = [ alias = "NW" ; dim = $wordCount$ ; format = "sparse" ]
            labels = [ alias = "L" ; dim = $labelCount$ ; format = "sparse" ]
        ]
    ]
]
CFG
# errs LOG: the error rate of each epoch
errs() { sed -n 's/^Finished Epoch.*errs = \([0-9.]*\)% .*/\1/p' "$1"; }

# ---- one rank: CNTK's parameters (the embedding 12 x 120; per gate a bias, input and
# hidden weights, three peephole diagonals; the output layer) and learning: the first
# epoch near chance (about 4 in 6 wrong), the last below 10 %
expect 0 "$T" configFile=lu.cfg Dir=A
cp "$tmp/err" a.err
p=$((12 * 120 + 4 * 16 + 4 * 16 * 12 + 4 * 16 * 16 + 3 * 16 + 6 * 16 + 6))
has a.err "Training $p parameters in 18 parameter tensors."
errs a.err >a.txt
awk 'NR == 1 { first = $1 } END { exit !(NR == 12 && first > 40 && $1 < 10) }' a.txt &&
    ok || { no "the LSTMP stack did not learn"; cat a.txt; }

# ---- two ranks: DataParallelSGD from epoch 2 on computes one rank's updates (SPEC 10):
# the same error rates, epoch by epoch
mpi -n 2 "$T" configFile=lu.cfg Dir=B Train.SGD.maxEpochs=6 >b.out 2>b.err &&
    ok || { no "2 ranks"; tail -5 b.err; }
errs b.err >b.txt
head -n 6 a.txt >a6.txt
close a6.txt b.txt 1e-3 && ok || { no "2 ranks differ from one"; paste a6.txt b.txt; }

# ---- a projection (cellDim 20 to h of 16: Wmr) and self-stabilizers: one scalar for each
# of h(t-1), c(t-1) and c(t), one for h(t) before the projection, one between the layers
# of a stack of two (CNTK's counts); a short run trains
sed -e 's/maxLayer = 1/maxLayer = 2/' -e 's/cellDims=lstmDims,/cellDims=cellSizes,/' \
    -e 's/enableSelfStabilization=false)/enableSelfStabilization=true)/' \
    -e 's/^        lstmDims\[i:0..maxLayer-1\] = hiddenDim$/&\n        cellSizes[i:0..maxLayer-1] = 20/' lu.cfg >proj.cfg
expect 0 "$T" configFile=proj.cfg Dir=P Train.SGD.maxEpochs=2
cell=$((4 * 20 + 4 * 20 * 16 + 3 * 20 + 16 * 20)) # all but the input weights
p=$((12 * 120 + cell + 4 * 20 * 12 + cell + 4 * 20 * 16 + 9 + 6 * 16 + 6))
has "$tmp/err" "Training $p parameters in 44 parameter tensors."

# ---- the bidirectional stack: h of each layer both directions spliced (the output layer
# reads 2 x 16 rows)
sed -e 's/lstmStack = BS.RNNs.RecurrentLSTMPStack (lstmDims,/lstmStack = BS.RNNs.RecurrentBidirectionalLSTMPStack (lstmDims,/' \
    -e '/previousHook=BS.RNNs.PreviousHC,/d' -e '/augmentInputHook=BS.RNNs.NoAuxInputHook,/d' \
    -e '/augmentInputDim=0,/d' -e 's/W = Parameter(labelDim, hiddenDim,/W = Parameter(labelDim, 2 * hiddenDim,/' lu.cfg >bi.cfg
expect 0 "$T" configFile=bi.cfg Dir=D Train.SGD.maxEpochs=2
p=$((12 * 120 + 2 * (4 * 16 + 4 * 16 * 12 + 4 * 16 * 16 + 3 * 16) + 6 * 32 + 6))
has "$tmp/err" "Training $p parameters in 33 parameter tensors."

# ---- a parameter's default is evaluated where the function is defined (CNTK's
# precision=precision: m = m is the record's m), and only when used; a hook with a trained
# initial state (h and c of 16: 32 more parameters in 2 more tensors); BS.Loop.Previous
# with an initialState of one step per sequence, and one of a step per step refused
sed 's/hiddenDim = 16/m = 2\n        Twice (n, m = m, unused = nosuchname) = n * m\n        hiddenDim = Twice (8)/' lu.cfg >dflt.cfg
expect 0 "$T" configFile=dflt.cfg Dir=F Train.SGD.maxEpochs=1
has "$tmp/err" "Training $(($(sed -n 's/^Training \([0-9]*\) parameters.*/\1/p' a.err))) parameters in 18 parameter tensors."
sed 's/previousHook=BS.RNNs.PreviousHC,/previousHook=BS.RNNs.PreviousHCWithTrainedInitialState{},/' lu.cfg >init.cfg
expect 0 "$T" configFile=init.cfg Dir=I Train.SGD.maxEpochs=2 traceLevel=2
has "$tmp/err" "Training $(($(sed -n 's/^Training \([0-9]*\) parameters.*/\1/p' a.err) + 32)) parameters in 20 out of 20 parameter tensors"
has "$tmp/err" "Node 'lstmStack.previousHook.initialH' (LearnableParameter operation) : [16 x 1]"
sed 's/featuresPW = Input(inputDim)/featuresPW = BS.Loop.Previous (featuresCW, initialState = BS.Sequences.First (featuresNW))/' lu.cfg >prev.cfg
expect 0 "$T" configFile=prev.cfg Dir=V Train.SGD.maxEpochs=1
sed 's/featuresPW = Input(inputDim)/featuresPW = BS.Loop.Previous (featuresCW, initialState = featuresNW)/' lu.cfg >prev2.cfg
expect 1 "$T" configFile=prev2.cfg Dir=V2
has "$tmp/err" "prev2.cfg:14:22: error: PastValue: initialState must be one value, one column of the input's 40 rows, or such a value for each sequence; got 40 x samples"

finish test_bs_rnn
