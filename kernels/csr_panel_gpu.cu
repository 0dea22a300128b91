/* csr_panel_gpu.cu: csr-panel, x's panels gathered from shared memory. */
/*
 * Block (p, c) copies panel p's slice of x (width values) into shared
 * memory, then walks rows of chunk c as csr16 does (groups of TPR lanes
 * per row, lane t taking entries t, t + TPR, ...), gathering from that
 * copy: on a matrix whose x is far larger than the L1 and whose rows are
 * long (thousands of entries over millions of columns) a product
 * otherwise moves a 32-byte L2 sector of x per entry.  A lane issues its
 * loads four entries at a time, so that a group's short run of a row in
 * one panel still has several loads in flight.  With several panels each
 * writes the row's panel sum to scratch, and a second kernel adds them
 * (spmv_panel_sum_kernel) and applies alpha and beta; with one panel the
 * first kernel writes y.
 * Valid parameters: TPR in {1, 2, 4, 8, 16, 32}; BS in 32..1024, a
 * multiple of 32, at least TPR; a panel's x within the device's shared
 * memory per block.  32- or 64-bit slot offsets; f32 or f64.
 */
#include "spmv_cuda.cuh"

/*
 * Copies n values of x from xp into shared memory xs with every load of a
 * thread in flight at once: in 16-byte vectors where xp is aligned to 16
 * (eight per thread at a time: a panel of 64 KB with 512 threads is one
 * round), the rest one value at a time.  It is a block's first wait.
 */
template <typename T>
__device__ __forceinline__ void panel_copy(T *xs, const T *__restrict__ xp,
                                           int n, int bs) {
  typedef typename std::conditional<sizeof(T) == 4, float4, double2>::type V;
  constexpr int NV = (int)(sizeof(V) / sizeof(T));
  int k = threadIdx.x, nv = ((uintptr_t)xp & 15) == 0 ? n / NV : 0;
  const V *xv = (const V *)xp;
  V *sv = (V *)xs;
  for (; k + 7 * bs < nv; k += 8 * bs) {
    V a[8];
#pragma unroll
    for (int q = 0; q < 8; q++) a[q] = __ldg(xv + k + q * bs);
#pragma unroll
    for (int q = 0; q < 8; q++) sv[k + q * bs] = a[q];
  }
  for (; k < nv; k += bs) sv[k] = __ldg(xv + k);
  for (k = nv * NV + threadIdx.x; k < n; k += bs) xs[k] = spmv_ldg(xp + k);
}

template <typename T, typename I, int TPR>
__global__ void spmv_panel_kernel(int64_t rows, int64_t cols, int shift,
                                  int64_t chunk_rows, const I *__restrict__ rp,
                                  const uint16_t *__restrict__ col16,
                                  const T *__restrict__ val, T alpha,
                                  const T *__restrict__ x, T beta,
                                  T *__restrict__ y, T *__restrict__ part) {
  extern __shared__ __align__(16) unsigned char spmv_panel_smem[];
  T *xs = (T *)spmv_panel_smem;
  int64_t p = blockIdx.x, c0 = p << shift;
  int n = (int)(cols - c0 < ((int64_t)1 << shift) ? cols - c0 : ((int64_t)1 << shift));
  int bs = blockDim.x;
  panel_copy(xs, x + c0, n, bs);
  __syncthreads();

  const I *prp = rp + p * rows;
  int64_t r0 = (int64_t)blockIdx.y * chunk_rows;
  int64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  int lane = threadIdx.x & (TPR - 1), per = bs / TPR;
  int64_t row = r0 + threadIdx.x / TPR;
  I b = 0, e = 0;
  if (row < r1) {
    b = prp[row];
    e = prp[row + 1];
  }
  /* Every lane runs the same passes (the group sum needs the whole warp);
   * a pass loads the next pass's slot offsets before its own entries, so
   * that it waits for one memory latency, not two.  (Two or four slots a
   * group per pass, walked as one run, are no faster.) */
  for (; row - threadIdx.x / TPR < r1; row += per) {
    I nb = 0, ne = 0;
    if (row + per < r1) {
      nb = prp[row + per];
      ne = prp[row + per + 1];
    }
    T s0 = 0, s1 = 0;
    I j = b + lane;
    for (; j + 3 * TPR < e; j += 4 * TPR) {
      uint16_t a0 = spmv_lds(col16 + j), a1 = spmv_lds(col16 + j + TPR);
      uint16_t a2 = spmv_lds(col16 + j + 2 * TPR), a3 = spmv_lds(col16 + j + 3 * TPR);
      T v0 = spmv_lds(val + j), v1 = spmv_lds(val + j + TPR);
      T v2 = spmv_lds(val + j + 2 * TPR), v3 = spmv_lds(val + j + 3 * TPR);
      s0 += v0 * xs[a0];
      s1 += v1 * xs[a1];
      s0 += v2 * xs[a2];
      s1 += v3 * xs[a3];
    }
    for (; j < e; j += TPR) s0 += spmv_lds(val + j) * xs[spmv_lds(col16 + j)];
    T sum = spmv_group_sum<T, TPR>(s0 + s1);
    if (lane == 0 && row < r1) {
      if (part == nullptr)
        y[row] = spmv_axpby(alpha, sum, beta, y + row);
      else
        part[p * rows + row] = sum;
    }
    b = nb;
    e = ne;
  }
}

/* The rows' panel sums into y: a block of SUM_ROWS x SUM_LANES threads
 * takes SUM_ROWS rows, lane l adding panels l, l + SUM_LANES, ... (reads
 * coalesced along the rows), then the lanes' sums are added in lane
 * order: a fixed order, and enough loads in flight where rows are few
 * and panels many. */
