#!/bin/sh
# CNTK's configs as they are (issue 18, second half): one config that trains on 2 ranks
# with 1-bit SGD (DataParallelSGD gradientBits=1), gradUpdateType=fsAdaGrad with gradient
# clipping and SGD.AutoAdjust (adjustAfterEpoch on the cvReader's criterion), then writes
# the outputs of the trained network (action=write). A run stopped after 2 epochs and
# resumed (makeMode) ends with the same lines, rates, model and outputs as the
# uninterrupted one; a run killed mid-epoch resumes to the same model; AutoAdjust's
# loadBestModel rolls back on every rank; the errors say what is refused.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
. "${top_srcdir:-.}/tests/simple2d.sh"
command -v mpiexec >/dev/null || { echo "no mpiexec"; exit 77; }
cd "$tmp"
simple2d_ctf 2000 7 >train.txt
simple2d_ctf 400 11 >cv.txt
simple2d_ctf 300 13 >test.txt
cat >c.cfg <<'CFG'
command = train:out
makeMode = true
traceLevel = 1
numMBsToShowResult = 1000
modelPath = $Dir$/model.dnn
input2d = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ]
train = [
    action = train
    SimpleNetworkBuilder = [ layerSizes = 2:50*2:2 ; layerTypes = Sigmoid
        trainingCriterion = CrossEntropyWithSoftmax ; evalCriterion = ClassificationError
        applyMeanVarNorm = true ; needPrior = true ]
    SGD = [ maxEpochs = 5 ; minibatchSize = 50 ; learningRatesPerSample = 0.01
        momentumPerMB = 0.9 ; gradUpdateType = fsAdaGrad ; varianceTimeConstant = 2000
        clippingThresholdPerSample = 0.2 ; gradientClippingWithTruncation = true
        AutoAdjust = [ autoAdjustLR = adjustAfterEpoch ; reduceLearnRateIfImproveLessThan = 0.5
            learnRateDecreaseFactor = 0.5 ; loadBestModel = true ]
        ParallelTrain = [ parallelizationMethod = DataParallelSGD
            DataParallelSGD = [ gradientBits = 1 ] ] ]
    reader = [ readerType = CNTKTextFormatReader ; file = train.txt ; input = $input2d$ ]
    cvReader = [ readerType = CNTKTextFormatReader ; file = cv.txt ; input = $input2d$ ]
]
out = [
    action = write
    reader = [ readerType = CNTKTextFormatReader ; file = test.txt ; input = $input2d$ ]
    outputPath = $Dir$/out/Output
    outputNodeNames = HLast:PosteriorProb:ScaledLogLikelihood
]
CFG
# lines that must be equal between runs: the epochs' criteria and rates, AutoAdjust's lines
lines() { grep -E '^(Finished Epoch|learnRatePerSample|Loading \(rolling)' "$1" | sed 's/; epochTime=.*//; s/ of [0-9]*\]/]/'; }

# 1. uninterrupted, 2 ranks
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=full
cp "$tmp/err" full.log
has full.log "Starting minibatch loop, DataParallelSGD training (myRank = 0, numNodes = 2, numGradientBits = 1)"
has full.log "learnRatePerSample reduced to"
[ "$(count full.log 'Finished Epoch[ 5 of 5]: [Training]')" -eq 1 ] && ok || no "epoch 5 not finished once"
# the rate after a reduction is the one the next epoch uses
r=$(sed -n 's/^learnRatePerSample reduced to \(.*\)/\1/p' full.log | head -1)
n=$(awk '/^learnRatePerSample reduced/ { getline; while ($0 !~ /^Finished Epoch.*Training/) getline; print; exit }' full.log | sed -n 's/.*learningRatePerSample = \([0-9.e-]*\).*/\1/p')
[ -n "$r" ] && awk -v a="$r" -v b="$n" 'BEGIN { exit !(a - b < 1e-6 * a && b - a < 1e-6 * a) }' && ok ||
    no "reduced rate $r is not the next epoch's ($n)"
