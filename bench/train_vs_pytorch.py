#!/usr/bin/python3
"""bench/train_vs_pytorch.py: training throughput of partrain against PyTorch, one thread.

    /usr/bin/python3 bench/train_vs_pytorch.py [--quick]

Runs in one invocation, on this machine, with the same data and hyper-parameters:
  1. bench/sgemm_peak 1            OpenBLAS's single-thread sgemm rate (the bound);
  2. trainer on configs/fashion-mlp.cfg and fashion-lstm.cfg, numCPUThreads=1, 2 epochs;
     throughput = samples of epoch 2 / its epochTime (epoch 1 also parses the text);
  3. bench/pytorch_ref.py mlp|lstm (Debian python3-torch, 1 thread).
Prints samples/s, the ratio partrain / PyTorch, peak RSS of each process (wait4) and
GFLOP/s against the sgemm bound. Needs a built tree and data/fashion-mnist (setup.sh)."""
import os
import re
import sys
import tempfile

from benchlib import HERE, run

# GEMM flops per sample (2 per multiply-add): forward, weight gradients, and input
# gradients of every layer but the first (nobody needs d/d input).
_MLP_W = 784 * 512 + 512 * 512 + 512 * 10
_LSTM_STEP = 4 * 128 * (28 + 128)                      # stacked gates: Wx x + Wh h
FLOP = {"mlp": 2.0 * (2 * _MLP_W + 512 * 512 + 512 * 10),
        "lstm": 2.0 * (28 * (2 * _LSTM_STEP + 4 * 128 * 128) + 2 * 128 * 10 + 128 * 10)}


def sgemm_peak():
    code, out, _ = run([f"{HERE}/bench/sgemm_peak", "1"])
    if code:
        sys.exit(f"sgemm_peak failed:\n{out}")
    print(out.rstrip())
    lines = out.splitlines()[2:]  # the MLP's shapes (after the header and the square)
    ob = max(float(m) for l in lines for m in re.findall(r"OpenBLAS +(\d+\.\d+)", l))
    own = [float(m) for l in lines for m in re.findall(r"partrain +(\d+\.\d+)", l)]
    return ob, max(own) if own else None


def trainer(model, quick, gemm):
    model_dir = tempfile.mkdtemp(prefix="pt-bench-")
    cmd = [f"{HERE}/trainer", f"configFile=configs/fashion-{model}.cfg", "command=train",
           "traceLevel=0", "numCPUThreads=1", "makeMode=false", "train.SGD.maxEpochs=2",
           f"ModelDir={model_dir}", f"cpuGemm={gemm}"]
    if quick:
        cmd.append("train.SGD.epochSize=15360")
    code, out, rss = run(cmd)
    if code:
        sys.exit(f"trainer failed:\n{out}")
    m = re.search(r"Finished Epoch\[ 2 of 2\]: .*?\* (\d+);.*epochTime=([0-9.e+-]+)s", out)
    return int(m.group(1)) / float(m.group(2)), rss


def pytorch(model, quick):
    steps = {"mlp": 60 if quick else 200, "lstm": 20 if quick else 100}[model]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    code, out, rss = run(["/usr/bin/python3", f"{HERE}/bench/pytorch_ref.py", model, str(steps)], env)
    if code:
        sys.exit(f"pytorch_ref failed:\n{out}")
    return float(out.split()[1]), rss


def main():
    quick = "--quick" in sys.argv
    peak, own_peak = sgemm_peak()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
          f"sgemm bound at the MLP's shapes: OpenBLAS {peak:.1f} GFLOP/s"
          + (f", partrain's kernel {own_peak:.1f} GFLOP/s" if own_peak else ""))
    print(f"{'model':6} {'cpuGemm':8} {'partrain/s':>11} {'PyTorch/s':>10} {'ratio':>6} "
          f"{'RSS MiB':>8} {'PyTorch MiB':>11} {'RSS ratio':>9} {'GFLOP/s':>8} "
          f"{'% OpenBLAS':>10} {'% own':>6}")
    for model in ("mlp", "lstm"):
        ref, ref_rss = pytorch(model, quick)
        for gemm in ("auto", "openblas"):
            ours, rss = trainer(model, quick, gemm)
            gflops = ours * FLOP[model] / 1e9
            own = f"{100 * gflops / own_peak:5.1f}%" if own_peak else "     -"
            print(f"{model:6} {gemm:8} {ours:11.1f} {ref:10.1f} {ours / ref:5.2f}x {rss / 1024:8.1f} "
                  f"{ref_rss / 1024:11.1f} {rss / ref_rss:8.2f}x {gflops:8.1f} "
                  f"{100 * gflops / peak:9.1f}% {own}")


if __name__ == "__main__":
    main()
