#!/usr/bin/python3
"""bench/asgd.py: DataParallelASGD against DataParallelSGD 32-bit, in one run.

Speed: samples/s of configs/fashion-mlp-asgd.cfg at 2 and 4 ranks, with DataParallelASGD
(plain and usePipeline) and with DataParallelSGD 32-bit on the same network, minibatch and
data, epochs 2.. only, median of --reps alternating runs; the ratio ASGD / DPSGD at each
rank count. 4 ranks share this machine's cores when it has fewer (oversubscribed).
Staleness: from the ASGD runs' perfStatsFile (one JSON line per push, every rank), the
distribution of how many other workers' pushes landed between a worker's pull and its
next push.
Quality: test accuracy after --epochs epochs of fashion-mlp.cfg on 1 worker and
fashion-mlp-asgd.cfg on 4 workers.

Prints tables; numbers go to bench/RESULTS.md by hand."""
import argparse
import collections
import json
import os
import shutil
import statistics
import sys

import benchlib
import local_sgd

PT = "train.SGD.ParallelTrain"


def staleness(model_dir, counts):
    for name in os.listdir(model_dir):
        if name.startswith("perf.jsonl"):
            with open(os.path.join(model_dir, name)) as f:
                for line in f:
                    j = json.loads(line)
                    if "staleness" in j and j["epoch"] >= 2:
                        counts[j["staleness"]] += 1


def speed(a, n, extra, counts=None):
    out, model_dir = local_sgd.trainer(a, n, "fashion-mlp-asgd.cfg", [
        f"train.SGD.maxEpochs={a.speed_epochs}", f"{PT}.perfStatsFile={{dir}}/perf.jsonl",
        *extra], command="train")
    if counts is not None:
        staleness(model_dir, counts)
    shutil.rmtree(model_dir, ignore_errors=True)
    return local_sgd.rate(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trainer", default=f"{benchlib.HERE}/trainer")
    ap.add_argument("--reps", type=int, default=3, help="alternating speed runs per setting")
    ap.add_argument("--speed-epochs", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=5, help="epochs of the quality runs")
    ap.add_argument("--skip-quality", action="store_true")
    a = ap.parse_args()
    print(f"# OPENBLAS_CORETYPE={benchlib.coretype_env()}; {os.cpu_count()} cores; "
          "1 BLAS thread per rank")

    dp = [f"{PT}.parallelizationMethod=DataParallelSGD"]
    pipe = [f"{PT}.DataParallelASGD.usePipeline=true"]
    runs = [(f"{n} ranks {label}", n, extra, label)
            for n in (2, 4) for label, extra in (("DataParallelSGD 32-bit", dp),
                                                 ("DataParallelASGD", []),
                                                 ("DataParallelASGD, usePipeline", pipe))]
    rates = {r[0]: [] for r in runs}
    stale = {n: collections.Counter() for n in (2, 4)}
    for _ in range(a.reps):
        for label, n, extra, kind in runs:
            counts = stale[n] if kind == "DataParallelASGD" else None
            rates[label].append(speed(a, n, extra, counts))
    print(f"\nfashion-mlp-asgd.cfg (minibatch 256 global), epochs 2..{a.speed_epochs}, "
          f"median of {a.reps}")
    print("| run | samples/s | vs DataParallelSGD 32-bit, same ranks |")
    print("|---|---|---|")
    for label, n, _, kind in runs:
        v = statistics.median(rates[label])
        ref = statistics.median(rates[f"{n} ranks DataParallelSGD 32-bit"])
        print(f"| {label} | {v:.0f} | {v / ref:.2f}x |")
    print("raw samples/s:", {k: [round(x) for x in v] for k, v in rates.items()})

    print("\nstaleness of DataParallelASGD pushes (other workers' pushes between a pull and "
          "the next push), epochs 2.., all ranks, all plain runs")
    print("| ranks | pushes | mean | " + " | ".join(str(k) for k in range(8)) + " | 8+ |")
    print("|---|---|---|" + "---|" * 9)
    for n, c in stale.items():
        total = sum(c.values())
        if not total:
            continue
        mean = sum(k * v for k, v in c.items()) / total
        cells = [f"{100 * c[k] / total:.1f} %" for k in range(8)]
        cells.append(f"{100 * sum(v for k, v in c.items() if k >= 8) / total:.1f} %")
        print(f"| {n} | {total} | {mean:.2f} | " + " | ".join(cells) + " |")
    sys.stdout.flush()

    if a.skip_quality:
        return
    ep = [f"train.SGD.maxEpochs={a.epochs}"]
    one = local_sgd.accuracy(a, 1, "fashion-mlp.cfg", ep + [f"{PT}.parallelizationMethod=None"])
    asg = local_sgd.accuracy(a, 4, "fashion-mlp-asgd.cfg", ep)
    print(f"\n| {a.epochs} epochs | 1 worker (fashion-mlp.cfg) | 4 workers DataParallelASGD "
          f"(fashion-mlp-asgd.cfg) | gap |")
    print("|---|---|---|---|")
    print(f"| test accuracy | {100 * one:.2f} % | {100 * asg:.2f} % | {100 * (one - asg):+.2f} |")


if __name__ == "__main__":
    main()
