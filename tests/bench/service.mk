# tests/bench/service.mk: the service path (device vectors, op lists,
# host vectors, loads) against the same work in-process.  Built by make
# bench (or with --enable-bench), never run by make check.
EXTRA_DIST += tests/bench/bench_service.c tests/bench/bench_service_gpu.c \
	tests/bench/bench_service.h tests/bench/bench_daemon.h
if HAVE_CUDA
EXTRA_PROGRAMS += tests/bench/bench_service
tests_bench_bench_service_SOURCES = tests/bench/bench_service.c \
	tests/bench/bench_service_gpu.c tests/bench/bench_service.h \
	tests/bench/bench_clock.h tests/bench/bench_daemon.h $(GPU_SUITE) \
	$(GPU_COMMON)
tests_bench_bench_service_CPPFLAGS = $(GPU_CPPFLAGS) $(JANSSON_CFLAGS) \
	-DSPMV_BENCH_SPMVD='"$(abs_top_builddir)/daemon/spmvd"'
tests_bench_bench_service_LDADD = client/libspmvclient.la $(GPU_LDADD) \
	$(CUBLAS_LIBS) $(JANSSON_LIBS) -lpthread
endif
