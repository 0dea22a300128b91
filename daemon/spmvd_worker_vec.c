/* spmvd_worker_vec.c: spmvd-worker's device vectors and the lists of
 * operations on them. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_backend.h"
#include "spmvd_log.h"
#include "spmvd_split_shm.h"
#include "spmvd_worker_impl.h"

/*
 * The front end has checked a list against PROTOCOL.md (ownership, types,
 * lengths, result references) and sends it translated:
 *
 *   {op:"ops", vectors:[{id, dtype, n}], bufs:[{buf, size, fd:bool}],
 *    payload_buf, down_base, handles:[...], nres,
 *    steps:[{k:"spmv", handle, x, y, alpha, beta}
 *           | {k:"upload"|"download", x, buf, off}
 *           | {k:"bspmv", handle, x, y, alpha, beta, buf}
 *           | {k:"fill"|"copy"|"scale"|"axpby"|"mul"|"dot"|"nrm2",
 *              x, y?, z?, a?:{c, mul, div}, b?, slot?}]}
 *
 * with the fds of the bufs whose fd is true, in order.  Vectors are made
 * here when a list first names them (after a respawn the front end knows
 * which ones hold no values); buffer 0 is the request's payload buffer,
 * downloads into it start at down_base.  The steps are queued on the
 * backend, which waits for the device once, in finish().
 *
 * A list over a split matrix's blocks (spmvd_ops_vec_split.c) names this
 * block's rows of each vector and carries sync {blocks, block, rows, buf}:
 * buf is the memfd the blocks share (spmvd_split_shm.h).  Before each
 * product a download marked publish puts the block's rows of x there and
 * waits for the others' (spmvd_wk_list_sync_step); the bspmv after it is
 * this block's rows of the product, its halo gathered from that whole x
 * (at off); each dot and norm is summed over the blocks before the steps
 * after it run.
 */

struct wvec *spmvd_wk_vec(struct worker *w, int64_t id)
{
  for (struct wvec *v = w->vecs; v; v = v->next)
    if (v->id == id)
      return v;
  return NULL;
}

/* Makes vector {id, dtype, n} (j borrowed) exist. */
int spmvd_wk_vec_ensure(struct worker *w, json_t *j, struct spmv_error *err)
{
  json_int_t id, n;
  const char *dts;
  enum spmv_dtype dt;
  struct wvec *v;
  int rc;

  if (json_unpack(j, "{sI ss sI}", "id", &id, "dtype", &dts, "n", &n) < 0 ||
      spmvd_wk_parse_dtype(dts, &dt, err) < 0 || n < 0)
    return spmv_error_set(err, SPMV_EPROTO, "bad vector in a worker message");
  if (spmvd_wk_vec(w, id))
    return 0;
  if (!w->ops->vec_new)
    return spmv_error_set(err, SPMV_EUNSUPPORTED,
                          "the %s backend has no device vectors", w->ops->name);
  if (!(v = calloc(1, sizeof *v)))
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = w->ops->vec_new(w->be, dt, (size_t)n, &v->bv, err);
  if (rc < 0) {
    free(v);
    return rc;
  }
  v->id = id;
  v->n = n;
  v->dtype = dt;
  v->next = w->vecs;
  w->vecs = v;
  return 0;
}

static void vec_drop(struct worker *w, int64_t id)
{
  for (struct wvec **p = &w->vecs; *p; p = &(*p)->next) {
    struct wvec *v = *p;
    if (v->id != id)
      continue;
    *p = v->next;
    w->ops->vec_free(w->be, v->bv);
    free(v);
    return;
  }
}

void spmvd_wk_vec_free_all(struct worker *w)
{
  while (w->vecs)
    vec_drop(w, w->vecs->id);
}

int spmvd_wk_op_vnew(struct worker *w, json_t *req, json_t **rep,
                     struct spmv_error *err)
{
  json_t *vs = json_object_get(req, "vectors"), *j;
  size_t i;
  int rc;

  json_array_foreach(vs, i, j)
    if ((rc = spmvd_wk_vec_ensure(w, j, err)) < 0)
      return rc;
  *rep = json_object();
  return 0;
}

