#!/bin/sh
# CNTK's HTK readers (README "Speech") on a generated corpus (tests/htk_gen: HTK feature
# files, a script file, an MLF with times in 100 ns units, a state list):
# - the frames a reader delivers (action=write, file order) are the files' frames, each with
#   its context window of 11 (the utterance's first or last frame standing in at its ends),
#   the labels one-hot of the MLF's states;
# - CNTK's legacy form (readerType = "HTKMLFReader") and its deserializers train alike, bit
#   for bit, as do little-endian files, one file per utterance, MLFs in frame numbers or
#   with class numbers instead of a state list, CNTK's binary MLF, and an explicit
#   contextWindow; compressed
#   files and utterance mode (frameMode = false) train; 2 ranks train;
# - CNTK's (new ComputationNetwork ([ ... ].fit)) network form trains, and its model writes;
# - truncated back-propagation through time: recurrent networks' outputs in segments are
#   those of whole utterances, bit for bit; training on 1 and 2 ranks;
# - bad script files, feature files, MLFs and configs are errors naming file and line;
#   utterances without labels (or with labels of another length) are skipped with a
#   warning, and more than half of them is an error.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
G=$(cd "${top_builddir:-.}" && pwd)/tests/htk_gen
cd "$tmp"
mkdir -p c
"$G" c || { echo "FAIL: htk_gen"; exit 1; }
cat >t.cntk <<'CFG'
command = train
deviceId = -1
train = [
    action = train
    modelPath = "$Out$/m.dnn"
    SimpleNetworkBuilder = [
        layerSizes = 143:64:8 ; trainingCriterion = CrossEntropyWithSoftmax
        evalCriterion = ClassificationError ; layerTypes = Sigmoid ; applyMeanVarNorm = true
    ]
    SGD = [ epochSize = 0 ; minibatchSize = 128 ; learningRatesPerSample = 0.01
            momentumPerMB = 0.9 ; maxEpochs = 3 ]
    reader = $rd$
]
D = c
feat = [ @FEAT@ ]
lab = [ @LAB@ ]
legacy = [
    readerType = "HTKMLFReader" ; readMethod = "blockRandomize" ; miniBatchMode = "partial"
    randomize = "auto" ; verbosity = 0 ; useMersenneTwisterRand = true
    features = $feat$
    labels = $lab$
]
deser = [
    randomize = true
    deserializers = (
        [ type = "HTKFeatureDeserializer" ; module = "HTKDeserializers"
          input = [ features = [ dim = 143 ; scpFile = "$D$/train.scp" ] ] ] :
        [ type = "HTKMLFDeserializer" ; module = "HTKDeserializers"
          input = [ labels = [ mlfFile = "$D$/train.mlf" ; labelMappingFile = "$D$/state.list"
                               scpFile = "$D$/train.scp" ; dim = 8 ] ] ]
    )
]
rd = $legacy$
write = [ action = write ; modelPath = "$Out$/m.dnn" ; outputPath = "$Out$/w"
    outputNodeNames = features:labels
    reader = [ randomize = false ; readerType = HTKDeserializers ; features = $feat$ ; labels = $lab$ ] ]
