#!/bin/sh
# 1-bit SGD on real data: fashion-mlp on 4 ranks reaches a test accuracy within 0.5 % of
# the 32-bit run after the same number of epochs (issue 4's acceptance check).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_onebit_fashion: mpiexec not found"; exit 99; }
fashion_data test_onebit_fashion
cd "$tmp"
for bits in 32 1; do
    timeout 600 "$MPIEXEC" --allow-run-as-root --oversubscribe -n 4 "$T" \
        configFile="$S/configs/fashion-mlp-dp.cfg" DataDir="$data" ModelDir="$tmp/b$bits" \
        train.SGD.maxEpochs=3 traceLevel=1 numCPUThreads=1 \
        train.SGD.ParallelTrain.DataParallelSGD.gradientBits=$bits >b$bits.out 2>b$bits.err
    st=$?
    [ $st -eq 0 ] && ok || { no "$bits bits: exit $st"; tail -5 b$bits.err; }
    has b$bits.err "numNodes = 4, numGradientBits = $bits), distributed reading is ENABLED."
done
e32=$(test_err b32.err) e1=$(test_err b1.err)
echo "# test error: 32 bits $e32, 1 bit $e1"
awk -v a="$e32" -v b="$e1" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && a < 0.13 && d <= 0.005) }' &&
    ok || no "1-bit test error $e1 is not within 0.5 % of the 32-bit $e32"
finish onebit_fashion
