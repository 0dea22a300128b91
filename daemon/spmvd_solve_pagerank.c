/* spmvd_solve_pagerank.c: PageRank by the power iteration on the
 * backend's vectors (PROTOCOL.md, solve). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_solve.h"

/*
 * The graph: A[i][j] != 0 is an edge j -> i of weight A[i][j].  Each
 * iteration, one list:
 *   t = wt .* x              wt[j] = 1 / (column j's sum), 0 when dangling
 *   y = A t
 *   res[0] = dangling . x    the mass on columns with no out-weight
 *   x' = (damping/n) res[0] + damping y + (1 - damping)/n
 *   d = x' - x, res[1] = ||d||_1 (the backend's deterministic 1-norm)
 * and at the end x is divided by its sum (a dot with the ones vector),
 * which the recurrence keeps at 1 up to rounding.
 */

/* wt from the host copy of the CSR; negative weights are EINVAL (the
 * product could not take their absolute value). */
static int weights(const struct spmv_csr *A, double *wt, struct spmv_error *err)
{
  memset(wt, 0, (size_t)A->cols * sizeof *wt);
  for (int64_t i = 0; i < A->rows; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      if (A->val[k] < 0 || !isfinite(A->val[k]))
        return spmv_error_set(err, SPMV_EINVAL,
                              "pagerank: A[%lld][%d] is %g: the edge weights "
                              "must be finite and >= 0", (long long)i,
                              A->col_idx[k], A->val[k]);
      wt[A->col_idx[k]] += A->val[k];
    }
  for (int64_t j = 0; j < A->cols; j++)
    wt[j] = wt[j] == 0 ? 0 : 1 / wt[j];
  return 0;
}

/* The matrix's weights, computed by its first pagerank solve and kept
 * with it: the pass over every entry costs as much as dozens of
 * iterations, and the matrix cannot change. */
const double *spmvd_pagerank_weights(struct wmatrix *m, struct spmv_error *err)
{
  size_t n = (size_t)m->A.cols;

  if (m->pr_wt == NULL) {
    double *wt = malloc((n ? n : 1) * sizeof *wt);
    if (!wt) {
      spmv_error_set(err, SPMV_ENOMEM, "out of memory for pagerank");
      return NULL;
    }
    if (weights(&m->A, wt, err) < 0) {
      free(wt);
      return NULL;
    }
    m->pr_wt = wt;
  }
  return m->pr_wt;
}

/* The vectors of the iteration. */
struct pr {
  struct spmvd_bvector *wt, *dang, *tele, *t, *y, *xn, *d, *ones;
};

static int pr_setup(struct spmvd_solve *s, struct pr *p, struct spmv_error *err)
{
  size_t n = s->cols;
  const double *wt = spmvd_pagerank_weights(s->m, err);
  double *dang = wt ? malloc((n ? n : 1) * sizeof *dang) : NULL;
  int rc = 0;

  if (!wt)
    rc = err->code;
  else if (!dang)
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory for pagerank");
  else {
    for (size_t j = 0; j < n; j++)
      dang[j] = wt[j] == 0 ? 1 : 0;
    struct spmvd_bvector **v[] = {&p->wt, &p->dang, &p->tele, &p->t, &p->y,
                                  &p->xn, &p->d, &p->ones};
    for (size_t i = 0; rc == 0 && i < sizeof v / sizeof v[0]; i++)
      rc = spmvd_solve_vec(s, n, v[i], err);
    if (rc == 0 && (rc = spmvd_solve_upload(s, p->wt, wt, n, err)) == 0 &&
        (rc = spmvd_solve_upload(s, p->dang, dang, n, err)) == 0 &&
        (rc = spmvd_solve_fill(s, p->ones, spmvd_solve_k(1), err)) == 0)
      rc = spmvd_solve_fill(s, p->tele,
                            spmvd_solve_k((1 - s->damping) / (double)n), err);
  }
  free(dang);
  return rc;
}

/* One iteration into p->xn; *change its 1-norm. */
static int pr_step(struct spmvd_solve *s, struct pr *p, double *change,
                   struct spmv_error *err)
{
  double dn = s->damping / (double)s->cols, res[2];
  int rc;

  if ((rc = spmvd_solve_mul(s, p->wt, s->x, p->t, err)) < 0 ||
      (rc = spmvd_solve_spmv(s, 1, p->t, 0, p->y, err)) < 0 ||
      (rc = spmvd_solve_dot(s, p->dang, s->x, 0, err)) < 0 ||
      (rc = spmvd_solve_fill(s, p->xn, spmvd_solve_e(dn, 0, -1), err)) < 0 ||
      (rc = spmvd_solve_axpby(s, p->y, p->xn, spmvd_solve_k(s->damping),
                              spmvd_solve_k(1), err)) < 0 ||
      (rc = spmvd_solve_axpby(s, p->tele, p->xn, spmvd_solve_k(1),
                              spmvd_solve_k(1), err)) < 0 ||
      (rc = spmvd_solve_copy(s, p->xn, p->d, err)) < 0 ||
      (rc = spmvd_solve_axpby(s, s->x, p->d, spmvd_solve_k(-1),
                              spmvd_solve_k(1), err)) < 0 ||
      (rc = spmvd_solve_asum(s, p->d, 1, err)) < 0 ||
      (rc = spmvd_solve_finish(s, res, 2, err)) < 0)
    return rc;
  *change = res[1];
  /* x = x': copied, as x may be the client's vector. */
  return spmvd_solve_copy(s, p->xn, s->x, err);
}

/* x /= sum(x). */
static int normalize(struct spmvd_solve *s, struct pr *p, struct spmv_error *err)
{
  int rc;

  if ((rc = spmvd_solve_dot(s, p->ones, s->x, 0, err)) < 0)
    return rc;
  return spmvd_solve_scale(s, s->x, spmvd_solve_e(1, -1, 0), err);
}

int spmvd_solve_pagerank(struct spmvd_solve *s, struct spmv_error *err)
{
  struct pr p;
  double change = 0;
  int rc;

  memset(&p, 0, sizeof p);
  s->tol = s->rtol;
  s->atol = -1;  /* only rtol applies: the change is never 'atol' */
  rc = pr_setup(s, &p, err);
  /* No initial guess given: the uniform vector. */
  if (rc == 0 && !s->x_given)
    rc = spmvd_solve_fill(s, s->x, spmvd_solve_k(1.0 / (double)s->cols), err);
  while (rc == 0) {
    if ((rc = pr_step(s, &p, &change, err)) < 0)
      break;
    if (!isfinite(change)) {
      s->reason = SPMVD_SOLVE_BREAKDOWN;
      s->iters++;
      s->resid = change;
      break;
    }
    if ((rc = spmvd_solve_iterated(s, change, err)) != 0)
      break;
  }
  if (rc >= 0)
    rc = normalize(s, &p, err);
  if (rc >= 0)
    rc = spmvd_solve_finish(s, NULL, 0, err);
  return rc < 0 ? rc : 0;
}
