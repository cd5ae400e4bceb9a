#!/bin/sh
# A network builder in an action=write or test block makes the network evaluated, as in
# CNTK's ATIS example: BS.Network.Load reads the trained model's network, whose nodes the
# builder names (m.z) and adds to (Hardmax, ClassificationError). The written Hardmax is
# one-hot at the largest of the model's own output in every sample, the tested error
# equals the model's own evaluation node's, on 1 and 2 ranks, with the model's
# Mean / InvStdDev; the errors name the file, the call and what is wrong.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_load: mpiexec not found"; exit 99; }
cd "$tmp"
three_classes_ctf >d.txt
cat >l.cntk <<'CFG'
modelPath = "m/m.dnn"
deviceId = -1
rd = [ readerType = CNTKTextFormatReader ; file = d.txt ; randomize = false
       input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 3 ; format = dense ] ] ]
Train = [
    action = train
    BrainScriptNetworkBuilder = [
        features = Input (2)
        labels = Input (3, tag = "label")
        h = DenseLayer {8, activation = Tanh} (MeanVarNorm (features))
        z = LinearLayer {3} (h)
        ce = CrossEntropyWithSoftmax (labels, z, tag = "criterion")
        errs = ClassificationError (labels, z, tag = "evaluation")
        top2 = ClassificationError (labels, z, topN = 2)  # in no group: a test may name it
        outputNodes = (z)
    ]
    SGD = [ minibatchSize = 32 ; learningRatesPerSample = 0.02 ; maxEpochs = 2 ]
    reader = $rd$
]
Plain = [ action = test ; reader = $rd$ ]
PlainOut = [ action = write ; reader = $rd$ ; outputPath = "o/plain" ]
Out = [
    action = write
    BrainScriptNetworkBuilder = [
        modelAsTrained = BS.Network.Load ("$modelPath$")
        final = Hardmax (modelAsTrained.z)
    ]
    outputPath = "o/w"
    outputNodeNames = final
    reader = $rd$
]
Test = [
    action = test
    BrainScriptNetworkBuilder = [
        labels = Input (3, tag = "label")
        modelAsTrained = BS.Network.Load ("$modelPath$")
        final = Hardmax (modelAsTrained.z)
        errorRate = ClassificationError (labels, final, tag = "evaluation")
    ]
    evalNodeNames = errorRate
    reader = $rd$
]
CFG
expect 0 "$T" configFile=l.cntk command=Train:Plain:PlainOut:Out:Test
has "$tmp/err" 'Final Results: Minibatch[1-1]: errorRate = '
cp "$tmp/err" all.err
# the model's own error count (errs = P%) against the loaded network's (errorRate = F)
plain=$(sed -n 's/^Final Results: .*errs = \([0-9.]*\)% .*/\1/p' all.err)
loaded=$(sed -n 's/^Final Results: .*errorRate = \([0-9.]*\) .*/\1/p' all.err)
awk -v p="$plain" -v l="$loaded" 'BEGIN { exit !(p != "" && l != "" && (p / 100 - l)^2 < 1e-10 && l > 0) }' &&
    ok || no "errorRate $loaded against errs $plain%"
# every written Hardmax line is one-hot where the model's output is largest (the first)
[ "$(wc -l <o/w.final)" -eq 600 ] && ok || no "o/w.final has $(wc -l <o/w.final) lines"
paste -d' ' o/plain.z o/w.final | awk '{ b = 1; for (i = 2; i <= 3; i++) if ($i > $b) b = i
    s = 0; for (i = 4; i <= 6; i++) s += $i; if (s != 1 || $(3 + b) != 1) bad++ }
    END { exit bad > 0 }' && ok || no "Hardmax is not one-hot at the output's largest value"

