/* spmvd_ops_vec.c: the device-vector op "ops" (a list of operations),
 * checked here and run on the worker (vector-create and vector-free are
 * spmvd_ops_vec_life.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_backend.h"
#include "spmvd_conn.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_vectors.h"
#include "spmvd_worker.h"

/* PROTOCOL.md's bounds of one list. */
#define MAX_STEPS 256
#define MAX_MEMFDS 3   /* + the payload buffer: SPMVD_IPC_MAX_FDS */

/* A vector a list names, and whether the list has written it yet. */
struct use {
  struct spmvd_vector *v;
  int defined;
  int written;
};

/* A list checked and translated for the worker. */
struct plan {
  json_t *steps;                 /* the worker's steps (owned) */
  json_t *handles;               /* the matrices named (owned) */
  struct spmvd_attach *att[MAX_MEMFDS];
  int natt;
  uint64_t up, down;             /* payload bytes of uploads, downloads */
  int nres;
  struct use use[3 * MAX_STEPS];
  int nuse;
  struct spmvd_split_layout split; /* the split every vector and matrix
                                  named lies in (n > 1), else none */
  int split_step;                /* the first step to name a split one */
  int plain_step;                /* the first to name one on c's worker */
};

static void plan_fini(struct plan *p)
{
  json_decref(p->steps);
  json_decref(p->handles);
  p->steps = p->handles = NULL;
}

/* "ops[3] (axpby): " before every message about a step. */
#define STEP_FMT "ops[%d] (%s): "

/* --- the steps' fields --- */

/* spmvd_op_only_keys() for step i of op. */
static int step_keys(json_t *s, int i, const char *op, const char *keys,
                     struct spmv_error *err)
{
  char where[64];

  snprintf(where, sizeof where, STEP_FMT, i, op);
  return spmvd_op_only_keys(s, where, keys, err);
}

/* Step i names a matrix or vector (what, id) lying in split l (NULL: on
 * c's worker): a list runs on one or the other, never both, and over
 * one split. */
static int note_layout(struct plan *p, const struct spmvd_split_layout *l,
                       int i, const char *op, const char *what, int64_t id,
                       struct spmv_error *err)
{
  if (!l) {
    if (p->plain_step < 0)
      p->plain_step = i;
    if (p->split_step < 0)
      return 0;
    return spmv_error_set(err, SPMV_EINVAL, STEP_FMT "%s %lld is not split, "
                          "and ops[%d] names one split over %d workers: a "
                          "list's vectors and matrices are all split alike "
                          "or none is (vector-create \"like\")", i, op, what,
                          (long long)id, p->split_step, p->split.n);
  }
  if (p->plain_step >= 0)
    return spmv_error_set(err, SPMV_EINVAL, STEP_FMT "%s %lld is split over "
                          "%d workers, and ops[%d] names one that is not: a "
                          "list's vectors and matrices are all split alike "
                          "or none is (vector-create \"like\")", i, op, what,
                          (long long)id, l->n, p->plain_step);
  if (p->split_step < 0) {
    p->split_step = i;
    p->split = *l;
    return 0;
  }
  if (spmvd_split_layout_same(&p->split, l))
    return 0;
  return spmv_error_set(err, SPMV_EINVAL, STEP_FMT "%s %lld is split over "
                        "other rows or workers than what ops[%d] names: a "
                        "list's vectors and matrices are all split alike",
                        i, op, what, (long long)id, p->split_step);
}

/* The use entry of v in p, added when new. */
static struct use *use_of(struct plan *p, struct spmvd_vector *v)
{
  for (int i = 0; i < p->nuse; i++)
    if (p->use[i].v == v)
      return &p->use[i];
  struct use *u = &p->use[p->nuse++];
  u->v = v;
  u->defined = !v->lost;
  u->written = 0;
  return u;
}

/* Vector field key of step s: reads (the list needs its values) and/or
 * writes it. */
