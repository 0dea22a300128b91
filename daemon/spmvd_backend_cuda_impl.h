/* spmvd_backend_cuda_impl.h: what the cuda backend's modules share (the
 * backend and its matrices, spmvd_backend_cuda.c; its device vectors,
 * spmvd_backend_cuda_vec.c).  Nothing else includes it. */
#ifndef SPMVD_BACKEND_CUDA_IMPL_H
#define SPMVD_BACKEND_CUDA_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "spmv_kernels.h"
#include "spmvd_backend.h"

/* Device memory kept free beside the admitted matrices. */
#define RESERVE_BYTES ((size_t)256 << 20)

struct spmvd_backend {
  int dev;
  cudaStream_t stream;
  struct spmv_cusparse_handle *cs;
  struct spmv_dev_timer *timer;
  struct spmvd_device_info info;
  const struct spmvd_bmatrix *last; /* the matrix of the last product */
  int64_t run;                       /* last's client products in a row */
  int warmed;                        /* last taken into the L2 since */
  double *dres;   /* SPMVD_MAX_RESULTS results of a list, on the device */
  double *dpart;  /* the reductions' partial sums (SPMV_BLAS_MAX_PARTIALS) */
  double *hres;   /* pinned, so that finish() copies dres before its wait */
  struct spmvd_cuda_pipe *pipe; /* batches of host vectors; made on the
                                   first, NULL until then */
  struct spmv_dev_csr *staged;     /* stage()'s copy of staged_A, or NULL */
  const struct spmv_csr *staged_A;
};

struct spmvd_bvector {
  enum spmv_dtype dt;
  size_t n;
  void *d;        /* n values on the device (spmv_dev_alloc) */
};

struct spmvd_bmatrix {
  struct spmv_dev_matrix *d;
  void *dx, *dy;     /* one x (cols) and one y (rows) on the device */
  void *dx2, *dy2;   /* a second pair for batches (spmvd_cuda_pipe), made
                        on the first; NULL until then */
  int x_random;      /* dx holds time()'s random vector */
  /* Its products replayed as a graph (spmv_dev_graph_spmv): dx and dy
   * never move, so one capture serves every product of an alpha, beta. */
  struct spmv_dev_graph *graph;
};

static inline size_t vsize(enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? sizeof(float) : sizeof(double);
}

/* Brings m into the L2 before nvec products where that pays
 * (spmvd_backend_cuda.c). */
int spmvd_cuda_warm_for(struct spmvd_backend *b, struct spmvd_bmatrix *m, int nvec,
                        struct spmv_error *err);
/* Waits for the stream; rc an earlier failure, kept unless the wait
 * found the context lost. */
int spmvd_cuda_wait_stream(struct spmvd_backend *b, int rc, const char *what,
                           struct spmv_error *err);

/* The device vector ops of spmvd_backend.h (spmvd_backend_cuda_vec.c). */
int spmvd_cuda_vec_new(struct spmvd_backend *b, enum spmv_dtype dt, size_t n,
                       struct spmvd_bvector **out, struct spmv_error *err);
void spmvd_cuda_vec_free(struct spmvd_backend *b, struct spmvd_bvector *v);
int spmvd_cuda_vec_upload(struct spmvd_backend *b, struct spmvd_bvector *v,
                          const void *host, struct spmv_error *err);
int spmvd_cuda_vec_download(struct spmvd_backend *b, struct spmvd_bvector *v,
                            void *host, struct spmv_error *err);
int spmvd_cuda_vec_spmv(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                        double alpha, struct spmvd_bvector *x, double beta,
                        struct spmvd_bvector *y, struct spmv_error *err);
int spmvd_cuda_vec_op(struct spmvd_backend *b, const struct spmvd_vop_args *a,
                      struct spmv_error *err);
int spmvd_cuda_res_set(struct spmvd_backend *b, const double *res, int nres,
                       struct spmv_error *err);
int spmvd_cuda_finish(struct spmvd_backend *b, double *res, int nres,
                      struct spmv_error *err);

#endif /* SPMVD_BACKEND_CUDA_IMPL_H */
