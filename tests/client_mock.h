/* client_mock.h: what the client library's test programs (check_client,
 * check_client_threads) share: the in-process mock server, and the product
 * checks they run against it and against a real spmvd.  Static functions:
 * each program has its own copy. */
#ifndef CLIENT_MOCK_H
#define CLIENT_MOCK_H

#include <errno.h>
#include <float.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include "spmv.h"
#include "testdata.h"
#include "spmv_csr.h"
#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "spmv_wire.h"

/*
 * The mock server.  One thread accepts; one thread per connection reads
 * frames and answers them with the plain CSR loop, so that the client's
 * framing, payload packing, error mapping and locking are tested without
 * spmvd.  Behaviour is steered by the matrix name of a load:
 * "close-me" (close the connection without a reply), "garbage" (answer
 * with bytes that are no frame), and by the mock's hello_version.
 */
#define MOCK_MAX_MATRICES 64

struct mock {
  char dir[64];
  char path[108];
  int lfd;
  int stop[2];         /* a pipe: written to stop the accept loop */
  pthread_t thread;
  int hello_version;   /* what hello answers (1 normally) */
};

struct mock_conn {
  int fd;
  struct mock *mock;
  struct spmv_csr *A[MOCK_MAX_MATRICES];  /* handle = index + 1 */
  enum spmv_dtype dt[MOCK_MAX_MATRICES];
  int64_t multiplies[MOCK_MAX_MATRICES];
};

/* Sends an error reply. */
static void mock_error(int fd, json_int_t id, int code, const char *msg)
{
  struct spmv_error err;
  json_t *r = json_pack("{s:I, s:b, s:{s:s, s:s}}", "id", id, "ok", 0,
                        "error", "code", spmv_err_name(code), "message", msg);

  spmv_wire_write_frame(fd, r, NULL, 0, &err);
  json_decref(r);
}

/* Reads value k of a dtype array as double.  Payload arrays are packed
 * (the values follow 4-byte columns), so they may be misaligned. */
static double get_val(const void *p, enum spmv_dtype dt, int64_t k)
{
  if (dt == SPMV_F32) {
    float f;

    memcpy(&f, (const char *)p + k * 4, 4);
    return f;
  }
  double d;

  memcpy(&d, (const char *)p + k * 8, 8);
  return d;
}

/* Writes value k of a dtype array (as get_val, maybe misaligned). */
static void put_val(void *p, enum spmv_dtype dt, int64_t k, double v)
{
  if (dt == SPMV_F32) {
    float f = (float)v;

    memcpy((char *)p + k * 4, &f, 4);
  } else {
    memcpy((char *)p + k * 8, &v, 8);
  }
}