CFG
# mk FEATURE-KEYS LABEL-KEYS: t.cntk with these streams (the template's @FEAT@, @LAB@)
cp t.cntk t.in
mk() { sed -e "s|@FEAT@|$1|" -e "s|@LAB@|$2|" t.in >t.cntk; }
F0='dim = 143 ; type = "real" ; scpFile = "$D$/train.scp"'
L0='mlfFile = "$D$/train.mlf" ; labelMappingFile = "$D$/state.list" ; labelDim = 8 ; labelType = "category"'
mk "$F0" "$L0"
# train OUT ARGS...: one rank, its epochs' lines in OUT.ep (without their times)
train() {
    o=$1; shift
    "$T" configFile=t.cntk Out="$o" "$@" >"$o.out" 2>"$o.err" && ok || { no "$o: exit $?"; tail -5 "$o.err"; }
    grep '^Finished Epoch' "$o.err" | sed 's/epochTime=.*//' >"$o.ep"
}
train a
[ "$(wc -l <a.ep)" = 3 ] && ok || no "a: $(wc -l <a.ep) epochs"
has a.err "reading script file c/train.scp ... 200 entries"
has a.err "context 5:5 frames of 13 values"
# 8 classes (chance: 7/8 wrong); the frames' classes are plain to see, if they are read right
err=$(sed -n 's/.*Finished Epoch\[ 3 of 3\].*EvalClassificationError = \([0-9.]*\) .*/\1/p' a.err)
awk -v x="$err" 'BEGIN { exit !(x != "" && x < 0.05) }' && ok || no "a: error $err after 3 epochs"

# readMethod = none (CNTK's HTK deserializers' write action): the file order whatever
# randomize says, the epochs of randomize = false, not those of blockRandomize
train rn legacy.readMethod=none
train rf legacy.randomize=false
cmp -s rn.ep rf.ep && ok || { no "readMethod=none is not the file order"; diff rn.ep rf.ep | head -4; }
cmp -s rn.ep a.ep && no "readMethod=none trained as blockRandomize does" || ok

# the frames as written, in file order, against the generator's (frames.txt: utterance,
# frame, class, 13 values): frame t's window is t-5 .. t+5 within its utterance
expect 0 "$T" configFile=t.cntk Out=a command=write
awk 'NR == FNR { u[NR] = $1; t[NR] = $2; c[NR] = $3; for (i = 1; i <= 13; i++) v[NR, i] = $(i + 3)
                 if ($2 == 0) first[$1] = NR; last[$1] = NR; n = NR; next }
     FILENAME ~ /features/ { k++; if (NF != 143) { print "frame " k ": " NF " values"; bad++; next }
         for (j = -5; j <= 5; j++) { r = k + j
             if (r < first[u[k]]) r = first[u[k]]; if (r > last[u[k]]) r = last[u[k]]
             for (i = 1; i <= 13; i++) { d = $((j + 5) * 13 + i) - v[r, i]
                 if (d > 2e-6 || d < -2e-6) { if (bad++ < 3) print "frame " k " window " j " value " i ": " $((j + 5) * 13 + i) " want " v[r, i] } } }
         next }
     { m++; for (i = 1; i <= 8; i++) if (($i == 1) != (i - 1 == c[m])) { if (bad++ < 3) print "label " m ": " $0 " want class " c[m] } }
     END { if (k != n || m != n) { print k " feature rows, " m " label rows, " n " frames"; bad++ } exit bad > 0 }' \
    c/frames.txt a/w.features a/w.labels && ok || no "the written frames are not the files' frames in their windows"

# the deserializers' form, and variants of the files that hold the same frames: the same
# epochs bit for bit
train b 'rd=$deser$'
cmp -s a.ep b.ep && ok || { no "deserializers differ from HTKMLFReader"; diff a.ep b.ep | head -4; }
variant() { # NAME GENERATOR-OPTIONS... : a corpus like c's, trained as a
    name=$1; shift
    mkdir -p "$name" && "$G" "$name" "$@" || no "htk_gen $name $*"
    train "t$name" D="$name" "$@"
}
for opts in little=1 files=1 frames=1; do
    variant "v${opts%=1}" "$opts"
    cmp -s a.ep "tv${opts%=1}.ep" && ok || { no "$opts: other epochs"; diff a.ep "tv${opts%=1}.ep" | head -4; }
