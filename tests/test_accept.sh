#!/bin/sh
# Nothing is accepted silently (issue 19, item 4): data rows missing an input or with a
# misspelled alias, label rows that are not one-hot, a reader dim beyond 2^30, infinite
# learning rates, a damaged checkpoint and a makeMode restart of another network each end
# the run with exit 1 and a message naming the file (and line) and what was expected.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
toy_ctf 'x + y > 1' >d.ctf
cat >a.cfg <<'CFG'
command = train
traceLevel = 1
train = [
    action = train
    modelPath = $Dir$/m.dnn
    SimpleNetworkBuilder = [ layerSizes = 2:8:2 ; layerTypes = Tanh
        trainingCriterion = CrossEntropyWithSoftmax ; evalCriterion = ClassificationError ]
    SGD = [ maxEpochs = 2 ; minibatchSize = 50 ; learningRatesPerSample = 0.02
        momentumPerMB = 0.9 ; numMBsToShowResult = 1000 ]
    reader = [ readerType = CNTKTextFormatReader ; file = $Data$ ; chunkSizeInBytes = 9000
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]
]
CFG
tr() { timeout 120 "$T" configFile=a.cfg "$@"; }
decl="the reader declares |features (dense, dim 2), |labels (dense, dim 2)"

# a misspelled alias on line 5: the row has no features; maxErrors does not excuse it
sed '5s/|features/|featurs/' d.ctf >typo.ctf
expect 1 tr Dir=typo Data=typo.ctf
has "$tmp/err" "typo.ctf:5: error: the line has no row of input 'features' (|features); $decl; typo.ctf:5 has '|featurs', which is not declared (a misspelled alias?)"
expect 1 tr Dir=typo Data=typo.ctf train.reader.maxErrors=10
has "$tmp/err" "typo.ctf:5: error: the line has no row of input 'features'"
# a row without its label
sed '9s/ |labels.*//' d.ctf >nolabel.ctf
expect 1 tr Dir=nolabel Data=nolabel.ctf
has "$tmp/err" "nolabel.ctf:9: error: the line has no row of input 'labels' (|labels); $decl"
[ ! -e typo ] && [ ! -e nolabel ] && ok || no "a model was written from bad data"

# labels that are not one-hot, for a classification criterion
sed '7s/|labels.*/|labels 0 0/' d.ctf >zero.ctf
expect 1 tr Dir=zero Data=zero.ctf
has "$tmp/err" "zero.ctf:7: error: input 'labels' (|labels): expected a one-hot label row (one value 1, the others 0) for the criterion CrossEntropyWithSoftmax, got no value 1"
sed '11s/|labels.*/|labels 0.5 0.5/' d.ctf >soft.ctf
expect 1 tr Dir=soft Data=soft.ctf train.reader.maxErrors=5
has "$tmp/err" "soft.ctf:11: error: input 'labels' (|labels): expected a one-hot label row"
has "$tmp/err" "got value 0.5 at index 0"
# ... but any targets for a regression (SquareError both ways)
expect 0 tr Dir=reg Data=soft.ctf train.SimpleNetworkBuilder.trainingCriterion=SquareError \
    train.SimpleNetworkBuilder.evalCriterion=SquareError
