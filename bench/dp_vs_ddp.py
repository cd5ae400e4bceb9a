#!/usr/bin/python3
"""bench/dp_vs_ddp.py: partrain's DataParallelSGD against PyTorch DDP on fashion-mlp.

    /usr/bin/python3 bench/dp_vs_ddp.py [--trainer PATH] [--epochs E] [--reps R]
                                        [--bind core|none] [--seed S] [--diagnose]
                                        [--json FILE] [--quick]

In one invocation, R times over (the order of the four runs alternates between repetitions):
  a. mpiexec -n 1 TRAINER configFile=configs/fashion-mlp.cfg command=train numCPUThreads=1
  b. mpiexec -n 2 TRAINER ... (DataParallelSGD, 32-bit allreduce; syncPerfStats=1)
  c. bench/ddp_ref.py --nproc 1   (PyTorch DDP, gloo, 1 thread per process)
  d. bench/ddp_ref.py --nproc 2
all for E epochs of the same data with the same hyper-parameters (global minibatch 256;
see ddp_ref.py for how the update rule is matched). Both sides are bound the same way:
--bind core gives mpiexec --bind-to core and pins DDP worker r to core r; --bind none
gives mpiexec --bind-to none and leaves DDP unpinned.

Measured, the same way for both systems:
  samples/s      epochs 2..E. partrain: the samples and epochTime of its "Finished Epoch"
                 lines (epoch 1 is left out, as the text parsing of the statistics pass
                 and first touches happen around it); DDP: the same epochs, leaving out
                 the first 5 minibatches of each (warm-up), data already in memory.
  time to 87 %   training seconds summed over epochs 1..k, k the first epoch after which
                 test accuracy >= the target (default 0.87), evaluated after every epoch.
                 Evaluation time is not counted, nor the loading/parsing of data and
                 normalisation statistics before epoch 1. partrain: the epochTime values
                 and `command=test` on each epoch's model (modelPath.k); DDP: barrier to
                 barrier per epoch, rank 0 testing in between.
Repetition r (0-based) uses seed SEED+r on both sides (trainer randomSeed, ddp_ref --seed:
initial weights and shuffle), so time to accuracy is seen over R initialisations.
The median over the R repetitions is reported (min and max alongside). The CPU time
that other processes used during each run is measured (/proc/stat less our own and our
children's rusage) and printed; a run disturbed by more than --max-foreign cores is run
again (at most --retries times), as this machine is shared. Ratios are
partrain / DDP for samples/s and DDP / partrain for time to accuracy, so > 1 means
partrain is faster; scaling efficiency = samples/s at 2 ranks / (2 x samples/s at 1).
--diagnose adds a run without communication: partrain at minibatch 128 (one rank's share)
on core 0 alone, then two independent copies on cores 0 and 1 at once (via taskset, no
mpiexec), to separate the cost of sharing the machine from the cost of the allreduce."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import benchlib
from benchlib import HERE

TARGETS = {"ratio": 2.5, "tta": 2.0, "eff": 0.9}
EPOCH_RE = re.compile(r"Finished Epoch\[\s*(\d+) of \d+\]: .*?\* (\d+);.*epochTime=([0-9.e+-]+)s")
TEST_RE = re.compile(r"Final Results: .*?EvalClassificationError = ([0-9.e+-]+) \* (\d+)")
AGG_RE = re.compile(r"Actual gradient aggregation time: ([0-9.e+-]+)")


def mpi_env():
    return benchlib.clean_env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def mpiexec(n, bind):
    cmd = ["mpiexec", "-n", str(n), "--bind-to", bind]
    if n > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    return cmd


def train_cmd(a, model_dir, seed, extra=()):
    return [a.trainer, "configFile=configs/fashion-mlp.cfg", "command=train", "numCPUThreads=1",
            "traceLevel=1", "makeMode=false", f"train.SGD.maxEpochs={a.epochs}", f"ModelDir={model_dir}",
            f"randomSeed={seed}", *extra]


def epoch_lines(out):
    return [{"epoch": int(ep), "samples": int(samples), "seconds": float(secs),
             "samples_per_s": int(samples) / float(secs)} for ep, samples, secs in EPOCH_RE.findall(out)]


def trainer_run(a, n, seed):
    """Train with n ranks; then test every epoch's model. Returns a dict like ddp_ref's."""
    model_dir = tempfile.mkdtemp(prefix="pt-dpbench-")
    try:
        cmd = mpiexec(n, a.bind) + train_cmd(a, model_dir, seed,
                                             [f"train.SGD.ParallelTrain.syncPerfStats={1 if n > 1 else 0}"])
        code, out, _ = benchlib.run(cmd, mpi_env())
        if code:
            sys.exit(f"trainer failed ({code}): {' '.join(cmd)}\n{out[-4000:]}")
        threads = re.search(r"Using (\d+) BLAS threads? per rank", out)
        epochs = epoch_lines(out)
        if len(epochs) != a.epochs:
            sys.exit(f"trainer: found {len(epochs)} 'Finished Epoch' lines, wanted {a.epochs}\n{out[-4000:]}")
        agg = [float(v) for v in AGG_RE.findall(out)]
        reached, total = None, 0.0
        for e in epochs:
            path = f"{model_dir}/model.dnn.{e['epoch']}"
            if not os.path.exists(path):
                path = f"{model_dir}/model.dnn"
            tcmd = ["mpiexec", "-n", "1", a.trainer, "configFile=configs/fashion-mlp.cfg", "command=test",
                    "numCPUThreads=1", f"ModelDir={model_dir}", f"test.modelPath={path}"]
            code, tout, _ = benchlib.run(tcmd, mpi_env())
            m = TEST_RE.search(tout)
            if code or not m:
                sys.exit(f"trainer test failed ({code}): {' '.join(tcmd)}\n{tout[-4000:]}")
            e["test_accuracy"] = 1.0 - float(m.group(1))
            total += e["seconds"]
            if reached is None and e["test_accuracy"] >= a.target - 1e-9:
                reached = {"epoch": e["epoch"], "train_seconds": total}
        return {"nproc": n, "epochs": epochs, "reached": reached, "agg_seconds": agg,
                "blas_threads": int(threads.group(1)) if threads else None}
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)


def ddp_run(a, n, seed, coretype=None):
    cmd = ["/usr/bin/python3", f"{HERE}/bench/ddp_ref.py", "--nproc", str(n), "--epochs", str(a.epochs),
           "--bind", a.bind, "--target", str(a.target), "--seed", str(seed)]
    code, out, _ = benchlib.run(cmd, benchlib.clean_env(coretype))
    if code:
        sys.exit(f"ddp_ref failed ({code}): {' '.join(cmd)}\n{out[-4000:]}")
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def steady_rate(r, ddp):
    """Samples/s over epochs 2..E (partrain: whole epochs; DDP: after its warm-up)."""
    eps = [e for e in r["epochs"] if e["epoch"] >= 2] or r["epochs"]
    if ddp:  # each epoch's steady rate, weighted by its duration
        secs = [60000 / e["steady_samples_per_s"] for e in eps]
        return 60000 * len(eps) / sum(secs)
    return sum(e["samples"] for e in eps) / sum(e["seconds"] for e in eps)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, spec=".1f", none="n/a"):
    return none if v is None else format(v, spec)


def mark(ok):
    return "met" if ok else "NOT met"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trainer", default=f"{HERE}/trainer", help="trainer binary (default: ./trainer of this tree)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bind", choices=("core", "none"), default="core")
    ap.add_argument("--target", type=float, default=0.87, help="test accuracy for time-to-accuracy")
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 epochs, 1 repetition")
    ap.add_argument("--seed", type=int, default=1,
                    help="repetition r uses seed SEED+r (trainer randomSeed, ddp_ref --seed)")
    ap.add_argument("--diagnose", action="store_true",
                    help="also time partrain at minibatch 128 on one core, alone and as two "
                         "independent copies on both cores (no communication)")
    ap.add_argument("--max-foreign", type=float, default=0.1,
                    help="a run during which other processes kept more cores busy than this "
                         "(shared machine) is run again, up to --retries times")
    ap.add_argument("--retries", type=int, default=3)
    ap.add_argument("--json", help="also write every run's raw numbers to this file")
    ap.add_argument("--ref-coretype", help="also run DDP with OPENBLAS_CORETYPE set to this (default: "
                    "SkylakeX where OpenBLAS detects a non-AVX-512 kernel on an AVX-512 CPU)")
    a = ap.parse_args()
    if a.quick:
        a.epochs, a.reps = 3, 1
    a.trainer = os.path.abspath(a.trainer)
    if a.epochs < 2:
        ap.error("--epochs must be at least 2 (epoch 1 is not a steady-state epoch)")

    code, version, _ = benchlib.run([a.trainer, "--version"], benchlib.clean_env())
    cpu = re.search(r"cpu backend: (.*)", version)
    kernel = re.search(r"\(kernel (\S+),", version)
    kernel = kernel.group(1) if kernel else "?"
    print(f"trainer: {a.trainer}: {cpu.group(1) if cpu else version.strip()}")
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    print(f"OPENBLAS_CORETYPE: {'was ' + pinned + ', removed' if pinned else 'unset'} for every run "
          f"(OpenBLAS detects its {kernel} kernel); nproc={os.cpu_count()}; "
          f"{os.uname().sysname} {os.uname().release}; bind={a.bind}; epochs={a.epochs}; reps={a.reps}")
    # DDP at its best: where OpenBLAS detects a kernel that is not its best here (an AVX-512
    # CPU it does not know), DDP also runs with OpenBLAS forced to SkylakeX, labelled; and
    # with the environment's pinned kernel, if any
    extra = []
    if a.ref_coretype:
        extra.append(a.ref_coretype)
    elif benchlib.slow_kernel(kernel):
        extra.append(benchlib.FORCE_KERNELS[0])
    if pinned and pinned not in extra:
        extra.append(pinned)

    runs = {k: [] for k in ("pt1", "pt2", "ddp1", "ddp2")}
    order = [("pt1", lambda sd: trainer_run(a, 1, sd)), ("ddp1", lambda sd: ddp_run(a, 1, sd)),
             ("pt2", lambda sd: trainer_run(a, 2, sd)), ("ddp2", lambda sd: ddp_run(a, 2, sd))]
    for ct in extra:
        for n in (1, 2):
            key = f"ddp{n}:{ct}"
            runs[key] = []
            order.append((key, lambda sd, n=n, ct=ct: ddp_run(a, n, sd, ct)))
    for rep in range(a.reps):
        for key, fn in (order if rep % 2 == 0 else order[::-1]):
            for attempt in range(a.retries + 1):
                t0 = time.perf_counter()
                with benchlib.Foreign() as other:
                    r = fn(a.seed + rep)
                r["foreign_load"] = other.load
                if other.load <= a.max_foreign or attempt == a.retries:
                    break
                print(f"  rep {rep + 1} {key:4}: other processes kept {other.load:.2f} cores busy; "
                      f"run again", flush=True)
                time.sleep(5)
            runs[key].append(r)
            print(f"  rep {rep + 1} {key:4}: {steady_rate(r, key.startswith('ddp')):8.0f} samples/s, "
                  f"accuracy by epoch {' '.join(format(e['test_accuracy'], '.4f') for e in r['epochs'])}, "
                  f"to {a.target:.0%}: {fmt(r['reached'] and r['reached']['train_seconds'], '.2f')} s "
                  f"[{time.perf_counter() - t0:.0f} s wall, other processes {other.load:.2f} cores]", flush=True)
    ddp_blas = runs["ddp1"][0]["blas"]
    print(f"DDP: torch {runs['ddp1'][0]['torch']}, {runs['ddp1'][0]['torch_threads']} torch thread, {ddp_blas}")
    print(f"partrain: {runs['pt1'][0]['blas_threads']} BLAS thread per rank")
    worst = max(r["foreign_load"] for v in runs.values() for r in v)
    print(f"other processes on this machine: at most {worst:.2f} cores busy during a run"
          + ("  (WARNING: not an idle machine; compare medians only)" if worst > 0.1 else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "runs": runs}, f, indent=1)

    sps = {k: [steady_rate(r, k.startswith("ddp")) for r in v] for k, v in runs.items()}
    tta = {k: [r["reached"] and r["reached"]["train_seconds"] for r in v] for k, v in runs.items()}
    ep_at = {k: med([r["reached"] and r["reached"]["epoch"] for r in v]) for k, v in runs.items()}
    acc = {k: [statistics.median(r["epochs"][i]["test_accuracy"] for r in v) for i in range(a.epochs)]
           for k, v in runs.items()}
    s = {k: med(v) for k, v in sps.items()}
    t = {k: (med(v) if all(x is not None for x in v) else None) for k, v in tta.items()}

    print()
    print(f"{'run':28} {'samples/s':>10} {'(min-max)':>15} {'time to ' + format(a.target, '.0%'):>12} "
          f"{'epoch':>5}  test accuracy after each epoch")
    names = {"pt1": "partrain 1 rank", "pt2": "partrain 2 ranks (DP-SGD)",
             "ddp1": "PyTorch DDP 1 process", "ddp2": "PyTorch DDP 2 processes"}
    for ct in extra:
        names[f"ddp1:{ct}"] = f"DDP 1 proc, OpenBLAS {ct}"
        names[f"ddp2:{ct}"] = f"DDP 2 procs, OpenBLAS {ct}"
    for k in runs:
        print(f"{names[k]:28} {s[k]:10.0f} {min(sps[k]):7.0f}-{max(sps[k]):<7.0f} "
              f"{fmt(t[k], '.2f', 'not reached'):>10} s {fmt(ep_at[k], '.0f'):>5}  "
              f"{' '.join(format(x, '.4f') for x in acc[k])}")
    # the reference at its best: the fastest DDP at 2 processes among the kernels run
    best = max((k for k in runs if k.startswith("ddp2")), key=lambda k: s[k])
    best1 = best.replace("ddp2", "ddp1")
    if best != "ddp2":
        print(f"\nDDP at its best here: {names[best]} (the ratios below are against it; "
              f"against DDP with the detected kernel: samples/s {s['pt2'] / s['ddp2']:.2f}x, "
              f"time to {a.target:.0%} {fmt(t['ddp2'] and t['pt2'] and t['ddp2'] / t['pt2'], '.2f')}x)")
        s["ddp2"], s["ddp1"], t["ddp2"] = s[best], s[best1], t[best]
    eff_pt, eff_ddp = s["pt2"] / (2 * s["pt1"]), s["ddp2"] / (2 * s["ddp1"])
    ratio = s["pt2"] / s["ddp2"]
    tta_ratio = t["ddp2"] / t["pt2"] if t["ddp2"] and t["pt2"] else None
    print()
    print(f"samples/s at 2 ranks, partrain / DDP:        {ratio:5.2f}x   (target >= {TARGETS['ratio']}x: {mark(ratio >= TARGETS['ratio'])})")
    print(f"samples/s at 1 rank,  partrain / DDP:        {s['pt1'] / s['ddp1']:5.2f}x")
    print(f"time to {a.target:.0%} at 2 ranks, DDP / partrain:  {fmt(tta_ratio, '5.2f')}x   "
          f"(target >= {TARGETS['tta']}x: {mark(tta_ratio is not None and tta_ratio >= TARGETS['tta'])})")
    print(f"scaling efficiency at 2 ranks, partrain:     {eff_pt:5.3f}   (target >= {TARGETS['eff']}: {mark(eff_pt >= TARGETS['eff'])})")
    print(f"scaling efficiency at 2 ranks, DDP:          {eff_ddp:5.3f}")

    # where partrain's 2-rank step goes: the allreduce (including any wait for the other
    # rank: it is blocking) against the whole step; rank 0 logs one line per step
    per_epoch = -(-60000 // 256)
    fr = sorted((sum(r["agg_seconds"][per_epoch:]), sum(e["seconds"] for e in r["epochs"][1:]))
                for r in runs["pt2"] if len(r["agg_seconds"]) == per_epoch * a.epochs)
    if fr:
        agg, tot = fr[len(fr) // 2]
        steps = per_epoch * (a.epochs - 1)
        print(f"partrain 2 ranks: gradient aggregation (syncPerfStats) {1e3 * agg / steps:.3f} ms of "
              f"{1e3 * tot / steps:.3f} ms per step = {100 * agg / tot:.1f} % (epochs 2..{a.epochs}); "
              f"1 rank: {1e3 * 256 / s['pt1']:.3f} ms per 256-sample step")
    else:
        print("partrain 2 ranks: no usable 'Actual gradient aggregation time' lines (syncPerfStats)")
    for k in ("ddp1", "ddp2"):
        ph = [statistics.median(r["epochs"][i]["step_ms"][p] for r in runs[k] for i in range(1, a.epochs))
              for p in ("forward", "backward+allreduce", "update")]
        print(f"{names[k]}: per step forward {ph[0]:.3f} ms, backward+allreduce {ph[1]:.3f} ms, "
              f"update {ph[2]:.3f} ms (medians over epochs 2..{a.epochs})")
    if a.diagnose:
        diagnose(a)


def diagnose(a):
    """Per-core compute at 2 ranks without any communication: partrain at minibatch 128
    (each rank's share) on core 0 alone, then two such processes at once, one per core."""
    def start(core, model_dir):
        cmd = ["taskset", "-c", str(core)] + train_cmd(a, model_dir, a.seed, ["train.SGD.minibatchSize=128"])
        return subprocess.Popen(cmd, cwd=HERE, env=mpi_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def rate(out):
        eps = epoch_lines(out)[1:]
        return sum(e["samples"] for e in eps) / sum(e["seconds"] for e in eps)

    with tempfile.TemporaryDirectory(prefix="pt-diag-") as tmp:
        alone = rate(start(0, f"{tmp}/a").communicate()[0].decode())
        procs = [start(c, f"{tmp}/c{c}") for c in (0, 1)]
        both = [rate(p.communicate()[0].decode()) for p in procs]
    print(f"diagnosis: partrain minibatch 128, 1 process on core 0: {alone:.0f} samples/s; two independent "
          f"processes (cores 0 and 1): {both[0]:.0f} + {both[1]:.0f} = {sum(both):.0f} samples/s "
          f"({sum(both) / (2 * alone):.3f} of 2x alone)")


if __name__ == "__main__":
    main()
