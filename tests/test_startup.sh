#!/bin/sh
# Failures on some ranks only, and ranks that disagree, end every rank promptly with the
# failing rank's reason (issue 19): a data file missing or unreadable on rank 1, different
# networks, a resume from another shape or from nothing, different minibatch sizes and
# parallel methods, a GPU missing on rank 1; an uncreatable model directory (exit 3) before the first epoch; a
# killed rank. Two ranks, MPMD (each rank its own arguments).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
cd "$tmp" || exit 1
toy_ctf 'x > y' >d.ctf
toy_cfg 0 >p.cfg
mkdir dir.ctf                                             # a directory where a file should be
printf '|features 0.1 zz |labels 1 0\n' >bad.ctf          # malformed

# each rank records its own exit status in st.RANK (mpiexec reports only one)
cat >wrap.sh <<EOF
#!/bin/sh
"$T" "\$@"
s=\$?
echo \$s >"$tmp/st.\${OMPI_COMM_WORLD_RANK:-0}"
exit \$s
EOF
chmod +x wrap.sh

# two NAME STATUS TEXT ARGS0 -- ARGS1: train p.cfg on 2 ranks, rank 0 with ARGS0, rank 1
# with ARGS1 (no spaces inside an argument); every rank must exit STATUS within 60 s and
# the output must hold TEXT exactly once. mpiexec is told not to kill the other ranks when
# one exits non-zero (it would hide whether they end by themselves); plain() checks the
# status mpiexec itself gives.
two() {
    name=$1 want=$2 text=$3
    shift 3
    a0=""
    while [ "$1" != "--" ]; do a0="$a0 $1"; shift; done
    shift
    rm -f st.0 st.1
    start=$(date +%s)
    # shellcheck disable=SC2086
    timeout 60 "$MPIEXEC" --allow-run-as-root --oversubscribe --mca orte_abort_on_non_zero_status 0 \
        -n 1 ./wrap.sh configFile=p.cfg $a0 : -n 1 ./wrap.sh configFile=p.cfg "$@" >"$name.out" 2>&1
    got=$?
    [ "$got" -eq 0 ] && [ -f st.0 ] && got=$(cat st.0)
    secs=$(($(date +%s) - start))
    [ "$got" -ne 124 ] && ok || no "$name: hangs (killed after 60 s)"
    [ "$got" = "$want" ] && ok || no "$name: the job exited $got, wanted $want"
    for k in 0 1; do
        s=$(cat "st.$k" 2>/dev/null || echo none)
        [ "$s" = "$want" ] && ok || no "$name: rank $k exited $s, wanted $want"
    done
    c=$(count "$name.out" "$text")
    [ "$c" -eq 1 ] && ok || { no "$name: '$text' printed $c times"; sed 's/^/  | /' "$name.out" | head -20; }
    echo "# $name: $secs s"
}

# plain STATUS DIR ARGS1...: mpiexec's own status, both ranks with Dir=DIR, rank 1 also
# ARGS1; the output holds the TEXT of the two() call before
plain() {
    want=$1 d=$2
    shift 2
    timeout 60 "$MPIEXEC" --allow-run-as-root --oversubscribe -n 1 "$T" configFile=p.cfg Dir="$d" \
        : -n 1 "$T" configFile=p.cfg Dir="$d" "$@" >plain.out 2>&1
    got=$?
    [ "$got" -eq "$want" ] && ok || { no "mpiexec exited $got, wanted $want: $d $*"; tail -5 plain.out; }
    has plain.out "$text"
}

# (a) a data file missing on rank 1 only
two missing 1 "rank 1: <command line>:arg3: error: cannot read data file 'nope.ctf': No such file or directory" \
    Dir=a -- Dir=a train.reader.file=nope.ctf
plain 1 p train.reader.file=nope.ctf
# (b) unreadable on rank 1: a directory in place of the file; a malformed file
two unreadable 1 "rank 1: <command line>:arg3: error: cannot read data file 'dir.ctf': Is a directory" \
    Dir=b -- Dir=b train.reader.file=dir.ctf
two malformed 1 "rank 1: bad.ctf:1:15: error: input 'features': expected a number, got \"zz\"" \
    Dir=b -- Dir=b train.reader.file=bad.ctf
# a GPU rank 1 cannot have (the reason depends on the build and machine: no CUDA, no
# driver, no device 7; the start of the line does not)
two nogpu 1 "rank 1: <command line>:arg3: error: deviceId=7: " Dir=g -- Dir=g deviceId=7
# a data file of another length on rank 1 (a lagging shared file system; before: a hang)
head -n 1000 d.ctf >short.ctf
two short 1 "error: rank 1: reader data 1000 sequences (1000 samples) differs from rank 0's 2000 sequences (2000 samples)" \
    Dir=s -- Dir=s train.reader.file=short.ctf
