/* csr_dev.cu: the device arrays of the CSR layouts (csr-scalar, csr-vector,
 * csr-merge and cusparse's ALG1 and ALG2 share csr; csr16, csr-adaptive, csr-stream,
 * csr-stream16, csr-panel), and the device's fill of csr16 and csr-stream16. */
#include "spmv_dev_arrays.cuh"

/* Appends the arrays of CSR C: its row offsets (32- or 64-bit), columns
 * and values. */
static void csr_arrays(struct spmv_layout *L, struct spmv_csr_layout *C,
                       size_t vs, struct array_ref *a, int *n) {
  if (C->row_ptr32) add(a, n, &C->row_ptr32, (size_t)(L->rows + 1) * 4);
  else add(a, n, &C->row_ptr64, (size_t)(L->rows + 1) * 8);
  add(a, n, &C->col, (size_t)L->nnz * 4);
  add(a, n, &C->val, (size_t)L->nnz * vs);
}

/* csr's row offsets, columns and values. */
int spmv_csr_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a) {
  int n = 0;
  csr_arrays(L, &L->u.csr, vs, a, &n);
  return n;
}

/* csr16's row offsets, each row's base column, the 16-bit offsets and the
 * values. */
int spmv_csr16_dev_arrays(struct spmv_layout *L, size_t vs,
                          struct array_ref *a) {
  int n = 0;
  struct spmv_csr_layout *C = &L->u.csr;
  if (C->row_ptr32) add(a, &n, &C->row_ptr32, (size_t)(L->rows + 1) * 4);
  else add(a, &n, &C->row_ptr64, (size_t)(L->rows + 1) * 8);
  add(a, &n, &C->base, (size_t)L->rows * 4);
  add(a, &n, &C->col16, (size_t)L->nnz * 2);
  add(a, &n, &C->val, (size_t)L->nnz * vs);
  return n;
}

/* csr-adaptive's CSR, its bins' rows and its long rows' chunks. */
int spmv_csr_adaptive_dev_arrays(struct spmv_layout *L, size_t vs,
                                 struct array_ref *a) {
  int n = 0;
  struct spmv_adaptive_layout *A = &L->u.adaptive;
  csr_arrays(L, &A->csr, vs, a, &n);
  add(a, &n, &A->rows, (size_t)A->bin_start[A->nbins] * 4);
  add(a, &n, &A->long_rows, (size_t)A->nlong * 4);
  add(a, &n, &A->long_chunk, A->long_chunk ? (size_t)(A->nlong + 1) * 8 : 0);
  return n;
}

/* csr-stream's CSR, its row blocks and its long rows' chunks. */
int spmv_csr_stream_dev_arrays(struct spmv_layout *L, size_t vs,
                               struct array_ref *a) {
  int n = 0;
  struct spmv_stream_layout *D = &L->u.stream;
  csr_arrays(L, &D->csr, vs, a, &n);
  add(a, &n, &D->blk_row, (size_t)D->nblocks * 8);
  add(a, &n, &D->blk_ent, (size_t)D->nblocks * 16);
  add(a, &n, &D->long_rows, (size_t)D->nlong * 4);
  add(a, &n, &D->long_chunk, D->long_chunk ? (size_t)(D->nlong + 1) * 8 : 0);
  return n;
}

/* csr-stream16's, with 16-bit offsets from each block's or chunk's base. */
int spmv_csr_stream16_dev_arrays(struct spmv_layout *L, size_t vs,
                                 struct array_ref *a) {
  int n = 0;
  struct spmv_stream_layout *D = &L->u.stream;
  struct spmv_csr_layout *C = &D->csr;
  if (C->row_ptr32) add(a, &n, &C->row_ptr32, (size_t)(L->rows + 1) * 4);
  else add(a, &n, &C->row_ptr64, (size_t)(L->rows + 1) * 8);
  add(a, &n, &C->col16, (size_t)L->nnz * 2);
  add(a, &n, &C->val, (size_t)L->nnz * vs);
  add(a, &n, &D->blk_base, (size_t)D->nblocks * 4);
  add(a, &n, &D->chunk_base, (size_t)D->nchunks * 4);
  add(a, &n, &D->blk_row, (size_t)D->nblocks * 8);
  add(a, &n, &D->blk_ent, (size_t)D->nblocks * 16);
  add(a, &n, &D->long_rows, (size_t)D->nlong * 4);
  add(a, &n, &D->long_chunk, D->long_chunk ? (size_t)(D->nlong + 1) * 8 : 0);
  return n;
}

