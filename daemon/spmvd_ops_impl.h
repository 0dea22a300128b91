/* spmvd_ops_impl.h: what the operations' files share (spmvd_ops.c, the
 * matrix ops, the tuning ops, the admin ops); internal to spmvd. */
#ifndef SPMVD_OPS_IMPL_H
#define SPMVD_OPS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmvd_registry.h"
#include "spmvd_shm.h"
#include "spmvd_tuner.h"
#include "spmvd_vectors.h"
#include "spmvd_worker.h"

struct spmvd_conn;
struct spmvd_server;

/*
 * Slow work goes to the worker: every op that needs it sends one worker
 * request whose callback continues the op, holding a reference on the
 * connection.  A callback first looks its matrix up again by handle: the
 * connection may have closed (freeing its matrices) meanwhile.
 *
 * A load runs:  worker load (validate, convert, profile, fingerprint)
 *   -> cache lookup -> hit:  worker prepare with a check against the
 *                            reference (first use after load);
 *                            a wrong result quarantines it and retunes
 *                   -> miss: worker tune (progress events relayed)
 *   -> reply.
 * The matrix ops (spmvd_ops_matrix.c) run the load up to the fingerprint,
 * the tuning ops (spmvd_ops_tune.c) from the lookup on.
 */

struct spmvd_cachejob;

/* An op in flight: what its callbacks need to go on. */
struct spmvd_op {
  struct spmvd_conn *c;        /* referenced */
  struct spmvd_server *srv;
  int64_t id;
  int64_t handle;
  char name[16];               /* "load", "tune", ... */
  enum spmvd_strategy strategy;
  int verify;
  struct spmvd_shm vec;        /* multiply: the vectors, taken from the conn */
  int conn_vec;                /* multiply: the vectors are in c->vec */
  int inplace;                 /* multiply: in the attached memfd, no payload */
  size_t y_off, y_len;
  int nvec;
  char reason[256];
  int store_failed;            /* load, tune: the decision was not stored */
  char store_error[256];       /* ... and why */
  char trying[64];             /* tune, bench: the candidate being built */
  int listed;                  /* bench: the request named its configs */
  enum spmv_dtype dtype;       /* calibrate: the value type */
  double max_s;                /* calibrate: the time bound in seconds */
  json_t *result;              /* calibrate: the reply while fits are stored */
  json_t *written;             /* ops: the ids of the vectors it writes */
  json_t *steps;               /* load, tune: milliseconds of each step */
  uint64_t t0_ns, mark_ns;     /* load, tune: its start, a step's start */
  int64_t buf_private;         /* a worker buffer of its own, or 0 (released
                                  when the op ends) */
  int wk;                      /* the worker it runs on: its connection's,
                                  or the matrix's it works on */
  int split;                   /* load: row blocks asked for (0, 1: none) */
  int pending;                 /* split: block calls not yet answered */
  struct spmv_error block_err; /* split: the first block call's failure */
  json_t *held;                /* split load: the reply, until its blocks */
  int split_cached;            /* split load: the blocks' picks were cached */
  struct spmvd_block_call {    /* split load that tunes its blocks: each */
    struct spmvd_op *o;        /* block call's context, and the candidate */
    int b;                     /* its race builds (to quarantine it should */
    char trying[64];           /* the block's worker crash) */
  } blk[SPMVD_CONFIG_MAX_WORKERS];
  size_t split_rows;           /* split solve: the matrix's rows */
  int64_t split_xvec;          /* split solve: x's device vector (0: x is
                                  the reply's payload) */
  void (*split_done)(void *);  /* split solve: called once its blocks have */
  void *split_done_arg;        /* all answered, before the reply */
};

/* --- spmvd_ops.c: the op's life, replies and fields --- */

/* A new op for request id on c (which it references); NULL when out of
 * memory. */
struct spmvd_op *spmvd_op_new(struct spmvd_conn *c, int64_t id,
                              const char *name);
/* The op's worker (borrowed), NULL once it stopped. */
struct spmvd_worker *spmvd_op_worker(const struct spmvd_op *o);
/* Ends an op: the connection reads its next request. */
void spmvd_op_end(struct spmvd_op *o);
/* Sends err as the op's reply (unless the connection is closing), then
 * ends it. */
void spmvd_op_fail(struct spmvd_op *o, const struct spmv_error *err);
/* Sends msg (taken; NULL: out of memory) as the reply to id. */
void spmvd_op_reply(struct spmvd_conn *c, int64_t id, json_t *msg);

