/* eval_tuner_replay.c: eval_tuner --replay: the strategies against
 * committed timing tables, with no device. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "eval_tuner_impl.h"
#include "spmv_profile.h"
#include "spmvd_tuner.h"
#include "suite.h"
#include "bench_clock.h"

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

static const struct spmvd_race_ops rp_ops = { rp_load, rp_time, rp_unload, NULL, NULL };

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
int eval_tuner_replay_main(const struct opts *o, const char *files)
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
  if (eval_tuner_suite_init(o, &suite, &err) < 0) {
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
           nok[k], 100 * eval_tuner_gmean(logm[k], nok[k]), 100 * worst[k], n95[k],
           eval_tuner_gmean(logc[k], nok[k]), cmax[k]);
  rc = n > 0 ? 0 : 1;
out:
  free(t.r);
  bench_suite_fini(&suite);
  return rc;
}
