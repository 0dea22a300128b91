# client/client.mk: the wire code, libspmvclient and spmvctl.
include_HEADERS += client/spmv.h

# The frame code, written once and linked by the daemon and the client.
noinst_LTLIBRARIES += client/libspmvwire.la
client_libspmvwire_la_SOURCES = client/spmv_wire.c client/spmv_wire.h
client_libspmvwire_la_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
client_libspmvwire_la_LIBADD = kernels/libspmvcore.la $(JANSSON_LIBS)

check_PROGRAMS += tests/check_wire
TESTS += tests/check_wire
tests_check_wire_SOURCES = tests/check_wire.c
tests_check_wire_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
tests_check_wire_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_wire_LDADD = client/libspmvwire.la $(JANSSON_LIBS) $(CHECK_LIBS)
