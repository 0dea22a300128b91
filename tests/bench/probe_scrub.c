/*
 * probe_scrub.c: does device memory given back to the driver slow the
 * kernels that run right after it?  The driver scrubs memory it gets back
 * in the background, and a tuner's race frees a candidate's layout and
 * its conversion staging right before timing the next candidate.
 *
 * Times bench_bound's streaming read (bound_gpu.cu: 4-byte columns and
 * 8-byte values, as a CSR's entries) run by run, 200 runs back to back
 * between CUDA events, after each of: nothing; cudaFree of N MiB;
 * spmv_dev_free of N MiB into the pool that spmv_dev_pool_keep keeps;
 * spmv_dev_pool_trim of that pool.  Each case starts after a 500 ms pause
 * (the memory freed was written first), so its run 0 also pays the
 * clocks' rise after an idle host, as the baseline's does.
 *
 *   usage: probe_scrub [MILLION_ENTRIES] > table.md   (default 12: a
 *          large matrix's entries, far beyond the L2)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "bound_gpu.h"
#include "spmv_error.h"
#include "spmv_kernels.h"
#include "spmv_stats.h"

#define RUNS 200

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                   \
              cudaGetErrorString(e_));                                     \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

struct probe {
  int *col;
  double *val, *x, *part;
  long long nnz;
  int blocks;
  cudaEvent_t ev[RUNS + 1];
  double base;  /* the baseline's median of runs 4-199 */
};

/* Median of t[lo, hi). */
static double med(const double *t, int lo, int hi)
{
  double s[RUNS];
  memcpy(s, t + lo, sizeof *s * (size_t)(hi - lo));
  return spmv_median(s, (size_t)(hi - lo));
}

/* Times RUNS reads back to back and prints one table row. */
static void series(struct probe *p, const char *what)
{
  double t[RUNS];
  int slow = 0;

  for (int r = 0; r <= RUNS; r++) {
    CK(cudaEventRecord(p->ev[r], 0));
    if (r < RUNS)
      CK(bench_bound_launch(0, 1, p->col, p->val, p->x, p->nnz, p->blocks,
                            p->part, 0));
  }
  CK(cudaEventSynchronize(p->ev[RUNS]));
  for (int r = 0; r < RUNS; r++) {
    float ms;
    CK(cudaEventElapsedTime(&ms, p->ev[r], p->ev[r + 1]));
    t[r] = ms * 1000.0;
  }
  if (p->base == 0)
    p->base = med(t, 4, RUNS);
  for (int r = 1; r < RUNS; r++)
    slow += t[r] > 1.05 * p->base;
  printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %d |\n", what, t[0],
         med(t, 1, 4), med(t, 4, 20), med(t, 20, 100), med(t, 100, RUNS), slow);
  fflush(stdout);
}

/* Allocates mib MiB (kept in the pool when pooled), writes it, pauses,
 * frees it as named, then times. */
static void after_free(struct probe *p, size_t mib, int pooled)
{
  struct spmv_error err = {0};
  size_t bytes = mib << 20;
  void *q = NULL;
  char what[96];

  if (pooled) {
    if (spmv_dev_alloc(&q, bytes, "the probe", &err) != 0) {
      fprintf(stderr, "%s\n", err.msg);
      exit(1);
    }
  } else {
    CK(cudaMalloc(&q, bytes));
  }
  CK(cudaMemset(q, 1, bytes));
  CK(cudaDeviceSynchronize());
  usleep(500000);
  if (pooled)
    spmv_dev_free(q);
  else
    CK(cudaFree(q));
  snprintf(what, sizeof what, "%s of %zu MiB", pooled ? "spmv_dev_free (kept)" : "cudaFree", mib);
  series(p, what);
  if (pooled) {
    usleep(500000);
    size_t back = spmv_dev_pool_trim();
    snprintf(what, sizeof what, "spmv_dev_pool_trim (%zu MiB back)", back >> 20);
    series(p, what);
  }
}

int main(int argc, char **argv)
{
  static const size_t sizes[] = {160, 1024, 8192};
  struct spmv_error err = {0};
  struct probe p = {0};
  struct cudaDeviceProp prop;
  int dev = 0, cols = 1 << 20;

  p.nnz = (long long)((argc > 1 ? atof(argv[1]) : 12.0) * 1e6);
  if (p.nnz < 1) {
    fprintf(stderr, "usage: probe_scrub [MILLION_ENTRIES]\n");
    return 2;
  }
  if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
    fprintf(stderr, "probe_scrub: no CUDA device\n");
    return 77;
  }
  CK(cudaGetDeviceProperties(&prop, 0));
  p.blocks = bench_bound_blocks(prop.multiProcessorCount);
  if (spmv_dev_pool_keep(&err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  CK(cudaMalloc((void **)&p.col, (size_t)p.nnz * sizeof *p.col));
  CK(cudaMalloc((void **)&p.val, (size_t)p.nnz * sizeof *p.val));
  CK(cudaMalloc((void **)&p.x, (size_t)cols * sizeof *p.x));
  CK(cudaMalloc((void **)&p.part, (size_t)p.blocks * sizeof *p.part));
  /* Columns spread over x, values never zero. */
  {
    int *hc = malloc((size_t)p.nnz * sizeof *hc);
    double *hv = malloc((size_t)p.nnz * sizeof *hv);
    if (hc == NULL || hv == NULL)
      return 1;
    for (long long k = 0; k < p.nnz; k++) {
      hc[k] = (int)((k * 2654435761LL) % cols);
      hv[k] = 1.0 + (double)(k % 997) * 1e-3;
    }
    CK(cudaMemcpy(p.col, hc, (size_t)p.nnz * sizeof *hc, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p.val, hv, (size_t)p.nnz * sizeof *hv, cudaMemcpyHostToDevice));
    free(hc);
    free(hv);
    hv = malloc((size_t)cols * sizeof *hv);
    if (hv == NULL)
      return 1;
    for (int k = 0; k < cols; k++)
      hv[k] = 0.5 + (double)(k % 89) * 1e-2;
    CK(cudaMemcpy(p.x, hv, (size_t)cols * sizeof *hv, cudaMemcpyHostToDevice));
    free(hv);
  }
  for (int r = 0; r <= RUNS; r++)
    CK(cudaEventCreate(&p.ev[r]));
  printf("%s, %lld entries (%.0f MiB read a run), %d blocks; microseconds a run\n\n",
         prop.name, p.nnz, (double)p.nnz * 12 / (1 << 20), p.blocks);
  printf("| after | run 0 | runs 1-3 | 4-19 | 20-99 | 100-199 | runs > 1.05x base |\n");
  printf("|---|---|---|---|---|---|---|\n");
  usleep(500000);
  series(&p, "nothing (baseline)");
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    after_free(&p, sizes[i], 0);
    after_free(&p, sizes[i], 1);
  }
  usleep(500000);
  series(&p, "nothing (baseline again)");
  return 0;
}
