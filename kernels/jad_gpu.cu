/* jad_gpu.cu: JAD SpMV, jagged diagonals over rows sorted by decreasing length. */
/*
 * Work decomposition: thread k computes the k-th longest row, perm[k]
 * (ceil(rows/BS) blocks).  It walks the jagged diagonals d = 0, 1, ...
 * while k is below diagonal d's length (jd_ptr[d+1] - jd_ptr[d]), reading
 * entry jd_ptr[d] + k, then writes y[perm[k]].
 * Access pattern: within a diagonal a warp reads 32 consecutive col and
 * val elements (coalesced; no padding is stored); jd_ptr is the same
 * address across the warp (a broadcast); y is written through perm, a
 * scatter.  x through the read-only data cache.
 * Valid parameters: BS in 32..1024, a multiple of 32; f32, f64.
 */
#include "spmv_cuda.cuh"

template <typename V>
__global__ void spmv_jad_kernel(int64_t rows, int64_t njd,
                                const int32_t *__restrict__ perm,
                                const int64_t *__restrict__ jd_ptr,
                                const int32_t *__restrict__ col,
                                const V *__restrict__ val, V alpha,
                                const V *__restrict__ x, V beta,
                                V *__restrict__ y) {
  int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= rows) return;
  V s0 = 0, s1 = 0;
  int64_t d = 0;
  int64_t b = njd > 0 ? __ldg(jd_ptr) : 0;
  for (; d + 1 < njd; d += 2) {
    int64_t b1 = __ldg(jd_ptr + d + 1), b2 = __ldg(jd_ptr + d + 2);
    if (k >= b1 - b) break;
    int64_t p0 = b + k, p1 = b1 + k;
    bool two = k < b2 - b1;
    int32_t c0 = spmv_lds(col + p0);
    V v0 = spmv_lds(val + p0);
    s0 += v0 * spmv_ldg(x + c0);
    if (!two) { d = njd; break; }
    s1 += spmv_lds(val + p1) * spmv_ldg(x + spmv_lds(col + p1));
    b = b2;
  }
  if (d < njd) {
    int64_t b1 = __ldg(jd_ptr + d + 1);
    if (k < b1 - b) s0 += spmv_lds(val + b + k) * spmv_ldg(x + spmv_lds(col + b + k));
  }
  int32_t row = perm[k];
  y[row] = spmv_axpby(alpha, s0 + s1, beta, y + row);
}

template <typename V>
static int run(const struct spmv_dev_matrix *m, double alpha, const void *x,
               double beta, void *y, cudaStream_t s, struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  const struct spmv_jad_layout *J = &L->u.jad;
  int bs = L->cfg.bs;
  int rc = spmv_check_bs(bs, "jad", err);
  if (rc) return rc;
  if (L->rows == 0) return 0;
  spmv_jad_kernel<V><<<spmv_grid(L->rows, bs), bs, 0, s>>>(
      L->rows, J->njd, J->perm, J->jd_ptr, J->col, (const V *)J->val, (V)alpha,
      (const V *)x, (V)beta, (V *)y);
  SPMV_CHECK_LAUNCH("jad kernel");
  return 0;
}

/* Launches jad for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(jad) {
  if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err);
  return run<double>(m, alpha, x, beta, y, s, err);
}
