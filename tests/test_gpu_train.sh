#!/bin/sh
# Training on the GPU (deviceId=0: the cuBLAS backend) against the CPU (deviceId=cpu), on
# Fashion-MNIST subsets (12800 images, 6400 image sequences; 2000 and 1000 to test):
#   (a) fashion-mlp.cfg, 1 rank, 1 epoch: the epoch's training criterion agrees within
#       1e-4 relative, the training error within 0.001; the model after the epoch is tested:
#       its criterion within 2e-3 relative and its error within 3 test samples. The model is
#       where float rounding has compounded over 100 steps: on the GPU machine's CPU, the
#       same run on 1 rank and on 2 ranks (equal in exact arithmetic, summed in another
#       order) ends 1.8e-3 apart in the test criterion and 1 sample apart in the error;
#       the GPU was 5.2e-4 and 2 samples from the CPU (H200, 2026-11-26)
#   (b) fashion-lstm.cfg, the same; and for both, the inputs sent to the GPU during the
#       step before theirs, with the criteria read later, give the same model, byte for
#       byte, and the same epoch line as uploads at each step's start (PT_UPLOAD_AHEAD=0);
#       and so do steps replayed from CUDA graphs (PT_CUDA_GRAPHS=1)
#   (c) 2 ranks sharing the GPU: DataParallelSGD 32 bits (as (a)); 1-bit SGD
#       (fashion-mlp-dp.cfg), BlockMomentumSGD, ModelAveragingSGD (2 epochs: the criterion
#       falls, and ends within 6 %, 3 %, 3 % of the CPU's) and DataParallelASGD (within
#       10 %: asynchronous, so no two runs agree exactly; two CPU runs on a loaded 2-core
#       machine ended 4 % apart, and a GPU's faster steps change the staleness). 1 bit
#       turns rounding differences into other signs and other residuals, so the runs part
#       (the GPU ended 4.6 % from the CPU once); the exact check of the GPU's 1-bit
#       exchange is tests/test_gpu_engine.sh (bit for bit against the CPU's reference)
#   (d) checkpoints move between devices: 2 epochs on the GPU resume for a 3rd on the CPU
#       (from epoch 2's checkpoint), whose criterion is an all-GPU run's within 1e-4; and
#       the reverse against an all-CPU run
#   (e) deviceId=7 (no such device) fails with exit 1, naming deviceId and the devices
#   (f) a convolutional network, and one with batch normalization (CPU only): deviceId=auto
#       trains it on the CPU, saying why in the log; deviceId=0 fails with exit 1, naming
#       the node
#   (g) images (ImageDeserializer, random crops) read ahead and decoded on several threads:
#       a dense network on the GPU against the CPU, 1 and 2 ranks (needs python3)
# Every compared number is printed. Part of `make check-gpu`; about 1-2 minutes on a
# 16-core machine with a GPU.
#
# Skipped (77, "skipped: no GPU") unless `trainer --version` reports a cuBLAS device. To
# check this script's own logic on a machine without one:
#   PT_GPU_TEST_FORCE=1        run even so
#   PT_GPU_TEST_DEVICE=cpu     the deviceId of the "GPU" side (default 0); with cpu every
#                              comparison is the CPU against itself (and the "Computing on
#                              GPU" log line is not asked for)
#   PT_GPU_TEST_BAD=N          the deviceId that must not exist (default 7)
# Data: PT_FASHION_CTF (a directory with train.ctf, test.ctf and the -seq.ctf files), else
# data/fashion-mnist of the source tree, else converted from Debian's dataset-fashion-mnist.
# ($one, $two and $ck are lists of arguments: split on purpose.)
# shellcheck disable=SC2015,SC2086
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
gpu_or_skip
G=${PT_GPU_TEST_DEVICE:-0}
BAD=${PT_GPU_TEST_BAD:-7}
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_gpu_train: mpiexec not found"; exit 99; }
echo "# $(printf '%s\n' "$ver" | grep '^cuda backend')"
echo "# the GPU side: deviceId=$G"