static int get_vec(struct spmvd_conn *c, struct plan *p, json_t *s, int i,
                   const char *op, const char *key, int reads, int writes,
                   struct spmvd_vector **out, struct spmv_error *err)
{
  json_t *j = json_object_get(s, key);
  struct spmvd_vector *v;

  if (!json_is_integer(j))
    return spmv_error_set(err, SPMV_EPROTO,
                          STEP_FMT "field \"%s\" is missing or not an integer",
                          i, op, key);
  v = spmvd_vectors_find(&c->vecs, json_integer_value(j));
  if (!v)
    return spmv_error_set(err, SPMV_ENOENT,
                          STEP_FMT "no vector %lld on this connection", i, op,
                          (long long)json_integer_value(j));
  int rc = note_layout(p, v->split.n > 1 ? &v->split : NULL, i, op, "vector",
                       v->id, err);
  if (rc < 0)
    return rc;
  struct use *u = use_of(p, v);
  if (reads && !u->defined)
    return spmv_error_set(err, SPMV_EWORKER,
                          STEP_FMT "vector %lld's values were lost when the "
                          "device worker restarted: upload or fill it again",
                          i, op, (long long)v->id);
  if (writes)
    u->defined = u->written = 1;
  *out = v;
  return 0;
}

/* A scalar field: a number, or {c, mul:[...], div:[...]} of the results
 * computed before step i; *out is the worker's {c, mul, div}. */
static int get_scalar(json_t *s, int i, const char *op, const char *key,
                      int nres, json_t **out, double *konst,
                      struct spmv_error *err)
{
  json_t *j = json_object_get(s, key), *c = NULL, *mul = NULL, *div = NULL;
  const char *k;
  json_t *v;

  *out = NULL;
  *konst = 0;
  if (json_is_number(j)) {
    *konst = json_number_value(j);
    *out = json_pack("{sf s[] s[]}", "c", *konst, "mul", "div");
    return *out ? 0 : spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  }
  if (!json_is_object(j))
    return spmv_error_set(err, SPMV_EPROTO,
                          STEP_FMT "field \"%s\" is missing or not a number "
                          "or an expression", i, op, key);
  json_object_foreach(j, k, v) {
    if (strcmp(k, "c") == 0 && json_is_number(v))
      c = v;
    else if ((strcmp(k, "mul") == 0 || strcmp(k, "div") == 0) &&
             json_is_array(v) && json_array_size(v) <= SPMVD_SCALAR_MAX_TERMS)
      *(k[0] == 'm' ? &mul : &div) = v;
    else
      return spmv_error_set(err, SPMV_EPROTO,
                            STEP_FMT "\"%s\": \"%s\" is not c (a number), mul "
                            "or div (arrays of at most %d result numbers)",
                            i, op, key, k, SPMVD_SCALAR_MAX_TERMS);
  }
  json_t *terms[2] = {mul, div};
  for (int t = 0; t < 2; t++) {
    size_t n;
    json_array_foreach(terms[t], n, v) {
      if (!json_is_integer(v) || json_integer_value(v) < 0 ||
          json_integer_value(v) >= nres)
        return spmv_error_set(err, SPMV_EPROTO,
                              STEP_FMT "\"%s\" names a result that no "
                              "earlier step computes (%d so far)",
                              i, op, key, nres);
    }
  }
  *konst = c ? json_number_value(c) : 1.0;
  if (mul || div)
    *konst = 1.0;  /* not a constant: only the constant 0 matters */
  *out = json_pack("{sf so so}", "c", c ? json_number_value(c) : 1.0, "mul",
                   mul ? json_deep_copy(mul) : json_array(), "div",
                   div ? json_deep_copy(div) : json_array());
  return *out ? 0 : spmv_error_set(err, SPMV_ENOMEM, "out of memory");
}

