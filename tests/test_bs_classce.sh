#!/bin/sh
# A class-based language model as CNTK's PennTreebank RNN example builds it: an embedding
# of one-hot (sparse) words, an LSTM, ClassPostProb = Times (WeightForClassPostProb, h) and
# ClassBasedCrossEntropyWithSoftmax (labels, h, W2, ClassPostProb), labels 4 dense rows a
# step (the next word, its class, the class's first word and end). Checked: the criterion
# falls over the epochs; its `* N` is the number of labelled steps (each sentence's tokens
# but the first); test's and cv's Final Results show perplexity = exp (the criterion); 2
# ranks (DataParallelSGD) train as one; NDL's CBCEWithSM trains the numbers of the same
# network in BrainScript; labels that describe no class end the run with the node's place
# (on 1 rank, and on 2, where the other rank waits in the gradient's exchange).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_classce: mpiexec not found"; exit 99; }
cd "$tmp"

# 300 sentences "0 w1 .. wn 0" (n 3 to 11) over 20 words in 4 classes [0,3) [3,7) [7,13)
# [13,20), word 0 the sentence end; after the first word the next one follows from the
# current one 4 times in 5 (w -> (7 w + 3) mod 19 + 1), else it is random. A step: the
# current word (sparse), the next one's class descriptor.
awk 'BEGIN { split("0 3 7 13 20", first, " "); s = 4321
    for (q = 0; q < 300; q++) {
        s = (s * 1103515245 + 12345) % 2147483648; n = 3 + int(s / 2147483648 * 9); w[0] = 0
        for (t = 1; t <= n; t++) {
            s = (s * 1103515245 + 12345) % 2147483648
            if (s / 2147483648 < 0.8 && t > 1) w[t] = (w[t - 1] * 7 + 3) % 19 + 1
            else { s = (s * 1103515245 + 12345) % 2147483648; w[t] = 1 + int(s / 2147483648 * 19) }
        }
        w[n + 1] = 0
        for (t = 0; t <= n; t++) {
            y = w[t + 1]; c = 0; while (y >= first[c + 2]) c++
            printf "%d\t|features %d:1\t|labels %d %d %d %d\n", q, w[t], y, c, first[c + 1], first[c + 2]
        }
    } }' >lm.ctf
frames=$(wc -l <lm.ctf)

cat >lm.cntk <<'CFG'
deviceId = -1
command = Train:Test
traceLevel = 1
modelPath = "$Dir$/lm.dnn"
rd = [ readerType = CNTKTextFormatReader ; file = "$Data$" ; randomize = true
       input = [ features = [ dim = 20 ; format = sparse ] ; labels = [ dim = 4 ; format = dense ] ] ]
Data = lm.ctf
Train = [
    action = train
    BrainScriptNetworkBuilder = [
        vocab = 20 ; nCls = 4 ; embDim = 8 ; hid = 16
        features = Input (vocab)
        labels = Input (4, tag = 'label')
        E = Parameter (embDim, vocab, init = 'uniform', initValueScale = 6)
        h = RecurrentLSTMLayer {hid} (E * features)
        W2 = Parameter (hid, vocab, init = 'uniform', initValueScale = 6)
        WeightForClassPostProb = Parameter (nCls, hid, init = 'uniform', initValueScale = 6)
        ClassPostProb = Times (WeightForClassPostProb, h)
        ce = ClassBasedCrossEntropyWithSoftmax (labels, h, W2, ClassPostProb)
        criterionNodes = (ce)
        evaluationNodes = (ce)
    ]
    SGD = [ maxEpochs = 4 ; minibatchSize = 128 ; learningRatesPerSample = 0.03 ; momentumPerMB = 0
            ParallelTrain = [ parallelizationMethod = DataParallelSGD ] ]
    reader = $rd$
]
Test = [ action = test ; minibatchSize = 256 ; reader = $rd$ ]
CV = [ action = cv ; crossValidationInterval = 2:2:4 ; minibatchSize = 256 ; reader = $rd$ ]
CFG
# epochs LOG: the training criterion and its N, one epoch a line
epochs() { sed -n 's/^Finished Epoch.*\[Training\] ce = \([0-9.]*\) \* \([0-9]*\);.*/\1 \2/p' "$1"; }
# final LOG: criterion, N and perplexity of each Final Results line
final() { sed -n 's/^Final Results: Minibatch\[[0-9-]*\]: ce = \([0-9.]*\) \* \([0-9]*\); perplexity = \([0-9.]*\)$/\1 \2 \3/p' "$1"; }

