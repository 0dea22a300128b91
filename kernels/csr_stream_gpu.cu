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
 * (16 bytes of values, from the aligned vector at or before e0), which
 * speeds irregular rows; f64 fits only 2 values in 16 bytes and is
 * slower that way at K 4, its best K, so f64 loads one at a time.
 * At K 16, and at K 8 with 16-bit columns, the products are staged a
 * vector per store, tests only at the block's ends (spmv_stream_ents).
 * Then groups of TPR threads sum the rows, TPR the largest power of two
 * up to 32 with TPR * rows <= BS, in rounds that every lane of a warp
 * takes together (the shuffles need them all); a lane adds its share of
 * a row in four chains, so that its shared-memory loads overlap
 * (spmv_stream_sum).
 * Why: rows of a few to a few hundred entries of irregular length waste
 * lanes in csr-vector (a fixed TPR per row) and pay a merge-path search
 * per product in csr-merge; here the cut costs nothing per product, and
 * a block waits for memory three times (its range; entries and row ends;
 * x), which is what its time is made of at these sizes.
 * csr-stream16 reads 2-byte column offsets from the block's (chunk's)
 * base instead of 4-byte columns: the kernel is templated on the column
 * type C, with no base (0) for 32-bit columns.
 * Shared memory: BS*K values (and 4 more where it stages whole vectors)
 * and BS*K row ends (4 bytes): spmv_stream_shmem.
 * Valid parameters: BS in 32..1024, a multiple of 32 and equal to the BS
 * the layout was cut for; K in {1, 2, 4, 8, 16} with the shared memory
 * within SPMV_STREAM_SHMEM bytes; f32, f64; 32- or 64-bit row offsets.
 * Tried and slower: a persistent grid keeping the next block's loads in
 * flight during a block's sums (it took 72-127 registers); a segmented
 * sum by entry spans for rows of uneven length; values and row ends by
 * asynchronous copies to shared memory.
 */
#include "spmv_longrow.cuh"

/* V consecutive elements, loaded as one aligned access. */
template <typename E, int V>
struct alignas(sizeof(E) * V) spmv_vec {
  E v[V];
};

/* One row block's range: rows r0 .. r0+nr, entries e0 .. e0+n. */
struct spmv_stream_range {
  int32_t r0, nr;
  int64_t e0;
  int n;
};

__device__ __forceinline__ void spmv_stream_range_load(
    struct spmv_stream_range *r, int64_t b, const int32_t *__restrict__ blk_row,
    const int64_t *__restrict__ blk_ent) {
  r->r0 = blk_row[2 * b];
  r->nr = blk_row[2 * b + 1] - r->r0;
  r->e0 = blk_ent[2 * b];
  r->n = (int)(blk_ent[2 * b + 1] - r->e0);
}

/* A thread's K entries of one row block, held in registers from their
 * load to their staging, so that the loads of the next block can be in
 * flight while this one is reduced.  Entry i of the block is thread
 * i % BS's.  In f32 with K >= 4 the entries come 4 at a time (16 bytes of
 * values, from the aligned vector at or before e0). */
template <typename T, typename C, int K, bool VEC = (sizeof(T) == 4 && K >= 4)>
struct spmv_stream_ents {
  static constexpr int PAD = 0; /* staging slots past bs * k */
  C c[K];
  T v[K];
  /* The slot in sh of the block's first entry. */
  __device__ __forceinline__ static int base(const struct spmv_stream_range &) {
    return 0;
  }
  __device__ __forceinline__ void load(const struct spmv_stream_range &r,
                                       const C *__restrict__ col,
                                       const T *__restrict__ val, int64_t) {
#pragma unroll
    for (int k = 0; k < K; k++) {
      int i = threadIdx.x + k * blockDim.x;
      if (i < r.n) {
        c[k] = spmv_lds(col + r.e0 + i);
        v[k] = spmv_lds(val + r.e0 + i);
      }
    }
  }
  /* sh[i] = val[i] * x[col[i]] for the block's entries. */
  __device__ __forceinline__ void stage(const struct spmv_stream_range &r,
                                        const T *__restrict__ xb, T *sh) const {
#pragma unroll
    for (int k = 0; k < K; k++) {
      int i = threadIdx.x + k * blockDim.x;
      if (i < r.n) sh[i] = v[k] * spmv_ldg(xb + c[k]);
    }
  }
};

