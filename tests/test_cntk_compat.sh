#!/bin/sh
# CNTK's configs as they are (issue 18): what CNTK's own example and test configs do that
# partrain once refused, and CNTK's log as its sources print it. Lines in CNTK's formats
# are compared whole (grep -x); the numbers come from CNTK's sources and its baselines
# (Tests/EndToEndTests/Speech/DNN/ParallelBM: a 363:512:512:132 network has 25 nodes, 15
# with gradient, 516740 parameters in 6 tensors). The configs are written here.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_cntk_compat: mpiexec not found"; exit 99; }
cd "$tmp"
# line FILE TEXT: a whole line of FILE is TEXT (timestamps stripped)
line() {
    if sed 's#^[0-9][0-9]/[0-9][0-9]/[0-9]\{4\} [0-9:]\{8\}: ##' "$1" | grep -qxF -- "$2"; then ok
    else no "$1 has no line: $2"; sed 's/^/  | /' "$1" | head -40; fi
}

# ---- a speech-style config: a BrainScript block marked "not active" next to the
# SimpleNetworkBuilder, // comments, the top-level parallelTrain switch without a
# ParallelTrain block, and an empty last schedule element
awk 'BEGIN { s = 99; for (i = 0; i < 96; i++) { printf "|features";
        for (j = 0; j < 363; j++) { s = (s * 1103515245 + 12345) % 2147483648; printf " %.3f", s / 2147483648 }
        c = i % 132; printf " |labels"; for (j = 0; j < 132; j++) printf " %d", j == c; printf "\n" } }' >speech.ctf
cat >speech.cfg <<'CFG'
precision = "float"
command = speechTrain
parallelTrain = true
traceLevel = 0

speechTrain = [
    action = "train"
    modelPath = "models/cntkSpeech.dnn"
    traceLevel = 1
    SimpleNetworkBuilder = [
        layerSizes = 363:512:512:132
        trainingCriterion = "CrossEntropyWithSoftmax"
        evalCriterion = "ClassificationError"
        layerTypes = "Sigmoid"
        applyMeanVarNorm = true
        needPrior = true
    ]
    ExperimentalNetworkBuilder = [    // the same with BrainScript. Not active
        dims = 363:512:512:132
        n = Length (dims) - 1    // layers with weights
        features = Input (dims[0], 1, tag='feature') ; labels = Input (dims[n], 1, tag='label')
        normed = MeanVarNorm (features)
        hidden[k:1..n-1] = if k == 1 then SBFF (normed, dims[k], dims[k-1])
                           else SBFF (hidden[k-1].Eh, dims[k], dims[k-1])
        top = BFF (hidden[n-1].Eh, dims[n], dims[n-1])
        criterion = 'CE'
        CE = if criterion == 'CE' then CrossEntropyWithSoftmax (labels, top.z, tag='criterion')
             else Fail ('no criterion called ' + criterion)
        Err = ClassificationError (labels, top.z, tag='evaluation')
        logPrior = LogPrior (labels)
        ScaledLogLikelihood = Minus (top.z, logPrior, tag='output')
    ]
    SGD = [
        epochSize = 0
        minibatchSize = 32:64:
        learningRatesPerSample = 0.001
        momentumAsTimeConstant = 2500
        maxEpochs = 2
    ]
    reader = [ readerType = CNTKTextFormatReader ; file = speech.ctf ; randomize = false
        input = [ features = [ dim = 363 ; format = dense ] ; labels = [ dim = 132 ; format = dense ] ] ]
]
CFG
expect 0 "$T" configFile=speech.cfg stderr=logs/stderr timestamping=true
L=logs/stderr_speechTrain.logrank0 # parallelTrain=true: rank0 even on one process (CNTK.cpp)
[ -f $L ] && ok || { no "no log file $L"; ls -R logs; }
has "$tmp/err" "Redirecting stderr to file $L"
line $L "Model has 25 nodes. Using CPU."
line $L "Training criterion:   CrossEntropyWithSoftmax = CrossEntropyWithSoftmax"
line $L "Evaluation criterion: EvalClassificationError = ClassificationError"
line $L "Training 516740 parameters in 6 out of 6 parameter tensors and 15 nodes with gradient:"
for node in "B0' (LearnableParameter operation) : [512 x 1]" "B2' (LearnableParameter operation) : [132 x 1]" \
    "W0' (LearnableParameter operation) : [512 x 363]" "W2' (LearnableParameter operation) : [132 x 512]"; do
    line $L "	Node '$node"
