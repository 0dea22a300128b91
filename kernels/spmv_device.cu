/* spmv_device.cu: resident matrices on the GPU: upload of a layout, scratch, dispatch, CUDA errors. */
/*
 * Host code only.  A struct spmv_dev_matrix is the host layout with each
 * array copied to device memory and its pointer replaced; kernels receive
 * the struct by reference and read the arrays exactly as spmv_formats.h
 * defines them.  spmv_dev_spmv() picks the format's launcher.
 */
#include <stdlib.h>
#include <string.h>

#include "spmv_cuda.cuh"

/* Maps a CUDA error to SPMV_EGPU or SPMV_EGPU_STICKY with a message. */
extern "C" int spmv_cuda_error(cudaError_t e, const char *what,
                               struct spmv_error *err) {
  if (e == cudaSuccess) return 0;
  int code = SPMV_EGPU;
  switch (e) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorLaunchTimeout:
  case cudaErrorECCUncorrectable:
  case cudaErrorContextIsDestroyed:
    code = SPMV_EGPU_STICKY;
    break;
  default:
    break;
  }
  return spmv_error_set(err, code, "%s: %s: %s", what, cudaGetErrorName(e),
                        cudaGetErrorString(e));
}

/*
 * Device memory comes from the device's default stream-ordered pool where
 * the device has one.  Memory given back to the driver is scrubbed by it
 * in the background, and the scrub takes HBM bandwidth from the kernels
 * that run meanwhile: on an H100 a 50 us streaming read ran 19-20 %
 * slower for about 20 runs after a 1 GiB cudaFree and for all of 200
 * runs after an 8 GiB one (tests/bench/results/probe-scrub-h100.md).  A
 * tuner's candidates load and unload layouts (and free their conversion
 * staging) between timings, so freed memory stays in the pool
 * (spmv_dev_pool_keep) until spmv_dev_pool_trim gives it back, when the
 * device is idle.  Allocations and frees are on the legacy stream and
 * synchronous, as cudaMalloc's and cudaFree's: the products run on
 * non-blocking streams.
 */
static int pools = -1; /* the current device has pools: -1 not yet asked */

static int have_pools(void) {
  if (pools < 0) {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess) {
      cudaGetLastError();
      v = 0;
    }
    pools = v != 0;
  }
  return pools;
}

/* The current device's default pool, or NULL. */
static cudaMemPool_t default_pool(void) {
  cudaMemPool_t pool = NULL;
  int dev = 0;
  if (!have_pools() || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return pool;
}

static cudaError_t raw_alloc(void **p, size_t bytes) {
  if (!have_pools()) return cudaMalloc(p, bytes);
  cudaError_t e = cudaMallocAsync(p, bytes, 0);
  /* Usable from any stream once the call returns, as cudaMalloc's. */
  if (e == cudaSuccess) e = cudaStreamSynchronize(0);
  return e;
}

/* Device memory, running out as SPMV_ENOMEM; see spmv_kernels.h. */
extern "C" int spmv_dev_alloc(void **p, size_t bytes, const char *what,
                              struct spmv_error *err) {
  cudaError_t e = raw_alloc(p, bytes ? bytes : 1);
  if (e == cudaErrorMemoryAllocation && have_pools()) {
    /* The pool's free blocks may not fit: give them back and try once more. */
    cudaGetLastError();
    spmv_dev_pool_trim();
    e = raw_alloc(p, bytes ? bytes : 1);
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError(); /* not sticky: clear it so the next call is not blamed */
    *p = NULL;
    return spmv_error_set(err, SPMV_ENOMEM,
                          "GPU out of memory allocating %zu bytes for %s",
                          bytes, what);
  }
  if (e != cudaSuccess) *p = NULL;
  return spmv_cuda_error(e, what, err);
}

/* Frees what spmv_dev_alloc gave; see spmv_kernels.h. */
extern "C" void spmv_dev_free(void *p) {
  if (p == NULL) return;
  if (!have_pools()) {
    cudaFree(p);
    return;
  }
  /* Work on other streams may still read p: wait for it, as cudaFree does. */
  cudaDeviceSynchronize();
  cudaFreeAsync(p, 0);
  cudaStreamSynchronize(0);
}

/* See spmv_kernels.h. */
extern "C" int spmv_dev_upload(void *dst, const void *src, size_t bytes,
                               const char *what, struct spmv_error *err) {
  int rc = spmv_cuda_error(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), what, err);
  if (rc == 0) rc = spmv_cuda_error(cudaStreamSynchronize(0), what, err);
  return rc;
}

/* Bytes the pool holds that no allocation uses. */
static size_t pool_idle(cudaMemPool_t pool) {
  unsigned long long reserved = 0, used = 0; /* cuuint64_t */
  if (pool == NULL ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return reserved > used ? (size_t)(reserved - used) : 0;
}

/* See spmv_kernels.h. */
extern "C" int spmv_dev_pool_keep(struct spmv_error *err) {
  cudaMemPool_t pool = default_pool();
  unsigned long long all = ~0ULL;
  if (pool == NULL) return 0;
  return spmv_cuda_error(
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &all),
      "cudaMemPoolSetAttribute of the release threshold", err);
}

/* See spmv_kernels.h. */
extern "C" size_t spmv_dev_pool_idle(void) { return pool_idle(default_pool()); }

