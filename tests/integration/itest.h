/* itest.h: helpers of the integration tests: a private spmvd and raw clients. */
#ifndef ITEST_H
#define ITEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <check.h>
#include <jansson.h>

#include "spmv_csr.h"
#include "spmv_wire.h"

/* A daemon on a private socket and database in its own temporary directory. */
struct itest_daemon {
  pid_t pid;
  char dir[256];      /* the temporary directory */
  char sock[300];
  char db[300];
  char log[300];      /* the daemon's stderr */
  char conf[300];     /* a spmvd.conf written by itest_daemon_config() */
};

/* The daemon of the shared fixture (itest_setup / itest_teardown). */
extern struct itest_daemon itest_d;

/* Checked fixture: a fresh daemon in itest_d for each test, and its end. */
void itest_setup(void);
void itest_teardown(void);

/* Runs suite s (check's fork mode) and returns the exit status for main. */
int itest_run(Suite *s);

/* Makes the temporary directory and the paths (nothing is started). */
void itest_daemon_init(struct itest_daemon *d);

/* Writes text as d->conf (SPMV_ITEST_EXTRA_CONF's settings after it);
 * the next start passes --config d->conf. */
void itest_daemon_config(struct itest_daemon *d, const char *text);

/*
 * Starts spmvd --foreground on d's socket and database with the cpu
 * backend, the daemon dying with the test (PR_SET_PDEATHSIG).  extra (may
 * be NULL) is one more argument.  Waits until it answers hello; returns
 * 0, or the daemon's exit status (>0) when it exited during start-up.
 */
int itest_daemon_start(struct itest_daemon *d, const char *extra);

/* Runs spmvd as start does but expects it to exit within 5 s (e.g. a
 * refused start); returns its exit status, -1 when it kept running. */
int itest_daemon_run(struct itest_daemon *d, const char *extra);

/* Sends sig and waits for the exit; returns the exit status (128+n when
 * killed by signal n). */
int itest_daemon_stop(struct itest_daemon *d, int sig);

/* Stops the daemon if running and removes the temporary directory. */
void itest_daemon_fini(struct itest_daemon *d);

/* Waits up to ms milliseconds until a line of d's log holds text; returns
 * 1 when one does, 0 when none did. */
int itest_log_wait(const struct itest_daemon *d, const char *text, int ms);

/* Connects to path; returns the fd, or -1. */
int itest_connect(const char *path);

/* Writes a frame with an explicit header (for malformed frames). */
int itest_write_raw(int fd, const void *buf, size_t len);

/* Sends a frame; steals json (so that itest_send(fd, json_pack(...), ...)
 * leaks nothing).  Returns 0 or -1. */
int itest_send(int fd, json_t *json, const void *payload, uint64_t len);

/*
 * Reads frames until the reply (a frame with "ok"); events are counted in
 * *events (may be NULL).  Returns the reply (new reference) and its payload
 * (malloc'd, *plen bytes; payload may be NULL to drop it), or NULL when the
 * connection ended.
 */
json_t *itest_recv_reply(int fd, void **payload, uint64_t *plen, int *events);
/* Reads the frames already waiting on fd without blocking for more: the
 * reply if it is among them (a new reference), else NULL; events are
 * counted into *events (may be NULL) as itest_recv_reply() counts them.
 * It orders what a test observes without timing it. */
json_t *itest_recv_ready(int fd, int *events);

/* Sends a request and reads its reply (see itest_recv_reply). */
json_t *itest_call(int fd, json_t *req, const void *payload, uint64_t len,
                   void **reply_payload, uint64_t *reply_len);

/* A top-level integer of status on fd (asserting that status answered). */
int64_t itest_status_int(int fd, const char *key);
/* status's "matrices" on fd: every uid's resident matrices. */
int64_t itest_resident(int fd);

/* Sends req (stolen) and payload with descriptor pass (-1: none, else
 * borrowed) on the frame's first byte (SCM_RIGHTS), and reads frames
 * until the reply (a new reference), each checked against
 * schema/proto/<op>.json; asserts that it all went. */
json_t *itest_call_fd(int s, json_t *req, int pass, const void *payload,
                      uint64_t plen);

/* How many descriptors of process pid are memfds named name. */
int itest_count_memfds(pid_t pid, const char *name);

/* The permissions ("r--s") of process pid's mapping of memfd name, or ""
 * when it maps none. */
void itest_memfd_perms(pid_t pid, const char *name, char perms[8]);

/* The device worker's pid, from status on the raw connection s. */
pid_t itest_worker_pid(int s);

/* Asserts that r (stolen) failed with code and a message containing want
 * (may be NULL), then that s still multiplies matrix handle (A) right. */
void itest_refused(int s, json_t *r, const char *code, const char *want,
                   int64_t handle, const struct spmv_csr *A);

/* After the worker was killed: multiplies matrix handle (A) on s until the
 * new worker serves it (EWORKER meanwhile), asserting the product right. */
void itest_multiply_after_restart(int s, int64_t handle,
                                  const struct spmv_csr *A);

/* --- the worker's life (itest_fault.c) --- */

/* Restarts d (stopping it first if it runs) with the environment variable
 * SPMVD_FAULT set to fault for its worker (NULL: unset; read by a
 * fault-injection build only) and conf as its spmvd.conf (NULL: none). */
void itest_daemon_restart(struct itest_daemon *d, const char *fault,
                          const char *conf);

