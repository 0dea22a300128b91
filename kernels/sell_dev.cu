/* sell_dev.cu: the device arrays of sell and sell16, and the device's fill
 * of their slices. */
#include "spmv_dev_arrays.cuh"

/* sell's row permutation, slices, columns and values (sizes from slice_ptr
 * only on a host layout). */
int spmv_sell_dev_arrays(struct spmv_layout *L, size_t vs,
                         struct array_ref *a, int host) {
  int n = 0;
  struct spmv_sell_layout *S = &L->u.sell;
  size_t cells = host && S->slice_ptr ? (size_t)S->slice_ptr[S->nslices] : 0;
  add(a, &n, &S->perm, (size_t)(S->nslices * S->c) * 4);
  add(a, &n, &S->slice_ptr, (size_t)(S->nslices + 1) * 8);
  add(a, &n, &S->slice_width, (size_t)S->nslices * 4);
  add(a, &n, &S->col, cells * 4);
  add(a, &n, &S->val, cells * vs);
  return n;
}

/* sell16's, with each lane's base column and 16-bit offsets. */
int spmv_sell16_dev_arrays(struct spmv_layout *L, size_t vs,
                           struct array_ref *a, int host) {
  int n = 0;
  struct spmv_sell_layout *S = &L->u.sell;
  size_t cells = host && S->slice_ptr ? (size_t)S->slice_ptr[S->nslices] : 0;
  add(a, &n, &S->perm, (size_t)(S->nslices * S->c) * 4);
  add(a, &n, &S->slice_ptr, (size_t)(S->nslices + 1) * 8);
  add(a, &n, &S->slice_width, (size_t)S->nslices * 4);
  add(a, &n, &S->base, (size_t)(S->nslices * S->c) * 4);
  add(a, &n, &S->col16, cells * 2);
  add(a, &n, &S->val, cells * vs);
  return n;
}

/* sell and sell16, one thread per lane: entry k of lane l of slice s at
 * slice_ptr[s] + k * C + l, up to the slice's width (sell_fill()). */
template <typename T, bool NARROW>
__global__ void spmv_sell_fill_kernel(struct spmv_sell_layout S, int64_t lanes,
                                      const int64_t *__restrict__ rp,
                                      const int32_t *__restrict__ ci,
                                      const double *__restrict__ cv) {
  int64_t lane = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= lanes) return;
  int64_t s = lane / S.c, l = lane - s * S.c, at = S.slice_ptr[s] + l;
  int32_t r = S.perm[lane], w = S.slice_width[s];
  int64_t lo = r >= 0 ? rp[r] : 0, len = r >= 0 ? rp[r + 1] - lo : 0;
  int32_t b = NARROW ? S.base[lane] : 0;
  for (int64_t k = 0; k < w; k++, at += S.c) {
    bool real = k < len;
    if (NARROW)
      S.col16[at] = real ? (uint16_t)(ci[lo + k] - b) : (uint16_t)SPMV_SELL16_PAD;
    else
      S.col[at] = real ? ci[lo + k] : -1;
    ((T *)S.val)[at] = real ? (T)cv[lo + k] : T(0);
  }
}

/* Launches sell's or sell16's fill kernel, a thread per lane. */
template <typename T>
static void launch_sell_fill(struct spmv_layout *D, const struct spmv_csr *A,
                             const int64_t *rp, const int32_t *ci, const double *cv,
                             const int64_t *start) {
  int64_t lanes = D->u.sell.nslices * D->u.sell.c;
  unsigned grid = (unsigned)((lanes + 255) / 256);
  if (lanes == 0) return;
  if (D->cfg.format == SPMV_FMT_SELL16)
    spmv_sell_fill_kernel<T, true><<<grid, 256>>>(D->u.sell, lanes, rp, ci, cv);
  else
    spmv_sell_fill_kernel<T, false><<<grid, 256>>>(D->u.sell, lanes, rp, ci, cv);
  return;
}

SPMV_DEV_FILLER(sell, launch_sell_fill)
