/* check_solve.c: the solve request at the protocol's level (raw frames,
 * cpu backend): the methods on shipped matrices, checked by the test's own
 * residual, PageRank against a plain power iteration, the edge cases'
 * reasons and errors, progress, device vectors, determinism, the
 * cancel of a solve whose client hangs up, and a solve outlasting the
 * device timeout. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

/* A loaded matrix on fd (f32 values when f32); returns its handle. */
static int64_t load(int fd, const struct spmv_csr *A, int f32)
{
  json_t *r = itest_load(fd, 1, A, f32, "auto");
  int64_t h = itest_handle(r);
  json_decref(r);
  return h;
}

/* b: values in +-[0.5, 1.5). */
static double *rhs(int64_t n, unsigned seed)
{
  double *b = malloc((size_t)(n ? n : 1) * sizeof *b);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    b[i] = (0.5 + (seed >> 8 & 0xffff) / 65536.0) * (seed & 0x10000 ? -1 : 1);
  }
  return b;
}

/* n doubles as the payload of a dtype (f32 converts), malloc'd. */
static void *as_dtype(const double *v, int64_t n, int f32)
{
  void *p = malloc((size_t)(n ? n : 1) * (f32 ? 4 : 8));
  for (int64_t i = 0; i < n; i++) {
    if (f32)
      ((float *)p)[i] = (float)v[i];
    else
      ((double *)p)[i] = v[i];
  }
  return p;
}

/* A solve with host b (NULL: none); extra fields as JSON text; returns
 * the reply and x (doubles, malloc'd) in *x. */
static json_t *solve(int fd, int64_t h, const char *method, const double *b,
                     int64_t n, int f32, const char *extra, double **x,
                     int *events)
{
  json_error_t e;
  json_t *req = json_loads(extra ? extra : "{}", 0, &e);
  ck_assert_msg(req != NULL, "bad extra %s", extra);
  json_object_set_new(req, "op", json_string("solve"));
  json_object_set_new(req, "id", json_integer(7));
  json_object_set_new(req, "handle", json_integer(h));
  json_object_set_new(req, "method", json_string(method));
  void *pl = b ? as_dtype(b, n, f32) : NULL;
  void *rp = NULL;
  uint64_t rlen = 0;
  ck_assert_int_eq(itest_send(fd, req, pl, b ? (uint64_t)n * (f32 ? 4 : 8) : 0), 0);
  json_t *r = itest_recv_reply(fd, &rp, &rlen, events);
  ck_assert_msg(r != NULL, "no reply to solve");
  if (x) {
    *x = NULL;
    if (rlen > 0) {
      int64_t k = (int64_t)(rlen / (f32 ? 4 : 8));
      *x = malloc((size_t)k * sizeof **x);
      for (int64_t i = 0; i < k; i++)
        (*x)[i] = f32 ? ((float *)rp)[i] : ((double *)rp)[i];
    }
  }
  free(rp);
  free(pl);
  return r;
}

/* ||b - A x|| / ||b|| in double from the CSR. */
static double rel_resid(const struct spmv_csr *A, const double *b,
                        const double *x)
{
  double *y = malloc((size_t)A->rows * sizeof *y), num = 0, den = 0;
  spmv_csr_ref(A, 1, x, 0, y);
  for (int64_t i = 0; i < A->rows; i++) {
    num += (b[i] - y[i]) * (b[i] - y[i]);
    den += b[i] * b[i];
  }
  free(y);
  return sqrt(num) / sqrt(den);
}

static const char *reason(json_t *r)
{
  const char *s = json_string_value(json_object_get(r, "reason"));
  ck_assert_msg(s != NULL, "no reason: %s", itest_error_code(r));
  return s;
}

