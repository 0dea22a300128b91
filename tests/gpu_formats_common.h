/* gpu_formats_common.h: what the GPU test programs (check_gpu_formats,
 * check_gpu_device) share: the configurations under test, each test's
 * stream, cuSPARSE handle and poisoned pool (gpu_setup, gpu_teardown), and
 * one value type's inputs of a matrix with the products checked against the
 * double reference.  Static: each program has its own copy. */
#ifndef GPU_FORMATS_COMMON_H
#define GPU_FORMATS_COMMON_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"
#include "spmv_csr.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"

#define MAX_CONFIGS 256

static struct spmv_config configs[MAX_CONFIGS];
static int nconfigs;
/* Set by test_subnormal: leave out what is known to flush subnormals. */
static int subnormal_run;

/* Per test process (check forks): the stream and the cuSPARSE handle. */
static cudaStream_t stream;
static struct spmv_cusparse_handle *handle;

/* Bytes of device memory poisoned (all bits set: NaN values, column -1)
 * and left in the pool before each test, as the worker's pool holds what
 * earlier layouts left: no layout may rely on freshly zeroed memory. */
#define POISON_BYTES ((size_t)256 << 20)

static void gpu_setup(void)
{
  struct spmv_error err;
  void *p = NULL;
  subnormal_run = 0;  /* after a failed test_subnormal under CK_FORK=no */
  ck_assert_int_eq(cudaStreamCreate(&stream), cudaSuccess);
  ck_assert_msg(spmv_cusparse_handle_new(stream, &handle, &err) == 0, "%s", err.msg);
  ck_assert_msg(spmv_dev_pool_keep(&err) == 0, "%s", err.msg);
  ck_assert_msg(spmv_dev_alloc(&p, POISON_BYTES, "poison", &err) == 0, "%s", err.msg);
  ck_assert_int_eq(cudaMemset(p, 0xff, POISON_BYTES), cudaSuccess);
  spmv_dev_free(p);
}

static void gpu_teardown(void)
{
  handle = spmv_cusparse_handle_free(handle);
  cudaStreamDestroy(stream);
}

/* One value type's inputs for a matrix, host and device. */
struct inputs {
  enum spmv_dtype dt;
  size_t es;
  double *x, *y0;        /* exact in float */
  void *xt, *y0t, *yt;   /* typed copies and a typed result */
  double *ref, *absum, *yl, *got;
  void *ylt;
  void *dx, *dy;
};

static void put_typed(void *dst, const double *src, int64_t n, enum spmv_dtype dt)
{
  for (int64_t i = 0; i < n; i++) {
    if (dt == SPMV_F32)
      ((float *)dst)[i] = (float)src[i];
    else
      ((double *)dst)[i] = src[i];
  }
}

static void get_typed(double *dst, const void *src, int64_t n, enum spmv_dtype dt)
{
  for (int64_t i = 0; i < n; i++)
    dst[i] = dt == SPMV_F32 ? (double)((const float *)src)[i] : ((const double *)src)[i];
}

static void inputs_init(struct inputs *in, const struct spmv_csr *A, enum spmv_dtype dt)
{
  struct spmv_error err = {0};
  size_t nr = (size_t)(A->rows ? A->rows : 1), nc = (size_t)(A->cols ? A->cols : 1);
  memset(in, 0, sizeof *in);
  in->dt = dt;
  in->es = spmv_dtype_size(dt);
  in->x = malloc(nc * 8);
  in->y0 = malloc(nr * 8);
  in->ref = malloc(nr * 8);
  in->absum = malloc(nr * 8);
  in->yl = malloc(nr * 8);
  in->got = malloc(nr * 8);
  in->xt = malloc(nc * in->es);
  in->y0t = malloc(nr * in->es);
  in->yt = malloc(nr * in->es);
  in->ylt = malloc(nr * in->es);
  ck_assert(in->x && in->y0 && in->ref && in->absum && in->yl && in->got &&
            in->xt && in->y0t && in->yt && in->ylt);
  gpu_random_vector(in->x, A->cols, 7 + (uint64_t)dt);
  gpu_random_vector(in->y0, A->rows, 11 + (uint64_t)dt);
  put_typed(in->xt, in->x, A->cols, dt);
  put_typed(in->y0t, in->y0, A->rows, dt);
  /* The rows' magnitudes for the tolerance; in->ref is set again for
   * each product's alpha and beta before it is compared. */
  gpu_reference(A, in->x, in->ref, in->absum);
  ck_assert_int_eq(cudaMalloc(&in->dx, nc * in->es), cudaSuccess);
  ck_assert_int_eq(cudaMalloc(&in->dy, nr * in->es), cudaSuccess);
  ck_assert_msg(spmv_dev_upload(in->dx, in->xt, (size_t)A->cols * in->es, "x",
                                &err) == 0, "%s", err.msg);
}

static void inputs_fini(struct inputs *in)
{
  free(in->x); free(in->y0); free(in->ref); free(in->absum); free(in->yl);
  free(in->got); free(in->xt); free(in->y0t); free(in->yt); free(in->ylt);
  cudaFree(in->dx);
  cudaFree(in->dy);
}

/* Returns the first row out of tolerance (or NaN), or -1. */
static int64_t compare(const struct spmv_csr *A, const struct inputs *in,
                       const double *y, const double *ref, double alpha,
                       double beta, double *tol_out)
{
  for (int64_t i = 0; i < A->rows; i++) {
    double mag = fabs(alpha) * in->absum[i] + fabs(beta * in->y0[i]);
    double tol = gpu_row_tol(in->dt, A->row_ptr[i + 1] - A->row_ptr[i], mag);
    if (!(fabs(y[i] - ref[i]) <= tol)) {
      *tol_out = tol;
      return i;
    }
  }
  return -1;
}

/* One product of d on in's x into dy (in->dy or another of its size),
 * through g (NULL: launched directly), with y starting from y0; the
 * result in in->yt (typed). */
static void run_once(const struct spmv_csr *A, struct inputs *in,
                     struct spmv_dev_graph *g, const struct spmv_dev_matrix *d,
                     void *dy, double alpha, double beta)
{
  struct spmv_error err = {0};
  size_t yb = (size_t)A->rows * in->es;
  ck_assert_int_eq(cudaMemcpy(dy, in->y0t, yb, cudaMemcpyHostToDevice), cudaSuccess);
  ck_assert_msg(spmv_dev_graph_spmv(g, d, alpha, in->dx, beta, dy, stream, &err) == 0,
                "launch%s: %s", g ? " through a graph" : "", err.msg);
  ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
  ck_assert_int_eq(cudaMemcpy(in->yt, dy, yb, cudaMemcpyDeviceToHost), cudaSuccess);
}

/* in->got from the typed result in in->yt, and in->ref the double
 * reference alpha A x + beta y0: the first row out of tolerance (*tol
 * its bound), or -1. */
static int64_t check_yt(const struct spmv_csr *A, struct inputs *in, double alpha,
                        double beta, double *tol)
{
  get_typed(in->got, in->yt, A->rows, in->dt);
  memcpy(in->ref, in->y0, (size_t)A->rows * 8);
  spmv_csr_ref(A, alpha, in->x, beta, in->ref);
  return compare(A, in, in->got, in->ref, alpha, beta, tol);
}

#endif /* GPU_FORMATS_COMMON_H */
