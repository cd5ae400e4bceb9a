#!/bin/sh
# Networks described in BrainScript (issue 16): a logistic regression laid out as CNTK's
# HelloWorld tutorial (Tutorials/HelloWorld-LogisticRegression/lr_bs.cntk) lays it out, on
# 1 and 2 ranks; a two-layer classifier written with CNTK's Layers library (DenseLayer,
# LinearLayer, Sequential); the model file holding the graph (action=test reads it back);
# a description of 43 KiB (and one over the 128 KiB kept, refused); and the errors, each
# naming FILE:LINE:COL.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_net: mpiexec not found"; exit 99; }
cd "$tmp"
# two Gaussian clouds in 2-D, one label row (0 or 1): the tutorial's kind of data
awk 'BEGIN { s = 4242; for (i = 0; i < 1000; i++) {
    s = (s * 1103515245 + 12345) % 2147483648; c = s / 2147483648 < 0.5;
    s = (s * 1103515245 + 12345) % 2147483648; u1 = s / 2147483648 + 1e-9;
    s = (s * 1103515245 + 12345) % 2147483648; u2 = s / 2147483648;
    r = sqrt(-2 * log(u1)); x = r * cos(6.2831853 * u2) + 3 * c; y = r * sin(6.2831853 * u2) + 3 * c;
    printf "|features %.4f %.4f |labels %d\n", x, y, c } }' >Train_cntk_text.txt
cat >lr_bs.cntk <<'CFG'
# a logistic regression in the tutorial's layout: top-level keys, primitive nodes with
# blank lines and trailing blanks in the network block, a tab before a key, the composite
# reader form with its deserializer
command=Train
modelPath = "Models/LR_reg.dnn"
deviceId = -1
dimension = 2
truncated=true
truncationLength=5
Train = [
    action = "train"
        
    BrainScriptNetworkBuilder = [

        SDim = $dimension$
        LDim = 1

        features = Input (SDim)
        labels   = Input (LDim)

        b = Parameter (LDim, 1)
        w = Parameter (LDim, SDim)

        p = Sigmoid (w * features + b)    
    
        lr = Logistic (labels, p)
        err = SquareError (labels, p)

        featureNodes    = (features)
        labelNodes      = (labels)
        criterionNodes  = (lr)
        evaluationNodes = (err)
        outputNodes     = (p)
    ]   

    SGD = [
        epochSize = 0
        minibatchSize = 25
        learningRatesPerSample = 0.04
	momentumAsTimeConstant=900
        maxEpochs = 10
    ]

	reader = {
        randomize = false
        deserializers = ({
            type = "CNTKTextFormatDeserializer" ; module = "CNTKTextFormatReader"
            file = "Train_cntk_text.txt"
            input = [
				features = [
					dim = $dimension$
					format = "dense"
				]
				labels = [
					dim = 1
					format = "dense"
				]
			]
        })
    }
]
Test = [
    action = "test"
    reader = [ readerType = "CNTKTextFormatReader" ; file = "Train_cntk_text.txt"
        input = [ features = [ dim = 2 ; format = "dense" ] ; labels = [ dim = 1 ; format = "dense" ] ] ]
]
CFG
# lrcrit LOG: "lr err" of each epoch
lrcrit() { sed -n 's/^Finished Epoch.*\[Training\] lr = \([0-9.]*\) .*err = \([0-9.]*\) .*/\1 \2/p' "$1"; }

mpi -n 1 "$T" configFile=lr_bs.cntk >one.out 2>one.err && ok || { no "lr_bs on 1 rank failed"; tail -5 one.err; }
has one.err "Training criterion:   lr = Logistic"
has one.err "Evaluation criterion: err = SquareError"
has one.err "Training 3 parameters in 2 parameter tensors."
lrcrit one.err >one.txt
[ "$(wc -l <one.txt)" -eq 10 ] && ok || no "not 10 epochs: $(cat one.txt)"
# it learns: the logistic loss per sample falls from its first epoch to below 0.1
awk 'NR == 1 { f = $1 } END { exit !(NR == 10 && $1 < 0.1 && $1 < f / 2) }' one.txt && ok ||
    { no "logistic regression did not learn"; cat one.txt; }
[ -f Models/LR_reg.dnn ] && ok || no "no model file"

# the same on 2 ranks with exact DataParallelSGD: the same criteria every epoch
mpi -n 2 "$T" configFile=lr_bs.cntk modelPath=M2/m.dnn \
    'Train.SGD.ParallelTrain=[parallelizationMethod=DataParallelSGD]' >two.out 2>two.err &&
    ok || { no "lr_bs on 2 ranks failed"; tail -5 two.err; }
lrcrit two.err >two.txt
close one.txt two.txt && ok || { no "2 ranks differ from 1"; paste one.txt two.txt; }

# a long network description (CNTK's CIFAR-10 ResNet-56 in NDL translates to 14 KiB; this
# one is 43 KiB, 600 comment lines in the block, beyond the 16 KiB partrain once kept):
# the same criteria as lr_bs, and its model file holds it (action=test reads it back); one
# over the 128 KiB kept now is refused, naming the block and the sizes
big() { # LINES: lr_bs.cntk with LINES comment lines at the top of the network block
    awk -v n="$1" '{ print } /BrainScriptNetworkBuilder = \[/ { for (i = 0; i < n; i++)
        printf "        # line %d of a long description: comments count like any text\n", i }' lr_bs.cntk
}
big 600 >big.cntk
mpi -n 1 "$T" configFile=big.cntk modelPath=Mbig/m.dnn >big.out 2>big.err && ok ||
    { no "a 43 KiB network description failed"; tail -5 big.err; }
