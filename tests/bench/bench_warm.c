/* bench_warm.c: what the L2 warm-up costs and gains when matrices alternate. */
/*
 * The cuda worker takes a matrix into the L2 once it is reused after
 * another matrix's products (spmv_dev_matrix_warm_l2, spmv_l2_warm_mode,
 * spmv_l2_warm_now): a read within half of the L2, a read and write-back
 * up to 90 % of it.
 * This measures a client that switches matrices: each run is an L2 flush
 * (a memset of twice the L2, standing for the other matrix's traffic and
 * paying the write-back of any lines the last warm-up dirtied), then k
 * products of one matrix, with no warm-up, with it before the first
 * product, and where the cuda worker puts it (spmv_l2_warm_now).  The
 * three orders run interleaved, each timed as a whole with CUDA events,
 * median of -r runs; the flush alone is timed the same way.  Reported per matrix,
 * value type and configuration: the working set and its warm-up mode,
 * the warm-up kernel alone after a flush, and for k = 1, 4 and 16 the
 * time with and without the warm-up after the flush's own time is taken
 * off, and their difference (negative: the warm-up pays for itself); and
 * the same in the worker's order.
 * Every product's result is checked against the CPU reference in double.
 * A benchmark, never run by make check.
 *   usage: bench_warm [-m NAMES] [-t f32|f64] [-r REPS] [-f CONFIGS]
 * CONFIGS: configurations in spmv_config_format's text, separated by ';'.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"
#include "spmv_csr.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "suite.h"

#define MAX_REPS 101
#define MAX_CFGS 8
#define NK 3
static const int ks[NK] = {1, 4, 16};

static cudaStream_t stream;
static void *flush_buf;
static size_t flush_bytes;
static cudaEvent_t ev0, ev1;

#define CK(call)                                                           \
  do {                                                                     \
    cudaError_t e_ = (call);                                               \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "bench_warm: %s: %s\n", #call, cudaGetErrorString(e_)); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

/* One run: the flush, then k products with the warm-up before product
 * number `warm` (1: before the first; 0: none); returns its microseconds
 * (events around all of it). */
static double run_once(const struct spmv_dev_matrix *d, const void *dx,
                       void *dy, int warm, int k)
{
  struct spmv_error err;
  float ms;

  CK(cudaEventRecord(ev0, stream));
  CK(cudaMemsetAsync(flush_buf, 0x5a, flush_bytes, stream));
  for (int i = 0; i < k || (k == 0 && i < warm); i++) {
    if (i + 1 == warm && spmv_dev_matrix_warm_l2(d, stream, &err) < 0) {
      fprintf(stderr, "bench_warm: %s\n", err.msg);
      exit(1);
    }
    if (i < k && spmv_dev_spmv(d, 1.0, dx, 0.0, dy, stream, &err) < 0) {
      fprintf(stderr, "bench_warm: %s\n", err.msg);
      exit(1);
    }
  }
  CK(cudaEventRecord(ev1, stream));
  CK(cudaEventSynchronize(ev1));
  CK(cudaEventElapsedTime(&ms, ev0, ev1));
  return 1e3 * (double)ms;
}

/* Compares the device's y with the reference in double: the count of rows
 * beyond gpu_row_tol. */
static int64_t check_y(const struct spmv_csr *A, enum spmv_dtype dt,
                       const double *x, const void *dy)
{
  size_t vs = spmv_dtype_size(dt), nr = (size_t)(A->rows > 0 ? A->rows : 1);
  void *y = malloc(nr * vs);
  double *ref = malloc(nr * sizeof *ref), *mag = malloc(nr * sizeof *mag);
  int64_t bad, first;

  if (y == NULL || ref == NULL || mag == NULL) {
    fprintf(stderr, "bench_warm: out of memory\n");
    exit(1);
  }
  CK(cudaMemcpy(y, dy, (size_t)A->rows * vs, cudaMemcpyDeviceToHost));
  gpu_reference(A, x, ref, mag);
  bad = gpu_check_rows(A, dt, y, ref, mag, 1, 0, &first);
  free(y);
  free(ref);
  free(mag);
  return bad;
}

