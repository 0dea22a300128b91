/* cusparse.cu: the vendor's cusparseSpMV on the resident matrix, as a candidate and as the baseline. */
/*
 * Work decomposition: cuSPARSE's own.  param (enum spmv_cusparse_alg)
 * picks the matrix format and algorithm: 1 CSR ALG1
 * (CUSPARSE_SPMV_CSR_ALG1, deterministic), run after
 * cusparseSpMV_preprocess; 2 CSR ALG2 (CUSPARSE_SPMV_CSR_ALG2,
 * merge-based); 3 sliced ELL (cusparseCreateSlicedEll, slices of
 * SPMV_CUSPARSE_SLICE rows, CUSPARSE_SPMV_SELL_ALG1); 4 BSR
 * (cusparseCreateBsr, square row-major blocks, CUSPARSE_SPMV_BSR_ALG1,
 * which cuSPARSE 12.6 of CUDA 13 brought to cusparseSpMV).  The layouts
 * are spmv_formats.h's, made on the host or the device like any other.
 * The matrix descriptor, the two dense-vector descriptors, the external
 * buffer and the preprocessing are made once per matrix at load
 * (spmv_cusparse_prepare); a product only points the vector descriptors at
 * x and y.
 * Valid parameters: param in {1, 2, 3, 4}; 32-bit offsets and indices
 * (CSR: nnz < 2^31; the sliced ELL's and BSR's layouts refuse more);
 * f32, f64 (computed in the matrix's type).
 */
#include <stdio.h>
#include <stdlib.h>

#include <cusparse.h>

#include "spmv_cuda.cuh"

struct spmv_cusparse_handle {
  cusparseHandle_t h;
};

struct spmv_cusparse {
  cusparseHandle_t h;       /* borrowed from the spmv_cusparse_handle */
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t x, y;
  cusparseSpMVAlg_t alg;
  cudaDataType dt;
  void *buf;
  size_t buf_bytes;
};

static int cs_error(cusparseStatus_t st, const char *what,
                    struct spmv_error *err) {
  if (st == CUSPARSE_STATUS_SUCCESS) return 0;
  /* A failed kernel inside cuSPARSE may have left a sticky CUDA error. */
  cudaError_t e = cudaPeekAtLastError();
  if (e != cudaSuccess) return spmv_cuda_error(e, what, err);
  return spmv_error_set(err, st == CUSPARSE_STATUS_ALLOC_FAILED ? SPMV_ENOMEM : SPMV_EGPU,
                        "%s: %s", what, cusparseGetErrorString(st));
}

/* Makes a cuSPARSE handle bound to stream s; see spmv_kernels.h. */
extern "C" int spmv_cusparse_handle_new(cudaStream_t s,
                                        struct spmv_cusparse_handle **out,
                                        struct spmv_error *err) {
  struct spmv_cusparse_handle *h =
      (struct spmv_cusparse_handle *)calloc(1, sizeof *h);
  int rc;
  *out = NULL;
  if (h == NULL) return spmv_error_set(err, SPMV_ENOMEM, "out of host memory");
  if ((rc = cs_error(cusparseCreate(&h->h), "cusparseCreate", err))) {
    free(h);
    return rc;
  }
  if ((rc = cs_error(cusparseSetStream(h->h, s), "cusparseSetStream", err))) {
    cusparseDestroy(h->h);
    free(h);
    return rc;
  }
  *out = h;
  return 0;
}

/* Destroys h (NULL is a no-op); returns NULL. */
extern "C" struct spmv_cusparse_handle *
spmv_cusparse_handle_free(struct spmv_cusparse_handle *h) {
  if (h == NULL) return NULL;
  cusparseDestroy(h->h);
  free(h);
  return NULL;
}

/* Writes cuSPARSE's version as "major.minor.patch"; returns snprintf's value. */
extern "C" int spmv_cusparse_version(char *buf, size_t n) {
  int ma = 0, mi = 0, pa = 0;
  cusparseGetProperty(MAJOR_VERSION, &ma);
  cusparseGetProperty(MINOR_VERSION, &mi);
  cusparseGetProperty(PATCH_LEVEL, &pa);
  return snprintf(buf, n, "%d.%d.%d", ma, mi, pa);
}