/* See spmv_kernels.h. */
extern "C" size_t spmv_dev_pool_trim(void) {
  cudaMemPool_t pool = default_pool();
  size_t idle = pool_idle(pool);
  if (idle == 0) return 0;
  cudaDeviceSynchronize();
  if (cudaMemPoolTrimTo(pool, 0) != cudaSuccess) cudaGetLastError();
  size_t left = pool_idle(pool);
  return idle > left ? idle - left : 0;
}

/* See spmv_kernels.h. */
extern "C" int spmv_dev_mem_info(size_t *free_b, size_t *total_b,
                                 struct spmv_error *err) {
  int rc = spmv_cuda_error(cudaMemGetInfo(free_b, total_b), "cudaMemGetInfo", err);
  if (rc == 0) *free_b += spmv_dev_pool_idle();
  return rc;
}

/* Device attribute a of device dev, 0 where the runtime does not answer. */
static int dev_attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : 0;
}

#define MAX_ARRAYS SPMV_DEV_MAX_ARRAYS

/* One array of a layout: the address of its pointer field and its size. */
struct array_ref {
  void **field;
  size_t bytes;
};

static void add(struct array_ref *a, int *n, void *field, size_t bytes) {
  a[*n].field = (void **)field;
  a[*n].bytes = bytes;
  (*n)++;
}

static void csr_arrays(struct spmv_layout *L, struct spmv_csr_layout *C,
                       size_t vs, struct array_ref *a, int *n) {
  if (C->row_ptr32) add(a, n, &C->row_ptr32, (size_t)(L->rows + 1) * 4);
  else add(a, n, &C->row_ptr64, (size_t)(L->rows + 1) * 8);
  add(a, n, &C->col, (size_t)L->nnz * 4);
  add(a, n, &C->val, (size_t)L->nnz * vs);
}

/*
 * Lists L's arrays (pointer fields inside L itself) with their sizes.  The
 * size of sell's col and val is read from slice_ptr, so it needs a host
 * layout: pass host = 0 for a device layout (sizes then unused).
 */
static int layout_arrays(struct spmv_layout *L, struct array_ref *a, int host) {
  size_t vs = L->dtype == SPMV_F32 ? 4 : 8;
  int n = 0;
  switch (L->cfg.format) {
  case SPMV_FMT_CSR_SCALAR:
  case SPMV_FMT_CSR_VECTOR:
  case SPMV_FMT_CSR_MERGE:
  case SPMV_FMT_CUSPARSE:
    csr_arrays(L, &L->u.csr, vs, a, &n);
    break;
  case SPMV_FMT_CSR16: {
    struct spmv_csr_layout *C = &L->u.csr;
    if (C->row_ptr32) add(a, &n, &C->row_ptr32, (size_t)(L->rows + 1) * 4);
    else add(a, &n, &C->row_ptr64, (size_t)(L->rows + 1) * 8);
    add(a, &n, &C->base, (size_t)L->rows * 4);
    add(a, &n, &C->col16, (size_t)L->nnz * 2);
    add(a, &n, &C->val, (size_t)L->nnz * vs);
    break;
  }
  case SPMV_FMT_CSR_ADAPTIVE: {
    struct spmv_adaptive_layout *A = &L->u.adaptive;
    csr_arrays(L, &A->csr, vs, a, &n);
    add(a, &n, &A->rows, (size_t)A->bin_start[A->nbins] * 4);
    add(a, &n, &A->long_rows, (size_t)A->nlong * 4);
    add(a, &n, &A->long_chunk, A->long_chunk ? (size_t)(A->nlong + 1) * 8 : 0);
    break;
  }
  case SPMV_FMT_CSR_STREAM: {
    struct spmv_stream_layout *D = &L->u.stream;
    csr_arrays(L, &D->csr, vs, a, &n);
    add(a, &n, &D->blk_row, (size_t)D->nblocks * 8);
    add(a, &n, &D->blk_ent, (size_t)D->nblocks * 16);
    add(a, &n, &D->long_rows, (size_t)D->nlong * 4);
    add(a, &n, &D->long_chunk, D->long_chunk ? (size_t)(D->nlong + 1) * 8 : 0);
    break;
  }
  case SPMV_FMT_CSR_STREAM16: {
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
    break;
  }
  case SPMV_FMT_CSR_PANEL: {
    struct spmv_panel_layout *D = &L->u.panel;
    size_t slots = (size_t)(D->npanels * L->rows) + 1;
    if (D->csr.row_ptr32) add(a, &n, &D->csr.row_ptr32, slots * 4);
    else add(a, &n, &D->csr.row_ptr64, slots * 8);
    add(a, &n, &D->csr.col16, (size_t)L->nnz * 2);
    add(a, &n, &D->csr.val, (size_t)L->nnz * vs);
    break;
  }
  case SPMV_FMT_ELL: {
    struct spmv_ell_layout *E = &L->u.ell;
    add(a, &n, &E->col, (size_t)(E->width * E->pitch) * 4);
    add(a, &n, &E->val, (size_t)(E->width * E->pitch) * vs);
    break;
  }
  case SPMV_FMT_ELLR_T: {
    struct spmv_ellr_layout *E = &L->u.ellr;
    size_t cells = (size_t)(E->iters * E->pitch * E->t);
    add(a, &n, &E->rl, (size_t)L->rows * 4);
    add(a, &n, &E->col, cells * 4);
    add(a, &n, &E->val, cells * vs);
    break;
  }
  case SPMV_FMT_COO: {
    struct spmv_coo_layout *C = &L->u.coo;
    add(a, &n, &C->row, (size_t)L->nnz * 4);
    add(a, &n, &C->col, (size_t)L->nnz * 4);
    add(a, &n, &C->val, (size_t)L->nnz * vs);
    break;
  }
  case SPMV_FMT_HYB: {
    struct spmv_hyb_layout *H = &L->u.hyb;
    add(a, &n, &H->ell.col, (size_t)(H->ell.width * H->ell.pitch) * 4);
    add(a, &n, &H->ell.val, (size_t)(H->ell.width * H->ell.pitch) * vs);
    add(a, &n, &H->coo.row, (size_t)H->coo_nnz * 4);
    add(a, &n, &H->coo.col, (size_t)H->coo_nnz * 4);
    add(a, &n, &H->coo.val, (size_t)H->coo_nnz * vs);
    break;
  }
  case SPMV_FMT_DIA: {
    struct spmv_dia_layout *D = &L->u.dia;
    add(a, &n, &D->offsets, (size_t)D->ndiags * 4);
    add(a, &n, &D->val, (size_t)(D->ndiags * D->pitch) * vs);
    break;
  }
  case SPMV_FMT_JAD: {
    struct spmv_jad_layout *J = &L->u.jad;
    add(a, &n, &J->perm, (size_t)L->rows * 4);
    add(a, &n, &J->jd_ptr, (size_t)(J->njd + 1) * 8);
    add(a, &n, &J->col, (size_t)L->nnz * 4);
    add(a, &n, &J->val, (size_t)L->nnz * vs);
    break;
  }
  case SPMV_FMT_SELL: {
    struct spmv_sell_layout *S = &L->u.sell;
    size_t cells = host && S->slice_ptr ? (size_t)S->slice_ptr[S->nslices] : 0;
    add(a, &n, &S->perm, (size_t)(S->nslices * S->c) * 4);
    add(a, &n, &S->slice_ptr, (size_t)(S->nslices + 1) * 8);
    add(a, &n, &S->slice_width, (size_t)S->nslices * 4);
    add(a, &n, &S->col, cells * 4);
    add(a, &n, &S->val, cells * vs);
    break;
  }
  case SPMV_FMT_SELL16: {
    struct spmv_sell_layout *S = &L->u.sell;
    size_t cells = host && S->slice_ptr ? (size_t)S->slice_ptr[S->nslices] : 0;
    add(a, &n, &S->perm, (size_t)(S->nslices * S->c) * 4);
    add(a, &n, &S->slice_ptr, (size_t)(S->nslices + 1) * 8);
    add(a, &n, &S->slice_width, (size_t)S->nslices * 4);
    add(a, &n, &S->base, (size_t)(S->nslices * S->c) * 4);
    add(a, &n, &S->col16, cells * 2);
    add(a, &n, &S->val, cells * vs);
    break;
  }
  default:
    return -1;
  }
  return n;
}

