/*
 * calib_points.c: the predictor's raw material as tables, for studying its
 * model off the device (a benchmark tool, never in make check).
 *
 *   calib_points --points [--dtype f64|f32|both] [--work-nnz N] [--mid-nnz N]
 *                [--budget S] [--worker]
 *     runs the daemon's calibration plan on the device (the cuda store of
 *     eval_tuner, or the cpu backend) and prints a line per timed point:
 *     the matrix's shape, every feature of spmvd_predict_features, the
 *     configuration and its time; --worker times each point as the
 *     daemon's worker does (load, time, unload through the backend)
 *     rather than among the store's resident layouts; --rounds R times
 *     each such load R times (2 warm-up runs, the median of 10, each
 *     time), the median in the table and every round, in the order
 *     timed, in FILE;
 *   calib_points --features [--suite S] [--only N] [--dtype ...]
 *     prints the same features and the CSR footprint in bytes for the
 *     benchmark suite's matrices (no device), to set beside eval_tuner's
 *     measured times;
 *   calib_points --twins [--suite S] [--only N] [--dtype ...] [--max-nnz N]
 *     times real matrices beside their permuted and generated twins
 *     (run_twins says how; matrices under N entries, 1M by default), to
 *     tell the calibration's matrices from real ones;
 *   calib_points --replay POINTS --measured EVAL_TSV [--bound B] [--l2-mib M]
 *                [--each] [--each-point] [--refeature FILE [--rewrite OUT]]
 *     no device: fits the work model of every configuration in a
 *     --points table (plain or gzip), predicts each matrix of an
 *     eval_tuner --tsv table (any part of the suite, built here) and
 *     prints the mean error per format against the table's measured
 *     times, and the error of the same model fitted to those matrices
 *     themselves (the best its terms allow); exits 1 when a format's mean
 *     error exceeds B (0.2).  M is the L2 of the device the points were
 *     timed on (its DRAM term).  --each first prints a line per matrix
 *     and format: matrix, type, format, predicted and measured us, error;
 *     --each-point also a line per calibration point, the fit against its
 *     own data: type, configuration, the point's place among that
 *     configuration's lines of the table, rows, nnz, predicted and
 *     measured us, error.
 *     A table that spmvctl calibrate --points wrote names the L2 and the
 *     resident threads of its device: its L2 serves when --l2-mib is not
 *     given, its threads in place of an H100's.  --fits prints, in place of the errors against a
 *     measured table, each configuration's fit against its own points
 *     (points, work_points, work_err), as the daemon's calibration
 *     reports its fits: what it fitted on the device, replayed here.
 *     --refeature computes every feature of the plan's matrices here (an
 *     H100's or H200's plan), for tables from before a feature, and keeps
 *     them in FILE for the next replay; --rewrite OUT writes the table
 *     again there with those features (plain text).
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval_store.h"
#include "spmv_gen.h"
#include "spmv_gen_impl.h"
#include "spmv_profile.h"
#include "spmv_stats.h"
#include "spmvd_predict.h"
#include "suite.h"
#include "bench_clock.h"
#include "../testdata.h"

struct ctx {
  struct eval_store *s;
  int matrix;
  struct spmvd_pfeat f;
  struct spmvd_calib_plan *plan;
  size_t next;               /* the plan point being timed */
  double t0, budget;
  int stopped;
  int rounds;                /* --rounds: each round of a load kept */
  FILE *rfile;               /* where they go */
};

/* The features' columns of a points table (spmvd_pfeat_columns), on fp. */
static void print_feat(FILE *fp, const struct spmvd_pfeat *f)
{
  for (int i = 0; i < SPMVD_PFEAT_NCOLUMNS; i++)
    fprintf(fp, "%s%.0f", i > 0 ? "\t" : "", spmvd_pfeat_value(f, i));
}

/* Their names, tab-separated, on fp. */
static void print_feat_header(FILE *fp)
{
  for (int i = 0; i < SPMVD_PFEAT_NCOLUMNS; i++)
    fprintf(fp, "%s%s", i > 0 ? "\t" : "", spmvd_pfeat_columns[i].name);
}

/* The calibration's time callback: features once per matrix, a line per
 * point.  Past the budget every point is skipped (not timed). */
static int point_time(void *vctx, const struct spmv_csr *A, enum spmv_dtype dt,
                      const struct spmv_config *cfg, double *us,
                      struct spmv_error *err)
{
  struct ctx *c = vctx;
  /* The point is found from its configuration, not counted: the run
   * skips the points that spmvd_calib_applies() refuses without a call. */
  const struct spmvd_calib_point *pt = spmvd_calib_point_of(c->plan, cfg);
  struct spmv_profile prof;
  char text[64];
  int rc;