for node in HLast PosteriorProb ScaledLogLikelihood; do
    [ "$(wc -l <full/out/Output.$node)" -eq 300 ] && ok || no "full/out/Output.$node has not 300 lines"
done
ls full/out | grep -q rank && no "a rank other than 0 wrote outputs" || ok
has full.log "Written to full/out/Output*"
has full.log "Total Samples Evaluated = 300"
# the default layout: two values "%f" per line; PosteriorProb rows sum to 1
grep -qvE '^-?[0-9]+\.[0-9]{6} -?[0-9]+\.[0-9]{6}$' full/out/Output.HLast && no "HLast lines are not '%f %f'" || ok
awk '{ s = $1 + $2; if (s < 0.9999 || s > 1.0001) bad = 1 } END { exit bad }' full/out/Output.PosteriorProb && ok ||
    no "PosteriorProb rows do not sum to 1"
# ScaledLogLikelihood = HLast - log(prior): the same difference on every line
paste full/out/Output.HLast full/out/Output.ScaledLogLikelihood | awk 'NR == 1 { d = $1 - $3 }
    { e = $1 - $3 - d; if (e < -2e-6 || e > 2e-6) bad = 1 } END { exit bad }' && ok || no "ScaledLogLikelihood is not HLast - log(prior)"
# the outputs classify the test data (the network learned)
err=$(paste full/out/Output.PosteriorProb test.txt | awk '{ p = ($2 > $1); l = $5; if (p != l) e++ } END { print e / NR }')
awk -v e="$err" 'BEGIN { exit !(e < 0.2) }' && ok || no "test error from the written outputs $err"

# the whole config again (CNTK's makeMode): nothing to train, the outputs written again
for node in HLast PosteriorProb ScaledLogLikelihood; do cp full/out/Output.$node first.$node; done
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=full
has "$tmp/err" "No further training is necessary"
has "$tmp/err" "Total Samples Evaluated = 300"
for node in HLast PosteriorProb ScaledLogLikelihood; do
    cmp -s first.$node full/out/Output.$node && ok || no "Output.$node written again differs"
done

# 2. stopped after 2 epochs, resumed: the same lines, model and outputs
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=stop command=train train.SGD.maxEpochs=2
cp "$tmp/err" part1.log
[ -f stop/model.dnn.2.ckp ] && ok || no "no checkpoint after epoch 2"
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=stop
cp "$tmp/err" part2.log
has part2.log "Starting from checkpoint. Loading network from 'stop/model.dnn.2'."
cat part1.log part2.log >both.log
lines full.log >want
lines both.log >got
if [ -s want ] && cmp -s want got; then ok; else no "the resumed run differs from the uninterrupted one"; diff want got; fi
cmp -s full/model.dnn stop/model.dnn && ok || no "resumed final model differs"
for node in HLast PosteriorProb ScaledLogLikelihood; do
    cmp -s full/out/Output.$node stop/out/Output.$node && ok || no "resumed Output.$node differs"
done

# 3. killed mid-training (kill -9 of the job): resumes from the newest checkpoint and ends
# with the model of an uninterrupted run (a wider network, so that an epoch takes a while)
slow="command=train train.SGD.maxEpochs=5 train.SGD.minibatchSize=10 train.SimpleNetworkBuilder.layerSizes=2:300*2:2"
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=slowref $slow
"${MPIEXEC:-mpiexec}" --allow-run-as-root --oversubscribe -n 2 "$T" configFile=c.cfg Dir=kill $slow >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -f kill/model.dnn.3 ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
# SIGKILL to the ranks (mpiexec's children): mpiexec ends the job
for c in $(pgrep -P $pid); do kill -9 "$c" 2>/dev/null; done
wait $pid 2>/dev/null
[ -f kill/model.dnn.3 ] && ok || no "the killed run made no epoch-3 model"
if [ -f kill/model.dnn ]; then
    echo "# the run finished before it could be killed: resume check skipped"
else
    expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=kill $slow
    has "$tmp/err" "Starting from checkpoint"
    hasnt "$tmp/err" "without its checkpoint"
    cmp -s slowref/model.dnn kill/model.dnn && ok || no "the model resumed after kill -9 differs"
