/* bench_cusparse.c: the in-process cuSPARSE and cuBLAS pieces that
 * bench_service and bench_solve share. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "bench_cusparse.h"
#include "bench_svc.h"

cudaStream_t bcs_stream;
cusparseHandle_t bcs_sp;
cublasHandle_t bcs_bl;
static struct spmv_dev_timer *own_tm;
static struct spmv_cusparse_handle *own_csh;

int bcs_init(const char *prog, char *device, size_t cap, char *versions,
             size_t vcap, struct spmv_dev_timer **tm,
             struct spmv_cusparse_handle **csh)
{
  struct cudaDeviceProp prop;
  char csv[32];
  int drv = 0, rt = 0, bv = 0;
  void *s = NULL;
  int rc = gpu_probe_setup(prog, device, cap, &s, &own_tm, &own_csh);

  if (rc != 0)
    return rc;
  bcs_stream = s;
  /* What the caller takes is no longer ours to free. */
  if (tm)
    *tm = own_tm, own_tm = NULL;
  if (csh)
    *csh = own_csh, own_csh = NULL;
  CKC(cudaGetDeviceProperties(&prop, 0));
  CKS(cusparseCreate(&bcs_sp));
  CKS(cusparseSetStream(bcs_sp, bcs_stream));
  CKB(cublasCreate(&bcs_bl));
  CKB(cublasSetStream(bcs_bl, bcs_stream));
  CKB(cublasSetPointerMode(bcs_bl, CUBLAS_POINTER_MODE_HOST));
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  cublasGetVersion(bcs_bl, &bv);
  spmv_cusparse_version(csv, sizeof csv);
  snprintf(device + strlen(device), cap - strlen(device),
           " (%d SMs, L2 %d MB, %.0f GB)", prop.multiProcessorCount,
           prop.l2CacheSize >> 20, (double)prop.totalGlobalMem / 1e9);
  snprintf(versions, vcap, "CUDA driver API %d, runtime %d, cuSPARSE %s, "
           "cuBLAS %d", drv, rt, csv, bv);
  return 0;
fail:
  return 1;
}

void bcs_fini(void)
{
  if (bcs_bl)
    cublasDestroy(bcs_bl);
  if (bcs_sp)
    cusparseDestroy(bcs_sp);
  bcs_bl = NULL;
  bcs_sp = NULL;
  spmv_cusparse_handle_free(own_csh);
  spmv_dev_timer_free(own_tm);
  own_csh = NULL;
  own_tm = NULL;
}

int bcs_narrow(const struct spmv_csr *A, enum spmv_dtype dt, int32_t **rp,
               void **val)
{
  *rp = malloc((size_t)(A->rows + 1) * sizeof **rp);
  *val = bench_typed(A->val, A->nnz, dt);
  if (!*rp || !*val || A->nnz >= INT32_MAX) {
    fprintf(stderr, "cannot narrow the CSR for cuSPARSE\n");
    return -1;
  }
  for (int64_t i = 0; i <= A->rows; i++)
    (*rp)[i] = (int32_t)A->row_ptr[i];
  return 0;
}

void bcs_csr_free(struct bcs_csr *c)
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

static cudaDataType cuda_type(enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? CUDA_R_32F : CUDA_R_64F;
}

int bcs_dnvec(int64_t n, void *d, enum spmv_dtype dt, cusparseDnVecDescr_t *out)
{
  CKS(cusparseCreateDnVec(out, n, d, cuda_type(dt)));
  return 0;
fail:
  *out = NULL;
  return -1;
}

