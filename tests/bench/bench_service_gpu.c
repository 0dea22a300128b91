/* bench_service_gpu.c: bench_service's in-process side: the chosen kernel
 * timed with CUDA events, pinned copies, the cuSPARSE set-up, and CG
 * written with cuSPARSE and cuBLAS as NVIDIA's conjugateGradient sample
 * writes it. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "bench_clock.h"
#include "bench_cusparse.h"
#include "bench_service.h"
#include "bench_svc.h"

static struct spmv_dev_timer *timer;
static struct spmv_cusparse_handle *csh; /* spmv_dev_matrix_new's */
static cudaEvent_t *ev;
static void *flush_buf;
static size_t flush_bytes;
static int nreps;
static float *tms;

int bsg_init(int reps, char *device, size_t cap, char *versions, size_t vcap)
{
  struct cudaDeviceProp prop;
  int rc = bcs_init("bench_service", device, cap, versions, vcap, &timer, &csh);

  if (rc != 0)
    return rc;
  nreps = reps;
  ev = calloc(2 * (size_t)reps, sizeof *ev);
  tms = calloc((size_t)reps, sizeof *tms);
  if (!ev || !tms)
    return 1;
  for (int i = 0; i < 2 * reps; i++)
    CKC(cudaEventCreate(&ev[i]));
  CKC(cudaGetDeviceProperties(&prop, 0));
  flush_bytes = 2 * (size_t)prop.l2CacheSize;
  CKC(cudaMalloc(&flush_buf, flush_bytes));
  return 0;
fail:
  return 1;
}

void bsg_fini(void)
{
  bcs_fini();
  spmv_cusparse_handle_free(csh);
  spmv_dev_timer_free(timer);
  cudaFree(flush_buf);
  for (int i = 0; ev && i < 2 * nreps; i++)
    cudaEventDestroy(ev[i]);
  free(ev);
  free(tms);
}

static double median_ms_us(int n)
{
  double *d = malloc(sizeof *d * (size_t)n), m;

  for (int i = 0; i < n; i++)
    d[i] = 1e3 * (double)tms[i];
  m = spmv_median(d, (size_t)n);
  free(d);
  return m;
}

/* The elapsed times of the nreps event pairs into tms. */
static int read_events(void)
{
  CKC(cudaStreamSynchronize(bcs_stream));
  for (int r = 0; r < nreps; r++)
    CKC(cudaEventElapsedTime(&tms[r], ev[2 * r], ev[2 * r + 1]));
  return 0;
fail:
  return -1;
}

int bsg_kernel(const struct spmv_csr *A, enum spmv_dtype dt, const char *config,
               const double *x, const double *ref, const double *mag,
               double *us, double *flushed_us)
{
  struct spmv_limits lim = { (size_t)24 << 30, 4096, 20 };
  struct spmv_error err = {0};
  struct spmv_config cfg;
  struct spmv_layout *L = NULL;
  struct spmv_dev_matrix *d = NULL;
  size_t es = spmv_dtype_size(dt);
  void *xt = bench_typed(x, A->cols, dt), *hy = malloc((size_t)A->rows * es + 1);
  void *dx = NULL, *dy = NULL;
  int64_t bad, first;
  int rc = -1;

  if (!xt || !hy)
    goto out;
  if (spmv_config_parse(config, &cfg, &err) < 0 ||
      spmv_layout_new(A, dt, &cfg, &lim, &L, &err) < 0 ||
      spmv_dev_matrix_new(L, csh, &d, &err) < 0) {
    fprintf(stderr, "bench_service: in-process \"%s\": %s\n", config, err.msg);
    goto out;
  }
  L = spmv_layout_free(L);
  CKC(cudaMalloc(&dx, (size_t)A->cols * es + 1));
  CKC(cudaMalloc(&dy, (size_t)A->rows * es + 1));
  CKC(cudaMemcpy(dx, xt, (size_t)A->cols * es, cudaMemcpyHostToDevice));
  bad = gpu_product_check(A, dt, NULL, d, dx, dy, hy, bcs_stream, ref, mag, &first,
                          &err);
  if (bad < 0) {
    fprintf(stderr, "bench_service: in-process \"%s\": %s\n", config, err.msg);
    goto out;
  }
  if (bad > 0) {
    fprintf(stderr, "FAIL: in-process %s: %lld rows off the reference, first "
            "row %lld\n", config, (long long)bad, (long long)first);
    rc = 1;
    goto out;
  }
  for (int flush = 0; flush < 2; flush++) {
    for (int i = 0; i < 3; i++)
      if (spmv_dev_spmv(d, 1.0, dx, 0.0, dy, bcs_stream, &err) < 0)
        goto kfail;
    for (int r = 0; r < nreps; r++) {
      if (flush)
        CKC(cudaMemsetAsync(flush_buf, r & 0xff, flush_bytes, bcs_stream));
      CKC(cudaEventRecord(ev[2 * r], bcs_stream));
      if (spmv_dev_spmv(d, 1.0, dx, 0.0, dy, bcs_stream, &err) < 0)
        goto kfail;
      CKC(cudaEventRecord(ev[2 * r + 1], bcs_stream));
    }
    if (read_events() < 0)
      goto out;
    *(flush ? flushed_us : us) = median_ms_us(nreps);
  }
  /* The last timed product must still be right. */
  bad = gpu_product_check(A, dt, NULL, d, dx, dy, hy, bcs_stream, ref, mag, &first,
                          &err);
  if (bad != 0) {
    fprintf(stderr, "FAIL: in-process %s after timing: %lld rows off\n", config,
            (long long)bad);
    rc = 1;
    goto out;
  }
  rc = 0;
  goto out;
kfail:
  fprintf(stderr, "bench_service: in-process \"%s\": %s\n", config, err.msg);
  goto out;
fail:
out:
  spmv_layout_free(L);
  spmv_dev_matrix_free(d);
  cudaFree(dx);
  cudaFree(dy);
  free(xt);
  free(hy);
  return rc;
}