template <typename T, typename C, int K>
struct spmv_stream_ents<T, C, K, true> {
  static constexpr int V = 4, NV = K / V + 1; /* one more for the skew */
  /* Whole vectors per store where the saved tests pay: at K 16, and at
   * K 8 with 16-bit columns.  At K 4 they do not, and at K 8 with 32-bit
   * columns the vectors spill (20 bytes within 32 registers). */
  static constexpr bool WHOLE = SPMV_STREAM_WHOLE(K, sizeof(T), sizeof(C) == 2);
  static constexpr int PAD = WHOLE ? V : 0;
  spmv_vec<C, V> c[NV];
  spmv_vec<T, V> v[NV];
  /* With WHOLE, entries are staged at their offset from the aligned
   * vector at or before e0, so the first one sits skew slots in. */
  __device__ __forceinline__ static int base(const struct spmv_stream_range &r) {
    return WHOLE ? (int)(r.e0 & (V - 1)) : 0;
  }
  __device__ __forceinline__ void load(const struct spmv_stream_range &r,
                                       const C *__restrict__ col,
                                       const T *__restrict__ val, int64_t nnz) {
    const int64_t a0 = r.e0 & ~(int64_t)(V - 1);
    const int nv = (r.n + (int)(r.e0 - a0) + V - 1) / V;
#pragma unroll
    for (int q = 0; q < NV; q++) {
      int j = threadIdx.x + q * blockDim.x;
      if (j < nv && a0 + (int64_t)(j + 1) * V <= nnz) {
        c[q] = reinterpret_cast<const spmv_vec<C, V> *>(col + a0)[j];
        v[q] = reinterpret_cast<const spmv_vec<T, V> *>(val + a0)[j];
      } else if (j < nv) { /* the matrix's last entries: no reading past them */
#pragma unroll
        for (int u = 0; u < V; u++) {
          int64_t e = a0 + (int64_t)j * V + u;
          c[q].v[u] = e < nnz ? col[e] : C(0);
          v[q].v[u] = e < nnz ? val[e] : T(0);
        }
      }
    }
  }
  /* sh[base + i] = val[i] * x[col[i]].  With WHOLE, a vector wholly
   * inside the block is one 16-byte store without a test per entry (the
   * kernel is near issue-bound in f32); the block's first and last
   * vectors test each entry, whose columns outside the block may be
   * another block's 16-bit offsets. */
  __device__ __forceinline__ void stage(const struct spmv_stream_range &r,
                                        const T *__restrict__ xb, T *sh) const {
    const int skew = (int)(r.e0 & (V - 1));
    const int nv = (r.n + skew + V - 1) / V;
#pragma unroll
    for (int q = 0; q < NV; q++) {
      int j = threadIdx.x + q * blockDim.x;
      int lo = j * V - skew;
      if (WHOLE && lo >= 0 && lo + V <= r.n) {
        spmv_vec<T, V> p;
#pragma unroll
        for (int u = 0; u < V; u++) p.v[u] = v[q].v[u] * spmv_ldg(xb + c[q].v[u]);
        reinterpret_cast<spmv_vec<T, V> *>(sh)[j] = p;
      } else if (j < nv) {
#pragma unroll
        for (int u = 0; u < V; u++) {
          int i = lo + u;
          if (i >= 0 && i < r.n)
            sh[WHOLE ? j * V + u : i] = v[q].v[u] * spmv_ldg(xb + c[q].v[u]);
        }
      }
    }
  }
};

/* The matrix as the kernels see it. */
template <typename T, typename I, typename C>
struct spmv_stream_args {
  int64_t nblocks, nnz;
  const int32_t *blk_row;
  const int64_t *blk_ent;
  const int32_t *blk_base, *chunk_base;
  const I *rp;
  const C *col;
  const T *val;
  const int32_t *long_rows;
  const int64_t *long_chunk;
  int64_t nlong, nchunks, chunk_len;
  T *partial;
};

/* Row ends of the block into shared memory (as slots of sh, from the
 * block's base), then its staged products.
 * (Loading a thread's first row end with the gathers instead helps only
 * f64 at K <= 2 and costs more elsewhere.) */
