#!/bin/sh
# CNTK's ImageDeserializer (README "Images"): PNG files listed in a map file, decoded (blue,
# green, red, 0-255), cropped, scaled and transposed into the features stream, their class
# one-hot. The pixels written back (action=write of the reader's inputs) are the files'
# exactly, in channel planes with Transpose and interleaved without; OpenCV's linear
# resize; a Mean file subtracted; a network trains on coloured images with random crops
# on 1 and 2 ranks; bad map files, images and transforms are errors naming what and where.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
command -v python3 >/dev/null || { echo "test_image_reader: python3 (which writes its PNG files) not found: skipped"; exit 77; }
cd "$tmp"
png() { python3 "$S/tests/data/images.py" png "$@"; } # PATH W H VALUES...: an 8-bit PNG
# a 6 x 4 image: red = 10 x + y, green = 100 + 10 x + y, blue = 200 + x + y
vals=$(awk 'BEGIN { for (y = 0; y < 4; y++) for (x = 0; x < 6; x++) printf "%d %d %d ", 10 * x + y, 100 + 10 * x + y, 200 + x + y }')
# shellcheck disable=SC2086
png px.png 6 4 $vals
printf 'px.png\t1\n' >one.txt
png g.png 2 1 0 100
printf '7\tg.png\t0\n' >gray.txt
# the centre 4 x 2 window of the 6 x 4 image (x 1..4, y 1..2) as channel planes (Transpose)
# and interleaved; writing the reader's inputs needs a model of the features' shape
cat >c.cntk <<'CFG'
deviceId = -1
rdp = [ randomize = false ; deserializers = ({ type = "ImageDeserializer" ; module = "ImageReader"
    file = "one.txt" ; input = { features = { transforms = (
        { type = "Crop" ; cropSize = 4:2 } : { type = "Scale" ; width = 4 ; height = 2 ; channels = 3 } :
        { type = "Transpose" } ) }
        labels = { labelDim = 3 } } }) ]
rdi = [ randomize = false ; deserializers = ({ type = "ImageDeserializer" ; file = "one.txt"
    input = { features = { transforms = ( { type = "Crop" ; cropSize = 4:2 } :
        { type = "Scale" ; width = 4 ; height = 2 ; channels = 3 } ) } ; labels = { labelDim = 3 } } }) ]
net = [ features = Input {4:2:3} ; labels = Input {3}
    z = LinearLayer {3} (features) ; ce = CrossEntropyWithSoftmax (labels, z)
    criterionNodes = (ce) ; outputNodes = (z) ]
Tp = [ action = train ; BrainScriptNetworkBuilder = $net$ ; modelPath = mp/m.dnn ; SGD = [ maxEpochs = 1 ; learningRatesPerSample = 0.001 ] ; reader = $rdp$ ]
Wp = [ action = write ; modelPath = mp/m.dnn ; outputPath = o/planar ; outputNodeNames = features:labels ; reader = $rdp$ ]
Ti = [ action = train ; BrainScriptNetworkBuilder = $net$ ; modelPath = mi/m.dnn ; SGD = [ maxEpochs = 1 ; learningRatesPerSample = 0.001 ] ; reader = $rdi$ ]
Wi = [ action = write ; modelPath = mi/m.dnn ; outputPath = o/inter ; outputNodeNames = features:labels ; reader = $rdi$ ]
CFG
mkdir -p o
expect 0 "$T" configFile=c.cntk command=Tp:Wp:Ti:Wi
# words: the numbers of a file (or of stdin) on one line, whole numbers as written
words() { awk '{ for (i = 1; i <= NF; i++) printf "%d ", $i } END { print "" }' "$@"; }
px() { # X Y C: the file's value of channel C (0 blue, 1 green, 2 red) at X, Y
    awk -v x="$1" -v y="$2" -v c="$3" 'BEGIN { print (c == 0 ? 200 + x + y : c == 1 ? 100 + 10 * x + y : 10 * x + y) }'
}
want=$(for c in 0 1 2; do for y in 1 2; do for x in 1 2 3 4; do px $x $y $c; done; done; done | words)
[ "$(words o/planar.features)" = "$want" ] && ok || no "planar pixels: $(words o/planar.features), want $want"
want=$(for y in 1 2; do for x in 1 2 3 4; do for c in 0 1 2; do px $x $y $c; done; done; done | words)
[ "$(words o/inter.features)" = "$want" ] && ok || no "interleaved pixels: $(words o/inter.features), want $want"
[ "$(cat o/planar.labels)" = "0.000000 1.000000 0.000000" ] && ok || no "label: $(cat o/planar.labels)"


