/* csr_adaptive_gpu.cu: CSR SpMV with rows binned by length, TPR = 2^k per bin (Gropp & Guo TPR_A I/II). */
/*
 * Work decomposition: one launch covers every bin.  The grid is cut into
 * consecutive ranges of blocks, one per non-empty bin k, each block of bin
 * k handling BS/TPR_k rows of that bin with TPR_k = min(2^k, BS) lanes per
 * row; then one block per chunk of the long rows (rows longer than
 * base*2^(nbins-1), split by the layout in chunks of chunk_len entries).
 * A chunk's block writes its sum to partial[c]; a second kernel (a warp
 * per long row, spmv_longrow.cuh) adds the chunks of each long row in an
 * order fixed by the layout and writes y, so the result does not depend
 * on scheduling.
 * Reductions: TPR <= 32 with __shfl_down_sync inside the group; TPR > 32
 * and chunks: per-warp shuffles, then the warps' sums in warp order from
 * shared memory.
 * Access pattern: a row's lanes read consecutive col/val entries; the bin's
 * row list and row_ptr are read once per row; x through the read-only
 * data cache.
 * Valid parameters: BS in 32..1024, a multiple of 32; up to
 * SPMV_ADAPTIVE_MAX_BINS bins (TPR above BS is capped at BS); f32, f64;
 * 32- or 64-bit row offsets.
 */
#include "spmv_longrow.cuh"

struct adaptive_plan {
  int64_t block_off[SPMV_ADAPTIVE_MAX_BINS + 2]; /* first block of bin k; [nbins] = first chunk block */
  int64_t bin_start[SPMV_ADAPTIVE_MAX_BINS + 1];
  int nbins;
};

template <typename T, typename I>
__global__ void spmv_csr_adaptive_kernel(
    adaptive_plan p, const I *__restrict__ rp, const int32_t *__restrict__ col,
    const T *__restrict__ val, const int32_t *__restrict__ bin_rows,
    const int32_t *__restrict__ long_rows, const int64_t *__restrict__ long_chunk,
    int64_t nlong, int64_t chunk_len, T alpha, const T *__restrict__ x, T beta,
    T *__restrict__ y, T *__restrict__ partial) {
  __shared__ T sh[32];
  int64_t b = blockIdx.x;
  int k = 0;
  while (k < p.nbins && b >= p.block_off[k + 1]) k++;
  if (k < p.nbins) {
    int tpr = min(1 << k, (int)blockDim.x);
    int64_t slot = (b - p.block_off[k]) * (blockDim.x / tpr) + threadIdx.x / tpr;
    int64_t idx = p.bin_start[k] + slot;
    bool live = idx < p.bin_start[k + 1];
    int lane = threadIdx.x & (tpr - 1);
    int32_t row = live ? bin_rows[idx] : 0;
    T sum = live ? spmv_csr_dot<T, I>(col, val, x, rp[row] + lane, rp[row + 1], (I)tpr)
                 : T(0);
    if (tpr <= 32) {
      sum = spmv_group_sum_rt(sum, tpr);
      if (lane == 0 && live) y[row] = spmv_axpby(alpha, sum, beta, y + row);
      return;
    }
    /* TPR > 32: whole warps per row; the warps of a row add up in order. */
    sum = spmv_group_sum<T, 32>(sum);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (lane == 0 && live) {
      T t = 0;
      for (int w = 0; w < tpr / 32; w++) t += sh[(threadIdx.x >> 5) + w];
      y[row] = spmv_axpby(alpha, t, beta, y + row);
    }
    return;
  }
  /* A chunk of a long row. */
  spmv_long_chunk<T, I, int32_t>(b - p.block_off[p.nbins], rp, col, NULL, val,
                                 x, long_rows, long_chunk, nlong, chunk_len,
                                 partial, sh);
}

template <typename T, typename I>
static int run_i(const struct spmv_dev_matrix *m, const I *rp, T alpha,
                 const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  const struct spmv_adaptive_layout *A = &m->L.u.adaptive;
  int bs = m->L.cfg.bs;
  if (A->nbins < 1 || A->nbins > SPMV_ADAPTIVE_MAX_BINS)
    return spmv_error_set(err, SPMV_EINVAL, "csr-adaptive: %d bins, not in [1, %d]",
                          A->nbins, SPMV_ADAPTIVE_MAX_BINS);
  int rc = spmv_long_ready("csr-adaptive", A->nlong, A->chunk_len, m->work, err);
  if (rc) return rc;
  adaptive_plan p;
  p.nbins = A->nbins;
  int64_t off = 0;
  for (int k = 0; k < A->nbins; k++) {
    int tpr = (1 << k) < bs ? (1 << k) : bs;
    int64_t nrows = A->bin_start[k + 1] - A->bin_start[k];
    p.block_off[k] = off;
    p.bin_start[k] = A->bin_start[k];
    off += (nrows + bs / tpr - 1) / (bs / tpr);
  }
  p.bin_start[A->nbins] = A->bin_start[A->nbins];
  p.block_off[A->nbins] = off;
  int64_t nchunks = A->nlong > 0 ? A->nchunks : 0;
  p.block_off[A->nbins + 1] = off + nchunks;
  int64_t blocks = off + nchunks;
  if (blocks > 0) {
    spmv_csr_adaptive_kernel<T, I><<<(unsigned)blocks, bs, 0, s>>>(
        p, rp, A->csr.col, (const T *)A->csr.val, A->rows, A->long_rows,
        A->long_chunk, A->nlong, A->chunk_len, alpha, x, beta, y, (T *)m->work);
    SPMV_CHECK_LAUNCH("csr-adaptive kernel");
  }
  return spmv_long_finish<T>("csr-adaptive", A->nlong, A->long_rows,
                             A->long_chunk, (const T *)m->work, alpha, beta, y,
                             s, err);
}

/* Launches csr-adaptive for m on stream s (see spmv_kernels.h). */
SPMV_CSR_LAUNCHER(csr_adaptive, "csr-adaptive", u.adaptive.csr)
