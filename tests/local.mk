# tests/: Check unit tests per module, MPI and command-line tests, fuzz regressions.
if HAVE_CHECK
TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/tests
TEST_LIBS = $(PT_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/test_bs_parse tests/test_cfg tests/test_cfg_files tests/test_schema tests/test_cmdline tests/test_ctf tests/test_reader tests/test_learn tests/test_logfmt tests/test_blob tests/test_fuzz_regress \
	tests/test_fuzz_regress_ctf tests/test_fuzz_regress_bs tests/test_fuzz_regress_ndl \
	tests/test_fuzz_regress_model tests/test_fuzz_regress_mlf tests/test_fuzz_regress_lm
tests_test_bs_parse_SOURCES = tests/test_bs_parse.c tests/test_bs_parse_errors.c tests/test_bs_parse.h tests/testutil.h
tests_test_bs_parse_CFLAGS = $(TEST_CFLAGS)
tests_test_bs_parse_LDADD = $(TEST_LIBS)
tests_test_cfg_SOURCES = tests/test_cfg.c tests/testutil.h
tests_test_cfg_CFLAGS = $(TEST_CFLAGS)
tests_test_cfg_LDADD = $(TEST_LIBS)
tests_test_cfg_files_SOURCES = tests/test_cfg_files.c tests/testutil.h
tests_test_cfg_files_CFLAGS = $(TEST_CFLAGS)
tests_test_cfg_files_LDADD = $(TEST_LIBS)
tests_test_schema_SOURCES = tests/test_schema.c tests/test_schema_trainer.c tests/testutil.h
tests_test_schema_CFLAGS = $(TEST_CFLAGS)
tests_test_schema_LDADD = $(TEST_LIBS)
tests_test_cmdline_SOURCES = tests/test_cmdline.c tests/testutil.h
tests_test_cmdline_CFLAGS = $(TEST_CFLAGS)
tests_test_cmdline_LDADD = $(TEST_LIBS)
tests_test_ctf_SOURCES = tests/test_ctf.c tests/testutil.h
tests_test_ctf_CFLAGS = $(TEST_CFLAGS)
tests_test_ctf_LDADD = $(TEST_LIBS)
tests_test_reader_SOURCES = tests/test_reader.c tests/test_reader_config.c tests/test_reader_lm.c tests/test_reader.h tests/testutil.h
tests_test_reader_CFLAGS = $(TEST_CFLAGS)
tests_test_reader_LDADD = $(TEST_LIBS)
tests_test_learn_SOURCES = tests/test_learn.c tests/testutil.h
tests_test_learn_CFLAGS = $(TEST_CFLAGS)
tests_test_learn_LDADD = $(TEST_LIBS)
tests_test_logfmt_SOURCES = tests/test_logfmt.c tests/testutil.h
tests_test_logfmt_CFLAGS = $(TEST_CFLAGS)
tests_test_logfmt_LDADD = $(TEST_LIBS)
tests_test_blob_SOURCES = tests/test_blob.c tests/testutil.h
tests_test_blob_CFLAGS = $(TEST_CFLAGS)
tests_test_blob_LDADD = $(TEST_LIBS)
tests_test_fuzz_regress_SOURCES = tests/fuzz/fuzz_cfg.c tests/fuzz/replay.c
tests_test_fuzz_regress_CFLAGS = $(AM_CFLAGS)
tests_test_fuzz_regress_LDADD = $(PT_LIBS)
tests_test_fuzz_regress_ctf_SOURCES = tests/fuzz/fuzz_ctf.c tests/fuzz/replay.c
tests_test_fuzz_regress_ctf_CFLAGS = $(AM_CFLAGS)
tests_test_fuzz_regress_ctf_LDADD = $(PT_LIBS)
tests_test_fuzz_regress_ndl_SOURCES = tests/fuzz/fuzz_ndl.c tests/fuzz/fuzz_graph.h tests/fuzz/replay.c
tests_test_fuzz_regress_ndl_CFLAGS = $(AM_CFLAGS)
tests_test_fuzz_regress_ndl_LDADD = $(PT_LIBS)
tests_test_fuzz_regress_bs_SOURCES = tests/fuzz/fuzz_bs.c tests/fuzz/fuzz_graph.h tests/fuzz/replay.c
tests_test_fuzz_regress_bs_CFLAGS = $(AM_CFLAGS)
tests_test_fuzz_regress_bs_LDADD = $(PT_LIBS)
tests_test_fuzz_regress_model_SOURCES = tests/fuzz/fuzz_model.c tests/fuzz/replay.c
tests_test_fuzz_regress_model_CFLAGS = $(AM_CFLAGS)
tests_test_fuzz_regress_model_LDADD = $(PT_LIBS)
tests_test_fuzz_regress_mlf_SOURCES = tests/fuzz/fuzz_mlf.c tests/fuzz/replay.c
tests_test_fuzz_regress_mlf_CFLAGS = $(AM_CFLAGS)
tests_test_fuzz_regress_mlf_LDADD = $(PT_LIBS)
tests_test_fuzz_regress_lm_SOURCES = tests/fuzz/fuzz_lm.c tests/fuzz/replay.c
tests_test_fuzz_regress_lm_CFLAGS = $(AM_CFLAGS)
tests_test_fuzz_regress_lm_LDADD = $(PT_LIBS)

TESTS += tests/test_bs_parse tests/test_cfg tests/test_cfg_files tests/test_schema tests/test_cmdline tests/test_ctf tests/test_reader tests/test_learn tests/test_logfmt tests/test_blob tests/fuzz_regress.sh \
	tests/test_cli.sh tests/test_mpi.sh tests/test_man.sh tests/test_idx2ctf.sh tests/test_train.sh tests/test_parallel.sh \
	tests/test_cntk_compat.sh tests/test_bs_net.sh tests/test_bs_eval.sh tests/test_bs_rnn.sh tests/test_bs_rnnstack.sh tests/test_bs_classce.sh tests/test_lm.sh tests/test_bs_load.sh tests/test_bs_criteria.sh tests/test_bs_edit.sh tests/test_image_reader.sh tests/test_bs_conv.sh tests/test_bs_bn.sh tests/test_deserializers.sh \
	tests/test_dpsgd.sh tests/test_team_shm.sh tests/test_masgd.sh tests/test_asgd.sh tests/test_rescale.sh tests/test_elastic.sh tests/test_layers.sh tests/test_format.sh tests/test_files.sh tests/test_startup.sh tests/test_timeline.sh tests/test_plot.sh \
	tests/test_backend_boundary.sh tests/test_cntk_actions.sh tests/test_word_class.sh tests/test_svd.sh
TESTS += tests/test_read_ahead.sh tests/test_composite_reader.sh
EXTRA_DIST += tests/test_read_ahead.sh tests/test_composite_reader.sh
# CNTK's HTK readers on a generated speech corpus (tests/htk_gen: its writer)
check_PROGRAMS += tests/htk_gen
tests_htk_gen_SOURCES = tests/htk_gen.c tests/htk_gen.h
tests_htk_gen_CFLAGS = $(AM_CFLAGS)
TESTS += tests/test_ctc.sh tests/test_htk.sh tests/test_htk_writer.sh tests/test_mel.sh tests/test_dot.sh tests/test_auto_mb.sh tests/test_ndl.sh
EXTRA_DIST += tests/test_ctc.sh tests/test_htk.sh tests/test_htk_writer.sh tests/test_mel.sh tests/test_dot.sh tests/test_auto_mb.sh tests/test_ndl.sh
TESTS += tests/test_accept.sh
else
check-local:
	@echo "make check needs Check (apt-get install check), then re-run ./configure" >&2; exit 1
endif

# Two tiers. `make check`: unit, MPI, command-line and structure tests (minutes).
# `make check-long`: the accuracy gates that train on Fashion-MNIST (LONG_TESTS), through
# the same harness (TESTS_ENVIRONMENT, one .log per test, test-suite-long.log).
# TEST_EXTENSIONS gives .sh tests a suffix rule, so make knows how to run a test that is
# named only at make time (TESTS='$(LONG_TESTS)').
TEST_EXTENSIONS = .sh
LONG_TESTS = tests/test_onebit_fashion.sh tests/test_asgd_fashion.sh tests/test_bs_fashion.sh \
	tests/test_conv_fashion.sh
# DataParallelASGD on CNTK's Simple2d with a slow worker on a loaded machine (issue 19)
LONG_TESTS += tests/test_asgd_converge.sh
EXTRA_DIST += tests/test_bs_fashion.sh tests/test_conv_fashion.sh tests/test_asgd_converge.sh tests/simple2d.sh tests/data/simple2d-asgd.cfg \
	tests/data/images.py
check-long:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(LONG_TESTS)' TEST_SUITE_LOG=test-suite-long.log
.PHONY: check-long
# `make check-cluster`: every method across a simulated cluster (scripts/cluster.sh: 2
# hosts as network namespaces, Open MPI over TCP), and scripts/slurm-train.sbatch on a
# local Slurm over it (scripts/slurm-cluster.sh); needs root, ip, tc and namespaces, else
# skipped (77). scripts/test.sh runs it once (not under AddressSanitizer).
CLUSTER_TESTS = tests/test_cluster.sh tests/test_slurm.sh
EXTRA_DIST += tests/test_cluster.sh tests/test_slurm.sh
check-cluster:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(CLUSTER_TESTS)' TEST_SUITE_LOG=test-suite-cluster.log
.PHONY: check-cluster
CLEANFILES += test-suite-long.log test-suite-cluster.log
# `make check-gpu`: the CUDA backend (issue 17) on the machine's GPU: every backend op
# against the CPU backend (tests/test_cuda_ops, also part of `make check`), the
# DataParallelSGD engine on the GPU bit for bit (tests/test_gpu_engine.sh), the network
# tests' gradient checks on the GPU (tests/test_gpu_nn.sh), and training on the GPU
# against the CPU, on one and two ranks and across checkpoints (tests/test_gpu_train.sh),
# and the HTK reader with truncated back-propagation through time (tests/test_gpu_htk.sh).
# Each exits 77 (skipped) without a CUDA device.
GPU_TESTS = tests/test_cuda_ops tests/test_gpu_engine.sh tests/test_gpu_nn.sh tests/test_gpu_train.sh \
	tests/test_gpu_htk.sh
EXTRA_DIST += tests/test_gpu_train.sh tests/test_gpu_engine.sh tests/test_gpu_nn.sh tests/test_gpu_htk.sh
check-gpu:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(GPU_TESTS)' TEST_SUITE_LOG=test-suite-gpu.log
.PHONY: check-gpu
CLEANFILES += test-suite-gpu.log

TESTS_ENVIRONMENT = \
	top_srcdir='$(top_srcdir)' top_builddir='$(top_builddir)' MPIEXEC='$(MPIEXEC)' \
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
	PT_CUDA_PLUGIN='$(abs_top_builddir)/partrain-cuda.so'
EXTRA_DIST += tests/test_cntk_compat.sh tests/test_bs_net.sh tests/test_bs_eval.sh tests/test_bs_rnn.sh tests/test_bs_rnnstack.sh tests/test_bs_classce.sh tests/test_lm.sh tests/test_bs_load.sh tests/test_bs_criteria.sh tests/test_bs_edit.sh tests/test_image_reader.sh tests/test_bs_conv.sh tests/test_bs_bn.sh tests/test_deserializers.sh tests/test_idx2ctf.sh tests/test_train.sh tests/test_parallel.sh tests/test_dpsgd.sh tests/test_team_shm.sh tests/test_onebit_fashion.sh tests/test_masgd.sh \
	tests/test_asgd.sh tests/test_rescale.sh tests/test_elastic.sh tests/test_asgd_fashion.sh tests/testlib.sh tests/lsan.supp tests/fuzz_regress.sh tests/test_cli.sh tests/test_mpi.sh tests/test_man.sh tests/test_files.sh tests/test_startup.sh tests/test_cntk_actions.sh tests/test_timeline.sh tests/timeline_check.py tests/test_plot.sh \
	tests/test_word_class.sh tests/test_svd.sh tests/fuzz/seeds tests/fuzz/regress tests/fuzz/seeds-ctf tests/fuzz/regress-ctf \
	tests/fuzz/seeds-bs tests/fuzz/regress-bs tests/fuzz/seeds-ndl tests/fuzz/regress-ndl tests/fuzz/seeds-model tests/fuzz/seeds-mlf tests/fuzz/regress-mlf tests/fuzz/seeds-lm scripts/fuzz.sh tests/data/cntk-legacy.cfg \
	tests/test_layers.sh tests/test_format.sh tests/test_backend_boundary.sh .clang-format README.md
EXTRA_DIST += tests/test_accept.sh

if HAVE_CHECK
check_PROGRAMS += tests/test_quantize
tests_test_quantize_SOURCES = tests/test_quantize.c tests/testutil.h
tests_test_quantize_CFLAGS = $(TEST_CFLAGS)
tests_test_quantize_LDADD = $(TEST_LIBS)
TESTS += tests/test_quantize
# tests/test_cuda_ops: every op of the CUDA backend against the CPU backend. Built without
# CUDA too: it then skips (77), as it does on a machine without a device.
check_PROGRAMS += tests/test_cuda_ops
tests_test_cuda_ops_SOURCES = tests/test_cuda_ops.c tests/test_cuda_ops.h \
	tests/test_cuda_ops_nn.c tests/test_cuda_ops_update.c
tests_test_cuda_ops_CFLAGS = $(TEST_CFLAGS)
tests_test_cuda_ops_LDADD = $(TEST_LIBS)
TESTS += tests/test_cuda_ops
endif
# tests/test_comm: a plain MPI program (Check forks, which MPI does not survive), run by
# tests/test_comm.sh with 1 to 4 ranks.
check_PROGRAMS += tests/test_comm
tests_test_comm_SOURCES = tests/test_comm.c tests/test_comm.h tests/test_comm_coll.c \
	tests/test_comm_v.c tests/test_comm_nb.c tests/test_comm_hier.c tests/test_comm_ring.c tests/tcheck.h tests/tcheck.c
tests_test_comm_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -I$(top_srcdir)/tests
tests_test_comm_LDADD = $(PT_LIBS)
TESTS += tests/test_comm.sh
EXTRA_DIST += tests/test_comm.sh
# tests/test_masgd: the ModelAveragingSGD and BlockMomentumSGD engines step by step against
# references computed from all ranks' models (plain MPI program, run by tests/test_masgd.sh).
check_PROGRAMS += tests/test_masgd
tests_test_masgd_SOURCES = tests/test_masgd.c tests/tcheck.h tests/tcheck.c
tests_test_masgd_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -I$(top_srcdir)/tests
tests_test_masgd_LDADD = $(PT_LIBS)
# tests/test_asgd: the DataParallelASGD engine: no lost updates (exact), warm-up, pipeline,
# SimModelAverage, staleness, server state, progress (plain MPI program, tests/test_asgd.sh).
check_PROGRAMS += tests/test_asgd
tests_test_asgd_SOURCES = tests/test_asgd.c tests/tcheck.h tests/tcheck.c
tests_test_asgd_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -I$(top_srcdir)/tests
tests_test_asgd_LDADD = $(PT_LIBS)
# tests/test_dpsgd_engine: the DataParallelSGD engine built from config text, against
# references computed from all ranks' inputs (plain MPI program, tests/test_dpsgd_engine.sh).
check_PROGRAMS += tests/test_dpsgd_engine
tests_test_dpsgd_engine_SOURCES = tests/test_dpsgd_engine.c tests/tcheck.h tests/tcheck.c
tests_test_dpsgd_engine_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -I$(top_srcdir)/tests
tests_test_dpsgd_engine_LDADD = $(PT_LIBS)
TESTS += tests/test_dpsgd_engine.sh
EXTRA_DIST += tests/test_dpsgd_engine.sh
