# src/nn/ and src/math/ (network layers, parameter arena, compute backend): built into
# libptnn.a. This fragment is owned by the nn/math work.
#
# libptnn.a needs core/err (libptparsers.a), the config reader (libptparsers.a) and
# reader/minibatch.c (libpartrain.a): link it as `libptnn.a $(PT_LIBS)`.
noinst_LIBRARIES += libptnn.a
libptnn_a_SOURCES = \
	src/math/backend.h src/math/cpu_kernels.h src/math/cpu_backend.c src/math/cpu_kernels.c \
	src/math/cpu_gemm.h src/math/cpu_gemm.c \
	src/math/cpu_criteria.c src/math/cpu_lstm.c src/math/cpu_update.c src/math/quantize.h \
	src/math/cpu_quantize.c src/math/backend_stage.c src/math/half.h src/math/half.c \
	src/nn/nn.h src/nn/nn_internal.h src/nn/nn_init.c src/nn/nn_config.c src/nn/dense.c \
	src/nn/lstm.c src/nn/net.c src/nn/step.c src/nn/model_io.c
libptnn_a_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)

if HAVE_CHECK
check_PROGRAMS += tests/test_math tests/test_nn tests/test_nn_lstm tests/test_nn_model
tests_test_math_SOURCES = tests/test_math.c tests/test_math_update.c tests/testutil.h
tests_test_math_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_math_LDADD = libptnn.a $(TEST_LIBS)
tests_test_nn_SOURCES = tests/test_nn.c tests/test_nn_util.h tests/testutil.h
tests_test_nn_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_nn_LDADD = libptnn.a $(TEST_LIBS)
tests_test_nn_lstm_SOURCES = tests/test_nn_lstm.c tests/test_nn_util.h tests/testutil.h
tests_test_nn_lstm_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_nn_lstm_LDADD = libptnn.a $(TEST_LIBS)
tests_test_nn_model_SOURCES = tests/test_nn_model.c tests/test_nn_util.h tests/testutil.h
tests_test_nn_model_CFLAGS = $(TEST_CFLAGS) $(OPENBLAS_CFLAGS)
tests_test_nn_model_LDADD = libptnn.a $(TEST_LIBS)
TESTS += tests/test_math tests/test_nn tests/test_nn_lstm tests/test_nn_model
endif
