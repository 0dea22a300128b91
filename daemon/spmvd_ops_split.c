/* spmvd_ops_split.c: a matrix split over several workers (issue 54).  Its
 * rows are cut into blocks balanced by nonzeros, each resident on a worker
 * of its own with its local and remote parts; a product goes to every
 * block's worker with the same host vectors, each writing its rows of y
 * and reading the halo of x that it needs from them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "spmvd_cachejob.h"
#include "spmvd_conn.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_split_shm.h"
#include "spmvd_vectors.h"
#include "spmvd_worker.h"

/* Workers that started once. */
static int started_workers(const struct spmvd_server *srv)
{
  int n = 0;
  for (int i = 0; i < srv->nworkers; i++)
    n += spmvd_server_worker_started(srv, i);
  return n;
}

int spmvd_ops_split_check(struct spmvd_server *srv, json_t *req, int64_t rows,
                          int64_t cols, struct spmv_error *err)
{
  json_t *v = json_object_get(req, "split");
  int64_t n = json_is_integer(v) ? json_integer_value(v) : 1;

  if (n < 1)
    return spmv_error_set(err, SPMV_EINVAL, "split is %lld: it counts row "
                          "blocks, at least 1", (long long)n);
  if (n == 1)
    return 0;
  int have = started_workers(srv);
  if (rows != cols)
    return spmv_error_set(err, SPMV_EINVAL, "split %lld: the matrix is %lld x "
                          "%lld, and only a square matrix is split",
                          (long long)n, (long long)rows, (long long)cols);
  if (n > have)
    return spmv_error_set(err, SPMV_EINVAL, "split %lld: spmvd runs %d "
                          "worker%s (spmvd --devices, --cpu-workers)",
                          (long long)n, have, have == 1 ? "" : "s");
  if (n > rows)
    return spmv_error_set(err, SPMV_EINVAL, "split %lld: the matrix has "
                          "only %lld rows", (long long)n, (long long)rows);
  return 0;
}

int spmvd_ops_split_refuse(const struct spmvd_matrix *m, const char *what,
                           struct spmv_error *err)
{
  if (m->nblocks <= 1)
    return 0;
  return spmv_error_set(err, SPMV_EINVAL, "matrix %lld is split over %d "
                        "workers: %s is not available for a split matrix "
                        "(its products are)", (long long)m->handle,
                        m->nblocks, what);
}

/* The adopt-block request of block b of m: with o (a load that found no
 * cached picks) its local part is tuned on its own by the load's
 * strategy, leaving out exclude (taken; may be NULL), the configurations
 * quarantined for m on the block's device; else it takes m->block_cfg[b]
 * (cached, or tuned before the block's worker restarted), the whole
 * matrix's configuration where there is none. */
static json_t *adopt_block_msg(const struct spmvd_matrix *m, int b,
                               const struct spmvd_op *o, json_t *exclude)
{
  json_t *msg = json_pack("{ss sI ss sI sI sI ss si si}", "op", "adopt-block",
                          "handle", (json_int_t)m->handle, "dtype",
                          spmv_dtype_name(m->dtype), "rows", (json_int_t)m->rows,
                          "cols", (json_int_t)m->cols, "nnz", (json_int_t)m->nnz,
                          "config", o || !m->block_cfg[b][0] ? m->cfg_text
                                                              : m->block_cfg[b],
                          "blocks", m->nblocks, "block", b);
  if (msg && o) {
    json_object_set_new(msg, "strategy",
                        json_string(spmvd_strategy_name(o->strategy)));
    spmvd_ops_add_exclude_formats(o->srv, msg);
    if (exclude)
      json_object_set(msg, "exclude", exclude);
  }
  json_decref(exclude);
  return msg;
}

json_t *spmvd_ops_split_configs(const struct spmvd_matrix *m)
{
  json_t *a = json_array();
  for (int b = 0; b < m->nblocks; b++)
    json_array_append_new(a, json_string(m->block_cfg[b]));
  return a;
}

/* o is about to make n block calls. */
static void begin_blocks(struct spmvd_op *o, int n)
{
  o->pending = n;
  spmv_error_clear(&o->block_err);
}

/* Notes one answer of a block call of o; returns 1 once all are in. */
static int block_answered(struct spmvd_op *o, const struct spmv_error *err)
{
  if (err && o->block_err.code == 0)
    o->block_err = *err;
  return --o->pending == 0;
}

/* Sends msg (taken) for block b of m to its worker with fd, its reply to
 * cb and its events to ev (NULL: none), each with ctx; a call that cannot
 * be made is answered to cb at once with why. */
