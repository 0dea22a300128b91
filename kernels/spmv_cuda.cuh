/* spmv_cuda.cuh: device helpers shared by the SpMV kernels (loads, reductions, launch checks). */
#ifndef SPMV_CUDA_CUH
#define SPMV_CUDA_CUH

#include <stdint.h>

#include <type_traits>

#include <cuda_runtime.h>

#include "spmv_kernels.h"

/* Checks the last launch; returns from the calling launcher on failure. */
#define SPMV_CHECK_LAUNCH(what)                                              \
  do {                                                                       \
    cudaError_t e_ = cudaGetLastError();                                     \
    if (e_ != cudaSuccess) return spmv_cuda_error(e_, (what), err);          \
  } while (0)

/* Rejects a block size outside the range every kernel supports. */
static inline int spmv_check_bs(int bs, const char *fmt,
                                struct spmv_error *err) {
  if (bs < SPMV_BS_MIN || bs > SPMV_BS_MAX || bs % 32 != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: block size %d not a multiple of 32 in [%d, %d]",
                          fmt, bs, SPMV_BS_MIN, SPMV_BS_MAX);
  return 0;
}

/*
 * The powers of two a kernel is instantiated for (threads per row, ELLR-T's
 * T): calls f(std::integral_constant<int, P>()) for p = P in {1, 2, 4, 8,
 * 16, 32}, so that f can launch its kernel<..., P>.  Returns 0, or
 * SPMV_EINVAL naming `what` (e.g. "csr16: TPR") and p.
 */
template <typename F>
static int spmv_pow2_dispatch(int p, const char *what, F f,
                              struct spmv_error *err) {
  switch (p) {
  case 1: f(std::integral_constant<int, 1>()); return 0;
  case 2: f(std::integral_constant<int, 2>()); return 0;
  case 4: f(std::integral_constant<int, 4>()); return 0;
  case 8: f(std::integral_constant<int, 8>()); return 0;
  case 16: f(std::integral_constant<int, 16>()); return 0;
  case 32: f(std::integral_constant<int, 32>()); return 0;
  default:
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s %d not in {1, 2, 4, 8, 16, 32}", what, p);
  }
}

/* Blocks needed for `work` items of `per_block` each, as a grid size. */
static inline unsigned spmv_grid(int64_t work, int64_t per_block) {
  int64_t g = (work + per_block - 1) / per_block;
  return (unsigned)(g > 0 ? g : 1);
}

/* x and other reused vectors: the read-only data cache. */
template <typename T>
__device__ __forceinline__ T spmv_ldg(const T *__restrict__ p) {
  return __ldg(p);
}

/* Matrix arrays, read once per product: stream them past the caches. */
template <typename T>
__device__ __forceinline__ T spmv_lds(const T *__restrict__ p) {
  return __ldcs(p);
}

/*
 * Whether a CSR kernel whose groups of tpr lanes walk a row (csr-scalar:
 * 1) should read the entries through the L1 (spmv_dot_cols' KEEP).  A
 * group of 1 or 2 lanes takes a quarter or half of a 32-byte sector of
 * f64 values a step; streamed, the sector is gone before its next step
 * comes back to it, and rows longer than one sector are read several
 * times over.  A group of 4 or more lanes uses its whole sector in one
 * step, so it has nothing to keep.  Rows of 4 or fewer entries lie side
 * by side in the warp's own sectors and are only slowed by the L1, so
 * they stream as before.
 */
static inline bool spmv_keep_entries(int tpr, int64_t rows, int64_t nnz) {
  return tpr <= 2 && nnz > 4 * rows;
}

/* Sum over groups of W consecutive lanes; lane 0 of each group holds it. */
template <typename T, int W>
__device__ __forceinline__ T spmv_group_sum(T v) {
#pragma unroll
  for (int off = W / 2; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off, W);
  return v;
}

/* The same with a run-time group width w (a power of two up to 32). */
template <typename T>
__device__ __forceinline__ T spmv_group_sum_rt(T v, int w) {
  for (int off = w / 2; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off, 32);
  return v;
}