# ---- one rank: the criterion falls epoch by epoch, N = the labelled steps; test and cv
expect 0 "$T" configFile=lm.cntk Dir=A command=Train:Test:CV
cp "$tmp/err" a.err
has a.err "Training criterion:   ce = ClassBasedCrossEntropyWithSoftmax"
epochs a.err >a.txt
awk -v n="$frames" '{ bad += $2 != n; if (NR > 1 && $1 >= last) bad++; last = $1; f[NR] = $1 }
    END { exit !(NR == 4 && !bad && f[1] > 2.5 && f[4] < 0.75 * f[1]) }' a.txt &&
    ok || { no "the criterion did not fall, or N is not $frames"; cat a.txt; }
final a.err >f.txt
awk -v n="$frames" '{ d = exp($1) - $3; if (d < 0) d = -d; bad += $2 != n || d > 1e-6 * $3 }
    END { exit !(NR == 3 && !bad) }' f.txt && ok || { no "Final Results: N or perplexity"; cat f.txt; }
has a.err "Model A/lm.dnn.2 --> "

# ---- two ranks (DataParallelSGD from the start): the same criteria
mpi -n 2 "$T" configFile=lm.cntk Dir=B >b.out 2>b.err && ok || { no "2 ranks"; tail -5 b.err; }
epochs b.err >b.txt
close a.txt b.txt 1e-6 && ok || { no "2 ranks differ from one"; paste a.txt b.txt; }

# ---- NDL: CBCEWithSM in a network without recurrence, and the same network in
# BrainScript: the same numbers
cat >lm.ndl <<'NDL'
run = LM
LM = [
    features = InputValue(20, tag = feature)
    labels = InputValue(4, tag = label)
    E = LearnableParameter(8, 20, init = uniform, initValueScale = 6)
    W1 = LearnableParameter(16, 8, init = uniform, initValueScale = 6)
    h = Tanh(Times(W1, LookupTable(E, features)))
    W2 = LearnableParameter(16, 20, init = uniform, initValueScale = 6)
    Wc = LearnableParameter(4, 16, init = uniform, initValueScale = 6)
    ClassPostProb = Times(Wc, h)
    ce = CBCEWithSM(labels, h, W2, ClassPostProb, tag = Criteria)
]
NDL
cat >dense.txt <<'BS'
    BrainScriptNetworkBuilder = [
        features = Input (20)
        labels = Input (4, tag = 'label')
        E = Parameter (8, 20, init = 'uniform', initValueScale = 6)
        W1 = Parameter (16, 8, init = 'uniform', initValueScale = 6)
        h = Tanh (Times (W1, Times (E, features)))
        W2 = Parameter (16, 20, init = 'uniform', initValueScale = 6)
        Wc = Parameter (4, 16, init = 'uniform', initValueScale = 6)
        ce = ClassBasedCrossEntropyWithSoftmax (labels, h, W2, Times (Wc, h), tag = 'criterion')
    ]
BS
# lm.cntk with its BrainScriptNetworkBuilder block replaced by the file $1
builder() {
    awk -v f="$1" '/BrainScriptNetworkBuilder = \[/ { skip = 1; while ((getline l < f) > 0) print l; next }
        skip && /^    \]$/ { skip = 0; next } !skip' lm.cntk
}
echo '    NDLNetworkBuilder = [ networkDescription = "lm.ndl" ]' >ndl.txt
builder ndl.txt >ndl.cntk
builder dense.txt >dense.cntk
expect 0 "$T" configFile=ndl.cntk Dir=N command=Train
epochs "$tmp/err" >n.txt
expect 0 "$T" configFile=dense.cntk Dir=D command=Train
epochs "$tmp/err" >d.txt
cmp -s n.txt d.txt && awk 'END { exit !(NR == 4 && $1 < 2.2) }' n.txt && ok ||
    { no "NDL's CBCEWithSM against BrainScript's"; paste n.txt d.txt; }

# ---- labels that describe no class: word 18 in class 2 ([7, 13)), on one rank and on two
sed '5s/|labels 18 3 13 20$/|labels 18 2 7 13/' lm.ctf >bad.ctf
cmp -s lm.ctf bad.ctf && no "bad.ctf: line 5 not changed"
msg="error: ClassBasedCrossEntropyWithSoftmax: the labels of step "
expect 1 "$T" configFile=lm.cntk Dir=X Data=bad.ctf command=Train
has "$tmp/err" "lm.cntk:19:14: $msg"
has "$tmp/err" "(word 18, class 2, the class's words [7, 13)) describe no class: want integers with 0 <= first < end <= 20 (mainWeight's columns), first <= word < end and 0 <= class < 4 (classLogProbsBeforeSoftmax's rows)"
expect 1 mpi -n 2 "$T" configFile=lm.cntk Dir=Y Data=bad.ctf command=Train
has "$tmp/err" "lm.cntk:19:14: $msg"

finish test_bs_classce
