#!/usr/bin/python3
"""bench/local_sgd.py: BlockMomentumSGD and ModelAveragingSGD against one worker, in one run.

Quality: test accuracy after the same number of epochs of
  * the MLP (configs/fashion-mlp.cfg on 1 worker; fashion-mlp-bmuf.cfg and fashion-mlp-ma.cfg
    on --mlp-ranks workers, 4 by default), and
  * the LSTM (configs/fashion-lstm.cfg on 1 worker, and with BlockMomentumSGD and
    ModelAveragingSGD on --lstm-ranks workers, 2 by default, with the local settings of the
    MLP configs: blockSizePerWorker 2048, no local momentum, no Nesterov for BMUF).
Speed: samples/s of fashion-mlp-bmuf.cfg (with momentum 0.9, which one worker needs to
converge at this rate) at 2 ranks against 1 rank, each rank bound to a core, epochs 2..
only, median of --reps alternating runs: the scaling efficiency rate2 / (2 rate1), and the
communication share of the 2-rank runs from their perfStatsFile (comm_s / (compute_s +
comm_s), both ranks). Two-rank runs keep the global minibatch (256: 128 per rank) or keep
the per-rank minibatch (512: 256 per rank, CNTK's practice for BMUF). DataParallelSGD
32-bit is measured alongside.

Prints a table; numbers go to bench/RESULTS.md by hand."""
import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile

import benchlib

HERE = benchlib.HERE
EPOCH_RE = re.compile(r"Finished Epoch\[\s*(\d+) of \d+\]: .*?\* (\d+);.*epochTime=([0-9.e+-]+)s")
TEST_RE = re.compile(r"Final Results: .*?EvalClassificationError = ([0-9.e+-]+) \* (\d+)")
KERNEL_RE = re.compile(r"OpenBLAS[^\n]*kernel[^\n]*")


def env():
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def mpiexec(n, bind="core"):
    cmd = ["mpiexec", "-n", str(n)]
    if n > (os.cpu_count() or 1):
        cmd += ["--oversubscribe", "--bind-to", "none"]
    else:
        cmd += ["--bind-to", bind]
    return cmd


def trainer(a, n, config, extra=(), command="train:test"):
    """Run config on n ranks in a fresh model directory; return (output, model dir)."""
    model_dir = tempfile.mkdtemp(prefix="pt-localsgd-")
    cmd = mpiexec(n) + [a.trainer, f"configFile={HERE}/configs/{config}", f"command={command}",
                        "numCPUThreads=1", "makeMode=false", f"ModelDir={model_dir}",
                        *[x.replace("{dir}", model_dir) for x in extra]]
    code, out, _ = benchlib.run(cmd, env())
    if code:
        shutil.rmtree(model_dir, ignore_errors=True)
        sys.exit(f"trainer failed ({code}): {' '.join(cmd)}\n{out[-4000:]}")
    return out, model_dir


def accuracy(a, n, config, extra=()):
    out, model_dir = trainer(a, n, config, extra)
    shutil.rmtree(model_dir, ignore_errors=True)
    m = TEST_RE.findall(out)
    if not m:
        sys.exit(f"no 'Final Results' line from {config} on {n} ranks\n{out[-3000:]}")
    return 1.0 - float(m[-1][0])


def rate(out, first=2):
    eps = [(int(e), int(s), float(t)) for e, s, t in EPOCH_RE.findall(out)]
    eps = [x for x in eps if x[0] >= first] or eps
    return sum(s for _, s, _ in eps) / sum(t for _, _, t in eps)


def comm_share(model_dir):
    comm = compute = 0.0
    for name in os.listdir(model_dir):
        if name.startswith("perf.jsonl"):
            with open(os.path.join(model_dir, name)) as f:
                for line in f:
                    j = json.loads(line)
                    comm += j["comm_s"]
                    compute += j["compute_s"]
    return comm / (comm + compute) if comm + compute > 0 else None