#define SUM_ROWS 32
#define SUM_LANES 8
template <typename T>
__global__ void spmv_panel_sum_kernel(int64_t rows, int64_t npanels,
                                      const T *__restrict__ part, T alpha,
                                      T beta, T *__restrict__ y) {
  __shared__ T acc[SUM_LANES][SUM_ROWS];
  int tx = threadIdx.x, ty = threadIdx.y;
  int64_t row = (int64_t)blockIdx.x * SUM_ROWS + tx;
  T s0 = 0, s1 = 0;
  if (row < rows) {
    int64_t p = ty;
    for (; p + SUM_LANES < npanels; p += 2 * SUM_LANES) {
      s0 += part[p * rows + row];
      s1 += part[(p + SUM_LANES) * rows + row];
    }
    if (p < npanels) s0 += part[p * rows + row];
  }
  acc[ty][tx] = s0 + s1;
  __syncthreads();
  if (ty == 0 && row < rows) {
    T total = acc[0][tx];
    for (int l = 1; l < SUM_LANES; l++) total += acc[l][tx];
    y[row] = spmv_axpby(alpha, total, beta, y + row);
  }
}

template <typename T, typename I, int TPR>
static int launch(const struct spmv_dev_matrix *m, const I *rp, int bs, T alpha,
                  const T *x, T beta, T *y, cudaStream_t s,
                  struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  const struct spmv_panel_layout *D = &L->u.panel;
  /* The device's facts, read at upload (spmv_dev_matrix_new). */
  if (m->sms <= 0 || m->smem_per_sm <= 0 || m->smem_optin <= 0)
    return spmv_error_set(err, SPMV_EGPU,
                          "csr-panel: the device's SMs and shared memory were "
                          "not read at upload");
  int shift = spmv_panel_shift(D->width);
  int64_t width = L->cols < D->width ? L->cols : D->width;
  size_t smem = (size_t)(width > 0 ? width : 1) * sizeof(T);
  if (smem > (size_t)m->smem_optin)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-panel: a panel of %lld values takes %zu bytes of "
                          "shared memory, over the device's %d per block",
                          (long long)width, smem, m->smem_optin);
  auto kernel = spmv_panel_kernel<T, I, TPR>;
  /* Over 48 KB a kernel must opt in.  Once per kernel and device, up to
   * the most a panel may take: a launch then makes no driver call for it
   * (a larger bound than a launch uses does not change its occupancy).
   * Concurrent first launches only repeat the same setting. */
  static uint64_t opted_in; /* bit d: done on device d (< 64) */
  int d = m->device;
  if (smem > 48 * 1024 && (d >= 64 || !(opted_in >> d & 1))) {
    int bound = m->smem_optin < SPMV_PANEL_SHMEM ? m->smem_optin : SPMV_PANEL_SHMEM;
    cudaError_t e = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bound);
    if (e != cudaSuccess) return spmv_cuda_error(e, "csr-panel: shared memory", err);
    if (d < 64) opted_in |= (uint64_t)1 << d;
  }
  /* Rows per block: about four waves of blocks over all panels, each
   * chunk a whole number of passes.  Fewer rows a block shorten its run of
   * passes, more blocks reread their panel's x: four waves suit f32 better
   * than two and cost f64 little. */
  int per = bs / TPR;
  /* Blocks an SM holds by shared memory, 1 KB of which the runtime keeps
   * per block, and by threads. */
  int64_t resident = (int64_t)m->smem_per_sm / (int64_t)(smem + 1024);
  if (resident > 2048 / bs) resident = 2048 / bs;
  if (resident < 1) resident = 1;
  int64_t target = 4 * (int64_t)m->sms * resident;
  int64_t chunks = (target + D->npanels - 1) / D->npanels;
  int64_t passes = (L->rows + per - 1) / per;
  if (chunks > passes) chunks = passes;
  if (chunks < 1) chunks = 1;
  int64_t chunk_rows = ((L->rows + chunks - 1) / chunks + per - 1) / per * per;
  if ((L->rows + chunk_rows - 1) / chunk_rows > 65535)
    chunk_rows = ((L->rows + 65534) / 65535 + per - 1) / per * per;
  dim3 grid((unsigned)D->npanels, (unsigned)((L->rows + chunk_rows - 1) / chunk_rows));
  T *part = D->npanels > 1 ? (T *)m->work : nullptr;
  kernel<<<grid, bs, smem, s>>>(L->rows, L->cols, shift, chunk_rows, rp,
                                D->csr.col16, (const T *)D->csr.val, alpha, x,
                                beta, y, part);
  SPMV_CHECK_LAUNCH("csr-panel kernel");
  if (part != nullptr) {
    spmv_panel_sum_kernel<T><<<spmv_grid(L->rows, SUM_ROWS), dim3(SUM_ROWS, SUM_LANES),
                               0, s>>>(L->rows, D->npanels, part, alpha, beta, y);
    SPMV_CHECK_LAUNCH("csr-panel sum kernel");
  }
  return 0;
}

template <typename T, typename I>
static int run_i(const struct spmv_dev_matrix *m, const I *rp, T alpha,
                 const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err) {
  int bs = m->L.cfg.bs, tpr = m->L.cfg.tpr, lrc = 0;
  if (tpr > bs)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-panel: TPR %d over the block size %d", tpr, bs);
  int rc = spmv_pow2_dispatch(tpr, "csr-panel: TPR", [&](auto k) {
    lrc = launch<T, I, decltype(k)::value>(m, rp, bs, alpha, x, beta, y, s, err);
  }, err);
  return rc ? rc : lrc;
}

/* Launches csr-panel for m on stream s (see spmv_kernels.h). */
SPMV_CSR_LAUNCHER(csr_panel, "csr-panel", u.panel.csr)
