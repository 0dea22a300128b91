/* csr_merge_gpu.cu: merge-path CSR SpMV: equal shares of rows + nonzeros per thread. */
/*
 * Work decomposition: the product is a merge of the row ends (row_ptr[1..])
 * with the nonzeros 0..nnz-1; its rows + nnz steps are cut into equal
 * shares of 8 per thread, so long and short rows cost the same per thread
 * and empty rows cost one step.  Thread 0 of each block finds the block's
 * start and end on the merge path by binary search; each thread then
 * searches its own start inside that window.  A thread writes
 * y = alpha*sum + beta*y for rows it finishes; the first row it finishes
 * (when begun earlier) and the row left open at its end are combined
 * across the warp by a segmented scan (spmv_segreduce.cuh), and warp
 * carries are added in warp order by a fix-up kernel: deterministic.
 * Access pattern: a thread reads a contiguous run of col/val (a warp about
 * 256 consecutive elements per share) and the row_ptr entries it passes;
 * x through the read-only data cache.
 * Valid parameters: BS in 32..1024, a multiple of 32; f32, f64; 32- or
 * 64-bit row offsets.
 */
#include "spmv_segreduce.cuh"

#define MERGE_ITEMS 8

/* The point (i, diag - i) where the merge path crosses diagonal diag. */
template <typename I>
__device__ __forceinline__ int64_t merge_search(int64_t diag, const I *__restrict__ rp,
                                                int64_t nnz, int64_t lo, int64_t hi) {
  int64_t a = diag - nnz > lo ? diag - nnz : lo;
  int64_t b = diag < hi ? diag : hi;
  while (a < b) {
    int64_t p = (a + b) / 2;
    if ((int64_t)rp[p + 1] <= diag - p - 1) a = p + 1; else b = p;
  }
  return a;
}

template <typename T, typename I>
__global__ void spmv_csr_merge_kernel(int64_t rows, int64_t nnz,
                                      const I *__restrict__ rp,
                                      const int32_t *__restrict__ col,
                                      const T *__restrict__ val, T alpha,
                                      const T *__restrict__ x, T beta,
                                      T *__restrict__ y,
                                      int32_t *__restrict__ carry_row,
                                      T *__restrict__ carry_val) {
  __shared__ int64_t win[2];
  const int64_t total = rows + nnz;
  const int64_t tile = (int64_t)blockDim.x * MERGE_ITEMS;
  if (threadIdx.x == 0) {
    int64_t d0 = (int64_t)blockIdx.x * tile;
    int64_t d1 = d0 + tile < total ? d0 + tile : total;
    d0 = d0 < total ? d0 : total;
    win[0] = merge_search(d0, rp, nnz, 0, rows);
    win[1] = merge_search(d1, rp, nnz, 0, rows);
  }
  __syncthreads();
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t diag = t * MERGE_ITEMS;
  int32_t head_row = -1, tail_row = -1;
  T head_sum = 0, s = 0;
  if (diag < total) {
    int64_t dend = diag + MERGE_ITEMS < total ? diag + MERGE_ITEMS : total;
    int64_t i = merge_search(diag, rp, nnz, win[0], win[1]);
    int64_t j = diag - i;
    bool continued = i < rows && j > (int64_t)rp[i];
    int64_t re = i < rows ? (int64_t)rp[i + 1] : nnz;
    for (int64_t d = diag; d < dend; d++) {
      if (j < re) {
        s += spmv_lds(val + j) * spmv_ldg(x + spmv_lds(col + j));
        j++;
      } else {
        if (continued) {
          head_row = (int32_t)i;
          head_sum = s;
          continued = false;
        } else {
          y[i] = spmv_axpby(alpha, s, beta, y + i);
        }
        s = 0;
        i++;
        re = i < rows ? (int64_t)rp[i + 1] : nnz;
      }
    }
    if (i < rows) tail_row = (int32_t)i;
  }
  T carry = spmv_seg_combine(head_row, tail_row, tail_row >= 0 ? s : T(0),
                             t >> 5, carry_row, carry_val);
  if (head_row >= 0)
    y[head_row] = spmv_axpby(alpha, carry + head_sum, beta, y + head_row);
}

/* Scratch bytes of csr-merge: one carry per warp at any block size. */
size_t spmv_merge_work_bytes(int64_t rows, int64_t nnz, size_t val_size) {
  int64_t threads = (rows + nnz + MERGE_ITEMS - 1) / MERGE_ITEMS;
  return spmv_seg_work_bytes(threads / 32 + SPMV_BS_MAX / 32 + 1, val_size);
}

template <typename T, typename I>
static int run_i(const struct spmv_dev_matrix *m, const I *rp, T alpha,
                 const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  int bs = L->cfg.bs;
  if (m->work == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "csr-merge: no scratch for the carries");
  unsigned g = spmv_grid((L->rows + L->nnz + MERGE_ITEMS - 1) / MERGE_ITEMS, bs);
  int64_t nwarps = (int64_t)g * bs / 32;
  int32_t *crow;
  T *cval;
  spmv_seg_work_split<T>(m->work, nwarps, &crow, &cval);
  spmv_csr_merge_kernel<T, I><<<g, bs, 0, s>>>(L->rows, L->nnz, rp, L->u.csr.col,
                                               (const T *)L->u.csr.val, alpha, x,
                                               beta, y, crow, cval);
  SPMV_CHECK_LAUNCH("csr-merge kernel");
  spmv_seg_fixup_kernel<T><<<spmv_grid(nwarps, 256), 256, 0, s>>>(
      nwarps, crow, cval, alpha, y);
  SPMV_CHECK_LAUNCH("csr-merge fix-up kernel");
  return 0;
}

template <typename T>
static int run(const struct spmv_dev_matrix *m, double alpha, const void *x,
               double beta, void *y, cudaStream_t s, struct spmv_error *err) {
  const struct spmv_csr_layout *C = &m->L.u.csr;
  int rc = spmv_check_bs(m->L.cfg.bs, "csr-merge", err);
  if (rc) return rc;
  if (m->L.rows == 0) return 0;
  if (C->row_ptr32)
    return run_i<T, int32_t>(m, C->row_ptr32, (T)alpha, (const T *)x, (T)beta,
                             (T *)y, s, err);
  return run_i<T, int64_t>(m, C->row_ptr64, (T)alpha, (const T *)x, (T)beta,
                           (T *)y, s, err);
}

/* Launches csr-merge for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(csr_merge) {
  if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err);
  return run<double>(m, alpha, x, beta, y, s, err);
}
