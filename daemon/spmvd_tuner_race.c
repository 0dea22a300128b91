/* spmvd_tuner_race.c: the race: each candidate loaded and timed in rounds
 * through the worker's callbacks, dropped once clearly behind the leader,
 * the fastest taken. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_stats.h"
#include "spmvd_tuner.h"

/* Fills the race defaults. */
void spmvd_race_params_default(struct spmvd_race_params *p)
{
  p->warmup = 1;
  p->reps = 2;
  p->min_rounds = 1;
  p->max_rounds = 3;
  p->stable_tol = 0.03;
  p->drop_ratio = 1.5;
  /* 1.8, not 2: candidates close to the leader run their first run well
   * below 1.8x it, while clearly slower ones (sell16 on long regular rows)
   * can run theirs between 1.8x and 2x: at 2 they were kept for a round
   * they then lost, at 1.8 they drop at once and the picks stay. */
  p->probe_ratio = 1.8;
  p->close_tol = 0.05;
  p->max_cost = 0;
}

/* Median of n doubles (n <= 16), without changing v. */
static double median(const double *v, int n)
{
  double s[16];

  memcpy(s, v, sizeof *s * (size_t)n);
  return spmv_median(s, (size_t)n);
}

/* Records a candidate's failure. */
static void trial_fail(struct spmvd_trial *t, int code,
                       const struct spmv_error *e)
{
  t->status = SPMVD_TRIAL_FAILED;
  t->code = code;
  t->time_us = 0;
  t->best_us = 0;
  t->first_us = 0;
  snprintf(t->msg, sizeof t->msg, "%.*s", (int)sizeof t->msg - 1,
           e->msg[0] != '\0' ? e->msg : spmv_strerror(code));
}

/*
 * Times one loaded candidate; lead_us and lead_warm_us are the leader's
 * median and timed warm-up run (0 before there is a leader).  With
 * drop_ratio > 0 (a race that may drop) and probe_ratio > 0, the first
 * warm-up run is timed alone and the candidate is dropped on it when it
 * exceeds probe_ratio x the leader's median plus the leader's own first-run
 * excess (a first launch can pay a one-off setup, e.g. lazy module
 * loading: comparing excess to excess keeps it from dropping a fast
 * candidate).  Then rounds of reps runs: with close_tol > 0 one round
 * decides unless the candidate is within close_tol of the leader, when
 * rounds go on until two agree within stable_tol.  Every run, warm-ups
 * included, is added to *spent_us at its measured (or its round's median)
 * time.  Returns 0, or the failing code (trial marked failed).
 */
static int time_rounds(const struct spmvd_race_ops *ops, void *ctx,
                       const struct spmvd_race_params *p, double lead_us,
                       double lead_warm_us, int runs_after,
                       struct spmvd_trial *t, double *spent_us,
                       double *warm_us)
{
  double med[16], m, cur;
  struct spmv_error e;
  int r, warm, ret, maxr = p->max_rounds, warm_left = p->warmup;
  int racing = p->drop_ratio > 0;

  if (maxr > 16)
    maxr = 16;
  if (maxr < 1)
    maxr = 1;
  *warm_us = 0;
  if (racing && p->probe_ratio > 0 && warm_left > 0) {
    spmv_error_clear(&e);
    ret = ops->time(ctx, 0, 1, &m, &e);
    if (ret == 0 && !(m > 0 && isfinite(m)))
      ret = spmv_error_set(&e, SPMV_EINVAL, "timing gave %g us", m);
    if (ret != 0) {
      trial_fail(t, ret, &e);
      return ret;
    }
    warm_left--;
    t->runs++;
    *spent_us += m;
    *warm_us = m;
    t->probe_us = m;
    if (lead_us > 0 &&
        m > p->probe_ratio * lead_us + fmax(0, lead_warm_us - lead_us)) {
      t->status = SPMVD_TRIAL_DROPPED;
      t->time_us = t->best_us = m;
      return 0;
    }
  }
  for (r = 0; r < maxr; r++) {
    warm = r == 0 ? warm_left : 0;
    spmv_error_clear(&e);
    ret = ops->time(ctx, warm, p->reps, &m, &e);
    if (ret == 0 && !(m > 0 && isfinite(m)))
      ret = spmv_error_set(&e, SPMV_EINVAL, "timing gave %g us", m);
    if (ret != 0) {
      trial_fail(t, ret, &e);
      return ret;
    }
    med[r] = m;
    t->rounds = r + 1;
    t->runs += warm + p->reps;
    *spent_us += (warm + p->reps) * m;
    if (r == 0 && *warm_us == 0)
      *warm_us = m;
    if (r == 0)
      t->first_us = m;
    if (r == 0 || m < t->best_us)
      t->best_us = m;
    if (racing && lead_us > 0 && t->best_us > p->drop_ratio * lead_us) {
      t->status = SPMVD_TRIAL_DROPPED;
      break;
    }
    /* Its median so far clearly ahead of or behind the leader's (or the
     * first candidate): enough rounds. */
    cur = median(med, r + 1);
    if (racing && p->close_tol > 0 && r + 1 >= p->min_rounds &&
        (lead_us <= 0 ||
         fabs(cur - lead_us) > p->close_tol * fmin(cur, lead_us)))
      break;
    if (r + 1 >= p->min_rounds && r > 0 &&
        fabs(m - med[r - 1]) <= p->stable_tol * fmin(m, med[r - 1]))
      break;
    /* Another round must leave room for the candidates still to come. */
    if (p->max_cost > 0) {
      double unit = lead_us > 0 ? fmin(cur, lead_us) : cur;
      if (*spent_us + (p->reps + runs_after) * unit > p->max_cost * unit)
        break;
    }
  }
  t->time_us = median(med, t->rounds);
  return 0;
}

