#!/bin/sh
# Build the config-parser fuzz target with libFuzzer + ASan + UBSan and run it.
#
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer args...]     (default 600 s)
#
# Needs clang and libclang-rt-14-dev (installed on demand) and a configured tree (for
# config.h). New crashers land in tests/fuzz/ as crash-*; minimize them and keep them in
# tests/fuzz/regress/ so `make check` replays them forever.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
secs=${1:-600}
[ $# -gt 0 ] && shift
if ! command -v clang >/dev/null || ! dpkg-query -W libclang-rt-14-dev >/dev/null 2>&1; then
    apt-get update -q && apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev
fi
[ -f config.h ] || { echo "fuzz.sh: run scripts/setup.sh (or ./configure) first" >&2; exit 2; }
out=tests/fuzz/fuzz_cfg
src="tests/fuzz/fuzz_cfg.c parsers/cfg_tree.c parsers/cfg_parse.c parsers/cfg_value.c
     parsers/cfg_ini.c parsers/cfg_print.c parsers/schema.c src/core/err.c src/core/log.c src/core/fs.c
     src/train/actions.c src/train/command_schema.c src/learn/sgd_schema.c
     src/nn/network_schema.c src/reader/reader_schema.c src/parallel/parallel_schema.c
     src/math/backend.c"
# shellcheck disable=SC2086
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I. -Isrc $(pkg-config --cflags openblas 2>/dev/null) -o "$out" $src \
    -linih $(pkg-config --libs openblas 2>/dev/null || echo -lopenblas) -lm
mkdir -p tests/fuzz/corpus
cp -n tests/fuzz/seeds/* tests/fuzz/corpus/ 2>/dev/null || true
cd tests/fuzz
exec ./fuzz_cfg -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$@" corpus regress seeds
