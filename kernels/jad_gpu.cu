/* jad_gpu.cu: JAD SpMV, jagged diagonals over rows sorted by decreasing length. */
/*
 * Work decomposition: thread k computes the k-th longest row, perm[k]
 * (ceil(rows/BS) blocks).  It walks the jagged diagonals d = 0, 1, ...
 * while k is below diagonal d's length (jd_ptr[d+1] - jd_ptr[d]), reading
 * entry jd_ptr[d] + k, then writes y[perm[k]].
 * Access pattern: within a diagonal a warp reads 32 consecutive col and
 * val elements (coalesced; no padding is stored); jd_ptr is the same
 * address across the warp (a broadcast, kept in the L1); y is written
 * through perm, a scatter.  x through the read-only data cache.
 * Four diagonals at a time, the next four's columns and values loaded
 * while this four's x gathers are in flight (as spmv_walk4 does for
 * ellr-t and sell).  One diagonal at a time, each step waited for its
 * column and then its x, two memory latencies in a row, and the longest
 * rows set the time.  The price is registers (48 in f64, against 32 one
 * diagonal at a time), which slows matrices of short rows and of lone
 * very long rows, where jad is never the best format.
 * Valid parameters: BS in 32..1024, a multiple of 32; f32, f64.
 */
#include "spmv_cuda.cuh"

/*
 * The four diagonals d .. d+3 for sorted row k: the positions o[] of its
 * entries there and how many of them it has (the diagonals shorten, so
 * they are a prefix).  *b is jd_ptr[d] on entry and jd_ptr[d+4] (or the
 * last diagonal's end) on return.
 */
__device__ __forceinline__ int spmv_jad_four(const int64_t *__restrict__ jd_ptr,
                                             int64_t njd, int64_t d, int64_t k,
                                             int64_t *b, int64_t o[4]) {
  int64_t e[4], prev = *b;
  int n = 0;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    e[i] = d + 1 + i <= njd ? __ldg(jd_ptr + d + 1 + i) : prev;
    o[i] = prev + k;
    n += k < e[i] - prev;
    prev = e[i];
  }
  *b = prev;
  return n;
}

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
  int64_t d = 0, b = njd > 0 ? __ldg(jd_ptr) : 0, o[4];
  int32_t c[4];
  V v[4];
  int n = spmv_jad_four(jd_ptr, njd, 0, k, &b, o);
#pragma unroll
  for (int i = 0; i < 4; i++) {
    c[i] = i < n ? spmv_lds(col + o[i]) : 0;
    v[i] = i < n ? spmv_lds(val + o[i]) : (V)0;
  }
#pragma unroll 1
  while (n > 0) {
    V xv[4], w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
      xv[i] = i < n ? spmv_ldg(x + c[i]) : (V)0;
      w[i] = v[i];
    }
    int m = 0;
    d += 4;
    if (n == 4) m = spmv_jad_four(jd_ptr, njd, d, k, &b, o);
#pragma unroll
    for (int i = 0; i < 4; i++) {
      c[i] = i < m ? spmv_lds(col + o[i]) : 0;
      v[i] = i < m ? spmv_lds(val + o[i]) : (V)0;
    }
    s0 += w[0] * xv[0];
    s1 += w[1] * xv[1];
    s0 += w[2] * xv[2];
    s1 += w[3] * xv[3];
    n = m;
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
