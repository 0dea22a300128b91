/* spmv.h: the public interface of libspmvclient, the client of spmvd. */
#ifndef SPMV_H
#define SPMV_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The client API.
 *
 * A client is one connection to spmvd; a matrix is one matrix loaded
 * through a client.  Both are opaque.  Every function returns 0 or a
 * negative SPMV_E* code; spmv_client_errmsg() then gives a message naming
 * the cause.
 *
 * Threads: a client may be shared by any number of threads.  Its requests
 * are serialised by a mutex (one request on the wire at a time), so
 * threads sharing one client take turns; threads that want products in
 * parallel each spmv_connect() their own client.  A matrix may be used by
 * several threads at once (each call is one request), but spmv_matrix_free()
 * must not race with other calls on that matrix, and spmv_disconnect() with
 * none on that client.  Progress callbacks run in the calling thread with
 * the client locked: they must not call back into the same client.
 *
 * Byte order: vectors and arrays are in the host's order; the library
 * converts to and from the protocol's little-endian order when they differ.
 */

/* One connection to spmvd. */
struct spmv_client;
/* A matrix resident in spmvd, loaded through one client. */
struct spmv_matrix;

/*
 * Connects to spmvd and says hello.  path is the daemon's Unix socket; when
 * NULL: $SPMVD_SOCKET if set, else $XDG_RUNTIME_DIR/spmvd.sock if it exists,
 * else the system socket (/run/spmvd/spmvd.sock).  On success *out is a new
 * client owned by the caller, released with spmv_disconnect().  On failure
 * *out is NULL, the code is SPMV_ECONNECT (no daemon: "spmvd is not running
 * at PATH: start it with ..."), SPMV_EVERSION, SPMV_EPROTO, SPMV_ENOMEM or
 * SPMV_EINVAL, and spmv_client_errmsg(NULL) gives the message in this thread.
 * The same as spmv_connect_opts() with SPMV_CONNECT_AUTOSTART when the
 * environment has SPMV_AUTOSTART=1, else with no flags.
 */
int spmv_connect(const char *path, struct spmv_client **out);

/* spmv_connect_opts() flag: start a user instance of spmvd when none
 * answers. */
#define SPMV_CONNECT_AUTOSTART 1u

/*
 * As spmv_connect(), with flags (0 or SPMV_CONNECT_AUTOSTART; others are
 * SPMV_EINVAL).  With SPMV_CONNECT_AUTOSTART, when nobody listens at the
 * socket (no file, or a stale one) the library starts spmvd ($SPMVD_PROGRAM,
 * else the installed one) on that socket, or on the user socket
 * ($XDG_RUNTIME_DIR/spmvd.sock, else /tmp/spmvd-UID.sock) when it was the
 * system socket, with the user cache ($XDG_STATE_HOME/spmvd/cache.db), its
 * log in $XDG_STATE_HOME/spmvd/spmvd.log and --exit-idle
 * $SPMV_AUTOSTART_IDLE_S (default 600) seconds, waits up to 10 s for it to
 * answer, and connects.  Callers racing to start it end on one daemon.  A
 * failed start is SPMV_ECONNECT naming the program, the socket and the log.
 */
int spmv_connect_opts(const char *path, unsigned flags,
                      struct spmv_client **out);

/*
 * Closes the connection and frees c (NULL is a no-op).  Matrices still
 * loaded through c are freed too (the daemon frees a closed connection's
 * matrices): their handles become invalid.
 */
void spmv_disconnect(struct spmv_client *c);

/*
 * Returns the message of the last failed call on c made by this thread (or,
 * if this thread has none, by any thread), "" when none failed.  With c
 * NULL, the message of this thread's last failed spmv_connect().  The
 * string is borrowed: valid in this thread until its next call into the
 * library.
 */
const char *spmv_client_errmsg(const struct spmv_client *c);

/* Returns the socket path c is connected to (borrowed, lives as long as c). */
const char *spmv_client_path(const struct spmv_client *c);

/* A progress event while the daemon tunes or benchmarks (all borrowed,
 * valid during the callback only). */
