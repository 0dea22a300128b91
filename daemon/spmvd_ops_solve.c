/* spmvd_ops_solve.c: the solve op (PROTOCOL.md, solve): checked here, run
 * on the worker, cancelled there when its client goes away. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_conn.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_vectors.h"
#include "spmvd_worker.h"

/* How often a running solve looks whether its client is still there. */
#define WATCH_MS 20

static const char *const methods[] = {"cg", "pcg-jacobi", "bicgstab", "gmres",
                                      "pagerank", NULL};

/* A request checked: what the worker is sent. */
struct solve_plan {
  struct spmvd_matrix *m;
  const char *method;
  int pagerank;
  struct spmvd_vector *b, *x;     /* device vectors, or NULL */
  int x0;
  double rtol, atol, damping;
  int64_t maxiter, restart, progress;
  int history;
  uint64_t b_bytes, x_bytes;      /* host b, host x (0 when in vectors) */
  uint64_t payload;               /* the request's payload bytes */
};

/* A solve in flight: the op, and the timer that watches its client. */
struct solve_run {
  struct spmvd_op *o;
  uv_timer_t watch;
  int64_t seq;                    /* the worker's call */
  int cancelled;
  int split;                      /* a split solve (its blocks' workers) */
  int ended;                      /* run_end called */
  size_t x_off, x_len;            /* the solution in the buffer */
  int64_t x_vec;                  /* or in this vector (0: none) */
};

/* Checks that req has only the solve's fields. */
static int only_fields(json_t *req, struct spmv_error *err)
{
  static const char *const keys[] = {"op", "id", "handle", "method", "b", "x",
                                     "x0", "rtol", "atol", "maxiter",
                                     "restart", "damping", "history",
                                     "progress", NULL};
  const char *k;
  json_t *v;

  json_object_foreach(req, k, v) {
    const char *const *p = keys;
    while (*p && strcmp(*p, k) != 0)
      p++;
    if (!*p)
      return spmv_error_set(err, SPMV_EPROTO, "solve: unknown field \"%s\"", k);
  }
  return 0;
}

/* An optional number field in [lo, hi] (open ends when lo_open/hi_open). */
static int opt_number(json_t *req, const char *key, double dflt, double lo,
                      int lo_open, double hi, int hi_open, double *out,
                      struct spmv_error *err)
{
  json_t *v = json_object_get(req, key);

  *out = dflt;
  if (!v)
    return 0;
  if (!json_is_number(v))
    return spmv_error_set(err, SPMV_EPROTO, "field \"%s\" is not a number", key);
  double d = json_number_value(v);
  if (!isfinite(d) || d < lo || (lo_open && d == lo) || d > hi ||
      (hi_open && d == hi))
    return spmv_error_set(err, SPMV_EINVAL, "%s is %g, must be in %c%g, %g%c",
                          key, d, lo_open ? '(' : '[', lo, hi,
                          hi_open ? ')' : ']');
  *out = d;
  return 0;
}

/* An optional integer field in [lo, hi]. */
static int opt_int(json_t *req, const char *key, int64_t dflt, int64_t lo,
                   int64_t hi, int64_t *out, struct spmv_error *err)
{
  json_t *v = json_object_get(req, key);

  *out = dflt;
  if (!v)
    return 0;
  if (!json_is_integer(v))
    return spmv_error_set(err, SPMV_EPROTO, "field \"%s\" is not an integer",
                          key);
  *out = json_integer_value(v);
  if (*out < lo || *out > hi)
    return spmv_error_set(err, SPMV_EINVAL, "%s is %lld, must be in [%lld, %lld]",
                          key, (long long)*out, (long long)lo, (long long)hi);
  return 0;
}

/* An optional boolean field. */
static int opt_bool(json_t *req, const char *key, int *out,
                    struct spmv_error *err)
{
  json_t *v = json_object_get(req, key);

  *out = 0;
  if (v && !json_is_boolean(v))
    return spmv_error_set(err, SPMV_EPROTO, "field \"%s\" is not a boolean",
                          key);
  *out = json_is_true(v);
  return 0;
}

