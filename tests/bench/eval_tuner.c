/* eval_tuner.c: how good and how cheap the tuner's choices are (issue 5):
 * exhaustive ground truth, each strategy's pick, the predictor's error and
 * the cache hit, on the benchmark suite, as a markdown report. */
#include "config.h"

#include <getopt.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "eval_store.h"
#include "spmv_profile.h"
#include "spmvd_cache.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "spmv_stats.h"
#include "suite.h"
#include "bench_clock.h"

/*
 * For each value type: one calibration of the predictor on the device
 * (spmvd_calib_plan_new / spmvd_calib_run / spmvd_predict_fit).  Then for
 * each matrix of the suite, in one process:
 *  - the ground truth: every exhaustive candidate raced so that each gets
 *    a real time (2 warm-up runs, rounds of 10 until two round medians
 *    agree within 2 %, at most 4 rounds); one 10 times slower than the
 *    leader stops after its first round (its median of 10 stands: on
 *    skewed matrices such candidates take milliseconds a run); the best
 *    few and the strategies' picks are then timed again (confirm());
 *  - model, predict, trial and auto as the worker runs them
 *    (spmvd_tuner_run, default race parameters): the pick's time is looked
 *    up in the ground-truth table (timed there first when missing), its
 *    matching percentage is best / pick, its cost the decision's cost in
 *    SpMV-equivalents of the chosen kernel;
 *  - the predictor's |predicted - measured| / measured for each calibrated
 *    format, measured = the time of the configuration the fit was
 *    calibrated with, taken as the calibration took its points (through
 *    the backend, as the worker: eval_store_worker_time, the median of
 *    MEAS_ROUNDS loads, MEAS_ROUNDS_SMALL on small products); the error
 *    against the ground-truth race's time
 *    of the same configuration is reported beside it;
 *  - a cache hit of the best configuration through the backend: load
 *    (conversion and upload), the first product, as multiples of the
 *    kernel's steady time.
 * The report (stdout) starts with the device, date, versions and the
 * targets of issue 5; --tsv writes every number, a line per matrix as it
 * is done.
 */

#define NSTRAT 4
#define MEAS_ROUNDS 3  /* worker loads of a format for the predictor */
/* Six loads more where the three read under MEAS_SMALL_US, and the
 * median of the nine.  There a load's runs move by a few percent as a
 * whole (graph replays), which a median of three carries into every
 * error.  The median of the first three stays beside (pmeas3). */
#define MEAS_ROUNDS_SMALL 9
#define MEAS_SMALL_US 20.0
static const enum spmvd_strategy strats[NSTRAT] = {
  SPMVD_STRATEGY_MODEL, SPMVD_STRATEGY_PREDICT, SPMVD_STRATEGY_TRIAL,
  SPMVD_STRATEGY_AUTO,
};

/* One strategy on one matrix. */
struct strat_res {
  int ok;           /* 0: not applicable or failed, see note */
  int failed;       /* 1: it ran and gave no usable pick */
  char pick[64];
  struct spmv_config cfg;  /* the pick */
  double pick_us;   /* the pick's ground-truth time */
  double match;     /* best_us / pick_us */
  double cost;      /* decision cost in SpMV-equivalents */
  int ncand;        /* candidates it timed */
  double wall_ms;   /* host time of spmvd_tuner_run (models and race; the
                       layouts were resident already) */
  char note[120];
  char race[1024];  /* its trials: "cfg=median status runs probe P;..." */
};

/* One matrix in one value type. */
struct mrec {
  char name[96];
  int set;
  enum spmv_dtype dt;
  int64_t rows, nnz;
  double cv;
  char best[64];
  double best_us;                  /* confirmed (see confirm()) */
  /* best/pick with the same passes choosing and timing: the best the
   * least of every pass's times, each pick's time from the same passes
   * (auto's). */
  double same_best_us, same_auto_us;
  /* best/pick on the first six passes alone (three to choose, three to
   * time); auto's. */
  double six_best_us, six_auto_us;
  double raced_best_us;            /* as the exhaustive race timed it */
  /* The confirmed configurations timed again one product at a time
   * (confirm()): the best of them and each strategy's pick, 0 when not. */
  char single_best[64];
  double single_best_us, single_us[NSTRAT];
  double best_ellrt_us;            /* fastest ellr-t of the ground truth */
  int ncand;                       /* ground-truth candidates timed */
  double gt_cost;                  /* ground truth's cost, SpMV-equivalents */
  struct strat_res st[NSTRAT];
  double perr[SPMV_FMT_COUNT];     /* predictor error, NAN when none */
  double ppred[SPMV_FMT_COUNT], pmeas[SPMV_FMT_COUNT];
  double pmeas3[SPMV_FMT_COUNT];   /* pmeas on the first MEAS_ROUNDS loads */
  double ppaper[SPMV_FMT_COUNT];   /* the paper's form alone (MODELS.md 3) */
  double pstore[SPMV_FMT_COUNT];   /* the ground-truth race's time */
  int hit_ok;
  struct eval_cache_hit hit;
  char hit_msg[120];
};

/* The calibration of one value type. */
struct calib_res {
  int done, nfit, npoints, nok;
  int loaded;                /* from --calib-db, not calibrated here */
  char from[160];            /* that cache's path */
  double seconds;
  int64_t total_nnz;
  struct spmvd_predictor pred;
  char msg[160];
};

struct opts {
  const char *mode, *dir, *only, *tsv, *replay, *gt_tsv, *probe;
  const char *calib_db;      /* the daemon's cache: its calibration */
  int sets, quick, dts;      /* dts: bit 1 f32, bit 2 f64 */
  double budget;             /* seconds; 0 = none */
  double deadline;           /* seconds: report what is done and exit */
  int64_t calib_nnz;         /* 0: the daemon's default */
  int64_t max_nnz;           /* 0: no bound */
  int probe_idle_ms;         /* --probe: host sleep before each load */
  int probe_busy_ms;         /* --probe: host busy before each load */
  int probe_turns;           /* --probe: turns over the configurations */
  int probe_long;            /* --probe: more timings of 30 runs a load */
  const char *probe_pads;    /* --probe: pad sizes before each load */
};

/* The configuration as the tuner lists it on dev (cpu: no bs, csr-vector
 * is csr-scalar). */
static struct spmv_config normalise(struct spmv_config c,
                                    const struct spmvd_device_info *dev)
{
  if (strcmp(dev->backend, "cuda") != 0 || dev->warp_size < 2) {
    c.bs = 0;
    if (c.format == SPMV_FMT_CSR_VECTOR) {
      c.format = SPMV_FMT_CSR_SCALAR;
      c.tpr = 0;
    }
  }
  return c;
}

/* Ground-truth race parameters: every candidate timed to a stable median. */
static void gt_params(struct spmvd_race_params *p)
{
  spmvd_race_params_default(p);
  p->warmup = 2;
  p->reps = 10;
  p->min_rounds = 2;
  p->max_rounds = 4;
  p->stable_tol = 0.02;
  p->drop_ratio = 10;
  p->probe_ratio = 0;  /* every candidate to a stable median */
  p->close_tol = 0;
}

/* The ground-truth table: the exhaustive decision's trials, grown by the
 * configurations timed later. */
struct gt {
  struct spmvd_trial *t;
  size_t n, cap;
};

/* The index of cfg (normalised) in the table, g->n when absent. */
static size_t gt_find(const struct gt *g, const struct spmv_config *cfg)
{
  size_t k;

  for (k = 0; k < g->n && !spmv_config_equal(&g->t[k].cfg, cfg); k++)
    ;
  return k;
}

/* The ground-truth time of cfg, timing it now when the table lacks it;
 * NAN when it cannot run. */
static double gt_time(struct gt *g, struct spmv_config cfg,
                      struct eval_store *s, const struct spmvd_tune_input *in)
{
  struct spmvd_candidates *c;
  struct spmvd_race_params p;
  struct spmvd_decision d;
  struct spmv_error e;
  double us = NAN;

  cfg = normalise(cfg, in->dev);
  size_t k = gt_find(g, &cfg);
  if (k < g->n)
    return g->t[k].status == SPMVD_TRIAL_OK ? g->t[k].time_us : NAN;
  if (g->n == g->cap) {
    size_t nc = g->cap ? 2 * g->cap : 16;
    struct spmvd_trial *nt = realloc(g->t, nc * sizeof *nt);
    if (nt == NULL)
      return NAN;
    g->t = nt;
    g->cap = nc;
  }
  c = malloc(sizeof *c);
  if (c == NULL)
    return NAN;
  c->n = 1;
  c->cfg[0] = cfg;
  gt_params(&p);
  spmv_error_clear(&e);
  int rc = spmvd_tuner_race(c, &eval_store_race_ops, s, &p, in, &d, &e);
  free(c);
  if (d.ntrials == 1) {
    g->t[g->n++] = d.trials[0];
    if (rc == 0)
      us = d.trials[0].time_us;
  }
  spmvd_decision_fini(&d);
  return us;
}

static void progress_calib(void *ctx, int done, int total,
                           const struct spmvd_calib_point *pt)
{
  (void)ctx;
  (void)pt;
  if (done == total || done % (total / 10 > 0 ? total / 10 : 1) == 0)
    fprintf(stderr, "  calibration: %d/%d points\n", done, total);
}

/* Calibrates the predictor for dt on the store's device. */
static void calibrate(struct eval_store *s, enum spmv_dtype dt,
                      const struct opts *o, struct calib_res *cr)
{
  struct spmvd_calib_params cp;
  struct spmvd_calib_plan *plan = NULL;
  struct spmvd_calib_ops ops = { eval_store_calib_time, progress_calib };
  struct spmv_error e;
  double t0 = bench_now_s();
  int rc;

  memset(cr, 0, sizeof *cr);
  spmv_error_clear(&e);
  spmvd_calib_params_default(&cp);
  if (o->calib_nnz > 0) {
    cp.max_nnz_total = o->calib_nnz;
    if (cp.max_nnz_matrix > o->calib_nnz / 4)
      cp.max_nnz_matrix = o->calib_nnz / 4 > 1 ? o->calib_nnz / 4 : 1;
  }
  rc = spmvd_calib_plan_new(eval_store_info(s), dt, &cp, &plan, &e);
  if (rc == 0) {
    cr->npoints = (int)plan->n;
    cr->total_nnz = plan->total_nnz;
    eval_store_calib_plan(s, plan);
    rc = spmvd_calib_run(plan, &cp, &ops, s, &e);
    eval_store_calib_plan(s, NULL);
  }
  if (rc == 0) {
    for (size_t k = 0; k < plan->n; k++)
      cr->nok += plan->pt[k].ok;
    rc = spmvd_predict_fit(plan, eval_store_info(s), &cr->pred, &e);
  }
  cr->seconds = bench_now_s() - t0;
  if (rc < 0) {
    snprintf(cr->msg, sizeof cr->msg, "%.150s", e.msg);
  } else {
    cr->nfit = rc;
    cr->done = 1;
  }
  spmvd_calib_plan_free(plan);
}

