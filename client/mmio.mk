# client/mmio.mk: the Matrix Market reader and its tests.
noinst_LTLIBRARIES += client/libspmvmmio.la
client_libspmvmmio_la_SOURCES = \
	client/spmv_mmio.c client/spmv_mmio.h client/spmv_mmio_scan.h \
	client/spmv_mmio_build.c client/spmv_mmio_build.h \
	client/spmv_mmio_file.c client/spmv_mmio_array.c
client_libspmvmmio_la_CPPFLAGS = $(CLIENT_CPPFLAGS) $(ZLIB_CFLAGS)
client_libspmvmmio_la_LIBADD = kernels/libspmvcore.la $(ZLIB_LIBS)

# The reader on files (and the shared matrices against matrices.tsv), and
# its number scanners and random matrices.
check_PROGRAMS += tests/check_mmio tests/check_mmio_scan
TESTS += tests/check_mmio tests/check_mmio_scan
tests_check_mmio_SOURCES = tests/check_mmio.c tests/mmio_common.h
tests_check_mmio_CPPFLAGS = $(DAEMON_CPPFLAGS) $(ZLIB_CFLAGS) \
	-DSPMV_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_check_mmio_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_mmio_LDADD = client/libspmvmmio.la $(CHECK_LIBS) $(ZLIB_LIBS) -lm
tests_check_mmio_scan_SOURCES = tests/check_mmio_scan.c tests/mmio_common.h
tests_check_mmio_scan_CPPFLAGS = $(DAEMON_CPPFLAGS) $(ZLIB_CFLAGS) \
	-DSPMV_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_check_mmio_scan_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_mmio_scan_LDADD = client/libspmvmmio.la $(CHECK_LIBS) $(ZLIB_LIBS) -lm

# Dense vectors as array files (spmvctl solve's --rhs and --output).
check_PROGRAMS += tests/check_mmio_array
TESTS += tests/check_mmio_array
tests_check_mmio_array_SOURCES = tests/check_mmio_array.c
tests_check_mmio_array_CPPFLAGS = $(DAEMON_CPPFLAGS) $(ZLIB_CFLAGS)
tests_check_mmio_array_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_mmio_array_LDADD = client/libspmvmmio.la $(CHECK_LIBS) $(ZLIB_LIBS) -lm

# The test data, and the script that wrote matrices.tsv from scipy.
EXTRA_DIST += tests/data/mmio tests/data/matrices.tsv tests/data/mkfigures.py