/* Vectors x and y (and z) of one dtype and length. */
static int same_shape(int i, const char *op, struct spmvd_vector *x,
                      struct spmvd_vector *y, const char *yn,
                      struct spmv_error *err)
{
  if (x->dtype != y->dtype)
    return spmv_error_set(err, SPMV_EINVAL, STEP_FMT "x is %s, %s %s", i, op,
                          spmv_dtype_name(x->dtype), yn,
                          spmv_dtype_name(y->dtype));
  if (x->n != y->n)
    return spmv_error_set(err, SPMV_EINVAL,
                          STEP_FMT "x has %lld values, %s %lld", i, op,
                          (long long)x->n, yn, (long long)y->n);
  return 0;
}

/* --- the steps --- */

/* spmv: y = alpha*A*x + beta*y. */
static int step_spmv(struct spmvd_conn *c, struct plan *p, json_t *s, int i,
                     json_t **w, struct spmv_error *err)
{
  struct spmvd_vector *x, *y;
  struct spmvd_matrix *m;
  json_t *a = json_object_get(s, "alpha"), *b = json_object_get(s, "beta");
  int rc;

  if ((rc = step_keys(s, i, "spmv", "handle x y alpha beta", err)) < 0)
    return rc;
  if ((a && !json_is_number(a)) || (b && !json_is_number(b)))
    return spmv_error_set(err, SPMV_EPROTO,
                          STEP_FMT "alpha and beta must be numbers", i, "spmv");
  double alpha = a ? json_number_value(a) : 1.0;
  double beta = b ? json_number_value(b) : 0.0;
  rc = spmvd_op_get_ready_matrix(c, s, &m, err);
  if (rc < 0) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return spmv_error_set(err, rc, STEP_FMT "%s", i, "spmv", msg);
  }
  if (m->nblocks > 1) {
    struct spmvd_split_layout l;
    spmvd_ops_split_layout(m, &l);
    if ((rc = note_layout(p, &l, i, "spmv", "matrix", m->handle, err)) < 0)
      return rc;
  } else if ((rc = note_layout(p, NULL, i, "spmv", "matrix", m->handle, err)) < 0) {
    return rc;
  } else if (m->wk != c->wk)
    return spmv_error_set(err, SPMV_EINVAL, STEP_FMT "matrix %lld is "
                          "resident on worker %d, this connection's vectors "
                          "on worker %d", i, "spmv", (long long)m->handle,
                          m->wk, c->wk);
  if ((rc = get_vec(c, p, s, i, "spmv", "x", 1, 0, &x, err)) < 0 ||
      (rc = get_vec(c, p, s, i, "spmv", "y", beta != 0, 1, &y, err)) < 0)
    return rc;
  if (x == y)
    return spmv_error_set(err, SPMV_EINVAL,
                          STEP_FMT "x and y are the same vector", i, "spmv");
  if (x->dtype != m->dtype || y->dtype != m->dtype)
    return spmv_error_set(err, SPMV_EINVAL,
                          STEP_FMT "matrix %lld is %s, x %s and y %s", i,
                          "spmv", (long long)m->handle,
                          spmv_dtype_name(m->dtype), spmv_dtype_name(x->dtype),
                          spmv_dtype_name(y->dtype));
  if (x->n != m->cols || y->n != m->rows)
    return spmv_error_set(err, SPMV_EINVAL,
                          STEP_FMT "matrix %lld is %lld x %lld, x has %lld "
                          "values and y %lld", i, "spmv", (long long)m->handle,
                          (long long)m->rows, (long long)m->cols,
                          (long long)x->n, (long long)y->n);
  size_t k;
  json_t *h;
  int named = 0;
  json_array_foreach(p->handles, k, h)
    named |= json_integer_value(h) == m->handle;
  if (!named)
    json_array_append_new(p->handles, json_integer(m->handle));
  *w = json_pack("{ss sI sI sI sf sf}", "k", "spmv", "handle",
                 (json_int_t)m->handle, "x", (json_int_t)x->id, "y",
                 (json_int_t)y->id, "alpha", alpha, "beta", beta);
  return 0;
}