static void call_block_ev(struct spmvd_op *o, const struct spmvd_matrix *m,
                          int b, json_t *msg, int fd, spmvd_worker_reply_cb *cb,
                          spmvd_worker_event_cb *ev, void *ctx)
{
  struct spmvd_worker *w = spmvd_server_worker(o->srv, m->block_wk[b]);
  struct spmv_error err;

  if (!w || !msg) {
    json_decref(msg);
    if (!w)
      spmv_error_set(&err, SPMV_EWORKER, "worker %d has stopped", m->block_wk[b]);
    else
      spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    cb(ctx, NULL, &err);
  } else if (spmvd_worker_call(w, msg, &fd, 1, cb, ev, ctx, &err) < 0) {
    cb(ctx, NULL, &err);
  }
}

static void call_block(struct spmvd_op *o, const struct spmvd_matrix *m, int b,
                       json_t *msg, int fd, spmvd_worker_reply_cb *cb)
{
  call_block_ev(o, m, b, msg, fd, cb, NULL, o);
}

/* A progress event of a split solve's block 0 (the blocks' are alike). */
static void on_block_progress(void *ctx, json_t *ev)
{
  spmvd_ops_solve_progress(ctx, ev);
}

json_t *spmvd_ops_split_workers(const struct spmvd_matrix *m)
{
  json_t *wks = json_array();
  for (int b = 0; b < m->nblocks; b++)
    json_array_append_new(wks, json_integer(m->block_wk[b]));
  return wks;
}

static void post_split(struct spmvd_op *o, struct spmvd_matrix *m,
                       enum spmvd_cachejob_kind kind,
                       void (*then)(struct spmvd_cachejob *j));

/* One block's answer to its adopt-block call. */
static void block_adopted(struct spmvd_op *o, json_t *rep,
                          const struct spmv_error *err)
{
  struct spmvd_matrix *m = spmvd_op_matrix(o);

  if (m && rep) {
    json_int_t b = json_integer_value(json_object_get(rep, "block"));
    const char *cfg = json_string_value(json_object_get(rep, "config"));
    if (b >= 0 && b < m->nblocks && cfg)
      snprintf(m->block_cfg[b], sizeof m->block_cfg[b], "%s", cfg);
    if (b >= 0 && b < m->nblocks) {
      m->block_r0[b] = json_integer_value(json_object_get(rep, "r0"));
      m->block_r0[b + 1] = json_integer_value(json_object_get(rep, "r1"));
    }
  }
  if (!block_answered(o, err))
    return;
  json_t *reply = o->held;
  o->held = NULL;
  if (!m || o->block_err.code != 0) {
    json_decref(reply);
    struct spmv_error e = o->block_err;
    if (e.code == 0)
      spmv_error_set(&e, SPMV_EWORKER, "the matrix went while it was split");
    spmvd_op_load_fail(o, &e);  /* unloads every block */
    return;
  }
  m->state = SPMVD_MATRIX_READY;
  /* The blocks' time (the cache's look-up, their cuts, races and uploads)
   * in the steps, and in their total, which the reply shares. */
  double blocks_ms = spmvd_op_since_ms(o->mark_ns);
  spmvd_op_step(o, "blocks_ms", blocks_ms);
  if (o->t0_ns)
    spmvd_op_step(o, "total_ms", blocks_ms);
  if (reply && o->steps)
    json_object_set(reply, "steps", o->steps);
  if (reply) {
    json_object_set_new(reply, "blocks", json_integer(m->nblocks));
    json_object_set_new(reply, "workers", spmvd_ops_split_workers(m));
    json_object_set_new(reply, "block_configs", spmvd_ops_split_configs(m));
    json_object_set_new(reply, "block_source",
                        json_string(o->split_cached ? "cache" : "tuned"));
  }
  /* The picks kept for the next split load on these devices, where the
   * cache holds the matrix (its tuning was stored). */
  if (!o->split_cached && !o->store_failed)
    post_split(o, m, SPMVD_CJ_SPLIT_PUT, NULL);
  spmvd_log_info("matrix %lld split over %d workers", (long long)m->handle,
                 m->nblocks);
  spmvd_op_answer(o, reply);
}

static void on_block_adopted(void *ctx, json_t *rep, const struct spmv_error *err)
{
  block_adopted(ctx, rep, err);
}

