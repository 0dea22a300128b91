/* bench_solve_gpu.c: bench_solve's in-process side: CG, BiCGStab and
 * PageRank written with cuSPARSE SpMV and cuBLAS BLAS-1 with host-side
 * scalars, as NVIDIA's conjugateGradient sample writes CG. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "bench_cusparse.h"
#include "bench_solve.h"

/*
 * Every method runs on one stream with cuBLAS in pointer mode host, so
 * each dot or norm returns to the host before the next call is made (the
 * sample's structure: the host holds every scalar and decides each
 * step).  Per iteration: CG 1 SpMV, 2 dots, 4 updates (2 waits);
 * BiCGStab 2 SpMVs, 4 dots and a norm, 8 updates and copies (5 waits);
 * PageRank 1 SpMV on the column-stochastic matrix, a dot (the dangling
 * mass), 2 updates and a 1-norm (2 waits).  The stopping rule and the
 * breakdown checks are spmvd's (spmvd_solve_krylov.c,
 * spmvd_solve_pagerank.c), and CG and BiCGStab recompute ||b - A x|| at
 * the end as spmvd's reply does.
 */

#define NVEC 8

/* A device vector and its descriptor for cuSPARSE. */
struct vec {
  void *d;
  cusparseDnVecDescr_t dn;
};

struct bsv_prob {
  enum spmv_dtype dt;
  enum bsv_method m;
  int n;                 /* rows = cols */
  struct bcs_csr c;
  struct vec v[NVEC];    /* b, x, then the method's own */
  int xi;                /* where the solution is (pagerank swaps) */
};

/* The vectors of each method, by their index in v. */
enum { VB, VX, V2, V3, V4, V5, V6, V7 };

int bsv_gpu_init(char *device, size_t cap, char *versions, size_t vcap)
{
  return bcs_init("bench_solve", device, cap, versions, vcap, NULL, NULL);
}

void bsv_gpu_fini(void)
{
  bcs_fini();
}

void bsv_prob_free(struct bsv_prob *p)
{
  if (!p)
    return;
  for (int i = 0; i < NVEC; i++) {
    if (p->v[i].dn)
      cusparseDestroyDnVec(p->v[i].dn);
    cudaFree(p->v[i].d);
  }
  bcs_csr_free(&p->c);
  free(p);
}

/* v[k] = x[k] in dt. */
static void put(void *v, int64_t k, enum spmv_dtype dt, double x)
{
  if (dt == SPMV_F32)
    ((float *)v)[k] = (float)x;
  else
    ((double *)v)[k] = x;
}

/* PageRank's matrix A diag(wt), the dangling mask and a vector of ones,
 * in dt (new host arrays), from A's double values as spmvd weighs them. */
static int stochastic(const struct spmv_csr *A, enum spmv_dtype dt,
                      void **val, void **dang, void **ones)
{
  size_t n = (size_t)A->cols + 1, es = spmv_dtype_size(dt);
  double *wt = malloc(n * sizeof *wt), *dm = malloc(n * sizeof *dm);
  int rc = -1;

  *val = malloc((size_t)(A->nnz + 1) * es);
  *dang = malloc(n * es);
  *ones = malloc(n * es);
  if (wt && dm && *val && *dang && *ones) {
    bsv_pr_weights(A, wt, dm);
    for (int64_t k = 0; k < A->nnz; k++)
      put(*val, k, dt, A->val[k] * wt[A->col_idx[k]]);
    for (int64_t j = 0; j < A->cols; j++) {
      put(*dang, j, dt, dm[j]);
      put(*ones, j, dt, 1.0);
    }
    rc = 0;
  }
  free(wt);
  free(dm);
  return rc;
}

