#!/bin/sh
# action=SVD (CNTK's low-rank decomposition of weight matrices, src/train/svd.c), as CNTK's
# Speech/SVD test runs it: train a SimpleNetworkBuilder DNN, decompose W.* with KeepRatio
# 0.5, train the decomposed model from modelPath.0 (a makeMode training whose
# NDLNetworkBuilder names a file that does not exist), on 2 ranks:
# - CNTK's lines: the group, one "Performing SVD" line per matrix in name order, the kept
#   rank the dims of W<i>_U / W<i>_V, 25 nodes before and 31 after, 9 of 9 tensors and 21
#   nodes with gradient, training starts from modelPath.0 and learns;
# - KeepRatio = 1 keeps the function: action=test gives the original model's criteria, for
#   the SimpleNetworkBuilder network and for a BrainScript one whose matrix two products
#   read (W_SVD, W_SVD1) and a Plus reads (W_SVD2 = W_U W_V); AlignedSize rounds the rank up;
# - SVDConfig's groups (in their expressions' order, each with its ratio);
# - errors: an expression that matches no matrix (the matrices listed), one that does not
#   compile (the config's line), outputModelPath = modelPath or a symlink (nothing
#   written), KeepRatio out of range, a bad SVDConfig line (its file and line), neither key,
#   a missing model; on 2 ranks a failure ends both with rank 0's reason.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
command -v mpiexec >/dev/null || { echo "test_svd: no mpiexec"; exit 77; }
cd "$tmp"
square_ctf 91 0.1 >img.ctf
square_cfg >p.cfg <<'CFG'
command = speechTrain:modelDecomposition:SVDTrain
RunDir = run
traceLevel = 1
@READER@
speechTrain = [
    action = train
    modelPath = $RunDir$/models/cntkSpeech.dnn
    SimpleNetworkBuilder = [
        layerSizes = 36:24:16:2
        trainingCriterion = CrossEntropyWithSoftmax
        evalCriterion = ClassificationError
        layerTypes = RectifiedLinear
        applyMeanVarNorm = true
        uniformInit = false
        needPrior = true
    ]
    SGD = [ epochSize = 0 ; minibatchSize = 32 ; learningRatesPerMB = 0.5 ; momentumPerMB = 0.9
            maxEpochs = 6 ; keepCheckPointFiles = false ]
]
modelDecomposition = [
    action = SVD
    modelPath = $RunDir$/models/cntkSpeech.dnn
    outputmodelPath = $RunDir$/models/cntkSpeech.svd.dnn.0
    KeepRatio = 0.5
    NodeNameRegex = W.*
]
SVDTrain = [
    action = train
    makeMode = true
    modelPath = $RunDir$/models/cntkSpeech.svd.dnn
    NDLNetworkBuilder = [ NetworkDescription = $RunDir$/nonExistent.ndl ]
    SGD = [ epochSize = 0 ; minibatchSize = 32 ; learningRatesPerMB = 0.2 ; momentumPerMB = 0.9
            maxEpochs = 2 ; keepCheckPointFiles = false ]
]
test = [
    action = test
    minibatchSize = 100
    @TESTREADER@
]
CFG
mpi -n 2 "$T" configFile=p.cfg >two.out 2>two.err && ok || { no "2 ranks: exit $?"; tail -5 two.err; }
has two.err "ParameterSVD: start to process group 0 with KeepRatio=0.50"
grep "Performing SVD for a" two.err | sed 's/.*node name: \([^ ]*\).*/\1/' | tr '\n' ' ' >order.txt
[ "$(cat order.txt)" = "W0 W1 W2 " ] && ok || no "decomposed: $(cat order.txt)"
has two.err "Performing SVD for a    24-by-36    matrix (node name: W0                  )"
for w in W0:24:36 W1:16:24 W2:2:16; do
    n=${w%%:*} rows=$(echo "$w" | cut -d: -f2) cols=${w##*:}
    r=$(sed -n "s/.*node name: $n .*===> keep *\([0-9]*\) svd values.*/\1/p" two.err)
    [ -n "$r" ] && [ "$r" -ge 1 ] && ok || no "$n: no rank kept ('$r')"
    # aligned to 8, at most min(rows, cols)
    min=$rows; [ "$cols" -lt "$min" ] && min=$cols
    { [ $((r % 8)) -eq 0 ] || [ "$r" -eq "$min" ]; } && [ "$r" -le "$min" ] && ok || no "$n: rank $r"
    has two.err "Node '${n}_U' (LearnableParameter operation) : [$rows x $r]"
    has two.err "Node '${n}_V' (LearnableParameter operation) : [$r x $cols]"
    sed -n '/SVDTrain command/,$p' two.err >after.err
    hasnt after.err "Node '$n' (LearnableParameter operation)"
done
has two.err "Model has 25 nodes."
has two.err "Model has 31 nodes."
has two.err "Starting from checkpoint. Loading network from 'run/models/cntkSpeech.svd.dnn.0'."
has two.err "parameters in 9 out of 9 parameter tensors and 21 nodes with gradient:"
[ "$(count two.err 'Finished Epoch[')" -eq 8 ] && ok || no "epochs: $(count two.err 'Finished Epoch[')"
[ -f run/models/cntkSpeech.svd.dnn ] && ok || no "no decomposed model trained"
# the decomposed model keeps what was learned: its first epoch's error is low already
sed -n 's/^Finished Epoch.*EvalClassificationError = \([0-9.e+-]*\) .*/\1/p' two.err >errs.txt
awk 'NR == 6 && $1 <= 0.05 { a = 1 } NR == 7 && $1 <= 0.1 { b = 1 } END { exit !(a && b) }' errs.txt &&
    ok || { no "the decomposed model lost what was learned"; cat errs.txt; }

# KeepRatio = 1: every singular value, the same function (test on both models)
cat >keep.cfg <<'CFG'
command = svd:t0:t1
svd = [ action = SVD ; modelPath = run/models/cntkSpeech.dnn ; outputModelPath = full.dnn
        KeepRatio = 1 ; NodeNameRegex = "W[0-9]" ; AlignedSize = 1 ]
t0 = [ action = test ; modelPath = run/models/cntkSpeech.dnn ; minibatchSize = 100 ]
t1 = [ action = test ; modelPath = full.dnn ; minibatchSize = 100 ]
CFG
printf 'reader = [ readerType = CNTKTextFormatReader ; file = img.ctf ; randomize = false\n    input = [ features = [ dim = 36 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]\n' >>keep.cfg
expect 0 "$T" configFile=keep.cfg svd.outputModelPath=new/dir/full.dnn t1.modelPath=new/dir/full.dnn
has "$tmp/err" "keep    16 svd values (reduce to 166.7% parameters)"
grep "^Final Results" "$tmp/err" | sed 's/.*Minibatch\[[^]]*\]: //; s/[^0-9. ]//g' >fr.txt
sed -n 1p fr.txt >f0.txt
sed -n 2p fr.txt >f1.txt
[ "$(wc -l <fr.txt)" -eq 2 ] && close f0.txt f1.txt 1e-4 && ok || { no "KeepRatio=1 changed the function"; cat fr.txt; }

# AlignedSize rounds up: 5 for the 24 x 36 matrix at KeepRatio 0.3
expect 0 "$T" configFile=keep.cfg command=svd svd.KeepRatio=0.3 svd.AlignedSize=5 \
    svd.NodeNameRegex=W0
r=$(sed -n 's/.*===> keep *\([0-9]*\) svd values.*/\1/p' "$tmp/err")
[ -n "$r" ] && [ $((r % 5)) -eq 0 ] && ok || no "AlignedSize=5 kept $r"

# a BrainScript network: W2 read by two products and by a Plus
cat >bs.cfg <<'CFG'
command = train:svd:t0:t1
reader = [ readerType = CNTKTextFormatReader ; file = img.ctf ; randomize = false
    input = [ features = [ dim = 36 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]
train = [ action = train ; modelPath = bs.dnn
    BrainScriptNetworkBuilder = [
        features = Input (36) ; labels = Input (2)
        W1 = Parameter (12, 36) ; b1 = Parameter (12, 1, init = 'fixedValue', value = 0)
        h = Tanh (Times (W1, features) + b1)
        W2 = Parameter (12, 12)
        g = Tanh (Times (W2, h)) + Tanh (Times (W2, Sigmoid (h))) + Times (W2 + W2, Tanh (h))
        Wo = Parameter (2, 12)
        z = Times (Wo, g)
        ce = CrossEntropyWithSoftmax (labels, z) ; err = ClassificationError (labels, z)
        criterionNodes = (ce) ; evaluationNodes = (err) ; outputNodes = (z)
    ]
    SGD = [ minibatchSize = 32 ; learningRatesPerMB = 0.5 ; maxEpochs = 2 ] ]
svd = [ action = SVD ; modelPath = bs.dnn ; outputModelPath = bs.svd ; KeepRatio = 1
        SVDConfig = groups.txt ]
t0 = [ action = test ; modelPath = bs.dnn ; minibatchSize = 100 ]
t1 = [ action = test ; modelPath = bs.svd ; minibatchSize = 100 ]
CFG
printf 'W2 1\n\nW1 0.9\n' >groups.txt
expect 0 "$T" configFile=bs.cfg traceLevel=1
has "$tmp/err" "ParameterSVD: start to process group 0 with KeepRatio=0.90"
has "$tmp/err" "ParameterSVD: start to process group 1 with KeepRatio=1.00"
grep "^Final Results" "$tmp/err" | sed 's/.*Minibatch\[[^]]*\]: //; s/[^0-9. ]//g' >fr.txt
sed -n 1p fr.txt >f0.txt
sed -n 2p fr.txt >f1.txt
[ "$(wc -l <fr.txt)" -eq 2 ] && close f0.txt f1.txt 1e-4 && ok || { no "BrainScript: KeepRatio=1 changed the function"; cat fr.txt; }
cat >plot.cfg <<'CFG'
command = p
p = [ action = plot ; modelPath = bs.svd ; outputDotFile = bs.dot ]
CFG
expect 0 "$T" configFile=plot.cfg
for n in W2_U W2_V W2_SVD W2_SVD1 W2_SVD2 W1_U W1_V W1_SVD; do has bs.dot "\"$n\" [ label"; done
hasnt bs.dot '"W2" [ label'
hasnt bs.dot '"W1" [ label'

# errors
cp run/models/cntkSpeech.dnn before.dnn
expect 1 "$T" configFile=keep.cfg command=svd svd.NodeNameRegex=V.* svd.outputModelPath=none.dnn
has "$tmp/err" "'V.*' matches the whole name of no parameter matrix of 'run/models/cntkSpeech.dnn' (its matrices: W0 [24 x 36], W1 [16 x 24], W2 [2 x 16])"
[ ! -e none.dnn ] && ok || no "a model was written"
printf 'command = svd\nsvd = [ action = SVD ; modelPath = run/models/cntkSpeech.dnn\n  outputModelPath = x.dnn ; NodeNameRegex = "W[" ]\n' >bad.cfg
expect 1 "$T" configFile=bad.cfg
has "$tmp/err" "bad.cfg:3:"
has "$tmp/err" "'W[' is no regular expression"
expect 1 "$T" configFile=keep.cfg command=svd svd.outputModelPath=run/models/cntkSpeech.dnn
has "$tmp/err" "is modelPath"
cmp -s before.dnn run/models/cntkSpeech.dnn && ok || no "the model was written over"
echo keep >target.txt
ln -s target.txt link.dnn
expect 1 "$T" configFile=keep.cfg command=svd svd.outputModelPath=link.dnn
[ "$(cat target.txt)" = keep ] && ok || no "written through a symlink"
expect 1 "$T" configFile=keep.cfg command=svd svd.KeepRatio=0
has "$tmp/err" "KeepRatio"
expect 1 "$T" configFile=keep.cfg command=svd svd.KeepRatio=1.5
has "$tmp/err" "KeepRatio"
printf 'W0 0.5\nW1\n' >badgroups.txt
expect 1 "$T" configFile=keep.cfg command=svd svd.NodeNameRegex= svd.SVDConfig=badgroups.txt
has "$tmp/err" "badgroups.txt:2: error: expected \"REGEX KEEPRATIO\""
expect 1 "$T" configFile=keep.cfg command=svd svd.NodeNameRegex=
has "$tmp/err" "action=SVD needs NodeNameRegex"
expect 1 "$T" configFile=keep.cfg command=svd svd.modelPath=missing.dnn
has "$tmp/err" "missing.dnn"
mpi -n 2 "$T" configFile=keep.cfg command=svd svd.NodeNameRegex=V.* >m2.out 2>m2.err
st=$?
[ "$st" -ne 0 ] && ok || no "2 ranks: a failed SVD exited 0"
has m2.err "matches the whole name of no parameter matrix"
finish test_svd
