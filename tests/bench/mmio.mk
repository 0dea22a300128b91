# tests/bench/mmio.mk: Matrix Market parsing speed.
# Built with the tree (so it keeps compiling), never run by make check.
noinst_PROGRAMS += tests/bench/bench_mmio
tests_bench_bench_mmio_SOURCES = tests/bench/bench_mmio.c
tests_bench_bench_mmio_CPPFLAGS = $(AM_CPPFLAGS) $(ZLIB_CFLAGS) \
	-DSPMV_BENCH_MATRICES='"$(abs_top_srcdir)/../shared/matrices"'
tests_bench_bench_mmio_LDADD = client/libspmvmmio.la $(ZLIB_LIBS)
