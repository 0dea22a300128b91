/* ellr_t_gpu.cu: ELLR-T SpMV, ELLPACK-R with T threads per row (Vázquez, Fernández & Garzón). */
/*
 * Work decomposition: groups of T consecutive lanes own one row (BS/T rows
 * per block, ceil(rows*T/BS) blocks).  Thread t of row i walks its entries
 * j = t, t+T, ... below rl[i]: only as far as its own row needs, so
 * padding is never read nor multiplied.  The T partial sums are added with
 * __shfl_down_sync and lane 0 of the group writes y[i].
 * Access pattern: entry j of row i is at (j/T)*(pitch*T) + i*T + j%T, so at
 * every step the warp's lanes read 32 consecutive col and val elements
 * (coalesced; pitch is a multiple of 32).  Four steps at a time, the
 * next four columns loaded while this four's x gathers are in flight
 * (spmv_walk4, shared with sell).
 * col and val are streamed (evict-first) so that x, read through the
 * read-only data cache, keeps its place in L2.
 * Valid parameters: T in {1, 2, 4, 8, 16, 32}, equal to the layout's T;
 * BS in 32..1024, a multiple of 32; f32, f64.
 */
#include "spmv_cuda.cuh"

template <typename V, int T>
__global__ void spmv_ellr_t_kernel(int64_t rows, int64_t pitch,
                                   const int32_t *__restrict__ rl,
                                   const int32_t *__restrict__ col,
                                   const V *__restrict__ val, V alpha,
                                   const V *__restrict__ x, V beta,
                                   V *__restrict__ y) {
  int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t row = gid / T;
  int t = threadIdx.x & (T - 1);
  V s0 = 0, s1 = 0;
  if (row < rows) {
    int n = (__ldg(rl + row) - t + T - 1) / T;
    spmv_walk4<V, spmv_cols_plain>(col + row * T + t, val + row * T + t,
                                   pitch * T, n, 0, x, s0, s1);
  }
  V sum = spmv_group_sum<V, T>(s0 + s1);
  if (t == 0 && row < rows) y[row] = spmv_axpby(alpha, sum, beta, y + row);
}

template <typename V, int T>
static void launch(const struct spmv_layout *L, int bs, V alpha, const V *x,
                   V beta, V *y, cudaStream_t s) {
  const struct spmv_ellr_layout *E = &L->u.ellr;
  spmv_ellr_t_kernel<V, T><<<spmv_grid(L->rows * T, bs), bs, 0, s>>>(
      L->rows, E->pitch, E->rl, E->col, (const V *)E->val, alpha, x, beta, y);
}

template <typename V>
static int run(const struct spmv_dev_matrix *m, double alpha, const void *x,
               double beta, void *y, cudaStream_t s, struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  int bs = L->cfg.bs, t = L->u.ellr.t;
  int rc = spmv_check_bs(bs, "ellr-t", err);
  if (rc) return rc;
  if (L->rows == 0) return 0;
  if (L->u.ellr.pitch < L->rows)
    return spmv_error_set(err, SPMV_EINVAL, "ellr-t: pitch %lld below %lld rows",
                          (long long)L->u.ellr.pitch, (long long)L->rows);
  V a = (V)alpha, b = (V)beta;
  const V *xx = (const V *)x;
  V *yy = (V *)y;
  rc = spmv_pow2_dispatch(t, "ellr-t: T", [&](auto k) {
    launch<V, decltype(k)::value>(L, bs, a, xx, b, yy, s);
  }, err);
  if (rc) return rc;
  SPMV_CHECK_LAUNCH("ellr-t kernel");
  return 0;
}

/* Launches ellr-t for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(ellr_t) {
  if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err);
  return run<double>(m, alpha, x, beta, y, s, err);
}
