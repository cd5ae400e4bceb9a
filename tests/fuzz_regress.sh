#!/bin/sh
# Replays every kept fuzz input (seeds and minimized crashers) through the fuzz targets.
set -eu
b=${top_builddir:-.}/tests
s=${top_srcdir:-.}/tests/fuzz
"$b/test_fuzz_regress" "$s/seeds" "$s/regress"
"$b/test_fuzz_regress_ctf" "$s/seeds-ctf" "$s/regress-ctf"
"$b/test_fuzz_regress_bs" "$s/seeds-bs" "$s/regress-bs"
"$b/test_fuzz_regress_ndl" "$s/seeds-ndl" "$s/regress-ndl"
# (a target's regress directory exists once a crasher has been kept)
for t in model mlf lm; do
    set -- "$s/seeds-$t"
    [ -d "$s/regress-$t" ] && set -- "$@" "$s/regress-$t"
    "$b/test_fuzz_regress_$t" "$@"
done