lrcrit big.err >big.txt
cmp -s one.txt big.txt && ok || { no "the long description trained otherwise"; paste one.txt big.txt; }
mpi -n 1 "$T" configFile=big.cntk modelPath=Mbig/m.dnn command=Test >bigt.out 2>bigt.err && ok ||
    { no "action=test on the 43 KiB description's model failed"; tail -5 bigt.err; }
has bigt.err "Final Results:"
big 2200 >huge.cntk
mpi -n 1 "$T" configFile=huge.cntk modelPath=Mhuge/m.dnn >huge.out 2>huge.err &&
    no "a 157 KiB network description was accepted"
has huge.err "huge.cntk:13:34: error: BrainScriptNetworkBuilder: the network description has"
has huge.err "bytes, more than the 131071 partrain keeps"

# a definition that calls itself forever: an error naming the place, not a crash (the
# evaluation runs on a thread with a stack for 4000 levels)
sed 's|^\( *\)p = Sigmoid (w \* features + b) *$|\1f(z) = f(z)\n\1p = Sigmoid (f(w * features + b))|' \
    lr_bs.cntk >rec.cntk
mpi -n 1 "$T" configFile=rec.cntk modelPath=Mrec/m.dnn >rec.out 2>rec.err &&
    no "a definition calling itself forever was accepted"
has rec.err "rec.cntk:24:16: error: expressions nested deeper than 4000"

# CNTK's expression form of the builder, (new ComputationNetwork [ ... ]) (G2P and the
# ranking test write it so): the same network, the same criteria; its errors keep their
# lines in the file
awk '/BrainScriptNetworkBuilder = \[/ { sub(/= \[/, "= (new ComputationNetwork ["); inb = 1 }
    inb && /^    \] *$/ { print "    ])"; inb = 0; next } { print }' lr_bs.cntk >expr.cntk
mpi -n 1 "$T" configFile=expr.cntk modelPath=ME/m.dnn >expr.out 2>expr.err && ok ||
    { no "lr_bs as (new ComputationNetwork [...]) failed"; tail -5 expr.err; }
has expr.cntk "BrainScriptNetworkBuilder = (new ComputationNetwork ["
lrcrit expr.err >expr.txt
close one.txt expr.txt && ok || { no "the expression form differs"; paste one.txt expr.txt; }
sed 's/p = Sigmoid (w \* features + b)/p = Sigmoid (w * features + bb)/' expr.cntk >expr2.cntk
expect 1 "$T" configFile=expr2.cntk modelPath=ME2/m.dnn
has "$tmp/err" "expr2.cntk:$(grep -n 'p = Sigmoid' expr2.cntk | cut -d: -f1):"
has "$tmp/err" "error: unknown name 'bb'"
sed 's/(new ComputationNetwork \[/(BS.Network.Load ("x") [/' expr.cntk >expr3.cntk
expect 1 "$T" configFile=expr3.cntk modelPath=ME3/m.dnn
has "$tmp/err" "Train.BrainScriptNetworkBuilder must be a block [ ... ] or CNTK's (new ComputationNetwork [ ... ])"

# CNTK's node groups by tag instead of criterionNodes and the others (CNTK's older configs
# write them so): every top-level member is evaluated, the tagged nodes fill the groups
# ("eval" is CNTK's legacy name); the same network, the same criteria
sed -e '/Nodes *= (/d' -e "s/lr = Logistic (labels, p)/lr = Logistic (labels, p, tag='criterion')/" \
    -e 's/err = SquareError (labels, p)/err = SquareError (labels, p, tag="eval")/' \
    -e "s/p = Sigmoid (w \* features + b)/p = Sigmoid (w * features + b, tag='output')/" \
    lr_bs.cntk >tags.cntk
mpi -n 1 "$T" configFile=tags.cntk modelPath=MT/m.dnn >tags.out 2>tags.err && ok ||
    { no "lr_bs with tags failed"; tail -5 tags.err; }
hasnt tags.cntk "criterionNodes"
has tags.err "Training criterion:   lr = Logistic"
has tags.err "Evaluation criterion: err = SquareError"
lrcrit tags.err >tags.txt
awk 'END { exit !(NR == 10 && $1 < 0.1) }' tags.txt && ok || { no "tags: did not learn"; cat tags.txt; }
# the parameters are made (and drawn) in the order the members are evaluated: here b
# before w, where criterionNodes reached w first; with w's line first, bit for bit the
# network of the first run
awk '/^        b = Parameter/ { b = $0; next } { print } /^        w = Parameter/ { print b }' \
    tags.cntk >tagsw.cntk
mpi -n 1 "$T" configFile=tagsw.cntk modelPath=MTW/m.dnn >tagsw.out 2>tagsw.err && ok ||
    { no "lr_bs with tags (w first) failed"; tail -5 tagsw.err; }
lrcrit tagsw.err >tagsw.txt
cmp -s one.txt tagsw.txt && ok || { no "tags train another network"; paste one.txt tagsw.txt; }
# a top-level alias of an Input (featNorm = features, as CNTK's configs write it when they
# switch normalisation off) keeps the Input's name, by which the reader's input finds it
sed -e 's/^        features = Input (SDim)$/        features = Input (SDim)\n        featNorm = features/' \
    -e 's/w \* features + b/w * featNorm + b/' tagsw.cntk >alias.cntk
mpi -n 1 "$T" configFile=alias.cntk modelPath=MA/m.dnn >alias.out 2>alias.err && ok ||
    { no "an alias of the features failed"; tail -3 alias.err; }
lrcrit alias.err >alias.txt
grep -q "featNorm = features" alias.cntk && cmp -s one.txt alias.txt && ok ||
    { no "an alias of the features trains another network"; paste one.txt alias.txt; }
