#!/bin/sh
# CNTK's autoAdjustMinibatch (SGD.AutoAdjust): for the epochs after minibatchSize's schedule,
# trial sizes train numSamples4Search samples from the model the last epoch left, which is
# then put back; the largest size within the error margin of the first trial's criterion is
# the epoch's. Checked: CNTK's log lines; the search range (the schedule's last size, up to
# minibatchSizeTuningMax, then half to twice the last choice); a trial repeated from the
# same start gives the same criterion bit for bit; and a run that searches trains exactly as
# one given the chosen sizes as its schedule (rates and momentum per sample: per-minibatch
# ones convert with the schedule's sizes, in CNTK as here, so those would differ), on one
# rank and on two with 1-bit SGD (the
# model, the learner's momentum and the quantization residues are all put back);
# minibatchSizeTuningFrequency skips epochs. And the learning-rate search
# (autoAdjustLR = searchBeforeEpoch), below.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
toy_ctf 'x * x + y * y < 0.5' >d.ctf
cat >am.cntk <<'CFG'
deviceId = -1
command = train
traceLevel = 1
parallelTrain = true
train = [ action = train ; modelPath = "$M$/m.dnn"
    SimpleNetworkBuilder = [ layerSizes = 2:32:2 ; trainingCriterion = CrossEntropyWithSoftmax
        evalCriterion = ClassificationError ; layerTypes = Sigmoid ]
    SGD = [ epochSize = 1000 ; minibatchSize = 32 ; learningRatesPerSample = 0.01 ; momentumAsTimeConstant = 300
        maxEpochs = 4
        autoAdjust = [ autoAdjustMinibatch = $A$ ; numSamples4Search = 320 ; minibatchSizeTuningMax = 512
                      minibatchSearchCriterionErrorMargin = 20 ]
        ParallelTrain = [ parallelizationMethod = DataParallelSGD ; distributedMBReading = true
                          DataParallelSGD = [ gradientBits = $B$ ] ] ]
    reader = [ readerType = CNTKTextFormatReader ; file = "d.ctf"
        input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 2 ; format = dense ] ] ] ]
CFG
# epochs N: the Finished Epoch lines of log N without their times
epochs() { grep '^Finished Epoch' "$1" | sed 's/epochTime=.*//'; }
for n in 1 2; do
    b=$([ $n = 2 ] && echo 1 || echo 32)
    mpi -n $n "$T" configFile=am.cntk M=s$n A=true B=$b >s$n.out 2>s$n.err && ok ||
        { no "$n rank(s), searching: exit $?"; tail -5 s$n.err; }
    hasnt s$n.err "AdaptiveMinibatchSearch Epoch[1]" # the schedule's epoch
    has s$n.err " AdaptiveMinibatchSearch Epoch[2]: Evaluating minibatchSizes 64..512"
    has s$n.err " AdaptiveMinibatchSearch Epoch[2]: Computed baseCriterion "
    has s$n.err " Finished Mini-Epoch[2]: CrossEntropyWithSoftmax = "
    # 32 x sqrt(2) rounds to 64, as the first trial: two trials from one start, one result
    # (the search range starts at 64: a multiple of 64, as CNTK rounds)
    first=$(grep -m2 'Finished Mini-Epoch\[2\]' s$n.err | sed 's/.*: CrossEntropyWithSoftmax = \([0-9.e+-]*\) .*/\1/' | sort -u | wc -l)
    sizes=$(sed -n 's/.*Search successful. New minibatchSize is \([0-9]*\)\..*/\1/p' s$n.err | tr '\n' ' ')
    echo "# $n rank(s): chosen sizes $sizes"
    [ "$(echo $sizes | wc -w)" = 3 ] && ok || no "$n rank(s): 3 searches expected, sizes '$sizes'"
    has s$n.err " AdaptiveMinibatchSearch Epoch[3]: Evaluating minibatchSizes "
    # the same training with the chosen sizes as the schedule: the same epochs, bit for bit
    sched="32:$(echo $sizes | tr ' ' ':')"
    mpi -n $n "$T" configFile=am.cntk M=f$n A=false B=$b "train.SGD.minibatchSize=$sched" \
        >f$n.out 2>f$n.err && ok || { no "$n rank(s), schedule $sched: exit $?"; tail -5 f$n.err; }
    epochs s$n.err >s$n.ep
    epochs f$n.err >f$n.ep
    [ "$(wc -l <s$n.ep)" = 4 ] && cmp -s s$n.ep f$n.ep && ok ||
        { no "$n rank(s): searching trains otherwise than the chosen schedule $sched"; diff s$n.ep f$n.ep | head -6; }
