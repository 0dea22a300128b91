/* spmvd_predict_fit.c: the paper's fits (Wang, Gu & Li): the saddle and
 * csr-vector's form by least squares, and every format's fit of a
 * calibration. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_predict.h"
#include "spmvd_predict_impl.h"

/* Returns the resident threads of dev that the fits' occupancy terms use. */
double spmvd_predict_threads(const struct spmvd_device_info *dev)
{
  return (double)dev->sms * (double)(dev->max_threads_per_sm > 0
                                         ? dev->max_threads_per_sm
                                         : 1);
}

/* Returns the strip S of format f on dev. */
int64_t spmvd_predict_strip(enum spmv_format f,
                            const struct spmvd_device_info *dev)
{
  int64_t per_sm = dev->max_threads_per_sm > 0 ? dev->max_threads_per_sm : 1;
  int half = dev->warp_size >= 2 ? dev->warp_size / 2 : 1;

  if (dev->sms < 1)
    return 0;
  if (f == SPMV_FMT_CSR_VECTOR)
    per_sm = per_sm / half > 0 ? per_sm / half : 1;
  return (int64_t)dev->sms * per_sm;
}

/* Solves the n x n system M x = r (M, r overwritten) by Gaussian
 * elimination with partial pivoting; returns -1 when singular. */
int spmvd_predict_solve(double M[SPMVD_LSQ_MAX][SPMVD_LSQ_MAX],
                        double r[SPMVD_LSQ_MAX], int n,
                        double x[SPMVD_LSQ_MAX])
{
  int i, j, k, piv;
  double f, tmp, scale = 0;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      if (fabs(M[i][j]) > scale)
        scale = fabs(M[i][j]);
  if (scale == 0)
    return -1;
  for (k = 0; k < n; k++) {
    piv = k;
    for (i = k + 1; i < n; i++)
      if (fabs(M[i][k]) > fabs(M[piv][k]))
        piv = i;
    if (fabs(M[piv][k]) <= 1e-12 * scale)
      return -1;
    if (piv != k) {
      for (j = 0; j < n; j++) {
        tmp = M[k][j];
        M[k][j] = M[piv][j];
        M[piv][j] = tmp;
      }
      tmp = r[k];
      r[k] = r[piv];
      r[piv] = tmp;
    }
    for (i = k + 1; i < n; i++) {
      f = M[i][k] / M[k][k];
      for (j = k; j < n; j++)
        M[i][j] -= f * M[k][j];
      r[i] -= f * r[k];
    }
  }
  for (i = n - 1; i >= 0; i--) {
    f = r[i];
    for (j = i + 1; j < n; j++)
      f -= M[i][j] * x[j];
    x[i] = f / M[i][i];
  }
  return 0;
}

/*
 * Weighted least squares of t ~ sum_j x[j] * phi_j over samples (weights
 * 1/t^2, so that relative errors count: times span orders of magnitude).
 * basis(i, p, phi) writes the nb basis values.  Returns 0 or -1.
 */
static int lsq(const double *i, const double *p, const double *t, size_t n,
               int nb, void (*basis)(double, double, double *),
               double x[SPMVD_LSQ_MAX])
{
  double M[SPMVD_LSQ_MAX][SPMVD_LSQ_MAX] = { { 0 } };
  double r[SPMVD_LSQ_MAX] = { 0 }, phi[SPMVD_LSQ_MAX], w;
  size_t k;
  int a, b;

  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    w = 1.0 / (t[k] * t[k]);
    basis(i[k], p[k], phi);
    for (a = 0; a < nb; a++) {
      for (b = 0; b < nb; b++)
        M[a][b] += w * phi[a] * phi[b];
      r[a] += w * phi[a] * t[k];
    }
  }
  return spmvd_predict_solve(M, r, nb, x);
}

/* Saddle basis: I*P, P, I, 1. */
static void basis_saddle(double i, double p, double *phi)
{
  phi[0] = i * p;
  phi[1] = p;
  phi[2] = i;
  phi[3] = 1;
}

