/* spmvd_worker_check.c: a configuration's product checked against the
 * double-precision reference, the reference's pass split over threads. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "spmv_par.h"
#include "spmvd_worker_impl.h"

/* The first use of a cached configuration is checked, so a wrong cache
 * entry never answers silently; on a large matrix the reference on one
 * core was the largest step of a cache hit. */

static void fill_random(double *x, int64_t n, uint64_t seed)
{
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x[i] = ((double)(s >> 11) / 9007199254740992.0) * 2.0 - 1.0;
  }
}

static double typed_get(const void *v, int64_t i, enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? ((const float *)v)[i] : ((const double *)v)[i];
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
  void *xt = malloc(es * (size_t)(cols + 1));
  void *yt = malloc(es * (size_t)(rows + 1));
  struct cmp c = {.A = &m->A, .dt = m->dtype};
  int n = spmv_par_threads(m->A.nnz), rc = 0;

  if (!x || !xt || !yt) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory for the check");
    goto out;
  }
  fill_random(x, cols, (uint64_t)m->handle);
  for (int64_t j = 0; j < cols; j++) {
    if (m->dtype == SPMV_F32)
      ((float *)xt)[j] = (float)x[j];
    else
      ((double *)xt)[j] = x[j];
    x[j] = typed_get(xt, j, m->dtype);  /* the reference sees what the device does */
  }
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
  for (int64_t j = 0; j < cols; j++)
    xnorm = fmax(xnorm, fabs(x[j]));
  double eps = m->dtype == SPMV_F32 ? 1.1920929e-7 : 2.220446049250313e-16;
  double scale = anorm * xnorm + ynorm;
  *resid = scale > 0 ? diff / scale : diff;
  *ok = !isnan(*resid) && *resid <= 16.0 * eps * (double)maxlen;
out:
  free(x);
  free(xt);
  free(yt);
  return rc;
}