done
# node lines sorted by name, as CNTK's LearnableParameterNodes are
got=$(sed -n "s/.*	Node '\([A-Z0-9]*\)'.*/\1/p" $L | tr '\n' ' ')
[ "$got" = "B0 B1 B2 W0 W1 W2 " ] && ok || no "parameter nodes in the order: $got"
# momenta are floats: CNTK prints 0.950085 and 2499.8 at 128 samples, here at 32 and 64
line $L "Starting Epoch 1: learning rate per sample = 0.001000  effective momentum = 0.987281  momentum as time constant = 2499.8 samples"
line $L "Starting Epoch 2: learning rate per sample = 0.001000  effective momentum = 0.974723  momentum as time constant = 2499.8 samples"
line $L "SGD: Saving checkpoint model 'models/cntkSpeech.dnn.1'"
line $L "SGD: Saving checkpoint model 'models/cntkSpeech.dnn'"
line $L "# speechTrain command (train action)                                         #"
line $L 'Action "train" complete.'
line $L "__COMPLETED__"
hasnt $L "COMPLETED."
# the banner: repeated into the log (top-level traceLevel 0), the build info after it
head -1 $L | grep -Eq '^partrain [0-9.]+ \([A-Z][a-z]{2} [ 0-9]{2} [0-9]{4} [0-9:]{8}\) at [0-9]{4}/[0-9]{2}/[0-9]{2} [0-9:]{8}$' &&
    ok || { no "banner line"; head -3 $L; }
line $L "$T  configFile=speech.cfg  stderr=logs/stderr  timestamping=true"
line $L "Build info: "
line $L "		With ASGD: yes"
grep -Eq '^[0-9/]{10} [0-9:]{8}: 		MPI version: [0-9]' $L && ok || no "no MPI version in the build info"
# the terminal got the banner too
head -1 "$tmp/err" | grep -q '^partrain ' && ok || { no "no banner on the terminal"; head -3 "$tmp/err"; }

# momentum 2500 samples at 128 per minibatch: CNTK's own numbers
expect 0 "$T" configFile=speech.cfg speechTrain.SGD.minibatchSize=128 speechTrain.SGD.maxEpochs=1 \
    speechTrain.modelPath=m128/m.dnn
line "$tmp/err" "Starting Epoch 1: learning rate per sample = 0.001000  effective momentum = 0.950085  momentum as time constant = 2499.8 samples"
line "$tmp/err" "COMPLETED."

# ---- log names under MPI: timestamping gives every rank, rank 0 too, "rank<k>"
toy_ctf 'x + y > 1' >d.ctf
toy_cfg 1 >p.cfg
mpi -n 2 "$T" configFile=p.cfg Dir=a command=train stderr=L/run timestamping=true >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && ok || { no "2 ranks, timestamping"; cat "$tmp/err"; }
for k in 0 1; do
    [ -f L/run_train.logrank$k ] && ok || { no "no L/run_train.logrank$k"; ls L; }
done
line L/run_train.logrank1 "__COMPLETED__"
has L/run_train.logrank1 "Finished Epoch[ 3 of 3]"
# without timestamping: partrain's and CNTK's names, stderr and stderr.rank<k>
mpi -n 2 "$T" configFile=p.cfg Dir=b stderr=P/run >"$tmp/out" 2>"$tmp/err"
[ -f P/run ] && [ -f P/run.rank1 ] && ok || { no "no P/run and P/run.rank1"; ls P; }
line P/run "COMPLETED."
# one process: not parallel (parallelTrain's default), no rank suffix; parallelTrain=true:
# CNTK's rank suffix on rank 0
expect 0 "$T" configFile=p.cfg Dir=c stderr=O/run timestamping=true
[ -f O/run_train.log ] && ok || { no "no O/run_train.log"; ls O; }
expect 0 "$T" configFile=p.cfg Dir=c stderr=O/run timestamping=true parallelTrain=true
[ -f O/run_train.logrank0 ] && ok || { no "no O/run_train.logrank0"; ls O; }

