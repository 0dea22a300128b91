/* hyb_dev.cu: the device arrays of hyb, and the device's fill of its ELL
 * part (ell_dev.cu) and COO part (coo_dev.cu). */
#include <stdlib.h>

#include "spmv_dev_arrays.cuh"

/* hyb's ELL columns and values, then its COO rows, columns and values. */
int spmv_hyb_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a) {
  int n = 0;
  struct spmv_hyb_layout *H = &L->u.hyb;
  add(a, &n, &H->ell.col, (size_t)(H->ell.width * H->ell.pitch) * 4);
  add(a, &n, &H->ell.val, (size_t)(H->ell.width * H->ell.pitch) * vs);
  add(a, &n, &H->coo.row, (size_t)H->coo_nnz * 4);
  add(a, &n, &H->coo.col, (size_t)H->coo_nnz * 4);
  add(a, &n, &H->coo.val, (size_t)H->coo_nnz * vs);
  return n;
}

/* hyb's COO positions; see spmv_dev_arrays.cuh. */
int64_t *spmv_hyb_dev_starts(const struct spmv_csr *A, int64_t k) {
  int64_t *st = (int64_t *)malloc((size_t)(A->rows + 1) * sizeof *st);
  if (st == NULL) return NULL;
  st[0] = 0;
  for (int64_t i = 0; i < A->rows; i++) {
    int64_t len = A->row_ptr[i + 1] - A->row_ptr[i];
    st[i + 1] = st[i] + (len > k ? len - k : 0);
  }
  return st;
}

/* hyb's fill: the first K entries of each row into the ELL part, the rest
 * from start on into the COO part. */
SPMV_DEV_FILL_PROTO(hyb) {
  struct spmv_hyb_layout *H = &D->u.hyb;
  if (H->ell.width * H->ell.pitch > 0)
    spmv_ell_dev_fill_arrays(&H->ell, D->dtype, A->rows, rp, ci, cv);
  if (H->coo_nnz > 0)
    spmv_coo_dev_fill_arrays(&H->coo, D->dtype, A->rows, H->k, start, rp, ci,
                             cv);
}
