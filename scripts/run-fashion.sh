#!/bin/sh
# The main job: install what is missing, build, prepare Debian's Fashion-MNIST as CTF, and
# train configs/fashion-mlp.cfg under mpiexec (train, then test on the 10 000 test images).
#
# One rank for now: the parallel SGD methods (SGD.ParallelTrain) arrive with a later
# release, and until then more ranks are refused with a clear message.
# Extra arguments are passed to trainer, e.g. train.SGD.maxEpochs=3.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scripts/setup.sh
echo "== mpiexec -n 1 trainer configFile=configs/fashion-mlp.cfg makeMode=false $*"
exec mpiexec --allow-run-as-root -n 1 ./trainer configFile=configs/fashion-mlp.cfg \
    makeMode=false traceLevel=0 "$@"
