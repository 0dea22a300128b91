# tests/local.mk: integration tests that span modules.

# A real spmvd (cpu backend) on a private socket and database, driven by
# raw frames (and by libspmvclient and spmvctl where they are used).
check_LTLIBRARIES = tests/integration/libitest.la
tests_integration_libitest_la_SOURCES = tests/integration/itest.c tests/integration/itest.h
tests_integration_libitest_la_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
tests_integration_libitest_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_libitest_la_LIBADD = client/libspmvmmio.la client/libspmvwire.la \
	kernels/libspmvcore.la $(JANSSON_LIBS) $(CHECK_LIBS) -lm
ITEST_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS) -I$(top_srcdir)/tests/integration
ITEST_LDADD = tests/integration/libitest.la $(JANSSON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/integration/check_service
TESTS += tests/integration/check_service
tests_integration_check_service_SOURCES = tests/integration/check_service.c
tests_integration_check_service_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_service_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_service_LDADD = $(ITEST_LDADD)
# The integration tests need the daemon and its worker built.
$(tests_integration_check_service_OBJECTS): daemon/spmvd daemon/spmvd-worker

check_PROGRAMS += tests/integration/check_robust
TESTS += tests/integration/check_robust
tests_integration_check_robust_SOURCES = tests/integration/check_robust.c
tests_integration_check_robust_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_robust_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_robust_LDADD = $(ITEST_LDADD)
$(tests_integration_check_robust_OBJECTS): daemon/spmvd daemon/spmvd-worker