/* Adds ms to step name of the op's "steps" (load, tune); merges the
 * "steps" object of a worker's reply rep (borrowed, may be NULL). */
void spmvd_op_step(struct spmvd_op *o, const char *name, double ms);
void spmvd_op_steps_merge(struct spmvd_op *o, json_t *rep);
/* Milliseconds since ns (uv_hrtime). */
double spmvd_op_since_ms(uint64_t ns);

/* Reads an integer (or number) field; returns 0 or SPMV_EPROTO naming it
 * (err may be NULL once the request was checked). */
int spmvd_op_get_int(json_t *req, const char *key, int64_t *out,
                     struct spmv_error *err);
int spmvd_op_get_number(json_t *req, const char *key, double *out,
                        struct spmv_error *err);
/* Checks that object s has only the fields of keys (a space-separated
 * list, "op" implied); where ("ops[3] (axpby): ") prefixes the message. */
int spmvd_op_only_keys(json_t *s, const char *where, const char *keys,
                       struct spmv_error *err);
/* The request's matrix by "handle", owned by c's user and fully loaded. */
int spmvd_op_get_ready_matrix(struct spmvd_conn *c, json_t *req,
                              struct spmvd_matrix **out,
                              struct spmv_error *err);
/* The request's "strategy", or the configured default. */
int spmvd_op_strategy(struct spmvd_server *srv, json_t *req,
                      enum spmvd_strategy *s, struct spmv_error *err);

/* Looks the op's matrix up again; NULL when it or its connection is gone. */
struct spmvd_matrix *spmvd_op_matrix(struct spmvd_op *o);
/* Fails the op; a load's matrix goes with it. */
void spmvd_op_load_fail(struct spmvd_op *o, const struct spmv_error *err);
/* Answers the op with its reply msg (taken) and ends it; a NULL msg (out
 * of memory, or a number jansson refuses) fails it as ENOMEM, a load's
 * matrix going with it. */
void spmvd_op_answer(struct spmvd_op *o, json_t *msg);
/* spmvd_worker_call() for op o with ctx for the callbacks, the call
 * tagged with o's client (spmvd_worker_tag_last). */
int spmvd_op_worker_call(struct spmvd_op *o, json_t *msg, const int *fds,
                         int nfds, spmvd_worker_reply_cb *cb,
                         spmvd_worker_event_cb *ev, void *ctx,
                         struct spmv_error *err);
/* Sends msg (taken) to the worker, cb continuing the op; on failure the
 * op fails (spmvd_op_load_fail) and -1 is returned. */
int spmvd_op_call(struct spmvd_op *o, json_t *msg, const int *fds, int nfds,
                  spmvd_worker_reply_cb *cb, spmvd_worker_event_cb *ev);

/* --- spmvd_ops_matrix.c: load, multiply, info, list, free, attach --- */

/* spmvd_ops_begin() of the ops whose fields size the payload. */
int spmvd_ops_begin_load(struct spmvd_conn *c, json_t *req, uint64_t plen,
                         size_t *shm, struct spmv_error *err);
int spmvd_ops_begin_multiply(struct spmvd_conn *c, json_t *req, int batch,
                             uint64_t plen, size_t *shm,
                             struct spmv_error *err);
void spmvd_ops_run_load(struct spmvd_conn *c, json_t *req, int64_t id,
                        struct spmvd_shm *payload);
void spmvd_ops_run_multiply(struct spmvd_conn *c, json_t *req, int64_t id,
                            struct spmvd_shm *payload);
/* The quick ops: the reply, or NULL with err set. */
json_t *spmvd_ops_info(struct spmvd_conn *c, json_t *req,
                       struct spmv_error *err);
json_t *spmvd_ops_list(struct spmvd_conn *c);
json_t *spmvd_ops_free(struct spmvd_conn *c, json_t *req,
                       struct spmv_error *err);
json_t *spmvd_ops_attach(struct spmvd_conn *c, json_t *req,
                         struct spmv_error *err);

/* The worker answered an op whose vectors travel in a worker buffer (ops,
 * solve): its own buffer is released; when the connection is closing or
 * err is set the op ends here (failed with err, the buffers' worker copies
 * marked stale) and 1 is returned, else 0. */
int spmvd_op_buffers_answered(struct spmvd_op *o, const struct spmv_error *err);
/* Sends msg (borrowed) as the op's reply with the len bytes at off of its
 * buffer (the connection's kept one, or its own) as the payload. */
