# client/client.mk: the wire code, libspmvclient and spmvctl.
include_HEADERS += client/spmv.h kernels/spmv_types.h

# The frame code, written once and linked by the daemon and the client.
noinst_LTLIBRARIES += client/libspmvwire.la
client_libspmvwire_la_SOURCES = client/spmv_wire.c client/spmv_wire.h
client_libspmvwire_la_CPPFLAGS = $(CLIENT_CPPFLAGS) $(JANSSON_CFLAGS)
client_libspmvwire_la_LIBADD = kernels/libspmvcore.la $(JANSSON_LIBS)

check_PROGRAMS += tests/check_wire
TESTS += tests/check_wire
tests_check_wire_SOURCES = tests/check_wire.c
tests_check_wire_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS)
tests_check_wire_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_wire_LDADD = client/libspmvwire.la $(JANSSON_LIBS) $(CHECK_LIBS)

# libspmvclient.  Its own files also form a convenience library that
# spmvctl links statically.  The shared library is built from sources (the
# wire code, the Matrix Market reader and the part of the core they use)
# rather than from convenience libraries, because each of those embeds the
# whole core and libtool would put its objects in more than once.  Of the
# ^spmv_ names it exports exactly the API of spmv.h (SPMV_CLIENT_API), so
# the core's internals are not part of its ABI; tests/check_exports.sh
# checks both.
SPMV_CLIENT_API = '^spmv_(connect|connect_opts|disconnect|client_errmsg|client_path|load_csr|load_mtx|load_options_init|matrix_free|matrix_client|matrix_decision_json|matrix_blocks|multiply|multiply_batch|multiply_inplace|matrix_vectors|info|info_json|tune|bench_json|bench_configs_json|status_json|list_json|forget|import_json|export_json|calibrate|calibrate_points|strerror|err_name|err_from_name|dtype_name|dtype_size|dtype_parse|multiply_vec|vector_(new|new_like|free|length|dtype|client|upload|download|fill|copy|scale|axpby|mul|dot|nrm2)|scalar_(const|ratio)|oplist_(new|free|clear|length|run)|op_(spmv|copy|fill|scale|axpby|mul|dot|nrm2|upload|download)|solve|solve_vec|solve_options_init|solve_cancel|shutdown)$$'

noinst_LTLIBRARIES += client/libspmvclientimpl.la
client_libspmvclientimpl_la_SOURCES = client/spmv_client.c \
	client/spmv_autostart.c \
	client/spmv_matrix.c client/spmv_load_memfd.c client/spmv_inplace.c \
	client/spmv_admin.c client/spmv_cancel.c \
	client/spmv_vector.c client/spmv_solve.c \
	client/spmv_oplist.c client/spmv_client_int.h
client_libspmvclientimpl_la_CPPFLAGS = $(CLIENT_CPPFLAGS) $(JANSSON_CFLAGS)
client_libspmvclientimpl_la_LIBADD = $(JANSSON_LIBS)

lib_LTLIBRARIES += client/libspmvclient.la
client_libspmvclient_la_SOURCES = $(client_libspmvclientimpl_la_SOURCES) \
	$(client_libspmvwire_la_SOURCES) $(client_libspmvmmio_la_SOURCES) \
	kernels/spmv_error.c kernels/spmv_csr.c kernels/spmv_par.c
client_libspmvclient_la_CPPFLAGS = $(CLIENT_CPPFLAGS) $(JANSSON_CFLAGS) $(ZLIB_CFLAGS)
client_libspmvclient_la_LIBADD = $(JANSSON_LIBS) $(ZLIB_LIBS) -lm
client_libspmvclient_la_LDFLAGS = -version-info $(SPMV_LT_VERSION) \
	-export-symbols-regex $(SPMV_CLIENT_API) -no-undefined $(SPMV_ZDEFS)
pkgconfig_DATA += client/libspmvclient.pc

# check_client_memfd: the memfd a load writes, from one thread or several.
check_PROGRAMS += tests/check_client_memfd
TESTS += tests/check_client_memfd
tests_check_client_memfd_SOURCES = tests/check_client_memfd.c
tests_check_client_memfd_CPPFLAGS = $(CLIENT_CPPFLAGS) $(JANSSON_CFLAGS)
tests_check_client_memfd_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_client_memfd_LDADD = client/libspmvclientimpl.la client/libspmvwire.la \
	kernels/libspmvcore.la $(JANSSON_LIBS) $(CHECK_LIBS)

# The client library's tests run against an in-process mock server; the
# library itself is linked as installed (the shared library), the mock's
# helpers from the convenience libraries.
# check_client: connecting, requests and errors against the mock;
# check_client_threads: many threads against the mock and a real daemon.
check_PROGRAMS += tests/check_client tests/check_client_threads
TESTS += tests/check_client tests/check_client_threads
tests_check_client_SOURCES = tests/check_client.c tests/client_mock.h
tests_check_client_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) \
	-I$(top_srcdir)/tests/integration
tests_check_client_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_client_LDADD = client/libspmvclient.la \
	tests/integration/libitest.la client/libspmvwire.la \
	client/libspmvmmio.la kernels/libspmvcore.la $(JANSSON_LIBS) \
	$(CHECK_LIBS) -lm
tests_check_client_threads_SOURCES = tests/check_client_threads.c \
	tests/client_mock.h
tests_check_client_threads_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) \
	-I$(top_srcdir)/tests/integration
tests_check_client_threads_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_client_threads_LDADD = client/libspmvclient.la \
	tests/integration/libitest.la client/libspmvwire.la \
	client/libspmvmmio.la kernels/libspmvcore.la $(JANSSON_LIBS) \
	$(CHECK_LIBS) -lm
# Its last case starts a real daemon.
$(tests_check_client_threads_OBJECTS): daemon/spmvd daemon/spmvd-worker

TESTS += tests/check_exports.sh
EXTRA_DIST += tests/check_exports.sh

# spmvctl: linked statically with the client's own files, the reader, the
# core and the cache (read-only for list, show, export).
bin_PROGRAMS += client/spmvctl
client_spmvctl_SOURCES = client/spmvctl.c client/spmvctl.h \
	client/spmvctl_daemon.c client/spmvctl_cache.c client/spmvctl_profile.c \
	client/spmvctl_model.c client/spmvctl_solve.c
client_spmvctl_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
client_spmvctl_LDADD = client/libspmvclientimpl.la client/libspmvwire.la \
	daemon/libspmvtuning.la client/libspmvmmio.la kernels/libspmvcore.la \
	$(JANSSON_LIBS) $(SQLITE_LIBS) -lm

# spmvctl run as a program: usage, exit statuses, profile, --json output,
# and every command against a private spmvd.
check_PROGRAMS += tests/check_spmvctl
TESTS += tests/check_spmvctl
tests_check_spmvctl_SOURCES = tests/check_spmvctl.c tests/spmvctl_exec.h
tests_check_spmvctl_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) \
	$(SQLITE_CFLAGS) -I$(top_srcdir)/tests/integration
tests_check_spmvctl_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_spmvctl_LDADD = tests/integration/libitest.la \
	daemon/libspmvtuning.la client/libspmvmmio.la kernels/libspmvcore.la \
	$(JANSSON_LIBS) $(SQLITE_LIBS) $(CHECK_LIBS) -lm
$(tests_check_spmvctl_OBJECTS): client/spmvctl daemon/spmvd daemon/spmvd-worker
