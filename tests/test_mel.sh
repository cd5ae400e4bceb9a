#!/bin/sh
# CNTK's MEL (action=edit with editPath) and makeMode's modelPath.0, on a generated speech
# corpus (tests/htk_gen) with CNTK's discriminative pre-training as its speech DNN test
# writes it (an NDL network with a macro file, add_layer.mel between two trainings):
# - on 2 ranks: pre-train one layer, add a second with the MEL script, train the model it
#   saved as modelPath.0 (CNTK: "Starting from checkpoint. Loading network from ...0"),
#   add a third; the rewired network's nodes are as the script says (Dump); a later run
#   resumes from the edited network's epochs;
# - the loaded model's parameters keep their values: a layer added but not wired in leaves
#   the criterion of action=test the same to the digit, wired in it changes it;
# - wildcards in SetInput; a second edit keeps the first's lines;
# - errors name the script's line: no node matching, a source that is no node, an input
#   index beyond the node's, a loop without a delay, MEL commands not supported, an
#   unknown $variable$, another model format, SaveModel or Dump over a file the script
#   reads (which stays as it was), a name defined again, editPath beside a
#   BrainScriptNetworkBuilder; on 2 ranks a failing script ends both ranks with its reason;
# - makeMode=false ignores modelPath.0, one newer than epoch 1's model starts over, a rank
#   without it stops all, a damaged one is an error; BS.Network.Load of an edited model is refused.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
command -v mpiexec >/dev/null || { echo "test_mel: no mpiexec"; exit 77; }
G=$(cd "${top_builddir:-.}" && pwd)/tests/htk_gen
cd "$tmp"
mkdir -p c && "$G" c utts=120 dim=20 classes=6 >/dev/null || { echo "FAIL: htk_gen"; exit 1; }
cat >macros.txt <<'NDL'
DNNLayer(inDim, outDim, x) = [
    W = Parameter(outDim, inDim)
    b = Parameter(outDim, 1)
    t = Times(W, x)
    z = Plus(t, b)
    y = Sigmoid(z)
]
DNNLastLayer(hiddenDim, LabelDim, x) = [
    W = Parameter(LabelDim, hiddenDim)
    b = Parameter(LabelDim, 1)
    t = Times(W, x)
    z = Plus(t, b)
]
NDL
cat >net.ndl <<'NDL'
load = ndlMacroDefine
run = DNN
ndlMacroDefine = [
    MeanVarNorm(x) = [
        xMean = Mean(x)
        xStdDev = InvStdDev(x)
        xNorm = PerDimMeanVarNormalization(x, xMean, xStdDev)
    ]
]
DNN = [
    features = Input(20, tag="feature")
    labels = Input(6, tag="label")
    featNorm = MeanVarNorm(features)
    HL1 = DNNLayer(20, 16, featNorm)
    OL = DNNLastLayer(16, 6, HL1.y)
    ce = CrossEntropyWithSoftmax(labels, OL, tag="criterion")
    err = ClassificationError(labels, OL, tag="evaluation")
]
NDL
# CNTK's add_layer.mel of Tests/EndToEndTests/Speech/DNN/DiscriminativePreTraining, with a
# Dump as TIMIT's has
cat >add_layer.mel <<'MEL'
m1 = LoadModel("$currModel$", format="cntk")
SetDefaultModel(m1)
HDim = 16
HL$newLayer$ = DNNLayer(HDim, HDim, HL$currLayer$.y)
SetInput(OL.t, 1, HL$newLayer$.y)
SetInput(HL$newLayer$.t, 1, HL$currLayer$.y)
SaveModel(m1, "$newModel$", format="cntk")
Dump(m1, "$newModel$.dump.txt")
MEL
cat >t.cntk <<'CFG'
command = pre1:add2:pre2:add3:train
deviceId = -1
ndlMacros = "macros.txt"
traceLevel = 1
SGD = [ epochSize = 0 ; minibatchSize = 64 ; learningRatesPerMB = 0.8 ; momentumPerMB = 0.9 ; maxEpochs = 2 ]
reader = [ readerType = "HTKMLFReader" ; randomize = "auto"
    features = [ dim = 20 ; scpFile = "c/train.scp" ]
    labels = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 6 ] ]
