#!/bin/sh
# The DataParallelSGD engine under real mpiexec with 1, 2 and 4 ranks (tests/test_dpsgd_engine:
# exact 32-bit sums, buckets, the quantized exchange bit for bit with its residual property,
# buffered mode, fp16; every rank checks against a reference from all ranks' inputs).
# PT_TEST_BACKEND=cuda: the engines on GPU 0 (make check-gpu; skipped, 77, without one).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_dpsgd_engine: mpiexec not found"; exit 99; }
P=$(cd "${top_builddir:-.}" && pwd)/tests/test_dpsgd_engine
[ -x "$P" ] || { echo "test_dpsgd_engine: $P not built (make check builds it)"; exit 99; }
for n in 1 2 4; do
    mpi -n $n "$P" >"$tmp/out" 2>"$tmp/err"
    st=$?
    # PT_TEST_BACKEND=cuda (make check-gpu) without a GPU
    if grep -q '^skipped: no GPU' "$tmp/out"; then head -1 "$tmp/out"; exit 77; fi
    [ $st -eq 0 ] && ok || { no "test_dpsgd_engine -n $n failed"; grep -v '^ok ' "$tmp/out" | head -20; head -5 "$tmp/err"; }
    c=$(grep -c '^ok ' "$tmp/out")
    [ "$c" -ge 38 ] && ok || no "test_dpsgd_engine -n $n: only $c checks passed"
    echo "# test_dpsgd_engine -n $n: $c checks passed"
done
finish dpsgd_engine
