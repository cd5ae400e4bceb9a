#!/usr/bin/python3
"""bench/train_vs_pytorch.py: training throughput of partrain against PyTorch, one thread.

    /usr/bin/python3 bench/train_vs_pytorch.py [--quick]

Runs in one invocation, on this machine, with the same data and hyper-parameters:
  1. bench/sgemm_peak 1            the single-thread sgemm rates at the MLP's shapes (the
                                   bound): OpenBLAS's detected kernel and partrain's own;
  2. trainer on configs/fashion-mlp.cfg, fashion-lstm.cfg and fashion-conv-bs.cfg (CNTK's
     02_OneConv in BrainScript; no target, for the record), numCPUThreads=1, 4 epochs;
     throughput = the median over epochs 2-4 of samples / epochTime (epoch 1 warms up),
     in three processes, the best taken as PyTorch's is (--quick: one process);
  3. bench/pytorch_ref.py mlp|lstm|conv (Debian python3-torch, 1 thread): 200 (MLP), 100
     (LSTM) or 300 (conv) minibatches timed three times in a row, the median of the rates,
     in three processes: the best process is the reference (one process's rate can be far
     from the next one's; --quick: one process).
Medians of three and the best of three processes on both sides: on a shared host a burst
of load moves one measurement, not the result (the bound is the best of sgemm_peak's
rounds, a rate of hot caches). Every process's rate is printed. The cpuGemm=openblas rows
(not a target) time one epoch and one segment, in one process.
OPENBLAS_CORETYPE is removed for every run, so both sides use the kernel OpenBLAS detects.
Where that is not OpenBLAS's best here (an AVX-512 CPU that OpenBLAS 0.3.21 does not know
falls back to an AVX2 or even its SSE3 Prescott kernel), PyTorch and sgemm_peak also run
with OpenBLAS forced to each of its AVX-512 kernels, labelled; the bound and the ratios
are then also given against the fastest of those, the reference at its best. If the
environment pinned a kernel, that pinned PyTorch run is reported beside, labelled too.
Prints samples/s, the ratios, peak RSS of each process (wait4) and GFLOP/s against the
bound. Needs a built tree and data/fashion-mnist (setup.sh)."""
import os
import re
import statistics
import sys
import tempfile

from benchlib import FORCE_KERNELS, HERE, clean_env, run, slow_kernel

# GEMM flops per sample (2 per multiply-add): forward, weight gradients, and input
# gradients of every layer but the first (nobody needs d/d input).
_MLP_W = 784 * 512 + 512 * 512 + 512 * 10
_LSTM_STEP = 4 * 128 * (28 + 128)                      # stacked gates: Wx x + Wh h
# conv: the convolution forward and its kernel gradient (no dL/dx for the input), both
# dense layers forward, weight gradient and dL/dx (the convolution's kernel needs it)
_CONV = 16 * 25 * 28 * 28
FLOP = {"mlp": 2.0 * (2 * _MLP_W + 512 * 512 + 512 * 10),
        "lstm": 2.0 * (28 * (2 * _LSTM_STEP + 4 * 128 * 128) + 2 * 128 * 10 + 128 * 10),
        "conv": 2.0 * (2 * _CONV + 3 * (3136 * 64 + 64 * 10))}
CONFIG = {"mlp": "fashion-mlp", "lstm": "fashion-lstm", "conv": "fashion-conv-bs"}
def sgemm_peak(coretype=None):
    """(kernel name, best OpenBLAS rate, best own rate or None) at the MLP's shapes."""
    code, out, _ = run([f"{HERE}/bench/sgemm_peak", "1"], clean_env(coretype))
    if code:
        sys.exit(f"sgemm_peak failed:\n{out}")
    print(out.rstrip() if not coretype else
          f"(OpenBLAS forced to {coretype}:)\n" + "\n".join(out.splitlines()[1:]))
    kernel = re.search(r"\(kernel (\S+),", out).group(1)
    lines = out.splitlines()[2:]  # the MLP's shapes (after the header and the square)
    ob = max(float(m) for l in lines for m in re.findall(r"OpenBLAS +(\d+\.\d+)", l))
    own = [float(m) for l in lines for m in re.findall(r"partrain +(\d+\.\d+)", l)]
    return kernel, ob, max(own) if own else None


