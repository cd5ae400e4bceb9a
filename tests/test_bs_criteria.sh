#!/bin/sh
# Criteria that other nodes read, as CNTK's InceptionV3 weighs its auxiliary head
# (`ce = auxWeight .* ceAux + ceZ`) and its FCN normalizes by SumElements: each criterion
# there is the minibatch's sum, one value. Checked on 1 and 2 ranks: `Constant (1) .* ce`
# trains the same model, bit for bit, as ce itself; the weighted sum's logged value is the
# weighted sum of its parts' logged values; SumElements learns; the errors name where;
# SquareError's target may be computed from the inputs (not from parameters).
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_bs_criteria: mpiexec not found"; exit 99; }
cd "$tmp"
three_classes_ctf >d.txt
cat >c.cntk <<'CFG'
deviceId = -1
command = Train:Dump
parallelTrain = true
traceLevel = 1
rd = [ readerType = CNTKTextFormatReader ; file = d.txt ; randomize = true
       input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 3 ; format = dense ] ] ]
Train = [
    action = train
    modelPath = "$Dir$/m.dnn"
    BrainScriptNetworkBuilder = [
        features = Input (2)
        labels = Input (3)
        h = DenseLayer {8, activation = Tanh} (features)
        z = LinearLayer {3} (h)
        aux = LinearLayer {3} (features)
        ceZ = CrossEntropyWithSoftmax (labels, z)
        ceAux = CrossEntropyWithSoftmax (labels, aux)
        errs = ClassificationError (labels, z)
        plain = ceZ
        one = Constant (1) .* ceZ
        weighted = Constant (0.3) .* ceAux + ceZ
        d = labels - Softmax (z)
        normalized = SumElements (d .* d) .* Reciprocal (SumElements (labels))
        criterionNodes = ($Crit$)
        evaluationNodes = (errs : ceZ : ceAux)
    ]
    SGD = [ minibatchSize = 32 ; learningRatesPerSample = 0.02 ; maxEpochs = 3
            ParallelTrain = [ parallelizationMethod = DataParallelSGD ] ]
    reader = $rd$
]
Dump = [ action = dumpNode ; modelPath = "$Dir$/m.dnn" ; printMetadata = false ; outputFile = "$Dir$/params.txt" ]
CFG
train() { # NAME RANKS CRIT [ARGS]
    name=$1 n=$2 c=$3; shift 3
    mpi -n "$n" "$T" configFile=c.cntk Dir="$name" Crit="$c" "$@" >"$name.out" 2>"$name.err" && ok ||
        { no "$name: -n $n exited $?"; tail -5 "$name.err"; }
}
for n in 1 2; do
    train plain$n $n ceZ
    train one$n $n one
    # the parameters (the model files also hold the network's description)
    [ -s plain$n/params.txt ] && cmp -s plain$n/params.txt one$n/params.txt && ok ||
        no "$n ranks: Constant (1) .* ceZ trained other parameters than ceZ"
    train weighted$n $n weighted
    has weighted$n.err "Training criterion:   weighted = Plus"
    # Finished Epoch[..]: [Training] weighted = W * 600; errs = E% * 600; ceZ = Z * 600;
    # ceAux = A * 600; ...: W = 0.3 A + Z, per sample as summed
    grep '^Finished Epoch.*\[Training\]' weighted$n.err |
        sed 's/.*weighted = \([0-9.]*\) .*ceZ = \([0-9.]*\) .*ceAux = \([0-9.]*\) .*/\1 \2 \3/' >w$n.txt
    [ "$(wc -l <w$n.txt)" -eq 3 ] && awk '{ d = $1 - (0.3 * $3 + $2); if (d < 0) d = -d
        if (NF != 3 || d > 1e-5 * $1) bad = 1 } END { exit bad }' w$n.txt && ok ||
        { no "$n ranks: the weighted criterion is not 0.3 ceAux + ceZ"; cat w$n.txt; }
    # the mean over the minibatch: its steps are 1/32 of a sum's at the same rate
    train normalized$n $n normalized Train.SGD.learningRatesPerSample=0.5
    grep '^Finished Epoch.*\[Training\]' normalized$n.err |
        sed 's/.*normalized = \([0-9.e-]*\) .*errs = \([0-9.]*\)%.*/\1 \2/' >s$n.txt
    awk 'NR == 1 { c = $1; e = $2 } END { exit !(NR == 3 && $1 < c / 2 && $2 < e && $2 < 30) }' s$n.txt && ok ||
        { no "$n ranks: the SumElements criterion did not learn"; cat s$n.txt; }
done
# 2 ranks (the gradient allreduce) log one rank's criteria, within float rounding
has weighted2.err "DataParallelSGD training (myRank = 0, numNodes = 2"
close w1.txt w2.txt 1e-4 && ok || { no "2 ranks' criteria are not one rank's"; paste w1.txt w2.txt; }
cmp -s plain1/params.txt weighted1/params.txt && no "ceZ and the weighted sum trained the same bytes" || ok

