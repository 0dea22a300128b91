# tests/bench/gpu.mk: SpMV kernels against cuSPARSE, and the GPU probes.
# Everything here needs CUDA: built only when configure found it.  The GPU
# tests exit 77 (skipped) on a machine without a GPU; the benchmarks and
# probes are built by `make bench` and run by hand (never by make check).
EXTRA_DIST += tests/gpu_common.c tests/gpu_common.h tests/check_gpu_formats.c \
	tests/check_gpu_device.c tests/check_gpu_blas.c tests/gpu_formats_common.h \
	tests/bench/bench_spmv.c tests/bench/bound_gpu.cu \
	tests/bench/bound_gpu.h \
	tests/bench/probe_scrub.c tests/bench/probe_rounds.c \
	tests/bench/bench_load.c \
	tests/bench/bench_warm.c tests/bench/bench_graph.c \
	tests/bench/probe_launch.cu tests/bench/probe_drift.c

if HAVE_CUDA
GPU_LDADD = kernels/libspmvkernels_cuda.a kernels/libspmvcore.la \
	client/libspmvmmio.la $(ZLIB_LIBS) $(XXHASH_LIBS) $(CUDA_LIBS) -lm
GPU_CPPFLAGS = $(DAEMON_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/tests
GPU_COMMON = tests/gpu_common.c tests/gpu_common.h
GPU_SUITE = tests/bench/suite.c tests/bench/suite.h \
	tests/bench/suite_heldout.c tests/bench/suite_heldout.h

# The kernels and configurations against the CPU references, and the
# device machinery they run on (the pool, graphs, the timer), and the
# BLAS-1 operations of device vectors.
check_PROGRAMS += tests/check_gpu_formats tests/check_gpu_device tests/check_gpu_blas
TESTS += tests/check_gpu_formats tests/check_gpu_device tests/check_gpu_blas
tests_check_gpu_formats_SOURCES = tests/check_gpu_formats.c \
	tests/gpu_formats_common.h $(GPU_COMMON)
tests_check_gpu_formats_CPPFLAGS = $(GPU_CPPFLAGS)
tests_check_gpu_formats_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_gpu_formats_LDADD = $(GPU_LDADD) $(CHECK_LIBS)
tests_check_gpu_device_SOURCES = tests/check_gpu_device.c \
	tests/gpu_formats_common.h $(GPU_COMMON)
tests_check_gpu_device_CPPFLAGS = $(GPU_CPPFLAGS)
tests_check_gpu_device_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_gpu_device_LDADD = $(GPU_LDADD) $(CHECK_LIBS)
tests_check_gpu_blas_SOURCES = tests/check_gpu_blas.c $(GPU_COMMON)
tests_check_gpu_blas_CPPFLAGS = $(GPU_CPPFLAGS)
tests_check_gpu_blas_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_gpu_blas_LDADD = $(GPU_LDADD) $(CHECK_LIBS)

EXTRA_PROGRAMS += tests/bench/bench_spmv tests/bench/probe_scrub \
	tests/bench/probe_rounds tests/bench/bench_load tests/bench/bench_warm \
	tests/bench/bench_graph tests/bench/probe_launch tests/bench/probe_drift

# The benchmark: every configuration against cuSPARSE.
tests_bench_bench_spmv_SOURCES = tests/bench/bench_spmv.c \
	tests/bench/bound_gpu.cu tests/bench/bound_gpu.h $(GPU_SUITE) $(GPU_COMMON)
tests_bench_bench_spmv_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_bench_spmv_LDADD = $(GPU_LDADD) -lpthread

# Whether memory given back to the driver slows the next kernels.
tests_bench_probe_scrub_SOURCES = tests/bench/probe_scrub.c \
	tests/bench/bound_gpu.cu tests/bench/bound_gpu.h
tests_bench_probe_scrub_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_probe_scrub_LDADD = $(GPU_LDADD)

# A race's first rounds timed run by run.
tests_bench_probe_rounds_SOURCES = tests/bench/probe_rounds.c $(GPU_SUITE) \
	$(GPU_COMMON)
tests_bench_probe_rounds_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_probe_rounds_LDADD = $(GPU_LDADD)

# How a small product's timed speed moves from one millisecond to the next.
tests_bench_probe_drift_SOURCES = tests/bench/probe_drift.c $(GPU_SUITE) \
	$(GPU_COMMON)
tests_bench_probe_drift_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_probe_drift_LDADD = $(GPU_LDADD)

# Where loading a matrix onto the GPU spends its time.
tests_bench_bench_load_SOURCES = tests/bench/bench_load.c $(GPU_SUITE) \
	tests/bench/bench_clock.h $(GPU_COMMON)
tests_bench_bench_load_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_bench_load_LDADD = $(GPU_LDADD) -lpthread

# What the L2 warm-up costs and gains when matrices alternate.
tests_bench_bench_warm_SOURCES = tests/bench/bench_warm.c $(GPU_SUITE) \
	$(GPU_COMMON)
tests_bench_bench_warm_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_bench_warm_LDADD = $(GPU_LDADD) -lpthread

# A product launched kernel by kernel against it replayed as a graph.
tests_bench_bench_graph_SOURCES = tests/bench/bench_graph.c $(GPU_SUITE) \
	$(GPU_COMMON)
tests_bench_bench_graph_CPPFLAGS = $(GPU_CPPFLAGS)
tests_bench_bench_graph_LDADD = $(GPU_LDADD)

# The GPU's cost between a product's kernels, one by one and as a graph.
tests_bench_probe_launch_SOURCES = tests/bench/probe_launch.cu
tests_bench_probe_launch_LDADD = $(CUDA_LIBS)
tests_bench_probe_launch_LINK = $(CCLD) $(AM_CFLAGS) $(CFLAGS) $(AM_LDFLAGS) \
	$(LDFLAGS) -o $@
endif
