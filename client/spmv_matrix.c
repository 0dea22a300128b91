/* spmv_matrix.c: libspmvclient's matrices: load, multiply, info, tune, free. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spmv_client_int.h"
#include "spmv_mmio.h"
#include "spmv_wire.h"

/* Fills o with the defaults. */
void spmv_load_options_init(struct spmv_load_options *o)
{
  memset(o, 0, sizeof *o);
}

/* Returns the client m belongs to (borrowed). */
struct spmv_client *spmv_matrix_client(const struct spmv_matrix *m)
{
  return m->client;
}

/* Returns a*b, or SIZE_MAX when it overflows. */
static size_t mul_size(size_t a, size_t b)
{
  return (b != 0 && a > SIZE_MAX / b) ? SIZE_MAX : a * b;
}

/* Returns a+b, or SIZE_MAX when it overflows. */
static size_t add_size(size_t a, size_t b)
{
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Milliseconds on the monotonic clock: the client's steps of a load. */
static double now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Packs row_ptr, col_idx and values into one little-endian payload. */
static void *pack_csr(enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                      int narrow, const int64_t *row_ptr,
                      const int32_t *col_idx, const void *values, size_t len)
{
  size_t vsz = spmv_dtype_size(dtype);
  size_t isz = narrow ? 4 : 8;
  unsigned char *buf = malloc(len > 0 ? len : 1), *p;
  int64_t i;

  if (buf == NULL)
    return NULL;
  p = buf;
  if (narrow) {
    for (i = 0; i <= rows; i++) {
      int32_t v = (int32_t)row_ptr[i];

      spmvc_le_copy(p + (size_t)i * isz, &v, 1, isz);
    }
  } else {
    spmvc_le_copy(p, row_ptr, (size_t)rows + 1, isz);
  }
  p += ((size_t)rows + 1) * isz;
  spmvc_le_copy(p, col_idx, (size_t)nnz, 4);
  p += (size_t)nnz * 4;
  spmvc_le_copy(p, values, (size_t)nnz, vsz);
  return buf;
}

/* Checks load's arguments; returns 0 or records the problem on c. */
static int check_load(struct spmv_client *c, enum spmv_dtype dtype,
                      int64_t rows, int64_t cols, int64_t nnz,
                      const int64_t *row_ptr, const int32_t *col_idx,
                      const void *values, struct spmv_matrix **out)
{
  if (out == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_load_csr: out is NULL");
  if (spmv_dtype_name(dtype) == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "unknown value type %d (use SPMV_F32 or SPMV_F64)",
                (int)dtype);
  if (rows < 0 || cols < 0 || nnz < 0)
    return spmvc_failf(c, SPMV_EINVAL,
                "negative dimension: rows %lld, cols %lld, nnz %lld",
                (long long)rows, (long long)cols, (long long)nnz);
  if (cols > INT32_MAX)
    return spmvc_failf(c, SPMV_ETOOBIG, "cols %lld exceeds the 32-bit column index range",
                (long long)cols);
  if (row_ptr == NULL || (nnz > 0 && (col_idx == NULL || values == NULL)))
    return spmvc_failf(c, SPMV_EINVAL, "spmv_load_csr: %s is NULL",
                row_ptr == NULL ? "row_ptr" : col_idx == NULL ? "col_idx" : "values");
  if (row_ptr[0] != 0)
    return spmvc_failf(c, SPMV_ECSR, "row_ptr[0] is %lld, expected 0",
                (long long)row_ptr[0]);
  if (row_ptr[rows] != nnz)
    return spmvc_failf(c, SPMV_ECSR, "row_ptr[%lld] is %lld, expected nnz = %lld",
                (long long)rows, (long long)row_ptr[rows], (long long)nnz);
  return 0;
}

/* Links a new matrix for the handle in reply into c's list; the caller
 * holds c's lock.  Returns it, or NULL when out of memory. */
static struct spmv_matrix *adopt(struct spmv_client *c, const json_t *reply,
                                 enum spmv_dtype dtype, int64_t rows,
                                 int64_t cols, int64_t nnz)
{
  struct spmv_matrix *m = calloc(1, sizeof *m);

  if (m == NULL)
    return NULL;
  m->client = c;
  m->vfd = -1;
  m->handle = spmvc_get_int(reply, "handle", -1);
  m->dtype = dtype;
  m->rows = rows;
  m->cols = cols;
  m->nnz = nnz;
  m->decision = json_copy((json_t *)reply);
  if (m->decision == NULL) {
    free(m);
    return NULL;
  }
  json_object_del(m->decision, "id");
  json_object_del(m->decision, "ok");
  m->next = c->matrices;
  if (c->matrices != NULL)
    c->matrices->prev = m;
  c->matrices = m;
  return m;
}

/* Builds load's request into *out ("memfd": true without "index" when the
 * matrix goes in a memfd); returns 0, or the failure recorded on c. */
static int load_request(struct spmv_client *c, enum spmv_dtype dtype,
                        int64_t rows, int64_t cols, int64_t nnz, int narrow,
                        int memfd, const struct spmv_load_options *opt,
                        json_t **out)
{
  json_t *req = json_pack("{s:s, s:s, s:I, s:I, s:I}", "op", "load", "dtype",
                          spmv_dtype_name(dtype), "rows", (json_int_t)rows,
                          "cols", (json_int_t)cols, "nnz", (json_int_t)nnz);

  if (req == NULL ||
      json_object_set_new(req, memfd ? "memfd" : "index",
                          memfd ? json_true()
                                : json_string(narrow ? "i32" : "i64")) < 0) {
    json_decref(req);
    return spmvc_failf(c, SPMV_ENOMEM, "out of memory");
  }
  if (opt != NULL && opt->split < 0) {
    json_decref(req);
    return spmvc_failf(c, SPMV_EINVAL, "split is %d: it counts row blocks, "
                       "at least 1", opt->split);
  }
  if (opt != NULL && opt->split > 1 &&
      json_object_set_new(req, "split", json_integer(opt->split)) < 0) {
    json_decref(req);
    return spmvc_failf(c, SPMV_ENOMEM, "out of memory");
  }
  if (opt != NULL &&
      ((opt->strategy != NULL &&
        json_object_set_new(req, "strategy", json_string(opt->strategy)) < 0) ||
       (opt->name != NULL &&
        json_object_set_new(req, "name", json_string(opt->name)) < 0) ||
       (opt->verify && json_object_set_new(req, "verify", json_true()) < 0))) {
    json_decref(req);
    return spmvc_failf(c, SPMV_EINVAL, "strategy or name is not valid UTF-8");
  }
  *out = req;
  return 0;
}

/* Adds the client's own steps to a load's decision: the matrix written
 * (into the memfd or the payload) and the whole call as the caller waited
 * for it, so that the decision says what the load cost its user. */
static void client_steps(json_t *decision, double write_ms, double t0)
{
  json_t *steps = json_object_get(decision, "steps");

  if (!json_is_object(steps)) {
    steps = json_object();
    if (json_object_set_new(decision, "steps", steps) < 0)
      return;
  }
  json_object_set_new(steps, "client_write_ms", json_real(write_ms));
  json_object_set_new(steps, "client_total_ms", json_real(now_ms() - t0));
}

/* Sends the load with the matrix in memfd fd (borrowed) when fd >= 0, else
 * in the payload pl, and adopts the matrix of its reply into *out; t0 is
 * when the call began, write_ms what writing the matrix took. */
static int send_load(struct spmv_client *c, json_t *req, int fd,
                     const struct spmvc_payload *pl,
                     const struct spmvc_progress_cb *cb,
                     enum spmv_dtype dtype, int64_t rows, int64_t cols,
                     int64_t nnz, double t0, double write_ms,
                     struct spmv_matrix **out)
{
  struct spmv_error err;
  json_t *reply = NULL;
  int rc;

  spmv_error_clear(&err);
  spmvc_lock(c);
  rc = fd >= 0 ? spmvc_call_fd(c, req, fd, cb, &reply, &err)
               : spmvc_call(c, req, pl, cb, &reply, NULL, NULL, &err);
  if (rc == 0 && spmvc_get_int(reply, "handle", -1) < 0)
    rc = spmv_error_set(&err, SPMV_EPROTO, "spmvd's reply to load has no handle");
  if (rc == 0) {
    *out = adopt(c, reply, dtype, rows, cols, nnz);
    if (*out == NULL)
      rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    else
      client_steps((*out)->decision, write_ms, t0);
  }
  spmvc_unlock(c);
  json_decref(reply);
  if (rc < 0)
    spmvc_fail(c, &err);
  return rc;
}

/*
 * Uploads a CSR matrix; on success *out is a new matrix owned by the
 * caller.  One whose host copy takes SPMVC_MEMFD_MIN or more is written
 * into a sealed memfd in the daemon's host layout, which the daemon keeps
 * as it is (no byte of it crosses the socket, none is copied); a smaller
 * one, or any when no memfd can be made, travels as the payload.
 */
int spmv_load_csr(struct spmv_client *c, enum spmv_dtype dtype, int64_t rows,
                  int64_t cols, int64_t nnz, const int64_t *row_ptr,
                  const int32_t *col_idx, const void *values,
                  const struct spmv_load_options *opt,
                  struct spmv_matrix **out)
{
  struct spmvc_progress_cb cb = { NULL, NULL, NULL, 0 };
  struct spmvc_payload pl = { NULL, 0, NULL, 0 };
  struct spmv_wire_csr_layout l;
  json_t *req = NULL;
  size_t vsz, isz, len;
  void *buf = NULL;
  int narrow, rc, fd = -1;
  double t0 = now_ms(), t1;

  if (out != NULL)
    *out = NULL;
  rc = check_load(c, dtype, rows, cols, nnz, row_ptr, col_idx, values, out);
  if (rc < 0)
    return rc;
  vsz = spmv_dtype_size(dtype);
  narrow = nnz <= INT32_MAX;
  isz = narrow ? 4 : 8;
  len = add_size(mul_size((size_t)rows + 1, isz),
                 mul_size((size_t)nnz, 4 + vsz));
  if (len == SIZE_MAX || mul_size((size_t)nnz, 12) == SIZE_MAX)
    return spmvc_failf(c, SPMV_ETOOBIG, "a matrix of %lld rows and %lld entries is too large",
                (long long)rows, (long long)nnz);
  spmv_wire_csr_layout(rows, nnz, &l);
  if (l.size >= SPMVC_MEMFD_MIN)
    fd = spmvc_csr_memfd(dtype, rows, nnz, row_ptr, col_idx, values);
  rc = load_request(c, dtype, rows, cols, nnz, narrow, fd >= 0, opt, &req);
  if (rc < 0)
    goto out;
  if (opt != NULL) {
    cb.fn = opt->progress;
    cb.arg = opt->progress_arg;
  }
  if (fd < 0) {
    buf = pack_csr(dtype, rows, nnz, narrow, row_ptr, col_idx, values, len);
    if (buf == NULL) {
      rc = spmvc_failf(c, SPMV_ENOMEM, "cannot allocate %zu bytes to send the matrix", len);
      goto out;
    }
    pl.p1 = buf;
    pl.n1 = len;
  }
  t1 = now_ms();
  rc = send_load(c, req, fd, &pl, &cb, dtype, rows, cols, nnz, t0, t1 - t0,
                 out);
out:
  if (fd >= 0)
    close(fd);  /* the daemon holds its own */
  free(buf);
  json_decref(req);
  return rc;
}

/* Returns the file name part of path. */
static const char *base_name(const char *path)
{
  const char *slash = strrchr(path, '/');

  return slash != NULL ? slash + 1 : path;
}

/* Reads a Matrix Market file here and loads it. */
int spmv_load_mtx(struct spmv_client *c, const char *path,
                  enum spmv_dtype dtype, const struct spmv_load_options *opt,
                  struct spmv_matrix **out)
{
  struct spmv_load_options o;
  struct spmv_csr *A = NULL;
  struct spmv_error err;
  float *vals32 = NULL;
  const void *vals;
  int64_t k;
  int rc;

  if (out != NULL)
    *out = NULL;
  if (path == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_load_mtx: path is NULL");
  if (spmv_dtype_name(dtype) == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "unknown value type %d (use SPMV_F32 or SPMV_F64)",
                (int)dtype);
  spmv_error_clear(&err);
  rc = spmv_mmio_read(path, &A, NULL, &err);
  if (rc < 0)
    return spmvc_fail(c, &err);
  vals = A->val;
  if (dtype == SPMV_F32) {
    vals32 = malloc((size_t)(A->nnz > 0 ? A->nnz : 1) * sizeof *vals32);
    if (vals32 == NULL) {
      rc = spmvc_failf(c, SPMV_ENOMEM, "out of memory converting %s to f32", path);
      goto out;
    }
    for (k = 0; k < A->nnz; k++)
      vals32[k] = (float)A->val[k];
    vals = vals32;
  }
  if (opt != NULL)
    o = *opt;
  else
    spmv_load_options_init(&o);
  if (o.name == NULL)
    o.name = base_name(path);
  rc = spmv_load_csr(c, dtype, A->rows, A->cols, A->nnz, A->row_ptr,
                     A->col_idx, vals, &o, out);
out:
  free(vals32);
  spmv_csr_free(A);
  return rc;
}

int spmv_matrix_blocks(const struct spmv_matrix *m)
{
  int n;

  spmvc_lock(m->client);
  n = (int)spmvc_get_int(m->decision, "blocks", 1);
  spmvc_unlock(m->client);
  return n;
}

/* Frees m in the daemon (best effort) and here; returns NULL. */
struct spmv_matrix *spmv_matrix_free(struct spmv_matrix *m)
{
  struct spmv_client *c;
  struct spmv_error err;
  json_t *req, *reply = NULL;

  if (m == NULL)
    return NULL;
  c = m->client;
  req = json_pack("{s:s, s:I}", "op", "free", "handle", (json_int_t)m->handle);
  spmvc_lock(c);
  if (req != NULL && c->fd >= 0)
    spmvc_call(c, req, NULL, NULL, &reply, NULL, NULL, &err);
  if (m->prev != NULL)
    m->prev->next = m->next;
  else
    c->matrices = m->next;
  if (m->next != NULL)
    m->next->prev = m->prev;
  spmvc_unlock(c);
  json_decref(req);
  json_decref(reply);
  spmvc_vectors_release(m);  /* after the daemon let its mapping go */
  json_decref(m->decision);
  free(m);
  return NULL;
}

/*
 * The shared body of multiply and multiply-batch: k products, x of k*cols
 * values, y of k*rows values.  On a big-endian host the vectors are
 * converted into temporary copies.
 */
static int multiply(struct spmv_matrix *m, int k, double alpha, const void *x,
                    double beta, void *y, int batch)
{
  struct spmv_client *c = m->client;
  struct spmvc_payload pl;
  struct spmv_error err;
  json_t *req, *reply = NULL;
  size_t vsz = spmv_dtype_size(m->dtype);
  size_t xlen, ylen;
  void *rp = NULL, *xle = NULL, *yle = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  uint64_t rlen = 0;
#endif
  int rc;

  if (x == NULL || y == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_multiply: %s is NULL", x == NULL ? "x" : "y");
  if (k < 1)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_multiply_batch: k is %d, must be >= 1", k);
  if (!isfinite(alpha) || !isfinite(beta))
    return spmvc_failf(c, SPMV_EINVAL, "alpha and beta must be finite (alpha %g, beta %g)",
                alpha, beta);
  xlen = mul_size(mul_size((size_t)m->cols, vsz), (size_t)k);
  ylen = mul_size(mul_size((size_t)m->rows, vsz), (size_t)k);
  if (xlen == SIZE_MAX || ylen == SIZE_MAX)
    return spmvc_failf(c, SPMV_ETOOBIG, "k = %d vectors are too large", k);
  if (batch)
    req = json_pack("{s:s, s:I, s:f, s:f, s:i}", "op", "multiply-batch",
                    "handle", (json_int_t)m->handle, "alpha", alpha, "beta",
                    beta, "k", k);
  else
    req = json_pack("{s:s, s:I, s:f, s:f}", "op", "multiply", "handle",
                    (json_int_t)m->handle, "alpha", alpha, "beta", beta);
  if (req == NULL)
    return spmvc_failf(c, SPMV_ENOMEM, "out of memory");
  pl.p1 = x;
  pl.n1 = xlen;
  pl.p2 = beta != 0 ? y : NULL;
  pl.n2 = beta != 0 ? ylen : 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  xle = malloc(xlen > 0 ? xlen : 1);
  yle = beta != 0 ? malloc(ylen > 0 ? ylen : 1) : NULL;
  if (xle == NULL || (beta != 0 && yle == NULL)) {
    rc = spmvc_failf(c, SPMV_ENOMEM, "out of memory");
    goto out;
  }
  spmvc_le_copy(xle, x, xlen / vsz, vsz);
  pl.p1 = xle;
  if (yle != NULL) {
    spmvc_le_copy(yle, y, ylen / vsz, vsz);
    pl.p2 = yle;
  }
#endif
  spmv_error_clear(&err);
  spmvc_lock(c);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  rc = spmvc_call(c, req, &pl, NULL, &reply, &rp, &rlen, &err);
  if (rc == 0 && rlen != ylen)
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "spmvd answered a product with %llu bytes, expected %zu",
                        (unsigned long long)rlen, ylen);
  if (rc == 0)
    spmvc_le_copy(y, rp, ylen / vsz, vsz);
#else
  /* y comes back straight into the caller's array. */
  rc = spmvc_call_into(c, req, &pl, &reply, y, ylen, &err);
#endif
  spmvc_unlock(c);
  if (rc < 0)
    spmvc_fail(c, &err);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
out:
#endif
  free(xle);
  free(yle);
  free(rp);
  json_decref(req);
  json_decref(reply);
  return rc;
}

/* y = alpha*A*x + beta*y through the daemon. */
int spmv_multiply(struct spmv_matrix *m, double alpha, const void *x,
                  double beta, void *y)
{
  return multiply(m, 1, alpha, x, beta, y, 0);
}

/* k products at once through the daemon. */
int spmv_multiply_batch(struct spmv_matrix *m, int k, double alpha,
                        const void *x, double beta, void *y)
{
  return multiply(m, k, alpha, x, beta, y, 1);
}

/* Sends one request about m under its client's lock; *reply is new. */
static int matrix_call(struct spmv_matrix *m, json_t *req,
                       const struct spmvc_progress_cb *cb, json_t **reply)
{
  struct spmv_client *c = m->client;
  struct spmv_error err;
  int rc;

  *reply = NULL;
  if (req == NULL)
    return spmvc_failf(c, SPMV_ENOMEM, "out of memory");
  spmv_error_clear(&err);
  spmvc_lock(c);
  rc = spmvc_call(c, req, NULL, cb, reply, NULL, NULL, &err);
  spmvc_unlock(c);
  if (rc < 0)
    spmvc_fail(c, &err);
  json_decref(req);
  return rc;
}

/* Fills the struct from info's reply. */
static void info_from_json(const json_t *r, struct spmv_info *info)
{
  const json_t *cfg = json_object_get(r, "config");
  const json_t *prof = json_object_get(r, "profile");
  char dtype[8];

  memset(info, 0, sizeof *info);
  info->handle = spmvc_get_int(r, "handle", -1);
  spmvc_get_str(r, "name", info->name, sizeof info->name);
  spmvc_get_str(r, "dtype", dtype, sizeof dtype);
  info->dtype = SPMV_F64;  /* the daemon always names it; f64 if it did not */
  spmv_dtype_parse(dtype, &info->dtype);
  info->rows = spmvc_get_int(r, "rows", 0);
  info->cols = spmvc_get_int(r, "cols", 0);
  info->nnz = spmvc_get_int(r, "nnz", 0);
  spmvc_get_str(r, "fingerprint", info->fingerprint, sizeof info->fingerprint);
  if (json_is_string(cfg)) {
    spmvc_get_str(r, "config", info->config, sizeof info->config);
  } else {
    spmvc_get_str(cfg, "format", info->format, sizeof info->format);
    spmvc_get_str(cfg, "text", info->config, sizeof info->config);
    info->bs = (int)spmvc_get_int(cfg, "bs", 0);
    info->tpr = (int)spmvc_get_int(cfg, "tpr", 0);
    info->param = (int)spmvc_get_int(cfg, "param", 0);
    info->param2 = (int)spmvc_get_int(cfg, "param2", 0);
  }
  spmvc_get_str(r, "source", info->source, sizeof info->source);
  spmvc_get_str(r, "strategy", info->strategy, sizeof info->strategy);
  info->time_us = spmvc_get_num(r, "time_us", 0);
  info->gflops = spmvc_get_num(r, "gflops", 0);
  info->multiplies = spmvc_get_int(r, "multiplies", 0);
  info->rl_min = spmvc_get_int(prof, "rl_min", 0);
  info->rl_max = spmvc_get_int(prof, "rl_max", 0);
  info->rl_mean = spmvc_get_num(prof, "rl_mean", 0);
  info->rl_sigma = spmvc_get_num(prof, "rl_sigma", 0);
  info->rl_cv = spmvc_get_num(prof, "rl_cv", 0);
  info->empty_rows = spmvc_get_int(prof, "empty_rows", 0);
  info->ell_fill = spmvc_get_num(prof, "ell_fill", 0);
  info->hyb_k = spmvc_get_int(prof, "hyb_k", 0);
  info->ndiags = spmvc_get_int(prof, "ndiags", 0);
  info->dia_fill = spmvc_get_num(prof, "dia_fill", 0);
  info->col_locality = spmvc_get_num(prof, "col_locality", 0);
}

/* Asks spmvd for m's description into *info. */
int spmv_info(struct spmv_matrix *m, struct spmv_info *info)
{
  json_t *reply;
  int rc;

  if (info == NULL)
    return spmvc_failf(m->client, SPMV_EINVAL, "spmv_info: info is NULL");
  rc = matrix_call(m, json_pack("{s:s, s:I}", "op", "info", "handle",
                                (json_int_t)m->handle), NULL, &reply);
  if (rc == 0)
    info_from_json(reply, info);
  json_decref(reply);
  return rc;
}

/* Runs a request about m and hands its reply back as a new string. */
static int matrix_call_string(struct spmv_matrix *m, json_t *req,
                              const struct spmvc_progress_cb *cb, char **json)
{
  json_t *reply;
  int rc;

  if (json == NULL) {
    json_decref(req);
    return spmvc_failf(m->client, SPMV_EINVAL, "the output string pointer is NULL");
  }
  *json = NULL;
  rc = matrix_call(m, req, cb, &reply);
  if (rc == 0) {
    *json = spmvc_dump_reply(reply);
    if (*json == NULL)
      rc = spmvc_failf(m->client, SPMV_ENOMEM, "out of memory");
  }
  json_decref(reply);
  return rc;
}

/* m's description as the daemon's JSON, a new string owned by the caller. */
int spmv_info_json(struct spmv_matrix *m, char **json)
{
  return matrix_call_string(m, json_pack("{s:s, s:I}", "op", "info", "handle",
                                         (json_int_t)m->handle), NULL, json);
}

/* Tunes m again now. */
int spmv_tune(struct spmv_matrix *m, const char *strategy,
              spmv_progress_fn progress, void *arg)
{
  struct spmvc_progress_cb cb = { progress, arg, NULL, 0 };
  json_t *req, *reply;
  int rc;

  req = json_pack("{s:s, s:I}", "op", "tune", "handle", (json_int_t)m->handle);
  if (req != NULL && strategy != NULL &&
      json_object_set_new(req, "strategy", json_string(strategy)) < 0) {
    json_decref(req);
    return spmvc_failf(m->client, SPMV_EINVAL, "strategy is not valid UTF-8");
  }
  rc = matrix_call(m, req, &cb, &reply);
  if (rc == 0) {
    json_object_del(reply, "id");
    json_object_del(reply, "ok");
    spmvc_lock(m->client);
    json_decref(m->decision);
    m->decision = reply;
    spmvc_unlock(m->client);
    return 0;
  }
  json_decref(reply);
  return rc;
}

/* The decision of the load or last tune, as a new string. */
int spmv_matrix_decision_json(struct spmv_matrix *m, char **json)
{
  if (json == NULL)
    return spmvc_failf(m->client, SPMV_EINVAL, "the output string pointer is NULL");
  spmvc_lock(m->client);
  *json = spmvc_dump_reply(m->decision);
  spmvc_unlock(m->client);
  if (*json == NULL)
    return spmvc_failf(m->client, SPMV_ENOMEM, "out of memory");
  return 0;
}

/* Times every candidate on m; *json is a new string owned by the caller. */
int spmv_bench_json(struct spmv_matrix *m, spmv_progress_fn progress,
                    void *arg, char **json)
{
  struct spmvc_progress_cb cb = { progress, arg, NULL, 0 };

  return matrix_call_string(m, json_pack("{s:s, s:I}", "op", "bench", "handle",
                                         (json_int_t)m->handle), &cb, json);
}

/* Times the named configurations on m as the calibration times points. */
int spmv_bench_configs_json(struct spmv_matrix *m, const char *const *configs,
                            size_t n, int rounds, spmv_progress_fn progress,
                            void *arg, char **json)
{
  struct spmvc_progress_cb cb = { progress, arg, NULL, 0 };
  json_t *list;

  if (m == NULL)
    return spmvc_failf(NULL, SPMV_EINVAL, "the matrix is NULL");
  if (configs == NULL || n < 1 || n > SPMV_BENCH_MAX_CONFIGS)
    return spmvc_failf(m->client, SPMV_EINVAL, "%zu configurations: give 1 to %d", n,
                SPMV_BENCH_MAX_CONFIGS);
  if (rounds < 1 || rounds > SPMV_BENCH_MAX_ROUNDS)
    return spmvc_failf(m->client, SPMV_EINVAL, "rounds %d not in [1, %d]", rounds,
                SPMV_BENCH_MAX_ROUNDS);
  if ((list = json_array()) == NULL)
    return spmvc_failf(m->client, SPMV_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (configs[i] == NULL) {
      json_decref(list);
      return spmvc_failf(m->client, SPMV_EINVAL, "configuration %zu is NULL", i);
    }
    json_array_append_new(list, json_string(configs[i]));
  }
  return matrix_call_string(m, json_pack("{s:s, s:I, s:o, s:i}", "op", "bench",
                                         "handle", (json_int_t)m->handle,
                                         "configs", list, "rounds", rounds),
                            &cb, json);
}