int bsv_prob_new(const struct spmv_csr *A, enum spmv_dtype dt,
                 enum bsv_method m, const int32_t *rp32, const void *val,
                 struct bsv_prob **out)
{
  static const int nvec[] = { 5, 8, 5 };  /* CG, BiCGStab, PageRank */
  struct bsv_prob *p = calloc(1, sizeof *p);
  size_t es = spmv_dtype_size(dt);
  void *pval = NULL, *dang = NULL, *ones = NULL;

  *out = NULL;
  if (!p || A->rows != A->cols || A->rows >= INT32_MAX)
    goto fail;
  p->dt = dt;
  p->m = m;
  p->n = (int)A->rows;
  p->xi = VX;
  if (m == BSV_PAGERANK) {
    if (stochastic(A, dt, &pval, &dang, &ones) < 0)
      goto fail;
    val = pval;
  }
  if (bcs_csr_new(A, dt, rp32, val, &p->c) < 0)
    goto fail;
  for (int i = 0; i < nvec[m]; i++) {
    CKC(cudaMalloc(&p->v[i].d, (size_t)p->n * es + 1));
    if (bcs_dnvec(p->n, p->v[i].d, dt, &p->v[i].dn) < 0)
      goto fail;
  }
  if (m == BSV_PAGERANK) {
    /* V3 the dangling mask, V4 all ones. */
    CKC(cudaMemcpy(p->v[V3].d, dang, (size_t)p->n * es, cudaMemcpyHostToDevice));
    CKC(cudaMemcpy(p->v[V4].d, ones, (size_t)p->n * es, cudaMemcpyHostToDevice));
  }
  /* A copy from pageable memory may still be landing when it returns. */
  CKC(cudaDeviceSynchronize());
  free(pval);
  free(dang);
  free(ones);
  *out = p;
  return 0;
fail:
  fprintf(stderr, "bench_solve: in-process set-up of %s failed\n",
          bsv_method_name(m));
  free(pval);
  free(dang);
  free(ones);
  bsv_prob_free(p);
  return -1;
}

/* r->final = ||b - A x|| / ||b|| with t as scratch: spmvd's recomputed
 * residual, one SpMV, an update and a norm. */
static int final_residual(struct bsv_prob *p, struct vec *t, double bnorm,
                          struct bsv_run *r)
{
  double res;

  if (bcs_spmv(&p->c, -1.0, p->v[VX].dn, 0.0, t->dn) < 0 ||
      bcs_axpy(p->dt, p->n, 1.0, p->v[VB].d, t->d) < 0 ||
      bcs_nrm2(p->dt, p->n, t->d, &res) < 0)
    return -1;
  r->final = res / bnorm;
  return 0;
}

/* CG as the sample writes it: r = b - A x, then p = r + (r1/r0) p, q = A p,
 * alpha = r1 / p.q, x += alpha p, r -= alpha q, r1 = r.r. */
static int cg(struct bsv_prob *p, const struct bsv_params *par,
              struct bsv_run *r)
{
  enum spmv_dtype dt = p->dt;
  int n = p->n;
  struct vec *b = &p->v[VB], *x = &p->v[VX], *res = &p->v[V2];
  struct vec *pp = &p->v[V3], *q = &p->v[V4];
  double bnorm, tol, r0 = 0, r1, pq, a;