# on 2 ranks the same error (each rank evaluates its share; the sums are reduced)
mpi -n 2 "$T" configFile=l.cntk command=Test >r2.out 2>r2.err && ok || { no "2 ranks"; tail -5 r2.err; }
[ "$(grep '^Final Results' r2.err)" = "$(grep 'errorRate' all.err | grep '^Final Results')" ] && ok ||
    no "2 ranks: $(grep '^Final Results' r2.err)"

# evalNodeNames picks an untagged node of the builder; a block given again on the command
# line adds to the file's (CNTK merges them): its later definitions hide the earlier ones
cat >>l.cntk <<'CFG'
Untagged = [ action = test ; reader = $rd$ ; evalNodeNames = errorRate
    BrainScriptNetworkBuilder = [ labels = Input (3, tag = "label") ; m = BS.Network.Load ("m/m.dnn")
        errorRate = ClassificationError (labels, Hardmax (m.z)) ] ]
None = [ action = test ; reader = $rd$
    BrainScriptNetworkBuilder = [ m = BS.Network.Load ("m/m.dnn") ; final = Hardmax (m.z) ] ]
Missing = [ action = write ; reader = $rd$ ; outputPath = o/x
    BrainScriptNetworkBuilder = [ m = BS.Network.Load ("no.dnn") ; final = Hardmax (m.z) ] ]
TrainLoad = [ action = train ; modelPath = m2/m.dnn ; reader = $rd$ ; SGD = [ maxEpochs = 1 ; learningRatesPerSample = 0.01 ]
    BrainScriptNetworkBuilder = [ labels = Input (3, tag = "label") ; m = BS.Network.Load ("m/m.dnn")
        ce = CrossEntropyWithSoftmax (labels, m.z, tag = "criterion") ] ]
CFG
final=$(grep 'errorRate' all.err | grep '^Final Results')
expect 0 "$T" configFile=l.cntk command=Untagged
has "$tmp/err" "$final"
expect 0 "$T" configFile=l.cntk command=Test 'Test.BrainScriptNetworkBuilder=[labels = Input (3, tag = "label")
    errorRate = ClassificationError (labels, final, tag = "evaluation")]'
has "$tmp/err" "$final"

# evalNodeNames may name a node of the model that no group holds (CNTK's configs name a
# top-5 error so); the errors stay the same
expect 0 "$T" configFile=l.cntk command=Plain Plain.evalNodeNames=top2:errs
has "$tmp/err" "Final Results: Minibatch[1-1]: top2 = "
has "$tmp/err" "; errs = $plain% * 600"
top2=$(sed -n 's/^Final Results: .*top2 = \([0-9.]*\) .*/\1/p' "$tmp/err")
awk -v t="$top2" -v p="$plain" 'BEGIN { exit !(t != "" && t <= p / 100) }' && ok ||
    no "top-2 error $top2 above the top-1 $plain%"
# errors: a missing model, a node it lacks, nothing to evaluate, a damaged file, a
# training network that loads one
expect 1 "$T" configFile=l.cntk command=Missing
has "$tmp/err" 'no.dnn: error: cannot open model file: No such file or directory; in BS.Network.Load ("no.dnn") at l.cntk:'
expect 1 "$T" configFile=l.cntk command=Out 'Out.BrainScriptNetworkBuilder=[final = Hardmax (modelAsTrained.zz)]'
has "$tmp/err" "error: the record has no member 'zz'"
expect 1 "$T" configFile=l.cntk command=None
has "$tmp/err" "error: the network has nothing to evaluate"
head -c 300 m/m.dnn >cut.dnn
expect 1 "$T" configFile=l.cntk command=Missing 'Missing.BrainScriptNetworkBuilder=[m = BS.Network.Load ("cut.dnn")]'
has "$tmp/err" 'cut.dnn: error: truncated model file'
expect 1 "$T" configFile=l.cntk command=TrainLoad
has "$tmp/err" "BS.Network.Load is supported in the network builder of an action=test or write block"
[ ! -e m2 ] && ok || no "a refused training wrote m2"
finish test_bs_load