def speed(a, config, n, extra=()):
    out, model_dir = trainer(a, n, config, [f"train.SGD.maxEpochs={a.speed_epochs}",
                                            "train.SGD.ParallelTrain.perfStatsFile={dir}/perf.jsonl",
                                            # one worker without momentum diverges at this
                                            # rate; momentum costs the same on every run
                                            "train.SGD.momentumPerMB=0.9",
                                            *extra], command="train")
    share = comm_share(model_dir)
    shutil.rmtree(model_dir, ignore_errors=True)
    return rate(out), share, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trainer", default=f"{HERE}/trainer")
    ap.add_argument("--mlp-ranks", type=int, default=4)
    ap.add_argument("--lstm-ranks", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3, help="alternating speed runs per rank count")
    ap.add_argument("--speed-epochs", type=int, default=3)
    ap.add_argument("--skip-lstm", action="store_true")
    a = ap.parse_args()
    print(f"# OPENBLAS_CORETYPE={benchlib.coretype_env()}; {os.cpu_count()} cores")

    rows = []
    one = accuracy(a, 1, "fashion-mlp.cfg", ["train.SGD.ParallelTrain.parallelizationMethod=None"])
    bm = accuracy(a, a.mlp_ranks, "fashion-mlp-bmuf.cfg")
    ma = accuracy(a, a.mlp_ranks, "fashion-mlp-ma.cfg")
    rows.append(("MLP, 5 epochs", one, a.mlp_ranks, bm, ma))
    if not a.skip_lstm:
        local = "blockSizePerWorker=2048"
        pt = "train.SGD.ParallelTrain"
        one_l = accuracy(a, 1, "fashion-lstm.cfg")
        bm_l = accuracy(a, a.lstm_ranks, "fashion-lstm.cfg", [
            f"{pt}=[parallelizationMethod=BlockMomentumSGD;BlockMomentumSGD=[{local};useNesterovMomentum=false]]",
            "train.SGD.momentumPerMB=0"])
        ma_l = accuracy(a, a.lstm_ranks, "fashion-lstm.cfg", [
            f"{pt}=[parallelizationMethod=ModelAveragingSGD;ModelAveragingSGD=[{local}]]"])
        rows.append(("LSTM, 3 epochs", one_l, a.lstm_ranks, bm_l, ma_l))
    print("\n| model | 1 worker | workers | BlockMomentumSGD | gap | ModelAveragingSGD | gap |")
    print("|---|---|---|---|---|---|---|")
    for name, o, n, b, m in rows:
        print(f"| {name} | {100 * o:.2f} % | {n} | {100 * b:.2f} % | {100 * (o - b):+.2f} | "
              f"{100 * m:.2f} % | {100 * (o - m):+.2f} |")
    sys.stdout.flush()

    pt = "train.SGD.ParallelTrain"
    dp = [f"{pt}.parallelizationMethod=DataParallelSGD"]
    weak = ["train.SGD.minibatchSize=512"]  # 256 per rank, as on one rank
    runs = [("1 rank (BMUF, N=1), minibatch 256", 1, []),
            ("2 ranks BlockMomentumSGD, minibatch 256 (128 per rank)", 2, []),
            ("2 ranks BlockMomentumSGD, minibatch 512 (256 per rank)", 2, weak),
            ("2 ranks DataParallelSGD 32-bit, minibatch 256 (128 per rank)", 2, dp),
            ("2 ranks DataParallelSGD 32-bit, minibatch 512 (256 per rank)", 2, dp + weak)]
    rates = {label: [] for label, _, _ in runs}
    shares = {label: [] for label, _, _ in runs}
    for _ in range(a.reps):
        for label, n, extra in runs:
            v, share, _ = speed(a, "fashion-mlp-bmuf.cfg", n, extra)
            rates[label].append(v)
            shares[label].append(share)
    one_rate = statistics.median(rates[runs[0][0]])
    print(f"\nfashion-mlp-bmuf.cfg, epochs 2..{a.speed_epochs}, median of {a.reps}, each rank on a core")
    print("| run | samples/s | vs 1 rank | scaling efficiency | comm share (perfStatsFile) |")
    print("|---|---|---|---|---|")
    for label, n, _ in runs:
        v = statistics.median(rates[label])
        sh = [x for x in shares[label] if x is not None]
        share = f"{100 * statistics.median(sh):.1f} %" if sh and n > 1 else "-"
        print(f"| {label} | {v:.0f} | {v / one_rate:.2f}x | {v / (n * one_rate):.3f} | {share} |")
    print("raw samples/s:", {label: [round(x) for x in v] for label, v in rates.items()})


if __name__ == "__main__":
    main()