static void one_config(const char *name, const struct spmv_csr *A,
                       enum spmv_dtype dt, const struct spmv_config *cfg,
                       const double *x, int reps,
                       struct spmv_cusparse_handle *h, double flush_us)
{
  struct spmv_limits lim = {(size_t)8 << 30, 4096, 40.0};
  struct spmv_layout *L = NULL;
  struct spmv_dev_matrix *d = NULL;
  struct spmv_error err;
  size_t vs = spmv_dtype_size(dt), total = 0;
  void *dx = NULL, *dy = NULL, *xt;
  double t[3][MAX_REPS], med[3][NK], wu[MAX_REPS], w;
  char txt[96];
  static const char *const mode_name[] = {"none", "read", "write"};

  spmv_config_format(cfg, txt, sizeof txt);
  if (spmv_layout_new(A, dt, cfg, &lim, &L, &err) != 0 ||
      spmv_dev_matrix_new(L, h, &d, &err) != 0) {
    printf("%s\t%s\t%s\tskipped: %s\n", name, spmv_dtype_name(dt), txt, err.msg);
    spmv_layout_free(L);
    return;
  }
  xt = malloc((size_t)A->cols * vs);
  if (xt == NULL) {
    fprintf(stderr, "bench_warm: out of memory\n");
    exit(1);
  }
  for (int64_t j = 0; j < A->cols; j++) {
    if (dt == SPMV_F32)
      ((float *)xt)[j] = (float)x[j];
    else
      ((double *)xt)[j] = x[j];
  }
  CK(cudaMalloc(&dx, (size_t)A->cols * vs));
  CK(cudaMalloc(&dy, (size_t)A->rows * vs));
  CK(cudaMemcpy(dx, xt, (size_t)A->cols * vs, cudaMemcpyHostToDevice));
  for (int k = 0; k < d->narrays; k++)
    total += d->array_bytes[k];
  enum spmv_l2_warm mode = spmv_dev_matrix_warm_mode(d);
  /* The product the worker warms before: the first of a run for which
   * spmv_l2_warm_now says so (0: none within the longest run here). */
  int at = 0;
  for (int i = 0; i < ks[NK - 1] && at == 0; i++)
    if (spmv_l2_warm_now(mode, i, 1))
      at = i + 1;

  /* Warm-ups of both variants, then the result checked. */
  for (int r = 0; r < 3; r++) {
    run_once(d, dx, dy, 0, 1);
    run_once(d, dx, dy, 1, 1);
  }
  int64_t bad = check_y(A, dt, x, dy);
  for (int r = 0; r < reps; r++) {
    wu[r] = run_once(d, dx, dy, 1, 0) - flush_us;
  }
  w = spmv_median(wu, (size_t)reps);
  for (int q = 0; q < NK; q++) {
    for (int r = 0; r < reps; r++) {
      t[0][r] = run_once(d, dx, dy, 0, ks[q]) - flush_us;
      t[1][r] = run_once(d, dx, dy, 1, ks[q]) - flush_us;
      t[2][r] = run_once(d, dx, dy, at, ks[q]) - flush_us;
    }
    for (int v = 0; v < 3; v++)
      med[v][q] = spmv_median(t[v], (size_t)reps);
  }
  bad += check_y(A, dt, x, dy);
  printf("%s\t%s\t%s\t%.1f\t%s\t%.2f", name, spmv_dtype_name(dt), txt,
         (double)(total + (size_t)(A->rows + A->cols) * vs) / 1e6, mode_name[mode], w);
  for (int q = 0; q < NK; q++)
    printf("\t%.2f\t%.2f\t%+.2f\t%.2f\t%+.2f", med[0][q], med[1][q],
           med[1][q] - med[0][q], med[2][q], med[2][q] - med[0][q]);
  printf("\t%s\n", bad == 0 ? "ok" : "WRONG");
  fflush(stdout);
  if (bad != 0)
    fprintf(stderr, "bench_warm: %s %s %s: %lld rows out of tolerance\n", name,
            spmv_dtype_name(dt), txt, (long long)bad);
  cudaFree(dx);
  cudaFree(dy);
  free(xt);
  spmv_dev_matrix_free(d);
  spmv_layout_free(L);
}

