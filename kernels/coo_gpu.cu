/* coo_gpu.cu: COO SpMV by a deterministic segmented reduction (Bell & Garland's COO, warp-scan form). */
/*
 * Work decomposition: thread t owns entries [t*8, t*8 + 8) (row-sorted).
 * It sums runs of equal rows sequentially; a row that starts and ends in
 * its range is added to y at once; the first row (when it began in an
 * earlier thread) and the last (when it goes on in a later one) are
 * combined across the block by a segmented scan of the open sums
 * (spmv_segreduce.cuh); each block leaves one carry (its open row and sum)
 * that a fix-up kernel adds in block order.  Nothing depends on scheduling
 * or atomics, so the result is deterministic.  The product is y +=
 * alpha*A*x: a first kernel scales y by beta (coo), or the ELL part of hyb
 * has written y already.
 * Access pattern: each thread reads 8 consecutive row/col/val elements, a
 * warp 256 consecutive ones (every fetched sector is used); x through the
 * read-only data cache.  All eight entries are loaded first, then the
 * eight x gathered together with y of each row that starts in the
 * thread, so that adding a row the thread owns whole waits on nothing.
 * Entry by entry, each entry waits for its column and then its x, and
 * each row for a load of y.  Owned rows are added to the y loaded ahead,
 * not by a reduction in memory: f32's flushes subnormals to zero (PTX's
 * atom.add.f32), and one code serves both types.
 * Valid parameters: BS in 32..1024, a multiple of 32; f32, f64; up to
 * 2^31 - 1 rows.
 */
#include "spmv_segreduce.cuh"

#define COO_ITEMS 8

template <typename T>
__global__ void spmv_coo_kernel(int64_t n, const int32_t *__restrict__ row,
                                const int32_t *__restrict__ col,
                                const T *__restrict__ val, T alpha,
                                const T *__restrict__ x, T *__restrict__ y,
                                int32_t *__restrict__ carry_row,
                                T *__restrict__ carry_val) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t start = t * COO_ITEMS;
  int32_t head_row = -1, tail_row = -1;
  T head_sum = 0, s = 0;
  if (start < n) {
    int64_t end = start + COO_ITEMS < n ? start + COO_ITEMS : n;
    int32_t prev = start > 0 ? row[start - 1] : -1;
    int32_t next = end < n ? row[end] : -1;
    int32_t r[COO_ITEMS], c[COO_ITEMS];
    T p[COO_ITEMS];
    /* Every load first, then every gather: the entries past the end
     * repeat the last row with a zero product. */
#pragma unroll
    for (int i = 0; i < COO_ITEMS; i++) {
      bool in = start + i < end;
      r[i] = in ? spmv_lds(row + start + i) : r[i > 0 ? i - 1 : 0];
      c[i] = in ? spmv_lds(col + start + i) : 0;
      p[i] = in ? spmv_lds(val + start + i) : T(0);
    }
    /* y of each row that starts here, loaded beside the gathers (a row
     * that goes on in the next thread is loaded and not used; the entries
     * past the end start none). */
    T yv[COO_ITEMS];
#pragma unroll
    for (int i = 0; i < COO_ITEMS; i++) {
      bool first = i == 0 ? r[0] != prev : r[i] != r[i - 1];
      yv[i] = first ? y[r[i]] : T(0);
    }
#pragma unroll
    for (int i = 0; i < COO_ITEMS; i++)
      p[i] *= start + i < end ? spmv_ldg(x + c[i]) : T(0);
    int32_t cur = r[0];
    T ycur = yv[0];
    bool continued = cur == prev;
#pragma unroll
    for (int i = 0; i < COO_ITEMS; i++) {
      if (r[i] != cur) {
        if (continued) {
          head_row = cur;
          head_sum = s;
          continued = false;
        } else {
          y[cur] = ycur + alpha * s;
        }
        cur = r[i];
        ycur = yv[i];
        s = 0;
      }
      s += p[i];
    }
    if (next == cur) {
      tail_row = cur;   /* open: goes on in the next thread */
    } else if (continued) {
      head_row = cur;
      head_sum = s;
      s = 0;
    } else {
      y[cur] = ycur + alpha * s;
      s = 0;
    }
  }
  T carry = spmv_seg_combine(head_row, tail_row, tail_row >= 0 ? s : T(0),
                             carry_row, carry_val);
  if (head_row >= 0) y[head_row] += alpha * (carry + head_sum);
}

template <typename T>
__global__ void spmv_scale_kernel(int64_t n, T beta, T *__restrict__ y) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = beta == T(0) ? T(0) : beta * y[i];
}

/* Scratch bytes of spmv_coo_accumulate for n entries (any block size). */
size_t spmv_coo_work_bytes(int64_t n, size_t val_size) {
  int64_t threads = (n + COO_ITEMS - 1) / COO_ITEMS;
  return spmv_seg_work_bytes(threads / 32 + SPMV_BS_MAX / 32 + 1, val_size);
}

/* y += alpha * (COO part) x; used by coo and hyb. */
template <typename T>
int spmv_coo_accumulate(const struct spmv_coo_layout *C, int64_t n, int bs,
                        T alpha, const T *x, T *y, void *work, cudaStream_t s,
                        struct spmv_error *err) {
  if (n == 0) return 0;
  if (work == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "coo: no scratch for the carries");
  unsigned g = spmv_grid((n + COO_ITEMS - 1) / COO_ITEMS, bs);
  int64_t nwarps = (int64_t)g * bs / 32;
  int32_t *crow;
  T *cval;
  spmv_seg_work_split<T>(work, nwarps, &crow, &cval);
  spmv_coo_kernel<T><<<g, bs, 0, s>>>(n, C->row, C->col, (const T *)C->val,
                                      alpha, x, y, crow, cval);
  SPMV_CHECK_LAUNCH("coo kernel");
  spmv_seg_fixup_kernel<T><<<spmv_seg_fixup_grid(g), 256, 0, s>>>(
      (int64_t)g, crow, cval, alpha, y);
  SPMV_CHECK_LAUNCH("coo fix-up kernel");
  return 0;
}

template int spmv_coo_accumulate<float>(const struct spmv_coo_layout *, int64_t,
                                        int, float, const float *, float *,
                                        void *, cudaStream_t, struct spmv_error *);
template int spmv_coo_accumulate<double>(const struct spmv_coo_layout *, int64_t,
                                         int, double, const double *, double *,
                                         void *, cudaStream_t, struct spmv_error *);

template <typename T>
static int run(const struct spmv_dev_matrix *m, double alpha, const void *x,
               double beta, void *y, cudaStream_t s, struct spmv_error *err) {
  const struct spmv_layout *L = &m->L;
  int bs = L->cfg.bs;
  int rc = spmv_check_bs(bs, "coo", err);
  if (rc) return rc;
  if (L->rows == 0) return 0;
  spmv_scale_kernel<T><<<spmv_grid(L->rows, 256), 256, 0, s>>>(L->rows, (T)beta,
                                                               (T *)y);
  SPMV_CHECK_LAUNCH("coo scale kernel");
  return spmv_coo_accumulate<T>(&L->u.coo, L->nnz, bs, (T)alpha, (const T *)x,
                                (T *)y, m->work, s, err);
}

/* Launches coo for m on stream s (see spmv_kernels.h). */
extern "C" SPMV_LAUNCH_PROTO(coo) {
  if (m->L.dtype == SPMV_F32) return run<float>(m, alpha, x, beta, y, s, err);
  return run<double>(m, alpha, x, beta, y, s, err);
}