/* Handles load: unpacks and validates the CSR, sends progress, replies. */
static void mock_load(struct mock_conn *mc, json_t *req, json_int_t id,
                      const unsigned char *pl, uint64_t plen)
{
  const char *dts = json_string_value(json_object_get(req, "dtype"));
  const char *idx = json_string_value(json_object_get(req, "index"));
  const char *name = json_string_value(json_object_get(req, "name"));
  int64_t rows = json_integer_value(json_object_get(req, "rows"));
  int64_t cols = json_integer_value(json_object_get(req, "cols"));
  int64_t nnz = json_integer_value(json_object_get(req, "nnz"));
  enum spmv_dtype dt = dts && strcmp(dts, "f32") == 0 ? SPMV_F32 : SPMV_F64;
  size_t isz = idx && strcmp(idx, "i32") == 0 ? 4 : 8;
  size_t vsz = spmv_dtype_size(dt);
  struct spmv_fingerprint fp;
  struct spmv_error err;
  struct spmv_csr *A;
  char hex[33], msg[300];
  int64_t i, h;
  json_t *r;

  if (name != NULL && strcmp(name, "close-me") == 0) {
    shutdown(mc->fd, SHUT_RDWR);
    return;
  }
  if (name != NULL && strcmp(name, "garbage") == 0) {
    static const char junk[40] = "HTTP/1.0 200 OK\r\n\r\n";

    send(mc->fd, junk, sizeof junk, MSG_NOSIGNAL);
    return;
  }
  if (plen != (uint64_t)(rows + 1) * isz + (uint64_t)nnz * (4 + vsz)) {
    mock_error(mc->fd, id, SPMV_EPROTO, "payload length mismatch");
    return;
  }
  A = spmv_csr_new(rows, cols, nnz);
  for (i = 0; i <= rows; i++) {
    if (isz == 4) {
      int32_t v;

      memcpy(&v, pl + i * 4, 4);
      A->row_ptr[i] = v;
    } else {
      memcpy(&A->row_ptr[i], pl + i * 8, 8);
    }
  }
  pl += (size_t)(rows + 1) * isz;
  memcpy(A->col_idx, pl, (size_t)nnz * 4);
  pl += (size_t)nnz * 4;
  for (i = 0; i < nnz; i++)
    A->val[i] = get_val(pl, dt, i);
  if (spmv_csr_validate(A, 0, &err) < 0) {
    mock_error(mc->fd, id, err.code, err.msg);
    spmv_csr_free(A);
    return;
  }
  for (h = 0; h < MOCK_MAX_MATRICES && mc->A[h] != NULL; h++)
    ;
  if (h == MOCK_MAX_MATRICES) {
    snprintf(msg, sizeof msg, "more than max_matrices = %d", MOCK_MAX_MATRICES);
    mock_error(mc->fd, id, SPMV_ELIMIT, msg);
    spmv_csr_free(A);
    return;
  }
  mc->A[h] = A;
  mc->dt[h] = dt;
  mc->multiplies[h] = 0;
  for (i = 1; i <= 2; i++) {
    r = json_pack("{s:I, s:s, s:s, s:I, s:I, s:s, s:f}", "id", id, "event",
                  "progress", "stage", "tuning", "done", (json_int_t)i,
                  "total", (json_int_t)2, "candidate", "csr-scalar bs=128",
                  "time_us", 1.5 * (double)i);
    spmv_wire_write_frame(mc->fd, r, NULL, 0, &err);
    json_decref(r);
  }
  spmv_fingerprint_compute(A, &fp);
  spmv_fingerprint_hex(&fp, hex);
  r = json_pack("{s:I, s:b, s:I, s:s, s:s, s:{s:s, s:i, s:i, s:i, s:i, s:s},"
                " s:f, s:f, s:s}",
                "id", id, "ok", 1, "handle", (json_int_t)h + 1, "fingerprint",
                hex, "source", "tuned", "config", "format", "csr-scalar", "bs",
                128, "tpr", 0, "param", 0, "param2", 0, "text",
                "csr-scalar bs=128", "time_us", 3.0, "gflops", 1.25,
                "strategy", "trial");
  spmv_wire_write_frame(mc->fd, r, NULL, 0, &err);
  json_decref(r);
}

/* Returns the matrix slot of the request's handle, or -1 after replying
 * ENOENT. */
static int mock_slot(struct mock_conn *mc, json_t *req, json_int_t id)
{
  json_int_t h = json_integer_value(json_object_get(req, "handle"));
  char msg[64];

  if (h < 1 || h > MOCK_MAX_MATRICES || mc->A[h - 1] == NULL) {
    snprintf(msg, sizeof msg, "no matrix with handle %lld", (long long)h);
    mock_error(mc->fd, id, SPMV_ENOENT, msg);
    return -1;
  }
  return (int)h - 1;
}

/* Handles multiply and multiply-batch with the reference loop. */
static void mock_multiply(struct mock_conn *mc, json_t *req, json_int_t id,
                          const unsigned char *pl, uint64_t plen, int batch)
{
  double alpha = json_number_value(json_object_get(req, "alpha"));
  double beta = json_number_value(json_object_get(req, "beta"));
  int64_t k = batch ? json_integer_value(json_object_get(req, "k")) : 1;
  struct spmv_error err;
  struct spmv_csr *A;
  enum spmv_dtype dt;
  double *x, *y;
  void *out;
  size_t vsz, need;
  int64_t b, i;
  int s;
  json_t *r;

  s = mock_slot(mc, req, id);
  if (s < 0)
    return;
  A = mc->A[s];
  dt = mc->dt[s];
  vsz = spmv_dtype_size(dt);
  need = (size_t)k * (size_t)A->cols * vsz +
         (beta != 0 ? (size_t)k * (size_t)A->rows * vsz : 0);
  if (k < 1 || plen != need) {
    mock_error(mc->fd, id, SPMV_EPROTO, "payload length mismatch");
    return;
  }
  x = malloc(((size_t)A->cols + 1) * sizeof *x);
  y = malloc(((size_t)A->rows + 1) * sizeof *y);
  out = malloc((size_t)k * (size_t)A->rows * vsz + 1);
  for (b = 0; b < k; b++) {
    const unsigned char *xb = pl + (size_t)b * (size_t)A->cols * vsz;
    const unsigned char *yb = pl + (size_t)k * (size_t)A->cols * vsz +
                              (size_t)b * (size_t)A->rows * vsz;

    for (i = 0; i < A->cols; i++)
      x[i] = get_val(xb, dt, i);
    for (i = 0; i < A->rows; i++)
      y[i] = beta != 0 ? get_val(yb, dt, i) : 0;
    spmv_csr_ref(A, alpha, x, beta, y);
    for (i = 0; i < A->rows; i++)
      put_val((char *)out + (size_t)b * (size_t)A->rows * vsz, dt, i, y[i]);
  }
  mc->multiplies[s] += k;
  r = json_pack("{s:I, s:b}", "id", id, "ok", 1);
  spmv_wire_write_frame(mc->fd, r, out, (uint64_t)k * (uint64_t)A->rows * vsz,
                        &err);
  json_decref(r);
  free(x);
  free(y);
  free(out);
}