/*
 * --calib-db: the calibration `spmvctl calibrate` stored in the daemon's
 * cache for this device and value type (read-only), so that the predictor
 * is judged as the daemon uses it.
 */
static void calib_load(struct eval_store *s, enum spmv_dtype dt,
                       const char *path, struct calib_res *cr)
{
  struct spmvd_cache *c = NULL;
  struct spmv_error e;
  int rc;

  memset(cr, 0, sizeof *cr);
  spmv_error_clear(&e);
  rc = spmvd_cache_open(path, SPMVD_CACHE_READONLY, &c, &e);
  if (rc == 0)
    rc = spmvd_predict_load(c, eval_store_info(s), dt, &cr->pred, &e);
  spmvd_cache_close(c);
  if (rc == 0)
    snprintf(cr->msg, sizeof cr->msg, "%.100s has no %s calibration for this device",
             path, spmv_dtype_name(dt));
  else if (rc < 0)
    snprintf(cr->msg, sizeof cr->msg, "%.150s", e.msg);
  if (rc <= 0)
    return;
  for (int k = 0; k < SPMV_FMT_COUNT; k++)
    cr->nfit += cr->pred.fit[k].kind != SPMVD_FIT_NONE;
  snprintf(cr->from, sizeof cr->from, "%.150s", path);
  cr->loaded = cr->done = 1;
}

/* Runs one strategy on the matrix and measures its pick. */
static void run_strategy(enum spmvd_strategy st, struct eval_store *s,
                         const struct spmvd_tune_input *in, struct gt *g,
                         double best_us, struct strat_res *r)
{
  struct spmvd_decision d;
  struct spmv_error e;

  memset(r, 0, sizeof *r);
  spmvd_decision_init(&d);
  spmv_error_clear(&e);
  double t0 = bench_now_s();
  int rc = spmvd_tuner_run(st, in, &eval_store_race_ops, s, NULL, &d, &e);
  r->wall_ms = 1e3 * (bench_now_s() - t0);
  if (rc < 0) {
    r->failed = !(rc == SPMV_EUNSUPPORTED || (st == SPMVD_STRATEGY_PREDICT && in->pred == NULL));
    snprintf(r->note, sizeof r->note, "%s: %.100s", r->failed ? "failed" : "n/a", e.msg);
    goto out;
  }
  spmv_config_format(&d.cfg, r->pick, sizeof r->pick);
  r->cfg = normalise(d.cfg, in->dev);
  r->cost = d.cost_spmv;
  r->ncand = (int)d.ntrials;
  for (size_t k = 0, n = 0; k < d.ntrials && n < sizeof r->race; k++) {
    char c[64];
    const struct spmvd_trial *t = &d.trials[k];
    spmv_config_format(&t->cfg, c, sizeof c);
    n += (size_t)snprintf(r->race + n, sizeof r->race - n,
                          "%s%s=%.3f %s %d probe %.3f", k ? ";" : "", c,
                          t->time_us, spmvd_trial_status_name(t->status),
                          t->runs, t->probe_us);
  }
  r->pick_us = gt_time(g, d.cfg, s, in);
  if (!(r->pick_us > 0)) {
    r->failed = 1;
    snprintf(r->note, sizeof r->note, "its pick %s does not run", r->pick);
    goto out;
  }
  r->match = best_us / r->pick_us;
  r->ok = 1;
out:
  spmvd_decision_fini(&d);
}

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
 * the odd passes time it and the picks (same_best_us keeps the reading
 * where the same passes do both).
 *
 * Twelve passes, six of each kind: on six, auto's best/pick on the
 * smallest products strays a few percent either side of its true ratio
 * (the true best's time over the pick's), enough to read picks truly
 * above 95 % as below it.  The reading of the first six passes stays
 * beside (six_best_us).
 */
#define CONFIRM_TOP 6
#define CONFIRM_PASSES 12
#define CONFIRM_PASSES_V109 6
#define CONFIRM_REPS 30
/* Warm-up runs before each timing.  (The evict-first matrix loads cannot
 * bring a layout of about the L2's size back into an L2 that other data
 * holds, so spmv_dev_time reads it in first.) */
#define CONFIRM_WARMUP 20
/* After each held timing, as many products timed one at a time, each in
 * its own hold: no queue of back-to-back runs behind it, as a client's
 * request runs in the worker (the held runs' queue reads small products
 * slower). */
#define CONFIRM_SINGLES CONFIRM_REPS

/* Whether index i is among the first n of idx. */
static int in_set(const size_t *idx, size_t n, size_t i)
{
  for (size_t j = 0; j < n; j++)
    if (idx[j] == i)
      return 1;
  return 0;
}

/* Which passes a median takes: the even ones (they choose the best),
 * the odd ones (they time it and the picks), or all. */
enum passes { PASSES_CHOOSE, PASSES_TIME, PASSES_ALL };

/* The median of a configuration's pass medians of kind w that ran, NAN
 * when none. */
static double passes_median_of(const double pass[CONFIRM_PASSES], enum passes w,
                               int np)
{
  double v[CONFIRM_PASSES];
  int m = 0;

  for (int p = 0; p < np; p++)
    if (isfinite(pass[p]) && (w == PASSES_ALL || p % 2 == (w == PASSES_TIME)))
      v[m++] = pass[p];
  return m > 0 ? spmv_median(v, (size_t)m) : NAN;
}

/* The same over every pass. */
static double passes_median(const double pass[CONFIRM_PASSES], enum passes w)
{
  return passes_median_of(pass, w, CONFIRM_PASSES);
}

/* Of n configurations' passes, the one whose median of kind w is least
 * (-1 when none ran). */
static int passes_least(double pass[][CONFIRM_PASSES], size_t n, enum passes w,
                        int np)
{
  int best = -1;
  double bu = 0;

  for (size_t i = 0; i < n; i++) {
    double x = passes_median_of(pass[i], w, np);
    if (isfinite(x) && (best < 0 || x < bu)) {
      best = (int)i;
      bu = x;
    }
  }
  return best;
}

static void confirm(struct eval_store *s, struct gt *g, struct mrec *r)
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
    i = gt_find(g, &r->st[k].cfg);
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
  int b = passes_least(med, n, PASSES_CHOOSE, CONFIRM_PASSES);
  if (b >= 0 && isfinite(passes_median(med[b], PASSES_TIME))) {
    r->best_us = g->t[idx[b]].time_us;
    spmv_config_format(&g->t[idx[b]].cfg, r->best, sizeof r->best);
  }
  /* The six-pass reading: the first six passes alone. */
  b = passes_least(med, n, PASSES_CHOOSE, CONFIRM_PASSES_V109);
  r->six_best_us = b >= 0 ? passes_median_of(med[b], PASSES_TIME, CONFIRM_PASSES_V109) : 0;
  r->six_auto_us = 0;
  /* The same configurations one product at a time, chosen and timed the
   * same way; each pick's single time. */
  r->single_best_us = 0;
  b = passes_least(one, n, PASSES_CHOOSE, CONFIRM_PASSES);
  if (b >= 0) {
    double x = passes_median(one[b], PASSES_TIME);
    r->single_best_us = isnan(x) ? 0 : x;
    spmv_config_format(&g->t[idx[b]].cfg, r->single_best, sizeof r->single_best);
  }
  /* The same-passes reading: the least of every pass's medians (of the
   * first six, as the six-pass reading). */
  b = passes_least(med, n, PASSES_ALL, CONFIRM_PASSES_V109);
  r->same_best_us = b >= 0 ? passes_median_of(med[b], PASSES_ALL, CONFIRM_PASSES_V109) : 0;
  r->same_auto_us = 0;
  for (k = 0; k < NSTRAT; k++) {
    r->single_us[k] = 0;
    if (!r->st[k].ok)
      continue;
    size_t gi = gt_find(g, &r->st[k].cfg);
    if (gi < g->n)
      r->st[k].pick_us = g->t[gi].time_us;
    /* At most 1: a pick timed below the chosen best is the choosing
     * passes' noise, not a pick better than the best. */
    r->st[k].match = fmin(1.0, r->best_us / r->st[k].pick_us);
    for (i = 0; i < n; i++)
      if (idx[i] == gi) {
        double x = passes_median(one[i], PASSES_TIME);
        r->single_us[k] = isnan(x) ? 0 : x;
        if (k == NSTRAT - 1) {
          r->same_auto_us = passes_median_of(med[i], PASSES_ALL, CONFIRM_PASSES_V109);
          r->six_auto_us = passes_median_of(med[i], PASSES_TIME, CONFIRM_PASSES_V109);
        }
      }
  }
}

/* auto's best/pick over one type's matrices, read another way than the
 * targets': the same passes choosing and timing, the first six passes, or
 * one product at a time. */
enum ratio_kind { RATIO_SAME_PASSES, RATIO_SIX_PASSES, RATIO_SINGLE };
struct ratios {
  int n, n95;
  double log, worst;
  const char *wname;
};

static void ratios_of(const struct mrec *r, size_t n, enum spmv_dtype dt,
                      enum ratio_kind kind, struct ratios *o)
{
  o->n = o->n95 = 0;
  o->log = 0;
  o->worst = INFINITY;
  o->wname = "-";
  for (size_t i = 0; i < n; i++) {
    double b = kind == RATIO_SINGLE      ? r[i].single_best_us
               : kind == RATIO_SIX_PASSES ? r[i].six_best_us
                                          : r[i].same_best_us;
    double p = kind == RATIO_SINGLE      ? r[i].single_us[NSTRAT - 1]
               : kind == RATIO_SIX_PASSES ? r[i].six_auto_us
                                          : r[i].same_auto_us;
    if (r[i].dt != dt || !(b > 0) || !(p > 0))
      continue;
    /* At most 1, as confirm() caps the targets' reading: one product at
     * a time the best is chosen on the even passes too. */
    double x = fmin(1.0, b / p);
    o->n++;
    o->log += log(x);
    o->n95 += x >= 0.95;
    if (x < o->worst) {
      o->worst = x;
      o->wname = r[i].name;
    }
  }
}