# the subsets, in $tmp/d under the names the configs read
fashion_data test_gpu_train
mkdir -p "$tmp/d"
conv=$(cd "${top_builddir:-.}" && pwd)/scripts/idx2ctf
src=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
for part in train:train t10k:test; do
    name=${part##*:}
    [ -f "$data/$name-seq.ctf" ] && continue
    "$conv" --sequence "$src/${part%%:*}-images-idx3-ubyte.gz" "$src/${part%%:*}-labels-idx1-ubyte.gz" \
        "$tmp/$name-seq.ctf" >/dev/null || { echo "test_gpu_train: cannot convert $src"; exit 99; }
done
seqdir() { if [ -f "$data/$1-seq.ctf" ]; then echo "$data"; else echo "$tmp"; fi; }
head -n 12800 "$data/train.ctf" >"$tmp/d/train.ctf"
head -n 2000 "$data/test.ctf" >"$tmp/d/test.ctf"
head -n $((28 * 6400)) "$(seqdir train)/train-seq.ctf" >"$tmp/d/train-seq.ctf"
head -n $((28 * 1000)) "$(seqdir test)/test-seq.ctf" >"$tmp/d/test-seq.ctf"
rm -f "$tmp/train-seq.ctf" "$tmp/test-seq.ctf"
cd "$tmp" || exit 99

# train NAME DEVICE RANKS CONFIG ARGS...: configs/CONFIG on RANKS ranks and DEVICE, model
# in $tmp/NAME; the log goes to NAME.err. On a GPU the log says so (src/train/device.c:
# "Computing on GPU N (name) with cuBLAS."): no silent fallback to the CPU.
train() {
    name=$1 dev=$2 n=$3 cfg=$4
    shift 4
    mpi -n "$n" "$T" configFile="$S/configs/$cfg" DataDir="$tmp/d" ModelDir="$tmp/$name" \
        deviceId="$dev" "$@" >"$name.out" 2>"$name.err"
    st=$?
    [ $st -eq 0 ] && ok || { no "$name (deviceId=$dev, $n ranks, $cfg $*) exited $st"; tail -5 "$name.err"; }
    if [ "$dev" != cpu ]; then has "$name.err" "Computing on GPU $dev"; fi
}
# epoch LOG E KEY: the training value KEY (CrossEntropyWithSoftmax, EvalClassificationError)
# of epoch E; final LOG KEY: the test action's
epoch() { sed -n "s/^Finished Epoch\[ *$2 of [0-9]*\]: \[Training\] .*$3 = \([0-9.e+-]*\) .*/\1/p" "$1" | tail -n 1; }
final() { sed -n "s/^Final Results: .* $2 = \([0-9.e+-]*\) .*/\1/p" "$1" | tail -n 1; }
# agree WHAT A B REL [ABS]: |B - A| <= REL |A| + ABS; A and B are named $la and $lb
la=cpu lb=gpu
agree() {
    case "$2:$3" in
    :* | *: | *[!0-9.eE+:-]*)
        no "$1: not two numbers ($la '$2', $lb '$3')"
        return
        ;;
    esac
    line=$(awk -v a="$2" -v b="$3" -v rel="$4" -v abs="${5:-0}" -v la="$la" -v lb="$lb" 'BEGIN {
        d = a - b; if (d < 0) d = -d
        m = a < 0 ? -a : a
        r = m > 0 ? d / m : d
        v = d <= rel * m + abs ? "ok" : "BAD"
        plus = abs > 0 ? sprintf(" + %g", abs) : ""
        printf "%s: %s %s, %s %s, relative difference %.3g (allowed %g%s)", v, la, a, lb, b, r, rel, plus }')
    echo "# $1 $line"
    case $line in ok*) ok ;; *) no "$1 $line" ;; esac
}
# falls NAME: the training criterion of epoch 2 is below epoch 1's
falls() {
    a=$(epoch "$1.err" 1 CrossEntropyWithSoftmax) b=$(epoch "$1.err" 2 CrossEntropyWithSoftmax)
    echo "# $1: training criterion epoch 1 $a, epoch 2 $b"
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && b != "" && b + 0 < a + 0) }' && ok ||
        no "$1: the criterion did not fall ($a, then $b)"
}
# same_run CPU GPU SAMPLES: 1 epoch of training and a test, compared
same_run() {
    agree "$2 training criterion" "$(epoch "$1.err" 1 CrossEntropyWithSoftmax)" \
        "$(epoch "$2.err" 1 CrossEntropyWithSoftmax)" 1e-4
    agree "$2 training error" "$(epoch "$1.err" 1 EvalClassificationError)" \
        "$(epoch "$2.err" 1 EvalClassificationError)" 0 0.001
    agree "$2 test criterion" "$(final "$1.err" CrossEntropyWithSoftmax)" \
        "$(final "$2.err" CrossEntropyWithSoftmax)" 2e-3
    agree "$2 test error" "$(final "$1.err" EvalClassificationError)" \
        "$(final "$2.err" EvalClassificationError)" 1e-4 "$(awk -v n="$3" 'BEGIN { print 3 / n }')"
}