done
# CNTK's binary MLF (HTKMLFBinaryDeserializer, told by its first bytes): the same labels
mkdir -p bm && "$G" bm binmlf=1
cat >>t.cntk <<'CFG'
bin = [ randomize = true ; deserializers = (
    [ type = "HTKFeatureDeserializer" ; module = "HTKDeserializers" ; input = [ features = [ dim = 143 ; scpFile = "bm/train.scp" ] ] ] :
    [ type = "HTKMLFBinaryDeserializer" ; module = "HTKDeserializers" ; chunkSizeInBytes = 36
      input = [ labels = [ mlfFile = "bm/train.mlf" ; dim = 8 ] ] ] ) ]
CFG
train tbm 'rd=$bin$'
cmp -s a.ep tbm.ep && ok || { no "binary MLF: other epochs than the text MLF's"; diff a.ep tbm.ep | head -4; }
head -c 40 bm/train.mlf >bm/cut.mlf
sed 's|bm/train.mlf|bm/cut.mlf|' t.cntk >tc.cntk
"$T" configFile=tc.cntk Out=x 'rd=$bin$' >x.out 2>x.err && no "a cut binary MLF: accepted"
has x.err "bm/cut.mlf: error: at byte 5: the file ends inside 'spk/u0000'"
# an archive of 1 MiB or more is mapped into memory, smaller files are read with pread: the
# same corpus both ways trains alike
mkdir -p big bigf && "$G" big utts=500 && "$G" bigf utts=500 files=1
[ "$(wc -c <big/feat.htk)" -gt 1048576 ] && ok || no "big/feat.htk is under 1 MiB: not mapped"
train tbig D=big
train tbigf D=bigf
[ -s tbig.ep ] && cmp -s tbig.ep tbigf.ep && ok || { no "a mapped archive trains otherwise than files read with pread"; diff tbig.ep tbigf.ep | head -4; }
mkdir -p ns && "$G" ns nostates=1
mk "$F0" 'mlfFile = "ns/train.mlf" ; labelDim = 8'
train tns D=ns
cmp -s a.ep tns.ep && ok || no "class numbers in the MLF (no state list): other epochs"
mk 'dim = 13 ; contextWindow = 11 ; scpFile = "c/train.scp"' "$L0"
train cw
cmp -s a.ep cw.ep && ok || no "contextWindow = 11 with dim = 13: other epochs"
mk 'dim = 13 ; contextWindow = 5:5 ; scpFile = "c/train.scp"' "$L0"
train cw2
cmp -s a.ep cw2.ep && ok || no "contextWindow = 5:5: other epochs"
mk "$F0" "$L0"
# compressed files (16-bit values) and utterance mode learn as well
mkdir -p z && "$G" z compressed=1
train tz D=z
for o in tz; do
    e=$(sed -n 's/.*Finished Epoch\[ 3 of 3\].*EvalClassificationError = \([0-9.]*\) .*/\1/p' $o.err)
    awk -v x="$e" 'BEGIN { exit !(x != "" && x < 0.05) }' && ok || no "$o: error $e"
done
train um frameMode=false
has um.err "utterance mode"
e=$(sed -n 's/.*Finished Epoch\[ 3 of 3\].*EvalClassificationError = \([0-9.]*\) .*/\1/p' um.err)
awk -v x="$e" 'BEGIN { exit !(x != "" && x < 0.05) }' && ok || no "utterance mode: error $e"

# two ranks, each reading its chunks: DataParallelSGD sums the same global minibatches
mpi -n 2 "$T" configFile=t.cntk Out=p2 parallelTrain=true \
    'train.SGD.ParallelTrain=[ parallelizationMethod = DataParallelSGD ; distributedMBReading = true ]' \
    >p2.out 2>p2.err && ok || { no "2 ranks: exit $?"; tail -5 p2.err; }
grep '^Finished Epoch' p2.err >p2.ep
[ "$(wc -l <p2.ep)" = 3 ] && ok || no "2 ranks: $(wc -l <p2.ep) epochs"
sed -i 's/epochTime=.*//' p2.ep
cmp -s a.ep p2.ep && ok || { no "2 ranks: other epochs than one"; diff a.ep p2.ep | head -4; }

