#!/bin/sh
# Real Open MPI runs (mpiexec -n 2 and -n 4): errors are reported once and end every rank
# promptly, including an error that only one rank meets.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_mpi: mpiexec not found (apt-get install openmpi-bin)"; exit 99; }

cfg="$S/configs/fashion-mlp.cfg"
cd "$tmp" # no ./data here: nothing trains for real
for n in 2 4; do
    start=$(date +%s)
    mpi -n $n "$T" configFile="$cfg" train.SGD.minibatchSize=25x >"$tmp/out" 2>"$tmp/err"
    rc=$?
    end=$(date +%s)
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && ok || no "-n $n: exit $rc"
    [ $((end - start)) -lt 60 ] && ok || no "-n $n took $((end - start)) s"
    c=$(count "$tmp/err" "<command line>:arg2: error: train.SGD.minibatchSize: expected an integer, got \"25x\"")
    [ "$c" -eq 1 ] && ok || { no "-n $n: error printed $c times"; cat "$tmp/err"; }

    mpi -n $n "$T" --print-config configFile="$cfg" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok || { no "-n $n --print-config: exit $rc"; cat "$tmp/err"; }
    c=$(count "$tmp/out" "command = train:test")
    [ "$c" -eq 1 ] && ok || no "-n $n: config printed $c times"

    # warnings come once too
    mpi -n $n "$T" --print-config configFile="$cfg" train.SGD.maxEpoch=1 >"$tmp/out" 2>"$tmp/err"
    c=$(count "$tmp/err" "warning: unknown key 'train.SGD.maxEpoch'")
    [ "$c" -eq 1 ] && ok || no "-n $n: warning printed $c times"
done

# an error only rank 1 meets (its directory holds a different config): every rank stops
mkdir -p "$tmp/r0" "$tmp/r1"
cat >"$tmp/r0/c.cfg" <<'CFG'
command = t
t = [ action = test ; modelPath = m ; reader = [ readerType = CNTKTextFormatReader ; file = f ; input = [ x = [ dim = 1 ; format = dense ] ] ] ]
CFG
sed 's/dim = 1/dim = one/' "$tmp/r0/c.cfg" >"$tmp/r1/c.cfg"
start=$(date +%s)
mpi -n 1 -wdir "$tmp/r0" "$T" configFile=c.cfg : -n 1 -wdir "$tmp/r1" "$T" configFile=c.cfg \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s)
[ $rc -ne 0 ] && [ $rc -ne 124 ] && ok || no "one-rank error: exit $rc"
[ $((end - start)) -lt 60 ] && ok || no "one-rank error took $((end - start)) s"
c=$(count "$tmp/err" "rank 1: c.cfg:2:119: error: t.reader.input.x.dim: expected an integer, got \"one\"")
[ "$c" -eq 1 ] && ok || { no "one-rank error printed $c times"; cat "$tmp/err"; }

# stderr= with 2 ranks: one log per rank
(cd "$tmp" && mpi -n 2 "$T" configFile="$cfg" stderr=log >/dev/null 2>&1)
[ -s "$tmp/log" ] && ok || no "rank 0 log missing"
[ -f "$tmp/log.rank1" ] && ok || no "rank 1 log missing"
grep -qF "cannot read data file" "$tmp/log" && ok || no "rank 0 log lacks the error"

# traceLevel=1 dumps the config once; numCPUThreads=0 gives each of 2 ranks cores/2 threads
cores=$(nproc)
want=$((cores / 2)); [ "$want" -lt 1 ] && want=1
s=""; [ "$want" -ne 1 ] && s=s
env -u OPENBLAS_NUM_THREADS timeout 120 "$MPIEXEC" --allow-run-as-root --oversubscribe -n 2 "$T" configFile="$cfg" traceLevel=1 >"$tmp/out" 2>"$tmp/err"
c=$(count "$tmp/err" "Configuration (merged, variables resolved, with origins):")
[ "$c" -eq 1 ] && ok || { no "config dumped $c times"; cat "$tmp/err"; }
has "$tmp/err" "Using $want BLAS thread$s per rank (2 ranks on this node)"
env -u OPENBLAS_NUM_THREADS timeout 120 "$MPIEXEC" --allow-run-as-root -n 1 "$T" configFile="$cfg" traceLevel=1 numCPUThreads=1 >"$tmp/out" 2>"$tmp/err"
has "$tmp/err" "Using 1 BLAS thread per rank (1 rank on this node)"

finish mpi
