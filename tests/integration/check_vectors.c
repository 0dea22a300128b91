/* check_vectors.c: device vectors and operation lists (vector-create,
 * vector-free, ops) through libspmvclient and by raw frames, against a
 * real spmvd on the cpu backend and plain C references in double. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_vectors.h"
#include "itest.h"
#include "spmv.h"

/* The BLAS-1 steps one by one: upload, download, fill, copy, scale,
 * axpby (beta 0 over NaN), mul (aliased too), dot, nrm2. */
static void blas_case(struct spmv_client *c, int64_t n, int f32)
{
  struct hvec x = hv_new(n, f32), w = hv_new(n, f32), g = hv_new(n, f32);
  double *want = calloc((size_t)n + 1, sizeof *want);
  double *scale = calloc((size_t)n + 1, sizeof *scale);
  double e = eps(f32), dot, nrm, s = 0, sa = 0, q = 0;

  hv_rand(&x, 1);
  hv_rand(&w, 2);
  struct spmv_vector *vx = dev_from(c, &x), *vw = dev_from(c, &w), *vz = NULL;
  ck_assert_int_eq(spmv_vector_length(vx), n);
  ck_assert_int_eq(spmv_vector_dtype(vx), f32 ? SPMV_F32 : SPMV_F64);
  ck_assert_ptr_eq(spmv_vector_client(vx), c);
  OK(c, spmv_vector_new(c, f32 ? SPMV_F32 : SPMV_F64, n, &vz));
  OK(c, spmv_vector_download(vz, g.v));  /* new vectors are zero */
  expect(&g, want, NULL, 0, "new");
  OK(c, spmv_vector_download(vx, g.v));  /* the round trip is exact */
  expect(&g, x.d, NULL, 0, "upload");
  OK(c, spmv_vector_fill(vz, 0.375));
  OK(c, spmv_vector_download(vz, g.v));
  for (int64_t i = 0; i < n; i++)
    want[i] = 0.375;
  expect(&g, want, NULL, 0, "fill");
  OK(c, spmv_vector_copy(vx, vz));
  OK(c, spmv_vector_download(vz, g.v));
  expect(&g, x.d, NULL, 0, "copy");
  OK(c, spmv_vector_scale(-2.5, vz));
  OK(c, spmv_vector_download(vz, g.v));
  for (int64_t i = 0; i < n; i++)
    want[i] = -2.5 * x.d[i];
  expect(&g, want, NULL, e, "scale");
  OK(c, spmv_vector_axpby(1.5, vx, -0.5, vz));  /* z = 1.5x + 1.25x */
  OK(c, spmv_vector_download(vz, g.v));
  for (int64_t i = 0; i < n; i++) {
    want[i] = 1.5 * x.d[i] + 1.25 * x.d[i];
    scale[i] = 3 * fabs(x.d[i]) + 1e-30;
  }
  expect(&g, want, scale, 2 * e, "axpby");
  for (int64_t i = 0; i < n; i++)
    hv_set(&g, i, NAN);
  OK(c, spmv_vector_upload(vz, g.v));
  OK(c, spmv_vector_axpby(2.0, vw, 0.0, vz));  /* beta 0: NaN not read */
  OK(c, spmv_vector_download(vz, g.v));
  for (int64_t i = 0; i < n; i++)
    want[i] = 2.0 * w.d[i];
  expect(&g, want, NULL, e, "axpby beta 0 over NaN");
  OK(c, spmv_vector_mul(vx, vw, vz));
  OK(c, spmv_vector_download(vz, g.v));
  for (int64_t i = 0; i < n; i++)
    want[i] = x.d[i] * w.d[i];
  expect(&g, want, NULL, e, "mul");
  OK(c, spmv_vector_copy(vx, vz));
  OK(c, spmv_vector_mul(vz, vw, vz));  /* z = z .* w, z aliased as x */
  OK(c, spmv_vector_mul(vw, vz, vz));  /* z = w .* z, z aliased as y */
  OK(c, spmv_vector_download(vz, g.v));
  for (int64_t i = 0; i < n; i++)
    want[i] = x.d[i] * w.d[i] * w.d[i];
  expect(&g, want, NULL, 3 * e, "mul aliased");
  OK(c, spmv_vector_dot(vx, vw, &dot));
  OK(c, spmv_vector_nrm2(vx, &nrm));
  for (int64_t i = 0; i < n; i++) {
    s += x.d[i] * w.d[i];
    sa += fabs(x.d[i] * w.d[i]);
    q += x.d[i] * x.d[i];
  }
  /* Reduced in double whatever the dtype. */
  ck_assert_msg(fabs(dot - s) <= 1e-13 * (sa + 1e-300), "dot %.17g, ref %.17g",
                dot, s);
  ck_assert_msg(fabs(nrm - sqrt(q)) <= 1e-13 * sqrt(q), "nrm2 %.17g, ref %.17g",
                nrm, sqrt(q));
  spmv_vector_free(vx);
  spmv_vector_free(vw);
  spmv_vector_free(vz);
  hv_free(&x);
  hv_free(&w);
  hv_free(&g);
  free(want);
  free(scale);
}

