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
#   htk     tests/test_gpu_htk.sh: the HTK reader, and truncated back-propagation through
#           time's state carried across minibatches on the device, against the CPU
#   bench   bench/gpu.py: samples/s against the cuBLAS bound and one CPU core, and the
#           quantizers' GB/s
#   spans   where a GPU step's time goes: the MLP and the LSTM for one epoch with
#           timelineFile, the mean of each span (the device is waited for at each span's
#           end, so the spans add up to more than a plain run's step)
#   ab      the trainer's samples/s on the GPU with settings against the default:
#           GPU_CHECK_AB="NAME=VALUE ..." (default PT_CUDA_GRAPHS=1: steps replayed from
#           CUDA graphs), each set alone, against none, for GPU_CHECK_AB_RUNS (default MLP
#           at 256, 1024, 4096 and LSTM at 128; model:MB:learning rate), 3 epochs each, the
#           best of epochs 2 and 3, all in one order, then in the reverse
#   kernels each kernel's time in steady MLP steps (Nsight Compute's gpu__time_duration,
#           --clock-control none, 160 launches after 1500), summed by name, and per step
#           (the steps counted by the optimizer's one sgd_k launch per step); caches
#           flushed before each kernel unless GPU_CHECK_NCU_CACHE=none
# Logs go to $OUT (or ./gpu-check-out); each part has its own time limit, cut to what is
# left of GPU_CHECK_SECONDS (default 540) since the start; a part that would get less than
# 20 s is skipped (and counted failed). Exit status: the number of parts that failed.
set -u
t_start=$(date +%s)
budget=${GPU_CHECK_SECONDS:-540}
# limit N: N seconds, or what is left of the budget if less
limit() {
    left=$((budget - ($(date +%s) - t_start) - 5))
    if [ "$left" -lt 1 ]; then left=1; fi
    if [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/gpu-check-out}
mkdir -p "$out"
parts=${*:-ops nn train htk engine ab kernels bench spans}
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
for t in test_dpsgd_engine test_nn test_nn_lstm test_graph test_nn_model htk_gen; do
    ln -sf "$pt/bin/$t" "$bt/tests/$t"
done
failed=0
for part in $parts; do
    start=$(date +%s)
    if [ "$(limit 20)" -lt 20 ]; then
        echo "== $part: skipped, $((budget - (start - t_start))) s left of $budget"
        failed=$((failed + 1))
        continue
    fi
    case $part in
    ops) timeout "$(limit 120)" "$pt/bin/test_cuda_ops" >"$out/ops.log" 2>&1 ;;
    nn)
        (cd "$bt" && top_srcdir=$here top_builddir=$bt timeout "$(limit 150)" sh "$here/tests/test_gpu_nn.sh") \
            >"$out/nn.log" 2>&1
        ;;
    engine)
        (cd "$bt" && top_srcdir=$here top_builddir=$bt timeout "$(limit 120)" sh "$here/tests/test_gpu_engine.sh") \
            >"$out/engine.log" 2>&1
        ;;
    train)
        (cd "$bt" && top_srcdir=$here top_builddir=$bt PT_FASHION_CTF=$data \
            timeout "$(limit 240)" sh "$here/tests/test_gpu_train.sh") >"$out/train.log" 2>&1
        ;;
    htk)
        (cd "$bt" && top_srcdir=$here top_builddir=$bt timeout "$(limit 90)" \
            sh "$here/tests/test_gpu_htk.sh") >"$out/htk.log" 2>&1
        ;;
    bench)
        b=$(limit 240)
        (cd "$here" && PYTHONUNBUFFERED=1 timeout "$b" python3 bench/gpu.py --budget $((b - 40)) \
            --trainer "$pt/bin/trainer" --gpu-bench "$pt/bin/gpu_bench" --configs configs \
            --data "$data" --out "$out/bench.txt" --logs "$out/benchlogs") >"$out/bench.log" 2>&1
        ;;
    ab)
        settings=${GPU_CHECK_AB:-PT_CUDA_GRAPHS=1}
        # rate LOG: samples/s of the faster of epochs 2 and 3
        rate() {
            sed -n 's/^Finished Epoch\[ *\([23]\) of 3\]: \[Training\] [^*]*\* \([0-9]*\);.*epochTime=\([0-9.e+-]*\)s.*/\2 \3/p' "$1" |
                awk '{ r = $1 / $2; if (r > best) best = r } END { printf "%.0f", best }'
        }
        reversed=""
        for x in default $settings; do reversed="$x $reversed"; done
        for run in ${GPU_CHECK_AB_RUNS:-mlp:256:0.004 mlp:1024:0.001 mlp:4096:0.00025 lstm:128:0.02}; do
            c=${run%%:*} rest=${run#*:}
            mb=${rest%%:*} lr=${rest#*:}
            for order in "default $settings" "$reversed"; do
                for x in $order; do
                    [ "$(limit 60)" -ge 15 ] || continue
                    log=/tmp/ab-$c-$mb-$(echo "$x" | tr -c 'A-Za-z0-9\n' _).log
                    rm -rf /tmp/ab-model
                    set -- trainer configFile="$here/configs/fashion-$c.cfg" DataDir="$data" \
                        ModelDir=/tmp/ab-model command=train deviceId="${GPU_CHECK_DEVICE:-0}" makeMode=false \
                        traceLevel=2 train.SGD.maxEpochs=3 train.SGD.minibatchSize="$mb" \
                        train.SGD.learningRatesPerSample="$lr"
                    if [ "$x" != default ]; then set -- env "$x" "$@"; fi
                    timeout "$(limit 60)" "$@" >"$log" 2>&1 || { tail -3 "$log"; false; }
                    echo "$c MB $mb $x: $(rate "$log") samples/s"
                done
            done
            grep -o 'minibatches read by .*' /tmp/ab-$c-$mb-default.log | head -n 1
            grep -h 'steps replayed from recordings' /tmp/ab-$c-$mb-*.log | head -n 3
        done >"$out/ab.log" 2>&1
        ;;
    kernels)
        n=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)
        [ -n "$n" ] || { echo "no ncu" >"$out/kernels.log"; false; }
        {
            timeout "$(limit 90)" "$n" --clock-control none ${GPU_CHECK_NCU_CACHE:+--cache-control "$GPU_CHECK_NCU_CACHE"} \
                --target-processes application-only \
                --metrics gpu__time_duration.sum --launch-skip 1500 --launch-count 160 --csv \
                --print-units base --log-file /tmp/ncu.csv \
                trainer configFile="$here/configs/fashion-mlp.cfg" DataDir="$data" \
                ModelDir=/tmp/ncu-model command=train deviceId=0 makeMode=false \
                train.SGD.maxEpochs=1 train.SGD.epochSize=25600 >/tmp/ncu-run.log 2>&1 ||
                { tail -5 /tmp/ncu-run.log; false; }
            cp /tmp/ncu.csv "$out/ncu.csv" 2>/dev/null
            python3 -c 'import csv, sys, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith("\""))]
h = rows[0]; v = h.index("Metric Value")
k = h.index("Kernel Name") if "Kernel Name" in h else h.index("Function Name")
t = collections.defaultdict(list)
for r in rows[1:]:
    t[r[k][:90]].append(float(r[v].replace(",", "")) / 1e3)
tot = sum(sum(x) for x in t.values())
launches = sum(len(x) for x in t.values())
steps = max(1, sum(len(x) for n, x in t.items() if n.startswith("sgd_k")))
print("%d launches, %.1f us of kernel time; %d steps (sgd_k): %.1f launches and %.1f us a step" % (launches, tot, steps, launches / steps, tot / steps))
print("us a step | launches | us each | kernel")
for name, x in sorted(t.items(), key=lambda kv: -sum(kv[1])):
    print("%8.1f us %4d x %6.2f us  %s" % (sum(x) / steps, len(x), sum(x) / len(x), name))' /tmp/ncu.csv
        } >"$out/kernels.log" 2>&1
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
