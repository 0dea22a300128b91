/* eval_tuner_confirm.c: the confirm passes of eval_tuner: the ground
 * truth's best few and every strategy's pick timed again, in interleaved
 * passes, and the readings the report sets beside the targets'. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "eval_store.h"
#include "eval_tuner_impl.h"
#include "spmv_stats.h"

/*
 * The exhaustive race names as best the least of ~80 medians, so its time
 * is biased low by their noise (a median of 10 runs of a product of a few
 * microseconds is noisy).  The best few and every strategy's pick are
 * therefore timed again on fresh runs, in interleaved passes, and those
 * times decide best/pick; the table keeps them.  The same bias would
 * return if the best were the least of these times too: on products of a
 * few microseconds, which a load may set apart by as much as their
 * differences, the least of several candidates' medians reads lower than
 * the same candidate timed again.  So the even passes choose the best and
 * the odd passes time it and the picks.
 *
 * Twelve passes, six of each kind: with fewer, auto's best/pick on the
 * smallest products strays a few percent either side of its true ratio
 * (the true best's time over the pick's), enough to read picks truly
 * above 95 % as below it.
 */
/* (CONFIRM_TOP, CONFIRM_PASSES and the other counts: eval_tuner_impl.h.) */

/* Whether index i is among the first n of idx. */
static int in_set(const size_t *idx, size_t n, size_t i)
{
  for (size_t j = 0; j < n; j++)
    if (idx[j] == i)
      return 1;
  return 0;
}

/* Which passes a median takes: the even ones (they choose the best) or
 * the odd ones (they time it and the picks). */
enum passes { PASSES_CHOOSE, PASSES_TIME };

/* The median of a configuration's pass medians of kind w that ran, NAN
 * when none. */
static double passes_median(const double pass[CONFIRM_PASSES], enum passes w)
{
  double v[CONFIRM_PASSES];
  int m = 0;

  for (int p = 0; p < CONFIRM_PASSES; p++)
    if (isfinite(pass[p]) && p % 2 == (w == PASSES_TIME))
      v[m++] = pass[p];
  return m > 0 ? spmv_median(v, (size_t)m) : NAN;
}

/* Of n configurations' passes, the one whose median of kind w is least
 * (-1 when none ran). */
static int passes_least(double pass[][CONFIRM_PASSES], size_t n, enum passes w)
{
  int best = -1;
  double bu = 0;

  for (size_t i = 0; i < n; i++) {
    double x = passes_median(pass[i], w);
    if (isfinite(x) && (best < 0 || x < bu)) {
      best = (int)i;
      bu = x;
    }
  }
  return best;
}

void eval_tuner_confirm(struct eval_store *s, struct gt *g, struct mrec *r)
{
  size_t idx[CONFIRM_TOP + NSTRAT], n = 0, i, k;
  double med[CONFIRM_TOP + NSTRAT][CONFIRM_PASSES], us;
  double one[CONFIRM_TOP + NSTRAT][CONFIRM_PASSES], runs[CONFIRM_SINGLES];
  struct spmv_error e;

  /* The fastest CONFIRM_TOP that ran, then the picks. */
  for (k = 0; k < CONFIRM_TOP; k++) {
    size_t best = g->n;
    for (i = 0; i < g->n; i++) {
      if (!in_set(idx, n, i) && g->t[i].status == SPMVD_TRIAL_OK && g->t[i].time_us > 0 &&
          (best == g->n || g->t[i].time_us < g->t[best].time_us))
        best = i;
    }
    if (best < g->n)
      idx[n++] = best;
  }
  for (k = 0; k < NSTRAT; k++) {
    if (!r->st[k].ok)
      continue;
    i = eval_tuner_gt_find(g, &r->st[k].cfg);
    if (i < g->n && !in_set(idx, n, i))
      idx[n++] = i;
  }
  for (int p = 0; p < CONFIRM_PASSES; p++)
    for (i = 0; i < n; i++) {
      spmv_error_clear(&e);
      med[i][p] = one[i][p] = NAN;
      if (eval_store_race_ops.load(s, &g->t[idx[i]].cfg, &e) < 0) {
        fprintf(stderr, "%s: confirm: %s\n", r->name, e.msg);
        continue;
      }
      if (eval_store_race_ops.time(s, CONFIRM_WARMUP, CONFIRM_REPS, &us, &e) == 0)
        med[i][p] = us;
      else
        fprintf(stderr, "%s: confirm: %s\n", r->name, e.msg);
      int m = 0;
      for (int j = 0; isfinite(med[i][p]) && j < CONFIRM_SINGLES; j++)
        if (eval_store_race_ops.time(s, 0, 1, &runs[m], &e) == 0)
          m++;
      if (m > 0)
        one[i][p] = spmv_median(runs, (size_t)m);
      eval_store_race_ops.unload(s);
    }
  r->raced_best_us = r->best_us;
  /* Every configuration's time from the timing passes; the best is the
   * one the choosing passes read least. */
  for (i = 0; i < n; i++) {
    double x = passes_median(med[i], PASSES_TIME);
    if (isfinite(x))
      g->t[idx[i]].time_us = x;
  }
  int b = passes_least(med, n, PASSES_CHOOSE);
  if (b >= 0 && isfinite(passes_median(med[b], PASSES_TIME))) {
    r->best_us = g->t[idx[b]].time_us;
    spmv_config_format(&g->t[idx[b]].cfg, r->best, sizeof r->best);
    /* How far the best's own pass medians lie apart: a pick's distance
     * from the best within it is the timing's noise. */
    r->noise_npass = 0;
    for (int p = 0; p < CONFIRM_PASSES; p++)
      if (isfinite(med[b][p])) {
        r->noise_lo_us = r->noise_npass ? fmin(r->noise_lo_us, med[b][p]) : med[b][p];
        r->noise_hi_us = r->noise_npass ? fmax(r->noise_hi_us, med[b][p]) : med[b][p];
        r->noise_npass++;
      }
  }
  /* The same configurations one product at a time, chosen and timed the
   * same way; each pick's single time. */
  r->single_best_us = 0;
  b = passes_least(one, n, PASSES_CHOOSE);
  if (b >= 0) {
    double x = passes_median(one[b], PASSES_TIME);
    r->single_best_us = isnan(x) ? 0 : x;
    spmv_config_format(&g->t[idx[b]].cfg, r->single_best, sizeof r->single_best);
  }
  for (k = 0; k < NSTRAT; k++) {
    r->single_us[k] = 0;
    if (!r->st[k].ok)
      continue;
    size_t gi = eval_tuner_gt_find(g, &r->st[k].cfg);
    if (gi < g->n)
      r->st[k].pick_us = g->t[gi].time_us;
    /* At most 1: a pick timed below the chosen best is the choosing
     * passes' noise, not a pick better than the best. */
    r->st[k].match = fmin(1.0, r->best_us / r->st[k].pick_us);
    for (i = 0; i < n; i++)
      if (idx[i] == gi) {
        double x = passes_median(one[i], PASSES_TIME);
        r->single_us[k] = isnan(x) ? 0 : x;
      }
  }
}