/* Handles info with the real profile. */
static void mock_info(struct mock_conn *mc, json_t *req, json_int_t id)
{
  struct spmv_profile p;
  struct spmv_error err;
  struct spmv_fingerprint fp;
  char hex[33];
  json_t *r;
  int s = mock_slot(mc, req, id);

  if (s < 0)
    return;
  spmv_profile_compute(mc->A[s], &p, &err);
  spmv_fingerprint_compute(mc->A[s], &fp);
  spmv_fingerprint_hex(&fp, hex);
  r = json_pack("{s:I, s:b, s:I, s:s, s:s, s:I, s:I, s:I, s:s,"
                " s:{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:f},"
                " s:{s:s, s:i, s:s}, s:s, s:s, s:f, s:f, s:[{s:s, s:f}], s:I}",
                "id", id, "ok", 1, "handle", (json_int_t)s + 1, "name", "m",
                "dtype", spmv_dtype_name(mc->dt[s]), "rows", p.rows, "cols",
                p.cols, "nnz", p.nnz, "fingerprint", hex, "profile", "rows",
                p.rows, "cols", p.cols, "nnz", p.nnz, "rl_min", p.rl_min,
                "rl_max", p.rl_max, "rl_mean", p.rl_mean, "rl_sigma",
                p.rl_sigma, "rl_cv", p.rl_cv, "empty_rows", p.empty_rows,
                "col_locality", p.col_locality, "config", "format",
                "csr-scalar", "bs", 128, "text", "csr-scalar bs=128", "source",
                "cache", "strategy", "trial", "time_us", 3.0, "gflops", 1.25,
                "trials", "config", "csr-scalar bs=128", "time_us", 3.0,
                "multiplies", (json_int_t)mc->multiplies[s]);
  spmv_wire_write_frame(mc->fd, r, NULL, 0, &err);
  json_decref(r);
}

