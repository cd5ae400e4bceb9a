# src/: the layers in dependency order (README, Architecture; tests/test_layers.sh checks
# the includes). Three libraries, each listed once on the link line, highest first:
#   libpartrain.a  math, comm, data, reader, nn, learn, parallel, train (this fragment and
#                  src/nn/local.mk)
#   libptparsers.a parsers/ (parsers/local.mk)
#   libptcore.a    src/core/ (below)
noinst_LIBRARIES += libptcore.a
libptcore_a_SOURCES = \
	src/core/err.h src/core/err.c src/core/log.h src/core/log.c src/core/fs.h src/core/fs.c \
	src/core/rng.h src/core/rng.c src/core/blob.h src/core/blob.c src/core/timer.h \
	src/core/half.h src/core/half.c src/core/trace.h src/core/trace.c

noinst_LIBRARIES += libpartrain.a
libpartrain_a_SOURCES = \
	src/data/minibatch.h src/data/minibatch.c \
	src/comm/comm.h src/comm/comm_internal.h src/comm/comm.c src/comm/comm_types.c src/comm/comm_coll.c \
	src/comm/comm_nb.c src/comm/comm_hier.c src/comm/comm_ring.c src/comm/comm_store.c src/comm/comm_shm.c \
	src/learn/learn.h src/learn/sgd_schema.c src/learn/learn_config.c src/learn/learner.c \
	src/nn/nn.h \
	src/reader/reader.h src/reader/reader_schema.c \
	src/reader/reader_internal.h src/reader/reader_config.c src/reader/ctf_index.c \
	src/reader/ctf_reader.c src/reader/ctf_batch.c src/reader/prefetch.c src/reader/fill_pool.h src/reader/fill_pool.c src/reader/dense_store.h src/reader/dense_store.c src/reader/timeline.h src/reader/timeline.c \
	src/reader/image.h src/reader/image_config.c src/reader/image_legacy.c src/reader/image_reader.c src/reader/image_tf.c \
	src/reader/htk.h src/reader/htk_config.c src/reader/htk_mlf.c src/reader/htk_ctf.c src/reader/htk_reader.c src/reader/htk_fill.c \
	src/reader/lm.h src/reader/lm_config.c src/reader/lm_reader.c \
	src/parallel/parallel.h src/parallel/parallel_schema.c src/parallel/engine.c \
	src/parallel/dpsgd.c src/parallel/dpsgd_quant.h src/parallel/dpsgd_quant.c src/parallel/masgd.c \
	src/parallel/asgd.c src/parallel/asgd_config.h src/parallel/asgd_config.c \
	src/train/train.h src/train/command_schema.c src/train/actions.c src/train/cmdline.c \
	src/train/logfmt.h src/train/logfmt.c src/train/banner.c src/train/summary.c src/train/train_internal.h src/train/train_loop.c \
	src/train/evaluate.c src/train/cross_validate.c src/train/write_output.c src/train/write_htk.c src/train/write_internal.h src/train/write_schema.c src/train/dump_node.c src/train/plot.c src/train/word_class.c src/train/svd.c src/train/edit_model.c src/train/edit_mel.c src/train/checkpoint.c src/train/stats.c src/train/files.c src/train/train_run.h src/train/train_setup.c src/train/train_ident.c src/train/train_epoch.c src/train/train_save.c src/train/train_adjust.c src/train/train_search.c src/train/train_stage.c src/train/train_team.c src/train/device.c \
	src/math/backend.h src/math/backend.c
libpartrain_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(OPENBLAS_CFLAGS) $(STB_CFLAGS)
libpartrain_a_CPPFLAGS = $(AM_CPPFLAGS) -DPT_PKGLIBDIR='"$(pkglibdir)"'

# No CUDA library on the programs' link line: the cuBLAS backend is a plugin (below).
PT_LIBS = libpartrain.a libptparsers.a libptcore.a $(INIH_LIBS) $(OPENBLAS_LIBS) $(MPI_LIBS) $(STB_LIBS) $(DL_LIBS) -lm

