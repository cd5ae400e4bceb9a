"""bench/benchlib.py: helpers shared by the Python benchmarks in bench/.

Nothing here imports torch, so the drivers (which only start processes and parse their
output) stay light; the PyTorch references import torch themselves.

  HERE                  the repository root (bench/..)
  run(cmd, env)         run a command, return (exit status, output, peak RSS in KiB)
  load_fashion(split)   Fashion-MNIST from Debian's idx files, as the trainer's CTF holds it
  openblas_loaded()     kernel, thread count and build of the OpenBLAS this process mapped
  coretype_env()        OPENBLAS_CORETYPE as set in the environment (never overridden)
  clean_env(coretype, **extra)  os.environ without OPENBLAS_CORETYPE (OpenBLAS detects its
                        kernel), or with it set to coretype; plus extra variables
  slow_kernel(kernel)   whether OpenBLAS's kernel KERNEL is a fallback on an AVX-512 CPU
                        (not one of its AVX-512 kernels): then a reference on it is not at
                        its best, and the drivers also run it forced to FORCE_KERNELS
  Foreign()             CPU time other processes (not ours, not our children) used meanwhile"""
import ctypes
import gzip
import os
import re
import resource
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/datasets/fashion-mnist"


def run(cmd, env=None, cwd=HERE):
    """Run cmd; return (exit status, output, peak RSS in KiB of that process)."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        out.seek(0)
        return os.waitstatus_to_exitcode(status), out.read().decode(), usage.ru_maxrss


def load_fashion(split="train"):
    """(images, labels) of split "train" or "test" as numpy arrays: float32 rows of 784
    pixels / 255 rounded to 4 significant digits (what scripts/idx2ctf writes into the CTF
    the trainer reads), and int64 labels."""
    prefix = {"train": "train", "test": "t10k"}[split]
    with gzip.open(f"{DATA}/{prefix}-images-idx3-ubyte.gz") as f:
        img = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(f"{DATA}/{prefix}-labels-idx1-ubyte.gz") as f:
        lab = np.frombuffer(f.read(), np.uint8, offset=8)
    table = np.array([float("%.4g" % (v / 255.0)) for v in range(256)], np.float32)
    return table[img], lab.astype(np.int64)


def openblas_loaded(set_threads=None):
    """Describe the OpenBLAS mapped into this process (e.g. by torch through libblas.so.3):
    "OpenBLAS 0.3.21 ... (kernel Haswell, 1 thread)", or why it cannot be told. With
    set_threads, first call openblas_set_num_threads(set_threads)."""
    with open("/proc/self/maps") as f:
        libs = sorted(set(re.findall(r"(/\S*(?:openblas|libblas)\S*\.so\S*)", f.read())))
    for path in sorted(libs, key=lambda p: "openblas" not in os.path.basename(p)):
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
        except (OSError, AttributeError):
            continue
        if set_threads:
            lib.openblas_set_num_threads(int(set_threads))
        n = lib.openblas_get_num_threads()
        return (f"{lib.openblas_get_config().decode().strip()} (kernel "
                f"{lib.openblas_get_corename().decode()}, {n} thread{'' if n == 1 else 's'})")
    return "no OpenBLAS mapped (" + (", ".join(libs) or "no BLAS library found") + ")"


def coretype_env():
    return os.environ.get("OPENBLAS_CORETYPE", "(unset: detected)")


AVX512_KERNELS = ("skylakex", "cooperlake", "sapphirerapids")  # OpenBLAS's names, lower case
FORCE_KERNELS = ("SkylakeX", "Cooperlake")  # the ones OpenBLAS 0.3.21 can be forced to


def clean_env(coretype=None, **extra):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    env.update(extra)
    return env


def slow_kernel(kernel):
    with open("/proc/cpuinfo") as f:
        avx512 = " avx512f" in f.read()
    return avx512 and kernel.lower() not in AVX512_KERNELS


def _busy_seconds():
    """CPU seconds the whole machine has been busy (all but idle and iowait) since boot."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def _own_seconds():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


class Foreign:
    """with Foreign() as f: ...; then f.load is the average number of cores that processes
    other than this one and its (waited-for) children kept busy meanwhile: other users of
    a shared machine, which a benchmark should report rather than hide."""

    def __enter__(self):
        self.t, self.busy, self.own = time.perf_counter(), _busy_seconds(), _own_seconds()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self.t
        other = (_busy_seconds() - self.busy) - (_own_seconds() - self.own)
        self.load = max(other, 0.0) / wall if wall > 0 else 0.0
        return False