# (a), (b): one rank
one="train.SGD.maxEpochs=1"
train mlp-cpu cpu 1 fashion-mlp.cfg $one
train mlp-gpu "$G" 1 fashion-mlp.cfg $one
same_run mlp-cpu mlp-gpu 2000
train lstm-cpu cpu 1 fashion-lstm.cfg $one
train lstm-gpu "$G" 1 fashion-lstm.cfg $one
same_run lstm-cpu lstm-gpu 1000

# the inputs sent during the step before theirs (nn_upload_ahead, on by default on a GPU):
# the same model, byte for byte, as uploads at each step's start (PT_UPLOAD_AHEAD=0), and
# minibatches were sent so (traceLevel=2 counts them)
for c in mlp lstm; do
    PT_READ_AHEAD=1 PT_UPLOAD_AHEAD=0 train "$c-noup" "$G" 1 "fashion-$c.cfg" $one
    PT_READ_AHEAD=1 train "$c-up" "$G" 1 "fashion-$c.cfg" $one traceLevel=2
    cmp -s "$c-noup/model.dnn" "$c-up/model.dnn" && ok || no "$c: the GPU's model differs with the inputs sent ahead"
    has "$c-up.err" "the criteria read later."
    line=$(grep 'minibatches sent to the device' "$c-up.err" | head -n 1)
    echo "# $line"
    set -- $(echo "$line" | sed -n 's/^Epoch\[1\]: \([0-9]*\) of \([0-9]*\) .* (\([0-9]*\) taken so).*/\1 \2 \3/p')
    [ $# -eq 3 ] && [ "$1" -ge 1 ] && [ "$1" = "$3" ] && ok || no "$c: minibatches sent ahead and taken: '$line'"
    a=$(sed -n 's/epochTime=.*//p' "$c-noup.err") b=$(sed -n 's/epochTime=.*//p' "$c-up.err")
    [ -n "$a" ] && [ "$a" = "$b" ] && ok || no "$c: the epoch's criteria differ when read later"
    # steps replayed from recordings (PT_CUDA_GRAPHS=1: CUDA graphs): the same ops, so the
    # same model byte for byte and the same epoch line; all steps but the first few
    # (each shape and input buffer runs once unrecorded, then is recorded) replayed, no
    # recording failed. The CPU records nothing (the line is not printed there).
    [ "$G" = cpu ] && continue
    PT_READ_AHEAD=1 PT_CUDA_GRAPHS=1 train "$c-graph" "$G" 1 "fashion-$c.cfg" $one traceLevel=2
    cmp -s "$c-up/model.dnn" "$c-graph/model.dnn" && ok || no "$c: the GPU's model differs with steps replayed"
    b=$(sed -n 's/epochTime=.*//p' "$c-graph.err")
    [ -n "$a" ] && [ "$a" = "$b" ] && ok || no "$c: the epoch's criteria differ with steps replayed"
    line=$(grep 'steps replayed from recordings' "$c-graph.err" | head -n 1)
    echo "# $line"
    set -- $(echo "$line" | sed -n 's/^Epoch\[1\]: \([0-9]*\) of \([0-9]*\) steps .*; \([0-9]*\) recorded, \([0-9]*\) recordings failed.*/\1 \2 \3 \4/p')
    [ $# -eq 4 ] && [ "$1" -ge $(($2 - 4)) ] && [ "$3" -ge 1 ] && [ "$4" = 0 ] && ok ||
        no "$c: steps replayed, recorded, failed: '$line'"
done

# (c): two ranks on one GPU
train dp32-cpu cpu 2 fashion-mlp.cfg $one
train dp32-gpu "$G" 2 fashion-mlp.cfg $one
same_run dp32-cpu dp32-gpu 2000
two="train.SGD.maxEpochs=2 command=train"
for m in dp:6 bmuf:3 ma:3 asgd:10; do
    c=${m%%:*} pct=${m##*:}
    train "$c-cpu" cpu 2 "fashion-mlp-$c.cfg" $two
    train "$c-gpu" "$G" 2 "fashion-mlp-$c.cfg" $two
    falls "$c-cpu"
    falls "$c-gpu"
    agree "$c-gpu epoch 2 criterion" "$(epoch "$c-cpu.err" 2 CrossEntropyWithSoftmax)" \
        "$(epoch "$c-gpu.err" 2 CrossEntropyWithSoftmax)" "$(awk -v p="$pct" 'BEGIN { print p / 100 }')"
done
has dp-gpu.err "numNodes = 2, numGradientBits = 1)"

# (d): checkpoints across devices
ck="command=train train.SGD.keepCheckPointFiles=true"
train g3 "$G" 1 fashion-mlp.cfg $ck train.SGD.maxEpochs=3
train c3 cpu 1 fashion-mlp.cfg $ck train.SGD.maxEpochs=3
# resume NAME FIRST THEN REF: 2 epochs on device FIRST, the 3rd on THEN; against REF's 3rd
resume() {
    name=$1
    train "$name" "$2" 1 fashion-mlp.cfg $ck train.SGD.maxEpochs=2
    cp "$name.err" "$name.first.err"
    train "$name" "$3" 1 fashion-mlp.cfg $ck train.SGD.maxEpochs=3
    has "$name.err" "Starting from checkpoint. Loading network from '$tmp/$name/model.dnn.2'."
    hasnt "$name.err" "Finished Epoch[ 2 of 3]"
    echo "# $name: epoch 2 on deviceId=$2 $(epoch "$name.first.err" 2 CrossEntropyWithSoftmax)," \
        "$4's $(epoch "$4.err" 2 CrossEntropyWithSoftmax) (a repeatable device: the same)"
    la=$4 lb=$name
    agree "$name epoch 3 criterion" "$(epoch "$4.err" 3 CrossEntropyWithSoftmax)" \
        "$(epoch "$name.err" 3 CrossEntropyWithSoftmax)" 1e-4
    la=cpu lb=gpu
}
resume gpu-then-cpu "$G" cpu g3
resume cpu-then-gpu cpu "$G" c3

# (e): a device that is not there
expect 1 "$T" configFile="$S/configs/fashion-mlp.cfg" DataDir="$tmp/d" ModelDir="$tmp/bad" \
    deviceId="$BAD" command=train
echo "# deviceId=$BAD: $(grep -m 1 'error' "$tmp/err")"
has "$tmp/err" "deviceId=$BAD"
if [ "$ndev" -gt 0 ]; then has "$tmp/err" "deviceId=0"; fi
[ ! -e "$tmp/bad/model.dnn" ] && ok || no "deviceId=$BAD wrote a model"

# (f): a network with nodes only the CPU runs (fashion-conv-bs.cfg: convolution, pooling):
# deviceId=auto computes on the CPU and says why; deviceId=N is an error naming the node
cv="$T configFile=$S/configs/fashion-conv-bs.cfg DataDir=$tmp/d command=train
    train.SGD.maxEpochs=1 train.SGD.epochSize=1280"
expect 0 $cv ModelDir="$tmp/conv-auto" deviceId=auto
if [ "$G" != cpu ]; then
    echo "# deviceId=auto: $(grep -m 1 'deviceId=auto' "$tmp/err")"
    has "$tmp/err" "Convolution runs on the CPU only in this version (deviceId=-1; this backend: cuda); computing on the CPU instead."
    has "$tmp/err" "Convolution"
    [ -e "$tmp/conv-auto/model.dnn" ] && ok || no "deviceId=auto wrote no conv model"
    expect 1 $cv ModelDir="$tmp/conv-gpu" deviceId="$G"
    echo "# deviceId=$G: $(grep -m 1 'error' "$tmp/err")"
    has "$tmp/err" "Convolution runs on the CPU only in this version"
    [ ! -e "$tmp/conv-gpu/model.dnn" ] && ok || no "deviceId=$G wrote a conv model"
fi
# the same for batch normalization (CPU only too), in the MLP of fashion-mlp-bs.cfg
sed "s|DenseLayer {hiddenDim, activation = ReLU, init = 'uniform'} :|LinearLayer {hiddenDim} : BatchNormalizationLayer {} : ReLU :|" \
    "$S/configs/fashion-mlp-bs.cfg" >"$tmp/bn.cfg"
bn="$T configFile=$tmp/bn.cfg DataDir=$tmp/d command=train train.SGD.maxEpochs=1
    train.SGD.epochSize=1280"
expect 0 $bn ModelDir="$tmp/bn-auto" deviceId=auto
[ -e "$tmp/bn-auto/model.dnn" ] && ok || no "deviceId=auto wrote no model with batch normalization"
if [ "$G" != cpu ]; then
    has "$tmp/err" "BatchNormalization runs on the CPU only in this version (deviceId=-1"
    has "$tmp/err" "computing on the CPU instead."
    expect 1 $bn ModelDir="$tmp/bn-gpu" deviceId="$G"
    has "$tmp/err" "BatchNormalization runs on the CPU only in this version"
fi

# (g): images (CNTK's ImageDeserializer: random crops, mirrored, transposed; the pixels
# centred in the network) read ahead into pinned memory and decoded on several threads: a
# dense network trains on the GPU as on the CPU, on 1 rank and on 2 sharing the GPU
if command -v python3 >/dev/null; then
    mkdir -p img && (cd img && python3 "$S/tests/data/images.py" classes)
    cat >img/i.cntk <<'CFG'
command = Train
Train = [ action = train ; modelPath = "$Dir$/m.dnn"
    BrainScriptNetworkBuilder = [ features = Input {8:8:3} ; labels = Input {3}
        z = LinearLayer {3} (DenseLayer {32, activation = ReLU} ((features - 128) / 64))
        ce = CrossEntropyWithSoftmax (labels, z) ; errs = ClassificationError (labels, z)
        criterionNodes = (ce) ; evaluationNodes = (errs) ]
    SGD = [ minibatchSize = 32 ; learningRatesPerSample = 0.0005 ; maxEpochs = 2
        ParallelTrain = [ parallelizationMethod = DataParallelSGD ] ]
    reader = [ deserializers = ({ type = "ImageDeserializer" ; file = "img/train.txt"
        input = { features = { transforms = (
            { type = "Crop" ; cropType = "RandomSide" ; sideRatio = 0.6:0.9 ; jitterType = "UniRatio" } :
            { type = "Scale" ; width = 8 ; height = 8 ; channels = 3 } : { type = "Transpose" } ) }
            labels = { labelDim = 3 } } }) ] ]
CFG
    sed -i 's|"img/train.txt"|"'"$tmp"'/img/train.txt"|' img/i.cntk
    sed -i "s|^|$tmp/img/|" img/train.txt # the images' paths are the working directory's
    for n in 1 2; do
        for side in c:cpu "g:$G"; do
            name=img-${side%%:*}-$n dev=${side#*:}
            mpi -n $n "$T" configFile=img/i.cntk Dir="$tmp/$name" deviceId="$dev" traceLevel=1 \
                >"$name.out" 2>"$name.err" && ok || { no "$name exited $?"; tail -5 "$name.err"; }
        done
        if [ "$G" != cpu ]; then has "img-g-$n.err" "Computing on GPU $G"; fi
        agree "images, $n rank(s): epoch 1 criterion" "$(epoch "img-c-$n.err" 1 ce)" \
            "$(epoch "img-g-$n.err" 1 ce)" 1e-4
        agree "images, $n rank(s): epoch 2 criterion" "$(epoch "img-c-$n.err" 2 ce)" \
            "$(epoch "img-g-$n.err" 2 ce)" 1e-3
    done
    echo "# images: $(grep -m 1 -o 'minibatches read by .*' img-g-1.err)"
fi

finish gpu_train