/* Scratch bytes of the two-step formats. */
static size_t work_bytes(const struct spmv_layout *L) {
  size_t vs = L->dtype == SPMV_F32 ? 4 : 8;
  switch (L->cfg.format) {
  case SPMV_FMT_CSR_ADAPTIVE:
    return L->u.adaptive.nlong > 0 ? (size_t)L->u.adaptive.nchunks * vs : 0;
  case SPMV_FMT_CSR_STREAM:
  case SPMV_FMT_CSR_STREAM16:
    return L->u.stream.nlong > 0 ? (size_t)L->u.stream.nchunks * vs : 0;
  case SPMV_FMT_COO:
    return spmv_coo_work_bytes(L->nnz, vs);
  case SPMV_FMT_HYB:
    return spmv_coo_work_bytes(L->u.hyb.coo_nnz, vs);
  case SPMV_FMT_CSR_MERGE:
    return spmv_merge_work_bytes(L->rows, L->nnz, vs);
  case SPMV_FMT_CSR_PANEL:  /* each row's panel sums */
    return L->u.panel.npanels > 1 ? (size_t)(L->u.panel.npanels * L->rows) * vs : 0;
  default:
    return 0;
  }
}

/* Device bytes of L's arrays and scratch, each rounded to 256 bytes. */
extern "C" size_t spmv_dev_matrix_bytes(const struct spmv_layout *L) {
  struct spmv_layout copy = *L;
  struct array_ref a[MAX_ARRAYS] = {};
  int n = layout_arrays(&copy, a, 1);
  size_t total = (work_bytes(L) + 255) / 256 * 256;
  for (int k = 0; k < n; k++) total += (a[k].bytes + 255) / 256 * 256;
  return total;
}

/* Values converted per pass of spmv_f64_to_f32_kernel (8 bytes each staged). */
#define CONVERT_CHUNK (SPMV_DEV_CONVERT_STAGING / sizeof(double))

__global__ void spmv_f64_to_f32_kernel(const double *__restrict__ in,
                                       float *__restrict__ out, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = (float)in[i];
}

