/* csr_merge_gpu.cu: merge-path CSR SpMV: equal shares of rows + nonzeros per thread. */
/*
 * Work decomposition: the product is a merge of the row ends (row_ptr[1..])
 * with the nonzeros 0..nnz-1; its rows + nnz steps are cut into tiles of
 * BS*7 steps, one per block, so long and short rows cost the same and an
 * empty row costs one step.  A first kernel finds every tile's start on
 * the merge path (one binary search per tile).  A block then stages its
 * tile in shared memory: the products val[j]*x[col[j]] of its nonzeros and
 * its row ends, both read coalesced from global memory; each thread finds
 * its 7 steps inside the tile by a search in shared memory and walks them.
 * A thread writes y = alpha*sum + beta*y for rows it finishes; the first
 * row it finishes (when begun earlier) and the row left open at its end
 * are combined across the block by a segmented scan (spmv_segreduce.cuh),
 * and block carries are added in block order by a fix-up kernel:
 * deterministic, no atomics.
 * Access pattern: col, val and row_ptr read once, coalesced; x through the
 * read-only data cache; shared memory BS*7*(sizeof(T) + 4) bytes.
 * Valid parameters: BS in 32..1024, a multiple of 32 (BS*7*12 bytes of
 * shared memory must fit: BS <= 512 in f64); f32, f64; 32- or 64-bit row
 * offsets.
 */
#include "spmv_segreduce.cuh"

#define MERGE_ITEMS 7

/* The point (i, diag - i) where the merge path crosses diagonal diag. */
template <typename I>
__device__ __forceinline__ int64_t merge_search(int64_t diag, const I *__restrict__ rp,
                                                int64_t nnz, int64_t rows) {
  int64_t a = diag - nnz > 0 ? diag - nnz : 0;
  int64_t b = diag < rows ? diag : rows;
  while (a < b) {
    int64_t p = (a + b) / 2;
    if ((int64_t)rp[p + 1] <= diag - p - 1) a = p + 1; else b = p;
  }
  return a;
}

/* Row coordinate of the start of every tile (ntiles + 1 of them). */
template <typename I>
__global__ void spmv_csr_merge_partition_kernel(int64_t rows, int64_t nnz,
                                                const I *__restrict__ rp,
                                                int64_t tile, int64_t ntiles,
                                                int64_t *__restrict__ part) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t > ntiles) return;
  int64_t total = rows + nnz;
  int64_t d = t * tile < total ? t * tile : total;
  part[t] = merge_search(d, rp, nnz, rows);
}

template <typename T, typename I>
__global__ void spmv_csr_merge_kernel(int64_t rows, int64_t nnz,
                                      const I *__restrict__ rp,
                                      const int32_t *__restrict__ col,
                                      const T *__restrict__ val, T alpha,
                                      const T *__restrict__ x, T beta,
                                      T *__restrict__ y,
                                      const int64_t *__restrict__ part,
                                      int32_t *__restrict__ carry_row,
                                      T *__restrict__ carry_val) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int tile = blockDim.x * MERGE_ITEMS;
  T *s_prod = (T *)smem;
  int32_t *s_re = (int32_t *)(s_prod + tile);
  const int64_t total = rows + nnz;
  const int64_t d0 = (int64_t)blockIdx.x * tile;
  const int64_t d1 = d0 + tile < total ? d0 + tile : total;
  const int64_t i0 = part[blockIdx.x], i1 = part[blockIdx.x + 1];
  const int64_t j0 = d0 - i0, j1 = d1 - i1;
  const int ni = (int)(i1 - i0), nj = (int)(j1 - j0);

  /* Stage the tile: products of its nonzeros, ends of its rows (clamped to
     the tile, relative to j0), and the start of its first row. */
  for (int k = threadIdx.x; k < nj; k += blockDim.x)
    s_prod[k] = spmv_lds(val + j0 + k) * spmv_ldg(x + spmv_lds(col + j0 + k));
  for (int k = threadIdx.x; k <= ni; k += blockDim.x) {
    int64_t r = i0 + k;
    int64_t e = r < rows ? (int64_t)rp[r + 1] : j1;
    s_re[k] = (int32_t)((e < j1 ? e : j1) - j0);
  }
  int64_t start0 = i0 < rows ? (int64_t)rp[i0] - j0 : 0;
  int32_t s0 = (int32_t)(start0 < -1 ? -1 : start0);
  __syncthreads();

  int dl = threadIdx.x * MERGE_ITEMS, dn = (int)(d1 - d0);
  int32_t head_row = -1, tail_row = -1;
  T head_sum = 0, s = 0;
  if (dl < dn) {
    int dend = dl + MERGE_ITEMS < dn ? dl + MERGE_ITEMS : dn;
    int a = dl - nj > 0 ? dl - nj : 0, b = dl < ni ? dl : ni;
    while (a < b) {
      int p = (a + b) / 2;
      if (s_re[p] <= dl - p - 1) a = p + 1; else b = p;
    }
    int il = a, jl = dl - a;
    int64_t i = i0 + il;
    bool continued = i < rows && jl > (il > 0 ? s_re[il - 1] : s0);
    int re = s_re[il];
    for (int d = dl; d < dend; d++) {
      if (jl < re) {
        s += s_prod[jl++];
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
        il++;
        re = s_re[il];
      }
    }
    if (i < rows) tail_row = (int32_t)i;
  }
  T carry = spmv_seg_combine(head_row, tail_row, tail_row >= 0 ? s : T(0),
                             carry_row, carry_val);
  if (head_row >= 0)
    y[head_row] = spmv_axpby(alpha, carry + head_sum, beta, y + head_row);
}

