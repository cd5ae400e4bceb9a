#!/bin/sh
# CNTK's class-based LSTM language model as its PennTreebank example (rnn.cntk) runs it:
# SimpleNetworkBuilder rnnType = CLASSLSTM over an LMSequenceReader, trained with
# AutoAdjust and cross-validation, then `test` (eval) and `write` (a sentence's negative
# log-likelihood a line). Checked: the epochs' criteria fall; the validation's and the
# test's `* N` are the texts' words but each sentence's first; test's perplexity is
# exp (its criterion); write's lines are the test sentences, and their sum over N is the
# test's criterion (the same network, sentence by sentence); 2 ranks (DataParallelSGD)
# train the numbers of one; the network's parameters carry CNTK's names; CLASSLM learns
# from sentences cut into pieces (the state carried); a missing word-class entry for an
# unknown word names the file and line.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_lm: mpiexec not found"; exit 99; }
cd "$tmp"

# sentences "</s> w.. </s>" of 2 to 10 words over w1..w19; after the first word the next
# follows from the current one 4 times in 5, else it is random (SEED varies the texts)
text() {
    awk -v n="$1" -v s="$2" 'BEGIN {
        for (q = 0; q < n; q++) {
            s = (s * 1103515245 + 12345) % 2147483648; k = 2 + int(s / 2147483648 * 9)
            line = "</s>"; w = 0
            for (t = 1; t <= k; t++) {
                s = (s * 1103515245 + 12345) % 2147483648
                if (s / 2147483648 < 0.8 && t > 1) w = (w * 7 + 3) % 19 + 1
                else { s = (s * 1103515245 + 12345) % 2147483648; w = 1 + int(s / 2147483648 * 19) }
                line = line " w" w
            }
            print line " </s>"
        } }'
}
text 600 11 >train.txt
text 100 22 >valid.txt
text 80 33 >test.txt
echo "</s> w3 zz w4 </s>" >>test.txt # an unknown word: <unk>
# the word-class file: 21 words in 4 classes, ids grouped by class
awk 'BEGIN { print "0\t900\t</s>\t0"; print "1\t1\t<unk>\t0"
    for (i = 1; i <= 19; i++) printf "%d\t%d\tw%d\t%d\n", i + 1, 100 - i, i, i < 5 ? 1 : i < 11 ? 2 : 3 }' >vocab.txt
samples() { awk '{ n += NF - 1 } END { print n }' "$1"; }

# an LMSequenceReader block as rnn.cntk writes them: reader FILE [MORE]
reader() {
    cat <<RDR
[
    readerType = "LMSequenceReader"
    randomize = "none"
    nbruttsineachrecurrentiter = 0
    cacheBlockSize = 2000000
    wordclass = "\$Vocab\$"
    wfile = "sequenceSentence.bin" ; wsize = 256 ; wrecords = 1000 ; windowSize = 21
    file = "$1"
    features = [ dim = 0 ; sectionType = "data" ]
    labelIn = [ dim = 1 ; labelType = "Category" ; beginSequence = "</s>" ; endSequence = "</s>"
        labelDim = \$VocabSize\$ ; labelMappingFile = "sentenceLabels.txt" ; elementSize = 4
        sectionType = "labels" ; mapping = [ wrecords = 11 ; elementSize = 10 ]
        category = [ dim = 11 ; sectionType = "categoryLabels" ] ]
    labels = [ dim = 1 ; labelType = "NextWord" ; beginSequence = "O" ; endSequence = "O"
        labelDim = \$VocabSize\$ ; labelMappingFile = "sentenceLabels.out.txt" ; elementSize = 4
        sectionType = "labels" ]
    ${2:-}
]
RDR
}

