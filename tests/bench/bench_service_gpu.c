/* bench_service_gpu.c: bench_service's in-process side: the chosen kernel
 * timed with CUDA events, pinned copies, the cuSPARSE set-up, and CG
 * written with cuSPARSE and cuBLAS as NVIDIA's conjugateGradient sample
 * writes it. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
/* The legacy API's deprecation warnings are not ours. */
#define DISABLE_CUSPARSE_DEPRECATED
#include <cusparse.h>

#include "gpu_common.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "bench_clock.h"
#include "bench_service.h"

static cudaStream_t stream;
static struct spmv_dev_timer *timer;
static struct spmv_cusparse_handle *csh; /* spmv_dev_matrix_new's */
static cusparseHandle_t sp;              /* the plain cuSPARSE calls' */
static cublasHandle_t bl;
static cudaEvent_t *ev;
static void *flush_buf;
static size_t flush_bytes;
static int nreps;
static float *tms;

/* A CUDA, cuSPARSE or cuBLAS failure: a message naming the call, then -1. */
#define CKC(call)                                                            \
  do {                                                                       \
    cudaError_t e_ = (call);                                                 \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "bench_service: %s:%d: %s: %s\n", __FILE__, __LINE__, \
              #call, cudaGetErrorString(e_));                                \
      goto fail;                                                             \
    }                                                                        \
  } while (0)
#define CKS(call)                                                            \
  do {                                                                       \
    cusparseStatus_t s_ = (call);                                            \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                     \
      fprintf(stderr, "bench_service: %s:%d: %s: %s\n", __FILE__, __LINE__, \
              #call, cusparseGetErrorString(s_));                            \
      goto fail;                                                             \
    }                                                                        \
  } while (0)
