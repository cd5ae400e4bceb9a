#!/bin/sh
# Training on one worker end to end: log lines in CNTK's formats, model and checkpoint
# files, action=test, makeMode restart (stopped and killed runs resume exactly), bad data
# and bad model files.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
# a separable problem: class 1 when x + y > 1 (deterministic pseudo-random points)
awk 'BEGIN { s = 12345; for (i = 0; i < 3000; i++) {
        s = (s * 1103515245 + 12345) % 2147483648; x = s / 2147483648;
        s = (s * 1103515245 + 12345) % 2147483648; y = s / 2147483648;
        c = (x + y > 1); printf "|features %.4f %.4f |labels %d %d\n", x, y, 1 - c, c } }' >train.ctf
head -500 train.ctf >test.ctf
cat >t.cfg <<'CFG'
command = train:test
traceLevel = 1
train = [
    action = train
    modelPath = models/m.dnn
    SimpleNetworkBuilder = [ layerSizes = 2:16:2 ; layerTypes = Tanh
        trainingCriterion = CrossEntropyWithSoftmax ; evalCriterion = ClassificationError ]
    SGD = [ maxEpochs = 4 ; minibatchSize = 32 ; learningRatesPerSample = 0.02*2:0.01
        momentumPerMB = 0.9 ; numMBsToShowResult = 30 ; firstMBsToShowResult = 2 ]
    reader = [ readerType = CNTKTextFormatReader ; file = train.ctf ; randomizationSeed = 3
        chunkSizeInBytes = 20000
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]
]
test = [
    action = test ; modelPath = models/m.dnn ; minibatchSize = 100
    reader = [ readerType = CNTKTextFormatReader ; file = test.ctf ; randomize = false
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]
]
CFG
expect 0 "$T" configFile=t.cfg
cp "$tmp/err" full.log
re_start='^Starting Epoch 1: learning rate per sample = 0\.020000  effective momentum = 0\.900000  momentum as time constant = 303\.7 samples$'
re_mb='^ Epoch\[ 1 of 4\]-Minibatch\[   1-   1\]: CrossEntropyWithSoftmax = [0-9]\.[0-9]{8} \* 32; EvalClassificationError = [0-9]\.[0-9]{8} \* 32; time = [0-9]+\.[0-9]{4}s; samplesPerSecond = [0-9]+\.[0-9]$'
re_pct='^ Epoch\[ 2 of 4\]-Minibatch\[   3-  30, 31\.91%\]: '
re_end='^Finished Epoch\[ 4 of 4\]: \[Training\] CrossEntropyWithSoftmax = [0-9]\.[0-9]{8} \* 3000; EvalClassificationError = [0-9]\.[0-9]{8} \* 3000; totalSamplesSeen = 12000; learningRatePerSample = 0\.0099999998; epochTime=[0-9.e-]+s$'
re_final='^Final Results: Minibatch\[1-5\]: EvalClassificationError = 0\.0[0-9]{7} \* 500; CrossEntropyWithSoftmax = [0-9]\.[0-9]{8} \* 500; perplexity = [0-9]\.[0-9]{8}$'
for re in "$re_start" "$re_mb" "$re_pct" "$re_end" "$re_final"; do
    if grep -Eq "$re" full.log; then ok; else no "no log line matches: $re"; fi
done
for f in m.dnn m.dnn.1 m.dnn.2 m.dnn.3 m.dnn.4 m.dnn.4.ckp; do
    [ -f "models/$f" ] && ok || no "models/$f missing"
done
[ ! -e models/m.dnn.3.ckp ] && ok || no "old checkpoint kept without keepCheckPointFiles"
ls models | grep -q tmp && no "temporary files left in models/" || ok
# makeMode: a finished run does nothing more
expect 0 "$T" configFile=t.cfg command=train
has "$tmp/err" "No further training is necessary"

# restart after a stop: 2 epochs, then 4 -> epochs 3 and 4 equal the uninterrupted run's
strip() { grep '^Finished Epoch\[ [34]' "$1" | sed 's/; epochTime=.*//'; }
rm -rf models
expect 0 "$T" configFile=t.cfg command=train train.SGD.maxEpochs=2
expect 0 "$T" configFile=t.cfg command=train
has "$tmp/err" "Starting from checkpoint. Loading network from 'models/m.dnn.2'."
strip full.log >want
strip "$tmp/err" >got
if [ -s want ] && cmp -s want got; then ok; else no "resumed epochs differ"; diff want got; fi