template <typename T, typename I, typename C, int K>
__device__ __forceinline__ void spmv_stream_stage(
    const spmv_stream_args<T, I, C> &a, const struct spmv_stream_range &r,
    const spmv_stream_ents<T, C, K> &en, const T *__restrict__ xb, T *sh,
    int *ends) {
  const I e0 = (I)r.e0 - (I)en.base(r);
  for (int t = threadIdx.x; t < r.nr; t += blockDim.x)
    ends[t] = (int)(spmv_lds(a.rp + r.r0 + t + 1) - e0);
  en.stage(r, xb, sh);
}

/* The sum of sh[j] for j = b, b + step, ... below e, in four chains so
 * that a long row's shared-memory loads overlap instead of each waiting
 * for the add before it (a warp waits for its longest row). */
template <typename T>
__device__ __forceinline__ T spmv_stream_sum(const T *sh, int b, int e,
                                             int step) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int j = b;
  for (; j + 3 * step < e; j += 4 * step) {
    s0 += sh[j];
    s1 += sh[j + step];
    s2 += sh[j + 2 * step];
    s3 += sh[j + 3 * step];
  }
  for (; j < e; j += step) s0 += sh[j];
  return (s0 + s1) + (s2 + s3);
}

/* Groups of TPR threads sum the staged rows, TPR the largest power of two
 * up to 32 with TPR * rows <= BS, in rounds that every lane of a warp
 * takes together (the shuffles need them all).  With skip_empty, empty
 * rows are left alone (spmv_stream_reduce_sparse wrote them). */
template <typename T>
__device__ __forceinline__ void spmv_stream_reduce(
    const struct spmv_stream_range &r, const T *sh, const int *ends, int base,
    T alpha, T beta, T *__restrict__ y, bool skip_empty) {
  const int bs = blockDim.x;
  int tpr = 1;
  while (tpr < 32 && 2 * tpr * r.nr <= bs) tpr *= 2;
  int g = threadIdx.x / tpr, lane = threadIdx.x & (tpr - 1), groups = bs / tpr;
  for (int first = 0; first < r.nr; first += groups) {
    int t = first + g;
    bool live = t < r.nr;
    T s = 0;
    if (live) {
      int jb = t ? ends[t - 1] : base, je = ends[t];
      live = !skip_empty || je > jb;
      s = spmv_stream_sum(sh, jb + lane, je, tpr);
    }
    s = spmv_group_sum_rt(s, tpr);
    if (live && lane == 0) y[r.r0 + t] = spmv_axpby(alpha, s, beta, y + r.r0 + t);
  }
}

/*
 * A block with more rows than half its threads, in a matrix with many
 * empty rows: the empty rows' y is written at once and the others are
 * listed in the free tail of ends (the count in its last slot, zeroed
 * before the barrier), then summed by groups of TPR sized to their number.
 * Why: summing every row with one thread, a warp waits for its longest
 * row while most of its lanes hold empty ones.  A row's sum
 * does not depend on which group takes it, so results stay bit for bit.
 * More rows than the tail holds: the plain sums, empty rows skipped.
 */
template <typename T>
__device__ __forceinline__ void spmv_stream_reduce_sparse(
    const struct spmv_stream_range &r, const T *sh, int *ends, int slots,
    int base, T alpha, T beta, T *__restrict__ y) {
  const int bs = blockDim.x;
  const unsigned wl = threadIdx.x & 31;
  int *list = ends + r.nr, *cnt = ends + slots - 1, room = slots - 1 - r.nr;
  for (int first = 0; first < r.nr; first += bs) {
    int t = first + (int)threadIdx.x;
    bool live = t < r.nr, full = live && ends[t] > (t ? ends[t - 1] : base);
    if (live && !full) y[r.r0 + t] = spmv_axpby(alpha, T(0), beta, y + r.r0 + t);
    unsigned m = __ballot_sync(0xffffffffu, full);
    int at = 0;
    if (wl == 0 && m != 0) at = atomicAdd(cnt, __popc(m));
    at = __shfl_sync(0xffffffffu, at, 0) + __popc(m & ((1u << wl) - 1u));
    if (full && at < room) list[at] = t;
  }
  __syncthreads();
  const int n = *cnt;
  if (n > room) {
    spmv_stream_reduce(r, sh, ends, base, alpha, beta, y, true);
    return;
  }
  int tpr = 1;
  while (tpr < 32 && 2 * tpr * n <= bs) tpr *= 2;
  int g = threadIdx.x / tpr, lane = threadIdx.x & (tpr - 1), groups = bs / tpr;
  for (int first = 0; first < n; first += groups) {
    int i = first + g, t = 0;
    bool live = i < n;
    T s = 0;
    if (live) {
      t = list[i];
      s = spmv_stream_sum(sh, (t ? ends[t - 1] : base) + lane, ends[t], tpr);
    }
    s = spmv_group_sum_rt(s, tpr);
    if (live && lane == 0) y[r.r0 + t] = spmv_axpby(alpha, s, beta, y + r.r0 + t);
  }
}

