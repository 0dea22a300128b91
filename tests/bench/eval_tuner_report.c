/* eval_tuner_report.c: eval_tuner's markdown report (the device, the
 * targets of issue 5, the strategies, the predictor's table, the picks and
 * the cache hits) and its TSV line per matrix. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "eval_store.h"
#include "eval_tuner_impl.h"
#include "suite.h"
#include "suite_heldout.h"
#include "bench_clock.h"

/* A matrix's part in the per-matrix table: its set, or its held-out part. */
static const char *part_name(const struct mrec *r)
{
  return r->set == BENCH_SUITE_HELDOUT ? bench_heldout_part_name(r->part)
                                       : bench_suite_set_name(r->set);
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

double eval_tuner_gmean(double logsum, int n)
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

/* auto's best/pick over one type's matrices, one product at a time. */
struct ratios {
  int n, n95;
  double log, worst;
  const char *wname;
};

static void ratios_of(const struct mrec *r, size_t n, enum spmv_dtype dt,
                      struct ratios *o)
{
  o->n = o->n95 = 0;
  o->log = 0;
  o->worst = INFINITY;
  o->wname = "-";
  for (size_t i = 0; i < n; i++) {
    double b = r[i].single_best_us;
    double p = r[i].single_us[NSTRAT - 1];
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
  int pe_n[SPMV_FMT_COUNT] = {0}, ps_n[SPMV_FMT_COUNT] = {0};
  const char *pe_worst[SPMV_FMT_COUNT] = {0};
  for (size_t i = 0; i < n; i++)
    for (k = 0; k < SPMV_FMT_COUNT; k++)
      if (r[i].dt == dt && isfinite(r[i].perr[k])) {
        pe_sum[k] += r[i].perr[k];
        pp_sum[k] += fabs(r[i].ppaper[k] - r[i].pmeas[k]) / r[i].pmeas[k];
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
          100 * eval_tuner_gmean(aa->logm, aa->n), aa->n, pass(eval_tuner_gmean(aa->logm, aa->n) >= 0.98));
  fprintf(f, "| auto, every matrix | worst %.1f %% (%s); %d of %d at >= 95 %% | >= 95 %% | %s |\n",
          100 * aa->worst, aa->worst_name ? aa->worst_name : "-", aa->n95, aa->n,
          pass(aa->n > 0 && aa->worst >= 0.95));
  fprintf(f, "| auto, tuning cost on first sight | max %.1f, geomean %.1f SpMV-equivalents | <= 20 | %s |\n",
          aa->cmax, eval_tuner_gmean(aa->logc, aa->n), pass(aa->n > 0 && aa->cmax <= 20));
  if (am->n > 0)
    fprintf(f, "| model alone, geometric mean | %.1f %% over %d matrices (worst %.1f %%, %s)%s%s%s | >= 95 %% | %s |\n",
            100 * eval_tuner_gmean(am->logm, am->n), am->n, 100 * am->worst, am->worst_name,
            am->nfail ? "; failed on " : "", am->nfail ? am->fail_name : "",
            am->nfail > 1 ? " and others" : "",
            pass(eval_tuner_gmean(am->logm, am->n) >= 0.95 && am->nfail == 0));
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
  ratios_of(r, n, dt, &o1);
  if (o1.n > 0)
    fprintf(f, "\nOne product at a time (each of %d timed alone after the held runs, the same\n"
               "configurations, the best chosen on the even passes and timed on the odd):\n"
               "auto %.1f %% of the best in geometric mean, worst %.1f %% (%s),\n"
               "%d of %d at >= 95 %%.\n",
            CONFIRM_SINGLES, 100 * exp(o1.log / o1.n), 100 * o1.worst, o1.wname, o1.n95,
            o1.n);

  fprintf(f, "\n### %s: strategies in aggregate\n\n", dn);
  fprintf(f, "| strategy | matrices | geomean best/pick | worst (matrix) | >= 95 %% | geomean cost | max cost | by part (geomean: large / paper / real / heldout) |\n");
  fprintf(f, "|---|---|---|---|---|---|---|---|\n");
  for (k = 0; k < NSTRAT; k++) {
    struct agg b[4];
    aggregate(r, n, dt, BENCH_SUITE_LARGE, k, &b[0]);
    aggregate(r, n, dt, BENCH_SUITE_PAPER, k, &b[1]);
    aggregate(r, n, dt, BENCH_SUITE_REAL, k, &b[2]);
    aggregate(r, n, dt, BENCH_SUITE_HELDOUT, k, &b[3]);
    char v[7][24];
    if (a[k].n == 0) {
      fprintf(f, "| %s | 0 | - | - | - | - | - | - |\n", spmvd_strategy_name(eval_tuner_strats[k]));
      continue;
    }
    num(v[0], 100 * eval_tuner_gmean(a[k].logm, a[k].n), "%.1f %%");
    num(v[1], 100 * a[k].worst, "%.1f %%");
    num(v[2], eval_tuner_gmean(a[k].logc, a[k].n), "%.1f");
    num(v[3], 100 * eval_tuner_gmean(b[0].logm, b[0].n), "%.1f %%");
    num(v[4], 100 * eval_tuner_gmean(b[1].logm, b[1].n), "%.1f %%");
    num(v[5], 100 * eval_tuner_gmean(b[2].logm, b[2].n), "%.1f %%");
    num(v[6], 100 * eval_tuner_gmean(b[3].logm, b[3].n), "%.1f %%");
    fprintf(f, "| %s | %d | %s | %s (%s) | %d | %s | %.1f | %s / %s / %s / %s |\n",
            spmvd_strategy_name(eval_tuner_strats[k]), a[k].n, v[0], v[1],
            a[k].worst_name ? a[k].worst_name : "-", a[k].n95, v[2], a[k].cmax, v[3], v[4], v[5],
            v[6]);
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
             "the last column is the work model's error against the ground-truth race's time of the\n"
             "same configuration instead.\n\n",
          MEAS_ROUNDS, MEAS_ROUNDS_SMALL, MEAS_SMALL_US);
  fprintf(f, "| format | calibrated configuration | work model: fit error on its calibration points | matrices | mean error | max error (matrix) | paper's form: fit error | mean error | work model vs the race's time |\n|---|---|---|---|---|---|---|---|---|\n");
  for (k = 0; cr->done && k < SPMV_FMT_COUNT; k++) {
    const struct spmvd_fit *ft = &cr->pred.fit[k];
    char txt[64];
    if (ft->kind == SPMVD_FIT_NONE)
      continue;
    spmv_config_format(&ft->cfg, txt, sizeof txt);
    char v[4][24];
    num(v[0], pe_n[k] ? 100 * pe_sum[k] / pe_n[k] : NAN, "%.1f %%");
    num(v[1], pe_n[k] ? 100 * pe_max[k] : NAN, "%.1f %%");
    num(v[2], pe_n[k] ? 100 * pp_sum[k] / pe_n[k] : NAN, "%.1f %%");
    num(v[3], ps_n[k] ? 100 * ps_sum[k] / ps_n[k] : NAN, "%.1f %%");
    fprintf(f, "| %s | %s | %.1f %% (%d points) | %d | %s | %s (%s) | %.1f %% | %s | %s |\n",
            spmv_format_name((enum spmv_format)k), txt, 100 * ft->work_err, ft->work_npoints,
            pe_n[k], v[0], v[1], pe_worst[k] ? pe_worst[k] : "-", 100 * ft->err_mean, v[2], v[3]);
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
            part_name(x), (long long)x->rows, (long long)x->nnz, x->cv, x->best,
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
  eval_tuner_report_heldout(f, r, n, dt);
}

/* Writes one matrix's line of the TSV. */
void eval_tuner_tsv_line(FILE *f, const struct mrec *r)
{
  fprintf(f, "%s\t%s\t%s\t%lld\t%lld\t%.4f\t%s\t%.3f\t%d\t%.1f", r->name, bench_suite_set_name(r->set),
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
  fprintf(f, "\tnoise:%.3f/%.3f/%d", r->noise_lo_us, r->noise_hi_us, r->noise_npass);
  fprintf(f, "\tfamily:%s\tpart:%s", r->family[0] ? r->family : "-",
          bench_heldout_part_name(r->part));
  fprintf(f, "\tauto_race:%s", r->st[NSTRAT - 1].race);
  fputc('\n', f);
  fflush(f);
}

/* Prints the report of the matrices done so far (caller holds r->mu). */
void eval_tuner_print_report(struct run *r, const char *stopped)
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
  char sets[64] = "";
  for (int b = BENCH_SUITE_LARGE; b <= BENCH_SUITE_HELDOUT; b <<= 1)
    if (o->sets & b)
      snprintf(sets + strlen(sets), sizeof sets - strlen(sets), "%s%s", sets[0] ? " " : "",
               bench_suite_set_name(b));
  printf("- suite: %s%s%s%s%s%s; %zu matrix x type evaluations, %zu skipped, %zu left out by\n"
         "  the time budget\n",
         o->quick ? "quick subset of " : "", sets,
         o->part ? ", held-out part " : "", o->part ? bench_heldout_part_name(o->part) : "",
         o->only ? ", names containing " : "", o->only ? o->only : "", r->nrec, r->skipped,
         r->cut);
  if (o->sets & BENCH_SUITE_HELDOUT)
    printf("- held-out suite (issue 55): %s draw %d, --heldout-nnz %lld; targets: auto >= 98 %% of\n"
           "  the exhaustive best in geometric mean on the unseen part, and every matrix >= 93 %%\n"
           "  of the best or within 0.3 us of it (the section 'held-out suite' of each type)\n",
           o->quick ? "quick" : "whole", o->heldout_draw,
           (long long)(o->heldout_nnz > 0 ? o->heldout_nnz
                       : o->quick ? BENCH_HELDOUT_QUICK_NNZ : BENCH_HELDOUT_FULL_NNZ));
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