def trainer(model, quick, gemm, segments, processes=1):
    """The best of `processes` runs (each the median of its epochs after the first), as
    PyTorch's reference is taken, and the peak RSS."""
    best, rss_max, rates_all = 0.0, 0, []
    for _ in range(processes):
        model_dir = tempfile.mkdtemp(prefix="pt-bench-")
        cmd = [f"{HERE}/trainer", f"configFile=configs/{CONFIG[model]}.cfg", "command=train",
               "traceLevel=0", "numCPUThreads=1", "makeMode=false",
               f"train.SGD.maxEpochs={1 + segments}", f"ModelDir={model_dir}", f"cpuGemm={gemm}"]
        if quick:
            cmd.append("train.SGD.epochSize=15360")
        code, out, rss = run(cmd, clean_env())
        if code:
            sys.exit(f"trainer failed:\n{out}")
        rates = [int(m.group(2)) / float(m.group(3)) for m in
                 re.finditer(r"Finished Epoch\[ *(\d+) of \d+\]: \[Training\] .*?\* (\d+);.*epochTime=([0-9.e+-]+)s", out)
                 if int(m.group(1)) >= 2]
        if len(rates) != segments:
            sys.exit(f"trainer printed {len(rates)} epochs after the first, not {segments}:\n{out}")
        rates_all.append(statistics.median(rates))
        best, rss_max = max(best, rates_all[-1]), max(rss_max, rss)
    if processes > 1:
        print(f"{model:5} partrain processes (cpuGemm={gemm}): "
              + " ".join(f"{x:.0f}" for x in rates_all) + " samples/s; the best is taken, as "
              "PyTorch's")
    return best, rss_max


def pytorch(model, quick, coretype=None, processes=3):
    """The best of `processes` runs (each the median of its segments) and the peak RSS: one
    process of Debian's PyTorch may run the same network at a rate far from the next one's
    (the conv network here: 4 500 to 11 800 samples/s), so the reference at its best is the
    fastest process."""
    steps = {"mlp": 60 if quick else 200, "lstm": 20 if quick else 100,
             "conv": 60 if quick else 300}[model]
    env = clean_env(coretype, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    rates, rss = [], 0
    for _ in range(1 if quick else processes):
        code, out, r = run(["/usr/bin/python3", f"{HERE}/bench/pytorch_ref.py", model,
                            str(steps), "3"], env)
        if code:
            sys.exit(f"pytorch_ref failed:\n{out}")
        rates.append(float(out.split()[1]))
        rss = max(rss, r)
    print(f"{model:5} PyTorch processes (OpenBLAS {coretype or 'detected'}): "
          + " ".join(f"{x:.0f}" for x in rates) + " samples/s; the best is the reference")
    return max(rates), rss


def main():
    quick = "--quick" in sys.argv
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    kernel, peak, own_peak = sgemm_peak()
    forced = []  # (kernel, its bound) where the detected kernel is not OpenBLAS's best here
    if slow_kernel(kernel):
        for k in FORCE_KERNELS:
            got, ob, own = sgemm_peak(k)
            if got.lower() == k.lower():
                forced.append((k, ob))
            if own and own_peak:  # partrain's kernel again: the best of all its rounds
                own_peak = max(own_peak, own)
    best_peak = max([peak] + [ob for _, ob in forced] + ([own_peak] if own_peak else []))
    print(f"OPENBLAS_CORETYPE: {'was ' + pinned + ', removed' if pinned else 'unset'} for every "
          f"run; OpenBLAS detects its {kernel} kernel")
    print(f"sgemm bound at the MLP's shapes: OpenBLAS {kernel} {peak:.1f} GFLOP/s"
          + "".join(f", OpenBLAS forced to {k} {ob:.1f}" for k, ob in forced)
          + (f", partrain's kernel {own_peak:.1f}" if own_peak else "")
          + f"; best {best_peak:.1f}")
    refs = [("detected", None)] + [(f"forced {k}", k) for k, _ in forced]
    if pinned:
        refs.append((f"pinned {pinned}", pinned))
    for model in ("mlp", "lstm", "conv"):
        ref = {label: pytorch(model, quick, k) for label, k in refs}
        for label, (sps, rss) in ref.items():
            print(f"{model:5} PyTorch, OpenBLAS {label:18} {sps:9.1f} samples/s  peak RSS "
                  f"{rss / 1024:6.1f} MiB")
        best_label = max(ref, key=lambda l: ref[l][0])
        best, best_rss = ref[best_label]
        for gemm in ("auto", "openblas"):
            ours, rss = trainer(model, quick, gemm, 3 if gemm == "auto" else 1,
                                1 if quick or gemm != "auto" else 3)
            gflops = ours * FLOP[model] / 1e9
            bound = (f" = {100 * gflops / best_peak:5.1f}% of the best bound "
                     f"({100 * gflops / peak:5.1f}% of OpenBLAS {kernel}'s)"
                     if model != "conv" else "")  # the bound is at the MLP's shapes
            print(f"{model:5} partrain cpuGemm={gemm:9} {ours:9.1f} samples/s  peak RSS "
                  f"{rss / 1024:6.1f} MiB  {gflops:6.1f} GFLOP/s{bound}")
            print(f"      ratio {ours / ref['detected'][0]:5.2f}x PyTorch (OpenBLAS detected), "
                  f"{ours / best:5.2f}x PyTorch at its best (OpenBLAS {best_label}); "
                  f"RSS {rss / best_rss:4.2f}x")


if __name__ == "__main__":
    main()
