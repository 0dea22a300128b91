# tests/bench/solve.mk: whole solves through spmvd (CG, BiCGStab,
# PageRank) against the same methods in-process.  Built by make bench (or
# with --enable-bench), never run by make check.
EXTRA_DIST += tests/bench/bench_solve.c tests/bench/bench_solve_gpu.c \
	tests/bench/bench_solve_ref.c tests/bench/bench_solve.h
if HAVE_CUDA
EXTRA_PROGRAMS += tests/bench/bench_solve
tests_bench_bench_solve_SOURCES = tests/bench/bench_solve.c \
	tests/bench/bench_solve_gpu.c tests/bench/bench_solve_ref.c \
	tests/bench/bench_solve.h $(BENCH_SVC) $(GPU_SUITE) $(GPU_COMMON)
tests_bench_bench_solve_CPPFLAGS = $(GPU_CPPFLAGS) \
	-DSPMV_BENCH_SPMVD='"$(abs_top_builddir)/daemon/spmvd"'
tests_bench_bench_solve_LDADD = client/libspmvclient.la $(GPU_LDADD) \
	$(CUBLAS_LIBS) -lpthread
endif
