# bench/: benchmark programs. Run them by hand (not under make check); each prints the ratio
# against a reference measured in the same run. Results go to bench/RESULTS.md.
noinst_PROGRAMS += bench/ctf_parse
bench_ctf_parse_SOURCES = bench/ctf_parse.c
bench_ctf_parse_LDADD = $(PT_LIBS)
EXTRA_DIST += bench/RESULTS.md
noinst_PROGRAMS += bench/sgemm_peak
bench_sgemm_peak_SOURCES = bench/sgemm_peak.c
bench_sgemm_peak_LDADD = $(PT_LIBS)
EXTRA_DIST += bench/pytorch_ref.py bench/train_vs_pytorch.py
noinst_PROGRAMS += bench/quantize_speed
bench_quantize_speed_SOURCES = bench/quantize_speed.c
bench_quantize_speed_LDADD = $(PT_LIBS)
noinst_PROGRAMS += bench/aggregation
bench_aggregation_SOURCES = bench/aggregation.c
bench_aggregation_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
bench_aggregation_LDADD = $(PT_LIBS)
EXTRA_DIST += bench/benchlib.py bench/ddp_ref.py bench/dp_vs_ddp.py bench/local_sgd.py bench/asgd.py bench/before_after.py \
	bench/asgd_converge.sh
# issue 17: the GPU benchmark (bench/gpu.py drives bench/gpu_bench and the trainer); without a
# CUDA device gpu_bench says "no GPU: ..." and exits 77
noinst_PROGRAMS += bench/gpu_bench
bench_gpu_bench_SOURCES = bench/gpu_bench.c bench/gpu_bench.h bench/gpu_bench_quant.c bench/gpu_bench_read.c
bench_gpu_bench_LDADD = $(PT_LIBS)
EXTRA_DIST += bench/gpu.py
