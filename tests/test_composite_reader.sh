#!/bin/sh
# CNTK's composite reader of two deserializers (README "Images"): deserializers = ({ ... } :
# { ... }), an image or text deserializer and then a CNTKTextFormatDeserializer whose
# k-th sequence goes with the first's k-th. Images with their regression targets in a text
# file (CNTK's RegrSimple_CIFAR10) train on 1 and 2 ranks and test; features and labels in
# two text files train the model one file with both gives, bit for bit; what does not
# compose is an error naming the file and line or the key.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
command -v python3 >/dev/null || { echo "test_composite_reader: python3 (which writes its PNG files) not found: skipped"; exit 77; }
cd "$tmp"
mkdir -p data
python3 "$S/tests/data/images.py" regr data 256 train
python3 "$S/tests/data/images.py" regr data 64 test
# ds MAP LABELS [RANDOMIZE]: the two deserializers of a reader block
ds() {
    cat <<CFG
[ randomize = ${3:-true} ; deserializers = ({ type = "ImageDeserializer" ; module = "ImageReader" ; file = "$1"
        input = { features = { transforms = ( { type = "Scale" ; width = 8 ; height = 8 ; channels = 3 } :
            { type = "Transpose" } ) } ; ignored = { labelDim = 10 } } } : {
        type = "CNTKTextFormatDeserializer" ; module = "CNTKTextFormatReader" ; file = "$2"
        input = { regrLabels = { dim = 3 ; format = "dense" } } }) ]
CFG
}
cat >r.cntk <<CFG
deviceId = -1
Train = [ action = train ; modelPath = "\$Dir\$/m.dnn"
    BrainScriptNetworkBuilder = [ features = Input {8:8:3} ; regrLabels = Input {3}
        W1 = Parameter (16, 192) ; b1 = Parameter (16, 1)
        z1 = W1 * (features / 256) + b1 ; h1 = Tanh (z1)
        ol = LinearLayer {3} (h1)
        diff = regrLabels - ol ; sqerr = ReduceSum (diff .* diff, axis = 1) ; rmse = Sqrt (sqerr / 3)
        criterionNodes = (rmse) ; evaluationNodes = (rmse) ; outputNodes = (ol) ]
    SGD = [ minibatchSize = 32 ; learningRatesPerSample = 0.002 ; momentumAsTimeConstant = 256 ; maxEpochs = 6
        ParallelTrain = [ parallelizationMethod = DataParallelSGD ] ]
    reader = $(ds data/train_map.txt data/train_regrLabels.txt) ]
Test = [ action = test ; modelPath = "\$Dir\$/m.dnn" ; reader = $(ds data/test_map.txt data/test_regrLabels.txt false) ]
Write = [ action = write ; modelPath = "\$Dir\$/m.dnn" ; outputPath = "\$Dir\$/out" ; minibatchSize = 10
    outputNodeNames = (ol, regrLabels, rmse, h1) ; reader = $(ds data/test_map.txt data/test_regrLabels.txt false) ]
CFG
# the targets are the images' channel means: after 6 epochs the error is a fraction of the first's
for n in 1 2; do
    mpi -n $n "$T" configFile=r.cntk Dir=r$n command=Train:Test >r$n.out 2>r$n.err && ok ||
        { no "$n ranks: exit $?"; tail -5 r$n.err; }
    first=$(sed -n 's/^Finished Epoch\[ 1 of 6\]: \[Training\] rmse = \([0-9.]*\) .*/\1/p' r$n.err)
    last=$(sed -n 's/^Finished Epoch\[ 6 of 6\]: \[Training\] rmse = \([0-9.]*\) .*/\1/p' r$n.err)
    test=$(sed -n 's/^Final Results: .* rmse = \([0-9.]*\) .*/\1/p' r$n.err)
    echo "# $n rank(s): rmse epoch 1 $first, epoch 6 $last, test $test"
    awk -v a="$first" -v b="$last" -v t="$test" 'BEGIN { exit !(a > 0 && b < a / 2 && t < 2 * b) }' && ok ||
        no "$n ranks: rmse $first -> $last, test $test: not learned"
done

# a write of nodes by name, CNTK's array syntax (RegrSimple_CIFAR10's Write): the network's
# values, the reader's targets beside them, each rmse what the two give
expect 0 "$T" configFile=r.cntk Dir=r1 command=Write
for f in ol regrLabels rmse h1; do
    [ "$(wc -l <r1/out.$f)" -eq 64 ] && ok || no "r1/out.$f: $(wc -l <r1/out.$f) lines, wanted 64"
