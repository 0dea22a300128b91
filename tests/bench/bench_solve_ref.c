/* bench_solve_ref.c: bench_solve's host side in double: the checks of a
 * solution (the residual from the CSR, PageRank's fixed point) and the
 * three methods as plain loops, which stand in for the in-process side
 * of a dry run. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "bench_solve.h"

const char *bsv_method_name(enum bsv_method m)
{
  return m == BSV_CG ? "cg" : m == BSV_BICGSTAB ? "bicgstab" : "pagerank";
}

static double dot(int64_t n, const double *u, const double *v)
{
  double s = 0;

  for (int64_t i = 0; i < n; i++)
    s += u[i] * v[i];
  return s;
}

/* y = a x + b y. */
static void axpby(int64_t n, double a, const double *x, double b, double *y)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = a * x[i] + b * y[i];
}

double bsv_relres(const struct spmv_csr *A, const double *b, const double *x,
                  double *mag)
{
  double rr = 0, bb = 0, mm = 0;

  for (int64_t i = 0; i < A->rows; i++) {
    double s = b[i], m = fabs(b[i]);
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      s -= A->val[k] * x[A->col_idx[k]];
      m += fabs(A->val[k] * x[A->col_idx[k]]);
    }
    rr += s * s;
    bb += b[i] * b[i];
    mm += m * m;
  }
  if (mag)
    *mag = sqrt(mm) / sqrt(bb);
  return sqrt(rr) / sqrt(bb);
}

void bsv_pr_weights(const struct spmv_csr *A, double *wt, double *dang)
{
  memset(wt, 0, (size_t)A->cols * sizeof *wt);
  for (int64_t k = 0; k < A->nnz; k++)
    wt[A->col_idx[k]] += A->val[k];
  for (int64_t j = 0; j < A->cols; j++) {
    dang[j] = wt[j] == 0 ? 1 : 0;
    wt[j] = wt[j] == 0 ? 0 : 1 / wt[j];
  }
}

/* y = G x, one power step; wt and dang from bsv_pr_weights. */
static void pr_step(const struct spmv_csr *A, double d, const double *wt,
                    const double *dang, const double *x, double *y)
{
  double n = (double)A->cols, c = (d * dot(A->cols, dang, x) + 1 - d) / n;

  for (int64_t i = 0; i < A->rows; i++) {
    double s = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += A->val[k] * wt[A->col_idx[k]] * x[A->col_idx[k]];
    y[i] = d * s + c;
  }
}

double bsv_pr_step_change(const struct spmv_csr *A, double damping,
                          const double *x)
{
  size_t n = (size_t)(A->cols > 0 ? A->cols : 1);
  double *wt = malloc(n * sizeof *wt), *dang = malloc(n * sizeof *dang);
  double *y = malloc(n * sizeof *y), s = NAN;

  if (wt && dang && y && A->rows == A->cols) {
    bsv_pr_weights(A, wt, dang);
    pr_step(A, damping, wt, dang, x, y);
    s = 0;
    for (int64_t i = 0; i < A->rows; i++)
      s += fabs(y[i] - x[i]);
  }
  free(wt);
  free(dang);
  free(y);
  return s;
}

int bsv_iterated(struct bsv_run *r, const struct bsv_params *p, double res,
                 double tol)
{
  r->iters++;
  r->resid = res;
  if (!isfinite(res))
    bsv_reason(r, "breakdown");
  else if (res <= tol)
    bsv_reason(r, "converged-rtol");
  else if (r->iters >= p->maxiter)
    bsv_reason(r, "maxiter");
  else
    return 0;
  return 1;
}

void bsv_reason(struct bsv_run *r, const char *why)
{
  snprintf(r->reason, sizeof r->reason, "%s", why);
}

/* The Krylov start from x = 0: res = b and a second copy of b (CG's p,
 * BiCGStab's rhat), *rho = res.res; 1 when b already meets tol. */
static int start(int64_t n, const double *b, double *res, double *other,
                 double tol, double *rho, struct bsv_run *r)
{
  memcpy(res, b, (size_t)n * sizeof *res);
  memcpy(other, b, (size_t)n * sizeof *other);
  *rho = dot(n, res, res);
  if (sqrt(*rho) > tol)
    return 0;
  bsv_reason(r, "converged-rtol");
  return 1;
}