fi

# 4. loadBestModel: a rate raised far too high makes the criterion worse; every rank goes
# back to the previous model and its checkpoint, with a reduced rate, and training goes on
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=rb command=train train.SGD.maxEpochs=5 \
    'train.SGD.AutoAdjust=[reduceLearnRateIfImproveLessThan=0; increaseLearnRateIfImproveMoreThan=0.01; learnRateIncreaseFactor=300]'
cp "$tmp/err" rb.log
has rb.log "learnRatePerSample increased to"
has rb.log "Loading (rolling back to) previous model with best training-criterion value: rb/model.dnn."
has rb.log "SGD: revoke back to and update checkpoint file for epoch"
[ -f rb/model.dnn ] && ok || no "the rolled-back run made no final model"

# continueReduce: after the first reduction the rate falls at every epoch; the next
# epoch that improves too little ends training with the final model
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=cr command=train train.SGD.maxEpochs=40 \
    'train.SGD.AutoAdjust=[continueReduce=true; reduceLearnRateIfImproveLessThan=0.2; loadBestModel=false]'
cp "$tmp/err" cr.log
has cr.log "Finished training and saved final model"
[ -f cr/model.dnn ] && ok || no "continueReduce: no final model"
hasnt cr.log "Finished Epoch[40 of 40]"
nr=$(count cr.log "learnRatePerSample reduced to")
[ "$nr" -ge 1 ] && ok || no "continueReduce: no reduction"

# ranks configured differently (MPMD): AutoAdjust's collective decisions need the same
# settings everywhere, checked at start-up
expect 1 mpi -n 1 "$T" configFile=c.cfg Dir=md command=train : -n 1 "$T" configFile=c.cfg Dir=md \
    command=train 'train.SGD.AutoAdjust=[learnRateDecreaseFactor=0.5]' 'train.SGD.AutoAdjust=[learnRateDecreaseFactor=0.7]'
has "$tmp/err" "error: rank 1: AutoAdjust adjustAfterEpoch differs from rank 0's in its details (its settings)"

# 5. RmsProp trains (one rank); refused settings say why
expect 0 "$T" configFile=c.cfg Dir=rms command=train train.SGD.maxEpochs=3 train.SGD.gradUpdateType=rmsProp \
    train.SGD.learningRatesPerSample=0.05 'train.SGD.AutoAdjust=[autoAdjustLR=none]'
e2=$(sed -n 's/^Finished Epoch\[ 3 of 3\]: \[Training\].*EvalClassificationError = \([0-9.]*\) .*/\1/p' "$tmp/err")
awk -v e="$e2" 'BEGIN { exit !(e != "" && e < 0.3) }' && ok || no "rmsProp did not learn (error $e2)"
expect 1 "$T" configFile=c.cfg Dir=x 'train.SGD.AutoAdjust=[autoAdjustMinibatch=true;minibatchSizeTuningFrequency=0]'
has "$tmp/err" "minibatchSizeTuningFrequency: 0 is out of range: must be >= 1"
expect 1 "$T" configFile=c.cfg Dir=x 'train.SGD.AutoAdjust=[autoAdjustLR=searchBeforeEpoch;numPrevLearnRates=0]'
has "$tmp/err" "numPrevLearnRates: 0 is out of range: must be >= 1"
# the searches' own keys, which CNTK reads only when it searches, are inert without one
# (CNTK's ParallelBMWithAdjustLR test and G2P set them beside adjustAfterEpoch)
expect 0 "$T" configFile=c.cfg Dir=inert command=train train.SGD.maxEpochs=1 \
    'train.SGD.AutoAdjust=[autoAdjustLR=adjustAfterEpoch; numMiniBatch4LRSearch=500; numPrevLearnRates=5; numBestSearchEpoch=1]'