# truncated back-propagation through time (frameMode = false, truncated = true): each of
# nbruttsineachrecurrentiter streams gives minibatchSize frames a minibatch, the recurrent
# state carried over, the next utterance starting where one ends. A recurrent network's outputs written in segments of 1, 3
# or 7 frames are those of whole utterances, bit for bit (a recurrent LSTM, and PastValue
# two steps back, with the default and with a learned initialState taken at each utterance's
# start only); per-minibatch learning rates count every stream's frames (CNTK's)
cat >tr.cntk <<'CFG'
command = tr
deviceId = -1
frameMode = false
truncated = true
lstm = [ features = Input {143} ; labels = Input {8}
    z = Sequential ( RecurrentLSTMLayer {24} : DenseLayer {8} ) (features)
    ce = CrossEntropyWithSoftmax (labels, z) ; err = ClassificationError (labels, z)
    criterionNodes = (ce) ; evaluationNodes = (err) ; outputNodes = (z) ]
past = [ features = Input {143} ; labels = Input {8}
    W = Parameter (16, 143) ; H = Parameter (16, 16) ; b = Parameter (16, 1)
    h = Tanh (W * features + H * PastValue (0, h, timeStep = 2) + b)
    z = DenseLayer {8} (h)
    ce = CrossEntropyWithSoftmax (labels, z) ; err = ClassificationError (labels, z)
    criterionNodes = (ce) ; evaluationNodes = (err) ; outputNodes = (z) ]
pinit = [ features = Input {143} ; labels = Input {8}
    W = Parameter (16, 143) ; H = Parameter (16, 16) ; b = Parameter (16, 1)
    s0 = ParameterTensor {(16), initValue = 0.3}
    h = Tanh (W * features + H * PastValue (0, h, timeStep = 2, initialState = s0) + b)
    z = DenseLayer {8} (h)
    ce = CrossEntropyWithSoftmax (labels, z) ; err = ClassificationError (labels, z)
    criterionNodes = (ce) ; evaluationNodes = (err) ; outputNodes = (z) ]
future = [ features = Input {143} ; labels = Input {8}
    z = DenseLayer {8} (Splice (features : FutureValue (0, features)))
    ce = CrossEntropyWithSoftmax (labels, z)
    criterionNodes = (ce) ; outputNodes = (z) ]
feat = [ dim = 143 ; scpFile = "c/train.scp" ]
lab = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8 ]
tr = [ action = train ; traceLevel = 1 ; modelPath = "$M$/m.dnn" ; BrainScriptNetworkBuilder = $lstm$
    SGD = [ numMBsToShowResult = 10 ; minibatchSize = 20 ; learningRatesPerMB = 1.6 ; momentumAsTimeConstant = 200 ; maxEpochs = 3 ]
    reader = [ readerType = HTKMLFReader ; nbruttsineachrecurrentiter = 8 ; features = $feat$ ; labels = $lab$ ] ]
wr = [ action = write ; modelPath = "$M$/m.dnn" ; outputPath = "$M$/$O$" ; outputNodeNames = z
    minibatchSize = $W$
    reader = [ readerType = HTKMLFReader ; randomize = false ; features = $feat$ ; labels = $lab$ ] ]
wf = [ action = write ; modelPath = "$M$/m.dnn" ; outputPath = "$M$/f" ; outputNodeNames = z
    minibatchSize = 7 ; reader = [ readerType = HTKMLFReader ; randomize = false ; features = $feat$ ] ]
