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
 * spmv_seg_combine() gives each head the sum of the earlier tails of its
 * row inside the block: an inclusive segmented scan keyed by row across
 * the warp (the rows of the tails are non-decreasing and each row's lanes
 * contiguous), then the same over the block's warps in warp order.  The
 * block's own open row and sum go to carry_row/carry_val[blockIdx.x]; the
 * fix-up kernel adds runs of equal carries in a fixed order, so results
 * are deterministic.  Every thread of the block must call it.
 */
template <typename T>
__device__ __forceinline__ T spmv_seg_combine(int32_t head_row, int32_t tail_row,
                                              T tail_sum,
                                              int32_t *__restrict__ carry_row,
                                              T *__restrict__ carry_val) {
  __shared__ int32_t wrow[32];
  __shared__ T wscan[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int nw = blockDim.x >> 5;
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
    wrow[warp] = tail_row;
    wscan[warp] = scan;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < nw; w++)
      if (wrow[w] >= 0 && wrow[w] == wrow[w - 1]) wscan[w] += wscan[w - 1];
    carry_row[blockIdx.x] = wrow[nw - 1];
    carry_val[blockIdx.x] = wscan[nw - 1];
  }
  __syncthreads();
  T c = (lane > 0 && head_row >= 0 && prow == head_row) ? pval : T(0);
  if (warp > 0 && head_row >= 0 && wrow[warp - 1] == head_row) c += wscan[warp - 1];
  return c;
}

/*
 * The fix-up, one warp per carry: the warp of the first carry of each run
 * naming the same row sums the run (32 carries per step, lanes in a fixed
 * order) and adds alpha times it to y[row], after the row's owner wrote it.
 */
template <typename T>
__global__ void spmv_seg_fixup_kernel(int64_t n, const int32_t *__restrict__ carry_row,
                                      const T *__restrict__ carry_val, T alpha,
                                      T *__restrict__ y) {
  int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (w >= n) return;
  int32_t r = carry_row[w];
  if (r < 0 || (w > 0 && carry_row[w - 1] == r)) return;
  T s = 0;
  for (int64_t base = w;; base += 32) {
    int64_t v = base + lane;
    bool in = v < n && carry_row[v] == r;
    if (in) s += carry_val[v];
    if (__ballot_sync(0xffffffffu, in) != 0xffffffffu) break;
  }
  s = spmv_group_sum<T, 32>(s);
  if (lane == 0) y[r] += alpha * s;
}

/* Grid of the fix-up for n carries, 8 warps per block. */
static inline unsigned spmv_seg_fixup_grid(int64_t n) {
  return spmv_grid(n * 32, 256);
}

/* Scratch for nwarps carries (an upper bound on the blocks): rows then values. */
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
