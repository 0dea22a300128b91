/* csr16_gpu.cu: csr-vector over 16-bit column offsets (csr16). */
/*
 * Work decomposition and access pattern as csr-vector (csr_vector_gpu.cu):
 * groups of TPR lanes own a row, lane t sums entries row_ptr[i] + t,
 * + t + TPR, ..., the group adds its partial sums with shuffles.  The
 * column of an entry is base[i] + col16[j]: every lane of the group reads
 * base[i] once (one broadcast load) and 2 bytes per entry instead of 4, so
 * a product moves 2 bytes less per nonzero (a sixth of f64 CSR's 12, a
 * quarter of f32's 8).  At TPR 32 a lane's next offsets load while its
 * x gathers are in flight (spmv_dot_cols says where that pays); at
 * TPR 1 and 2 rows longer than a sector are read through the L1
 * (spmv_keep_entries).
 * Valid parameters: TPR in {1, 2, 4, 8, 16, 32}; BS in 32..1024, a
 * multiple of 32.  32- or 64-bit row offsets; f32 or f64.
 * Why a copy of csr-vector's kernel: one inner loop shared through a
 * column accessor (32-bit column or base + offset) made both formats
 * slower in f64, so each keeps its own loop.
 */
#include "spmv_cuda.cuh"

template <typename T, typename I, int TPR, bool KEEP>
__global__ void spmv_csr16_kernel(int64_t rows, const I *__restrict__ rp,
                                  const int32_t *__restrict__ base,
                                  const uint16_t *__restrict__ col16,
                                  const T *__restrict__ val, T alpha,
                                  const T *__restrict__ x, T beta,
                                  T *__restrict__ y) {
  int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t row = gid / TPR;
  int lane = threadIdx.x & (TPR - 1);
  T sum = row < rows ? spmv_csr16_dot<T, I, (TPR == 32), KEEP>(
                           col16, __ldg(base + row), val, x, rp[row] + lane,
                           rp[row + 1], TPR)
                     : T(0);
  sum = spmv_group_sum<T, TPR>(sum);
  if (lane == 0 && row < rows) y[row] = spmv_axpby(alpha, sum, beta, y + row);
}

template <typename T, typename I, int TPR>
static void launch(const struct spmv_layout *L, const I *rp, unsigned g,
                   int bs, T alpha, const T *x, T beta, T *y, cudaStream_t s) {
  const struct spmv_csr_layout *C = &L->u.csr;
  if (spmv_keep_entries(TPR, L->rows, L->nnz))
    spmv_csr16_kernel<T, I, TPR, (TPR <= 2)><<<g, bs, 0, s>>>(
        L->rows, rp, C->base, C->col16, (const T *)C->val, alpha, x, beta, y);
  else
    spmv_csr16_kernel<T, I, TPR, false><<<g, bs, 0, s>>>(
        L->rows, rp, C->base, C->col16, (const T *)C->val, alpha, x, beta, y);
}

template <typename T, typename I>
static int run_i(const struct spmv_dev_matrix *m, const I *rp, T alpha,
                 const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  int bs = L->cfg.bs, tpr = L->cfg.tpr;
  unsigned g = spmv_grid(L->rows * (int64_t)tpr, bs);
  int rc = spmv_pow2_dispatch(tpr, "csr16: TPR", [&](auto k) {
    launch<T, I, decltype(k)::value>(L, rp, g, bs, alpha, x, beta, y, s);
  }, err);
  if (rc) return rc;
  SPMV_CHECK_LAUNCH("csr16 kernel");
  return 0;
}

/* Launches csr16 for m on stream s (see spmv_kernels.h). */
SPMV_CSR_LAUNCHER(csr16, "csr16", u.csr)
