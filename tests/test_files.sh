#!/bin/sh
# Safe writes (issue 19, item 3), with the real trainer on toy data: nothing is written
# through a symlink (at the model path or at a temporary's name), nothing is written over
# an input (config or data file), temporaries of dead runs are removed, a log that cannot
# be written fails the run (exit 3), a model file cannot make the trainer read other files,
# and --print-config creates no files.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"
toy_ctf 'x > y' >d.ctf
toy_cfg 0 | sed 's/maxEpochs = 3/maxEpochs = 2/' >t.cfg
printf 'precious\n' >victim
sums() { cksum d.ctf t.cfg victim >"$1"; }
sums before
unchanged() { sums after; if cmp -s before after; then ok; else no "an input changed ($1)"; fi; }
tr() { timeout 120 "$T" configFile=t.cfg Dir=. "$@"; }

# a symlink at the model path: refused at start-up, the file it points to unchanged
ln -s victim m.dnn
expect 1 tr
has "$tmp/err" "modelPath: './m.dnn' is a symbolic link, and nothing is written through a symlink"
unchanged "symlink at modelPath"
[ -L m.dnn ] && ok || no "m.dnn is no longer the planted link"
rm m.dnn
# ... and at an epoch's model file: the save of that epoch fails, naming it
ln -s victim m.dnn.1
expect 1 tr train.makeMode=false
has "$tmp/err" "m.dnn.1: error: cannot write model file: it is a symbolic link"
unchanged "symlink at modelPath.1"
rm -f m.dnn*
# links planted at the names the temporaries once had (path.tmp, path.tmp.PID): the
# temporaries now have unpredictable names created with O_EXCL, so the run writes safely
for f in m.dnn.1 m.dnn.2 m.dnn; do ln -s victim "$f.tmp"; done
expect 0 tr
unchanged "links at the old temporary names"
[ -f m.dnn ] && [ ! -L m.dnn ] && ok || no "m.dnn was not written"
rm -f m.dnn* .m.dnn*

# an output over an input: refused before anything is written, naming both
expect 1 tr stderr=d.ctf
has "$tmp/err" "<command line>:arg3: error: stderr: '$tmp/d.ctf' is an input (the data file of train.reader, t.cfg:"
expect 1 tr stderr=./t.cfg
has "$tmp/err" "error: stderr: '$tmp/t.cfg' is an input (a config file); refusing to write over it"
expect 1 tr train.modelPath=d.ctf
has "$tmp/err" "error: modelPath: '$tmp/d.ctf' is an input (the data file of train.reader"
expect 1 tr train.modelPath=t.cfg
has "$tmp/err" "error: modelPath: '$tmp/t.cfg' is an input (a config file)"
cp d.ctf d.ctf.1 && cksum d.ctf.1 >b1 # modelPath.E is written too
expect 1 tr train.modelPath=d.ctf train.reader.file=d.ctf.1
has "$tmp/err" "error: modelPath: '$tmp/d.ctf.1' is an input (the data file of train.reader"
cksum d.ctf.1 | cmp -s - b1 && ok || no "d.ctf.1 changed"
expect 1 tr train.SGD.ParallelTrain.perfStatsFile=d.ctf
has "$tmp/err" "error: perfStatsFile: '$tmp/d.ctf' is an input"
expect 1 tr perfStatsFile=d.ctf # set outside ParallelTrain, read from there all the same
has "$tmp/err" "<command line>:arg3: error: perfStatsFile: '$tmp/d.ctf' is an input"
expect 1 tr train.SGD.ParallelTrain.timelineFile=d.ctf
has "$tmp/err" "error: timelineFile: '$tmp/d.ctf' is an input (the data file of train.reader"
expect 1 tr timelineFile=t.cfg
has "$tmp/err" "<command line>:arg3: error: timelineFile: '$tmp/t.cfg' is an input (a config file)"
cp d.ctf d.ctf.rank1 # rank 1 writes PATH.rank1
expect 1 tr timelineFile=d.ctf train.reader.file=d.ctf.rank1
has "$tmp/err" "error: timelineFile: '$tmp/d.ctf.rank1' is an input"
rm d.ctf.rank1
expect 1 tr stderr=m.dnn
has "$tmp/err" "error: stderr: 'm.dnn' is also written as modelPath (t.cfg:5:"
# on two ranks: every rank stops (no hang), the data file intact
mpi -n 2 "$T" configFile=t.cfg Dir=. stderr=d.ctf >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && ok || { no "2 ranks, stderr=d.ctf: wanted exit 1"; cat "$tmp/err"; }
has "$tmp/err" "error: stderr: '$tmp/d.ctf' is an input"
unchanged "outputs over inputs"
[ ! -e m.dnn ] && [ ! -e m.dnn.1 ] && ok || no "a refused run wrote a model"

