/* spmvd_predict.c: the predictor's predictions: a fit's time for a
 * matrix, the formats ranked by it, and the report of `spmvctl predict`. */
#include <math.h>
#include <stdint.h>

#include "spmvd_predict.h"
#include "spmvd_predict_impl.h"

/* Fewest microseconds a prediction may give. */
#define PREDICT_FLOOR_US 1e-3

/* Predicts a matrix's time under fit f. */
double spmvd_predict_time(const struct spmvd_fit *f,
                          const struct spmv_profile *prof,
                          const struct spmvd_pfeat *feat)
{
  double i0, p0, t;

  if (f->kind == SPMVD_FIT_NONE || f->strip <= 0)
    return NAN;
  if (prof->rows <= 0)
    return PREDICT_FLOOR_US;
  if (feat != NULL && f->work_npoints > 0) {
    t = spmvd_predict_work_eval(f, feat);
    return t > PREDICT_FLOOR_US ? t : PREDICT_FLOOR_US;
  }
  /* I0 = rows / S, a real number of strips (the paper rounds it up:
   * spmvd_calib.c's grid says why we do not). */
  i0 = (double)prof->rows / (double)f->strip;
  p0 = (double)prof->nnz / (double)prof->rows;
  t = spmvd_fit_eval(f, i0, p0);
  return t > PREDICT_FLOOR_US ? t : PREDICT_FLOOR_US;
}

/* Whether a format has a prediction for a matrix. */
int spmvd_predict_applies(const struct spmvd_predictor *pred,
                          enum spmv_format f, const struct spmv_profile *prof)
{
  if (pred->fit[f].kind == SPMVD_FIT_NONE || f == SPMV_FMT_DIA)
    return 0;
  if (f == SPMV_FMT_ELL && prof->ell_fill > 3)
    return 0;
  /* And only where the calibration times the format (not ellr-t past
   * SPMVD_CALIB_MAX_FILL): elsewhere its fit would extrapolate, and far. */
  return spmvd_calib_applies(&pred->fit[f].cfg, prof);
}

/* Ranks the calibrated formats for a matrix by predicted time. */
int spmvd_predict_rank(const struct spmvd_predictor *pred,
                       const struct spmv_profile *prof,
                       const struct spmvd_pfeat *feat,
                       struct spmv_config *cfgs, double *us, int max)
{
  double tm[SPMV_FMT_COUNT];
  int order[SPMV_FMT_COUNT], n = 0, f, a, b, tmp;

  for (f = 0; f < SPMV_FMT_COUNT; f++) {
    if (!spmvd_predict_applies(pred, (enum spmv_format)f, prof))
      continue;
    tm[f] = spmvd_predict_time(&pred->fit[f], prof, feat);
    if (!isfinite(tm[f]))
      continue;
    order[n++] = f;
  }
  for (a = 1; a < n; a++)
    for (b = a; b > 0 && tm[order[b]] < tm[order[b - 1]]; b--) {
      tmp = order[b];
      order[b] = order[b - 1];
      order[b - 1] = tmp;
    }
  if (n > max)
    n = max;
  for (a = 0; a < n; a++) {
    cfgs[a] = pred->fit[order[a]].cfg;
    if (us != NULL)
      us[a] = tm[order[a]];
  }
  return n;
}

/* Returns a new reference to the predictions for a matrix. */
json_t *spmvd_predict_report_json(const struct spmvd_predictor *pred,
                                  const struct spmv_profile *prof,
                                  const struct spmvd_pfeat *feat)
{
  struct spmv_config cfgs[SPMV_FMT_COUNT];
  double us[SPMV_FMT_COUNT];
  const struct spmvd_fit *f;
  json_t *arr = json_array(), *o;
  char text[64];
  int n, k;

  if (arr == NULL)
    return NULL;
  n = spmvd_predict_rank(pred, prof, feat, cfgs, us, SPMV_FMT_COUNT);
  for (k = 0; k < n; k++) {
    f = &pred->fit[cfgs[k].format];
    spmv_config_format(&cfgs[k], text, sizeof text);
    o = json_pack("{sssssssssIsfsfsfsfsf}", "format",
                  spmv_format_name(cfgs[k].format), "config", text, "model",
                  feat != NULL && f->work_npoints > 0 ? "work" : "paper",
                  "kind", f->kind == SPMVD_FIT_VECTOR ? "vector" : "saddle",
                  "strip", (json_int_t)f->strip, "i0",
                  prof->rows > 0 ? (double)prof->rows / (double)f->strip
                                 : 0.0,
                  "time_us", us[k], "paper_us",
                  spmvd_predict_time(f, prof, NULL), "err_mean", f->err_mean,
                  "work_err", f->work_err);
    if (o == NULL || json_array_append_new(arr, o) != 0) {
      json_decref(arr);
      return NULL;
    }
  }
  return json_pack("{sIsIsfso}", "rows", (json_int_t)prof->rows, "nnz",
                   (json_int_t)prof->nnz, "p0",
                   prof->rows > 0 ? (double)prof->nnz / (double)prof->rows
                                  : 0.0,
                   "predictions", arr);
}
