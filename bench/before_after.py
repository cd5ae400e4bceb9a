#!/usr/bin/python3
"""bench/before_after.py: this tree's trainer against an earlier revision's, same invocation.

    /usr/bin/python3 bench/before_after.py --base REV [--repeats N] [--only WORD] [--quick]

A refactoring must keep speed and results. This driver builds REV in a temporary git
worktree, then runs both trainers on the same data, alternating
base, new, base, new ... (N repeats, best of each kept: these machines are noisy and only
get slower), and prints each case's throughput (samples of the last epoch / its
epochTime), the ratio new / base, and whether the two runs printed the same training
numbers (the "Finished Epoch" lines without their times): a refactoring that changes no
arithmetic must print the same digits (DataParallelASGD is asynchronous: its numbers
depend on timing and are not compared).

--only WORD runs the cases whose name contains WORD. Cases: the MLP and the LSTM on one thread (cpuGemm=auto), DataParallelSGD 32-bit and
1-bit, BlockMomentumSGD and DataParallelASGD on 2 ranks. Needs a built tree (setup.sh),
data/fashion-mnist and a quiet machine."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from benchlib import HERE, Foreign, coretype_env, run

MPI = ["mpiexec", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n", "2"]
CASES = [  # name, ranks, config, extra keys, epochs
    ("mlp 1 thread", 1, "fashion-mlp", ["numCPUThreads=1"], 2),
    ("lstm 1 thread", 1, "fashion-lstm", ["numCPUThreads=1"], 2),
    ("dpsgd 32-bit x2", 2, "fashion-mlp-dp",
     ["numCPUThreads=1", "train.SGD.ParallelTrain.DataParallelSGD.gradientBits=32"], 2),
    ("dpsgd 1-bit x2", 2, "fashion-mlp-dp", ["numCPUThreads=1"], 2),
    ("bmuf x2", 2, "fashion-mlp-bmuf", ["numCPUThreads=1"], 2),
    ("asgd x2", 2, "fashion-mlp-asgd", ["numCPUThreads=1"], 2),  # asynchronous: last
]


def build_base(rev):
    tmp = tempfile.mkdtemp(prefix="pt-base-")
    tree = os.path.join(tmp, "tree")
    subprocess.run(["git", "-C", HERE, "worktree", "add", "-q", "--detach", tree, rev], check=True)
    steps = [["autoreconf", "-fi"], ["./configure", "-q"], ["make", f"-j{os.cpu_count()}", "trainer"]]
    for step in steps:
        p = subprocess.run(step, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode:
            sys.exit(f"building {rev} failed at {' '.join(step)}:\n{p.stderr.decode()[-3000:]}")
    return tmp, tree


def train(trainer, case, quick):
    name, ranks, cfg, extra, epochs = case
    model_dir = tempfile.mkdtemp(prefix="pt-ba-")
    cmd = ([] if ranks == 1 else MPI) + [
        trainer, f"configFile=configs/{cfg}.cfg", "command=train", "traceLevel=0",
        "makeMode=false", f"train.SGD.maxEpochs={epochs}", f"ModelDir={model_dir}"] + extra
    if quick:
        cmd.append("train.SGD.epochSize=15360")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    code, out, _ = run(cmd, env)
    shutil.rmtree(model_dir, ignore_errors=True)
    if code:
        sys.exit(f"{name}: {' '.join(cmd)} failed:\n{out[-3000:]}")
    last = [l for l in out.splitlines() if re.search(rf"Finished Epoch\[ *{epochs} of", l)]
    m = re.search(r"\* (\d+);.*epochTime=([0-9.e+-]+)s", last[0])
    numbers = [re.sub(r"epochTime=\S+", "", l) for l in out.splitlines()
               if "Finished Epoch" in l]
    return int(m.group(1)) / float(m.group(2)), numbers


def main():
    args = sys.argv[1:]
    if "--base" not in args:
        sys.exit(__doc__)
    rev = args[args.index("--base") + 1]
    repeats = int(args[args.index("--repeats") + 1]) if "--repeats" in args else 3
    quick = "--quick" in args
    only = args[args.index("--only") + 1] if "--only" in args else ""
    base_rev = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", rev], check=True,
                              capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], check=True,
                          capture_output=True, text=True).stdout.strip()
    print(f"base {base_rev} (built now) against this tree ({head}); "
          f"OPENBLAS_CORETYPE={coretype_env()}; best of {repeats}, alternating")
    tmp, tree = build_base(rev)
    try:
        print(f"{'case':18} {'base/s':>9} {'new/s':>9} {'new/base':>9}  same numbers")
        with Foreign() as load:
            for case in [c for c in CASES if only in c[0]]:
                best = {"base": 0.0, "new": 0.0}
                nums = {}
                for _ in range(repeats):
                    for side, exe in (("base", f"{tree}/trainer"), ("new", f"{HERE}/trainer")):
                        rate, nums[side] = train(exe, case, quick)
                        best[side] = max(best[side], rate)
                same = "yes" if nums["base"] == nums["new"] else "NO"
                if case[2] == "fashion-mlp-asgd":
                    same = "n/a (asynchronous)"
                print(f"{case[0]:18} {best['base']:9.1f} {best['new']:9.1f} "
                      f"{best['new'] / best['base']:8.3f}x  {same}", flush=True)
        print(f"other processes kept {load.load:.2f} cores busy meanwhile "
              f"(a figure taken under load is void)")
    finally:
        subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", tree])
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