/* Evaluates one matrix in one value type into r; returns 0 or a code. */
static int eval_matrix(struct eval_store *s, const struct bench_suite_entry *en,
                       const struct spmv_csr *A, enum spmv_dtype dt,
                       const struct calib_res *cr, struct mrec *r, FILE *gtf,
                       struct spmv_error *err)
{
  const struct spmvd_device_info *dev = eval_store_info(s);
  struct spmvd_candidates *c = NULL;
  struct spmvd_race_params p;
  struct spmvd_tune_input in;
  struct spmvd_decision gtd;
  struct spmv_profile prof;
  struct gt g = { NULL, 0, 0 };
  int rc, k;

  memset(r, 0, sizeof *r);
  spmvd_decision_init(&gtd);
  snprintf(r->name, sizeof r->name, "%s", en->name);
  r->set = en->set;
  r->dt = dt;
  r->rows = A->rows;
  r->nnz = A->nnz;
  for (k = 0; k < SPMV_FMT_COUNT; k++)
    r->perr[k] = r->ppred[k] = r->pmeas[k] = r->pmeas3[k] = r->ppaper[k] = r->pstore[k] = NAN;
  if ((rc = spmv_profile_compute(A, &prof, err)) < 0 ||
      (rc = eval_store_matrix(s, A, dt, err)) < 0)
    return rc;
  r->cv = prof.rl_cv;
  memset(&in, 0, sizeof in);
  in.A = A;
  in.prof = &prof;
  in.dtype = dt;
  in.dev = dev;
  in.pred = cr->done && cr->nfit > 0 ? &cr->pred : NULL;
  c = malloc(sizeof *c);
  if (c == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if ((rc = spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c, err)) < 0)
    goto out;
  eval_store_group(c);
  eval_store_prefetch(s, c);
  gt_params(&p);
  if ((rc = spmvd_tuner_race(c, &eval_store_race_ops, s, &p, &in, &gtd, err)) < 0)
    goto out;
  g.t = gtd.trials;
  g.n = g.cap = gtd.ntrials;
  gtd.trials = NULL;
  gtd.ntrials = 0;
  r->best_us = gtd.time_us;
  r->best_ellrt_us = NAN;
  for (size_t t = 0; t < g.n; t++)
    if (g.t[t].cfg.format == SPMV_FMT_ELLR_T && g.t[t].status != SPMVD_TRIAL_FAILED &&
        g.t[t].time_us > 0 && !(g.t[t].time_us >= r->best_ellrt_us))
      r->best_ellrt_us = g.t[t].time_us;
  r->gt_cost = gtd.cost_spmv;
  r->ncand = (int)c->n;
  snprintf(r->best, sizeof r->best, "%s", gtd.text);

  for (k = 0; k < NSTRAT; k++)
    run_strategy(strats[k], s, &in, &g, r->best_us, &r->st[k]);
  /* The ground truth in bench_spmv's table form, for --replay: every
   * configuration in one timing (the exhaustive race's), before confirm()
   * times a few of them again in its own (whose 30-run holds read small
   * products slower), which would mix the two in one table. */
  for (size_t t = 0; gtf != NULL && t < g.n; t++) {
    char text[64];
    spmv_config_format(&g.t[t].cfg, text, sizeof text);
    if (g.t[t].status == SPMVD_TRIAL_FAILED)
      fprintf(gtf, "%s\t%s\t%s\tfailed\t\t%.100s\n", en->name, spmv_dtype_name(dt), text,
              g.t[t].msg);
    else
      fprintf(gtf, "%s\t%s\t%s\tok\t%.3f\t%d\n", en->name, spmv_dtype_name(dt), text,
              g.t[t].time_us, g.t[t].runs);
  }
  if (gtf != NULL)
    fflush(gtf);
  confirm(s, &g, r);

  struct spmvd_pfeat feat;
  spmvd_predict_features(A, &prof, dt, &feat);
  for (k = 0; in.pred != NULL && k < SPMV_FMT_COUNT; k++) {
    const struct spmvd_fit *f = &in.pred->fit[k];
    if (!spmvd_predict_applies(in.pred, (enum spmv_format)k, &prof))
      continue;
    r->ppred[k] = spmvd_predict_time(f, &prof, &feat);
    r->ppaper[k] = spmvd_predict_time(f, &prof, NULL);
    r->pstore[k] = gt_time(&g, f->cfg, s, &in);
    /* Measured as the calibration timed its points, through the worker's
     * load: the race among the store's resident layouts (x and y shared
     * by all) times csr-vector on tiny matrices slower than the worker
     * does (calib_points --twins). */
    spmv_error_clear(err);
    double each[MEAS_ROUNDS_SMALL], more;
    if (eval_store_worker_time(s, A, dt, &f->cfg, MEAS_ROUNDS, each, &r->pmeas[k], err) != 0)
      r->pmeas[k] = NAN;
    r->pmeas3[k] = r->pmeas[k];
    if (r->pmeas[k] < MEAS_SMALL_US &&
        eval_store_worker_time(s, A, dt, &f->cfg, MEAS_ROUNDS_SMALL - MEAS_ROUNDS,
                               each + MEAS_ROUNDS, &more, err) == 0)
      r->pmeas[k] = spmv_median(each, MEAS_ROUNDS_SMALL);
    if (r->pmeas[k] > 0 && isfinite(r->ppred[k]))
      r->perr[k] = fabs(r->ppred[k] - r->pmeas[k]) / r->pmeas[k];
  }

  spmv_error_clear(err);
  if (eval_store_cache_hit(s, &gtd.cfg, &r->hit, err) == 0)
    r->hit_ok = 1;
  else
    snprintf(r->hit_msg, sizeof r->hit_msg, "%.110s", err->msg);
  spmv_error_clear(err);
  rc = 0;
out:
  free(g.t);
  spmvd_decision_fini(&gtd);
  free(c);
  return rc;
}

/* ---- the report ---- */

static const char *set_name(int set)
{
  return set == BENCH_SUITE_LARGE ? "large" : set == BENCH_SUITE_PAPER ? "paper" : "real";
}

/* Aggregates of one strategy over a set of records (set 0: all). */
struct agg {
  int n, n95, nfail;
  const char *fail_name;
  double logm, logc, worst, cmax;
  const char *worst_name;
};

static void aggregate(const struct mrec *r, size_t n, enum spmv_dtype dt,
                      int set, int k, struct agg *a)
{
  memset(a, 0, sizeof *a);
  a->worst = INFINITY;
  for (size_t i = 0; i < n; i++) {
    const struct strat_res *x = &r[i].st[k];
    if (r[i].dt != dt || (set && r[i].set != set))
      continue;
    if (x->failed) {
      a->nfail++;
      a->fail_name = r[i].name;
    }
    if (!x->ok)
      continue;
    a->n++;
    a->logm += log(x->match);
    a->logc += log(fmax(x->cost, 1e-9));
    a->n95 += x->match >= 0.95;
    a->cmax = fmax(a->cmax, x->cost);
    if (x->match < a->worst) {
      a->worst = x->match;
      a->worst_name = r[i].name;
    }
  }
}

static double gmean(double logsum, int n)
{
  return n > 0 ? exp(logsum / n) : NAN;
}

/* Writes v with fmt into buf (24 bytes), or "-" when v is not finite. */
static void num(char *buf, double v, const char *fmt)
{
  if (isfinite(v))
    snprintf(buf, 24, fmt, v);
  else
    snprintf(buf, 24, "-");
}

static const char *pass(int ok)
{
  return ok ? "**pass**" : "**FAIL**";
}

/* Prints the whole report for value type dt. */
static void report_dtype(FILE *f, const struct mrec *r, size_t n,
                         enum spmv_dtype dt, const struct calib_res *cr)
{
  const char *dn = spmv_dtype_name(dt);
  struct agg a[NSTRAT];
  int k, cnt = 0;

  for (size_t i = 0; i < n; i++)
    cnt += r[i].dt == dt;
  if (cnt == 0)
    return;
  for (k = 0; k < NSTRAT; k++)
    aggregate(r, n, dt, 0, k, &a[k]);

  /* Predictor errors per format. */
  double pe_sum[SPMV_FMT_COUNT] = {0}, pe_max[SPMV_FMT_COUNT] = {0};
  double pp_sum[SPMV_FMT_COUNT] = {0}, ps_sum[SPMV_FMT_COUNT] = {0};
  double p3_sum[SPMV_FMT_COUNT] = {0};
  int pe_n[SPMV_FMT_COUNT] = {0}, ps_n[SPMV_FMT_COUNT] = {0};
  const char *pe_worst[SPMV_FMT_COUNT] = {0};
  for (size_t i = 0; i < n; i++)
    for (k = 0; k < SPMV_FMT_COUNT; k++)
      if (r[i].dt == dt && isfinite(r[i].perr[k])) {
        pe_sum[k] += r[i].perr[k];
        pp_sum[k] += fabs(r[i].ppaper[k] - r[i].pmeas[k]) / r[i].pmeas[k];
        p3_sum[k] += fabs(r[i].ppred[k] - r[i].pmeas3[k]) / r[i].pmeas3[k];
        pe_n[k]++;
        if (r[i].pstore[k] > 0) {
          ps_sum[k] += fabs(r[i].ppred[k] - r[i].pstore[k]) / r[i].pstore[k];
          ps_n[k]++;
        }
        if (r[i].perr[k] >= pe_max[k]) {
          pe_max[k] = r[i].perr[k];
          pe_worst[k] = r[i].name;
        }
      }
  int pe_all = 1, pe_any = 0;
  double pe_worst_mean = 0;
  const char *pe_worst_fmt = "-";
  for (k = 0; k < SPMV_FMT_COUNT; k++)
    if (pe_n[k] > 0) {
      double m = pe_sum[k] / pe_n[k];
      pe_any = 1;
      pe_all &= m <= 0.05;
      if (m >= pe_worst_mean) {
        pe_worst_mean = m;
        pe_worst_fmt = spmv_format_name((enum spmv_format)k);
      }
    }