/* The first worker of the status on s (a new reference). */
json_t *itest_worker_status(int s);
/* An integer field of it, 0 when absent. */
int64_t itest_worker_int(int s, const char *key);
/* Waits up to max_s seconds until the worker is ready with at least
 * restarts deaths behind it; returns the seconds waited, or -1. */
double itest_worker_wait_ready(int s, int64_t restarts, double max_s);

/* Sends the product y = A x (f64, x all ones) of matrix handle as request
 * id on s without waiting: the reply is read later (itest_recv_reply). */
void itest_send_multiply(int s, int64_t id, int64_t handle,
                         const struct spmv_csr *A);

/* The size of A's host layout (spmv_wire_csr_layout). */
size_t itest_csr_layout_size(const struct spmv_csr *A);

/* A memfd named name of size bytes holding A in the host layout (zeros
 * where it does not fit), sealed with seals (F_SEAL_*), for a load with
 * "memfd": true; returns the descriptor, the caller's to close. */
int itest_csr_memfd(const struct spmv_csr *A, const char *name, size_t size,
                    int seals);

/* Connects and says hello; returns the fd (asserts on failure). */
int itest_open(const struct itest_daemon *d);

/* The error code name of a reply ("ECSR"), or "" when ok. */
const char *itest_error_code(const json_t *reply);

/*
 * Builds the payload of a load of A (i32 or i64 row pointers, f32 or f64
 * values) into a malloc'd buffer; returns it and its length in *len.
 */
void *itest_csr_payload(const struct spmv_csr *A, int index64, int f32,
                        uint64_t *len);

/* The handle of a load's reply r (borrowed), asserting that it succeeded. */
int64_t itest_handle(json_t *r);

/* Loads A; returns the reply (new reference). */
json_t *itest_load(int fd, int64_t id, const struct spmv_csr *A, int f32,
                   const char *strategy);
/* Loads A with strategy (NULL: the daemon's) over split blocks (< 2:
 * none); returns the reply (new reference, NULL when none came). */
json_t *itest_load_as(int fd, int64_t id, const struct spmv_csr *A, int f32,
                      const char *strategy, int split);
/* The same, auto, with its rows split in n blocks over the workers. */
json_t *itest_load_split(int fd, int64_t id, const struct spmv_csr *A, int f32,
                         int n);

/*
 * Multiplies: y = A*x with x random (seed), through the daemon, and checks
 * against spmv_csr_ref with the scaled residual of the style guide.
 * Returns the scaled residual divided by its bound (<= 1 passes), or a
 * negative value when the daemon answered with an error (-1) or not at all
 * (-2).  code (may be NULL) receives the error name.
 */
double itest_multiply_check(int fd, int64_t handle, const struct spmv_csr *A,
                            int f32, unsigned seed, char code[32]);

/* Asserts that itest_multiply_check() got an answer and it was right: a
 * daemon error (a negative result) fails too. */
void itest_multiply_ok(int fd, int64_t handle, const struct spmv_csr *A,
                       int f32, unsigned seed);
/* Seconds on the monotonic clock, for the tests that time the daemon. */
double itest_now_s(void);

/* The path of a matrix of the test data (tests/testdata.h), asserted to
 * exist. */
void itest_matrix_path(const char *name, char *path, size_t n);
/* Reads a matrix of the test data by file name. */
struct spmv_csr *itest_matrix(const char *name);

/* --- itest_split.c: the split tests' daemon --- */

/* Whether the daemon runs cuda workers (SPMV_ITEST_BACKEND=cuda, set by
 * check_gpu_split.sh). */
int itest_split_on_gpus(void);
/* spmvd's option for its workers: --cpu-workers=N, or on GPUs
 * --devices= SPMV_ITEST_DEVICES (all by default). */
const char *itest_split_workers_arg(int cpu_workers);
/* Waits up to 10 s (60 on GPUs) for every worker to be ready, as a split
 * needs them started; returns how many there are (cpu_workers, or as many
 * as status lists on GPUs). */
int itest_split_wait(const struct itest_daemon *d, int cpu_workers);

/* Lists the .mtx / .mtx.gz files of the matrix folder (sorted, NULL-ended;
 * free with itest_names_free). */
char **itest_matrix_names(void);
void itest_names_free(char **names);

/* A small random square matrix with the given structure seed and value seed. */
struct spmv_csr *itest_random_csr(int64_t n, int per_row, unsigned sseed,
                                  unsigned vseed);

/*
 * Checks msg (borrowed), a frame the daemon sent in answer to op, against
 * schema/proto/<op>.json: its reply, common.json's error_reply or
 * progress_event.  Aborts the test naming the field that is wrong.  Every
 * reply read by itest_recv_reply() is checked this way.
 */
void itest_schema_check(const char *op, const json_t *msg);
/* Asserts that the schema's formats (common.json's config.format) are
 * spmv_format_name()'s, in order: every one a reply may name. */
void itest_schema_formats_check(void);

/*
 * Schema coverage: itest_run() calls itest_ops_begin(), which empties
 * $SPMV_TOP_BUILDDIR/tests/integration/ops/<program>.ops; itest_send()
 * notes "sent <op>" and itest_schema_check() notes "reply", "error" or
 * "event" <op> for each frame it validated.  check_schema_coverage.sh fails
 * when a schema/proto/<op>.json never had a reply validated.
 */

/* Empties this program's record of ops (nothing without SPMV_TOP_BUILDDIR). */
void itest_ops_begin(void);

/* Records "<kind> <op>" once per process (both borrowed; odd names dropped). */
void itest_ops_note(const char *kind, const char *op);

#endif /* ITEST_H */
