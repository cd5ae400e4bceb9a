#!/bin/sh
# Install what is missing, build, and run every test:
#   1. `make check` (Check unit tests, CLI tests, real mpiexec -n 1..4 tests, man-page
#      sync, fuzz regressions, the layer and format checks) with -Werror;
#   2. a smoke run of the fuzzers (scripts/fuzz.sh cfg, ctf, bs, ndl, model, mlf, lm;
#      FUZZ_SECONDS each, default 15): a crash, leak or timeout fails the run and leaves the
#      input in tests/fuzz/;
#   3. `make check-long`: the accuracy gates on Fashion-MNIST;
#   4. `make check-cluster`: every method across a simulated cluster of 2 hosts (network
#      namespaces, scripts/cluster.sh), and the example Slurm batch script on a local Slurm
#      over it (scripts/slurm-cluster.sh); skipped (77) without root or namespaces;
#   5. `make check` again in build-asan/, built with AddressSanitizer + UBSan: every test
#      of the first tier, so every error path is also checked for leaks and undefined
#      behaviour (the long tier is not repeated there: it trains for minutes and its code
#      paths are in the first tier).
# Each tier's header line gives the time it starts.
# SKIP_FUZZ=1 skips the second pass, SKIP_LONG=1 the third, SKIP_CLUSTER=1 the fourth,
# SKIP_ASAN=1 the fifth.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# with CUDA's compiler present (/usr/local/cuda), the cuBLAS backend is built too: its code
# compiles in CI, and its tests report themselves skipped (77) where there is no GPU
cuda=""
[ -x /usr/local/cuda/bin/nvcc ] && cuda="--with-cuda"
CONFIGURE_FLAGS="--enable-werror $cuda ${CONFIGURE_FLAGS:-}" scripts/setup.sh
# summary PREFIX LOG...: the count lines of each test's log
summary() {
    prefix=$1; shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        grep -hE '^[0-9]+%: Checks|^[0-9]+ passed, [0-9]+ failed|^replayed' "$f" | sed "s|^|$prefix$(basename "$f" .log): |" || true
    done
}
# the long tier's tests (tests/local.mk) and their logs
long=$(sed -n 's/^LONG_TESTS = //p' Makefile)
long_logs=$(echo "$long" | sed 's/\.sh/.log/g')
fast_logs() {
    for f in tests/*.log; do
        case " $long_logs tests/test_cluster.log tests/test_slurm.log " in *" $f "*) ;; *) echo "$f" ;; esac
    done
}
status=0
echo "== make check $(date +%T)"
make -j"$(nproc)" check || status=$?
# shellcheck disable=SC2046
summary "" $(fast_logs)
[ $status -eq 0 ] || { tail -60 test-suite.log 2>/dev/null; exit $status; }
if [ "${SKIP_FUZZ:-0}" != 1 ]; then
    # A short run on every CI pass keeps the fuzzers building and catches what a change
    # makes easy to find; long runs stay manual (scripts/fuzz.sh cfg 600).
    echo "== fuzz smoke (scripts/fuzz.sh cfg, ctf, bs, ndl, model, mlf and lm, ${FUZZ_SECONDS:-15} s each) $(date +%T)"
    flog=$(mktemp)
    for target in cfg ctf bs ndl model mlf lm; do
        if ! scripts/fuzz.sh "$target" "${FUZZ_SECONDS:-15}" >"$flog" 2>&1; then
            tail -40 "$flog"
            echo "fuzz $target failed: the input is tests/fuzz/crash-* (or leak-*, timeout-*);"
            echo "replay it with tests/fuzz/fuzz_$target FILE, fix the bug and keep the input in"
            echo "tests/fuzz/regress$([ "$target" = cfg ] || echo "-$target")/ (make check replays it)"
            rm -f "$flog"
            exit 1
        fi
        grep -h '^Done [0-9]* runs' "$flog" | sed "s|^|fuzz $target: |"
    done
    rm -f "$flog"
fi
if [ "${SKIP_LONG:-0}" != 1 ]; then
    echo "== long tier (make check-long) $(date +%T)"
    make -j"$(nproc)" check-long || status=$?
    # shellcheck disable=SC2086
    summary "long " $long_logs
    [ $status -eq 0 ] || { tail -60 test-suite-long.log 2>/dev/null; exit $status; }
fi
if [ "${SKIP_CLUSTER:-0}" != 1 ]; then
    echo "== cluster tier (make check-cluster) $(date +%T)"
    make check-cluster || status=$?
    summary "cluster " tests/test_cluster.log tests/test_slurm.log
    [ $status -eq 0 ] || { tail -60 test-suite-cluster.log 2>/dev/null; exit $status; }
fi

if [ "${SKIP_ASAN:-0}" != 1 ]; then
    # Built from the release tarball (which also proves the tarball is complete).
    echo "== AddressSanitizer + UBSan build (build-asan/, from make dist) $(date +%T)"
    make dist >/dev/null
    rm -rf build-asan
    mkdir -p build-asan
    tar -xzf "partrain-$(sed -n 's/^PACKAGE_VERSION = //p' Makefile).tar.gz" -C build-asan --strip-components=1
    (
        cd build-asan
        san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
        ./configure --enable-werror CFLAGS="-g -O1 $san" LDFLAGS="$san" >/dev/null
        # Open MPI keeps allocations until exit; our code gets no exemption. What MPI_Init
        # allocates is not tracked, and a program that initialized MPI checks for leaks in
        # comm_finalize, before MPI_Finalize unloads the plugins that lsan.supp names (so
        # malloc stacks need no full unwinding, which made this tier five times slower);
        # exit code 86 keeps a leak from hiding behind a run expected to fail with 1.
        export LSAN_OPTIONS="suppressions=$here/tests/lsan.supp:print_suppressions=0:exitcode=86"
        export ASAN_OPTIONS="detect_leaks=1:exitcode=86"
        export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
        make -j"$(nproc)" >/dev/null
        # one job more than the cores: a third of these tests' time is spent waiting
        # (mpiexec's start, ranks killed and waited for), which another test can use
        make -j"$(($(nproc) + 1))" check || { tail -80 test-suite.log; exit 1; }
        # shellcheck disable=SC2046
        summary "asan " $(fast_logs)
    )
fi
echo "scripts/test.sh: all tests passed $(date +%T)"
