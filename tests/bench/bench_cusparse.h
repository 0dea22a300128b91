/* bench_cusparse.h: the in-process side that bench_service and
 * bench_solve share: the device with its stream and library handles, a
 * CSR resident for cuSPARSE, and cuBLAS's BLAS-1 in either value type
 * with host-side scalars, as NVIDIA's samples call them. */
#ifndef BENCH_CUSPARSE_H
#define BENCH_CUSPARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
/* The legacy API's deprecation warnings are not ours. */
#define DISABLE_CUSPARSE_DEPRECATED
#include <cusparse.h>

#include "spmv_csr.h"
#include "spmv_types.h"

/* The stream every in-process call runs on, and the handles bound to it
 * (cuBLAS in pointer mode host: a dot waits for its result). */
extern cudaStream_t bcs_stream;
extern cusparseHandle_t bcs_sp;
extern cublasHandle_t bcs_bl;

/* A CUDA, cuSPARSE or cuBLAS failure: a message naming the call, then
 * goto fail. */
#define BCS_FAIL_IF(bad, call, msg)                                          \
  do {                                                                       \
    if (bad) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, call, msg);     \
      goto fail;                                                             \
    }                                                                        \
  } while (0)
#define BCS_CHECK(type, call, ok, str)                                       \
  do {                                                                       \
    type st_ = (call);                                                       \
    BCS_FAIL_IF(st_ != (ok), #call, str(st_));                               \
  } while (0)
#define CKC(call) BCS_CHECK(cudaError_t, call, cudaSuccess, cudaGetErrorString)
#define CKS(call)                                                            \
  BCS_CHECK(cusparseStatus_t, call, CUSPARSE_STATUS_SUCCESS,                 \
            cusparseGetErrorString)
#define CKB(call)                                                            \
  BCS_CHECK(cublasStatus_t, call, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

/*
 * Device 0 set up as gpu_probe_setup does (its name, with SMs, L2 and
 * memory appended, into device), the stream and handles above, and the
 * driver's and libraries' versions into versions.  *tm and *csh (may be
 * NULL: not wanted) receive gpu_probe_setup's timer and spmv cuSPARSE
 * handle, the caller's.  0, 77 (no CUDA device) or 1 after a message.
 */
struct spmv_dev_timer;
struct spmv_cusparse_handle;
int bcs_init(const char *prog, char *device, size_t cap, char *versions,
             size_t vcap, struct spmv_dev_timer **tm,
             struct spmv_cusparse_handle **csh);
void bcs_fini(void);

/* A CSR resident for cuSPARSE (32-bit offsets and columns), with x and y
 * (cols and rows values) for its descriptors dx and dy, and the SpMV
 * buffer of CUSPARSE_SPMV_ALG_DEFAULT, preprocessed. */
struct bcs_csr {
  enum spmv_dtype dt;
  int *rp, *ci;
  void *v, *x, *y, *buf;
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t dx, dy;
};

/* A's offsets in 32 bits and its values in dt: new host arrays (malloc),
 * the caller's even on failure (0 or -1). */
int bcs_narrow(const struct spmv_csr *A, enum spmv_dtype dt, int32_t **rp,
               void **val);

/*
 * Makes c (caller's struct) from A's shape and the host arrays rp32 and
 * val (pageable, borrowed): device allocations and copies, descriptors,
 * cusparseSpMV_bufferSize, the buffer and cusparseSpMV_preprocess, then a
 * device sync.  0, or -1 with c freed.
 */
int bcs_csr_new(const struct spmv_csr *A, enum spmv_dtype dt,
                const int32_t *rp32, const void *val, struct bcs_csr *c);
void bcs_csr_free(struct bcs_csr *c);

/* A dense-vector descriptor over n values of dt at d. */
int bcs_dnvec(int64_t n, void *d, enum spmv_dtype dt, cusparseDnVecDescr_t *out);

/* y = alpha A x + beta y on c's buffer (x, y: descriptors of c's type). */
int bcs_spmv(const struct bcs_csr *c, double alpha, cusparseDnVecDescr_t x,
             double beta, cusparseDnVecDescr_t y);

/* cuBLAS in dt on n values, scalars on the host: *out = u . v; y += a x;
 * x *= a; y = x; *out = ||x||_2; *out = ||x||_1.  0 or -1. */
int bcs_dot(enum spmv_dtype dt, int n, const void *u, const void *v,
            double *out);
int bcs_axpy(enum spmv_dtype dt, int n, double a, const void *x, void *y);
int bcs_scal(enum spmv_dtype dt, int n, double a, void *x);
int bcs_copy(enum spmv_dtype dt, int n, const void *x, void *y);
int bcs_nrm2(enum spmv_dtype dt, int n, const void *x, double *out);
int bcs_asum(enum spmv_dtype dt, int n, const void *x, double *out);

#endif /* BENCH_CUSPARSE_H */
