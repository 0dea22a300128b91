/* spmv_blas1.cu: BLAS-1 operations on device vectors (fill, random, copy, scale, axpby, mul, dot, nrm2, asum). */
/*
 * Work decomposition: the element-wise operations run a grid-stride loop
 * of BLAS_BS threads a block over at most BLAS_EW_BLOCKS blocks.  Their
 * scalars are struct spmv_dev_scalar expressions over the results array
 * res, evaluated by every thread on the device (a few cached loads), so
 * that a coefficient computed by an earlier dot never visits the host.
 * Reductions (dot, nrm2) are deterministic: the grid depends only on n
 * (spmv_blas_reduce_blocks), each thread sums a fixed strided subset in
 * double, each block sums its threads by a fixed tree into one partial,
 * and one block sums the partials by the same tree; no floating-point
 * atomics, so the same inputs give the same bits on every run and GPU.
 * Valid parameters: f32, f64; n any size (0 launches nothing).
 */
#include <math.h>

#include "spmv_cuda.cuh"
#include "spmv_mix.h"

#define BLAS_BS 256            /* threads per block, a power of two */
#define BLAS_ITEMS 4           /* elements a reduction thread takes per block tile */
#define BLAS_EW_BLOCKS 8192    /* most blocks of an element-wise operation */

/* c * prod(res[mul]) / prod(res[div]) in IEEE double, as the header says. */
__device__ __forceinline__ double blas_scalar(const struct spmv_dev_scalar &s,
                                              const double *res) {
  double num = s.c, den = 1.0;
  for (int i = 0; i < s.nmul; i++) num *= res[s.mul[i]];
  for (int j = 0; j < s.ndiv; j++) den *= res[s.div[j]];
  double v = s.ndiv > 0 ? num / den : num;
  return s.finite && !isfinite(v) ? 0.0 : v;
}

/* The first element and stride of this thread's grid-stride loop. */
__device__ __forceinline__ int64_t blas_tid(void) {
  return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t blas_stride(void) {
  return (int64_t)gridDim.x * blockDim.x;
}

/* x = a (fill), or x = a*x (SCALE). */
template <typename V, bool SCALE>
__global__ void blas_set_kernel(int64_t n, V *x, struct spmv_dev_scalar a,
                                const double *res) {
  V av = (V)blas_scalar(a, res);
  for (int64_t i = blas_tid(); i < n; i += blas_stride())
    x[i] = SCALE ? av * x[i] : av;
}

/* The value spmv_blas_random gives element i: a splitmix64 hash of seed
 * and i, so that it depends on neither the grid nor the stride. */
__device__ __forceinline__ double blas_random_value(uint64_t seed, int64_t i) {
  uint64_t z = spmv_mix64(seed + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull);
  double v = 0.5 + (double)(z >> 11) / 9007199254740992.0;
  return (z & 1) ? -v : v;
}

template <typename V>
__global__ void blas_random_kernel(int64_t n, V *x, uint64_t seed) {
  for (int64_t i = blas_tid(); i < n; i += blas_stride())
    x[i] = (V)blas_random_value(seed, i);
}

/* y = a*x + b*y; READ_Y false when b is the constant 0, so that y's old
 * values (NaN included) never reach the result. x may alias y. */
template <typename V, bool READ_Y>
__global__ void blas_axpby_kernel(int64_t n, struct spmv_dev_scalar a,
                                  const V *x, struct spmv_dev_scalar b, V *y,
                                  const double *res) {
  V av = (V)blas_scalar(a, res), bv = READ_Y ? (V)blas_scalar(b, res) : V(0);
  for (int64_t i = blas_tid(); i < n; i += blas_stride())
    y[i] = READ_Y ? av * x[i] + bv * y[i] : av * x[i];
}

/* z = x .* y; z may alias x or y (each element read before written). */
template <typename V>
__global__ void blas_mul_kernel(int64_t n, const V *x, const V *y, V *z) {
  for (int64_t i = blas_tid(); i < n; i += blas_stride()) z[i] = x[i] * y[i];
}

/* Sums the block's BLAS_BS values in sh by a fixed tree; thread 0 gets it. */
__device__ __forceinline__ double blas_block_sum(double *sh, double v) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int w = BLAS_BS / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
    __syncthreads();
  }
  return sh[0];
}

