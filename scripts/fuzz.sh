#!/bin/sh
# Build a fuzz target with libFuzzer + ASan + UBSan and run it:
#
#   scripts/fuzz.sh [cfg|ctf|bs|ndl|model|mlf|lm] [SECONDS] [extra libFuzzer args...]    (default: cfg, 600 s)
#
# cfg: the config language (tests/fuzz/fuzz_cfg.c); ctf: the CTF line parser
# (tests/fuzz/fuzz_ctf.c); bs: BrainScript networks, parsed and evaluated into a node graph
# with its shapes (tests/fuzz/fuzz_bs.c); ndl: CNTK's NDL written out as BrainScript, which
# must parse, then evaluated the same way (tests/fuzz/fuzz_ndl.c); model: model files loaded
# (tests/fuzz/fuzz_model.c); mlf: HTK master label files, text and binary (fuzz_mlf.c);
# lm: CNTK's LMSequenceReader, a word-class file and a text read epoch by epoch (fuzz_lm.c).
# Needs clang and libclang-rt-14-dev (installed on demand) and a configured tree (config.h;
# the libraries are built there): the current directory where it has config.h (a build
# directory beside the sources, their configure run there), else the source tree. New
# crashers land in its tests/fuzz/ as crash-*; minimize them and keep them in the sources'
# tests/fuzz/regress/ (or regress-ctf/, regress-bs/, regress-ndl/, regress-model/,
# regress-mlf/, regress-lm/): `make check` replays them.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here
[ -f config.h ] && build=$(pwd)
cd "$here"
target=cfg
case ${1:-} in cfg | ctf | bs | ndl | model | mlf | lm) target=$1; shift ;; esac
secs=${1:-600}
[ $# -gt 0 ] && shift
if ! command -v clang >/dev/null || ! dpkg-query -W libclang-rt-14-dev >/dev/null 2>&1; then
    apt-get update -q && apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev
fi
[ -f "$build/config.h" ] || { echo "fuzz.sh: run scripts/setup.sh (or ./configure) first" >&2; exit 2; }
# Instrumented: the config language, src/core, every schema and the action table (globs,
# so the list follows the files). Whatever else they call comes from the libraries the
# normal build made (not instrumented; clang cannot build all of it).
make -C "$build" libpartrain.a libptparsers.a libptcore.a >/dev/null
# (src/core/half.c is left to the library: clang 14 knows no __builtin_cpu_supports("f16c"))
lib=$(ls parsers/*.c src/core/*.c src/*/*_schema.c src/train/actions.c | grep -v "^src/core/half.c$")
case $target in
cfg) dirs="regress seeds" ;;
ctf) dirs="regress-ctf seeds-ctf" ;;
bs)
    dirs="regress-bs seeds-bs"
    lib="$lib $(ls src/nn/bs_*.c src/nn/graph*.c)" # the evaluator and the graph's shapes
    ;;
ndl)
    dirs="regress-ndl seeds-ndl"
    lib="$lib $(ls src/nn/bs_*.c src/nn/graph*.c src/nn/ndl*.c)"
    ;;
model)
    dirs="regress-model seeds-model"
    lib="$lib src/nn/model_io.c src/nn/nn_config.c $(ls src/nn/bs_*.c src/nn/graph*.c)"
    ;;
mlf)
    dirs="regress-mlf seeds-mlf"
    lib="$lib src/reader/htk_mlf.c"
    ;;
lm)
    dirs="regress-lm seeds-lm"
    lib="$lib src/reader/htk_mlf.c src/reader/lm_config.c src/reader/lm_reader.c"
    ;;
esac
mkdir -p "$build/tests/fuzz"
out=$build/tests/fuzz/fuzz_$target
blas=$(pkg-config --cflags openblas 2>/dev/null || true)
# a --with-cuda build's libpartrain.a holds the cuBLAS backend: link CUDA's libraries too
cuda=$(sed -n 's/^CUDA_LIBS = //p' "$build/Makefile")
stb=$(sed -n 's/^STB_LIBS = //p' "$build/Makefile") # the image reader's decoder (libstb-dev)
# shellcheck disable=SC2046,SC2086
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$build" -I. -Isrc $blas -o "$out" "tests/fuzz/fuzz_$target.c" $lib \
    "$build/libpartrain.a" "$build/libptparsers.a" "$build/libptcore.a" -linih \
    $(pkg-config --libs openblas 2>/dev/null || echo -lopenblas) \
    $(pkg-config --libs ompi-c 2>/dev/null || echo -lmpi) $cuda ${stb:--lstb} -lm
cd "$build/tests/fuzz"
mkdir -p "corpus-$target"
have="" # a target's regress directory exists once a crasher has been kept
for d in $dirs; do [ -d "$here/tests/fuzz/$d" ] && have="$have $here/tests/fuzz/$d"; done
# shellcheck disable=SC2086
exec "./fuzz_$target" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$@" "corpus-$target" $have