/* Tiles of the smallest block size bound the scratch for any block size. */
static int64_t max_tiles(int64_t rows, int64_t nnz) {
  return (rows + nnz) / (SPMV_BS_MIN * MERGE_ITEMS) + 2;
}

/* Scratch bytes of csr-merge: tile starts, then one carry per warp. */
size_t spmv_merge_work_bytes(int64_t rows, int64_t nnz, size_t val_size) {
  int64_t threads = (rows + nnz + MERGE_ITEMS - 1) / MERGE_ITEMS;
  size_t a = ((size_t)(max_tiles(rows, nnz) + 1) * 8 + 255) / 256 * 256;
  return a + spmv_seg_work_bytes(threads / 32 + SPMV_BS_MAX / 32 + 1, val_size);
}

template <typename T, typename I>
static int run_i(const struct spmv_dev_matrix *m, const I *rp, T alpha,
                 const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  int bs = L->cfg.bs;
  int64_t tile = (int64_t)bs * MERGE_ITEMS;
  size_t shmem = (size_t)tile * (sizeof(T) + 4) + 4;
  if (m->work == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "csr-merge: no scratch for the carries");
  if (shmem > 48 * 1024)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-merge: block size %d needs %zu bytes of shared memory, over 48 KiB",
                          bs, shmem);
  int64_t ntiles = (L->rows + L->nnz + tile - 1) / tile;
  int64_t nwarps = ntiles * bs / 32;
  int64_t *part = (int64_t *)m->work;
  size_t a = ((size_t)(max_tiles(L->rows, L->nnz) + 1) * 8 + 255) / 256 * 256;
  int32_t *crow;
  T *cval;
  spmv_seg_work_split<T>((char *)m->work + a, nwarps, &crow, &cval);
  spmv_csr_merge_partition_kernel<I><<<spmv_grid(ntiles + 1, 256), 256, 0, s>>>(
      L->rows, L->nnz, rp, tile, ntiles, part);
  SPMV_CHECK_LAUNCH("csr-merge partition kernel");
  spmv_csr_merge_kernel<T, I><<<(unsigned)ntiles, bs, shmem, s>>>(
      L->rows, L->nnz, rp, L->u.csr.col, (const T *)L->u.csr.val, alpha, x, beta,
      y, part, crow, cval);
  SPMV_CHECK_LAUNCH("csr-merge kernel");
  spmv_seg_fixup_kernel<T><<<spmv_seg_fixup_grid(ntiles), 256, 0, s>>>(
      ntiles, crow, cval, alpha, y);
  SPMV_CHECK_LAUNCH("csr-merge fix-up kernel");
  return 0;
}

/* Launches csr-merge for m on stream s (see spmv_kernels.h). */
SPMV_CSR_LAUNCHER(csr_merge, "csr-merge", u.csr)