CFG
for net in lstm past pinit; do
    "$T" configFile=tr.cntk M=$net "tr.BrainScriptNetworkBuilder=\$$net\$" >$net.out 2>$net.err && ok ||
        { no "truncated $net: exit $?"; tail -3 $net.err; }
    has $net.err "learning rate per sample = 0.010000" # 1.6 / (20 frames x 8 streams)
    e=$(sed -n 's/.*Finished Epoch\[ 3 of 3\].*err = \([0-9.]*\) .*/\1/p' $net.err)
    awk -v x="$e" 'BEGIN { exit !(x != "" && x < 0.05) }' && ok || no "truncated $net: error $e"
    expect 0 "$T" configFile=tr.cntk M=$net command=wr O=whole W=100000 truncated=false
    for w in 1 3 7; do
        expect 0 "$T" configFile=tr.cntk M=$net command=wr O=seg$w W=$w
        cmp -s $net/whole.z $net/seg$w.z && ok || no "$net: outputs in segments of $w differ from whole utterances'"
    done
    expect 0 "$T" configFile=tr.cntk M=$net command=wf # features only: the labels' Input unread
    cmp -s $net/whole.z $net/f.z && ok || no "$net: outputs of a reader of features only differ"
    # three streams of 7 frames: a stream whose utterance ends takes the next at the following
    # frame (CNTK's packing), its state carried from that utterance's piece; every frame's
    # output (the streams' segments interleaved) is the whole utterance's
    expect 0 "$T" configFile=tr.cntk M=$net command=wr O=st3 W=7 wr.reader.nbruttsineachrecurrentiter=3
    sort $net/whole.z >$net/whole.sorted
    sort $net/st3.z | cmp -s - $net/whole.sorted && ok || no "$net: outputs of 3 packed streams differ"
done
# packed streams: every minibatch but the epoch's last ones holds 8 streams x 20 frames
grep -q 'Minibatch\[   1-  10\]: ce = [0-9.]* \* 1600;' lstm.err && ok || no "truncated: not 1600 frames in 10 minibatches"
# no gradient crosses from an utterance into the one before it in its stream: one SGD step
# over the whole corpus as one stream (all utterances packed into one sequence) and over
# whole utterances (one sequence each) give the same model but for rounding (a gradient
# that crossed moves the outputs by 25 here, rounding by under 0.003)
cat >g1.cntk <<'CFG'
g1 = [ action = train ; modelPath = "$M$/m.dnn" ; BrainScriptNetworkBuilder = $lstm$
    SGD = [ minibatchSize = 100000 ; learningRatesPerSample = 0.02 ; momentumPerSample = 0 ; maxEpochs = 1 ]
    reader = [ readerType = HTKMLFReader ; nbruttsineachrecurrentiter = 1 ; randomize = false ; features = $feat$ ; labels = $lab$ ] ]
CFG
for net in lstm past; do
    for tr in true false; do
        expect 0 "$T" configFile=tr.cntk+g1.cntk command=g1 M=g$net$tr truncated=$tr "g1.BrainScriptNetworkBuilder=\$$net\$"
        expect 0 "$T" configFile=tr.cntk M=g$net$tr command=wr O=w W=100000 truncated=false
    done
    paste -d' ' g${net}true/w.z g${net}false/w.z | awk '{ n = NF / 2; for (i = 1; i <= n; i++) { d = $i - $(i + n); if (d < 0) d = -d; if (d > m) m = d } }
        END { exit !(NR > 0 && m < 0.05) }' && ok || no "$net: a truncated step over packed utterances is not the whole utterances' step"
done
# truncated = true and frameMode = false in the reader block (TIMIT's LSTM configs), not
# above it: the same training
"$T" configFile=tr.cntk M=inblk truncated=false frameMode=true "tr.reader.truncated=true" \
    "tr.reader.frameMode=false" >inblk.out 2>inblk.err && ok || { no "truncated in the reader block: exit $?"; tail -3 inblk.err; }
cmp -s lstm/m.dnn inblk/m.dnn && ok || no "truncated in the reader block: another model than above it"
mpi -n 2 "$T" configFile=tr.cntk M=tr2 parallelTrain=true \
    'tr.SGD.ParallelTrain=[ parallelizationMethod = DataParallelSGD ; distributedMBReading = true ]' \
    >tr2.out 2>tr2.err && ok || { no "truncated, 2 ranks: exit $?"; tail -5 tr2.err; }