/* Vector field key (b or x) of n values of the matrix's dtype, or none. */
static int opt_vector(struct spmvd_conn *c, json_t *req, const char *key,
                      const struct spmvd_matrix *m, int64_t n,
                      struct spmvd_vector **out, struct spmv_error *err)
{
  json_t *v = json_object_get(req, key);

  *out = NULL;
  if (!v)
    return 0;
  if (!json_is_integer(v))
    return spmv_error_set(err, SPMV_EPROTO, "field \"%s\" is not an integer",
                          key);
  *out = spmvd_vectors_find(&c->vecs, json_integer_value(v));
  if (!*out)
    return spmv_error_set(err, SPMV_ENOENT, "%s: no vector %lld on this "
                          "connection", key, (long long)json_integer_value(v));
  if ((*out)->dtype != m->dtype || (*out)->n != n)
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: vector %lld holds %lld %s values, matrix %lld "
                          "needs %lld %s", key, (long long)(*out)->id,
                          (long long)(*out)->n, spmv_dtype_name((*out)->dtype),
                          (long long)m->handle, (long long)n,
                          spmv_dtype_name(m->dtype));
  struct spmvd_split_layout l;
  spmvd_ops_split_layout(m, &l);
  if (!spmvd_split_layout_same(&l, &(*out)->split)) {
    if (m->nblocks <= 1)
      return spmv_error_set(err, SPMV_EINVAL, "%s: vector %lld is split over "
                            "%d workers, matrix %lld is not split: a solve's "
                            "vectors lie as its matrix", key,
                            (long long)(*out)->id, (*out)->split.n,
                            (long long)m->handle);
    if ((*out)->split.n <= 1)
      return spmv_error_set(err, SPMV_EINVAL, "%s: vector %lld is not split, "
                            "matrix %lld is split in %d blocks: make the "
                            "vector with vector-create's like %lld", key,
                            (long long)(*out)->id, (long long)m->handle,
                            m->nblocks, (long long)m->handle);
    return spmv_error_set(err, SPMV_EINVAL, "%s: vector %lld is split over "
                          "other rows or workers than matrix %lld", key,
                          (long long)(*out)->id, (long long)m->handle);
  }
  if ((*out)->lost)
    return spmv_error_set(err, SPMV_EWORKER,
                          "%s: vector %lld's values were lost when the device "
                          "worker restarted: upload or fill it again", key,
                          (long long)(*out)->id);
  return 0;
}

/* The method and the matrix (ready, the caller's, square). */
static int plan_method(struct spmvd_conn *c, json_t *req, struct solve_plan *p,
                       struct spmv_error *err)
{
  json_t *mv = json_object_get(req, "method");
  int i, rc;

  if (!json_is_string(mv))
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"method\" is missing or not a string");
  for (i = 0; methods[i] && strcmp(methods[i], json_string_value(mv)) != 0; i++)
    ;
  if (!methods[i])
    return spmv_error_set(err, SPMV_EINVAL, "method '%s' is not cg, "
                          "pcg-jacobi, bicgstab, gmres or pagerank",
                          json_string_value(mv));
  p->method = methods[i];
  p->pagerank = strcmp(p->method, "pagerank") == 0;
  if ((rc = spmvd_op_get_ready_matrix(c, req, &p->m, err)) < 0)
    return rc;
  if (p->m->rows != p->m->cols)
    return spmv_error_set(err, SPMV_EINVAL, "matrix %lld is %lld x %lld: %s "
                          "needs a square matrix", (long long)p->m->handle,
                          (long long)p->m->rows, (long long)p->m->cols,
                          p->method);
  if (p->m->wk != c->wk)
    return spmv_error_set(err, SPMV_EINVAL, "matrix %lld is resident on "
                          "worker %d, this connection's work on worker %d: "
                          "solve it from the connection that loaded it",
                          (long long)p->m->handle, p->m->wk, c->wk);
  return 0;
}

/* The numeric parameters, with PROTOCOL.md's defaults. */
static int plan_params(json_t *req, struct solve_plan *p,
                       struct spmv_error *err)
{
  int f32 = p->m->dtype == SPMV_F32, rc;
  double rt = p->pagerank ? (f32 ? 1e-6 : 1e-10) : (f32 ? 1e-5 : 1e-8);
  int64_t mi = p->pagerank ? 100 : (p->m->rows > 0 ? 10 * p->m->rows : 1);