void spmvd_wk_op_vfree(struct worker *w, json_t *req)
{
  json_t *ids = json_object_get(req, "ids"), *j;
  size_t i;

  json_array_foreach(ids, i, j)
    vec_drop(w, json_integer_value(j));
}

/* --- a list --- */

/* The buffers a list names, mapped. */
#define LIST_MAX_BUFS SPMVD_IPC_MAX_FDS
struct list_bufs {
  int64_t id[LIST_MAX_BUFS];
  struct spmvd_shm *shm[LIST_MAX_BUFS];
  int n;
  int64_t payload;      /* payload_buf */
  size_t down_base;
};

static int map_bufs(struct worker *w, json_t *req, int *fds, int nfds,
                    struct list_bufs *lb, struct spmv_error *err)
{
  json_t *bufs = json_object_get(req, "bufs"), *j;
  json_int_t pb = 0, db = 0;
  int nextfd = 0;
  size_t i;

  if (json_unpack(req, "{sI sI}", "payload_buf", &pb, "down_base", &db) < 0 ||
      json_array_size(bufs) > LIST_MAX_BUFS || db < 0)
    return spmv_error_set(err, SPMV_EPROTO, "bad ops message");
  lb->n = 0;
  lb->payload = pb;
  lb->down_base = (size_t)db;
  json_array_foreach(bufs, i, j) {
    json_int_t id, size;
    int hasfd;
    if (json_unpack(j, "{sI sI sb}", "buf", &id, "size", &size, "fd", &hasfd) < 0 ||
        size < 0 || (hasfd && nextfd >= nfds))
      return spmv_error_set(err, SPMV_EPROTO, "bad buffer in an ops message");
    int fd = hasfd ? fds[nextfd] : -1;
    if (hasfd)
      fds[nextfd++] = -1;
    lb->shm[lb->n] = spmvd_wk_buf_get(w, id, fd, (size_t)size, 0, err);
    if (!lb->shm[lb->n])
      return err->code;
    lb->id[lb->n++] = id;
  }
  return 0;
}

/* The host address of n bytes at off of buffer id (0: the payload's). */
static void *buf_at(const struct list_bufs *lb, int64_t id, size_t off,
                    size_t n, int down, struct spmv_error *err)
{
  if (id == 0) {
    id = lb->payload;
    if (down)
      off += lb->down_base;
  }
  for (int i = 0; i < lb->n; i++) {
    if (lb->id[i] != id)
      continue;
    if (off > lb->shm[i]->size || n > lb->shm[i]->size - off)
      break;
    return (char *)lb->shm[i]->addr + off;
  }
  spmv_error_set(err, SPMV_EPROTO, "a transfer of %zu bytes at %zu lies "
                 "outside vector buffer %lld", n, off, (long long)id);
  return NULL;
}

/* A scalar {c, mul:[...], div:[...]} (j borrowed; absent: 0). */
static int get_scalar(json_t *j, struct spmvd_scalar *s, struct spmv_error *err)
{
  json_t *mul = json_object_get(j, "mul"), *div = json_object_get(j, "div");
  json_t *t;
  size_t i;

  memset(s, 0, sizeof *s);
  if (!j)
    return 0;
  if (!json_is_number(json_object_get(j, "c")) ||
      json_array_size(mul) > SPMVD_SCALAR_MAX_TERMS ||
      json_array_size(div) > SPMVD_SCALAR_MAX_TERMS)
    return spmv_error_set(err, SPMV_EPROTO, "bad scalar in an ops message");
  s->c = json_number_value(json_object_get(j, "c"));
  json_array_foreach(mul, i, t)
    s->mul[s->nmul++] = (int)json_integer_value(t);
  json_array_foreach(div, i, t)
    s->div[s->ndiv++] = (int)json_integer_value(t);
  for (i = 0; i < (size_t)s->nmul; i++)
    if (s->mul[i] < 0 || s->mul[i] >= SPMVD_MAX_RESULTS)
      return spmv_error_set(err, SPMV_EPROTO, "bad scalar in an ops message");
  for (i = 0; i < (size_t)s->ndiv; i++)
    if (s->div[i] < 0 || s->div[i] >= SPMVD_MAX_RESULTS)
      return spmv_error_set(err, SPMV_EPROTO, "bad scalar in an ops message");
  return 0;
}