/*
 * Fills the device array d (bytes long) of a shell's typed CSR from A:
 * col is A's columns as they are; val A's values, copied as they are in
 * f64 and in f32 staged through a bounded buffer of doubles and narrowed
 * by a kernel (the same rounding as the host's cast).
 */
static int fill_from_csr(void *d, size_t bytes, int is_val, enum spmv_dtype dt,
                         const struct spmv_csr *A, struct spmv_error *err) {
  cudaError_t e;
  if (!is_val) {
    e = cudaMemcpy(d, A->col_idx, bytes, cudaMemcpyHostToDevice);
    return spmv_cuda_error(e, "cudaMemcpy of the columns", err);
  }
  if (dt == SPMV_F64) {
    e = cudaMemcpy(d, A->val, bytes, cudaMemcpyHostToDevice);
    return spmv_cuda_error(e, "cudaMemcpy of the values", err);
  }
  size_t n = (size_t)A->nnz, step = n < CONVERT_CHUNK ? n : CONVERT_CHUNK;
  double *stage = NULL;
  int rc = spmv_dev_alloc((void **)&stage, step * sizeof(double),
                          "the values staged to convert", err);
  for (size_t at = 0; rc == 0 && at < n; at += step) {
    size_t len = n - at < step ? n - at : step;
    e = cudaMemcpy(stage, A->val + at, len * sizeof(double), cudaMemcpyHostToDevice);
    if ((rc = spmv_cuda_error(e, "cudaMemcpy of the values", err))) break;
    spmv_f64_to_f32_kernel<<<(unsigned)((len + 255) / 256 < 4096 ? (len + 255) / 256 : 4096),
                             256>>>(stage, (float *)d + at, len);
    rc = spmv_cuda_error(cudaGetLastError(), "value conversion kernel", err);
  }
  /* The last pass must finish before its staging buffer goes. */
  if (rc == 0)
    rc = spmv_cuda_error(cudaDeviceSynchronize(), "value conversion", err);
  spmv_dev_free(stage);
  return rc;
}

/*
 * The staged formats: their entries placed from the CSR on the device, each
 * slot written once (entry or padding) in the layout's own order so that a
 * warp's writes are consecutive; the same contents as the host's
 * conversion, padding included (column -1 or SPMV_SELL16_PAD, value 0).
 */

/* sell and sell16, one thread per lane: entry k of lane l of slice s at
 * slice_ptr[s] + k * C + l, up to the slice's width (sell_fill()). */
template <typename T, bool NARROW>
__global__ void spmv_sell_fill_kernel(struct spmv_sell_layout S, int64_t lanes,
                                      const int64_t *__restrict__ rp,
                                      const int32_t *__restrict__ ci,
                                      const double *__restrict__ cv) {
  int64_t lane = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= lanes) return;
  int64_t s = lane / S.c, l = lane - s * S.c, at = S.slice_ptr[s] + l;
  int32_t r = S.perm[lane], w = S.slice_width[s];
  int64_t lo = r >= 0 ? rp[r] : 0, len = r >= 0 ? rp[r + 1] - lo : 0;
  int32_t b = NARROW ? S.base[lane] : 0;
  for (int64_t k = 0; k < w; k++, at += S.c) {
    bool real = k < len;
    if (NARROW)
      S.col16[at] = real ? (uint16_t)(ci[lo + k] - b) : (uint16_t)SPMV_SELL16_PAD;
    else
      S.col[at] = real ? ci[lo + k] : -1;
    ((T *)S.val)[at] = real ? (T)cv[lo + k] : T(0);
  }
}

/* Slot at of a padded layout (ell, ellr-t): entry k of row i, or a pad
 * (column -1, value 0) past the row's end or past the matrix's rows. */
template <typename T>
__device__ inline void put_slot(int32_t *col, void *val, int64_t at, int64_t i,
                                int64_t k, int64_t rows,
                                const int64_t *__restrict__ rp,
                                const int32_t *__restrict__ ci,
                                const double *__restrict__ cv) {
  int64_t lo = i < rows ? rp[i] : 0, len = i < rows ? rp[i + 1] - lo : 0;
  bool real = k < len;
  col[at] = real ? ci[lo + k] : -1;
  ((T *)val)[at] = real ? (T)cv[lo + k] : T(0);
}

/* ell, one thread per slot: slot k * pitch + i holds entry k of row i
 * (spmv_ell_arrays_init()). */
template <typename T>
__global__ void spmv_ell_fill_kernel(struct spmv_ell_layout E, int64_t rows,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t slots = E.width * E.pitch, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t at = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; at < slots;
       at += stride) {
    int64_t k = at / E.pitch;
    put_slot<T>(E.col, E.val, at, at - k * E.pitch, k, rows, rp, ci, cv);
  }
}

/* ellr-t, one thread per slot: slot (j / T) * pitch * T + i * T + j % T
 * holds entry j of row i (spmv_ellr_t_init()). */
template <typename T>
__global__ void spmv_ellr_fill_kernel(struct spmv_ellr_layout R, int64_t rows,
                                      const int64_t *__restrict__ rp,
                                      const int32_t *__restrict__ ci,
                                      const double *__restrict__ cv) {
  int64_t plane = R.pitch * R.t, slots = R.iters * plane;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t at = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; at < slots;
       at += stride) {
    int64_t q = at / plane, rem = at - q * plane, i = rem / R.t;
    put_slot<T>(R.col, R.val, at, i, q * R.t + (rem - i * R.t), rows, rp, ci, cv);
  }
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