  if ((rc = opt_number(req, "rtol", rt, 0, 0, 1, 1, &p->rtol, err)) < 0 ||
      (rc = opt_number(req, "atol", 0, 0, 0, HUGE_VAL, 0, &p->atol, err)) < 0 ||
      (rc = opt_number(req, "damping", 0.85, 0, 1, 1, 1, &p->damping, err)) < 0 ||
      (rc = opt_int(req, "maxiter", mi, 1, INT64_MAX / 2, &p->maxiter, err)) < 0 ||
      (rc = opt_int(req, "restart", 30, 1, 1000, &p->restart, err)) < 0 ||
      (rc = opt_int(req, "progress", 0, 1, INT64_MAX / 2, &p->progress, err)) < 0 ||
      (rc = opt_bool(req, "history", &p->history, err)) < 0 ||
      (rc = opt_bool(req, "x0", &p->x0, err)) < 0)
    return rc;
  if (p->pagerank && !(p->rtol > 0))
    return spmv_error_set(err, SPMV_EINVAL, "rtol is 0: pagerank stops on "
                          "the change's 1-norm falling to rtol");
  return 0;
}

/* Checks req (everything before anything runs) into p. */
static int plan_solve(struct spmvd_conn *c, json_t *req, struct solve_plan *p,
                      struct spmv_error *err)
{
  int rc;

  memset(p, 0, sizeof *p);
  if ((rc = only_fields(req, err)) < 0 || (rc = plan_method(c, req, p, err)) < 0 ||
      (rc = plan_params(req, p, err)) < 0)
    return rc;
  if (p->pagerank && json_object_get(req, "b"))
    return spmv_error_set(err, SPMV_EINVAL, "pagerank takes no b");
  if ((rc = opt_vector(c, req, "b", p->m, p->m->rows, &p->b, err)) < 0 ||
      (rc = opt_vector(c, req, "x", p->m, p->m->cols, &p->x, err)) < 0)
    return rc;
  if (p->b && p->b == p->x)
    return spmv_error_set(err, SPMV_EINVAL, "b and x are the same vector %lld",
                          (long long)p->b->id);
  size_t vsz = spmv_dtype_size(p->m->dtype);
  p->b_bytes = p->pagerank || p->b ? 0 : (uint64_t)p->m->rows * vsz;
  p->x_bytes = p->x ? 0 : (uint64_t)p->m->cols * vsz;
  p->payload = p->b_bytes + (p->x0 ? p->x_bytes : 0);
  return 0;
}

/* Checks the request before its payload is read: b, then x0. */
int spmvd_ops_begin_solve(struct spmvd_conn *c, json_t *req, uint64_t plen,
                          size_t *shm, struct spmv_error *err)
{
  struct solve_plan p;
  int rc = plan_solve(c, req, &p, err);

  if (rc < 0)
    return rc;
  if (plen != p.payload)
    return spmv_error_set(err, SPMV_EPROTO,
                          "payload is %llu bytes, but b (%llu) and x0 (%llu) "
                          "need %llu", (unsigned long long)plen,
                          (unsigned long long)p.b_bytes,
                          (unsigned long long)(p.x0 ? p.x_bytes : 0),
                          (unsigned long long)p.payload);
  uint64_t size = p.b_bytes + p.x_bytes;
  if ((rc = spmvd_ops_check_mem(c, spmvd_conn_vec_growth(c, size), err)) < 0)
    return rc;
  *shm = (size_t)size;
  c->payload_vec = *shm > 0;
  return 0;
}

/* --- the run --- */

static void on_watch_closed(uv_handle_t *h)
{
  free(h->data);
}

/* Ends the watch; the run is freed once the timer is closed. */
static void run_end(struct solve_run *r)
{
  r->ended = 1;
  uv_timer_stop(&r->watch);
  uv_close((uv_handle_t *)&r->watch, on_watch_closed);
}

/*
 * The connection of a running solve is not read (a request is being
 * served), so its client's close or cancel would only be seen after the
 * reply: the watch looks at the socket every WATCH_MS.  A hang-up closes
 * the connection and has the worker drop the solve; a cancel frame of
 * this solve is answered and has the worker stop it at its next
 * iteration, replying with reason "cancelled".  Either way the worker is
 * free at once.
 */