/* Serves one connection until it closes. */
static void *mock_conn_main(void *arg)
{
  struct mock_conn *mc = arg;
  struct spmv_wire_limits lim;
  struct spmv_error err;
  int hello = 0, i;

  spmv_wire_limits_default(&lim);
  for (;;) {
    json_t *req, *r = NULL;
    void *pl;
    uint64_t plen;
    const char *op;
    json_int_t id;

    if (spmv_wire_read_frame(mc->fd, &lim, &req, &pl, &plen, &err) < 0)
      break;
    op = json_string_value(json_object_get(req, "op"));
    id = json_integer_value(json_object_get(req, "id"));
    if (op == NULL) {
      mock_error(mc->fd, id, SPMV_EPROTO, "no op");
    } else if (strcmp(op, "hello") == 0) {
      json_int_t v = json_integer_value(json_object_get(req, "version"));

      if (v != SPMV_PROTO_VERSION) {
        mock_error(mc->fd, id, SPMV_EVERSION, "client speaks ?, spmvd speaks 1");
      } else {
        hello = 1;
        r = json_pack("{s:I, s:b, s:i, s:s, s:s, s:s}", "id", id, "ok", 1,
                      "version", mc->mock->hello_version, "server", "mock",
                      "backend", "cpu", "device", "test");
      }
    } else if (!hello) {
      mock_error(mc->fd, id, SPMV_EPROTO, "hello must come first");
    } else if (strcmp(op, "load") == 0) {
      mock_load(mc, req, id, pl, plen);
    } else if (strcmp(op, "multiply") == 0) {
      mock_multiply(mc, req, id, pl, plen, 0);
    } else if (strcmp(op, "multiply-batch") == 0) {
      mock_multiply(mc, req, id, pl, plen, 1);
    } else if (strcmp(op, "info") == 0) {
      mock_info(mc, req, id);
    } else if (strcmp(op, "free") == 0) {
      int s = mock_slot(mc, req, id);

      if (s >= 0) {
        mc->A[s] = spmv_csr_free(mc->A[s]);
        r = json_pack("{s:I, s:b}", "id", id, "ok", 1);
      }
    } else if (strcmp(op, "status") == 0) {
      r = json_pack("{s:I, s:b, s:s, s:i, s:i, s:f, s:s, s:s, s:[], s:i, s:i}",
                    "id", id, "ok", 1, "server", "mock", "version", 1, "pid",
                    (int)getpid(), "uptime_s", 1.0, "backend", "cpu", "device",
                    "test", "workers", "connections", 1, "matrices", 0);
    } else if (strcmp(op, "forget") == 0) {
      mock_error(mc->fd, id, SPMV_EPERM, "forget needs root or the admin group");
    } else {
      char msg[80];

      snprintf(msg, sizeof msg, "unknown operation '%.40s'", op);
      mock_error(mc->fd, id, SPMV_EPROTO, msg);
    }
    if (r != NULL)
      spmv_wire_write_frame(mc->fd, r, NULL, 0, &err);
    json_decref(r);
    json_decref(req);
    free(pl);
  }
  for (i = 0; i < MOCK_MAX_MATRICES; i++)
    spmv_csr_free(mc->A[i]);
  close(mc->fd);
  free(mc);
  return NULL;
}

/* Accepts connections until told to stop. */
static void *mock_main(void *arg)
{
  struct mock *m = arg;

  for (;;) {
    struct pollfd pfd[2] = { { m->lfd, POLLIN, 0 }, { m->stop[0], POLLIN, 0 } };
    struct mock_conn *mc;
    pthread_t t;
    int fd;

    if (poll(pfd, 2, -1) < 0 && errno == EINTR)
      continue;
    if (pfd[1].revents != 0)
      break;
    fd = accept(m->lfd, NULL, NULL);
    if (fd < 0)
      continue;
    mc = calloc(1, sizeof *mc);
    mc->fd = fd;
    mc->mock = m;
    pthread_create(&t, NULL, mock_conn_main, mc);
    pthread_detach(t);
  }
  return NULL;
}

/* Starts a mock server answering hello with version on a fresh socket in
 * a temporary directory. */
