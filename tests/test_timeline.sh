#!/bin/sh
# timelineFile under real mpiexec: every rank writes its own Chrome trace (PATH, PATH.rank1),
# valid JSON (Python's json module, tests/timeline_check.py) with the expected spans for
# DataParallelSGD at 32 bits, 1 bit and buffered, BlockMomentumSGD and DataParallelASGD
# (plain and pipelined); spans within a lane never overlap, every span of an epoch lies in
# the epoch's span and they add up to at most its time, which is the log's epochTime; one
# aggregation per minibatch, one engine span set per perfStatsFile line. One worker
# without a ParallelTrain block; a run that fails mid-way still closes the array; a killed
# run leaves whole events; a timeline that cannot be written fails the run.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_timeline: mpiexec not found"; exit 99; }
command -v python3 >/dev/null || { echo "test_timeline: python3 not found (scripts/setup.sh installs it)"; exit 77; }
CK=$S/tests/timeline_check.py
cd "$tmp"
toy_with_cv 1

# summary FILE OUT [OPTIONS]: check a timeline, its span counts into OUT
summary() {
    f=$1 out=$2; shift 2
    if python3 "$CK" "$@" "$f" >"$out"; then ok; else no "$f: $(cat "$out")"; fi
}
# n OUT NAME: how many spans called NAME (0 when none)
n() { awk -v name="$2" '$1 == "count" { k = $0; sub(/^count /, "", k); sub(/ [0-9]+$/, "", k); if (k == name) c = $NF } END { print c + 0 }' "$1"; }
# want OUT NAME COUNT
want() { got=$(n "$1" "$2"); [ "$got" -eq "$3" ] && ok || no "$1: $got '$2' spans, wanted $3"; }
# lines FILE TEXT: lines of FILE holding TEXT (0 when none or no file)
lines() { grep -cF -- "$2" "$1" 2>/dev/null || true; }
# of NAME K: f, p = rank K's timeline and perfStatsFile of run NAME; the summary NAMEK.sum
of() {
    f=$1/tl.json p=$1/perf.jsonl
    [ "$2" -eq 0 ] || { f=$f.rank$2 p=$p.rank$2; }
    summary "$f" "$1$2.sum"
}

# DataParallelSGD, 32 bits, the gradient allreduce: 3 epochs of 50 minibatches, one
# allreduce each, on both ranks
run dp 2 $PT.shareModelInHost=false $PT.timelineFile=dp/tl.json $PT.perfStatsFile=dp/perf.jsonl "$cv"
[ -f dp/tl.json ] && [ -f dp/tl.json.rank1 ] && [ ! -e dp/tl.json.rank2 ] && ok || { no "dp: not one file per rank"; ls dp; }
summary dp/tl.json dp0.sum --log dp.err
summary dp/tl.json.rank1 dp1.sum
for k in 0 1; do
    for s in allreduce read update; do want dp$k.sum $s 150; done
    for s in epoch validate save "epoch start"; do want dp$k.sum "$s" 3; done
    f=$(n dp$k.sum forward) b=$(n dp$k.sum backward)
    [ "$f" -ge 100 ] && [ "$f" -le 150 ] && [ "$f" -eq "$b" ] && ok || no "dp rank $k: $f forward, $b backward spans"
done
[ "$(lines dp/perf.jsonl '"wait_s":0,')" -eq 150 ] && ok || no "dp: perfStatsFile lines lack wait_s"
grep -q '"name":"allreduce","cat":"communication","ph":"X","ts":[0-9]*\.[0-9]\{3\},"dur":[0-9]*\.[0-9]\{3\},"pid":1,"tid":3,"args":{"epoch":2,"sync":51,"mb":1,"bytes":2888}}' dp/tl.json.rank1 &&
    ok || { no "dp: the allreduce event's format"; grep -m1 allreduce dp/tl.json.rank1; }

# ... and the ranks sharing one model (the default here): no update pass (each rank's
# share of it is in its backward pass), the allreduce sums the statistics alone (0 bytes)
run team 2 $PT.timelineFile=team/tl.json "$cv"
for k in 0 1; do
    of team $k
    for s in allreduce read; do want team$k.sum $s 150; done
    want team$k.sum update 0
    want team$k.sum validate 3
done
grep -q '"name":"allreduce",.*"args":{"epoch":2,"sync":51,"mb":1,"bytes":0}}' team/tl.json &&
    ok || { no "team: the allreduce event's bytes"; grep -m1 allreduce team/tl.json; }

# 1 bit (timelineFile at the top level, found from ParallelTrain): the exchange's steps
run q1 2 $PT.DataParallelSGD.gradientBits=1 timelineFile=q1/tl.json
summary q1/tl.json q1.sum --log q1.err
summary q1/tl.json.rank1 q1r.sum
for s in quantize exchange requantize allgather unquantize wait; do want q1.sum $s 150; want q1r.sum $s 150; done
want q1.sum allreduce 0

# buffered: a start per minibatch, and a wait for each aggregate (the last at the flush)
run buf 2 $PT.DataParallelSGD.useBufferedAsyncGradientAggregation=true $PT.timelineFile=buf/tl.json
summary buf/tl.json buf.sum --log buf.err
want buf.sum "allreduce start" 150
want buf.sum wait 150

