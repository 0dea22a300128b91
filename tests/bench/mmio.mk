# tests/bench/mmio.mk: Matrix Market parsing speed.
# Built by make bench (or with --enable-bench), never run by make check.
EXTRA_PROGRAMS += tests/bench/bench_mmio
tests_bench_bench_mmio_SOURCES = tests/bench/bench_mmio.c
tests_bench_bench_mmio_CPPFLAGS = $(DAEMON_CPPFLAGS) $(ZLIB_CFLAGS) \
	-DSPMV_BENCH_MATRICES='"$(abs_top_srcdir)/tests/data/matrices"'
tests_bench_bench_mmio_LDADD = client/libspmvmmio.la $(ZLIB_LIBS)
