# tests/local.mk: integration tests that span modules.

# A real spmvd (cpu backend) on a private socket and database, driven by
# raw frames (and by libspmvclient and spmvctl where they are used).
check_LTLIBRARIES = tests/integration/libitest.la
tests_integration_libitest_la_SOURCES = tests/integration/itest.c tests/integration/itest.h \
	tests/integration/itest_schema.c tests/integration/itest_ops.c \
	tests/integration/itest_fd.c tests/integration/itest_fault.c \
	tests/integration/itest_split.c
tests_integration_libitest_la_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS)
tests_integration_libitest_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_libitest_la_LIBADD = client/libspmvmmio.la client/libspmvwire.la \
	kernels/libspmvcore.la $(JANSSON_LIBS) $(CHECK_LIBS) -lm
ITEST_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) -I$(top_srcdir)/tests/integration
ITEST_LDADD = tests/integration/libitest.la $(JANSSON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/integration/check_service
TESTS += tests/integration/check_service
tests_integration_check_service_SOURCES = tests/integration/check_service.c
tests_integration_check_service_CPPFLAGS = $(ITEST_CPPFLAGS) $(SQLITE_CFLAGS)
tests_integration_check_service_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_service_LDADD = $(ITEST_LDADD) $(SQLITE_LIBS)
# The integration tests need the daemon and its worker built.
$(tests_integration_check_service_OBJECTS): daemon/spmvd daemon/spmvd-worker

check_PROGRAMS += tests/integration/check_robust
TESTS += tests/integration/check_robust
tests_integration_check_robust_SOURCES = tests/integration/check_robust.c
tests_integration_check_robust_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_robust_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_robust_LDADD = $(ITEST_LDADD)
$(tests_integration_check_robust_OBJECTS): daemon/spmvd daemon/spmvd-worker

# Cache work on its own thread: a locked database stalls nobody else, and
# a stop stores the writes still queued.
check_PROGRAMS += tests/integration/check_slowcache
TESTS += tests/integration/check_slowcache
tests_integration_check_slowcache_SOURCES = tests/integration/check_slowcache.c
tests_integration_check_slowcache_CPPFLAGS = $(ITEST_CPPFLAGS) $(SQLITE_CFLAGS)
tests_integration_check_slowcache_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_slowcache_LDADD = $(ITEST_LDADD) $(SQLITE_LIBS)
$(tests_integration_check_slowcache_OBJECTS): daemon/spmvd daemon/spmvd-worker

check_PROGRAMS += tests/integration/check_cachefaults
TESTS += tests/integration/check_cachefaults
tests_integration_check_cachefaults_SOURCES = tests/integration/check_cachefaults.c
tests_integration_check_cachefaults_CPPFLAGS = $(ITEST_CPPFLAGS) $(SQLITE_CFLAGS)
tests_integration_check_cachefaults_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_cachefaults_LDADD = $(ITEST_LDADD) $(SQLITE_LIBS)
$(tests_integration_check_cachefaults_OBJECTS): daemon/spmvd daemon/spmvd-worker

# Unit tests of the daemon's own modules.
DAEMON_TEST_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS)
DAEMON_TEST_LDADD = daemon/libspmvdbase.la $(JANSSON_LIBS) $(CHECK_LIBS)
check_PROGRAMS += tests/check_daemon_config tests/check_registry tests/check_ipc
TESTS += tests/check_daemon_config tests/check_registry tests/check_ipc
tests_check_daemon_config_SOURCES = tests/check_daemon_config.c
tests_check_daemon_config_CPPFLAGS = $(DAEMON_TEST_CPPFLAGS)
tests_check_daemon_config_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_daemon_config_LDADD = $(DAEMON_TEST_LDADD)
tests_check_registry_SOURCES = tests/check_registry.c
tests_check_registry_CPPFLAGS = $(DAEMON_TEST_CPPFLAGS)
tests_check_registry_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_registry_LDADD = $(DAEMON_TEST_LDADD)
tests_check_ipc_SOURCES = tests/check_ipc.c
tests_check_ipc_CPPFLAGS = $(DAEMON_TEST_CPPFLAGS)
tests_check_ipc_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_ipc_LDADD = $(DAEMON_TEST_LDADD)

# spmvd --help against spmvd(8), spmvd.conf(5) against the parser.
TESTS += tests/check_spmvd_man.sh
EXTRA_DIST += tests/check_spmvd_man.sh

