#!/bin/sh
# action=writeWordAndClass (CNTK's vocabulary and word classes of a text, src/train/word_class.c):
# the files of a small text, worked out by hand (the counts, begin and end words added as CNTK
# adds them, unk absorbing the words left out, equal counts in first-occurrence order, the
# classes, the formats); a class no word falls in; nbrClass=0; a count printed as C++ prints a
# double; a generated text of 400 words against a re-computation in awk; makeMode; two ranks;
# the errors (keys missing or wrong, an empty text, a DOS line end, an output that is a symlink,
# the input or another output) and that a failed run leaves the old files as they were.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
cd "$tmp"

# same FILE [FORMAT]: FILE's content is exactly printf FORMAT, else the text on standard
# input (a redirection, not a pipe: a pipe's subshell would lose the count)
same() {
    if [ $# -eq 2 ]; then printf "$2" >"$tmp/want"; else cat >"$tmp/want"; fi
    if cmp -s "$tmp/want" "$1"; then ok; else
        no "$1 is not as expected"
        diff "$tmp/want" "$1" | head -20
    fi
}

printf 'the cat sat on the mat\n  the\tdog sat  \n<unk> cat ran\na b c\n' >text.txt
cat >w.cfg <<'CFG'
command = wc
wc = [
    action = "writeWordAndClass"
    inputFile = "text.txt"
    beginSequence = "</s>"
    endSequence = "</s>"
    outputVocabFile = "$Dir$/vocab.txt"
    outputWord2Cls = "$Dir$/word2cls.txt"
    outputCls2Index = "$Dir$/cls2idx.txt"
    outputMappingFile = "$Dir$/map.txt"
    vocabSize = "6"
    nbrClass = "3"
    cutoff = 0
    printValues = true
]
CFG

# 1. by hand: each line counts its words and one </s> (added at its end; the one put in front
# is skipped as CNTK skips it). </s> 4, the 3, cat 2, sat 2, then on, mat, dog, <unk>, ran, a,
# b, c once each: the 5 first words other than <unk> are kept (cat before sat, on before mat:
# first occurrence), <unk> = 1 + 6 words merged = 7. total 19, dd = sum sqrt(c / 19) = 2.3415;
# df = 0.259 (class 0), 0.455 > 1/3 (1), 0.625 (1), 0.763 > 2/3 (2), 0.902 (2), 1 (2).
expect 0 "$T" configFile=w.cfg Dir=a
tab=$(printf '\t')
same a/vocab.txt <<EOF
     0${tab}     7${tab}<unk>${tab}0
     1${tab}     4${tab}</s>${tab}1
     2${tab}     3${tab}the${tab}1
     3${tab}     2${tab}cat${tab}2
     4${tab}     2${tab}sat${tab}2
     5${tab}     1${tab}on${tab}2
EOF
same a/word2cls.txt '0\n1\n1\n2\n2\n2\n'
same a/cls2idx.txt '0\n1\n3\n'
same a/map.txt '<unk>\n</s>\nthe\ncat\nsat\non\n'
for l in 'Mapping file       --> a/map.txt' 'Vocabulary file    --> a/vocab.txt' \
    'Word-to-class map  --> a/word2cls.txt' 'Class-to-index map --> a/cls2idx.txt' \
    'Reading input file inputFile: text.txt' 'Vocabulary size 12.' \
    'Created vocabulary file with 6 entries.' 'Created class-to-index map with 3 entries.'; do
    has "$tmp/err" "$l"
done
[ "$(ls -A a | tr '\n' ' ')" = "cls2idx.txt map.txt vocab.txt word2cls.txt " ] && ok ||
    no "a/ holds more than the four files (a temporary left?): $(ls -A a)"

# 2. makeMode: nothing to do while the outputs are at least as new as the text
ls -li a >before
expect 0 "$T" configFile=w.cfg Dir=a
has "$tmp/err" "All output files up to date."
hasnt "$tmp/err" "Reading input file"
ls -li a | cmp -s before - && ok || no "makeMode rewrote up-to-date files"
touch -d '2000-01-01' a/cls2idx.txt # one output older than the text: all are made again
expect 0 "$T" configFile=w.cfg Dir=a
has "$tmp/err" "Created class-to-index map with 3 entries."
same a/cls2idx.txt '0\n1\n3\n'
expect 0 "$T" configFile=w.cfg Dir=a wc.makeMode=false
has "$tmp/err" "Reading input file inputFile: text.txt"

# 3. a class no word falls in (x alone passes 1/2: class 0 is empty, CNTK's 0 for it), unk
# absent from the text (counted 0 + </s> merged, last of the equal counts); cutoff=1 lowers
# vocabSize 5 to the 1 word counted more than once: then nbrClass=2 is too many
printf 'x x x x x x x x y\n' >x.txt
expect 0 "$T" configFile=w.cfg Dir=x wc.inputFile=x.txt wc.vocabSize=3 wc.nbrClass=2
same x/vocab.txt <<EOF
     0${tab}     8${tab}x${tab}1
     1${tab}     1${tab}y${tab}1
     2${tab}     1${tab}<unk>${tab}1
EOF
same x/cls2idx.txt '0\n0\n'
expect 1 "$T" configFile=w.cfg Dir=x2 wc.inputFile=x.txt wc.vocabSize=5 wc.nbrClass=2 wc.cutoff=1
has "$tmp/err" "Actual vocabulary size after cutoff:1"
has "$tmp/err" "x.txt: error: nbrClass = 2 classes for a vocabulary of 1 words"

# 4. nbrClass=0: every word in byte order, class 0, nothing merged, no class files; begin and
# end differ (both counted); a line holding "<s> " or " </s>" gets no second one
printf 'b a\n<s> a </s> b\n' >two.txt
expect 0 "$T" configFile=w.cfg Dir=n wc.inputFile=two.txt wc.nbrClass=0 wc.beginSequence="<s>"
same n/vocab.txt <<EOF
     0${tab}     2${tab}</s>${tab}0
     1${tab}     2${tab}<s>${tab}0
     2${tab}     2${tab}a${tab}0
     3${tab}     2${tab}b${tab}0
EOF
[ ! -e n/word2cls.txt ] && [ ! -e n/cls2idx.txt ] && ok || no "class files written with nbrClass=0"

# 5. a count of 1234567 is written as C++ writes a double (6 significant digits)
awk 'BEGIN { for (i = 0; i < 1234567; i++) printf "z "; print "" }' >big.txt
expect 0 "$T" configFile=w.cfg Dir=big wc.inputFile=big.txt wc.vocabSize=2 wc.nbrClass=1
same big/vocab.txt '     0\t     1.23457e+06\tz\t0\n     1\t     1\t<unk>\t0\n'

# 6. 400 words of made-up frequencies in 500 lines, against the same steps in awk
awk 'BEGIN { s = 99; for (l = 0; l < 500; l++) { n = 5 + l % 17; line = "";
    for (k = 0; k < n; k++) { s = (s * 1103515245 + 12345) % 2147483648;
        w = int(400 * (s / 2147483648) ^ 2); line = line (k ? (k % 5 ? " " : "\t") : "") "w" w }
    if (l % 9 == 0) line = "  " line " "; if (l % 13 == 0) line = line " <unk>"; print line } }' >gen.txt
