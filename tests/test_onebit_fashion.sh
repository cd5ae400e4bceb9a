#!/bin/sh
# 1-bit SGD on real data: fashion-mlp on 4 ranks reaches a test accuracy within 0.5 % of
# the 32-bit run after the same number of epochs (issue 4's acceptance check).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_onebit_fashion: mpiexec not found"; exit 99; }
data=${PT_FASHION_CTF:-$S/data/fashion-mnist}
if [ ! -f "$data/train.ctf" ] || [ ! -f "$data/test.ctf" ]; then
    # a tree without prepared data (a tarball build): convert Debian's package here
    data=$tmp/fashion
    mkdir -p "$data"
    src=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
    conv=$(cd "${top_builddir:-.}" && pwd)/scripts/idx2ctf
    "$conv" "$src/train-images-idx3-ubyte.gz" "$src/train-labels-idx1-ubyte.gz" "$data/train.ctf" &&
        "$conv" "$src/t10k-images-idx3-ubyte.gz" "$src/t10k-labels-idx1-ubyte.gz" "$data/test.ctf" ||
        { echo "test_onebit_fashion: cannot convert $src (apt-get install dataset-fashion-mnist)"; exit 1; }
fi
cd "$tmp"
# test error after training: EvalClassificationError of the Final Results line
err() { sed -n 's/^Final Results: .*EvalClassificationError = \([0-9.]*\) \* 10000;.*/\1/p' "$1"; }
for bits in 32 1; do
    timeout 600 "$MPIEXEC" --allow-run-as-root --oversubscribe -n 4 "$T" \
        configFile="$S/configs/fashion-mlp-dp.cfg" DataDir="$data" ModelDir="$tmp/b$bits" \
        train.SGD.maxEpochs=3 traceLevel=1 numCPUThreads=1 \
        train.SGD.ParallelTrain.DataParallelSGD.gradientBits=$bits >b$bits.out 2>b$bits.err
    st=$?
    [ $st -eq 0 ] && ok || { no "$bits bits: exit $st"; tail -5 b$bits.err; }
    has b$bits.err "numNodes = 4, numGradientBits = $bits), distributed reading is ENABLED."
done
e32=$(err b32.err) e1=$(err b1.err)
echo "# test error: 32 bits $e32, 1 bit $e1"
awk -v a="$e32" -v b="$e1" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && a < 0.13 && d <= 0.005) }' &&
    ok || no "1-bit test error $e1 is not within 0.5 % of the 32-bit $e32"
finish onebit_fashion