# tagged but never used by another member: still the evaluation node, as in CNTK
sed -e 's/err = SquareError (labels, p, tag="eval")/err = SquareError (labels, p, tag="evaluation")/' \
    tags.cntk >tags2.cntk
mpi -n 1 "$T" configFile=tags2.cntk modelPath=MT2/m.dnn >tags2.out 2>tags2.err && ok ||
    { no "lr_bs with tag=evaluation failed"; tail -5 tags2.err; }
has tags2.err "Evaluation criterion: err = SquareError"
# two criteria tagged, or a tag that is no node group: refused, naming where
sed "s/err = SquareError (labels, p, tag=\"eval\")/err = SquareError (labels, p, tag='criterion')/" \
    tags.cntk >tags3.cntk
expect 1 "$T" configFile=tags3.cntk modelPath=MT3/m.dnn
has "$tmp/err" "tags3.cntk:27:15: error: 'err' is tagged 'criterion' as 'lr' is (tags3.cntk:26:14): more than one criterion node is not supported yet"
sed 's/tag="eval"/tag="evaluate"/' tags.cntk >tags4.cntk
expect 1 "$T" configFile=tags4.cntk modelPath=MT4/m.dnn
has "$tmp/err" "tags4.cntk:27:15: error: SquareError: tag='evaluate' is not a node group: expected 'feature', 'label', 'criterion', 'evaluation', 'output' or ''"

# the model file keeps the graph: action=test reads it back and evaluates the same network
mpi -n 1 "$T" configFile=lr_bs.cntk command=Test >test.out 2>test.err && ok ||
    { no "action=test on the BrainScript model failed"; tail -5 test.err; }
has test.err "Final Results: Minibatch[1-"
has test.err "err = "

# action=write: the output node by its name (outputPath.p), one value per sample
cat >w.cntk <<'CFG'
command = Write
Write = [
    action = "write"
    modelPath = "Models/LR_reg.dnn"
    outputPath = "out"
    reader = [ readerType = "CNTKTextFormatReader" ; file = "Train_cntk_text.txt" ; randomize = false
        input = [ features = [ dim = 2 ; format = "dense" ] ; labels = [ dim = 1 ; format = "dense" ] ] ]
]
CFG
expect 0 "$T" configFile=w.cntk
[ "$(awk '$1 >= 0 && $1 <= 1' out.p | wc -l)" -eq 1000 ] && ok || no "out.p: not 1000 probabilities"
expect 1 "$T" configFile=w.cntk Write.outputNodeNames=HLast
has "$tmp/err" "outputNodeNames: 'HLast' is neither a node of the network in 'Models/LR_reg.dnn' nor an input of the reader (partrain writes the BrainScript network's nodes by name (its output node, 'p', by default) and the inputs)"
# the output node beside an input (the labels), as CNTK writes them
expect 0 "$T" configFile=w.cntk Write.outputNodeNames=p:labels Write.outputPath=out2
awk '{ print $5 }' Train_cntk_text.txt | sed 's/$/.000000/' | cmp -s - out2.labels && ok ||
    no "out2.labels: not the labels of Train_cntk_text.txt"
cmp -s out.p out2.p && ok || no "out2.p differs from out.p"

# every parallel method trains it on 2 ranks; a restart (makeMode) goes on from the checkpoint
for m in "DataParallelSGD;DataParallelSGD=[gradientBits=1]" "BlockMomentumSGD;BlockMomentumSGD=[syncPeriod=100]" \
         "ModelAveragingSGD;ModelAveragingSGD=[syncPeriod=100]" "DataParallelASGD;DataParallelASGD=[syncPeriod=100]"; do
    name=${m%%;*}
    mpi -n 2 "$T" configFile=lr_bs.cntk modelPath="$name/m.dnn" Train.SGD.maxEpochs=4 \
        "Train.SGD.ParallelTrain=[parallelizationMethod=$m]" >"$name.out" 2>"$name.err" &&
        ok || { no "$name on 2 ranks failed"; tail -5 "$name.err"; }
    lrcrit "$name.err" >"$name.txt"
    awk 'NR == 1 { f = $1 } END { exit !(NR == 4 && $1 < f / 2) }' "$name.txt" && ok ||
        { no "$name did not learn"; cat "$name.txt"; }
done
mpi -n 2 "$T" configFile=lr_bs.cntk modelPath=R/m.dnn makeMode=true Train.SGD.maxEpochs=3 \
    'Train.SGD.ParallelTrain=[parallelizationMethod=DataParallelSGD]' >r1.out 2>r1.err && ok || no "3 epochs"
mpi -n 2 "$T" configFile=lr_bs.cntk modelPath=R/m.dnn makeMode=true Train.SGD.maxEpochs=6 \
    'Train.SGD.ParallelTrain=[parallelizationMethod=DataParallelSGD]' >r2.out 2>r2.err && ok || no "resume"
has r2.err "Starting from checkpoint. Loading network from 'R/m.dnn.3'."
lrcrit r2.err >r2.txt
mpi -n 2 "$T" configFile=lr_bs.cntk modelPath=R6/m.dnn Train.SGD.maxEpochs=6 \
    'Train.SGD.ParallelTrain=[parallelizationMethod=DataParallelSGD]' >r6.out 2>r6.err && ok || no "6 epochs"
lrcrit r6.err | sed -n '4,6p' >r6.txt
cmp -s r2.txt r6.txt && ok || { no "the resumed epochs 4-6 differ from an uninterrupted run"; paste r2.txt r6.txt; }
# a resume against another BrainScript network is refused
sed 's/b = Parameter (LDim, 1)$/b = Parameter (LDim, 1, init="fixedValue", value=0.5)/' lr_bs.cntk >lr2.cntk
expect 1 "$T" configFile=lr2.cntk modelPath=R/m.dnn makeMode=true Train.SGD.maxEpochs=8
has "$tmp/err" "the configured BrainScript network is not the one makeMode would resume from"