/*
 * Sum of val[j] * xb[col[j]] for j = b, b + stride, ... below e, two
 * entries a step: the inner loop of every CSR kernel.  C is the column
 * type: 32-bit columns, or csr16's 16-bit offsets from the row's base
 * column (xb = x + base).  With PIPE the next step's columns load while
 * this step's x gathers are in flight, so a step waits for one memory
 * latency rather than two (column, then x).  That pays for csr-vector at
 * TPR 16 and 32 and for csr16 at TPR 32, but costs more than it saves at
 * TPR 8 and for csr16 at TPR 16, so the kernels choose.
 * With KEEP the entries are read through the L1 rather than streamed
 * (spmv_keep_entries says when: TPR 1 and 2, which never pipeline, so
 * only the plain loop reads that way).
 */
template <bool KEEP, typename T>
__device__ __forceinline__ T spmv_ld_entry(const T *__restrict__ p) {
  return KEEP ? __ldg(p) : spmv_lds(p);
}

template <typename T, typename I, typename C, bool PIPE, bool KEEP = false>
__device__ __forceinline__ T spmv_dot_cols(const C *__restrict__ col,
                                           const T *__restrict__ val,
                                           const T *__restrict__ xb, I j,
                                           I e, I stride) {
  T s0 = 0, s1 = 0;
  if (!PIPE) {
    for (; j + stride < e; j += 2 * stride) {
      C c0 = spmv_ld_entry<KEEP>(col + j), c1 = spmv_ld_entry<KEEP>(col + j + stride);
      T v0 = spmv_ld_entry<KEEP>(val + j), v1 = spmv_ld_entry<KEEP>(val + j + stride);
      s0 += v0 * spmv_ldg(xb + c0);
      s1 += v1 * spmv_ldg(xb + c1);
    }
  } else if (j + stride < e) {
    C c0 = spmv_lds(col + j), c1 = spmv_lds(col + j + stride);
    for (;;) {
      T x0 = spmv_ldg(xb + c0), x1 = spmv_ldg(xb + c1);
      T v0 = spmv_lds(val + j), v1 = spmv_lds(val + j + stride);
      j += 2 * stride;
      bool more = j + stride < e;
      if (more) {
        c0 = spmv_lds(col + j);
        c1 = spmv_lds(col + j + stride);
      }
      s0 += v0 * x0;
      s1 += v1 * x1;
      if (!more) break;
    }
  }
  if (j < e)
    s0 += spmv_ld_entry<KEEP>(val + j) * spmv_ldg(xb + spmv_ld_entry<KEEP>(col + j));
  return s0 + s1;
}

template <typename T, typename I, bool PIPE = false, bool KEEP = false>
__device__ __forceinline__ T spmv_csr_dot(const int32_t *__restrict__ col,
                                          const T *__restrict__ val,
                                          const T *__restrict__ x, I j, I e,
                                          I stride) {
  return spmv_dot_cols<T, I, int32_t, PIPE, KEEP>(col, val, x, j, e, stride);
}

/*
 * csr-scalar's f64 row walk in chunks of SPMV_CHUNK entries: each chunk
 * loads its columns and values (predicated past the row's end), then
 * gathers their x, so a chunk waits for two memory latencies whatever its
 * length, and every lane of a warp runs the same code: a warp takes as
 * many chunks as its longest row.  (ptxas unrolls the two-entry loop of
 * spmv_dot_cols into 8-entry steps plus a remainder loop, and a warp
 * whose rows straddle 8 entries runs both paths one after the other.)
 */
#define SPMV_CHUNK 8
/* One chunk of SPMV_CHUNK entries from j: its columns and values, then
 * their x, summed into the two chains (even entries into s0, odd into
 * s1); PRED guards each entry against the row's end e, without it the
 * chunk must lie whole before e. */
template <typename T, typename I, bool KEEP, bool PRED>
__device__ __forceinline__ void spmv_chunk(const int32_t *__restrict__ col,
                                           const T *__restrict__ val,
                                           const T *__restrict__ x, I j, I e,
                                           T &s0, T &s1) {
  int32_t c[SPMV_CHUNK];
  T v[SPMV_CHUNK];
#pragma unroll
  for (int k = 0; k < SPMV_CHUNK; k++) {
    bool in = !PRED || j + k < e;
    c[k] = in ? spmv_ld_entry<KEEP>(col + j + k) : 0;
    v[k] = in ? spmv_ld_entry<KEEP>(val + j + k) : T(0);
  }
#pragma unroll
  for (int k = 0; k < SPMV_CHUNK; k += 2) {
    if (!PRED || j + k < e) s0 += v[k] * spmv_ldg(x + c[k]);
    if (!PRED || j + k + 1 < e) s1 += v[k + 1] * spmv_ldg(x + c[k + 1]);
  }
}