# a gray 2 x 1 image [0 100] widened to 4: OpenCV's linear resize (pixel centres mapped,
# the edges held) gives 0 25 75 100, its nearest 0 0 100 100; the map's 3-column form
cat >>c.cntk <<'CFG'
gnet = [ features = Input {4:1:1} ; labels = Input {3}
    z = LinearLayer {3} (features) ; ce = CrossEntropyWithSoftmax (labels, z)
    criterionNodes = (ce) ; outputNodes = (z) ]
rdl = [ randomize = false ; deserializers = ({ type = "ImageDeserializer" ; file = "gray.txt" ; grayscale = true
    input = { features = { transforms = ( { type = "Scale" ; width = 4 ; height = 1 ; channels = 1 } ) }
        labels = { labelDim = 3 } } }) ]
rdn = [ randomize = false ; deserializers = ({ type = "ImageDeserializer" ; file = "gray.txt" ; grayscale = true
    input = { features = { transforms = ( { type = "Scale" ; width = 4 ; height = 1 ; channels = 1
        interpolations = "nearest" } ) } ; labels = { labelDim = 3 } } }) ]
Tg = [ action = train ; BrainScriptNetworkBuilder = $gnet$ ; modelPath = mg/m.dnn ; reader = $rdl$
    SGD = [ maxEpochs = 1 ; learningRatesPerSample = 0.001 ] ]
Wl = [ action = write ; modelPath = mg/m.dnn ; outputPath = o/lin ; outputNodeNames = features:labels ; reader = $rdl$ ]
Wn = [ action = write ; modelPath = mg/m.dnn ; outputPath = o/near ; outputNodeNames = features ; reader = $rdn$ ]
CFG
expect 0 "$T" configFile=c.cntk command=Tg:Wl:Wn
[ "$(words o/lin.features)" = "0 25 75 100 " ] && ok || no "linear: $(words o/lin.features)"
[ "$(words o/near.features)" = "0 0 100 100 " ] && ok || no "nearest: $(words o/near.features)"
[ "$(words o/lin.labels)" = "1 0 0 " ] && ok || no "label of the 3-column line: $(words o/lin.labels)"

# a Mean file (OpenCV's XML, interleaved) subtracted from the centre window
awk 'BEGIN { printf "<?xml version=\"1.0\"?>\n<opencv_storage>\n<Channel>3</Channel>\n<Row>2</Row>\n"
    printf "<Col>4</Col>\n<MeanImg type_id=\"opencv-matrix\">\n  <rows>1</rows>\n  <cols>24</cols>\n"
    printf "  <dt>f</dt>\n  <data>\n"; for (i = 1; i <= 24; i++) printf " %d.", i; printf "</data></MeanImg>\n"
    printf "</opencv_storage>\n" }' >mean.xml
cat >>c.cntk <<'CFG'
Wm = [ action = write ; modelPath = mi/m.dnn ; outputPath = o/mean ; outputNodeNames = features
    reader = [ randomize = false ; deserializers = ({ type = "ImageDeserializer" ; file = "one.txt"
        input = { features = { transforms = ( { type = "Crop" ; cropSize = 4:2 } :
            { type = "Scale" ; width = 4 ; height = 2 ; channels = 3 } : { type = "Mean" ; meanFile = "mean.xml" } ) }
            labels = { labelDim = 3 } } }) ] ]
CFG
expect 0 "$T" configFile=c.cntk command=Wm
want=$(for y in 1 2; do for x in 1 2 3 4; do for c in 0 1 2; do px $x $y $c; done; done; done |
    awk '{ printf "%d ", $1 - NR } END { print "" }')
[ "$(words o/mean.features)" = "$want" ] && ok || no "mean: $(words o/mean.features), want $want"

# three classes of 12 x 10 images (the class's channel bright, with noise): a network
# trains on random windows (randomSide, mirrored) and tests on the centre ones, on 1 and 2
# ranks (each image's window is drawn from its place in the stream: the same on any ranks)
python3 "$S/tests/data/images.py" classes
cat >>c.cntk <<'CFG'
trainMap = train.txt
Train = [ action = train ; modelPath = "$Dir$/m.dnn"
    BrainScriptNetworkBuilder = [ features = Input {8:8:3} ; labels = Input {3}
        z = LinearLayer {3} (DenseLayer {16, activation = ReLU} ((features - 128) / 64))
        ce = CrossEntropyWithSoftmax (labels, z) ; errs = ClassificationError (labels, z)
        criterionNodes = (ce) ; evaluationNodes = (errs) ]
    SGD = [ minibatchSize = 16 ; learningRatesPerSample = 0.005 ; maxEpochs = 3
        ParallelTrain = [ parallelizationMethod = DataParallelSGD ] ]
    reader = [ deserializers = ({ type = "ImageDeserializer" ; module = "ImageReader" ; file = "$trainMap$"
        input = { features = { transforms = (
            { type = "Crop" ; cropType = "RandomSide" ; sideRatio = 0.6:0.9 ; jitterType = "UniRatio" } :
            { type = "Scale" ; width = 8 ; height = 8 ; channels = 3 } : { type = "Transpose" } ) }
            labels = { labelDim = 3 } } }) ] ]
