/* spmv_vector.c: libspmvclient's device vectors: create, free, and each
 * vector operation as a list of one step. */
#include "config.h"

#include <stdlib.h>

#include "spmv_client_int.h"

/* v's length, or -1 for NULL. */
int64_t spmv_vector_length(const struct spmv_vector *v)
{
  return v != NULL ? v->n : -1;
}

/* v's value type, 0 (no type) for NULL. */
enum spmv_dtype spmv_vector_dtype(const struct spmv_vector *v)
{
  return v != NULL ? v->dtype : (enum spmv_dtype)0;
}

/* v's client (borrowed), NULL for NULL. */
struct spmv_client *spmv_vector_client(const struct spmv_vector *v)
{
  return v != NULL ? v->client : NULL;
}

/* Links a new vector for the number in reply into c's list; the caller
 * holds c's lock.  Returns it, or NULL when out of memory. */
static struct spmv_vector *adopt(struct spmv_client *c, int64_t id,
                                 enum spmv_dtype dtype, int64_t n)
{
  struct spmv_vector *v = calloc(1, sizeof *v);

  if (v == NULL)
    return NULL;
  v->client = c;
  v->id = id;
  v->dtype = dtype;
  v->n = n;
  v->next = c->vectors;
  if (c->vectors != NULL)
    c->vectors->prev = v;
  c->vectors = v;
  return v;
}

/* Unlinks v from its client's list; the caller holds the lock. */
static void unlink_vector(struct spmv_vector *v)
{
  struct spmv_client *c = v->client;

  if (v->prev != NULL)
    v->prev->next = v->next;
  else
    c->vectors = v->next;
  if (v->next != NULL)
    v->next->prev = v->prev;
}

/* Frees c's vectors here only; the daemon frees its copies at close. */
void spmvc_vectors_forget(struct spmv_client *c)
{
  struct spmv_vector *v, *next;

  for (v = c->vectors; v != NULL; v = next) {
    next = v->next;
    free(v);
  }
  c->vectors = NULL;
}

/* Asks the daemon for a vector of n values of dtype; see spmv.h. */
/* Sends vector-create req (taken; NULL: out of memory) on c and adopts
 * the vector of dtype and n values it answers with into *out. */
static int create(struct spmv_client *c, json_t *req, enum spmv_dtype dtype,
                  int64_t n, struct spmv_vector **out)
{
  struct spmv_error err;
  json_t *reply = NULL;
  int64_t id;
  int rc;

  if (req == NULL)
    return spmvc_failf(c, SPMV_ENOMEM, "out of memory");
  spmv_error_clear(&err);
  spmvc_lock(c);
  rc = spmvc_call(c, req, NULL, NULL, &reply, NULL, NULL, &err);
  id = spmvc_get_int(reply, "vector", -1);
  if (rc == 0 && id < 0)
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "spmvd's reply to vector-create has no vector number");
  if (rc == 0 && (*out = adopt(c, id, dtype, n)) == NULL)
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  spmvc_unlock(c);
  json_decref(req);
  json_decref(reply);
  if (rc < 0)
    spmvc_fail(c, &err);
  return rc;
}

int spmv_vector_new(struct spmv_client *c, enum spmv_dtype dtype, int64_t n,
                    struct spmv_vector **out)
{
  if (out != NULL)
    *out = NULL;
  if (c == NULL || out == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_vector_new: %s is NULL",
                c == NULL ? "c" : "out");
  if (spmv_dtype_name(dtype) == NULL)
    return spmvc_failf(c, SPMV_EINVAL,
                "spmv_vector_new: unknown value type %d (use SPMV_F32 or "
                "SPMV_F64)", (int)dtype);
  if (n < 0 || n > INT32_MAX)
    return spmvc_failf(c, SPMV_EINVAL,
                "spmv_vector_new: n is %lld, must be in [0, 2^31)",
                (long long)n);
  return create(c, json_pack("{s:s, s:s, s:I}", "op", "vector-create", "dtype",
                             spmv_dtype_name(dtype), "n", (json_int_t)n),
                dtype, n, out);
}

int spmv_vector_new_like(struct spmv_matrix *m, struct spmv_vector **out)
{
  struct spmv_client *c = m != NULL ? m->client : NULL;

  if (out != NULL)
    *out = NULL;
  if (m == NULL || out == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_vector_new_like: %s is NULL",
                       m == NULL ? "m" : "out");
  return create(c, json_pack("{s:s, s:s, s:I, s:I}", "op", "vector-create",
                             "dtype", spmv_dtype_name(m->dtype), "n",
                             (json_int_t)m->rows, "like", (json_int_t)m->handle),
                m->dtype, m->rows, out);
}

/* Frees v in the daemon (best effort) and here; returns NULL. */
struct spmv_vector *spmv_vector_free(struct spmv_vector *v)
{
  struct spmv_client *c;
  struct spmv_error err;
  json_t *req, *reply = NULL;

