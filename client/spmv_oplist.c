/* spmv_oplist.c: libspmvclient's lists of operations on device vectors:
 * recording steps, and running them as one "ops" request. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_client_int.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BIG_ENDIAN_HOST 1
#else
#define BIG_ENDIAN_HOST 0
#endif

/* A vector as a step names it: copied when the step is added, so that a
 * list naming a vector freed since sends its number (the daemon answers
 * ENOENT) rather than reading freed memory. */
struct vref {
  int64_t id;
  int64_t n;
  size_t vsz;
};

/* One recorded step. */
struct step {
  enum spmvc_op op;
  int64_t handle;               /* spmv */
  struct vref x, y, z;
  double alpha, beta;           /* spmv */
  struct spmv_scalar a, b;
  const void *src;              /* upload */
  void *dst;                    /* download */
  int64_t memfd;                /* set by run: the matrix whose mapping
                                   holds src / dst, -1 = the payload */
  size_t offset;                /* its byte offset there */
};

/* A list: its steps in order and how many results they make. */
struct spmv_oplist {
  struct spmv_client *client;
  struct step *steps;
  int n, cap;
  int nres;
};

/* The wire names of the steps, indexed by enum spmvc_op. */
static const char *const op_names[] = {
  "spmv", "copy", "fill", "scale", "axpby", "mul", "dot", "nrm2",
  "upload", "download"
};

/* The constant c. */
struct spmv_scalar spmv_scalar_const(double c)
{
  struct spmv_scalar s;

  memset(&s, 0, sizeof s);
  s.c = c;
  return s;
}

/* c * results[num] / results[den], either term left out when negative. */
struct spmv_scalar spmv_scalar_ratio(double c, int num, int den)
{
  struct spmv_scalar s = spmv_scalar_const(c);

  if (num >= 0)
    s.mul[s.nmul++] = num;
  if (den >= 0)
    s.div[s.ndiv++] = den;
  return s;
}

/* A new empty list on c. */
int spmv_oplist_new(struct spmv_client *c, struct spmv_oplist **out)
{
  struct spmv_oplist *l;

  if (out != NULL)
    *out = NULL;
  if (c == NULL || out == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_oplist_new: %s is NULL",
                c == NULL ? "c" : "out");
  if ((l = calloc(1, sizeof *l)) == NULL)
    return spmvc_failf(c, SPMV_ENOMEM, "out of memory");
  l->client = c;
  *out = l;
  return 0;
}

/* Frees l; it touches no client, so that it may follow spmv_disconnect(). */
struct spmv_oplist *spmv_oplist_free(struct spmv_oplist *l)
{
  if (l != NULL) {
    free(l->steps);
    free(l);
  }
  return NULL;
}

/* Removes every step (the storage is kept for the next ones). */
void spmv_oplist_clear(struct spmv_oplist *l)
{
  if (l != NULL) {
    l->n = 0;
    l->nres = 0;
  }
}

/* Steps in l (0 for NULL). */
int spmv_oplist_length(const struct spmv_oplist *l)
{
  return l != NULL ? l->n : 0;
}

/* Checks that operand v (called name) is given and of l's client, and
 * copies what a step needs of it into *r. */
static int take_vector(struct spmv_oplist *l, const char *fn,
                       const char *name, const struct spmv_vector *v,
                       struct vref *r)
{
  if (v == NULL)
    return spmvc_failf(l->client, SPMV_EINVAL, "%s: %s is NULL", fn, name);
  if (v->client != l->client)
    return spmvc_failf(l->client, SPMV_EINVAL,
                "%s: %s (vector %lld) belongs to another client", fn, name,
                (long long)v->id);
  r->id = v->id;
  r->n = v->n;
  r->vsz = spmv_dtype_size(v->dtype);
  return 0;
}

/* Checks a scalar's term counts: its arrays hold at most
 * SPMV_SCALAR_MAX_TERMS, and more cannot be read. */