struct spmv_progress {
  const char *stage;      /* "tuning", "bench", ... */
  int64_t done, total;    /* candidates timed so far, of total */
  const char *candidate;  /* the configuration just timed ("" if none) */
  double time_us;         /* its time per product, 0 if none */
  double residual;        /* a solve's residual norm now (0 otherwise) */
};

/* Called for each progress event; arg is the options' progress_arg. */
typedef void (*spmv_progress_fn)(const struct spmv_progress *p, void *arg);

/* Options of spmv_load_csr() and spmv_load_mtx(); all may be left 0. */
struct spmv_load_options {
  const char *strategy;       /* "auto", "model", "predict", "trial",
                                 "exhaustive", or NULL for the daemon's default */
  const char *name;           /* a label shown by list and info, or NULL */
  int verify;                 /* nonzero: check the tuned kernel against the
                                 reference product before replying */
  spmv_progress_fn progress;  /* NULL, or called for each progress event */
  void *progress_arg;         /* passed to progress */
  int split;                  /* 2 or more: the rows in that many blocks over
                                 the daemon's workers (spmvd --devices,
                                 --cpu-workers); 0 or 1: not split */
};

/* Sets every option to its default (the same as zeroing o). */
void spmv_load_options_init(struct spmv_load_options *o);

/*
 * Loads a CSR matrix into spmvd, which validates it and finds its
 * configuration in its cache or by tuning.  row_ptr: rows + 1 offsets from
 * 0 to nnz; col_idx: nnz column indices in [0, cols); values: nnz values of
 * dtype (float or double).  The arrays are borrowed (copied before return).
 * opt (borrowed) may be NULL.  On success *out is a new matrix owned by the
 * caller, released with spmv_matrix_free() or spmv_disconnect().  Errors:
 * SPMV_EINVAL (bad argument), SPMV_ECSR (invalid CSR, message naming the
 * position), SPMV_ELIMIT, SPMV_ETOOBIG, connection errors.
 */
int spmv_load_csr(struct spmv_client *c, enum spmv_dtype dtype, int64_t rows,
                  int64_t cols, int64_t nnz, const int64_t *row_ptr,
                  const int32_t *col_idx, const void *values,
                  const struct spmv_load_options *opt,
                  struct spmv_matrix **out);

/*
 * Reads a Matrix Market file (plain or gzip) in this process and loads it
 * as spmv_load_csr() does, with values converted to dtype.  When opt->name
 * is NULL the file's base name is the label.  Errors of reading are
 * SPMV_EIO / SPMV_EPARSE / SPMV_EUNSUPPORTED naming the file and line.
 */
int spmv_load_mtx(struct spmv_client *c, const char *path,
                  enum spmv_dtype dtype, const struct spmv_load_options *opt,
                  struct spmv_matrix **out);

/*
 * The number of row blocks m is split in over the daemon's workers (1
 * when it is not split), as its load's reply gave it.
 */
int spmv_matrix_blocks(const struct spmv_matrix *m);

/*
 * Frees m in spmvd and here (NULL is a no-op); returns NULL, so that
 * "m = spmv_matrix_free(m);".  A failure to reach the daemon is not
 * reported: a closed connection has freed its matrices already.
 */
struct spmv_matrix *spmv_matrix_free(struct spmv_matrix *m);

/* Returns the client m was loaded through (borrowed). */
struct spmv_client *spmv_matrix_client(const struct spmv_matrix *m);

/*
 * The daemon's decision for m as JSON: its reply to the load (or to the
 * last spmv_tune()) without "id" and "ok": fingerprint, source ("cache" or
 * "tuned"), config {format, bs, tpr, param, param2, text}, time_us, gflops,
 * gbps, strategy, tuning_cost_spmv, when tuned, reason, and steps: the
 * daemon's milliseconds of each step (PROTOCOL.md) and, after a load, the
 * client's own, client_write_ms (the matrix written into its memfd or
 * payload) and client_total_ms (the whole call).  No request is made.
 * *json is a new string owned by the caller, released with free().
 */
int spmv_matrix_decision_json(struct spmv_matrix *m, char **json);