# BlockMomentumSGD: a wait (the header), an allreduce and a block update per sync
run bm 2 $PT.parallelizationMethod=BlockMomentumSGD "$PT.BlockMomentumSGD=[blockSizePerWorker=100]" \
    $PT.timelineFile=bm/tl.json $PT.perfStatsFile=bm/perf.jsonl
for k in 0 1; do
    of bm $k
    syncs=$(lines $p '"method":"BlockMomentumSGD"')
    w=$(n bm$k.sum wait) a=$(n bm$k.sum allreduce) u=$(n bm$k.sum "block update")
    [ "$syncs" -ge 20 ] && [ "$w" -eq "$syncs" ] && [ "$a" -eq "$u" ] && [ "$a" -ge 3 ] && [ "$a" -le "$w" ] &&
        ok || no "bm rank $k: $syncs syncs, $w waits, $a allreduces, $u block updates"
    want bm$k.sum read 150
done

# DataParallelASGD: count, delta, push+pull and apply per push; the epoch's final push/pull
run as 2 $PT.parallelizationMethod=DataParallelASGD "$PT.DataParallelASGD=[syncPeriodPerWorker=10]" \
    $PT.timelineFile=as/tl.json $PT.perfStatsFile=as/perf.jsonl
for k in 0 1; do
    of as $k
    pushes=$(lines $p '"final":0')
    [ "$pushes" -ge 20 ] && ok || no "as rank $k: $pushes pushes"
    for s in count push+pull apply; do want as$k.sum $s "$pushes"; done
    want as$k.sum delta $((pushes + 3)) # and the final pushes
    want as$k.sum "final push" 3
    want as$k.sum "final pull" 3
done
run asp 2 $PT.parallelizationMethod=DataParallelASGD "$PT.DataParallelASGD=[syncPeriodPerWorker=10;usePipeline=true]" \
    $PT.timelineFile=asp/tl.json $PT.perfStatsFile=asp/perf.jsonl
summary asp/tl.json asp.sum --log asp.err
pushes=$(lines asp/perf.jsonl '"final":0')
want asp.sum "push+pull start" "$pushes"
want asp.sum wait $((pushes + 6)) # and the epoch end's two, 3 times

# one worker, no ParallelTrain block: the top-level key; compute spans only
sed '/ParallelTrain = \[/d; s/DataParallelSGD = \[ gradientBits = 32 \] \] \]/]/' p.cfg >one.cfg
grep -q ParallelTrain one.cfg && no "one.cfg still has a ParallelTrain block"
expect 0 "$T" configFile=one.cfg Dir=one timelineFile=one/tl.json
cp "$tmp/err" one.err
summary one/tl.json one.sum --log one.err
for s in read forward backward; do want one.sum $s 150; done
# momentum SGD with nothing between gradient and update runs inside the backward pass: no
# update span of its own; an L2 term takes it out again
want one.sum update 0
expect 0 "$T" configFile=one.cfg Dir=onel2 timelineFile=onel2/tl.json train.SGD.L2RegWeight=1e-6
cp "$tmp/err" onel2.err
summary onel2/tl.json onel2.sum --log onel2.err
want onel2.sum update 150
[ "$(grep -c '"cat":"communication","ph":"X"' one/tl.json)" -eq 0 ] && ok || no "one worker: communication spans"
[ ! -e one/tl.json.rank1 ] && ok || no "one worker: a rank-1 file"

# a run that fails mid-way (a label of 1e30 makes the square error infinite: the run stops
# at the end of epoch 1): every rank closes its array
sed '5s/|labels .*/|labels 1e30 0/' d.ctf >inf.ctf
SE="train.SimpleNetworkBuilder.trainingCriterion=SquareError train.SimpleNetworkBuilder.evalCriterion=SquareError"
mpi -n 2 "$T" configFile=p.cfg Dir=nan train.reader.file=inf.ctf $SE \
    $PT.timelineFile=nan/tl.json >nan.out 2>nan.err
st=$?
[ $st -eq 1 ] && ok || { no "diverging run: exit $st, wanted 1"; tail -3 nan.err; }
has nan.err "the training criterion is not finite (diverged)"
for f in nan/tl.json nan/tl.json.rank1; do
    summary $f nan.sum
    want nan.sum read 50
    want nan.sum epoch 0
done

# a killed run: the events written so far (whole pieces), the array left open
sed 's/maxEpochs = 3/maxEpochs = 100000/' one.cfg >long.cfg
"$T" configFile=long.cfg Dir=kill timelineFile=kill/tl.json >/dev/null 2>&1 &
pid=$!
i=0
while ! grep -q '"name":"save"' kill/tl.json 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ -f kill/tl.json ] && [ $i -lt 600 ] && ok || no "the long run wrote no finished epoch"
if python3 "$CK" kill/tl.json >/dev/null 2>&1; then no "a killed run's timeline is a closed array"; else ok; fi
summary kill/tl.json kill.sum --open
[ "$(n kill.sum epoch)" -ge 1 ] && ok || no "killed run: no epoch span"

# a timeline that cannot be written: at start-up (exit 3), or at the epoch's end (/dev/full)
expect 3 "$T" configFile=one.cfg Dir=nope timelineFile=/proc/nope/tl.json
has "$tmp/err" "error: cannot write timelineFile '/proc/nope/tl.json'"
expect 3 "$T" configFile=one.cfg Dir=full timelineFile=/dev/full
has "$tmp/err" "error: cannot write timelineFile '/dev/full': No space left on device"
finish timeline