  if (pt == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calib_points: a configuration outside the plan");
  c->next = (size_t)(pt - c->plan->pt);
  if (c->budget > 0 && bench_now_s() - c->t0 > c->budget) {
    /* Past the budget: the plan ends here (the run reads n as it goes, so
     * it generates no further matrix), and the store lets go of A, which
     * the run frees next, its prefetch stopped. */
    c->stopped = 1;
    c->plan->n = c->next;
    eval_store_matrix(c->s, NULL, dt, NULL);
    return spmv_error_set(err, SPMV_EINVAL, "past the budget");
  }
  /* Features once per plan matrix (a freed matrix's address may be
   * reused by the next one, so the pointer cannot tell them apart). */
  if (pt->matrix != c->matrix) {
    if (spmv_profile_compute(A, &prof, err) != 0)
      return err->code;
    spmvd_predict_features(A, &prof, dt, &c->f);
    c->matrix = pt->matrix;
  }
  spmv_config_format(cfg, text, sizeof text);
  if (c->rounds > 1) {
    double each[9];

    rc = eval_store_worker_time(c->s, A, dt, cfg, c->rounds, each, us, err);
    if (rc == 0) {
      fprintf(c->rfile, "%s\t%d\t%.0f\t%.0f\t%s", spmv_dtype_name(dt),
              pt->matrix, c->f.rows, c->f.nnz, text);
      for (int k = 0; k < c->rounds; k++)
        fprintf(c->rfile, "\t%.4f", each[k]);
      fprintf(c->rfile, "\n");
    }
  } else {
    rc = eval_store_calib_time(c->s, A, dt, cfg, us, err);
  }
  printf("%s\t%d\t%d\t%d\t%.3f\t%d\t%g\t%d\t", spmv_dtype_name(dt), pt->matrix,
         pt->work, (int)pt->dist, pt->cv, (int)pt->place, pt->strips, pt->p);
  print_feat(stdout, &c->f);
  printf("\t%s\t%.4f\n", text, rc == 0 ? *us : -1.0);
  fflush(stdout);
  return rc;
}

static int run_points(const char *mode, int dts, int64_t work_nnz,
                      int64_t mid_nnz, double budget, int worker, int rounds,
                      const char *rounds_tsv)
{
  struct spmvd_calib_ops ops = { point_time, NULL };
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan = NULL;
  struct spmv_error e;
  struct ctx c;
  int d, rc = 0;

  memset(&c, 0, sizeof c);
  spmv_error_clear(&e);
  if (rounds > 1 &&
      (rounds > SPMVD_CALIB_MAX_ROUNDS || !worker || rounds_tsv == NULL)) {
    fprintf(stderr, "calib_points: --rounds takes 2 to %d, with --worker and "
                    "--rounds-tsv\n", SPMVD_CALIB_MAX_ROUNDS);
    return 2;
  }
  if (rounds > 1 && (c.rfile = fopen(rounds_tsv, "w")) == NULL) {
    perror(rounds_tsv);
    return 1;
  }
  c.rounds = rounds;
  if (eval_store_open(mode, &c.s, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    if (c.rfile)
      fclose(c.rfile);
    return 1;
  }
  eval_store_calib_direct(c.s, worker);
  if (c.rfile)
    fprintf(c.rfile, "# dtype\tmatrix\trows\tnnz\tconfig\teach round's us, "
                     "in the order timed after one load\n");
  printf("# device: %s (%d SMs)\n# dtype\tmatrix\twork\tdist\tcv\tplace\tstrips\tp\t",
         eval_store_info(c.s)->name, eval_store_info(c.s)->sms);
  print_feat_header(stdout);
  printf("\tconfig\tus\n");
  for (d = 0; d < 2 && rc == 0; d++) {
    enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;

    if (!(dts & (d == 0 ? 2 : 1)))
      continue;
    spmvd_calib_params_default(&prm);
    if (work_nnz > 0)
      prm.work_nnz = work_nnz;
    if (mid_nnz >= 0)
      prm.mid_nnz = mid_nnz;
    if (prm.max_nnz_total < 2 * prm.work_nnz)
      prm.max_nnz_total = 2 * prm.work_nnz;
    rc = spmvd_calib_plan_new(eval_store_info(c.s), dt, &prm, &plan, &e);
    if (rc != 0)
      break;
    fprintf(stderr, "%s: %zu points, %d matrices, %lld nnz\n",
            spmv_dtype_name(dt), plan->n, plan->nmatrices,
            (long long)plan->total_nnz);
    c.plan = plan;
    c.next = 0;
    c.matrix = -1;
    c.t0 = bench_now_s();
    c.budget = budget;
    c.stopped = 0;
    eval_store_calib_plan(c.s, plan);
    rc = spmvd_calib_run(plan, &prm, &ops, &c, &e);
    eval_store_calib_plan(c.s, NULL);
    fprintf(stderr, "%s: %.1f s%s\n", spmv_dtype_name(dt), bench_now_s() - c.t0,
            c.stopped ? " (budget reached)" : "");
    plan = spmvd_calib_plan_free(plan);
    eval_store_matrix(c.s, NULL, dt, NULL);
  }
  if (rc != 0)
    fprintf(stderr, "calib_points: %s\n", e.msg);
  eval_store_close(c.s);
  if (c.rfile)
    fclose(c.rfile);
  return rc != 0;
}

/* A with its columns sent through perm (a permutation of the columns),
 * each row's entries sorted again: the same rows, another x pattern. */
static struct spmv_csr *permute_cols(const struct spmv_csr *A,
                                     const int32_t *perm)
{
  struct spmv_csr *B = spmv_csr_new(A->rows, A->cols, A->nnz);

  if (B == NULL)
    return NULL;
  memcpy(B->row_ptr, A->row_ptr, (size_t)(A->rows + 1) * sizeof *B->row_ptr);
  memcpy(B->val, A->val, (size_t)A->nnz * sizeof *B->val);
  for (int64_t k = 0; k < A->nnz; k++)
    B->col_idx[k] = perm[A->col_idx[k]];
  for (int64_t i = 0; i < A->rows; i++)
    spmv_gen_sort(B->col_idx + B->row_ptr[i], B->val + B->row_ptr[i],
                  B->row_ptr[i + 1] - B->row_ptr[i]);
  return B;
}

#define TWIN_VARIANTS 4
#define TWIN_PASSES 3

/*
 * --twins: does a calibration matrix of a real matrix's statistics time
 * as the real one does?  For each matrix of the suite under max_nnz entries:
 * the matrix, its columns permuted at random, and two generated twins
 * (rows, columns, mean and cv of its row lengths, normal lengths, columns
 * near the diagonal or at random), each timed as the worker times a
 * calibration point under a few configurations, in TWIN_PASSES passes
 * that alternate the variants; a line per matrix, configuration and
 * variant with the median of the passes.
 */
static int run_twins(const char *mode, int sets, const char *only, int dts,
                     int64_t max_nnz)
{
  static const char *cfgs[] = {
    "csr-vector bs=256 tpr=16", "csr-stream bs=128 k=4", "csr-scalar bs=256",
    "jad bs=256", "coo bs=256", "hyb bs=256 k=0",
  };
  enum { NC = sizeof cfgs / sizeof cfgs[0] };
  static const char *vname[TWIN_VARIANTS] = { "real", "colperm", "twin-diag",
                                              "twin-random" };
  struct bench_suite suite;
  struct eval_store *s = NULL;
  struct spmv_error e;
  const char *dir = bench_suite_dir(NULL);

  spmv_error_clear(&e);
  if (bench_suite_init(&suite, sets, 0, only, dir, &e) != 0 ||
      eval_store_open(mode, &s, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    return 1;
  }
  eval_store_calib_direct(s, 1);
  printf("# device: %s (%d SMs)\n# matrix\tdtype\trows\tnnz\tconfig\tvariant\tus\n",
         eval_store_info(s)->name, eval_store_info(s)->sms);
  for (size_t k = 0; k < suite.n; k++) {
    struct spmv_csr *V[TWIN_VARIANTS] = { NULL };
    struct spmv_profile prof;
    int32_t *perm = NULL;

    V[0] = bench_suite_make(&suite.e[k], dir, &e);
    if (V[0] == NULL || V[0]->nnz >= max_nnz ||
        spmv_profile_compute(V[0], &prof, &e) != 0) {
      spmv_csr_free(V[0]);
      continue;
    }
    perm = spmv_gen_perm(V[0]->cols, (uint64_t)k + 1);
    if (perm != NULL) {
      V[1] = permute_cols(V[0], perm);
      free(perm);
    }
    for (int v = 2; v < TWIN_VARIANTS; v++) {
      struct spmv_gen_spec sp = {
        V[0]->rows, V[0]->cols, prof.rl_mean, prof.rl_cv, SPMV_GEN_NORMAL,
        v == 2 ? SPMV_GEN_DIAGONAL : SPMV_GEN_RANDOM,
      };
      V[v] = spmv_gen_matching(&sp, 1, &e);
    }
    for (int d = 0; d < 2; d++) {
      enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;
      double t[NC][TWIN_VARIANTS][TWIN_PASSES];

      if (!(dts & (d == 0 ? 2 : 1)))
        continue;
      for (int p = 0; p < TWIN_PASSES; p++)
        for (int c = 0; c < (int)NC; c++)
          for (int v = 0; v < TWIN_VARIANTS; v++) {
            struct spmv_config cfg;
            int w = (v + p) % TWIN_VARIANTS;  /* another order each pass */

            t[c][w][p] = NAN;
            if (V[w] != NULL && spmv_config_parse(cfgs[c], &cfg, &e) == 0 &&
                eval_store_calib_time(s, V[w], dt, &cfg, &t[c][w][p], &e) != 0)
              t[c][w][p] = NAN;
          }
      for (int c = 0; c < (int)NC; c++)
        for (int v = 0; v < TWIN_VARIANTS; v++)
          printf("%s\t%s\t%lld\t%lld\t%s\t%s\t%.4f\n", suite.e[k].name,
                 spmv_dtype_name(dt), (long long)V[0]->rows,
                 (long long)V[0]->nnz, cfgs[c], vname[v],
                 spmv_median(t[c][v], TWIN_PASSES));
      fflush(stdout);
    }
    for (int v = 0; v < TWIN_VARIANTS; v++)
      spmv_csr_free(V[v]);
  }
  eval_store_close(s);
  bench_suite_fini(&suite);
  return 0;
}

static int run_features(int sets, const char *only, int dts)
{
  struct bench_suite suite;
  struct spmv_profile prof;
  struct spmvd_pfeat f;
  struct spmv_error e;
  struct spmv_csr *A;
  const char *dir = bench_suite_dir(NULL);
  size_t k;
  int d;

  spmv_error_clear(&e);
  if (bench_suite_init(&suite, sets, 0, only, dir, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    return 1;
  }
  printf("# matrix\tdtype\tcv\t");
  print_feat_header(stdout);
  printf("\tbytes\n");
  for (k = 0; k < suite.n; k++) {
    A = bench_suite_make(&suite.e[k], dir, &e);
    if (A == NULL || spmv_profile_compute(A, &prof, &e) != 0) {
      fprintf(stderr, "calib_points: %s: %s\n", suite.e[k].name, e.msg);
      spmv_csr_free(A);
      continue;
    }
    for (d = 0; d < 2; d++) {
      enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;

      if (!(dts & (d == 0 ? 2 : 1)))
        continue;
      spmvd_predict_features(A, &prof, dt, &f);
      printf("%s\t%s\t%.4f\t", suite.e[k].name, spmv_dtype_name(dt),
             prof.rl_cv);
      print_feat(stdout, &f);
      printf("\t%.0f\n", f.bytes);
    }
    spmv_csr_free(A);
  }
  bench_suite_fini(&suite);
  return 0;
}

/* One configuration's calibration points, read back. */
struct cfg_points {
  char dtype[8];
  struct spmv_config cfg;
  struct spmvd_pfeat *x;
  double *t;
  size_t n, cap;
  struct spmvd_fit fit;
  /* The measured matrices' features and times, for the fit on them. */
  struct spmvd_pfeat *mx;
  double *mt;
  size_t mn, mcap;
};

/* Appends (x, t) to the arrays *xs, *ts of *n entries (capacity *cap);
 * returns 0 or -1 when out of memory. */
static int push_point(struct spmvd_pfeat **xs, double **ts, size_t *n,
                      size_t *cap, const struct spmvd_pfeat *x, double t)
{
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 256;
    void *nx = realloc(*xs, c * sizeof **xs);
    void *nt = nx ? realloc(*ts, c * sizeof **ts) : NULL;

    if (nx != NULL)
      *xs = nx;
    if (nt == NULL)
      return -1;
    *ts = nt;
    *cap = c;
  }
  (*xs)[*n] = *x;
  (*ts)[(*n)++] = t;
  return 0;
}

#define MAX_CFGS 64

/* Splits line (modified) at tabs into at most max fields; returns how many. */
static int split_tabs(char *line, char **f, int max)
{
  int n = 0;

  line[strcspn(line, "\r\n")] = '\0';
  while (n < max) {
    f[n++] = line;
    line = strchr(line, '\t');
    if (line == NULL)
      break;
    *line++ = '\0';
  }
  return n;
}

/*
 * --refeature: the features of the plan's matrices computed here, for
 * tables timed before a feature existed.  The plan is an H100's or H200's
 * (132 SMs, 2048 threads per SM), as every committed table's; a table row
 * whose matrix differs in rows or entries from the plan's is an error.
 * The features are kept in a file, computed once.
 */
static struct {
  int on;
  struct spmvd_pfeat *x[2]; /* [0] f64, [1] f32, by plan matrix index */
  int n[2];
} refeat;

static int refeat_compute(double l2_bytes)
{
  struct spmvd_device_info dev;
  struct spmvd_calib_params prm;
  struct spmv_error e;
  int d;

  memset(&dev, 0, sizeof dev);
  snprintf(dev.backend, sizeof dev.backend, "cuda");
  snprintf(dev.name, sizeof dev.name, "plan of a 132-SM GPU");
  dev.sms = 132;  /* replay_threads */
  dev.warp_size = 32;
  dev.max_threads_per_sm = 2048;
  dev.max_blocks_per_sm = 32;
  dev.max_threads_per_block = 1024;
  dev.l2_bytes = (uint64_t)l2_bytes;
  spmvd_calib_params_default(&prm);
  for (d = 0; d < 2; d++) {
    enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;
    struct spmvd_calib_plan *plan = NULL;
    size_t k;

    spmv_error_clear(&e);
    if (spmvd_calib_plan_new(&dev, dt, &prm, &plan, &e) != 0) {
      fprintf(stderr, "calib_points: %s\n", e.msg);
      return -1;
    }
    refeat.n[d] = plan->nmatrices;
    refeat.x[d] = calloc((size_t)plan->nmatrices, sizeof *refeat.x[d]);
    for (k = 0; refeat.x[d] != NULL && k < plan->n; k++) {
      const struct spmvd_calib_point *pt = &plan->pt[k];
      struct spmv_profile prof;
      struct spmv_csr *A;

      if (k > 0 && pt->matrix == plan->pt[k - 1].matrix)
        continue;
      A = spmvd_calib_matrix(pt, &prm, &e);
      if (A == NULL || spmv_profile_compute(A, &prof, &e) != 0) {
        fprintf(stderr, "calib_points: matrix %d: %s\n", pt->matrix, e.msg);
        spmv_csr_free(A);
        spmvd_calib_plan_free(plan);
        return -1;
      }
      spmvd_predict_features(A, &prof, dt, &refeat.x[d][pt->matrix]);
      spmv_csr_free(A);
    }
    spmvd_calib_plan_free(plan);
    if (refeat.x[d] == NULL) {
      fprintf(stderr, "calib_points: out of memory\n");
      return -1;
    }
  }
  return 0;
}

/* Reads the features file, or computes it and writes it there. */
static int refeat_load(const char *path, double l2_bytes)
{
  FILE *fp = fopen(path, "rb");
  int d, ok = 1;

  refeat.on = 1;
  if (fp != NULL) {
    size_t size = 0;

    ok = fread(&size, sizeof size, 1, fp) == 1 && size == sizeof **refeat.x;
    for (d = 0; d < 2 && ok; d++) {
      ok = fread(&refeat.n[d], sizeof refeat.n[d], 1, fp) == 1 &&
           refeat.n[d] > 0 &&
           (refeat.x[d] = calloc((size_t)refeat.n[d], sizeof *refeat.x[d])) != NULL &&
           fread(refeat.x[d], sizeof *refeat.x[d], (size_t)refeat.n[d], fp) ==
               (size_t)refeat.n[d];
    }
    fclose(fp);
    if (!ok)
      fprintf(stderr, "calib_points: %s: unreadable, or from a build with "
                      "other features (remove it)\n", path);
    return ok ? 0 : -1;
  }
  if (refeat_compute(l2_bytes) != 0)
    return -1;
  if ((fp = fopen(path, "wb")) == NULL)
    return 0;  /* computed; only not kept */
  {
    size_t size = sizeof **refeat.x;

    fwrite(&size, sizeof size, 1, fp);
  }
  for (d = 0; d < 2; d++) {
    fwrite(&refeat.n[d], sizeof refeat.n[d], 1, fp);
    fwrite(refeat.x[d], sizeof *refeat.x[d], (size_t)refeat.n[d], fp);
  }
  fclose(fp);
  return 0;
}

/* --rewrite's table, or NULL. */
static FILE *rewrite;

/* Replaces the features x of plan matrix m (of type dtype) when on. */
static int refeat_apply(const char *dtype, int m, struct spmvd_pfeat *x)
{
  int d = strcmp(dtype, "f32") == 0;
  const struct spmvd_pfeat *r;

  if (!refeat.on)
    return 0;
  if (m < 0 || m >= refeat.n[d] || refeat.x[d][m].rows != x->rows ||
      refeat.x[d][m].nnz != x->nnz) {
    fprintf(stderr, "calib_points: --refeature: %s matrix %d is not the "
                    "plan's (%.0f rows, %.0f entries)\n", dtype, m, x->rows,
            x->nnz);
    return -1;
  }
  r = &refeat.x[d][m];
  *x = *r;
  return 0;
}

/* The resident threads of the device the tables were timed on: an H100's
 * or H200's 132 SMs x 2048, as every committed table's, unless the table
 * names them (then its L2 too). */
static double replay_threads = 132.0 * 2048.0, table_l2;
/* The table's SMs ("# sms:"; older tables lack it); else its threads
 * over the 2048 an SM of the H100 and H200 holds. */
#define REPLAY_SM_THREADS 2048.0
static double replay_sms;

/* Reads a --points table into cp[0 .. *ncp). */
static int read_points(const char *path, struct cfg_points *cp, size_t *ncp)
{
  gzFile gz = gzopen(path, "rb");
  char line[4096], *f[32];
  size_t k;
  int nf, i;

  if (gz == NULL) {
    fprintf(stderr, "calib_points: cannot open %s\n", path);
    return -1;
  }
  *ncp = 0;
  while (gzgets(gz, line, sizeof line) != NULL) {
    struct spmvd_pfeat x;
    struct spmv_config cfg;
    double us;

    /* spmvctl calibrate --points names the device's L2 and resident
     * threads, which its fits used. */
    if (line[0] == '#' && sscanf(line, "# l2_bytes: %lf", &us) == 1 &&
        us > 0)
      table_l2 = us;
    if (line[0] == '#' && sscanf(line, "# threads: %lf", &us) == 1 && us > 0)
      replay_threads = us;
    if (line[0] == '#' && sscanf(line, "# sms: %lf", &us) == 1 && us > 0)
      replay_sms = us;
    /* --rewrite keeps the table's own comments (its device, L2 and
     * threads) but for its column names, which it writes anew. */
    if (rewrite != NULL && line[0] == '#' && strncmp(line, "# dtype\t", 8) != 0)
      fputs(line, rewrite);
    /* The shape's 8 fields, the features in spmvd_pfeat_columns' order,
     * the configuration and its time.  Older tables hold a prefix of the
     * features: 30 fields before w_block (then 0: the fit takes the
     * even block share, unless --refeature recomputes it), 29 before
     * path_rounds (then 0: --refeature
     * recomputes it), 27 before w_stream and path_stream, 25 before
     * x_warp and x_warp_jad and 22 before path_x (then 0: --refeature
     * recomputes them), 21 before sectors_jad (then the per-row count
     * stands in for it). */
    if (line[0] == '#' ||
        ((nf = split_tabs(line, f, 32)) != 21 && nf != 22 && nf != 25 &&
         nf != 27 && nf != 29 && nf != 30 &&
         nf != 10 + SPMVD_PFEAT_NCOLUMNS))
      continue;
    us = strtod(f[nf - 1], NULL);
    if (!(us > 0) || spmv_config_parse(f[nf - 2], &cfg, NULL) != 0)
      continue;
    memset(&x, 0, sizeof x);
    for (i = 0; i < nf - 10; i++)
      spmvd_pfeat_set(&x, i, strtod(f[8 + i], NULL));
    if (nf == 21)
      x.sectors_jad = x.sectors;
    if (refeat_apply(f[0], atoi(f[1]), &x) != 0) {
      gzclose(gz);
      return -1;
    }
    /* --rewrite: the line again with the features as they now are. */
    if (rewrite != NULL) {
      for (k = 0; k < 8; k++)
        fprintf(rewrite, "%s\t", f[k]);
      print_feat(rewrite, &x);
      fprintf(rewrite, "\t%s\t%s\n", f[nf - 2], f[nf - 1]);
    }
    x.hyb_k = x.rows > 0 ? x.w_hyb / x.rows : 0;
    /* The calibration's matrices are square unless too few rows hold
     * their mean length P (4 P columns then). */
    x.bytes = spmvd_predict_footprint(
        x.rows, fmax(x.rows, 4 * strtod(f[7], NULL)), x.nnz,
        strcmp(f[0], "f32") == 0 ? SPMV_F32 : SPMV_F64);
    for (k = 0; k < *ncp; k++)
      if (strcmp(cp[k].dtype, f[0]) == 0 &&
          spmv_config_equal(&cp[k].cfg, &cfg))
        break;
    if (k == *ncp) {
      if (*ncp == MAX_CFGS)
        continue;
      memset(&cp[k], 0, sizeof cp[k]);
      snprintf(cp[k].dtype, sizeof cp[k].dtype, "%s", f[0]);
      cp[k].cfg = cfg;
      (*ncp)++;
    }
    if (push_point(&cp[k].x, &cp[k].t, &cp[k].n, &cp[k].cap, &x, us) != 0) {
      gzclose(gz);
      fprintf(stderr, "calib_points: out of memory\n");
      return -1;
    }
  }
  gzclose(gz);
  return 0;
}

/* The work model of cfg over n samples (x[k], t[k]) into f (cleared
 * first), on an L2 of l2_bytes; returns spmvd_predict_fit_work's code. */
static int fit_work(const struct spmv_config *cfg, const char *dtype,
                    const struct spmvd_pfeat *x, const double *t, size_t n,
                    double l2_bytes, struct spmvd_fit *f, struct spmv_error *e)
{
  memset(f, 0, sizeof *f);
  f->kind = SPMVD_FIT_SADDLE;  /* predict_time needs a kind */
  f->strip = 1;
  f->cfg = *cfg;
  f->l2_bytes = l2_bytes;
  f->threads = replay_threads;
  f->sms = replay_sms > 0 ? replay_sms : replay_threads / REPLAY_SM_THREADS;
  f->value_bytes = (int)spmv_dtype_size(strcmp(dtype, "f32") == 0 ? SPMV_F32
                                                                : SPMV_F64);
  return spmvd_predict_fit_work(cfg, x, t, n, f, e);
}

/* The replay: fits from the points, errors against the measured table. */
static int run_replay(const char *points, const char *measured, double bound,
                      double l2_bytes, int each)
{
  static struct cfg_points cp[MAX_CFGS];
  double sum[MAX_CFGS] = { 0 }, mx[MAX_CFGS] = { 0 };
  int cnt[MAX_CFGS] = { 0 }, status = 0;
  struct bench_suite suite;
  struct spmv_error e;
  const char *dir = bench_suite_dir(NULL);
  char line[8192], *f[128];
  size_t ncp = 0, k, j;
  gzFile in;

  if (read_points(points, cp, &ncp) != 0)
    return 1;
  if (l2_bytes == 0)
    l2_bytes = table_l2;
  for (k = 0; k < ncp; k++) {
    if (fit_work(&cp[k].cfg, cp[k].dtype, cp[k].x, cp[k].t, cp[k].n, l2_bytes,
                 &cp[k].fit, &e) != 0)
      fprintf(stderr, "calib_points: %s\n", e.msg);
  }
  /* --each-point: the fit against its own points, in the table's order
   * per configuration (the in-sample view: where the model's form, not
   * its data, misses). */
  for (k = 0; each > 1 && k < ncp; k++) {
    char text[64];

    spmv_config_format(&cp[k].cfg, text, sizeof text);
    for (j = 0; j < cp[k].n; j++) {
      struct spmv_profile pr;
      double us;

      memset(&pr, 0, sizeof pr);
      pr.rows = (int64_t)cp[k].x[j].rows;
      pr.nnz = (int64_t)cp[k].x[j].nnz;
      us = spmvd_predict_time(&cp[k].fit, &pr, &cp[k].x[j]);
      printf("point\t%s\t%s\t%zu\t%.0f\t%.0f\t%.3f\t%.3f\t%+.1f\n",
             cp[k].dtype, text, j, cp[k].x[j].rows, cp[k].x[j].nnz, us,
             cp[k].t[j], 100 * (us - cp[k].t[j]) / cp[k].t[j]);
    }
  }
  /* --fits: each configuration's work model against its own points, as
   * the daemon's calibration reports it (work_npoints, work_err). */
  if (measured == NULL) {
    printf("# dtype\tconfig\tpoints\twork_points\twork_err\n");
    for (k = 0; k < ncp; k++) {
      char text[64];

      spmv_config_format(&cp[k].cfg, text, sizeof text);
      printf("%s\t%s\t%zu\t%d\t%.9f\n", cp[k].dtype, text, cp[k].n,
             (int)cp[k].fit.work_npoints, cp[k].fit.work_err);
    }
    goto done;
  }
  in = gzopen(measured, "rb");  /* plain or gzip-compressed */
  if (in == NULL) {
    fprintf(stderr, "calib_points: cannot open %s\n", measured);
    return 1;
  }
  spmv_error_clear(&e);
  if (bench_suite_init(&suite, BENCH_SUITE_LARGE | BENCH_SUITE_PAPER | BENCH_SUITE_REAL, 0, NULL,
                       dir, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    gzclose(in);
    return 1;
  }
  while (gzgets(in, line, sizeof line) != NULL) {
    struct spmv_profile prof;
    struct spmvd_pfeat x;
    struct spmv_csr *A = NULL;
    enum spmv_dtype dt;
    int n;

    if (line[0] == '#')
      continue;
    n = split_tabs(line, f, 128);
    if (n < 4)
      continue;
    dt = strcmp(f[2], "f32") == 0 ? SPMV_F32 : SPMV_F64;
    for (j = 0; j < suite.n && !testdata_same(suite.e[j].name, f[0]); j++)
      ;
    if (j == suite.n) {
      fprintf(stderr, "calib_points: %s: not in the suite\n", f[0]);
      status = 1;
      continue;
    }
    A = bench_suite_make(&suite.e[j], dir, &e);
    if (A == NULL || spmv_profile_compute(A, &prof, &e) != 0) {
      fprintf(stderr, "calib_points: %s: %s\n", f[0], e.msg);
      spmv_csr_free(A);
      status = 1;
      continue;
    }
    spmvd_predict_features(A, &prof, dt, &x);
    spmv_csr_free(A);
    /* Fields "format:predicted/measured/paper_form". */
    for (int i = 4; i < n; i++) {
      char *colon = strchr(f[i], ':'), *slash;
      double meas, us;

      if (colon == NULL || strncmp(f[i], "hit", 3) == 0 ||
          strncmp(f[i], "raced", 5) == 0)
        continue;
      *colon = '\0';
      slash = strchr(colon + 1, '/');
      if (slash == NULL)
        continue;
      meas = strtod(slash + 1, NULL);
      for (k = 0; k < ncp; k++)
        if (strcmp(cp[k].dtype, f[2]) == 0 &&
            strcmp(spmv_format_name(cp[k].cfg.format), f[i]) == 0)
          break;
      if (k == ncp || !(meas > 0) || cp[k].fit.work_npoints == 0)
        continue;
      if (push_point(&cp[k].mx, &cp[k].mt, &cp[k].mn, &cp[k].mcap, &x,
                     meas) != 0) {
        fprintf(stderr, "calib_points: out of memory\n");
        status = 1;
      }
      us = spmvd_predict_time(&cp[k].fit, &prof, &x);
      if (each)
        printf("%s\t%s\t%s\t%.3f\t%.3f\t%+.1f\n", f[0], f[2], f[i], us, meas,
               100 * (us - meas) / meas);
      sum[k] += fabs(us - meas) / meas;
      if (fabs(us - meas) / meas > mx[k])
        mx[k] = fabs(us - meas) / meas;
      cnt[k]++;
    }
  }
  gzclose(in);
  bench_suite_fini(&suite);
  /* The last column fits the same model to the measured matrices
   * themselves: how close its terms can come at best, whatever the
   * calibration. */
  printf("| type | configuration | calibration points | fit error | matrices | mean error | max error | fitted on the matrices |\n"
         "|---|---|---|---|---|---|---|---|\n");
  for (k = 0; k < ncp; k++) {
    struct spmvd_fit self;
    char text[64], own[32] = "-";

    if (cnt[k] == 0)
      continue;
    spmv_config_format(&cp[k].cfg, text, sizeof text);
    if (fit_work(&cp[k].cfg, cp[k].dtype, cp[k].mx, cp[k].mt, cp[k].mn, l2_bytes, &self,
                 &e) == 0)
      snprintf(own, sizeof own, "%.1f %%", 100 * self.work_err);
    printf("| %s | %s | %zu | %.1f %% | %d | %.1f %% | %.1f %% | %s |\n",
           cp[k].dtype, text, cp[k].n, 100 * cp[k].fit.work_err, cnt[k],
           100 * sum[k] / cnt[k], 100 * mx[k], own);
    if (sum[k] / cnt[k] > bound)
      status = 1;
  }
done:
  for (k = 0; k < ncp; k++) {
    free(cp[k].x);
    free(cp[k].t);
    free(cp[k].mx);
    free(cp[k].mt);
  }
  return status;
}

int main(int argc, char **argv)
{
  static const struct option lo[] = {
    {"points", 0, 0, 'p'}, {"features", 0, 0, 'f'}, {"backend", 1, 0, 'b'},
    {"dtype", 1, 0, 't'}, {"work-nnz", 1, 0, 'w'}, {"mid-nnz", 1, 0, 'M'},
    {"budget", 1, 0, 'B'},
    {"suite", 1, 0, 's'}, {"only", 1, 0, 'o'}, {"replay", 1, 0, 'r'}, {"refeature", 1, 0, 'F'},
    {"measured", 1, 0, 'm'}, {"bound", 1, 0, 'x'}, {"l2-mib", 1, 0, 'l'},
    {"each", 0, 0, 'e'}, {"each-point", 0, 0, 'E'}, {"worker", 0, 0, 'W'},
    {"twins", 0, 0, 'T'}, {"max-nnz", 1, 0, 'N'},
    {"rounds", 1, 0, 'R'}, {"rounds-tsv", 1, 0, 'O'}, {"rewrite", 1, 0, 'Z'},
    {"fits", 0, 0, 'i'},
    {0, 0, 0, 0},
  };
#ifdef HAVE_CUDA
  const char *mode = "cuda";
#else
  const char *mode = "cpu";
#endif
  const char *only = NULL, *points = NULL, *measured = NULL, *refile = NULL;
  double bound = 0.2, l2_bytes = 0;
  int c, what = 0, dts = 2, each = 0, worker = 0, rounds = 0, fits = 0;
  const char *rounds_tsv = NULL, *rewrite_path = NULL;
  int sets = BENCH_SUITE_PAPER | BENCH_SUITE_REAL;
  int64_t work_nnz = 0, mid_nnz = -1, twin_max = 0;
  double budget = 0;

  while ((c = getopt_long(argc, argv, "pfiTN:b:t:w:M:B:s:o:r:m:x:l:eWF:R:O:Z:", lo, NULL)) != -1) {
    switch (c) {
    case 'e': each = each > 1 ? each : 1; break;
    case 'E': each = 2; break;
    case 'W': worker = 1; break;
    case 'R': rounds = atoi(optarg); break;
    case 'O': rounds_tsv = optarg; break;
    case 'Z': rewrite_path = optarg; break;
    case 'r': what = 'r'; points = optarg; break;
    case 'm': measured = optarg; break;
    case 'i': fits = 1; break;
    case 'F': refile = optarg; break;
    case 'x': bound = strtod(optarg, NULL); break;
    case 'l': l2_bytes = strtod(optarg, NULL) * 1048576.0; break;
    case 'p': what = 'p'; break;
    case 'T': what = 'T'; break;
    case 'N': twin_max = strtoll(optarg, NULL, 10); break;
    case 'f': what = 'f'; break;
    case 'b': mode = optarg; break;
    case 'o': only = optarg; break;
    case 'w': work_nnz = strtoll(optarg, NULL, 10); break;
    case 'M': mid_nnz = strtoll(optarg, NULL, 10); break;
    case 'B': budget = strtod(optarg, NULL); break;
    case 't':
      dts = strcmp(optarg, "f32") == 0 ? 1 : strcmp(optarg, "both") == 0 ? 3 : 2;
      break;
    case 's':
      sets = (strstr(optarg, "large") ? BENCH_SUITE_LARGE : 0) |
             (strstr(optarg, "paper") ? BENCH_SUITE_PAPER : 0) |
             (strstr(optarg, "real") ? BENCH_SUITE_REAL : 0);
      break;
    default:
      fprintf(stderr, "usage: calib_points --points [--backend cuda|cpu] "
                      "[--dtype f64|f32|both] [--work-nnz N] [--mid-nnz N] "
                      "[--budget S] [--worker [--rounds R --rounds-tsv FILE]]\n"
                      "       calib_points --features [--suite S] [--only N] "
                      "[--dtype ...]\n"
                      "       calib_points --twins [--suite S] [--only N] "
                      "[--dtype ...] [--max-nnz N]\n"
                      "       calib_points --replay POINTS --measured EVAL_TSV "
                      "[--bound B] [--l2-mib M] [--each] [--each-point]\n"
                      "       calib_points --replay POINTS --fits [--l2-mib M]\n"
                      "                    [--refeature FILE [--rewrite OUT]]\n");
      return 2;
    }
  }
  if (what == 'p')
    return run_points(mode, dts, work_nnz, mid_nnz, budget, worker, rounds, rounds_tsv);
  if (what == 'f')
    return run_features(sets, only, dts);
  if (what == 'T')
    return run_twins(mode, sets, only, dts, twin_max > 0 ? twin_max : 1000000);
  if (what == 'r' && refile != NULL && refeat_load(refile, l2_bytes) != 0)
    return 1;
  if (what == 'r' && rewrite_path != NULL) {
    if (refile == NULL) {
      fprintf(stderr, "calib_points: --rewrite needs --refeature\n");
      return 2;
    }
    if ((rewrite = fopen(rewrite_path, "w")) == NULL) {
      perror(rewrite_path);
      return 1;
    }
    fprintf(rewrite, "# %s, its features computed again (calib_points "
                     "--refeature)\n# dtype\tmatrix\twork\tdist\tcv\tplace\t"
                     "strips\tp\t", points);
    print_feat_header(rewrite);
    fprintf(rewrite, "\tconfig\tus\n");
  }
  if (what == 'r' && (measured != NULL || fits)) {
    int rc = run_replay(points, fits ? NULL : measured, bound, l2_bytes, each);

    if (rewrite != NULL && fclose(rewrite) != 0) {
      perror(rewrite_path);
      return 1;
    }
    return rc;
  }
  fprintf(stderr, "calib_points: --points, --features or --replay with "
                  "--measured or --fits\n");
  return 2;
}
