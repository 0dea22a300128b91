# daemon/daemon.mk: spmvd front end, workers, config, units, and their tests.

# Pieces shared by spmvd, spmvd-worker and the tests.
noinst_LTLIBRARIES += daemon/libspmvdbase.la
daemon_libspmvdbase_la_SOURCES = \
	daemon/spmvd_log.c daemon/spmvd_log.h \
	daemon/spmvd_config.c daemon/spmvd_config.h \
	daemon/spmvd_shm.c daemon/spmvd_shm.h \
	daemon/spmvd_ipc.c daemon/spmvd_ipc.h \
	daemon/spmvd_registry.c daemon/spmvd_registry.h \
	daemon/spmvd_backend.h
daemon_libspmvdbase_la_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
daemon_libspmvdbase_la_LIBADD = daemon/libspmvdtuner.la client/libspmvwire.la \
	kernels/libspmvcore.la $(JANSSON_LIBS)

# The front end.
sbin_PROGRAMS += daemon/spmvd
daemon_spmvd_SOURCES = \
	daemon/spmvd_main.c \
	daemon/spmvd_server.c daemon/spmvd_server.h \
	daemon/spmvd_conn.c daemon/spmvd_conn.h daemon/spmvd_conn_read.c \
	daemon/spmvd_conn_impl.h \
	daemon/spmvd_ops.c daemon/spmvd_ops.h daemon/spmvd_ops_impl.h \
	daemon/spmvd_fields.c daemon/spmvd_fields.h \
	daemon/spmvd_ops_matrix.c daemon/spmvd_ops_tune.c daemon/spmvd_ops_admin.c \
	daemon/spmvd_ops_split.c daemon/spmvd_split_shm.h \
	daemon/spmvd_ops_calib.c \
	daemon/spmvd_ops_vec.c daemon/spmvd_ops_vec_life.c daemon/spmvd_ops_vec_split.c daemon/spmvd_ops_solve.c \
	daemon/spmvd_vectors.c daemon/spmvd_vectors.h \
	daemon/spmvd_spin.c daemon/spmvd_spin.h \
	daemon/spmvd_bio.c daemon/spmvd_bio.h \
	daemon/spmvd_cachejob.c daemon/spmvd_cachejob.h \
	daemon/spmvd_worker.c daemon/spmvd_worker.h \
	daemon/spmvd_watch.c daemon/spmvd_watch.h
daemon_spmvd_CPPFLAGS = $(DAEMON_CPPFLAGS) $(UV_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
daemon_spmvd_LDADD = daemon/libspmvdbase.la daemon/libspmvdtuner.la \
	client/libspmvwire.la kernels/libspmvcore.la \
	$(UV_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS) -lpthread

# The device worker: cpu always, cuda when configured with it.
libexec_PROGRAMS += daemon/spmvd-worker
daemon_spmvd_worker_SOURCES = daemon/spmvd_worker_main.c \
	daemon/spmvd_worker_matrix.c daemon/spmvd_worker_long.c \
	daemon/spmvd_worker_split.c daemon/spmvd_worker_split_solve.c daemon/spmvd_worker_split_list.c \
	daemon/spmvd_worker_vec.c daemon/spmvd_worker_check.c \
	daemon/spmvd_solve.c daemon/spmvd_solve.h daemon/spmvd_solve_krylov.c \
	daemon/spmvd_arnoldi.c daemon/spmvd_arnoldi.h \
	daemon/spmvd_solve_pagerank.c \
	daemon/spmvd_worker_impl.h \
	daemon/spmvd_calib_bound.c daemon/spmvd_calib_bound.h \
	daemon/spmvd_backend_cpu.c \
	daemon/spmvd_backend_cpu_vec.c daemon/spmvd_backend_cpu_vec.h
daemon_spmvd_worker_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS)
daemon_spmvd_worker_LDADD = daemon/libspmvdbase.la daemon/libspmvdtuner.la \
	kernels/libspmvcore.la $(JANSSON_LIBS) -lpthread -lm
# Faults on cue for the tests (SPMVD_FAULT): only in a fault-injection build.
if FAULT_INJECTION
daemon_spmvd_worker_SOURCES += daemon/spmvd_fault.c daemon/spmvd_fault.h
endif
if HAVE_CUDA
daemon_spmvd_worker_SOURCES += daemon/spmvd_backend_cuda.c \
	daemon/spmvd_backend_cuda_vec.c daemon/spmvd_backend_cuda_impl.h \
	daemon/spmvd_cuda_pipe.c daemon/spmvd_cuda_pipe.h
daemon_spmvd_worker_CPPFLAGS += $(CUDA_CPPFLAGS)
daemon_spmvd_worker_LDADD += kernels/libspmvkernels_cuda.a $(CUDA_LIBS)
endif

# systemd units, installed under $(prefix) so that distcheck stays inside it.
systemdsystemunitdir = $(prefix)/lib/systemd/system
systemduserunitdir = $(prefix)/lib/systemd/user
systemdsystemunit_DATA = daemon/spmvd.service daemon/spmvd.socket
systemduserunit_DATA = daemon/user/spmvd.service
# The group spmv that may connect to the system socket.
sysusersdir = $(prefix)/lib/sysusers.d
dist_sysusers_DATA = daemon/sysusers/spmvd.conf
EXTRA_DIST += daemon/spmvd.service.in daemon/spmvd.socket.in daemon/spmvd-user.service.in
CLEANFILES += daemon/spmvd.service daemon/spmvd.socket daemon/user/spmvd.service
daemon/spmvd.service: $(top_srcdir)/daemon/spmvd.service.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(SPMV_SUBST) $(top_srcdir)/daemon/spmvd.service.in > $@
daemon/spmvd.socket: $(top_srcdir)/daemon/spmvd.socket.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(SPMV_SUBST) $(top_srcdir)/daemon/spmvd.socket.in > $@
daemon/user/spmvd.service: $(top_srcdir)/daemon/spmvd-user.service.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(SPMV_SUBST) $(top_srcdir)/daemon/spmvd-user.service.in > $@