  CKC(cudaMemsetAsync(x->d, 0, (size_t)n * spmv_dtype_size(dt), bcs_stream));
  if (bcs_nrm2(dt, n, b->d, &bnorm) < 0 ||
      bcs_spmv(&p->c, 1.0, x->dn, 0.0, q->dn) < 0 ||
      bcs_copy(dt, n, b->d, res->d) < 0 ||
      bcs_axpy(dt, n, -1.0, q->d, res->d) < 0 ||
      bcs_dot(dt, n, res->d, res->d, &r1) < 0)
    return -1;
  tol = par->rtol * bnorm;
  if (sqrt(r1) <= tol)
    bsv_reason(r, "converged-rtol");
  for (int k = 1; !r->reason[0]; k++) {
    if (k > 1) {
      if (bcs_scal(dt, n, r1 / r0, pp->d) < 0 ||
          bcs_axpy(dt, n, 1.0, res->d, pp->d) < 0)
        return -1;
    } else if (bcs_copy(dt, n, res->d, pp->d) < 0) {
      return -1;
    }
    if (bcs_spmv(&p->c, 1.0, pp->dn, 0.0, q->dn) < 0 ||
        bcs_dot(dt, n, pp->d, q->d, &pq) < 0)
      return -1;
    if (!(pq > 0)) {
      bsv_reason(r, isnan(pq) ? "breakdown" : "indefinite");
      break;
    }
    a = r1 / pq;
    r0 = r1;
    if (bcs_axpy(dt, n, a, pp->d, x->d) < 0 ||
        bcs_axpy(dt, n, -a, q->d, res->d) < 0 ||
        bcs_dot(dt, n, res->d, res->d, &r1) < 0)
      return -1;
    bsv_iterated(r, par, sqrt(r1), tol);
  }
  return final_residual(p, q, bnorm, r);
fail:
  return -1;
}

/* Whether v can divide. */
static int usable(double v)
{
  return v != 0 && isfinite(v);
}

/* BiCGStab (van der Vorst) with the host's scalars: p = r + beta (p -
 * omega v), v = A p, s = r - alpha v, t = A s, omega = t.s / t.t,
 * x += alpha p + omega s, r = s - omega t. */
static int bicgstab(struct bsv_prob *p, const struct bsv_params *par,
                    struct bsv_run *r)
{
  enum spmv_dtype dt = p->dt;
  int n = p->n;
  size_t bytes = (size_t)n * spmv_dtype_size(dt);
  struct vec *b = &p->v[VB], *x = &p->v[VX], *res = &p->v[V2];
  struct vec *rh = &p->v[V3], *pp = &p->v[V4], *v = &p->v[V5];
  struct vec *s = &p->v[V6], *t = &p->v[V7];
  double bnorm, tol, rho, rho_old = 1, alpha = 1, omega = 1, rv, ts, tt, rn;

  CKC(cudaMemsetAsync(x->d, 0, bytes, bcs_stream));
  CKC(cudaMemsetAsync(pp->d, 0, bytes, bcs_stream));
  CKC(cudaMemsetAsync(v->d, 0, bytes, bcs_stream));
  if (bcs_nrm2(dt, n, b->d, &bnorm) < 0 ||
      bcs_spmv(&p->c, 1.0, x->dn, 0.0, t->dn) < 0 ||
      bcs_copy(dt, n, b->d, res->d) < 0 ||
      bcs_axpy(dt, n, -1.0, t->d, res->d) < 0 ||
      bcs_copy(dt, n, res->d, rh->d) < 0 ||
      bcs_dot(dt, n, rh->d, res->d, &rho) < 0 ||
      bcs_nrm2(dt, n, res->d, &rn) < 0)
    return -1;
  tol = par->rtol * bnorm;
  if (rn <= tol)
    bsv_reason(r, "converged-rtol");
  while (!r->reason[0]) {
    if (!usable(rho) || !usable(omega)) {
      bsv_reason(r, "breakdown");
      break;
    }
    if (bcs_axpy(dt, n, -omega, v->d, pp->d) < 0 ||
        bcs_scal(dt, n, (rho / rho_old) * (alpha / omega), pp->d) < 0 ||
        bcs_axpy(dt, n, 1.0, res->d, pp->d) < 0 ||
        bcs_spmv(&p->c, 1.0, pp->dn, 0.0, v->dn) < 0 ||
        bcs_dot(dt, n, rh->d, v->d, &rv) < 0)
      return -1;
    alpha = rho / rv;
    if (bcs_copy(dt, n, res->d, s->d) < 0 ||
        bcs_axpy(dt, n, -alpha, v->d, s->d) < 0 ||
        bcs_spmv(&p->c, 1.0, s->dn, 0.0, t->dn) < 0 ||
        bcs_dot(dt, n, t->d, s->d, &ts) < 0 ||
        bcs_dot(dt, n, t->d, t->d, &tt) < 0)
      return -1;
    /* spmvd sees a breakdown once the whole step has run, and counts
     * that step; x is left at its last sound value. */
    if (!usable(rv) || !usable(tt)) {
      r->iters++;
      bsv_reason(r, "breakdown");
      break;
    }
    omega = ts / tt;
    rho_old = rho;
    if (bcs_axpy(dt, n, alpha, pp->d, x->d) < 0 ||
        bcs_axpy(dt, n, omega, s->d, x->d) < 0 ||
        bcs_copy(dt, n, s->d, res->d) < 0 ||
        bcs_axpy(dt, n, -omega, t->d, res->d) < 0 ||
        bcs_dot(dt, n, rh->d, res->d, &rho) < 0 ||
        bcs_nrm2(dt, n, res->d, &rn) < 0)
      return -1;
    bsv_iterated(r, par, rn, tol);
  }
  return final_residual(p, t, bnorm, r);
fail:
  return -1;
}