/*
 * y = alpha*A*x + beta*y.  x: cols values, y: rows values, both of the
 * matrix's dtype, borrowed.  When beta == 0, y is only written (it may hold
 * NaN).  Returns 0 or an error code (SPMV_EWORKER: the device worker
 * restarted, retry).
 */
int spmv_multiply(struct spmv_matrix *m, double alpha, const void *x,
                  double beta, void *y);

/*
 * k products at once: y_i = alpha*A*x_i + beta*y_i for i < k.  x holds
 * x_1..x_k back to back (k*cols values), y holds y_1..y_k (k*rows values),
 * borrowed.  When beta == 0, y is only written.
 */
int spmv_multiply_batch(struct spmv_matrix *m, int k, double alpha,
                        const void *x, double beta, void *y);

/*
 * In-place products: creates a sealed shared-memory file (memfd) holding
 * k vectors x (cols values each) and k vectors y (rows values each) of the
 * matrix's dtype in host byte order, maps it here, passes it to spmvd once,
 * and sets *x to x_1..x_k and *y to y_1..y_k in that mapping.  The mapping
 * is owned by m: valid until spmv_matrix_free(m), spmv_disconnect() or the
 * next spmv_matrix_vectors(m, ...) (which replaces it); never free or unmap
 * it.  k in [1, 4096].  Errors: SPMV_EINVAL, SPMV_ENOMEM, SPMV_EIO,
 * SPMV_ELIMIT (too large, or vectors attached to too many matrices of the
 * connection), connection errors.
 */
int spmv_matrix_vectors(struct spmv_matrix *m, int k, void **x, void **y);

/*
 * y_i = alpha*A*x_i + beta*y_i for the k vectors of spmv_matrix_vectors(),
 * computed by spmvd straight in the shared mapping: no vector travels on
 * the socket.  When beta == 0, y is only written.  The caller must not
 * touch the mapping while the call runs; threads sharing m take turns like
 * other requests.  Errors: SPMV_EINVAL (no vectors attached), as
 * spmv_multiply() otherwise.
 */
int spmv_multiply_inplace(struct spmv_matrix *m, double alpha, double beta);

/*
 * Device vectors.
 *
 * A vector lives where the client's matrices live (on the GPU with the
 * cuda backend), so that products and vector operations on it move no
 * data between the processes.  It belongs to its client: freed by
 * spmv_vector_free() or spmv_disconnect(), usable only through that
 * client, and counted in the user's device bytes.  After a restart of the
 * device worker its contents are lost: a call that reads it before it is
 * written again fails with SPMV_EWORKER.
 */
struct spmv_vector;

/* A new vector of n values (0 <= n < 2^31) of dtype, zero-filled; *out is
 * owned by the caller.  Errors: SPMV_EINVAL, SPMV_ELIMIT, SPMV_ENOMEM (the
 * device is full), connection errors. */
int spmv_vector_new(struct spmv_client *c, enum spmv_dtype dtype, int64_t n,
                    struct spmv_vector **out);
/* A new vector like m's rows: its value type and rows, zero-filled.  Where
 * m is split over several workers (spmv_matrix_blocks() > 1), the vector
 * is split as its rows, each block's worker holding its rows, and lists
 * on it run over the blocks: every vector and matrix a list names is then
 * split alike (vectors made like one split matrix, or like others split
 * as it is), and its transfers go through the payload (no memfd).  Errors
 * as spmv_vector_new(), SPMV_EBUSY while m is loading. */
int spmv_vector_new_like(struct spmv_matrix *m, struct spmv_vector **out);
/* Frees v in spmvd and here (NULL is a no-op); returns NULL. */
struct spmv_vector *spmv_vector_free(struct spmv_vector *v);
/* v's length, value type and client (borrowed). */
int64_t spmv_vector_length(const struct spmv_vector *v);
enum spmv_dtype spmv_vector_dtype(const struct spmv_vector *v);
struct spmv_client *spmv_vector_client(const struct spmv_vector *v);

/*
 * v = src / dst = v: n values of v's dtype, borrowed.  When the n values
 * lie inside a mapping of spmv_matrix_vectors() of the same client, at an
 * offset aligned to the value size, they are copied straight from or into
 * that shared memory (no data on the socket); else they travel with the
 * request.
 */
