# kernels/formats.mk: CSR -> layout conversions and CPU references, and their tests.
kernels_libspmvcore_la_SOURCES += \
	kernels/spmv_layout.c kernels/spmv_layout.h \
	kernels/csr.c kernels/csr_adaptive.c kernels/csr_stream.c kernels/ell.c kernels/ellr_t.c \
	kernels/coo.c kernels/hyb.c kernels/dia.c kernels/jad.c kernels/sell.c \
	kernels/csr_panel.c kernels/cusparse_layout.c

# The CPU references against the plain CSR loop (gallery, shared matrices),
# the layouts worked by hand, and csr-stream's cuts and the shells.
check_PROGRAMS += tests/check_formats tests/check_formats_layout \
	tests/check_formats_shell
TESTS += tests/check_formats tests/check_formats_layout tests/check_formats_shell
tests_check_formats_SOURCES = tests/check_formats.c tests/formats_common.h
tests_check_formats_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_formats_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_formats_LDADD = client/libspmvmmio.la kernels/libspmvcore.la \
	$(ZLIB_LIBS) $(XXHASH_LIBS) $(CHECK_LIBS) -lm
tests_check_formats_layout_SOURCES = tests/check_formats_layout.c
tests_check_formats_layout_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_formats_layout_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_formats_layout_LDADD = client/libspmvmmio.la kernels/libspmvcore.la \
	$(ZLIB_LIBS) $(XXHASH_LIBS) $(CHECK_LIBS) -lm
tests_check_formats_shell_SOURCES = tests/check_formats_shell.c tests/formats_common.h
tests_check_formats_shell_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_formats_shell_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_formats_shell_LDADD = client/libspmvmmio.la kernels/libspmvcore.la \
	$(ZLIB_LIBS) $(XXHASH_LIBS) $(CHECK_LIBS) -lm
