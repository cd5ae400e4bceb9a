#!/bin/sh
# CNTK's NDLNetworkBuilder, read as BrainScript (src/nn/ndl.c). Checked: a network described
# in NDL (a macros file, load= and run= sections, a macro whose result is the line named
# like it, a macro defined in a section and called where a variable has its name in other
# case (AN4's logPrior = LogPrior (labels)), names in any case, bare words, NDL's function
# names (SoftMax), a (a, b) array, L1.W reaching a macro's line) trains epoch for epoch to the numbers of the same network written
# in BrainScript; the inline form (run= naming sections of the config) gives them too; a
# model trained from NDL is tested; a 2-rank run; the 2D Convolution, MaxPooling,
# ImageInput and ImageParameter forms of NDL with $variables$ of the config train;
# init = fromFile reads a parameter's values (kept in the model); CNTK's renames by an alias
# (OutputNodes = ol); tagged and listed evaluation nodes together; and errors name the NDL
# file and line (or the config's), never a crash.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
toy_ctf 'x * x + y * y < 0.5' >d.ctf
cat >macros.ndl <<'NDL'
# an affine layer: the result is its last line, z
DNNLayer(inDim, outDim, x, wScale) = [
    W = LearnableParameter(outDim, inDim, init = uniform, initValueScale = wScale)
    b = LearnableParameter(outDim, 1, init = fixedValue, value = 0)
    t = Times(W, x)
    z = Plus(t, b)
]
# the older form without '='; the result is the line named like the macro, not the last
SigLayer(inDim, outDim, x, wScale)
[
    f = DNNLayer(inDim, outDim, x, wScale)
    SigLayer = Sigmoid(f)
    unused = Minus(f, f)
]
Unused(x) = [ y = NoSuchFunction(x) ]
NDL
cat >net.ndl <<'NDL'
load = io
run = DNN
io = [
    featDim = 2
    LabelDim = 2
    features = InputValue(featDim, tag = feature)
    labels = InputValue(labelDim, tag = label)
    # a macro defined in a section; called where a variable has its name in other case
    Scaled(x) = [ y = Scale(Const(1), x) ]
]
DNN = [
    h1 = siglayer(featDim, 32, features, 1)
    ol = DNNLayer(32, labelDim, h1, 1)
    ce = CEWithSM(labels, ol, tag = Criteria)
    errs = ErrorPrediction(labels, ol)
    scaled = Scaled(ol.z)
    errs2 = ClassificationError(labels, scaled)
    EvalNodes = (errs, errs2)
    prob = SoftMax(ol)
    OutputNodes = (prob)
]
NDL
common='SGD = [ epochSize = 1000 ; minibatchSize = 32 ; learningRatesPerSample = 0.01 ; momentumAsTimeConstant = 300 ; maxEpochs = 3 ]
    reader = [ readerType = CNTKTextFormatReader ; file = "d.ctf"
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]'
cat >n.cntk <<CFG
deviceId = -1
command = train:test
traceLevel = 1
modelPath = "\$M\$/m.dnn"
train = [ action = train
    NDLNetworkBuilder = [ ndlMacros = "macros.ndl" ; networkDescription = "net.ndl" ]
    $common
test = [ action = test ; reader = [ readerType = CNTKTextFormatReader ; file = "d.ctf"
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
cat >b.cntk <<CFG
deviceId = -1
command = train
traceLevel = 1
train = [ action = train ; modelPath = "\$M\$/m.dnn"
    BrainScriptNetworkBuilder = [
        features = Input(2)
        labels = Input(2)
        h1 = [ f = [ W = Parameter(32, 2, init = 'uniform', initValueScale = 1)
                     b = Parameter(32, 1, init = 'fixedValue', value = 0)
                     z = W * features + b ].z
               SigLayer = Sigmoid(f) ].SigLayer
        ol = [ W = Parameter(2, 32, init = 'uniform', initValueScale = 1)
               b = Parameter(2, 1, init = 'fixedValue', value = 0)
               z = W * h1 + b ].z
        ce = CrossEntropyWithSoftmax(labels, ol)
        errs = ClassificationError(labels, ol)
        errs2 = ClassificationError(labels, ol)
        featureNodes = (features) ; labelNodes = (labels) ; criterionNodes = (ce)
        evaluationNodes = (errs : errs2) ; outputNodes = (ol)
    ]
    $common
CFG
# epochs LOG: its Finished Epoch lines without their times
epochs() { grep '^Finished Epoch' "$1" | sed 's/epochTime=.*//'; }
"$T" configFile=n.cntk M=n >n.out 2>n.err && ok || { no "NDL: exit $?"; tail -5 n.err; }
"$T" configFile=b.cntk M=b >b.out 2>b.err && ok || { no "BrainScript: exit $?"; tail -5 b.err; }
has n.err "Node 'h1.f.W' (LearnableParameter operation) : [32 x 2]"
epochs n.err >n.ep
epochs b.err >b.ep
[ "$(wc -l <n.ep)" = 3 ] && cmp -s n.ep b.ep && ok ||
    { no "NDL and BrainScript train otherwise"; diff n.ep b.ep | head -6; }
has n.err "Final Results: Minibatch[1-1]: errs = "
# the inline form: the builder's run= and load= name sections of the config
cat >i.cntk <<CFG
deviceId = -1
command = train
traceLevel = 1
ndlMacros = "macros.ndl"
io = [ featDim = 2 ; labelDim = 2
       features = InputValue(featDim, tag = feature) ; labels = InputValue(labelDim, tag = label) ]
DNN = [
    h1 = SigLayer(featDim, 32, features, 1)
    ol = DNNLayer(32, labelDim, h1, 1)
    ce = CrossEntropyWithSoftmax(labels, ol) ; errs = ErrorPrediction(labels, ol)
    errs2 = ErrorPrediction(labels, ol.z)
    CriterionNodes = (ce) ; EvalNodes = (errs, errs2) ]
train = [ action = train ; modelPath = "\$M\$/m.dnn"
    NDLNetworkBuilder = [ load = io ; run = DNN ]
    $common
CFG
"$T" configFile=i.cntk M=i >i.out 2>i.err && ok || { no "inline NDL: exit $?"; tail -5 i.err; }
epochs i.err >i.ep
cmp -s i.ep b.ep && ok || { no "inline NDL trains otherwise"; diff i.ep b.ep | head -6; }
mpi -n 2 "$T" configFile=n.cntk M=p command=train \
    train.SGD.ParallelTrain=[parallelizationMethod=DataParallelSGD] >p.out 2>p.err && ok ||
    { no "NDL on 2 ranks: exit $?"; tail -5 p.err; }
has p.err "Finished Epoch[ 3 of 3]"
# images: ImageInput, the 2D Convolution, MaxPooling, ImageParameter, $variables$, and a
# macro's call with tag= (CNTK's TIMIT configs: CE = SMBFF (..., tag = "criterion"))
awk 'BEGIN { s = 5; for (i = 0; i < 400; i++) { line = "|features"; t = 0
    for (k = 0; k < 16; k++) { s = (s * 1103515245 + 12345) % 2147483648; v = s / 2147483648
        line = line sprintf(" %.3f", v); if (k % 5 == 0) t += v }
    c = t > 1.6; print line " |labels " 1 - c " " c } }' >img.ctf
cat >img.ndl <<'NDL'
features = ImageInput(4, 4, 1, imageLayout = $layout$)
labels = Input(2)
W = LearnableParameter(4, 9, init = Gaussian, initValueScale = 1)
c = Convolution(W, features, 3, 3, 4, 1, 1, zeroPadding = true, imageLayout = $layout$)
b = ImageParameter(1, 1, 4, init = fixedValue, value = 0, imageLayout = $layout$)
r = RectifiedLinear(Plus(c, b))
p = MaxPooling(r, 2, 2, 2, 2, imageLayout = $layout$)
# a sum among ImageParameter's dims: 2 x (one + 1) x 2 rows (written once as 2 * one + 1 * 2)
one = 1
Wo = ImageParameter(2, one + 1, 2, 4, init = uniform, imageLayout = $layout$)
ol = Plus(Times(Wo, p), LearnableParameter(2, 1, init = fixedValue, value = 0))
# a macro's call tagged: its result is the criterion
Crit(l, z) = [ c = CrossEntropyWithSoftmax(l, z) ]
ce = Crit(labels, ol, tag = "criterion")
err = ErrorPrediction(labels, ol)
FeatureNodes = (features) ; LabelNodes = (labels) ; EvalNodes = (err)
NDL
cat >img.cntk <<'CFG'
deviceId = -1
command = train
layout = "cudnn"
train = [ action = train ; modelPath = "$M$/m.dnn"
    NDLNetworkBuilder = [ networkDescription = "img.ndl" ]
    SGD = [ epochSize = 400 ; minibatchSize = 16 ; learningRatesPerSample = 0.01 ; maxEpochs = 2 ]
    reader = [ readerType = CNTKTextFormatReader ; file = "img.ctf"
        input = [ features = [ dim = 16 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
"$T" configFile=img.cntk M=g >g.out 2>g.err && ok || { no "image NDL: exit $?"; tail -5 g.err; }
has g.err "Finished Epoch[ 2 of 2]"
# (no other criterion) named as CNTK names a macro's result: the call's name, then the line's
# (CNTK's TIMIT logs: CE.SM, MeanSqErr.MSE)
has g.err "Training criterion:   ce.c = CrossEntropyWithSoftmax"
# init = fromFile: a fixed projection read from a text file (a line a row), kept in the model
# (tested without the file), written out by action=write: proj = P x with P = [1 2; 3 4]
printf '1 2\n3 4\n' >proj.txt
cat >proj.ndl <<'NDL'
features = Input(2) ; labels = Input(2)
P = Parameter(2, 2, init = fromFile, initFromFilePath = "proj.txt", learningRateMultiplier = 0)
proj = Times(P, features)
W = Parameter(2, 2) ; ol = Plus(Times(W, proj), Parameter(2, 1, init = fixedValue, value = 0))
ce = CrossEntropyWithSoftmax(labels, ol) ; err = ErrorPrediction(labels, ol)
FeatureNodes = (features) ; LabelNodes = (labels) ; CriterionNodes = (ce) ; EvalNodes = (err)
NDL
cat >proj.cntk <<CFG
deviceId = -1
command = train:write
modelPath = "pm/m.dnn"
train = [ action = train
    NDLNetworkBuilder = [ networkDescription = "proj.ndl" ]
    $common
write = [ action = write ; outputPath = "out" ; outputNodeNames = proj
    reader = [ readerType = CNTKTextFormatReader ; file = "d.ctf" ; randomize = false
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
"$T" configFile=proj.cntk >j.out 2>j.err && ok || { no "fromFile: exit $?"; tail -5 j.err; }
awk 'NR == FNR { a[FNR] = $2; b[FNR] = $3; next }
     { d = $1 - (a[FNR] + 2 * b[FNR]); e = $2 - (3 * a[FNR] + 4 * b[FNR])
       if (d * d + e * e > 1e-8) bad++ } END { exit bad || FNR != 2000 }' d.ctf out.proj && ok ||
    { no "fromFile: proj is not [1 2; 3 4] x"; head -2 out.proj; }
mv proj.txt proj.bak
"$T" configFile=proj.cntk command=write write.outputPath=out2 >j.out 2>j.err && cmp -s out.proj out2.proj && ok ||
    { no "fromFile: the model's values without the file"; tail -3 j.err; }
mv proj.bak proj.txt
# TIMIT's multi-task objective: a macro weighing two criteria with Times (Constant (w), ce)
# (NDL's Constant (w) is 1 x 1), tagged criterion: the logged ObjFcn.O is 0.8 CE1 + 0.2 CE2
cat >mt.ndl <<'NDL'
WtObjFcn(o1, w1, o2, w2) = [ A1 = Constant(w1) ; A2 = Constant(w2) ; T1 = Times(A1, o1) ; T2 = Times(A2, o2) ; O = Plus(T1, T2) ]
features = Input(2) ; labels = Input(2)
h = Sigmoid(Plus(Times(Parameter(16, 2), features), Parameter(16, 1)))
z1 = Times(Parameter(2, 16), h) ; z2 = Times(Parameter(2, 16), h)
CE1 = CrossEntropyWithSoftmax(labels, z1, tag = "evaluation") ; CE2 = CrossEntropyWithSoftmax(labels, z2, tag = "evaluation")
ObjFcn = WtObjFcn(CE1, 0.8, CE2, 0.2, tag = "criterion")
FeatureNodes = (features) ; LabelNodes = (labels)
NDL
"$T" configFile=n.cntk M=mt command=train train.NDLNetworkBuilder.networkDescription=mt.ndl >mt.out 2>mt.err && ok ||
    { no "multi-task NDL: exit $?"; tail -3 mt.err; }
sed -n 's/^Finished Epoch\[ 3 of 3\]: \[Training\] ObjFcn.O = \([0-9.]*\) .*CE1 = \([0-9.]*\) .*CE2 = \([0-9.]*\) .*/\1 \2 \3/p' mt.err |
    awk '{ d = $1 - (0.8 * $2 + 0.2 * $3); exit !(NF == 3 && d < 1e-5 && d > -1e-5) }' && ok ||
    { no "ObjFcn.O is not 0.8 CE1 + 0.2 CE2"; grep '^Finished' mt.err; }
# CNTK's renames (AlexNet's, CIFAR-10's and ResNet's `OutputNodes = ol`): an alias names the
# node it stands for, a macro's nodes too (OutputNodes.W ... OutputNodes.z), the last alias
# winning, an alias of an alias too (final2 = final); a node group in parentheses renames
# nothing; the training is the same; the write action and MEL find the nodes by those names
# (Base64Write's outputNodeNames = OutputNodes.z, AlexNet's add_top5_layer.mel; its Dump
# shows the script's nodes so far)
sed 's/^    OutputNodes = (prob)$/    OutputNodes = ol\n    last = prob\n    final = prob\n    final2 = final\n    LabelNodes = (labels)/' net.ndl >rn.ndl
"$T" configFile=n.cntk M=rn command=train train.NDLNetworkBuilder.networkDescription=rn.ndl \
    >rn.out 2>rn.err && ok || { no "renames: exit $?"; tail -3 rn.err; }
has rn.err "Node 'OutputNodes.W' (LearnableParameter operation) : [2 x 32]"
hasnt rn.err "Node 'ol.W'"
hasnt rn.err "LabelNodes"
epochs rn.err >rn.ep
cmp -s n.ep rn.ep && ok || { no "a rename changed the training"; diff n.ep rn.ep | head -4; }
"$T" configFile=n.cntk M=rn command=w 'w=[action=write;outputPath=rn/o;outputNodeNames=OutputNodes.z:final2]' \
    'w.reader=[readerType=CNTKTextFormatReader;file=d.ctf;input=[features=[dim=2;format=dense];labels=[dim=2;format=dense]]]' \
    >w.out 2>w.err && [ -s rn/o.OutputNodes.z ] && [ -s rn/o.final2 ] && ok ||
    { no "write OutputNodes.z and final2"; tail -3 w.err; ls rn; }
cat >top5.mel <<'MEL'
m1 = LoadModel("rn/m.dnn", format="cntk")
SetDefaultModel(m1)
errTop1 = ClassificationError(labels, outputNodes.z, Const(1), tag="evaluation")
Dump(m1, "rn/top.txt")
SaveModel(m1, "rn/top.dnn", format="cntk")
MEL
"$T" configFile=n.cntk M=rn command=e 'e=[action=edit;editPath=top5.mel]' \
    >e.out 2>e.err && ok || { no "MEL with outputNodes.z: exit $?"; tail -3 e.err; }
has rn/top.txt "errTop1=ClassificationError (labels, OutputNodes.z)" # dumped before the save
has e.err "saved as 'rn/top.dnn'; 4 parameter tensors from 'rn/m.dnn', 0 new."
# a line tagged for evaluation beside EvalNodes = (...): both evaluated, the tagged one
# first, as CNTK's NDL makes the group (its MNIST 01_OneHidden reports "ce; top5Errs; errs")
sed 's/^    EvalNodes = (errs, errs2)$/    top1 = ClassificationError(labels, ol, tag = "eval")\n    EvalNodes = (errs, errs2)/' net.ndl >ev.ndl
"$T" configFile=n.cntk M=ev command=train train.NDLNetworkBuilder.networkDescription=ev.ndl \
    >ev.out 2>ev.err && ok || { no "tagged and listed: exit $?"; tail -3 ev.err; }
grep -q '^Finished Epoch\[ 1 of 3\]: \[Training\] ce = [0-9.]* \* 1000; top1 = [0-9.]* \* 1000; errs = [0-9.]*% \* 1000; errs2 = ' ev.err &&
    ok || { no "tagged and listed evaluation nodes"; grep -E "Finished|error" ev.err; }
# errors: the NDL file and line, or the config's
fails() { # EXPECTED-TEXT ARGS...: the run fails (not a crash) saying EXPECTED-TEXT
    want=$1
    shift
    "$T" "$@" >f.out 2>f.err
    rc=$?
    [ $rc = 1 ] && grep -qF -- "$want" f.err && ok ||
        { no "expected exit 1 with '$want', got $rc:"; tail -3 f.err; }
}
fails "<command line>:arg4: error: train.NDLNetworkBuilder.networkDescription: cannot read the NDL file 'nope.ndl'" \
    configFile=n.cntk M=e command=train train.NDLNetworkBuilder.networkDescription=nope.ndl
sed 's/^run = DNN/run = NoSuch/' net.ndl >bad1.ndl
fails "bad1.ndl:2:1: error: run=NoSuch: the NDL file has no section [ ... ] called 'NoSuch'" \
    configFile=n.cntk M=e command=train train.NDLNetworkBuilder.networkDescription=bad1.ndl
fails "img.ndl:1:46: error: expected an expression after '='" configFile=img.cntk M=e layout=
sed 's/^layout = "cudnn"//' img.cntk >nolayout.cntk
fails "img.ndl:1:46: error: unknown variable \$layout\$" configFile=nolayout.cntk M=e
sed 's/h1 = siglayer(featDim, 32, features, 1)/h1 = NoSuchLayer(featDim, 32, features, 1)/' net.ndl >bad2.ndl
fails "bad2.ndl:12:10: error: unknown name 'NoSuchLayer'" \
    configFile=n.cntk M=e command=train train.NDLNetworkBuilder.networkDescription=bad2.ndl
printf 'x = (\n' >>macros.ndl
fails "macros.ndl:" configFile=n.cntk M=e command=train
printf '1 2\n3\n' >short.txt
sed 's/proj.txt/short.txt/' proj.ndl >short.ndl
fails "short.ndl:2:5: error: Parameter: short.txt:2: 1 values, the parameter has 2 columns" \
    configFile=proj.cntk command=train train.NDLNetworkBuilder.networkDescription=short.ndl
sed 's/proj.txt/none.txt/' proj.ndl >none.ndl
fails "none.ndl:2:5: error: Parameter: cannot read initFromFilePath 'none.txt'" \
    configFile=proj.cntk command=train train.NDLNetworkBuilder.networkDescription=none.ndl
: >empty.ndl
fails "empty.ndl:2:1: error: the network has no criterionNodes" \
    configFile=proj.cntk command=train train.NDLNetworkBuilder.networkDescription=empty.ndl
printf 'x = Input(2)\nX = Plus(x, x)\n' >dup.ndl
fails "dup.ndl:2:1: error: 'X' is 'x' (dup.ndl:1:1) again: NDL's names have no case" \
    configFile=proj.cntk command=train train.NDLNetworkBuilder.networkDescription=dup.ndl
sed 's/imageLayout = \$layout\$)$/imageLayout = HWC)/; 1s/ImageInput(4, 4, 1,/ImageInput(4, 4, 3,/' img.ndl >hwc.ndl
fails "hwc.ndl:1:12: error: ImageInput: imageLayout='HWC'" \
    configFile=img.cntk M=e train.NDLNetworkBuilder.networkDescription=hwc.ndl
echo "test_ndl: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
