# tests/bench/roundtrip.mk: multiply round trips through spmvd vs the kernel.
# Built by make bench (or with --enable-bench), never run by make check.
EXTRA_PROGRAMS += tests/bench/bench_roundtrip
tests_bench_bench_roundtrip_SOURCES = tests/bench/bench_roundtrip.c \
	tests/bench/bench_daemon.h
tests_bench_bench_roundtrip_CPPFLAGS = $(DAEMON_CPPFLAGS) \
	-DSPMV_BENCH_MATRICES='"$(abs_top_srcdir)/tests/data/matrices"' \
	-DSPMV_BENCH_SPMVD='"$(abs_top_builddir)/daemon/spmvd"'
tests_bench_bench_roundtrip_LDADD = client/libspmvclient.la client/libspmvmmio.la \
	kernels/libspmvcore.la $(ZLIB_LIBS) -lm
