#!/bin/sh
# tests/test_comm (every communicator function against single-process references) under
# real Open MPI with 1, 2, 3 and 4 ranks. Each run prints "ok N" / "not ok N" lines from
# rank 0 and exits non-zero on any failure; a hang ends at the timeout.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_comm: mpiexec not found (apt-get install openmpi-bin)"; exit 99; }
P=$(cd "${top_builddir:-.}" && pwd)/tests/test_comm
[ -x "$P" ] || { echo "test_comm: $P not built (make check builds it)"; exit 99; }
for n in 1 2 3 4; do
    timeout 300 "$MPIEXEC" --allow-run-as-root --oversubscribe -n $n "$P" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok || { no "-n $n: exit $rc"; grep -v '^ok ' "$tmp/out" | head -40; head -20 "$tmp/err"; }
    c=$(count "$tmp/out" "not ok")
    [ "$c" -eq 0 ] && ok || no "-n $n: $c checks failed"
    c=$(grep -c '^ok ' "$tmp/out")
    [ "$c" -gt 200 ] && ok || no "-n $n: only $c checks passed"
    echo "# -n $n: $(grep -c '^ok ' "$tmp/out") checks passed"
done
finish comm