template <typename T, typename I, bool KEEP>
__device__ __forceinline__ T spmv_csr_dot_chunks(const int32_t *__restrict__ col,
                                                 const T *__restrict__ val,
                                                 const T *__restrict__ x, I j,
                                                 I e) {
  T s0 = 0, s1 = 0;
#pragma unroll 1
  for (; j < e; j += SPMV_CHUNK)
    spmv_chunk<T, I, KEEP, true>(col, val, x, j, e, s0, s1);
  return s0 + s1;
}

/*
 * csr-scalar's f32 row walk: whole chunks of SPMV_CHUNK entries, then the
 * row's last 1..7 entries as one predicated chunk, so a warp takes one
 * step past its longest row's whole chunks.  The two-entry loop of
 * spmv_dot_cols compiles to an 8-entry loop followed by 4-, 2- and 1-entry
 * steps, each behind its own reconvergence barrier, and a warp whose rows
 * end at different remainders runs them all, one after another.  This
 * walk suits regular matrices, small and large; it is slower on small
 * matrices with a few long rows, where csr-scalar is far from the best
 * format anyway.
 */
template <typename T, typename I, bool KEEP>
__device__ __forceinline__ T spmv_csr_dot_chunks_tail(
    const int32_t *__restrict__ col, const T *__restrict__ val,
    const T *__restrict__ x, I j, I e) {
  T s0 = 0, s1 = 0;
#pragma unroll 1
  for (; j + SPMV_CHUNK <= e; j += SPMV_CHUNK)
    spmv_chunk<T, I, KEEP, false>(col, val, x, j, e, s0, s1);
  if (j < e) spmv_chunk<T, I, KEEP, true>(col, val, x, j, e, s0, s1);
  return s0 + s1;
}

/* spmv_csr_dot over csr16's 16-bit offsets from the row's base column. */
template <typename T, typename I, bool PIPE = false, bool KEEP = false>
__device__ __forceinline__ T spmv_csr16_dot(const uint16_t *__restrict__ col16,
                                            int32_t base,
                                            const T *__restrict__ val,
                                            const T *__restrict__ x, I j, I e,
                                            I stride) {
  return spmv_dot_cols<T, I, uint16_t, PIPE, KEEP>(col16, val, x + base, j, e,
                                                   stride);
}

/*
 * Columns as spmv_walk4 reads them: C::idx the stored type, C::pad(c)
 * whether c is padding (the row ends there; C::padded false when none is
 * ever read), C::at(c, base) the column.
 * spmv_cols_plain: 32-bit columns and no padding read (ellr-t stops at
 * its row lengths).
 */
struct spmv_cols_plain {
  typedef int32_t idx;
  static constexpr bool padded = false;
  __device__ __forceinline__ static bool pad(int32_t) { return false; }
  __device__ __forceinline__ static int32_t at(int32_t c, int32_t) { return c; }
};

/*
 * Adds val * x[col] over n entries at cp, vp, cp + st, vp + st, ... (the
 * ELLPACK-like layouts: sell, ellr-t) into s0 and s1, stopping at the
 * first padding column; base is C::at's base.  Four steps at a time, the
 * next four columns loaded while this four's x gathers are in flight, so
 * that a step waits for one memory latency, not two; then one at a time.
 * The loop is not unrolled further (ellr-t rose to 64-72 registers when
 * it was).
 */
