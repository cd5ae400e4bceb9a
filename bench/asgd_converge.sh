#!/bin/sh
# The 10-run proof of issue 19 (DataParallelASGD converges when workers are slow and
# uneven): tests/test_asgd_converge.sh with ASGD_RUNS=10 (CNTK's SimpleMultiGPU config on
# DataParallelASGD, 4 workers, rank 1 slowed 3x, 2 busy loops on the cores; every run within
# 1 % of one worker's test accuracy). Run from a built tree:
#   bench/asgd_converge.sh [RUNS]        (about 30 s a run on a loaded 2-core machine)
# Prints the test's summary lines; results: bench/RESULTS.md.
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
ASGD_RUNS=${1:-10} top_srcdir=$top top_builddir=${top_builddir:-$top} sh "$top/tests/test_asgd_converge.sh"