static int check_scalar(struct spmv_oplist *l, const char *fn,
                        const char *name, const struct spmv_scalar *s)
{
  if (s->nmul < 0 || s->nmul > SPMV_SCALAR_MAX_TERMS || s->ndiv < 0 ||
      s->ndiv > SPMV_SCALAR_MAX_TERMS)
    return spmvc_failf(l->client, SPMV_EINVAL,
                "%s: %s has nmul %d and ndiv %d, each must be in [0, %d]",
                fn, name, s->nmul, s->ndiv, SPMV_SCALAR_MAX_TERMS);
  return 0;
}

/* Which vectors each kind of step names: bits 1 x, 2 y, 4 z. */
static int operands(enum spmvc_op op)
{
  switch (op) {
  case SPMVC_OP_MUL:
    return 7;
  case SPMVC_OP_SPMV: case SPMVC_OP_COPY: case SPMVC_OP_AXPBY:
  case SPMVC_OP_DOT:
    return 3;
  default:
    return 1;
  }
}

/* Checks a's operands (vectors, matrix, host buffer, scalars) into s. */
static int take_operands(struct spmv_oplist *l, const char *fn,
                         const struct spmvc_op_args *a, struct step *s)
{
  int want = operands(a->op), rc;

  if (((want & 1) && (rc = take_vector(l, fn, "x", a->x, &s->x)) < 0) ||
      ((want & 2) && (rc = take_vector(l, fn, "y", a->y, &s->y)) < 0) ||
      ((want & 4) && (rc = take_vector(l, fn, "z", a->z, &s->z)) < 0))
    return rc;
  if (a->op == SPMVC_OP_SPMV) {
    if (a->m == NULL)
      return spmvc_failf(l->client, SPMV_EINVAL, "%s: m is NULL", fn);
    if (spmv_matrix_client(a->m) != l->client)
      return spmvc_failf(l->client, SPMV_EINVAL,
                  "%s: the matrix belongs to another client", fn);
    s->handle = a->m->handle;
  }
  if (a->op == SPMVC_OP_UPLOAD && a->src == NULL)
    return spmvc_failf(l->client, SPMV_EINVAL, "%s: src is NULL", fn);
  if (a->op == SPMVC_OP_DOWNLOAD && a->dst == NULL)
    return spmvc_failf(l->client, SPMV_EINVAL, "%s: dst is NULL", fn);
  if ((rc = check_scalar(l, fn, a->op == SPMVC_OP_FILL ? "value" : "alpha",
                         &a->a)) < 0 ||
      (rc = check_scalar(l, fn, "beta", &a->b)) < 0)
    return rc;
  return 0;
}

/* Makes room for one more step. */
static int grow(struct spmv_oplist *l)
{
  int cap = l->cap > 0 ? l->cap * 2 : 8;
  struct step *p;

  if (l->n < l->cap)
    return 0;
  if (cap > SPMV_OPLIST_MAX_STEPS)
    cap = SPMV_OPLIST_MAX_STEPS;
  p = realloc(l->steps, sizeof *p * (size_t)cap);
  if (p == NULL)
    return spmvc_failf(l->client, SPMV_ENOMEM, "out of memory");
  l->steps = p;
  l->cap = cap;
  return 0;
}

/* Records one step; see spmv_client_int.h. */
int spmvc_op_add(struct spmv_oplist *l, const char *fn,
                 const struct spmvc_op_args *a)
{
  int reduces = a->op == SPMVC_OP_DOT || a->op == SPMVC_OP_NRM2;
  struct step s;
  int rc;

  if (l == NULL)
    return spmvc_failf(NULL, SPMV_EINVAL, "%s: l is NULL", fn);
  memset(&s, 0, sizeof s);
  s.op = a->op;
  if ((rc = take_operands(l, fn, a, &s)) < 0)
    return rc;
  if (l->n >= SPMV_OPLIST_MAX_STEPS)
    return spmvc_failf(l->client, SPMV_ELIMIT, "%s: the list has %d steps already, "
                "the most (SPMV_OPLIST_MAX_STEPS)", fn, l->n);
  if (reduces && l->nres >= SPMV_OPLIST_MAX_RESULTS)
    return spmvc_failf(l->client, SPMV_ELIMIT, "%s: the list has %d results already, "
                "the most (SPMV_OPLIST_MAX_RESULTS)", fn, l->nres);
  if ((rc = grow(l)) < 0)
    return rc;
  s.alpha = a->alpha;
  s.beta = a->beta;
  s.a = a->a;
  s.b = a->b;
  s.src = a->src;
  s.dst = a->dst;
  s.memfd = -1;
  l->steps[l->n++] = s;
  return reduces ? l->nres++ : 0;
}

