/*
 * bound_gpu.cu: the cost of reading each entry once and gathering x once
 * per entry, in CSR order and with no row work, for bench_spmv -B: a
 * reference for an SpMV's gathers (a kernel that walks a row's entries
 * together shares x's sectors where columns cluster, and can beat it).
 * Two kernels over a CSR's entries, with no rows: "stream" reads the values and columns (as the
 * SpMV kernels do, evict-first) and adds value * column; "gather" adds
 * value * x[column] instead, x through the read-only path.  Each block
 * writes one partial sum, which the caller checks against the host's.
 */
#include <cuda_runtime.h>

#include "bound_gpu.h"

#define BOUND_BS 256
#define BOUND_BLOCKS_PER_SM 8

template <typename T, bool GATHER>
__global__ void __launch_bounds__(BOUND_BS)
bound_kernel(const int *__restrict__ col, const T *__restrict__ val,
             const T *__restrict__ x, long long nnz, double *__restrict__ part)
{
  __shared__ double warp_sum[BOUND_BS / 32];
  long long k = (long long)blockIdx.x * BOUND_BS + threadIdx.x;
  long long step = (long long)gridDim.x * BOUND_BS;
  T acc = 0;

  /* Four entries a thread in flight: loads issue before their use. */
  for (; k + 3 * step < nnz; k += 4 * step) {
    int c[4];
    T v[4];
    for (int u = 0; u < 4; u++) {
      c[u] = __ldcs(col + k + u * step);
      v[u] = __ldcs(val + k + u * step);
    }
    for (int u = 0; u < 4; u++)
      acc += v[u] * (GATHER ? __ldg(x + c[u]) : (T)(c[u] & 1023));
  }
  for (; k < nnz; k += step) {
    int c = __ldcs(col + k);
    acc += __ldcs(val + k) * (GATHER ? __ldg(x + c) : (T)(c & 1023));
  }
  double s = (double)acc;
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0)
    warp_sum[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < BOUND_BS / 32; w++)
      s += warp_sum[w];
    part[blockIdx.x] = s;
  }
}

extern "C" int bench_bound_blocks(int sms)
{
  return sms * BOUND_BLOCKS_PER_SM;
}

extern "C" cudaError_t bench_bound_launch(int gather, int f64, const int *col,
                                          const void *val, const void *x,
                                          long long nnz, int blocks,
                                          double *part, cudaStream_t s)
{
  if (f64 && gather)
    bound_kernel<double, true><<<blocks, BOUND_BS, 0, s>>>(
        col, (const double *)val, (const double *)x, nnz, part);
  else if (f64)
    bound_kernel<double, false><<<blocks, BOUND_BS, 0, s>>>(
        col, (const double *)val, (const double *)x, nnz, part);
  else if (gather)
    bound_kernel<float, true><<<blocks, BOUND_BS, 0, s>>>(
        col, (const float *)val, (const float *)x, nnz, part);
  else
    bound_kernel<float, false><<<blocks, BOUND_BS, 0, s>>>(
        col, (const float *)val, (const float *)x, nnz, part);
  return cudaGetLastError();
}