int bsg_copies(size_t h2d, size_t d2h, double *h2d_us, double *d2h_us)
{
  size_t n = h2d > d2h ? h2d : d2h;
  void *h = NULL, *d = NULL;
  int rc = -1;

  CKC(cudaMallocHost(&h, n + 1));
  CKC(cudaMalloc(&d, n + 1));
  memset(h, 0x3c, n);
  for (int dir = 0; dir < 2; dir++) {
    size_t b = dir ? d2h : h2d;
    for (int r = -3; r < nreps; r++) {
      if (r >= 0)
        CKC(cudaEventRecord(ev[2 * r], bcs_stream));
      if (dir)
        CKC(cudaMemcpyAsync(h, d, b, cudaMemcpyDeviceToHost, bcs_stream));
      else
        CKC(cudaMemcpyAsync(d, h, b, cudaMemcpyHostToDevice, bcs_stream));
      if (r >= 0)
        CKC(cudaEventRecord(ev[2 * r + 1], bcs_stream));
    }
    if (read_events() < 0)
      goto out;
    *(dir ? d2h_us : h2d_us) = median_ms_us(nreps);
  }
  rc = 0;
fail:
out:
  cudaFreeHost(h);
  cudaFree(d);
  return rc;
}

int bsg_cusparse_setup(const struct spmv_csr *A, enum spmv_dtype dt, double *ms)
{
  double t[3], t0;
  int32_t *rp = NULL;
  void *val = NULL;
  struct bcs_csr c;
  int rc = -1;

  if (bcs_narrow(A, dt, &rp, &val) < 0)
    goto out;
  for (int i = 0; i < 3; i++) {
    CKC(cudaDeviceSynchronize());
    t0 = bench_now_s();
    if (bcs_csr_new(A, dt, rp, val, &c) < 0)
      goto out;
    t[i] = 1e3 * (bench_now_s() - t0);
    bcs_csr_free(&c);
  }
  *ms = spmv_median(t, 3);
  rc = 0;
fail:
out:
  free(rp);
  free(val);
  return rc;
}

int bsg_cg(const struct spmv_csr *A, enum spmv_dtype dt, const double *b,
           int blocks, double *res1, double *us)
{
  size_t es = spmv_dtype_size(dt), vb = (size_t)A->rows * es;
  double rho, pq, rr, t0, *per = NULL;
  int n = (int)A->rows, rc = -1;
  int32_t *rp = NULL;
  void *val = NULL, *bt = bench_typed(b, A->rows, dt), *db = NULL, *x = NULL,
       *r = NULL, *p, *q;
  struct bcs_csr c = {0};

  per = malloc(sizeof *per * (size_t)(blocks + 1));
  if (!per || !bt || bcs_narrow(A, dt, &rp, &val) < 0 ||
      bcs_csr_new(A, dt, rp, val, &c) < 0)
    goto out;
  p = c.x; /* the descriptors' vectors: q = A p */
  q = c.y;
  CKC(cudaMalloc(&db, vb + 1));
  CKC(cudaMalloc(&x, vb + 1));
  CKC(cudaMalloc(&r, vb + 1));
  CKC(cudaMemcpy(db, bt, vb, cudaMemcpyHostToDevice));
  /* Block 0 is the warm-up and the check; blocks 1 .. blocks are timed. */
  for (int k = 0; k <= blocks; k++) {
    CKC(cudaMemsetAsync(x, 0, vb, bcs_stream));
    CKC(cudaMemcpyAsync(r, db, vb, cudaMemcpyDeviceToDevice, bcs_stream));
    CKC(cudaMemcpyAsync(p, db, vb, cudaMemcpyDeviceToDevice, bcs_stream));
    if (bcs_dot(dt, n, r, r, &rho) < 0)
      goto out;
    CKC(cudaStreamSynchronize(bcs_stream));
    t0 = bench_now_us();
    for (int it = 0; it < BS_CG_BLOCK; it++) {
      if (bcs_spmv(&c, 1.0, c.dx, 0.0, c.dy) < 0 ||
          bcs_dot(dt, n, p, q, &pq) < 0 ||
          bcs_axpy(dt, n, rho / pq, p, x) < 0 ||
          bcs_axpy(dt, n, -rho / pq, q, r) < 0 ||
          bcs_dot(dt, n, r, r, &rr) < 0 || bcs_scal(dt, n, rr / rho, p) < 0 ||
          bcs_axpy(dt, n, 1.0, r, p) < 0)
        goto out;
      rho = rr;
      if (k == 0 && it + 1 == BS_CG_CHECK)
        *res1 = sqrt(rho);
    }
    CKC(cudaStreamSynchronize(bcs_stream));
    per[k] = (bench_now_us() - t0) / BS_CG_BLOCK;
  }
  *us = spmv_median(per + 1, (size_t)blocks);
  rc = 0;
fail:
out:
  bcs_csr_free(&c);
  cudaFree(db);
  cudaFree(x);
  cudaFree(r);
  free(rp);
  free(val);
  free(bt);
  free(per);
  return rc;
}