/* y = alpha*A*x + beta*y on device vectors against spmv_csr_ref, beta 0
 * over a NaN y too. */
static void spmv_case(struct spmv_client *c, const char *name, int f32)
{
  struct spmv_csr *A = NULL;
  struct spmv_matrix *m = load(c, name, f32, &A);
  struct hvec x = hv_new(A->cols, f32), y = hv_new(A->rows, f32);
  double *want = malloc(sizeof *want * (size_t)(A->rows + 1));
  double *scale = malloc(sizeof *scale * (size_t)(A->rows + 1));
  static const double betas[] = {-0.25, 0.0};

  hv_rand(&x, 3);
  struct spmv_vector *vx = dev_from(c, &x), *vy = NULL;
  for (int b = 0; b < 2; b++) {
    double alpha = 1.5, beta = betas[b];
    if (beta != 0)
      hv_rand(&y, 4);
    else
      for (int64_t i = 0; i < A->rows; i++)
        hv_set(&y, i, NAN);
    vy = dev_from(c, &y);
    memcpy(want, y.d, sizeof *want * (size_t)A->rows);
    spmv_csr_ref(A, alpha, x.d, beta, want);
    for (int64_t i = 0; i < A->rows; i++) {
      scale[i] = beta != 0 ? fabs(beta * y.d[i]) : 0;
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
        scale[i] += fabs(alpha * A->val[k] * x.d[A->col_idx[k]]);
      scale[i] = (scale[i] + 1e-30) *
                 (double)(A->row_ptr[i + 1] - A->row_ptr[i] + 2);
    }
    OK(c, spmv_multiply_vec(m, alpha, vx, beta, vy));
    OK(c, spmv_vector_download(vy, y.v));
    expect(&y, want, scale, eps(f32), beta != 0 ? "spmv" : "spmv beta 0");
    vy = spmv_vector_free(vy);
  }
  spmv_vector_free(vx);
  spmv_matrix_free(m);
  spmv_csr_free(A);
  hv_free(&x);
  hv_free(&y);
  free(want);
  free(scale);
}

/* Every single operation through the client, f64 and f32. */
START_TEST(single_ops)
{
  struct spmv_client *c = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (int f32 = 0; f32 < 2; f32++) {
    blas_case(c, 4097, f32);
    spmv_case(c, "west0479.mtx", f32);
    spmv_case(c, "bcsstk13.mtx", f32);
  }
  spmv_disconnect(c);
}
END_TEST

/* Appends one CG iteration to l; rho is the index of r.r so far; returns
 * the index of the new r.r. */
static int cg_step(struct spmv_oplist *l, struct spmv_matrix *m, int rho,
                   struct spmv_vector *x, struct spmv_vector *r,
                   struct spmv_vector *p, struct spmv_vector *q)
{
  int pq, rr;

  ck_assert_int_eq(spmv_op_spmv(l, m, 1.0, p, 0.0, q), 0);
  ck_assert_int_ge(pq = spmv_op_dot(l, p, q), 0);
  ck_assert_int_eq(spmv_op_axpby(l, spmv_scalar_ratio(1.0, rho, pq), p,
                                 spmv_scalar_const(1.0), x), 0);
  ck_assert_int_eq(spmv_op_axpby(l, spmv_scalar_ratio(-1.0, rho, pq), q,
                                 spmv_scalar_const(1.0), r), 0);
  ck_assert_int_ge(rr = spmv_op_dot(l, r, r), 0);
  ck_assert_int_eq(spmv_op_axpby(l, spmv_scalar_const(1.0), r,
                                 spmv_scalar_ratio(1.0, rr, rho), p), 0);
  return rr;
}

/* 20 CG iterations in one list on the SPD bcsstk13, the residuals and
 * the iterate against cg_ref. */
