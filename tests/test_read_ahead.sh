#!/bin/sh
# Reading ahead (src/reader/prefetch.c: the reader on a second thread, on by default on a
# GPU) feeds training exactly the minibatches the plain reader does: the same models, byte
# for byte, with PT_READ_AHEAD=1 and 0, on 1 rank and on 2 ranks (distributed reading and
# not), for images and for sequences (toy data, several chunks, partial last minibatch).
# (The reader finds bad data when it opens the file, before any thread starts.)
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
toy_cfg 1 >p.cfg
# sequences of 1..5 steps (an LSTM over them), 300 of them
awk 'BEGIN { s = 99; for (q = 0; q < 300; q++) {
        s = (s * 1103515245 + 12345) % 2147483648; n = 1 + s % 5; c = q % 2
        for (t = 0; t < n; t++) {
            s = (s * 1103515245 + 12345) % 2147483648; x = s / 2147483648 + c
            printf "%d |features %.4f %.4f", q, x, 1 - x; if (t == 0) printf " |labels %d %d", 1 - c, c
            printf "\n" } } }' >s.ctf
seq="train.SimpleNetworkBuilder=[layerSizes=2:8:2;rnnType=LSTM;trainingCriterion=CrossEntropyWithSoftmax;evalCriterion=ClassificationError]"
seq="$seq train.reader.file=s.ctf train.reader.input.labels.definesMBSize=true train.SGD.minibatchSize=16"
run() { # NAME RANKS READ_AHEAD ARGS...: train into m-NAME-RA
    name=$1 ranks=$2 ra=$3
    shift 3
    PT_READ_AHEAD=$ra mpiexec --oversubscribe -n "$ranks" "$T" configFile=p.cfg Dir=m-$name-$ra "$@" \
        >"$name-$ra.log" 2>&1 || { no "$name with PT_READ_AHEAD=$ra failed"; tail -5 "$name-$ra.log"; return; }
    ok
}
same() { # NAME: the models with and without reading ahead
    if cmp -s "m-$1-0/m.dnn" "m-$1-1/m.dnn"; then ok; else no "$1: the models differ with reading ahead"; fi
    a=$(grep -c '^Finished Epoch' "$1-0.log") b=$(grep -c '^Finished Epoch' "$1-1.log")
    if [ "$a" = 3 ] && [ "$a" = "$b" ]; then ok; else no "$1: $a and $b epoch lines"; fi
}
for ra in 0 1; do
    run one 1 $ra
    run two 2 $ra
    run twodist 2 $ra train.SGD.ParallelTrain.distributedMBReading=true
    # shellcheck disable=SC2086
    run seq 1 $ra $seq
    # shellcheck disable=SC2086
    run seq2 2 $ra $seq train.SGD.ParallelTrain.distributedMBReading=true
done
for n in one two twodist seq seq2; do same $n; done

# Filling a minibatch on several threads (src/reader/fill_pool.c) gives the same models as
# one thread: minibatches large enough to split (parts of at least 32 samples), with the
# reader's thread and without, sequences, and a randomization window of one chunk (a
# minibatch's chunks are not all resident: the fill goes back to one thread).
thr() { # NAME THREADS ARGS...: train into t-NAME-THREADS
    name=$1 n=$2
    shift 2
    PT_READ_THREADS=$n mpiexec --oversubscribe -n 1 "$T" configFile=p.cfg Dir=t-$name-$n \
        train.SGD.minibatchSize=200 "$@" >"t-$name-$n.log" 2>&1 ||
        { no "$name with PT_READ_THREADS=$n failed"; tail -5 "t-$name-$n.log"; return; }
    ok
}
for n in 1 3; do
    PT_READ_AHEAD=0 thr plain $n
    PT_READ_AHEAD=1 thr ahead $n
    PT_READ_AHEAD=0 thr window $n train.reader.randomizationWindow=1
    # shellcheck disable=SC2086
    PT_READ_AHEAD=1 thr seq $n $seq train.SGD.minibatchSize=150
done
for name in plain ahead window seq; do
    if cmp -s "t-$name-1/m.dnn" "t-$name-3/m.dnn"; then ok; else no "$name: the models differ with 3 fill threads"; fi
done
if cmp -s "t-plain-1/m.dnn" "t-ahead-3/m.dnn"; then ok; else no "reading ahead on 3 fill threads changed the model"; fi
PT_READ_THREADS=1 mpiexec -n 1 "$T" configFile=p.cfg Dir=t-log traceLevel=1 >t-log.log 2>&1
has t-log.log "minibatches read by 1 thread"
has t-plain-3.log "minibatches read by 3 threads"
PT_READ_THREADS=9 mpiexec -n 1 "$T" configFile=p.cfg Dir=t-bad >t-bad.log 2>&1 &&
    no "PT_READ_THREADS=9 was accepted"
has t-bad.log "PT_READ_THREADS: expected a number of threads from 1 to 8, got '9'"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
