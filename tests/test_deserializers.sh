#!/bin/sh
# CNTK's composite-reader syntax, as CNTK's tutorials write the reader (Tutorials/HelloWorld-
# LogisticRegression/lr_bs.cntk): reader = { deserializers = ({ type =
# "CNTKTextFormatDeserializer" ... }) } trains exactly as readerType = CNTKTextFormatReader with
# the deserializer's keys (the same criteria every epoch, cvReader included), --print-config
# prints it, and what partrain does not read is refused naming FILE:LINE:COL.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
toy_with_cv 1 # d.ctf, cv.ctf, p.cfg (the readerType form), $cv
# ds.cfg: p.cfg with its reader in the composite form; chunkSizeInBytes (which decides the
# shuffle) only inside the deserializer, randomize and verbosity in the reader block
grep -v 'reader = \[\|input = \[ features' p.cfg >base.cfg # (no reader)
sed '$d' base.cfg >ds.cfg
cat >>ds.cfg <<'CFG'
    reader = {
        verbosity = 0 ; randomize = true
        deserializers = ({
            type = "CNTKTextFormatDeserializer" ; module = "CNTKTextFormatReader"
            file = "d.ctf"
            chunkSizeInBytes = 9000 ; maxErrors = 0 ; skipSequenceIds = false
            input = [
                features = [ dim = $dimension$ ; format = "dense" ]
                labels = [ dim = 2 ; format = "dense" ]
            ]
        })
    }
]
dimension = 2
CFG
dscv="train.cvReader={randomize=false;deserializers=({type=CNTKTextFormatDeserializer;file=cv.ctf;input=[features=[dim=2;format=dense];labels=[dim=2;format=dense]]})}"
# validation criteria of each epoch, "ce err" per line
vcrit() { sed -n 's/^Finished Epoch.*\[Validate\] CrossEntropyWithSoftmax = \([0-9.]*\) \* 600; EvalClassificationError = \([0-9.]*\) \* 600$/\1 \2/p' "$1"; }
for form in rt ds; do
    cfg=p.cfg arg=$cv
    [ $form = ds ] && cfg=ds.cfg arg=$dscv
    expect 0 "$T" configFile=$cfg Dir=$form "$arg"
    cp "$tmp/err" $form.err
    crit $form.err >$form.txt
    vcrit $form.err >$form.cv
    [ "$(wc -l <$form.txt)" -eq 3 ] && [ "$(wc -l <$form.cv)" -eq 3 ] && ok ||
        { no "$form: wanted 3 training and 3 [Validate] lines"; cat $form.err; }
done
hasnt ds.err "warning"
cmp -s rt.txt ds.txt && ok || { no "training criteria differ between the forms"; paste rt.txt ds.txt; }
cmp -s rt.cv ds.cv && ok || { no "validation criteria differ between the forms"; paste rt.cv ds.cv; }
# (not by chance: without the deserializer's chunkSizeInBytes the shuffle differs)
sed 's/chunkSizeInBytes = 9000 ; //' ds.cfg >ds32.cfg
expect 0 "$T" configFile=ds32.cfg Dir=ds32
crit "$tmp/err" >ds32.txt
cmp -s rt.txt ds32.txt && no "the deserializer's chunkSizeInBytes made no difference" || ok

# --print-config prints the value as written, variables resolved, and checks the config
expect 0 "$T" --print-config configFile=ds.cfg Dir=x "$dscv"
has "$tmp/out" "        deserializers = ({"
has "$tmp/out" '                features = [ dim = 2 ; format = "dense" ]'
has "$tmp/out" "        })    # ds.cfg:14:9"
has "$tmp/out" '        deserializers = "({type=CNTKTextFormatDeserializer;file=cv.ctf;input=[features=[dim=2;format=dense];labels=[dim=2;format=dense]]})"    # <command line>:arg4'

# errors: run base.cfg with the reader of r.cfg, which must fail naming FILE:LINE:COL
fails() {
    printf '%s\n' "$1" >r.cfg
    expect 1 "$T" configFile=base.cfg configFile=r.cfg Dir=e
    has "$tmp/err" "$2"
}
fails 'train.reader = { deserializers = ({ type = "CNTKTextFormatDeserializer"; file = d.ctf
    input = [ features = [ dim = 2; format = dense ]; labels = [ dim = 2; format = dense ] ]
  }:{ type = "HTKMLFDeserializer"; module = "HTKDeserializers"
      input = [ labels = [ dim = 2; mlfFile = x.mlf ] ] }) }' \
    "r.cfg:1:35: error: train.reader.deserializers: a text-format deserializer composes with an HTKFeatureDeserializer (its labels), not with an MLF's labels"
fails 'train.reader = { deserializers = ({ type = "HTKFeatureDeserializer"; module = "HTKDeserializers" }) }' \
    "r.cfg:1:35: error: train.reader.deserializers: required key 'input' is not set (input = [ NAME = [ ... ] ]: the one stream of this deserializer)"