# The cuBLAS backend (--with-cuda): the plugin partrain-cuda.so, which backend.c opens
# when a GPU is asked for (a CPU run then maps neither cuBLAS nor the CUDA runtime). Its
# objects: the .cu files, built with --fmad=false (no a*b+c fused into one rounding, as
# the CPU's code is built, so the updates give the CPU's bits, the quantizers its bytes:
# see cuda_update.cu and cuda_quantize.cu; the rest stays within rounding of the CPU),
# and its own copy of core/err.c. Every symbol is hidden but its two entry points, and
# -z defs makes sure it needs nothing from the program that opens it. Installed in
# $(pkglibdir); in a build tree the trainer finds it beside itself, the tests through
# PT_CUDA_PLUGIN (tests/local.mk).
CUDA_OBJS = src/math/cuda_backend.$(OBJEXT) src/math/cuda_kernels.$(OBJEXT) \
	src/math/cuda_update.$(OBJEXT) src/math/cuda_quantize.$(OBJEXT) src/core/plugin_err.$(OBJEXT)
CUDA_DEPS = $(srcdir)/src/math/backend.h $(srcdir)/src/math/cuda_internal.h \
	$(srcdir)/src/math/quantize.h $(top_builddir)/config.h
NVCC_COMPILE = $(MKDIR_P) src/math && $(NVCC) $(NVCCFLAGS) --fmad=false \
	-Xcompiler=-fPIC,-fvisibility=hidden -I$(srcdir)/src -I$(top_builddir)
if HAVE_CUDA
noinst_DATA = partrain-cuda.so
CLEANFILES += $(CUDA_OBJS) partrain-cuda.so
partrain-cuda.so: $(CUDA_OBJS)
	$(AM_V_GEN)$(CC) -shared -Wl,-z,defs -o $@ $(CUDA_OBJS) $(CUDA_LIBS)
src/math/cuda_backend.$(OBJEXT): $(srcdir)/src/math/cuda_backend.cu $(CUDA_DEPS)
	$(AM_V_GEN)$(NVCC_COMPILE) -c -o $@ $(srcdir)/src/math/cuda_backend.cu
src/math/cuda_kernels.$(OBJEXT): $(srcdir)/src/math/cuda_kernels.cu $(CUDA_DEPS)
	$(AM_V_GEN)$(NVCC_COMPILE) -c -o $@ $(srcdir)/src/math/cuda_kernels.cu
src/math/cuda_update.$(OBJEXT): $(srcdir)/src/math/cuda_update.cu $(CUDA_DEPS)
	$(AM_V_GEN)$(NVCC_COMPILE) -c -o $@ $(srcdir)/src/math/cuda_update.cu
src/math/cuda_quantize.$(OBJEXT): $(srcdir)/src/math/cuda_quantize.cu $(CUDA_DEPS)
	$(AM_V_GEN)$(NVCC_COMPILE) -c -o $@ $(srcdir)/src/math/cuda_quantize.cu
src/core/plugin_err.$(OBJEXT): $(srcdir)/src/core/err.c $(srcdir)/src/core/err.h
	$(AM_V_CC)$(MKDIR_P) src/core && $(CC) $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) \
		-fPIC -fvisibility=hidden -c -o $@ $(srcdir)/src/core/err.c
install-exec-local:
	$(MKDIR_P) '$(DESTDIR)$(pkglibdir)'
	$(INSTALL_PROGRAM) partrain-cuda.so '$(DESTDIR)$(pkglibdir)/partrain-cuda.so'
uninstall-local:
	rm -f '$(DESTDIR)$(pkglibdir)/partrain-cuda.so'
endif
EXTRA_DIST += src/math/cuda_backend.cu src/math/cuda_kernels.cu src/math/cuda_update.cu \
	src/math/cuda_quantize.cu src/math/cuda_internal.h

bin_PROGRAMS += trainer
trainer_SOURCES = src/main.c
trainer_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
trainer_LDADD = $(PT_LIBS)