/* upload and download: the payload, or a memfd attached on c. */
static int step_transfer(struct spmvd_conn *c, struct plan *p, json_t *s,
                         int i, int up, json_t **w, struct spmv_error *err)
{
  const char *op = up ? "upload" : "download";
  json_t *fd = json_object_get(s, "memfd"), *off = json_object_get(s, "offset");
  struct spmvd_vector *x;
  int rc;

  if ((rc = step_keys(s, i, op, "x memfd offset", err)) < 0 ||
      (rc = get_vec(c, p, s, i, op, "x", !up, up, &x, err)) < 0)
    return rc;
  uint64_t bytes = (uint64_t)x->n * spmv_dtype_size(x->dtype);
  if (!fd && !off) {
    *w = json_pack("{ss sI sI sI sI}", "k", op, "x", (json_int_t)x->id, "buf",
                   (json_int_t)0, "off", (json_int_t)(up ? p->up : p->down),
                   "bytes", (json_int_t)bytes);
    *(up ? &p->up : &p->down) += bytes;
    return 0;
  }
  if (!json_is_integer(fd) || !json_is_integer(off))
    return spmv_error_set(err, SPMV_EPROTO,
                          STEP_FMT "\"memfd\" (a matrix handle) and \"offset\" "
                          "(bytes) go together, both integers", i, op);
  if (x->split.n > 1)
    return spmv_error_set(err, SPMV_EINVAL,
                          STEP_FMT "vector %lld is split over %d workers: it "
                          "travels in the request's payload, not an attached "
                          "memfd", i, op, (long long)x->id, x->split.n);
  struct spmvd_attach *a = spmvd_conn_attached(c, json_integer_value(fd));
  if (!a)
    return spmv_error_set(err, SPMV_EINVAL,
                          STEP_FMT "matrix %lld has no vectors attached on "
                          "this connection", i, op,
                          (long long)json_integer_value(fd));
  int64_t o = json_integer_value(off);
  size_t vs = spmv_dtype_size(x->dtype);
  if (o < 0 || (uint64_t)o % vs != 0 || (uint64_t)o > a->size ||
      bytes > a->size - (uint64_t)o)
    return spmv_error_set(err, SPMV_EINVAL,
                          STEP_FMT "%llu bytes at offset %lld do not fit the "
                          "%zu-byte memfd attached to matrix %lld at a "
                          "multiple of %zu", i, op, (unsigned long long)bytes,
                          (long long)o, a->size, (long long)a->handle, vs);
  int k;
  for (k = 0; k < p->natt && p->att[k] != a; k++)
    ;
  if (k == p->natt) {
    if (p->natt == MAX_MEMFDS)
      return spmv_error_set(err, SPMV_EINVAL,
                            STEP_FMT "a list may use the memfds of at most "
                            "%d matrices", i, op, MAX_MEMFDS);
    p->att[p->natt++] = a;
  }
  *w = json_pack("{ss sI sI sI sI}", "k", op, "x", (json_int_t)x->id, "buf",
                 (json_int_t)a->buf_id, "off", (json_int_t)o, "bytes",
                 (json_int_t)bytes);
  return 0;
}