static void cg_case(struct spmv_client *c, int f32)
{
  enum { ITERS = 20 };
  struct spmv_csr *A = NULL;
  struct spmv_matrix *m = load(c, "bcsstk13.mtx", f32, &A);
  struct hvec b = hv_new(A->rows, f32), xo = hv_new(A->rows, f32);
  struct spmv_vector *x, *r, *p, *q = NULL;
  struct spmv_oplist *l = NULL;
  double rr[ITERS + 1], res[2 * ITERS + 2], *xr = malloc(sizeof *xr * (size_t)A->rows);
  int idx[ITERS + 1];

  ck_assert_int_eq(A->rows, A->cols);
  for (int64_t i = 0; i < A->rows; i++)
    hv_set(&b, i, 1.0 + (double)(i % 7) / 8);
  cg_ref(A, b.d, ITERS, rr, xr);
  x = dev_from(c, &xo);  /* zeros */
  r = dev_from(c, &b);
  p = dev_from(c, &b);
  OK(c, spmv_vector_new(c, f32 ? SPMV_F32 : SPMV_F64, A->rows, &q));
  OK(c, spmv_oplist_new(c, &l));
  ck_assert_int_eq(idx[0] = spmv_op_dot(l, r, r), 0);
  for (int k = 1; k <= ITERS; k++)
    idx[k] = cg_step(l, m, idx[k - 1], x, r, p, q);
  ck_assert_int_eq(spmv_op_download(l, x, xo.v), 0);
  ck_assert_int_eq(spmv_oplist_length(l), 1 + 6 * ITERS + 1);
  OK(c, spmv_oplist_run(l, res, 2 * ITERS + 1));
  /* f32 rounds every step; the comparison is of the first iterations
   * there, and of all 20 in f64. */
  for (int k = 0; k <= (f32 ? 3 : ITERS); k++)
    ck_assert_msg(fabs(sqrt(res[idx[k]]) - sqrt(rr[k])) <=
                      (f32 ? 1e-2 : 1e-6) * sqrt(rr[k]),
                  "%s iteration %d: |r| %.17g, reference %.17g",
                  f32 ? "f32" : "f64", k, sqrt(res[idx[k]]), sqrt(rr[k]));
  double dx = 0, nx = 0;
  for (int64_t i = 0; i < A->rows; i++) {
    dx += (hv_get(&xo, i) - xr[i]) * (hv_get(&xo, i) - xr[i]);
    nx += xr[i] * xr[i];
  }
  if (!f32)
    ck_assert_msg(sqrt(dx) <= 1e-6 * sqrt(nx), "x differs by %g of %g",
                  sqrt(dx), sqrt(nx));
  ck_assert(isfinite(dx));
  spmv_oplist_free(l);
  spmv_vector_free(x);
  spmv_vector_free(r);
  spmv_vector_free(p);
  spmv_vector_free(q);
  spmv_matrix_free(m);
  spmv_csr_free(A);
  hv_free(&b);
  hv_free(&xo);
  free(xr);
}

START_TEST(cg_list)
{
  struct spmv_client *c = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  cg_case(c, 0);
  cg_case(c, 1);
  spmv_disconnect(c);
}
END_TEST

/* Scalars that read earlier results: fill, scale and axpby with
 * products and quotients of dots and norms; rerunning a list. */