/* CG from x = 0 (v: four vectors of n). */
static void cg(const struct spmv_csr *A, const struct bsv_params *p,
               const double *b, double *x, double *v, struct bsv_run *r)
{
  int64_t n = A->rows;
  double *res = v, *pp = v + n, *q = v + 2 * n;
  double tol = p->rtol * sqrt(dot(n, b, b)), rho, pq, rr;

  if (start(n, b, res, pp, tol, &rho, r))
    return;
  for (;;) {
    spmv_csr_ref(A, 1, pp, 0, q);
    pq = dot(n, pp, q);
    if (!(pq > 0)) {
      bsv_reason(r, isnan(pq) ? "breakdown" : "indefinite");
      return;
    }
    axpby(n, rho / pq, pp, 1, x);
    axpby(n, -rho / pq, q, 1, res);
    rr = dot(n, res, res);
    axpby(n, 1, res, rr / rho, pp);
    rho = rr;
    if (bsv_iterated(r, p, sqrt(rr), tol))
      return;
  }
}

/* BiCGStab (van der Vorst) from x = 0 (v: six vectors of n). */
static void bicgstab(const struct spmv_csr *A, const struct bsv_params *p,
                     const double *b, double *x, double *v, struct bsv_run *r)
{
  int64_t n = A->rows;
  double *res = v, *rh = v + n, *pp = v + 2 * n, *vv = v + 3 * n;
  double *s = v + 4 * n, *t = v + 5 * n;
  double tol = p->rtol * sqrt(dot(n, b, b)), rho, rho_old = 1, alpha = 1;
  double omega = 1, tt;

  if (start(n, b, res, rh, tol, &rho, r))
    return;
  for (;;) {
    if (rho == 0 || !isfinite(rho) || omega == 0 || !isfinite(omega)) {
      bsv_reason(r, "breakdown");
      return;
    }
    axpby(n, -omega, vv, 1, pp);
    axpby(n, 1, res, (rho / rho_old) * (alpha / omega), pp);
    spmv_csr_ref(A, 1, pp, 0, vv);
    alpha = rho / dot(n, rh, vv);
    memcpy(s, res, (size_t)n * sizeof *s);
    axpby(n, -alpha, vv, 1, s);
    spmv_csr_ref(A, 1, s, 0, t);
    tt = dot(n, t, t);
    if (!isfinite(alpha) || tt == 0 || !isfinite(tt)) {
      r->iters++;
      bsv_reason(r, "breakdown");
      return;
    }
    omega = dot(n, t, s) / tt;
    axpby(n, alpha, pp, 1, x);
    axpby(n, omega, s, 1, x);
    memcpy(res, s, (size_t)n * sizeof *res);
    axpby(n, -omega, t, 1, res);
    rho_old = rho;
    rho = dot(n, rh, res);
    if (bsv_iterated(r, p, sqrt(dot(n, res, res)), tol))
      return;
  }
}

/* The power iteration from x = 1/n, then x / sum(x) (v: four vectors). */
static void pagerank(const struct spmv_csr *A, const struct bsv_params *p,
                     double *x, double *v, struct bsv_run *r)
{
  int64_t n = A->cols;
  double *wt = v, *dang = v + n, *y = v + 2 * n, change, sum;

  bsv_pr_weights(A, wt, dang);
  for (int64_t i = 0; i < n; i++)
    x[i] = 1.0 / (double)n;
  do {
    pr_step(A, p->damping, wt, dang, x, y);
    change = 0;
    for (int64_t i = 0; i < n; i++) {
      change += fabs(y[i] - x[i]);
      x[i] = y[i];
    }
  } while (!bsv_iterated(r, p, change, p->rtol));
  sum = 0;
  for (int64_t i = 0; i < n; i++)
    sum += x[i];
  for (int64_t i = 0; i < n; i++)
    x[i] /= sum;
}

int bsv_ref_solve(const struct spmv_csr *A, const struct bsv_params *p,
                  const double *b, double *x, struct bsv_run *r)
{
  size_t n = (size_t)(A->rows > A->cols ? A->rows : A->cols) + 1;
  double *v = calloc(6 * n, sizeof *v), t0 = bench_now_s();

  memset(r, 0, sizeof *r);
  if (!v)
    return -1;
  memset(x, 0, (size_t)A->cols * sizeof *x);
  if (p->method == BSV_CG)
    cg(A, p, b, x, v, r);
  else if (p->method == BSV_BICGSTAB)
    bicgstab(A, p, b, x, v, r);
  else
    pagerank(A, p, x, v, r);
  r->ms = 1e3 * (bench_now_s() - t0);
  r->final = p->method == BSV_PAGERANK ? NAN : bsv_relres(A, b, x, NULL);
  free(v);
  return 0;
}