/* The BLAS-1 steps. */
static int step_blas(struct spmvd_conn *c, struct plan *p, json_t *s, int i,
                     const char *op, json_t **w, struct spmv_error *err)
{
  struct spmvd_vector *x = NULL, *y = NULL, *z = NULL;
  json_t *a = NULL, *b = NULL;
  double ka = 0, kb = 0;
  int rc;

  if (strcmp(op, "fill") == 0) {
    if ((rc = step_keys(s, i, op, "x value", err)) == 0 &&
        (rc = get_scalar(s, i, op, "value", p->nres, &a, &ka, err)) == 0)
      rc = get_vec(c, p, s, i, op, "x", 0, 1, &x, err);
  } else if (strcmp(op, "copy") == 0) {
    if ((rc = step_keys(s, i, op, "x y", err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "x", 1, 0, &x, err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "y", 0, 1, &y, err)) == 0)
      rc = same_shape(i, op, x, y, "y", err);
  } else if (strcmp(op, "scale") == 0) {
    if ((rc = step_keys(s, i, op, "x alpha", err)) == 0 &&
        (rc = get_scalar(s, i, op, "alpha", p->nres, &a, &ka, err)) == 0)
      rc = get_vec(c, p, s, i, op, "x", 1, 1, &x, err);
  } else if (strcmp(op, "axpby") == 0) {
    if ((rc = step_keys(s, i, op, "x y alpha beta", err)) == 0 &&
        (rc = get_scalar(s, i, op, "alpha", p->nres, &a, &ka, err)) == 0 &&
        (rc = get_scalar(s, i, op, "beta", p->nres, &b, &kb, err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "x", 1, 0, &x, err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "y", kb != 0, 1, &y, err)) == 0)
      rc = same_shape(i, op, x, y, "y", err);
  } else if (strcmp(op, "mul") == 0) {
    if ((rc = step_keys(s, i, op, "x y z", err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "x", 1, 0, &x, err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "y", 1, 0, &y, err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "z", 0, 1, &z, err)) == 0 &&
        (rc = same_shape(i, op, x, y, "y", err)) == 0)
      rc = same_shape(i, op, x, z, "z", err);
  } else if (strcmp(op, "dot") == 0) {
    if ((rc = step_keys(s, i, op, "x y", err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "x", 1, 0, &x, err)) == 0 &&
        (rc = get_vec(c, p, s, i, op, "y", 1, 0, &y, err)) == 0)
      rc = same_shape(i, op, x, y, "y", err);
  } else if (strcmp(op, "nrm2") == 0) {
    if ((rc = step_keys(s, i, op, "x", err)) == 0)
      rc = get_vec(c, p, s, i, op, "x", 1, 0, &x, err);
  } else {
    rc = spmv_error_set(err, SPMV_EPROTO, "ops[%d]: unknown step '%s'", i, op);
  }
  if (rc == 0 && (strcmp(op, "dot") == 0 || strcmp(op, "nrm2") == 0) &&
      p->nres == SPMVD_MAX_RESULTS)
    rc = spmv_error_set(err, SPMV_EPROTO, STEP_FMT "a list computes at most "
                        "%d results", i, op, SPMVD_MAX_RESULTS);
  if (rc < 0) {
    json_decref(a);
    json_decref(b);
    return rc;
  }
  *w = json_pack("{ss sI}", "k", op, "x", (json_int_t)x->id);
  if (y)
    json_object_set_new(*w, "y", json_integer(y->id));
  if (z)
    json_object_set_new(*w, "z", json_integer(z->id));
  if (a)
    json_object_set_new(*w, "a", a);
  if (b)
    json_object_set_new(*w, "b", b);
  if (strcmp(op, "dot") == 0 || strcmp(op, "nrm2") == 0)
    json_object_set_new(*w, "slot", json_integer(p->nres++));
  return 0;
}

/* Checks the request's list and translates it into p (filled here;
 * plan_fini() releases it, whatever the outcome). */
static int plan_list(struct spmvd_conn *c, json_t *req, struct plan *p,
                     struct spmv_error *err)
{
  json_t *ops = json_object_get(req, "ops"), *s;
  size_t i;
  int rc = 0;

  memset(p, 0, sizeof *p);
  p->split_step = p->plain_step = -1;
  p->steps = json_array();
  p->handles = json_array();
  if (!p->steps || !p->handles)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if (spmvd_op_only_keys(req, "ops: ", "id ops", err) < 0)
    return err->code;
  if (!json_is_array(ops) || json_array_size(ops) < 1 ||
      json_array_size(ops) > MAX_STEPS)
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"ops\" must be an array of 1 to %d steps",
                          MAX_STEPS);
  json_array_foreach(ops, i, s) {
    const char *op = json_string_value(json_object_get(s, "op"));
    json_t *w = NULL;
    if (!json_is_object(s) || !op)
      return spmv_error_set(err, SPMV_EPROTO,
                            "ops[%zu] is not an object with \"op\" (a string)",
                            i);
    if (strcmp(op, "spmv") == 0)
      rc = step_spmv(c, p, s, (int)i, &w, err);
    else if (strcmp(op, "upload") == 0 || strcmp(op, "download") == 0)
      rc = step_transfer(c, p, s, (int)i, op[0] == 'u', &w, err);
    else
      rc = step_blas(c, p, s, (int)i, op, &w, err);
    if (rc < 0)
      return rc;
    if (!w || json_array_append_new(p->steps, w) < 0)
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  }
  return 0;
}

