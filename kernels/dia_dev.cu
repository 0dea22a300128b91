/* dia_dev.cu: the device arrays of dia, and the device's fill of its
 * diagonals. */
#include "spmv_dev_arrays.cuh"

/* dia's diagonal offsets and values, ndiags x pitch. */
int spmv_dia_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a) {
  int n = 0;
  struct spmv_dia_layout *D = &L->u.dia;
  add(a, &n, &D->offsets, (size_t)D->ndiags * 4);
  add(a, &n, &D->val, (size_t)(D->ndiags * D->pitch) * vs);
  return n;
}

/* dia, a thread per row over its entries in order, each added to its
 * diagonal's slot (found among the ascending offsets) in double and
 * narrowed, as spmv_val_add() sums duplicates; val zeroed before. */
template <typename T>
__global__ void spmv_dia_fill_kernel(struct spmv_dia_layout D, int64_t rows,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
      int64_t off = (int64_t)ci[k] - i, lo = 0, hi = D.ndiags;
      while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (D.offsets[mid] < off) lo = mid + 1;
        else hi = mid;
      }
      T *v = (T *)D.val + lo * D.pitch + i;
      *v = (T)((double)*v + cv[k]);
    }
  }
}

/* Launches dia's fill kernel, a thread per row. */
template <typename T>
static void launch_dia_fill(struct spmv_layout *D, const struct spmv_csr *A,
                            const int64_t *rp, const int32_t *ci, const double *cv,
                            const int64_t *start) {
  if (A->rows > 0)
    spmv_dia_fill_kernel<T><<<fill_grid(A->rows), 256>>>(D->u.dia, A->rows, rp, ci, cv);
  return;
}

SPMV_DEV_FILLER(dia, launch_dia_fill)
