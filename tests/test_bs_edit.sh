#!/bin/sh
# CNTK's action=edit (a model file made from a BrainScriptNetworkBuilder, untrained) and a
# training whose whole network is a model file's, `BrainScriptNetworkBuilder =
# (BS.Network.Load ("PATH"))`, as CNTK's speech LSTM test chains them: the edited model
# trains exactly as the builder does from the same seed (its statistics computed then,
# not saved by edit); a trained model continues where it stopped; the result needs no
# other file; makeMode skips an existing file; the errors name what is wrong. 1 and 2 ranks.
# The node count is CNTK's: Pass is a node, what no root reaches is not.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_edit: mpiexec not found"; exit 99; }
cd "$tmp"
three_classes_ctf >d.txt
cat >e.cntk <<'CFG'
deviceId = -1
traceLevel = 1
rd = [ readerType = CNTKTextFormatReader ; file = d.txt ; randomize = false
       input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 3 ; format = dense ] ] ]
net = [
    features = Input (2) ; labels = Input (3, tag = 'label')
    h = DenseLayer {8, activation = Tanh} (MeanVarNorm (features))
    layers = [| DenseLayer {5} ; LinearLayer {3} |]    # [0] made, reached by no root:
    z = layers[1] (h)                                  # not one of the 21 nodes
    ce = CrossEntropyWithSoftmax (labels, z, tag = 'criterion')
    errs = ClassificationError (labels, z, tag = 'evaluation')
    out = Pass (z - LogPrior (labels), tag = 'output')
]
SGD = [ minibatchSize = 32 ; learningRatesPerSample = 0.01 ; maxEpochs = $epochs$ ]
Create = [ action = edit ; outputModelPath = "m/init.dnn" ; BrainScriptNetworkBuilder = $net$ ]
NoOutput = [ action = edit ; BrainScriptNetworkBuilder = $net$ ]
Fresh = [ action = train ; modelPath = "f/m.dnn" ; BrainScriptNetworkBuilder = $net$ ; reader = $rd$ ]
FromInit = [ action = train ; modelPath = "t/m.dnn" ; reader = $rd$
    BrainScriptNetworkBuilder = (BS.Network.Load ("m/init.dnn")) ]
Continue = [ action = train ; modelPath = "c/m.dnn" ; reader = $rd$
    BrainScriptNetworkBuilder = (BS.Network.Load ("f/m.dnn")) ]
Test = [ action = test ; modelPath = "c/m.dnn" ; reader = $rd$ ]
CFG
first() { sed -n 's/^ Epoch\[ *1 of [0-9]*\]-Minibatch\[ *1- *10[],].*: ce = \([0-9.]*\) .*/\1/p' "$1" | head -1; }
for n in 1 2; do
    rm -rf m f t c
    mpi -n $n "$T" configFile=e.cntk command=Create:Fresh:FromInit epochs=2 >o$n.out 2>o$n.err && ok ||
        { no "$n ranks: Create:Fresh:FromInit exited $?"; tail -5 o$n.err; }
    has o$n.err "Model with 21 nodes saved as 'm/init.dnn'."
    has o$n.err "Starting from the model 'm/init.dnn'."
    # the edited model is the builder's network at the training's seed, without statistics:
    # its training computes them and runs as the builder's, number for number
    grep '^Finished Epoch' o$n.err | sed 's/; epochTime=.*//' >fin$n.txt
    [ "$(sed -n 1,2p fin$n.txt)" = "$(sed -n 3,4p fin$n.txt)" ] &&
        [ "$(wc -l <fin$n.txt)" -eq 4 ] && ok || { no "$n ranks: FromInit did not train as Fresh"; cat fin$n.txt; }
    # a trained model continues: its first minibatches already at the trained level
    mpi -n $n "$T" configFile=e.cntk command=Continue epochs=1 >c$n.out 2>c$n.err && ok ||
        { no "$n ranks: Continue exited $?"; tail -5 c$n.err; }
    fresh=$(first o$n.err) cont=$(first c$n.err)
    awk -v f="$fresh" -v c="$cont" 'BEGIN { exit !(f != "" && c != "" && c < 0.75 * f) }' && ok ||
        no "$n ranks: continuing from f/m.dnn started at ce $cont, a fresh start at $fresh"
done
# the continued model's description is the file's own: it tests without that file
rm -rf f m
expect 0 "$T" configFile=e.cntk command=Test
has "$tmp/err" "Final Results: Minibatch[1-1]: errs = "
# makeMode (CNTK's default, true) skips an existing output; makeMode=false writes it again
expect 0 "$T" configFile=e.cntk command=Create
cp m/init.dnn first.dnn
expect 0 "$T" configFile=e.cntk command=Create randomSeed=7
has "$tmp/err" "'m/init.dnn' exists, skipping. Specify makeMode=false to force executing the action."
cmp -s m/init.dnn first.dnn && ok || no "makeMode: the existing model was written over"
expect 0 "$T" configFile=e.cntk command=Create randomSeed=7 makeMode=false
cmp -s m/init.dnn first.dnn && no "makeMode=false: the model was not written again" || ok
# errors: CNTK's MEL script beside the builder (tests/test_mel.sh runs them), no
# outputModelPath, writing over the model read, a missing model
expect 1 "$T" configFile=e.cntk command=Create Create.editPath=x.mel makeMode=false
has "$tmp/err" "editPath (a MEL script) or a BrainScriptNetworkBuilder, not both"
expect 1 "$T" configFile=e.cntk command=NoOutput makeMode=false
has "$tmp/err" "e.cntk:16:1: error: action=edit needs outputModelPath"
expect 1 "$T" configFile=e.cntk command=Create makeMode=false \
    'Create.BrainScriptNetworkBuilder=(BS.Network.Load ("m/init.dnn"))'
has "$tmp/err" "error: outputModelPath 'm/init.dnn' is the model that BS.Network.Load reads"
cmp -s m/init.dnn first.dnn && no "the refused copy changed m/init.dnn" || ok
cp d.txt d.keep
expect 1 "$T" configFile=e.cntk command=Create:Fresh epochs=1 makeMode=false Create.outputModelPath=d.txt
has "$tmp/err" "/d.txt' is an input (the data file of rd, e.cntk:3:51); refusing to write over it"
cmp -s d.txt d.keep && ok || no "the refused edit wrote over the data"
expect 1 "$T" configFile=e.cntk command=FromInit epochs=1 \
    'FromInit.BrainScriptNetworkBuilder=(BS.Network.Load ("no/such.dnn"))'
has "$tmp/err" "no/such.dnn: error: cannot open model file: No such file or directory; in FromInit.BrainScriptNetworkBuilder = (BS.Network.Load (\"no/such.dnn\")) at <command line>"
finish test_bs_edit
