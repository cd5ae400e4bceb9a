# Shared helpers of the shell tests (sourced). Sets T (the trainer), S (the source tree),
# tmp (a scratch directory removed at exit) and counts checks in pass/fail.
T=$(cd "${top_builddir:-.}" && pwd)/trainer
S=$(cd "${top_srcdir:-.}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
# expect STATUS CMD...: run CMD, keep its output in $tmp/out and $tmp/err, check the status
expect() {
    want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else no "exit $got, wanted $want: $*"; cat "$tmp/err"; fi
}
# has FILE TEXT / hasnt FILE TEXT: a fixed string is (not) in FILE
has() { if grep -qF -- "$2" "$1"; then ok; else no "$1 lacks: $2"; sed 's/^/  | /' "$1" | head -20; fi; }
hasnt() { if grep -qF -- "$2" "$1"; then no "$1 has: $2"; else ok; fi; }
# count FILE TEXT: lines of FILE holding TEXT
count() { grep -cF -- "$2" "$1"; }
# toy_ctf CONDITION: 2000 two-feature samples in [0,1)^2, class 1 where the awk CONDITION on
# x and y holds (a fixed pseudo-random sequence, the same on every machine)
toy_ctf() {
    awk 'BEGIN { s = 777; for (i = 0; i < 2000; i++) {
        s = (s * 1103515245 + 12345) % 2147483648; x = s / 2147483648;
        s = (s * 1103515245 + 12345) % 2147483648; y = s / 2147483648;
        c = ('"$1"'); printf "|features %.4f %.4f |labels %d %d\n", x, y, 1 - c, c } }'
}
# three_classes_ctf: 600 samples of three classes in 2-D (x grows with the class, y falls),
# |features x y |labels one-hot (a fixed pseudo-random sequence)
three_classes_ctf() {
    awk 'BEGIN { s = 4242; for (i = 0; i < 600; i++) {
        s = (s * 1103515245 + 12345) % 2147483648; c = int(3 * s / 2147483648);
        s = (s * 1103515245 + 12345) % 2147483648; x = s / 2147483648 + 0.8 * c;
        s = (s * 1103515245 + 12345) % 2147483648; y = s / 2147483648 - 0.4 * c;
        printf "|features %.4f %.4f |labels %d %d %d\n", x, y, c == 0, c == 1, c == 2 } }'
}
# layers_cfg: d.ctf (the toy data inside a circle) and layers.cfg, a two-layer classifier
# written with CNTK's Layers library (DenseLayer, LinearLayer, Sequential) on it
layers_cfg() {
    toy_ctf 'x * x + y * y < 0.5' >d.ctf
    cat >layers.cfg <<'CFG'
command = train
train = [
    action = train
    modelPath = $Dir$/m.dnn
    BrainScriptNetworkBuilder = {
        inDim = 2 ; hid = 16
        labelDim = 2
        model = Sequential (
            DenseLayer {hid, activation = ReLU} :
            DenseLayer {hid, activation = Tanh, init = 'heNormal'} :
            LinearLayer {labelDim}
        )
        features = Input {inDim}
        labels = Input {labelDim}
        z = model (features)
        ce   = CrossEntropyWithSoftmax (labels, z)
        errs = ClassificationError (labels, z)
        featureNodes = (features) ; labelNodes = (labels)
        criterionNodes = (ce) ; evaluationNodes = (errs) ; outputNodes = (z)
    }
    SGD = [ maxEpochs = 8 ; minibatchSize = 40 ; learningRatesPerSample = 0.02 ; momentumPerMB = 0.9 ]
    reader = [ readerType = CNTKTextFormatReader ; file = d.ctf
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]
]
CFG
}
# toy_cfg TRACELEVEL: a DataParallelSGD training config over d.ctf (model in $Dir$)
toy_cfg() {
    cat <<CFG
command = train
traceLevel = $1
train = [
    action = train
    modelPath = \$Dir\$/m.dnn
    SimpleNetworkBuilder = [ layerSizes = 2:24:24:2 ; layerTypes = Tanh
        trainingCriterion = CrossEntropyWithSoftmax ; evalCriterion = ClassificationError ]
    SGD = [ maxEpochs = 3 ; minibatchSize = 40 ; learningRatesPerSample = 0.02
        momentumPerMB = 0.9 ; numMBsToShowResult = 1000
        ParallelTrain = [ parallelizationMethod = DataParallelSGD ; syncPerfStats = 20
            DataParallelSGD = [ gradientBits = 32 ] ] ]
    reader = [ readerType = CNTKTextFormatReader ; file = d.ctf ; chunkSizeInBytes = 9000
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]
]
CFG
}
# toy_with_cv TRACELEVEL: d.ctf (toy_ctf), its first 600 lines as cv.ctf and p.cfg (toy_cfg)
# here; sets PT (ParallelTrain's path) and cv (a cvReader argument over cv.ctf)
toy_with_cv() {
    toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
    head -n 600 d.ctf >cv.ctf
    toy_cfg "$1" >p.cfg
    PT=train.SGD.ParallelTrain
    cv="train.cvReader=[readerType=CNTKTextFormatReader;file=cv.ctf;randomize=false;input=[features=[dim=2;format=dense];labels=[dim=2;format=dense]]]"
}
# crit LOG: the training criteria of each epoch, "ce err" per line
crit() { sed -n 's/^Finished Epoch.*\[Training\] CrossEntropyWithSoftmax = \([0-9.]*\) .*EvalClassificationError = \([0-9.]*\) .*/\1 \2/p' "$1"; }
# close A B [TOL]: files of numbers equal within relative tolerance TOL (default 1e-5:
# float summation order differs between rank counts)
close() {
    paste "$1" "$2" | awk -v tol="${3:-1e-5}" '{ for (i = 1; i <= NF / 2; i++) { a = $i; b = $(i + NF / 2);
        d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); if (d > tol * m + 1e-7) bad = 1 } n++ }
        END { exit bad || n == 0 }'
}
# mpi ARGS...: Open MPI's mpiexec ($MPIEXEC) as root, oversubscribed, ended after 120 s
mpi() { timeout 120 "${MPIEXEC:-mpiexec}" --allow-run-as-root --oversubscribe "$@"; }
# run NAME RANKS ARGS...: train p.cfg on RANKS ranks with Dir=NAME; the log goes to
# NAME.err, the criteria of each epoch (crit) to NAME.txt
run() {
    name=$1 n=$2; shift 2
    mpi -n "$n" "$T" configFile=p.cfg Dir="$name" "$@" >"$name.out" 2>"$name.err"
    st=$?
    [ $st -eq 0 ] && ok || { no "$name (-n $n $*) exited $st"; tail -5 "$name.err"; }
    crit "$name.err" >"$name.txt"
}
# learns NAME MAX: the last epoch's error rate in NAME.txt is at most MAX
learns() { awk -v max="$2" 'END { exit !(NF == 2 && $2 <= max) }' "$1.txt" && ok || { no "$1 did not learn"; cat "$1.txt"; }; }
# fashion_data NAME: sets data to a directory with Fashion-MNIST's train.ctf and test.ctf
# (the source tree's, else converted here from Debian's package); exits 1 when impossible
fashion_data() {
    data=${PT_FASHION_CTF:-$S/data/fashion-mnist}
    [ -f "$data/train.ctf" ] && [ -f "$data/test.ctf" ] && return 0
    data=$tmp/fashion # a tree without prepared data (a tarball build)
    mkdir -p "$data"
    src=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
    conv=$(cd "${top_builddir:-.}" && pwd)/scripts/idx2ctf
    "$conv" "$src/train-images-idx3-ubyte.gz" "$src/train-labels-idx1-ubyte.gz" "$data/train.ctf" &&
        "$conv" "$src/t10k-images-idx3-ubyte.gz" "$src/t10k-labels-idx1-ubyte.gz" "$data/test.ctf" ||
        { echo "$1: cannot convert $src (apt-get install dataset-fashion-mnist)"; exit 1; }
}
# test_err LOG: the test error of the Final Results line (10000 samples)
test_err() { sed -n 's/^Final Results: .*EvalClassificationError = \([0-9.]*\) \* 10000;.*/\1/p' "$1"; }
# identical NAME RANKS EPOCHS: rank k's model file of every epoch equals rank 0's
# (everyRankSavesModel)
identical() {
    for ep in $(seq 1 "$3"); do
        for k in $(seq 1 $(($2 - 1))); do
            cmp -s "$1/m.dnn.$ep" "$1/m.dnn.$ep.rank$k" && ok || no "$1: epoch $ep rank $k's model differs from rank 0's"
        done
    done
}
# finish NAME: print the summary lines and exit with the verdict
finish() {
    echo "# $1: $pass checks passed, $fail failed"
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}