/* coo (and hyb's COO part), a warp per row: the entries of row i past its
 * first skip, from start[i] on, in row order (spmv_coo_arrays_init()). */
template <typename T>
__global__ void spmv_coo_fill_kernel(struct spmv_coo_layout K, int64_t rows,
                                     int64_t skip, const int64_t *__restrict__ start,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int64_t nwarps = (int64_t)gridDim.x * blockDim.x / 32;
  int lane = threadIdx.x % 32;
  for (int64_t i = warp; i < rows; i += nwarps) {
    int64_t lo = rp[i] + skip, at = start[i] - lo;
    for (int64_t k = lo + lane; k < rp[i + 1]; k += 32) {
      K.row[at + k] = (int32_t)i;
      K.col[at + k] = ci[k];
      ((T *)K.val)[at + k] = (T)cv[k];
    }
  }
}

/* jad, a thread per sorted row k: its entry d at jd_ptr[d] + k
 * (spmv_jad_init()). */
template <typename T>
__global__ void spmv_jad_fill_kernel(struct spmv_jad_layout J, int64_t rows,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < rows;
       k += stride) {
    int32_t r = J.perm[k];
    int64_t lo = rp[r], len = rp[r + 1] - lo;
    for (int64_t d = 0; d < len; d++) {
      J.col[J.jd_ptr[d] + k] = ci[lo + d];
      ((T *)J.val)[J.jd_ptr[d] + k] = (T)cv[lo + d];
    }
  }
}

/* dia, a thread per row over its entries in order, each added to its
 * diagonal's slot (found among the ascending offsets) in double and
 * narrowed, as spmv_val_add() sums duplicates; val zeroed before. */
template <typename T>
__global__ void spmv_dia_fill_kernel(struct spmv_dia_layout D, int64_t rows,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
      int64_t off = (int64_t)ci[k] - i, lo = 0, hi = D.ndiags;
      while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (D.offsets[mid] < off) lo = mid + 1;
        else hi = mid;
      }
      T *v = (T *)D.val + lo * D.pitch + i;
      *v = (T)((double)*v + cv[k]);
    }
  }
}

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

/* Grid of a grid-stride fill over n threads' work. */
static unsigned fill_grid(int64_t n) {
  int64_t g = (n + 255) / 256;
  return (unsigned)(g < 1 ? 1 : g > 65535 ? 65535 : g);
}

/* Launches the fill of D's entries; start: hyb's COO positions per row. */
template <typename T>
static void launch_fill(struct spmv_layout *D, const struct spmv_csr *A,
                        const int64_t *rp, const int32_t *ci, const double *cv,
                        const int64_t *start) {
  switch (D->cfg.format) {
  case SPMV_FMT_SELL:
  case SPMV_FMT_SELL16: {
    int64_t lanes = D->u.sell.nslices * D->u.sell.c;
    unsigned grid = (unsigned)((lanes + 255) / 256);
    if (lanes == 0) return;
    if (D->cfg.format == SPMV_FMT_SELL16)
      spmv_sell_fill_kernel<T, true><<<grid, 256>>>(D->u.sell, lanes, rp, ci, cv);
    else
      spmv_sell_fill_kernel<T, false><<<grid, 256>>>(D->u.sell, lanes, rp, ci, cv);
    return;
  }
  case SPMV_FMT_ELL:
    if (D->u.ell.width * D->u.ell.pitch > 0)
      spmv_ell_fill_kernel<T><<<fill_grid(D->u.ell.width * D->u.ell.pitch), 256>>>(
          D->u.ell, A->rows, rp, ci, cv);
    return;
  case SPMV_FMT_ELLR_T: {
    int64_t slots = D->u.ellr.iters * D->u.ellr.pitch * D->u.ellr.t;
    if (slots > 0)
      spmv_ellr_fill_kernel<T><<<fill_grid(slots), 256>>>(D->u.ellr, A->rows, rp, ci, cv);
    return;
  }
  case SPMV_FMT_CSR16:
    if (A->rows > 0)
      spmv_csr16_fill_kernel<T><<<fill_grid(A->rows * 32), 256>>>(D->u.csr, A->rows, rp,
                                                                  ci, cv);
    return;
  case SPMV_FMT_COO:
    if (A->rows > 0 && A->nnz > 0)
      spmv_coo_fill_kernel<T><<<fill_grid(A->rows * 32), 256>>>(D->u.coo, A->rows, 0, rp,
                                                                rp, ci, cv);
    return;
  case SPMV_FMT_HYB: {
    struct spmv_hyb_layout *H = &D->u.hyb;
    if (H->ell.width * H->ell.pitch > 0)
      spmv_ell_fill_kernel<T><<<fill_grid(H->ell.width * H->ell.pitch), 256>>>(
          H->ell, A->rows, rp, ci, cv);
    if (H->coo_nnz > 0)
      spmv_coo_fill_kernel<T><<<fill_grid(A->rows * 32), 256>>>(H->coo, A->rows, H->k,
                                                                start, rp, ci, cv);
    return;
  }
  case SPMV_FMT_CSR_STREAM16: {
    int64_t n = D->u.stream.nblocks > D->u.stream.nlong ? D->u.stream.nblocks
                                                        : D->u.stream.nlong;
    if (n > 0)
      spmv_stream16_fill_kernel<T><<<(unsigned)(n < 65535 ? n : 65535), 256>>>(
          D->u.stream, rp, ci, cv);
    return;
  }
  case SPMV_FMT_JAD:
    if (A->rows > 0)
      spmv_jad_fill_kernel<T><<<fill_grid(A->rows), 256>>>(D->u.jad, A->rows, rp, ci, cv);
    return;
  case SPMV_FMT_DIA:
    if (A->rows > 0)
      spmv_dia_fill_kernel<T><<<fill_grid(A->rows), 256>>>(D->u.dia, A->rows, rp, ci, cv);
    return;
  default:
    return;
  }
}

