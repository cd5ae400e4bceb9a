#!/bin/sh
# CTC (ForwardBackward, LabelsToGraph, EditDistanceError: src/nn/graph_ctc.c) trained as
# CNTK's Speech/LSTM_CTC_MLF test trains it, on a corpus from tests/htk_gen: the HTK
# feature and MLF deserializers with phoneBoundaries, a recurrent network, the blank the
# last class:
# - on 1 and 2 ranks the criterion falls and the token error rate with it; action=test of
#   the model reports both;
# - the labels from a text-format file beside the features (CNTK's Speech/LSTM_CTC) train
#   exactly as the MLF's; a row of two tokens, a line without a sequence id, a sequence
#   split in two are errors naming file:line;
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
# the labels from a text-format file beside the features (CNTK's Speech/LSTM_CTC): the
# utterances renamed 0, 1, ... in a script file, each frame's state a line, 2 where a
# segment starts; the same training as from the MLF, to the digit
awk -F= '{ print NR - 1 "=" $2 }' c/train.scp >c/ctc.scp
awk 'NR == FNR { id[$1] = NR - 1; next }
     /^"/ { u++; next } /^\./ || /^#/ { next }
     { a = int($1 / 100000); b = int($2 / 100000)
       for (t = a; t < b; t++) printf "%d |l %d:%d\n", u - 1, id[$3], t == a ? 2 : 1 }' \
    c/state.list c/train.mlf >c/ctc.ctf
cat >ctf.cfg <<'CFG'
include = "ctc.cfg"
reader = [ randomize = false
    deserializers = (
        [ type = "HTKFeatureDeserializer" ; module = "HTKDeserializers"
          input = [ features = [ dim = 12 ; scpFile = "c/ctc.scp" ] ] ] :
        [ type = "CNTKTextFormatDeserializer" ; module = "CNTKTextFormatReader"
          file = "$Ctf$" ; input = [ labels = [ alias = "l" ; dim = 7 ; format = "sparse" ] ] ] ) ]
Ctf = c/ctc.ctf
CFG
expect 0 "$T" configFile=ctf.cfg Dir=t1 train.SGD.maxEpochs=3
has "$tmp/err" "Text-format labels: 80 utterances with"
vals "$tmp/err" >t1.txt
head -n 3 r1.txt >r1_3.txt
cmp -s t1.txt r1_3.txt && ok || { no "text-format labels train otherwise than the MLF's"; paste t1.txt r1_3.txt; }
sed '1s/$/ 5:1/' c/ctc.ctf >c/two.ctf
expect 1 "$T" configFile=ctf.cfg Dir=x Ctf=c/two.ctf
has "$tmp/err" "c/two.ctf:1: error: expected one token a frame in |l"
sed '5s/^[0-9]* //' c/ctc.ctf >c/noid.ctf
expect 1 "$T" configFile=ctf.cfg Dir=x Ctf=c/noid.ctf
has "$tmp/err" "c/noid.ctf:5:1: error: expected a sequence id"
{ cat c/ctc.ctf; head -n 1 c/ctc.ctf; } >c/split.ctf
expect 1 "$T" configFile=ctf.cfg Dir=x Ctf=c/split.ctf
has "$tmp/err" "sequence 0 again, after other sequences"
expect 1 "$T" configFile=ctc.cfg Dir=x frameMode=true
has "$tmp/err" "phoneBoundaries = true needs frameMode = false"
expect 1 "$T" configFile=ctc.cfg Dir=x Mlf=b/train.mlf
has "$tmp/err" "is binary: phoneBoundaries needs a text MLF"
mpi -n 2 "$T" configFile=ctc.cfg Dir=x truncated=true "reader=[nbruttsineachrecurrentiter=2]" >t.out 2>t.err
[ $? -ne 0 ] && ok || no "truncated CTC exited 0"
has t.err "ForwardBackward needs whole utterances"
finish test_ctc
