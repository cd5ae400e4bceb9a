#!/bin/sh
# CTC (ForwardBackward, LabelsToGraph, EditDistanceError: src/nn/graph_ctc.c) trained as
# CNTK's Speech/LSTM_CTC_MLF test trains it, on a corpus from tests/htk_gen: the HTK
# feature and MLF deserializers with phoneBoundaries, a recurrent network, the blank the
# last class:
# - on 1 and 2 ranks the criterion falls and the token error rate with it; action=test of
#   the model reports both;
# - refused, naming where: phoneBoundaries with frameMode, with a binary MLF; truncated
#   minibatches (a sequence that goes on) end the run with the reason, on 2 ranks both.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
command -v mpiexec >/dev/null || { echo "test_ctc: no mpiexec"; exit 77; }
G=$(cd "${top_builddir:-.}" && pwd)/tests/htk_gen
cd "$tmp"
mkdir -p c b && "$G" c utts=80 dim=12 classes=6 >/dev/null && "$G" b utts=20 dim=12 classes=6 binmlf=1 >/dev/null ||
    { echo "FAIL: htk_gen"; exit 1; }
(cat c/state.list; echo blank) >c/ctc.list
cat >ctc.cfg <<'CFG'
command = train:test
deviceId = -1
frameMode = false
truncated = false
traceLevel = 1
modelPath = $Dir$/ctc.dnn
reader = [ randomize = false
    deserializers = (
        [ type = "HTKFeatureDeserializer" ; module = "HTKDeserializers"
          input = [ features = [ dim = 12 ; scpFile = "c/train.scp" ] ] ] :
        [ type = "HTKMLFDeserializer" ; module = "HTKDeserializers"
          input = [ labels = [ dim = 7 ; mlfFile = "$Mlf$" ; labelMappingFile = "c/ctc.list"
                               labelType = Category ; phoneBoundaries = true ] ] ] ) ]
Mlf = c/train.mlf
train = [ action = train
    BrainScriptNetworkBuilder = [
        features = Input {12}
        labels = Input {7}
        h = RecurrentLSTMLayer {24} (features)
        z = DenseLayer {7} (h)
        graph = LabelsToGraph (labels)
        cr = ForwardBackward (graph, z, 6, delayConstraint = 3, tag = "criterion")
        Err = EditDistanceError (labels, z, squashInputs = true, tokensToIgnore = 6, tag = "evaluation")
    ]
    SGD = [ epochSize = 0 ; minibatchSize = 200 ; learningRatesPerSample = 0.05
            momentumAsTimeConstant = 200 ; maxEpochs = 12 ] ]
test = [ action = test ; minibatchSize = 200 ]
CFG
vals() { sed -n 's/^Finished Epoch.* cr = \([0-9.e+-]*\) .* Err = \([0-9.e+-]*\) .*/\1 \2/p' "$1"; }
for n in 1 2; do
    mpi -n $n "$T" configFile=ctc.cfg Dir=r$n >r$n.out 2>r$n.err && ok || { no "$n ranks: exit $?"; tail -5 r$n.err; }
    vals r$n.err >r$n.txt
    [ "$(wc -l <r$n.txt)" -eq 12 ] && ok || no "$n ranks: $(wc -l <r$n.txt) epochs"
    awk 'NR == 1 { c = $1; e = $2 } END { exit !($1 < 0.6 * c && $2 < e && $2 < 0.1) }' r$n.txt &&
        ok || { no "$n ranks: CTC did not learn"; cat r$n.txt; }
    grep -q "^Final Results: .*Err = .*cr = " r$n.err && ok || no "$n ranks: no Final Results"
done
expect 1 "$T" configFile=ctc.cfg Dir=x frameMode=true
has "$tmp/err" "phoneBoundaries = true needs frameMode = false"
expect 1 "$T" configFile=ctc.cfg Dir=x Mlf=b/train.mlf
has "$tmp/err" "is binary: phoneBoundaries needs a text MLF"
mpi -n 2 "$T" configFile=ctc.cfg Dir=x truncated=true "reader=[nbruttsineachrecurrentiter=2]" >t.out 2>t.err
[ $? -ne 0 ] && ok || no "truncated CTC exited 0"
has t.err "ForwardBackward needs whole utterances"
finish test_ctc