START_TEST(expressions)
{
  struct spmv_client *c = NULL;
  struct spmv_oplist *l = NULL;
  struct hvec u = hv_new(100, 0), g = hv_new(100, 0);
  double res[3], want[100], ref_dot = 0;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (int i = 0; i < 100; i++) {
    hv_set(&u, i, 1 + i % 5);
    ref_dot += u.d[i] * u.d[i];
  }
  struct spmv_vector *vu = dev_from(c, &u), *v = NULL, *w = NULL;
  OK(c, spmv_vector_new(c, SPMV_F64, 100, &v));
  OK(c, spmv_vector_new(c, SPMV_F64, 100, &w));
  OK(c, spmv_oplist_new(c, &l));
  int d = spmv_op_dot(l, vu, vu), n2 = spmv_op_nrm2(l, vu);
  ck_assert(d == 0 && n2 == 1);
  /* v = 2 * (u.u) / |u| = 2|u|; w = u; w = (|u| * |u|) / (u.u) * w = w;
   * w = 0.5 * |u| / (u.u) * v + (u.u) / (|u| |u|) * w = u + w */
  struct spmv_scalar two_terms = {3.0, 2, 2, {d, n2}, {n2, n2}};
  ck_assert_int_eq(spmv_op_fill(l, v, spmv_scalar_ratio(2.0, d, n2)), 0);
  ck_assert_int_eq(spmv_op_copy(l, vu, w), 0);
  ck_assert_int_eq(spmv_op_scale(l, spmv_scalar_ratio(1.0, n2, d), w), 0);
  ck_assert_int_eq(spmv_op_scale(l, spmv_scalar_ratio(1.0, n2, -1), w), 0);
  ck_assert_int_eq(spmv_op_axpby(l, spmv_scalar_ratio(0.5, -1, d), v,
                                 two_terms, w), 0);
  ck_assert_int_eq(spmv_op_nrm2(l, w), 2);
  ck_assert_int_eq(spmv_op_download(l, w, g.v), 0);
  for (int rep = 0; rep < 2; rep++) {  /* a list runs again as it is */
    OK(c, spmv_oplist_run(l, res, 3));
    ck_assert_double_eq_tol(res[0], ref_dot, 1e-12 * ref_dot);
    ck_assert_double_eq_tol(res[1], sqrt(ref_dot), 1e-12 * sqrt(ref_dot));
    double nu = sqrt(ref_dot), ww = 0;
    for (int i = 0; i < 100; i++) {
      /* w = u * nu/dot * nu = u; then 0.5/dot * 2nu + 3*dot*nu/(nu*nu) * u */
      want[i] = 0.5 / ref_dot * 2 * nu + 3.0 * ref_dot * nu / (nu * nu) * u.d[i];
      ww += want[i] * want[i];
    }
    expect(&g, want, NULL, 1e-13, "expressions");
    ck_assert_double_eq_tol(res[2], sqrt(ww), 1e-12 * sqrt(ww));
    OK(c, spmv_vector_copy(vu, w));
  }
  /* Fewer results than the list makes, and none. */
  OK(c, spmv_oplist_run(l, res, 1));
  OK(c, spmv_oplist_run(l, NULL, 0));
  spmv_oplist_clear(l);
  ck_assert_int_eq(spmv_oplist_length(l), 0);
  ck_assert_int_eq(spmv_op_dot(l, vu, vu), 0);  /* results count anew */
  /* Results JSON cannot hold come back as the values they stand for. */
  hv_set(&g, 3, INFINITY);
  OK(c, spmv_vector_upload(v, g.v));
  OK(c, spmv_vector_nrm2(v, &res[0]));
  ck_assert(isinf(res[0]) && res[0] > 0);
  hv_set(&g, 3, NAN);
  OK(c, spmv_vector_upload(v, g.v));
  OK(c, spmv_vector_dot(v, vu, &res[0]));
  ck_assert(isnan(res[0]));
  spmv_oplist_free(l);
  spmv_vector_free(vu);
  spmv_vector_free(v);
  spmv_vector_free(w);
  hv_free(&u);
  hv_free(&g);
  spmv_disconnect(c);
}
END_TEST

/* Uploads and downloads straight through a matrix's in-place mapping
 * (the memfd form), and beside it (a misaligned pointer: the payload). */
START_TEST(memfd_transfers)
{
  struct spmv_client *c = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (int f32 = 0; f32 < 2; f32++) {
    struct spmv_csr *A = NULL;
    struct spmv_matrix *m = load(c, "west0479.mtx", f32, &A);
    size_t vsz = f32 ? 4 : 8, n = (size_t)A->cols;
    void *mx = NULL, *my = NULL;
    OK(c, spmv_matrix_vectors(m, 2, &mx, &my));
    struct hvec h = {(int64_t)n, f32, mx, malloc(n * sizeof(double))};
    struct hvec out = {(int64_t)n, f32, (char *)mx + n * vsz, h.d};
    hv_rand(&h, 9);
    struct spmv_vector *v = NULL, *vy = NULL;
    OK(c, spmv_vector_new(c, f32 ? SPMV_F32 : SPMV_F64, (int64_t)n, &v));
    OK(c, spmv_vector_new(c, f32 ? SPMV_F32 : SPMV_F64, A->rows, &vy));
    OK(c, spmv_vector_upload(v, mx));                 /* x_1 of the memfd */
    OK(c, spmv_vector_download(v, out.v));            /* into x_2 */
    expect(&out, h.d, NULL, 0, "memfd round trip");
    /* A list: the product of x_1 into y_1, both through the memfd. */
    struct spmv_oplist *l = NULL;
    OK(c, spmv_oplist_new(c, &l));
    ck_assert_int_eq(spmv_op_upload(l, v, mx), 0);
    ck_assert_int_eq(spmv_op_spmv(l, m, 1.0, v, 0.0, vy), 0);
    ck_assert_int_eq(spmv_op_download(l, vy, my), 0);
    OK(c, spmv_oplist_run(l, NULL, 0));
    double *want = malloc(sizeof *want * (size_t)A->rows);
    spmv_csr_ref(A, 1.0, h.d, 0.0, want);
    struct hvec y1 = {A->rows, f32, my, NULL};
    double *scale = malloc(sizeof *scale * (size_t)A->rows);
    for (int64_t i = 0; i < A->rows; i++) {
      scale[i] = 1e-30;
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
        scale[i] += fabs(A->val[k] * h.d[A->col_idx[k]]) *
                    (double)(A->row_ptr[i + 1] - A->row_ptr[i] + 2);
    }
    expect(&y1, want, scale, eps(f32), "memfd spmv");
    /* Misaligned host data beside the mapping travels in the payload. */
    char *buf = malloc(n * vsz + 1);
    memcpy(buf + 1, mx, n * vsz);
    OK(c, spmv_vector_fill(v, 0.0));
    OK(c, spmv_vector_upload(v, buf + 1));
    memset(buf, 0, n * vsz + 1);
    OK(c, spmv_vector_download(v, buf + 1));
    ck_assert_int_eq(memcmp(buf + 1, mx, n * vsz), 0);
    memset(buf, 0, n * vsz + 1);
    /* Across x_2 and y_1, aligned: still the memfd. */
    OK(c, spmv_vector_upload(v, (char *)my - vsz));
    OK(c, spmv_vector_download(v, buf));
    ck_assert_int_eq(memcmp(buf, (char *)my - vsz, n * vsz), 0);
    free(buf);
    free(want);
    free(scale);
    free(h.d);
    spmv_oplist_free(l);
    spmv_vector_free(v);
    spmv_vector_free(vy);
    spmv_matrix_free(m);
    spmv_csr_free(A);
  }
  spmv_disconnect(c);
}
END_TEST

