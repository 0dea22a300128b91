/* spmv_csr.c: CSR allocation, validation and the reference product. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_csr.h"

/* Largest column count that 32-bit column indices can address. */
#define CSR_MAX_COLS INT32_MAX

/* Allocates n elements of size sz (at least one byte), or NULL on overflow. */
static void *alloc_array(int64_t n, size_t sz, int zero)
{
  size_t count;

  if (n < 0 || (uint64_t)n > SIZE_MAX / sz)
    return NULL;
  count = n > 0 ? (size_t)n : 1;
  return zero ? calloc(count, sz) : malloc(count * sz);
}

/* Allocates a zeroed CSR of the given shape; returns a new CSR or NULL. */
struct spmv_csr *spmv_csr_new(int64_t rows, int64_t cols, int64_t nnz)
{
  struct spmv_csr *A;

  if (rows < 0 || cols < 0 || nnz < 0 || cols > CSR_MAX_COLS ||
      rows == INT64_MAX)
    return NULL;
  A = calloc(1, sizeof *A);
  if (A == NULL)
    return NULL;
  A->rows = rows;
  A->cols = cols;
  A->nnz = nnz;
  A->row_ptr = alloc_array(rows + 1, sizeof *A->row_ptr, 1);
  A->col_idx = alloc_array(nnz, sizeof *A->col_idx, 1);
  A->val = alloc_array(nnz, sizeof *A->val, 1);
  if (A->row_ptr == NULL || A->col_idx == NULL || A->val == NULL)
    goto fail;
  return A;
fail:
  return spmv_csr_free(A);
}

/* Frees A and its arrays (NULL is a no-op); returns NULL. */
struct spmv_csr *spmv_csr_free(struct spmv_csr *A)
{
  if (A == NULL)
    return NULL;
  free(A->row_ptr);
  free(A->col_idx);
  free(A->val);
  free(A);
  return NULL;
}

/* Returns a deep copy of A owned by the caller, or NULL. */
struct spmv_csr *spmv_csr_dup(const struct spmv_csr *A)
{
  struct spmv_csr *B;

  if (A == NULL)
    return NULL;
  B = spmv_csr_new(A->rows, A->cols, A->nnz);
  if (B == NULL)
    return NULL;
  memcpy(B->row_ptr, A->row_ptr, (size_t)(A->rows + 1) * sizeof *B->row_ptr);
  if (A->nnz > 0) {
    memcpy(B->col_idx, A->col_idx, (size_t)A->nnz * sizeof *B->col_idx);
    memcpy(B->val, A->val, (size_t)A->nnz * sizeof *B->val);
  }
  return B;
}

/* Checks dimensions and that the arrays a non-empty matrix needs are there. */
static int check_shape(const struct spmv_csr *A, struct spmv_error *err)
{
  if (A == NULL)
    return spmv_error_set(err, SPMV_ECSR, "no matrix");
  if (A->rows < 0 || A->cols < 0 || A->nnz < 0)
    return spmv_error_set(err, SPMV_ECSR,
                          "negative dimension: rows %" PRId64 ", cols %" PRId64
                          ", nnz %" PRId64, A->rows, A->cols, A->nnz);
  if (A->cols > CSR_MAX_COLS)
    return spmv_error_set(err, SPMV_ECSR,
                          "cols = %" PRId64 " exceeds the 32-bit column index "
                          "limit %d", A->cols, CSR_MAX_COLS);
  if (A->row_ptr == NULL)
    return spmv_error_set(err, SPMV_ECSR, "row_ptr is missing");
  if (A->nnz > 0 && A->col_idx == NULL)
    return spmv_error_set(err, SPMV_ECSR, "col_idx is missing");
  if (A->nnz > 0 && A->val == NULL)
    return spmv_error_set(err, SPMV_ECSR, "val is missing");
  return 0;
}

/* Checks row_ptr: 0 at the start, monotone, nnz at the end. */
static int check_row_ptr(const struct spmv_csr *A, struct spmv_error *err)
{
  const int64_t *rp = A->row_ptr;
  int64_t i;

  if (rp[0] != 0)
    return spmv_error_set(err, SPMV_ECSR, "row_ptr[0] = %" PRId64
                          " is not 0", rp[0]);
  for (i = 1; i <= A->rows; i++) {
    if (rp[i] < rp[i - 1])
      return spmv_error_set(err, SPMV_ECSR,
                            "row_ptr[%" PRId64 "] = %" PRId64
                            " is less than row_ptr[%" PRId64 "] = %" PRId64,
                            i, rp[i], i - 1, rp[i - 1]);
    if (rp[i] > A->nnz)
      return spmv_error_set(err, SPMV_ECSR,
                            "row_ptr[%" PRId64 "] = %" PRId64
                            " exceeds nnz = %" PRId64, i, rp[i], A->nnz);
  }
  if (rp[A->rows] != A->nnz)
    return spmv_error_set(err, SPMV_ECSR,
                          "row_ptr[%" PRId64 "] = %" PRId64
                          " differs from nnz = %" PRId64,
                          A->rows, rp[A->rows], A->nnz);
  return 0;
}

/* Checks every column index and (unless allowed) every value of rows
 * [r0, r1), row by row. */
int spmv_csr_validate_rows(const struct spmv_csr *A, unsigned flags,
                           int64_t r0, int64_t r1, struct spmv_error *err)
{
  int check_values = !(flags & SPMV_CSR_ALLOW_NONFINITE);
  int64_t i, k;

  for (i = r0; i < r1; i++) {
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      int32_t c = A->col_idx[k];
      double v;

      if (c < 0 || (int64_t)c >= A->cols)
        return spmv_error_set(err, SPMV_ECSR,
                              "column index %" PRId32 " out of range [0, %"
                              PRId64 ") in row %" PRId64, c, A->cols, i);
      if (!check_values)
        continue;
      v = A->val[k];
      if (!isfinite(v))
        return spmv_error_set(err, SPMV_ECSR,
                              "value %s at row %" PRId64 ", entry %" PRId64
                              " (column %" PRId32 ")",
                              isnan(v) ? "NaN" : (v > 0 ? "Inf" : "-Inf"),
                              i, k - A->row_ptr[i], c);
    }
  }
  return 0;
}

/* Checks every CSR invariant; returns 0 or SPMV_ECSR naming the position. */
int spmv_csr_validate(const struct spmv_csr *A, unsigned flags,
                      struct spmv_error *err)
{
  int rc;

  if ((rc = spmv_csr_validate_offsets(A, err)) != 0)
    return rc;
  if ((rc = spmv_csr_validate_rows(A, flags, 0, A->rows, err)) != 0)
    return rc;
  spmv_error_clear(err);
  return 0;
}

int spmv_csr_validate_offsets(const struct spmv_csr *A, struct spmv_error *err)
{
  int rc;

  if ((rc = check_shape(A, err)) != 0)
    return rc;
  return check_row_ptr(A, err);
}

/* The reference product y = alpha*A*x + beta*y in double precision. */
void spmv_csr_ref(const struct spmv_csr *A, double alpha, const double *x,
                  double beta, double *y)
{
  int64_t i, k;

  for (i = 0; i < A->rows; i++) {
    double sum = 0.0;

    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      sum += A->val[k] * x[A->col_idx[k]];
    y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i];
  }
}