/* hyb's COO positions: start[i], where row i's entries past the first K
 * go (the count of those of the rows before it); new, or NULL. */
static int64_t *hyb_starts(const struct spmv_csr *A, int64_t k) {
  int64_t *st = (int64_t *)malloc((size_t)(A->rows + 1) * sizeof *st);
  if (st == NULL) return NULL;
  st[0] = 0;
  for (int64_t i = 0; i < A->rows; i++) {
    int64_t len = A->row_ptr[i + 1] - A->row_ptr[i];
    st[i + 1] = st[i] + (len > k ? len - k : 0);
  }
  return st;
}

/* Fills the entries of staged shell D (its other arrays on the device)
 * from A, whose CSR is staged on the device for the kernel. */
static int fill_staged(struct spmv_layout *D, const struct spmv_csr *A,
                       struct spmv_error *err) {
  size_t nnz = (size_t)A->nnz, rb = (size_t)(A->rows + 1) * 8;
  int64_t *rp = NULL, *start = NULL, *hstart = NULL;
  int32_t *ci = NULL;
  double *cv = NULL;
  cudaError_t e;
  int rc = spmv_dev_alloc((void **)&rp, rb, "the row offsets staged to convert", err);
  if (rc == 0)
    rc = spmv_dev_alloc((void **)&ci, nnz * 4 + 4, "the columns staged to convert", err);
  if (rc == 0)
    rc = spmv_dev_alloc((void **)&cv, nnz * 8 + 8, "the values staged to convert", err);
  if (rc == 0 && D->cfg.format == SPMV_FMT_HYB) {
    if ((hstart = hyb_starts(A, D->u.hyb.k)) == NULL)
      rc = spmv_error_set(err, SPMV_ENOMEM, "out of host memory for hyb's COO positions");
    else
      rc = spmv_dev_alloc((void **)&start, rb, "hyb's COO positions", err);
  }
  if (rc) goto out;
  e = cudaMemcpy(rp, A->row_ptr, rb, cudaMemcpyHostToDevice);
  if (e == cudaSuccess && nnz > 0)
    e = cudaMemcpy(ci, A->col_idx, nnz * 4, cudaMemcpyHostToDevice);
  if (e == cudaSuccess && nnz > 0)
    e = cudaMemcpy(cv, A->val, nnz * 8, cudaMemcpyHostToDevice);
  if (e == cudaSuccess && start != NULL)
    e = cudaMemcpy(start, hstart, rb, cudaMemcpyHostToDevice);
  /* dia adds each entry to its slot: the pads and sums start from 0. */
  if (e == cudaSuccess && D->cfg.format == SPMV_FMT_DIA && D->u.dia.ndiags > 0)
    e = cudaMemset(D->u.dia.val, 0,
                   (size_t)(D->u.dia.ndiags * D->u.dia.pitch) *
                       (D->dtype == SPMV_F32 ? 4 : 8));
  if ((rc = spmv_cuda_error(e, "cudaMemcpy of the staged CSR", err))) goto out;
  if (D->dtype == SPMV_F32)
    launch_fill<float>(D, A, rp, ci, cv, start);
  else
    launch_fill<double>(D, A, rp, ci, cv, start);
  if ((rc = spmv_cuda_error(cudaGetLastError(), "conversion kernel", err))) goto out;
  rc = spmv_cuda_error(cudaDeviceSynchronize(), "conversion on the device", err);
out:
  spmv_dev_free(rp);
  spmv_dev_free(ci);
  spmv_dev_free(cv);
  spmv_dev_free(start);
  free(hstart);
  return rc;
}

/* Device bytes a shell's completion stages for a while; see spmv_kernels.h. */
extern "C" size_t spmv_dev_shell_staging(const struct spmv_layout *L) {
  if (!L->shell) return 0;
  if (spmv_layout_typed_csr(L) != NULL)  /* copied, f32 narrowed in steps */
    return L->dtype == SPMV_F32 ? SPMV_DEV_CONVERT_STAGING : 0;
  /* fill_staged's CSR, and hyb's COO positions */
  return (size_t)(L->rows + 1) * (L->cfg.format == SPMV_FMT_HYB ? 16 : 8) +
         (size_t)L->nnz * 12 + 12;
}

/*
 * Copies L to the device; with A (a shell's CSR), the entries' arrays,
 * which L leaves NULL, are made there from A: the typed CSR's col and val
 * copied (fill_from_csr); the other formats' placed by a kernel from the
 * staged CSR (fill_staged) once their other arrays are there.
 */