/* The same reduction twice gives the same bits, alone and in one list. */
START_TEST(determinism)
{
  struct spmv_client *c = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (int f32 = 0; f32 < 2; f32++) {
    struct hvec x = hv_new(100003, f32), y = hv_new(100003, f32);
    hv_rand(&x, 21);
    hv_rand(&y, 22);
    struct spmv_vector *vx = dev_from(c, &x), *vy = dev_from(c, &y);
    struct spmv_oplist *l = NULL;
    double d1, d2, n1, n2, r[4];
    OK(c, spmv_vector_dot(vx, vy, &d1));
    OK(c, spmv_vector_dot(vx, vy, &d2));
    OK(c, spmv_vector_nrm2(vx, &n1));
    OK(c, spmv_vector_nrm2(vx, &n2));
    ck_assert_int_eq(memcmp(&d1, &d2, sizeof d1), 0);
    ck_assert_int_eq(memcmp(&n1, &n2, sizeof n1), 0);
    OK(c, spmv_oplist_new(c, &l));
    for (int k = 0; k < 2; k++) {
      ck_assert_int_eq(spmv_op_dot(l, vx, vy), 2 * k);
      ck_assert_int_eq(spmv_op_nrm2(l, vx), 2 * k + 1);
    }
    OK(c, spmv_oplist_run(l, r, 4));
    ck_assert_int_eq(memcmp(&r[0], &d1, sizeof d1), 0);
    ck_assert_int_eq(memcmp(&r[2], &d1, sizeof d1), 0);
    ck_assert_int_eq(memcmp(&r[1], &n1, sizeof n1), 0);
    ck_assert_int_eq(memcmp(&r[3], &n1, sizeof n1), 0);
    spmv_oplist_free(l);
    spmv_vector_free(vx);
    spmv_vector_free(vy);
    hv_free(&x);
    hv_free(&y);
  }
  spmv_disconnect(c);
}
END_TEST

/* Asserts that call failed with code and a message of c holding each of
 * the NULL-ended words. */
#define FAILS(c, call, code, ...) fails(c, (call), code, #call, __VA_ARGS__, NULL)

static void fails(struct spmv_client *c, int rc, int code, const char *what,
                  ...)
{
  const char *msg = spmv_client_errmsg(c), *w;
  va_list ap;

  ck_assert_msg(rc == code, "%s returned %d (%s), expected %s", what, rc,
                msg, spmv_err_name(code));
  va_start(ap, what);
  while ((w = va_arg(ap, const char *)) != NULL)
    ck_assert_msg(strstr(msg, w) != NULL, "%s: message '%s' lacks '%s'", what,
                  msg, w);
  va_end(ap);
}

/* What the client refuses itself: NULLs, another client's vectors and
 * matrices, the limits of a list, impossible scalars and result counts. */