pre1 = [ action = "train" ; modelPath = "m/Pre1/s" ; NDLNetworkBuilder = [ networkDescription = "net.ndl" ] ]
add2 = [ action = "edit" ; currLayer = 1 ; newLayer = 2 ; currModel = "m/Pre1/s"
         newModel = "m/Pre2/s.0" ; editPath = "add_layer.mel" ]
pre2 = [ action = "train" ; modelPath = "m/Pre2/s" ; NDLNetworkBuilder = [ networkDescription = "net.ndl" ] ]
add3 = [ action = "edit" ; currLayer = 2 ; newLayer = 3 ; currModel = "m/Pre2/s"
         newModel = "m/s.0" ; editPath = "add_layer.mel" ]
train = [ action = "train" ; modelPath = "m/s" ; NDLNetworkBuilder = [ networkDescription = "net.ndl" ] ]
tst = [ action = "test" ; modelPath = "m/Pre1/s" ; minibatchSize = 256
        reader = [ readerType = "HTKMLFReader" ; randomize = "none"
            features = [ dim = 20 ; scpFile = "c/train.scp" ]
            labels = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 6 ] ] ]
CFG

# ---- the pre-training chain on 2 ranks
mpi -n 2 "$T" configFile=t.cntk >chain.out 2>chain.err && ok || { no "the chain on 2 ranks failed"; tail -5 chain.err; }
has chain.err "MEL: model 'm1' (21 nodes) saved as 'm/Pre2/s.0'; 4 parameter tensors from 'm/Pre1/s', 2 new."
has chain.err "Starting from checkpoint. Loading network from 'm/Pre2/s.0'."
hasnt chain.err "unknown key" # the script's $variables$ (currModel, newLayer ...)
has chain.err "Starting from checkpoint. Loading network from 'm/s.0'."
has chain.err "Node 'HL3.W' (LearnableParameter operation) : [16 x 16]"
# CNTK's summary of the edited networks, counted as CNTK counts (NDL's
# PerDimMeanVarNormalization one node: 16 = 2 inputs, 3 of MeanVarNorm, 5 + 4 of the layers,
# ce, err): every node on the way to the criterion counted, though the rewired ones come
# before their new inputs in the graph
has chain.err "Model has 16 nodes. Using CPU."
has chain.err "Model has 21 nodes. Using CPU."
has chain.err "Model has 26 nodes. Using CPU."
has chain.err "Training 710 parameters in 6 out of 6 parameter tensors and 15 nodes with gradient:"
has chain.err "Training 982 parameters in 8 out of 8 parameter tensors and 20 nodes with gradient:"
[ "$(grep -c "Creating virgin network" chain.err)" = 1 ] && ok || no "more than pre1 started afresh"
[ -f m/s ] && [ -f m/Pre2/s.0.dump.txt ] && ok || no "the models or the dump are missing"
has m/s.0.dump.txt "OL.t=Times (OL.W, HL3.y)"
has m/s.0.dump.txt "HL3.t=Times (HL3.W, HL2.y)"
has m/s.0.dump.txt "HL2.t=Times (HL2.W, HL1.y)"
# the last training learns on from the edited model (its error falls)
grep "Finished Epoch" chain.err | tail -2 | awk -F'err = ' '{ split($2, a, " "); print a[1] }' >errs
awk 'NR == 1 { f = $1 } END { exit !($1 < f) }' errs && ok || { no "train did not learn"; cat errs; }

# a third epoch resumes from the edited network's model (its checkpoint compared with .0's
# network, not the configured one)
expect 0 "$T" configFile=t.cntk command=train SGD.maxEpochs=3
has "$tmp/err" "Starting from checkpoint. Loading network from 'm/s.2'."
has "$tmp/err" "Finished Epoch[ 3 of 3]"