  /* Cache hits. */
  int h_n = 0, h_ver = 0;
  double h_max = 0, h_log = 0, h_prod_log = 0, h_up_log = 0;
  const char *h_worst = "-";
  for (size_t i = 0; i < n; i++)
    if (r[i].dt == dt && r[i].hit_ok && r[i].hit.kernel_us > 0) {
      double x = r[i].hit.first_kernel_us / r[i].hit.kernel_us;
      h_n++;
      h_ver += r[i].hit.verified;
      h_log += log(x);
      h_prod_log += log(r[i].hit.first_product_us / r[i].hit.kernel_us);
      h_up_log += log(r[i].hit.load_us / r[i].hit.kernel_us);
      if (x >= h_max) {
        h_max = x;
        h_worst = r[i].name;
      }
    }

  struct agg *am = &a[0], *aa = &a[3];
  fprintf(f, "\n## %s: targets (issue 5)\n\n", dn);
  fprintf(f, "| target | achieved | required | verdict |\n|---|---|---|---|\n");
  fprintf(f, "| auto, geometric mean of best/pick | %.1f %% over %d matrices | >= 98 %% | %s |\n",
          100 * gmean(aa->logm, aa->n), aa->n, pass(gmean(aa->logm, aa->n) >= 0.98));
  fprintf(f, "| auto, every matrix | worst %.1f %% (%s); %d of %d at >= 95 %% | >= 95 %% | %s |\n",
          100 * aa->worst, aa->worst_name ? aa->worst_name : "-", aa->n95, aa->n,
          pass(aa->n > 0 && aa->worst >= 0.95));
  /* The six-pass and same-passes readings (confirm()): beside, not a
   * target's verdict. */
  struct ratios o;
  ratios_of(r, n, dt, RATIO_SIX_PASSES, &o);
  if (o.n > 0)
    fprintf(f, "| (auto, every matrix, on the first %d passes, as v85..v109 read it) "
               "| worst %.1f %% (%s); %d of %d at >= 95 %% | - | - |\n",
            CONFIRM_PASSES_V109, 100 * o.worst, o.wname, o.n95, o.n);
  ratios_of(r, n, dt, RATIO_SAME_PASSES, &o);
  if (o.n > 0)
    fprintf(f, "| (auto, every matrix, the best chosen and timed on the same %d passes, as before v85) "
               "| worst %.1f %% (%s); %d of %d at >= 95 %% | - | - |\n",
            CONFIRM_PASSES_V109, 100 * o.worst, o.wname, o.n95, o.n);
  fprintf(f, "| auto, tuning cost on first sight | max %.1f, geomean %.1f SpMV-equivalents | <= 20 | %s |\n",
          aa->cmax, gmean(aa->logc, aa->n), pass(aa->n > 0 && aa->cmax <= 20));
  if (am->n > 0)
    fprintf(f, "| model alone, geometric mean | %.1f %% over %d matrices (worst %.1f %%, %s)%s%s%s | >= 95 %% | %s |\n",
            100 * gmean(am->logm, am->n), am->n, 100 * am->worst, am->worst_name,
            am->nfail ? "; failed on " : "", am->nfail ? am->fail_name : "",
            am->nfail > 1 ? " and others" : "",
            pass(gmean(am->logm, am->n) >= 0.95 && am->nfail == 0));
  else
    fprintf(f, "| model alone, geometric mean | not applicable on this device | >= 95 %% | - |\n");
  if (pe_any)
    fprintf(f, "| predictor, mean error per format | worst format %s %.1f %% (table below) | <= 5 %% each | %s |\n",
            pe_worst_fmt, 100 * pe_worst_mean, pass(pe_all));
  else
    fprintf(f, "| predictor, mean error per format | not calibrated: %s | <= 5 %% each | **FAIL** |\n",
            cr->msg[0] ? cr->msg : "no fit");
  fprintf(f, "| cache hit: first product after the upload | max %.2fx (%s), geomean %.2fx kernel time; %d/%d verified | <= 3x | %s |\n",
          h_max, h_worst, h_n ? exp(h_log / h_n) : NAN, h_ver, h_n,
          pass(h_n > 0 && h_max <= 3 && h_ver == h_n));

  /* auto against the confirmed configurations timed one product at a
   * time (confirm()'s CONFIRM_SINGLES), beside the held runs above. */
  struct ratios o1;
  ratios_of(r, n, dt, RATIO_SINGLE, &o1);
  if (o1.n > 0)
    fprintf(f, "\nOne product at a time (each of %d timed alone after the held runs, the same\n"
               "configurations, the best chosen on the even passes and timed on the odd):\n"
               "auto %.1f %% of the best in geometric mean, worst %.1f %% (%s),\n"
               "%d of %d at >= 95 %%.\n",
            CONFIRM_SINGLES, 100 * exp(o1.log / o1.n), 100 * o1.worst, o1.wname, o1.n95,
            o1.n);

  fprintf(f, "\n### %s: strategies in aggregate\n\n", dn);
  fprintf(f, "| strategy | matrices | geomean best/pick | worst (matrix) | >= 95 %% | geomean cost | max cost | by part (geomean: large / paper / real) |\n");
  fprintf(f, "|---|---|---|---|---|---|---|---|\n");
  for (k = 0; k < NSTRAT; k++) {
    struct agg b[3];
    aggregate(r, n, dt, BENCH_SUITE_LARGE, k, &b[0]);
    aggregate(r, n, dt, BENCH_SUITE_PAPER, k, &b[1]);
    aggregate(r, n, dt, BENCH_SUITE_REAL, k, &b[2]);
    char v[6][24];
    if (a[k].n == 0) {
      fprintf(f, "| %s | 0 | - | - | - | - | - | - |\n", spmvd_strategy_name(strats[k]));
      continue;
    }
    num(v[0], 100 * gmean(a[k].logm, a[k].n), "%.1f %%");
    num(v[1], 100 * a[k].worst, "%.1f %%");
    num(v[2], gmean(a[k].logc, a[k].n), "%.1f");
    num(v[3], 100 * gmean(b[0].logm, b[0].n), "%.1f %%");
    num(v[4], 100 * gmean(b[1].logm, b[1].n), "%.1f %%");
    num(v[5], 100 * gmean(b[2].logm, b[2].n), "%.1f %%");
    fprintf(f, "| %s | %d | %s | %s (%s) | %d | %s | %.1f | %s / %s / %s |\n",
            spmvd_strategy_name(strats[k]), a[k].n, v[0], v[1],
            a[k].worst_name ? a[k].worst_name : "-", a[k].n95, v[2], a[k].cmax, v[3], v[4], v[5]);
  }

  /* The model's pick against the best ellr-t: its BS and T, apart from
   * the format (when the model picked ellr-t). */
  double le = 0;
  int ln = 0;
  for (size_t i = 0; i < n; i++)
    if (r[i].dt == dt && r[i].st[0].ok && r[i].best_ellrt_us > 0 &&
        strncmp(r[i].st[0].pick, "ellr-t ", 7) == 0) {
      le += log(r[i].best_ellrt_us / r[i].st[0].pick_us);
      ln++;
    }
  fprintf(f, "\nFailed decisions (no usable pick): model %d, predict %d, trial %d, auto %d.\n",
          a[0].nfail, a[1].nfail, a[2].nfail, a[3].nfail);
  if (ln > 0)
    fprintf(f, "The model's ellr-t pick reaches %.1f %% of the best ellr-t configuration in geometric mean"
               " (%d matrices where model picked ellr-t).\n", 100 * exp(le / ln), ln);

  fprintf(f, "\n### %s: predictor error |predicted - measured| / measured\n\n", dn);
  if (cr->loaded)
    fprintf(f, "Calibration: the daemon's, read from %s (%d formats fitted).\n\n",
            cr->from, cr->nfit);
  else if (cr->done)
    fprintf(f, "Calibration: %d points (%d timed), %lld nonzeros in all, %.1f s, %d formats fitted.\n\n",
            cr->npoints, cr->nok, (long long)cr->total_nnz, cr->seconds, cr->nfit);
  fprintf(f, "Predictions by the work model (spmvd_predict.h); the paper's form alone (saddle, or\n"
             "csr-vector's product of lines, on the paper's grid) in its own column.  Measured as the\n"
             "calibration timed its points: loaded through the backend as the worker loads, 2 warm-up\n"
             "runs and the median of 10, the median of %d such loads (%d where they read under %.0f us);\n"
             "the next to last column is the work model's error against the ground-truth race's time\n"
             "of the same configuration instead, the last against the first %d loads alone (as before\n"
             "v111).\n\n",
          MEAS_ROUNDS, MEAS_ROUNDS_SMALL, MEAS_SMALL_US, MEAS_ROUNDS);
  fprintf(f, "| format | calibrated configuration | work model: fit error on its calibration points | matrices | mean error | max error (matrix) | paper's form: fit error | mean error | work model vs the race's time | on %d loads |\n|---|---|---|---|---|---|---|---|---|---|\n",
          MEAS_ROUNDS);
  for (k = 0; cr->done && k < SPMV_FMT_COUNT; k++) {
    const struct spmvd_fit *ft = &cr->pred.fit[k];
    char txt[64];
    if (ft->kind == SPMVD_FIT_NONE)
      continue;
    spmv_config_format(&ft->cfg, txt, sizeof txt);
    char v[5][24];
    num(v[0], pe_n[k] ? 100 * pe_sum[k] / pe_n[k] : NAN, "%.1f %%");
    num(v[1], pe_n[k] ? 100 * pe_max[k] : NAN, "%.1f %%");
    num(v[2], pe_n[k] ? 100 * pp_sum[k] / pe_n[k] : NAN, "%.1f %%");
    num(v[3], ps_n[k] ? 100 * ps_sum[k] / ps_n[k] : NAN, "%.1f %%");
    num(v[4], pe_n[k] ? 100 * p3_sum[k] / pe_n[k] : NAN, "%.1f %%");
    fprintf(f, "| %s | %s | %.1f %% (%d points) | %d | %s | %s (%s) | %.1f %% | %s | %s | %s |\n",
            spmv_format_name((enum spmv_format)k), txt, 100 * ft->work_err, ft->work_npoints,
            pe_n[k], v[0], v[1], pe_worst[k] ? pe_worst[k] : "-", 100 * ft->err_mean, v[2], v[3],
            v[4]);
  }

