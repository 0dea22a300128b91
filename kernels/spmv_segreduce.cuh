/* spmv_segreduce.cuh: warp-level carry combination for the segmented kernels (coo, csr-merge). */
#ifndef SPMV_SEGREDUCE_CUH
#define SPMV_SEGREDUCE_CUH

#include "spmv_cuda.cuh"

/*
 * Each thread of coo and csr-merge walks a contiguous range of the work and
 * writes the rows that start and end inside it.  What is left per thread:
 *   head: the first row it finishes, when that row began in an earlier
 *         thread (head_row >= 0): its sum so far is head_sum;
 *   tail: the row still open at the end of its range (tail_row >= 0), with
 *         the part of it summed here.
 * spmv_seg_combine() adds, inside the warp, the tails of earlier lanes to
 * the head that finishes their row (an inclusive segmented scan keyed by
 * row, the rows of the tails being non-decreasing and each row's lanes
 * contiguous) and returns the carry for the head; lane 31 records the
 * warp's own open row and sum in carry_row/carry_val[warp] for the fix-up
 * kernel, which adds them in warp order, so results are deterministic.
 */
template <typename T>
__device__ __forceinline__ T spmv_seg_combine(int32_t head_row, int32_t tail_row,
                                              T tail_sum, int64_t warp,
                                              int32_t *__restrict__ carry_row,
                                              T *__restrict__ carry_val) {
  int lane = threadIdx.x & 31;
  T scan = tail_sum;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    int32_t r = __shfl_up_sync(0xffffffffu, tail_row, off);
    T v = __shfl_up_sync(0xffffffffu, scan, off);
    if (lane >= off && r == tail_row) scan += v;
  }
  int32_t prow = __shfl_up_sync(0xffffffffu, tail_row, 1);
  T pval = __shfl_up_sync(0xffffffffu, scan, 1);
  if (lane == 31) {
    carry_row[warp] = tail_row;
    carry_val[warp] = scan;
  }
  return (lane > 0 && head_row >= 0 && prow == head_row) ? pval : T(0);
}

/*
 * The fix-up: for each run of warps whose carries name the same row, the
 * first warp of the run adds alpha * (their sum, in warp order) to y[row]
 * after the row's owner wrote it.
 */
template <typename T>
__global__ void spmv_seg_fixup_kernel(int64_t nwarps,
                                      const int32_t *__restrict__ carry_row,
                                      const T *__restrict__ carry_val, T alpha,
                                      T *__restrict__ y) {
  int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= nwarps) return;
  int32_t r = carry_row[w];
  if (r < 0 || (w > 0 && carry_row[w - 1] == r)) return;
  T s = carry_val[w];
  for (int64_t v = w + 1; v < nwarps && carry_row[v] == r; v++) s += carry_val[v];
  y[r] += alpha * s;
}

/* Scratch for nwarps carries: rows then values, each 256-byte aligned. */
static inline size_t spmv_seg_work_bytes(int64_t nwarps, size_t val_size) {
  size_t a = ((size_t)nwarps * 4 + 255) / 256 * 256;
  return a + (size_t)nwarps * val_size;
}

template <typename T>
static inline void spmv_seg_work_split(void *work, int64_t nwarps,
                                       int32_t **rows, T **vals) {
  size_t a = ((size_t)nwarps * 4 + 255) / 256 * 256;
  *rows = (int32_t *)work;
  *vals = (T *)((char *)work + a);
}

#endif /* SPMV_SEGREDUCE_CUH */