# ---- values kept: a layer added but not wired in changes nothing that test computes
cat >keep.mel <<'MEL'
m1 = LoadModel("m/Pre1/s", format = "cntk")   # a comment (named arguments as FCN's scripts space them)
SetDefaultModel(m1)
HX = DNNLayer(16, 16, HL1.y);
SaveModel(m1, "k/keep.dnn")
MEL
expect 0 "$T" configFile=t.cntk command=tst
grep "Final Results" "$tmp/err" >orig.txt
expect 0 "$T" configFile=t.cntk command=e 'e=[action=edit;editPath=keep.mel]'
has "$tmp/err" "saved as 'k/keep.dnn'; 4 parameter tensors from 'm/Pre1/s', 2 new."
expect 0 "$T" configFile=t.cntk command=tst tst.modelPath=k/keep.dnn
grep "Final Results" "$tmp/err" >keep.txt
[ -s orig.txt ] && cmp -s orig.txt keep.txt && ok || { no "an unwired layer changed the results"; cat orig.txt keep.txt; }
# wired in through a wildcard: the output layer reads the new (random) layer
sed 's|SaveModel.*|SetInput(O*.t, 1, HX.y)\nSaveModel(m1, "k/wired.dnn")\nDump(m1, "k/wired.txt")|' keep.mel >wired.mel
expect 0 "$T" configFile=t.cntk command=e 'e=[action=edit;editPath=wired.mel]'
has k/wired.txt "OL.t=Times (OL.W, HX.y)"
has k/wired.txt "HX.W=LearnableParameter [16,16]   learningRateMultiplier=1.000000  NeedsGradient=true"
[ "$(wc -l <k/wired.txt)" -lt 40 ] && ok || no "Dump wrote values without includeData"
expect 0 "$T" configFile=t.cntk command=tst tst.modelPath=k/wired.dnn
grep "Final Results" "$tmp/err" >wired.txt
[ -s wired.txt ] && ! cmp -s orig.txt wired.txt && ok || no "the rewired model computes the same"

# ndlMacros relative to where the script runs, else beside the config that names it (as
# NDLNetworkBuilder reads it); missing: an error naming where it was set
mkdir -p sub && cp macros.txt sub/ && sed 's|ndlMacros = "macros.txt"|ndlMacros = "no/macros.txt"|' t.cntk >sub/t.cntk
expect 0 "$T" configFile=sub/t.cntk command=e 'e=[action=edit;editPath=keep.mel]'
rm sub/macros.txt
expect 1 "$T" configFile=sub/t.cntk command=e 'e=[action=edit;editPath=keep.mel]'
has "$tmp/err" "cannot open ndlMacros 'no/macros.txt': No such file or directory; ndlMacros set at sub/t.cntk:3:"

