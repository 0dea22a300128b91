# tests/bench/service.mk: the service path (device vectors, op lists,
# host vectors, loads) against the same work in-process.  Built by make
# bench (or with --enable-bench), never run by make check.
EXTRA_DIST += tests/bench/bench_service.c tests/bench/bench_service_gpu.c \
	tests/bench/bench_service.h tests/bench/bench_daemon.h \
	tests/bench/bench_svc.c tests/bench/bench_svc.h \
	tests/bench/bench_cusparse.c tests/bench/bench_cusparse.h
if HAVE_CUDA
# What the benchmarks of the service path share: the client's side (a
# private spmvd, timed loads) and the in-process cuSPARSE and cuBLAS.
BENCH_SVC = tests/bench/bench_svc.c tests/bench/bench_svc.h \
	tests/bench/bench_cusparse.c tests/bench/bench_cusparse.h \
	tests/bench/bench_clock.h tests/bench/bench_daemon.h
EXTRA_PROGRAMS += tests/bench/bench_service
tests_bench_bench_service_SOURCES = tests/bench/bench_service.c \
	tests/bench/bench_service_gpu.c tests/bench/bench_service.h \
	$(BENCH_SVC) $(GPU_SUITE) $(GPU_COMMON)
tests_bench_bench_service_CPPFLAGS = $(GPU_CPPFLAGS) $(JANSSON_CFLAGS) \
	-DSPMV_BENCH_SPMVD='"$(abs_top_builddir)/daemon/spmvd"'
tests_bench_bench_service_LDADD = client/libspmvclient.la $(GPU_LDADD) \
	$(CUBLAS_LIBS) $(JANSSON_LIBS) -lpthread
endif
