#!/usr/bin/python3
"""bench/gpu.py: the GPU benchmark (issue 17), one invocation on a machine with a CUDA device.

    python3 bench/gpu.py [--trainer PATH] [--gpu-bench PATH] [--configs DIR] [--data DIR]
                         [--out FILE] [--logs DIR] [--budget SECONDS] [--cpu-only-dry-run]

Paths default to $TRAINER or ./trainer, $GPU_BENCH or ./bench/gpu_bench, ./configs and
./data/fashion-mnist (relative to the current directory: run it from a build tree or from
the bundle's directory). When the data directory has no train.ctf / train-seq.ctf they are
converted first from Fashion-MNIST's idx files (--idx2ctf, default ./scripts/idx2ctf;
--idx, default $FASHION_MNIST_DIR or /usr/share/datasets/fashion-mnist). In one run:
  1. the trainer on the GPU (deviceId=0, 2 epochs; learningRatesPerSample as configured at
     the config's minibatch size, scaled by base/MB above it so that a step moves the model
     as far: at 4096 the MLP's own rate diverges, which ends the run):
     configs/fashion-mlp.cfg at minibatch 256, 1024, 4096 and configs/fashion-lstm.cfg at
     128, 512, 2048; the rate is the last epoch's samples / its epochTime (epoch 1 also
     parses the text);
  2. gpu_bench bound at each of those minibatch sizes: the same step's cuBLAS products
     alone (the bound), nn_train_step alone (no reader, no optimizer) and the steps as the
     trainer runs them on a device without its reader ("pipe"); gpu_bench read: the reader
     alone at that size (its second epoch);
  3. the trainer on ONE CPU core (deviceId=cpu, numCPUThreads=1, OPENBLAS_NUM_THREADS=1,
     taskset -c 0 when there is taskset) at the configs' own minibatch sizes, 2 epochs of
     EPOCH_CPU samples;
  4. gpu_bench quant 4096 4096 1 20 and 4096 4096 8 20 (the device's 1-bit and 8-bit
     quantizers against one CPU thread; the packed bytes in the backend's pinned host
     memory), and the 1-bit one again with PT_BENCH_PAGEABLE=1 (malloc'd memory, as
     DataParallelSGD's send and receive buffers are).
OPENBLAS_CORETYPE is removed from the environment of every run (and reported when it was
set). Prints a table and the issue's targets; --out writes the same text to a file; --logs
keeps every run's output. Exit status: 0, 1 when a run failed, 77 without a usable GPU.

--cpu-only-dry-run runs the same driver with no GPU: the "GPU" runs use deviceId=cpu and
PT_BENCH_BACKEND=cpu on one core with short epochs, to check the commands and the parsing;
its numbers are CPU numbers."""
import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:  # benchlib needs numpy; without it the load of other processes goes unreported
    from benchlib import Foreign
except Exception:  # noqa: BLE001 (any import failure: run without it)
    Foreign = None

# (model, config, the config's minibatch size, the sizes run on the GPU)
MODELS = (("mlp", "fashion-mlp.cfg", 256, (256, 1024, 4096)),
          ("lstm", "fashion-lstm.cfg", 128, (128, 512, 2048)))
TARGET_OF_BOUND = {"mlp": 60.0, "lstm": 40.0}  # % of the cuBLAS-only bound, config's MB
TARGET_VS_CPU = {"mlp": 20.0, "lstm": 10.0}  # GPU / one CPU core, config's MB
TARGET_QUANT_GBS = 100.0  # 1-bit quantization on the device, GB/s of float input
EPOCH_CPU = 15360  # samples per CPU epoch (the whole set would take minutes)
BOUND_STEPS = {"mlp": 200, "lstm": 50}


