# tests/bench/split.mk: a matrix on one worker against the same matrix in
# row blocks over several (issue 54), on either backend (it needs no CUDA
# of its own).  make check builds it and runs it small on the cpu
# backend's workers (tests/check_bench_split.sh); on GPUs it is run by
# hand (tests/bench/RESULTS.md).
EXTRA_DIST += tests/bench/bench_split.c tests/check_bench_split.sh
check_PROGRAMS += tests/bench/bench_split
TESTS += tests/check_bench_split.sh
tests_bench_bench_split_SOURCES = tests/bench/bench_split.c \
	tests/bench/bench_svc.c tests/bench/bench_svc.h \
	tests/bench/bench_clock.h tests/bench/bench_daemon.h \
	tests/bench/suite.c tests/bench/suite.h \
	tests/bench/suite_heldout.c tests/bench/suite_heldout.h
tests_bench_bench_split_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) \
	-DSPMV_BENCH_SPMVD='"$(abs_top_builddir)/daemon/spmvd"'
tests_bench_bench_split_LDADD = client/libspmvclient.la \
	client/libspmvmmio.la kernels/libspmvcore.la $(ZLIB_LIBS) \
	$(XXHASH_LIBS) $(JANSSON_LIBS) -lm
$(tests_bench_bench_split_OBJECTS): daemon/spmvd daemon/spmvd-worker
