/* hyb.c: ELL for the first K entries of each row, COO for the rest. */
#include <stdlib.h>

#include "spmv_layout.h"

/*
 * K from the row-length histogram (Bell & Garland): the largest K such that
 * at least a third of the rows have K or more entries, i.e.
 * 3 * |{i : rl[i] >= K}| >= rows.  Returns -1 when out of memory.
 */
static int64_t hyb_auto_k(const struct spmv_csr *A, int64_t max_row)
{
  int64_t *count = calloc((size_t)max_row + 1, sizeof *count);
  int64_t i, k, at_least = 0;

  if (count == NULL)
    return -1;
  for (i = 0; i < A->rows; i++)
    count[A->row_ptr[i + 1] - A->row_ptr[i]]++;
  for (k = max_row; k > 0; k--) {
    at_least += count[k];
    if (3 * at_least >= A->rows)
      break;
  }
  free(count);
  return k;
}

/* Builds a HYB layout: K = cfg->param, or from the histogram when 0; a K
 * past the longest row is cut to it. */
int spmv_hyb_init(struct spmv_layout *L, const struct spmv_csr *A,
                  const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_hyb_layout *H = &L->u.hyb;
  int64_t max_row = spmv_csr_max_row(A);
  size_t bytes = 0;
  int overflow, rc;

  if (L->cfg.param < 0)
    return spmv_error_set(err, SPMV_EINVAL, "hyb K=%d is negative",
                          L->cfg.param);
  H->k = L->cfg.param > 0 ? L->cfg.param : hyb_auto_k(A, max_row);
  if (H->k < 0)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for the row "
                          "length histogram of hyb (%lld lengths)",
                          (long long)max_row + 1);
  if (H->k > max_row)
    H->k = max_row;
  H->coo_nnz = spmv_coo_arrays_count(A, H->k);
  overflow = spmv_ell_arrays_bytes(A->rows, H->k, L->dtype, &bytes) != 0 ||
             spmv_coo_arrays_bytes(H->coo_nnz, L->dtype, &bytes) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  if (L->shell) { /* the GPU fills both parts (spmv_dev_matrix_new_csr) */
    H->ell.width = H->k;
    H->ell.pitch = spmv_pitch(A->rows);
    return 0;
  }
  if (spmv_ell_arrays_init(&H->ell, A, H->k, L->dtype) != 0 ||
      spmv_coo_arrays_init(&H->coo, A, H->k, H->coo_nnz, L->dtype) != 0)
    return spmv_layout_nomem(L, err);
  return 0;
}

/* Frees a HYB layout's arrays. */
void spmv_hyb_fini(struct spmv_layout *L)
{
  spmv_ell_arrays_fini(&L->u.hyb.ell);
  spmv_coo_arrays_fini(&L->u.hyb.coo);
}

/* The CPU reference over HYB: the ELL part with beta, then the COO part
 * added to it, as the two kernels run one after the other. */
void spmv_hyb_spmv(const struct spmv_layout *L, double alpha, const void *x,
                   double beta, void *y)
{
  const struct spmv_hyb_layout *H = &L->u.hyb;

  spmv_ell_arrays_apply(&H->ell, L->rows, L->dtype, alpha, x, beta, y);
  spmv_coo_arrays_apply(&H->coo, H->coo_nnz, L->rows, L->dtype, alpha, x,
                        1.0, y);
}