class Driver:
    def __init__(self, args):
        self.args = args
        self.start = time.monotonic()
        self.lines = []
        self.failed = []
        self.dry = args.cpu_only_dry_run
        self.tmp = tempfile.mkdtemp(prefix="pt-gpu-bench-")
        self.coretype = os.environ.get("OPENBLAS_CORETYPE")
        self.env = dict(os.environ)
        self.env.pop("OPENBLAS_CORETYPE", None)
        self.taskset = shutil.which("taskset")

    def say(self, text=""):
        print(text, flush=True)
        self.lines.append(text)

    def left(self):
        return self.args.budget - (time.monotonic() - self.start)

    def run(self, name, cmd, env, timeout):
        """(exit status, output) of cmd; 124 when it ran past its timeout or the budget."""
        timeout = min(timeout, self.left())
        if timeout < 5:
            return 124, f"skipped: the time budget ({self.args.budget:.0f} s) is spent"
        try:
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout)
            code, out = p.returncode, p.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            code = 124
            out = (e.stdout or b"").decode(errors="replace") + f"\n(timed out after {timeout:.0f} s)"
        except OSError as e:
            code, out = 127, f"cannot run {cmd[0]}: {e}"
        if self.args.logs:
            os.makedirs(self.args.logs, exist_ok=True)
            with open(os.path.join(self.args.logs, name + ".log"), "w") as f:
                f.write(" ".join(cmd) + "\n\n" + out)
        return code, out

    def cpu_env(self, env):
        return dict(env, OPENBLAS_NUM_THREADS="1")

    def one_core(self, cmd):
        return [self.taskset, "-c", "0"] + cmd if self.taskset else cmd

    # ------------------------------------------------------------------ the trainer

    def trainer(self, model, cfg, mb, on_gpu):
        """({"rate": samples/s of the last epoch, ...}, None), or (None, why it failed)."""
        cpu = self.dry or not on_gpu
        cmd = [self.args.trainer, f"configFile={os.path.join(self.args.configs, cfg)}",
               f"deviceId={'cpu' if cpu else self.args.device}", "command=train",
               "makeMode=false", f"train.SGD.maxEpochs={self.args.epochs}",
               f"train.SGD.minibatchSize={mb}", f"ModelDir={self.tmp}/{model}-{mb}",
               f"DataDir={self.args.data}"]
        base = dict((m[1], m[2]) for m in MODELS)[cfg]
        if mb > base:  # the same step per minibatch: the configs' per-sample rate diverges
            lr = {"fashion-mlp.cfg": 0.004, "fashion-lstm.cfg": 0.02}[cfg] * base / mb
            cmd.append(f"train.SGD.learningRatesPerSample={lr:g}")
        env = self.env
        if on_gpu:  # the last epoch's "minibatches sent ... taken" line
            cmd.append("traceLevel=2")
        if cpu:
            cmd.append("numCPUThreads=1")
            env = self.cpu_env(env)
            size = EPOCH_CPU if not on_gpu else max(4 * mb, 8192)  # dry run: short epochs
            cmd.append(f"train.SGD.epochSize={size}")
            cmd = self.one_core(cmd)
        name = f"trainer-{model}-{mb}-{'cpu' if not on_gpu else 'gpu'}"
        code, out = self.run(name, cmd, env, 120)
        ends = re.findall(r"Finished Epoch\[ *(\d+) of (\d+)\]: \[Training\] [^*]*\* (\d+);"
                          r".*?epochTime=([0-9.eE+-]+)s", out)
        if code or not ends:
            return None, self.failure(name, code, out)
        epoch, of, samples, secs = ends[-1]
        if int(epoch) < 2:
            return None, self.failure(name, code, out + "\n(fewer than 2 epochs ran)")
        using = re.findall(r"^.*\b(?:Using|Computing on)\b.*$", out, re.M)
        sent = re.findall(r"^Epoch\[(\d+)\]: (\d+) of (\d+) minibatches sent .*\((\d+) taken so\)"
                          r"; the criteria read ([a-z ]+)\.$", out, re.M)
        return {"rate": int(samples) / float(secs), "samples": int(samples),
                "secs": float(secs), "epoch": f"{epoch} of {of}", "using": using,
                "sent": sent[-1] if sent else None}, None

    def failure(self, name, code, out):
        tail = [l for l in out.strip().splitlines() if l.strip()][-6:]
        errors = [l for l in out.splitlines() if re.search(r"\berror:", l)][:1]
        why = (errors or tail or ["no output"])[-1].strip()
        self.failed.append(name)
        self.say(f"  {name}: FAILED (exit status {code}): {why}")
        for line in tail if tail != [why] else []:
            self.say(f"    | {line}")
        return why

    # ------------------------------------------------------------------ gpu_bench

    def gpu_bench(self, name, argv, timeout=120, extra_env=None):
        """The key: value lines of a gpu_bench run (values as text), or (None, why)."""
        env = dict(self.env, **(extra_env or {}))
        cmd = [self.args.gpu_bench] + argv
        if self.dry:
            env = self.cpu_env(dict(env, PT_BENCH_BACKEND="cpu"))
            cmd = self.one_core(cmd)
        code, out = self.run(name, cmd, env, timeout)
        if code == 77 and not self.dry:
            return None, out.strip().splitlines()[-1] if out.strip() else "no GPU"
        if code:
            return None, self.failure(name, code, out)
        keys = {}
        for line in out.splitlines():
            m = re.match(r"^([A-Za-z0-9_]+): (.*)$", line)
            if m:
                keys.setdefault(m.group(1), m.group(2))
        return keys, None


