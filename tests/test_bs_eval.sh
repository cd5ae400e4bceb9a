#!/bin/sh
# BrainScript's evaluation nodes and includes, as CNTK's image configs use them:
# ClassificationError's topN (top-1, top-3 and top-10 errors of one training), several
# evaluationNodes (or nodes tagged 'evaluation') in every log line on 2 ranks, in
# [Validate] and Final Results, evalNodeNames, and include "FILE" (nested, an error inside
# naming the file, a model that needs no macro file once written).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_eval: mpiexec not found"; exit 99; }
cd "$tmp"
# the Layers classifier of test_bs_net.sh on the toy data
layers_cfg # d.ctf and layers.cfg (testlib.sh)

# ---- ClassificationError's topN: 10 classes that the features do not predict; the same
# training (the evaluation node changes nothing in it) reports the top-1 error, a smaller
# top-3 error and a top-10 error of 0; an axis other than all of the values is refused
awk 'BEGIN { s = 99; for (i = 0; i < 400; i++) { s = (s * 1103515245 + 12345) % 2147483648;
    printf "|features %.4f %.4f |labels", s / 2147483648, (i % 7) / 7; c = int(s / 2147483648 * 10);
    for (j = 0; j < 10; j++) printf " %d", j == c; printf "\n" } }' >top.ctf
sed -e 's/labelDim = 2/labelDim = 10/' -e 's/d\.ctf/top.ctf/' -e 's/dim = 2 ; format = dense ] ]/dim = 10 ; format = dense ] ]/' \
    -e 's/errs = ClassificationError (labels, z)/errs = ClassificationError (labels, z, topN = @N@)/' \
    -e 's/maxEpochs = 8/maxEpochs = 1/' layers.cfg >top.cfg
for n in 1 3 10; do
    sed "s/@N@/$n/" top.cfg >top$n.cfg
    "$T" configFile=top$n.cfg Dir=T$n >top$n.out 2>top$n.err || no "topN = $n failed"
    sed -n 's/^Finished Epoch.*ce = \([0-9.]*\) .*errs = \([0-9.]*\)% .*/\1 \2/p' top$n.err >>top.txt
done
awk 'NR == 1 { ce = $1; e1 = $2 } NR == 2 { e3 = $2 } NR == 3 { e10 = $2 }
    NR > 1 && $1 != ce { bad = 1 }
    END { exit !(NR == 3 && !bad && e1 > 60 && e3 < e1 - 20 && e3 > 0 && e10 == 0) }' top.txt &&
    ok || { no "top-1, top-3 and top-10 errors"; cat top.txt; }
sed "s/@N@/1, axis = 2/" top.cfg >topx.cfg
expect 1 "$T" configFile=topx.cfg Dir=X
has "$tmp/err" "topx.cfg:17:16: error: ClassificationError: axis=2 is not supported: only over all of a sample's values (axis=0, the default, or axis=1 of a vector)"
sed "s/@N@/0/" top.cfg >topx.cfg
expect 1 "$T" configFile=topx.cfg Dir=X
has "$tmp/err" "error: ClassificationError: topN must be a whole number >= 1, got 0"
sed "s/@N@/5, axis = 1/" top.cfg >topx.cfg
expect 1 "$T" configFile=topx.cfg Dir=X
has "$tmp/err" "error: ClassificationError: topN=5 along a specific axis is not supported (CNTK refuses it too)"

# ---- several evaluationNodes, as CNTK's ResNet configs list (errs : top5Errs): each
# reported in every line (a node of the network's own, ReduceSum, summed over the samples;
# the criterion and a repeated node once), with the numbers each gives alone: the top-1
# and top-3 errors above; on 2 ranks (summed over them), in [Validate] and Final Results
sed -e 's/errs = ClassificationError (labels, z, topN = @N@)/errs = ClassificationError (labels, z) ; top3Errs = ClassificationError (labels, z, topN = 3) ; zsum = ReduceSum (z)/' \
    -e 's/evaluationNodes = (errs)/evaluationNodes = (errs : top3Errs : zsum : ce : errs)/' top.cfg >multi.cfg
cat >>multi.cfg <<'CFG'
test = [ action = test ; modelPath = $Dir$/m.dnn
    reader = [ readerType = CNTKTextFormatReader ; file = top.ctf
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 10 ; format = dense ] ] ] ]
CFG
mpi -n 2 "$T" configFile=multi.cfg Dir=M command=train:test traceLevel=1 numMBsToShowResult=5 \
    'train.cvReader=[readerType=CNTKTextFormatReader; file=top.ctf; input=[features=[dim=2; format=dense]; labels=[dim=10; format=dense]]]' \
    'train.SGD.ParallelTrain=[parallelizationMethod=DataParallelSGD]' >multi.out 2>multi.err &&
    ok || { no "several evaluation nodes on 2 ranks"; tail -5 multi.err; }