Test = [ action = test ; modelPath = "$Dir$/m.dnn"
    reader = [ randomize = false ; deserializers = ({ type = "ImageDeserializer" ; file = "test.txt"
        input = { features = { transforms = ( { type = "Crop" ; sideRatio = 0.75 } :
            { type = "Scale" ; width = 8 ; height = 8 ; channels = 3 } : { type = "Transpose" } ) }
            labels = { labelDim = 3 } } }) ] ]
CFG
for n in 1 2; do
    mpi -n $n "$T" configFile=c.cntk Dir=r$n command=Train:Test >r$n.out 2>r$n.err && ok ||
        { no "$n ranks: exit $?"; tail -5 r$n.err; }
    grep -q "Finished Epoch\[ 3 of 3\]: \[Training\] ce = .*; errs = 0.000% \* 240" r$n.err && ok ||
        no "$n ranks: epoch 3 not error-free: $(grep 'Finished Epoch' r$n.err | tail -1)"
    has r$n.err "Final Results: Minibatch[1-1]: errs = 0.000% * 60"
done
e1=$(grep 'Finished Epoch\[ 1 of 3\]' r1.err | sed 's/.*ce = \([^ ]*\) .*/\1/')
e2=$(grep 'Finished Epoch\[ 1 of 3\]' r2.err | sed 's/.*ce = \([^ ]*\) .*/\1/')
awk -v a="$e1" -v b="$e2" 'BEGIN { exit !(a != "" && (a - b)^2 < 1e-6 * a * a) }' && ok ||
    no "epoch 1 on 1 and 2 ranks: ce $e1 and $e2"

# CNTK's legacy form, readerType = "ImageReader" (its ResNet ImageNet configs): the image
# and class blocks by their keys, the transforms in CNTK's fixed order; no warning
cat >>c.cntk <<'CFG'
legacy = [ readerType = "ImageReader" ; file = "train.txt" ; randomize = "Auto"
    features = [ width = 8 ; height = 8 ; channels = 3 ; cropType = "RandomArea" ; areaRatio = 0.5:1.0
        aspectRatio = 0.75:1.3333 ; jitterType = "UniRatio" ; interpolations = "cubic"
        brightnessRadius = 0.2 ; contrastRadius = 0.2 ; saturationRadius = 0.2 ]
    labels = [ labelDim = 3 ] ]
LegacyTest = [ action = test ; modelPath = "$Dir$/m.dnn"
    reader = [ readerType = "ImageReader" ; file = "test.txt" ; randomize = "None"
        features = [ width = 8 ; height = 8 ; channels = 3 ; cropType = "Center" ; sideRatio = 0.75 ]
        labels = [ labelDim = 3 ] ] ]
CFG
expect 0 "$T" configFile=c.cntk Dir=leg command=Train:LegacyTest 'Train.reader=$legacy$'
grep -q "Finished Epoch\[ 3 of 3\]: \[Training\] ce = .*; errs = 0.000% \* 240" "$tmp/err" && ok ||
    no "legacy: epoch 3 not error-free: $(grep 'Finished Epoch' "$tmp/err" | tail -1)"
has "$tmp/err" "Final Results: Minibatch[1-1]: errs = 0.000% * 60"
hasnt "$tmp/err" "warning"
cat >>c.cntk <<'CFG'
LegacyBad = [ action = test ; modelPath = "leg/m.dnn"
    reader = [ readerType = "ImageReader" ; file = "test.txt"
        features = [ width = 8 ; height = 8 ; channels = 3 ] ; labels = [ dim = 3 ] ] ]
CFG
expect 1 "$T" configFile=c.cntk command=LegacyBad
has "$tmp/err" 'readerType = "ImageReader" needs one block with width, height and channels (the image) and one with labelDim (its class); found 1 and 0'