done
[ "$(awk '{ print NF; exit }' r1/out.h1)" = 16 ] && ok || no "h1: not 16 values a sample"
paste -d ' ' r1/out.ol r1/out.regrLabels r1/out.rmse | awk '{ s = 0; for (i = 1; i <= 3; i++) s += ($(i + 3) - $i)^2
    d = sqrt(s / 3) - $7; if (d < 0) d = -d; if (d > 2e-6) bad++ } END { exit bad > 0 }' && ok ||
    no "the written rmse is not that of the written ol and targets"
# a node of a fused layer (z1: the product and bias before the tanh) is formed when named:
# tanh of the written z1 is the written h1
expect 0 "$T" configFile=r.cntk Dir=r1 command=Write 'Write.outputNodeNames=(h1 : z1)' Write.outputPath=r1/z
paste -d ' ' r1/z.h1 r1/z.z1 | awk '{ for (i = 1; i <= 16; i++) { z = $(i + 16); t = (exp(2 * z) - 1) / (exp(2 * z) + 1)
    d = t - $i; if (d < 0) d = -d; if (d > 2e-6) bad++ } } END { exit bad > 0 || NR != 64 }' && ok ||
    no "the written z1 is not the h1 before its tanh"
expect 1 "$T" configFile=r.cntk Dir=r1 command=Write 'Write.outputNodeNames=W1'
has "$tmp/err" "outputNodeNames: 'W1' is a parameter of 16 x 192 values, not a column per sample"

# two text files, features and labels, read as one with both (in file order)
toy_ctf 'x + 0.5 * y > 0.75' >d.ctf
toy_cfg 1 >p.cfg
sed 's/ *|labels.*//' d.ctf >f.ctf
sed 's/^\(.*\)\(|labels.*\)$/\2/' d.ctf >l.ctf
sed '/reader = \[ readerType/,/input = \[ features/c\
    reader = [ randomize = false ; deserializers = ({ type = "CNTKTextFormatDeserializer" ; file = "f.ctf"\
        input = [ features = [ dim = 2 ; format = dense ] ] } : { type = "CNTKTextFormatDeserializer"\
        file = "l.ctf" ; input = [ labels = [ dim = 2 ; format = dense ] ] }) ]' p.cfg >two.cfg
expect 0 "$T" configFile=p.cfg Dir=one train.reader.randomize=false
expect 0 "$T" configFile=two.cfg Dir=two
cmp -s one/m.dnn two/m.dnn && ok || no "features and labels in two files: another model than in one"
has "$tmp/err" "Finished Epoch[ 3 of 3]"

# errors
head -n 255 data/train_regrLabels.txt >short.txt
awk '{ printf "%d %s\n", (NR == 3 ? 7 : NR - 1), $0 }' data/train_regrLabels.txt >ids.txt
wrong() { # NAME READER: train with it
    expect 1 "$T" configFile=r.cntk Dir=w command=Train "Train.reader=$2"
}
wrong short "$(ds data/train_map.txt short.txt)"
has "$tmp/err" "short.txt: 255 sequences, where the first deserializer's data/train_map.txt has 256: the two are read sequence by sequence (the k-th with the k-th), so they must have as many"
wrong ids "$(ds data/train_map.txt ids.txt)"
has "$tmp/err" "ids.txt:3: error: sequence id 7 where 2 is expected"
three=$(ds data/train_map.txt data/train_regrLabels.txt | sed 's/}) \]$/} : { type = "CNTKTextFormatDeserializer" ; file = "x" ; input = { y = { dim = 1 } } }) ]/')
wrong three "$three"
has "$tmp/err" "3 deserializers: partrain composes at most two (an image or text deserializer, then a CNTKTextFormatDeserializer)"
swapped='[ deserializers = ({ type = "CNTKTextFormatDeserializer" ; file = "data/train_regrLabels.txt" ; input = { regrLabels = { dim = 3 ; format = "dense" } } } : { type = "ImageDeserializer" ; file = "data/train_map.txt" ; input = { features = { transforms = ( { type = "Scale" ; width = 8 ; height = 8 ; channels = 3 } ) } ; ignored = { labelDim = 10 } } }) ]'
wrong swapped "$swapped"
has "$tmp/err" "the second deserializer is an ImageDeserializer"
twice=$(ds data/train_map.txt data/train_regrLabels.txt | sed 's/regrLabels = { dim = 3/ignored = { dim = 3/')
wrong twice "$twice"
has "$tmp/err" "input 'ignored' is declared by both deserializers"
finish composite_reader
