/* spmvd_tuner.c: the tuning strategies: their candidates (the exhaustive
 * grid, trial's list, auto's and model's from spmvd_tuner_rules.c, the
 * predictor's), the decision each takes, and the bytes a product moves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "spmvd_tuner_impl.h"


/* Block sizes of the exhaustive grid. */
static const int bs_grid[] = { 64, 128, 256, 512 };
#define NBS (int)(sizeof bs_grid / sizeof bs_grid[0])

/* Fill bounds beyond which ELL and DIA are not worth a candidate. */
#define MAX_ELL_FILL 3.0
#define MAX_DIA_FILL 3.0

/* AUTOCSR's three TPR values from the mean row length. */
void spmvd_tuner_autocsr_tpr(double rl_mean, int tpr[3])
{
  int base = rl_mean < 16 ? 2 : rl_mean <= 32 ? 4 : 8;

  tpr[0] = base;
  tpr[1] = base * 2;
  tpr[2] = base * 4;
}

/* The ELLR-T model's ranking for the input (up to max); 0 when the device
 * is no GPU; negative on failure. */
int spmvd_tuner_model_ranked(const struct spmvd_tune_input *in,
                             struct spmv_config *cfgs, int max,
                             struct spmv_error *err)
{
  struct spmvd_model_gpu g;
  struct spmvd_model_grid *grid;
  int n;

  spmvd_model_gpu_from_device(&g, in->dev);
  if (is_cpu(in->dev) || spmvd_model_gpu_check(&g, NULL) != 0)
    return 0;
  grid = malloc(sizeof *grid);
  if (grid == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "tuner: out of memory");
  n = spmvd_model_grid_compute(in->A, &g, grid, err);
  if (n == 0)
    n = spmvd_model_ranked(grid, cfgs, max);
  free(grid);
  return n;
}

/* The predictor's best formats as concrete configurations: csr-vector
 * takes AUTOCSR's middle TPR, ellr-t the model's pick (mpick, may be
 * NULL).  Returns how many (0 when not calibrated). */
static int predicted(const struct spmvd_tune_input *in,
                     const struct spmv_config *mpick, struct spmv_config *cfgs,
                     int max)
{
  int tpr[3], n, k, j;

  if (in->pred == NULL)
    return 0;
  n = spmvd_predict_rank(in->pred, in->prof, &in->feat, cfgs, NULL, max);
  spmvd_tuner_autocsr_tpr(in->prof->rl_mean, tpr);
  for (k = j = 0; k < n; k++) {
    /* The best formats the operator allows. */
    if (format_excluded(in, cfgs[k].format))
      continue;
    cfgs[j] = cfgs[k];
    if (cfgs[j].format == SPMV_FMT_CSR_VECTOR)
      cfgs[j].tpr = tpr[1];
    else if (cfgs[j].format == SPMV_FMT_ELLR_T && mpick != NULL)
      cfgs[j] = *mpick;
    j++;
  }
  return j;
}

/* Every format x parameter grid. */
static void exhaustive(const struct spmvd_tune_input *in,
                       struct spmvd_candidates *out)
{
  const struct spmv_profile *p = in->prof;
  int b, t, bs, w, narrow = sell16_fits(in);
  int vendor = !is_cpu(in->dev) && !format_excluded(in, SPMV_FMT_CUSPARSE);

