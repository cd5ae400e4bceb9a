#!/bin/sh
# shareModelInHost where /dev/shm has no room: the ranks agree, warn and train with the
# gradient allreduce instead (the same model as shareModelInHost=false), never a crash or
# a rank left waiting. Needs a private mount namespace (root with CAP_SYS_ADMIN, as
# scripts/cluster.sh does) for a small tmpfs over /dev/shm; exits 77 where that is denied.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_team_shm: mpiexec not found"; exit 99; }
unshare -m sh -c 'mount -t tmpfs -o size=1M tmpfs /dev/shm' 2>/dev/null ||
    { echo "test_team_shm: cannot mount a tmpfs in a private mount namespace here"; exit 77; }
cd "$tmp"
toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
toy_cfg 1 >p.cfg
# 2:1000:1000:2: 4 MB of parameters and as much momentum, more than a 6 MB /dev/shm holds
# beside Open MPI's own segments
N="train.SimpleNetworkBuilder.layerSizes=2:1000:1000:2 train.SGD.epochSize=400 train.SGD.learningRatesPerSample=0.002"
small() { unshare -m sh -c 'mount -t tmpfs -o size=6M tmpfs /dev/shm && exec "$@"' sh "$@"; }
small timeout 120 "$MPIEXEC" --allow-run-as-root --oversubscribe -n 2 "$T" configFile=p.cfg Dir=small $N \
    >small.out 2>small.err
st=$?
[ $st -eq 0 ] && ok || { no "a full /dev/shm: exited $st"; tail -5 small.err; }
has small.err "warning: shared memory of "
has small.err "No space left on device"
has small.err "DataParallelSGD sums the gradients instead"
hasnt small.err "share one model"
run plain 2 $N train.SGD.ParallelTrain.shareModelInHost=false
run team 2 $N
has team.err "the 2 ranks of this host share one model in memory"
cmp -s small/m.dnn plain/m.dnn && ok || no "the fallback's model differs from shareModelInHost=false's"
crit small.err >small.txt
if close small.txt team.txt 1e-5; then ok; else no "the fallback and the team differ"; paste small.txt team.txt; fi
finish team_shm
