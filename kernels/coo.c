/* coo.c: coordinate format, row-major, summed by segments (Bell & Garland). */
#include <stdlib.h>

#include "spmv_layout.h"

/* Counts the entries of A past the first `skip` of each row. */
int64_t spmv_coo_arrays_count(const struct spmv_csr *A, int64_t skip)
{
  int64_t i, n = 0;

  for (i = 0; i < A->rows; i++) {
    int64_t len = A->row_ptr[i + 1] - A->row_ptr[i];

    if (len > skip)
      n += len - skip;
  }
  return n;
}

/* Adds the bytes of n COO entries: rows, columns, values. */
int spmv_coo_arrays_bytes(int64_t n, enum spmv_dtype dt, size_t *bytes)
{
  if (spmv_bytes_add(bytes, n, 2 * sizeof(int32_t)) != 0 ||
      spmv_bytes_add(bytes, n, spmv_dtype_size(dt)) != 0)
    return -1;
  return 0;
}

/* Fills K with the n entries of A past the first `skip` of each row, in
 * row-major order. */
int spmv_coo_arrays_init(struct spmv_coo_layout *K, const struct spmv_csr *A,
                         int64_t skip, int64_t n, enum spmv_dtype dt)
{
  int64_t i, k, e = 0;

  K->row = spmv_array_new(n, sizeof(int32_t));
  K->col = spmv_array_new(n, sizeof(int32_t));
  K->val = spmv_array_new(n, spmv_dtype_size(dt));
  if (K->row == NULL || K->col == NULL || K->val == NULL)
    return SPMV_ENOMEM;
  for (i = 0; i < A->rows; i++) {
    for (k = A->row_ptr[i] + skip; k < A->row_ptr[i + 1]; k++, e++) {
      K->row[e] = (int32_t)i;
      K->col[e] = A->col_idx[k];
      spmv_val_set(K->val, dt, e, A->val[k]);
    }
  }
  return 0;
}

/* Frees K's arrays. */
void spmv_coo_arrays_fini(struct spmv_coo_layout *K)
{
  free(K->row);
  free(K->col);
  free(K->val);
  K->row = NULL;
  K->col = NULL;
  K->val = NULL;
}

/*
 * y = beta*y first (0 when beta == 0, so y is not read), then each segment
 * of entries with the same row is summed and alpha times its sum is added
 * to that row, as the segmented reduction's carry-out does.
 */
#define COO_SEGMENTS(T)                                                      \
  static void coo_segments_##T(const struct spmv_coo_layout *K, int64_t n,   \
                               int64_t rows, T alpha, const T *x, T beta,    \
                               T *y)                                         \
  {                                                                          \
    const T *val = K->val;                                                   \
    int64_t i, e = 0;                                                        \
                                                                             \
    if (beta != 1)                                                           \
      for (i = 0; i < rows; i++)                                             \
        y[i] = beta == 0 ? 0 : beta * y[i];                                  \
    while (e < n) {                                                          \
      int32_t r = K->row[e];                                                 \
      T sum = 0;                                                             \
                                                                             \
      for (; e < n && K->row[e] == r; e++)                                   \
        sum += val[e] * x[K->col[e]];                                        \
      y[r] += alpha * sum;                                                   \
    }                                                                        \
  }
COO_SEGMENTS(float)
COO_SEGMENTS(double)

/* y = alpha*K*x + beta*y over n COO entries. */
void spmv_coo_arrays_apply(const struct spmv_coo_layout *K, int64_t n,
                           int64_t rows, enum spmv_dtype dt, double alpha,
                           const void *x, double beta, void *y)
{
  SPMV_DISPATCH(dt, coo_segments, alpha, x, beta, y, K, n, rows);
}

/* Builds a COO layout of all entries. */
int spmv_coo_init(struct spmv_layout *L, const struct spmv_csr *A,
                  const struct spmv_limits *lim, struct spmv_error *err)
{
  size_t bytes = 0;
  int overflow, rc;

  overflow = spmv_coo_arrays_bytes(A->nnz, L->dtype, &bytes) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  if (L->shell) /* the GPU fills the entries (spmv_dev_matrix_new_csr) */
    return 0;
  if (spmv_coo_arrays_init(&L->u.coo, A, 0, A->nnz, L->dtype) != 0)
    return spmv_layout_nomem(L, err);
  return 0;
}

/* Frees a COO layout's arrays. */
void spmv_coo_fini(struct spmv_layout *L)
{
  spmv_coo_arrays_fini(&L->u.coo);
}

/* The CPU reference over the COO layout. */
void spmv_coo_spmv(const struct spmv_layout *L, double alpha, const void *x,
                   double beta, void *y)
{
  spmv_coo_arrays_apply(&L->u.coo, L->nnz, L->rows, L->dtype, alpha, x, beta,
                        y);
}