  for (b = 0; b < NBS; b++) {
    bs = bs_grid[b];
    add(out, in, mk(SPMV_FMT_CSR_SCALAR, bs, 0, 0, 0));
    for (t = 2; t <= 32; t *= 2)
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, bs, t, 0, 0));
    /* Base 2 too: auto lists it on short rows (check_tuner_cover). */
    add(out, in, adaptive(bs, 0));
    add(out, in, adaptive(bs, 2));
    add(out, in, mk(SPMV_FMT_CSR_MERGE, bs, 0, 0, 0));
    for (t = 2; t <= 8; t *= 2)
      add(out, in, mk(SPMV_FMT_CSR_STREAM, bs, 0, t, 0));
    for (t = 1; t <= 32; t *= 2)
      add(out, in, mk(SPMV_FMT_ELLR_T, bs, t, 0, 0));
    if (p->nnz > 0 && p->ell_fill <= MAX_ELL_FILL)
      add(out, in, mk(SPMV_FMT_ELL, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_COO, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_HYB, bs, 0, 0, 0));
    if (p->nnz > 0 && p->dia_fill <= MAX_DIA_FILL && p->ndiags <= MAX_DIAGS)
      add(out, in, mk(SPMV_FMT_DIA, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_JAD, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_SELL, bs, 0, 32, 1));
    add(out, in, mk(SPMV_FMT_SELL, bs, 0, 32, 256));
    if (narrow) {
      add(out, in, mk(SPMV_FMT_SELL16, bs, 0, 32, 1));
      add(out, in, mk(SPMV_FMT_SELL16, bs, 0, 32, 256));
      for (t = 1; t <= 32; t *= 2)
        add(out, in, mk(SPMV_FMT_CSR16, bs, t, 0, 0));
      /* Its blocks may still span too many columns: then the trial fails
       * on conversion. */
      for (t = 2; t <= 8; t *= 2)
        add(out, in, mk(SPMV_FMT_CSR_STREAM16, bs, 0, t, 0));
    }
  }
  /* csr-panel where x spans several panels that its layout takes, at BS
   * 512 and 1024 (not 256, which trails 512 at every TPR and width; 1024
   * for w 16384, where a panel's shared memory leaves an SM few blocks),
   * panels of 4096 and 16384 columns (narrower ones run far slower). */
  for (w = 4096; w <= 16384; w *= 4)
    if (panel_count(p, w) > 1 &&
        panel_density(p, w) >= 1.0 / SPMV_PANEL_MAX_SLOTS_PER_ENTRY)
      for (t = 1; t <= 8; t *= 2) {
        add(out, in, mk(SPMV_FMT_CSR_PANEL, 512, t, w, 0));
        add(out, in, mk(SPMV_FMT_CSR_PANEL, 1024, t, w, 0));
      }
  add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, SPMV_CUSPARSE_CSR_ALG1, 0));
  add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, SPMV_CUSPARSE_CSR_ALG2, 0));
  /* cuSPARSE's sliced ELL within ell's bound on padding, and its BSR
   * where the matrix has blocks that fit (both scans skipped where
   * cuSPARSE cannot be listed). */
  if (vendor && p->nnz > 0 &&
      (double)spmv_csell_slots(in->A) <= MAX_ELL_FILL * (double)p->nnz)
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, SPMV_CUSPARSE_SELL, 0));
  if (vendor && spmv_bsr_dim(in->A, NULL) > 0)
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, SPMV_CUSPARSE_BSR, 0));
}

/* Copies in0 into w with what is found once per tuning filled in: the
 * row-span scan, and the predictor's features where it is calibrated. */
static int prepare(const struct spmvd_tune_input *in0,
                   struct spmvd_tune_input *w, struct spmv_error *err)
{
  if (in0 == NULL || in0->A == NULL || in0->prof == NULL || in0->dev == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "tuner: incomplete input");
  *w = *in0;
  w->fits16 = spmv_csr_max_row_span(w->A) <= SPMV_SELL16_MAX_SPAN;
  if (w->pred != NULL)
    spmvd_predict_features(w->A, w->prof, w->dtype, &w->feat);
  return 0;
}

/* Fills the candidates of strategy s for a prepared input. */
static int candidates(enum spmvd_strategy s, const struct spmvd_tune_input *in,
                      struct spmvd_candidates *out, struct spmv_error *err)
{
  struct spmv_config model[SPMVD_MODEL_MAX_T], pred[SPMV_FMT_COUNT];
  int nm, np, k, tpr[3];

