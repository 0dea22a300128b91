/* spmvd_worker_impl.h: what the modules of spmvd-worker share (the
 * process, spmvd_worker_main.c; the matrices, spmvd_worker_matrix.c; the
 * long operations, spmvd_worker_long.c).  Nothing else includes it. */
#ifndef SPMVD_WORKER_IMPL_H
#define SPMVD_WORKER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmv_profile.h"
#include "spmvd_backend.h"
#include "spmvd_ipc.h"
#include "spmvd_shm.h"

/* A matrix of the front end's: its host copy and, once prepared, the
 * configuration resident on the device. */
struct wmatrix {
  int64_t handle;
  enum spmv_dtype dtype;
  struct spmvd_shm host;       /* the host copy, mapped */
  struct spmv_csr A;           /* a view of host */
  struct spmv_profile prof;
  int have_prof;
  struct spmvd_bmatrix *bm;    /* the resident configuration, or NULL */
  struct spmv_config cfg;
  int pins;                    /* spmvd_wk_pin_host() calls not yet undone */
  int pinned;                  /* host registered with the backend */
  double pin_ms;               /* time spent registering and releasing host,
                                  summed over the matrix's life (a load's
                                  steps report their share) */
  double *pr_wt;               /* PageRank's column weights (1 / column sum,
                                  0 when dangling), cols values, kept from
                                  the first pagerank solve; owned */
  struct wblock *block;        /* a split matrix's block kept here (bm is
                                  its local part), else NULL; owned */
  struct wmatrix *next;
};

/* A connection's vector buffer, mapped once for all its products. */
struct wbuf {
  int64_t id;
  struct spmvd_shm shm;
  int pinned;                  /* registered with the backend (pin) */
  struct wbuf *next;
};

/* A device vector of the front end's, named by its id. */
struct wvec {
  int64_t id;
  int64_t n;
  enum spmv_dtype dtype;
  struct spmvd_bvector *bv;    /* owned: the backend's vector */
  struct wvec *next;
};

/* A request that arrived during a long operation and waits for its end. */
struct deferred {
  json_t *req;                    /* owned */
  int fds[SPMVD_IPC_MAX_FDS];     /* owned */
  int nfds;
  struct deferred *next;
};

/* The process's state, which every module's operations take. */
struct worker {
  int fd;
  const struct spmvd_backend_ops *ops;
  struct spmvd_backend *be;
  struct spmvd_device_info dev;
  struct wmatrix *mats;
  struct wbuf *bufs;
  struct wvec *vecs;
  struct deferred *later, **later_tail;  /* FIFO, see serve_between() in
                                            spmvd_worker_long.c */
  int spin_us;                           /* --busy-poll-us: see
                                            spmv_wire_spin() */
  int trim_due;                          /* a request since the last trim
                                            may have freed device memory */
  double trim_from;                      /* when the last such request was
                                            served (now_s) */
  json_int_t solving;                    /* the seq of the solve running, 0
                                            none (spmvd_solve.c) */
  int split_solving;                     /* a solve with other blocks'
                                            workers runs: a list run with
                                            them waits for its end */
  int cancelled;                         /* the front end cancelled it:
                                            SPMVD_WK_DROP or _STOP */
  double sent_s;                         /* when the last message went to
                                            the front end (monotonic s) */
};

/* --- the process (spmvd_worker_main.c) --- */

/* Serves request req (borrowed) with its fds (closed here) and answers
 * it. */
void spmvd_wk_serve_one(struct worker *w, json_t *req, int *fds, int nfds);
/* Sends msg (stolen) to the front end; exits when it cannot. */
void spmvd_wk_send_msg(struct worker *w, json_t *msg);
/* Releases every matrix, vector and buffer and closes the backend, so
 * that a worker whose front end went away (in the middle of an operation
 * too) leaves the driver nothing to reclaim; then the caller exits. */
void spmvd_wk_shutdown(struct worker *w);
/* Sends {event:"alive"} when nothing went to the front end for
 * SPMVD_IPC_HEARTBEAT_MS: a long operation's steps call it. */