int bcs_csr_new(const struct spmv_csr *A, enum spmv_dtype dt,
                const int32_t *rp32, const void *val, struct bcs_csr *c)
{
  cudaDataType t = cuda_type(dt);
  size_t es = spmv_dtype_size(dt), bytes = 0;
  double one = 1.0, zero = 0.0;
  float one32 = 1.0f, zero32 = 0.0f;
  const void *pone = dt == SPMV_F32 ? (void *)&one32 : (void *)&one;
  const void *pzero = dt == SPMV_F32 ? (void *)&zero32 : (void *)&zero;

  memset(c, 0, sizeof *c);
  c->dt = dt;
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
  CKS(cusparseSpMV_bufferSize(bcs_sp, CUSPARSE_OPERATION_NON_TRANSPOSE, pone,
                              c->A, c->dx, pzero, c->dy, t,
                              CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  CKC(cudaMalloc(&c->buf, bytes + 1));
  CKS(cusparseSpMV_preprocess(bcs_sp, CUSPARSE_OPERATION_NON_TRANSPOSE, pone,
                              c->A, c->dx, pzero, c->dy, t,
                              CUSPARSE_SPMV_ALG_DEFAULT, c->buf));
  CKC(cudaDeviceSynchronize());
  return 0;
fail:
  bcs_csr_free(c);
  return -1;
}

int bcs_spmv(const struct bcs_csr *c, double alpha, cusparseDnVecDescr_t x,
             double beta, cusparseDnVecDescr_t y)
{
  float a32 = (float)alpha, b32 = (float)beta;
  const void *pa = c->dt == SPMV_F32 ? (void *)&a32 : (void *)&alpha;
  const void *pb = c->dt == SPMV_F32 ? (void *)&b32 : (void *)&beta;

  CKS(cusparseSpMV(bcs_sp, CUSPARSE_OPERATION_NON_TRANSPOSE, pa, c->A, x, pb,
                   y, cuda_type(c->dt), CUSPARSE_SPMV_ALG_DEFAULT, c->buf));
  return 0;
fail:
  return -1;
}

int bcs_dot(enum spmv_dtype dt, int n, const void *u, const void *v,
            double *out)
{
  if (dt == SPMV_F32) {
    float f = 0;
    CKB(cublasSdot(bcs_bl, n, u, 1, v, 1, &f));
    *out = f;
  } else {
    CKB(cublasDdot(bcs_bl, n, u, 1, v, 1, out));
  }
  return 0;
fail:
  return -1;
}

int bcs_axpy(enum spmv_dtype dt, int n, double a, const void *x, void *y)
{
  if (dt == SPMV_F32) {
    float f = (float)a;
    CKB(cublasSaxpy(bcs_bl, n, &f, x, 1, y, 1));
  } else {
    CKB(cublasDaxpy(bcs_bl, n, &a, x, 1, y, 1));
  }
  return 0;
fail:
  return -1;
}

int bcs_scal(enum spmv_dtype dt, int n, double a, void *x)
{
  if (dt == SPMV_F32) {
    float f = (float)a;
    CKB(cublasSscal(bcs_bl, n, &f, x, 1));
  } else {
    CKB(cublasDscal(bcs_bl, n, &a, x, 1));
  }
  return 0;
fail:
  return -1;
}

int bcs_copy(enum spmv_dtype dt, int n, const void *x, void *y)
{
  if (dt == SPMV_F32)
    CKB(cublasScopy(bcs_bl, n, x, 1, y, 1));
  else
    CKB(cublasDcopy(bcs_bl, n, x, 1, y, 1));
  return 0;
fail:
  return -1;
}

/* *out = ||x||_2 (asum 0) or ||x||_1 (asum 1). */
static int norm(enum spmv_dtype dt, int n, const void *x, int asum,
                double *out)
{
  float f = 0;

  if (dt == SPMV_F32)
    CKB(asum ? cublasSasum(bcs_bl, n, x, 1, &f)
             : cublasSnrm2(bcs_bl, n, x, 1, &f));
  else
    CKB(asum ? cublasDasum(bcs_bl, n, x, 1, out)
             : cublasDnrm2(bcs_bl, n, x, 1, out));
  if (dt == SPMV_F32)
    *out = f;
  return 0;
fail:
  return -1;
}

int bcs_nrm2(enum spmv_dtype dt, int n, const void *x, double *out)
{
  return norm(dt, n, x, 0, out);
}

int bcs_asum(enum spmv_dtype dt, int n, const void *x, double *out)
{
  return norm(dt, n, x, 1, out);
}
