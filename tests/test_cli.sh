#!/bin/sh
# The trainer program as a user runs it (one process): options, exit codes, messages.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"

expect 0 "$T" --version
has "$tmp/out" "trainer (partrain) "
has "$tmp/out" "cpu backend: OpenBLAS"
expect 0 "$T" --help
has "$tmp/out" "usage: trainer"
has "$tmp/out" "--print-config"
expect 0 "$T" --help SGD
has "$tmp/out" "maxEpochs"
has "$tmp/out" "learningRatesPerSample"
expect 2 "$T" --help nosuchblock
has "$tmp/err" "no block named 'nosuchblock'"
# a command block by the name the list gives it, or by its action
expect 0 "$T" --help 'command block (action=test)'
has "$tmp/out" "command block (action=test) = [ ... ]"
expect 0 "$T" --help write
has "$tmp/out" "command block (action=write) = [ ... ]"
expect 2 "$T"
has "$tmp/err" "usage: trainer"

cfg="$S/configs/fashion-mlp.cfg"
# run from a scratch directory: ./data/fashion-mnist is not there, so nothing trains for real
cd "$tmp"
fl=$(grep -n 'file = "\$DataDir\$/train.ctf"' "$cfg" | cut -d: -f1)
expect 0 "$T" --print-config configFile="$cfg" train.SGD.maxEpochs=3
has "$tmp/out" "        maxEpochs = 3    # <command line>:arg3"
has "$tmp/out" "file = ./data/fashion-mnist/train.ctf    # $cfg:$fl:9"
# an argument that is one block without a name is its content, as CNTK's parser reads an
# opening brace (its RegrSimple test passes "[command=TrainConvNet:Test]"); a block with
# more after it is still an error
expect 0 "$T" --print-config configFile="$cfg" "[command=train; traceLevel = 0]"
has "$tmp/out" "command = train    # <command line>:arg3"
has "$tmp/out" "traceLevel = 0    # <command line>:arg3"
expect 1 "$T" --print-config configFile="$cfg" "[command=train] x=1"
has "$tmp/err" "<command line>:arg3: error: a block needs a name"
# a value that is a block's name, `reader = $rd$`, stands for that block: no problem to mark
printf 'rd = [ readerType = CNTKTextFormatReader ; file = x.txt ; input = [ x = [ dim = 1 ; format = dense ] ] ]\nwrite = [ action = write ; modelPath = m.dnn ; outputPath = o ; reader = $rd$ ]\ncommand = write\n' >ref.cfg
expect 0 "$T" --print-config configFile=ref.cfg
has "$tmp/out" "    reader = \$rd\$    # ref.cfg:2:65: the block 'rd' (ref.cfg:1:1)"
# and so inside CNTK's array of deserializer blocks (G2P.cntk: input = $cntkReaderInputDef$),
# each element printed as a block
printf 'inp = { x = { dim = 1 ; format = dense } }\nwrite = [ action = write ; modelPath = m.dnn ; outputPath = o\n  reader = { deserializers = ({ type = "CNTKTextFormatDeserializer" ; file = x.txt ; input = $inp$ }) } ]\ncommand = write\n' >ds.cfg
expect 0 "$T" --print-config configFile=ds.cfg
has "$tmp/out" "        deserializers = (    # ds.cfg:3:14"
has "$tmp/out" "                input = \$inp\$    # ds.cfg:3:86: the block 'inp' (ds.cfg:1:1)"

# truncated = true in a text reader's block: only the HTK readers cut sequences into segments
expect 1 "$T" configFile="$cfg" train.reader.truncated=true
has "$tmp/err" "<command line>:arg2: error: truncated = true: truncated back-propagation through time is implemented for the HTK readers (frameMode = false)"
expect 1 "$T" configFile="$cfg" train.reader.truncated=false # accepted: then the data is missing
has "$tmp/err" "cannot read data file './data/fashion-mnist/train.ctf'"
expect 1 "$T" configFile="$cfg" train.SGD.minibatchSize=25x
has "$tmp/err" "<command line>:arg2: error: train.SGD.minibatchSize: expected an integer, got \"25x\""
expect 1 "$T" configFile="$cfg" cpuGemm=fast
has "$tmp/err" "<command line>:arg2: error: cpuGemm: expected one of auto|openblas|avx512, got \"fast\""
expect 1 "$T" configFile="$cfg"
has "$tmp/err" "$cfg:$fl:16: error: cannot read data file './data/fashion-mnist/train.ctf': No such file or directory"

# unknown keys: a warning with a suggestion, an error with strictConfig
expect 1 "$T" configFile="$cfg" train.SGD.maxEpoch=3
has "$tmp/err" "<command line>:arg2: warning: unknown key 'train.SGD.maxEpoch' in SGD is ignored (did you mean 'maxEpochs'?)"
expect 1 "$T" configFile="$cfg" train.SGD.maxEpoch=3 strictConfig=true
has "$tmp/err" "<command line>:arg2: error: unknown key 'train.SGD.maxEpoch' in SGD (did you mean 'maxEpochs'?) (strictConfig=true)"