void spmvd_wk_heartbeat(struct worker *w);
/* Exits with status 3 when rc is SPMV_EGPU_STICKY, so that the front end
 * respawns the worker. */
void spmvd_wk_die_if_sticky(int rc);
/* The fault-injection build's stalls (spmvd_fault.h); nothing otherwise. */
#ifdef SPMVD_FAULT_INJECTION
#include "spmvd_fault.h"
#define SPMVD_WK_SLOW(where) spmvd_fault_slow(SPMVD_FAULT_##where)
#else
#define SPMVD_WK_SLOW(where) ((void)0)
#endif

/* --- the matrices (spmvd_worker_matrix.c) --- */

/* Milliseconds on the monotonic clock: the steps a load or tune reports. */
double spmvd_wk_now_ms(void);
/* The matrix of handle h, or NULL. */
struct wmatrix *spmvd_wk_find(struct worker *w, int64_t h);
/* Matrix h (replacing any of that handle) on the host copy in *fd (stolen:
 * set to -1), rows x cols with nnz entries, viewed as m->A; NULL with err
 * set, nothing kept, when it cannot be mapped. */
struct wmatrix *spmvd_wk_adopt_host(struct worker *w, int64_t h,
                                    enum spmv_dtype dt, int64_t rows,
                                    int64_t cols, int64_t nnz, int *fd,
                                    struct spmv_error *err);
/* A new matrix of handle h and type dt, listed in w (NULL: out of memory). */
struct wmatrix *spmvd_wk_matrix_new(struct worker *w, int64_t h,
                                    enum spmv_dtype dt);
/* Frees the matrix of handle h (if known). */
void spmvd_wk_drop(struct worker *w, int64_t h);
/* Unmaps vector buffer id (if known). */
void spmvd_wk_buf_release(struct worker *w, int64_t id);
/* Vector buffer id: mapped from fd (stolen; -1 when not sent) of size
 * bytes, else the one kept; NULL with err set when it holds under need
 * bytes or is unknown. */
struct spmvd_shm *spmvd_wk_buf_get(struct worker *w, int64_t id, int fd,
                                   size_t size, size_t need,
                                   struct spmv_error *err);
/* Registers m's host copy with the backend for the loads of an operation
 * (nested calls count); spmvd_wk_unpin_host() undoes it. */
void spmvd_wk_pin_host(struct worker *w, struct wmatrix *m);
void spmvd_wk_unpin_host(struct worker *w, struct wmatrix *m);
/* Stages A (borrowed until spmvd_wk_unstage()) on the device for a
 * race's loads, where the backend can (spmvd_backend.h, stage); returns
 * the milliseconds it took.  A backend failure that is not sticky is
 * logged and the loads copy from the host as before. */
double spmvd_wk_stage(struct worker *w, const struct spmv_csr *A);
void spmvd_wk_unstage(struct worker *w);
/* Makes bm (stolen), already built for cfg, m's resident configuration. */
void spmvd_wk_take_resident(struct worker *w, struct wmatrix *m,
                            struct spmvd_bmatrix *bm,
                            const struct spmv_config *cfg);
/* Replaces m's resident configuration by cfg. */
int spmvd_wk_make_resident(struct worker *w, struct wmatrix *m,
                           const struct spmv_config *cfg,
                           struct spmv_error *err);
/* Sets *dt from a request's dtype s; SPMV_EPROTO for anything else. */
int spmvd_wk_parse_dtype(const char *s, enum spmv_dtype *dt,
                         struct spmv_error *err);

/* One product of m's resident configuration on a random x against the
 * double-precision reference (spmvd_worker_check.c): *ok when the scaled
 * residual |y - y_ref|_inf / (|A|_inf |x|_inf + |y_ref|_inf) is within
 * 16 eps max_row_len, *resid that residual. */
int spmvd_wk_check_product(struct worker *w, struct wmatrix *m, int *ok,
                           double *resid, struct spmv_error *err);