int spmv_vector_upload(struct spmv_vector *v, const void *src);
int spmv_vector_download(struct spmv_vector *v, void *dst);
/* v = value. */
int spmv_vector_fill(struct spmv_vector *v, double value);

/* y = alpha*A*x + beta*y on device vectors: x of cols and y of rows values
 * of m's dtype, x and y distinct; y is not read when beta == 0. */
int spmv_multiply_vec(struct spmv_matrix *m, double alpha,
                      struct spmv_vector *x, double beta,
                      struct spmv_vector *y);

/* BLAS-1 on device vectors of one dtype and length, each one request:
 * y = x; x = alpha*x; y = alpha*x + beta*y; z = x .* y (element by element,
 * z may be x or y); *out = x . y; *out = ||x||_2.  Reductions accumulate
 * in double and are deterministic: the same inputs give the same bits on
 * every run. */
int spmv_vector_copy(struct spmv_vector *x, struct spmv_vector *y);
int spmv_vector_scale(double alpha, struct spmv_vector *x);
int spmv_vector_axpby(double alpha, struct spmv_vector *x, double beta,
                      struct spmv_vector *y);
int spmv_vector_mul(struct spmv_vector *x, struct spmv_vector *y,
                    struct spmv_vector *z);
int spmv_vector_dot(struct spmv_vector *x, struct spmv_vector *y,
                    double *out);
int spmv_vector_nrm2(struct spmv_vector *x, double *out);

/*
 * Lists of operations: the steps added to a list run in order in one
 * request, with one reply, when spmv_oplist_run() is called; a Krylov
 * iteration written by the client costs one round trip.  The scalars of
 * fill, scale and axpby may depend on results (dots, norms) of earlier
 * steps of the same list: struct spmv_scalar stands for
 * c * results[mul[0]] * ... / (results[div[0]] * ...), IEEE double.
 * A list belongs to its client; the vectors, matrices and host buffers it
 * names are borrowed until it is run (or cleared).  Adding a step only
 * records it: what is wrong with it (a foreign vector, a length) is
 * reported by spmv_oplist_run(), naming the step, and nothing runs.
 */
struct spmv_oplist;

#define SPMV_SCALAR_MAX_TERMS 4
#define SPMV_OPLIST_MAX_STEPS 256
#define SPMV_OPLIST_MAX_RESULTS 64
struct spmv_scalar {
  double c;
  int nmul, ndiv;
  int mul[SPMV_SCALAR_MAX_TERMS], div[SPMV_SCALAR_MAX_TERMS];
};
/* The constant c; c * results[num] / results[den] (num or den < 0: none). */
struct spmv_scalar spmv_scalar_const(double c);
struct spmv_scalar spmv_scalar_ratio(double c, int num, int den);

/* A new empty list on c; *out owned by the caller. */
int spmv_oplist_new(struct spmv_client *c, struct spmv_oplist **out);
/* Frees l (NULL is a no-op); returns NULL. */
struct spmv_oplist *spmv_oplist_free(struct spmv_oplist *l);
/* Removes every step, so that l can be filled again. */
void spmv_oplist_clear(struct spmv_oplist *l);
/* Steps in l. */
int spmv_oplist_length(const struct spmv_oplist *l);

/* Each adds one step and returns 0, or SPMV_EINVAL (a NULL argument, a
 * vector of another client) / SPMV_ELIMIT (SPMV_OPLIST_MAX_STEPS steps or
 * SPMV_OPLIST_MAX_RESULTS results) / SPMV_ENOMEM.  dot and nrm2 return the
 * index (>= 0) of their result in spmv_oplist_run()'s results instead. */
int spmv_op_spmv(struct spmv_oplist *l, struct spmv_matrix *m, double alpha,
                 struct spmv_vector *x, double beta, struct spmv_vector *y);
int spmv_op_copy(struct spmv_oplist *l, struct spmv_vector *x,
                 struct spmv_vector *y);
