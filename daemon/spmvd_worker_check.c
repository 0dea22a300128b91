/* spmvd_worker_check.c: a configuration's product checked against the
 * double-precision reference, the reference's pass split over threads. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "spmv_mix.h"
#include "spmv_par.h"
#include "spmvd_worker_impl.h"

/* The first use of a cached configuration is checked, so a wrong cache
 * entry never answers silently; on a large matrix the reference on one
 * core was the largest step of a cache hit. */

/* x[j] in [-1, 1): a splitmix64 hash of seed and j, so that the threads
 * that fill x need no shared state. */
static double check_value(uint64_t seed, int64_t j)
{
  uint64_t z = spmv_mix64(seed * 0x9e3779b97f4a7c15ull +
                          (uint64_t)(j + 1) * 0xd1b54a32d192ed03ull);
  return ((double)(z >> 11) / 9007199254740992.0) * 2.0 - 1.0;
}

static double typed_get(const void *v, int64_t i, enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

/* The check's x, made over threads: the device's (xt, in the matrix's
 * type; x itself in f64) and the reference's (x, the same values in
 * double), and its largest magnitude per block; on a matrix of millions
 * of columns one core's pass over them was a large part of a cache hit. */
struct xgen {
  double *x;
  void *xt;
  enum spmv_dtype dt;
  uint64_t seed;
  double xnorm[SPMV_PAR_MAX];
};

static void make_x_block(void *ctx, int t, int64_t j0, int64_t j1)
{
  struct xgen *g = ctx;
  double xnorm = 0;

  for (int64_t j = j0; j < j1; j++) {
    double v = check_value(g->seed, j);
    if (g->dt == SPMV_F32) {
      ((float *)g->xt)[j] = (float)v;
      v = (float)v;  /* the reference sees what the device does */
    }
    g->x[j] = v;
    xnorm = fmax(xnorm, fabs(v));
  }
  g->xnorm[t] = xnorm;
}

/* The reference and its comparison with the device's y, per block. */
struct cmp {
  const struct spmv_csr *A;
  const double *x;
  const void *y;
  enum spmv_dtype dt;
  double anorm[SPMV_PAR_MAX], ynorm[SPMV_PAR_MAX], diff[SPMV_PAR_MAX];
  int64_t maxlen[SPMV_PAR_MAX];
};

static void compare_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct cmp *c = ctx;
  const struct spmv_csr *A = c->A;
  double anorm = 0, ynorm = 0, diff = 0;
  int64_t maxlen = 1;

  for (int64_t i = r0; i < r1; i++) {
    double s = 0, a = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      s += A->val[k] * c->x[A->col_idx[k]];
      a += fabs(A->val[k]);
    }
    anorm = fmax(anorm, a);
    if (A->row_ptr[i + 1] - A->row_ptr[i] > maxlen)
      maxlen = A->row_ptr[i + 1] - A->row_ptr[i];
    ynorm = fmax(ynorm, fabs(s));
    double d = fabs(typed_get(c->y, i, c->dt) - s);
    diff = (d > diff || isnan(d)) ? d : diff;
  }
  c->anorm[t] = anorm;
  c->ynorm[t] = ynorm;
  c->diff[t] = diff;
  c->maxlen[t] = maxlen;
}

int spmvd_wk_check_product(struct worker *w, struct wmatrix *m, int *ok,
                           double *resid, struct spmv_error *err)
{
  int64_t rows = m->A.rows, cols = m->A.cols;
  size_t es = spmv_dtype_size(m->dtype);
  double *x = malloc(sizeof *x * (size_t)(cols + 1));
  /* In f64 the device's x is the reference's. */
  void *xt = m->dtype == SPMV_F32 ? malloc(es * (size_t)(cols + 1)) : x;
  void *yt = malloc(es * (size_t)(rows + 1));
  struct cmp c = {.A = &m->A, .dt = m->dtype};
  int n = spmv_par_threads(m->A.nnz), rc = 0;

  if (!x || !xt || !yt) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory for the check");
    goto out;
  }
  struct xgen g = {.x = x, .xt = xt, .dt = m->dtype, .seed = (uint64_t)m->handle};
  int nx = spmv_par_threads(cols);
  spmv_par_range(cols, nx, make_x_block, &g);
  rc = w->ops->multiply(w->be, m->bm, 1.0, xt, 0.0, yt, 1, err);
  if (rc < 0)
    goto out;
  c.x = x;
  c.y = yt;
  spmv_par_rows(&m->A, n, compare_block, &c);
  double anorm = 0, xnorm = 0, ynorm = 0, diff = 0;
  int64_t maxlen = 1;
  for (int t = 0; t < n; t++) {
    anorm = fmax(anorm, c.anorm[t]);
    ynorm = fmax(ynorm, c.ynorm[t]);
    diff = (c.diff[t] > diff || isnan(c.diff[t])) ? c.diff[t] : diff;
    maxlen = c.maxlen[t] > maxlen ? c.maxlen[t] : maxlen;
  }
  for (int t = 0; t < nx; t++)
    xnorm = fmax(xnorm, g.xnorm[t]);
  double eps = m->dtype == SPMV_F32 ? 1.1920929e-7 : 2.220446049250313e-16;
  double scale = anorm * xnorm + ynorm;
  *resid = scale > 0 ? diff / scale : diff;
  *ok = !isnan(*resid) && *resid <= 16.0 * eps * (double)maxlen;
out:
  if (xt != x)
    free(xt);
  free(x);
  free(yt);
  return rc;
}