static void on_watch(uv_timer_t *t)
{
  struct solve_run *r = t->data;
  struct spmvd_conn *c = r->o->c;
  int64_t cid;
  int gone;

  if (r->cancelled)
    return;
  gone = c->closing || spmvd_conn_peer_gone(c);
  if (!gone && !spmvd_conn_take_cancel(c, r->o->id, &cid))
    return;
  r->cancelled = 1;
  if (gone && !c->closing)
    spmvd_conn_close(c);
  if (!gone)
    spmvd_op_reply(c, cid, json_pack("{sb}", "cancelled", 1));
  if (r->split) {
    spmvd_ops_split_cancel(r->o);
    return;
  }
  spmvd_worker_post(spmvd_op_worker(r->o),
                    json_pack("{ss sI sb}", "op", "cancel", "target",
                              (json_int_t)r->seq, "drop", gone));
}

void spmvd_ops_solve_progress(struct spmvd_op *o, json_t *ev)
{
  json_t *e;

  if (o->c->closing)
    return;
  e = json_pack("{sI ss ss sO sO sO sO}", "id", (json_int_t)o->id, "event",
                "progress", "stage", "solve", "done", json_object_get(ev, "done"),
                "total", json_object_get(ev, "total"), "residual",
                json_object_get(ev, "residual"), "elapsed_s",
                json_object_get(ev, "elapsed_s"));
  if (e)
    spmvd_conn_send(o->c, e, NULL, 0, 0);
  json_decref(e);
}

/* A progress event of the worker's, relayed under the client's id. */
static void on_event(void *ctx, json_t *ev)
{
  struct solve_run *r = ctx;

  spmvd_ops_solve_progress(r->o, ev);
}

/* A split solve's blocks have all answered. */
static void split_run_done(void *arg)
{
  run_end(arg);
}

/* The worker's answer: the result, and x in the payload unless it is in a
 * vector. */
static void on_solved(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct solve_run *r = ctx;
  struct spmvd_op *o = r->o;
  struct spmvd_conn *c = o->c;

  run_end(r);
  if (spmvd_op_buffers_answered(o, err))
    return;
  struct spmvd_vector *xv = r->x_vec ? spmvd_vectors_find(&c->vecs, r->x_vec)
                                     : NULL;
  if (xv)
    xv->lost = 0;
  json_t *msg = json_deep_copy(rep);
  json_object_del(msg, "seq");
  json_object_set_new(msg, "id", json_integer(o->id));
  spmvd_op_send_buffer(o, msg, r->x_off, r->x_len);
  json_decref(msg);
  spmvd_op_end(o);
}

/* The worker's message for plan p; the buffer's fields set by the caller. */
static json_t *solve_message(const struct solve_plan *p)
{
  json_t *vecs = json_array();
  struct spmvd_vector *vs[2] = {p->b, p->x};

  for (int i = 0; i < 2; i++)
    if (vs[i])
      json_array_append_new(vecs, json_pack("{sI ss sI}", "id",
                                            (json_int_t)vs[i]->id, "dtype",
                                            spmv_dtype_name(vs[i]->dtype), "n",
                                            (json_int_t)vs[i]->n));
  json_t *msg = json_pack(
      "{ss sI ss sf sf sI sI sf sb sI so sb sI sI}", "op", "solve", "handle",
      (json_int_t)p->m->handle, "method", p->method, "rtol", p->rtol, "atol",
      p->atol, "maxiter", (json_int_t)p->maxiter, "restart",
      (json_int_t)p->restart, "damping", p->damping, "history", p->history,
      "progress", (json_int_t)p->progress, "vectors", vecs, "x0", p->x0,
      "b_off", (json_int_t)0, "x_off", (json_int_t)p->b_bytes);
  if (msg && p->b)
    json_object_set_new(msg, "b_vec", json_integer(p->b->id));
  if (msg && p->x)
    json_object_set_new(msg, "x_vec", json_integer(p->x->id));
  return msg;
}

