/* coo_dev.cu: the device arrays of coo, and the device's fill of its
 * entries (also for hyb's COO part). */
#include "spmv_dev_arrays.cuh"

/* coo's rows, columns and values. */
int spmv_coo_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a) {
  int n = 0;
  struct spmv_coo_layout *C = &L->u.coo;
  add(a, &n, &C->row, (size_t)L->nnz * 4);
  add(a, &n, &C->col, (size_t)L->nnz * 4);
  add(a, &n, &C->val, (size_t)L->nnz * vs);
  return n;
}

/* coo (and hyb's COO part), a warp per row: the entries of row i past its
 * first skip, from start[i] on, in row order (spmv_coo_arrays_init()). */
template <typename T>
__global__ void spmv_coo_fill_kernel(struct spmv_coo_layout K, int64_t rows,
                                     int64_t skip, const int64_t *__restrict__ start,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int64_t nwarps = (int64_t)gridDim.x * blockDim.x / 32;
  int lane = threadIdx.x % 32;
  for (int64_t i = warp; i < rows; i += nwarps) {
    int64_t lo = rp[i] + skip, at = start[i] - lo;
    for (int64_t k = lo + lane; k < rp[i + 1]; k += 32) {
      K.row[at + k] = (int32_t)i;
      K.col[at + k] = ci[k];
      ((T *)K.val)[at + k] = (T)cv[k];
    }
  }
}

/* Launches coo's fill kernel over K, a warp per row. */
template <typename T>
static void coo_fill_arrays(struct spmv_coo_layout *K, int64_t rows,
                            int64_t skip, const int64_t *start,
                            const int64_t *rp, const int32_t *ci,
                            const double *cv) {
  spmv_coo_fill_kernel<T><<<fill_grid(rows * 32), 256>>>(*K, rows, skip, start,
                                                          rp, ci, cv);
}

/* Launches the fill of COO arrays K; see spmv_dev_arrays.cuh. */
void spmv_coo_dev_fill_arrays(struct spmv_coo_layout *K, enum spmv_dtype dt,
                              int64_t rows, int64_t skip,
                              const int64_t *start, const int64_t *rp,
                              const int32_t *ci, const double *cv) {
  if (dt == SPMV_F32)
    coo_fill_arrays<float>(K, rows, skip, start, rp, ci, cv);
  else
    coo_fill_arrays<double>(K, rows, skip, start, rp, ci, cv);
}

/* coo's fill: every entry, row i's from rp[i] on. */
SPMV_DEV_FILL_PROTO(coo) {
  if (A->rows > 0 && A->nnz > 0)
    spmv_coo_dev_fill_arrays(&D->u.coo, D->dtype, A->rows, 0, rp, rp, ci, cv);
}