/* The operations on one matrix: each sets *rep (a new object) or err and
 * returns 0 or a negative code; the fds they take become -1. */
int spmvd_wk_op_load(struct worker *w, json_t *req, int *fds, int nfds,
                     json_t **rep, struct spmv_error *err);
int spmvd_wk_op_adopt(struct worker *w, json_t *req, int *fds, int nfds,
                      json_t **rep, struct spmv_error *err);
int spmvd_wk_op_prepare(struct worker *w, json_t *req, json_t **rep,
                        struct spmv_error *err);
int spmvd_wk_op_multiply(struct worker *w, json_t *req, int *fds, int nfds,
                         json_t **rep, struct spmv_error *err);

/* --- the device vectors (spmvd_worker_vec.c) --- */

/* vnew {vectors:[{id, dtype, n}]}, vfree {ids:[...]}, and ops (a list of
 * operations, see spmvd_worker_vec.c). */
int spmvd_wk_op_vnew(struct worker *w, json_t *req, json_t **rep,
                     struct spmv_error *err);
void spmvd_wk_op_vfree(struct worker *w, json_t *req);
int spmvd_wk_op_ops(struct worker *w, json_t *req, int *fds, int nfds,
                    json_t **rep, struct spmv_error *err);
/* Makes vector {id, dtype, n} (j borrowed) exist. */
int spmvd_wk_vec_ensure(struct worker *w, json_t *j, struct spmv_error *err);
/* Frees every vector (the worker ends). */
void spmvd_wk_vec_free_all(struct worker *w);
/* The vector of id (a device vector of the front end's), or NULL. */
struct wvec *spmvd_wk_vec(struct worker *w, int64_t id);

/* --- the long operations (spmvd_worker_long.c) --- */

/* Serves request d taken off the socket (and out of w->later) and frees
 * it. */
void spmvd_wk_serve_deferred(struct worker *w, struct deferred *d);

/* Serves what the front end sent while a long operation on matrix busy
 * runs (busy < 0: none), deferring what must wait for its end; a cancel
 * of the running solve sets w->cancelled. */
void spmvd_wk_serve_between(struct worker *w, json_int_t busy);
/* How a solve is cancelled: dropped (its client went away: the reply is
 * an ECLOSED error nobody reads), or stopped (its client asked: the reply
 * is the result so far, reason "cancelled"). */
enum { SPMVD_WK_DROP = 1, SPMVD_WK_STOP = 2 };

/* A cancel {target, drop} that arrived outside a solve's iterations: the
 * deferred request of seq target, if any, is answered with ECLOSED (drop)
 * or marked to stop before its first iteration. */
void spmvd_wk_cancel_deferred(struct worker *w, json_int_t target, int drop);

/* The way a cancel message asks for: SPMVD_WK_DROP unless "drop" is
 * false. */
int spmvd_wk_cancel_how(const json_t *msg);

/* solve (spmvd_solve.c): a whole iterative method, with progress events
 * and cancel between its iterations. */
int spmvd_wk_op_solve(struct worker *w, json_t *req, int *fds, int nfds,
                      json_int_t seq, json_t **rep, struct spmv_error *err);

/* Like the operations above, with seq for the events they send on the
 * way. */
int spmvd_wk_op_tune(struct worker *w, json_t *req, json_int_t seq,
                     json_t **rep, struct spmv_error *err);
int spmvd_wk_op_bench(struct worker *w, json_t *req, json_int_t seq,
                      json_t **rep, struct spmv_error *err);
int spmvd_wk_op_calibrate(struct worker *w, json_t *req, json_int_t seq,
                          json_t **rep, struct spmv_error *err);

/* Tunes part (a matrix of this worker's own, e.g. a split block's local
 * part, not in its list) by req's strategy (predict as auto: a part has no
 * calibration fits), exclude and exclude_formats, the race's events under
 * seq; the pick's configuration in *cfg and its layout, resident, in
 * *out. */