  if (v == NULL)
    return NULL;
  c = v->client;
  req = json_pack("{s:s, s:I}", "op", "vector-free", "vector",
                  (json_int_t)v->id);
  spmvc_lock(c);
  /* A closed connection has freed its vectors already. */
  if (req != NULL && c->fd >= 0)
    spmvc_call(c, req, NULL, NULL, &reply, NULL, NULL, &err);
  unlink_vector(v);
  spmvc_unlock(c);
  json_decref(req);
  json_decref(reply);
  free(v);
  return NULL;
}

/*
 * Runs the one step a as a list of its own on behalf of fn; *res (may be
 * NULL) receives its result.  c is the client of the step's first operand
 * (NULL when that is NULL: the step's check then reports it).
 */
static int run_one(struct spmv_client *c, const char *fn,
                   const struct spmvc_op_args *a, double *res)
{
  struct spmv_oplist *l = NULL;
  int rc;

  if (c == NULL)
    return spmvc_failf(NULL, SPMV_EINVAL, "%s: a vector or matrix is NULL", fn);
  if ((rc = spmv_oplist_new(c, &l)) < 0)
    return rc;
  rc = spmvc_op_add(l, fn, a);
  if (rc >= 0)
    rc = spmv_oplist_run(l, res, res != NULL ? 1 : 0);
  spmv_oplist_free(l);
  return rc < 0 ? rc : 0;
}

/* v = src; see spmv.h. */
int spmv_vector_upload(struct spmv_vector *v, const void *src)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_UPLOAD, .x = v, .src = src};

  return run_one(spmv_vector_client(v), "spmv_vector_upload", &a, NULL);
}

/* dst = v; see spmv.h. */
int spmv_vector_download(struct spmv_vector *v, void *dst)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_DOWNLOAD, .x = v, .dst = dst};

  return run_one(spmv_vector_client(v), "spmv_vector_download", &a, NULL);
}

/* v = value. */
int spmv_vector_fill(struct spmv_vector *v, double value)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_FILL, .x = v,
                            .a = spmv_scalar_const(value)};

  return run_one(spmv_vector_client(v), "spmv_vector_fill", &a, NULL);
}

/* y = alpha*A*x + beta*y on device vectors. */
int spmv_multiply_vec(struct spmv_matrix *m, double alpha,
                      struct spmv_vector *x, double beta,
                      struct spmv_vector *y)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_SPMV, .m = m, .x = x, .y = y,
                            .alpha = alpha, .beta = beta};

  return run_one(m != NULL ? spmv_matrix_client(m) : NULL,
                 "spmv_multiply_vec", &a, NULL);
}

/* y = x. */
int spmv_vector_copy(struct spmv_vector *x, struct spmv_vector *y)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_COPY, .x = x, .y = y};

  return run_one(spmv_vector_client(x), "spmv_vector_copy", &a, NULL);
}

/* x = alpha*x. */
int spmv_vector_scale(double alpha, struct spmv_vector *x)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_SCALE, .x = x,
                            .a = spmv_scalar_const(alpha)};

  return run_one(spmv_vector_client(x), "spmv_vector_scale", &a, NULL);
}

/* y = alpha*x + beta*y. */
int spmv_vector_axpby(double alpha, struct spmv_vector *x, double beta,
                      struct spmv_vector *y)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_AXPBY, .x = x, .y = y,
                            .a = spmv_scalar_const(alpha),
                            .b = spmv_scalar_const(beta)};

  return run_one(spmv_vector_client(x), "spmv_vector_axpby", &a, NULL);
}

/* z = x .* y. */
int spmv_vector_mul(struct spmv_vector *x, struct spmv_vector *y,
                    struct spmv_vector *z)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_MUL, .x = x, .y = y, .z = z};

  return run_one(spmv_vector_client(x), "spmv_vector_mul", &a, NULL);
}

/* *out = x . y. */
int spmv_vector_dot(struct spmv_vector *x, struct spmv_vector *y, double *out)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_DOT, .x = x, .y = y};

  if (out == NULL)
    return spmvc_failf(spmv_vector_client(x), SPMV_EINVAL,
                "spmv_vector_dot: out is NULL");
  return run_one(spmv_vector_client(x), "spmv_vector_dot", &a, out);
}

/* *out = ||x||_2. */
int spmv_vector_nrm2(struct spmv_vector *x, double *out)
{
  struct spmvc_op_args a = {.op = SPMVC_OP_NRM2, .x = x};

  if (out == NULL)
    return spmvc_failf(spmv_vector_client(x), SPMV_EINVAL,
                "spmv_vector_nrm2: out is NULL");
  return run_one(spmv_vector_client(x), "spmv_vector_nrm2", &a, out);
}
