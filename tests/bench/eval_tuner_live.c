/* eval_tuner_live.c: the tuner's evaluation on the device: the
 * predictor's calibration (or the daemon's, --calib-db), the ground-truth
 * race, each strategy's run and pick, the predictor's measured times and
 * the cache hit, matrix by matrix and value type by value type. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_store.h"
#include "eval_tuner_impl.h"
#include "spmv_profile.h"
#include "spmvd_cache.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "spmv_stats.h"
#include "suite.h"
#include "bench_clock.h"

const enum spmvd_strategy eval_tuner_strats[NSTRAT] = {
  SPMVD_STRATEGY_MODEL, SPMVD_STRATEGY_PREDICT, SPMVD_STRATEGY_TRIAL,
  SPMVD_STRATEGY_AUTO,
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

/* The index of cfg (normalised) in the table, g->n when absent. */
size_t eval_tuner_gt_find(const struct gt *g, const struct spmv_config *cfg)
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
  size_t k = eval_tuner_gt_find(g, &cfg);
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
  snprintf(r->family, sizeof r->family, "%s", en->family);
  r->part = en->part;
  r->dt = dt;
  r->rows = A->rows;
  r->nnz = A->nnz;
  for (k = 0; k < SPMV_FMT_COUNT; k++)
    r->perr[k] = r->ppred[k] = r->pmeas[k] = r->ppaper[k] = r->pstore[k] = NAN;
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
    run_strategy(eval_tuner_strats[k], s, &in, &g, r->best_us, &r->st[k]);
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
  eval_tuner_confirm(s, &g, r);

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

/* Runs the calibration and every matrix of one value type. */
void eval_tuner_run_dtype(struct run *r, const struct bench_suite *suite, int dti,
                          FILE *tsv, FILE *gtf)
{
  static const int order[4] = { BENCH_SUITE_PAPER, BENCH_SUITE_LARGE, BENCH_SUITE_REAL,
                                BENCH_SUITE_HELDOUT };
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
   * (many, small: a time budget cuts only some of them), then the
   * held-out ones. */
  for (size_t q = 0; q < 4 * suite->n; q++) {
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
      eval_tuner_tsv_line(tsv, x);
    pthread_mutex_lock(&r->mu);
    r->nrec++;
    r->current[0] = '\0';
    pthread_mutex_unlock(&r->mu);
  }
  eval_store_matrix(r->s, NULL, dt, &err);
}
