/* ell_gpu.cu: ELLPACK SpMV, one thread per row over the column-major padded arrays. */
/*
 * Work decomposition: thread i computes row i (ceil(rows/BS) blocks).
 * Access pattern: entry k of row i is at k*pitch + i, so at each step a
 * warp reads 32 consecutive col and val elements (coalesced, aligned since
 * pitch is a multiple of 32).  A thread stops at its row's first padding
 * entry (column -1): padding is not multiplied, and its values are not
 * read.  Two steps at a time, the next two columns loaded while this
 * two's x gathers are in flight.  x through the read-only data cache.
 * Valid parameters: BS in 32..1024, a multiple of 32; width >= 0; f32, f64.
 */
#include "spmv_cuda.cuh"

template <typename T>
__global__ void spmv_ell_kernel(int64_t rows, int64_t width, int64_t pitch,
                                const int32_t *__restrict__ col,
                                const T *__restrict__ val, T alpha,
                                const T *__restrict__ x, T beta,
                                T *__restrict__ y) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  T s0 = 0, s1 = 0;
  int64_t k = 0, p = i;
  if (width >= 2) {
    /* The next two columns load while this two's x gathers wait; a row
     * ends at its first padding column. */
    int32_t c0 = spmv_lds(col + p), c1 = spmv_lds(col + p + pitch);
#pragma unroll 1
    for (;;) {
      if (c0 < 0) { k = width; break; }
      T x0 = spmv_ldg(x + c0), v0 = spmv_lds(val + p);
      if (c1 < 0) { s0 += v0 * x0; k = width; break; }
      T x1 = spmv_ldg(x + c1), v1 = spmv_lds(val + p + pitch);
      k += 2;
      p += 2 * pitch;
      bool more = k + 1 < width;
      if (more) {
        c0 = spmv_lds(col + p);
        c1 = spmv_lds(col + p + pitch);
      }
      s0 += v0 * x0;
      s1 += v1 * x1;
      if (!more) break;
    }
  }
  if (k < width) {
    int32_t c = spmv_lds(col + p);
    if (c >= 0) s0 += spmv_lds(val + p) * spmv_ldg(x + c);
  }
  y[i] = spmv_axpby(alpha, s0 + s1, beta, y + i);
}

/* y = alpha*E*x + beta*y for the ELL arrays E; used by ell and hyb. */
template <typename T>
int spmv_ell_run(const struct spmv_ell_layout *E, int64_t rows, int bs,
                 T alpha, const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  if (rows == 0) return 0;
  if (E->width > 0 && E->pitch < rows)
    return spmv_error_set(err, SPMV_EINVAL, "ell: pitch %lld below %lld rows",
                          (long long)E->pitch, (long long)rows);
  spmv_ell_kernel<T><<<spmv_grid(rows, bs), bs, 0, s>>>(
      rows, E->width, E->pitch, E->col, (const T *)E->val, alpha, x, beta, y);
  SPMV_CHECK_LAUNCH("ell kernel");
  return 0;
}

template int spmv_ell_run<float>(const struct spmv_ell_layout *, int64_t, int,
                                 float, const float *, float, float *,
                                 cudaStream_t, struct spmv_error *);
template int spmv_ell_run<double>(const struct spmv_ell_layout *, int64_t, int,
                                  double, const double *, double, double *,
                                  cudaStream_t, struct spmv_error *);

/* Launches ell for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(ell) {
  int rc = spmv_check_bs(m->L.cfg.bs, "ell", err);
  if (rc) return rc;
  if (m->L.dtype == SPMV_F32)
    return spmv_ell_run<float>(&m->L.u.ell, m->L.rows, m->L.cfg.bs, (float)alpha,
                               (const float *)x, (float)beta, (float *)y, s, err);
  return spmv_ell_run<double>(&m->L.u.ell, m->L.rows, m->L.cfg.bs, alpha,
                              (const double *)x, beta, (double *)y, s, err);
}
