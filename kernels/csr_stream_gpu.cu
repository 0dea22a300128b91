/* csr_stream_gpu.cu: csr-stream(16), nonzero-balanced row blocks staged in shared memory. */
/*
 * Work decomposition: one block per row block of the layout (at most
 * BS*K entries and BS*K rows, cut once at conversion), then one block per
 * chunk of the long rows (spmv_longrow.cuh) and the second step that adds
 * the chunks.  A row block reads its rows and entries range (one step),
 * then issues together its K col/val loads per thread and the loads of its
 * row ends into shared memory, then the K gathers of x, and stages
 * val[j]*x[col[j]] in shared memory: every load coalesced whatever the
 * row lengths.  In f32 with K >= 4 a thread loads its entries 4 at a time
 * (16 bytes of values, from the aligned vector at or before e0): on the
 * H200 that ran 5-16 % faster on irregular rows (maceconlike_x16 at K 4,
 * cop20k_A_x16 and rma10_x16 at K 8); in f64 (2 per 16 bytes) it ran
 * 5-20 % slower at K 4, the best K there, so f64 loads one at a time.  Then
 * groups of TPR threads sum the rows, TPR the largest
 * power of two up to 32 with TPR * rows <= BS, in rounds that every lane
 * of a warp takes together (the shuffles need them all).
 * Why: rows of a few to a few hundred entries of irregular length waste
 * lanes in csr-vector (a fixed TPR per row) and pay a merge-path search
 * per product in csr-merge; here the cut costs nothing per product, and
 * a block waits for memory three times (its range; entries and row ends;
 * x), which is what its time is made of at these sizes.
 * csr-stream16 reads 2-byte column offsets from the block's (chunk's)
 * base instead of 4-byte columns: the kernel is templated on the column
 * type C, with no base (0) for 32-bit columns.
 * Shared memory: BS*K values and BS*K row ends (4 bytes).
 * Valid parameters: BS in 32..1024, a multiple of 32 and equal to the BS
 * the layout was cut for; K in {1, 2, 4, 8, 16} with the shared memory
 * within SPMV_STREAM_SHMEM bytes; f32, f64; 32- or 64-bit row offsets.
 */
#include "spmv_longrow.cuh"

/* V consecutive elements, loaded as one aligned access. */
template <typename E, int V>
struct alignas(sizeof(E) * V) spmv_vec {
  E v[V];
};

template <typename T, typename I, typename C, int K>
__global__ void spmv_csr_stream_kernel(
    int64_t nblocks, const int32_t *__restrict__ blk_row,
    const int64_t *__restrict__ blk_ent, const int32_t *__restrict__ blk_base,
    const int32_t *__restrict__ chunk_base, const I *__restrict__ rp,
    int64_t nnz, const C *__restrict__ col, const T *__restrict__ val, T alpha,
    const T *__restrict__ x, T beta, T *__restrict__ y,
    const int32_t *__restrict__ long_rows,
    const int64_t *__restrict__ long_chunk, int64_t nlong, int64_t chunk_len,
    T *__restrict__ partial) {
  extern __shared__ __align__(16) unsigned char spmv_stream_smem[];
  T *sh = reinterpret_cast<T *>(spmv_stream_smem);
  int64_t b = blockIdx.x;
  if (b >= nblocks) {
    spmv_long_chunk<T, I, C>(b - nblocks, rp, col, chunk_base, val, x,
                             long_rows, long_chunk, nlong, chunk_len, partial, sh);
    return;
  }
  const int bs = blockDim.x;
  int *ends = reinterpret_cast<int *>(sh + bs * K); /* row t ends at ends[t] */
  const int32_t r0 = blk_row[2 * b], nr = blk_row[2 * b + 1] - r0;
  const int64_t e0 = blk_ent[2 * b];
  const int n = (int)(blk_ent[2 * b + 1] - e0);
  const T *xb = blk_base != NULL ? x + blk_base[b] : x;
  /* Rows' ends, loaded while the entries are in flight. */
  auto load_ends = [&]() {
    for (int t = threadIdx.x; t < nr; t += bs)
      ends[t] = (int)(spmv_lds(rp + r0 + t + 1) - (I)e0);
  };
  constexpr int V = 4; /* f32 entries per 16-byte load of values */
  if constexpr (sizeof(T) == 4 && K >= V) {
    /* Whole aligned vectors of V entries from a0 <= e0: a thread's K
     * entries in K/V loads of each array (one more for the skew). */
    constexpr int NV = K / V + 1;
    const int64_t a0 = e0 & ~(int64_t)(V - 1);
    const int skew = (int)(e0 - a0), nv = (n + skew + V - 1) / V;
    spmv_vec<C, V> cv[NV];
    spmv_vec<T, V> vv[NV];
#pragma unroll
    for (int q = 0; q < NV; q++) {
      int j = threadIdx.x + q * bs;
      if (j < nv && a0 + (int64_t)(j + 1) * V <= nnz) {
        cv[q] = reinterpret_cast<const spmv_vec<C, V> *>(col + a0)[j];
        vv[q] = reinterpret_cast<const spmv_vec<T, V> *>(val + a0)[j];
      } else if (j < nv) { /* the matrix's last entries: no reading past them */
#pragma unroll
        for (int u = 0; u < V; u++) {
          int64_t e = a0 + (int64_t)j * V + u;
          cv[q].v[u] = e < nnz ? col[e] : C(0);
          vv[q].v[u] = e < nnz ? val[e] : T(0);
        }
      }
    }
    load_ends();
#pragma unroll
    for (int q = 0; q < NV; q++) {
      int j = threadIdx.x + q * bs;
      if (j < nv) {
#pragma unroll
        for (int u = 0; u < V; u++) {
          int i = j * V + u - skew;
          if (i >= 0 && i < n) sh[i] = vv[q].v[u] * spmv_ldg(xb + cv[q].v[u]);
        }
      }
    }
  } else {
    C c[K];
    T v[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
      int i = threadIdx.x + k * bs;
      if (i < n) {
        c[k] = spmv_lds(col + e0 + i);
        v[k] = spmv_lds(val + e0 + i);
      }
    }
    load_ends();
#pragma unroll
    for (int k = 0; k < K; k++) {
      int i = threadIdx.x + k * bs;
      if (i < n) sh[i] = v[k] * spmv_ldg(xb + c[k]);
    }
  }
  __syncthreads();
  int tpr = 1;
  while (tpr < 32 && 2 * tpr * nr <= bs) tpr *= 2;
  int g = threadIdx.x / tpr, lane = threadIdx.x & (tpr - 1), groups = bs / tpr;
  for (int first = 0; first < nr; first += groups) {
    int t = first + g;
    bool live = t < nr;
    T s = 0;
    if (live) {
      int je = ends[t];
      for (int j = (t ? ends[t - 1] : 0) + lane; j < je; j += tpr) s += sh[j];
    }
    s = spmv_group_sum_rt(s, tpr);
    if (live && lane == 0) y[r0 + t] = spmv_axpby(alpha, s, beta, y + r0 + t);
  }
}

