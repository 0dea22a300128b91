/* bench_load.c: where loading a matrix onto the GPU spends its time. */
/*
 * For each matrix of the benchmark suite, each value type and one
 * configuration per format (gpu_format_samples): the host conversion to
 * the configuration's layout (spmv_layout_new), its copy to the
 * device (spmv_dev_matrix_new: allocations, copies from pageable memory,
 * cuSPARSE's preparation for the cusparse format); for the formats of
 * spmv_layout_shell_ok the same through the device conversion the cuda
 * worker uses (spmv_layout_new_shell, spmv_dev_matrix_new_csr); and, as
 * the floor of any conversion done on the device, the copy of the CSR
 * arrays themselves (row pointers, columns, double values) from pageable
 * memory and from the same memory registered with cudaHostRegister, and
 * what registering and unregistering those arrays costs once; and the
 * device conversion's load again with the CSR registered, as the cuda
 * worker registers it for the loads of a tune or a placement; and, as a
 * race loads its candidates, the host's shell and the device's completion
 * from the CSR staged on the device once, each timed on its own.  The
 * device's pool keeps freed memory, as the cuda worker's does.
 * Wall-clock times around synchronised calls, median of -r repetitions,
 * one process.  A benchmark, never run by make check.
 *   usage: bench_load [-m NAMES] [-t f32|f64] [-r REPS] [-f FORMATS]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "bench_clock.h"
#include "gpu_common.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "suite.h"

#define MAX_REPS 15


/* Milliseconds to copy A's CSR arrays to the device buffers d[3]. */
static double csr_copy_ms(const struct spmv_csr *A, void *d[3])
{
  double t0 = bench_now_s();
  cudaMemcpy(d[0], A->row_ptr, (size_t)(A->rows + 1) * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(d[1], A->col_idx, (size_t)A->nnz * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d[2], A->val, (size_t)A->nnz * 8, cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();
  return 1e3 * (bench_now_s() - t0);
}

/* Registers A's arrays with the device; 1 when all three are. */
static int csr_register(const struct spmv_csr *A)
{
  int ok = cudaHostRegister(A->row_ptr, (size_t)(A->rows + 1) * 8, 0) == cudaSuccess;
  ok &= cudaHostRegister(A->col_idx, (size_t)A->nnz * 4, 0) == cudaSuccess;
  ok &= cudaHostRegister(A->val, (size_t)A->nnz * 8, 0) == cudaSuccess;
  if (!ok) {
    cudaHostUnregister(A->row_ptr);
    cudaHostUnregister(A->col_idx);
    cudaHostUnregister(A->val);
    cudaGetLastError();
  }
  return ok;
}

static void csr_unregister(const struct spmv_csr *A)
{
  cudaHostUnregister(A->row_ptr);
  cudaHostUnregister(A->col_idx);
  cudaHostUnregister(A->val);
  cudaGetLastError();
}

/* The CSR copy's floor, pageable and registered, and what registering
 * and unregistering the arrays cost once; -1 where it failed. */
static void csr_floor(const struct spmv_csr *A, int reps, double *pageable,
                      double *pinned, double *reg_ms)
{
  void *d[3] = {NULL, NULL, NULL};
  double t[MAX_REPS], t0;
  int r, reg;

  *pageable = *pinned = *reg_ms = -1;
  if (cudaMalloc(&d[0], (size_t)(A->rows + 1) * 8) != cudaSuccess ||
      cudaMalloc(&d[1], (size_t)A->nnz * 4 + 4) != cudaSuccess ||
      cudaMalloc(&d[2], (size_t)A->nnz * 8 + 8) != cudaSuccess)
    goto out;
  for (r = 0; r < reps; r++)
    t[r] = csr_copy_ms(A, d);
  *pageable = spmv_median(t, (size_t)reps);
  t0 = bench_now_s();
  reg = csr_register(A);
  *reg_ms = 1e3 * (bench_now_s() - t0);
  if (reg) {
    for (r = 0; r < reps; r++)
      t[r] = csr_copy_ms(A, d);
    *pinned = spmv_median(t, (size_t)reps);
    t0 = bench_now_s();
    csr_unregister(A);
    *reg_ms += 1e3 * (bench_now_s() - t0);
  } else {
    *reg_ms = -1;
  }
out:
  cudaGetLastError();
  for (r = 0; r < 3; r++)
    cudaFree(d[r]);
}

/* Whether cfg's format is in the comma-separated list (NULL: all). */
static int wanted(const struct spmv_config *cfg, const char *list)
{
  char copy[512], *tok, *save = NULL;

  if (list == NULL)
    return 1;
  snprintf(copy, sizeof copy, "%s", list);
  for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (strcmp(tok, spmv_format_name(cfg->format)) == 0)
      return 1;
  return 0;
}

/* Median milliseconds of cfg's load through the device conversion the
 * cuda worker uses, -1 when it failed: the host's shell
 * (spmv_layout_new_shell) and its completion on the device, from S (the
 * CSR staged there once, as for a race's candidates) or from A when S is
 * NULL; each half's own median in *host_ms and *dev_ms where not NULL. */
static double shell_load_ms(const char *name, const struct spmv_csr *A,
                            enum spmv_dtype t, const struct spmv_config *cfg,
                            const struct spmv_limits *lim,
                            struct spmv_cusparse_handle *h,
                            const struct spmv_dev_csr *S, int reps,
                            double *host_ms, double *dev_ms)
{
  double ms[MAX_REPS], hm[MAX_REPS], dm[MAX_REPS];
  struct spmv_error err = {0};
  char txt[96];
  int r, rc = 0;

  for (r = 0; r < reps && rc == 0; r++) {
    struct spmv_layout *L = NULL;
    struct spmv_dev_matrix *d = NULL;
    double t0 = bench_now_s(), t1;
    rc = spmv_layout_new_shell(A, t, cfg, lim, &L, &err);
    t1 = bench_now_s();
    if (rc == 0)
      rc = spmv_dev_matrix_new_staged(L, A, S, h, &d, &err);
    cudaDeviceSynchronize();
    ms[r] = 1e3 * (bench_now_s() - t0);
    hm[r] = 1e3 * (t1 - t0);
    dm[r] = ms[r] - hm[r];
    spmv_dev_matrix_free(d);
    spmv_layout_free(L);
  }
  if (host_ms)
    *host_ms = rc == 0 ? spmv_median(hm, (size_t)reps) : -1;
  if (dev_ms)
    *dev_ms = rc == 0 ? spmv_median(dm, (size_t)reps) : -1;
  if (rc == 0)
    return spmv_median(ms, (size_t)reps);
  spmv_config_format(cfg, txt, sizeof txt);
  fprintf(stderr, "bench_load: %s %s%s: %s\n", name, txt,
          S ? " from the staged CSR" : "", err.msg);
  return -1;
}

static void one_matrix(const char *name, const struct spmv_csr *A, int dts,
                       int reps, const char *formats,
                       struct spmv_cusparse_handle *h)
{
  struct spmv_limits lim = {(size_t)16 << 30, 4096, 40.0};
  const struct spmv_config *configs;
  int nconfigs = gpu_format_samples(&configs);
  double pageable, pinned, reg_ms;

  struct spmv_dev_csr *staged = NULL;
  struct spmv_error serr = {0};

  csr_floor(A, reps, &pageable, &pinned, &reg_ms);
  if (spmv_dev_csr_new(A, &staged, &serr) != 0)
    fprintf(stderr, "bench_load: %s: staging the CSR: %s\n", name, serr.msg);
  for (int dt = 0; dt < 2; dt++) {
    enum spmv_dtype t = dt ? SPMV_F32 : SPMV_F64;
    if (!(dts & (1 << dt)))
      continue;
    for (int c = 0; c < nconfigs; c++) {
      double conv[MAX_REPS], up[MAX_REPS];
      char txt[96];
      int r, rc = 0;
      struct spmv_error err = {0};

      if (!wanted(&configs[c], formats))
        continue;
      spmv_config_format(&configs[c], txt, sizeof txt);
      for (r = 0; r < reps && rc == 0; r++) {
        struct spmv_layout *L = NULL;
        struct spmv_dev_matrix *d = NULL;
        double t0 = bench_now_s(), t1;
        rc = spmv_layout_new(A, t, &configs[c], &lim, &L, &err);
        t1 = bench_now_s();
        if (rc == 0)
          rc = spmv_dev_matrix_new(L, h, &d, &err);
        cudaDeviceSynchronize();
        conv[r] = 1e3 * (t1 - t0);
        up[r] = 1e3 * (bench_now_s() - t1);
        spmv_dev_matrix_free(d);
        spmv_layout_free(L);
      }
      if (rc != 0) {
        printf("%s\t%s\t%s\tskipped: %s\n", name, spmv_dtype_name(t), txt, err.msg);
        continue;
      }
      double cm = spmv_median(conv, (size_t)reps);
      double um = spmv_median(up, (size_t)reps), sm = -1, smr = -1;
      double shm = -1, sdm = -1;
      if (spmv_layout_shell_ok(configs[c].format)) {
        sm = shell_load_ms(name, A, t, &configs[c], &lim, h, NULL, reps, NULL, NULL);
        if (csr_register(A)) {  /* as the cuda worker does for its loads */
          smr = shell_load_ms(name, A, t, &configs[c], &lim, h, NULL, reps, NULL, NULL);
          csr_unregister(A);
        }
        if (staged)
          shell_load_ms(name, A, t, &configs[c], &lim, h, staged, reps, &shm, &sdm);
      }
      printf("%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n",
             name, spmv_dtype_name(t), txt, cm, um, cm + um, sm, pageable,
             pinned, pinned > 0 ? (cm + um) / pinned : 0.0, reg_ms, smr, shm, sdm);
      fflush(stdout);
    }
  }
  spmv_dev_csr_free(staged);
}

int main(int argc, char **argv)
{
  const char *only = "random_2M_x32,maceconlike_x16,cant_x16,dc1like_4M";
  const char *formats = NULL;
  int dts = 3, reps = 5, opt;
  struct bench_suite s;
  struct spmv_error err;
  struct spmv_cusparse_handle *h = NULL;
  cudaStream_t stream;
  int ndev = 0;

  while ((opt = getopt(argc, argv, "m:t:r:f:h")) != -1) {
    switch (opt) {
    case 'm': only = optarg; break;
    case 't': dts = strcmp(optarg, "f32") == 0 ? 2 : 1; break;
    case 'r': reps = atoi(optarg); break;
    case 'f': formats = optarg; break;
    default:
      fprintf(stderr, "usage: bench_load [-m NAMES] [-t f32|f64] [-r REPS] [-f FORMATS]\n");
      return opt == 'h' ? 0 : 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "bench_load: -r %d not in [1, %d]\n", reps, MAX_REPS);
    return 2;
  }
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    fprintf(stderr, "bench_load: no GPU\n");
    return 77;
  }
  /* The pool keeps what is freed, as in the cuda worker: each load then
   * reuses the last one's memory rather than mapping fresh memory. */
  if (spmv_dev_pool_keep(&err) != 0 || cudaStreamCreate(&stream) != cudaSuccess ||
      spmv_cusparse_handle_new(stream, &h, &err) != 0) {
    fprintf(stderr, "bench_load: cannot set up the GPU\n");
    return 1;
  }
  if (bench_suite_init(&s, BENCH_SUITE_LARGE, 0, only, NULL, &err) != 0) {
    fprintf(stderr, "bench_load: %s\n", err.msg);
    return 1;
  }
  {
    struct cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("# device %s; %ld host cores; %d repetitions, median; times in ms\n",
           p.name, sysconf(_SC_NPROCESSORS_ONLN), reps);
  }
  printf("# matrix\tdtype\tconfig\tconvert_ms\tupload_ms\tload_ms\t"
         "device_conversion_load_ms (-1: none)\tcsr_copy_pageable_ms\t"
         "csr_copy_registered_ms\tload/registered\t"
         "register_unregister_ms\tdevice_conversion_registered_ms\t"
         "staged: shell_host_ms\tstaged: device_completion_ms\n");
  for (size_t i = 0; i < s.n; i++) {
    struct spmv_csr *A = bench_suite_make(&s.e[i], NULL, &err);
    if (A == NULL) {
      fprintf(stderr, "bench_load: %s: %s\n", s.e[i].name, err.msg);
      continue;
    }
    one_matrix(s.e[i].name, A, dts, reps, formats, h);
    spmv_csr_free(A);
  }
  bench_suite_fini(&s);
  spmv_cusparse_handle_free(h);
  cudaStreamDestroy(stream);
  return 0;
}