cp test.txt x.HLast
expect 1 "$T" configFile=c.cfg Dir=full command=out out.outputPath=x out.reader.file=x.HLast
has "$tmp/err" "is an input"
expect 1 "$T" configFile=c.cfg Dir=full command=out out.format.precisionFormat=%d
has "$tmp/err" "precisionFormat: expected a printf width and precision"
# a network builder in a write or test block makes the network evaluated (BS.Network.Load
# and additions: tests/test_bs_load.sh); a model file that is missing, or holds no
# BrainScript network, is an error naming it and the call
expect 1 "$T" configFile=c.cfg Dir=full command=out 'out.BrainScriptNetworkBuilder=[m = BS.Network.Load ("x") ; h = Hardmax (m.z)]'
has "$tmp/err" 'x: error: cannot open model file: No such file or directory; in BS.Network.Load ("x") at <command line>'
expect 1 "$T" configFile=c.cfg Dir=full command=out out.action=test 'out.ExperimentalNetworkBuilder=[m = BS.Network.Load ("full/model.dnn") ; h = Hardmax (m.HLast)]'
has "$tmp/err" "full/model.dnn: error: the model holds a SimpleNetworkBuilder network, whose nodes BrainScript cannot name"
# format options: CNTK's names, escapes and %s
expect 0 "$T" configFile=c.cfg Dir=full command=out out.outputPath=fmt/O out.outputNodeNames=PosteriorProb \
    'out.format=[type=category; prologue="[%s]\n"; epilogue=END; sequencePrologue=<; sequenceEpilogue=">\n"]'
[ "$(head -1 fmt/O.PosteriorProb)" = "[PosteriorProb]" ] && ok || no "prologue: $(head -1 fmt/O.PosteriorProb)"
[ "$(sed -n 2p fmt/O.PosteriorProb)" = "<$(paste full/out/Output.PosteriorProb /dev/null | awk 'NR == 1 { print ($2 > $1) }')>" ] && ok ||
    no "category line: $(sed -n 2p fmt/O.PosteriorProb)"
[ "$(tail -c 3 fmt/O.PosteriorProb)" = "END" ] && ok || no "epilogue"

# CNTK's Simple2d output (Tests/EndToEndTests/Simple2d/OneHidden.cntk): the predicted class
# and the true one (the labels input) side by side, as labels from labelMappingFile; the
# lines that differ are the test errors, as that config's comment counts them
printf 'lower\nupper\n' >map.txt
expect 0 "$T" configFile=c.cfg Dir=full command=out out.outputPath=cat/O 'out.outputNodeNames=PosteriorProb:labels' \
    'out.format=[type=category; labelMappingFile=map.txt; sequenceEpilogue="\t// %s\n"]'
awk '{ print ($3 > $2) ? "upper" : "lower" }' test.txt >want.txt
cut -f1 cat/O.labels | cmp -s - want.txt && ok || no "the labels written are not test.txt's classes"
grep -qx "lower	// labels" cat/O.labels && grep -qx "upper	// PosteriorProb" cat/O.PosteriorProb && ok ||
    no "sequenceEpilogue: $(head -1 cat/O.labels)"
[ "$(wc -l <cat/O.PosteriorProb)" -eq 300 ] && ok || no "not 300 lines in cat/O.PosteriorProb"
expect 0 "$T" configFile=c.cfg Dir=full command=test 'test=[action=test; reader=[readerType=CNTKTextFormatReader; file=test.txt; input=$input2d$]]'
errs=$(simple2d_err "$tmp/err")
paste cat/O.PosteriorProb cat/O.labels | awk -v e="$errs" '$1 != $4 { bad++ } END { exit !(bad / NR - e < 1e-6 && e - bad / NR < 1e-6) }' &&
    ok || no "the written classes do not give the test error $errs"