expect 0 "$T" configFile=w.cfg Dir=g wc.inputFile=gen.txt wc.vocabSize=350 wc.nbrClass=20 \
    wc.cutoff=1
# counts with first occurrences (each line: its words, then </s>), most frequent first
awk '{ for (i = 1; i <= NF; i++) { if (!($i in c)) f[$i] = n++; c[$i]++ }
    if (!("</s>" in c)) f["</s>"] = n++; c["</s>"]++ }
    END { for (w in c) print c[w], f[w], w }' gen.txt | sort -k1,1nr -k2,2n >counts
# the 349 first other than <unk>, <unk> absorbing the rest, then the classes
awk -v V=350 -v C=20 '{ if ($3 == "<unk>") { u += $1; uf = $2 } else if (k < V - 1) {
        k++; cnt[k] = $1; fo[k] = $2; wd[k] = $3 } else u += $1 }
    END { if (uf == "") uf = 1e9; k++; cnt[k] = u; fo[k] = uf; wd[k] = "<unk>"
        for (i = 1; i <= k; i++) print cnt[i], fo[i], wd[i] }' counts | sort -k1,1nr -k2,2n |
    awk -v C=20 '{ c[NR] = $1; w[NR] = $3; t += $1 }
    END { for (i = 1; i <= NR; i++) dd += sqrt(c[i] / t)
        for (i = 1; i <= NR; i++) { df += sqrt(c[i] / t) / dd; if (df > 1) df = 1
            if (df > (k + 1) / C && k < C) k++
            printf "     %d\t     %g\t%s\t%d\n", i - 1, c[i], w[i], k } }' >want.txt