int spmv_op_fill(struct spmv_oplist *l, struct spmv_vector *x,
                 struct spmv_scalar value);
int spmv_op_scale(struct spmv_oplist *l, struct spmv_scalar alpha,
                  struct spmv_vector *x);
int spmv_op_axpby(struct spmv_oplist *l, struct spmv_scalar alpha,
                  struct spmv_vector *x, struct spmv_scalar beta,
                  struct spmv_vector *y);
int spmv_op_mul(struct spmv_oplist *l, struct spmv_vector *x,
                struct spmv_vector *y, struct spmv_vector *z);
int spmv_op_dot(struct spmv_oplist *l, struct spmv_vector *x,
                struct spmv_vector *y);
int spmv_op_nrm2(struct spmv_oplist *l, struct spmv_vector *x);
/* x = src, dst = x when the list runs (as spmv_vector_upload() and
 * spmv_vector_download(); src and dst borrowed until then). */
int spmv_op_upload(struct spmv_oplist *l, struct spmv_vector *x,
                   const void *src);
int spmv_op_download(struct spmv_oplist *l, struct spmv_vector *x,
                     void *dst);

/*
 * Runs l's steps in one request; results (may be NULL when nres is 0)
 * receives the first nres results of its dots and norms, in the order they
 * were added.  The list is kept: run it again, or clear it.  Errors name
 * the step ("ops[2] (axpby): x has 500 values, y 499"): SPMV_EINVAL,
 * SPMV_ENOENT, SPMV_EPROTO, SPMV_EWORKER, SPMV_EGPU, connection errors.
 */
int spmv_oplist_run(struct spmv_oplist *l, double *results, int nres);

/*
 * Solves: a whole iterative method in one request, run where the matrix
 * lives, on its tuned format (schema/PROTOCOL.md, solve).
 */
struct spmv_solve_options {
  const char *method;      /* "cg" (NULL), "pcg-jacobi", "bicgstab",
                              "gmres", "pagerank" */
  double rtol;             /* <= 0: 1e-8 (f64) / 1e-5 (f32); pagerank 1e-10 / 1e-6 */
  double atol;             /* < 0 or 0: 0 */
  int64_t maxiter;         /* <= 0: 10 x rows (pagerank 100) */
  int restart;             /* gmres; <= 0: 30 */
  double damping;          /* pagerank; <= 0: 0.85 */
  int history;             /* nonzero: the residual after each iteration
                              (of the first SPMV_SOLVE_HISTORY_MAX) */
  int64_t progress_every;  /* > 0: progress called every so many iterations */
  spmv_progress_fn progress; /* NULL, or called with stage "solve", done =
                                the iteration, total = maxiter, residual */
  void *progress_arg;
};

/* Sets every option to its default (the same as zeroing o). */
void spmv_solve_options_init(struct spmv_solve_options *o);

#define SPMV_SOLVE_HISTORY_MAX 8000

/* What a solve found; history, when asked for, is owned by the caller
 * (release with free()), NULL otherwise. */
struct spmv_solve_result {
  int64_t iterations;
  int converged;           /* 1 when reason is converged-rtol or -atol */
  char reason[32];         /* "converged-rtol", "converged-atol", "maxiter",
                              "breakdown", "indefinite", "cancelled",
                              "stagnated" */
  double residual;         /* ||b - A x||_2 recomputed from x (pagerank:
                              the 1-norm of the last change) */
  double relative_residual;/* residual / ||b||_2 */
  double rhs_norm;         /* ||b||_2 */
  double seconds;          /* the solve on the worker */
  double us_per_iteration;
  double *history;
  int64_t nhistory;
};

/*
 * Solves A x = b (pagerank: finds A's stationary vector; b is NULL) with
 * host arrays of m's dtype: b (rows values, borrowed), x (cols values:
 * the initial guess when x_guess is nonzero, else ignored; receives the
 * solution).  r (caller's storage) is filled whether or not the method
 * converged: a method that stops without converging is not an error.
 * Errors: SPMV_EINVAL (an option out of range, message naming it),
 * SPMV_ENOENT, connection errors.
 */
