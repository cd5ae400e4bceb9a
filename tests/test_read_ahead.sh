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
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