cat >lm.cntk <<CFG
command = train:test:write
deviceId = -1
precision = "float"
traceLevel = 1
modelPath = "\$ModelDir\$/rnn.dnn"
ModelDir = "models"
Vocab = "vocab.txt"
VocabSize = 21
numCPUThreads = 1
train = [
    action = "train"
    epochSize = 0
    SimpleNetworkBuilder = [
        rnnType = "CLASSLSTM"
        recurrentLayer = 1
        trainingCriterion = "classCrossEntropyWithSoftmax"
        evalCriterion = "classCrossEntropyWithSoftmax"
        initValueScale = 6.0
        uniformInit = true
        layerSizes = 21:8:16:21
        defaultHiddenActivity = 0.1
        addPrior = false
        addDropoutNodes = false
        applyMeanVarNorm = false
        lookupTableOrder = 1
        vocabSize = 21
        nbrClass = 4
    ]
    SGD = [
        minibatchSize = 64:128
        learningRatesPerSample = 0.1
        momentumPerMB = 0
        gradientClippingWithTruncation = true
        clippingThresholdPerSample = 15.0
        maxEpochs = 4
        numMBsToShowResult = 100
        gradUpdateType = "none"
        loadBestModel = true    # as rnn.cntk: read by AutoAdjust (CNTK's lookups climb)
        AutoAdjust = [ autoAdjustLR = "adjustAfterEpoch" ; reduceLearnRateIfImproveLessThan = 0.001
            learnRateDecreaseFactor = 0.5 ]
    ]
    reader = $(reader train.txt)
    cvReader = $(reader valid.txt)
]
test = [
    action = "eval"
    minibatchSize = 8192
    epochSize = 0
    reader = $(reader test.txt)
]
write = [
    action = "write"
    outputPath = "Write"
    outputNodeNames = TrainNodeClassBasedCrossEntropy
    format = [ sequencePrologue = "log P(W)=" ; type = "real" ]
    minibatchSize = 8192
    epochSize = 0
    reader = $(reader test.txt "nbruttsineachrecurrentiter = 1 ; cacheBlockSize = 1")
]
CFG

expect 0 "$T" configFile=lm.cntk
cp "$tmp/err" one.log
hasnt one.log "unknown key"
has one.log "Node 'E0' (LearnableParameter operation) : [8 x 21]"
has one.log "Node 'WeightForClassPostProb' (LearnableParameter operation) : [4 x 16]"
has one.log "Node 'W2' (LearnableParameter operation) : [16 x 21]"
has one.log "Node 'WCI0' (LearnableParameter operation) : [16 x 1]"
# the criterion falls from the first epoch to the last
first=$(grep -m1 '\[Training\]' one.log | sed 's/.*CrossEntropy = \([0-9.]*\).*/\1/')
last=$(grep '\[Training\]' one.log | tail -1 | sed 's/.*CrossEntropy = \([0-9.]*\).*/\1/')
if awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.2) }'; then ok; else
    no "training criterion $first -> $last did not fall"; fi
has one.log "[Validate] TrainNodeClassBasedCrossEntropy ="
has one.log "* $(samples valid.txt)"
# the test: every word but a sentence's first, perplexity exp (criterion)
n=$(samples test.txt)
line=$(grep "Final Results" one.log | tail -1)
echo "$line" | grep -q "\* $n; perplexity = " && ok || no "test line: $line (want * $n)"
x=$(echo "$line" | sed 's/.*CrossEntropy = \([0-9.]*\) .*/\1/')
p=$(echo "$line" | sed 's/.*perplexity = \([0-9.]*\).*/\1/')
if awk -v x="$x" -v p="$p" 'BEGIN { exit !(p > 0 && (p - exp(x)) / p < 1e-6 && (exp(x) - p) / p < 1e-6) }'; then
    ok; else no "perplexity $p is not exp ($x)"; fi
# write: a line a test sentence, summing to the test's criterion times N
[ "$(wc -l <Write.TrainNodeClassBasedCrossEntropy)" -eq "$(wc -l <test.txt)" ] && ok ||
    no "write: $(wc -l <Write.TrainNodeClassBasedCrossEntropy) lines for $(wc -l <test.txt) sentences"