same g/vocab.txt <want.txt
cut -f4 want.txt >want.w2c
same g/word2cls.txt <want.w2c
awk '!($1 in f) { f[$1] = NR - 1 } END { for (c = 0; c < 20; c++) print f[c] + 0 }' want.w2c >want.c2i
same g/cls2idx.txt <want.c2i
[ "$(cut -f4 want.txt | sort -u | wc -l)" -eq 20 ] && ok || no "the generated text has not 20 classes"

# 7. two ranks: rank 0 writes the same files
command -v "${MPIEXEC:-mpiexec}" >/dev/null && {
    expect 0 mpi -n 2 "$T" configFile=w.cfg Dir=m
    for f in vocab.txt word2cls.txt cls2idx.txt map.txt; do same m/$f <a/$f; done
    [ "$(count "$tmp/err" 'Created vocabulary file')" -eq 1 ] && ok || no "not one rank wrote"
}

# 8. errors: where and what, and nothing written over
ls -li a >before
expect 1 "$T" configFile=w.cfg Dir=a wc.makeMode=false wc.inputFile=x.txt wc.vocabSize=3 \
    wc.nbrClass=4
has "$tmp/err" "<command line>:arg6: error: nbrClass: 4 classes for vocabSize = 3 words"
sed '/beginSequence/d' w.cfg >nob.cfg
expect 1 "$T" configFile=nob.cfg Dir=a
has "$tmp/err" "nob.cfg:2:1: error: wc: required key 'beginSequence' is not set"
expect 1 "$T" configFile=w.cfg Dir=a wc.endSequence=""
has "$tmp/err" 'error: endSequence: expected one word (not empty, without spaces or tabs), got ""'
sed '/outputCls2Index/d' w.cfg >noc.cfg
expect 1 "$T" configFile=noc.cfg Dir=a
has "$tmp/err" "noc.cfg:2:1: error: wc: nbrClass = 3 needs outputCls2Index"
: >empty.txt
expect 1 "$T" configFile=w.cfg Dir=a wc.makeMode=false wc.inputFile=empty.txt
has "$tmp/err" "empty.txt:1: error: inputFile is empty"
printf 'a b\nc d\ne f\r\n' >dos.txt
expect 1 "$T" configFile=w.cfg Dir=a wc.makeMode=false wc.inputFile=dos.txt
has "$tmp/err" "dos.txt:3: error: the line ends in a carriage return"
expect 1 "$T" configFile=w.cfg Dir=a wc.makeMode=false wc.cutoff=5
has "$tmp/err" "text.txt: error: no word remained after cutoff with threshold 5"
ls -li a | cmp -s before - && ok || no "a failed run changed the old files"
echo keep >target.txt
ln -s ../target.txt a/link.txt
expect 1 "$T" configFile=w.cfg Dir=a wc.outputWord2Cls=a/link.txt
has "$tmp/err" "<command line>:arg3: error: outputWord2Cls: 'a/link.txt' is a symbolic link"
[ "$(cat target.txt)" = keep ] && [ -L a/link.txt ] && ok || no "written through the symlink"
expect 1 "$T" configFile=w.cfg Dir=a wc.outputMappingFile=text.txt
has "$tmp/err" "outputMappingFile: 'text.txt' is the inputFile of wc; refusing to write over it"
expect 1 "$T" configFile=w.cfg Dir=a wc.outputCls2Index=a/vocab.txt
has "$tmp/err" "outputCls2Index: 'a/vocab.txt' is also outputVocabFile"
expect 1 "$T" configFile=w.cfg Dir=a wc.vocabSize=1
has "$tmp/err" "vocabSize: 1 is out of range: must be >= 2"
finish word_class