# a symlink as the log or as the timeline: refused; a device is fine
symlinked() { # KEY MESSAGE
    ln -s victim lnk
    expect 1 tr "$1=lnk"
    has "$tmp/err" "$2"
    unchanged "symlink as $1"
    expect 0 tr "$1=/dev/null"
    rm -f m.dnn* lnk
}
symlinked stderr "cannot open log file 'lnk': it is a symbolic link to a file"
symlinked timelineFile "error: cannot write timelineFile 'lnk': it is a symbolic link to a file"

# temporaries of dead runs of this host are removed, with a log line; those of another
# host, or of a live process, stay
host=$(uname -n | sed 's/[^A-Za-z0-9_-]/_/g' | cut -c1-64)
dead=$(sh -c 'echo $$')
for f in ".m.dnn.1.tmp.$host.$dead.abcdef" ".m.dnn.2.ckp.tmp.$host.$dead.ghijkl" \
    ".m.dnn.tmp.otherhost.$dead.abcdef" ".m.dnn.tmp.$host.$$.abcdef" ".m.dnnx.tmp.$host.$dead.abcdef"; do
    printf 'partial' >"$f"
done
expect 0 tr
has "$tmp/err" "Removed './.m.dnn.1.tmp.$host.$dead.abcdef', a temporary file of a run that did not finish"
has "$tmp/err" "Removed './.m.dnn.2.ckp.tmp.$host.$dead.ghijkl'"
[ ! -e ".m.dnn.1.tmp.$host.$dead.abcdef" ] && [ ! -e ".m.dnn.2.ckp.tmp.$host.$dead.ghijkl" ] && ok ||
    no "stale temporaries of a dead pid were kept"
[ -e ".m.dnn.tmp.otherhost.$dead.abcdef" ] && [ -e ".m.dnn.tmp.$host.$$.abcdef" ] &&
    [ -e ".m.dnnx.tmp.$host.$dead.abcdef" ] && ok || no "a temporary that is not stale was removed"
[ "$(ls -a | grep -c '\.tmp\.')" -eq 3 ] && ok || { no "temporaries left behind"; ls -a; }
rm -f m.dnn* .m.dnn*

# a log that cannot be written (disk full): exit 3 and a message on the terminal
expect 3 tr stderr=/dev/full
has "$tmp/err" "error: cannot write log file '/dev/full' (stderr=): No space left on device"

# a model file's description cannot read other files: include= and $variables$ refused
# (hand-made version-1 files, little-endian: description, no parameters, checksum)
printf 'hunter2 is the password\n' >secret.txt
printf '\120\124\115\117\104\105\114\032\001\000\000\000\004\003\002\001\070\000\000\000\000\000\000\000\042\000\000\000\151\156\143\154\165\144\145\075\163\145\143\162\145\164\056\164\170\164\012\154\141\171\145\162\123\151\172\145\163\075\062\072\062\012\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\310\175\252\327\166\161\050\154' >inc.dnn
printf '\120\124\115\117\104\105\114\032\001\000\000\000\004\003\002\001\054\000\000\000\000\000\000\000\030\000\000\000\154\141\171\145\162\123\151\172\145\163\075\062\072\044\150\044\072\062\012\150\075\062\064\012\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\326\276\050\134\351\323\065\102' >var.dnn
rd='reader=[readerType=CNTKTextFormatReader;file=d.ctf;input=[features=[dim=2;format=dense];labels=[dim=2;format=dense]]]'
expect 1 timeout 60 "$T" command=t "t=[action=test;modelPath=inc.dnn;$rd]"
has "$tmp/err" "inc.dnn:1:1: error: include= is not allowed here: this text may not read files; in the network description of model file inc.dnn"
hasnt "$tmp/err" "hunter2"
expect 1 timeout 60 "$T" command=t "t=[action=test;modelPath=var.dnn;$rd]"
has "$tmp/err" "var.dnn:1:12: error: '\$' in the value of 'layerSizes': variables (\$name\$) are not allowed here"

# --print-config is a dry run: no log file
expect 0 tr --print-config stderr=dry.log
[ ! -e dry.log ] && ok || no "--print-config created the stderr= log file"
has "$tmp/out" "stderr = dry.log"

echo "test_files: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