/* One CUDA block per row block, then one per chunk of the long rows.  S:
 * the layout has many empty rows (an instance of its own, so that the
 * other matrices' kernels keep their registers). */
template <typename T, typename I, typename C, int K, bool S>
__device__ __forceinline__ void spmv_stream_block(const spmv_stream_args<T, I, C> &a,
                                                  T alpha, const T *__restrict__ x,
                                                  T beta, T *__restrict__ y) {
  extern __shared__ __align__(16) unsigned char spmv_stream_smem[];
  T *sh = reinterpret_cast<T *>(spmv_stream_smem);
  int *ends = reinterpret_cast<int *>(sh + blockDim.x * K +
                                      spmv_stream_ents<T, C, K>::PAD);
  int64_t b = blockIdx.x;
  if (b >= a.nblocks) {
    spmv_long_chunk<T, I, C>(b - a.nblocks, a.rp, a.col, a.chunk_base, a.val, x,
                             a.long_rows, a.long_chunk, a.nlong, a.chunk_len,
                             a.partial, sh);
    return;
  }
  struct spmv_stream_range r;
  const T *xb = a.blk_base != NULL ? x + a.blk_base[b] : x;
  spmv_stream_range_load(&r, b, a.blk_row, a.blk_ent);
  spmv_stream_ents<T, C, K> en;
  en.load(r, a.col, a.val, a.nnz);
  spmv_stream_stage<T, I, C, K>(a, r, en, xb, sh, ends);
  /* Uniform over the block: the list needs a tail of ends to live in. */
  const int slots = (int)blockDim.x * K;
  const bool sparse = S && 2 * r.nr > (int)blockDim.x && r.nr + 33 <= slots;
  if (sparse && threadIdx.x == 0) ends[slots - 1] = 0;
  __syncthreads();
  if (sparse)
    spmv_stream_reduce_sparse(r, sh, ends, slots, en.base(r), alpha, beta, y);
  else
    spmv_stream_reduce(r, sh, ends, en.base(r), alpha, beta, y, false);
}

template <typename T, typename I, typename C, int K, bool S>
__global__ void spmv_csr_stream_kernel(spmv_stream_args<T, I, C> a, T alpha,
                                       const T *__restrict__ x, T beta,
                                       T *__restrict__ y) {
  spmv_stream_block<T, I, C, K, S>(a, alpha, x, beta, y);
}

/* The same within 32 registers (two blocks of 1024 threads per SM), for
 * f32 at K 8: its 39 registers otherwise leave it at 75 % occupancy, and
 * the 4 bytes it spills at 32 cost less than the occupancy gains.  f64 at
 * K 8 spills 92 bytes at 32, and K 16 spills more in both, so they keep
 * their registers. */
template <typename T, typename I, typename C, int K, bool S>
__global__ void __launch_bounds__(1024, 2)
    spmv_csr_stream_kernel32(spmv_stream_args<T, I, C> a, T alpha,
                             const T *__restrict__ x, T beta, T *__restrict__ y) {
  spmv_stream_block<T, I, C, K, S>(a, alpha, x, beta, y);
}

