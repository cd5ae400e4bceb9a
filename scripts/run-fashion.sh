#!/bin/sh
# The main job: install what is missing, build, prepare Debian's Fashion-MNIST as CTF, and
# train configs/fashion-mlp.cfg under mpiexec on 2 ranks with DataParallelSGD (train, then
# test on the 10 000 test images). RANKS=4 (with --oversubscribe on 2 cores) works too.
# Extra arguments are passed to trainer, e.g. train.SGD.maxEpochs=3.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scripts/setup.sh
n=${RANKS:-2}
echo "== mpiexec -n $n trainer configFile=configs/fashion-mlp.cfg makeMode=false $*"
exec mpiexec --allow-run-as-root --oversubscribe -n "$n" ./trainer \
    configFile=configs/fashion-mlp.cfg makeMode=false traceLevel=0 "$@"
