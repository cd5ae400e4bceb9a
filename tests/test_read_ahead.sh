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

# Reading ahead sends minibatch k+1's inputs during step k (nn_upload_ahead; on the CPU a
# plain copy, the same path as a GPU's): the same models as without (PT_UPLOAD_AHEAD=0),
# and it happened (traceLevel=2 counts them per epoch).
for n in one seq2; do
    case $n in one) args="" np=1 ;; *) args="$seq train.SGD.ParallelTrain.distributedMBReading=true" np=2 ;; esac
    # shellcheck disable=SC2086
    PT_UPLOAD_AHEAD=0 run "$n-noup" $np 1 $args
    # shellcheck disable=SC2086
    run "$n-up" $np 1 $args traceLevel=2
    if cmp -s "m-$n-noup-1/m.dnn" "m-$n-up-1/m.dnn" && cmp -s "m-$n-up-1/m.dnn" "m-$n-0/m.dnn"; then
        ok
    else
        no "$n: the models differ with the inputs sent ahead"
    fi
    sent=$(sed -n 's/^Epoch\[1\]: \([0-9]*\) of \([0-9]*\) minibatches sent.* (\([0-9]*\) taken so).*/\1 \2 \3/p' "$n-up-1.log")
    # every minibatch but the first (which nothing comes before) and possibly a few the
    # reader's thread had not finished yet; each one sent taken by its step
    set -- $sent
    if [ $# -eq 3 ] && [ "$1" -ge 1 ] && [ "$1" -lt "$2" ] && [ "$1" = "$3" ]; then
        ok
    else
        no "$n: minibatches sent ahead and taken: '$sent'"
    fi
    grep -q 'minibatches sent' "$n-noup-1.log" && no "$n: PT_UPLOAD_AHEAD=0 sent minibatches ahead"
done
# ... and the criteria read after the steps that follow (PT_DEFER_CRITERIA, on with the
# above) give the logs' numbers bit for bit: every progress and epoch line the same but
# for the times
crit() { sed -n 's/time = [0-9.e+-]*s//; s/epochTime=[0-9.e+-]*s//; s/samplesPerSecond = [0-9.e+-]*//; /^ *\(Epoch\[.*Minibatch\|Finished Epoch\)/p' "$1"; }
for n in one seq2; do
    case $n in one) args="" np=1 ;; *) args="$seq train.SGD.ParallelTrain.distributedMBReading=true" np=2 ;; esac
    # shellcheck disable=SC2086
    PT_DEFER_CRITERIA=0 run "$n-nodefer" $np 1 $args train.SGD.numMBsToShowResult=3
    # shellcheck disable=SC2086
    run "$n-defer" $np 1 $args train.SGD.numMBsToShowResult=3 traceLevel=2
    crit "$n-nodefer-1.log" >"$n-nodefer.crit"
    crit "$n-defer-1.log" >"$n-defer.crit"
    if [ "$(grep -c 'Epoch\[' "$n-defer.crit")" -ge 6 ] && cmp -s "$n-nodefer.crit" "$n-defer.crit" &&
        cmp -s "m-$n-nodefer-1/m.dnn" "m-$n-defer-1/m.dnn"; then
        ok
    else
        no "$n: the criteria read later changed the log or the model"
        diff "$n-nodefer.crit" "$n-defer.crit" | head -5
    fi
done
# one rank reads them later; two ranks exchange them at every step (read at once)
has one-defer-1.log "the criteria read later."
has seq2-defer-1.log "the criteria read after each step."

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
