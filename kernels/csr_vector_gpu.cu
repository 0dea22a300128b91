/* csr_vector_gpu.cu: CSR SpMV with TPR threads per row (TPR_C of Gropp & Guo). */
/*
 * Work decomposition: consecutive groups of TPR lanes of a warp each own
 * one row (BS/TPR rows per block, ceil(rows*TPR/BS) blocks).  Lane t of a
 * group sums entries row_ptr[i] + t, + t + TPR, ...; the group then adds
 * its TPR partial sums with __shfl_down_sync and lane 0 writes y[i].
 * Access pattern: the lanes of a group read consecutive col/val entries,
 * so a warp reads 32/TPR runs of TPR consecutive elements per step (fully
 * coalesced at TPR = 32).  x goes through the read-only data cache.
 * From TPR 16 a lane's next columns load while its x gathers are in
 * flight (spmv_dot_cols says where that pays); at TPR 1
 * and 2 rows longer than a sector are read through the L1
 * (spmv_keep_entries).
 * Valid parameters: TPR in {1, 2, 4, 8, 16, 32}; BS in 32..1024, a
 * multiple of 32.  32- or 64-bit row offsets; f32 or f64.
 */
#include "spmv_cuda.cuh"

template <typename T, typename I, int TPR, bool KEEP>
__global__ void spmv_csr_vector_kernel(int64_t rows, const I *__restrict__ rp,
                                       const int32_t *__restrict__ col,
                                       const T *__restrict__ val, T alpha,
                                       const T *__restrict__ x, T beta,
                                       T *__restrict__ y) {
  int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t row = gid / TPR;
  int lane = threadIdx.x & (TPR - 1);
  T sum = row < rows ? spmv_csr_dot<T, I, (TPR >= 16), KEEP>(col, val, x, rp[row] + lane, rp[row + 1], TPR)
                     : T(0);
  sum = spmv_group_sum<T, TPR>(sum);
  if (lane == 0 && row < rows) y[row] = spmv_axpby(alpha, sum, beta, y + row);
}

template <typename T, typename I, int TPR>
static void launch(const struct spmv_layout *L, const I *rp, unsigned g,
                   int bs, T alpha, const T *x, T beta, T *y, cudaStream_t s) {
  const struct spmv_csr_layout *C = &L->u.csr;
  if (spmv_keep_entries(TPR, L->rows, L->nnz))
    spmv_csr_vector_kernel<T, I, TPR, (TPR <= 2)><<<g, bs, 0, s>>>(
        L->rows, rp, C->col, (const T *)C->val, alpha, x, beta, y);
  else
    spmv_csr_vector_kernel<T, I, TPR, false><<<g, bs, 0, s>>>(
        L->rows, rp, C->col, (const T *)C->val, alpha, x, beta, y);
}

template <typename T, typename I>
static int run_i(const struct spmv_dev_matrix *m, const I *rp, T alpha,
                 const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  int bs = L->cfg.bs, tpr = L->cfg.tpr;
  unsigned g = spmv_grid(L->rows * (int64_t)tpr, bs);
  int rc = spmv_pow2_dispatch(tpr, "csr-vector: TPR", [&](auto k) {
    launch<T, I, decltype(k)::value>(L, rp, g, bs, alpha, x, beta, y, s);
  }, err);
  if (rc) return rc;
  SPMV_CHECK_LAUNCH("csr-vector kernel");
  return 0;
}

/* Launches csr-vector for m on stream s (see spmv_kernels.h). */
SPMV_CSR_LAUNCHER(csr_vector, "csr-vector", u.csr)