# 600 images of 6 x 6 pixels in CTF (|features, |labels of 2): the class is the half a
# bright 2 x 2 square lies in. square_ctf SEED BASE: the background is BASE plus noise up
# to 0.2, the square adds 1.
square_ctf() {
    awk -v s="$1" -v base="$2" 'BEGIN { for (i = 0; i < 600; i++) {
        s = (s * 1103515245 + 12345) % 2147483648; px = int(s / 2147483648 * 5);
        s = (s * 1103515245 + 12345) % 2147483648; py = int(s / 2147483648 * 5);
        c = px < 2.5; line = "|features";
        for (y = 0; y < 6; y++) for (x = 0; x < 6; x++) {
            s = (s * 1103515245 + 12345) % 2147483648; v = base + 0.2 * s / 2147483648;
            if (x >= px && x < px + 2 && y >= py && y < py + 2) v += 1;
            line = line sprintf(" %.3f", v) }
        printf "%s |labels %d %d\n", line, c, 1 - c } }'
}
# square_cfg: a config on stdin whose readers of square_ctf's images (img.ctf: 36 values
# and 2 labels a row) are written @READER@ (training) or @TESTREADER@ (randomize = false),
# each replaced by the two lines of its block (the config's line numbers stay as written)
square_cfg() {
    sq_r='readerType = CNTKTextFormatReader ; file = img.ctf'
    sq_i='        input = [ features = [ dim = 36 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]'
    sed -e "s/@READER@/reader = [ $sq_r\n$sq_i/" -e "s/@TESTREADER@/reader = [ $sq_r ; randomize = false\n$sq_i/"
}
# gpu_or_skip: exit 77 ("skipped: no GPU") unless `trainer --version` reports a cuBLAS
# device (PT_GPU_TEST_FORCE=1 runs anyway, to check a GPU test's own logic); sets ver (the
# version text) and ndev (the devices, 0 when forced)
gpu_or_skip() {
    ver=$("$T" --version 2>&1)
    ndev=$(printf '%s\n' "$ver" | sed -n 's/^cuda backend: cuBLAS, \([0-9]*\) CUDA device.*/\1/p')
    if [ -z "$ndev" ] && [ "${PT_GPU_TEST_FORCE:-0}" != 1 ]; then
        echo "skipped: no GPU: $(printf '%s\n' "$ver" | grep '^cuda backend' || echo "$T --version: $ver")"
        exit 77
    fi
    ndev=${ndev:-0}
}
