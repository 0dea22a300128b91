/* ell.c: ELLPACK, column-major and padded (Bell & Garland). */
#include <stdlib.h>

#include "spmv_layout.h"

/* Adds the bytes of an ELL of rows x width: columns and values. */
int spmv_ell_arrays_bytes(int64_t rows, int64_t width, enum spmv_dtype dt,
                          size_t *bytes)
{
  int64_t slots;

  if (spmv_mul64(spmv_pitch(rows), width, &slots) != 0 ||
      spmv_bytes_add(bytes, slots, sizeof(int32_t)) != 0 ||
      spmv_bytes_add(bytes, slots, spmv_dtype_size(dt)) != 0)
    return -1;
  return 0;
}

/* Fills E with the first `width` entries of each row of A; entry k of row i
 * at k * pitch + i, padding (column -1, value 0) elsewhere. */
int spmv_ell_arrays_init(struct spmv_ell_layout *E, const struct spmv_csr *A,
                         int64_t width, enum spmv_dtype dt)
{
  int64_t i, k, slots;

  E->width = width;
  E->pitch = spmv_pitch(A->rows);
  slots = E->pitch * width;
  E->col = spmv_array_new(slots, sizeof(int32_t));
  E->val = spmv_array_zero(slots, spmv_dtype_size(dt));
  if (E->col == NULL || E->val == NULL)
    return SPMV_ENOMEM;
  for (k = 0; k < slots; k++)
    E->col[k] = -1;
  for (i = 0; i < A->rows; i++) {
    int64_t lo = A->row_ptr[i], len = A->row_ptr[i + 1] - lo;

    for (k = 0; k < len && k < width; k++) {
      E->col[k * E->pitch + i] = A->col_idx[lo + k];
      spmv_val_set(E->val, dt, k * E->pitch + i, A->val[lo + k]);
    }
  }
  return 0;
}

/* Frees E's arrays. */
void spmv_ell_arrays_fini(struct spmv_ell_layout *E)
{
  free(E->col);
  free(E->val);
  E->col = NULL;
  E->val = NULL;
}

/* One thread per row: walks the row's column of slots, skipping padding. */
#define ELL_ROWS(T)                                                          \
  static void ell_rows_##T(const struct spmv_ell_layout *E, int64_t rows,    \
                           T alpha, const T *x, T beta, T *y)                \
  {                                                                          \
    const T *val = E->val;                                                   \
    int64_t i, k;                                                            \
                                                                             \
    for (i = 0; i < rows; i++) {                                             \
      T sum = 0;                                                             \
                                                                             \
      for (k = 0; k < E->width; k++) {                                       \
        int32_t c = E->col[k * E->pitch + i];                                \
                                                                             \
        if (c >= 0)                                                          \
          sum += val[k * E->pitch + i] * x[c];                               \
      }                                                                      \
      SPMV_FINISH(y, i, alpha, sum, beta);                                   \
    }                                                                        \
  }
ELL_ROWS(float)
ELL_ROWS(double)

/* y = alpha*E*x + beta*y over the ELL arrays. */
void spmv_ell_arrays_apply(const struct spmv_ell_layout *E, int64_t rows,
                           enum spmv_dtype dt, double alpha, const void *x,
                           double beta, void *y)
{
  SPMV_DISPATCH(dt, ell_rows, alpha, x, beta, y, E, rows);
}

/* Builds an ELL of width = the longest row, after the fill and byte checks. */
int spmv_ell_init(struct spmv_layout *L, const struct spmv_csr *A,
                  const struct spmv_limits *lim, struct spmv_error *err)
{
  int64_t width = spmv_csr_max_row(A);
  size_t bytes = 0;
  int overflow, rc;

  if ((rc = spmv_layout_check_fill(L, lim, (double)A->rows * (double)width,
                                   err)) != 0)
    return rc;
  overflow = spmv_ell_arrays_bytes(A->rows, width, L->dtype, &bytes) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  if (L->shell) { /* the GPU fills the slots (spmv_dev_matrix_new_csr) */
    L->u.ell.width = width;
    L->u.ell.pitch = spmv_pitch(A->rows);
    return 0;
  }
  if (spmv_ell_arrays_init(&L->u.ell, A, width, L->dtype) != 0)
    return spmv_layout_nomem(L, err);
  return 0;
}

/* Frees an ELL layout's arrays. */
void spmv_ell_fini(struct spmv_layout *L)
{
  spmv_ell_arrays_fini(&L->u.ell);
}

/* The CPU reference over the ELL layout. */
void spmv_ell_spmv(const struct spmv_layout *L, double alpha, const void *x,
                   double beta, void *y)
{
  spmv_ell_arrays_apply(&L->u.ell, L->rows, L->dtype, alpha, x, beta, y);
}
