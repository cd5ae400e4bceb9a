#!/bin/sh
# CNTK's action=plot (its Speech/DNN/PlotDNN test: a 363:512:512:132 SimpleNetworkBuilder
# network, then plot): the Graphviz dot file has CNTK's node names (W0*features,
# W0*features+B0, H1, ..., CNTK's W2*H1 for the output layer's product, HLast, Prior,
# LogOfPrior, ScaledLogLikelihood, PosteriorProb), shapes, styles, order and arcs; a
# BrainScript network is drawn as written (its layers unfused); renderCmd runs with <IN>
# and <OUT> replaced; outputFile without renderCmd, a failing renderCmd and an
# outputDotFile that is the model are errors; 2 ranks write one file.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
G=$(cd "${top_builddir:-.}" && pwd)/tests/htk_gen
command -v mpiexec >/dev/null || { echo "no mpiexec"; exit 77; }
cd "$tmp"
mkdir -p c && "$G" c utts=20 dim=33 classes=132 || { echo "FAIL: htk_gen"; exit 1; }
cat >p.cntk <<'CFG'
precision = "float"
command = speechTrain:plot
deviceId = -1
speechTrain = [
    action = "train"
    modelPath = "models/cntkSpeech.dnn"
    SimpleNetworkBuilder = [
        layerSizes = 363:512:512:132 ; trainingCriterion = "CrossEntropyWithSoftmax"
        evalCriterion = "ClassificationError" ; layerTypes = "Sigmoid" ; applyMeanVarNorm = true
        uniformInit = true ; needPrior = true
    ]
    SGD = [ epochSize = 0 ; minibatchSize = 256 ; learningRatesPerMB = 0.8 ; maxEpochs = 1 ]
    reader = $rd$
]
rd = [ readerType = HTKMLFReader ; features = [ dim = 363 ; scpFile = "c/train.scp" ]
    labels = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 132 ] ]
plot = [ action = plot ; modelPath = "models/cntkSpeech.dnn" ; outputdotFile = "net.dot" ]
bs = [ action = train ; modelPath = "bs/m.dnn" ; reader = $rd$
    SGD = [ epochSize = 0 ; minibatchSize = 256 ; learningRatesPerMB = 0.8 ; maxEpochs = 1 ]
    BrainScriptNetworkBuilder = [ features = Input (363) ; labels = Input (132, tag = 'label')
        h = DenseLayer {64, activation = Sigmoid} (features) ; z = LinearLayer {132} (h)
        ce = CrossEntropyWithSoftmax (labels, z, tag = 'criterion')
        errs = ClassificationError (labels, z, tag = 'evaluation') ; outputNodes = (z) ] ]
bsplot = [ action = plot ; modelPath = "bs/m.dnn" ]
CFG
expect 0 "$T" configFile=p.cntk
has "$tmp/err" "Created network description in dot format: net.dot"
# CNTK's text stream puts a space before every piece it writes
[ "$(head -1 net.dot)" = " strict digraph {" ] && ok || no "first line: $(head -1 net.dot)"
has net.dot ' node [ shape = box     , color = gray , style = "filled, rounded"  ]; "B0" "B1" "B2" "W0" "W1" "W2" ; '
has net.dot ' node [ shape = box    , color = black, style = "dashed, filled",  fillcolor= limegreen ] ;"InvStdOfFeatures" "MeanOfFeatures" "Prior" ; '
has net.dot '  "W0*features" [ label = "W0*features [512 x *]\nTimes" ] ;'
has net.dot '  "W2*H1" [ label = "W2*H1 [132 x 1 x *]\nTimes" ] ;'
has net.dot '  "ScaledLogLikelihood" [ label = "ScaledLogLikelihood [132 x 1 x *]\nMinus" ] ;'
# the labels in name order without case: features between EvalClassificationError and H1
sed -n 's/^  "\([^"]*\)" \[ label.*/\1/p' net.dot >names.txt
[ "$(wc -l <names.txt)" = 25 ] && ok || no "$(wc -l <names.txt) nodes, not 25"
sort -f names.txt | cmp -s - names.txt && ok || no "the labels are not in name order"
# the arcs: a walk from the criterion, then the evaluation and output nodes
grep -- ' -> ' net.dot >arcs.txt
[ "$(wc -l <arcs.txt)" = 27 ] && ok || no "$(wc -l <arcs.txt) arcs, not 27"
[ "$(sed -n '1p;3p;5,6p' arcs.txt | tr -d '\n')" = ' "labels" -> "CrossEntropyWithSoftmax" ;  "W2*H1" -> "HLast" ;  "W2" -> "W2*H1" ;  "H2" -> "W2*H1" ; ' ] &&
    ok || { no "the arcs' order"; head -6 arcs.txt; }
[ "$(tail -1 arcs.txt)" = ' "labels" -> "Prior" ; ' ] && ok || no "last arc: $(tail -1 arcs.txt)"
has net.dot ' 		 rank=sink ;  "CrossEntropyWithSoftmax" "ScaledLogLikelihood" "EvalClassificationError"  '

# a BrainScript network, as written; renderCmd with <IN> and <OUT>
expect 0 "$T" configFile=p.cntk command=bs:bsplot 'bsplot.renderCmd=cp <IN> <OUT>' bsplot.outputFile=bs.png
has "$tmp/err" "Executing third-party tool for rendering dot:"
cmp -s bs/m.dnn.dot bs.png && ok || no "renderCmd did not run on bs/m.dnn.dot"
has bs/m.dnn.dot ' "h" -> "Times'
has bs/m.dnn.dot '"z.b" -> "z" ; '
has bs/m.dnn.dot '  "ce" [ label = "ce [1]\nCrossEntropyWithSoftmax" ] ;'

# errors
expect 1 "$T" configFile=p.cntk plot.outputFile=x.png speechTrain.modelPath=m2/m.dnn
has "$tmp/err" "plot: outputFile is set, but no renderCmd makes it"
hasnt "$tmp/err" "Finished Epoch" # checked at start-up, before the training
expect 1 "$T" configFile=p.cntk command=plot plot.renderCmd=false
has "$tmp/err" "error: plot: renderCmd 'false' failed"
cp models/cntkSpeech.dnn m.copy
expect 1 "$T" configFile=p.cntk command=plot plot.outputDotFile=models/cntkSpeech.dnn
has "$tmp/err" "is the model file; refusing to write over it"
cmp -s m.copy models/cntkSpeech.dnn && ok || no "the model was written over"

# 2 ranks: rank 0 writes the same file
rm -f net.dot
timeout 120 mpiexec --allow-run-as-root --oversubscribe -n 2 "$T" configFile=p.cntk command=plot >m.out 2>m.err && ok ||
    { no "2 ranks: exit $?"; tail -3 m.err; }
[ "$(wc -l <net.dot)" -gt 30 ] && ok || no "2 ranks: no net.dot"
echo "test_dot: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