template <typename T, typename I, typename C, int K, bool S>
static cudaError_t launch_s(const spmv_stream_args<T, I, C> &a, int bs, T alpha,
                            const T *x, T beta, T *y, cudaStream_t s) {
  size_t shmem = spmv_stream_shmem(bs, K, sizeof(T), sizeof(C) == 2);
  unsigned grid = (unsigned)(a.nblocks + a.nchunks);
  if constexpr (sizeof(T) == 4 && K == 8)
    spmv_csr_stream_kernel32<T, I, C, K, S><<<grid, bs, shmem, s>>>(a, alpha, x, beta, y);
  else
    spmv_csr_stream_kernel<T, I, C, K, S><<<grid, bs, shmem, s>>>(a, alpha, x, beta, y);
  return cudaGetLastError();
}

template <typename T, typename I, typename C, int K>
static cudaError_t launch_c(const spmv_stream_args<T, I, C> &a, int sparse,
                            int bs, T alpha, const T *x, T beta, T *y,
                            cudaStream_t s) {
  return sparse ? launch_s<T, I, C, K, true>(a, bs, alpha, x, beta, y, s)
                : launch_s<T, I, C, K, false>(a, bs, alpha, x, beta, y, s);
}

template <typename T, typename I, int K>
static cudaError_t launch(const struct spmv_stream_layout *D, const I *rp,
                          int64_t nnz, int bs, T alpha, const T *x, T beta, T *y,
                          T *partial, cudaStream_t s) {
  int64_t nchunks = D->nlong > 0 ? D->nchunks : 0;
  if (D->csr.col16 != NULL) {
    spmv_stream_args<T, I, uint16_t> a = {
        D->nblocks, nnz, D->blk_row, D->blk_ent, D->blk_base, D->chunk_base, rp,
        D->csr.col16, (const T *)D->csr.val, D->long_rows, D->long_chunk,
        D->nlong, nchunks, D->chunk_len, partial};
    return launch_c<T, I, uint16_t, K>(a, D->sparse, bs, alpha, x, beta, y, s);
  }
  spmv_stream_args<T, I, int32_t> a = {
      D->nblocks, nnz, D->blk_row, D->blk_ent, NULL, NULL, rp, D->csr.col,
      (const T *)D->csr.val, D->long_rows, D->long_chunk, D->nlong, nchunks,
      D->chunk_len, partial};
  return launch_c<T, I, int32_t, K>(a, D->sparse, bs, alpha, x, beta, y, s);
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
  if (spmv_stream_shmem(bs, D->k, sizeof(T), D->csr.col16 != NULL) >
      SPMV_STREAM_SHMEM)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-stream: bs %d x k %d values and row ends exceed "
                          "%d bytes of shared memory", bs, D->k, SPMV_STREAM_SHMEM);
  int rc = spmv_long_ready("csr-stream", D->nlong, D->chunk_len, partial, err);
  if (rc) return rc;
  if (D->nblocks + (D->nlong > 0 ? D->nchunks : 0) > 0) {
    cudaError_t e;
    switch (D->k) {
    case 1: e = launch<T, I, 1>(D, rp, m->L.nnz, bs, alpha, x, beta, y, partial, s); break;
    case 2: e = launch<T, I, 2>(D, rp, m->L.nnz, bs, alpha, x, beta, y, partial, s); break;
    case 4: e = launch<T, I, 4>(D, rp, m->L.nnz, bs, alpha, x, beta, y, partial, s); break;
    case 8: e = launch<T, I, 8>(D, rp, m->L.nnz, bs, alpha, x, beta, y, partial, s); break;
    case 16: e = launch<T, I, 16>(D, rp, m->L.nnz, bs, alpha, x, beta, y, partial, s); break;
    default:
      return spmv_error_set(err, SPMV_EINVAL,
                            "csr-stream: k %d not in {1, 2, 4, 8, 16}", D->k);
    }
    if (e != cudaSuccess)
      return spmv_cuda_error(e, "csr-stream kernel", err);
  }
  return spmv_long_finish<T>("csr-stream", D->nlong, D->long_rows,
                             D->long_chunk, partial, alpha, beta, y, s, err);
}

/* Launches csr-stream or csr-stream16 for m on stream s (see spmv_kernels.h). */
SPMV_CSR_LAUNCHER(csr_stream, "csr-stream", u.stream.csr)