# libspmvclient and spmvctl against a real spmvd.
check_PROGRAMS += tests/integration/check_tools
TESTS += tests/integration/check_tools
tests_integration_check_tools_SOURCES = tests/integration/check_tools.c
tests_integration_check_tools_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_tools_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_tools_LDADD = client/libspmvclient.la $(ITEST_LDADD) -lm
$(tests_integration_check_tools_OBJECTS): daemon/spmvd daemon/spmvd-worker client/spmvctl

# In-place products over a client's memfd (attach-vectors).
# What refused requests leave: failed loads, bad fields, library refusals.
check_PROGRAMS += tests/integration/check_refusals
TESTS += tests/integration/check_refusals
tests_integration_check_refusals_SOURCES = tests/integration/check_refusals.c
tests_integration_check_refusals_CPPFLAGS = $(ITEST_CPPFLAGS) $(SQLITE_CFLAGS)
tests_integration_check_refusals_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_refusals_LDADD = client/libspmvclient.la $(ITEST_LDADD) \
	$(SQLITE_LIBS) -lm
$(tests_integration_check_refusals_OBJECTS): daemon/spmvd daemon/spmvd-worker

# The worker's faults on cue (a fault-injection build; skipped, 77, in
# any other): crashes quarantine, hangs meet the device timeout.
check_PROGRAMS += tests/integration/check_faults
TESTS += tests/integration/check_faults
tests_integration_check_faults_SOURCES = tests/integration/check_faults.c
tests_integration_check_faults_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_faults_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_faults_LDADD = $(ITEST_LDADD)
$(tests_integration_check_faults_OBJECTS): daemon/spmvd daemon/spmvd-worker

check_PROGRAMS += tests/integration/check_inplace
TESTS += tests/integration/check_inplace
tests_integration_check_inplace_SOURCES = tests/integration/check_inplace.c
tests_integration_check_inplace_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_inplace_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_inplace_LDADD = client/libspmvclient.la $(ITEST_LDADD) -lm
$(tests_integration_check_inplace_OBJECTS): daemon/spmvd daemon/spmvd-worker

# Several workers (--cpu-workers): placement, a matrix used across
# workers, one worker's death.
check_PROGRAMS += tests/integration/check_workers
TESTS += tests/integration/check_workers
tests_integration_check_workers_SOURCES = tests/integration/check_workers.c
tests_integration_check_workers_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_workers_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_workers_LDADD = $(ITEST_LDADD) -lm
$(tests_integration_check_workers_OBJECTS): daemon/spmvd daemon/spmvd-worker

# Split matrices through libspmvclient (spmv_load_options.split).
check_PROGRAMS += tests/integration/check_split_client
TESTS += tests/integration/check_split_client
tests_integration_check_split_client_SOURCES = tests/integration/check_split_client.c
tests_integration_check_split_client_CPPFLAGS = $(ITEST_CPPFLAGS) -I$(top_srcdir)/tests
tests_integration_check_split_client_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_split_client_LDADD = client/libspmvclient.la $(ITEST_LDADD) -lm
$(tests_integration_check_split_client_OBJECTS): daemon/spmvd daemon/spmvd-worker
check_PROGRAMS += tests/integration/check_split_vectors
TESTS += tests/integration/check_split_vectors
tests_integration_check_split_vectors_SOURCES = tests/integration/check_split_vectors.c
tests_integration_check_split_vectors_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_split_vectors_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_split_vectors_LDADD = client/libspmvclient.la $(ITEST_LDADD) -lm
$(tests_integration_check_split_vectors_OBJECTS): daemon/spmvd daemon/spmvd-worker

# Loads whose matrix lies in a client's sealed memfd ("memfd": true).
check_PROGRAMS += tests/integration/check_load_memfd
TESTS += tests/integration/check_load_memfd
tests_integration_check_load_memfd_SOURCES = tests/integration/check_load_memfd.c
tests_integration_check_load_memfd_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_load_memfd_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_load_memfd_LDADD = client/libspmvclient.la $(ITEST_LDADD) -lm
$(tests_integration_check_load_memfd_OBJECTS): daemon/spmvd daemon/spmvd-worker

