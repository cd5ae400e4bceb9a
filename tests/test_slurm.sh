#!/bin/sh
# Slurm on a simulated cluster (scripts/slurm-cluster.sh: slurmctld, one slurmd per host,
# munge, on cluster.sh's namespaces): scripts/slurm-train.sbatch, submitted as a user would,
# trains on 2 hosts x 2 ranks with mpiexec inside the allocation and with srun --mpi=pmix,
# and salloc ... mpiexec does too; every rank's model file is identical, every launcher
# gives the same model; a bad config fails the job (Slurm says FAILED) with the trainer's
# error in the job's output; down leaves no daemon. Skipped (77) without root or
# namespaces (cluster.sh check); without the Slurm packages it fails (scripts/setup.sh).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
SC=$S/scripts/slurm-cluster.sh
"$SC" check || exit $?
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PT_CLUSTER_DIR=$tmp/cluster PT_CLUSTER_TTL=900 PT_CLUSTER_TIMEOUT=300
export PT_CLUSTER_DIR PT_CLUSTER_TTL PT_CLUSTER_TIMEOUT
trap '"$SC" down; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
"$SC" up 2 >"$tmp/up" || { echo "test_slurm: slurm-cluster.sh up 2 failed"; exit 99; }
has "$tmp/up" "PT_CLUSTER_DIR=$PT_CLUSTER_DIR"
"$SC" run sinfo -h -N -o '%N %t' >"$tmp/sinfo"
has "$tmp/sinfo" "h1 idle"
has "$tmp/sinfo" "h2 idle"

cd "$tmp" || exit 99
toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
toy_cfg 2 >p.cfg
sed 's/maxEpochs = 3/maxEpochs = three/' p.cfg >bad.cfg
SAVE="train.SGD.ParallelTrain.everyRankSavesModel=true"
export TRAINER="$T"
# submit NAME STATUS ENV... -- ARGS...: sbatch --wait the example script with ENV and the
# trainer's ARGS, expect exit STATUS; sets job (its id) and out (its output file)
submit() {
    name=$1 want=$2; shift 2
    envs=""
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    # shellcheck disable=SC2086 # $envs: split on purpose
    env $envs "$SC" run sbatch --wait --parsable "$S/scripts/slurm-train.sbatch" "$@" >"$name.id" 2>"$name.sb"
    st=$?
    job=$(cat "$name.id")
    out=partrain-$job.out
    [ $st -eq "$want" ] && ok || { no "$name: sbatch --wait exited $st, wanted $want"; cat "$name.sb"; tail -20 "$out"; }
    "$SC" run scontrol show job "$job" >"$name.job"
}

# mpiexec inside the allocation: its ras/plm slurm components read the nodes and start
# the remote daemons with srun; the ranks land 2 on h1, 2 on h2
submit mpi 0 CONFIG=p.cfg MPIEXEC_ARGS=--display-map -- Dir=mpi $SAVE
has mpi.job "JobState=COMPLETED"
has mpi.job "NodeList=h[1-2]"
has "$out" "partrain: job $job on h[1-2], 4 ranks"
has "$out" "Data for node: h1"
has "$out" "Data for node: h2"
has "$out" "(2 ranks on this node)"
has "$out" "myRank = 0, numNodes = 4"
has "$out" "Epoch 3: the models of all 4 ranks are identical"
crit "$out" >mpi.txt
learns mpi 0.10
identical mpi 4 3

# srun --mpi=pmix: Slurm's PMIx server in each slurmstepd wires up Open MPI directly
submit srun 0 CONFIG=p.cfg LAUNCHER=srun -- Dir=srun $SAVE
has srun.job "JobState=COMPLETED"
has "$out" "(2 ranks on this node)"
has "$out" "myRank = 0, numNodes = 4"
identical srun 4 3
cmp -s mpi/m.dnn srun/m.dnn && ok || no "srun --mpi=pmix and mpiexec give different models"

# salloc, then mpiexec in the allocation (interactive use): the same model again
"$SC" run salloc -N 2 --ntasks-per-node=2 mpiexec "$T" configFile=p.cfg Dir=salloc >salloc.out 2>salloc.err &&
    ok || { no "salloc ... mpiexec failed"; tail -20 salloc.err; }
has salloc.err "(2 ranks on this node)"
cmp -s mpi/m.dnn salloc/m.dnn && ok || no "salloc ... mpiexec and sbatch give different models"

# a bad config: the job fails, Slurm says so, the trainer's error is in the output
submit bad 1 CONFIG=bad.cfg -- Dir=bad
has bad.job "JobState=FAILED"
has bad.job "ExitCode=1:0"
has "$out" 'bad.cfg:8:25: error: train.SGD.maxEpochs: expected an integer, got "three"'
[ ! -e bad/m.dnn ] && ok || no "the failed job wrote a model"

# down stops every daemon and removes the hosts
pids=$(cat "$PT_CLUSTER_DIR"/slurm/*.pid)
[ "$(echo "$pids" | wc -w)" -eq 4 ] && ok || no "expected 4 daemons (munged, slurmctld, 2 slurmd), found: $pids"
id=$(cat "$PT_CLUSTER_DIR/id")
"$SC" down
ip link show "ptb$id" >/dev/null 2>&1 && no "bridge ptb$id is still there" || ok
for p in $pids; do
    if [ -r "/proc/$p/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$p/stat"; then
        no "daemon $p ($(cat "/proc/$p/comm" 2>/dev/null)) outlived down"
    else
        ok
    fi
done
[ ! -e "$PT_CLUSTER_DIR/slurm" ] && ok || no "down left $PT_CLUSTER_DIR/slurm"
finish slurm