has multi.err "Evaluation criteria:"
has multi.err "	top3Errs = ClassificationError"
e1=$(awk 'NR == 1 { print $2 }' top.txt) e3=$(awk 'NR == 2 { print $2 }' top.txt)
has multi.err "errs = $e1% * 400; top3Errs = $e3% * 400; zsum = "
grep '^Finished Epoch.*\[Validate\] ce = [0-9.]* \* 400; errs = [0-9.]*% \* 400; top3Errs = [0-9.]*% \* 400; zsum = [-0-9.e]* \* 400$' multi.err >/dev/null &&
    ok || { no "the [Validate] line"; grep Validate multi.err; }
grep '^Final Results: Minibatch\[1-1\]: errs = [0-9.]*% \* 400; ce = [0-9.]* \* 400; perplexity = [0-9.]*; top3Errs = [0-9.]*% \* 400; zsum = [-0-9.e]* \* 400$' multi.err >/dev/null &&
    ok || { no "the Final Results line"; grep Final multi.err; }
[ "$(grep -c '^ Epoch.*errs = .*top3Errs = .*zsum = ' multi.err)" -ge 1 ] && ok || no "progress lines"
# evalNodeNames (CNTK's eval action): those criteria, in its order; another name is refused
expect 0 "$T" configFile=multi.cfg Dir=M command=test test.evalNodeNames=top3Errs:errs
grep -q '^Final Results: Minibatch\[1-1\]: top3Errs = [0-9.]*% \* 400; errs = [0-9.]*% \* 400$' "$tmp/err" &&
    ok || { no "evalNodeNames=top3Errs:errs"; grep Final "$tmp/err"; }
expect 1 "$T" configFile=multi.cfg Dir=M command=test test.evalNodeNames=errs:nope
has "$tmp/err" "error: evalNodeNames: 'nope' is not a criterion of the model 'M/m.dnn' (partrain reports its training criterion and evaluation nodes: errs, ce, top3Errs, zsum)"
# the same groups from the nodes' tags (CNTK's older configs), in the order made
sed -e 's/errs = ClassificationError (labels, z) ;/errs = ClassificationError (labels, z, tag = "evaluation") ;/' \
    -e 's/top3Errs = ClassificationError (labels, z, topN = 3)/top3Errs = ClassificationError (labels, z, topN = 3, tag = "evaluation")/' \
    -e 's/ce   = CrossEntropyWithSoftmax (labels, z)/ce = CrossEntropyWithSoftmax (labels, z, tag = "criterion")/' \
    -e 's/criterionNodes = (ce) ; evaluationNodes = (errs : top3Errs : zsum : ce : errs) ;//' multi.cfg >tags.cfg
expect 0 "$T" configFile=tags.cfg Dir=G
has "$tmp/err" "errs = $e1% * 400; top3Errs = $e3% * 400; totalSamplesSeen"
sed 's/evaluationNodes = (errs : top3Errs : zsum : ce : errs)/evaluationNodes = (errs : top3Errs : zsum : errs : top3Errs : zsum : errs : zsum)/' multi.cfg >multix.cfg
expect 1 "$T" configFile=multix.cfg Dir=X
has "$tmp/err" "error: evaluationNodes: 8 nodes; at most 7 are supported"

# ---- include "FILE" (CNTK's ResNet and Inception configs pull their macros in so): the
# file's text in place, an include inside it found beside it; the model file keeps the
# text (action=test reads no macro file); an error inside names the included file
mkdir -p inc/lib
cat >inc/lib/macros.bs <<'BS'
# the layers
Hidden {n} = DenseLayer {n, activation = ReLU}
include "out.bs"
BS
echo 'Out {n} = LinearLayer {n}' >inc/lib/out.bs
sed -e 's|model = Sequential (|include "lib/macros.bs"\n        model = Sequential (|' \
    -e 's|DenseLayer {hid, activation = ReLU} :|Hidden {hid} :|' -e 's|LinearLayer {labelDim}|Out {labelDim}|' \
    -e 's|file = d.ctf|file = ../d.ctf|' layers.cfg >inc/net.cfg
cat >>inc/net.cfg <<'CFG'
test = [ action = test ; modelPath = $Dir$/m.dnn
    reader = [ readerType = CNTKTextFormatReader ; file = ../d.ctf
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
(cd inc && "$T" configFile=net.cfg Dir=I command=train >../inc.out 2>../inc.err) && ok || { no "include"; tail -3 inc.err; }
has inc.err "Training 354 parameters in 6 parameter tensors."
mv inc/lib inc/gone
(cd inc && "$T" configFile=net.cfg Dir=I command=test >../inc.out 2>../inc.err) && ok || { no "the model without its macro files"; tail -3 inc.err; }
has inc.err "Final Results: Minibatch[1-1]: errs = "
(cd inc && "$T" configFile=net.cfg Dir=J command=train >../inc.out 2>../inc.err); [ $? -eq 1 ] && ok || no "a missing include: exit 1"
has inc.err 'net.cfg:8:9: error: include "lib/macros.bs": no such file (looked for it as written and in .)'
mv inc/gone inc/lib
echo 'Out {n} = LinearLayer {n, bias = maybe}' >inc/lib/out.bs
(cd inc && "$T" configFile=net.cfg Dir=J command=train >../inc.out 2>../inc.err); [ $? -eq 1 ] && ok || no "an error in an include: exit 1"
has inc.err "lib/out.bs:1:34: error: unknown name 'maybe'"

finish bs_eval
