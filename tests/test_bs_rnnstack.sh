#!/bin/sh
# OptimizedRNNStack (CNTK's cuDNN RNN stack, as its Speech/LSTM FullUtteranceCuDNN5 test and
# the Layers library's allowOptimizedEngine write it) built as stacked LSTMs on every
# backend, and its legacy name RNNStack:
# - a bidirectional stack of 2 layers has the parameters of the Layers library's
#   equivalent (BiRecurrentLSTMLayer twice: one W, H and b per layer and direction), named
#   after the weights tensor, which itself is no parameter; it learns a task that needs the
#   recurrence (the label is the previous word's class), and action=test of its model
#   gives the last epoch's figures' order;
# - one forward layer and RNNStack learn it as well;
# - ParameterTensor's initOutputRank (1 or -1) is read;
# - refused with the config's line: recurrentOp other than lstm, numLayers 0, weights that
#   are no parameter, another axis, initFilterRank other than 0.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
awk 'BEGIN { s = 7; for (q = 0; q < 500; q++) { s = (s * 1103515245 + 12345) % 2147483648;
    n = 4 + int(s / 2147483648 * 8);
    for (t = 0; t < n; t++) { s = (s * 1103515245 + 12345) % 2147483648; w[t] = int(s / 2147483648 * 40) }
    for (t = 0; t < n; t++)
        printf "%d\t|CW %d:1\t|L %d:1\n", q, w[t], t < 1 ? 0 : 1 + w[t - 1] % 5 } }' >lu.ctf
# net.cfg: the network's recurrent part is $RNN$ (over e, 12 rows), then DenseLayer {6}
cat >net.cfg <<'CFG'
command = Train:Test
modelPath = $Dir$/lu.model
traceLevel = 1
Train = [
    action = train
    BrainScriptNetworkBuilder = [
        features = Input (40, sparse = true)
        labels = Input (6)
        emb = Parameter (12, 40)
        e = emb * features
        rnn = $RNN$
        z = DenseLayer {6} (rnn)
        ce = CrossEntropyWithSoftmax (labels, z)
        err = ClassificationError (labels, z)
        criterionNodes = (ce) ; evaluationNodes = (err)
    ]
    SGD = [ minibatchSize = 256 ; learningRatesPerSample = 0.03 ; momentumAsTimeConstant = 512
            maxEpochs = 12 ]
]
Test = [ action = test ; minibatchSize = 256 ]
reader = [ readerType = CNTKTextFormatReader ; file = lu.ctf
    input = [ features = [ alias = CW ; dim = 40 ; format = sparse ]
              labels = [ alias = L ; dim = 6 ; format = sparse ] ] ]
CFG
last_err() { sed -n 's/^Finished Epoch.* err = \([0-9.e+-]*\) .*/\1/p' "$1" | tail -n 1; }
stack='OptimizedRNNStack (ParameterTensor {0:0, initOutputRank=-1, init="heNormal"}, e, 16, numLayers=2, bidirectional=true)'
expect 0 "$T" configFile=net.cfg Dir=bi "RNN=$stack"
cp "$tmp/err" bi.err
has bi.err "Training 10662 parameters in 15 out of 15 parameter tensors"
for n in rnn.l0.W rnn.l0.H rnn.l0.b rnn.l0.back.W rnn.l1.W rnn.l1.back.b; do
    has bi.err "Node '$n' (LearnableParameter operation)"
done
has bi.err "Node 'rnn.l1.W' (LearnableParameter operation) : [64 x 32]"
awk -v e="$(last_err bi.err)" 'BEGIN { exit !(e != "" && e <= 0.05) }' && ok || no "bidirectional stack did not learn: $(last_err bi.err)"
grep -q "^Final Results" bi.err && ok || no "no Final Results"
layers='Sequential (BiRecurrentLSTMLayer {16, init="heNormal"} : BiRecurrentLSTMLayer {16, init="heNormal"}) (e)'
expect 0 "$T" configFile=net.cfg Dir=ly "RNN=$layers" Train.SGD.maxEpochs=1
has "$tmp/err" "Training 10662 parameters in 15 out of 15 parameter tensors"
expect 0 "$T" configFile=net.cfg Dir=uni "RNN=OptimizedRNNStack (ParameterTensor {0:0, init=\"heNormal\"}, e, 16)"
cp "$tmp/err" uni.err
has uni.err "Training 2438 parameters in 6 out of 6 parameter tensors"
awk -v e="$(last_err uni.err)" 'BEGIN { exit !(e != "" && e <= 0.05) }' && ok || no "one layer did not learn: $(last_err uni.err)"
expect 0 "$T" configFile=net.cfg Dir=legacy "RNN=RNNStack (e, ParameterTensor {0:0, init=\"heNormal\"}, hiddenSize=16, numLayers=3, bidirectional=true)" Train.SGD.maxEpochs=1
has "$tmp/err" "Training 2438 parameters in 6 out of 6 parameter tensors"
# refusals
expect 1 "$T" configFile=net.cfg Dir=x "RNN=OptimizedRNNStack (ParameterTensor {0:0}, e, 16, recurrentOp='gru')"
has "$tmp/err" "net.cfg:11:"
has "$tmp/err" "recurrentOp = 'gru' is not supported yet"
expect 1 "$T" configFile=net.cfg Dir=x "RNN=OptimizedRNNStack (ParameterTensor {0:0}, e, 16, numLayers=0)"
has "$tmp/err" "numLayers = 0: expected 1 to 64"
expect 1 "$T" configFile=net.cfg Dir=x "RNN=OptimizedRNNStack (e, e, 16)"
has "$tmp/err" "weights must be a parameter"
expect 1 "$T" configFile=net.cfg Dir=x "RNN=OptimizedRNNStack (ParameterTensor {0:0}, e, 16, axis=1)"
has "$tmp/err" "only the sequence axis"
expect 1 "$T" configFile=net.cfg Dir=x "RNN=OptimizedRNNStack (ParameterTensor {0:0, initFilterRank=1}, e, 16)"
has "$tmp/err" "initFilterRank: only 0 is supported yet"
finish test_bs_rnnstack
