# client/mmio.mk: the Matrix Market reader and its tests.
noinst_LTLIBRARIES += client/libspmvmmio.la
client_libspmvmmio_la_SOURCES = \
	client/spmv_mmio.c client/spmv_mmio.h client/spmv_mmio_scan.h \
	client/spmv_mmio_build.c client/spmv_mmio_build.h \
	client/spmv_mmio_file.c
client_libspmvmmio_la_CPPFLAGS = $(AM_CPPFLAGS) $(ZLIB_CFLAGS)
client_libspmvmmio_la_LIBADD = kernels/libspmvcore.la $(ZLIB_LIBS)
