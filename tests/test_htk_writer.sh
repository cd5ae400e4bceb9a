#!/bin/sh
# CNTK's HTKMLFWriter (action=write with writer = [ writerType = HTKMLFWriter ... ]) on a
# generated corpus (tests/htk_gen):
# - each utterance's output is an HTK feature file named by a line of the node's scpFile, in
#   the reader's order: big-endian, its 12-byte header (frames, sample period 100000, 4 x dim
#   bytes a frame, parameter kind USER = 9), its values those that outputPath writes as text;
# - outputNodeNames in the writer block serves as well; an NDL node with a dotted name (a
#   macro's line, L1.BFF.FF.P) has its block as the config nests it;
# - a script file of another length, a line naming a file the run reads, a file named twice,
#   a dim that is not the node's, a node without a block, another writerType, a symlink where
#   a file goes, and neither outputPath nor a writer are errors naming what was expected;
#   nothing is written over an input or through the link.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
G=$(cd "${top_builddir:-.}" && pwd)/tests/htk_gen
cd "$tmp"
mkdir -p c && "$G" c || { echo "FAIL: htk_gen"; exit 1; }
cat >t.cntk <<'CFG'
command = train
deviceId = -1
F = [ dim = 143 ; scpFile = "c/train.scp" ]
train = [
    action = train
    modelPath = "m/m.dnn"
    SimpleNetworkBuilder = [
        layerSizes = 143:32:8 ; trainingCriterion = CrossEntropyWithSoftmax
        evalCriterion = ClassificationError ; layerTypes = Sigmoid ; applyMeanVarNorm = true
    ]
    SGD = [ epochSize = 0 ; minibatchSize = 128 ; learningRatesPerSample = 0.01
            momentumPerMB = 0.9 ; maxEpochs = 1 ]
    reader = [ readerType = "HTKMLFReader" ; features = $F$
               labels = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8 ] ]
]
S = "hw.scp"
hw = [
    action = write
    modelPath = "m/m.dnn"
    outputNodeNames = HLast
    reader = [ readerType = "HTKMLFReader" ; features = $F$ ]
    writer = [ writerType = HTKMLFWriter ; wrecords = 50000
        HLast = [ dim = 8 ; scpFile = $S$ ; type = Real ] ]
]
ht = [ action = write ; modelPath = "m/m.dnn" ; outputNodeNames = HLast ; outputPath = "txt"
    reader = [ readerType = "HTKMLFReader" ; features = $F$ ] ]
bare = [ action = write ; modelPath = "m/m.dnn" ; reader = [ readerType = "HTKMLFReader" ; features = $F$ ] ]
hw2 = [ action = write ; modelPath = "m/m.dnn" ; reader = [ readerType = "HTKMLFReader" ; features = $F$ ]
    writer = [ writerType = HTKMLFWriter ; outputNodeNames = HLast ; HLast = [ dim = 8 ; file = "hw.scp" ] ] ]
ntrain = [ action = train ; modelPath = "n/m.dnn" ; NDLNetworkBuilder = [ networkDescription = "n.ndl" ]
    SGD = [ epochSize = 0 ; minibatchSize = 128 ; learningRatesPerSample = 0.01 ; maxEpochs = 1 ]
    reader = [ readerType = "HTKMLFReader" ; features = $F$
               labels = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8 ] ] ]
CFG
expect 0 "$T" configFile=t.cntk
# line k: the k-th utterance's file (hw/u0000.hl ...), in directories the writer makes
awk '{ sub(/=.*/, ""); sub(/^spk\//, "hw/d/"); sub(/\.mfc$/, ".hl"); print }' c/train.scp >hw.scp
expect 0 "$T" configFile=t.cntk command=hw:ht
cp "$tmp/err" hw.err
has hw.err "HTKMLFWriter::Init: reading output script file hw.scp ... 200 entries"
has hw.err "evaluate: writing 52 frames of hw/d/u0000.hl"
[ "$(ls hw/d | wc -l)" = 200 ] && ok || no "$(ls hw/d | wc -l) files written, not 200"
# the header: frames (52 = 0x34), 100000 (0x186a0), 32 bytes a frame, USER
[ "$(od -An -tx1 -N12 hw/d/u0000.hl | tr -d ' ')" = 00000034000186a000200009 ] && ok ||
    no "header: $(od -An -tx1 -N12 hw/d/u0000.hl)"