int spmv_solve(struct spmv_matrix *m, const void *b, void *x, int x_guess,
               const struct spmv_solve_options *o, struct spmv_solve_result *r);

/* The same with device vectors: b (NULL for pagerank) and x, whose values
 * are the initial guess and which receives the solution. */
int spmv_solve_vec(struct spmv_matrix *m, struct spmv_vector *b,
                   struct spmv_vector *x, const struct spmv_solve_options *o,
                   struct spmv_solve_result *r);

/*
 * Asks the solve now running on c (spmv_solve or spmv_solve_vec, in any
 * thread) to stop: it returns 0 within some 40 ms with reason "cancelled",
 * the iterations done, x as it is and its residual.  Safe to call from a
 * signal handler, from another thread, and from the solve's progress
 * callback; a call while no solve runs on c does nothing.
 */
void spmv_solve_cancel(struct spmv_client *c);

/* What spmvd decided for a matrix and what it knows of it. */
struct spmv_info {
  int64_t handle;
  char name[64];
  enum spmv_dtype dtype;
  int64_t rows, cols, nnz;
  char fingerprint[33];     /* 32 hex digits of the structure's XXH3-128 */
  char format[16];          /* "ellr-t" */
  char config[64];          /* "ellr-t bs=256 t=4" */
  int bs, tpr, param, param2;
  char source[8];           /* "cache" or "tuned" */
  char strategy[16];        /* the strategy that made the decision */
  double time_us;           /* time per product of the decision */
  double gflops;            /* 2*nnz / time */
  int64_t multiplies;       /* products done on this matrix */
  int64_t rl_min, rl_max;   /* the profile: shortest, longest row */
  double rl_mean, rl_sigma, rl_cv;
  int64_t empty_rows;
  double ell_fill;
  int64_t hyb_k, ndiags;
  double dia_fill, col_locality;
};

/* Asks spmvd for m's description and fills *info (caller's storage). */
int spmv_info(struct spmv_matrix *m, struct spmv_info *info);

/*
 * The same as the daemon's JSON reply to info (with its trials): *json is a
 * new NUL-terminated string owned by the caller, released with free().
 */
int spmv_info_json(struct spmv_matrix *m, char **json);

/*
 * Tunes m again now with strategy (NULL: the daemon's default), reporting
 * progress through progress (may be NULL) with arg; the decision is stored
 * in spmvd's cache and used from now on.
 */
int spmv_tune(struct spmv_matrix *m, const char *strategy,
              spmv_progress_fn progress, void *arg);

/*
 * Times every candidate configuration on m.  *json is a new string owned by
 * the caller (release with free()): {"trials":[{"config","time_us",
 * "gflops"}...]}, fastest first.
 */
int spmv_bench_json(struct spmv_matrix *m, spmv_progress_fn progress,
                    void *arg, char **json);

/* The most configurations, and load-and-time rounds of each, that one
 * spmv_bench_configs_json() call may ask for (spmvd's own bounds). */
#define SPMV_BENCH_MAX_CONFIGS 64
#define SPMV_BENCH_MAX_ROUNDS 9

/*
 * Times only the n configurations named (texts as spmvctl prints them,
 * "csr-vector bs=256 tpr=16"; n in [1, SPMV_BENCH_MAX_CONFIGS]) on m, each
 * as spmvd's predictor calibration times its points: loaded, 2 warm-up
 * runs and the median of 10, the median of rounds (1 ..
 * SPMV_BENCH_MAX_ROUNDS) such loads.  *json is a new
 * string owned by the caller (release with free()): {"trials":[{"config",
 * "status":"ok"|"failed", "time_us", "gflops", "error":{"code","message"}
 * (failed only)}...]} in the order asked.  A text that is not a
 * configuration fails the call with SPMV_EINVAL naming it; one that cannot
 * run on m is a failed trial and the others still run.
 */
int spmv_bench_configs_json(struct spmv_matrix *m, const char *const *configs,
                            size_t n, int rounds, spmv_progress_fn progress,
                            void *arg, char **json);

/*
 * The daemon's status, and the caller's loaded matrices: *json is a new
 * string owned by the caller (release with free()), the reply of the
 * status / list operation without its "id" and "ok".
 */
