#!/bin/sh
# The HTK reader and truncated back-propagation through time on the GPU (deviceId=0) against
# the CPU, on a corpus tests/htk_gen writes:
#   (a) frame mode, a SimpleNetworkBuilder network, 3 epochs: each epoch's training
#       criterion within 1e-4 relative of the CPU's;
#   (b) truncated mode (8 streams of 20 frames), a recurrent LSTM and a PastValue network
#       (BrainScript): the epochs' criteria within 1e-3 relative of the CPU's, and the
#       outputs written in segments of 3 frames (the state carried across minibatches on
#       the device) those of whole utterances within 1e-4 (cuBLAS may sum in another order
#       for another number of columns).
# Skipped (77) unless `trainer --version` reports a cuBLAS device; PT_GPU_TEST_FORCE=1 and
# PT_GPU_TEST_DEVICE=cpu check the script itself on a machine without one. Part of
# `make check-gpu` and of scripts/gpu-check.sh (part htk).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
gpu_or_skip
G=${PT_GPU_TEST_DEVICE:-0}
HG=${PT_HTK_GEN:-$(cd "${top_builddir:-.}" && pwd)/tests/htk_gen}
[ -x "$HG" ] || HG=$(dirname "$T")/htk_gen
cd "$tmp"
mkdir -p c && "$HG" c || { echo "FAIL: htk_gen ($HG)"; exit 1; }
cat >g.cntk <<'CFG'
command = fr
feat = [ dim = 143 ; scpFile = "c/train.scp" ]
lab = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8 ]
fr = [ action = train ; modelPath = "$M$/m.dnn"
    SimpleNetworkBuilder = [ layerSizes = 143:64:8 ; trainingCriterion = CrossEntropyWithSoftmax
        evalCriterion = ClassificationError ; layerTypes = Sigmoid ; applyMeanVarNorm = true ]
    SGD = [ minibatchSize = 128 ; learningRatesPerSample = 0.01 ; momentumPerMB = 0.9 ; maxEpochs = 3 ]
    reader = [ readerType = HTKMLFReader ; features = $feat$ ; labels = $lab$ ] ]
lstm = [ features = Input {143} ; labels = Input {8}
    z = Sequential ( RecurrentLSTMLayer {24} : DenseLayer {8} ) (features)
    ce = CrossEntropyWithSoftmax (labels, z) ; err = ClassificationError (labels, z)
    criterionNodes = (ce) ; evaluationNodes = (err) ; outputNodes = (z) ]
past = [ features = Input {143} ; labels = Input {8}
    W = Parameter (16, 143) ; H = Parameter (16, 16) ; b = Parameter (16, 1)
    h = Tanh (W * features + H * PastValue (0, h, timeStep = 2) + b)
    z = DenseLayer {8} (h)
    ce = CrossEntropyWithSoftmax (labels, z) ; err = ClassificationError (labels, z)
    criterionNodes = (ce) ; evaluationNodes = (err) ; outputNodes = (z) ]
tr = [ action = train ; modelPath = "$M$/m.dnn" ; frameMode = false ; truncated = true
    BrainScriptNetworkBuilder = $lstm$
    SGD = [ minibatchSize = 20 ; learningRatesPerMB = 1.6 ; momentumAsTimeConstant = 200 ; maxEpochs = 2 ]
    reader = [ readerType = HTKMLFReader ; nbruttsineachrecurrentiter = 8 ; features = $feat$ ; labels = $lab$ ] ]
wr = [ action = write ; modelPath = "$M$/m.dnn" ; outputPath = "$M$/$O$" ; outputNodeNames = z
    minibatchSize = $W$ ; frameMode = false ; truncated = $TR$
    reader = [ readerType = HTKMLFReader ; randomize = false ; features = $feat$ ; labels = $lab$ ] ]
CFG
# crit LOG: the Finished Epoch lines' training criteria
crit() { sed -n 's/^Finished Epoch\[ *[0-9]* of [0-9]*\]: \[Training\] [^=]*= \([0-9.e+-]*\) .*/\1/p' "$1"; }
# near A B TOL: every pair of numbers (one a line) within TOL relative
near() { paste -d ' ' "$1" "$2" | awk -v t="$3" 'NF != 2 { bad = 1 } { d = $1 - $2; if (d < 0) d = -d
    m = ($1 < 0 ? -$1 : $1); if (d > t * (m > 1 ? m : 1)) bad = 1 } END { exit bad || NR == 0 }'; }
# side S (c: the CPU, g: the GPU) -> its deviceId
dev() { if [ "$1" = c ]; then echo cpu; else echo "$G"; fi; }
for s in c g; do
    expect 0 "$T" configFile=g.cntk M=fr$s deviceId="$(dev $s)"
    crit "$tmp/err" >fr$s.c
done
echo "# frame mode: CPU $(tr '\n' ' ' <frc.c) GPU $(tr '\n' ' ' <frg.c)"
near frc.c frg.c 1e-4 && ok || no "frame mode: GPU and CPU criteria differ"
for net in lstm past; do
    for s in c g; do
        expect 0 "$T" configFile=g.cntk command=tr M=$net$s deviceId="$(dev $s)" "tr.BrainScriptNetworkBuilder=\$$net\$"
        crit "$tmp/err" >$net$s.c
        expect 0 "$T" configFile=g.cntk command=wr M=$net$s deviceId="$(dev $s)" O=whole W=100000 TR=false
        expect 0 "$T" configFile=g.cntk command=wr M=$net$s deviceId="$(dev $s)" O=seg W=3 TR=true
        tr ' ' '\n' <$net$s/whole.z >w.txt
        tr ' ' '\n' <$net$s/seg.z >s.txt
        near w.txt s.txt 1e-4 && ok || no "$net on $(dev $s): outputs in segments differ from whole utterances'"
    done
    echo "# $net: CPU $(tr '\n' ' ' <${net}c.c) GPU $(tr '\n' ' ' <${net}g.c)"
    near ${net}c.c ${net}g.c 1e-3 && ok || no "$net, truncated: GPU and CPU criteria differ"
done
echo "test_gpu_htk: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
