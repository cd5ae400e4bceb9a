#!/bin/sh
# scripts/idx2ctf: exact CTF output for tiny IDX files, and clear errors for bad ones.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
C=$(cd "${top_builddir:-.}" && pwd)/scripts/idx2ctf
# 2 images of 2x3 pixels, labels 3 and 0
printf '\000\000\010\003\000\000\000\002\000\000\000\002\000\000\000\003\000\377\063\200\001\000\377\377\377\377\377\377' | gzip -c >"$tmp/img.gz"
printf '\000\000\010\001\000\000\000\002\003\000' | gzip -c >"$tmp/lab.gz"
expect 0 "$C" "$tmp/img.gz" "$tmp/lab.gz" "$tmp/out.ctf"
printf '%s\n' \
    '|labels 0 0 0 1 0 0 0 0 0 0 |features 0 1 0.2 0.502 0.003922 0' \
    '|labels 1 0 0 0 0 0 0 0 0 0 |features 1 1 1 1 1 1' >"$tmp/want"
if cmp -s "$tmp/want" "$tmp/out.ctf"; then ok; else no "dense output differs"; diff "$tmp/want" "$tmp/out.ctf"; fi
expect 0 "$C" --sequence "$tmp/img.gz" "$tmp/lab.gz" "$tmp/seq.ctf"
printf '%s\n' \
    '0 |labels 0 0 0 1 0 0 0 0 0 0 |features 0 1 0.2' \
    '0 |features 0.502 0.003922 0' \
    '1 |labels 1 0 0 0 0 0 0 0 0 0 |features 1 1 1' \
    '1 |features 1 1 1' >"$tmp/want"
if cmp -s "$tmp/want" "$tmp/seq.ctf"; then ok; else no "sequence output differs"; diff "$tmp/want" "$tmp/seq.ctf"; fi
# --raw: the grey levels as they are (CNTK's MNIST files), with --sequence too
expect 0 "$C" --raw "$tmp/img.gz" "$tmp/lab.gz" "$tmp/raw.ctf"
printf '%s\n' \
    '|labels 0 0 0 1 0 0 0 0 0 0 |features 0 255 51 128 1 0' \
    '|labels 1 0 0 0 0 0 0 0 0 0 |features 255 255 255 255 255 255' >"$tmp/want"
if cmp -s "$tmp/want" "$tmp/raw.ctf"; then ok; else no "raw output differs"; diff "$tmp/want" "$tmp/raw.ctf"; fi
expect 0 "$C" --sequence --raw "$tmp/img.gz" "$tmp/lab.gz" "$tmp/rawseq.ctf"
[ "$(sed -n 2p "$tmp/rawseq.ctf")" = '0 |features 128 1 0' ] && ok || no "raw sequence output differs"
expect 2 "$C" --gray "$tmp/img.gz" "$tmp/lab.gz" "$tmp/bad.ctf"
has "$tmp/err" "usage: idx2ctf [--sequence] [--raw] IMAGES.gz LABELS.gz OUT.ctf"
# errors: swapped files, truncated data, missing file, mismatched counts; no output left
expect 1 "$C" "$tmp/lab.gz" "$tmp/img.gz" "$tmp/bad.ctf"
has "$tmp/err" "not an IDX image file (magic 0x00000803 expected)"
printf '\000\000\010\003\000\000\000\002\000\000\000\002\000\000\000\003\000\377' | gzip -c >"$tmp/short.gz"
expect 1 "$C" "$tmp/short.gz" "$tmp/lab.gz" "$tmp/bad.ctf"
has "$tmp/err" "file size does not match the IDX header (truncated?)"
expect 1 "$C" "$tmp/none.gz" "$tmp/lab.gz" "$tmp/bad.ctf"
has "$tmp/err" "gzip -dc failed"
printf '\000\000\010\001\000\000\000\001\003' | gzip -c >"$tmp/lab1.gz"
expect 1 "$C" "$tmp/img.gz" "$tmp/lab1.gz" "$tmp/bad.ctf"
has "$tmp/err" "lab1.gz: holds another number of items than the images"
[ ! -e "$tmp/bad.ctf" ] && ok || no "a failed conversion left bad.ctf"
finish idx2ctf
