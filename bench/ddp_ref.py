#!/usr/bin/python3
"""PyTorch DistributedDataParallel reference for DataParallelSGD on configs/fashion-mlp.cfg.

    /usr/bin/python3 bench/ddp_ref.py [--nproc N] [--epochs E] [--bind core|none]
                                      [--warmup W] [--seed S] [--target 0.87]
                                      [--hook none|fp16|powersgd] [--cluster-hosts H]

Starts N worker processes (this script again, with --worker RANK) that form a gloo process
group through a file:// rendezvous on localhost; each runs torch.set_num_threads(1) and one
OpenBLAS thread. With --bind core worker r is pinned to core r (like `mpiexec --bind-to
core`); with none the kernel places them. Prints per-epoch lines on stderr and one JSON
object on stdout (rank 0's view).

What it trains is what the trainer trains for configs/fashion-mlp.cfg:
  * 784-512-512-10 ReLU MLP, softmax cross-entropy, weights U(-0.05, 0.05) (uniformInit,
    initValueScale 1), biases 0, the same values the CTF holds (pixels/255, 4 digits);
  * applyMeanVarNorm: (x - mean) * 1/stddev over the training set (double precision, a
    constant pixel keeps 1/stddev = 1), applied inside forward() as the trainer does;
  * global minibatch 256 split evenly over the ranks (128 each at N = 2), a fresh global
    shuffle every epoch (DistributedSampler-like: every rank draws the same permutation
    and takes its slice of every global minibatch), the last minibatch of 96 included;
  * CNTK's unit-gain momentum on summed gradients with per-sample learning rates
    (src/learn/learner.c): m = 0.9^(n/256) for an n-sample minibatch,
    v = m v + (1 - m) lr_per_sample g_sum, w -= v; lr_per_sample 0.004, 0.004, 0.002,
    then 0.001 (0.004*2:0.002:0.001). DDP averages the ranks' gradients; each rank's loss
    is its summed loss * N / n, so the average is the global mean and g_sum = n * mean.

--hook picks the gradient communication DDP registers, as its documentation shows: none
(fp32 allreduce), fp16 (default_hooks.fp16_compress_hook: halves cast before the allreduce)
or powersgd (powerSGD_hook.powerSGD_hook, PowerSGDState with matrix_approximation_rank 2,
error feedback and warm start on, start_powerSGD_iter 10: ten vanilla allreduces first,
the documented minimum is 2). --cluster-hosts H starts worker r on the simulated host
h(r * H / N + 1) (consecutive ranks per host, as mpiexec fills slots) of the cluster in $PT_CLUSTER_DIR (scripts/cluster.sh exec), with gloo on
that host's eth0: the same namespaces, shaping and TCP path as partrain's ranks there.

Timed: every epoch from a barrier before its first minibatch to a barrier after its last
(training only; the data is loaded and normalisation statistics computed before). The
steady-state rate leaves out the first W (default 5) minibatches of each epoch. After each
epoch rank 0 computes test accuracy on the 10 000 test images; that is not timed."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import benchlib

LR_PER_SAMPLE = [0.004, 0.004, 0.002, 0.001]  # epoch 1, 2, 3, then the last one repeats
MOMENTUM_PER_MB, MB = 0.9, 256


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--bind", choices=("core", "none"), default="core")
    ap.add_argument("--warmup", type=int, default=5, help="minibatches per epoch left out of the steady rate")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", type=float, default=0.87, help="test accuracy to time")
    ap.add_argument("--max-minibatches", type=int, default=0,
                    help="end each epoch after this many minibatches (timing a partial epoch)")
    ap.add_argument("--hook", choices=("none", "fp16", "powersgd"), default="none")
    ap.add_argument("--cluster-hosts", type=int, default=0,
                    help="start worker r on scripts/cluster.sh host h(r * H / N + 1)")
    ap.add_argument("--worker", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--initfile", default="", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def worker(a):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank, world = a.worker, a.nproc
    if a.bind == "core":
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[rank % len(cores)]})
    torch.set_num_threads(1)
    blas = benchlib.openblas_loaded(set_threads=1)
    dist.init_process_group("gloo", init_method=f"file://{a.initfile}", rank=rank, world_size=world)

    xn, yn = benchlib.load_fashion("train")
    mean64 = xn.mean(axis=0, dtype=np.float64)
    var64 = (xn.astype(np.float64) ** 2).mean(axis=0) - mean64 ** 2
    inv64 = np.where(var64 > 1e-10, 1.0 / np.sqrt(np.maximum(var64, 1e-10)), 1.0)
    x, y = torch.from_numpy(xn), torch.from_numpy(yn)
    mean = torch.from_numpy(mean64.astype(np.float32))
    inv = torch.from_numpy(inv64.astype(np.float32))
    xtn, ytn = benchlib.load_fashion("test") if rank == 0 else (None, None)

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = torch.nn.Linear(784, 512)
            self.l2 = torch.nn.Linear(512, 512)
            self.l3 = torch.nn.Linear(512, 10)
            for l in (self.l1, self.l2, self.l3):
                torch.nn.init.uniform_(l.weight, -0.05, 0.05)
                torch.nn.init.zeros_(l.bias)
            # plain attributes, not buffers: constants DDP must not broadcast every step
            self.mean, self.inv = mean, inv

        def forward(self, v):
            v = (v - self.mean) * self.inv
            return self.l3(F.relu(self.l2(F.relu(self.l1(v)))))

    torch.manual_seed(a.seed)
    net = MLP()
    model = DDP(net)  # broadcasts rank 0's parameters
    if a.hook == "fp16":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif a.hook == "powersgd":
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=2,
                                            start_powerSGD_iter=10, use_error_feedback=True,
                                            warm_start=True)
        model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    params = [p for p in net.parameters()]
    vel = [torch.zeros_like(p) for p in params]
    m_sample = MOMENTUM_PER_MB ** (1.0 / MB)
    n_train = x.shape[0]
    n_mb = (n_train + MB - 1) // MB
    if a.max_minibatches:  # a partial epoch (timing only): the first M minibatches
        n_mb = min(n_mb, a.max_minibatches)

    def evaluate():
        with torch.no_grad():
            xt, yt = torch.from_numpy(xtn), torch.from_numpy(ytn)
            right = sum(int((net(xt[i:i + 1024]).argmax(1) == yt[i:i + 1024]).sum())
                        for i in range(0, xt.shape[0], 1024))
        return right / xt.shape[0]

    epochs, train_time, reached = [], 0.0, None
    for ep in range(1, a.epochs + 1):
        lr = LR_PER_SAMPLE[min(ep, len(LR_PER_SAMPLE)) - 1]
        gen = torch.Generator()
        gen.manual_seed(a.seed * 1000 + ep)
        perm = torch.randperm(n_train, generator=gen)
        phase = [0.0, 0.0, 0.0]  # forward, backward (+ DDP's allreduce), update; steady part
        dist.barrier()
        t0 = time.perf_counter()
        tw, steady_samples = t0, 0
        for b in range(n_mb):
            if b == a.warmup:
                tw = time.perf_counter()
            idx = perm[b * MB:(b + 1) * MB]
            n = idx.shape[0]
            mine = idx[rank * n // world:(rank + 1) * n // world]
            s0 = time.perf_counter()
            out = model(x[mine])
            loss = F.cross_entropy(out, y[mine], reduction="sum") * (world / n)
            s1 = time.perf_counter()
            loss.backward()
            s2 = time.perf_counter()
            with torch.no_grad():
                m = m_sample ** n
                for p, v in zip(params, vel):
                    v.mul_(m).add_(p.grad, alpha=(1.0 - m) * lr * n)
                    p.sub_(v)
                    p.grad = None
            s3 = time.perf_counter()
            if b >= a.warmup:
                steady_samples += n
                phase[0] += s1 - s0
                phase[1] += s2 - s1
                phase[2] += s3 - s2
        dist.barrier()
        t1 = time.perf_counter()
        train_time += t1 - t0
        acc = evaluate() if rank == 0 else None
        steps = max(n_mb - a.warmup, 1)
        e = {"epoch": ep, "lr_per_sample": lr, "seconds": t1 - t0, "minibatches": n_mb,
             "samples_per_s": n_train / (t1 - t0),
             "steady_samples_per_s": steady_samples / (t1 - tw),
             "step_ms": {k: 1e3 * v / steps for k, v in zip(("forward", "backward+allreduce", "update"), phase)},
             "test_accuracy": acc}
        if rank == 0:
            if reached is None and acc >= a.target:
                reached = {"epoch": ep, "train_seconds": train_time}
            epochs.append(e)
            print(f"ddp[{world}] epoch {ep}: {e['seconds']:.3f}s, {e['samples_per_s']:.0f} samples/s "
                  f"(steady {e['steady_samples_per_s']:.0f}), test accuracy {acc:.4f}", file=sys.stderr)
    if rank == 0:
        print(json.dumps({"nproc": world, "bind": a.bind, "torch": torch.__version__, "hook": a.hook,
                          "torch_threads": torch.get_num_threads(), "blas": blas,
                          "warmup_minibatches": a.warmup, "target": a.target,
                          "epochs": epochs, "reached": reached}))
    dist.destroy_process_group()


def launch(a):
    """Start a.nproc workers on this host; return rank 0's JSON (exit 1 if any fails)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.setdefault("GLOO_SOCKET_IFNAME", "eth0" if a.cluster_hosts else "lo")
    with tempfile.TemporaryDirectory(prefix="ddp-ref-") as tmp:
        init = os.path.join(tmp, "rendezvous")
        procs = []
        for r in range(a.nproc):
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(r), "--initfile", init,
                   "--nproc", str(a.nproc), "--epochs", str(a.epochs), "--bind", a.bind,
                   "--warmup", str(a.warmup), "--seed", str(a.seed), "--target", str(a.target),
                   "--hook", a.hook, "--max-minibatches", str(a.max_minibatches)]
            if a.cluster_hosts:
                host = f"h{r * a.cluster_hosts // a.nproc + 1}"  # blocks, as mpiexec fills slots
                cmd = [os.path.join(benchlib.HERE, "scripts", "cluster.sh"), "exec", host] + cmd
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL))
        out = procs[0].communicate()[0].decode()
        codes = [procs[0].returncode]
        for p in procs[1:]:  # a worker can hang in its exit (seen with the fp16 hook)
            try:
                codes.append(p.wait(timeout=60))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                print("ddp_ref: a worker did not exit 60 s after rank 0 had finished; killed",
                      file=sys.stderr)
                codes.append(0 if codes[0] == 0 and '{' in out else -9)
    if any(codes):
        sys.exit(f"ddp_ref: worker exit statuses {codes}")
    sys.stdout.write(out)


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    if args.worker >= 0:
        worker(args)
    else:
        launch(args)