  out->n = 0;
  nm = 0;
  if (s == SPMVD_STRATEGY_MODEL || s == SPMVD_STRATEGY_TRIAL) {
    nm = spmvd_tuner_model_ranked(in, model, SPMVD_MODEL_MAX_T, err);
    if (nm < 0)
      return nm;
  }
  np = predicted(in, nm > 0 ? &model[0] : NULL, pred, SPMV_FMT_COUNT);
  spmvd_tuner_autocsr_tpr(in->prof->rl_mean, tpr);
  switch (s) {
  case SPMVD_STRATEGY_EXHAUSTIVE:
    exhaustive(in, out);
    break;
  case SPMVD_STRATEGY_TRIAL:
    for (k = 0; k < 3; k++)
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[k], 0, 0));
    add(out, in, adaptive(256, 0));
    if (nm > 0 && ellr_bytes(in->prof, in->dtype) <=
                      MODEL_MAX_ELLR_OVER_CSR *
                          spmvd_tuner_bytes(in->prof, &model[0], in->dtype))
      add(out, in, model[0]);
    for (k = 0; k < np && k < 2; k++)
      add(out, in, pred[k]);
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 2, 0));
    if (in->prof->nnz > 0 && in->prof->dia_fill <= 1.5 &&
        in->prof->ndiags <= MAX_DIAGS)
      add(out, in, mk(SPMV_FMT_DIA, 128, 0, 0, 0));
    break;
  case SPMVD_STRATEGY_AUTO:
    if (is_cpu(in->dev))
      spmvd_tuner_auto_cpu(in, out);
    else
      spmvd_tuner_auto_gpu(in, out);
    spmvd_tuner_narrow_csr(in, out);
    break;
  case SPMVD_STRATEGY_MODEL:
    if (nm == 0)
      return spmv_error_set(err, SPMV_EUNSUPPORTED,
                            "strategy model: the ELLR-T model needs a GPU "
                            "(backend %s, warp size %d)", in->dev->backend,
                            in->dev->warp_size);
    spmvd_tuner_model_choice(in, model, nm, out);
    spmvd_tuner_narrow_csr(in, out);
    break;
  case SPMVD_STRATEGY_PREDICT:
    if (in->pred == NULL)
      return spmv_error_set(err, SPMV_EINVAL,
                            "strategy predict: device '%s' is not "
                            "calibrated (run spmvctl calibrate)",
                            in->dev->name);
    for (k = 0; k < np && out->n == 0; k++)
      add(out, in, pred[k]);
    break;
  default:
    return spmv_error_set(err, SPMV_EINVAL, "unknown strategy %d", (int)s);
  }
  if (out->n == 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "strategy %s: no candidate left (all excluded or "
                          "not applicable)", spmvd_strategy_name(s));
  return 0;
}

/* Fills the candidates of a strategy. */
int spmvd_tuner_candidates(enum spmvd_strategy s,
                           const struct spmvd_tune_input *in,
                           struct spmvd_candidates *out,
                           struct spmv_error *err)
{
  struct spmvd_tune_input w;
  int ret;

  out->n = 0;
  if ((ret = prepare(in, &w, err)) != 0)
    return ret;
  return candidates(s, &w, out, err);
}

/* Tunes with strategy s. */
int spmvd_tuner_run(enum spmvd_strategy s, const struct spmvd_tune_input *in0,
                    const struct spmvd_race_ops *ops, void *ctx,
                    const struct spmvd_race_params *p,
                    struct spmvd_decision *out, struct spmv_error *err)
{
  struct spmvd_candidates *c;
  struct spmvd_race_params one;
  struct spmvd_tune_input w;
  const struct spmvd_tune_input *in = &w;
  int ret, k;