/* Fails request id on c before an op exists. */
static void refuse(struct spmvd_conn *c, int64_t id, struct spmv_error *err)
{
  c->payload_vec = 0;
  spmvd_conn_send_error(c, id, err);
  spmvd_conn_done(c);
}

/* Attaches the payload buffer to msg (its fd into *fd, -1 when the worker
 * has it). */
static void attach_buffer(struct spmvd_conn *c, struct spmvd_op *o, json_t *msg,
                          struct spmvd_shm *payload, int gen, int *fd)
{
  int64_t id = 0;
  size_t size = 0;

  *fd = -1;
  if (c->payload_vec) {
    o->conn_vec = 1;
    c->vec_users++;
    id = c->vec_id;
    size = c->vec.size;
    *fd = c->vec_gen != gen ? c->vec.fd : -1;
    c->vec_gen = gen;
  } else if (payload->fd >= 0) {
    /* The kept buffer was busy: a buffer of this request's own. */
    o->vec = *payload;
    spmvd_shm_init(payload);
    id = o->buf_private = spmvd_conn_new_buf_id();
    size = o->vec.size;
    *fd = o->vec.fd;
  }
  if (id > 0) {
    json_object_set_new(msg, "buf", json_integer(id));
    json_object_set_new(msg, "buf_size", json_integer((json_int_t)size));
    json_object_set_new(msg, "buf_fd", json_boolean(*fd >= 0));
  }
}

/* solve: checked again (what it names may have gone meanwhile), then run
 * on the worker, watched. */
void spmvd_ops_run_solve(struct spmvd_conn *c, json_t *req, int64_t id,
                         struct spmvd_shm *payload)
{
  struct spmv_error err;
  struct solve_plan p;
  int gen = spmvd_worker_restarts(spmvd_conn_worker(c)), fd;

  spmv_error_clear(&err);
  if (plan_solve(c, req, &p, &err) < 0) {
    refuse(c, id, &err);
    return;
  }
  if (p.m->nblocks > 1) {
    /* b, then x0, where begin_solve had the payload read. */
    const char *buf = c->payload_vec ? c->vec.addr : payload->addr;
    struct solve_run *sr = calloc(1, sizeof *sr);
    struct spmvd_op *so = sr ? spmvd_op_new(c, id, "solve") : NULL;
    if (!so) {
      free(sr);
      spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
      refuse(c, id, &err);
      return;
    }
    sr->o = so;
    sr->split = 1;
    uv_timer_init(c->pipe.loop, &sr->watch);
    sr->watch.data = sr;
    struct spmvd_split_solve ss = {p.method, p.b_bytes ? buf : NULL,
                                   p.x0 && p.x_bytes ? buf + p.b_bytes : NULL,
                                   p.rtol, p.atol, p.maxiter, (int)p.restart,
                                   p.damping, p.history, p.progress,
                                   p.b ? p.b->id : 0, p.x ? p.x->id : 0};
    spmvd_ops_split_solve(so, p.m, &ss, split_run_done, sr);
    if (!sr->ended)  /* the blocks may all have answered already */
      uv_timer_start(&sr->watch, on_watch, WATCH_MS, WATCH_MS);
    return;
  }
  struct solve_run *r = calloc(1, sizeof *r);
  struct spmvd_op *o = r ? spmvd_op_new(c, id, "solve") : NULL;
  json_t *msg = o ? solve_message(&p) : NULL;
  if (!msg) {
    if (o)
      spmvd_op_end(o);
    free(r);
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    refuse(c, id, &err);
    return;
  }
  r->o = o;
  r->x_off = p.b_bytes;
  r->x_len = p.x_bytes;
  r->x_vec = p.x ? p.x->id : 0;
  attach_buffer(c, o, msg, payload, gen, &fd);
  uv_timer_init(c->pipe.loop, &r->watch);
  r->watch.data = r;
  if (spmvd_op_worker_call(o, msg, &fd, fd >= 0, on_solved, on_event,
                        r, &err) < 0) {
    o->buf_private = 0;
    run_end(r);
    spmvd_op_fail(o, &err);
    return;
  }
  r->seq = spmvd_worker_last_seq(spmvd_conn_worker(c));
  uv_timer_start(&r->watch, on_watch, WATCH_MS, WATCH_MS);
}