/* --- ops --- */

/* Checks the list before its payload is read: the payload holds exactly
 * the uploads, and the buffer room for the downloads too. */
int spmvd_ops_begin_ops(struct spmvd_conn *c, json_t *req, uint64_t plen,
                        size_t *shm, struct spmv_error *err)
{
  struct plan p;
  int rc = plan_list(c, req, &p, err);

  plan_fini(&p);
  if (rc < 0)
    return rc;
  if (plen != p.up)
    return spmv_error_set(err, SPMV_EPROTO,
                          "payload is %llu bytes, but the list's uploads "
                          "need %llu", (unsigned long long)plen,
                          (unsigned long long)p.up);
  if ((rc = spmvd_ops_check_mem(c, spmvd_conn_vec_growth(c, p.up + p.down),
                                err)) < 0)
    return rc;
  *shm = (size_t)(p.up + p.down);
  c->payload_vec = *shm > 0;
  return 0;
}

/* The worker ran the list: its results, and the downloads in the payload. */
static void on_ran(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  struct spmvd_conn *c = o->c;

  if (spmvd_op_buffers_answered(o, err))
    return;
  /* Vectors this list wrote hold values again. */
  size_t i;
  json_t *id;
  json_array_foreach(o->written, i, id) {
    struct spmvd_vector *v = spmvd_vectors_find(&c->vecs,
                                                json_integer_value(id));
    if (v)
      v->lost = 0;
  }
  json_t *res = json_object_get(rep, "results");
  json_t *msg = json_pack("{sI sb so}", "id", (json_int_t)o->id, "ok", 1,
                          "results", res ? json_incref(res) : json_array());
  spmvd_op_send_buffer(o, msg, o->y_off, o->y_len);
  json_decref(msg);
  spmvd_op_end(o);
}

/* The worker's message for plan p (stolen) with its buffers. */
static json_t *ops_message(struct plan *p,
                           int64_t pbuf, size_t psize, int pfd, int *fds,
                           int *nfds, int gen)
{
  json_t *vecs = json_array(), *bufs = json_array();

  for (int i = 0; i < p->nuse; i++)
    json_array_append_new(vecs, json_pack("{sI ss sI}", "id",
                                          (json_int_t)p->use[i].v->id, "dtype",
                                          spmv_dtype_name(p->use[i].v->dtype),
                                          "n", (json_int_t)p->use[i].v->n));
  *nfds = 0;
  if (pbuf > 0) {
    json_array_append_new(bufs, json_pack("{sI sI sb}", "buf", (json_int_t)pbuf,
                                          "size", (json_int_t)psize, "fd",
                                          pfd >= 0));
    if (pfd >= 0)
      fds[(*nfds)++] = pfd;
  }
  for (int i = 0; i < p->natt; i++) {
    int send = p->att[i]->gen != gen;
    p->att[i]->gen = gen;
    json_array_append_new(bufs, json_pack("{sI sI sb}", "buf",
                                          (json_int_t)p->att[i]->buf_id, "size",
                                          (json_int_t)p->att[i]->size, "fd",
                                          send));
    if (send)
      fds[(*nfds)++] = p->att[i]->fd;
  }
  json_t *msg = json_pack("{ss so so so sI sI so si}", "op", "ops", "vectors",
                          vecs, "bufs", bufs, "handles", p->handles,
                          "payload_buf", (json_int_t)pbuf, "down_base",
                          (json_int_t)p->up, "steps", p->steps, "nres",
                          p->nres);
  /* The death of a worker running one matrix's product quarantines it. */
  if (msg && json_array_size(p->handles) == 1)
    json_object_set(msg, "handle", json_array_get(p->handles, 0));
  p->steps = p->handles = NULL;
  return msg;
}

