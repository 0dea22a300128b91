/* bench_service.h: what bench_service.c (the service side) and
 * bench_service_gpu.c (the same work in-process: the kernel, copies,
 * cuSPARSE and cuBLAS) share. */
#ifndef BENCH_SERVICE_H
#define BENCH_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_types.h"

/* CG iterations per timed block, and the iteration whose residual both
 * CGs must agree on: the first, where every step of an iteration has run
 * once and the suite's nonsymmetric matrices (most of it: CG's numbers
 * then grow without bound) have not yet parted the two CGs' roundings. */
#define BS_CG_BLOCK 10
#define BS_CG_CHECK 1

/* Device, versions and the in-process state; 0, 77 (no CUDA device) or 1
 * after a message on stderr.  reps: timed runs of each measurement. */
int bsg_init(int reps, char *device, size_t cap, char *versions, size_t vcap);
void bsg_fini(void);

/*
 * The configuration text (spmv_config_format) made in-process from A:
 * spmv_config_parse, spmv_layout_new, spmv_dev_matrix_new; its product on
 * x (doubles, narrowed to dt) checked against ref / mag (gpu_reference)
 * on every row, then timed with CUDA events: *us back to back (3 warm-up
 * runs, the median of reps), *flushed_us with the L2 flushed before each
 * run.  Returns 0, 1 when the product is wrong (after a FAIL line on
 * stderr), -1 when it could not run (after a message).
 */
int bsg_kernel(const struct spmv_csr *A, enum spmv_dtype dt, const char *config,
               const double *x, const double *ref, const double *mag,
               double *us, double *flushed_us);

/* Pinned host <-> device copies of h2d and d2h bytes (cudaMemcpyAsync,
 * CUDA events, median of reps after 3 warm-up): microseconds each. */
int bsg_copies(size_t h2d, size_t d2h, double *h2d_us, double *d2h_us);

/*
 * The in-process cuSPARSE set-up of A in dt from pageable host memory,
 * wall clock: cudaMalloc and copy of the CSR (32-bit offsets), the CSR
 * and two dense-vector descriptors, cusparseSpMV_bufferSize, the buffer's
 * cudaMalloc and cusparseSpMV_preprocess (CUSPARSE_SPMV_ALG_DEFAULT),
 * then a device sync.  The median of 3 in *ms.  0 or -1.
 */
int bsg_cusparse_setup(const struct spmv_csr *A, enum spmv_dtype dt,
                       double *ms);

/*
 * CG on A x = b (square A), in-process: cusparseSpMV CSR ALG_DEFAULT
 * (buffer, preprocess) and cuBLAS dot / axpy / scal in dt, pointer mode
 * host, from x = 0, r = p = b.  *res1: ||r|| after BS_CG_CHECK
 * iterations; *us: wall-clock microseconds per iteration, the median of
 * blocks (each BS_CG_BLOCK iterations from the start, ending with a
 * stream sync).  0 or -1.
 */
int bsg_cg(const struct spmv_csr *A, enum spmv_dtype dt, const double *b,
           int blocks, double *res1, double *us);

#endif /* BENCH_SERVICE_H */