/* part[block] = the block's sum of x[i]*y[i] (y NULL: x[i]^2; ABS: |x[i]|),
 * in double. */
template <typename V, bool ABS>
__global__ void __launch_bounds__(BLAS_BS)
blas_dot_partial(int64_t n, const V *__restrict__ x, const V *__restrict__ y,
                 double *__restrict__ part) {
  __shared__ double sh[BLAS_BS];
  double s = 0;
  for (int64_t i = blas_tid(); i < n; i += blas_stride()) {
    double xi = (double)x[i];
    s += ABS ? fabs(xi) : xi * (y ? (double)y[i] : xi);
  }
  double t = blas_block_sum(sh, s);
  if (threadIdx.x == 0) part[blockIdx.x] = t;
}

/* res[slot] = the sum of the nparts partials (its square root for nrm2),
 * each thread taking a fixed strided subset, then the fixed tree. */
__global__ void __launch_bounds__(BLAS_BS)
blas_dot_final(int nparts, const double *__restrict__ part, int root,
               double *__restrict__ res, int slot) {
  __shared__ double sh[BLAS_BS];
  double s = 0;
  for (int i = threadIdx.x; i < nparts; i += BLAS_BS) s += part[i];
  double t = blas_block_sum(sh, s);
  if (threadIdx.x == 0) res[slot] = root ? sqrt(t) : t;
}

/* See spmv_kernels.h: a function of n alone, so the sums' order is. */
extern "C" unsigned spmv_blas_reduce_blocks(size_t n) {
  size_t g = (n + (size_t)BLAS_BS * BLAS_ITEMS - 1) / ((size_t)BLAS_BS * BLAS_ITEMS);
  if (g < 1) g = 1;
  return (unsigned)(g < SPMV_BLAS_MAX_PARTIALS ? g : SPMV_BLAS_MAX_PARTIALS);
}

/* The grid of an element-wise operation on n > 0 elements. */
static unsigned ew_blocks(size_t n) {
  size_t g = (n + BLAS_BS - 1) / BLAS_BS;
  return (unsigned)(g < BLAS_EW_BLOCKS ? g : BLAS_EW_BLOCKS);
}

/* Rejects a dtype other than f32 and f64. */
static int check_dtype(enum spmv_dtype dt, const char *what, struct spmv_error *err) {
  if (dt == SPMV_F32 || dt == SPMV_F64) return 0;
  return spmv_error_set(err, SPMV_EINVAL, "%s: value type %d is neither f32 nor f64",
                        what, (int)dt);
}

/* Rejects a scalar whose terms are too many or name no result, which
 * would read outside res on the device (a sticky fault). */
static int check_scalar(const struct spmv_dev_scalar *s, const char *what,
                        struct spmv_error *err) {
  if (s->nmul < 0 || s->nmul > SPMV_DEV_SCALAR_TERMS || s->ndiv < 0 ||
      s->ndiv > SPMV_DEV_SCALAR_TERMS)
    return spmv_error_set(err, SPMV_EINVAL, "%s: %d and %d terms, at most %d each",
                          what, s->nmul, s->ndiv, SPMV_DEV_SCALAR_TERMS);
  for (int i = 0; i < s->nmul + s->ndiv; i++) {
    int r = i < s->nmul ? s->mul[i] : s->div[i - s->nmul];
    if (r < 0 || r >= SPMV_DEV_RESULTS)
      return spmv_error_set(err, SPMV_EINVAL, "%s: result %d not in [0, %d)", what, r,
                            SPMV_DEV_RESULTS);
  }
  return 0;
}