/* A block's race: the candidate being built is remembered, as a tune's. */
static void on_block_event(void *ctx, json_t *ev)
{
  struct spmvd_block_call *bc = ctx;

  spmvd_ops_take_candidate(ev, bc->trying, sizeof bc->trying);
}

/* A block that tuned answered: when its worker crashed or timed out in
 * the race, the candidate it was building is quarantined for the matrix on
 * that worker's device, so that the next split load leaves it out. */
static void on_block_tuned(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_block_call *bc = ctx;
  struct spmvd_op *o = bc->o;
  struct spmvd_matrix *m = spmvd_op_matrix(o);

  if (err && m)
    spmvd_ops_quarantine_trying(o->srv, m, m->block_wk[bc->b], bc->b,
                                bc->trying, err);
  block_adopted(o, rep, err);
}

/* The cache said what is quarantined for the matrix on block bc->b's
 * device: the block is tuned without it. */
static void on_block_excluded(struct spmvd_cachejob *j)
{
  struct spmvd_block_call *bc = j->ctx;
  struct spmvd_op *o = bc->o;
  struct spmvd_matrix *m = spmvd_op_matrix(o);
  json_t *exclude = spmvd_ops_excluded(j);
  struct spmv_error err;

  if (!m) {
    json_decref(exclude);
    spmv_error_set(&err, SPMV_EWORKER, "the matrix went while it was split");
    block_adopted(o, NULL, &err);
    return;
  }
  call_block_ev(o, m, bc->b, adopt_block_msg(m, bc->b, o, exclude), m->host.fd,
                on_block_tuned, on_block_event, bc);
}

/* Block b of m is to be tuned: first the configurations quarantined for
 * m on its worker's device. */
static void tune_block(struct spmvd_op *o, struct spmvd_matrix *m, int b)
{
  struct spmvd_block_call *bc = &o->blk[b];
  struct spmv_error err;

  bc->o = o;
  bc->b = b;
  bc->trying[0] = '\0';
  if (spmvd_ops_post_exclude(o->srv, m, m->block_wk[b], on_block_excluded,
                             bc) < 0) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    block_adopted(o, NULL, &err);
  }
}

/* A split cache job of kind for m's blocks on their workers' devices;
 * then (NULL: none, failures logged) gets it on the loop.  A job that
 * cannot be made reaches then at once as a miss. */
static void post_split(struct spmvd_op *o, struct spmvd_matrix *m,
                       enum spmvd_cachejob_kind kind,
                       void (*then)(struct spmvd_cachejob *j))
{
  struct spmvd_cachejob *j = spmvd_cachejob_new(kind);
  const struct spmvd_device_info *dev = NULL;
  size_t len = 0;

  if (!j) {
    struct spmvd_cachejob miss = {.kind = kind, .ctx = o};
    miss.rc = spmv_error_set(&miss.err, SPMV_ENOMEM, "out of memory for a "
                             "split's cache job");
    if (then)
      then(&miss);
    return;
  }
  snprintf(j->fp, sizeof j->fp, "%s", m->fingerprint);
  j->dtype = m->dtype;
  j->blocks = m->nblocks;
  for (int b = 0; b < m->nblocks; b++) {
    const struct spmvd_device_info *d =
        spmvd_worker_device(spmvd_server_worker(o->srv, m->block_wk[b]));
    if (b == 0)
      dev = d;
    len += (size_t)snprintf(j->device_set + len, len < sizeof j->device_set
                            ? sizeof j->device_set - len : 0, "%s%s",
                            b ? " | " : "", d ? d->device_key : "?");
  }
  if (dev)
    j->dev = *dev;
  /* A device set that does not fit its key is never cached. */
  struct spmvd_bio *bio = dev && len < sizeof j->device_set ? o->srv->bio : NULL;
  if (kind == SPMVD_CJ_SPLIT_PUT && !bio) {
    spmvd_cachejob_free(j);  /* nothing to keep it in: no warning */
    return;
  }
  if (kind == SPMVD_CJ_SPLIT_PUT)
    j->json = spmvd_ops_split_configs(m);
  spmvd_cachejob_post(bio, j, then, o);
}

/* The cache answered whether m's blocks were tuned on these devices: the
 * blocks are made, with the cached picks or tuned. */