/* csr-panel's row offsets per panel slot, 16-bit offsets and values. */
int spmv_csr_panel_dev_arrays(struct spmv_layout *L, size_t vs,
                              struct array_ref *a) {
  int n = 0;
  struct spmv_panel_layout *D = &L->u.panel;
  size_t slots = (size_t)(D->npanels * L->rows) + 1;
  if (D->csr.row_ptr32) add(a, &n, &D->csr.row_ptr32, slots * 4);
  else add(a, &n, &D->csr.row_ptr64, slots * 8);
  add(a, &n, &D->csr.col16, (size_t)L->nnz * 2);
  add(a, &n, &D->csr.val, (size_t)L->nnz * vs);
  return n;
}

/* csr16, a warp per row: entry k's column as its offset from the row's
 * base (csr16_init()). */
template <typename T>
__global__ void spmv_csr16_fill_kernel(struct spmv_csr_layout C, int64_t rows,
                                       const int64_t *__restrict__ rp,
                                       const int32_t *__restrict__ ci,
                                       const double *__restrict__ cv) {
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int64_t nwarps = (int64_t)gridDim.x * blockDim.x / 32;
  int lane = threadIdx.x % 32;
  for (int64_t i = warp; i < rows; i += nwarps) {
    int32_t b = C.base[i];
    for (int64_t k = rp[i] + lane; k < rp[i + 1]; k += 32) {
      C.col16[k] = (uint16_t)(ci[k] - b);
      ((T *)C.val)[k] = (T)cv[k];
    }
  }
}

/* Launches csr16's fill kernel, a warp per row. */
template <typename T>
static void launch_csr16_fill(struct spmv_layout *D, const struct spmv_csr *A,
                              const int64_t *rp, const int32_t *ci, const double *cv,
                              const int64_t *start) {
  if (A->rows > 0)
    spmv_csr16_fill_kernel<T><<<fill_grid(A->rows * 32), 256>>>(D->u.csr, A->rows, rp,
                                                                ci, cv);
  return;
}

SPMV_DEV_FILLER(csr16, launch_csr16_fill)

/* csr-stream16, a thread block per row block, then one per long row: each
 * entry's column as its offset from its block's or chunk's base, and its
 * value (stream16_fill()). */
template <typename T>
__global__ void spmv_stream16_fill_kernel(struct spmv_stream_layout D,
                                          const int64_t *__restrict__ rp,
                                          const int32_t *__restrict__ ci,
                                          const double *__restrict__ cv) {
  for (int64_t b = blockIdx.x; b < D.nblocks; b += gridDim.x) {
    int32_t base = D.blk_base[b];
    for (int64_t k = D.blk_ent[2 * b] + threadIdx.x; k < D.blk_ent[2 * b + 1];
         k += blockDim.x) {
      D.csr.col16[k] = (uint16_t)(ci[k] - base);
      ((T *)D.csr.val)[k] = (T)cv[k];
    }
  }
  for (int64_t r = blockIdx.x; r < D.nlong; r += gridDim.x) {
    int64_t lo = rp[D.long_rows[r]], hi = rp[D.long_rows[r] + 1];
    for (int64_t k = lo + threadIdx.x; k < hi; k += blockDim.x) {
      D.csr.col16[k] =
          (uint16_t)(ci[k] - D.chunk_base[D.long_chunk[r] + (k - lo) / D.chunk_len]);
      ((T *)D.csr.val)[k] = (T)cv[k];
    }
  }
}

/* Launches csr-stream16's fill kernel, a block per row block or long row. */
template <typename T>
static void launch_stream16_fill(struct spmv_layout *D, const struct spmv_csr *A,
                                 const int64_t *rp, const int32_t *ci, const double *cv,
                                 const int64_t *start) {
  int64_t n = D->u.stream.nblocks > D->u.stream.nlong ? D->u.stream.nblocks
                                                      : D->u.stream.nlong;
  if (n > 0)
    spmv_stream16_fill_kernel<T><<<(unsigned)(n < 65535 ? n : 65535), 256>>>(
        D->u.stream, rp, ci, cv);
  return;
}

SPMV_DEV_FILLER(csr_stream16, launch_stream16_fill)