  fprintf(f, "\n### %s: per matrix (best/pick in %%, cost in SpMV-equivalents of the pick)\n\n", dn);
  fprintf(f, "| matrix | part | rows | nnz | cv | exhaustive best | us | model (vs best ellr-t) | predict | trial (cost) | auto (cost, candidates) |\n");
  fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < n; i++) {
    const struct mrec *x = &r[i];
    char cell[NSTRAT][48];
    if (x->dt != dt)
      continue;
    for (k = 0; k < NSTRAT; k++) {
      const struct strat_res *sr = &x->st[k];
      if (!sr->ok)
        snprintf(cell[k], sizeof cell[k], "-");
      else if (k == 3)
        snprintf(cell[k], sizeof cell[k], "%.1f (%.1f, %d)", 100 * sr->match, sr->cost, sr->ncand);
      else if (k == 2)
        snprintf(cell[k], sizeof cell[k], "%.1f (%.1f)", 100 * sr->match, sr->cost);
      else if (k == 0 && x->best_ellrt_us > 0 && strncmp(sr->pick, "ellr-t ", 7) == 0)
        snprintf(cell[k], sizeof cell[k], "%.1f (%.1f)", 100 * sr->match,
                 100 * x->best_ellrt_us / sr->pick_us);
      else
        snprintf(cell[k], sizeof cell[k], "%.1f", 100 * sr->match);
    }
    fprintf(f, "| %s | %s | %lld | %lld | %.2f | %s | %.1f | %s | %s | %s | %s |\n", x->name,
            set_name(x->set), (long long)x->rows, (long long)x->nnz, x->cv, x->best,
            x->best_us, cell[0], cell[1], cell[2], cell[3]);
  }

  fprintf(f, "\n### %s: picks (host time of the whole decision in ms: models, race, bookkeeping)\n\n"
             "| matrix | model | predict | trial | auto |\n|---|---|---|---|---|\n", dn);
  for (size_t i = 0; i < n; i++) {
    if (r[i].dt != dt)
      continue;
    fprintf(f, "| %s", r[i].name);
    for (k = 0; k < NSTRAT; k++)
      if (r[i].st[k].ok)
        fprintf(f, " | %s (%.1f ms)", r[i].st[k].pick, r[i].st[k].wall_ms);
      else
        fprintf(f, " | %s", r[i].st[k].note);
    fprintf(f, " |\n");
  }

  fprintf(f, "\n### %s: cache hit of the best configuration (times as multiples of its steady kernel time)\n\n", dn);
  fprintf(f, "Geomeans: upload %.0fx, first product with host vectors %.1fx.\n\n",
          h_n ? exp(h_up_log / h_n) : NAN, h_n ? exp(h_prod_log / h_n) : NAN);
  fprintf(f, "| matrix | kernel us | upload ms | upload x | first product on the device x | second, third x | first product with host vectors x | next product with host vectors x | verified |\n");
  fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < n; i++) {
    const struct mrec *x = &r[i];
    const struct eval_cache_hit *h = &x->hit;
    if (x->dt != dt)
      continue;
    if (!x->hit_ok) {
      fprintf(f, "| %s | failed: %s | | | | | | | |\n", x->name, x->hit_msg);
      continue;
    }
    fprintf(f, "| %s | %.1f | %.2f | %.0f | %.2f | %.2f, %.2f | %.1f | %.1f | %s |\n", x->name,
            h->kernel_us, h->load_us / 1e3, h->load_us / h->kernel_us,
            h->first_kernel_us / h->kernel_us, h->next_kernel_us[0] / h->kernel_us,
            h->next_kernel_us[1] / h->kernel_us,
            h->first_product_us / h->kernel_us, h->product_us / h->kernel_us,
            h->verified ? "yes" : "NO");
  }
}

/* Writes one matrix's line of the TSV. */
static void tsv_line(FILE *f, const struct mrec *r)
{
  fprintf(f, "%s\t%s\t%s\t%lld\t%lld\t%.4f\t%s\t%.3f\t%d\t%.1f", r->name, set_name(r->set),
          spmv_dtype_name(r->dt), (long long)r->rows, (long long)r->nnz, r->cv, r->best,
          r->best_us, r->ncand, r->gt_cost);
  for (int k = 0; k < NSTRAT; k++) {
    const struct strat_res *s = &r->st[k];
    if (s->ok)
      fprintf(f, "\t%s\t%.3f\t%.4f\t%.2f\t%d\t%.1f", s->pick, s->pick_us, s->match, s->cost,
              s->ncand, s->wall_ms);
    else
      fprintf(f, "\t%s\t\t\t\t\t", s->note);
  }
  for (int k = 0; k < SPMV_FMT_COUNT; k++)
    if (isfinite(r->perr[k]))
      fprintf(f, "\t%s:%.3f/%.3f/%.3f/%.3f", spmv_format_name((enum spmv_format)k), r->ppred[k],
              r->pmeas[k], r->ppaper[k], r->pstore[k]);
  if (r->hit_ok)
    fprintf(f, "\thit:%.1f/%.3f/%.3f/%.3f/%.3f/%d/%.3f/%.3f", r->hit.load_us,
            r->hit.first_kernel_us, r->hit.first_product_us, r->hit.product_us,
            r->hit.kernel_us, r->hit.verified, r->hit.next_kernel_us[0],
            r->hit.next_kernel_us[1]);
  fprintf(f, "\traced_best_us:%.3f", r->raced_best_us);
  fprintf(f, "\tsingle:%s/%.3f/%.3f", r->single_best, r->single_best_us,
          r->single_us[NSTRAT - 1]);
  fprintf(f, "\tsame_passes:%.3f/%.3f", r->same_best_us, r->same_auto_us);
  fprintf(f, "\tsix_passes:%.3f/%.3f", r->six_best_us, r->six_auto_us);
  fprintf(f, "\tmeas3:");
  for (int k = 0, c = 0; k < SPMV_FMT_COUNT; k++)
    if (isfinite(r->perr[k]))
      fprintf(f, "%s%s=%.3f", c++ ? ";" : "", spmv_format_name((enum spmv_format)k), r->pmeas3[k]);
  fprintf(f, "\tauto_race:%s", r->st[NSTRAT - 1].race);
  fputc('\n', f);
  fflush(f);
}

/* ---- replay: the strategies against committed timing tables ---- */

/*
 * --replay FILE[,FILE]: no device.  The tables of bench_spmv or --gt-tsv
 * (matrix, dtype, config, status, us, ...; plain or gzipped) are the
 * ground truth: each matrix of the suite found in them is built and
 * profiled as on the GPU,
 * the device is the one the tables name (an H100 or H200 as seen by the
 * tuner: 132 SMs, warp 32, 2048 threads and 32 blocks per SM, 1024
 * threads per block; rp_device), and every
 * strategy races with a time callback that answers the table's median.  A
 * configuration missing from the table fails like a candidate that cannot
 * run.  csr-adaptive with maxtpr=0 (512) is looked up as maxtpr=BS: the
 * kernel caps a bin's threads at BS, so the two differ only in where very
 * long rows start to be split.  The best is the fastest row of the table
 * (every configuration it holds, not only the tuner's), so best/pick and
 * the cost are what the tuner would get from the same medians.
 */
struct rp_row {
  char name[96];
  struct spmv_config cfg;
  double us;              /* 0: not ok in the table */
};

struct rp_tab {
  struct rp_row *r;
  size_t n, cap;
  const char *cur;        /* the matrix being replayed */
  double cur_us;          /* the loaded configuration's median */
};

/* Reads the rows of value type dt of a bench_spmv TSV, plain or
 * gzip-compressed, into t; returns 0 or -1. */
static int rp_read(struct rp_tab *t, const char *path, const char *dt)
{
  char line[1024], *f[6], *save, *p;
  gzFile fp = gzopen(path, "rb");  /* plain or gzip-compressed */
  int k;

  if (fp == NULL) {
    perror(path);
    return -1;
  }
  while (gzgets(fp, line, sizeof line) != NULL) {
    if (line[0] == '#' || strncmp(line, "matrix\t", 7) == 0)
      continue;
    for (k = 0, p = strtok_r(line, "\t\n", &save); p != NULL && k < 6;
         p = strtok_r(NULL, "\t\n", &save))
      f[k++] = p;
    if (k < 4 || strcmp(f[1], dt) != 0)
      continue;
    if (t->n == t->cap) {
      size_t nc = t->cap ? 2 * t->cap : 1024;
      struct rp_row *nr = realloc(t->r, nc * sizeof *nr);
      if (nr == NULL) {
        gzclose(fp);
        return -1;
      }
      t->r = nr;
      t->cap = nc;
    }
    struct rp_row *r = &t->r[t->n];
    if (spmv_config_parse(f[2], &r->cfg, NULL) != 0)
      continue;
    if (r->cfg.format == SPMV_FMT_CSR_ADAPTIVE && r->cfg.tpr == 0)
      r->cfg.tpr = r->cfg.bs;  /* as rp_find looks it up */
    snprintf(r->name, sizeof r->name, "%s", f[0]);
    r->us = strcmp(f[3], "ok") == 0 && k >= 5 ? strtod(f[4], NULL) : 0;
    t->n++;
  }
  gzclose(fp);
  return 0;
}

/* The table's row of cfg for the current matrix, or NULL. */
static const struct rp_row *rp_find(const struct rp_tab *t,
                                    struct spmv_config cfg)
{
  if (cfg.format == SPMV_FMT_CSR_ADAPTIVE && cfg.tpr == 0)
    cfg.tpr = cfg.bs;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t k = 0; k < t->n; k++)
      if (strcmp(t->r[k].name, t->cur) == 0 && spmv_config_equal(&t->r[k].cfg, &cfg))
        return &t->r[k];
    /* The tables hold BS 128 and 256 only (the best of the two is close
     * to the best of 64..512): BS 64 reads as 128, larger as 256. */
    if (cfg.format == SPMV_FMT_CUSPARSE || cfg.bs == 128 || cfg.bs == 256)
      break;
    if (cfg.format == SPMV_FMT_CSR_ADAPTIVE && cfg.tpr == cfg.bs)
      cfg.tpr = cfg.bs < 128 ? 128 : 256;
    cfg.bs = cfg.bs < 128 ? 128 : 256;
  }
  return NULL;
}

static int rp_load(void *ctx, const struct spmv_config *cfg, struct spmv_error *err)
{
  struct rp_tab *t = ctx;
  const struct rp_row *r = rp_find(t, *cfg);
  char text[64];

  spmv_config_format(cfg, text, sizeof text);
  if (r == NULL)
    return spmv_error_set(err, SPMV_EUNSUPPORTED, "%s: not in the tables", text);
  if (!(r->us > 0))
    return spmv_error_set(err, SPMV_EUNSUPPORTED, "%s: did not run in the tables", text);
  t->cur_us = r->us;
  return 0;
}