#define CKB(call)                                                            \
  do {                                                                       \
    cublasStatus_t b_ = (call);                                              \
    if (b_ != CUBLAS_STATUS_SUCCESS) {                                       \
      fprintf(stderr, "bench_service: %s:%d: %s: cuBLAS status %d\n",       \
              __FILE__, __LINE__, #call, (int)b_);                           \
      goto fail;                                                             \
    }                                                                        \
  } while (0)

int bsg_init(int reps, char *device, size_t cap, char *versions, size_t vcap)
{
  struct cudaDeviceProp prop;
  char csv[32];
  int drv = 0, rt = 0, bv = 0;
  void *s = NULL;
  int rc = gpu_probe_setup("bench_service", device, cap, &s, &timer, &csh);

  if (rc != 0)
    return rc;
  stream = s;
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
  CKS(cusparseCreate(&sp));
  CKS(cusparseSetStream(sp, stream));
  CKB(cublasCreate(&bl));
  CKB(cublasSetStream(bl, stream));
  CKB(cublasSetPointerMode(bl, CUBLAS_POINTER_MODE_HOST));
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  cublasGetVersion(bl, &bv);
  spmv_cusparse_version(csv, sizeof csv);
  snprintf(device + strlen(device), cap - strlen(device),
           " (%d SMs, L2 %d MB, %.0f GB)", prop.multiProcessorCount,
           prop.l2CacheSize >> 20, (double)prop.totalGlobalMem / 1e9);
  snprintf(versions, vcap, "CUDA driver API %d, runtime %d, cuSPARSE %s, cuBLAS %d",
           drv, rt, csv, bv);
  return 0;
fail:
  return 1;
}

void bsg_fini(void)
{
  if (bl)
    cublasDestroy(bl);
  if (sp)
    cusparseDestroy(sp);
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
  CKC(cudaStreamSynchronize(stream));
  for (int r = 0; r < nreps; r++)
    CKC(cudaEventElapsedTime(&tms[r], ev[2 * r], ev[2 * r + 1]));
  return 0;
fail:
  return -1;
}

void *bs_typed(const double *x, int64_t n, enum spmv_dtype dt)
{
  size_t es = spmv_dtype_size(dt);
  void *t = malloc((size_t)(n > 0 ? n : 1) * es);

  for (int64_t i = 0; t && i < n; i++) {
    if (dt == SPMV_F32)
      ((float *)t)[i] = (float)x[i];
    else
      ((double *)t)[i] = x[i];
  }
  return t;
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
  void *xt = bs_typed(x, A->cols, dt), *hy = malloc((size_t)A->rows * es + 1);
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
  bad = gpu_product_check(A, dt, NULL, d, dx, dy, hy, stream, ref, mag, &first,
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
      if (spmv_dev_spmv(d, 1.0, dx, 0.0, dy, stream, &err) < 0)
        goto kfail;
    for (int r = 0; r < nreps; r++) {
      if (flush)
        CKC(cudaMemsetAsync(flush_buf, r & 0xff, flush_bytes, stream));
      CKC(cudaEventRecord(ev[2 * r], stream));
      if (spmv_dev_spmv(d, 1.0, dx, 0.0, dy, stream, &err) < 0)
        goto kfail;
      CKC(cudaEventRecord(ev[2 * r + 1], stream));
    }
    if (read_events() < 0)
      goto out;
    *(flush ? flushed_us : us) = median_ms_us(nreps);
  }
  /* The last timed product must still be right. */
  bad = gpu_product_check(A, dt, NULL, d, dx, dy, hy, stream, ref, mag, &first,
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
        CKC(cudaEventRecord(ev[2 * r], stream));
      if (dir)
        CKC(cudaMemcpyAsync(h, d, b, cudaMemcpyDeviceToHost, stream));
      else
        CKC(cudaMemcpyAsync(d, h, b, cudaMemcpyHostToDevice, stream));
      if (r >= 0)
        CKC(cudaEventRecord(ev[2 * r + 1], stream));
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

/* A CSR resident for cuSPARSE, with x and y for its descriptors. */
struct csd {
  int *rp, *ci;
  void *v, *x, *y, *buf;
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t dx, dy;
};

static void csd_free(struct csd *c)
{
  if (c->A)
    cusparseDestroySpMat(c->A);
  if (c->dx)
    cusparseDestroyDnVec(c->dx);
  if (c->dy)
    cusparseDestroyDnVec(c->dy);
  cudaFree(c->rp);
  cudaFree(c->ci);
  cudaFree(c->v);
  cudaFree(c->x);
  cudaFree(c->y);
  cudaFree(c->buf);
  memset(c, 0, sizeof *c);
}

/* The set-up that bsg_cusparse_setup times: rp32 and val are A's row
 * offsets and values already narrowed (host, pageable). */
static int csd_new(const struct spmv_csr *A, enum spmv_dtype dt,
                   const int32_t *rp32, const void *val, struct csd *c)
{
  cudaDataType t = dt == SPMV_F32 ? CUDA_R_32F : CUDA_R_64F;
  size_t es = spmv_dtype_size(dt), bytes = 0;
  double one = 1.0, zero = 0.0;
  float one32 = 1.0f, zero32 = 0.0f;
  const void *pone = dt == SPMV_F32 ? (void *)&one32 : (void *)&one;
  const void *pzero = dt == SPMV_F32 ? (void *)&zero32 : (void *)&zero;

  memset(c, 0, sizeof *c);
  CKC(cudaMalloc((void **)&c->rp, (size_t)(A->rows + 1) * 4));
  CKC(cudaMalloc((void **)&c->ci, (size_t)A->nnz * 4 + 1));
  CKC(cudaMalloc(&c->v, (size_t)A->nnz * es + 1));
  CKC(cudaMalloc(&c->x, (size_t)A->cols * es + 1));
  CKC(cudaMalloc(&c->y, (size_t)A->rows * es + 1));
  CKC(cudaMemcpy(c->rp, rp32, (size_t)(A->rows + 1) * 4, cudaMemcpyHostToDevice));
  CKC(cudaMemcpy(c->ci, A->col_idx, (size_t)A->nnz * 4, cudaMemcpyHostToDevice));
  CKC(cudaMemcpy(c->v, val, (size_t)A->nnz * es, cudaMemcpyHostToDevice));
  CKS(cusparseCreateCsr(&c->A, A->rows, A->cols, A->nnz, c->rp, c->ci, c->v,
                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_BASE_ZERO, t));
  CKS(cusparseCreateDnVec(&c->dx, A->cols, c->x, t));
  CKS(cusparseCreateDnVec(&c->dy, A->rows, c->y, t));
  CKS(cusparseSpMV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, pone, c->A,
                              c->dx, pzero, c->dy, t, CUSPARSE_SPMV_ALG_DEFAULT,
                              &bytes));
  CKC(cudaMalloc(&c->buf, bytes + 1));
  CKS(cusparseSpMV_preprocess(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, pone, c->A,
                              c->dx, pzero, c->dy, t, CUSPARSE_SPMV_ALG_DEFAULT,
                              c->buf));
  CKC(cudaDeviceSynchronize());
  return 0;
fail:
  csd_free(c);
  return -1;
}

/* A's offsets in 32 bits and its values in dt (new host arrays). */
static int narrow(const struct spmv_csr *A, enum spmv_dtype dt, int32_t **rp,
                  void **val)
{
  *rp = malloc((size_t)(A->rows + 1) * sizeof **rp);
  *val = bs_typed(A->val, A->nnz, dt);
  if (!*rp || !*val || A->nnz >= INT32_MAX) {
    fprintf(stderr, "bench_service: cannot narrow the CSR for cuSPARSE\n");
    return -1;
  }
  for (int64_t i = 0; i <= A->rows; i++)
    (*rp)[i] = (int32_t)A->row_ptr[i];
  return 0;
}

int bsg_cusparse_setup(const struct spmv_csr *A, enum spmv_dtype dt, double *ms)
{
  double t[3], t0;
  int32_t *rp = NULL;
  void *val = NULL;
  struct csd c;
  int rc = -1;

  if (narrow(A, dt, &rp, &val) < 0)
    goto out;
  for (int i = 0; i < 3; i++) {
    CKC(cudaDeviceSynchronize());
    t0 = bench_now_s();
    if (csd_new(A, dt, rp, val, &c) < 0)
      goto out;
    t[i] = 1e3 * (bench_now_s() - t0);
    csd_free(&c);
  }
  *ms = spmv_median(t, 3);
  rc = 0;
fail:
out:
  free(rp);
  free(val);
  return rc;
}

/* *out = u . v in dt (pointer mode host: the call waits for the result). */
static int dot(enum spmv_dtype dt, int n, const void *u, const void *v,
               double *out)
{
  if (dt == SPMV_F32) {
    float f = 0;
    CKB(cublasSdot(bl, n, u, 1, v, 1, &f));
    *out = f;
  } else {
    CKB(cublasDdot(bl, n, u, 1, v, 1, out));
  }
  return 0;
fail:
  return -1;
}

/* y += a x in dt. */
static int axpy(enum spmv_dtype dt, int n, double a, const void *x, void *y)
{
  if (dt == SPMV_F32) {
    float f = (float)a;
    CKB(cublasSaxpy(bl, n, &f, x, 1, y, 1));
  } else {
    CKB(cublasDaxpy(bl, n, &a, x, 1, y, 1));
  }
  return 0;
fail:
  return -1;
}

/* x *= a in dt. */
static int scal(enum spmv_dtype dt, int n, double a, void *x)
{
  if (dt == SPMV_F32) {
    float f = (float)a;
    CKB(cublasSscal(bl, n, &f, x, 1));
  } else {
    CKB(cublasDscal(bl, n, &a, x, 1));
  }
  return 0;
fail:
  return -1;
}

int bsg_cg(const struct spmv_csr *A, enum spmv_dtype dt, const double *b,
           int blocks, double *res1, double *us)
{
  cudaDataType t = dt == SPMV_F32 ? CUDA_R_32F : CUDA_R_64F;
  size_t es = spmv_dtype_size(dt), vb = (size_t)A->rows * es;
  double one = 1.0, zero = 0.0, rho, pq, rr, t0, *per = NULL;
  float one32 = 1.0f, zero32 = 0.0f;
  const void *pone = dt == SPMV_F32 ? (void *)&one32 : (void *)&one;
  const void *pzero = dt == SPMV_F32 ? (void *)&zero32 : (void *)&zero;
  int n = (int)A->rows, rc = -1;
  int32_t *rp = NULL;
  void *val = NULL, *bt = bs_typed(b, A->rows, dt), *db = NULL, *x = NULL,
       *r = NULL, *p, *q;
  struct csd c = {0};

  per = malloc(sizeof *per * (size_t)(blocks + 1));
  if (!per || !bt || narrow(A, dt, &rp, &val) < 0 ||
      csd_new(A, dt, rp, val, &c) < 0)
    goto out;
  p = c.x; /* the descriptors' vectors: q = A p */
  q = c.y;
  CKC(cudaMalloc(&db, vb + 1));
  CKC(cudaMalloc(&x, vb + 1));
  CKC(cudaMalloc(&r, vb + 1));
  CKC(cudaMemcpy(db, bt, vb, cudaMemcpyHostToDevice));
  /* Block 0 is the warm-up and the check; blocks 1 .. blocks are timed. */
  for (int k = 0; k <= blocks; k++) {
    CKC(cudaMemsetAsync(x, 0, vb, stream));
    CKC(cudaMemcpyAsync(r, db, vb, cudaMemcpyDeviceToDevice, stream));
    CKC(cudaMemcpyAsync(p, db, vb, cudaMemcpyDeviceToDevice, stream));
    if (dot(dt, n, r, r, &rho) < 0)
      goto out;
    CKC(cudaStreamSynchronize(stream));
    t0 = bench_now_us();
    for (int it = 0; it < BS_CG_BLOCK; it++) {
      CKS(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, pone, c.A, c.dx,
                       pzero, c.dy, t, CUSPARSE_SPMV_ALG_DEFAULT, c.buf));
      if (dot(dt, n, p, q, &pq) < 0 || axpy(dt, n, rho / pq, p, x) < 0 ||
          axpy(dt, n, -rho / pq, q, r) < 0 || dot(dt, n, r, r, &rr) < 0 ||
          scal(dt, n, rr / rho, p) < 0 || axpy(dt, n, 1.0, r, p) < 0)
        goto out;
      rho = rr;
      if (k == 0 && it + 1 == BS_CG_CHECK)
        *res1 = sqrt(rho);
    }
    CKC(cudaStreamSynchronize(stream));
    per[k] = (bench_now_us() - t0) / BS_CG_BLOCK;
  }
  *us = spmv_median(per + 1, (size_t)blocks);
  rc = 0;
fail:
out:
  csd_free(&c);
  cudaFree(db);
  cudaFree(x);
  cudaFree(r);
  free(rp);
  free(val);
  free(bt);
  free(per);
  return rc;
}