[ "$(grep -c '^Finished Epoch' tr2.err)" = 3 ] && ok || no "truncated, 2 ranks: not 3 epochs"
"$T" configFile=tr.cntk M=x 'tr.BrainScriptNetworkBuilder=$future$' >x.out 2>x.err && no "FutureValue in truncated mode: accepted"
has x.err "error: truncated = true cuts utterances into segments, but FutureValue looks ahead"

# CNTK's QuickE2E BrainScript form, (new ComputationNetwork ([ ... ].fit)): the record's
# member fit is the network (its tagged nodes the criteria); saved so, its model loads
# for a write of scaledLogLikelihood (LogPrior's Mean a fixed value then: no labels read)
cat >fit.cntk <<'CFG'
command = train:write:test
deviceId = -1
rd = [ readerType = HTKMLFReader ; randomize = false ; features = [ dim = 143 ; scpFile = "c/train.scp" ]
       labels = [ mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8 ] ]
train = [ action = train ; modelPath = "fit/m.dnn"
    BrainScriptNetworkBuilder = (new ComputationNetwork ([
        Fit (features, labels, model, loss, metric) = [
            z = model (features)
            ce = loss (labels, z, tag='criterion')
            errs = metric (labels, z, tag='evaluation')
            scaledLogLikelihood = Pass (z - LogPrior (labels), tag='output')
        ]
        model = Sequential (FeatureMVNLayer{} : DenseLayer {32, activation=Sigmoid} : DenseLayer {8})
        features = Input {143} ; labels = Input {8}
        fit = Fit (features, labels, model, CrossEntropyWithSoftmax, ClassificationError)
    ].fit))
    SGD = [ minibatchSize = 128 ; learningRatesPerSample = 0.01 ; maxEpochs = 2 ]
    reader = $rd$ ]
write = [ action = write ; modelPath = "fit/m.dnn" ; outputPath = "fit/o" ; outputNodeNames = scaledLogLikelihood
    reader = [ readerType = HTKMLFReader ; randomize = false ; features = [ dim = 143 ; scpFile = "c/train.scp" ] ] ]
test = [ action = test ; modelPath = "fit/m.dnn" ; reader = $rd$ ]
CFG
expect 0 "$T" configFile=fit.cntk
has "$tmp/err" "Finished Epoch[ 2 of 2]: [Training] ce = "
has "$tmp/err" "Final Results: Minibatch[1-"
[ "$(wc -l <fit/o.scaledLogLikelihood)" = 9698 ] && ok || no "fit: scaledLogLikelihood not written for every frame"
sed 's/\]\.fit))/].nofit))/' fit.cntk >nofit.cntk
"$T" configFile=nofit.cntk command=train >x.out 2>x.err && no "a member that is not there: accepted"
has x.err "(new ComputationNetwork ([ ... ].nofit)): the record has no member 'nofit'"

# skipped utterances: a warning each (the first 5), and a count; more than half: an error
mkdir -p s && "$G" s baddur=2 nolabel=3
train ts D=s
has ts.err "s/train.scp:1: warning: utterance 'spk/u0000' skipped: its labels' duration differs (51 frames of labels, 52 of features)"
has ts.err "s/train.scp:200: warning: utterance 'spk/u0199' skipped: no labels in the MLF"
has ts.err "s/train.scp: 5 of 200 utterances skipped"
mkdir -p s2 && "$G" s2 nolabel=120
"$T" configFile=t.cntk Out=x D=s2 >x.out 2>x.err && no "120 of 200 unlabelled: accepted"
has x.err "s2/train.scp: error: 120 of its 200 utterances have no labels"

