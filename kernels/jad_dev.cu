/* jad_dev.cu: the device arrays of jad, and the device's fill of its
 * jagged diagonals. */
#include "spmv_dev_arrays.cuh"

/* jad's row permutation, jagged-diagonal offsets, columns and values. */
int spmv_jad_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a) {
  int n = 0;
  struct spmv_jad_layout *J = &L->u.jad;
  add(a, &n, &J->perm, (size_t)L->rows * 4);
  add(a, &n, &J->jd_ptr, (size_t)(J->njd + 1) * 8);
  add(a, &n, &J->col, (size_t)L->nnz * 4);
  add(a, &n, &J->val, (size_t)L->nnz * vs);
  return n;
}

/* jad, a thread per sorted row k: its entry d at jd_ptr[d] + k
 * (spmv_jad_init()). */
template <typename T>
__global__ void spmv_jad_fill_kernel(struct spmv_jad_layout J, int64_t rows,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < rows;
       k += stride) {
    int32_t r = J.perm[k];
    int64_t lo = rp[r], len = rp[r + 1] - lo;
    for (int64_t d = 0; d < len; d++) {
      J.col[J.jd_ptr[d] + k] = ci[lo + d];
      ((T *)J.val)[J.jd_ptr[d] + k] = (T)cv[lo + d];
    }
  }
}

/* Launches jad's fill kernel, a thread per sorted row. */
template <typename T>
static void launch_jad_fill(struct spmv_layout *D, const struct spmv_csr *A,
                            const int64_t *rp, const int32_t *ci, const double *cv,
                            const int64_t *start) {
  if (A->rows > 0)
    spmv_jad_fill_kernel<T><<<fill_grid(A->rows), 256>>>(D->u.jad, A->rows, rp, ci, cv);
  return;
}

SPMV_DEV_FILLER(jad, launch_jad_fill)