# the tutorial's earlier layout: { } blocks, the readerType form, and its four commands
# (train, write the output node, dump the nodes, test); dumpNode's lines as CNTK prints a
# LearnableParameter
cat >lr_old.cntk <<'CFG'
command=Train:Output:DumpNodeInfo:Test
modelPath = "Models/LR.dnn"
deviceId = -1
dimension = 2
Train = {
    action = "train"
    BrainScriptNetworkBuilder = {
        SDim = $dimension$ ; LDim = 1
        features = Input {SDim} ; labels = Input {LDim}
        b = ParameterTensor {LDim}
        w = ParameterTensor {(LDim:SDim)}
        z = w * features + b
        p = Sigmoid (z)
        lr = Logistic (labels, p) ; err = SquareError (labels, p)
        featureNodes = (features) ; labelNodes = (labels)
        criterionNodes = (lr) ; evaluationNodes = (err) ; outputNodes = (p)
    }
    SGD = { epochSize = 0 ; minibatchSize = 25 ; learningRatesPerSample = 0.04 ; maxEpochs = 20 }
    reader = {
        readerType = "CNTKTextFormatReader"
        file = "Train_cntk_text.txt"
        input = {
            features = { dim = $dimension$ ; format = "dense" }
            labels   = { dim = 1           ; format = "dense" }
        }
    }
}
Output = {
    action = "write"
    reader = {
        readerType = "CNTKTextFormatReader"
        file = "Train_cntk_text.txt"
        input = {
            features = { dim = $dimension$ ; format = "dense" }
            labels   = { dim = 1           ; format = "dense" }
        }
    }
    outputPath = "LR.txt"
}
DumpNodeInfo = {
    action = "dumpNode"
    printValues = true
}
Test = {
    action = "test"
    reader = {
        readerType = "CNTKTextFormatReader"
        file = "Train_cntk_text.txt"
        input = {
            features = { dim = $dimension$ ; format = "dense" }
            labels   = { dim = 1           ; format = "dense" }
        }
    }
}
CFG
mpi -n 1 "$T" configFile=lr_old.cntk >old.out 2>old.err && ok || { no "the four commands failed"; tail -5 old.err; }
[ "$(wc -l <LR.txt.p)" -eq 1000 ] && ok || no "LR.txt.p: not 1000 lines"
has Models/LR.dnn.__AllNodes__.txt "b=LearnableParameter [1,1]   learningRateMultiplier=1.000000  NeedsGradient=true"
has Models/LR.dnn.__AllNodes__.txt "w=LearnableParameter [1,2]   learningRateMultiplier=1.000000  NeedsGradient=true"
has Models/LR.dnn.__AllNodes__.txt "p=Sigmoid (z)"
# the values: the decision boundary w1 x1 + w2 x2 + b = 0 separates the clouds (means 0, 3)
awk '/^w=/ { getline; w1 = $1; w2 = $2 } /^b=/ { getline; b = $1 }
    END { exit !(w1 > 0 && w2 > 0 && b < 0 && 3 * (w1 + w2) + b > 0) }' Models/LR.dnn.__AllNodes__.txt &&
    ok || { no "dumped values"; cat Models/LR.dnn.__AllNodes__.txt; }
has old.err "Final Results: Minibatch[1-"
expect 0 "$T" configFile=lr_old.cntk command=DumpNodeInfo DumpNodeInfo.nodeName=w DumpNodeInfo.printMetadata=false
[ "$(wc -l <Models/LR.dnn.w.txt)" -eq 1 ] && [ "$(wc -w <Models/LR.dnn.w.txt)" -eq 2 ] && ok ||
    { no "nodeName=w: one row of 2 values"; cat Models/LR.dnn.w.txt; }
expect 1 "$T" configFile=lr_old.cntk command=DumpNodeInfo DumpNodeInfo.nodeName=nope
has "$tmp/err" "error: nodeName=nope: the model 'Models/LR.dnn' has no such node"

# ---- CNTK's Layers library: a two-layer classifier on the toy data
layers_cfg # d.ctf and layers.cfg (testlib.sh)
mpi -n 2 "$T" configFile=layers.cfg Dir=L 'train.SGD.ParallelTrain=[parallelizationMethod=DataParallelSGD]' \
    >layers.out 2>layers.err && ok || { no "the Layers network failed"; tail -5 layers.err; }
has layers.err "Training criterion:   ce = CrossEntropyWithSoftmax"
# 2*16 + 16 + 16*16 + 16 + 16*2 + 2 parameters in 6 tensors
has layers.err "Training 354 parameters in 6 parameter tensors."
sed -n 's/^Finished Epoch.*errs = \([0-9.]*\)% .*/\1/p' layers.err >layers.txt
awk 'END { exit !(NR == 8 && $1 < 8) }' layers.txt && ok || { no "the Layers network did not learn"; cat layers.txt; }