/* A list on split vectors: its payload (the connection's kept buffer, or
 * one of its own) goes to every block's worker. */
static void run_split(struct spmvd_conn *c, struct spmvd_op *o, struct plan *p,
                      struct spmvd_shm *payload)
{
  struct spmvd_split_list_args a = {.split = &p->split, .steps = p->steps,
                                    .nres = p->nres, .down_base = p->up,
                                    .payload_fd = -1};

  a.vectors = json_array();
  for (int i = 0; i < p->nuse; i++)
    json_array_append_new(a.vectors,
                          json_pack("{sI ss}", "id", (json_int_t)p->use[i].v->id,
                                    "dtype", spmv_dtype_name(p->use[i].v->dtype)));
  if (c->payload_vec) {
    o->conn_vec = 1;
    c->vec_users++;
    a.payload_fd = c->vec.fd;
    a.payload_size = c->vec.size;
  } else if (payload->fd >= 0) {
    o->vec = *payload;
    spmvd_shm_init(payload);
    a.payload_fd = o->vec.fd;
    a.payload_size = o->vec.size;
  }
  p->steps = NULL;
  plan_fini(p);
  spmvd_ops_split_list(o, &a);
}

/* ops: the list checked again (what it names may have gone meanwhile),
 * then run on the worker. */
void spmvd_ops_run_ops(struct spmvd_conn *c, json_t *req, int64_t id,
                       struct spmvd_shm *payload)
{
  struct spmv_error err;
  struct spmvd_op *o = spmvd_op_new(c, id, "ops");
  struct plan p;
  int fds[SPMVD_IPC_MAX_FDS], nfds, gen = spmvd_worker_restarts(spmvd_conn_worker(c));

  spmv_error_clear(&err);
  int rc = o ? plan_list(c, req, &p, &err)
             : spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    if (o)
      plan_fini(&p);
    c->payload_vec = 0;
    if (o) {
      spmvd_op_fail(o, &err);
    } else {
      spmvd_conn_send_error(c, id, &err);
      spmvd_conn_done(c);
    }
    return;
  }
  o->written = json_array();
  for (int i = 0; i < p.nuse; i++)
    if (p.use[i].written)
      json_array_append_new(o->written, json_integer(p.use[i].v->id));
  o->y_off = p.up;
  o->y_len = p.down;
  if (p.split.n > 1) {
    run_split(c, o, &p, payload);
    return;
  }
  int64_t pbuf = 0;
  size_t psize = 0;
  int pfd = -1;
  if (c->payload_vec) {
    o->conn_vec = 1;
    c->vec_users++;
    pbuf = c->vec_id;
    psize = c->vec.size;
    pfd = c->vec_gen != gen ? c->vec.fd : -1;
  } else if (payload->fd >= 0) {
    /* The kept buffer was busy: a buffer of this request's own. */
    o->vec = *payload;
    spmvd_shm_init(payload);
    pbuf = o->buf_private = spmvd_conn_new_buf_id();
    psize = o->vec.size;
    pfd = o->vec.fd;
  }
  json_t *msg = ops_message(&p, pbuf, psize, pfd, fds, &nfds, gen);
  plan_fini(&p);
  if (!msg) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    spmvd_op_fail(o, &err);
    return;
  }
  if (o->conn_vec)
    c->vec_gen = gen;
  if (spmvd_op_worker_call(o, msg, fds, nfds, on_ran, NULL, o,
                        &err) < 0) {
    o->buf_private = 0;
    spmvd_op_fail(o, &err);
  }
}