int main(int argc, char **argv)
{
  const char *only = NULL, *cfgtext = "csr16 bs=128 tpr=8;csr-vector bs=128 tpr=8;"
                                      "sell bs=256 c=32 sigma=256;hyb bs=256 k=0;"
                                      "csr-scalar bs=256";
  struct spmv_config cfgs[MAX_CFGS];
  struct spmv_cusparse_handle *h = NULL;
  struct bench_suite s;
  struct spmv_error err;
  int reps = 31, dts = 3, ncfg = 0, ndev = 0, opt, l2 = 0;
  char buf[512], *tok, *save = NULL;

  while ((opt = getopt(argc, argv, "m:t:r:f:h")) != -1) {
    switch (opt) {
    case 'm': only = optarg; break;
    case 't': dts = strcmp(optarg, "f32") == 0 ? 2 : 1; break;
    case 'r': reps = atoi(optarg); break;
    case 'f': cfgtext = optarg; break;
    default:
      fprintf(stderr, "usage: bench_warm [-m NAMES] [-t f32|f64] [-r REPS] [-f CONFIGS]\n");
      return opt == 'h' ? 0 : 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "bench_warm: -r %d not in [1, %d]\n", reps, MAX_REPS);
    return 2;
  }
  snprintf(buf, sizeof buf, "%s", cfgtext);
  for (tok = strtok_r(buf, ";", &save); tok != NULL && ncfg < MAX_CFGS;
       tok = strtok_r(NULL, ";", &save))
    if (spmv_config_parse(tok, &cfgs[ncfg], &err) == 0)
      ncfg++;
    else {
      fprintf(stderr, "bench_warm: %s\n", err.msg);
      return 2;
    }
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    fprintf(stderr, "bench_warm: no GPU\n");
    return 77;
  }
  CK(cudaStreamCreate(&stream));
  CK(cudaEventCreate(&ev0));
  CK(cudaEventCreate(&ev1));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  flush_bytes = 2 * (size_t)l2;
  CK(cudaMalloc(&flush_buf, flush_bytes));
  if (spmv_cusparse_handle_new(stream, &h, &err) != 0) {
    fprintf(stderr, "bench_warm: %s\n", err.msg);
    return 1;
  }
  if (bench_suite_init(&s, BENCH_SUITE_PAPER, 0, only, NULL, &err) != 0) {
    fprintf(stderr, "bench_warm: %s\n", err.msg);
    return 1;
  }
  double fl[MAX_REPS];
  for (int r = 0; r < 3; r++)
    run_once(NULL, NULL, NULL, 0, 0);
  for (int r = 0; r < reps; r++)
    fl[r] = run_once(NULL, NULL, NULL, 0, 0);
  double flush_us = spmv_median(fl, (size_t)reps);
  {
    struct cudaDeviceProp p;
    time_t now = time(NULL);
    char date[32];
    cudaGetDeviceProperties(&p, 0);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# device %s, L2 %d MB; %s; %d runs each, interleaved, median; the flush "
           "(memset of %zu MB) %.2f us, taken off every time below\n",
           p.name, l2 >> 20, date, reps, flush_bytes >> 20, flush_us);
  }
  printf("# matrix\tdtype\tconfig\tworking_set_MB\twarm_mode\twarm_us");
  for (int q = 0; q < NK; q++)
    printf("\tk%d_plain_us\tk%d_warm_us\tk%d_diff_us\tk%d_worker_us\tk%d_worker_diff_us",
           ks[q], ks[q], ks[q], ks[q], ks[q]);
  printf("\tresult\n");
  for (size_t i = 0; i < s.n; i++) {
    struct spmv_csr *A = bench_suite_make(&s.e[i], NULL, &err);
    if (A == NULL) {
      fprintf(stderr, "bench_warm: %s: %s\n", s.e[i].name, err.msg);
      continue;
    }
    double *x = malloc((size_t)A->cols * sizeof *x);
    if (x == NULL) {
      fprintf(stderr, "bench_warm: out of memory\n");
      return 1;
    }
    gpu_random_vector(x, A->cols, 7 + i);
    for (int t = 0; t < 2; t++) {
      enum spmv_dtype dt = t == 0 ? SPMV_F64 : SPMV_F32;
      if (!(dts & (1 << t)))
        continue;
      for (int c = 0; c < ncfg; c++)
        one_config(s.e[i].name, A, dt, &cfgs[c], x, reps, h, flush_us);
    }
    free(x);
    spmv_csr_free(A);
  }
  bench_suite_fini(&s);
  spmv_cusparse_handle_free(h);
  cudaFree(flush_buf);
  cudaStreamDestroy(stream);
  return 0;
}