static void on_split_found(struct spmvd_cachejob *j)
{
  struct spmvd_op *o = j->ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);

  if (!m) {
    json_decref(o->held);
    o->held = NULL;
    spmvd_op_end(o);
    return;
  }
  if (j->rc < 0 && j->rc != SPMV_ECACHE)
    spmvd_log_warn("cache: %s", j->err.msg);
  o->split_cached = j->rc == 0 && j->hit;
  for (int b = 0; o->split_cached && b < m->nblocks; b++)
    snprintf(m->block_cfg[b], sizeof m->block_cfg[b], "%s",
             json_string_value(json_array_get(j->json, (size_t)b)));
  int n = m->nblocks;
  begin_blocks(o, n);
  /* n, not m->nblocks: a failure of the last call frees m. */
  for (int b = 0; b < n; b++) {
    if (o->split_cached)
      call_block(o, m, b, adopt_block_msg(m, b, NULL, NULL), m->host.fd,
                 on_block_adopted);
    else
      tune_block(o, m, b);
  }
}

void spmvd_ops_split_load(struct spmvd_op *o, struct spmvd_matrix *m,
                          json_t *reply)
{
  struct spmvd_server *srv = o->srv;
  struct spmv_error err;
  int n = o->split, b = 0;

  if (n <= 1 || !reply) {
    m->state = SPMVD_MATRIX_READY;
    spmvd_op_answer(o, reply);
    return;
  }
  /* Block 0 replaces the whole matrix on its own worker; the others go to
   * the other started workers in order. */
  m->block_wk[b++] = m->wk;
  for (int i = 0; i < srv->nworkers && b < n; i++)
    if (i != m->wk && spmvd_server_worker_started(srv, i))
      m->block_wk[b++] = i;
  if (b < n) {
    json_decref(reply);
    spmv_error_set(&err, SPMV_EINVAL, "split %d: only %d workers have started",
                   n, b);
    spmvd_op_load_fail(o, &err);
    return;
  }
  m->nblocks = n;
  o->held = reply;
  o->mark_ns = uv_hrtime();
  post_split(o, m, SPMVD_CJ_SPLIT_GET, on_split_found);
}

static void on_block_multiplied(void *ctx, json_t *rep,
                                const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;

  (void)rep;
  if (!block_answered(o, err))
    return;
  struct spmv_error e = o->block_err;
  spmvd_ops_multiplied(o, NULL, e.code != 0 ? &e : NULL);
}

void spmvd_ops_split_multiply(struct spmvd_op *o, struct spmvd_matrix *m,
                              double alpha, double beta, int fd)
{
  int n = m->nblocks;

  begin_blocks(o, n);
  for (int b = 0; b < n; b++)
    call_block(o, m, b,
               json_pack("{ss sI sf sf si}", "op", "multiply-block", "handle",
                         (json_int_t)m->handle, "alpha", alpha, "beta", beta,
                         "nvec", o->nvec),
               fd, on_block_multiplied);
}

/* A block re-created on a new worker (or not: logged). */
static void on_block_readopted(void *ctx, json_t *rep, const struct spmv_error *err)
{
  int64_t *h = ctx;
  (void)rep;
  if (err)
    spmvd_log_error("a block of matrix %lld could not be re-created on the "
                    "new worker: %s", (long long)*h, err->msg);
  free(h);
}

void spmvd_ops_split_readopt(struct spmvd_server *srv, struct spmvd_matrix *m,
                             int wk)
{
  struct spmv_error err;

  for (int b = 0; b < m->nblocks; b++) {
    if (m->block_wk[b] != wk)
      continue;
    int64_t *h = malloc(sizeof *h);
    json_t *msg = h ? adopt_block_msg(m, b, NULL, NULL) : NULL;
    if (!msg) {
      free(h);
      spmvd_log_error("cannot re-create block %d of matrix %lld: out of "
                      "memory", b, (long long)m->handle);
      continue;
    }
    *h = m->handle;
    if (spmvd_worker_call(spmvd_server_worker(srv, wk), msg, &m->host.fd, 1,
                          on_block_readopted, NULL, h, &err) < 0) {
      spmvd_log_error("cannot re-create block %d of matrix %lld: %s", b,
                      (long long)m->handle, err.msg);
      free(h);
    }
  }
}

