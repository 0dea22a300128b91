/* calib_points_replay.c: calib_points --replay: the work model of every
 * configuration fitted on a --points table (no device), and its errors
 * against an eval_tuner --tsv table's measured times (or, --fits, against
 * its own points). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "calib_points_impl.h"
#include "spmv_profile.h"
#include "spmvd_predict.h"
#include "suite.h"
#include "../testdata.h"

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
    if (calib_points_rewrite != NULL && line[0] == '#' && strncmp(line, "# dtype\t", 8) != 0)
      fputs(line, calib_points_rewrite);
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
    if (calib_points_refeat_apply(f[0], atoi(f[1]), &x) != 0) {
      gzclose(gz);
      return -1;
    }
    /* --rewrite: the line again with the features as they now are. */
    if (calib_points_rewrite != NULL) {
      for (k = 0; k < 8; k++)
        fprintf(calib_points_rewrite, "%s\t", f[k]);
      calib_points_print_feat(calib_points_rewrite, &x);
      fprintf(calib_points_rewrite, "\t%s\t%s\n", f[nf - 2], f[nf - 1]);
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
int calib_points_run_replay(const char *points, const char *measured, double bound,
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