static int dev_matrix_new(const struct spmv_layout *L, const struct spmv_csr *A,
                          struct spmv_cusparse_handle *h,
                          struct spmv_dev_matrix **out, struct spmv_error *err) {
  struct array_ref a[MAX_ARRAYS];
  struct spmv_dev_matrix *m = (struct spmv_dev_matrix *)calloc(1, sizeof *m);
  const struct spmv_csr_layout *C;
  int rc = 0, n;
  *out = NULL;
  if (m == NULL) return spmv_error_set(err, SPMV_ENOMEM, "out of host memory");
  m->L = *L;
  m->L.shell = 0; /* complete on the device */
  n = layout_arrays(&m->L, a, 1);
  if (n < 0) {
    free(m);
    return spmv_error_set(err, SPMV_EFORMAT, "format %d has no GPU kernel",
                          (int)L->cfg.format);
  }
  C = A != NULL ? spmv_layout_typed_csr(&m->L) : NULL;
  /* A shell leaves NULL exactly the arrays the device makes from A. */
  int staged = A != NULL && C == NULL;
  /* Null every field first so that a failure frees only what was made. */
  void *host[MAX_ARRAYS];
  for (int k = 0; k < n; k++) {
    host[k] = *a[k].field;
    *a[k].field = NULL;
  }
  for (int k = 0; k < n; k++) {
    int from_csr = A != NULL && host[k] == NULL;
    if (a[k].bytes == 0 || (host[k] == NULL && !from_csr)) continue;
    void *d = NULL;
    if ((rc = spmv_dev_alloc(&d, a[k].bytes, spmv_format_name(L->cfg.format), err)))
      goto fail;
    *a[k].field = d;
    m->array[m->narrays] = d;
    m->array_bytes[m->narrays++] = a[k].bytes;
    m->bytes += a[k].bytes;
    if (from_csr) {
      if (C != NULL &&
          (rc = fill_from_csr(d, a[k].bytes, a[k].field == (void **)&C->val,
                              L->dtype, A, err)))
        goto fail;
      continue;
    }
    cudaError_t e = cudaMemcpy(d, host[k], a[k].bytes, cudaMemcpyHostToDevice);
    if ((rc = spmv_cuda_error(e, "cudaMemcpy of a layout array", err))) goto fail;
  }
  if (staged && (rc = fill_staged(&m->L, A, err))) goto fail;
  /* The copies above, waited for once rather than each as spmv_dev_upload
   * would (why: spmv_kernels.h; a probe's products launched right after
   * the upload came back wrong in their last rows until this wait: H100,
   * probe_rounds), before cuSPARSE's preprocessing, which runs on a
   * non-blocking stream.  The matrix is whole for any stream. */
  if ((rc = spmv_cuda_error(cudaStreamSynchronize(0), "upload of the layout", err)))
    goto fail;
  {
    /* Once here rather than at every launch (a query is a runtime call). */
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess) {
      m->device = dev;
      m->l2_bytes = (size_t)dev_attr(cudaDevAttrL2CacheSize, dev);
      m->sms = dev_attr(cudaDevAttrMultiProcessorCount, dev);
      m->smem_per_sm = dev_attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
      m->smem_optin = dev_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    }
    cudaGetLastError();
  }
  m->work_bytes = work_bytes(L);
  if (m->work_bytes > 0) {
    if ((rc = spmv_dev_alloc(&m->work, m->work_bytes, "scratch", err))) goto fail;
    m->bytes += m->work_bytes;
  }
  if (L->cfg.format == SPMV_FMT_CUSPARSE) {
    if (h == NULL) {
      rc = spmv_error_set(err, SPMV_EINVAL, "cusparse format needs a cuSPARSE handle");
      goto fail;
    }
    if ((rc = spmv_cusparse_prepare(m, h, err))) goto fail;
  }
  *out = m;
  return 0;
fail:
  spmv_dev_matrix_free(m);
  return rc;
}

/* Copies L to the device; see spmv_kernels.h. */
extern "C" int spmv_dev_matrix_new(const struct spmv_layout *L,
                                   struct spmv_cusparse_handle *h,
                                   struct spmv_dev_matrix **out,
                                   struct spmv_error *err) {
  if (L->shell) {
    *out = NULL;
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: a shell layout needs its CSR "
                          "(spmv_dev_matrix_new_csr)", spmv_format_name(L->cfg.format));
  }
  return dev_matrix_new(L, NULL, h, out, err);
}

/* Completes shell L on the device from A; see spmv_kernels.h. */
extern "C" int spmv_dev_matrix_new_csr(const struct spmv_layout *L,
                                       const struct spmv_csr *A,
                                       struct spmv_cusparse_handle *h,
                                       struct spmv_dev_matrix **out,
                                       struct spmv_error *err) {
  *out = NULL;
  if (!L->shell || A == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "%s: not a shell layout with its CSR",
                          spmv_format_name(L->cfg.format));
  if (A->rows != L->rows || A->cols != L->cols || A->nnz != L->nnz)
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: the CSR (%lld x %lld, %lld entries) is not the "
                          "shell's (%lld x %lld, %lld)",
                          spmv_format_name(L->cfg.format), (long long)A->rows,
                          (long long)A->cols, (long long)A->nnz, (long long)L->rows,
                          (long long)L->cols, (long long)L->nnz);
  return dev_matrix_new(L, A, h, out, err);
}