# ---- errors, each naming the script's line
mel_err() { # NAME LINE-TEXT MESSAGE: a script of the MEL lines in $body fails so
    printf '%s\n' "$body" >"$1.mel"
    expect 1 "$T" configFile=t.cntk command=e "e=[action=edit;editPath=$1.mel]"
    has "$tmp/err" "$2"
}
head2='m1 = LoadModel("m/Pre1/s")
SetDefaultModel(m1)'
saved() { # NAME LINE MESSAGE: line 3 of a script that then saves the model fails so
    body="$head2
$2
SaveModel(m1, \"k/x.dnn\")"
    mel_err "$1" "$3"
}
saved nomatch 'SetInput(XX.t, 1, HL1.y)' "nomatch.mel:3: error: SetInput: no node of the model matches 'XX.t'"
saved nosrc 'SetInput(OL.t, 1, HL9.y)' "nosrc.mel:3: error: SetInput: 'HL9.y' is no node of the model"
saved index 'SetInput(OL.t, 5, HL1.y)' "index.mel:3: error: SetInput: node 'OL.t' (Times) has 2 inputs: no input 5"
saved loop 'SetInput(HL1.t, 1, OL.z)' "loop.mel:3: error: SetInput: 'OL.z' reads 'HL1.t', so this would make a loop"
body="$head2
Rename(HL1, HLx)"
mel_err rename "rename.mel:3: error: MEL's Rename is not supported by partrain"
body='m1 = LoadModel("$nosuch$")'
mel_err novar 'novar.mel:1: error: unknown variable $nosuch$'
body='m1 = LoadModel("m/Pre1/s", format="htk")'
mel_err format "format.mel:1: error: format=htk: the model format is cntk"
saved again 'HL1 = DNNLayer(16, 16, HL1.y)' "again.mel:3: error: 'HL1' is defined already in the model's network"
body="$head2
SetInput(OL.t, 1, HL1.y)
SaveModel(m1, \"m/Pre1/s\")"
cp m/Pre1/s before.dnn
mel_err over "over.mel:4: error: SaveModel: 'm/Pre1/s' is a model that LoadModel read"
cmp -s before.dnn m/Pre1/s && ok || no "the model read was written over"
body="$head2
Dump(m1, \"dumpover.mel\")"
mel_err dumpover "dumpover.mel:3: error: Dump: 'dumpover.mel' is the MEL script"
grep -q LoadModel dumpover.mel && ok || no "Dump wrote over the script"
body="$head2
Frobnicate"
mel_err syntax "syntax.mel:3: error: expected NAME = EXPRESSION, or COMMAND (...)"
expect 1 "$T" configFile=t.cntk command=e 'e=[action=edit;editPath=keep.mel;BrainScriptNetworkBuilder=[x=1]]'
has "$tmp/err" "editPath (a MEL script) or a BrainScriptNetworkBuilder, not both"
[ -f k/x.dnn ] && no "a failed script wrote k/x.dnn" || ok
# on 2 ranks: both end, rank 0's reason printed
mpi -n 2 "$T" configFile=t.cntk command=e 'e=[action=edit;editPath=nosrc.mel]' >r2.out 2>r2.err
[ $? -ne 0 ] && ok || no "a failing script on 2 ranks exited 0"
has r2.err "nosrc.mel:3: error: SetInput: 'HL9.y' is no node of the model"

# ---- makeMode=false trains afresh beside a modelPath.0; BS.Network.Load refuses edits
cp m/s.0 m2.0 2>/dev/null
expect 0 "$T" configFile=t.cntk command=train train.modelPath=m2 makeMode=false SGD.maxEpochs=1
has "$tmp/err" "Creating virgin network."
# a rank that does not see modelPath.0 (another host's disk) stops every rank, saying so
cp m/s.0 m4.0
mpi -n 1 "$T" configFile=t.cntk command=train train.modelPath=m4 : \
    -n 1 "$T" configFile=t.cntk command=train train.modelPath=m5 >mp.out 2>mp.err
[ $? -ne 0 ] && ok || no "ranks that disagree on modelPath.0 trained"
has mp.err "rank 1: makeMode's resumed epoch 0 (no model found) differs from rank 0's 0 (from modelPath.0)"
# CNTK's rule: a modelPath.0 written after epoch 1's model (an edit run again) starts over
cp m/Pre2/s.0 m6.0
expect 0 "$T" configFile=t.cntk command=train train.modelPath=m6 SGD.maxEpochs=1
touch -d "1 minute ago" m6.1 # older than m6.0
expect 0 "$T" configFile=t.cntk command=train train.modelPath=m6 SGD.maxEpochs=1
has "$tmp/err" "Starting from checkpoint. Loading network from 'm6.0'."
expect 0 "$T" configFile=t.cntk command=train train.modelPath=m6 SGD.maxEpochs=2
has "$tmp/err" "Starting from checkpoint. Loading network from 'm6.1'."
echo garbage >m3.0 # a damaged modelPath.0 is an error naming it, not a fresh start
expect 1 "$T" configFile=t.cntk command=train train.modelPath=m3
has "$tmp/err" "m3.0: error: not a partrain model file"
cat >load.cntk <<'CFG'
command = tl
modelPath = "m/s"
tl = [ action = "test" ; deviceId = -1 ; minibatchSize = 256
       BrainScriptNetworkBuilder = [ labels = Input (6, tag = "label") ; m = BS.Network.Load ("m/s")
                                     e = ClassificationError (labels, m.OL.z, tag = "evaluation") ]
       reader = [ readerType = "HTKMLFReader" ; features = [ dim = 20 ; scpFile = "c/train.scp" ]
                  labels = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 6 ] ] ]
CFG
expect 1 "$T" configFile=load.cntk
has "$tmp/err" "edited by a MEL script (SetInput): BS.Network.Load cannot read it"

echo "test_mel: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