check_PROGRAMS += tests/integration/check_vectors_proto
TESTS += tests/integration/check_vectors_proto
tests_integration_check_vectors_proto_SOURCES = tests/integration/check_vectors_proto.c
tests_integration_check_vectors_proto_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_vectors_proto_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_vectors_proto_LDADD = $(ITEST_LDADD) -lm
$(tests_integration_check_vectors_proto_OBJECTS): daemon/spmvd daemon/spmvd-worker
check_PROGRAMS += tests/integration/check_solve
TESTS += tests/integration/check_solve
tests_integration_check_solve_SOURCES = tests/integration/check_solve.c
tests_integration_check_solve_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_solve_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_solve_LDADD = $(ITEST_LDADD) -lm
$(tests_integration_check_solve_OBJECTS): daemon/spmvd daemon/spmvd-worker

# Device vectors and operation lists (vector-create, vector-free, ops).
check_PROGRAMS += tests/integration/check_vectors
TESTS += tests/integration/check_vectors
tests_integration_check_vectors_SOURCES = tests/integration/check_vectors.c \
	tests/integration/check_vectors.h
tests_integration_check_vectors_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_vectors_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_vectors_LDADD = client/libspmvclient.la $(ITEST_LDADD) -lm
$(tests_integration_check_vectors_OBJECTS): daemon/spmvd daemon/spmvd-worker

# Server-side solves through libspmvclient and spmvctl solve.
check_PROGRAMS += tests/integration/check_solve_client
TESTS += tests/integration/check_solve_client
tests_integration_check_solve_client_SOURCES = tests/integration/check_solve_client.c
tests_integration_check_solve_client_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_solve_client_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_solve_client_LDADD = client/libspmvclient.la $(ITEST_LDADD) -lm
$(tests_integration_check_solve_client_OBJECTS): daemon/spmvd daemon/spmvd-worker client/spmvctl

# A user spmvd started on demand by libspmvclient and spmvctl.
check_PROGRAMS += tests/integration/check_autostart
TESTS += tests/integration/check_autostart
tests_integration_check_autostart_SOURCES = tests/integration/check_autostart.c \
	tests/spmvctl_exec.h tests/testdata.h
tests_integration_check_autostart_CPPFLAGS = $(ITEST_CPPFLAGS)
tests_integration_check_autostart_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_autostart_LDADD = client/libspmvclient.la $(ITEST_LDADD)
$(tests_integration_check_autostart_OBJECTS): daemon/spmvd daemon/spmvd-worker client/spmvctl

# Schema coverage (STYLE 14): every integration test records the ops whose
# replies it validated (itest_ops.c, under tests/integration/ops/); this
# test, last, fails naming any schema/proto/<op>.json never exercised.  Its
# log waits for the other integration tests' logs so `make -j check` runs it
# after them; a new integration test belongs in ITEST_LOGS.
TESTS += tests/integration/check_schema_coverage.sh
EXTRA_DIST += tests/integration/check_schema_coverage.sh \
	tests/integration/ops-unexercised.txt
CLEANFILES += tests/integration/ops/*.ops tests/serial-tests.lock
ITEST_LOGS = tests/integration/check_service.log tests/integration/check_robust.log \
	tests/integration/check_slowcache.log tests/integration/check_tools.log \
	tests/integration/check_split_client.log \
	tests/integration/check_split_vectors.log \
	tests/integration/check_cachefaults.log \
	tests/integration/check_inplace.log tests/integration/check_vectors_proto.log \
	tests/integration/check_workers.log \
	tests/integration/check_solve.log \
	tests/integration/check_vectors.log tests/integration/check_load_memfd.log \
	tests/integration/check_solve_client.log \
	tests/integration/check_refusals.log tests/integration/check_autostart.log \
	tests/integration/check_faults.log
if HAVE_CUDA
ITEST_LOGS += tests/integration/check_gpu_service.log \
	tests/integration/check_gpu_vectors.log tests/integration/check_gpu_faults.log
endif
# (Through a variable: automake would take a literal target for an override
# of its own rule for this log.)
SCHEMA_COVERAGE_LOG = tests/integration/check_schema_coverage.log
$(SCHEMA_COVERAGE_LOG): $(ITEST_LOGS)

# make installcheck (and so make distcheck): the installed tree on its own.
EXTRA_DIST += tests/installcheck.sh
installcheck-local: installcheck-python
	$(SHELL) $(top_srcdir)/tests/installcheck.sh "$(DESTDIR)$(sbindir)" \
		"$(DESTDIR)$(bindir)" "$(DESTDIR)$(libdir)" "$(DESTDIR)$(mandir)" \
		"$(abs_top_srcdir)/tests/data/matrices/west0479.mtx.gz"