# errors: where, and what was expected
bad() { # TEXT FEATURE-KEYS LABEL-KEYS [ARGS...]: training fails, its error names TEXT
    want=$1; mk "$2" "$3"; shift 3
    "$T" configFile=t.cntk Out=x "$@" >x.out 2>x.err && no "accepted: $*"
    has x.err "$want"
}
bad "cannot read script file 'c/none.scp'" 'dim = 143 ; scpFile = "c/none.scp"' "$L0"
head -2 c/train.scp >b1.scp && echo 'spk/u0002.mfc=c/feat.htk[73,9]' >>b1.scp
bad "b1.scp:3: error: expected NAME=FILE[FIRST,LAST] with FIRST <= LAST" 'dim = 143 ; scpFile = "b1.scp"' "$L0"
echo 'spk/u0000.mfc=c/feat.htk[0,99999]' >b2.scp
bad "b2.scp:1: error: frames 0 to 99999, but 'c/feat.htk' holds 9698 frames" 'dim = 143 ; scpFile = "b2.scp"' "$L0"
printf 'short' >short.htk && echo 'u=short.htk' >b3.scp
bad "short.htk: error: not a usable HTK feature file (listed at b3.scp:1): shorter than the 12-byte HTK header" 'dim = 143 ; scpFile = "b3.scp"' "$L0"
sed '3s/st[0-9]*\[2\]/nosuch/' c/train.mlf >b4.mlf
bad "b4.mlf:3: error: state 'nosuch' is not in the state list c/state.list" "$F0" 'mlfFile = "b4.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8'
sed '4d' c/train.mlf >b5.mlf
bad "b5.mlf:4: error: this line starts at frame" "$F0" 'mlfFile = "b5.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8'
sed '1d' c/train.mlf >b6.mlf
bad "b6.mlf:1: error: expected the MLF header #!MLF!#" "$F0" 'mlfFile = "b6.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 8'
bad "error: 8 states, more than the labels' 4 classes" "$F0" 'mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list" ; labelDim = 4'
bad "features: dim = 140 is not an odd number of the feature files' 13-value frames" 'dim = 140 ; scpFile = "c/train.scp"' "$L0"
bad "contextWindow: 4 frames are not symmetrical" 'dim = 13 ; contextWindow = 4 ; scpFile = "c/train.scp"' "$L0"
bad "expandToUtterance = true (utterance-level features) is not supported" 'dim = 143 ; scpFile = "c/train.scp" ; expandToUtterance = true' "$L0"
bad "labels: labelDim (or dim) is not set" "$F0" 'mlfFile = "c/train.mlf" ; labelMappingFile = "c/state.list"'
bad "miniBatchMode" "$F0" "$L0" 'legacy=[ miniBatchMode = full ]'
# several streams (CNTK's TIMIT: featIn and featOut, features1 and features2, labels and
# regions): a second feature stream of the same utterances without a context window is each
# window's middle frame, a second label stream of the same MLF the same labels; a network
# of both feature streams trains; a second MLF without an utterance skips it, naming that
# MLF; script files of other utterances or frames are errors
mk "$F0" "$L0"
cat >>t.cntk <<'CFG'
two = [ action = write ; modelPath = "$Out$/m.dnn" ; outputPath = "$Out$/two"
    outputNodeNames = features:f2:labels:l2
    reader = [ readerType = HTKMLFReader ; randomize = false ; features = $feat$ ; labels = $lab$
        f2 = [ dim = 13 ; scpFile = "$S2$" ] ; l2 = [ mlfFile = "$M2$" ; labelDim = 8 ; labelMappingFile = "c/state.list" ] ] ]
S2 = c/train.scp
M2 = c/train.mlf
mi = [ action = train ; modelPath = "$Out$/m.dnn" ; NDLNetworkBuilder = [ networkDescription = "m2.ndl" ]
    SGD = [ epochSize = 0 ; minibatchSize = 128 ; learningRatesPerSample = 0.01 ; momentumPerMB = 0.9 ; maxEpochs = 3 ]
    reader = [ readerType = HTKMLFReader ; features = $feat$ ; labels = $lab$ ; f2 = [ dim = 13 ; scpFile = "c/train.scp" ] ] ]