# (c) different layerSizes (before: a broadcast of arenas of different sizes)
two layers 1 "error: rank 1: layerSizes 2:16:2 (parameters 82) differs from rank 0's 2:24:24:2 (parameters 722)" \
    Dir=c -- Dir=c train.SimpleNetworkBuilder.layerSizes=2:16:2
# (d) makeMode resume: rank 1's modelPath holds a model of another shape, or nothing
"$T" configFile=p.cfg Dir=r0 train.SGD.maxEpochs=2 >/dev/null 2>&1 && ok || no "r0 did not train"
"$T" configFile=p.cfg Dir=r1 train.SGD.maxEpochs=2 train.SimpleNetworkBuilder.layerSizes=2:16:2 \
    >/dev/null 2>&1 && ok || no "r1 did not train"
# (the resume check of the model's network against the config names it first)
two resume-shape 1 "rank 1: p.cfg:6:43: error: the configured network 2:24:24:2 (SIMPLENET; layerTypes Tanh:Tanh) is not the one makeMode would resume from 'r1/m.dnn.2'" \
    Dir=r0 makeMode=true -- Dir=r1 makeMode=true
two resume-missing 1 "error: rank 1: makeMode's resumed epoch 0 (no model found) differs from rank 0's 2" \
    Dir=r0 makeMode=true -- Dir=none makeMode=true
# (e) different minibatchSize (before: a hang)
two minibatch 1 "error: rank 1: minibatchSize 20 differs from rank 0's 40" \
    Dir=e -- Dir=e train.SGD.minibatchSize=20
# (f) different parallelizationMethod, or only its gradientBits (before: a hang)
two method 1 "error: rank 1: parallelizationMethod ModelAveragingSGD differs from rank 0's DataParallelSGD" \
    Dir=f -- Dir=f train.SGD.ParallelTrain.parallelizationMethod=ModelAveragingSGD
two bits 1 "error: rank 1: parallelizationMethod DataParallelSGD differs from rank 0's in its details" \
    Dir=f -- Dir=f train.SGD.ParallelTrain.DataParallelSGD.gradientBits=1
# action=test: rank 1 evaluates another model
cat >>p.cfg <<'CFG'
t = [ action = test ; modelPath = $Model$ ; minibatchSize = 100
    reader = [ readerType = CNTKTextFormatReader ; file = d.ctf
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
two test-model 1 "error: rank 1: layerSizes 2:16:2 (parameters 82) differs from rank 0's 2:24:24:2 (parameters 722)" \
    command=t Model=r0/m.dnn -- command=t Model=r1/m.dnn
two test-missing 1 "rank 1: none/m.dnn: error: cannot open model file: No such file or directory" \
    command=t Model=r0/m.dnn -- command=t Model=none/m.dnn

# an uncreatable model directory is a system failure (3), found before any epoch
touch afile
two modeldir 3 "rank 0: error: 'afile' exists and is not a directory; while creating the directory of modelPath=afile/sub/m.dnn" \
    Dir=afile/sub -- Dir=afile/sub
hasnt modeldir.out "Finished Epoch"
plain 3 afile/sub
expect 3 "$T" configFile=p.cfg Dir=/proc/partrain-nope
has "$tmp/err" "error: cannot create directory '/proc/partrain-nope'"
hasnt "$tmp/err" "Finished Epoch"

# the same ranks and files train normally
two same 0 "Finished Epoch[ 3 of 3]" Dir=ok -- Dir=ok

# a rank killed mid-training ends the job: rank 1 gets a unique argument so that its pid
# (and only its) can be found
timeout 60 "$MPIEXEC" --allow-run-as-root --oversubscribe -n 1 "$T" configFile=p.cfg Dir=k \
    train.SGD.maxEpochs=1000000 : -n 1 "$T" configFile=p.cfg Dir=k train.SGD.maxEpochs=1000000 \
    killme="$tmp" >kill.out 2>&1 &
job=$!
pid=""
for i in $(seq 1 100); do
    pid=$(ps -eo pid=,args= | awk -v t="$T" -v a="killme=$tmp" '$2 == t && index($0, a) { print $1 }')
    [ -n "$pid" ] && [ -f k/m.dnn.1 ] && break
    sleep 0.2
done
if [ -n "$pid" ]; then
    start=$(date +%s%N)
    kill -9 "$pid"
    wait "$job"
    got=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    [ "$got" -ne 0 ] && [ "$got" -ne 124 ] && ok || no "killed rank: job exited $got"
    [ "$ms" -lt 10000 ] && ok || no "killed rank: the job took $ms ms to end"
    echo "# killed rank: the job ended $ms ms after the kill"
else
    no "killed rank: rank 1 not found"
    kill "$job" 2>/dev/null
fi

finish test_startup