# ---- parallelTrain=false: CNTK ignores SGD's ParallelTrain block, saying so, and every
# rank trains on all the data: the numbers of one worker
expect 0 "$T" configFile=p.cfg Dir=one
crit "$tmp/err" >one.txt
# (without the switch one process runs the method on one worker: SPEC 7.1, not CNTK)
has "$tmp/err" "Starting minibatch loop, DataParallelSGD training (myRank = 0, numNodes = 1"
hasnt "$tmp/err" "parallelTrain option is not enabled"
mpi -n 2 "$T" configFile=p.cfg Dir=off parallelTrain=false >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && ok || { no "parallelTrain=false on 2 ranks"; cat "$tmp/err"; }
line "$tmp/err" "parallelTrain option is not enabled. ParallelTrain config will be ignored."
hasnt "$tmp/err" "DataParallelSGD training"
crit "$tmp/err" >off.txt
if close one.txt off.txt; then ok; else no "parallelTrain=false differs from one worker"; paste one.txt off.txt; fi

# ---- the BrainScript network is the network once the SimpleNetworkBuilder is gone (as
# CNTK's comment says): CNTK's older style, the node groups by tag (no criterionNodes), an
# array definition whose elements refer to each other (hidden[k-1]), CNTK.core.bs's SBFF,
# BFF, MeanVarNorm and LogPrior, if/Fail on a string; the same parameters as the
# SimpleNetworkBuilder's, both statistics taken before the first epoch
sed '/SimpleNetworkBuilder = \[/,/^    \]/d' speech.cfg >bs.cfg
expect 0 "$T" configFile=bs.cfg speechTrain.modelPath=bs/m.dnn
for s in "Training criterion:   CE = CrossEntropyWithSoftmax" "Evaluation criterion: Err = ClassificationError" \
    "Training 516740 parameters in 6 out of 6 parameter tensors" "Finished Epoch[ 2 of 2]: [Training] CE = "; do
    has "$tmp/err" "$s"
done
# LogPrior is the log of the labels' frequencies: here 96 samples of classes 0..95, once
# each, so the output -LogPrior is log 96 for those and +inf for the 36 never seen
sed 's/ScaledLogLikelihood = Minus (top.z, logPrior/ScaledLogLikelihood = Minus (top.z * 0, logPrior/' bs.cfg >prior.cfg
cat >>prior.cfg <<'CFG'
write = [ action = "write" ; modelPath = "prior/m.dnn" ; outputPath = "prior/out"
    reader = [ readerType = CNTKTextFormatReader ; file = speech.ctf ; randomize = false
        input = [ features = [ dim = 363 ; format = dense ] ; labels = [ dim = 132 ; format = dense ] ] ] ]
CFG
expect 0 "$T" configFile=prior.cfg speechTrain.modelPath=prior/m.dnn 'command=speechTrain:write'
awk '{ for (i = 1; i <= 96; i++) if ($i < 4.5643 || $i > 4.5645) bad = 1
       for (i = 97; i <= 132; i++) if ($i != "inf") bad = 1; n++ }
     END { exit bad || n != 96 || NF != 132 }' prior/out.ScaledLogLikelihood && ok ||
    { no "the label prior is not the labels' frequencies"; head -c 600 prior/out.ScaledLogLikelihood; }
# what the network itself fails with, where it says so
sed "s/criterion = 'CE'/criterion = 'MSE'/" bs.cfg >fail.cfg
expect 1 "$T" configFile=fail.cfg speechTrain.modelPath=fail/m.dnn
has "$tmp/err" "fail.cfg:20:19: error: Fail: no criterion called MSE"
finish cntk_compat