/* The public steps, each a description handed to spmvc_op_add(). */
int spmv_op_spmv(struct spmv_oplist *l, struct spmv_matrix *m, double alpha,
                 struct spmv_vector *x, double beta, struct spmv_vector *y)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_SPMV, .m = m, .x = x, .y = y,
                            .alpha = alpha, .beta = beta};

  return spmvc_op_add(l, "spmv_op_spmv", &a);
}

int spmv_op_copy(struct spmv_oplist *l, struct spmv_vector *x,
                 struct spmv_vector *y)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_COPY, .x = x, .y = y};

  return spmvc_op_add(l, "spmv_op_copy", &a);
}

int spmv_op_fill(struct spmv_oplist *l, struct spmv_vector *x,
                 struct spmv_scalar value)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_FILL, .x = x, .a = value};

  return spmvc_op_add(l, "spmv_op_fill", &a);
}

int spmv_op_scale(struct spmv_oplist *l, struct spmv_scalar alpha,
                  struct spmv_vector *x)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_SCALE, .x = x, .a = alpha};

  return spmvc_op_add(l, "spmv_op_scale", &a);
}

int spmv_op_axpby(struct spmv_oplist *l, struct spmv_scalar alpha,
                  struct spmv_vector *x, struct spmv_scalar beta,
                  struct spmv_vector *y)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_AXPBY, .x = x, .y = y,
                            .a = alpha, .b = beta};

  return spmvc_op_add(l, "spmv_op_axpby", &a);
}

int spmv_op_mul(struct spmv_oplist *l, struct spmv_vector *x,
                struct spmv_vector *y, struct spmv_vector *z)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_MUL, .x = x, .y = y, .z = z};

  return spmvc_op_add(l, "spmv_op_mul", &a);
}

int spmv_op_dot(struct spmv_oplist *l, struct spmv_vector *x,
                struct spmv_vector *y)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_DOT, .x = x, .y = y};

  return spmvc_op_add(l, "spmv_op_dot", &a);
}

int spmv_op_nrm2(struct spmv_oplist *l, struct spmv_vector *x)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_NRM2, .x = x};

  return spmvc_op_add(l, "spmv_op_nrm2", &a);
}

int spmv_op_upload(struct spmv_oplist *l, struct spmv_vector *x,
                   const void *src)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_UPLOAD, .x = x, .src = src};

  return spmvc_op_add(l, "spmv_op_upload", &a);
}

int spmv_op_download(struct spmv_oplist *l, struct spmv_vector *x,
                     void *dst)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_DOWNLOAD, .x = x, .dst = dst};

  return spmvc_op_add(l, "spmv_op_download", &a);
}

/* The bytes an upload or download step moves. */
static size_t step_bytes(const struct step *s)
{
  return (size_t)s->x.n * s->x.vsz;
}

/* Whether s moves data (upload or download). */
static int moves_data(const struct step *s)
{
  return s->op == SPMVC_OP_UPLOAD || s->op == SPMVC_OP_DOWNLOAD;
}

/*
 * Finds the in-place mapping of c's matrices that holds s's host buffer
 * whole, at an offset aligned to the value size: sets s->memfd to its
 * matrix's handle and s->offset, else s->memfd to -1.  The caller holds
 * c's lock, so that the mapping stays until the reply.
 */
