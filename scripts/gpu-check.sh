#!/bin/sh
# The GPU checks of issue 17 in one run, on a machine with an NVIDIA GPU and CUDA 13 but
# none of partrain's other dependencies (the device machine of this workplace):
#
#   here:   scripts/device-bundle.sh BUILDDIR .dev      # BUILDDIR configured --with-cuda
#           cp /usr/share/datasets/fashion-mnist/*.gz .dev/fashion/
#   there:  scripts/gpu-check.sh [ops] [train] [bench] [tiers...]   (default: all three)
#
#   ops     tests/test_cuda_ops: every backend op on the GPU against the CPU
#   nn      tests/test_gpu_nn.sh: the gradient checks and layer tests on the GPU
#   engine  tests/test_gpu_engine.sh: the DataParallelSGD engine on the GPU, 1/2/4 ranks,
#           bit for bit against the CPU's references
#   train   tests/test_gpu_train.sh: CPU and GPU training agree, every parallel method on
#           the GPU, checkpoints across devices, a missing device refused
#   bench   bench/gpu.py: samples/s against the cuBLAS bound and one CPU core, and the
#           quantizers' GB/s
#   spans   where a GPU step's time goes: the MLP and the LSTM for one epoch with
#           timelineFile, the mean of each span (the device is waited for at each span's
#           end, so the spans add up to more than a plain run's step)
# Logs go to $OUT (or ./gpu-check-out); each part has its own time limit. Exit status: the
# number of parts that failed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/gpu-check-out}
mkdir -p "$out"
parts=${*:-ops nn engine train bench spans}
pt=/tmp/pt
rm -rf "$pt" && mkdir -p "$pt" && tar -xJf "$here/.dev/bundle.tar.xz" -C "$pt" || exit 99
# shellcheck disable=SC1091
. "$pt/env.sh"
{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
    grep PRETTY /etc/os-release
    nproc
    trainer --version
} 2>&1 | tee "$out/machine.txt"

# Fashion-MNIST as CTF (the configs' names), from the idx files that travelled
data=/tmp/ptdata/fashion-mnist
mkdir -p "$data"
src=$here/.dev/fashion
for p in train:train t10k:test; do
    i=${p%%:*} n=${p##*:}
    [ -f "$data/$n.ctf" ] || idx2ctf "$src/$i-images-idx3-ubyte.gz" "$src/$i-labels-idx1-ubyte.gz" "$data/$n.ctf" &
    [ -f "$data/$n-seq.ctf" ] || idx2ctf --sequence "$src/$i-images-idx3-ubyte.gz" \
        "$src/$i-labels-idx1-ubyte.gz" "$data/$n-seq.ctf" &
done
wait
ls -la "$data"

# a build tree as the tests expect it: trainer and scripts/idx2ctf
bt=/tmp/ptbuild
mkdir -p "$bt/scripts" "$bt/tests"
ln -sf "$pt/bin/trainer" "$bt/trainer"
ln -sf "$pt/bin/idx2ctf" "$bt/scripts/idx2ctf"
for t in test_dpsgd_engine test_nn test_nn_lstm test_graph test_nn_model; do
    ln -sf "$pt/bin/$t" "$bt/tests/$t"
done
failed=0
for part in $parts; do
    start=$(date +%s)
    case $part in
    ops) timeout 120 "$pt/bin/test_cuda_ops" >"$out/ops.log" 2>&1 ;;
    nn)
        (cd "$bt" && top_srcdir=$here top_builddir=$bt timeout 150 sh "$here/tests/test_gpu_nn.sh") \
            >"$out/nn.log" 2>&1
        ;;
    engine)
        (cd "$bt" && top_srcdir=$here top_builddir=$bt timeout 120 sh "$here/tests/test_gpu_engine.sh") \
            >"$out/engine.log" 2>&1
        ;;
    train)
        (cd "$bt" && top_srcdir=$here top_builddir=$bt PT_FASHION_CTF=$data \
            timeout 240 sh "$here/tests/test_gpu_train.sh") >"$out/train.log" 2>&1
        ;;
    bench)
        (cd "$here" && PYTHONUNBUFFERED=1 timeout 240 python3 bench/gpu.py --budget 200 \
            --trainer "$pt/bin/trainer" --gpu-bench "$pt/bin/gpu_bench" --configs configs \
            --data "$data" --out "$out/bench.txt" --logs "$out/benchlogs") >"$out/bench.log" 2>&1
        ;;
    spans)
        for c in mlp lstm mlp:0 lstm:0; do # :0 reads without the reader's thread
            ra=${c#*:} c=${c%%:*}
            [ "$ra" = "$c" ] && ra=""
            PT_READ_AHEAD=$ra trainer configFile="$here/configs/fashion-$c.cfg" DataDir="$data" \
                ModelDir=/tmp/spans-$c command=train train.SGD.maxEpochs=1 deviceId=0 \
                train.timelineFile=/tmp/spans-$c.json >"/tmp/spans-$c.log" 2>&1 ||
                { tail -5 "/tmp/spans-$c.log"; false; }
            rm -rf /tmp/spans-$c
            c="$c${ra:+ (PT_READ_AHEAD=$ra)}"
            python3 -c 'import json, sys, collections
d = json.load(open(sys.argv[1])); ev = d["traceEvents"] if isinstance(d, dict) else d
s = collections.defaultdict(list)
for e in ev:
    if e.get("ph") == "X": s[e["name"]].append(e["dur"])
for k, v in s.items(): print("%s %-10s %6d spans, mean %10.1f us" % (sys.argv[2], k, len(v), sum(v) / len(v)))' \
                "/tmp/spans-${c%% *}.json" "$c"
        done >"$out/spans.log" 2>&1
        ;;
    *) echo "gpu-check: unknown part $part" >&2; false ;;
    esac
    rc=$?
    [ $rc -eq 0 ] || failed=$((failed + 1))
    echo "== $part: exit $rc after $(($(date +%s) - start)) s"
    tail -n 40 "$out/$part.log" 2>/dev/null
done
# the logs directory as one file (the tool brings back files at most two folders down)
[ -d "$out/benchlogs" ] && tar -czf "$out/benchlogs.tgz" -C "$out" benchlogs && rm -rf "$out/benchlogs"
exit $failed
