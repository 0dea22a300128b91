/* bound_gpu.h: bench_spmv's bound kernels (bound_gpu.cu). */
#ifndef BENCH_BOUND_GPU_H
#define BENCH_BOUND_GPU_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The grid the bound kernels take on a device of sms SMs. */
int bench_bound_blocks(int sms);

/* Launches the stream (gather 0) or gather (1) kernel over nnz entries
 * with f32 (f64 0) or f64 values; part holds one double per block. */
cudaError_t bench_bound_launch(int gather, int f64, const int *col,
                               const void *val, const void *x, long long nnz,
                               int blocks, double *part, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