/* The backend's vector of field key of step s (NULL, no error, when the
 * step has none). */
static int step_vec(struct worker *w, json_t *s, const char *key,
                    struct spmvd_bvector **out, struct spmv_error *err)
{
  json_t *j = json_object_get(s, key);
  struct wvec *v;

  *out = NULL;
  if (!j)
    return 0;
  if (!(v = spmvd_wk_vec(w, json_integer_value(j))))
    return spmv_error_set(err, SPMV_EPROTO, "unknown vector %lld",
                          (long long)json_integer_value(j));
  *out = v->bv;
  return 0;
}

static const struct {
  const char *name;
  enum spmvd_vop op;
} vops[] = {
  {"fill", SPMVD_VOP_FILL}, {"copy", SPMVD_VOP_COPY},
  {"scale", SPMVD_VOP_SCALE}, {"axpby", SPMVD_VOP_AXPBY},
  {"mul", SPMVD_VOP_MUL}, {"dot", SPMVD_VOP_DOT}, {"nrm2", SPMVD_VOP_NRM2},
};

/* Queues one step. */
static int run_step(struct worker *w, json_t *s, const struct list_bufs *lb,
                    struct spmv_error *err)
{
  const char *k = json_string_value(json_object_get(s, "k"));
  struct spmvd_bvector *x, *y;
  int rc;

  if (!k)
    return spmv_error_set(err, SPMV_EPROTO, "a step without its kind");
  if ((rc = step_vec(w, s, "x", &x, err)) < 0 ||
      (rc = step_vec(w, s, "y", &y, err)) < 0)
    return rc;
  if (strcmp(k, "spmv") == 0) {
    struct wmatrix *m = spmvd_wk_find(
        w, json_integer_value(json_object_get(s, "handle")));
    if (!m || !m->bm)
      return spmv_error_set(err, SPMV_ENOENT, "no resident matrix %lld",
                            (long long)json_integer_value(
                                json_object_get(s, "handle")));
    return w->ops->vec_spmv(w->be, m->bm,
                            json_number_value(json_object_get(s, "alpha")), x,
                            json_number_value(json_object_get(s, "beta")), y,
                            err);
  }
  if (strcmp(k, "bspmv") == 0) {
    json_int_t h = json_integer_value(json_object_get(s, "handle"));
    struct wmatrix *m = spmvd_wk_find(w, h);
    if (!m || !m->block)
      return spmv_error_set(err, SPMV_ENOENT, "no block of matrix %lld",
                            (long long)h);
    if (!x || !y)
      return spmv_error_set(err, SPMV_EPROTO, "a bspmv step without x or y");
    const void *xall = buf_at(lb, json_integer_value(json_object_get(s, "buf")),
                              (size_t)json_integer_value(json_object_get(s, "off")),
                              (size_t)m->A.cols * spmv_dtype_size(m->dtype),
                              0, err);
    if (!xall)
      return err->code;
    return spmvd_wk_block_vec_spmv(w, m, json_number_value(json_object_get(s, "alpha")),
                                   x, json_number_value(json_object_get(s, "beta")),
                                   y, xall, err);
  }
  if (strcmp(k, "upload") == 0 || strcmp(k, "download") == 0) {
    int down = k[0] == 'd';
    json_int_t buf = json_integer_value(json_object_get(s, "buf"));
    json_int_t off = json_integer_value(json_object_get(s, "off"));
    size_t bytes = (size_t)json_integer_value(json_object_get(s, "bytes"));
    if (!x)
      return spmv_error_set(err, SPMV_EPROTO, "a transfer without x");
    void *at = buf_at(lb, buf, (size_t)off, bytes, down, err);
    if (!at)
      return err->code;
    return down ? w->ops->vec_download(w->be, x, at, err)
                : w->ops->vec_upload(w->be, x, at, err);
  }
  struct spmvd_vop_args a;
  memset(&a, 0, sizeof a);
  size_t i;
  for (i = 0; i < sizeof vops / sizeof vops[0]; i++)
    if (strcmp(k, vops[i].name) == 0)
      break;
  if (i == sizeof vops / sizeof vops[0])
    return spmv_error_set(err, SPMV_EPROTO, "unknown step kind '%s'", k);
  a.op = vops[i].op;
  a.x = x;
  a.y = y;
  a.slot = (int)json_integer_value(json_object_get(s, "slot"));
  if ((rc = step_vec(w, s, "z", &a.z, err)) < 0 ||
      (rc = get_scalar(json_object_get(s, "a"), &a.a, err)) < 0 ||
      (rc = get_scalar(json_object_get(s, "b"), &a.b, err)) < 0)
    return rc;
  if (!a.x || a.slot < 0 || a.slot >= SPMVD_MAX_RESULTS)
    return spmv_error_set(err, SPMV_EPROTO, "bad '%s' step", k);
  return w->ops->vec_op(w->be, &a, err);
}