/* Line in P: P, 1. */
static void basis_p(double i, double p, double *phi)
{
  (void)i;
  phi[0] = p;
  phi[1] = 1;
}

/* Line in I: I, 1. */
static void basis_i(double i, double p, double *phi)
{
  (void)p;
  phi[0] = i;
  phi[1] = 1;
}

/* Counts distinct values among n (small n: quadratic is fine). */
static size_t distinct(const double *v, size_t n)
{
  size_t a, b, d = 0;

  for (a = 0; a < n; a++) {
    for (b = 0; b < a && v[b] != v[a]; b++)
      ;
    if (b == a)
      d++;
  }
  return d;
}

/* Mean relative error of f over the samples. */
static double mean_err(const struct spmvd_fit *f, const double *i,
                       const double *p, const double *t, size_t n)
{
  double s = 0;
  size_t k, m = 0;

  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    s += fabs(spmvd_fit_eval(f, i[k], p[k]) - t[k]) / t[k];
    m++;
  }
  return m ? s / (double)m : 0;
}

/* Fits the saddle T = (a*I + b)*P + (gc*I + gd). */
int spmvd_predict_fit_saddle(const double *i, const double *p,
                             const double *t, size_t n, struct spmvd_fit *f,
                             struct spmv_error *err)
{
  double x[SPMVD_LSQ_MAX];

  if (n < 4 || distinct(i, n) < 2 || distinct(p, n) < 2 ||
      lsq(i, p, t, n, 4, basis_saddle, x) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit: %zu samples do not determine the saddle "
                          "(need 2 distinct I and 2 distinct P)", n);
  f->kind = SPMVD_FIT_SADDLE;
  f->a = x[0];
  f->b = x[1];
  f->gc = x[2];
  f->gd = x[3];
  f->npoints = (int)n;
  f->err_mean = mean_err(f, i, p, t, n);
  return 0;
}

/* Fits the vector form from the samples on the two sweeps. */
int spmvd_predict_fit_vector(const double *i, const double *p,
                             const double *t, size_t n, double i_cal,
                             double p_cal, struct spmvd_fit *f,
                             struct spmv_error *err)
{
  double *si = NULL, *sp = NULL, *stt = NULL, t0 = 0;
  double xp[SPMVD_LSQ_MAX], xi[SPMVD_LSQ_MAX];
  size_t k, np = 0, ni = 0, n0 = 0;
  int ret = 0;

  si = malloc(2 * (n ? n : 1) * sizeof *si);
  sp = malloc(2 * (n ? n : 1) * sizeof *sp);
  stt = malloc(2 * (n ? n : 1) * sizeof *stt);
  if (si == NULL || sp == NULL || stt == NULL) {
    ret = spmv_error_set(err, SPMV_ENOMEM, "fit: out of memory");
    goto out;
  }
  /* The P sweep in [0, n), the I sweep in [n, 2n). */
  for (k = 0; k < n; k++) {
    if (i[k] == i_cal) {
      si[np] = i[k];
      sp[np] = p[k];
      stt[np++] = t[k];
    }
    if (p[k] == p_cal) {
      si[n + ni] = i[k];
      sp[n + ni] = p[k];
      stt[n + ni++] = t[k];
    }
    if (i[k] == i_cal && p[k] == p_cal && t[k] > 0) {
      t0 += t[k];
      n0++;
    }
  }
  if (distinct(sp, np) < 2 || distinct(si + n, ni) < 2 ||
      lsq(si, sp, stt, np, 2, basis_p, xp) != 0 ||
      lsq(si + n, sp + n, stt + n, ni, 2, basis_i, xi) != 0) {
    ret = spmv_error_set(err, SPMV_EINVAL,
                         "fit: csr-vector needs 2 distinct P at I = %g and "
                         "2 distinct I at P = %g", i_cal, p_cal);
    goto out;
  }
  f->kind = SPMVD_FIT_VECTOR;
  f->m = xp[0];
  f->c = xp[1];
  f->p = xi[0];
  f->q = xi[1];
  f->i_cal = i_cal;
  f->p_cal = p_cal;
  f->t0 = n0 ? t0 / (double)n0 : f->m * p_cal + f->c;
  if (!(f->t0 > 0)) {
    f->kind = SPMVD_FIT_NONE;
    ret = spmv_error_set(err, SPMV_EINVAL,
                         "fit: csr-vector calibration time t0 is not "
                         "positive");
    goto out;
  }
  f->npoints = (int)n;
  f->err_mean = mean_err(f, i, p, t, n);
out:
  free(si);
  free(sp);
  free(stt);
  return ret;
}

