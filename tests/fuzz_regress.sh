#!/bin/sh
# Replays every kept fuzz input (seeds and minimized crashers) through the fuzz target.
set -eu
exec "${top_builddir:-.}/tests/test_fuzz_regress" "${top_srcdir:-.}/tests/fuzz/seeds" \
    "${top_srcdir:-.}/tests/fuzz/regress"
