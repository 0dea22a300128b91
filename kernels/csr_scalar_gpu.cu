/* csr_scalar_gpu.cu: CSR SpMV with one thread per row (Bell & Garland's scalar kernel). */
/*
 * Work decomposition: thread i of the grid computes row i, walking
 * row_ptr[i] .. row_ptr[i+1] alone; BS threads per block, ceil(rows/BS)
 * blocks.
 * Access pattern: row_ptr is read coalesced; col and val are read by each
 * thread at its own position, so a warp touches up to 32 separate
 * segments per step (uncoalesced: good only for very short rows), read
 * through the L1 where rows are longer than a sector (spmv_keep_entries);
 * x goes through the read-only data cache.
 * In f64 a thread walks its row in chunks of 8 entries, each predicated
 * past the row's end (spmv_csr_dot_chunks): in f64 that beats the
 * compiled two-entry loop, but it slows f32, which walks its whole
 * chunks unpredicated and only the row's last 1..7 entries as a
 * predicated chunk (spmv_csr_dot_chunks_tail).
 * Valid parameters: BS in 32..1024, a multiple of 32.  32- or 64-bit row
 * offsets; f32 or f64.
 */
#include "spmv_cuda.cuh"

template <typename T, typename I, bool KEEP>
__global__ void spmv_csr_scalar_kernel(int64_t rows, const I *__restrict__ rp,
                                       const int32_t *__restrict__ col,
                                       const T *__restrict__ val, T alpha,
                                       const T *__restrict__ x, T beta,
                                       T *__restrict__ y) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  T sum = sizeof(T) == 8
              ? spmv_csr_dot_chunks<T, I, KEEP>(col, val, x, rp[i], rp[i + 1])
              : spmv_csr_dot_chunks_tail<T, I, KEEP>(col, val, x, rp[i],
                                                     rp[i + 1]);
  y[i] = spmv_axpby(alpha, sum, beta, y + i);
}

template <typename T, typename I>
static void launch(const struct spmv_layout *L, const I *rp, T alpha,
                   const T *x, T beta, T *y, cudaStream_t s) {
  const struct spmv_csr_layout *C = &L->u.csr;
  unsigned g = spmv_grid(L->rows, L->cfg.bs);
  if (spmv_keep_entries(1, L->rows, L->nnz))
    spmv_csr_scalar_kernel<T, I, true><<<g, L->cfg.bs, 0, s>>>(
        L->rows, rp, C->col, (const T *)C->val, alpha, x, beta, y);
  else
    spmv_csr_scalar_kernel<T, I, false><<<g, L->cfg.bs, 0, s>>>(
        L->rows, rp, C->col, (const T *)C->val, alpha, x, beta, y);
}

template <typename T>
static int run(const struct spmv_dev_matrix *m, double alpha, const void *x,
               double beta, void *y, cudaStream_t s, struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  const struct spmv_csr_layout *C = &L->u.csr;
  int bs = L->cfg.bs;
  int rc = spmv_check_bs(bs, "csr-scalar", err);
  if (rc) return rc;
  if (L->rows == 0) return 0;
  if (C->row_ptr32)
    launch<T, int32_t>(L, C->row_ptr32, (T)alpha, (const T *)x, (T)beta,
                       (T *)y, s);
  else
    launch<T, int64_t>(L, C->row_ptr64, (T)alpha, (const T *)x, (T)beta,
                       (T *)y, s);
  SPMV_CHECK_LAUNCH("csr-scalar kernel");
  return 0;
}

/* Launches csr-scalar for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(csr_scalar) {
  if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err);
  return run<double>(m, alpha, x, beta, y, s, err);
}
