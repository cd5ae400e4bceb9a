#!/usr/bin/python3
"""bench/bs_vs_snb.py: a network written in BrainScript against the same network from
SimpleNetworkBuilder, same trainer, same invocation.

    /usr/bin/python3 bench/bs_vs_snb.py [--repeats N] [--epochs E]

Cases: configs/fashion-mlp-bs.cfg against configs/fashion-mlp.cfg on one thread and on 2
ranks (DataParallelSGD 32-bit): the same network with the same initial parameters, so the
"Finished Epoch" numbers must agree; configs/fashion-lstm-bs.cfg (CNTK's
RecurrentLSTMLayer without peepholes, BS.Sequences.Last) against configs/fashion-lstm.cfg
(partrain's peephole LSTM) on one thread: speed only, the networks differ. Runs alternate
(BrainScript, SimpleNetworkBuilder, ...), best of N kept; the ratio is BrainScript's
throughput (samples of the last epoch / its epochTime) over SimpleNetworkBuilder's. Needs a
built tree, data/fashion-mnist and a quiet machine."""
import os
import re
import shutil
import sys
import tempfile

from benchlib import HERE, Foreign, coretype_env, run

MPI = ["mpiexec", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n", "2"]
CASES = [  # name, ranks, BrainScript config, SimpleNetworkBuilder config, extra, same numbers
    ("mlp 1 thread", 1, "fashion-mlp-bs", "fashion-mlp", ["numCPUThreads=1"], True),
    ("mlp dpsgd x2", 2, "fashion-mlp-bs", "fashion-mlp", ["numCPUThreads=1"], True),
    ("lstm 1 thread", 1, "fashion-lstm-bs", "fashion-lstm", ["numCPUThreads=1"], False),
]


def train(cfg, ranks, extra, epochs):
    model_dir = tempfile.mkdtemp(prefix="pt-bs-")
    cmd = ([] if ranks == 1 else MPI) + [
        f"{HERE}/trainer", f"configFile=configs/{cfg}.cfg", "command=train", "traceLevel=0",
        "makeMode=false", f"train.SGD.maxEpochs={epochs}", f"ModelDir={model_dir}"] + extra
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    code, out, _ = run(cmd, env)
    shutil.rmtree(model_dir, ignore_errors=True)
    if code:
        sys.exit(f"{' '.join(cmd)} failed:\n{out[-3000:]}")
    last = [l for l in out.splitlines() if re.search(rf"Finished Epoch\[ *{epochs} of", l)]
    m = re.search(r"\* (\d+);.*epochTime=([0-9.e+-]+)s", last[0])
    # the criteria of every epoch, whatever the names (BrainScript's are the node names)
    numbers = [re.findall(r"= ([0-9.e+-]+)%? \*", l) for l in out.splitlines()
               if "Finished Epoch" in l]
    return int(m.group(1)) / float(m.group(2)), numbers


def same(a, b):
    """Criteria equal within float summation noise (ClassificationError in % for BrainScript
    node names ending in 's', a fraction for SimpleNetworkBuilder's)."""
    for la, lb in zip(a, b):
        for x, y in zip(la, lb):
            x, y = float(x), float(y)
            if abs(x - y) > 1e-5 * max(abs(x), abs(y)) and abs(x - 100 * y) > 1e-3 * abs(x) + 1e-6:
                return False
    return len(a) == len(b)


def main():
    args = sys.argv[1:]
    repeats = int(args[args.index("--repeats") + 1]) if "--repeats" in args else 3
    epochs = int(args[args.index("--epochs") + 1]) if "--epochs" in args else 2
    print(f"BrainScript against SimpleNetworkBuilder, this tree; OPENBLAS_CORETYPE="
          f"{coretype_env()}; {epochs} epochs, best of {repeats}, alternating")
    print(f"{'case':15} {'snb/s':>9} {'bs/s':>9} {'bs/snb':>8}  same numbers")
    with Foreign() as load:
        for name, ranks, bs, snb, extra, compare in CASES:
            best = {"bs": 0.0, "snb": 0.0}
            nums = {}
            for _ in range(repeats):
                for side, cfg in (("bs", bs), ("snb", snb)):
                    rate, nums[side] = train(cfg, ranks, extra, epochs)
                    best[side] = max(best[side], rate)
            verdict = ("yes" if same(nums["bs"], nums["snb"]) else "NO") if compare else \
                "n/a (other LSTM)"
            print(f"{name:15} {best['snb']:9.1f} {best['bs']:9.1f} "
                  f"{best['bs'] / best['snb']:7.3f}x  {verdict}", flush=True)
    print(f"other processes kept {load.load:.2f} cores busy meanwhile "
          f"(a figure taken under load is void)")


if __name__ == "__main__":
    main()
