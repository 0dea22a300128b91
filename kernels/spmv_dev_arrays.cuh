/* spmv_dev_arrays.cuh: each format's device arrays, as spmv_device.cu lists
 * and fills them; internal to the CUDA kernels. */
#ifndef SPMV_DEV_ARRAYS_CUH
#define SPMV_DEV_ARRAYS_CUH

#include <stddef.h>
#include <stdint.h>

#include "spmv_cuda.cuh"

/*
 * A format's device arrays are the pointer fields of its layout
 * (spmv_formats.h).  spmv_device.cu copies a layout to the device array by
 * array, so each format lists its arrays (<format>_dev.cu, beside the
 * format's kernel): spmv_<format>_dev_arrays() writes the address of each
 * pointer field inside L and the bytes it holds to a, and returns how
 * many.  vs is the value size (4 or 8).
 *
 * A shell layout (spmv_layout_new_shell) leaves NULL the arrays that hold
 * the entries; for the staged formats the device places them from the CSR
 * staged on the device: spmv_<format>_dev_fill() launches the format's
 * fill kernel on the legacy stream, reading row offsets rp, columns ci and
 * f64 values cv (start: hyb's COO positions per row, else NULL), once the
 * layout's other arrays are on the device.  Each slot is written once
 * (entry or padding) in the layout's own order so that a warp's writes are
 * consecutive: the same contents as the host's conversion, padding
 * included (column -1 or SPMV_SELL16_PAD, value 0).
 */

/* One array of a layout: the address of its pointer field and its size. */
struct array_ref {
  void **field;
  size_t bytes;
};

/* Appends one array to a[*n] and counts it. */
static inline void add(struct array_ref *a, int *n, void *field, size_t bytes) {
  a[*n].field = (void **)field;
  a[*n].bytes = bytes;
  (*n)++;
}

/* Grid of a grid-stride fill over n threads' work. */
static inline unsigned fill_grid(int64_t n) {
  int64_t g = (n + 255) / 256;
  return (unsigned)(g < 1 ? 1 : g > 65535 ? 65535 : g);
}

/* The signature of every spmv_<format>_dev_fill(). */
#define SPMV_DEV_FILL_PROTO(name)                                            \
  void spmv_##name##_dev_fill(struct spmv_layout *D, const struct spmv_csr *A, \
                              const int64_t *rp, const int32_t *ci,          \
                              const double *cv, const int64_t *start)

/* Defines spmv_<name>_dev_fill() from the file's fill<T>(D, A, rp, ci, cv,
 * start): the kernel for the layout's value type. */
#define SPMV_DEV_FILLER(name, fill)                                          \
  SPMV_DEV_FILL_PROTO(name) {                                                \
    if (D->dtype == SPMV_F32)                                                \
      fill<float>(D, A, rp, ci, cv, start);                                  \
    else                                                                     \
      fill<double>(D, A, rp, ci, cv, start);                                 \
  }

/* csr_dev.cu: csr-scalar, csr-vector, csr-merge and cusparse's ALG1 and
 * ALG2 share csr;
 * csr-stream16's offsets are placed on the device. */
int spmv_csr_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a);
int spmv_csr16_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a);
int spmv_csr_adaptive_dev_arrays(struct spmv_layout *L, size_t vs,
                                 struct array_ref *a);
int spmv_csr_stream_dev_arrays(struct spmv_layout *L, size_t vs,
                               struct array_ref *a);
int spmv_csr_stream16_dev_arrays(struct spmv_layout *L, size_t vs,
                                 struct array_ref *a);
int spmv_csr_panel_dev_arrays(struct spmv_layout *L, size_t vs,
                              struct array_ref *a);
SPMV_DEV_FILL_PROTO(csr16);
SPMV_DEV_FILL_PROTO(csr_stream16);

/* ell_dev.cu */
int spmv_ell_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a);
int spmv_ellr_t_dev_arrays(struct spmv_layout *L, size_t vs,
                           struct array_ref *a);
SPMV_DEV_FILL_PROTO(ell);
SPMV_DEV_FILL_PROTO(ellr_t);
/* ELL arrays E of a layout with rows rows (ell's own, or hyb's ELL part). */
void spmv_ell_dev_fill_arrays(struct spmv_ell_layout *E, enum spmv_dtype dt,
                              int64_t rows, const int64_t *rp,
                              const int32_t *ci, const double *cv);

/* coo_dev.cu */
int spmv_coo_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a);
SPMV_DEV_FILL_PROTO(coo);
/* COO arrays K from the entries of each row past its first skip, row i's
 * from start[i] on (coo's own: skip 0, start rp; or hyb's COO part). */
void spmv_coo_dev_fill_arrays(struct spmv_coo_layout *K, enum spmv_dtype dt,
                              int64_t rows, int64_t skip,
                              const int64_t *start, const int64_t *rp,
                              const int32_t *ci, const double *cv);

/* hyb_dev.cu */
int spmv_hyb_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a);
SPMV_DEV_FILL_PROTO(hyb);
/* hyb's COO positions for A at K entries a row: start[i], where row i's
 * entries past the first K go (the count of those of the rows before it);
 * a new host array of rows + 1, or NULL. */
int64_t *spmv_hyb_dev_starts(const struct spmv_csr *A, int64_t k);

/* dia_dev.cu: its values must be zeroed before the fill, which adds. */
int spmv_dia_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a);
SPMV_DEV_FILL_PROTO(dia);

/* jad_dev.cu */
int spmv_jad_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a);
SPMV_DEV_FILL_PROTO(jad);

/* sell_dev.cu: sell and sell16 (one fill for both).  The size of col and
 * val is read from slice_ptr, so it needs a host layout: host = 0 for a
 * device layout (sizes then 0). */
int spmv_sell_dev_arrays(struct spmv_layout *L, size_t vs,
                         struct array_ref *a, int host);
int spmv_sell16_dev_arrays(struct spmv_layout *L, size_t vs,
                           struct array_ref *a, int host);
SPMV_DEV_FILL_PROTO(sell);

/* cusparse_dev.cu: by the configuration's algorithm, the typed CSR (as
 * csr's, copied rather than filled), the sliced ELL or the BSR (whose
 * values must be zeroed before the fill, which adds). */
int spmv_cusparse_dev_arrays(struct spmv_layout *L, size_t vs,
                             struct array_ref *a);
SPMV_DEV_FILL_PROTO(cusparse);

#endif /* SPMV_DEV_ARRAYS_CUH */