# errors: a vector of a criterion's values as the criterion; a criterion's value in a loop
cat >>c.cntk <<'CFG'
Vec = [ action = train ; modelPath = v/m.dnn ; reader = $rd$ ; SGD = [ maxEpochs = 1 ; learningRatesPerSample = 0.1 ]
    BrainScriptNetworkBuilder = [ features = Input (2) ; labels = Input (3)
        z = LinearLayer {3} (features) ; ce = CrossEntropyWithSoftmax (labels, z)
        b = ParameterTensor {3} ; v = ce .* b
        criterionNodes = (v) ] ]
CFG
expect 1 "$T" configFile=c.cntk command=Vec Dir=x Crit=ceZ
has "$tmp/err" "c.cntk:35:39: error: 'v' (ElementTimes) is used as a criterion, which is one value per sample or one for the minibatch; it is 3 x 1, computed from a criterion's value"
[ ! -e v ] && ok || no "a refused network wrote its model directory"
# SquareError's target computed from the inputs (TIMIT's autoencoder compares the output
# with the normalized features): the same model as the target given as an input would be
# (here 2 x features: the reader's second input holds it); a target computed from
# parameters is refused (it would get no gradient)
awk '{ printf "%s |t %.9g %.9g\n", $0, 2 * $2, 2 * $3 }' d.txt >t.txt
cat >>c.cntk <<'CFG'
Sq = [ action = train ; modelPath = "$Dir$/m.dnn" ; SGD = [ maxEpochs = 2 ; minibatchSize = 32 ; learningRatesPerSample = 0.01 ]
    reader = [ readerType = CNTKTextFormatReader ; file = t.txt ; randomize = true
       input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 3 ; format = dense ] ; t = [ dim = 2 ; format = dense ] ] ]
    BrainScriptNetworkBuilder = [ features = Input (2) ; labels = Input (3) ; t = Input (2)
        z = LinearLayer {2} (Tanh (LinearLayer {8} (features)))
        target = $Target$
        se = SquareError (target, z)
        criterionNodes = (se) ] ]
CFG
expect 0 "$T" configFile=c.cntk command=Sq Dir=sq1 Crit=ceZ 'Target=Constant (2) .* features'
cp "$tmp/err" sq1.err
expect 0 "$T" configFile=c.cntk command=Sq Dir=sq2 Crit=ceZ Target=t
cp "$tmp/err" sq2.err
a=$(grep '^Finished Epoch\[ 2' sq1.err | sed 's/epochTime.*//') b=$(grep '^Finished Epoch\[ 2' sq2.err | sed 's/epochTime.*//')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || no "a computed target trained otherwise than the same target read: '$a' / '$b'"
expect 1 "$T" configFile=c.cntk command=Sq Dir=sq5 Crit=ceZ 'Target=LinearLayer {2} (features)'
has "$tmp/err" "SquareError: its first operand (the target,"
# statistics of two inputs (TIMIT's autoencoder normalizes its input and its target): each
# input's own, so t = 2 x features normalizes to what features does
cat >>c.cntk <<'CFG'
Norm = [ action = train ; modelPath = "$Dir$/m.dnn" ; SGD = [ maxEpochs = 2 ; minibatchSize = 32 ; learningRatesPerSample = 0.01 ]
    reader = [ readerType = CNTKTextFormatReader ; file = t.txt ; randomize = true
       input = [ features = [ dim = 2 ; format = dense ] ; labels = [ dim = 3 ; format = dense ] ; t = [ dim = 2 ; format = dense ] ] ]
    BrainScriptNetworkBuilder = [ features = Input (2) ; labels = Input (3) ; t = Input (2)
        fn = PerDimMeanVarNormalization (features, Mean (features), InvStdDev (features))
        tn = PerDimMeanVarNormalization (t, Mean (t), InvStdDev (t))
        z = LinearLayer {2} (Tanh (LinearLayer {8} (fn)))
        se = SquareError (tn, z)
        criterionNodes = (se) ] ]
NormOut = [ action = write ; modelPath = "$Dir$/m.dnn" ; outputPath = "$Dir$/o" ; outputNodeNames = fn:tn
    reader = [ readerType = CNTKTextFormatReader ; file = t.txt ; randomize = false
       input = [ features = [ dim = 2 ; format = dense ] ; t = [ dim = 2 ; format = dense ] ] ] ]
CFG
expect 0 "$T" configFile=c.cntk command=Norm:NormOut Dir=nm Crit=ceZ
paste -d ' ' nm/o.fn nm/o.tn | awk '{ for (i = 1; i <= 2; i++) { d = $i - $(i + 2); if (d < 0) d = -d; if (d > 1e-5) bad++ }
    if ($1 * $1 > 0) any++ } END { exit bad > 0 || NR != 600 || !any }' && ok ||
    { no "t's statistics are not its own"; paste nm/o.fn nm/o.tn | head -3; }
finish test_bs_criteria