void spmvd_op_send_buffer(struct spmvd_op *o, json_t *msg, size_t off,
                          size_t len);

/* Refuses what would take c past max_connection_bytes (ELIMIT). */
int spmvd_ops_check_mem(struct spmvd_conn *c, uint64_t more,
                        struct spmv_error *err);

/* --- spmvd_ops_vec.c: vector-create, vector-free, ops --- */

int spmvd_ops_begin_ops(struct spmvd_conn *c, json_t *req, uint64_t plen,
                        size_t *shm, struct spmv_error *err);
void spmvd_ops_run_ops(struct spmvd_conn *c, json_t *req, int64_t id,
                       struct spmvd_shm *payload);
void spmvd_ops_run_vector_create(struct spmvd_conn *c, json_t *req,
                                 int64_t id);
json_t *spmvd_ops_vector_free(struct spmvd_conn *c, json_t *req,
                              struct spmv_error *err);

/* --- spmvd_ops_solve.c: solve --- */

int spmvd_ops_begin_solve(struct spmvd_conn *c, json_t *req, uint64_t plen,
                          size_t *shm, struct spmv_error *err);
void spmvd_ops_run_solve(struct spmvd_conn *c, json_t *req, int64_t id,
                         struct spmvd_shm *payload);

/* --- spmvd_ops_tune.c: the tuning flow, tune, bench, calibrate --- */

/* Relays a worker's progress event (borrowed) to the op's client. */
void spmvd_op_on_progress(void *ctx, json_t *ev);
/* A loaded matrix, its fingerprint known: the cache's tuning, checked on
 * its first use, or a new one. */
void spmvd_ops_decide(struct spmvd_op *o, struct spmvd_matrix *m);
void spmvd_ops_run_tune(struct spmvd_conn *c, json_t *req, int64_t id);
void spmvd_ops_run_bench(struct spmvd_conn *c, json_t *req, int64_t id);
void spmvd_ops_run_calibrate(struct spmvd_conn *c, json_t *req, int64_t id);

/* --- spmvd_ops_admin.c: hello, status, forget, import --- */

json_t *spmvd_ops_hello(struct spmvd_conn *c, json_t *req,
                        struct spmv_error *err);
json_t *spmvd_ops_status(struct spmvd_conn *c);
/* shutdown: the reply, then a clean stop (root or the daemon's user). */
void spmvd_ops_shutdown(struct spmvd_conn *c, int64_t id);
/* forget and import, checked and run on the cache thread. */
void spmvd_ops_run_admin(struct spmvd_conn *c, const char *op, json_t *req,
                         int64_t id);

/* Adds the operator's excluded formats (spmvd.conf exclude_formats) to a
 * tune, bench or adopt-block message for a worker, when there are any. */
void spmvd_ops_add_exclude_formats(struct spmvd_server *srv, json_t *msg);
/* Quarantines cfg of m (its fingerprint and value type) on worker wk's
 * device, on the cache thread; what is posted later sees it. */
void spmvd_ops_quarantine(struct spmvd_server *srv, struct spmvd_matrix *m,
                          int wk, const struct spmv_config *cfg,
                          const char *why);
/* After a call on worker wk that failed with err while it built or timed
 * the candidate trying (a text, "" when none): a crash or a timeout
 * quarantines trying for m on wk's device, logged for block (< 0: the
 * whole matrix). */
void spmvd_ops_quarantine_trying(struct spmvd_server *srv,
                                 struct spmvd_matrix *m, int wk, int block,
                                 const char *trying,
                                 const struct spmv_error *err);
/* A worker's event ev: when it names the candidate being built, that text
 * goes into trying (n bytes) and 1 is returned, else 0. */
int spmvd_ops_take_candidate(json_t *ev, char *trying, size_t n);
/* Posts a cache job for the configurations quarantined for m on worker
 * wk's device, then(j) with ctx on the loop (at once, a miss, without a
 * cache or device); SPMV_ENOMEM when nothing could be posted. */
int spmvd_ops_post_exclude(struct spmvd_server *srv,
                           const struct spmvd_matrix *m, int wk,
                           void (*then)(struct spmvd_cachejob *j), void *ctx);
/* Those configurations (an EXCLUDE job's answer) as an array of texts (a
 * new reference, NULL when out of memory); a cache failure is logged. */
json_t *spmvd_ops_excluded(const struct spmvd_cachejob *j);

/* --- spmvd_ops_split.c: matrices split over workers (issue 54) --- */