int spmv_status_json(struct spmv_client *c, char **json);
int spmv_list_json(struct spmv_client *c, char **json);

/*
 * Asks spmvd to forget the cached tunings of fingerprint (32 hex digits, or
 * "all"); *forgotten (may be NULL) receives how many.  Root, spmvd's admin
 * group or the daemon's own user only, else SPMV_EPERM.
 */
int spmv_forget(struct spmv_client *c, const char *fingerprint,
                int *forgotten);

/*
 * Asks spmvd to import tunings written by "spmvctl export" (json borrowed:
 * the exported object or its "tunings" array).  *imported and *skipped (may
 * be NULL) receive the counts.  Root, spmvd's admin group or the daemon's
 * own user only.
 */
int spmv_import_json(struct spmv_client *c, const char *json, int *imported,
                     int *skipped);

/*
 * Asks spmvd for its cached tunings of fingerprint (32 hex digits; NULL or
 * "all": every one) as the document "spmvctl export" writes, which
 * spmv_import_json() takes back; *json is a new string owned by the caller
 * (free()).  Root, spmvd's admin group or the daemon's own user only, else
 * SPMV_EPERM; SPMV_ENOENT when no tuning has that fingerprint;
 * SPMV_ELIMIT when the document is over the daemon's
 * max_json_bytes (export one fingerprint at a time).
 */
int spmv_export_json(struct spmv_client *c, const char *fingerprint,
                     char **json);

/*
 * Asks spmvd to stop: it answers, takes no new connection, finishes the
 * requests in flight (other clients' too) and exits, as on SIGTERM.  With
 * wait nonzero, returns once the daemon has closed this connection (what
 * was in flight is then done), else at its answer; c serves no request
 * after.  Root or the daemon's own user only, else SPMV_EPERM.  A
 * systemd service is better stopped with systemctl: a socket-activated
 * one starts again at the next client.
 */
int spmv_shutdown(struct spmv_client *c, int wait);

/*
 * Calibrates the statistical predictor of spmvd's device for values of
 * dtype: the daemon times synthetic matrices (normal and uniform row
 * lengths over a grid of sizes) for at most max_seconds (<= 0: the daemon's
 * default, 300 s on a GPU and 10 s on the cpu backend), reporting progress
 * through progress (may be NULL) with arg, fits each format's time and
 * stores the fits in its cache under the device's key, where the predict
 * strategy and "spmvctl predict" find them.  The device's other requests
 * wait meanwhile; one calibration runs at a time (else SPMV_EBUSY).  When
 * json is not NULL, *json is a new string owned by the caller (release with
 * free()): {device, backend, device_key, software_key, dtype, max_seconds,
 * seconds, formats:["csr-scalar", ...], fits:{...}, planned_points, points,
 * timed, late, trimmed, matrices, nnz, probe_seconds, estimate_seconds}.
 */
int spmv_calibrate(struct spmv_client *c, enum spmv_dtype dtype,
                   double max_seconds, spmv_progress_fn progress, void *arg,
                   char **json);

/* Called with each points event of a calibration; json is the event as
 * JSON text, valid during the call only. */
typedef void (*spmv_points_fn)(const char *json, void *arg);

/*
 * As spmv_calibrate(), and when points is not NULL spmvd also sends the
 * points its fits were computed from, before its reply: points is called
 * (with arg, as progress is) for each event of up to 128 of them, json
 * {event:"points", dtype, device, l2_bytes, threads, first, total,
 * columns:["matrix", "work", ..., "config", "us"], points:[[...], ...]}:
 * the timed points first .. first + n - 1 of total, each an array of
 * values in columns' order (the synthetic matrix's index, its shape, the
 * predictor's features, the configuration's text and its time in
 * microseconds), and the device's L2 bytes and resident threads, which
 * the fits use.  spmvctl calibrate --points writes them as a table.
 */
int spmv_calibrate_points(struct spmv_client *c, enum spmv_dtype dtype,
                          double max_seconds, spmv_progress_fn progress,
                          spmv_points_fn points, void *arg, char **json);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_H */