/* Solves A x = b by method and asserts the test's own residual. */
static void solves(const char *mtx, const struct spmv_csr *given,
                   const char *method, int f32, const char *extra, double bound)
{
  struct spmv_csr *A = given ? NULL : itest_matrix(mtx);
  const struct spmv_csr *M = given ? given : A;
  int fd = itest_open(&itest_d);
  int64_t h = load(fd, M, f32);
  double *b = rhs(M->rows, 11), *x;
  json_t *r = solve(fd, h, method, b, M->rows, f32, extra, &x, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "converged")),
                "%s on %s: %s after %lld iterations (%s)", method,
                mtx ? mtx : "random", reason(r),
                (long long)json_integer_value(json_object_get(r, "iterations")),
                itest_error_code(r));
  double rr = rel_resid(M, b, x);
  ck_assert_msg(rr <= bound, "%s on %s: ||b - Ax||/||b|| = %g > %g", method,
                mtx ? mtx : "random", rr, bound);
  json_decref(r);
  free(b);
  free(x);
  close(fd);
  spmv_csr_free(A);
}

/* A nonsymmetric, diagonally dominant tridiagonal matrix (diag d). */
static struct spmv_csr *tridiag(int64_t n, double d)
{
  struct spmv_csr *A = spmv_csr_new(n, n, 3 * n);
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    A->row_ptr[i] = k;
    if (i > 0) {
      A->col_idx[k] = (int32_t)(i - 1);
      A->val[k++] = -1.0;
    }
    A->col_idx[k] = (int32_t)i;
    A->val[k++] = d;
    if (i + 1 < n) {
      A->col_idx[k] = (int32_t)(i + 1);
      A->val[k++] = -2.0 + 0.001 * (double)(i % 7);
    }
  }
  A->row_ptr[n] = k;
  A->nnz = k;
  return A;
}

START_TEST(cg_spd)
{
  solves("bcsstk16.mtx", NULL, "cg", 0, "{\"rtol\":1e-9}", 1e-8);
  solves("bcsstk13.mtx", NULL, "pcg-jacobi", 0, "{\"rtol\":1e-9}", 1e-8);
  solves("bcsstk16.mtx", NULL, "pcg-jacobi", 1, NULL, 2e-4);
}
END_TEST

START_TEST(nonsymmetric)
{
  struct spmv_csr *T = tridiag(800, 4.5);
  solves(NULL, T, "bicgstab", 0, NULL, 1e-7);
  solves(NULL, T, "gmres", 0, "{\"restart\":20}", 1e-7);
  solves(NULL, T, "bicgstab", 1, NULL, 1e-4);
  solves(NULL, T, "gmres", 1, NULL, 1e-4);
  spmv_csr_free(T);
  solves("gr_30_30.mtx", NULL, "gmres", 0, "{\"restart\":50}", 1e-7);
  solves("gr_30_30.mtx", NULL, "bicgstab", 0, NULL, 1e-7);
  /* A real nonsymmetric matrix (a 2D convection-diffusion operator). */
  solves("pde2961.mtx", NULL, "bicgstab", 0, NULL, 1e-7);
  solves("pde2961.mtx", NULL, "gmres", 0, "{\"restart\":30}", 1e-7);
  solves("pde2961.mtx", NULL, "bicgstab", 1, "{\"rtol\":1e-4}", 2e-4);
}
END_TEST

/* The test's PageRank: the spec's power iteration, in double. */
static double *power(const struct spmv_csr *A, double d, int iters)
{
  int64_t n = A->cols;
  double *cs = calloc((size_t)n, sizeof *cs), *x = malloc((size_t)n * sizeof *x);
  double *t = malloc((size_t)n * sizeof *t), *y = malloc((size_t)n * sizeof *y);
  for (int64_t k = 0; k < A->nnz; k++)
    cs[A->col_idx[k]] += fabs(A->val[k]);
  for (int64_t j = 0; j < n; j++)
    x[j] = 1.0 / (double)n;
  for (int it = 0; it < iters; it++) {
    double dm = 0;
    for (int64_t j = 0; j < n; j++) {
      t[j] = cs[j] > 0 ? x[j] / cs[j] : 0;
      dm += cs[j] > 0 ? 0 : x[j];
    }
    spmv_csr_ref(A, 1, t, 0, y);
    for (int64_t j = 0; j < n; j++)
      x[j] = d * y[j] + (1 - d + d * dm) / (double)n;
  }
  free(cs);
  free(t);
  free(y);
  return x;
}

