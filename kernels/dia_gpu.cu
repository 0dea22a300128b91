/* dia_gpu.cu: DIA SpMV, one thread per row over the stored diagonals (Bell & Garland). */
/*
 * Work decomposition: thread i computes row i (ceil(rows/BS) blocks),
 * walking every stored diagonal d: column i + offsets[d], value at
 * d*pitch + i.  Positions outside the matrix hold 0 in the layout and are
 * skipped without touching x.
 * Access pattern: at each diagonal a warp reads 32 consecutive values
 * (coalesced) and 32 consecutive x elements (a contiguous window of x,
 * served by the read-only data cache); the offset of the diagonal is the
 * same address for the whole warp (a broadcast).  No column indices are
 * stored: the fewest bytes of any format on banded matrices.
 * Valid parameters: BS in 32..1024, a multiple of 32; f32, f64.
 */
#include "spmv_cuda.cuh"

template <typename V>
__global__ void spmv_dia_kernel(int64_t rows, int64_t cols, int64_t ndiags,
                                int64_t pitch, const int32_t *__restrict__ off,
                                const V *__restrict__ val, V alpha,
                                const V *__restrict__ x, V beta,
                                V *__restrict__ y) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  V s0 = 0, s1 = 0;
  const V *vp = val + i;
  int64_t d = 0;
  for (; d + 1 < ndiags; d += 2, vp += 2 * pitch) {
    int64_t c0 = i + __ldg(off + d), c1 = i + __ldg(off + d + 1);
    V v0 = spmv_lds(vp), v1 = spmv_lds(vp + pitch);
    if (c0 >= 0 && c0 < cols) s0 += v0 * spmv_ldg(x + c0);
    if (c1 >= 0 && c1 < cols) s1 += v1 * spmv_ldg(x + c1);
  }
  if (d < ndiags) {
    int64_t c = i + __ldg(off + d);
    if (c >= 0 && c < cols) s0 += spmv_lds(vp) * spmv_ldg(x + c);
  }
  y[i] = spmv_axpby(alpha, s0 + s1, beta, y + i);
}

template <typename V>
static int run(const struct spmv_dev_matrix *m, double alpha, const void *x,
               double beta, void *y, cudaStream_t s, struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  const struct spmv_dia_layout *D = &L->u.dia;
  int bs = L->cfg.bs;
  int rc = spmv_check_bs(bs, "dia", err);
  if (rc) return rc;
  if (L->rows == 0) return 0;
  if (D->ndiags > 0 && D->pitch < L->rows)
    return spmv_error_set(err, SPMV_EINVAL, "dia: pitch %lld below %lld rows",
                          (long long)D->pitch, (long long)L->rows);
  spmv_dia_kernel<V><<<spmv_grid(L->rows, bs), bs, 0, s>>>(
      L->rows, L->cols, D->ndiags, D->pitch, D->offsets, (const V *)D->val,
      (V)alpha, (const V *)x, (V)beta, (V *)y);
  SPMV_CHECK_LAUNCH("dia kernel");
  return 0;
}

/* Launches dia for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(dia) {
  if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err);
  return run<double>(m, alpha, x, beta, y, s, err);
}