int spmvd_wk_tune_part(struct worker *w, struct wmatrix *part, json_t *req,
                       json_int_t seq, struct spmv_config *cfg,
                       struct spmvd_bmatrix **out, struct spmv_error *err);

/* --- a block of a split matrix (spmvd_worker_split.c) --- */

struct wblock;
/* Frees b (NULL: nothing) and unloads what it holds. */
void spmvd_wk_block_free(struct worker *w, struct wblock *b);
/* adopt-block {handle, dtype, rows, cols, nnz, config, blocks, block} fds
 * [host copy]: block `block` of the matrix cut into `blocks` row blocks. */
int spmvd_wk_op_adopt_block(struct worker *w, json_t *req, int *fds, int nfds,
                            json_t **rep, struct spmv_error *err);
/* y (the rows of m's block, in m's type) = alpha A x + beta y, x the whole
 * vector. */
int spmvd_wk_block_multiply(struct worker *w, struct wmatrix *m, double alpha,
                            const void *x, double beta, void *y,
                            struct spmv_error *err);
/* The same on device vectors: x and y this block's rows (of the vectors
 * split by the matrix's rows), xall the whole x on the host, every block's
 * rows published there, from which the halo is gathered and uploaded. */
int spmvd_wk_block_vec_spmv(struct worker *w, struct wmatrix *m, double alpha,
                            struct spmvd_bvector *x, double beta,
                            struct spmvd_bvector *y, const void *xall,
                            struct spmv_error *err);
/* The matrix of handle h whose block this worker holds, taking the
 * request's memfd fds[0] into *fd (set -1 in fds); NULL, the memfd closed
 * and ENOENT in err when there is no such block. */
struct wmatrix *spmvd_wk_take_block(struct worker *w, json_int_t h, int *fds,
                                    int *fd, struct spmv_error *err);
/* The rows r0 .. r1 of m's block (r1 excluded). */
void spmvd_wk_block_rows(const struct wmatrix *m, int64_t *r0, int64_t *r1);

/* --- lists over the blocks (spmvd_worker_split_list.c) --- */

struct spmvd_split_ctl;

/* Waits until all nb blocks sharing ctl have come; -1 when one has set
 * abort. */
int spmvd_wk_split_barrier(struct worker *w, struct spmvd_split_ctl *ctl, int nb);

/* This block's side of a list run by the blocks together. */
struct spmvd_wk_list_sync {
  struct worker *w;
  struct spmvd_split_ctl *ctl;  /* at the start of the list's shared memfd */
  int nb, k;
  unsigned seq;                 /* reductions so far */
};
/* From the message's sync {blocks, block, rows}, the memfd shared at
 * size bytes. */
int spmvd_wk_list_sync_init(struct spmvd_wk_list_sync *s, struct worker *w,
                            json_t *req, void *shared, size_t size,
                            struct spmv_error *err);
/* After step st was queued: a download that publishes x waits for it and
 * for the other blocks; a dot or norm is summed over the blocks into
 * res[slot] and set on the backend for the steps after. */
int spmvd_wk_list_sync_step(struct spmvd_wk_list_sync *s, json_t *st,
                            double *res, int nres, struct spmv_error *err);
/* This block failed: the others waiting for it are let go. */
void spmvd_wk_list_sync_fail(struct spmvd_wk_list_sync *s);

/* --- solves over the blocks (spmvd_worker_split_solve.c) --- */

/* solve-block {handle, blocks, block, rtol, atol, maxiter, method} fds
 * [shared]: this block's part of a solve with the other blocks' workers. */
int spmvd_wk_op_solve_block(struct worker *w, json_t *req, int *fds, int nfds,
                            json_t **rep, struct spmv_error *err);
/* multiply-block {handle, alpha, beta, nvec?} fds [x's | y's]: the block's
 * rows of each y. */
int spmvd_wk_op_multiply_block(struct worker *w, json_t *req, int *fds,
                               int nfds, json_t **rep, struct spmv_error *err);

#endif /* SPMVD_WORKER_IMPL_H */