# minibatchSize as an array (CNTK's test and write actions read it so and take the first
# value: TIMIT's TrainSimpleTimit.cntk tests with 256:1024): the same error, each element
# checked
expect 0 "$T" configFile=c.cfg Dir=full command=test 'test=[action=test; minibatchSize=7*2:1024; reader=[readerType=CNTKTextFormatReader; file=test.txt; input=$input2d$]]'
[ "$(simple2d_err "$tmp/err")" = "$errs" ] && ok || no "test with minibatchSize=7*2:1024: $(simple2d_err "$tmp/err"), not $errs"
expect 1 "$T" configFile=c.cfg Dir=full command=test 'test=[action=test; minibatchSize=7:0; reader=[readerType=CNTKTextFormatReader; file=test.txt; input=$input2d$]]'
has "$tmp/err" "minibatchSize: 0 is out of range: must be >= 1"

# action=cv (CNTK's DoCrossValidate) over the 5 epochs' models, on 2 ranks: modelPath.0 is
# said missing and the final model stands in for it (once), .2 and .4 are evaluated, .6
# is missing; each model's Final Results are test's (on 2 ranks too: the same sums in the
# same order), and the best model by each criterion
# is the one with its lowest value
cvrd='reader=[readerType=CNTKTextFormatReader; file=test.txt; input=$input2d$]'
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=full command=cv "cv=[action=cv; crossValidationInterval=0:2:6; minibatchSize=64:128; $cvrd]"
cp "$tmp/err" cv.log
has cv.log "Model full/model.dnn.0 does not exist."
has cv.log "Model full/model.dnn --> "
has cv.log "Model full/model.dnn.2 --> "
has cv.log "Model full/model.dnn.4 --> "
has cv.log "Model full/model.dnn.6 does not exist."
[ "$(grep -c '^Final Results' cv.log)" -eq 3 ] && ok || no "cv: not 3 Final Results lines"
expect 0 mpi -n 2 "$T" configFile=c.cfg Dir=full command=test "test=[action=test; modelPath=full/model.dnn.2; minibatchSize=64; $cvrd]"
[ "$(grep '^Final Results' "$tmp/err")" = "$(grep -A1 '^Model full/model.dnn.2 --> ' cv.log | tail -n 1)" ] && ok ||
    no "cv: model.dnn.2's results are not test's: $(grep -A1 'model.dnn.2 -->' cv.log | tail -n 1)"
# the best per criterion, from the Final Results lines: EvalClassificationError is Err[0]
for k in 0 1; do
    want=$(awk -v k="$k" '/^Model .* --> $/ { m = $2 } /^Final Results/ {
        split($0, f, " = "); v = f[k + 2] + 0
        if (best == "" || v < best) { best = v; bm = m } } END { print bm }' cv.log)
    has cv.log "Based on Err[$k]: Best model = $want with min err"
done
has cv.log "Best models:"
# action=trainRNN is CNTK's other name for train (TIMIT's LSTM configs use it)
expect 0 "$T" configFile=c.cfg Dir=rnn command=train train.action=trainRNN train.SGD.maxEpochs=1
has "$tmp/err" "Finished Epoch[ 1 of 1]: [Training]"
[ -f rnn/model.dnn ] && ok || no "action=trainRNN wrote no model"
# ranks that see different model files (another modelPath on rank 1) stop together, naming it
mkdir -p cvb && cp full/model.dnn.2 cvb/model.dnn.2 && cp full/model.dnn.2 cvb/model.dnn.4
printf '#!/bin/sh\nd=full; [ "$OMPI_COMM_WORLD_RANK" = 1 ] && d=cvb\nexec "$@" cv.modelPath=$d/model.dnn\n' >perrank.sh
expect 1 mpi -n 2 sh perrank.sh "$T" configFile=c.cfg Dir=full command=cv "cv=[action=cv; crossValidationInterval=2:2:4; $cvrd]"
has "$tmp/err" "rank 1: list of models"
# bad intervals, and nothing to evaluate
expect 1 "$T" configFile=c.cfg Dir=full command=cv "cv=[action=cv; crossValidationInterval=1:0:5; $cvrd]"
has "$tmp/err" "crossValidationInterval: expected start:step:end (three integers, step >= 1, start <= end, at most 100000 models)"
expect 1 "$T" configFile=c.cfg Dir=full command=cv "cv=[action=cv; crossValidationInterval=1:5; $cvrd]"
has "$tmp/err" "crossValidationInterval: expected start:step:end"
expect 1 "$T" configFile=c.cfg Dir=full command=cv "cv=[action=cv; crossValidationInterval=0:1:9223372036854775807; $cvrd]"
has "$tmp/err" "at most 100000 models"
expect 1 "$T" configFile=c.cfg Dir=none command=cv "cv=[action=cv; crossValidationInterval=0:1:3; $cvrd]"
has "$tmp/err" "action=cv: no model to evaluate: none of none/model.dnn.0 .. none/model.dnn.3 (every 1) exists, nor none/model.dnn"
printf 'lower\n' >map1.txt
expect 1 "$T" configFile=c.cfg Dir=full command=out out.outputPath=m1/O 'out.format=[type=category; labelMappingFile=map1.txt]'
has "$tmp/err" "labelMappingFile 'map1.txt' has 1 labels, fewer than the 2 rows of 'HLast'"
expect 1 "$T" configFile=c.cfg Dir=full command=out out.outputPath=m2/O 'out.format=[type=category; labelMappingFile=none.txt]'
has "$tmp/err" "labelMappingFile: cannot read 'none.txt': No such file or directory"
expect 1 "$T" configFile=c.cfg Dir=full command=out out.outputPath=m3/O out.outputNodeNames=PosteriorProb:labelz
has "$tmp/err" "outputNodeNames: 'labelz' is neither a node of the network in 'full/model.dnn' nor an input of the reader"
[ ! -e m3 ] || [ -z "$(ls -A m3)" ] && ok || no "files left after a refused write: $(ls m3)"