def num(keys, key):
    try:
        return float(keys[key].split()[0])
    except (KeyError, ValueError, IndexError, TypeError):
        return None


def fmt(x, unit=""):
    return "-" if x is None else f"{x:,.1f}".replace(",", " ") + unit


def verdict(value, target):
    if value is None:
        return "not measured"
    return "**met**" if value >= target else "**not met**"


def header(d):
    a = d.args
    d.say(f"# GPU benchmark (issue 17), {datetime.datetime.now():%Y-%m-%d %H:%M}"
          + ("  -- DRY RUN: CPU only, these are NOT GPU numbers" if d.dry else ""))
    d.say()
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            names = re.findall(r"^model name\s*:\s*(.*)$", f.read(), re.M)
        cpu = f"{names[0]} ({len(names)} logical CPUs)" if names else cpu
    except OSError:
        pass
    d.say(f"host: {cpu}")
    code, out = d.run("trainer-version", [a.trainer, "--version"], d.env, 30)
    for line in out.strip().splitlines():
        d.say(f"trainer --version: {line}")
    d.say("OPENBLAS_CORETYPE: " + (f"was {d.coretype!r}, removed for every run" if d.coretype
                                   else "unset"))
    d.say("one CPU core: " + ("taskset -c 0, " if d.taskset else "no taskset (not pinned), ")
          + "numCPUThreads=1, OPENBLAS_NUM_THREADS=1")
    d.say(f"commands: {a.trainer} | {a.gpu_bench} | configs {a.configs} | data {a.data}")


def ensure_data(d):
    """Convert Fashion-MNIST's idx files into the CTF the configs read when --data lacks it
    (as scripts/prepare-fashion-mnist.sh does; only the training files are needed)."""
    a = d.args
    wanted = [("train.ctf", []), ("train-seq.ctf", ["--sequence"])]
    missing = [(f, o) for f, o in wanted if not os.path.exists(os.path.join(a.data, f))]
    if not missing:
        return True
    img = os.path.join(a.idx, "train-images-idx3-ubyte.gz")
    lab = os.path.join(a.idx, "train-labels-idx1-ubyte.gz")
    if not (os.access(a.idx2ctf, os.X_OK) and os.path.exists(img) and os.path.exists(lab)):
        d.say(f"no data: {a.data} lacks {', '.join(f for f, _ in missing)}, and there is no "
              f"{a.idx2ctf} with {img} to make it (--data, --idx2ctf, --idx)")
        return False
    os.makedirs(a.data, exist_ok=True)
    for name, opts in missing:
        code, out = d.run("idx2ctf-" + name, [a.idx2ctf] + opts + [img, lab,
                                                                   os.path.join(a.data, name)],
                          d.env, 120)
        if code:
            d.failure("idx2ctf-" + name, code, out)
            return False
        d.say(f"data: {out.strip()}")
    return True


def gpu_side(d, rows, own_size):
    """rows[(model, mb)] = {"gpu":..., "bound":...} for the configs' own minibatch sizes
    (own_size) or the larger ones."""
    for model, cfg, own, sizes in MODELS:
        for mb in sizes:
            if (mb == own) != own_size:
                continue
            got, why = d.trainer(model, cfg, mb, on_gpu=True)
            steps = 2 if d.dry else BOUND_STEPS[model]
            bound, bwhy = d.gpu_bench(f"bound-{model}-{mb}",
                                      ["bound", os.path.join(d.args.configs, cfg), str(mb),
                                       str(steps)])
            read, _ = d.gpu_bench(f"read-{model}-{mb}",
                                  ["read", os.path.join(d.args.configs, cfg), str(mb), "2",
                                   f"DataDir={d.args.data}"])
            rows[(model, mb)] = {"gpu": got, "gpu_why": why, "bound": bound, "bound_why": bwhy,
                                 "read": read}
            d.say(f"  {model} MB {mb}: trainer {fmt(got and got['rate'])} samples/s; "
                  f"bound {fmt(num(bound or {}, 'bound_samples_per_s'))}; "
                  f"step alone {fmt(num(bound or {}, 'step_samples_per_s'))}; "
                  f"pipelined steps {fmt(num(bound or {}, 'pipe_samples_per_s'))}; "
                  f"replayed from CUDA graphs {fmt(num(bound or {}, 'graph_samples_per_s'))} "
                  f"({(bound or {}).get('graph_steps', 'not recorded')}); "
                  f"reader alone {fmt(read_rate(read))}")
            if got and got.get("sent"):
                e, sent, n, taken, crit = got["sent"]
                d.say(f"    epoch {e}: {sent} of {n} minibatches sent during the step before "
                      f"theirs, {taken} taken so; the criteria read {crit}")