/* Frees m and its device memory (NULL is a no-op); returns NULL. */
extern "C" struct spmv_dev_matrix *spmv_dev_matrix_free(struct spmv_dev_matrix *m) {
  struct array_ref a[MAX_ARRAYS];
  if (m == NULL) return NULL;
  spmv_cusparse_release(m);
  int n = layout_arrays(&m->L, a, 0);
  for (int k = 0; k < n; k++)
    spmv_dev_free(*a[k].field);
  spmv_dev_free(m->work);
  free(m);
  return NULL;
}

/* Arrays to take into the L2: units of 32 bytes (a sector) to read a word
 * of, or of 16 bytes (4 where an array is not 16-byte aligned) to read and
 * store back (spmv_l2_warm_mode). */
struct spmv_warm_list {
  uint32_t *p[MAX_ARRAYS];
  size_t units[MAX_ARRAYS];
  int narrow[MAX_ARRAYS];
  int n;
};

/* sink is NULL: the never-taken store keeps the loads (L2 only, normal
 * priority) from being optimised away. */
__global__ void spmv_warm_l2_kernel(struct spmv_warm_list w, uint32_t *sink) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  uint32_t acc = 0;
  for (int k = 0; k < w.n; k++)
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < w.units[k];
         i += stride)
      acc ^= __ldcg(w.p[k] + 8 * i);
  if (sink != NULL) *sink = acc;
}

/* The same values written back, which the L2 keeps where it would not keep
 * them read (spmv_formats.h). */
__global__ void spmv_rewrite_l2_kernel(struct spmv_warm_list w) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (int k = 0; k < w.n; k++) {
    size_t i0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w.narrow[k]) {
      uint32_t *q = w.p[k];
      for (size_t i = i0; i < w.units[k]; i += stride) __stcg(q + i, __ldcg(q + i));
    } else {
      uint4 *q = (uint4 *)w.p[k];
      for (size_t i = i0; i < w.units[k]; i += stride) __stcg(q + i, __ldcg(q + i));
    }
  }
}

/* See spmv_kernels.h. */
extern "C" enum spmv_l2_warm spmv_dev_matrix_warm_mode(const struct spmv_dev_matrix *m) {
  size_t total = 0;
  for (int k = 0; k < m->narrays; k++) total += m->array_bytes[k];
  return spmv_l2_warm_mode(total, m->L.rows, m->L.cols, m->L.dtype, m->l2_bytes);
}

/* See spmv_kernels.h. */
extern "C" int spmv_dev_matrix_warm_l2(const struct spmv_dev_matrix *m,
                                       cudaStream_t s, struct spmv_error *err) {
  enum spmv_l2_warm mode = spmv_dev_matrix_warm_mode(m);
  if (mode == SPMV_L2_WARM_NONE) return 0;
  struct spmv_warm_list w = {};
  for (int k = 0; k < m->narrays; k++) {
    /* A partial last unit is left as it is (at most 31 bytes an array). */
    size_t unit = 32;
    w.p[w.n] = (uint32_t *)m->array[k];
    w.narrow[w.n] = 0;
    if (mode == SPMV_L2_WARM_WRITE) {
      w.narrow[w.n] = ((uintptr_t)m->array[k] & 15) != 0;
      unit = w.narrow[w.n] ? 4 : 16;
    }
    w.units[w.n++] = m->array_bytes[k] / unit;
  }
  if (mode == SPMV_L2_WARM_WRITE)
    spmv_rewrite_l2_kernel<<<256, 256, 0, s>>>(w);
  else
    spmv_warm_l2_kernel<<<256, 256, 0, s>>>(w, NULL);
  return spmv_cuda_error(cudaGetLastError(), "L2 warm-up kernel", err);
}

/* y = alpha*A*x + beta*y with m's format; see spmv_kernels.h. */
extern "C" int spmv_dev_spmv(const struct spmv_dev_matrix *m, double alpha,
                             const void *x, double beta, void *y,
                             cudaStream_t s, struct spmv_error *err) {
  switch (m->L.cfg.format) {
  case SPMV_FMT_CSR_SCALAR: return spmv_launch_csr_scalar(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_CSR_VECTOR: return spmv_launch_csr_vector(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_CSR_ADAPTIVE: return spmv_launch_csr_adaptive(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_ELL: return spmv_launch_ell(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_ELLR_T: return spmv_launch_ellr_t(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_COO: return spmv_launch_coo(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_HYB: return spmv_launch_hyb(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_DIA: return spmv_launch_dia(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_JAD: return spmv_launch_jad(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_SELL:
  case SPMV_FMT_SELL16: return spmv_launch_sell(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_CSR_MERGE: return spmv_launch_csr_merge(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_CUSPARSE: return spmv_launch_cusparse(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_CSR16: return spmv_launch_csr16(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_CSR_STREAM:
  case SPMV_FMT_CSR_STREAM16: return spmv_launch_csr_stream(m, alpha, x, beta, y, s, err);
  case SPMV_FMT_CSR_PANEL: return spmv_launch_csr_panel(m, alpha, x, beta, y, s, err);
  default:
    return spmv_error_set(err, SPMV_EFORMAT, "format %d has no GPU kernel",
                          (int)m->L.cfg.format);
  }
}
