#!/bin/sh
# The main job: install what is missing, build, and run `trainer` under mpiexec on the
# Fashion-MNIST config (Debian's dataset-fashion-mnist package).
#
# Status: the configuration side is complete; the training loop is not implemented yet.
# Until it is, this script checks the config on 2 MPI ranks and prints it with origins,
# then shows that action=train reports itself as not available (and exits 0 for that
# expected message only).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scripts/setup.sh
ls /usr/share/datasets/fashion-mnist/*-ubyte.gz >/dev/null 2>&1 \
    || { echo "run-fashion: dataset-fashion-mnist is not installed" >&2; exit 1; }
cfg=configs/fashion-mlp.cfg
echo "== mpiexec -n 2 trainer --print-config configFile=$cfg train.SGD.maxEpochs=3"
mpiexec --allow-run-as-root -n 2 ./trainer --print-config configFile=$cfg train.SGD.maxEpochs=3
echo "== mpiexec -n 2 trainer configFile=$cfg train.SGD.maxEpochs=3"
set +e
mpiexec --allow-run-as-root -n 2 ./trainer configFile=$cfg train.SGD.maxEpochs=3 2>&1 | tee /tmp/run-fashion.$$
set -e
if grep -q "action=train is not available in this build" /tmp/run-fashion.$$; then
    rm -f /tmp/run-fashion.$$
    echo "run-fashion: config checked on 2 ranks; training is not implemented yet (see README)"
    exit 0
fi
rm -f /tmp/run-fashion.$$
exit 1