/* A load's "split": 0, or EINVAL naming why this matrix cannot be split
 * so on this daemon (not square, more blocks than rows or workers). */
int spmvd_ops_split_check(struct spmvd_server *srv, json_t *req, int64_t rows,
                          int64_t cols, struct spmv_error *err);
/* The load of o is decided (reply, taken): when it asked for a split, its
 * blocks are made resident on their workers first, else it is answered. */
void spmvd_ops_split_load(struct spmvd_op *o, struct spmvd_matrix *m,
                          json_t *reply);
/* The product of split matrix m for o on vectors in fd: each block's rows
 * by its worker; then spmvd_ops_multiplied(). */
void spmvd_ops_split_multiply(struct spmvd_op *o, struct spmvd_matrix *m,
                              double alpha, double beta, int fd);
/* A solve of a split matrix, as its request gave it (the method's name
 * and the vectors borrowed). */
struct spmvd_split_solve {
  const char *method;     /* cg, pcg-jacobi, bicgstab, gmres, pagerank */
  const void *b, *x0;     /* rows doubles each; NULL: none (pagerank: no b;
                             no x0: zero, pagerank the uniform vector) */
  double rtol, atol;
  int64_t maxiter;
  int restart;            /* gmres */
  double damping;         /* pagerank */
  int history;            /* the residual after each iteration in the reply */
  int64_t progress;       /* > 0: a progress event every so many iterations */
  int64_t b_vec, x_vec;   /* device vectors split like the matrix (0: none):
                             each block reads its rows of b from b_vec's and
                             its rows of x0 from x_vec's part, and writes its
                             rows of the solution there */
};
/* The solve ss on split matrix m for o, answered with the solution as the
 * payload (in x_vec when given); done(arg) is called once, when the solve has ended (also when
 * it could not start), before the reply. */
void spmvd_ops_split_solve(struct spmvd_op *o, struct spmvd_matrix *m,
                           const struct spmvd_split_solve *ss,
                           void (*done)(void *), void *arg);
/* Sends the client of solve o a progress event of a worker's, ev
 * (borrowed): {done, total, residual, elapsed_s}. */
void spmvd_ops_solve_progress(struct spmvd_op *o, json_t *ev);
/* Has the blocks of o's split solve stop after their next reduction, with
 * reason "cancelled". */
void spmvd_ops_split_cancel(struct spmvd_op *o);
/* The configuration of each of split matrix m's blocks' local parts (a
 * new array). */
json_t *spmvd_ops_split_configs(const struct spmvd_matrix *m);
/* The worker of each of split matrix m's blocks (a new array). */
json_t *spmvd_ops_split_workers(const struct spmvd_matrix *m);
/* The layout of split matrix m's rows over its blocks' workers. */
void spmvd_ops_split_layout(const struct spmvd_matrix *m,
                            struct spmvd_split_layout *l);
/* EINVAL when m is split: what (e.g. "a solve") is not available for it. */
int spmvd_ops_split_refuse(const struct spmvd_matrix *m, const char *what,
                           struct spmv_error *err);
/* Worker wk was respawned: its blocks of m are made resident again. */
void spmvd_ops_split_readopt(struct spmvd_server *srv, struct spmvd_matrix *m,
                             int wk);
/* The worker of m answered its product (or err). */
void spmvd_ops_multiplied(void *ctx, json_t *rep, const struct spmv_error *err);

/* --- spmvd_ops_vec_split.c: vectors and lists over a split's blocks --- */

/* vector-create of o for v, split as v->split (set): its part on each
 * block's worker, then the reply. */
void spmvd_ops_split_vector_create(struct spmvd_op *o, struct spmvd_vector *v);
/* Has every worker of split vector v free its part. */
void spmvd_ops_split_vector_free(struct spmvd_server *srv,
                                 const struct spmvd_vector *v);
/* A checked list on split vectors, as for one worker. */
struct spmvd_split_list_args {
  const struct spmvd_split_layout *split;
  json_t *steps;                /* taken: the worker's steps, whole vectors */
  json_t *vectors;              /* taken: [{id, dtype}] of those named */
  int nres;
  uint64_t down_base;           /* the payload's downloads start here */
  int payload_fd;               /* the payload buffer, -1: none */
  size_t payload_size;
};
/* Runs the list of a over its blocks for o and answers it. */
void spmvd_ops_split_list(struct spmvd_op *o,
                          const struct spmvd_split_list_args *a);

#endif /* SPMVD_OPS_IMPL_H */
