/* spmvd_cuda_pipe.h: the cuda backend's product of several host vectors,
 * copies of one vector overlapping the product of another. */
#ifndef SPMVD_CUDA_PIPE_H
#define SPMVD_CUDA_PIPE_H

#include <cuda_runtime_api.h>

#include "spmv_kernels.h"

/* Two copy streams and the events that order them with the product's
 * stream; owned by the backend. */
struct spmvd_cuda_pipe;

/* A new pipe on the current device; *out owned by the caller. */
int spmvd_cuda_pipe_new(struct spmvd_cuda_pipe **out, struct spmv_error *err);
/* Frees p (NULL is a no-op) once its work is done. */
void spmvd_cuda_pipe_free(struct spmvd_cuda_pipe *p);

/*
 * Queues y_v = alpha*A*x_v + beta*y_v for v < nvec, x and y host arrays
 * (pinned for the copies to overlap; vector v at x + v*cols, y + v*rows),
 * through the two device slots (dx[k], dy[k]) in turn: x_{v+1} goes up
 * while A x_v is computed on s and y_{v-1} comes down.  Then waits for
 * all of it.  0, or an error of spmv_cuda_error() / spmv_dev_spmv(); on an
 * error every copy queued has ended before the return.
 */
int spmvd_cuda_pipe_run(struct spmvd_cuda_pipe *p,
                        const struct spmv_dev_matrix *d, cudaStream_t s,
                        void *const dx[2], void *const dy[2], double alpha,
                        const void *x, double beta, void *y, int nvec,
                        struct spmv_error *err);

#endif /* SPMVD_CUDA_PIPE_H */