/* Rejects a result slot outside res. */
static int check_slot(int slot, const char *what, struct spmv_error *err) {
  if (slot >= 0 && slot < SPMV_DEV_RESULTS) return 0;
  return spmv_error_set(err, SPMV_EINVAL, "%s: result slot %d not in [0, %d)", what,
                        slot, SPMV_DEV_RESULTS);
}

/* fill and scale: x = a, or x = a*x. */
template <bool SCALE>
static int set_op(enum spmv_dtype dt, size_t n, void *x, struct spmv_dev_scalar a,
                  const double *res, cudaStream_t s, const char *what,
                  struct spmv_error *err) {
  int rc;
  if ((rc = check_dtype(dt, what, err)) < 0 || (rc = check_scalar(&a, what, err)) < 0)
    return rc;
  if (n == 0) return 0;
  if (dt == SPMV_F32)
    blas_set_kernel<float, SCALE><<<ew_blocks(n), BLAS_BS, 0, s>>>((int64_t)n, (float *)x,
                                                                  a, res);
  else
    blas_set_kernel<double, SCALE><<<ew_blocks(n), BLAS_BS, 0, s>>>((int64_t)n, (double *)x,
                                                                   a, res);
  SPMV_CHECK_LAUNCH(what);
  return 0;
}

extern "C" int spmv_blas_fill(enum spmv_dtype dt, size_t n, void *x,
                              struct spmv_dev_scalar a, const double *res,
                              cudaStream_t s, struct spmv_error *err) {
  return set_op<false>(dt, n, x, a, res, s, "fill", err);
}

extern "C" int spmv_blas_scale(enum spmv_dtype dt, size_t n, void *x,
                               struct spmv_dev_scalar a, const double *res,
                               cudaStream_t s, struct spmv_error *err) {
  return set_op<true>(dt, n, x, a, res, s, "scale", err);
}

extern "C" int spmv_blas_random(enum spmv_dtype dt, size_t n, void *x, uint64_t seed,
                                cudaStream_t s, struct spmv_error *err) {
  int rc;
  if ((rc = check_dtype(dt, "random", err)) < 0) return rc;
  if (n == 0) return 0;
  if (dt == SPMV_F32)
    blas_random_kernel<float><<<ew_blocks(n), BLAS_BS, 0, s>>>((int64_t)n, (float *)x, seed);
  else
    blas_random_kernel<double><<<ew_blocks(n), BLAS_BS, 0, s>>>((int64_t)n, (double *)x, seed);
  SPMV_CHECK_LAUNCH("random");
  return 0;
}

extern "C" int spmv_blas_copy(enum spmv_dtype dt, size_t n, const void *x, void *y,
                              cudaStream_t s, struct spmv_error *err) {
  int rc;
  if ((rc = check_dtype(dt, "copy", err)) < 0) return rc;
  if (n == 0 || x == y) return 0;  /* a copy onto itself changes nothing */
  size_t bytes = n * (dt == SPMV_F32 ? sizeof(float) : sizeof(double));
  return spmv_cuda_error(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s),
                         "copy", err);
}

/* Launches axpby for value type V, reading y unless b is the constant 0. */
template <typename V>
static void axpby_launch(size_t n, struct spmv_dev_scalar a, const void *x,
                         struct spmv_dev_scalar b, void *y, const double *res,
                         cudaStream_t s) {
  bool read_y = !(b.c == 0 && b.nmul == 0 && b.ndiv == 0);
  if (read_y)
    blas_axpby_kernel<V, true><<<ew_blocks(n), BLAS_BS, 0, s>>>(
        (int64_t)n, a, (const V *)x, b, (V *)y, res);
  else
    blas_axpby_kernel<V, false><<<ew_blocks(n), BLAS_BS, 0, s>>>(
        (int64_t)n, a, (const V *)x, b, (V *)y, res);
}

