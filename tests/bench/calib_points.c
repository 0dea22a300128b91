/*
 * calib_points.c: the predictor's raw material as tables, for studying its
 * model off the device (a benchmark tool, never in make check).
 *
 *   calib_points --points [--dtype f64|f32|both] [--work-nnz N] [--budget S]
 *     runs the daemon's calibration plan on the device (the cuda store of
 *     eval_tuner, or the cpu backend) and prints a line per timed point:
 *     the matrix's shape, every feature of spmvd_predict_features, the
 *     configuration and its time;
 *   calib_points --features [--suite S] [--only N] [--dtype ...]
 *     prints the same features for the benchmark suite's matrices (no
 *     device), to set beside eval_tuner's measured times.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval_store.h"
#include "spmv_profile.h"
#include "spmvd_predict.h"
#include "suite.h"

struct ctx {
  struct eval_store *s;
  const struct spmv_csr *A;  /* the matrix whose features are below */
  int matrix;
  struct spmvd_pfeat f;
  struct spmvd_calib_plan *plan;
  size_t next;               /* the plan point being timed */
  double t0, budget;
  int stopped;
};

static double now_s(void)
{
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void print_feat(const struct spmvd_pfeat *f)
{
  printf("%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f",
         f->rows, f->nnz, f->rl_max, f->w_warp, f->w_sell, f->w_ell, f->w_vec,
         f->hyb_coo, f->sectors, f->empty, f->w_hyb);
}

#define FEAT_HEADER "rows\tnnz\trl_max\tw_warp\tw_sell\tw_ell\tw_vec\thyb_coo\tsectors\tempty\tw_hyb"

/* The calibration's time callback: features once per matrix, a line per
 * point.  Past the budget every point is skipped (not timed). */
static int point_time(void *vctx, const struct spmv_csr *A, enum spmv_dtype dt,
                      const struct spmv_config *cfg, double *us,
                      struct spmv_error *err)
{
  struct ctx *c = vctx;
  const struct spmvd_calib_point *pt = &c->plan->pt[c->next++];
  struct spmv_profile prof;
  char text[64];
  int rc;

  if (c->budget > 0 && now_s() - c->t0 > c->budget) {
    /* Past the budget: the plan ends here (the run reads n as it goes, so
     * it generates no further matrix). */
    c->stopped = 1;
    c->plan->n = c->next - 1;
    return spmv_error_set(err, SPMV_EINVAL, "past the budget");
  }
  if (A != c->A || pt->matrix != c->matrix) {
    if (spmv_profile_compute(A, &prof, err) != 0)
      return err->code;
    spmvd_predict_features(A, &prof, dt, &c->f);
    c->A = A;
    c->matrix = pt->matrix;
  }
  rc = eval_store_calib_time(c->s, A, dt, cfg, us, err);
  spmv_config_format(cfg, text, sizeof text);
  printf("%s\t%d\t%d\t%d\t%.3f\t%d\t%g\t%d\t", spmv_dtype_name(dt), pt->matrix,
         pt->work, (int)pt->dist, pt->cv, (int)pt->place, pt->strips, pt->p);
  print_feat(&c->f);
  printf("\t%s\t%.4f\n", text, rc == 0 ? *us : -1.0);
  fflush(stdout);
  return rc;
}

static int run_points(const char *mode, int dts, int64_t work_nnz,
                      double budget)
{
  struct spmvd_calib_ops ops = { point_time, NULL };
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan = NULL;
  struct spmv_error e;
  struct ctx c;
  int d, rc = 0;

  memset(&c, 0, sizeof c);
  spmv_error_clear(&e);
  if (eval_store_open(mode, &c.s, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    return 1;
  }
  printf("# device: %s (%d SMs)\n# dtype\tmatrix\twork\tdist\tcv\tplace\tstrips\tp\t"
         FEAT_HEADER "\tconfig\tus\n",
         eval_store_info(c.s)->name, eval_store_info(c.s)->sms);
  for (d = 0; d < 2 && rc == 0; d++) {
    enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;

    if (!(dts & (d == 0 ? 2 : 1)))
      continue;
    spmvd_calib_params_default(&prm);
    if (work_nnz > 0)
      prm.work_nnz = work_nnz;
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
    c.A = NULL;
    c.matrix = -1;
    c.t0 = now_s();
    c.budget = budget;
    c.stopped = 0;
    eval_store_calib_plan(c.s, plan);
    rc = spmvd_calib_run(plan, &prm, &ops, &c, &e);
    eval_store_calib_plan(c.s, NULL);
    fprintf(stderr, "%s: %.1f s%s\n", spmv_dtype_name(dt), now_s() - c.t0,
            c.stopped ? " (budget reached)" : "");
    plan = spmvd_calib_plan_free(plan);
    eval_store_matrix(c.s, NULL, dt, NULL);
  }
  if (rc != 0)
    fprintf(stderr, "calib_points: %s\n", e.msg);
  eval_store_close(c.s);
  return rc != 0;
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
  printf("# matrix\tdtype\tcv\t" FEAT_HEADER "\n");
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
      print_feat(&f);
      printf("\n");
    }
    spmv_csr_free(A);
  }
  bench_suite_fini(&suite);
  return 0;
}

int main(int argc, char **argv)
{
  static const struct option lo[] = {
    {"points", 0, 0, 'p'}, {"features", 0, 0, 'f'}, {"backend", 1, 0, 'b'},
    {"dtype", 1, 0, 't'}, {"work-nnz", 1, 0, 'w'}, {"budget", 1, 0, 'B'},
    {"suite", 1, 0, 's'}, {"only", 1, 0, 'o'}, {0, 0, 0, 0},
  };
#ifdef HAVE_CUDA
  const char *mode = "cuda";
#else
  const char *mode = "cpu";
#endif
  const char *only = NULL;
  int c, what = 0, dts = 2;
  int sets = BENCH_SUITE_PAPER | BENCH_SUITE_REAL;
  int64_t work_nnz = 0;
  double budget = 0;

  while ((c = getopt_long(argc, argv, "pfb:t:w:B:s:o:", lo, NULL)) != -1) {
    switch (c) {
    case 'p': what = 'p'; break;
    case 'f': what = 'f'; break;
    case 'b': mode = optarg; break;
    case 'o': only = optarg; break;
    case 'w': work_nnz = strtoll(optarg, NULL, 10); break;
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
                      "[--dtype f64|f32|both] [--work-nnz N] [--budget S]\n"
                      "       calib_points --features [--suite S] [--only N] "
                      "[--dtype ...]\n");
      return 2;
    }
  }
  if (what == 'p')
    return run_points(mode, dts, work_nnz, budget);
  if (what == 'f')
    return run_features(sets, only, dts);
  fprintf(stderr, "calib_points: --points or --features\n");
  return 2;
}