# ---- a slot tagger as CNTK's SLUHandsOn tutorial writes it (EmbeddingLayer,
# RecurrentLSTMLayer, DenseLayer over sparse word ids, FSAdaGrad with clipping, 1-bit
# DataParallelSGD from epoch 2), on sequences whose every word's slot label is the word's
# class, except after a word below 10, where it is class 5: only a network that remembers
# the previous word can tag them all
slu_ctf() { # SEED COUNT
    awk -v s="$1" -v n="$2" 'BEGIN { for (q = 0; q < n; q++) {
        s = (s * 1103515245 + 12345) % 2147483648; T = 3 + int(s / 2147483648 * 10); prev = -1
        for (t = 0; t < T; t++) {
            s = (s * 1103515245 + 12345) % 2147483648; w = int(s / 2147483648 * 60)
            lab = (prev >= 0 && prev < 10) ? 5 : w % 5
            words[t] = w; labs[t] = lab; prev = w }
        for (t = 0; t < T; t++)
            printf "%d |S0 %d:1%s |S2 %d:1\n", q, words[t],
                t == 0 ? sprintf(" |S1 %d:1 |S3 %d:1", words[0] % 4, words[T - 1] % 4) : "", labs[t] } }'
}
slu_ctf 7 1500 >atis.train.ctf
slu_ctf 99 300 >atis.test.ctf
cat >slu.cntk <<'CFG'
makeMode = false ; traceLevel = 1 ; deviceId = -1
WorkDir = Work
DataDir = .
modelPath = $WorkDir$/slot.model
parallelTrain = true
command = TrainATIS:EvalATIS
vocabSize = 60    # words
numLabels = 6     # slot classes
numIntents = 4    # intent classes
TrainATIS = [
    action = "train"
    BrainScriptNetworkBuilder = [
        inputDim = $vocabSize$
        labelDim = $numLabels$
        embDim = 16
        hiddenDim = 24

        model = Sequential (
            EmbeddingLayer {embDim} :                            # word vectors
            RecurrentLSTMLayer {hiddenDim, goBackwards=false} :  # recurrence
            DenseLayer {labelDim}                                # to the labels
        )

        # inputs
        query      = Input {inputDim}
        slotLabels = Input {labelDim}

        z = model (query)

        # what is learned and measured
        ce   = CrossEntropyWithSoftmax (slotLabels, z)
        errs = ClassificationError     (slotLabels, z)

        featureNodes    = (query)
        labelNodes      = (slotLabels)
        criterionNodes  = (ce)
        evaluationNodes = (errs)
        outputNodes     = (z)
    ]
    SGD = [
        maxEpochs = 6 ; epochSize = 0
        minibatchSize = 70
        learningRatesPerSample = 0.01*2:0.005
        gradUpdateType = "FSAdaGrad"
        gradientClippingWithTruncation = true ; clippingThresholdPerSample = 15.0
        firstMBsToShowResult = 10 ; numMBsToShowResult = 100
        parallelTrain = [
            parallelizationMethod = "DataParallelSGD"
            parallelizationStartEpoch = 2
            distributedMBReading = true
            dataParallelSGD = [
                gradientBits = 1
            ]
        ]
    ]
    reader = [
        readerType = "CNTKTextFormatReader"
        file = "$DataDir$/atis.train.ctf"
        randomize = true
        input = [
            query        = [ alias = "S0" ; dim = $vocabSize$ ;  format = "sparse" ]
            intentLabels = [ alias = "S1" ; dim = $numIntents$ ; format = "sparse" ]
            slotLabels   = [ alias = "S2" ; dim = $numLabels$ ;  format = "sparse" ]
        ]
    ]
]
EvalATIS = [
    action = "eval"
    modelPath = $modelPath$  # the trained model
    reader = [
        readerType = "CNTKTextFormatReader"
        file = "$DataDir$/atis.test.ctf"
        randomize = false
        input = [
            query        = [ alias = "S0" ; dim = $vocabSize$ ;  format = "sparse" ]
            intentLabels = [ alias = "S1" ; dim = $numIntents$ ; format = "sparse" ]
            slotLabels   = [ alias = "S2" ; dim = $numLabels$ ;  format = "sparse" ]
        ]
    ]
]
CFG
# slu NAME RANKS CONFIG: train and evaluate; the test error (in %) to NAME.txt
slu() {
    mpi -n "$2" "$T" configFile="$3" WorkDir="$1" >"$1.out" 2>"$1.err" && ok ||
        { no "$1: the tagger on $2 ranks failed"; tail -5 "$1.err"; }
    sed -n 's/^Final Results: .*errs = \([0-9.]*\)% .*/\1/p' "$1.err" >"$1.txt"
}
below() { awk -v m="$2" '{ v = $1 } END { exit !(NR == 1 && v < m) }' "$1.txt" && ok || { no "$1: test error $(cat "$1.txt") is not below $2 %"; }; }
above() { awk -v m="$2" '{ v = $1 } END { exit !(NR == 1 && v > m) }' "$1.txt" && ok || { no "$1: test error $(cat "$1.txt") is not above $2 %"; }; }
slu slu1 1 slu.cntk
below slu1 2
has slu1.err "Training 5046 parameters in 6 out of 6 parameter tensors"
slu slu2 2 slu.cntk
below slu2 2
has slu2.err "DataParallelSGD training (myRank = 0, numNodes = 2, numGradientBits = 1), distributed reading is ENABLED."
# a fixed embedding from a file (CNTK's EmbeddingLayer {embeddingPath, transpose}, its
# pre-learned word vectors): a word's vector a line with transpose=true, else a dimension a
# line; both files hold the same matrix, so both train the same network; E is not learned
awk 'BEGIN { s = 5; for (w = 0; w < 60; w++) { line = ""; for (d = 0; d < 16; d++) {
    s = (s * 1103515245 + 12345) % 2147483648; line = line sprintf(" %.6f", s / 2147483648 - 0.5) }
    print substr(line, 2) } }' >emb.txt
awk '{ for (d = 1; d <= NF; d++) m[d, NR] = $d; n = NF } END { for (d = 1; d <= n; d++) {
    line = ""; for (w = 1; w <= NR; w++) line = line " " m[d, w]; print substr(line, 2) } }' emb.txt >embT.txt
