#!/usr/bin/python3
"""bench/cluster.py: every parallel method across simulated hosts (scripts/cluster.sh) at
several link rates, against a bare MPI_Allreduce and PyTorch DDP over the same namespaces.

    /usr/bin/python3 bench/cluster.py [--hosts 2,4] [--rates unshaped,1gbit,100mbit]
        [--methods dp32,dp32mpi,dp32ovl,dp1,bmuf,ma,asgd,ddp,ddp16] [--slots 1]
        [--hier-rates unshaped,1gbit] [--hier-methods dp32,dp32flat,dp32mpiflat,ddp]
        [--epochs 4] [--shaped-fraction 0.25] [--target 0.87] [--sysctl K=V] [--json FILE]

Needs root (the cluster), python3-torch for the ddp rows, a built tree (make). --slots
ranks per host (default 1), --bind-to none for partrain and unpinned DDP workers: the
kernel spreads the ranks over this machine's cores alike for both systems.

For each host count and rate, in one invocation:
  bare allreduce  bench/aggregation on the cluster: the median MPI_Allreduce of the MLP's
                  2.68 MB gradient, and the engine's own 32-bit aggregation (auto algorithm)
  methods         partrain's shipped configs, unchanged but for maxEpochs and ModelDir:
                  dp32     configs/fashion-mlp.cfg (DataParallelSGD 32-bit; allReduceAlgorithm
                           auto = partrain's ring across hosts; with several ranks per host
                           hierarchicalAllReduce auto = on), dp32mpi the same with
                           allReduceAlgorithm=mpi, dp32ovl with overlapBackward=true,
                           dp32flat / dp32mpiflat: hierarchicalAllReduce=false (ring / MPI),
                           dp1 configs/fashion-mlp-dp.cfg (1-bit),
                           bmuf / ma / asgd configs/fashion-mlp-{bmuf,ma,asgd}.cfg
                  ddp, ddp16, ddppsgd: bench/ddp_ref.py (the fashion-mlp.cfg network, update
                           rule and minibatch) with fp32, the fp16 hook, PowerSGD (ddppsgd is
                           not in the default list: Debian 12's python3-torch 1.13.1 fails
                           in the PowerSGD hook over gloo, "enforce fail at pair.cc:510
                           op.preamble.length <= op.nbytes", also on one host);
                  ddpx, ddp16x: the same with OpenBLAS forced to SkylakeX in DDP's
                           workers, added by default on an AVX-512 CPU where OpenBLAS detects a
                           slower kernel (PyTorch at its best there)
  epoch time      the fastest epoch's training time (partrain: the epochTime of its
                  Finished Epoch lines; DDP: barrier to barrier)
                  At shaped rates one partial epoch is timed: its first --shaped-fraction
                  of the samples (partrain: epochSize; DDP: --max-minibatches), scaled to
                  the whole epoch (every minibatch costs the same; the first ones include
                  the warm-up, so this errs on the slow side for both systems alike).
  time to 87 %    unshaped: measured, training seconds summed up to the first epoch whose
                  test accuracy (the epoch's model tested on the 10 000 test images, not
                  timed) reaches the target. At shaped rates the synchronous methods (all
                  but asgd) do the same arithmetic as unshaped, so the epochs needed are the
                  unshaped run's and the time is derived: that many epochs x this rate's
                  epoch time (marked "d"); asgd's accuracy depends on timing: n/a there.
  ratio           epoch time / the same method's unshaped epoch time on as many hosts
  hierarchical    then 2 hosts x 2 ranks at --hier-rates: dp32 (auto: hierarchical, the ring
                  among the leaders), dp32flat (flat ring), dp32mpiflat (flat MPI_Allreduce),
                  and DDP fp32 on the same 4 ranks
The TCP settings in force (net.ipv4.tcp_slow_start_after_idle, tcp_rmem/wmem, core
rmem_max/wmem_max inside h1) are printed with the table. --sysctl K=V sets one inside every
host before the runs (repeatable), to see whether it matters."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import benchlib
from benchlib import HERE

CLUSTER = os.path.join(HERE, "scripts", "cluster.sh")
EPOCH_RE = re.compile(r"Finished Epoch\[\s*(\d+) of \d+\]: .*?\* (\d+);.*epochTime=([0-9.e+-]+)s")
TEST_RE = re.compile(r"Final Results: .*?ClassificationError = ([0-9.e+-]+) \* (\d+)")
CONFIGS = {
    "dp32": ("configs/fashion-mlp.cfg", []),
    "dp32mpi": ("configs/fashion-mlp.cfg", ["train.SGD.ParallelTrain.allReduceAlgorithm=mpi"]),
    "dp32ovl": ("configs/fashion-mlp.cfg", ["train.SGD.ParallelTrain.overlapBackward=true"]),
    "dp32flat": ("configs/fashion-mlp.cfg", ["train.SGD.ParallelTrain.hierarchicalAllReduce=false"]),
    "dp32mpiflat": ("configs/fashion-mlp.cfg", ["train.SGD.ParallelTrain.hierarchicalAllReduce=false",
                                                "train.SGD.ParallelTrain.allReduceAlgorithm=mpi"]),
    "dp1": ("configs/fashion-mlp-dp.cfg", []),
    "bmuf": ("configs/fashion-mlp-bmuf.cfg", []),
    "ma": ("configs/fashion-mlp-ma.cfg", []),
    "asgd": ("configs/fashion-mlp-asgd.cfg", []),
}
HOOKS = {"ddp": "none", "ddp16": "fp16", "ddppsgd": "powersgd",
         "ddpx": "none", "ddp16x": "fp16", "ddppsgdx": "powersgd"}
# ddpx, ddp16x, ddppsgdx: the same with OpenBLAS forced to its SkylakeX kernel in DDP's
# workers: PyTorch at its best where OpenBLAS detects a slower kernel (an AVX-512 CPU newer
# than Debian's OpenBLAS 0.3.21, which falls back to Prescott); added to the default list
# on such CPUs
FORCED_KERNEL = benchlib.FORCE_KERNELS[0]
SYSCTLS = ["net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
           "net.core.rmem_max", "net.core.wmem_max"]


def env():
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def sh(cmd, e=None, check=True):
    p = subprocess.run(cmd, env=e or env(), cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if check and p.returncode:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout[-3000:]}")
    return p.returncode, p.stdout


class Cluster:
    def __init__(self, hosts, slots, rate, sysctls):
        self.dir = tempfile.mkdtemp(prefix="pt-benchcluster-")
        os.rmdir(self.dir)
        self.env = dict(env(), PT_CLUSTER_DIR=self.dir, PT_CLUSTER_SLOTS=str(slots), PT_CLUSTER_TIMEOUT="1800")
        args = [CLUSTER, "up", str(hosts)] + ([] if rate == "unshaped" else ["--rate", rate])
        sh(args, self.env)
        self.hosts, self.ranks = hosts, hosts * slots
        for kv in sysctls:
            for h in range(1, hosts + 1):
                sh([CLUSTER, "exec", f"h{h}", "sysctl", "-q", "-w", kv], self.env)
        self.tcp = {}
        for k in SYSCTLS:
            _, out = sh([CLUSTER, "exec", "h1", "sysctl", "-n", k], self.env, check=False)
            self.tcp[k] = " ".join(out.split())

    def mpiexec(self, args):
        return [CLUSTER, "mpiexec", "-n", str(self.ranks), "--bind-to", "none"] + args

    def down(self):
        sh([CLUSTER, "down"], self.env, check=False)


def aggregation(cl):
    _, out = sh(cl.mpiexec([os.path.join(HERE, "bench", "aggregation"), "20"]), cl.env)
    rows = {}
    for line in out.splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) == 5 and re.fullmatch(r"[0-9.]+", parts[1]):
            rows[parts[0].replace(" (reference)", "")] = float(parts[1])
    return rows


def test_accuracy(model):
    cmd = ["mpiexec", "-n", "1", os.path.join(HERE, "trainer"), "configFile=configs/fashion-mlp.cfg",
           "command=test", "numCPUThreads=1", f"test.modelPath={model}"]
    code, out = sh(cmd, check=False)
    m = TEST_RE.search(out)
    if code or not m:
        sys.exit(f"test failed ({code}): {' '.join(cmd)}\n{out[-3000:]}")
    return 1.0 - float(m.group(1))


def partrain(cl, method, epochs, with_test, fraction):
    cfg, extra = CONFIGS[method]
    scale = 1.0
    if fraction < 1.0:
        extra = extra + [f"train.SGD.epochSize={int(60000 * fraction)}"]
        scale = 60000 / int(60000 * fraction)
    mdir = tempfile.mkdtemp(prefix="pt-benchmodel-")
    try:
        cmd = cl.mpiexec([os.path.join(HERE, "trainer"), f"configFile={cfg}", "command=train",
                          "numCPUThreads=1", "makeMode=false", f"train.SGD.maxEpochs={epochs}",
                          f"ModelDir={mdir}", "train.SGD.keepCheckPointFiles=false", *extra])
        t0 = time.time()
        _, out = sh(cmd, cl.env)
        wall = time.time() - t0
        eps = [{"epoch": int(a), "samples": int(b), "seconds": float(c) * scale} for a, b, c in EPOCH_RE.findall(out)]
        if len(eps) != epochs:
            sys.exit(f"{method}: {len(eps)} epochs in the log, wanted {epochs}\n{out[-3000:]}")
        if with_test:
            for e in eps:
                path = f"{mdir}/model.dnn.{e['epoch']}"
                e["test_accuracy"] = test_accuracy(path if os.path.exists(path) else f"{mdir}/model.dnn")
        return {"epochs": eps, "wall": wall}
    finally:
        shutil.rmtree(mdir, ignore_errors=True)


def ddp(cl, method, epochs, target, fraction):
    mbs = 0 if fraction >= 1.0 else -(-int(60000 * fraction) // 256)
    cmd = ["/usr/bin/python3", os.path.join(HERE, "bench", "ddp_ref.py"), "--nproc", str(cl.ranks),
           "--epochs", str(epochs), "--bind", "none", "--target", str(target), "--hook", HOOKS[method],
           "--cluster-hosts", str(cl.hosts), "--max-minibatches", str(mbs)]
    _, out = sh(cmd, dict(cl.env, OPENBLAS_CORETYPE=FORCED_KERNEL) if method.endswith("x") else cl.env)
    r = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
    full = -(-60000 // 256)
    return {"epochs": [{"epoch": e["epoch"], "seconds": e["seconds"] * full / e.get("minibatches", full),
                        "test_accuracy": e["test_accuracy"] if not mbs else None} for e in r["epochs"]]}


DEFAULT_METHODS = "dp32,dp32mpi,dp32ovl,dp1,bmuf,ma,asgd,ddp,ddp16"


def slow_openblas_kernel():
    """An AVX-512 CPU on which OpenBLAS detects one of its non-AVX-512 kernels."""
    _, out = sh([os.path.join(HERE, "trainer"), "--version"], env(), check=False)
    m = re.search(r"\(kernel (\S+),", out)
    return bool(m) and benchlib.slow_kernel(m.group(1))


def reached(eps, target):
    total = 0.0
    for e in eps:
        total += e["seconds"]
        if e.get("test_accuracy") is not None and e["test_accuracy"] >= target - 1e-9:
            return e["epoch"], total
    return None, None


def fmt(v, spec=".2f"):
    return "n/a" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", default="2,4")
    ap.add_argument("--rates", default="unshaped,1gbit,100mbit")
    ap.add_argument("--methods", default=DEFAULT_METHODS)
    ap.add_argument("--slots", type=int, default=1, help="ranks per host")
    ap.add_argument("--hier-rates", default="unshaped,1gbit",
                    help="also 2 hosts x 2 ranks at these rates ('' = not)")
    ap.add_argument("--hier-methods", default="dp32,dp32flat,dp32mpiflat,ddp")
    ap.add_argument("--epochs", type=int, default=4, help="epochs of the unshaped runs")
    ap.add_argument("--shaped-fraction", type=float, default=0.25)
    ap.add_argument("--target", type=float, default=0.87)
    ap.add_argument("--sysctl", action="append", default=[])
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    rates = a.rates.split(",")
    if rates[0] != "unshaped":
        sys.exit("--rates must start with unshaped (the reference of the ratios and of time to accuracy)")
    methods = a.methods.split(",")
    for m in methods:
        if m not in CONFIGS and m not in HOOKS:
            sys.exit(f"unknown method {m}")
    pinned = os.environ.pop("OPENBLAS_CORETYPE", None)  # both sides run OpenBLAS's own choice
    if a.methods == DEFAULT_METHODS and slow_openblas_kernel():
        methods += ["ddpx", "ddp16x"]
        a.hier_methods += ",ddpx"
    print(f"bench/cluster.py: OPENBLAS_CORETYPE unset for every run (the environment "
          f"{'pinned ' + pinned if pinned else 'did not pin it'}), {os.cpu_count()} cores; "
          f"[other load] = cores kept busy by anything but these runs, network softirq included", flush=True)
    results = []
    plan = [(h, a.slots, rates, methods) for h in [int(x) for x in a.hosts.split(",")]]
    if a.hier_rates:  # the hierarchical sum where it should pay: 2 hosts x 2 ranks
        plan.append((2, 2, a.hier_rates.split(","), a.hier_methods.split(",")))
    for hosts, slots, rts, mths in plan:
        base = {}
        for rate in rts:
            cl = Cluster(hosts, slots, rate, a.sysctl)
            try:
                agg = aggregation(cl)
                print(f"\n== {hosts} hosts x {slots} rank(s), {rate}; TCP in h1: "
                      + "; ".join(f"{k.split('.')[-1]}={v}" for k, v in cl.tcp.items()), flush=True)
                print(f"bare MPI_Allreduce of 2.68 MB: {fmt(agg.get('bare MPI_Allreduce'))} ms; engine 32-bit: "
                      f"auto {fmt(agg.get('engine 32 bits, one allreduce'))} ms, MPI "
                      f"{fmt(agg.get('engine 32 bits, MPI_Allreduce'))} ms, ring "
                      f"{fmt(agg.get('engine 32 bits, ring'))} ms, fp16 {fmt(agg.get('engine 32 bits, fp16 transport'))}"
                      f" ms; engine 1 bit: {fmt(agg.get('engine 1 bit'))} ms", flush=True)
                for m in mths:
                    full = rate == "unshaped"
                    eps_n, frac = (a.epochs, 1.0) if full else (1, a.shaped_fraction)
                    with benchlib.Foreign() as fg:
                        r = ddp(cl, m, eps_n, a.target, frac) if m in HOOKS else partrain(cl, m, eps_n, full, frac)
                    ep = min(e["seconds"] for e in r["epochs"])
                    k, tta = reached(r["epochs"], a.target)
                    derived = False
                    if rate == "unshaped":
                        base[m] = {"epoch": ep, "k": k}
                    elif k is None and m != "asgd" and base.get(m, {}).get("k"):
                        k, tta, derived = base[m]["k"], base[m]["k"] * ep, True
                    ratio = ep / base[m]["epoch"] if m in base else None
                    row = {"hosts": hosts, "slots": slots, "rate": rate, "method": m, "epoch_s": ep,
                           "ratio": ratio, "epochs_to_target": k, "tta_s": tta, "derived": derived,
                           "aggregation_ms": agg, "tcp": cl.tcp, "foreign_cores": fg.load, "runs": r}
                    results.append(row)
                    print(f"{m:11s} epoch {ep:7.2f} s  x{fmt(ratio)} unshaped  to {a.target:.0%}: "
                          f"{fmt(tta, '.1f')} s{' (d)' if derived else ''} in {k if k else 'n/a'} epochs"
                          f"  [other load {fg.load:.2f} cores]", flush=True)
            finally:
                cl.down()
    print(f"\n| hosts x ranks | rate | method | epoch s | / unshaped | epochs to target | time to target s |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['hosts']}x{r['slots']} | {r['rate']} | {r['method']} | {r['epoch_s']:.2f} | {fmt(r['ratio'])} | "
              f"{r['epochs_to_target'] or 'n/a'} | {fmt(r['tta_s'], '.1f')}{' d' if r['derived'] else ''} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