/*
 * Whether trial a beats the leader b.  A candidate's first round (its
 * second and third runs after its load) reads slow on short products,
 * and its later rounds come down to its steady time; only a candidate
 * close to the leader runs them.  So one that ran a single round, often
 * the first candidate, is compared on first rounds, like with like, not
 * against a challenger's faster later rounds.
 */
static int ahead(const struct spmvd_trial *a, const struct spmvd_trial *b)
{
  if (a->rounds == 1 || b->rounds == 1)
    return a->first_us < b->first_us;
  return a->time_us < b->time_us;
}

/* Races the candidates. */
int spmvd_tuner_race(const struct spmvd_candidates *c,
                     const struct spmvd_race_ops *ops, void *ctx,
                     const struct spmvd_race_params *p,
                     const struct spmvd_tune_input *in,
                     struct spmvd_decision *out, struct spmv_error *err)
{
  struct spmvd_race_params def;
  struct spmvd_trial *t;
  struct spmv_error e;
  double spent = 0, warm = 0, lead_warm = 0;
  int leader = -1, first_fail = 0, ret, lead, loaded;
  size_t k;

  spmvd_decision_init(out);
  if (p == NULL) {
    spmvd_race_params_default(&def);
    p = &def;
  }
  if (c == NULL || c->n == 0)
    return spmv_error_set(err, SPMV_EINVAL, "race: no candidates");
  if (ops == NULL || ops->load == NULL || ops->time == NULL ||
      ops->unload == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "race: no timing callbacks");
  if (p->reps < 1 || p->warmup < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "race: reps %d must be >= 1 and warmup %d >= 0",
                          p->reps, p->warmup);
  out->trials = calloc(c->n, sizeof *out->trials);
  if (out->trials == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "race: out of memory");
  for (k = 0; k < c->n; k++) {
    t = &out->trials[out->ntrials++];
    t->cfg = c->cfg[k];
    warm = 0;
    spmv_error_clear(&e);
    ret = ops->load(ctx, &t->cfg, &e);
    loaded = ret == 0;
    if (!loaded)
      trial_fail(t, ret, &e);
    else
      ret = time_rounds(ops, ctx, p,
                        leader >= 0 ? out->trials[leader].time_us : 0,
                        lead_warm, (int)(c->n - k - 1) * (p->warmup + p->reps),
                        t, &spent, &warm);
    lead = t->status == SPMVD_TRIAL_OK &&
           (leader < 0 || ahead(t, &out->trials[leader]));
    if (loaded && lead && ops->keep != NULL)
      ops->keep(ctx);
    else if (loaded)
      ops->unload(ctx);
    if (ret != 0 && first_fail == 0)
      first_fail = ret;
    if (lead) {
      leader = (int)k;
      lead_warm = warm;
    }
    if (ops->progress != NULL)
      ops->progress(ctx, (int)k + 1, (int)c->n, t);
    if (ret == SPMV_EGPU_STICKY)
      return spmv_error_set(err, ret, "race: %s: %s",
                            spmv_strerror(ret), t->msg);
  }
  if (leader < 0)
    return spmv_error_set(err, first_fail ? first_fail : SPMV_EINVAL,
                          "race: every candidate failed; the first: %s",
                          out->trials[0].msg);
  out->cfg = out->trials[leader].cfg;
  spmv_config_format(&out->cfg, out->text, sizeof out->text);
  out->time_us = out->trials[leader].time_us;
  out->cost_spmv = spent / out->time_us;
  if (in != NULL && in->prof != NULL)
    spmvd_decision_rates(out, in->prof, in->dtype);
  return 0;
}
