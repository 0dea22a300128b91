/* spmv_longrow.cuh: long CSR rows split in chunks over several blocks (csr-adaptive, csr-stream). */
#ifndef SPMV_LONGROW_CUH
#define SPMV_LONGROW_CUH

#include <stdio.h>

#include "spmv_cuda.cuh"

/*
 * A long row's entries are cut in chunks of chunk_len; chunk c of all the
 * long rows is summed by one block into partial[c], and a second kernel
 * adds each row's chunks in an order fixed by the layout (a warp per row),
 * so that the result does not depend on scheduling.  long_chunk[r] .. long_chunk[r+1] are the chunks of
 * long row r (long_rows[r]).
 */

/* Sums v over the block; thread 0 gets the result, summed in warp order.
 * sh holds a value per warp. */
template <typename T>
__device__ __forceinline__ T spmv_block_sum(T v, T *sh) {
  v = spmv_group_sum<T, 32>(v);
  int w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  if ((threadIdx.x & 31) == 0) sh[w] = v;
  __syncthreads();
  T s = 0;
  if (threadIdx.x == 0)
    for (int k = 0; k < nw; k++) s += sh[k];
  return s;
}

/* A strided dot over 32-bit columns, or 16-bit offsets from base. */
template <typename T, typename I>
__device__ __forceinline__ T spmv_chunk_dot(const int32_t *__restrict__ col, int32_t,
                                            const T *__restrict__ val,
                                            const T *__restrict__ x, I j, I e, I stride) {
  return spmv_csr_dot<T, I>(col, val, x, j, e, stride);
}
template <typename T, typename I>
__device__ __forceinline__ T spmv_chunk_dot(const uint16_t *__restrict__ col, int32_t base,
                                            const T *__restrict__ val,
                                            const T *__restrict__ x, I j, I e, I stride) {
  return spmv_csr16_dot<T, I>(col, base, val, x, j, e, stride);
}

/* Chunk c: finds its row by binary search over long_chunk, sums its
 * entries over the block and writes partial[c] (thread 0).  Columns are
 * 32-bit (C = int32_t, chunk_base NULL) or 16-bit offsets from
 * chunk_base[c]. */
template <typename T, typename I, typename C>
__device__ __forceinline__ void spmv_long_chunk(
    int64_t c, const I *__restrict__ rp, const C *__restrict__ col,
    const int32_t *__restrict__ chunk_base,
    const T *__restrict__ val, const T *__restrict__ x,
    const int32_t *__restrict__ long_rows, const int64_t *__restrict__ long_chunk,
    int64_t nlong, int64_t chunk_len, T *__restrict__ partial, T *sh) {
  int64_t lo = 0, hi = nlong - 1;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (long_chunk[mid] <= c) lo = mid; else hi = mid - 1;
  }
  int32_t row = long_rows[lo];
  I rb = rp[row], re = rp[row + 1];
  I cb = rb + (I)((c - long_chunk[lo]) * chunk_len);
  I ce = cb + (I)chunk_len < re ? cb + (I)chunk_len : re;
  int32_t base = chunk_base != NULL ? chunk_base[c] : 0;
  T t = spmv_block_sum(spmv_chunk_dot<T, I>(col, base, val, x, cb + (I)threadIdx.x,
                                            ce, (I)blockDim.x), sh);
  if (threadIdx.x == 0) partial[c] = t;
}

/* Second step: y of each long row from its chunks' partial sums, one warp
 * per row: lane l adds chunks l, l+32, ... in order, then a fixed shuffle
 * tree adds the lanes.  The order depends only on the layout, so results
 * repeat bit for bit.  A warp rather than one thread per row: a row of
 * 10^5..10^6 entries has thousands of chunks, and one thread adding
 * them in turn made this step a sizeable part of the product. */
#define SPMV_LONG_FINISH_BS 256
template <typename T>
__global__ void spmv_long_finish_kernel(
    int64_t nlong, const int32_t *__restrict__ long_rows,
    const int64_t *__restrict__ long_chunk, const T *__restrict__ partial,
    T alpha, T beta, T *__restrict__ y) {
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (i >= nlong) return; /* whole warps leave together */
  T s = 0;
  for (int64_t c = long_chunk[i] + lane; c < long_chunk[i + 1]; c += 32)
    s += partial[c];
  s = spmv_group_sum<T, 32>(s);
  if (lane == 0) {
    int32_t row = long_rows[i];
    y[row] = spmv_axpby(alpha, s, beta, y + row);
  }
}

/* A launcher's check before its first kernel: long rows need their
 * chunks and the scratch for the chunks' sums.  Returns 0 or SPMV_EINVAL
 * naming the format. */
static inline int spmv_long_ready(const char *name, int64_t nlong,
                                  int64_t chunk_len, const void *partial,
                                  struct spmv_error *err) {
  if (nlong > 0 && (chunk_len <= 0 || partial == NULL))
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: %lld long rows without chunks or scratch", name,
                          (long long)nlong);
  return 0;
}

/* Launches the second step on s, a warp per long row (none when nlong is
 * 0); returns 0 or the launch's error as spmv_cuda_error() maps it, named
 * "NAME long-row kernel". */
template <typename T>
static int spmv_long_finish(const char *name, int64_t nlong,
                            const int32_t *long_rows, const int64_t *long_chunk,
                            const T *partial, T alpha, T beta, T *y,
                            cudaStream_t s, struct spmv_error *err) {
  char what[64];
  if (nlong <= 0)
    return 0;
  unsigned grid = (unsigned)((nlong * 32 + SPMV_LONG_FINISH_BS - 1) /
                             SPMV_LONG_FINISH_BS);
  spmv_long_finish_kernel<T><<<grid, SPMV_LONG_FINISH_BS, 0, s>>>(
      nlong, long_rows, long_chunk, partial, alpha, beta, y);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    return 0;
  snprintf(what, sizeof what, "%s long-row kernel", name);
  return spmv_cuda_error(e, what, err);
}

#endif /* SPMV_LONGROW_CUH */