/* Releases m's cuSPARSE state, if any. */
extern "C" void spmv_cusparse_release(struct spmv_dev_matrix *m) {
  struct spmv_cusparse *c = m->cs;
  if (c == NULL) return;
  if (c->A) cusparseDestroySpMat(c->A);
  if (c->x) cusparseDestroyDnVec(c->x);
  if (c->y) cusparseDestroyDnVec(c->y);
  spmv_dev_free(c->buf);
  free(c);
  m->cs = NULL;
}

/* The matrix descriptor of m's layout for its algorithm, and the
 * algorithm; SPMV_EINVAL for one that is none of the four. */
static int create_matrix(struct spmv_dev_matrix *m, struct spmv_cusparse *c,
                         struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  switch (L->cfg.param) {
  case SPMV_CUSPARSE_CSR_ALG1:
  case SPMV_CUSPARSE_CSR_ALG2:
    if (L->u.csr.row_ptr32 == NULL)
      return spmv_error_set(err, SPMV_EUNSUPPORTED,
                            "cusparse: %lld nonzeros need 64-bit offsets, not wired",
                            (long long)L->nnz);
    c->alg = L->cfg.param == SPMV_CUSPARSE_CSR_ALG1 ? CUSPARSE_SPMV_CSR_ALG1
                                                    : CUSPARSE_SPMV_CSR_ALG2;
    return cs_error(cusparseCreateCsr(&c->A, L->rows, L->cols, L->nnz,
                                      L->u.csr.row_ptr32, L->u.csr.col, L->u.csr.val,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, c->dt),
                    "cusparseCreateCsr", err);
  case SPMV_CUSPARSE_SELL:
    c->alg = CUSPARSE_SPMV_SELL_ALG1;
    return cs_error(cusparseCreateSlicedEll(&c->A, L->rows, L->cols, L->nnz,
                                            L->u.csell.slots, SPMV_CUSPARSE_SLICE,
                                            L->u.csell.slice_ptr, L->u.csell.col,
                                            L->u.csell.val, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, c->dt),
                    "cusparseCreateSlicedEll", err);
  case SPMV_CUSPARSE_BSR:
#if CUSPARSE_VERSION >= 12600
    c->alg = CUSPARSE_SPMV_BSR_ALG1;
    return cs_error(cusparseCreateBsr(&c->A, L->u.bsr.brows, L->u.bsr.bcols,
                                      L->u.bsr.nblocks, L->u.bsr.b, L->u.bsr.b,
                                      L->u.bsr.row_ptr, L->u.bsr.col, L->u.bsr.val,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, c->dt,
                                      CUSPARSE_ORDER_ROW),
                    "cusparseCreateBsr", err);
#else
    return spmv_error_set(err, SPMV_EUNSUPPORTED,
                          "cusparse alg=4: cusparseSpMV on BSR needs cuSPARSE 12.6 "
                          "(CUDA 13), built with %d.%d",
                          CUSPARSE_VER_MAJOR, CUSPARSE_VER_MINOR);
#endif
  default:
    return spmv_error_set(err, SPMV_EINVAL,
                          "cusparse: algorithm %d not 1 (CSR ALG1), 2 (CSR ALG2), "
                          "3 (sliced ELL) or 4 (BSR)", L->cfg.param);
  }
}

