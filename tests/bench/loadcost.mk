# tests/bench/loadcost.mk: what a load costs its user, first sight and cache
# hit, in products of the chosen kernel, on either backend (it needs no
# CUDA of its own).  Built by make bench (or with --enable-bench), never
# run by make check.
EXTRA_DIST += tests/bench/bench_loadcost.c
EXTRA_PROGRAMS += tests/bench/bench_loadcost
tests_bench_bench_loadcost_SOURCES = tests/bench/bench_loadcost.c \
	tests/bench/bench_svc.c tests/bench/bench_svc.h \
	tests/bench/bench_clock.h tests/bench/bench_daemon.h \
	tests/bench/suite.c tests/bench/suite.h \
	tests/bench/suite_heldout.c tests/bench/suite_heldout.h
tests_bench_bench_loadcost_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) \
	-DSPMV_BENCH_SPMVD='"$(abs_top_builddir)/daemon/spmvd"'
tests_bench_bench_loadcost_LDADD = client/libspmvclient.la \
	client/libspmvmmio.la kernels/libspmvcore.la $(ZLIB_LIBS) \
	$(XXHASH_LIBS) $(JANSSON_LIBS) -lm