  spmvd_decision_init(out);
  c = malloc(sizeof *c);
  if (c == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "tuner: out of memory");
  /* Prepared once: the predict strategy's time below reuses the features
   * its ranking was made with. */
  ret = prepare(in0, &w, err);
  if (ret == 0)
    ret = candidates(s, in, c, err);
  if (ret != 0)
    goto out;
  if (s == SPMVD_STRATEGY_MODEL || s == SPMVD_STRATEGY_PREDICT) {
    if (ops != NULL) {
      /* Time the pick once so the decision carries a measured time. */
      if (p != NULL)
        one = *p;
      else
        spmvd_race_params_default(&one);
      one.min_rounds = one.max_rounds = 1;
      one.drop_ratio = 0;
      ret = spmvd_tuner_race(c, ops, ctx, &one, in, out, err);
    } else {
      out->cfg = c->cfg[0];
      spmv_config_format(&out->cfg, out->text, sizeof out->text);
      if (s == SPMVD_STRATEGY_PREDICT) {
        k = out->cfg.format;
        out->time_us = spmvd_predict_time(&in->pred->fit[k], in->prof,
                                          &in->feat);
        if (!isfinite(out->time_us))
          out->time_us = 0;
      }
      spmvd_decision_rates(out, in->prof, in->dtype);
    }
  } else if (ops == NULL) {
    ret = spmv_error_set(err, SPMV_EINVAL,
                         "strategy %s needs timing callbacks",
                         spmvd_strategy_name(s));
  } else {
    if (s == SPMVD_STRATEGY_AUTO) {
      /* auto's race is bounded in cost. */
      if (p != NULL)
        one = *p;
      else
        spmvd_race_params_default(&one);
      if (one.max_cost <= 0)
        one.max_cost = SPMVD_AUTO_MAX_COST;
      p = &one;
    }
    ret = spmvd_tuner_race(c, ops, ctx, p, in, out, err);
  }
  out->strategy = s;
out:
  free(c);
  return ret;
}

/* Bytes one product moves under cfg (explicit per-format model). */
double spmvd_tuner_bytes(const struct spmv_profile *prof,
                         const struct spmv_config *cfg, enum spmv_dtype dt)
{
  double vs = (double)spmv_dtype_size(dt), rows = (double)prof->rows;
  double nnz = (double)prof->nnz, ent = vs + 4, ptr, xy, ell, k;

  ptr = prof->nnz < ((int64_t)1 << 31) ? 4 : 8;
  xy = (double)prof->cols * vs + rows * vs;
  switch (cfg->format) {
  case SPMV_FMT_ELL:
    return rows * (double)prof->rl_max * ent + xy;
  case SPMV_FMT_ELLR_T:
  case SPMV_FMT_JAD:
  case SPMV_FMT_SELL:
    return nnz * ent + rows * 4 + xy;
  case SPMV_FMT_SELL16:
    return nnz * (vs + 2) + rows * 8 + xy;
  case SPMV_FMT_CSR16:
    return nnz * (vs + 2) + rows * 4 + (rows + 1) * ptr + xy;
  case SPMV_FMT_COO:
    return nnz * (ent + 4) + xy;
  case SPMV_FMT_HYB:
    k = cfg->param > 0 ? cfg->param : (double)prof->hyb_k;
    ell = fmin(nnz, rows * k);
    return rows * k * ent + (nnz - ell) * (ent + 4) + xy;
  case SPMV_FMT_DIA:
    return (double)prof->ndiags * (rows * vs + 4) + xy;
  default:
    return nnz * ent + (rows + 1) * ptr + xy;
  }
}

/* Fills GFLOP/s and GB/s from the decision's time. */
void spmvd_decision_rates(struct spmvd_decision *d,
                          const struct spmv_profile *prof, enum spmv_dtype dt)
{
  if (!(d->time_us > 0)) {
    d->gflops = d->gbps = 0;
    return;
  }
  d->gflops = 2.0 * (double)prof->nnz / (d->time_us * 1e3);
  d->gbps = spmvd_tuner_bytes(prof, &d->cfg, dt) / (d->time_us * 1e3);
}
