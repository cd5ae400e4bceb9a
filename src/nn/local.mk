# src/nn/ and src/math/ (network layers, parameter arena, compute backend): part of
# libpartrain.a (src/local.mk); link with $(PT_LIBS). This fragment is owned by the nn/math work.
libpartrain_a_SOURCES += \
	src/math/backend.h src/math/cpu_kernels.h src/math/cpu_backend.c src/math/cpu_kernels.c \
	src/math/cpu_gemm.h src/math/cpu_gemm.c src/math/cpu_gemm_internal.h src/math/cpu_gemm_pack.c \
	src/math/cpu_criteria.c src/math/cpu_conv.c src/math/cpu_bn.c src/math/cpu_lstm.c src/math/cpu_update.c src/math/quantize.h \
	src/math/cpu_quantize.c src/math/backend_stage.c \
	src/nn/nn.h src/nn/nn_internal.h src/nn/nn_init.c src/nn/nn_config.c src/nn/class_lm.c src/nn/simple_bs.c src/nn/dense.c \
	src/nn/lstm.c src/nn/net.c src/nn/step.c src/nn/step_replay.c src/nn/model_io.c \
	src/nn/layer.h src/nn/layer.c src/nn/dropout.c src/nn/last_step.c \
	src/math/cpu_graph.c src/nn/graph.h src/nn/graph.c src/nn/graph_nodes.c src/nn/graph_ewise.c src/nn/graph_crit.c src/nn/graph_rank.c src/nn/graph_classce.c src/nn/graph_ctc.c src/nn/graph_rows.c src/nn/graph_rnn.c src/nn/graph_delay.c src/nn/graph_sched.c src/nn/graph_conv.c src/nn/graph_bn.c \
	src/nn/bs_eval.h src/nn/bs_eval_internal.h src/nn/bs_eval.c src/nn/bs_call.c \
	src/nn/bs_builtins.c src/nn/bs_rows.c src/nn/bs_layers.c src/nn/bs_lookup.c src/nn/bs_lang.c src/nn/bs_net.c src/nn/bs_prelude.c src/nn/bs_array.c src/nn/bs_conv.c src/nn/bs_tensor.c src/nn/bs_params.c src/nn/bs_bn.c src/nn/bs_roots.c src/nn/bs_edit.c src/nn/bs_load.c src/nn/bs_config.c src/nn/ndl.c src/nn/ndl_write.c src/nn/ndl_internal.h src/nn/dot.c

if HAVE_CHECK
check_PROGRAMS += tests/test_math tests/test_nn tests/test_nn_lstm tests/test_nn_model \
	tests/test_graph tests/test_nn_team
tests_test_math_SOURCES = tests/test_math.c tests/test_math_update.c tests/test_math_conv.c tests/test_math_bn.c \
	tests/test_math_lstm.c tests/test_math_sparse.c tests/test_math_probe.c tests/test_math.h tests/testutil.h
tests_test_math_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_math_LDADD = $(TEST_LIBS)
tests_test_nn_SOURCES = tests/test_nn.c tests/test_nn_util.h tests/testutil.h
tests_test_nn_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_nn_LDADD = $(TEST_LIBS)
tests_test_nn_lstm_SOURCES = tests/test_nn_lstm.c tests/test_nn_util.h tests/testutil.h
tests_test_nn_lstm_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_nn_lstm_LDADD = $(TEST_LIBS)
tests_test_nn_model_SOURCES = tests/test_nn_model.c tests/test_nn_util.h tests/testutil.h
tests_test_nn_model_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_nn_model_LDADD = $(TEST_LIBS)
tests_test_graph_SOURCES = tests/test_graph.c tests/test_graph_values.c tests/test_graph_reduce.c tests/test_graph_classce.c tests/test_graph_ctc.c tests/test_graph_math.c tests/test_graph_lib.c tests/test_graph_shapes.c tests/test_graph.h tests/test_graph_cases.h tests/test_nn_util.h tests/testutil.h
tests_test_graph_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_graph_LDADD = $(TEST_LIBS)
tests_test_nn_team_SOURCES = tests/test_nn_team.c tests/test_nn_util.h tests/testutil.h
tests_test_nn_team_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS) -pthread
tests_test_nn_team_LDADD = $(TEST_LIBS) -lpthread
TESTS += tests/test_math tests/test_nn tests/test_nn_lstm tests/test_nn_model tests/test_graph \
	tests/test_nn_team
endif
