/* sell_gpu.cu: SELL-C-sigma SpMV, sliced ELLPACK with rows sorted by length inside windows of sigma rows; sell16 stores columns as 16-bit offsets. */
/*
 * Work decomposition: one thread per row slot: thread g works on lane
 * g % C of slice g / C (ceil(nslices*C/BS) blocks) and writes
 * y[perm[g]] unless perm[g] is -1 (slots past the last row).
 * Access pattern: entry k of lane l of slice s is at slice_ptr[s] + k*C + l,
 * so the C lanes of a slice read C consecutive col and val elements per
 * step (coalesced when C is a multiple of 32 or the warp covers whole
 * slices).  A lane stops at its first padding entry (column -1); since
 * rows are sorted inside each window, a slice's lanes have similar
 * lengths and little padding is stored.  Steps go four at a time, the
 * next four's columns loaded while this four's x gathers are in flight
 * (spmv_walk4).  col and val are streamed; x through the read-only data
 * cache.
 * sell16 reads a 16-bit offset per entry and the lane's 32-bit base once:
 * 2 bytes less per entry than sell, where every row spans < 2^16 columns.
 * Valid parameters: C >= 1 (32 and multiples of it coalesce best); any
 * sigma; BS in 32..1024, a multiple of 32; f32, f64.
 */
#include "spmv_cuda.cuh"

/* Column indices of sell (32-bit columns, padding -1) and of sell16
 * (16-bit offsets from the lane's base, padding SPMV_SELL16_PAD). */
struct sell_wide {
  typedef int32_t idx;
  static constexpr bool padded = true;
  __device__ __forceinline__ static bool pad(int32_t c) { return c < 0; }
  __device__ __forceinline__ static int32_t at(int32_t c, int32_t) { return c; }
};
struct sell_narrow {
  typedef uint16_t idx;
  static constexpr bool padded = true;
  __device__ __forceinline__ static bool pad(uint16_t c) {
    return c == SPMV_SELL16_PAD;
  }
  __device__ __forceinline__ static int32_t at(uint16_t c, int32_t base) {
    return base + (int32_t)c;
  }
};

template <typename V, typename C>
__global__ void spmv_sell_kernel(int64_t slots, int c,
                                 const int32_t *__restrict__ perm,
                                 const int64_t *__restrict__ slice_ptr,
                                 const int32_t *__restrict__ slice_width,
                                 const typename C::idx *__restrict__ col,
                                 const int32_t *__restrict__ base,
                                 const V *__restrict__ val, V alpha,
                                 const V *__restrict__ x, V beta,
                                 V *__restrict__ y) {
  int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= slots) return;
  int32_t row = perm[g];
  if (row < 0) return;
  int64_t sl = g / c;
  int lane = (int)(g - sl * c);
  int w = __ldg(slice_width + sl);
  int32_t b = base != NULL ? __ldg(base + g) : 0;
  const typename C::idx *cp = col + __ldg(slice_ptr + sl) + lane;
  const V *vp = val + __ldg(slice_ptr + sl) + lane;
  V s0 = 0, s1 = 0;
  spmv_walk4<V, C>(cp, vp, c, w, b, x, s0, s1);
  y[row] = spmv_axpby(alpha, s0 + s1, beta, y + row);
}

template <typename V>
static int run(const struct spmv_dev_matrix *m, double alpha, const void *x,
               double beta, void *y, cudaStream_t s, struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  const struct spmv_sell_layout *S = &L->u.sell;
  const char *name = spmv_format_name(L->cfg.format);
  int bs = L->cfg.bs;
  int rc = spmv_check_bs(bs, name, err);
  if (rc) return rc;
  if (S->c < 1)
    return spmv_error_set(err, SPMV_EINVAL, "%s: slice height C %d below 1",
                          name, S->c);
  int64_t slots = S->nslices * S->c;
  if (slots == 0) return 0;
  unsigned g = spmv_grid(slots, bs);
  if (L->cfg.format == SPMV_FMT_SELL16)
    spmv_sell_kernel<V, sell_narrow><<<g, bs, 0, s>>>(
        slots, S->c, S->perm, S->slice_ptr, S->slice_width, S->col16, S->base,
        (const V *)S->val, (V)alpha, (const V *)x, (V)beta, (V *)y);
  else
    spmv_sell_kernel<V, sell_wide><<<g, bs, 0, s>>>(
        slots, S->c, S->perm, S->slice_ptr, S->slice_width, S->col, NULL,
        (const V *)S->val, (V)alpha, (const V *)x, (V)beta, (V *)y);
  SPMV_CHECK_LAUNCH("sell kernel");
  return 0;
}

/* Launches sell or sell16 for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(sell) {
  if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err);
  return run<double>(m, alpha, x, beta, y, s, err);
}
