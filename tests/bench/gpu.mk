# tests/bench/gpu.mk: SpMV kernels against cuSPARSE, and the tuner evaluation.
# Everything here needs CUDA: built only when configure found it.  The GPU
# tests exit 77 (skipped) on a machine without a GPU.
EXTRA_DIST += tests/gpu_common.c tests/gpu_common.h tests/check_gpu_formats.c

if HAVE_CUDA
GPU_LDADD = kernels/libspmvkernels_cuda.a kernels/libspmvcore.la \
	client/libspmvmmio.la $(ZLIB_LIBS) $(XXHASH_LIBS) $(CUDA_LIBS) -lm
GPU_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/tests

check_PROGRAMS += tests/check_gpu_formats
TESTS += tests/check_gpu_formats
tests_check_gpu_formats_SOURCES = tests/check_gpu_formats.c \
	tests/gpu_common.c tests/gpu_common.h
tests_check_gpu_formats_CPPFLAGS = $(GPU_CPPFLAGS)
tests_check_gpu_formats_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_gpu_formats_LDADD = $(GPU_LDADD) $(CHECK_LIBS)
endif

if HAVE_CUDA
# The benchmark: built by `make`, run by hand (never by make check).
noinst_PROGRAMS += tests/bench/bench_spmv
tests_bench_bench_spmv_SOURCES = tests/bench/bench_spmv.c \
	tests/bench/bound_gpu.cu tests/bench/bound_gpu.h \
	tests/gpu_common.c tests/gpu_common.h
tests_bench_bench_spmv_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_bench_spmv_LDADD = $(GPU_LDADD) -lpthread
endif
EXTRA_DIST += tests/bench/bench_spmv.c tests/bench/bound_gpu.cu \
	tests/bench/bound_gpu.h tests/bench/results

if HAVE_CUDA
# Whether memory given back to the driver slows the next kernels (by hand).
noinst_PROGRAMS += tests/bench/probe_scrub
tests_bench_probe_scrub_SOURCES = tests/bench/probe_scrub.c \
	tests/bench/bound_gpu.cu tests/bench/bound_gpu.h
tests_bench_probe_scrub_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_probe_scrub_LDADD = $(GPU_LDADD)
endif
EXTRA_DIST += tests/bench/probe_scrub.c

if HAVE_CUDA
# A race's first rounds timed run by run (by hand).
noinst_PROGRAMS += tests/bench/probe_rounds
tests_bench_probe_rounds_SOURCES = tests/bench/probe_rounds.c \
	tests/bench/suite.c tests/bench/suite.h
tests_bench_probe_rounds_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_probe_rounds_LDADD = $(GPU_LDADD)
endif
EXTRA_DIST += tests/bench/probe_rounds.c tests/bench/race_replay.py \
	tests/bench/race_positions.py tests/bench/predict_drift.py

if HAVE_CUDA
# Where loading a matrix onto the GPU spends its time (run by hand).
noinst_PROGRAMS += tests/bench/bench_load
tests_bench_bench_load_SOURCES = tests/bench/bench_load.c \
	tests/bench/suite.c tests/bench/suite.h tests/bench/bench_clock.h \
	tests/gpu_common.c tests/gpu_common.h
tests_bench_bench_load_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_bench_load_LDADD = $(GPU_LDADD) -lpthread
endif
EXTRA_DIST += tests/bench/bench_load.c

if HAVE_CUDA
# What the L2 warm-up costs and gains when matrices alternate (run by hand).
noinst_PROGRAMS += tests/bench/bench_warm
tests_bench_bench_warm_SOURCES = tests/bench/bench_warm.c \
	tests/bench/suite.c tests/bench/suite.h \
	tests/gpu_common.c tests/gpu_common.h
tests_bench_bench_warm_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_bench_warm_LDADD = $(GPU_LDADD) -lpthread
endif
EXTRA_DIST += tests/bench/bench_warm.c