sed "s/EmbeddingLayer {embDim} :/EmbeddingLayer {embDim, embeddingPath='emb.txt', transpose=true} :/" slu.cntk >embf.cntk
sed "s/EmbeddingLayer {embDim} :/EmbeddingLayer {embDim, embeddingPath='embT.txt'} :/" slu.cntk >embt.cntk
slu embf 1 embf.cntk
below embf 5
# 5046 less the 60 x 16 of E
has embf.err "Training 4086 parameters in 5 out of 5 parameter tensors"
sed -i 's/maxEpochs = 6 ;/maxEpochs = 2 ;/' embt.cntk
slu embt 1 embt.cntk
sed -n 's/^\(Finished Epoch\[ *[0-9]*\) of [0-9]*\(.*\); epochTime=.*/\1\2/p' embf.err | head -n 2 >embf.ep
sed -n 's/^\(Finished Epoch\[ *[0-9]*\) of [0-9]*\(.*\); epochTime=.*/\1\2/p' embt.err >embt.ep
[ "$(wc -l <embt.ep)" -eq 2 ] && cmp -s embf.ep embt.ep && ok ||
    { no "the two embedding files train different networks"; diff embf.ep embt.ep | head -4; }
# the same embeddingPath holding other numbers for another rank (each rank run in its own
# directory): refused before training, on every rank, naming the difference
mkdir -p r0 r1 && cp emb.txt r0/emb.txt && sed '1s/^[^ ]*/0.25/' emb.txt >r1/emb.txt
mpi -n 1 --wdir "$tmp/r0" "$T" configFile="$tmp/embf.cntk" DataDir="$tmp" : \
    -n 1 --wdir "$tmp/r1" "$T" configFile="$tmp/embf.cntk" DataDir="$tmp" >emb2.out 2>emb2.err &&
    no "ranks with different embedding files trained" || ok
has emb2.err "error: rank 1: network's values from files (checksum "
hasnt emb2.err "Finished Epoch"
# refused NAME SOURCE SED-SCRIPT TEXT: SOURCE edited by SED-SCRIPT fails, saying TEXT
refused() {
    sed "$3" "$2" >"$1.cntk"
    expect 1 "$T" configFile="$1.cntk" WorkDir="$1"
    has "$tmp/err" "$4"
}
# what a wrong file gets: its name and line, or what outDim wanted
refused embx embf.cntk 's/emb.txt/none.txt/' \
    "error: EmbeddingLayer: cannot read 'none.txt': No such file or directory"
refused embd embf.cntk 's/transpose=true/transpose=false/' \
    "error: EmbeddingLayer: emb.txt holds 60 x 16 numbers; outDim 16 wants outDim lines (transpose=false)"
sed '3s/^/0.1 x2 /' emb.txt >embn.txt
refused embn embf.cntk 's/emb.txt/embn.txt/' \
    "error: EmbeddingLayer: embn.txt:3: expected a finite number, found 'x2 "
# the same network run backwards cannot see the previous word, nor can one without memory
sed 's/goBackwards=false/goBackwards=true/' slu.cntk >back.cntk
slu back 1 back.cntk
above back 8
sed 's/RecurrentLSTMLayer {hiddenDim, goBackwards=false} :/DenseLayer {hiddenDim, activation=Tanh} :/' slu.cntk >ff.cntk
slu ff 1 ff.cntk
above ff 8

# a recurrence written out: h through PastValue inside a function (arguments are lazy, as
# in CNTK, so prev (h) can name the h being defined); looking ahead (FutureValue) instead
# cannot see the previous word
awk '/^        model = Sequential \($/ { skip = 1;
        print "        prev (s) = PastValue (0, s)"
        print "        model (x) = ["
        print "            E = Parameter (embDim, inputDim)"
        print "            W = Parameter (hiddenDim, embDim)"
        print "            R = Parameter (hiddenDim, hiddenDim)"
        print "            b = Parameter (hiddenDim, 1, init='"'"'fixedValue'"'"', value=0)"
        print "            h = Tanh (W * (E * x) + R * prev (h) + b)"
        print "            V = Parameter (labelDim, hiddenDim)"
        print "            z = V * h + Parameter (labelDim, 1, init='"'"'fixedValue'"'"', value=0)"
        print "        ].z" }
    skip && /^        \)$/ { skip = 0; next } !skip' slu.cntk >rnn.cntk
slu rnn 2 rnn.cntk
below rnn 2
has rnn.err "Model has 19 nodes."
sed 's/prev (s) = PastValue (0, s)/prev (s) = FutureValue (0, s)/' rnn.cntk >rnnf.cntk
slu rnnf 1 rnnf.cntk
above rnnf 8

# the tutorial's current model line: a 3-word window (Parallel of DelayLayer, Identity,
# DelayLayer, joined by Splice) lets even a network without memory see the previous word;
# BiRecurrentLSTMLayer (both directions, spliced) tags as well
sed 's|^            EmbeddingLayer {embDim} :                            # word vectors|            Parallel ((DelayLayer{T=1} : Identity : DelayLayer{T=-1}), Splice) :  # the word before and after\n            EmbeddingLayer {embDim} :|; s|RecurrentLSTMLayer {hiddenDim, goBackwards=false} :  # recurrence|DenseLayer {hiddenDim, activation=Tanh} :|; s|DenseLayer {labelDim}                                # to the labels|DenseLayer {labelDim, initValueScale=7}|' slu.cntk >window.cntk
grep -q 'Parallel ((DelayLayer{T=1}' window.cntk && ok || no "window.cntk was not made"
slu window 1 window.cntk
below window 2
sed 's/RecurrentLSTMLayer {hiddenDim, goBackwards=false}/BiRecurrentLSTMLayer {hiddenDim}/' slu.cntk >bi.cntk
slu bi 1 bi.cntk
below bi 2
has bi.err "Training 9126 parameters in 9 out of 9 parameter tensors"

