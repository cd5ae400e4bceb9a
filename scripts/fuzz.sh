#!/bin/sh
# Build a fuzz target with libFuzzer + ASan + UBSan and run it:
#
#   scripts/fuzz.sh [cfg|ctf] [SECONDS] [extra libFuzzer args...]    (default: cfg, 600 s)
#
# cfg: the config language (tests/fuzz/fuzz_cfg.c); ctf: the CTF line parser
# (tests/fuzz/fuzz_ctf.c). Needs clang and libclang-rt-14-dev (installed on demand) and a
# configured tree (config.h). New crashers land in tests/fuzz/ as crash-*; minimize them
# and keep them in tests/fuzz/regress/ (or regress-ctf/): `make check` replays them.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
target=cfg
case ${1:-} in cfg | ctf) target=$1; shift ;; esac
secs=${1:-600}
[ $# -gt 0 ] && shift
if ! command -v clang >/dev/null || ! dpkg-query -W libclang-rt-14-dev >/dev/null 2>&1; then
    apt-get update -q && apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev
fi
[ -f config.h ] || { echo "fuzz.sh: run scripts/setup.sh (or ./configure) first" >&2; exit 2; }
core="src/core/err.c"
if [ "$target" = cfg ]; then
    src="tests/fuzz/fuzz_cfg.c parsers/cfg_*.c parsers/schema.c $core src/core/log.c
         src/core/fs.c src/train/actions.c src/train/command_schema.c src/learn/sgd_schema.c
         src/nn/network_schema.c src/reader/reader_schema.c src/parallel/parallel_schema.c
         src/math/backend.c"
    dirs="regress seeds"
else
    src="tests/fuzz/fuzz_ctf.c parsers/ctf.c $core"
    dirs="regress-ctf seeds-ctf"
fi
out=tests/fuzz/fuzz_$target
# shellcheck disable=SC2086
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I. -Isrc $(pkg-config --cflags openblas 2>/dev/null) -o "$out" $src \
    -linih $(pkg-config --libs openblas 2>/dev/null || echo -lopenblas) -lm
cd tests/fuzz
mkdir -p "corpus-$target"
# shellcheck disable=SC2086
exec "./fuzz_$target" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$@" "corpus-$target" $dirs