START_TEST(pagerank)
{
  const char *names[] = {"karate.mtx", "email-Eu-core.mtx"};
  for (int g = 0; g < 2; g++) {
    struct spmv_csr *A = itest_matrix(names[g]);
    int fd = itest_open(&itest_d);
    int64_t h = load(fd, A, 0);
    double *x, *ref = power(A, 0.85, 400), sum = 0, l1 = 0;
    json_t *r = solve(fd, h, "pagerank", NULL, 0, 0, "{\"maxiter\":1000,\"rtol\":1e-12}", &x,
                      NULL);
    ck_assert_str_eq(reason(r), "converged-rtol");
    for (int64_t j = 0; j < A->cols; j++) {
      sum += x[j];
      l1 += fabs(x[j] - ref[j]);
    }
    ck_assert_msg(fabs(sum - 1) <= 1e-12, "%s: sum %.17g", names[g], sum);
    ck_assert_msg(l1 <= 1e-10, "%s: L1 difference %g", names[g], l1);
    json_decref(r);
    /* Again: the weights the first solve kept give the same bits. */
    double *x2;
    r = solve(fd, h, "pagerank", NULL, 0, 0, "{\"maxiter\":1000,\"rtol\":1e-12}", &x2,
              NULL);
    ck_assert_msg(memcmp(x, x2, (size_t)A->cols * sizeof *x) == 0,
                  "%s: a second pagerank differs", names[g]);
    json_decref(r);
    free(x2);
    free(x);
    free(ref);
    /* f32 too, to its tolerance */
    int64_t h32 = load(fd, A, 1);
    r = solve(fd, h32, "pagerank", NULL, 0, 1, NULL, &x, NULL);
    ck_assert_str_eq(reason(r), "converged-rtol");
    json_decref(r);
    free(x);
    close(fd);
    spmv_csr_free(A);
  }
}
END_TEST

START_TEST(deterministic)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int fd = itest_open(&itest_d);
  int64_t h = load(fd, A, 0);
  double *b = rhs(A->rows, 5), *x1, *x2;
  const char *ms[] = {"cg", "bicgstab", "gmres"};
  for (int k = 0; k < 3; k++) {
    json_t *r1 = solve(fd, h, ms[k], b, A->rows, 0, "{\"maxiter\":200}", &x1, NULL);
    json_t *r2 = solve(fd, h, ms[k], b, A->rows, 0, "{\"maxiter\":200}", &x2, NULL);
    ck_assert(x1 && x2);
    ck_assert_msg(memcmp(x1, x2, (size_t)A->cols * sizeof *x1) == 0,
                  "%s: two solves differ", ms[k]);
    json_decref(r1);
    json_decref(r2);
    free(x1);
    free(x2);
  }
  free(b);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* diag(v0, v1, ...) of n. */
static struct spmv_csr *diag(int64_t n, double even, double odd)
{
  struct spmv_csr *A = spmv_csr_new(n, n, n);
  for (int64_t i = 0; i < n; i++) {
    A->row_ptr[i] = i;
    A->col_idx[i] = (int32_t)i;
    A->val[i] = i % 2 ? odd : even;
  }
  A->row_ptr[n] = n;
  return A;
}