# a real CNTK-era config with BrainScript and NDL blocks loads, prints and validates
expect 0 "$T" --print-config configFile="$S/tests/data/cntk-legacy.cfg"
has "$tmp/out" "BrainScriptNetworkBuilder = {"
has "$tmp/out" "(kept as text: not config syntax)"
has "$tmp/out" "file = ../Data/Train-28x28_cntk_text.txt"
hasnt "$tmp/err" "warning"
# (CNTK needs modelPath before it looks for a network builder, and so does partrain)
expect 1 "$T" --print-config configFile="$S/tests/data/cntk-legacy.cfg" command=speechTrain
has "$tmp/err" "error: speechTrain: required key 'modelPath' is not set"
# (a BrainScript network is the network now; --print-config does not evaluate it: training
# does, tests/test_bs_net.sh)
expect 0 "$T" --print-config configFile="$S/tests/data/cntk-legacy.cfg" command=speechTrain speechTrain.modelPath=m.dnn "speechTrain.reader=[readerType=CNTKTextFormatReader;file=x;input=[f=[dim=1;format=dense]]]"

# a .ini file through inih, with origins
cat >"$tmp/x.ini" <<'INI'
command = t
[t]
action = test
modelPath = m.dnn
[t.reader]
readerType = CNTKTextFormatReader
file = d.ctf
input = [ x = [ dim = 0 ; format = dense ] ]
INI
expect 1 "$T" configFile="$tmp/x.ini"
has "$tmp/err" "$tmp/x.ini:8:23: error: dim: 0 is out of range: must be >= 1"

# stderr= sends the log to a file (the error is also shown on the terminal); timestamps,
# and with them CNTK's name for the file: <stderr>_<command1>_<command2>.log
expect 1 "$T" configFile="$cfg" stderr="$tmp/log" timestamping=true train.SGD.bogus=1
has "$tmp/log_train_test.log" "cannot read data file './data/fashion-mnist/train.ctf'"
has "$tmp/err" "cannot read data file './data/fashion-mnist/train.ctf'"
if grep -Eq '^[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}: <command line>:arg4: warning: unknown key' "$tmp/log_train_test.log"; then ok; else no "timestamped warning in log"; cat "$tmp/log_train_test.log"; fi
: >"$tmp/log"
# the log's directory is created (as CNTK does); a path through a file is an error
expect 1 "$T" configFile="$cfg" stderr="$tmp/new/dir/log"
has "$tmp/new/dir/log" "cannot read data file"
expect 1 "$T" configFile="$cfg" stderr="$tmp/log/sub/file"
has "$tmp/err" "error: stderr=$tmp/log/sub/file: cannot open log file '$tmp/log/sub/file': '$tmp/log' exists and is not a directory"
# stderr=- (CNTK's GettingStarted tests pass it): the log on standard output, as CNTK's files
# take "-", and no file named "-"; with timestamping, CNTK's name for the file
here=$(pwd)
cd "$tmp" || exit 1
expect 1 "$T" configFile="$cfg" stderr=- train.SGD.bogus=1
has "$tmp/out" "warning: unknown key"
has "$tmp/out" "cannot read data file"
[ ! -e "$tmp/-" ] && ok || no "stderr=- wrote a file named '-'"
expect 1 "$T" configFile="$cfg" stderr=- timestamping=true
[ -s "$tmp/-_train_test.log" ] && ok || no "stderr=- timestamping=true: no '-_train_test.log'"
cd "$here" || exit 1

# bad files
printf 'a=1\nb=\377\n' >"$tmp/bad.cfg"
expect 1 "$T" configFile="$tmp/bad.cfg"
has "$tmp/err" "$tmp/bad.cfg:2:3: error: invalid UTF-8 (byte 0xFF); config files must be UTF-8"
expect 1 "$T" configFile="$tmp"
has "$tmp/err" "is a directory"
expect 1 "$T" configFile="$tmp/missing.cfg"
has "$tmp/err" "<command line>:arg1: error: cannot open config file '$tmp/missing.cfg': No such file or directory"
# exit codes (src/main.c): an unknown option is a usage error (2), before the config is read
expect 2 "$T" configFile="$cfg" --bogus
has "$tmp/err" "<command line>:arg2: error: unknown option '--bogus' (see trainer --help)"
expect 2 "$T" --bogus
expect 0 "$T" --help --bogus
# a model directory that cannot be created is a system failure (3), found before training:
# under a regular file, or under /proc
cat >"$tmp/d.ctf" <<'CTF'
|features 0.1 0.2 |labels 1 0
|features 0.7 0.3 |labels 0 1
CTF
toy_cfg 0 >"$tmp/p.cfg"
touch "$tmp/plain"
expect 3 "$T" configFile="$tmp/p.cfg" Dir="$tmp/plain/models"
has "$tmp/err" "error: '$tmp/plain' exists and is not a directory; while creating the directory of modelPath=$tmp/plain/models/m.dnn"
hasnt "$tmp/err" "Finished Epoch"
expect 3 "$T" configFile="$tmp/p.cfg" Dir=/proc/partrain-no/models
has "$tmp/err" "error: cannot create directory '/proc/partrain-no'"
hasnt "$tmp/err" "Finished Epoch"

finish cli