static int rp_time(void *ctx, int warmup, int reps, double *us, struct spmv_error *err)
{
  struct rp_tab *t = ctx;

  (void)warmup;
  (void)reps;
  (void)err;
  *us = t->cur_us;
  return 0;
}

static void rp_unload(void *ctx)
{
  ((struct rp_tab *)ctx)->cur_us = 0;
}

static const struct spmvd_race_ops rp_ops = { rp_load, rp_time, rp_unload, NULL };

/* The GPU of the committed tables, as the tuner sees it: an H100 when the
 * first table's header names one (eval_tuner --gt-tsv writes the device
 * there), else the H200 of bench_spmv's tables.  They differ in the L2
 * and memory the shortlist reads. */
static void rp_device(const char *first, struct spmvd_device_info *d)
{
  char head[512] = "";
  gzFile fp = gzopen(first, "rb");
  int h100;

  if (fp != NULL) {
    if (gzgets(fp, head, sizeof head) == NULL)
      head[0] = '\0';
    gzclose(fp);
  }
  h100 = head[0] == '#' && strstr(head, "H100") != NULL;
  memset(d, 0, sizeof *d);
  snprintf(d->backend, sizeof d->backend, "cuda");
  snprintf(d->name, sizeof d->name, "NVIDIA %s (replayed tables)",
           h100 ? "H100" : "H200");
  d->cc_major = 9;
  d->sms = 132;
  d->warp_size = 32;
  d->max_threads_per_sm = 2048;
  d->max_blocks_per_sm = 32;
  d->max_threads_per_block = 1024;
  d->mem_bytes = (uint64_t)(h100 ? 80 : 150) << 30;
  d->l2_bytes = (uint64_t)(h100 ? 50 : 60) << 20;
  snprintf(d->device_key, sizeof d->device_key, "replay-%s",
           h100 ? "h100" : "h200");
  snprintf(d->software_key, sizeof d->software_key, "replay");
}

#define RP_NSTRAT 4
static const enum spmvd_strategy rp_strats[RP_NSTRAT] = {
  SPMVD_STRATEGY_MODEL, SPMVD_STRATEGY_TRIAL, SPMVD_STRATEGY_AUTO,
  SPMVD_STRATEGY_EXHAUSTIVE,
};

/* Replays every matrix of the suite found in the tables; prints a
 * markdown table and the aggregates.  Returns 0 or 1. */
static int replay_main(const struct opts *o, const char *files)
{
  struct bench_suite suite = { NULL, 0 };
  struct rp_tab t = { NULL, 0, 0, NULL, 0 };
  struct spmvd_device_info dev;
  struct spmv_error err;
  char buf[1024], *save, *p;
  double logm[RP_NSTRAT] = { 0 }, logc[RP_NSTRAT] = { 0 }, worst[RP_NSTRAT];
  double cmax[RP_NSTRAT] = { 0 };
  int n = 0, n95[RP_NSTRAT] = { 0 }, nok[RP_NSTRAT] = { 0 }, rc = 1, k;
  enum spmv_dtype dt = o->dts & 2 ? SPMV_F64 : SPMV_F32;

  snprintf(buf, sizeof buf, "%s", files);
  for (p = strtok_r(buf, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save))
    if (rp_read(&t, p, spmv_dtype_name(dt)) < 0)
      goto out;
  for (k = 0; k < RP_NSTRAT; k++)
    worst[k] = INFINITY;
  snprintf(buf, sizeof buf, "%s", files);
  rp_device(strtok_r(buf, ",", &save), &dev);
  spmv_error_clear(&err);
  if (bench_suite_init(&suite, o->sets, o->quick, o->only, o->dir, &err) < 0) {
    fprintf(stderr, "eval_tuner: %s\n", err.msg);
    goto out;
  }
  printf("# Tuner replay on %s (%s), %zu table rows\n\n", dev.name, spmv_dtype_name(dt), t.n);
  printf("| matrix | rows | nnz | cv | best (table) | us |");
  for (k = 0; k < RP_NSTRAT; k++)
    printf(" %s: pick, %% of best, cost (candidates) |", spmvd_strategy_name(rp_strats[k]));
  printf("\n|---|---|---|---|---|---|");
  for (k = 0; k < RP_NSTRAT; k++)
    printf("---|");
  printf("\n");
  for (size_t e = 0; e < suite.n; e++) {
    const struct rp_row *best = NULL;
    struct spmv_profile prof;
    struct spmvd_tune_input in;
    char btext[64];

    t.cur = suite.e[e].name;
    for (size_t j = 0; j < t.n; j++)
      if (strcmp(t.r[j].name, t.cur) == 0 && t.r[j].us > 0 &&
          (best == NULL || t.r[j].us < best->us))
        best = &t.r[j];
    if (best == NULL)
      continue;
    struct spmv_csr *A = bench_suite_make(&suite.e[e], o->dir, &err);
    if (A == NULL || spmv_profile_compute(A, &prof, &err) < 0) {
      fprintf(stderr, "%s: %s\n", t.cur, err.msg);
      spmv_csr_free(A);
      continue;
    }
    memset(&in, 0, sizeof in);
    in.A = A;
    in.prof = &prof;
    in.dtype = dt;
    in.dev = &dev;
    spmv_config_format(&best->cfg, btext, sizeof btext);
    fprintf(stderr, "%s: rows %lld mean %.2f cv %.2f max %lld ell_fill %.2f dia_fill %.2f ndiags %lld hyb_k %lld\n",
            t.cur, (long long)prof.rows, prof.rl_mean, prof.rl_cv, (long long)prof.rl_max,
            prof.ell_fill, prof.dia_fill, (long long)prof.ndiags, (long long)prof.hyb_k);
    printf("| %s | %lld | %lld | %.2f | %s | %.1f |", t.cur, (long long)A->rows,
           (long long)A->nnz, prof.rl_cv, btext, best->us);
    for (k = 0; k < RP_NSTRAT; k++) {
      struct spmvd_decision d;
      double t0 = bench_now_s();
      spmv_error_clear(&err);
      int r = spmvd_tuner_run(rp_strats[k], &in, &rp_ops, &t, NULL, &d, &err);
      double ms = 1e3 * (bench_now_s() - t0);
      const struct rp_row *pk = r == 0 ? rp_find(&t, d.cfg) : NULL;
      if (pk == NULL || !(pk->us > 0)) {
        printf(" failed: %.60s |", r != 0 ? err.msg : "pick not in the tables");
      } else {
        double m = best->us / pk->us;
        printf(" %s, %.1f, %.1f (%zu; %.0f ms) |", d.text, 100 * m, d.cost_spmv, d.ntrials, ms);
        nok[k]++;
        logm[k] += log(m);
        logc[k] += log(fmax(d.cost_spmv, 1e-9));
        n95[k] += m >= 0.95;
        cmax[k] = fmax(cmax[k], d.cost_spmv);
        worst[k] = fmin(worst[k], m);
      }
      spmvd_decision_fini(&d);
    }
    printf("\n");
    fflush(stdout);
    n++;
    spmv_csr_free(A);
  }
  printf("\n| strategy | matrices | geomean %% of best | worst | >= 95 %% | geomean cost | max cost |\n"
         "|---|---|---|---|---|---|---|\n");
  for (k = 0; k < RP_NSTRAT; k++)
    printf("| %s | %d | %.1f | %.1f | %d | %.1f | %.1f |\n", spmvd_strategy_name(rp_strats[k]),
           nok[k], 100 * gmean(logm[k], nok[k]), 100 * worst[k], n95[k],
           gmean(logc[k], nok[k]), cmax[k]);
  rc = n > 0 ? 0 : 1;
out:
  free(t.r);
  bench_suite_fini(&suite);
  return rc;
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: eval_tuner [--backend cpu|cuda|ref] [--quick] [--matrices DIR]\n"
          "                  [--suite large,paper,real] [--only NAME] [--dtype f64|f32|both]\n"
          "                  [--budget SECONDS] [--deadline SECONDS] [--calib-nnz N]\n"
          "                  [--max-nnz N] [--tsv FILE] [--gt-tsv FILE] [--replay TSV[,TSV]]\n"
          "  --backend   cuda when built with it, else cpu; ref: the reference layouts as a small GPU\n"
          "  --quick     the quick subset of the suite      --matrices  folder ($SPMV_MATRICES)\n"
          "  --suite     parts of the suite (all)           --only      names containing NAME[,NAME]\n"
          "  --dtype     value types (f64)                  --budget    start no matrix after SECONDS\n"
          "  --deadline  at SECONDS, print the report of what is done and exit\n"
          "  --calib-nnz nonzeros of the calibration in all (the daemon's default)\n"
          "  --max-nnz   skip larger matrices               --tsv       every number, a line per matrix\n"
          "  --gt-tsv    the ground truth of every matrix, in bench_spmv's table form\n"
          "              (the exhaustive race's times, before confirm())\n"
          "  --replay    no device: replay the strategies on bench_spmv's (or --gt-tsv's)\n"
          "              tables (plain or gzipped), of the first --dtype\n"
          "  --probe     'CFG;CFG...': no evaluation; time each configuration as the race\n"
          "              does and as confirm() does, in turns (why they disagree)\n"
          "  --probe-idle MS: sleep MS ms before each of --probe's loads (an idle GPU)\n"
          "  --probe-busy MS: keep the host busy MS ms before each of them instead\n"
          "  --probe-turns N: turns over the configurations (3)\n"
          "  --probe-long N: after each load's columns, N more timings of 30 runs (0)\n"
          "  --probe-pads B,B..: each load once after each pad of B bytes held on the\n"
          "              device, every resident layout freed first (does the time move\n"
          "              with where the arrays lie?)\n"
          "  --calib-db  the daemon's cache: judge the calibration `spmvctl calibrate`\n"
          "              stored there for this device rather than calibrating here\n"
          "The markdown report goes to stdout, progress to stderr.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
  static const struct option lo[] = {
    {"backend", 1, 0, 'b'}, {"quick", 0, 0, 'q'}, {"matrices", 1, 0, 'm'},
    {"suite", 1, 0, 's'}, {"only", 1, 0, 'o'}, {"dtype", 1, 0, 't'},
    {"budget", 1, 0, 'B'}, {"calib-nnz", 1, 0, 'c'}, {"max-nnz", 1, 0, 'n'},
    {"tsv", 1, 0, 'w'}, {"deadline", 1, 0, 'D'}, {"help", 0, 0, 'h'},
    {"replay", 1, 0, 'R'}, {"gt-tsv", 1, 0, 'G'}, {"probe", 1, 0, 'P'},
    {"probe-idle", 1, 0, 'I'}, {"calib-db", 1, 0, 'C'},
    {"probe-busy", 1, 0, 'U'}, {"probe-turns", 1, 0, 'T'},
    {"probe-long", 1, 0, 'L'}, {"probe-pads", 1, 0, 'A'}, {0, 0, 0, 0},
  };
  int c;
  char *end;

  memset(o, 0, sizeof o[0]);
#ifdef HAVE_CUDA
  o->mode = "cuda";
#else
  o->mode = "cpu";
#endif
  o->sets = BENCH_SUITE_LARGE | BENCH_SUITE_PAPER | BENCH_SUITE_REAL;
  o->dts = 2;
  o->probe_turns = 3;
  while ((c = getopt_long(argc, argv, "b:qm:s:o:t:B:D:c:n:w:hR:G:P:I:C:U:T:L:A:", lo, NULL)) != -1) {
    switch (c) {
    case 'b': o->mode = optarg; break;
    case 'q': o->quick = 1; break;
    case 'm': o->dir = optarg; break;
    case 'o': o->only = optarg; break;
    case 'w': o->tsv = optarg; break;
    case 'R': o->replay = optarg; break;
    case 'G': o->gt_tsv = optarg; break;
    case 'P': o->probe = optarg; break;
    case 'I': o->probe_idle_ms = atoi(optarg); break;
    case 'U': o->probe_busy_ms = atoi(optarg); break;
    case 'T':
      o->probe_turns = atoi(optarg);
      if (o->probe_turns < 1) {
        fprintf(stderr, "eval_tuner: --probe-turns %s: at least 1\n", optarg);
        return -1;
      }
      break;
    case 'L':
      o->probe_long = atoi(optarg);
      if (o->probe_long < 0) {
        fprintf(stderr, "eval_tuner: --probe-long %s: not negative\n", optarg);
        return -1;
      }
      break;
    case 'A': o->probe_pads = optarg; break;
    case 'C': o->calib_db = optarg; break;
    case 's':
      o->sets = (strstr(optarg, "large") ? BENCH_SUITE_LARGE : 0) |
                (strstr(optarg, "paper") ? BENCH_SUITE_PAPER : 0) |
                (strstr(optarg, "real") ? BENCH_SUITE_REAL : 0);
      if (o->sets == 0) {
        fprintf(stderr, "eval_tuner: --suite %s names no part (large, paper, real)\n", optarg);
        return -1;
      }
      break;
    case 't':
      if (strcmp(optarg, "f64") == 0) o->dts = 2;
      else if (strcmp(optarg, "f32") == 0) o->dts = 1;
      else if (strcmp(optarg, "both") == 0) o->dts = 3;
      else {
        fprintf(stderr, "eval_tuner: --dtype %s: expected f64, f32 or both\n", optarg);
        return -1;
      }
      break;
    case 'B':
    case 'D':
    case 'c':
    case 'n': {
      double v = strtod(optarg, &end);
      if (*end != '\0' || !(v > 0)) {
        fprintf(stderr, "eval_tuner: -%c %s: expected a positive number\n", c, optarg);
        return -1;
      }
      if (c == 'B') o->budget = v;
      else if (c == 'D') o->deadline = v;
      else if (c == 'c') o->calib_nnz = (int64_t)v;
      else o->max_nnz = (int64_t)v;
      break;
    }
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); return -1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "eval_tuner: unexpected argument '%s'\n", argv[optind]);
    return -1;
  }
  return 0;
}