# intent classification as the tutorial's Intent_BrainScriptNetworkBuilder writes it: one
# label per sequence (S1: the first word's class, S3: the last word's) against the LSTM's
# state at the sequence's end (BS.Sequences.Last) or, run backwards, at its start
# (BS.Sequences.First); a per-step input in their place is refused
awk '/^    BrainScriptNetworkBuilder = \[$/ { skip = 1
        print "    BrainScriptNetworkBuilder = ["
        print "        inputDim = $vocabSize$"
        print "        labelDim = $numIntents$"
        print "        embDim = 16"
        print "        hiddenDim = 24"
        print "        model = Sequential ("
        print "            EmbeddingLayer {embDim} :                                             # word vectors"
        print "            RecurrentLSTMLayer {hiddenDim} : BS.Sequences.Last :                  # the state at the end"
        print "            DenseLayer {labelDim, initValueScale=7}        # to the labels"
        print "        )"
        print "        t = DynamicAxis{}"
        print "        query        = Input {inputDim, dynamicAxis=t}"
        print "        intentLabels = Input {labelDim}"
        print "        z = model (query)"
        print "        ce   = CrossEntropyWithSoftmax (intentLabels, z)"
        print "        errs = ErrorPrediction         (intentLabels, z)"
        print "        featureNodes    = (query)"
        print "        labelNodes      = (intentLabels)"
        print "        criterionNodes  = (ce)"
        print "        evaluationNodes = (errs)"
        print "        outputNodes     = (z)"
        print "    ]" }
    skip && /^    \]$/ { skip = 0; next } !skip' slu.cntk | sed 's/alias = "S1"/alias = "S3"/' >last.cntk
slu last 2 last.cntk
below last 3
has last.err "ce = "
grep -q '\* 1500;' last.err && ok || no "per-sequence criteria count sequences: $(grep '^Finished Epoch\[ 1' last.err)"
sed 's/RecurrentLSTMLayer {hiddenDim} : BS.Sequences.Last :/RecurrentLSTMLayer {hiddenDim, goBackwards=true} : BS.Sequences.First :/; s/alias = "S3"/alias = "S1"/' last.cntk >first.cntk
slu first 1 first.cntk
below first 3
# CNTK's ways to say that an input is sparse (Input's sparse, the deprecated SparseInput
# that CNTK's own test configs use) train the same network: the same criteria, bit for bit
# epochs NAME: each epoch's criteria (not how many epochs it was run for, nor its time)
epochs() { sed -n 's/^\(Finished Epoch\[ *[0-9]*\) of [0-9]*\(.*\); epochTime=.*/\1\2/p' "$1.err"; }
epochs first | head -n 2 >first.ep
# same NAME TEXT WHAT: NAME.cntk, first.cntk changed to hold TEXT, trains first.cntk's
# network (its first two epochs, bit for bit), else WHAT fails
same() {
    sed -i 's/maxEpochs = 6 ;/maxEpochs = 2 ;/' "$1.cntk"
    slu "$1" 1 "$1.cntk"
    epochs "$1" >"$1.ep"
    grep -qF -- "$2" "$1.cntk" && [ "$(wc -l <"$1.ep")" -eq 2 ] && cmp -s first.ep "$1.ep" && ok ||
        { no "$3"; diff first.ep "$1.ep" | head -4; }
}
sed 's/query        = Input {inputDim, dynamicAxis=t}/query        = SparseInput {inputDim, dynamicAxis=t}/' first.cntk >sparse1.cntk
same sparse1 "SparseInput {" "SparseInput trains another network"
sed 's/query        = Input {inputDim, dynamicAxis=t}/query        = Input {inputDim, sparse=true, dynamicAxis=t}/' first.cntk >sparse2.cntk
same sparse2 "sparse=true" "Input's sparse=true trains another network"
# ReconcileDynamicAxis (z, labels), as CNTK's sequence classification test writes it: the
# same network
sed 's/ce   = CrossEntropyWithSoftmax (intentLabels, z)/zp = ReconcileDynamicAxis (z, intentLabels)\n        ce   = CrossEntropyWithSoftmax (intentLabels, zp)/' first.cntk >recon.cntk
same recon "ReconcileDynamicAxis (z" "ReconcileDynamicAxis changes the network"
# cellShape equal to outputDim is the plain LSTM (CNTK's tests write it); another is a
# projection of more cells (CNTK's LSTMBlock): CNTK's parameters (W 4C x 5, H 4C x 24,
# B 4C, the projection Wmr 24 x C: with E 16 x 60 and the dense layer 4 x 24 + 4, 7 076), and
# it learns
sed 's/RecurrentLSTMLayer {hiddenDim, goBackwards=true}/RecurrentLSTMLayer {hiddenDim, cellShape=hiddenDim, goBackwards=true}/' first.cntk >cell.cntk
same cell "cellShape=hiddenDim" "cellShape=outputDim changes the network"
sed 's/cellShape=hiddenDim/cellShape=32/; s/maxEpochs = 2 ;/maxEpochs = 4 ;/' cell.cntk >cell2.cntk
slu cell2 1 cell2.cntk
has cell2.err "Training 7076 parameters in 7 out of 7 parameter tensors"
below cell2 5
refused sparse3 first.cntk 's/query        = Input {inputDim, dynamicAxis=t}/query        = Input {inputDim, sparse="yes"}/' \
    "Input sparse: expected true or false"