START_TEST(local_errors)
{
  struct spmv_client *c = NULL, *c2 = NULL;
  struct spmv_vector *a = NULL, *b = NULL, *foreign = NULL;
  struct spmv_oplist *l = NULL;
  struct spmv_csr *A = NULL;
  double r[2];

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  ck_assert_int_eq(spmv_connect(itest_d.sock, &c2), 0);
  struct spmv_matrix *m2 = load(c2, "west0479.mtx", 0, &A);
  OK(c, spmv_vector_new(c, SPMV_F64, 479, &a));
  OK(c, spmv_vector_new(c, SPMV_F64, 479, &b));
  OK(c2, spmv_vector_new(c2, SPMV_F64, 479, &foreign));
  FAILS(c, spmv_vector_new(c, SPMV_F64, -1, &b), SPMV_EINVAL, "n is -1");
  FAILS(c, spmv_vector_new(c, (enum spmv_dtype)7, 1, &b), SPMV_EINVAL,
        "value type");
  ck_assert_ptr_null(b);
  OK(c, spmv_vector_new(c, SPMV_F64, 479, &b));
  OK(c, spmv_oplist_new(c, &l));
  FAILS(c, spmv_op_copy(l, NULL, a), SPMV_EINVAL, "spmv_op_copy", "x is NULL");
  FAILS(c, spmv_op_copy(l, a, foreign), SPMV_EINVAL, "y", "another client");
  FAILS(c, spmv_op_spmv(l, m2, 1.0, a, 0.0, b), SPMV_EINVAL, "matrix",
        "another client");
  FAILS(c, spmv_op_upload(l, a, NULL), SPMV_EINVAL, "src is NULL");
  FAILS(c, spmv_vector_copy(a, foreign), SPMV_EINVAL, "spmv_vector_copy",
        "another client");
  struct spmv_scalar bad = spmv_scalar_const(1.0);
  bad.nmul = SPMV_SCALAR_MAX_TERMS + 1;
  FAILS(c, spmv_op_scale(l, bad, a), SPMV_EINVAL, "nmul");
  ck_assert_int_eq(spmv_oplist_length(l), 0);
  for (int k = 0; k < SPMV_OPLIST_MAX_RESULTS; k++)
    ck_assert_int_eq(spmv_op_nrm2(l, a), k);
  FAILS(c, spmv_op_dot(l, a, b), SPMV_ELIMIT, "SPMV_OPLIST_MAX_RESULTS");
  while (spmv_oplist_length(l) < SPMV_OPLIST_MAX_STEPS)
    ck_assert_int_eq(spmv_op_copy(l, a, b), 0);
  FAILS(c, spmv_op_copy(l, a, b), SPMV_ELIMIT, "SPMV_OPLIST_MAX_STEPS");
  spmv_oplist_clear(l);
  ck_assert_int_eq(spmv_op_nrm2(l, a), 0);
  FAILS(c, spmv_oplist_run(l, r, 2), SPMV_EINVAL, "nres is 2");
  FAILS(c, spmv_oplist_run(l, NULL, 1), SPMV_EINVAL, "results is NULL");
  FAILS(NULL, spmv_oplist_run(NULL, NULL, 0), SPMV_EINVAL, "l is NULL");
  FAILS(c, spmv_vector_dot(a, b, NULL), SPMV_EINVAL, "out is NULL");
  spmv_oplist_clear(l);
  /* Fill with what JSON cannot carry: refused naming the step. */
  ck_assert_int_eq(spmv_op_fill(l, a, spmv_scalar_const(INFINITY)), 0);
  FAILS(c, spmv_oplist_run(l, NULL, 0), SPMV_EINVAL, "ops[0] (fill)",
        "finite");
  OK(c, spmv_vector_nrm2(a, r));  /* the connection is still good */
  ck_assert(r[0] == 0.0);
  spmv_oplist_free(l);
  spmv_matrix_free(m2);
  spmv_csr_free(A);
  spmv_disconnect(c2);  /* foreign goes with it */
  spmv_vector_free(a);
  spmv_vector_free(b);
  spmv_disconnect(c);
}
END_TEST

/* What the daemon refuses, naming the step: lengths, dtypes, spmv's
 * shapes, a freed vector, a result not yet computed; nothing runs. */
