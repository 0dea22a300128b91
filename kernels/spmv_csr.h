/* spmv_csr.h: the CSR matrix every other layout is converted from. */
#ifndef SPMV_CSR_H
#define SPMV_CSR_H

#include <stdint.h>

#include "spmv_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A matrix in compressed sparse rows.  Row offsets are 64-bit on the host
 * so that nnz >= 2^31 needs no second type; device layouts narrow them to
 * 32 bits when nnz < 2^31.  Values are held in double precision: an f32
 * matrix is widened exactly, and narrowed again when a layout is built.
 * Columns within a row need not be sorted.
 *
 * Ownership: a CSR from spmv_csr_new() owns its three arrays and is freed
 * with spmv_csr_free().  A caller may also fill a struct spmv_csr as a view
 * of arrays it owns (e.g. in shared memory); such a view is never passed to
 * spmv_csr_free().
 */
struct spmv_csr {
  int64_t rows;      /* number of rows, >= 0 */
  int64_t cols;      /* number of columns, >= 0, at most 2^31 - 1 */
  int64_t nnz;       /* stored entries, explicit zeros included */
  int64_t *row_ptr;  /* rows + 1 offsets: row_ptr[0] = 0, row_ptr[rows] = nnz */
  int32_t *col_idx;  /* nnz column indices in [0, cols) */
  double *val;       /* nnz values */
};

/* Flags of spmv_csr_validate(). */
#define SPMV_CSR_ALLOW_NONFINITE 0x1u  /* accept NaN and Inf values */

/*
 * Allocates a CSR of the given shape with zeroed arrays (row_ptr all 0).
 * Returns a new CSR owned by the caller, or NULL when out of memory or when
 * a dimension is negative or cols exceeds the 32-bit column index range.
 */
struct spmv_csr *spmv_csr_new(int64_t rows, int64_t cols, int64_t nnz);

/* Frees a CSR made by spmv_csr_new() (NULL is a no-op); returns NULL. */
struct spmv_csr *spmv_csr_free(struct spmv_csr *A);

/* Returns a deep copy of A owned by the caller, or NULL when out of memory. */
struct spmv_csr *spmv_csr_dup(const struct spmv_csr *A);

/*
 * Checks every invariant: dimensions, row_ptr monotone from 0 to nnz, every
 * column in [0, cols), values finite unless SPMV_CSR_ALLOW_NONFINITE.
 * Returns 0, or SPMV_ECSR with a message naming the first offending
 * position (e.g. "column index 70001 out of range [0, 70000) in row 12").
 */
int spmv_csr_validate(const struct spmv_csr *A, unsigned flags,
                      struct spmv_error *err);

/*
 * spmv_csr_validate() in two parts, so that a caller may check rows in
 * parallel: the dimensions and row offsets, then (once those hold) the
 * entries of rows [r0, r1).  The first failing block's message is the one
 * spmv_csr_validate() gives.
 */
int spmv_csr_validate_offsets(const struct spmv_csr *A, struct spmv_error *err);
int spmv_csr_validate_rows(const struct spmv_csr *A, unsigned flags,
                           int64_t r0, int64_t r1, struct spmv_error *err);

/*
 * The reference product: y = alpha*A*x + beta*y, a plain loop in double
 * precision.  When beta == 0, y is not read (so it may hold NaN).  Every
 * layout and every kernel is tested against this.
 */
void spmv_csr_ref(const struct spmv_csr *A, double alpha, const double *x,
                  double beta, double *y);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_CSR_H */