def read_rate(keys):
    """samples/s of the reader alone in its second epoch (gpu_bench read), or None."""
    m = re.search(r"([0-9.]+) samples/s", (keys or {}).get("read_epoch_2", ""))
    return float(m.group(1)) if m else None


def table(d, rows, cpu):
    d.say()
    d.say("| model | MB | GPU samples/s | cuBLAS-only bound samples/s | % of bound | "
          "nn_train_step alone samples/s | pipelined steps, no reader | reader alone | "
          "one CPU core samples/s | GPU / CPU |")
    d.say("|---|---|---|---|---|---|---|---|---|---|")
    for model, _, own, sizes in MODELS:
        ref = cpu.get(model)
        for mb in sizes:
            r = rows[(model, mb)]
            rate = r["gpu"]["rate"] if r["gpu"] else None
            b = num(r["bound"] or {}, "bound_samples_per_s")
            step = num(r["bound"] or {}, "step_samples_per_s")
            pct = 100.0 * rate / b if rate and b else None
            ratio = rate / ref["rate"] if rate and ref else None
            cpu_cell = fmt(ref and ref["rate"]) if mb == own else f"(MB {own})"
            pipe = num(r["bound"] or {}, "pipe_samples_per_s")
            d.say(f"| {model.upper()} | {mb} | {fmt(rate) if rate else 'failed'} | {fmt(b)} | "
                  f"{fmt(pct, ' %')} | {fmt(step)} | {fmt(pipe)} | {fmt(read_rate(r.get('read')))}"
                  f" | {cpu_cell} | {'-' if ratio is None else f'{ratio:.1f}x'} |")
    d.say()
    d.say(f"GPU: the last of {d.args.epochs} epochs "
          + ("(dry run: short epochs, deviceId=cpu, one core)" if d.dry
             else "of the full training set (60 000 samples)")
          + "; bound: the recorded step's products replayed alone (gpu_bench bound); "
          "pipelined steps: the trainer's steps without its reader (gpu_bench bound's pipe); "
          "reader alone: its second epoch ahead of a device, nobody computing (gpu_bench "
          f"read); GPU / CPU: against one core at the config's minibatch size ({EPOCH_CPU} "
          "samples per epoch).")


def quant(d, res, cases):
    """res[(bits, pageable)] = keys for each case: the packed bytes in the backend's host
    memory (pinned), or in malloc'd memory (pageable), as DataParallelSGD's buffers are."""
    rows, cols, reps = (1024, 1024, 3) if d.dry else (4096, 4096, 20)
    for bits, pageable in cases:
        env = dict(PT_BENCH_PAGEABLE="1") if pageable else None
        keys, why = d.gpu_bench(f"quant-{bits}{'-pageable' if pageable else ''}",
                                ["quant", str(rows), str(cols), str(bits), str(reps)],
                                extra_env=env)
        res[(bits, pageable)] = keys
        if not keys:
            d.say(f"quant {bits} bit: {why}")
            continue
        d.say()
        d.say(f"gpu_bench quant {rows} {cols} {bits} {reps}"
              f"{' (PT_BENCH_PAGEABLE=1)' if pageable else ''}: {keys.get('backend', '?')}; "
              f"packed bytes in {keys.get('packed_host_memory', '?')}")
        for k in ("device_encode_gbs", "device_decode_gbs", "device_copy_gbs",
                  "device_d2h_packed_us", "device_h2d_packed_us", "device_encode_minus_d2h_gbs",
                  "device_decode_minus_h2d_gbs", "cpu_encode_gbs", "cpu_decode_gbs",
                  "encode_vs_cpu", "decode_vs_cpu", "packed_equal_to_cpu",
                  "decoded_equal_to_cpu"):
            if k in keys:
                d.say(f"  {k}: {keys[k]}")