int spmvd_wk_op_ops(struct worker *w, json_t *req, int *fds, int nfds,
                    json_t **rep, struct spmv_error *err)
{
  json_t *vs = json_object_get(req, "vectors"), *steps = json_object_get(req, "steps");
  json_t *j;
  struct list_bufs lb = {0};
  double res[SPMVD_MAX_RESULTS];
  json_int_t nres = 0;
  size_t i;
  int rc = 0;

  json_unpack(req, "{sI}", "nres", &nres);
  if (!json_is_array(steps) || nres < 0 || nres > SPMVD_MAX_RESULTS)
    return spmv_error_set(err, SPMV_EPROTO, "bad ops message");
  json_array_foreach(vs, i, j)
    if ((rc = spmvd_wk_vec_ensure(w, j, err)) < 0)
      return rc;
  struct spmvd_wk_list_sync sync, *sy = NULL;
  json_t *sj = json_object_get(req, "sync");
  rc = map_bufs(w, req, fds, nfds, &lb, err);
  if (rc == 0 && sj) {
    json_int_t sb = json_integer_value(json_object_get(sj, "buf"));
    void *at = buf_at(&lb, sb, 0, SPMVD_SPLIT_CTL_BYTES, 0, err);
    size_t size = 0;
    for (int b = 0; b < lb.n; b++)
      if (lb.id[b] == sb)
        size = lb.shm[b]->size;
    if (!at)
      rc = err->code;
    else if ((rc = spmvd_wk_list_sync_init(&sync, w, req, at, size, err)) == 0)
      sy = &sync;
  }
  if (rc < 0) {
    /* Before any barrier: the others are let go. */
    if (sj && sy == NULL && lb.n > 0) {
      void *at = buf_at(&lb, json_integer_value(json_object_get(sj, "buf")), 0,
                        SPMVD_SPLIT_CTL_BYTES, 0, &(struct spmv_error){0});
      if (at)
        atomic_store(&((struct spmvd_split_ctl *)at)->abort, 1);
    }
    return rc;
  }
  memset(res, 0, sizeof res);
  json_array_foreach(steps, i, j) {
    if ((rc = run_step(w, j, &lb, err)) < 0 ||
        (sy && (rc = spmvd_wk_list_sync_step(sy, j, res, (int)nres, err)) < 0))
      break;
  }
  if (rc < 0 && sy)
    spmvd_wk_list_sync_fail(sy);
  /* Whatever was queued before a failure is waited for: its host memory
   * is the front end's again after the reply. */
  struct spmv_error ferr;
  int frc = w->ops->finish(w->be, res, (int)nres, rc < 0 ? &ferr : err);
  if (rc < 0) {
    if (frc == SPMV_EGPU_STICKY)
      *err = ferr, rc = frc;
    return rc;
  }
  if (frc < 0)
    return frc;
  json_t *r = json_array();
  for (i = 0; i < (size_t)nres; i++)
    json_array_append_new(r, spmvd_ipc_real(res[i]));
  *rep = json_pack("{so}", "results", r);
  return 0;
}
