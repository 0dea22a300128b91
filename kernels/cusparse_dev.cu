/* cusparse_dev.cu: the device arrays of the cusparse format's layouts (the
 * typed CSR of ALG1 and ALG2, cuSPARSE's sliced ELL and BSR), and the
 * device's fill of the sliced ELL's slots and of the BSR's blocks. */
#include "spmv_dev_arrays.cuh"

#define SLICE ((int64_t)SPMV_CUSPARSE_SLICE)

/* The sliced ELL's offsets, columns and values; the BSR's block row
 * offsets, block columns and values; else csr's arrays. */
int spmv_cusparse_dev_arrays(struct spmv_layout *L, size_t vs,
                             struct array_ref *a) {
  int n = 0;
  switch (L->cfg.param) {
  case SPMV_CUSPARSE_SELL: {
    struct spmv_csell_layout *S = &L->u.csell;
    add(a, &n, &S->slice_ptr, (size_t)(S->nslices + 1) * 4);
    add(a, &n, &S->col, (size_t)S->slots * 4);
    add(a, &n, &S->val, (size_t)S->slots * vs);
    return n;
  }
  case SPMV_CUSPARSE_BSR: {
    struct spmv_bsr_layout *B = &L->u.bsr;
    add(a, &n, &B->row_ptr, (size_t)(B->brows + 1) * 4);
    add(a, &n, &B->col, (size_t)B->nblocks * 4);
    add(a, &n, &B->val, (size_t)B->nblocks * (size_t)(B->b * B->b) * vs);
    return n;
  }
  default:
    return spmv_csr_dev_arrays(L, vs, a);
  }
}

/* The sliced ELL, a thread per lane (row s*C + l, none past the last row):
 * its slots up to its slice's width, each an entry or a pad
 * (csell_init()). */
template <typename T>
__global__ void spmv_csell_fill_kernel(struct spmv_csell_layout S, int64_t rows,
                                       const int64_t *__restrict__ rp,
                                       const int32_t *__restrict__ ci,
                                       const double *__restrict__ cv) {
  int64_t lane = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= S.nslices * SLICE) return;
  int64_t s = lane / SLICE, at = S.slice_ptr[s] + lane % SLICE;
  int64_t w = (S.slice_ptr[s + 1] - S.slice_ptr[s]) / SLICE;
  int64_t lo = lane < rows ? rp[lane] : 0, len = lane < rows ? rp[lane + 1] - lo : 0;
  for (int64_t k = 0; k < w; k++, at += SLICE) {
    bool real = k < len;
    S.col[at] = real ? ci[lo + k] : -1;
    ((T *)S.val)[at] = real ? (T)cv[lo + k] : T(0);
  }
}

/* The BSR, a thread per row over its entries in order, each added to its
 * slot in the block found among its block row's ascending block columns,
 * in double and narrowed, as spmv_val_add() sums duplicates (bsr_init());
 * val zeroed before. */
template <typename T>
__global__ void spmv_bsr_fill_kernel(struct spmv_bsr_layout B, int64_t rows,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x, b = B.b;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    int64_t br = i / b, r = i - br * b;
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
      int32_t c = ci[k], bc = c / (int32_t)b;
      int64_t lo = B.row_ptr[br], hi = B.row_ptr[br + 1];
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (B.col[mid] < bc) lo = mid + 1;
        else hi = mid;
      }
      T *v = (T *)B.val + (lo * b + r) * b + c % b;
      *v = (T)((double)*v + cv[k]);
    }
  }
}

/* Launches the fill of a cusparse shell's slots: the sliced ELL's, a
 * thread per lane, or the BSR's, a thread per row (the typed CSR is
 * copied, never filled here). */
template <typename T>
static void launch_cusparse_fill(struct spmv_layout *D, const struct spmv_csr *A,
                                 const int64_t *rp, const int32_t *ci,
                                 const double *cv, const int64_t *start) {
  if (D->cfg.param == SPMV_CUSPARSE_SELL) {
    int64_t lanes = D->u.csell.nslices * SLICE;
    if (lanes > 0)
      spmv_csell_fill_kernel<T><<<(unsigned)((lanes + 255) / 256), 256>>>(
          D->u.csell, A->rows, rp, ci, cv);
  } else if (D->cfg.param == SPMV_CUSPARSE_BSR && A->rows > 0) {
    spmv_bsr_fill_kernel<T><<<fill_grid(A->rows), 256>>>(D->u.bsr, A->rows, rp, ci, cv);
  }
}

SPMV_DEV_FILLER(cusparse, launch_cusparse_fill)