static void on_block_solved(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;

  if (err && o->vec.addr) {
    /* The other blocks wait at a barrier for this one: let them go. */
    struct spmvd_split_ctl *ctl = o->vec.addr;
    atomic_store(&ctl->abort, 1);
  }
  if (rep && !err && !o->held)
    o->held = json_deep_copy(rep);
  if (!block_answered(o, err))
    return;
  if (o->split_done)
    o->split_done(o->split_done_arg);
  o->split_done = NULL;
  if (o->block_err.code != 0 || !o->held) {
    struct spmv_error e = o->block_err;
    if (e.code == 0)
      spmv_error_set(&e, SPMV_ENOMEM, "out of memory");
    spmvd_op_fail(o, &e);
    return;
  }
  json_t *msg = o->held;
  o->held = NULL;
  const char *why = json_string_value(json_object_get(msg, "reason"));
  if (why && strcmp(why, "cancelled") == 0)
    spmvd_log_info("matrix %lld: its split solve was cancelled after %lld "
                   "iterations%s", (long long)o->handle,
                   (long long)json_integer_value(json_object_get(msg, "iterations")),
                   o->c->closing ? " (its client went)" : "");
  json_object_del(msg, "seq");
  json_object_del(msg, "ok");
  json_object_set_new(msg, "id", json_integer(o->id));
  json_object_set_new(msg, "ok", json_true());
  if (o->split_xvec) {
    /* Each block wrote its rows of the solution into its part of x. */
    struct spmvd_vector *xv = spmvd_vectors_find(&o->c->vecs, o->split_xvec);
    if (xv)
      xv->lost = 0;
    if (!o->c->closing)
      spmvd_conn_send(o->c, msg, NULL, 0, 0);
    json_decref(msg);
    spmvd_op_end(o);
    return;
  }
  size_t n = o->split_rows;
  double *x = (double *)((char *)o->vec.addr + SPMVD_SPLIT_CTL_BYTES) + n;
  if (o->dtype == SPMV_F32) {
    /* The solution in the matrix's type, as the client sent b. */
    float *xf = (float *)((char *)o->vec.addr + spmvd_split_f32_off(n));
    for (size_t i = 0; i < n; i++)
      xf[i] = (float)x[i];
  }
  if (!o->c->closing)
    spmvd_conn_send(o->c, msg, &o->vec,
                    o->dtype == SPMV_F32 ? spmvd_split_f32_off(n)
                                         : SPMVD_SPLIT_CTL_BYTES + n * sizeof(double),
                    n * spmv_dtype_size(o->dtype));
  json_decref(msg);
  spmvd_op_end(o);
}

void spmvd_ops_split_solve(struct spmvd_op *o, struct spmvd_matrix *m,
                           const struct spmvd_split_solve *ss,
                           void (*done)(void *), void *arg)
{
  size_t n = (size_t)m->rows, vb = n * sizeof(double);
  struct spmv_error err;

  o->handle = m->handle;
  o->dtype = m->dtype;
  o->split_rows = n;
  o->split_xvec = ss->x_vec;
  if (spmvd_shm_open(&o->vec, "spmvd-split", spmvd_split_shm_bytes(n), &err) < 0) {
    done(arg);
    spmvd_op_fail(o, &err);
    return;
  }
  o->split_done = done;
  o->split_done_arg = arg;
  double *base = (double *)((char *)o->vec.addr + SPMVD_SPLIT_CTL_BYTES);
  /* b and x0 in double, from the matrix's type. */
  for (int k = 0; k < 2; k++) {
    const void *v = k ? ss->x0 : ss->b;
    if (v && m->dtype == SPMV_F64)
      memcpy(base + k * n, v, vb);
    else if (v)
      for (size_t i = 0; i < n; i++)
        base[k * n + i] = ((const float *)v)[i];
  }
  int nb = m->nblocks;
  begin_blocks(o, nb);
  for (int k = 0; k < nb; k++) {
    json_t *msg = json_pack("{ss sI si si sf sf sI ss si sf sb sb sI}", "op",
                            "solve-block", "handle", (json_int_t)m->handle,
                            "blocks", nb, "block", k, "rtol", ss->rtol, "atol",
                            ss->atol, "maxiter", (json_int_t)ss->maxiter,
                            "method", ss->method, "restart", ss->restart,
                            "damping", ss->damping, "x0",
                            ss->x0 != NULL || ss->x_vec != 0, "history",
                            ss->history, "progress",
                            (json_int_t)(k == 0 ? ss->progress : 0));
    if (msg && ss->b_vec)
      json_object_set_new(msg, "b_vec", json_integer(ss->b_vec));
    if (msg && ss->x_vec)
      json_object_set_new(msg, "x_vec", json_integer(ss->x_vec));
    call_block_ev(o, m, k, msg, o->vec.fd, on_block_solved,
                  k == 0 ? on_block_progress : NULL, o);
  }
}

void spmvd_ops_split_cancel(struct spmvd_op *o)
{
  struct spmvd_split_ctl *ctl = o->vec.addr;

  if (ctl)
    atomic_store(&ctl->cancel, 1);
}
