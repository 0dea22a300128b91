/* spmv_device.cu: resident matrices on the GPU: upload of a layout, scratch, dispatch. */
/*
 * Host code only.  A struct spmv_dev_matrix is the host layout with each
 * array copied to device memory and its pointer replaced; kernels receive
 * the struct by reference and read the arrays exactly as spmv_formats.h
 * defines them.  spmv_dev_spmv() picks the format's launcher.
 */
#include <stdlib.h>
#include <string.h>

#include "spmv_cuda.cuh"
#include "spmv_dev_arrays.cuh"

/* Device attribute a of device dev, 0 where the runtime does not answer. */
static int dev_attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : 0;
}

#define MAX_ARRAYS SPMV_DEV_MAX_ARRAYS

/*
 * Lists L's arrays (pointer fields inside L itself) with their sizes, from
 * its format's list (spmv_dev_arrays.cuh).  The size of sell's col and val
 * is read from slice_ptr, so it needs a host layout: pass host = 0 for a
 * device layout (sizes then unused).
 */
static int layout_arrays(struct spmv_layout *L, struct array_ref *a, int host) {
  size_t vs = L->dtype == SPMV_F32 ? 4 : 8;
  switch (L->cfg.format) {
  case SPMV_FMT_CSR_SCALAR:
  case SPMV_FMT_CSR_VECTOR:
  case SPMV_FMT_CSR_MERGE: return spmv_csr_dev_arrays(L, vs, a);
  case SPMV_FMT_CUSPARSE: return spmv_cusparse_dev_arrays(L, vs, a);
  case SPMV_FMT_CSR16: return spmv_csr16_dev_arrays(L, vs, a);
  case SPMV_FMT_CSR_ADAPTIVE: return spmv_csr_adaptive_dev_arrays(L, vs, a);
  case SPMV_FMT_CSR_STREAM: return spmv_csr_stream_dev_arrays(L, vs, a);
  case SPMV_FMT_CSR_STREAM16: return spmv_csr_stream16_dev_arrays(L, vs, a);
  case SPMV_FMT_CSR_PANEL: return spmv_csr_panel_dev_arrays(L, vs, a);
  case SPMV_FMT_ELL: return spmv_ell_dev_arrays(L, vs, a);
  case SPMV_FMT_ELLR_T: return spmv_ellr_t_dev_arrays(L, vs, a);
  case SPMV_FMT_COO: return spmv_coo_dev_arrays(L, vs, a);
  case SPMV_FMT_HYB: return spmv_hyb_dev_arrays(L, vs, a);
  case SPMV_FMT_DIA: return spmv_dia_dev_arrays(L, vs, a);
  case SPMV_FMT_JAD: return spmv_jad_dev_arrays(L, vs, a);
  case SPMV_FMT_SELL: return spmv_sell_dev_arrays(L, vs, a, host);
  case SPMV_FMT_SELL16: return spmv_sell16_dev_arrays(L, vs, a, host);
  default:
    return -1;
  }
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
 * f64 and in f32 narrowed by a kernel (the same rounding as the host's
 * cast), from S's copy when A is staged on the device (S not NULL), else
 * from the host through a bounded buffer of doubles.
 */
static int fill_from_csr(void *d, size_t bytes, int is_val, enum spmv_dtype dt,
                         const struct spmv_csr *A, const struct spmv_dev_csr *S,
                         struct spmv_error *err) {
  cudaError_t e;
  cudaMemcpyKind kind = S != NULL ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  if (!is_val) {
    e = cudaMemcpy(d, S != NULL ? (const void *)S->col_idx : A->col_idx, bytes, kind);
    return spmv_cuda_error(e, "cudaMemcpy of the columns", err);
  }
  if (dt == SPMV_F64) {
    e = cudaMemcpy(d, S != NULL ? (const void *)S->val : A->val, bytes, kind);
    return spmv_cuda_error(e, "cudaMemcpy of the values", err);
  }
  size_t n = (size_t)A->nnz, step = n < CONVERT_CHUNK ? n : CONVERT_CHUNK;
  double *stage = NULL;
  int rc = 0;
  if (S != NULL)
    step = n > 0 ? n : 1;
  else
    rc = spmv_dev_alloc((void **)&stage, step * sizeof(double),
                        "the values staged to convert", err);
  for (size_t at = 0; rc == 0 && at < n; at += step) {
    size_t len = n - at < step ? n - at : step;
    const double *in = S != NULL ? S->val + at : stage;
    if (S == NULL) {
      e = cudaMemcpy(stage, A->val + at, len * sizeof(double), cudaMemcpyHostToDevice);
      if ((rc = spmv_cuda_error(e, "cudaMemcpy of the values", err))) break;
    }
    spmv_f64_to_f32_kernel<<<(unsigned)((len + 255) / 256 < 4096 ? (len + 255) / 256 : 4096),
                             256>>>(in, (float *)d + at, len);
    rc = spmv_cuda_error(cudaGetLastError(), "value conversion kernel", err);
  }
  /* The last pass must finish before its staging buffer goes. */
  if (rc == 0)
    rc = spmv_cuda_error(cudaDeviceSynchronize(), "value conversion", err);
  spmv_dev_free(stage);
  return rc;
}

/*
 * The staged formats: their entries placed from the CSR on the device by
 * their format's fill (spmv_dev_arrays.cuh).
 */

/* Launches the fill of D's entries; start: hyb's COO positions per row. */
static void launch_fill(struct spmv_layout *D, const struct spmv_csr *A,
                        const int64_t *rp, const int32_t *ci, const double *cv,
                        const int64_t *start) {
  switch (D->cfg.format) {
  case SPMV_FMT_SELL:
  case SPMV_FMT_SELL16: spmv_sell_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_ELL: spmv_ell_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_ELLR_T: spmv_ellr_t_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_CSR16: spmv_csr16_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_COO: spmv_coo_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_HYB: spmv_hyb_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_CSR_STREAM16: spmv_csr_stream16_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_JAD: spmv_jad_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_DIA: spmv_dia_dev_fill(D, A, rp, ci, cv, start); return;
  case SPMV_FMT_CUSPARSE: spmv_cusparse_dev_fill(D, A, rp, ci, cv, start); return;
  default:
    return;
  }
}

/* The values of D that its fill adds each entry to, so that the pads and
 * sums start from 0 (dia's and the BSR's), with their bytes; else NULL. */
static void *summed_values(const struct spmv_layout *D, size_t *bytes) {
  size_t vs = D->dtype == SPMV_F32 ? 4 : 8;
  if (D->cfg.format == SPMV_FMT_DIA && D->u.dia.ndiags > 0) {
    *bytes = (size_t)(D->u.dia.ndiags * D->u.dia.pitch) * vs;
    return D->u.dia.val;
  }
  if (D->cfg.format == SPMV_FMT_CUSPARSE && D->cfg.param == SPMV_CUSPARSE_BSR &&
      D->u.bsr.nblocks > 0) {
    *bytes = (size_t)D->u.bsr.nblocks * (size_t)(D->u.bsr.b * D->u.bsr.b) * vs;
    return D->u.bsr.val;
  }
  *bytes = 0;
  return NULL;
}

/* Fills the entries of staged shell D (its other arrays on the device)
 * from A, whose CSR is on the device for the kernel: S's copy when A is
 * staged there (S not NULL), else a copy made for this call. */
static int fill_staged(struct spmv_layout *D, const struct spmv_csr *A,
                       const struct spmv_dev_csr *S, struct spmv_error *err) {
  size_t rb = (size_t)(A->rows + 1) * 8;
  struct spmv_dev_csr *own = NULL;
  int64_t *start = NULL, *hstart = NULL;
  size_t zb;
  void *zero = summed_values(D, &zb);
  cudaError_t e = cudaSuccess;
  int rc = 0;
  if (S == NULL && (rc = spmv_dev_csr_new(A, &own, err)) == 0)
    S = own;
  if (rc == 0 && D->cfg.format == SPMV_FMT_HYB) {
    if ((hstart = spmv_hyb_dev_starts(A, D->u.hyb.k)) == NULL)
      rc = spmv_error_set(err, SPMV_ENOMEM, "out of host memory for hyb's COO positions");
    else
      rc = spmv_dev_alloc((void **)&start, rb, "hyb's COO positions", err);
  }
  if (rc) goto out;
  if (start != NULL)
    e = cudaMemcpy(start, hstart, rb, cudaMemcpyHostToDevice);
  if (e == cudaSuccess && zero != NULL)
    e = cudaMemset(zero, 0, zb);
  if ((rc = spmv_cuda_error(e, "cudaMemcpy of hyb's COO positions", err))) goto out;
  launch_fill(D, A, S->row_ptr, S->col_idx, S->val, start);
  if ((rc = spmv_cuda_error(cudaGetLastError(), "conversion kernel", err))) goto out;
  rc = spmv_cuda_error(cudaDeviceSynchronize(), "conversion on the device", err);
out:
  spmv_dev_csr_free(own);
  spmv_dev_free(start);
  free(hstart);
  return rc;
}

/* Stages A's CSR on the device; see spmv_kernels.h. */
extern "C" int spmv_dev_csr_new(const struct spmv_csr *A, struct spmv_dev_csr **out,
                                struct spmv_error *err) {
  size_t nnz = (size_t)A->nnz, rb = (size_t)(A->rows + 1) * 8;
  struct spmv_dev_csr *S = (struct spmv_dev_csr *)calloc(1, sizeof *S);
  cudaError_t e;
  int rc;
  *out = NULL;
  if (S == NULL) return spmv_error_set(err, SPMV_ENOMEM, "out of host memory");
  S->rows = A->rows;
  S->cols = A->cols;
  S->nnz = A->nnz;
  rc = spmv_dev_alloc((void **)&S->row_ptr, rb, "the row offsets staged to convert", err);
  if (rc == 0)
    rc = spmv_dev_alloc((void **)&S->col_idx, nnz * 4 + 4, "the columns staged to convert", err);
  if (rc == 0)
    rc = spmv_dev_alloc((void **)&S->val, nnz * 8 + 8, "the values staged to convert", err);
  if (rc) goto fail;
  e = cudaMemcpy(S->row_ptr, A->row_ptr, rb, cudaMemcpyHostToDevice);
  if (e == cudaSuccess && nnz > 0)
    e = cudaMemcpy(S->col_idx, A->col_idx, nnz * 4, cudaMemcpyHostToDevice);
  if (e == cudaSuccess && nnz > 0)
    e = cudaMemcpy(S->val, A->val, nnz * 8, cudaMemcpyHostToDevice);
  /* From pageable memory a copy may return with its DMA in flight. */
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(0);
  if ((rc = spmv_cuda_error(e, "cudaMemcpy of the staged CSR", err))) goto fail;
  *out = S;
  return 0;
fail:
  spmv_dev_csr_free(S);
  return rc;
}

/* Frees S (NULL is a no-op); returns NULL. */
extern "C" struct spmv_dev_csr *spmv_dev_csr_free(struct spmv_dev_csr *S) {
  if (S == NULL) return NULL;
  spmv_dev_free(S->row_ptr);
  spmv_dev_free(S->col_idx);
  spmv_dev_free(S->val);
  free(S);
  return NULL;
}

/* Device bytes of A staged (spmv_dev_csr_new), each array rounded up. */
extern "C" size_t spmv_dev_csr_bytes(const struct spmv_csr *A) {
  size_t rb = (size_t)(A->rows + 1) * 8, cb = (size_t)A->nnz * 4 + 4,
         vb = (size_t)A->nnz * 8 + 8;
  return (rb + 255) / 256 * 256 + (cb + 255) / 256 * 256 + (vb + 255) / 256 * 256;
}

/* Device bytes a shell's completion stages for a while; see spmv_kernels.h. */
extern "C" size_t spmv_dev_shell_staging(const struct spmv_layout *L, int staged) {
  if (!L->shell) return 0;
  if (spmv_layout_typed_csr(L) != NULL)  /* copied, f32 narrowed in steps */
    return L->dtype == SPMV_F32 && !staged ? SPMV_DEV_CONVERT_STAGING : 0;
  /* fill_staged's CSR, and hyb's COO positions */
  return (size_t)(L->rows + 1) * (L->cfg.format == SPMV_FMT_HYB ? 8 : 0) +
         (staged ? 0 : (size_t)(L->rows + 1) * 8 + (size_t)L->nnz * 12 + 12);
}

/*
 * Copies L to the device; with A (a shell's CSR), the entries' arrays,
 * which L leaves NULL, are made there from A: the typed CSR's col and val
 * copied (fill_from_csr); the other formats' placed by a kernel from the
 * staged CSR (fill_staged) once their other arrays are there.
 */
static int dev_matrix_new(const struct spmv_layout *L, const struct spmv_csr *A,
                          const struct spmv_dev_csr *S, struct spmv_cusparse_handle *h,
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
                              L->dtype, A, S, err)))
        goto fail;
      continue;
    }
    cudaError_t e = cudaMemcpy(d, host[k], a[k].bytes, cudaMemcpyHostToDevice);
    if ((rc = spmv_cuda_error(e, "cudaMemcpy of a layout array", err))) goto fail;
  }
  if (staged && (rc = fill_staged(&m->L, A, S, err))) goto fail;
  /* The copies above, waited for once rather than each as spmv_dev_upload
   * would (why: spmv_kernels.h; without the wait, products launched on
   * another stream right after the upload can read the last rows before
   * their copy lands), before cuSPARSE's preprocessing, which runs on a
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
  return dev_matrix_new(L, NULL, NULL, h, out, err);
}

/* Completes shell L on the device from A (staged as S, or NULL); see
 * spmv_kernels.h. */
extern "C" int spmv_dev_matrix_new_staged(const struct spmv_layout *L,
                                          const struct spmv_csr *A,
                                          const struct spmv_dev_csr *S,
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
  if (S != NULL && (S->rows != A->rows || S->cols != A->cols || S->nnz != A->nnz))
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: the staged CSR (%lld x %lld, %lld entries) is not A's",
                          spmv_format_name(L->cfg.format), (long long)S->rows,
                          (long long)S->cols, (long long)S->nnz);
  return dev_matrix_new(L, A, S, h, out, err);
}

extern "C" int spmv_dev_matrix_new_csr(const struct spmv_layout *L,
                                       const struct spmv_csr *A,
                                       struct spmv_cusparse_handle *h,
                                       struct spmv_dev_matrix **out,
                                       struct spmv_error *err) {
  return spmv_dev_matrix_new_staged(L, A, NULL, h, out, err);
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