/* What the report needs; shared with the deadline watchdog under mu. */
struct run {
  struct opts o;
  struct eval_store *s;
  struct calib_res cr[3];
  struct mrec *recs;
  size_t nrec, skipped, cut;
  double t_start;
  char current[96];           /* matrix under way, "" between them */
  int printed;
  pthread_mutex_t mu;
};

/* Prints the report of the matrices done so far (caller holds r->mu). */
static void print_report(struct run *r, const char *stopped)
{
  const struct spmvd_device_info *dev = eval_store_info(r->s);
  const struct opts *o = &r->o;
  char date[64];
  time_t now = time(NULL);

  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  printf("# Tuner evaluation (issue 5)\n\n");
  printf("- device: %s (backend %s, %d SMs, warp %d, cc %d.%d, %.1f GB, L2 %.0f MB)\n", dev->name,
         o->mode, dev->sms, dev->warp_size, dev->cc_major, dev->cc_minor,
         (double)dev->mem_bytes / 1e9, (double)dev->l2_bytes / 1048576.0);
  printf("- software: %s\n- date: %s; run took %.0f s\n", dev->software_key, date,
         bench_now_s() - r->t_start);
  printf("- suite: %s%s%s%s%s%s; %zu matrix x type evaluations, %zu skipped, %zu left out by the time budget\n",
         o->quick ? "quick subset of " : "", (o->sets & BENCH_SUITE_LARGE) ? "large " : "",
         (o->sets & BENCH_SUITE_PAPER) ? "paper " : "", (o->sets & BENCH_SUITE_REAL) ? "real" : "",
         o->only ? ", names containing " : "", o->only ? o->only : "", r->nrec, r->skipped, r->cut);
  if (stopped != NULL)
    printf("- **stopped by the deadline** during %s: the matrices after it were not run\n", stopped);
  printf("- timing: CUDA events between back-to-back runs, the stream held until all are queued\n"
         "  (spmv_dev_time: GPU time, not the host's launch rate), x resident, median; with\n"
         "  warm-up runs the matrix is first taken into the L2 where it fits 90 %% of it\n"
         "  (spmv_l2_warm_mode: read within half, read and written back beyond).\n"
         "- ground truth: every exhaustive candidate, 2 warm-up runs, rounds of 10 until two round\n"
         "  medians agree within 2 %% (at most 4; one 10x slower than the leader keeps its first round's\n"
         "  median); strategies as the worker runs them (default race).  Then the %d fastest and\n"
         "  every pick are timed again, %d interleaved passes of %d runs after %d warm-up runs\n"
         "  (each loads or captures its product anew): the least median of the even passes names the\n"
         "  best, the median of the odd passes times it and each pick (the least of several\n"
         "  medians is biased low by their noise); best/pick = throughput ratio, at most 1.\n"
         "  Each pass then times 30 products one at a time, each in its own hold, for the line\n"
         "  'One product at a time' under the targets, chosen and timed the same way.\n",
         CONFIRM_TOP, CONFIRM_PASSES, CONFIRM_REPS, CONFIRM_WARMUP);
  printf("- cost: the decision's cost_spmv (every timed and warm-up run / the pick's time); layout\n"
         "  conversions and uploads are not in it.\n");
  for (int dti = 2; dti >= 1; dti--)
    if (o->dts & dti)
      report_dtype(stdout, r->recs, r->nrec, dti == 2 ? SPMV_F64 : SPMV_F32, &r->cr[dti]);
  fflush(stdout);
  r->printed = 1;
}

/* Deadline watchdog: prints what is done and ends the process. */
static void *watchdog(void *arg)
{
  struct run *r = arg;
  char cur[96];

  while (bench_now_s() - r->t_start < r->o.deadline) {
    struct timespec ts = { 0, 200 * 1000 * 1000 };
    nanosleep(&ts, NULL);
  }
  pthread_mutex_lock(&r->mu);
  if (r->printed) {
    pthread_mutex_unlock(&r->mu);
    return NULL;
  }
  fprintf(stderr, "deadline of %.0f s reached during %s: reporting what is done\n",
          r->o.deadline, r->current[0] ? r->current : "the calibration");
  snprintf(cur, sizeof cur, "%s", r->current[0] ? r->current : "the calibration");
  print_report(r, cur);
  _exit(r->nrec > 0 ? 0 : 1);
}

/* Runs the calibration and every matrix of one value type. */
static void run_dtype(struct run *r, const struct bench_suite *suite, int dti,
                      FILE *tsv, FILE *gtf)
{
  static const int order[3] = { BENCH_SUITE_PAPER, BENCH_SUITE_LARGE, BENCH_SUITE_REAL };
  enum spmv_dtype dt = dti == 2 ? SPMV_F64 : SPMV_F32;
  const struct opts *o = &r->o;
  struct calib_res *cr = malloc(sizeof *cr);
  struct spmv_error err;
  size_t done = 0;

  if (cr == NULL)
    return;
  if (o->calib_db != NULL) {
    calib_load(r->s, dt, o->calib_db, cr);
  } else {
    fprintf(stderr, "%s: calibrating the predictor\n", spmv_dtype_name(dt));
    calibrate(r->s, dt, o, cr);
  }
  fprintf(stderr, "%s: calibration %s in %.1f s (%d formats)\n", spmv_dtype_name(dt),
          cr->loaded ? "read from the cache" : cr->done ? "done" : cr->msg,
          cr->seconds, cr->nfit);
  pthread_mutex_lock(&r->mu);
  r->cr[dti] = *cr;
  pthread_mutex_unlock(&r->mu);
  free(cr);
  /* The paper's matrices first, then the large ones, then the real ones
   * (many, small: a time budget cuts only some of them). */
  for (size_t q = 0; q < 3 * suite->n; q++) {
    const struct bench_suite_entry *en = &suite->e[q % suite->n];
    if (en->set != order[q / suite->n])
      continue;
    if (o->budget > 0 && bench_now_s() - r->t_start > o->budget) {
      fprintf(stderr, "time budget spent: %zu matrices left out from %s on\n",
              suite->n - done, en->name);
      pthread_mutex_lock(&r->mu);
      r->cut += suite->n - done;
      pthread_mutex_unlock(&r->mu);
      break;
    }
    done++;
    double t0 = bench_now_s();
    pthread_mutex_lock(&r->mu);
    snprintf(r->current, sizeof r->current, "%s", en->name);
    pthread_mutex_unlock(&r->mu);
    spmv_error_clear(&err);
    struct spmv_csr *A = bench_suite_make(en, o->dir, &err);
    if (A == NULL || (o->max_nnz > 0 && A->nnz > o->max_nnz)) {
      if (A == NULL)
        fprintf(stderr, "%s: %s\n", en->name, err.msg);
      spmv_csr_free(A);
      r->skipped++;
      continue;
    }
    struct mrec *x = &r->recs[r->nrec];
    int rc = eval_matrix(r->s, en, A, dt, &r->cr[dti], x, gtf, &err);
    spmv_csr_free(A);
    if (rc < 0) {
      fprintf(stderr, "%s %s: %s\n", en->name, spmv_dtype_name(dt), err.msg);
      r->skipped++;
      if (err.code == SPMV_EGPU_STICKY)
        break;
      continue;
    }
    fprintf(stderr, "%-24s %s %9lld nnz best %-28s %9.1f us | auto %5.1f%% cost %5.1f | model %5.1f%% | %.1f s\n",
            x->name, spmv_dtype_name(dt), (long long)x->nnz, x->best, x->best_us,
            100 * x->st[3].match, x->st[3].cost, 100 * x->st[0].match, bench_now_s() - t0);
    if (tsv)
      tsv_line(tsv, x);
    pthread_mutex_lock(&r->mu);
    r->nrec++;
    r->current[0] = '\0';
    pthread_mutex_unlock(&r->mu);
  }
  eval_store_matrix(r->s, NULL, dt, &err);
}