done
# every second epoch searches (CNTK: epochs whose number is a multiple of the frequency)
mpi -n 1 "$T" configFile=am.cntk M=q A=true B=32 'train.SGD.autoAdjust=[ minibatchSizeTuningFrequency = 2 ]' \
    >q.out 2>q.err && ok || { no "frequency 2: exit $?"; tail -5 q.err; }
has q.err "AdaptiveMinibatchSearch: Search for a better minibatchSize in epoch 3 skipped, keeping minibatchSize of"
has q.err " AdaptiveMinibatchSearch Epoch[4]: Evaluating minibatchSizes "
expect 1 "$T" configFile=am.cntk M=x A=true B=32 'train.SGD.autoAdjust=[ minibatchSizeTuningFrequency = 0 ]'
has "$tmp/err" "minibatchSizeTuningFrequency"

# autoAdjustLR = searchBeforeEpoch (CNTK's SearchForBestLearnRate), for the epochs after the
# rate schedule: the model's criterion at rate 0, then rates down by 0.618 from CNTK's start
# (1 / 8 / 0.618 / sqrt(32) = 0.0357581, then 0.618^-2 above the last rate found) until a
# trial beats that base. The epoch then trains from where the trials started: its first 10
# minibatches (numSamples4Search = 320 samples) repeat the last trial's criterion exactly
sed 's/autoAdjustMinibatch = \$A\$/autoAdjustLR = searchBeforeEpoch ; autoAdjustMinibatch = $A$/
     s/learningRatesPerSample = 0.01/learningRatesPerSample = 0.05:0.02/' am.cntk >lr.cntk
for n in 1 2; do
    b=$([ $n = 2 ] && echo 1 || echo 32)
    mpi -n $n "$T" configFile=lr.cntk M=lr$n A=false B=$b >lr$n.out 2>lr$n.err && ok ||
        { no "searchBeforeEpoch, $n rank(s): exit $?"; tail -5 lr$n.err; }
    hasnt lr$n.err "SearchForBestLearnRate Epoch[2]" # the schedule's
    has lr$n.err " Finished Mini-Epoch[3]: CrossEntropyWithSoftmax = "
    has lr$n.err "learningRatePerSample = 0; minibatchSize = 32"
    has lr$n.err " SearchForBestLearnRate Epoch[3]: Best learningRatePerSample = 0.02209708"
    has lr$n.err " SearchForBestLearnRate Epoch[4]: Best learningRatePerSample = "
    for k in 3 4; do
        trial=$(grep "Finished Mini-Epoch\[$k\]" lr$n.err | tail -1 | sed 's/.*CrossEntropyWithSoftmax = \([0-9.]*\) .*/\1/')
        first=$(grep "Epoch\[ $k of 4\]-Minibatch\[   1-  10" lr$n.err | sed 's/.*CrossEntropyWithSoftmax = \([0-9.]*\) .*/\1/')
        [ -n "$trial" ] && [ "$trial" = "$first" ] && ok ||
            no "searchBeforeEpoch, $n rank(s), epoch $k: the epoch's first minibatches ($first) are not the accepted trial's ($trial)"
    done
done
echo "test_auto_mb: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