/* The power iteration x' = d P x + (d dang.x + 1 - d) / n on P = A
 * diag(wt), its change ||x' - x||_1, then x / sum(x), as spmvd does. */
static int pagerank(struct bsv_prob *p, const struct bsv_params *par,
                    struct bsv_run *r)
{
  enum spmv_dtype dt = p->dt;
  int n = p->n, x = VX, y = V2;
  double d = par->damping, ds, change, sum;
  struct vec *dang = &p->v[V3], *ones = &p->v[V4];

  if (bcs_copy(dt, n, ones->d, p->v[x].d) < 0 ||
      bcs_scal(dt, n, 1.0 / n, p->v[x].d) < 0)
    return -1;
  while (!r->reason[0]) {
    if (bcs_dot(dt, n, dang->d, p->v[x].d, &ds) < 0 ||
        bcs_spmv(&p->c, d, p->v[x].dn, 0.0, p->v[y].dn) < 0 ||
        bcs_axpy(dt, n, (d * ds + 1 - d) / n, ones->d, p->v[y].d) < 0 ||
        bcs_axpy(dt, n, -1.0, p->v[y].d, p->v[x].d) < 0 ||
        bcs_asum(dt, n, p->v[x].d, &change) < 0)
      return -1;
    /* x' is in y and the old x (now the change) is free: swap them. */
    int t = x;
    x = y;
    y = t;
    bsv_iterated(r, par, change, par->rtol);
  }
  if (bcs_dot(dt, n, ones->d, p->v[x].d, &sum) < 0 ||
      bcs_scal(dt, n, 1.0 / sum, p->v[x].d) < 0)
    return -1;
  p->xi = x;
  r->final = NAN;
  return 0;
}

int bsv_prob_solve(struct bsv_prob *p, const struct bsv_params *par,
                   const void *b, void *x, struct bsv_run *r)
{
  size_t bytes = (size_t)p->n * spmv_dtype_size(p->dt);
  double t0;
  int rc;

  memset(r, 0, sizeof *r);
  if (b)
    CKC(cudaMemcpy(p->v[VB].d, b, bytes, cudaMemcpyHostToDevice));
  CKC(cudaDeviceSynchronize());
  t0 = bench_now_s();
  if (par->method == BSV_CG)
    rc = cg(p, par, r);
  else if (par->method == BSV_BICGSTAB)
    rc = bicgstab(p, par, r);
  else
    rc = pagerank(p, par, r);
  CKC(cudaStreamSynchronize(bcs_stream));
  CKC(cudaGetLastError());
  r->ms = 1e3 * (bench_now_s() - t0);
  if (rc < 0)
    return -1;
  if (x)
    CKC(cudaMemcpy(x, p->v[p->xi].d, bytes, cudaMemcpyDeviceToHost));
  return 0;
fail:
  return -1;
}