/* Evaluates a fit at (I, P). */
double spmvd_fit_eval(const struct spmvd_fit *f, double i, double p)
{
  switch (f->kind) {
  case SPMVD_FIT_VECTOR:
    return (f->m * p + f->c) / f->t0 * (f->p * i + f->q);
  case SPMVD_FIT_SADDLE:
    return (f->a * i + f->b) * p + (f->gc * i + f->gd);
  case SPMVD_FIT_NONE:
    break;
  }
  return NAN;
}

/* Fits every format of the plan. */
int spmvd_predict_fit(const struct spmvd_calib_plan *plan,
                      const struct spmvd_device_info *dev,
                      struct spmvd_predictor *out, struct spmv_error *err)
{
  double *i = NULL, *p = NULL, *t = NULL;
  struct spmvd_pfeat *x = NULL;
  struct spmvd_fit *f;
  size_t k, n;
  int64_t strip;
  int fmt, nfit = 0, ret = 0;

  memset(out, 0, sizeof *out);
  i = malloc((plan->n ? plan->n : 1) * sizeof *i);
  p = malloc((plan->n ? plan->n : 1) * sizeof *p);
  t = malloc((plan->n ? plan->n : 1) * sizeof *t);
  x = malloc((plan->n ? plan->n : 1) * sizeof *x);
  if (i == NULL || p == NULL || t == NULL || x == NULL) {
    ret = spmv_error_set(err, SPMV_ENOMEM, "fit: out of memory");
    goto out;
  }
  for (fmt = 0; fmt < SPMV_FMT_COUNT; fmt++) {
    f = &out->fit[fmt];
    strip = spmvd_predict_strip((enum spmv_format)fmt, dev);
    n = 0;
    for (k = 0; k < plan->n; k++) {
      if ((int)plan->pt[k].cfg.format != fmt || !plan->pt[k].ok ||
          plan->pt[k].work)
        continue;
      if (n == 0)
        f->cfg = plan->pt[k].cfg;
      /* The strips it really has (rows were rounded). */
      i[n] = (double)plan->pt[k].rows / (double)strip;
      p[n] = plan->pt[k].p;
      t[n++] = plan->pt[k].time_us;
    }
    if (n == 0)
      continue;
    f->strip = strip;
    if (fmt == SPMV_FMT_CSR_VECTOR)
      ret = spmvd_predict_fit_vector(i, p, t, n, SPMVD_VEC_I_CAL,
                                     SPMVD_VEC_P_CAL, f, NULL);
    else
      ret = spmvd_predict_fit_saddle(i, p, t, n, f, NULL);
    if (ret != 0) {
      memset(f, 0, sizeof *f);
      ret = 0;
      continue;
    }
    nfit++;
    /* The work model over every point of the format, both parts. */
    n = 0;
    for (k = 0; k < plan->n; k++)
      if ((int)plan->pt[k].cfg.format == fmt && plan->pt[k].ok) {
        x[n] = plan->pt[k].feat;
        t[n++] = plan->pt[k].time_us;
      }
    f->l2_bytes = (double)dev->l2_bytes;
    f->threads = spmvd_predict_threads(dev);
    f->sms = dev->sms;
    f->value_bytes = (int)spmv_dtype_size(plan->dtype);
    spmvd_predict_fit_work(&f->cfg, x, t, n, f, NULL);
  }
out:
  free(i);
  free(p);
  free(t);
  free(x);
  return ret != 0 ? ret : nfit;
}

