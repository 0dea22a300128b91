/* ellr_t.c: ELLPACK-R with T threads per row (Vázquez, Fernández & Garzón). */
#include <stdlib.h>

#include "spmv_layout.h"

/* Returns the position of entry j of row i (spmv_formats.h). */
static int64_t ellr_slot(const struct spmv_ellr_layout *R, int64_t i,
                         int64_t j)
{
  return (j / R->t) * (R->pitch * R->t) + i * R->t + j % R->t;
}

/* Builds an ELLR-T layout: T from cfg->tpr, iters = ceil(longest / T). */
int spmv_ellr_t_init(struct spmv_layout *L, const struct spmv_csr *A,
                     const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_ellr_layout *R = &L->u.ellr;
  int t = L->cfg.tpr;
  int64_t i, j, slots = 0;
  size_t bytes = 0;
  int overflow, rc;

  if (t != 1 && t != 2 && t != 4 && t != 8 && t != 16 && t != 32)
    return spmv_error_set(err, SPMV_EINVAL, "ellr-t T=%d is not one of 1, "
                          "2, 4, 8, 16, 32", t);
  R->t = t;
  R->iters = (spmv_csr_max_row(A) + t - 1) / t;
  R->pitch = spmv_pitch(A->rows);
  if ((rc = spmv_layout_check_fill(L, lim, (double)A->rows *
                                   (double)R->iters * t, err)) != 0)
    return rc;
  overflow = spmv_mul64(R->iters * t, R->pitch, &slots) != 0 ||
             spmv_bytes_add(&bytes, A->rows, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, slots, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, slots, spmv_dtype_size(L->dtype)) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  R->rl = spmv_array_new(A->rows, sizeof(int32_t));
  if (R->rl == NULL)
    return spmv_layout_nomem(L, err);
  for (i = 0; i < A->rows; i++)
    R->rl[i] = (int32_t)(A->row_ptr[i + 1] - A->row_ptr[i]);
  if (L->shell) /* the GPU fills the slots (spmv_dev_matrix_new_csr) */
    return 0;
  R->col = spmv_array_new(slots, sizeof(int32_t));
  R->val = spmv_array_zero(slots, spmv_dtype_size(L->dtype));
  if (R->col == NULL || R->val == NULL)
    return spmv_layout_nomem(L, err);
  for (j = 0; j < slots; j++)
    R->col[j] = -1;
  for (i = 0; i < A->rows; i++) {
    int64_t lo = A->row_ptr[i];

    for (j = 0; j < R->rl[i]; j++) {
      R->col[ellr_slot(R, i, j)] = A->col_idx[lo + j];
      spmv_val_set(R->val, L->dtype, ellr_slot(R, i, j), A->val[lo + j]);
    }
  }
  return 0;
}

/* Frees an ELLR-T layout's arrays. */
void spmv_ellr_t_fini(struct spmv_layout *L)
{
  free(L->u.ellr.rl);
  free(L->u.ellr.col);
  free(L->u.ellr.val);
}

/*
 * Thread t of row i sums entries j = t, t+T, ... below rl[i]; the T
 * partial sums are then reduced as a warp shuffle-down tree does:
 * p[t] += p[t + s] for s = T/2, T/4, ..., 1.
 */
#define ELLR_ROWS(T)                                                         \
  static void ellr_rows_##T(const struct spmv_ellr_layout *R, int64_t rows,  \
                            T alpha, const T *x, T beta, T *y)               \
  {                                                                          \
    const T *val = R->val;                                                   \
    T p[32];                                                                 \
    int64_t i, j;                                                            \
    int t, s;                                                                \
                                                                             \
    for (i = 0; i < rows; i++) {                                             \
      for (t = 0; t < R->t; t++) {                                           \
        p[t] = 0;                                                            \
        for (j = t; j < R->rl[i]; j += R->t) {                               \
          int64_t at = ellr_slot(R, i, j);                                   \
                                                                             \
          p[t] += val[at] * x[R->col[at]];                                   \
        }                                                                    \
      }                                                                      \
      for (s = R->t / 2; s > 0; s /= 2)                                      \
        for (t = 0; t < s; t++)                                              \
          p[t] += p[t + s];                                                  \
      SPMV_FINISH(y, i, alpha, p[0], beta);                                  \
    }                                                                        \
  }
ELLR_ROWS(float)
ELLR_ROWS(double)

/* The CPU reference over the ELLR-T layout. */
void spmv_ellr_t_spmv(const struct spmv_layout *L, double alpha,
                      const void *x, double beta, void *y)
{
  SPMV_DISPATCH(L->dtype, ellr_rows, alpha, x, beta, y, &L->u.ellr, L->rows);
}