# errors: each names the file (and line), the transform or the key
printf 'tr0.png 1\n' >spaces.txt
printf 'tr0.png\t1\nte0.png\t3\n' >big.txt
printf 'tr0.png\t1\nnone.png\t0\n' >gone.txt
bad() { # NAME MAP TRANSFORMS [DESERIALIZER KEYS]: a write with them
    cat >>c.cntk <<CFG
B$1 = [ action = write ; modelPath = r1/m.dnn ; outputPath = o/b ; outputNodeNames = labels
    reader = [ randomize = false ; deserializers = ({ type = "ImageDeserializer" ; file = "$2" ${4:-}
        input = { features = { transforms = ( $3 ) } ; labels = { labelDim = 3 } } }) ] ]
CFG
    expect 1 "$T" configFile=c.cntk command=B$1
}
S8='{ type = "Scale" ; width = 8 ; height = 8 ; channels = 3 }'
bad spaces spaces.txt "$S8"
has "$tmp/err" "spaces.txt:1: error: expected PATH<TAB>LABEL (or KEY<TAB>PATH<TAB>LABEL), columns separated by tabs"
bad big big.txt "$S8"
has "$tmp/err" "big.txt:2: error: the class of 'te0.png' is '3': expected a whole number from 0 to 2 (labelDim 3)"
bad gone gone.txt "$S8"
has "$tmp/err" "gone.txt:2: error: cannot read image 'none.png': No such file or directory"
bad nomap nomap.txt "$S8"
has "$tmp/err" "cannot read map file 'nomap.txt': No such file or directory"
bad noscale train.txt '{ type = "Transpose" }'
has "$tmp/err" "the image stream needs a Scale transform"
bad late train.txt "$S8"' : { type = "Crop" ; cropSize = 4 }'
has "$tmp/err" "a Crop after the last Scale"
bad onechan train.txt '{ type = "Scale" ; width = 8 ; height = 8 ; channels = 1 }'
has "$tmp/err" "Scale: channels = 1 needs grayscale = true"
bad kind train.txt '{ type = "Rotate" }'
has "$tmp/err" "type=Rotate: not a transform partrain builds"
bad ratio train.txt '{ type = "Crop" ; sideRatio = 1.5 } : '"$S8"
has "$tmp/err" "sideRatio: expected a number or min:max with 0 < min <= max <= 1, got \"1.5\""
bad meansize train.txt "$S8"' : { type = "Mean" ; meanFile = "mean.xml" }'
has "$tmp/err" "Mean: meanFile 'mean.xml' holds a 4 x 2 x 3 image, the image is 8 x 8 x 3 there"
bad views train.txt "$S8" '; multiViewCrop = true'
has "$tmp/err" "multiViewCrop=true (ten views of every image) is not supported"

# an image whose header reads but whose data end early fails in the epoch on the rank that
# reads it: that rank says why and ends the job (the other is in the step's collectives)
head -c 60 tr0.png >cut.png
awk 'NR == 5 { print "cut.png\t0"; next } { print }' train.txt >cut.txt
mpi -n 2 "$T" configFile=c.cntk Dir=cut command=Train trainMap=cut.txt >cut.out 2>cut.err
st=$?
[ "$st" -ne 0 ] && [ "$st" -ne 124 ] && ok || no "a truncated image on 2 ranks: exit $st"
grep -q "^rank [01]: cut.png: error: cannot read image 'cut.png' (listed in map file cut.txt)" cut.err && ok ||
    { no "the failing rank's reason is missing"; tail -5 cut.err; }

# the images of a minibatch decoded on 3 threads (src/reader/fill_pool.c): the same model
# as on one; with two bad images, the error names the one a single thread meets first
cp cut.png cut2.png
awk 'NR == 5 { print "cut.png\t0"; next } NR == 7 || NR == 150 { print "cut2.png\t1"; next } { print }' \
    train.txt >cut2.txt
for th in 1 3; do
    PT_READ_THREADS=$th mpi -n 1 "$T" configFile=c.cntk Dir=th$th command=Train traceLevel=1 >th$th.out 2>th$th.err &&
        ok || { no "PT_READ_THREADS=$th: exit $?"; tail -5 th$th.err; }
    PT_READ_THREADS=$th mpi -n 1 "$T" configFile=c.cntk Dir=thb$th command=Train trainMap=cut2.txt \
        >thb$th.out 2>thb$th.err && no "PT_READ_THREADS=$th: bad images trained"
    grep "error: cannot read image" thb$th.err >thb$th.why || no "PT_READ_THREADS=$th: no reason given"
done
cmp -s th1/m.dnn th3/m.dnn && ok || no "the models differ when 3 threads decode the images"
has th3.err "minibatches read by 3 threads"
[ -s thb1.why ] && cmp -s thb1.why thb3.why && ok ||
    no "3 threads name another bad image than one: $(cat thb3.why) / $(cat thb1.why)"

finish test_image_reader