static void mock_start_version(struct mock *m, int version)
{
  struct sockaddr_un addr;

  memset(m, 0, sizeof *m);
  m->hello_version = version;
  testdata_tmp(m->dir, sizeof m->dir, "check_client.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(m->dir));
  snprintf(m->path, sizeof m->path, "%s/spmvd.sock", m->dir);
  m->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", m->path);
  ck_assert_int_eq(bind(m->lfd, (struct sockaddr *)&addr, sizeof addr), 0);
  ck_assert_int_eq(listen(m->lfd, 64), 0);
  ck_assert_int_eq(pipe(m->stop), 0);
  ck_assert_int_eq(pthread_create(&m->thread, NULL, mock_main, m), 0);
}

/* Starts a mock server speaking our version. */
static void mock_start(struct mock *m)
{
  mock_start_version(m, SPMV_PROTO_VERSION);
}

/* Stops the accept loop and removes the socket and directory. */
static void mock_stop(struct mock *m)
{
  if (write(m->stop[1], "x", 1) != 1)
    abort();
  pthread_join(m->thread, NULL);
  close(m->lfd);
  close(m->stop[0]);
  close(m->stop[1]);
  unlink(m->path);
  rmdir(m->dir);
}

/* Reads a matrix of the test data (testdata.h); its path in path. */
static struct spmv_csr *read_matrix(const char *name, char *path, size_t n)
{
  struct spmv_csr *A = NULL;
  struct spmv_error err;

  ck_assert_msg(testdata_path(name, path, n) == 0, "%s: not found", path);
  ck_assert_msg(spmv_mmio_read(path, &A, NULL, &err) == 0, "%s", err.msg);
  return A;
}

/* Max |y - ref| / (|A|_inf |x|_inf + |ref|_inf): the scaled residual. */
static double resid(const struct spmv_csr *A, const double *x, const double *y,
                    const double *ref)
{
  double anorm = 0, xnorm = 0, rnorm = 0, diff = 0;
  int64_t i, k;

  for (i = 0; i < A->rows; i++) {
    double s = 0;

    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += fabs(A->val[k]);
    anorm = fmax(anorm, s);
    rnorm = fmax(rnorm, fabs(ref[i]));
    diff = fmax(diff, fabs(y[i] - ref[i]));
  }
  for (i = 0; i < A->cols; i++)
    xnorm = fmax(xnorm, fabs(x[i]));
  return diff / (anorm * xnorm + rnorm + 1e-300);
}

/* Fills v with a deterministic pattern in [-1, 1]. */
static void fill(double *v, int64_t n, unsigned seed)
{
  int64_t i;

  for (i = 0; i < n; i++)
    v[i] = (double)((i * 7919 + seed * 104729) % 2001) / 1000.0 - 1.0;
}

/* Loads A through c in dtype and checks alpha*A*x + beta*y against the
 * reference, for beta 0 (y full of NaN) and beta != 0. */
static void check_products(struct spmv_client *c, const struct spmv_csr *A,
                           enum spmv_dtype dt, unsigned seed)
{
  struct spmv_matrix *m = NULL;
  double *x = malloc((size_t)(A->cols + 1) * sizeof *x);
  double *y0 = malloc((size_t)(A->rows + 1) * sizeof *y0);
  double *ref = malloc((size_t)(A->rows + 1) * sizeof *ref);
  double *yd = malloc((size_t)(A->rows + 1) * sizeof *yd);
  float *vals = NULL, *xf = NULL, *yf = NULL;
  double tol;
  int64_t i, maxrow = 1;
  int pass;

  /* k * eps * longest row, in the precision of the products. */
  for (i = 0; i < A->rows; i++)
    if (A->row_ptr[i + 1] - A->row_ptr[i] > maxrow)
      maxrow = A->row_ptr[i + 1] - A->row_ptr[i];
  tol = 4.0 * (double)maxrow * (dt == SPMV_F32 ? FLT_EPSILON : DBL_EPSILON);
  fill(x, A->cols, seed);
  fill(y0, A->rows, seed + 1);
  if (dt == SPMV_F32) {
    vals = malloc((size_t)(A->nnz + 1) * sizeof *vals);
    xf = malloc((size_t)(A->cols + 1) * sizeof *xf);
    yf = malloc((size_t)(A->rows + 1) * sizeof *yf);
    for (i = 0; i < A->nnz; i++)
      vals[i] = (float)A->val[i];
    for (i = 0; i < A->cols; i++)
      xf[i] = (float)x[i];
  }
  ck_assert_msg(spmv_load_csr(c, dt, A->rows, A->cols, A->nnz, A->row_ptr,
                              A->col_idx, dt == SPMV_F32 ? (void *)vals
                                                         : (void *)A->val,
                              NULL, &m) == 0, "%s", spmv_client_errmsg(c));
  for (pass = 0; pass < 2; pass++) {
    double alpha = 1.5, beta = pass == 0 ? 0.0 : -0.5;

    for (i = 0; i < A->rows; i++)
      ref[i] = y0[i];
    spmv_csr_ref(A, alpha, x, beta, ref);
    if (dt == SPMV_F32) {
      for (i = 0; i < A->rows; i++)
        yf[i] = pass == 0 ? NAN : (float)y0[i];
      ck_assert_msg(spmv_multiply(m, alpha, xf, beta, yf) == 0, "%s",
                    spmv_client_errmsg(c));
      for (i = 0; i < A->rows; i++)
        yd[i] = yf[i];
    } else {
      for (i = 0; i < A->rows; i++)
        yd[i] = pass == 0 ? NAN : y0[i];
      ck_assert_msg(spmv_multiply(m, alpha, x, beta, yd) == 0, "%s",
                    spmv_client_errmsg(c));
    }
    ck_assert_msg(resid(A, x, yd, ref) <= tol, "residual %g", resid(A, x, yd, ref));
  }
  m = spmv_matrix_free(m);
  ck_assert_ptr_null(m);
  free(x);
  free(y0);
  free(ref);
  free(yd);
  free(vals);
  free(xf);
  free(yf);
}

#endif /* CLIENT_MOCK_H */
