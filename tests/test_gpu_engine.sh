#!/bin/sh
# make check-gpu: the DataParallelSGD engine on GPU 0 under mpiexec -n 1, 2 and 4 (the
# ranks share the GPU): tests/test_dpsgd_engine.sh with PT_TEST_BACKEND=cuda, so the
# exact sums, the 1/2/8-bit exchange bit for bit, buffered mode and fp16 are held to the
# CPU's references. Skipped (77) without a GPU.
PT_TEST_BACKEND=cuda
export PT_TEST_BACKEND
exec sh "${top_srcdir:-.}/tests/test_dpsgd_engine.sh"