START_TEST(edges)
{
  int fd = itest_open(&itest_d);
  struct spmv_csr *A = tridiag(300, 4.5);
  int64_t h = load(fd, A, 0);
  double *zero = calloc(300, sizeof *zero), *b = rhs(300, 3), *x;
  int ev = 0;
  const char *ms[] = {"cg", "pcg-jacobi", "bicgstab", "gmres"};
  for (int k = 0; k < 4; k++) {
    json_t *r = solve(fd, h, ms[k], zero, 300, 0, NULL, &x, NULL);
    ck_assert_str_eq(reason(r), "converged-atol");
    ck_assert_int_eq(json_integer_value(json_object_get(r, "iterations")), 0);
    for (int i = 0; i < 300; i++)
      ck_assert(x[i] == 0);
    json_decref(r);
    free(x);
  }
  /* maxiter, with progress events and the history */
  json_t *r = solve(fd, h, "gmres", b, 300, 0,
                    "{\"maxiter\":3,\"progress\":1,\"history\":true}", &x, &ev);
  ck_assert_str_eq(reason(r), "maxiter");
  ck_assert_int_eq(json_integer_value(json_object_get(r, "iterations")), 3);
  ck_assert_int_eq(json_array_size(json_object_get(r, "history")), 3);
  ck_assert_int_ge(ev, 1);
  json_decref(r);
  free(x);
  /* NaN in b */
  b[7] = NAN;
  r = solve(fd, h, "cg", b, 300, 0, NULL, &x, NULL);
  ck_assert_str_eq(reason(r), "breakdown");
  json_decref(r);
  free(x);
  /* the payload's length */
  r = itest_call(fd, json_pack("{ss si sI ss}", "op", "solve", "id", 8,
                               "handle", (json_int_t)h, "method", "cg"),
                 b, 100, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  json_decref(r);
  /* out of range */
  const char *bad[] = {"{\"method\":\"lu\"}", "{\"rtol\":2}", "{\"maxiter\":0}",
                       "{\"restart\":0}", "{\"damping\":1.5}"};
  for (int k = 0; k < 5; k++) {
    json_t *req = json_loads(bad[k], 0, NULL);
    json_object_set_new(req, "op", json_string("solve"));
    json_object_set_new(req, "id", json_integer(9));
    json_object_set_new(req, "handle", json_integer(h));
    if (!json_object_get(req, "method"))
      json_object_set_new(req, "method", json_string("cg"));
    r = itest_call(fd, req, b, 300 * 8, NULL, NULL);
    ck_assert_msg(strcmp(itest_error_code(r), "EINVAL") == 0, "%s: %s", bad[k],
                  itest_error_code(r));
    json_decref(r);
  }
  free(zero);
  free(b);
  spmv_csr_free(A);
  /* indefinite under CG; a singular matrix (a zero row) */
  A = diag(50, 1, -1);
  h = load(fd, A, 0);
  b = rhs(50, 9);
  r = solve(fd, h, "cg", b, 50, 0, NULL, &x, NULL);
  ck_assert_str_eq(reason(r), "indefinite");
  json_decref(r);
  free(x);
  spmv_csr_free(A);
  A = diag(50, 2, 1);
  A->val[10] = 0;
  h = load(fd, A, 0);
  r = solve(fd, h, "cg", b, 50, 0, "{\"maxiter\":100}", &x, NULL);
  ck_assert_msg(strcmp(reason(r), "breakdown") == 0 ||
                strcmp(reason(r), "indefinite") == 0 ||
                strcmp(reason(r), "maxiter") == 0, "singular: %s", reason(r));
  json_decref(r);
  free(x);
  r = solve(fd, h, "pcg-jacobi", b, 50, 0, NULL, &x, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  json_decref(r);
  free(b);
  spmv_csr_free(A);
  /* BiCGStab's rhat.v = 0 at once (a swap of two unknowns, b = e0): the
   * breakdown leaves x as it was, finite, not NaN from the step. */
  A = spmv_csr_new(2, 2, 2);
  A->row_ptr[1] = 1;
  A->row_ptr[2] = 2;
  A->col_idx[0] = 1;
  A->col_idx[1] = 0;
  A->val[0] = A->val[1] = 1;
  h = load(fd, A, 0);
  double e0[2] = {1, 0};
  r = solve(fd, h, "bicgstab", e0, 2, 0, NULL, &x, NULL);
  ck_assert_str_eq(reason(r), "breakdown");
  ck_assert(x != NULL && isfinite(x[0]) && isfinite(x[1]));
  ck_assert(rel_resid(A, e0, x) <= 1.0);
  json_decref(r);
  free(x);
  spmv_csr_free(A);
  /* a rectangular matrix */
  A = spmv_csr_new(4, 6, 4);
  for (int i = 0; i < 4; i++) {
    A->row_ptr[i] = i;
    A->col_idx[i] = i;
    A->val[i] = 1;
  }
  A->row_ptr[4] = 4;
  h = load(fd, A, 0);
  b = rhs(4, 1);
  r = solve(fd, h, "gmres", b, 4, 0, NULL, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  json_decref(r);
  free(b);
  spmv_csr_free(A);
  close(fd);
}
END_TEST

/* A device vector of n; returns its number. */
static int64_t vcreate(int fd, int64_t n)
{
  json_t *r = itest_call(fd, json_pack("{ss si ss sI}", "op", "vector-create",
                                       "id", 2, "dtype", "f64", "n",
                                       (json_int_t)n), NULL, 0, NULL, NULL);
  int64_t v = json_integer_value(json_object_get(r, "vector"));
  json_decref(r);
  return v;
}

START_TEST(device_vectors)
{
  struct spmv_csr *A = itest_matrix("bcsstk16.mtx");
  int fd = itest_open(&itest_d);
  int64_t h = load(fd, A, 0), n = A->rows;
  int64_t vb = vcreate(fd, n), vx = vcreate(fd, n), vs = vcreate(fd, 10);
  double *b = rhs(n, 11), *x = malloc((size_t)n * sizeof *x);
  void *rp = NULL;
  uint64_t rl = 0;
  json_t *ops = json_pack("[{ss sI}]", "op", "upload", "x", (json_int_t)vb);
  json_decref(itest_call(fd, json_pack("{ss si so}", "op", "ops", "id", 3, "ops",
                                       ops), b, (uint64_t)n * 8, NULL, NULL));
  json_t *r = itest_call(fd, json_pack("{ss si sI ss sI sI}", "op", "solve",
                                       "id", 4, "handle", (json_int_t)h,
                                       "method", "cg", "b", (json_int_t)vb,
                                       "x", (json_int_t)vx), NULL, 0, NULL, &rl);
  ck_assert_str_eq(reason(r), "converged-rtol");
  ck_assert_int_eq(rl, 0);
  json_decref(r);
  ops = json_pack("[{ss sI}]", "op", "download", "x", (json_int_t)vx);
  json_decref(itest_call(fd, json_pack("{ss si so}", "op", "ops", "id", 5, "ops",
                                       ops), NULL, 0, &rp, &rl));
  ck_assert_int_eq(rl, (uint64_t)n * 8);
  memcpy(x, rp, (size_t)n * 8);
  ck_assert(rel_resid(A, b, x) <= 1e-7);
  /* a vector of the wrong length */
  r = itest_call(fd, json_pack("{ss si sI ss sI}", "op", "solve", "id", 6,
                               "handle", (json_int_t)h, "method", "cg", "x",
                               (json_int_t)vs), b, (uint64_t)n * 8, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  json_decref(r);
  free(rp);
  free(b);
  free(x);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

START_TEST(disconnect)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int fd = itest_open(&itest_d);
  int64_t h = load(fd, A, 0);
  double *b = rhs(A->rows, 2);
  json_t *req = json_pack("{ss si sI ss sf sI}", "op", "solve", "id", 7,
                          "handle", (json_int_t)h, "method", "gmres", "rtol",
                          1e-300, "maxiter", (json_int_t)100000000);
  ck_assert_int_eq(itest_send(fd, req, b, (uint64_t)A->rows * 8), 0);
  close(fd);
  ck_assert(itest_log_wait(&itest_d, "", 1) >= 0);
  /* The worker is free again: a new small solve is answered. */
  int s2 = itest_open(&itest_d);
  json_t *st = itest_call(s2, json_pack("{ss si}", "op", "status", "id", 1),
                          NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(st, "ok")));
  json_decref(st);
  struct spmv_csr *T = tridiag(100, 4.5);
  int64_t h2 = load(s2, T, 0);
  double *b2 = rhs(100, 4), *x;
  json_t *r = solve(s2, h2, "cg", b2, 100, 0, "{\"maxiter\":5}", &x, NULL);
  ck_assert(json_object_get(r, "reason") != NULL);
  json_decref(r);
  free(x);
  free(b);
  free(b2);
  close(s2);
  spmv_csr_free(T);
  spmv_csr_free(A);
}
END_TEST

/* A client's cancel stops a solve that would not end: the cancel is
 * answered first, then the solve with reason "cancelled" and x as it is;
 * a cancel with nothing running says so; the connection goes on. */
START_TEST(cancel)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int fd = itest_open(&itest_d);
  int64_t h = load(fd, A, 0);
  double *b = rhs(A->rows, 2), *x = malloc((size_t)A->rows * sizeof *x);
  void *rp = NULL;
  uint64_t rl = 0;
  int events = 0;
  json_t *req = json_pack("{ss si sI ss sf sI sI}", "op", "solve", "id", 7,
                          "handle", (json_int_t)h, "method", "gmres", "rtol",
                          1e-300, "maxiter", (json_int_t)100000000,
                          "progress", (json_int_t)10);
  ck_assert_int_eq(itest_send(fd, req, b, (uint64_t)A->rows * 8), 0);
  /* Progress events show the solve running before it is cancelled. */
  while (events < 2) {
    json_t *r = itest_recv_ready(fd, &events);
    ck_assert_msg(r == NULL, "the solve ended on its own");
    usleep(1000);
  }
  ck_assert_int_eq(itest_send(fd, json_pack("{ss si si}", "op", "cancel",
                                            "id", 8, "target", 7), NULL, 0), 0);
  json_t *c = itest_recv_reply(fd, NULL, NULL, NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(c, "id")), 8);
  ck_assert(json_is_true(json_object_get(c, "cancelled")));
  json_decref(c);
  json_t *r = itest_recv_reply(fd, &rp, &rl, NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 7);
  ck_assert_str_eq(reason(r), "cancelled");
  ck_assert(json_is_false(json_object_get(r, "converged")));
  ck_assert_int_ge(json_integer_value(json_object_get(r, "iterations")), 20);
  ck_assert_int_eq(rl, (uint64_t)A->rows * 8);
  memcpy(x, rp, (size_t)A->rows * 8);
  /* x is the iterate reached, and the reply's residual is its own. */
  double rr = rel_resid(A, b, x);
  ck_assert(isfinite(rr) && rr < 1);
  double rel = json_number_value(json_object_get(r, "relative_residual"));
  ck_assert_msg(fabs(rel - rr) <= 1e-6 * rr + 1e-14, "reply %g, test %g", rel, rr);
  json_decref(r);
  c = itest_call(fd, json_pack("{ss si si}", "op", "cancel", "id", 9,
                               "target", 7), NULL, 0, NULL, NULL);
  ck_assert(json_is_false(json_object_get(c, "cancelled")));
  json_decref(c);
  json_t *st = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 10),
                          NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(st, "ok")));
  json_decref(st);
  free(rp);
  free(b);
  free(x);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