START_TEST(daemon_errors)
{
  struct spmv_client *c = NULL;
  struct spmv_vector *a = NULL, *b = NULL, *f = NULL, *t = NULL;
  struct spmv_oplist *l = NULL;
  struct spmv_csr *A = NULL;
  struct hvec g = hv_new(10, 0);
  double r[1];

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  struct spmv_matrix *m = load(c, "west0479.mtx", 0, &A);
  OK(c, spmv_vector_new(c, SPMV_F64, 10, &a));
  OK(c, spmv_vector_new(c, SPMV_F64, 11, &b));
  OK(c, spmv_vector_new(c, SPMV_F32, 10, &f));
  FAILS(c, spmv_vector_copy(a, b), SPMV_EINVAL, "ops[0]", "copy");
  FAILS(c, spmv_vector_axpby(1.0, a, 1.0, f), SPMV_EINVAL, "ops[0]", "axpby");
  FAILS(c, spmv_vector_dot(a, f, r), SPMV_EINVAL, "ops[0]", "dot");
  FAILS(c, spmv_multiply_vec(m, 1.0, a, 0.0, b), SPMV_EINVAL, "ops[0]",
        "spmv");
  struct spmv_vector *v479 = NULL;
  OK(c, spmv_vector_new(c, SPMV_F64, 479, &v479));
  FAILS(c, spmv_multiply_vec(m, 1.0, v479, 0.0, v479), SPMV_EINVAL, "ops[0]",
        "spmv");
  /* The whole list is checked first: the fill of step 0 does not run. */
  OK(c, spmv_oplist_new(c, &l));
  ck_assert_int_eq(spmv_op_fill(l, a, spmv_scalar_const(7.0)), 0);
  ck_assert_int_eq(spmv_op_axpby(l, spmv_scalar_const(1.0), a,
                                 spmv_scalar_const(1.0), b), 0);
  FAILS(c, spmv_oplist_run(l, NULL, 0), SPMV_EINVAL, "ops[1] (axpby)");
  OK(c, spmv_vector_download(a, g.v));
  for (int i = 0; i < 10; i++)
    ck_assert(hv_get(&g, i) == 0.0);
  /* A result used before it is computed. */
  spmv_oplist_clear(l);
  ck_assert_int_eq(spmv_op_fill(l, a, spmv_scalar_ratio(1.0, 0, -1)), 0);
  ck_assert_int_eq(spmv_op_dot(l, a, a), 0);
  FAILS(c, spmv_oplist_run(l, r, 1), SPMV_EPROTO, "ops[0] (fill)");
  /* A list naming a vector freed since: the daemon knows it no more. */
  OK(c, spmv_vector_new(c, SPMV_F64, 10, &t));
  spmv_oplist_clear(l);
  ck_assert_int_eq(spmv_op_copy(l, a, a), 0);
  ck_assert_int_eq(spmv_op_dot(l, t, a), 0);
  t = spmv_vector_free(t);
  FAILS(c, spmv_oplist_run(l, r, 1), SPMV_ENOENT, "ops[1] (dot)");
  OK(c, spmv_vector_fill(a, 2.0));  /* the connection is still good */
  OK(c, spmv_vector_dot(a, a, r));
  ck_assert(r[0] == 40.0);
  spmv_oplist_free(l);
  spmv_vector_free(a);
  spmv_vector_free(b);
  spmv_vector_free(f);
  spmv_vector_free(v479);
  spmv_matrix_free(m);
  spmv_csr_free(A);
  hv_free(&g);
  spmv_disconnect(c);
}
END_TEST

/* The error code and message of a raw reply r. */
static void raw_refused(json_t *r, const char *code, const char *want)
{
  const char *msg = json_string_value(
      json_object_get(json_object_get(r, "error"), "message"));
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(itest_error_code(r), code);
  ck_assert_msg(want == NULL || (msg != NULL && strstr(msg, want)),
                "message '%s' lacks '%s'", msg ? msg : "", want);
  json_decref(r);
}

/* The protocol by raw frames: vector-create, ops with payloads both
 * ways, another connection's vector and a freed one (ENOENT), a payload
 * of the wrong length (EPROTO), vector-free. */
START_TEST(raw_frames)
{
  int fa = itest_open(&itest_d), fb = itest_open(&itest_d);
  double in[8], *out = NULL;
  uint64_t olen = 0;

  for (int i = 0; i < 8; i++)
    in[i] = i + 0.5;
  json_t *r = itest_call(fa, json_pack("{ss si ss si}", "op", "vector-create",
                                       "id", 2, "dtype", "f64", "n", 8),
                         NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "vector-create failed");
  json_int_t va = json_integer_value(json_object_get(r, "vector"));
  ck_assert_int_eq(json_integer_value(json_object_get(r, "n")), 8);
  ck_assert_str_eq(json_string_value(json_object_get(r, "dtype")), "f64");
  json_decref(r);
  r = itest_call(fa, json_pack("{ss si s[{ss sI}{ss sI sI}{ss sI}]}", "op",
                               "ops", "id", 3, "ops", "op", "upload", "x", va,
                               "op", "dot", "x", va, "y", va, "op",
                               "download", "x", va),
                 in, sizeof in, (void **)&out, &olen);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "ops failed: %s",
                itest_error_code(r));
  ck_assert_int_eq(olen, sizeof in);
  ck_assert_int_eq(memcmp(out, in, sizeof in), 0);  /* little-endian host */
  double want = 0;
  for (int i = 0; i < 8; i++)
    want += in[i] * in[i];
  ck_assert(json_number_value(json_array_get(json_object_get(r, "results"),
                                             0)) == want);
  json_decref(r);
  free(out);
  /* The uploads' bytes must be exactly the payload. */
  raw_refused(itest_call(fa, json_pack("{ss si s[{ss sI}]}", "op", "ops", "id",
                                       4, "ops", "op", "upload", "x", va),
                         in, sizeof in - 8, NULL, NULL), "EPROTO", NULL);
  /* Another connection's vector is unknown there. */
  raw_refused(itest_call(fb, json_pack("{ss si s[{ss sI}]}", "op", "ops", "id",
                                       2, "ops", "op", "nrm2", "x", va),
                         NULL, 0, NULL, NULL), "ENOENT", "ops[0] (nrm2)");
  raw_refused(itest_call(fb, json_pack("{ss si sI}", "op", "vector-free", "id",
                                       3, "vector", va), NULL, 0, NULL, NULL),
              "ENOENT", NULL);
  r = itest_call(fa, json_pack("{ss si sI}", "op", "vector-free", "id", 5,
                               "vector", va), NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  raw_refused(itest_call(fa, json_pack("{ss si s[{ss sI}]}", "op", "ops", "id",
                                       6, "ops", "op", "nrm2", "x", va),
                         NULL, 0, NULL, NULL), "ENOENT", "ops[0] (nrm2)");
  close(fa);
  close(fb);
}
END_TEST

