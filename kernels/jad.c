/* jad.c: jagged diagonals, rows sorted by decreasing length. */
#include <stdlib.h>

#include "spmv_layout.h"

/* Fills perm by a stable counting sort by decreasing length (see
 * spmv_layout.h). */
void spmv_jad_perm(const struct spmv_csr *A, int64_t max_len, int64_t *count,
                   int32_t *perm)
{
  int64_t i, len, next = 0;

  for (len = 0; len <= max_len; len++)
    count[len] = 0;
  for (i = 0; i < A->rows; i++)
    count[A->row_ptr[i + 1] - A->row_ptr[i]]++;
  for (len = max_len; len >= 0; len--) {
    int64_t n = count[len];

    count[len] = next;
    next += n;
  }
  for (i = 0; i < A->rows; i++)
    perm[count[A->row_ptr[i + 1] - A->row_ptr[i]]++] = (int32_t)i;
}

/* Builds a JAD layout. */
int spmv_jad_init(struct spmv_layout *L, const struct spmv_csr *A,
                  const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_jad_layout *J = &L->u.jad;
  int64_t *count = NULL;
  int64_t k, d;
  size_t bytes = 0;
  int overflow, rc;

  J->njd = spmv_csr_max_row(A);
  overflow = spmv_bytes_add(&bytes, A->rows, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, J->njd + 1, sizeof(int64_t)) != 0 ||
             spmv_bytes_add(&bytes, A->nnz, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, A->nnz, spmv_dtype_size(L->dtype)) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  count = spmv_array_new(J->njd + 1, sizeof *count);  /* spmv_jad_perm clears it */
  J->perm = spmv_array_new(A->rows, sizeof(int32_t));
  J->jd_ptr = spmv_array_new(J->njd + 1, sizeof(int64_t));
  if (!L->shell) { /* else the GPU fills the entries */
    J->col = spmv_array_new(A->nnz, sizeof(int32_t));
    J->val = spmv_array_new(A->nnz, spmv_dtype_size(L->dtype));
  }
  if (count == NULL || J->perm == NULL || J->jd_ptr == NULL ||
      (!L->shell && (J->col == NULL || J->val == NULL))) {
    rc = spmv_layout_nomem(L, err);
    goto out;
  }
  spmv_jad_perm(A, J->njd, count, J->perm);
  /* count[len] now holds the rows of length >= len: diagonal d's. */
  J->jd_ptr[0] = 0;
  for (d = 0; d < J->njd; d++)
    J->jd_ptr[d + 1] = J->jd_ptr[d] + count[d + 1];
  if (L->shell)
    goto out;
  for (k = 0; k < A->rows; k++) {
    int64_t lo = A->row_ptr[J->perm[k]];

    for (d = 0; d < A->row_ptr[J->perm[k] + 1] - lo; d++) {
      J->col[J->jd_ptr[d] + k] = A->col_idx[lo + d];
      spmv_val_set(J->val, L->dtype, J->jd_ptr[d] + k, A->val[lo + d]);
    }
  }
out:
  free(count);
  return rc;
}

/* Frees a JAD layout's arrays. */
void spmv_jad_fini(struct spmv_layout *L)
{
  free(L->u.jad.perm);
  free(L->u.jad.jd_ptr);
  free(L->u.jad.col);
  free(L->u.jad.val);
}

/* One thread per sorted row k: walks the jagged diagonals while they are
 * longer than k, then writes row perm[k]. */
#define JAD_ROWS(T)                                                          \
  static void jad_rows_##T(const struct spmv_jad_layout *J, int64_t rows,    \
                           T alpha, const T *x, T beta, T *y)                \
  {                                                                          \
    const T *val = J->val;                                                   \
    int64_t k, d;                                                            \
                                                                             \
    for (k = 0; k < rows; k++) {                                             \
      T sum = 0;                                                             \
                                                                             \
      for (d = 0; d < J->njd && k < J->jd_ptr[d + 1] - J->jd_ptr[d]; d++)    \
        sum += val[J->jd_ptr[d] + k] * x[J->col[J->jd_ptr[d] + k]];          \
      SPMV_FINISH(y, J->perm[k], alpha, sum, beta);                          \
    }                                                                        \
  }
JAD_ROWS(float)
JAD_ROWS(double)

/* The CPU reference over the JAD layout. */
void spmv_jad_spmv(const struct spmv_layout *L, double alpha, const void *x,
                   double beta, void *y)
{
  SPMV_DISPATCH(L->dtype, jad_rows, alpha, x, beta, y, &L->u.jad, L->rows);
}