static void find_mapping(struct spmv_client *c, struct step *s)
{
  uintptr_t p = (uintptr_t)(s->op == SPMVC_OP_UPLOAD ? s->src : s->dst);
  size_t bytes = step_bytes(s);
  const struct spmv_matrix *m;

  s->memfd = -1;
  for (m = c->matrices; m != NULL; m = m->next) {
    uintptr_t base = (uintptr_t)m->vmap;

    if (m->vmap == NULL || p < base || bytes > m->vsize ||
        p - base > m->vsize - bytes || (p - base) % s->x.vsz != 0)
      continue;
    s->memfd = m->handle;
    s->offset = (size_t)(p - base);
    return;
  }
}

/* Sets key of o to the number v, refusing what JSON cannot carry. */
static int set_number(json_t *o, const char *key, double v, int i,
                      const struct step *s, struct spmv_error *err)
{
  if (!isfinite(v))
    return spmv_error_set(err, SPMV_EINVAL,
                          "ops[%d] (%s): %s is %g: the protocol carries "
                          "finite numbers only", i, op_names[s->op], key, v);
  if (json_object_set_new(o, key, json_real(v)) < 0)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  return 0;
}

/* An array of n result indices. */
static json_t *index_array(const int *idx, int n)
{
  json_t *a = json_array();
  int k;

  for (k = 0; a != NULL && k < n; k++)
    if (json_array_append_new(a, json_integer(idx[k])) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

/* Sets key of o to scalar sc: a number when it has no terms, else an
 * expression {c, mul, div}. */
static int set_scalar(json_t *o, const char *key, const struct spmv_scalar *sc,
                      int i, const struct step *s, struct spmv_error *err)
{
  json_t *e;
  int rc;

  if (sc->nmul == 0 && sc->ndiv == 0)
    return set_number(o, key, sc->c, i, s, err);
  if ((e = json_object()) == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if ((rc = set_number(e, "c", sc->c, i, s, err)) < 0) {
    json_decref(e);
    return rc;
  }
  if (json_object_set_new(e, "mul", index_array(sc->mul, sc->nmul)) < 0 ||
      json_object_set_new(e, "div", index_array(sc->div, sc->ndiv)) < 0 ||
      json_object_set_new(o, key, e) < 0)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  return 0;
}

/* Sets the vector members of step s in o. */
static int set_vectors(json_t *o, const struct step *s)
{
  int want = operands(s->op);

  return ((want & 1) && json_object_set_new(o, "x", json_integer(s->x.id)) < 0) ||
         ((want & 2) && json_object_set_new(o, "y", json_integer(s->y.id)) < 0) ||
         ((want & 4) && json_object_set_new(o, "z", json_integer(s->z.id)) < 0)
             ? -1 : 0;
}

/* Sets the members of step s other than op and its vectors in o. */
static int set_params(json_t *o, const struct step *s, int i,
                      struct spmv_error *err)
{
  int rc = 0;

  switch (s->op) {
  case SPMVC_OP_SPMV:
    if (json_object_set_new(o, "handle", json_integer(s->handle)) < 0)
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
    if ((rc = set_number(o, "alpha", s->alpha, i, s, err)) == 0)
      rc = set_number(o, "beta", s->beta, i, s, err);
    return rc;
  case SPMVC_OP_FILL:
    return set_scalar(o, "value", &s->a, i, s, err);
  case SPMVC_OP_SCALE:
    return set_scalar(o, "alpha", &s->a, i, s, err);
  case SPMVC_OP_AXPBY:
    if ((rc = set_scalar(o, "alpha", &s->a, i, s, err)) == 0)
      rc = set_scalar(o, "beta", &s->b, i, s, err);
    return rc;
  case SPMVC_OP_UPLOAD: case SPMVC_OP_DOWNLOAD:
    if (s->memfd >= 0 &&
        (json_object_set_new(o, "memfd", json_integer(s->memfd)) < 0 ||
         json_object_set_new(o, "offset", json_integer((json_int_t)s->offset)) < 0))
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
    return 0;
  default:
    return 0;
  }
}

/* Builds the "ops" request of l; finds the mappings first (under the
 * caller's lock).  *req is new. */
static int build_request(struct spmv_oplist *l, json_t **req,
                         struct spmv_error *err)
{
  json_t *ops = json_array();
  int i, rc = 0;

  *req = json_pack("{s:s, s:o}", "op", "ops", "ops", ops);
  if (*req == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  for (i = 0; i < l->n && rc == 0; i++) {
    struct step *s = &l->steps[i];
    json_t *o = json_pack("{s:s}", "op", op_names[s->op]);

    if (moves_data(s))
      find_mapping(l->client, s);
    if (o == NULL || json_array_append_new(ops, o) < 0 ||
        set_vectors(o, s) < 0)
      rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory");
    else
      rc = set_params(o, s, i, err);
  }
  if (rc < 0) {
    json_decref(*req);
    *req = NULL;
  }
  return rc;
}

/* Totals the bytes of the steps of kind op that travel on the socket, and
 * how many such steps there are, the last being *last. */
static size_t wire_bytes(const struct spmv_oplist *l, enum spmvc_op op,
                         int *count, const struct step **last)
{
  size_t total = 0;
  int i;

  *count = 0;
  *last = NULL;
  for (i = 0; i < l->n; i++) {
    const struct step *s = &l->steps[i];

    if (s->op == op && s->memfd < 0) {
      total += step_bytes(s);
      ++*count;
      *last = s;
    }
  }
  return total;
}

/* Sets pl to the uploads' data in list order: the caller's array itself
 * when it is the only one and the host is little-endian, else a joined
 * copy in little-endian order (*buf, owned by the caller). */
static int pack_uploads(const struct spmv_oplist *l, struct spmvc_payload *pl,
                        void **buf, struct spmv_error *err)
{
  const struct step *last;
  int count, i;
  size_t total = wire_bytes(l, SPMVC_OP_UPLOAD, &count, &last), at = 0;

  memset(pl, 0, sizeof *pl);
  *buf = NULL;
  if (count == 0)
    return 0;
  if (count == 1 && !BIG_ENDIAN_HOST) {
    pl->p1 = last->src;
    pl->n1 = total;
    return 0;
  }
  if ((*buf = malloc(total > 0 ? total : 1)) == NULL)
    return spmv_error_set(err, SPMV_ENOMEM,
                          "cannot allocate %zu bytes for the uploads", total);
  for (i = 0; i < l->n; i++) {
    const struct step *s = &l->steps[i];

    if (s->op == SPMVC_OP_UPLOAD && s->memfd < 0) {
      spmvc_le_copy((char *)*buf + at, s->src, (size_t)s->x.n, s->x.vsz);
      at += step_bytes(s);
    }
  }
  pl->p1 = *buf;
  pl->n1 = total;
  return 0;
}

/* Copies a reply payload of the downloads' data (in list order,
 * little-endian) into their host arrays. */
static int scatter_downloads(const struct spmv_oplist *l, const void *rp,
                             uint64_t rlen, size_t total,
                             struct spmv_error *err)
{
  size_t at = 0;
  int i;

  if (rlen != total)
    return spmv_error_set(err, SPMV_EPROTO,
                          "spmvd answered 'ops' with %llu bytes of downloads, "
                          "expected %zu", (unsigned long long)rlen, total);
  for (i = 0; i < l->n; i++) {
    const struct step *s = &l->steps[i];

    if (s->op == SPMVC_OP_DOWNLOAD && s->memfd < 0) {
      spmvc_le_copy(s->dst, (const char *)rp + at, (size_t)s->x.n, s->x.vsz);
      at += step_bytes(s);
    }
  }
  return 0;
}

/* Reads one result: a number, or the string JSON writes for a value it
 * cannot hold (PROTOCOL.md: "NaN", "Infinity", "-Infinity").  Returns 0,
 * or -1 for anything else. */
static int result_value(const json_t *v, double *out)
{
  const char *s = json_string_value(v);

  if (json_is_number(v))
    *out = json_number_value(v);
  else if (s != NULL && strcmp(s, "NaN") == 0)
    *out = NAN;
  else if (s != NULL && strcmp(s, "Infinity") == 0)
    *out = INFINITY;
  else if (s != NULL && strcmp(s, "-Infinity") == 0)
    *out = -INFINITY;
  else
    return -1;
  return 0;
}

/* Copies the first nres of the reply's results after checking that there
 * is one per dot and norm of l. */
static int take_results(const struct spmv_oplist *l, const json_t *reply,
                        double *results, int nres, struct spmv_error *err)
{
  json_t *r = json_object_get(reply, "results");
  int i;

  if (!json_is_array(r) || json_array_size(r) != (size_t)l->nres)
    return spmv_error_set(err, SPMV_EPROTO,
                          "spmvd answered 'ops' with %s%zu results, the list "
                          "has %d", json_is_array(r) ? "" : "no array of ",
                          json_is_array(r) ? json_array_size(r) : 0, l->nres);
  for (i = 0; i < nres; i++)
    if (result_value(json_array_get(r, (size_t)i), &results[i]) < 0)
      return spmv_error_set(err, SPMV_EPROTO,
                            "spmvd's results[%d] is not a number", i);
  return 0;
}

/* Sends req and reads the reply, the downloads' data going straight into
 * the one host array when there is only one (little-endian host). */
static int exchange(struct spmv_oplist *l, json_t *req,
                    const struct spmvc_payload *pl, json_t **reply,
                    struct spmv_error *err)
{
  struct spmv_client *c = l->client;
  const struct step *last;
  int count, rc;
  size_t total = wire_bytes(l, SPMVC_OP_DOWNLOAD, &count, &last);
  void *rp = NULL;
  uint64_t rlen = 0;

  if (count == 1 && !BIG_ENDIAN_HOST)
    return spmvc_call_into(c, req, pl, reply, last->dst, total, err);
  rc = spmvc_call(c, req, pl, NULL, reply, count > 0 ? &rp : NULL, &rlen,
                  err);
  if (rc == 0 && count > 0)
    rc = scatter_downloads(l, rp, rlen, total, err);
  free(rp);
  return rc;
}

/* Checks run's arguments; returns 0 or records the problem. */
static int check_run(struct spmv_oplist *l, const double *results, int nres)
{
  if (l == NULL)
    return spmvc_failf(NULL, SPMV_EINVAL, "spmv_oplist_run: l is NULL");
  if (nres < 0 || nres > l->nres)
    return spmvc_failf(l->client, SPMV_EINVAL,
                "spmv_oplist_run: nres is %d, the list has %d results", nres,
                l->nres);
  if (nres > 0 && results == NULL)
    return spmvc_failf(l->client, SPMV_EINVAL,
                "spmv_oplist_run: results is NULL, nres %d", nres);
  return 0;
}

/* Runs l's steps in one request; see spmv.h. */
int spmv_oplist_run(struct spmv_oplist *l, double *results, int nres)
{
  struct spmv_client *c;
  struct spmvc_payload pl;
  struct spmv_error err;
  json_t *req = NULL, *reply = NULL;
  void *buf = NULL;
  int rc;

  if ((rc = check_run(l, results, nres)) < 0)
    return rc;
  if (l->n == 0)
    return 0;  /* nothing to run: the protocol wants one step at least */
  c = l->client;
  spmv_error_clear(&err);
  spmvc_lock(c);
  rc = build_request(l, &req, &err);
  if (rc == 0)
    rc = pack_uploads(l, &pl, &buf, &err);
  if (rc == 0)
    rc = exchange(l, req, &pl, &reply, &err);
  if (rc == 0)
    rc = take_results(l, reply, results, nres, &err);
  spmvc_unlock(c);
  free(buf);
  json_decref(req);
  json_decref(reply);
  if (rc < 0)
    spmvc_fail(c, &err);
  return rc;
}