template <typename T, typename I, int K>
static void launch(const struct spmv_stream_layout *D, const I *rp,
                   int64_t nnz, unsigned grid, int bs, T alpha, const T *x, T beta, T *y,
                   T *partial, cudaStream_t s) {
  size_t shmem = (size_t)bs * K * (sizeof(T) + sizeof(int));
  if (D->csr.col16 != NULL)
    spmv_csr_stream_kernel<T, I, uint16_t, K><<<grid, bs, shmem, s>>>(
        D->nblocks, D->blk_row, D->blk_ent, D->blk_base, D->chunk_base, rp,
        nnz, D->csr.col16, (const T *)D->csr.val, alpha, x, beta, y, D->long_rows,
        D->long_chunk, D->nlong, D->chunk_len, partial);
  else
    spmv_csr_stream_kernel<T, I, int32_t, K><<<grid, bs, shmem, s>>>(
        D->nblocks, D->blk_row, D->blk_ent, NULL, NULL, rp, nnz, D->csr.col,
        (const T *)D->csr.val, alpha, x, beta, y, D->long_rows, D->long_chunk,
        D->nlong, D->chunk_len, partial);
}

template <typename T, typename I>
static int run_i(const struct spmv_dev_matrix *m, const I *rp, T alpha,
                 const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  const struct spmv_stream_layout *D = &m->L.u.stream;
  int bs = m->L.cfg.bs;
  T *partial = (T *)m->work;
  if (D->bs != bs)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-stream: layout cut for BS %d, launched with %d",
                          D->bs, bs);
  if ((size_t)bs * D->k * (sizeof(T) + sizeof(int)) > SPMV_STREAM_SHMEM)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-stream: bs %d x k %d values and row ends exceed "
                          "%d bytes of shared memory", bs, D->k, SPMV_STREAM_SHMEM);
  if (D->nlong > 0 && (D->chunk_len <= 0 || partial == NULL))
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-stream: %lld long rows without chunks or scratch",
                          (long long)D->nlong);
  int64_t blocks = D->nblocks + (D->nlong > 0 ? D->nchunks : 0);
  if (blocks > 0) {
    unsigned g = (unsigned)blocks;
    switch (D->k) {
    case 1: launch<T, I, 1>(D, rp, m->L.nnz, g, bs, alpha, x, beta, y, partial, s); break;
    case 2: launch<T, I, 2>(D, rp, m->L.nnz, g, bs, alpha, x, beta, y, partial, s); break;
    case 4: launch<T, I, 4>(D, rp, m->L.nnz, g, bs, alpha, x, beta, y, partial, s); break;
    case 8: launch<T, I, 8>(D, rp, m->L.nnz, g, bs, alpha, x, beta, y, partial, s); break;
    case 16: launch<T, I, 16>(D, rp, m->L.nnz, g, bs, alpha, x, beta, y, partial, s); break;
    default:
      return spmv_error_set(err, SPMV_EINVAL,
                            "csr-stream: k %d not in {1, 2, 4, 8, 16}", D->k);
    }
    SPMV_CHECK_LAUNCH("csr-stream kernel");
  }
  if (D->nlong > 0) {
    spmv_long_finish_kernel<T><<<spmv_grid(D->nlong, 256), 256, 0, s>>>(
        D->nlong, D->long_rows, D->long_chunk, partial, alpha, beta, y);
    SPMV_CHECK_LAUNCH("csr-stream long-row kernel");
  }
  return 0;
}

/* Launches csr-stream or csr-stream16 for m on stream s (see spmv_kernels.h). */
SPMV_CSR_LAUNCHER(csr_stream, "csr-stream", u.stream.csr)