def targets(d, rows, cpu, q):
    d.say()
    d.say("Against issue 17's targets:")
    for model, _, own, _ in MODELS:
        r = rows[(model, own)]
        rate = r["gpu"]["rate"] if r["gpu"] else None
        b = num(r["bound"] or {}, "bound_samples_per_s")
        pct = 100.0 * rate / b if rate and b else None
        ratio = rate / cpu[model]["rate"] if rate and cpu.get(model) else None
        d.say(f"- {model.upper()} at minibatch {own}: {fmt(pct, ' %')} of the cuBLAS-only bound "
              f"(target {TARGET_OF_BOUND[model]:.0f} %): {verdict(pct, TARGET_OF_BOUND[model])}")
        d.say(f"- {model.upper()}: {'-' if ratio is None else f'{ratio:.1f}x'} one CPU core "
              f"(target {TARGET_VS_CPU[model]:.0f}x): {verdict(ratio, TARGET_VS_CPU[model])}")
    for pageable in (False, True):
        one = q.get((1, pageable)) or {}
        enc, dec = num(one, "device_encode_gbs"), num(one, "device_decode_gbs")
        where = one.get("packed_host_memory", "malloc" if pageable else "the backend's memory")
        d.say(f"- 1-bit quantization on the device, packed bytes in {where}: encode "
              f"{fmt(enc, ' GB/s')} (target {TARGET_QUANT_GBS:.0f} GB/s of float input): "
              f"{verdict(enc, TARGET_QUANT_GBS)}; decode {fmt(dec, ' GB/s')}: "
              f"{verdict(dec, TARGET_QUANT_GBS)} (both include the packed bytes' trip across "
              "the bus)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trainer", default=os.environ.get("TRAINER", "./trainer"))
    p.add_argument("--gpu-bench", default=os.environ.get("GPU_BENCH", "./bench/gpu_bench"))
    p.add_argument("--configs", default="configs")
    p.add_argument("--data", default="data/fashion-mnist")
    p.add_argument("--idx2ctf", default=os.environ.get("IDX2CTF", "./scripts/idx2ctf"),
                   help="converts the idx files when --data has no CTF")
    p.add_argument("--idx", default=os.environ.get("FASHION_MNIST_DIR",
                                                   "/usr/share/datasets/fashion-mnist"),
                   help="the directory of train-images-idx3-ubyte.gz and its labels")
    p.add_argument("--device", default="0", help="deviceId of the GPU runs")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--out", help="write the summary here too")
    p.add_argument("--logs", help="keep every run's output in this directory")
    p.add_argument("--budget", type=float, default=230.0,
                   help="seconds for the whole run; later runs are skipped past it")
    p.add_argument("--cpu-only-dry-run", action="store_true")
    args = p.parse_args()
    args.data = os.path.abspath(args.data)
    d = Driver(args)
    load = Foreign() if Foreign else None
    try:
        if load:
            load.__enter__()
        header(d)
        keys, why = d.gpu_bench("probe", ["probe"], 60)
        if keys is None:
            d.say(why if why.startswith("no GPU") else f"no GPU: {why}")
            return 77
        d.say(f"device: {keys.get('backend', '?')}")
        if not ensure_data(d):
            return 1
        d.say()
        # what the targets need first, in case the budget runs out
        rows, cpu, q = {}, {}, {}
        gpu_side(d, rows, own_size=True)
        for model, cfg, own, _ in MODELS:
            got, _ = d.trainer(model, cfg, own, on_gpu=False)
            cpu[model] = got
            d.say(f"  {model} MB {own} on one CPU core: {fmt(got and got['rate'])} samples/s")
        quant(d, q, [(1, False)])
        gpu_side(d, rows, own_size=False)
        quant(d, q, [(8, False), (1, True)])
        using = next((r["gpu"]["using"] for r in rows.values() if r["gpu"]), [])
        for line in using:
            d.say(f"trainer (GPU run) says: {line.strip()}")
        table(d, rows, cpu)
        targets(d, rows, cpu, q)
        if load:
            load.__exit__(None, None, None)
            d.say(f"\nother processes kept {load.load:.2f} cores busy meanwhile")
        d.say(f"wall time {time.monotonic() - d.start:.0f} s" +
              (f"; failed: {', '.join(d.failed)}" if d.failed else ""))
        return 1 if d.failed else 0
    finally:
        shutil.rmtree(d.tmp, ignore_errors=True)
        if args.out:
            with open(args.out, "w") as f:
                f.write("\n".join(d.lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