# sequences (an LSTM over frames): CNTK's per-sequence layout, %d and %x
awk 'BEGIN { s = 5; for (q = 0; q < 40; q++) { L = 2 + q % 4; for (t = 0; t < L; t++) {
    s = (s * 16807) % 2147483647; x = s / 2147483647; c = (x > 0.5)
    printf "%d |features %.3f %.3f |labels %d %d\n", q, x, 1 - x, 1 - c, c } } }' >seq.txt
cat >l.cfg <<'CFG'
command = train:out
rd = [ readerType = CNTKTextFormatReader ; file = seq.txt ; randomize = false
    input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ]
train = [ action = train ; modelPath = lm/model.dnn ; reader = $rd$
    SimpleNetworkBuilder = [ rnnType = LSTM ; layerSizes = 2:8:2
        trainingCriterion = CrossEntropyWithSoftmax ; evalCriterion = ClassificationError ]
    SGD = [ minibatchSize = 20 ; learningRatesPerSample = 0.1 ; maxEpochs = 2 ] ]
out = [ action = write ; modelPath = lm/model.dnn ; reader = $rd$ ; minibatchSize = 12
    outputPath = lout/O ; format = [ sequencePrologue = "seq %d (%x):\n" ; sequenceSeparator = "--\n" ] ]
CFG
expect 0 "$T" configFile=l.cfg
[ "$(grep -c '^seq ' lout/O.HLast)" -eq 40 ] && ok || no "not 40 sequences in lout/O.HLast"
[ "$(grep -c '^--$' lout/O.HLast)" -eq 39 ] && ok || no "not 39 sequence separators"
[ "$(grep -cE '^-?[0-9]+\.[0-9]{6} -?[0-9]+\.[0-9]{6}$' lout/O.HLast)" -eq 140 ] && ok || no "not 140 sample lines"
grep -qx 'seq 1 (2 3):' lout/O.HLast && ok || no "sequence 1's prologue: $(grep '^seq 1 ' lout/O.HLast)"
# a model without a prior has no ScaledLogLikelihood; nothing is written
expect 1 "$T" configFile=l.cfg command=out out.outputPath=nolp/O out.outputNodeNames=HLast:ScaledLogLikelihood
has "$tmp/err" "outputNodeNames: ScaledLogLikelihood needs a model trained with needPrior=true"
[ ! -e nolp ] || [ -z "$(ls -A nolp)" ] && ok || no "files left after a refused write: $(ls nolp)"

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