#ifdef SPMVD_FAULT_INJECTION  /* slow-solve */
/* A solve that runs longer than the device timeout without a progress
 * event is not taken for a stuck worker: the worker's heartbeat between
 * iterations keeps the timeout off it. */
START_TEST(outlasts_device_timeout)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");

  itest_daemon_restart(&itest_d, "slow-solve:100", "device_timeout_s = 2\n");
  int fd = itest_open(&itest_d);
  int64_t h = load(fd, A, 0);
  double *b = rhs(A->rows, 5), *x;
  double t0 = itest_now_s();
  json_t *r = solve(fd, h, "gmres", b, A->rows, 0,
                    "{\"rtol\":1e-300,\"maxiter\":30}", &x, NULL);
  double dt = itest_now_s() - t0;
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "solve: %s",
                itest_error_code(r));
  ck_assert_msg(dt > 2.0, "the solve took %.2f s, not longer than the "
                "timeout", dt);
  ck_assert_int_eq(itest_worker_int(fd, "timeouts"), 0);
  ck_assert_int_eq(itest_worker_int(fd, "restarts"), 0);
  json_decref(r);
  free(b);
  free(x);
  close(fd);
  spmv_csr_free(A);
}
END_TEST
#endif

int main(void)
{
  Suite *s = suite_create("solve");
  TCase *tc = tcase_create("solve");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, cg_spd);
  tcase_add_test(tc, nonsymmetric);
  tcase_add_test(tc, pagerank);
  tcase_add_test(tc, deterministic);
  tcase_add_test(tc, edges);
  tcase_add_test(tc, device_vectors);
  tcase_add_test(tc, disconnect);
  tcase_add_test(tc, cancel);
#ifdef SPMVD_FAULT_INJECTION
  tcase_add_test(tc, outlasts_device_timeout);
#endif
  suite_add_tcase(s, tc);
  return itest_run(s);
}