# every file's frames, in the script's order, against the text outputPath wrote
while read -r f; do od --endian=big -An -v -tf4 -j12 -w32 "$f"; done <hw.scp >back.txt
awk 'NR == FNR { for (i = 1; i <= NF; i++) a[NR, i] = $i; n = NR; next }
     { m++; if (NF != 8) bad++; for (i = 1; i <= 8; i++) { d = $i - a[m, i]; if (d > 1e-5 || d < -1e-5) bad++ } }
     END { if (m != n || n != 9698) { print m " frames written, " n " as text"; bad++ } exit bad > 0 }' \
    txt.HLast back.txt && ok || no "the HTK files' values are not HLast's"

# outputNodeNames inside the writer (CNTK reads it there), and a second run replaces the files
cp hw/d/u0007.hl before.hl
expect 0 "$T" configFile=t.cntk command=hw2
cmp -s before.hl hw/d/u0007.hl && ok || no "the writer's own outputNodeNames: other values"

# errors
fails() { # TEXT ARGS...: the write fails (exit 1) and says TEXT
    want=$1; shift
    "$T" configFile=t.cntk command=hw "$@" >f.out 2>f.err
    rc=$?
    [ $rc = 1 ] && grep -qF -- "$want" f.err && ok || { no "expected exit 1 with '$want', got $rc:"; tail -3 f.err; }
}
head -199 hw.scp >short.scp
fails "scpFile 'short.scp' names 199 files, and the reader has 200 sequences" S=short.scp
cp c/feat.htk feat.copy
sed '5s|.*|c/feat.htk|' hw.scp >in.scp
fails "in.scp:5: error: 'c/feat.htk' is a file this run reads" S=in.scp
cmp -s c/feat.htk feat.copy && ok || no "the input was written over"
sed '9s|.*|hw/d/u0003.hl|' hw.scp >dup.scp
fails "dup.scp:9: error: 'hw/d/u0003.hl' is also named at dup.scp:4" S=dup.scp
fails "error: writer: HLast: dim = 9, but the node has 8 values a frame" 'hw.writer.HLast.dim=9'
fails "writer: no block for the output node 'PosteriorProb'" hw.outputNodeNames=PosteriorProb
fails "writerType=KaldiWriter is not supported" hw.writer.writerType=KaldiWriter
# the writer's blocks are checked at start-up: a train:write run stops before training
"$T" configFile=t.cntk command=train:hw hw.outputNodeNames=PosteriorProb train.modelPath=m2/m.dnn >f.out 2>f.err && no "train:hw: accepted"
has f.err "writer: no block for the output node 'PosteriorProb'"
hasnt f.err "Finished Epoch"
"$T" configFile=t.cntk command=bare >f.out 2>f.err && no "bare: accepted"
has f.err "bare: set outputPath (the outputs as text, outputPath.NODE) or a writer block"
echo victim >victim
rm hw/d/u0002.hl && ln -s ../../victim hw/d/u0002.hl
fails "symbolic link"
[ "$(cat victim)" = victim ] && ok || no "written through a symlink"

# an NDL network's inner node by its dotted name (CNTK's TIMIT_WriteBottleneck writes L2.BFF.FF.P)
cat >n.ndl <<'NDL'
FF(X1, W1, B1) = [ T = Times(W1, X1) ; P = Plus(T, B1) ]
BFF(in, rows, cols) = [ B = Parameter(rows, 1, init = fixedValue, value = 0) ; W = Parameter(rows, cols) ; FF = FF(in, W, B) ]
SBFF(in, rowCount, colCount) = [ BFF = BFF(in, rowCount, colCount) ; S = Sigmoid(BFF) ]
features = Input(143) ; labels = Input(8)
L1 = SBFF(features, 16, 143)
L2 = BFF(L1, 8, 16)
ce = CrossEntropyWithSoftmax(labels, L2) ; err = ErrorPrediction(labels, L2)
FeatureNodes = (features) ; LabelNodes = (labels) ; CriterionNodes = (ce) ; EvalNodes = (err)
NDL
sed 's|^hw/d/|bn/|' hw.scp >bn.scp
expect 0 "$T" configFile=t.cntk command=ntrain:hw hw.modelPath=n/m.dnn hw.outputNodeNames=L1.BFF.FF.P \
    'hw.writer=[ writerType = HTKMLFWriter ; L1.BFF.FF.P = [ dim = 16 ; scpFile = "bn.scp" ] ]'
[ "$(od -An -tx1 -N12 bn/u0000.hl | tr -d ' ')" = 00000034000186a000400009 ] && ok ||
    no "L1.BFF.FF.P: header $(od -An -tx1 -N12 bn/u0000.hl 2>&1)"
echo "test_htk_writer: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