fails 'train.reader = { deserializers = ({ type = "Base64ImageDeserializer"; module = "ImageReader" }) }' \
    "r.cfg:1:44: error: type=Base64ImageDeserializer is not supported by partrain (supported: ImageDeserializer)"
# an ImageDeserializer (tests/test_image_reader.sh) without its map file
fails 'train.reader = { deserializers = ({ type = "ImageDeserializer"; module = "ImageReader" }) }' \
    "r.cfg:1:35: error: train.reader.deserializers: required key 'file' is not set (the map file: PATH<TAB>LABEL"
fails 'train.reader = { deserializers = ({ module = "CNTKBinaryReader"; file = d.ctf }) }' \
    "r.cfg:1:46: error: module=CNTKBinaryReader is not supported by partrain (supported: CNTKTextFormatReader)"
fails 'train.reader = { deserializers = ({ type = "CNTKTextFormatDeserializer"
    input = [ features = [ dim = 2; format = dense ]; labels = [ dim = 2; format = dense ] ] }) }' \
    "r.cfg:1:35: error: train.reader.deserializers: required key 'file' is not set (the CTF data file)"
fails 'train.reader = { deserializers = ({ module = "CNTKTextFormatReader"; file = d.ctf }) }' \
    "r.cfg:1:35: error: train.reader.deserializers: required key 'input' is not set (the input streams: input = [ features = [ dim=784; format=dense ] ... ])"
fails 'train.reader = { deserializers = ({ file = d.ctf
    input = [ features = [ dim = 2; format = dense ]; labels = [ dim = 2; format = dense ] ] }) }' \
    'r.cfg:1:35: error: train.reader.deserializers: which deserializer? expected type = "CNTKTextFormatDeserializer" (or module = "CNTKTextFormatReader"): partrain reads CNTK text format'
fails 'train.reader = { readerType = "CNTKTextFormatReader"
    deserializers = ({ type = "CNTKTextFormatDeserializer"; file = d.ctf }) }' \
    "r.cfg:2:5: error: reader: 'deserializers' and 'readerType' (set at r.cfg:1:18) exclude each other; give only one"
fails 'train.reader = { file = d.ctf ; deserializers = ({ type = "CNTKTextFormatDeserializer"
    input = [ features = [ dim = 2; format = dense ]; labels = [ dim = 2; format = dense ] ] }) }' \
    'r.cfg:1:18: error: train.reader.file: the reader has deserializers, so file= belongs inside the deserializer: deserializers = ({ type = "CNTKTextFormatDeserializer"; file = ...; input = [ ... ] })'
fails 'train.reader = { deserializers = ({ type = "CNTKTextFormatDeserializer" } { file = d.ctf }) }' \
    "r.cfg:1:75: error: train.reader.deserializers: expected ':' or ')' after a block, got '{' (an array of blocks is ( [ ... ] : [ ... ] ))"
fails 'train.reader = { randomize = false }' \
    "r.cfg:1:1: error: train.reader: required key 'readerType' is not set (the reader, CNTKTextFormatReader, with file= and input= in this block (or CNTK's ImageReader, a map file= and its image and class blocks: README \"Images\"), or CNTK's HTKMLFReader (README \"Speech\"), or CNTK's LMSequenceReader (README \"Language models\"); required unless deserializers = ({ ... }) (CNTK's composite form) stands instead)"
# a value inside the deserializer, and a cvReader given on the command line
fails 'train.reader = { deserializers = ({ type = "CNTKTextFormatDeserializer"; file = d.ctf
    input = [ features = [ dim = 2; format = dense ]
              labels = [ dim = 2; format = "dens" ] ] }) }' \
    'r.cfg:3:44: error: format: expected one of dense|sparse, got "dens"'
expect 1 "$T" configFile=p.cfg Dir=e "train.cvReader={deserializers=({type=ImageDeserializer;file=cv.ctf;input=[features=[dim=2;format=dense]]})}"
has "$tmp/err" "<command line>:arg3: warning: unknown key 'train.cvReader.deserializers.input.features.dim' in image input stream is ignored"
has "$tmp/err" "<command line>:arg3: error: an ImageDeserializer's input has one stream with transforms = ( ... ) (the image) and one with labelDim = N (its class); found 0 and 0"
# a reader key inside the deserializer: CNTK ignores it there, partrain says so (strictConfig:
# refuses it)
sed 's/file = "d.ctf"/file = "d.ctf" ; randomize = false/' ds.cfg >rnd.cfg
expect 0 "$T" configFile=rnd.cfg Dir=rnd
has "$tmp/err" "rnd.cfg:16:30: warning: unknown key 'train.reader.deserializers.randomize' in deserializer is ignored ('randomize' belongs in the reader block)"
crit "$tmp/err" >rnd.txt
cmp -s rt.txt rnd.txt && ok || { no "randomize inside the deserializer changed the run"; paste rt.txt rnd.txt; }
expect 1 "$T" configFile=rnd.cfg Dir=rnd strictConfig=true
has "$tmp/err" "rnd.cfg:16:30: error: unknown key 'train.reader.deserializers.randomize' in deserializer ('randomize' belongs in the reader block) (strictConfig=true)"
finish deserializers