/* The status counts that a client's vectors and matrices may change. */
struct counts {
  json_int_t connections, matrices, vectors;
};

static struct counts status_counts(struct spmv_client *c)
{
  char *text = NULL;
  OK(c, spmv_status_json(c, &text));
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  struct counts n = {json_integer_value(json_object_get(j, "connections")),
                     json_integer_value(json_object_get(j, "matrices")),
                     /* -1 where the daemon reports no vectors count */
                     json_is_integer(json_object_get(j, "vectors"))
                         ? json_integer_value(json_object_get(j, "vectors"))
                         : -1};
  json_decref(j);
  free(text);
  return n;
}

/* A client that disconnects with vectors, a matrix and a list alive: the
 * daemon frees them with the connection, as a new client's status shows. */
START_TEST(disconnect_alive)
{
  struct spmv_client *obs = NULL, *c = NULL;
  struct spmv_vector *v[3];
  struct spmv_oplist *l = NULL;
  struct spmv_csr *A = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &obs), 0);
  struct counts before = status_counts(obs);
  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  struct spmv_matrix *m = load(c, "west0479.mtx", 1, &A);
  for (int i = 0; i < 3; i++)
    OK(c, spmv_vector_new(c, SPMV_F32, 479, &v[i]));
  OK(c, spmv_oplist_new(c, &l));
  ck_assert_int_eq(spmv_op_spmv(l, m, 1.0, v[0], 0.0, v[1]), 0);
  OK(c, spmv_oplist_run(l, NULL, 0));
  struct counts during = status_counts(obs);
  ck_assert_int_eq(during.connections, before.connections + 1);
  ck_assert_int_eq(during.matrices, before.matrices + 1);
  if (before.vectors >= 0)
    ck_assert_int_eq(during.vectors, before.vectors + 3);
  spmv_disconnect(c);  /* frees v[], m here; the daemon frees its copies */
  l = spmv_oplist_free(l);  /* a list outlives its client's connection */
  struct spmv_client *late = NULL;
  ck_assert_int_eq(spmv_connect(itest_d.sock, &late), 0);
  struct counts after = status_counts(late);
  for (int i = 0; i < 200 && (after.connections != before.connections + 1 ||
                              after.matrices != before.matrices ||
                              after.vectors != before.vectors); i++) {
    usleep(10000);  /* the daemon notices the close on its own time */
    after = status_counts(late);
  }
  ck_assert_int_eq(after.connections, before.connections + 1);
  ck_assert_int_eq(after.matrices, before.matrices);
  ck_assert_int_eq(after.vectors, before.vectors);
  /* A vector of a connection that broke is freed here only. */
  struct spmv_vector *w = NULL;
  OK(late, spmv_vector_new(late, SPMV_F64, 4, &w));
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  ck_assert_int_lt(spmv_vector_fill(w, 1.0), 0);
  ck_assert_ptr_null(spmv_vector_free(w));
  spmv_disconnect(late);
  spmv_disconnect(obs);
  spmv_csr_free(A);
}
END_TEST

static Suite *vectors_suite(void)
{
  Suite *s = suite_create("vectors");
  TCase *tc = tcase_create("vectors");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, single_ops);
  tcase_add_test(tc, cg_list);
  tcase_add_test(tc, expressions);
  tcase_add_test(tc, memfd_transfers);
  tcase_add_test(tc, determinism);
  tcase_add_test(tc, local_errors);
  tcase_add_test(tc, daemon_errors);
  tcase_add_test(tc, raw_frames);
  tcase_add_test(tc, disconnect_alive);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(vectors_suite());
}