if awk -F= -v x="$x" -v n="$n" '{ s += $2; if ($1 != "log P(W)" || $2 <= 0) bad = 1 }
    END { d = s / n - x; exit !(!bad && d < 1e-4 && d > -1e-4) }' Write.TrainNodeClassBasedCrossEntropy; then
    ok; else no "write's lines do not sum to the test's criterion $x * $n"; head -3 Write.TrainNodeClassBasedCrossEntropy; fi

# 2 ranks: the same minibatches split, the same numbers
rm -rf models
expect 0 "$MPIEXEC" --oversubscribe -n 2 "$T" configFile=lm.cntk command=train \
    'train=[SGD=[ParallelTrain=[parallelizationMethod=DataParallelSGD;distributedMBReading=true]]]'
grep '\[Training\]\|\[Validate\]' one.log | sed 's/;.*//; s/.*\]//' >a.txt
grep '\[Training\]\|\[Validate\]' "$tmp/err" | sed 's/;.*//; s/.*\]//' >b.txt
if paste a.txt b.txt | awk '{ d = $3 - $8; if (d < -1e-4 || d > 1e-4 || $5 != $10) bad = 1; n++ }
    END { exit bad || n < 5 }'; then ok; else no "2 ranks differ from 1"; paste a.txt b.txt; fi

# CLASSLM (the simple recurrent model of CNTK's RNNLM setups) with sentences in pieces of 3
# steps (nbruttsineachrecurrentiter = 4, minibatchSize = 3: the state carried from piece to
# piece): it learns, and the test counts every word but a sentence's first
rm -rf models
expect 0 "$T" configFile=lm.cntk command=train:test 'train=[SimpleNetworkBuilder=[rnnType=CLASSLM;layerSizes=21:24:21;recurrentLayer=1;lookupTableOrder=0]]' \
    'train=[SGD=[minibatchSize=3;maxEpochs=3]]' \
    'train=[reader=[nbruttsineachrecurrentiter=4]]' 'test=[reader=[nbruttsineachrecurrentiter=4];minibatchSize=3]'
has "$tmp/err" "Node 'U0' (LearnableParameter operation) : [24 x 21]"
has "$tmp/err" "Node 'W0' (LearnableParameter operation) : [24 x 24]"
has "$tmp/err" "Node 'W1' (LearnableParameter operation) : [24 x 21]"
first=$(grep -m1 '\[Training\]' "$tmp/err" | sed 's/.*CrossEntropy = \([0-9.]*\).*/\1/')
last=$(grep '\[Training\]' "$tmp/err" | tail -1 | sed 's/.*CrossEntropy = \([0-9.]*\).*/\1/')
if awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.2) }'; then ok; else
    no "CLASSLM: training criterion $first -> $last did not fall"; fi
has "$tmp/err" "* $n; perplexity = "
# the same model evaluated on whole sentences: the same criterion (the pieces carry the
# state exactly)
cut=$(grep "Final Results" "$tmp/err" | tail -1 | sed 's/.*CrossEntropy = \([0-9.]*\) .*/\1/')
expect 0 "$T" configFile=lm.cntk command=test 'test=[reader=[nbruttsineachrecurrentiter=0]]'
whole=$(grep "Final Results" "$tmp/err" | tail -1 | sed 's/.*CrossEntropy = \([0-9.]*\) .*/\1/')
if awk -v a="$cut" -v b="$whole" 'BEGIN { d = a - b; exit !(a > 0 && d < 1e-5 && d > -1e-5) }'; then
    ok; else no "CLASSLM: in pieces $cut, whole $whole"; fi

# no <unk> in the vocabulary: the unknown word's file and line
grep -v '<unk>' vocab.txt | awk -F'\t' '{ printf "%d\t%s\t%s\t%s\n", NR - 1, $2, $3, $4 }' >v2.txt
expect 1 "$T" configFile=lm.cntk command=test Vocab=v2.txt VocabSize=20
has "$tmp/err" "test.txt:81: error: the word 'zz' is not in the word-class file 'v2.txt'"

echo "test_lm: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