/* Builds descriptors and buffer, and preprocesses for ALG1; see spmv_kernels.h. */
extern "C" int spmv_cusparse_prepare(struct spmv_dev_matrix *m,
                                     struct spmv_cusparse_handle *h,
                                     struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  struct spmv_cusparse *c;
  void *tx = NULL, *ty = NULL;
  double one64 = 1.0, zero64 = 0.0;
  float one32 = 1.0f, zero32 = 0.0f;
  const void *one, *zero;
  size_t vs = L->dtype == SPMV_F32 ? 4 : 8;
  int rc = 0;
  cudaError_t e;

  c = (struct spmv_cusparse *)calloc(1, sizeof *c);
  if (c == NULL) return spmv_error_set(err, SPMV_ENOMEM, "out of host memory");
  m->cs = c;
  c->h = h->h;
  c->dt = L->dtype == SPMV_F32 ? CUDA_R_32F : CUDA_R_64F;
  /* No rows: no product to make, and none of cuSPARSE's arrays to give it
   * (spmv_launch_cusparse returns at once). */
  if (L->rows == 0 && !spmv_cusparse_alg_csr(L->cfg.param)) return 0;
  one = L->dtype == SPMV_F32 ? (const void *)&one32 : (const void *)&one64;
  zero = L->dtype == SPMV_F32 ? (const void *)&zero32 : (const void *)&zero64;

  /* Vectors for the set-up calls only; products point at the caller's. */
  if ((rc = spmv_dev_alloc(&tx, (size_t)(L->cols > 0 ? L->cols : 1) * vs,
                           "cuSPARSE set-up vectors", err)) ||
      (rc = spmv_dev_alloc(&ty, (size_t)(L->rows > 0 ? L->rows : 1) * vs,
                           "cuSPARSE set-up vectors", err)))
    goto out;
  cudaMemset(tx, 0, (size_t)(L->cols > 0 ? L->cols : 1) * vs);

  if ((rc = create_matrix(m, c, err)))
    goto out;
  if ((rc = cs_error(cusparseCreateDnVec(&c->x, L->cols, tx, c->dt),
                     "cusparseCreateDnVec", err)))
    goto out;
  if ((rc = cs_error(cusparseCreateDnVec(&c->y, L->rows, ty, c->dt),
                     "cusparseCreateDnVec", err)))
    goto out;
  if ((rc = cs_error(cusparseSpMV_bufferSize(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                             one, c->A, c->x, zero, c->y, c->dt,
                                             c->alg, &c->buf_bytes),
                     "cusparseSpMV_bufferSize", err)))
    goto out;
  if (c->buf_bytes > 0) {
    if ((rc = spmv_dev_alloc(&c->buf, c->buf_bytes, "cuSPARSE's buffer", err))) goto out;
    m->bytes += c->buf_bytes;
  }
  if (c->alg == CUSPARSE_SPMV_CSR_ALG1 && L->rows > 0 && L->nnz > 0)
    rc = cs_error(cusparseSpMV_preprocess(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                          one, c->A, c->x, zero, c->y, c->dt,
                                          c->alg, c->buf),
                  "cusparseSpMV_preprocess", err);
  if (rc == 0) {
    e = cudaDeviceSynchronize();
    rc = spmv_cuda_error(e, "cuSPARSE set-up", err);
  }
out:
  spmv_dev_free(tx);
  spmv_dev_free(ty);
  if (rc) spmv_cusparse_release(m);
  return rc;
}

/* Launches cusparseSpMV for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(cusparse) {
  struct spmv_cusparse *c = m->cs;
  float a32 = (float)alpha, b32 = (float)beta;
  const void *pa = m->L.dtype == SPMV_F32 ? (const void *)&a32 : (const void *)&alpha;
  const void *pb = m->L.dtype == SPMV_F32 ? (const void *)&b32 : (const void *)&beta;
  int rc;
  if (c == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "cusparse: matrix was not prepared");
  if (m->L.rows == 0) return 0;
  if ((rc = cs_error(cusparseSetStream(c->h, s), "cusparseSetStream", err))) return rc;
  if ((rc = cs_error(cusparseDnVecSetValues(c->x, (void *)x), "cusparseDnVecSetValues", err)))
    return rc;
  if ((rc = cs_error(cusparseDnVecSetValues(c->y, y), "cusparseDnVecSetValues", err)))
    return rc;
  rc = cs_error(cusparseSpMV(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, pa, c->A, c->x,
                             pb, c->y, c->dt, c->alg, c->buf),
                "cusparseSpMV", err);
  if (rc) return rc;
  SPMV_CHECK_LAUNCH("cusparseSpMV");
  return 0;
}