sed 's/intentLabels = Input {labelDim}/intentLabels = Input {labelDim}\n        slotLabels = Input {$numLabels$}/; s/CrossEntropyWithSoftmax (intentLabels, z)/CrossEntropyWithSoftmax (slotLabels, Times (Parameter ($numLabels$, $numIntents$), z))/' last.cntk >axis.cntk
expect 1 "$T" configFile=axis.cntk WorkDir=axis
has "$tmp/err" "Input 'slotLabels' is compared per sequence (with BS.Sequences.Last or First) but a sequence has"

# ---- an image input as CNTK's MNIST examples write it (Examples/Image/GettingStarted/
# 01_OneHidden.cntk, Classification/MLP/BrainScript/MLP_MNIST.cntk): Input {28:28:1} is
# its pixels as one vector, first axis fastest (the reader's 784 values), scaled by a
# number (x * featScale, a scalar product in CNTK, not Times); here 4:3:2 images of raw
# grey levels 0..255, the class: more ink in the first half of the values than the second
awk 'BEGIN { s = 31337; for (i = 0; i < 1200; i++) { a = 0; line = "";
    for (j = 0; j < 24; j++) { s = (s * 1103515245 + 12345) % 2147483648;
        v = int(256 * s / 2147483648); line = line " " v; a += (j < 12 ? v : -v) }
    c = a > 0; printf "|features%s |labels %d %d\n", line, 1 - c, c } }' >img.ctf
cat >img.cntk <<'CFG'
command = trainNetwork
trainNetwork = {
    action = "train"
    modelPath = "$Dir$/m"
    BrainScriptNetworkBuilder = {
        imageShape = 4:3:2
        labelDim = 2
        featScale = 1/256
        model(x) = {
            s1 = x * featScale
            h1 = DenseLayer {16, activation=ReLU} (s1)
            z = LinearLayer {labelDim} (h1)
        }
        features = Input {imageShape}
        labels = Input {labelDim}
        out = model (features)
        ce   = CrossEntropyWithSoftmax (labels, out.z)
        errs = ClassificationError (labels, out.z)
        featureNodes = (features) ; labelNodes = (labels)
        criterionNodes = (ce) ; evaluationNodes = (errs) ; outputNodes = (out.z)
    }
    SGD = { minibatchSize = 20 ; maxEpochs = 6 ; learningRatesPerSample = 0.02 ; momentumAsTimeConstant = 0 }
    reader = { readerType = "CNTKTextFormatReader" ; file = "img.ctf"
        input = { features = { dim = 24 ; format = "dense" } ; labels = { dim = 2 ; format = "dense" } } }
}
CFG
# imgcrit LOG: each epoch's "ce errs"
imgcrit() { sed -n 's/^Finished Epoch.*\[Training\] ce = \([0-9.]*\) .*errs = \([0-9.]*\)% .*/\1 \2/p' "$1"; }
"$T" configFile=img.cntk Dir=I >img.out 2>img.err && ok || { no "the image network failed"; tail -5 img.err; }
imgcrit img.err >img.txt
awk 'END { exit !(NR == 6 && $2 < 10) }' img.txt && ok || { no "the image network did not learn"; cat img.txt; }
# the same network with the input as one dimension, x .* Constant, or x / 256: the same bits
sed 's/imageShape = 4:3:2/imageShape = 24/; s/s1 = x \* featScale/s1 = x .* Constant (featScale)/' img.cntk >flat.cntk
sed 's|s1 = x \* featScale|s1 = x / 256|' img.cntk >div.cntk
sed 's|s1 = x \* featScale|s1 = Scale (Constant (featScale), x)|' img.cntk >scale.cntk
# a node over a node: times its Reciprocal (CNTK's ElementDivide); 1/256 is exact
sed 's|s1 = x \* featScale|s1 = x / Constant (256)|' img.cntk >divnode.cntk
for v in flat div scale divnode; do
    "$T" configFile=$v.cntk Dir=$v >$v.out 2>$v.err && ok || { no "$v failed"; tail -5 $v.err; }
    imgcrit $v.err >$v.txt
    cmp -s img.txt $v.txt && ok || { no "$v differs from the image input"; paste img.txt $v.txt; }
done
# what the vector cannot stand for is refused: splicing along the first axis (CNTK
# interleaves the images)
sed 's/s1 = x \* featScale/s1 = Splice (x : x)/' img.cntk >splice.cntk
expect 1 "$T" configFile=splice.cntk Dir=B
has "$tmp/err" "splice.cntk:10:18: error: Splice: axis=1 of tensors of rank 3 is not supported, only their last axis (or a new one)"

# ---- errors: FILE:LINE:COL inside the block, the construct named
bad() { # NAME LINE EXPECTED-TEXT: the network block's line replaced, the error expected
    sed "s|^        z = model (features)\$|$2|" layers.cfg >"$1.cfg"
    expect 1 "$T" configFile="$1.cfg" Dir=B
    has "$tmp/err" "$3"
}
bad syntax '        z = model (features +)' "syntax.cfg:15:30: error: expected an expression after '+'"
bad unknown '        z = modle (features)' "unknown.cfg:15:13: error: unknown name 'modle'"
bad notyet '        z = ReduceProd (features)' \
    "notyet.cfg:15:13: error: ReduceProd is not supported yet by partrain's BrainScript"
bad shape '        z = model (features) + Parameter (3, 1)' "shape.cfg:15:13: error: Plus: operands of shapes"
bad args '        z = model (features, labels)' "args.cfg:15:13: error: Sequential's function takes one argument, got 2"
sed '/criterionNodes/d' layers.cfg >nocrit.cfg
expect 1 "$T" configFile=nocrit.cfg Dir=B
has "$tmp/err" "the network has no criterionNodes and no node tagged 'criterion'"
finish bs_net