CFG
expect 0 "$T" configFile=t.cntk Out=a command=two
cut -d ' ' -f 66-78 a/two.features | cmp -s - a/two.f2 && ok || no "f2 is not the windows' middle frames"
cmp -s a/two.labels a/two.l2 && ok || no "l2 is not the labels"
[ "$(wc -l <a/two.f2)" = 9698 ] && ok || no "f2: $(wc -l <a/two.f2) frames"
cat >m2.ndl <<'NDL'
features = Input(143) ; f2 = Input(13) ; labels = Input(8)
W1 = Parameter(32, 143) ; W2 = Parameter(32, 13) ; b = Parameter(32, 1)
h = Sigmoid(Plus(Plus(Times(W1, features), Times(W2, f2)), b))
ol = Times(Parameter(8, 32), h)
ce = CrossEntropyWithSoftmax(labels, ol) ; err = ErrorPrediction(labels, ol)
FeatureNodes = (features : f2) ; LabelNodes = (labels) ; CriterionNodes = (ce) ; EvalNodes = (err)
NDL
expect 0 "$T" configFile=t.cntk Out=mi command=mi
has "$tmp/err" "Finished Epoch[ 3 of 3]"
has "$tmp/err" "Training criterion:   ce = CrossEntropyWithSoftmax" # the NDL network's
awk '/u0199/ { skip = 1 } !skip { print } skip && /^\.$/ { skip = 0 }' c/train.mlf >m2.mlf
expect 0 "$T" configFile=t.cntk Out=a command=two M2=m2.mlf
has "$tmp/err" "c/train.scp:200: warning: utterance 'spk/u0199' skipped: no labels in m2.mlf"
sed '1s/\[0,51\]/[0,50]/' c/train.scp >s2.scp
expect 1 "$T" configFile=t.cntk Out=a command=two S2=s2.scp
has "$tmp/err" "s2.scp: error: its utterance 1 has 51 frames, and 52 in c/train.scp"
head -150 c/train.scp >s3.scp
expect 1 "$T" configFile=t.cntk Out=a command=two S2=s3.scp
has "$tmp/err" "s3.scp: 150 utterances, where c/train.scp lists 200"
bad "truncated = true needs frameMode = false" "$F0" "$L0" truncated=true
# a reader of features only (CNTK's write action, speech decoding's posteriors): every
# utterance; the output layer's values are those written with labels; an output computed
# from the labels is refused
mk "$F0" "$L0"
cat >>t.cntk <<'CFG'
fo = [ action = write ; modelPath = "$Out$/m.dnn" ; outputPath = "$Out$/$O$" ; outputNodeNames = $N$
    reader = [ randomize = false ; readerType = HTKMLFReader ; features = $feat$ ] ]
fl = [ action = write ; modelPath = "$Out$/m.dnn" ; outputPath = "$Out$/fl" ; outputNodeNames = HLast
    reader = [ randomize = false ; readerType = HTKMLFReader ; features = $feat$ ; labels = $lab$ ] ]
CFG
expect 0 "$T" configFile=t.cntk Out=a command=fo:fl O=fo N=HLast
has "$tmp/err" "reading script file c/train.scp ... 200 entries; feature set 0: 9698 frames in 200 out of 200 utterances"
[ "$(wc -l <a/fo.HLast)" = 9698 ] && cmp -s a/fo.HLast a/fl.HLast && ok || no "features only: HLast differs from the one written with labels"
"$T" configFile=t.cntk Out=a command=fo O=fx N=labels >x.out 2>x.err && no "features only: labels written"
has x.err "outputNodeNames: 'labels' is computed from the network's Input 'labels', which the reader does not provide"
bad "lattice: lattices and HMMs (denlatTocFile, for sequence training) are not supported" "$F0" "$L0" \
    'legacy=[ lattice = [ denlatTocFile = x.toc ] ]'

echo "test_htk: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