extern "C" int spmv_blas_axpby(enum spmv_dtype dt, size_t n, struct spmv_dev_scalar a,
                               const void *x, struct spmv_dev_scalar b, void *y,
                               const double *res, cudaStream_t s,
                               struct spmv_error *err) {
  int rc;
  if ((rc = check_dtype(dt, "axpby", err)) < 0 || (rc = check_scalar(&a, "axpby", err)) < 0 ||
      (rc = check_scalar(&b, "axpby", err)) < 0)
    return rc;
  if (n == 0) return 0;
  if (dt == SPMV_F32)
    axpby_launch<float>(n, a, x, b, y, res, s);
  else
    axpby_launch<double>(n, a, x, b, y, res, s);
  SPMV_CHECK_LAUNCH("axpby");
  return 0;
}

extern "C" int spmv_blas_mul(enum spmv_dtype dt, size_t n, const void *x, const void *y,
                             void *z, cudaStream_t s, struct spmv_error *err) {
  int rc;
  if ((rc = check_dtype(dt, "mul", err)) < 0) return rc;
  if (n == 0) return 0;
  if (dt == SPMV_F32)
    blas_mul_kernel<float><<<ew_blocks(n), BLAS_BS, 0, s>>>(
        (int64_t)n, (const float *)x, (const float *)y, (float *)z);
  else
    blas_mul_kernel<double><<<ew_blocks(n), BLAS_BS, 0, s>>>(
        (int64_t)n, (const double *)x, (const double *)y, (double *)z);
  SPMV_CHECK_LAUNCH("mul");
  return 0;
}

/* res[slot] = x . y (y NULL: x . x, and its square root when root). */
static int reduce(enum spmv_dtype dt, size_t n, const void *x, const void *y, int root,
                  int absval, double *res, int slot, double *scratch, cudaStream_t s,
                  const char *what, struct spmv_error *err) {
  int rc;
  if ((rc = check_dtype(dt, what, err)) < 0 || (rc = check_slot(slot, what, err)) < 0)
    return rc;
  if (n == 0)  /* the empty sum, and its root, are +0: all-zero bits */
    return spmv_cuda_error(cudaMemsetAsync(res + slot, 0, sizeof(double), s), what, err);
  unsigned g = spmv_blas_reduce_blocks(n);
  if (dt == SPMV_F32 && absval)
    blas_dot_partial<float, true><<<g, BLAS_BS, 0, s>>>((int64_t)n, (const float *)x,
                                                         NULL, scratch);
  else if (dt == SPMV_F32)
    blas_dot_partial<float, false><<<g, BLAS_BS, 0, s>>>((int64_t)n, (const float *)x,
                                                          (const float *)y, scratch);
  else if (absval)
    blas_dot_partial<double, true><<<g, BLAS_BS, 0, s>>>((int64_t)n, (const double *)x,
                                                          NULL, scratch);
  else
    blas_dot_partial<double, false><<<g, BLAS_BS, 0, s>>>((int64_t)n, (const double *)x,
                                                           (const double *)y, scratch);
  SPMV_CHECK_LAUNCH(what);
  blas_dot_final<<<1, BLAS_BS, 0, s>>>((int)g, scratch, root, res, slot);
  SPMV_CHECK_LAUNCH(what);
  return 0;
}

extern "C" int spmv_blas_dot(enum spmv_dtype dt, size_t n, const void *x, const void *y,
                             double *res, int slot, double *scratch, cudaStream_t s,
                             struct spmv_error *err) {
  if (y == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "dot: no y");
  return reduce(dt, n, x, y, 0, 0, res, slot, scratch, s, "dot", err);
}

extern "C" int spmv_blas_nrm2(enum spmv_dtype dt, size_t n, const void *x, double *res,
                              int slot, double *scratch, cudaStream_t s,
                              struct spmv_error *err) {
  return reduce(dt, n, x, NULL, 1, 0, res, slot, scratch, s, "nrm2", err);
}

extern "C" int spmv_blas_asum(enum spmv_dtype dt, size_t n, const void *x, double *res,
                              int slot, double *scratch, cudaStream_t s,
                              struct spmv_error *err) {
  return reduce(dt, n, x, NULL, 0, 1, res, slot, scratch, s, "asum", err);
}