# action=test checks the labels too (the model's criteria)
expect 0 tr Dir=good Data=d.ctf
cat >t.cfg <<'CFG'
command = test
test = [ action = test ; modelPath = good/m.dnn ; minibatchSize = 100
    reader = [ readerType = CNTKTextFormatReader ; file = zero.ctf ; randomize = false
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
expect 1 timeout 60 "$T" configFile=t.cfg
has "$tmp/err" "zero.ctf:7: error: input 'labels' (|labels): expected a one-hot label row (one value 1, the others 0) for the criterion CrossEntropyWithSoftmax"

# reader dim beyond 2^30: refused where it is set, not clamped
expect 1 tr Dir=dim Data=d.ctf train.reader.input.features.dim=2000000000 --print-config
has "$tmp/err" "<command line>:arg4: error: dim: 2000000000 is out of range: must be >= 1 and <= 1073741824 (2^30)"

# infinite learning rates: refused at their origin before anything runs
for lr in 1e400 inf 0.02:1#INF; do
    expect 1 tr Dir=lr Data=d.ctf train.SGD.learningRatesPerSample=$lr
    has "$tmp/err" "<command line>:arg4: error: train.SGD.learningRatesPerSample: expected a finite number, got"
done
[ ! -e lr ] && ok || no "an infinite learning rate trained"
expect 0 tr Dir=clip Data=d.ctf train.SGD.maxEpochs=1 train.SGD.clippingThresholdPerSample=1#INF

# a damaged checkpoint stops a makeMode restart (exit 1, naming it), never trains on from
# scratch; a missing one is SPEC 8's warning and reset
expect 0 tr Dir=ck Data=d.ctf train.SGD.keepCheckPointFiles=true
cp ck/m.dnn.2.ckp good.ckp
head -c 100 good.ckp >ck/m.dnn.2.ckp
expect 1 tr Dir=ck Data=d.ctf train.SGD.maxEpochs=3
has "$tmp/err" "ck/m.dnn.2.ckp: error: "
has "$tmp/err" "makeMode stops here: remove the checkpoint to continue from ck/m.dnn.2 with the learner state reset, or remove ck/m.dnn.2 and its checkpoint to resume from epoch 1 ('ck/m.dnn.1.ckp')"
hasnt "$tmp/err" "Finished Epoch[ 3 of 3]"
[ ! -e ck/m.dnn.3 ] && ok || no "trained on after a damaged checkpoint"
# flipped bytes: the checksum
cp good.ckp ck/m.dnn.2.ckp
printf 'XXXX' | dd of=ck/m.dnn.2.ckp bs=1 seek=200 conv=notrunc 2>/dev/null
expect 1 tr Dir=ck Data=d.ctf train.SGD.maxEpochs=3
has "$tmp/err" "ck/m.dnn.2.ckp: error:"
has "$tmp/err" "makeMode stops here"
# a checkpoint of another learner
cp good.ckp ck/m.dnn.2.ckp
expect 1 tr Dir=ck Data=d.ctf train.SGD.maxEpochs=3 train.SGD.gradUpdateType=AdaGrad
has "$tmp/err" "ck/m.dnn.2.ckp: error: checkpoint is for another network or learner"
# removing it is the user's choice: a warning, the learner reset, training goes on
rm ck/m.dnn.2.ckp
expect 0 tr Dir=ck Data=d.ctf train.SGD.maxEpochs=3
has "$tmp/err" "warning: checkpoint 'ck/m.dnn.2.ckp' not found: continuing from ck/m.dnn.2 without its checkpoint: learner state reset"
has "$tmp/err" "Finished Epoch[ 3 of 3]"

# makeMode restart of another network: refused, naming the model file and both shapes
expect 0 tr Dir=sh Data=d.ctf
expect 1 tr Dir=sh Data=d.ctf train.SGD.maxEpochs=3 train.SimpleNetworkBuilder.layerSizes=2:16:2
has "$tmp/err" "<command line>:arg5: error: the configured network 2:16:2 (SIMPLENET; layerTypes Tanh) is not the one makeMode would resume from 'sh/m.dnn.2' (and its checkpoint): 2:8:2 (SIMPLENET; layerTypes Tanh)"
expect 1 tr Dir=sh Data=d.ctf train.SGD.maxEpochs=3 train.SimpleNetworkBuilder.layerTypes=Sigmoid
has "$tmp/err" "a.cfg:6:43: error: the configured network 2:8:2 (SIMPLENET; layerTypes Sigmoid) is not the one"
[ ! -e sh/m.dnn.3 ] && ok || no "resumed another network"
expect 0 tr Dir=sh Data=d.ctf train.SGD.maxEpochs=3
has "$tmp/err" "Starting from checkpoint. Loading network from 'sh/m.dnn.2'."

finish accept