# restart after kill -9 in the middle of training: resumes from the newest epoch (whose
# checkpoint exists by construction), and every epoch after that prints exactly what an
# uninterrupted run prints
sed 's/maxEpochs = 4/maxEpochs = 30/; s/layerSizes = 2:16:2/layerSizes = 2:256:256:2/; s/minibatchSize = 32/minibatchSize = 4/' t.cfg >long.cfg
rm -rf models ref
expect 0 "$T" configFile=long.cfg command=train traceLevel=0 train.modelPath=ref/m.dnn
cp "$tmp/err" long-full.log
"$T" configFile=long.cfg command=train traceLevel=0 >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -f models/m.dnn.2 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ -f models/m.dnn.2 ] && ok || no "the long run made no epoch-2 model"
[ ! -f models/m.dnn ] && ok || no "the long run finished before it could be killed"
expect 0 "$T" configFile=long.cfg command=train traceLevel=0
has "$tmp/err" "Starting from checkpoint"
hasnt "$tmp/err" "without its checkpoint"
[ -f models/m.dnn ] && ok || no "the resumed run made no final model"
k=$(sed -n "s/.*Loading network from 'models\/m.dnn.\([0-9]*\)'.*/\1/p" "$tmp/err")
after() { sed -n 's/^Finished Epoch\[ *\([0-9]*\) of 30\]\(.*\); epochTime=.*/\1\2/p' "$1" | awk -F: -v k="$k" '$1 + 0 > k + 0'; }
after long-full.log >want
after "$tmp/err" >got
if [ -n "$k" ] && [ -s got ] && cmp -s want got; then ok; else no "after kill -9 at epoch $k the resumed epochs differ"; diff want got | head; fi

# bad data: the error names file:line:col, nothing hangs
sed '7s/|features 0/|features zero/' train.ctf >bad.ctf
expect 1 "$T" configFile=t.cfg command=train train.reader.file=bad.ctf train.modelPath=bad/m.dnn
has "$tmp/err" "bad.ctf:7:11: error: input 'features': expected a number, got \"zero"
# bad model file for action=test
printf 'not a model' >fake.dnn
expect 1 "$T" configFile=t.cfg command=test test.modelPath=fake.dnn
has "$tmp/err" "fake.dnn"
# partrain's AVX-512 kernel (cpuGemm) against OpenBLAS: the same training up to rounding,
# with layers wide enough (64 rows) for the kernel to run; refused on CPUs without AVX-512F
wide="command=train makeMode=false numCPUThreads=1 train.SGD.maxEpochs=2
      train.SimpleNetworkBuilder.layerSizes=2:64:64:2"
losses() { grep '^Finished Epoch' "$tmp/err" | sed 's/.*CrossEntropyWithSoftmax = \([0-9.]*\).*/\1/'; }
# shellcheck disable=SC2086
expect 0 "$T" configFile=t.cfg $wide train.modelPath=ob/m.dnn cpuGemm=openblas
has "$tmp/err" "matrix products: OpenBLAS"
losses >ob.txt
if grep -qw avx512f /proc/cpuinfo; then
    # shellcheck disable=SC2086
    expect 0 "$T" configFile=t.cfg $wide train.modelPath=own/m.dnn cpuGemm=avx512
    has "$tmp/err" "matrix products: partrain's AVX-512 kernel"
    losses >own.txt
    if [ "$(wc -l <own.txt)" -eq 2 ] && paste ob.txt own.txt |
        awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-4 * $1) exit 1 }'; then
        ok
    else
        no "cpuGemm=avx512 and openblas train differently: $(paste ob.txt own.txt | tr '\n' ' ')"
    fi
    cmp -s ob.txt own.txt && echo "# (bit-identical losses)" || echo "# losses: $(paste ob.txt own.txt | tr '\n' ' ')"
    # auto takes partrain's kernel whatever OpenBLAS runs (a rule: every run the same bits)
    # shellcheck disable=SC2086
    expect 0 env OPENBLAS_CORETYPE=SkylakeX "$T" configFile=t.cfg $wide train.modelPath=auto/m.dnn
    has "$tmp/err" "matrix products: partrain's AVX-512 kernel"
    losses >auto.txt
    cmp -s own.txt auto.txt && ok || no "cpuGemm=auto and avx512 train differently"
else
    # shellcheck disable=SC2086
    expect 1 "$T" configFile=t.cfg $wide train.modelPath=own/m.dnn cpuGemm=avx512
    has "$tmp/err" "cpuGemm=avx512: this CPU has no AVX-512F"
fi

# The momentum SGD step fused into the weight-gradient products (the default for dense
# layers with momentum SGD and nothing between the gradient and the update) gives the same
# model, bit for bit, as the update pass over the arena, which a clipping threshold too
# high to clip anything brings back; with Nesterov momentum too, on every kernel here.
kernels=openblas
grep -qw avx512f /proc/cpuinfo && kernels="openblas avx512"
for g in $kernels; do
    for nag in false true; do
        # shellcheck disable=SC2086
        expect 0 "$T" configFile=t.cfg $wide traceLevel=2 train.SGD.useNAG=$nag \
            train.modelPath=fz/$g$nag/m.dnn cpuGemm=$g
        has "$tmp/err" "Momentum SGD runs inside the backward pass"
        # shellcheck disable=SC2086
        expect 0 "$T" configFile=t.cfg $wide traceLevel=2 train.SGD.useNAG=$nag \
            train.modelPath=uf/$g$nag/m.dnn cpuGemm=$g train.SGD.clippingThresholdPerSample=1e30
        hasnt "$tmp/err" "Momentum SGD runs inside the backward pass"
        if cmp -s fz/$g$nag/m.dnn uf/$g$nag/m.dnn; then ok; else
            no "cpuGemm=$g useNAG=$nag: the fused update trained another model"
        fi
    done
done

finish train