/* Keeps the host's thread busy for ms milliseconds (no GPU work): a
 * tuner's profile and features, as --probe-busy stands for them. */
static void busy_host(int ms)
{
  double end = bench_now_s() + ms / 1e3;
  volatile double sink = 0;

  while (bench_now_s() < end)
    for (int i = 0; i < 1000; i++)
      sink += i;
}

/*
 * --probe: for each matrix and value type, --probe-turns turns (3) over
 * the listed configurations, each load after --probe-idle's sleep or
 * --probe-busy's busy host when given; each load is timed as auto's race
 * times it (a run alone, then rounds of 2 without warm-up), then 30
 * more runs without warm-up (as a client's products go on after the
 * race: no warm-up takes the matrix into the L2 again), as the
 * exhaustive race does (2 + 10) and as confirm() does
 * (CONFIRM_WARMUP + CONFIRM_REPS), then confirm()'s warm-ups with the
 * race's 10 runs and the race's warm-ups with confirm()'s runs (which of
 * the two its offset follows), the medians printed in that order.
 */
#define PROBE_MAX 8
#define PROBE_MAX_PADS 16
static int probe_main(const struct opts *o, struct eval_store *s,
                      const struct bench_suite *suite)
{
  static const int plan[][2] = { {0, 1}, {0, 2}, {0, 2}, {0, 2}, {0, 30}, {2, 10},
                                 {CONFIRM_WARMUP, CONFIRM_REPS},
                                 {CONFIRM_WARMUP, 10}, {2, CONFIRM_REPS} };
  struct spmv_config cfg[PROBE_MAX];
  struct spmv_error err;
  char buf[512], *tok, *save = NULL;
  long pads[PROBE_MAX_PADS] = { 0 };
  int n = 0, bad = 0, npads = 1;

  snprintf(buf, sizeof buf, "%s", o->probe);
  for (tok = strtok_r(buf, ";", &save); tok != NULL && n < PROBE_MAX;
       tok = strtok_r(NULL, ";", &save)) {
    spmv_error_clear(&err);
    if (spmv_config_parse(tok, &cfg[n], &err) < 0) {
      fprintf(stderr, "eval_tuner: --probe '%s': %s\n", tok, err.msg);
      return 1;
    }
    n++;
  }
  if (o->probe_pads != NULL) {
    snprintf(buf, sizeof buf, "%s", o->probe_pads);
    npads = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL && npads < PROBE_MAX_PADS;
         tok = strtok_r(NULL, ",", &save)) {
      char *end;
      pads[npads] = strtol(tok, &end, 10);
      if (*end != '\0' || pads[npads] < 0) {
        fprintf(stderr, "eval_tuner: --probe-pads '%s': a byte count\n", tok);
        return 1;
      }
      npads++;
    }
    if (npads == 0) {
      fprintf(stderr, "eval_tuner: --probe-pads '%s': no byte counts\n", o->probe_pads);
      return 1;
    }
  }
  printf("matrix\tdtype\tturn\tconfig%s\trace 0+1\t0+2\t0+2\t0+2\t0+30\t2+10\tconfirm %d+%d"
         "\t%d+10\t2+%d\n", o->probe_pads != NULL ? "\tpad" : "", CONFIRM_WARMUP,
         CONFIRM_REPS, CONFIRM_WARMUP, CONFIRM_REPS);
  for (size_t q = 0; q < suite->n; q++) {
    struct spmv_csr *A = bench_suite_make(&suite->e[q], o->dir, &err);
    if (A == NULL) {
      fprintf(stderr, "%s: %s\n", suite->e[q].name, err.msg);
      bad++;
      continue;
    }
    for (int dti = 2; dti >= 1; dti--) {
      enum spmv_dtype dt = dti == 2 ? SPMV_F64 : SPMV_F32;
      if (!(o->dts & dti))
        continue;
      spmv_error_clear(&err);
      if (eval_store_matrix(s, A, dt, &err) < 0) {
        fprintf(stderr, "%s: %s\n", suite->e[q].name, err.msg);
        bad++;
        continue;
      }
      for (int turn = 0; turn < o->probe_turns; turn++)
        for (int k = 0; k < n * npads; k++) {
          char name[96];
          spmv_config_format(&cfg[k / npads], name, sizeof name);
          printf("%s\t%s\t%d\t%s", suite->e[q].name, spmv_dtype_name(dt), turn, name);
          if (o->probe_pads != NULL) {
            printf("\t%ld", pads[k % npads]);
            spmv_error_clear(&err);
            if (eval_store_probe_pad(s, (size_t)pads[k % npads], &err) < 0) {
              printf("\t%s\n", err.msg);
              bad++;
              continue;
            }
          }
          if (o->probe_busy_ms > 0)
            busy_host(o->probe_busy_ms);
          if (o->probe_idle_ms > 0) {
            struct timespec ts = { o->probe_idle_ms / 1000,
                                   (long)(o->probe_idle_ms % 1000) * 1000000L };
            nanosleep(&ts, NULL);
          }
          spmv_error_clear(&err);
          if (eval_store_race_ops.load(s, &cfg[k / npads], &err) < 0) {
            printf("\t%s\n", err.msg);
            continue;
          }
          for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
            double us = NAN;
            if (eval_store_race_ops.time(s, plan[i][0], plan[i][1], &us, &err) < 0)
              bad++;
            printf("\t%.3f", us);
          }
          /* --probe-long: whether a layout keeps getting faster over
           * hundreds of runs (30 a timing, no warm-up). */
          for (int i = 0; i < o->probe_long; i++) {
            double us = NAN;
            if (eval_store_race_ops.time(s, 0, 30, &us, &err) < 0)
              bad++;
            printf("\t%.3f", us);
          }
          printf("\n");
          eval_store_race_ops.unload(s);
        }
    }
    spmv_csr_free(A);
  }
  return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
  static struct run r;
  struct bench_suite suite = { NULL, 0 };
  struct spmv_error err;
  pthread_t wd;
  FILE *tsv = NULL, *gtf = NULL;
  int rc = 1;

  spmv_error_clear(&err);
  r.t_start = bench_now_s();
  pthread_mutex_init(&r.mu, NULL);
  if (parse_opts(argc, argv, &r.o) < 0)
    return 1;
  if (r.o.replay != NULL)
    return replay_main(&r.o, r.o.replay);
  if (bench_suite_init(&suite, r.o.sets, r.o.quick, r.o.only, r.o.dir, &err) < 0) {
    fprintf(stderr, "eval_tuner: %s\n", err.msg);
    return 1;
  }
  if (eval_store_open(r.o.mode, &r.s, &err) < 0) {
    fprintf(stderr, "eval_tuner: backend %s: %s\n", r.o.mode, err.msg);
    rc = err.code == SPMV_ENODEV ? 77 : 1;
    goto out;
  }
  r.recs = calloc(suite.n * 2 + 1, sizeof *r.recs);
  if (r.recs == NULL) {
    fprintf(stderr, "eval_tuner: out of memory\n");
    goto out;
  }
  if (r.o.tsv != NULL) {
    tsv = fopen(r.o.tsv, "w");
    if (tsv == NULL) {
      perror(r.o.tsv);
      goto out;
    }
    fprintf(tsv, "# matrix\tpart\tdtype\trows\tnnz\tcv\tbest\tbest_us\tcandidates\tgt_cost"
                 "\t{model,predict,trial,auto}: pick, pick_us, best/pick, cost, candidates, wall_ms"
                 "\tformat:predicted/measured/paper_form/race_us ...\thit:load_us/first_kernel_us/first_product_us/"
                 "product_us/kernel_us/verified/second_kernel_us/third_kernel_us"
                 "\traced_best_us:the exhaustive race's best before confirm()"
                 "\tsingle:best config/its us/auto's pick us, one product at a time"
                 "\tsame_passes:best us/auto's pick us, the best chosen and timed on the same passes (before v85)"
                 "\tsix_passes:best us/auto's pick us, on the first six passes (v85..v109)"
                 "\tmeas3:format=measured us on the first three loads (as before v111)"
                 "\tauto_race:auto's trials, config=median us, status, runs, "
                 "probe (its timed warm-up run) us\n");
  }
  if (r.o.gt_tsv != NULL) {
    gtf = fopen(r.o.gt_tsv, "w");
    if (gtf == NULL) {
      perror(r.o.gt_tsv);
      goto out;
    }
    fprintf(gtf, "# ground truth of eval_tuner on %s (backend time: median of back-to-back "
                 "runs, x resident; the exhaustive race's, before confirm())\n"
                 "matrix\tdtype\tconfig\tstatus\tus\truns\n",
            eval_store_info(r.s)->name);
  }
  if (r.o.probe != NULL) {
    rc = probe_main(&r.o, r.s, &suite);
    goto out;
  }
  if (r.o.deadline > 0 && pthread_create(&wd, NULL, watchdog, &r) == 0)
    pthread_detach(wd);
  for (int dti = 2; dti >= 1; dti--)
    if (r.o.dts & dti)
      run_dtype(&r, &suite, dti, tsv, gtf);
  pthread_mutex_lock(&r.mu);
  print_report(&r, NULL);
  pthread_mutex_unlock(&r.mu);
  rc = r.nrec > 0 ? 0 : 1;
out:
  if (tsv)
    fclose(tsv);
  if (gtf)
    fclose(gtf);
  free(r.recs);
  eval_store_close(r.s);
  bench_suite_fini(&suite);
  return rc;
}