template <typename V, typename C>
__device__ __forceinline__ void spmv_walk4(const typename C::idx *__restrict__ cp,
                                           const V *__restrict__ vp,
                                           int64_t st, int n, int32_t base,
                                           const V *__restrict__ x, V &s0,
                                           V &s1) {
  typedef typename C::idx I;
  int k = 0;
  if (n >= 4) {
    I c0 = spmv_lds(cp), c1 = spmv_lds(cp + st);
    I c2 = spmv_lds(cp + 2 * st), c3 = spmv_lds(cp + 3 * st);
#pragma unroll 1
    for (;;) {
      if (C::pad(c3)) break;  /* padding ahead: finish one entry at a time */
      V x0 = spmv_ldg(x + C::at(c0, base)), x1 = spmv_ldg(x + C::at(c1, base));
      V x2 = spmv_ldg(x + C::at(c2, base)), x3 = spmv_ldg(x + C::at(c3, base));
      V v0 = spmv_lds(vp), v1 = spmv_lds(vp + st);
      V v2 = spmv_lds(vp + 2 * st), v3 = spmv_lds(vp + 3 * st);
      k += 4;
      cp += 4 * st;
      vp += 4 * st;
      bool more = k + 3 < n;
      if (more) {
        c0 = spmv_lds(cp), c1 = spmv_lds(cp + st);
        c2 = spmv_lds(cp + 2 * st), c3 = spmv_lds(cp + 3 * st);
      }
      s0 += v0 * x0;
      s1 += v1 * x1;
      s0 += v2 * x2;
      s1 += v3 * x3;
      if (!more) break;
    }
  }
  for (; k < n; k++, cp += st, vp += st) {
    if (!C::padded) {
      s0 += spmv_lds(vp) * spmv_ldg(x + C::at(spmv_lds(cp), base));
      continue;
    }
    I c = spmv_lds(cp);
    if (C::pad(c)) break;
    s0 += spmv_lds(vp) * spmv_ldg(x + C::at(c, base));
  }
}

/*
 * Defines the extern "C" launcher spmv_launch_<name> for a CSR-based
 * format: checks BS, then calls the file's run_i<T, I>(m, row_ptr, alpha,
 * x, beta, y, s, err) with the layout's 32- or 64-bit row offsets (the CSR
 * at m->L.<csr>) and the matrix's value type.
 */
#define SPMV_CSR_LAUNCHER(name, label, csr)                                  \
  template <typename T>                                                      \
  static int run(const struct spmv_dev_matrix *m, double alpha,              \
                 const void *x, double beta, void *y, cudaStream_t s,        \
                 struct spmv_error *err) {                                   \
    const struct spmv_csr_layout *C = &m->L.csr;                             \
    int rc = spmv_check_bs(m->L.cfg.bs, label, err);                         \
    if (rc) return rc;                                                       \
    if (m->L.rows == 0) return 0;                                            \
    if (C->row_ptr32)                                                        \
      return run_i<T, int32_t>(m, C->row_ptr32, (T)alpha, (const T *)x,      \
                               (T)beta, (T *)y, s, err);                     \
    return run_i<T, int64_t>(m, C->row_ptr64, (T)alpha, (const T *)x,        \
                             (T)beta, (T *)y, s, err);                       \
  }                                                                          \
  extern "C" SPMV_LAUNCH_PROTO(name) {                                       \
    if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err); \
    return run<double>(m, alpha, x, beta, y, s, err);                        \
  }

/* y = alpha*sum + beta*y, reading y only when beta != 0. */
template <typename T>
__device__ __forceinline__ T spmv_axpby(T alpha, T sum, T beta, const T *y) {
  return beta == T(0) ? alpha * sum : alpha * sum + beta * *y;
}

/* Internal launchers that hyb reuses (ell_gpu.cu, coo_gpu.cu). */
template <typename T>
int spmv_ell_run(const struct spmv_ell_layout *E, int64_t rows, int bs,
                 T alpha, const T *x, T beta, T *y, cudaStream_t s,
                 struct spmv_error *err);
/* y[row] += alpha * (sum of the row's entries), over n row-sorted entries. */
template <typename T>
int spmv_coo_accumulate(const struct spmv_coo_layout *C, int64_t n, int bs,
                        T alpha, const T *x, T *y, void *work,
                        cudaStream_t s, struct spmv_error *err);
/* Scratch bytes spmv_coo_accumulate needs for n entries. */
size_t spmv_coo_work_bytes(int64_t n, size_t val_size);
/* Scratch bytes of csr-merge for a layout. */
size_t spmv_merge_work_bytes(int64_t rows, int64_t nnz, size_t val_size);

#endif /* SPMV_CUDA_CUH */
