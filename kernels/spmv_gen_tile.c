/* spmv_gen_tile.c: matrices grown from another: tiled along the diagonal,
 * or each entry made a dense block. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_gen_impl.h"

/* The tiling: A, k copies cut into blocks of b rows, in the order perm. */
struct tiling {
  const struct spmv_csr *A;
  int64_t k;       /* copies */
  int64_t b;       /* rows per block */
  int64_t nb;      /* blocks per copy */
  int32_t *perm;   /* k * nb: slot s holds block perm[s] = copy * nb + j */
};

/* The column of A's diagonal at row x of the tiled matrix's row space. */
static int64_t diag_col(const struct tiling *t, int64_t x)
{
  return (int64_t)((__int128)x * t->A->cols / t->A->rows);
}

/* Rows [*first, *last) of A that block q covers; returns its copy. */
static int64_t block_rows_of(const struct tiling *t, int64_t q,
                             int64_t *first, int64_t *last)
{
  int64_t j = q % t->nb;

  *first = j * t->b;
  *last = *first + t->b < t->A->rows ? *first + t->b : t->A->rows;
  return q / t->nb;
}

/* Writes the lengths of the tiled rows into T->row_ptr[1 ..]. */
static void tile_lengths(const struct tiling *t, struct spmv_csr *T)
{
  int64_t s, i, first, last, r = 0;

  for (s = 0; s < t->k * t->nb; s++) {
    block_rows_of(t, t->perm[s], &first, &last);
    for (i = first; i < last; i++, r++)
      T->row_ptr[r + 1] = t->A->row_ptr[i + 1] - t->A->row_ptr[i];
  }
}

/* Copies every block to its slot with shifted, wrapped, sorted columns. */
static void tile_entries(const struct tiling *t, struct spmv_csr *T)
{
  const struct spmv_csr *A = t->A;
  int64_t s, i, k, first, last, copy, shift, c, r = 0, kc = T->cols;
  int64_t *dst;

  for (s = 0; s < t->k * t->nb; s++) {
    copy = block_rows_of(t, t->perm[s], &first, &last);
    shift = diag_col(t, r) - diag_col(t, copy * A->rows + first);
    for (i = first; i < last; i++, r++) {
      dst = &T->row_ptr[r];
      for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
        c = (copy * A->cols + A->col_idx[k] + shift) % kc;
        T->col_idx[*dst + k - A->row_ptr[i]] = (int32_t)(c < 0 ? c + kc : c);
        T->val[*dst + k - A->row_ptr[i]] = A->val[k];
      }
      spmv_gen_sort(T->col_idx + *dst, T->val + *dst, T->row_ptr[r + 1] - *dst);
    }
  }
}

/* Checks the arguments of spmv_gen_tile(); returns 0 or an error code. */
static int tile_check(const struct spmv_csr *A, int64_t k, int64_t block_rows,
                      struct spmv_error *err)
{
  int rc;

  if (A == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "tile: no matrix");
  if ((rc = spmv_csr_validate(A, SPMV_CSR_ALLOW_NONFINITE, err)) != 0)
    return rc;
  if (k < 1 || block_rows < 0)
    return spmv_error_set(err, SPMV_EINVAL, "tile: need k >= 1 and "
                          "block_rows >= 0, got k = %" PRId64
                          ", block_rows = %" PRId64, k, block_rows);
  if (A->rows > SPMV_GEN_MAX_DIM / k || A->cols > SPMV_GEN_MAX_DIM / k)
    return spmv_error_set(err, SPMV_ETOOBIG, "tile: %" PRId64 " copies of %"
                          PRId64 " x %" PRId64 " exceed the 32-bit index "
                          "limit %d", k, A->rows, A->cols, SPMV_GEN_MAX_DIM);
  return 0;
}

/* k shuffled copies of A along the diagonal; new CSR or NULL. */
struct spmv_csr *spmv_gen_tile(const struct spmv_csr *A, int64_t k,
                               int64_t block_rows, uint64_t seed,
                               struct spmv_error *err)
{
  struct tiling t;
  struct spmv_csr *T = NULL;
  int64_t nslots;

  if (tile_check(A, k, block_rows, err) != 0)
    return NULL;
  if ((T = spmv_gen_begin(k * A->rows, k * A->cols, err)) == NULL)
    return NULL;
  t.A = A;
  t.k = k;
  t.b = block_rows > 0 ? block_rows : (A->rows > 0 ? A->rows : 1);
  t.nb = (A->rows + t.b - 1) / t.b;
  nslots = k * t.nb;
  t.perm = spmv_gen_perm(nslots, seed);
  if (t.perm == NULL) {
    T = spmv_gen_nomem(T, "the block order", err);
    goto out;
  }
  tile_lengths(&t, T);
  if (spmv_gen_commit(T, err) != 0 || spmv_gen_values(T, seed, err) != 0) {
    T = spmv_csr_free(T);
    goto out;
  }
  if (T->nnz > 0)
    tile_entries(&t, T);
out:
  free(t.perm);
  return T;
}

/* Each entry of P a dense b x b block; new CSR or NULL. */
struct spmv_csr *spmv_gen_blocks(const struct spmv_csr *P, int64_t b,
                                 uint64_t seed, struct spmv_error *err)
{
  struct spmv_csr *T;
  int64_t i, r, k, c, at, nnz;

  if (P == NULL) {
    spmv_error_set(err, SPMV_EINVAL, "blocks: no matrix");
    return NULL;
  }
  if (spmv_csr_validate(P, SPMV_CSR_ALLOW_NONFINITE, err) != 0)
    return NULL;
  if (b < 1 || P->rows > SPMV_GEN_MAX_DIM / b ||
      P->cols > SPMV_GEN_MAX_DIM / b ||
      __builtin_mul_overflow(P->nnz, b * b, &nnz)) {
    spmv_error_set(err, b < 1 ? SPMV_EINVAL : SPMV_ETOOBIG, "blocks: %"
                   PRId64 " x %" PRId64 " in blocks of %" PRId64 " (need b "
                   ">= 1 and 32-bit indices)", P->rows, P->cols, b);
    return NULL;
  }
  if ((T = spmv_gen_begin(P->rows * b, P->cols * b, err)) == NULL)
    return NULL;
  for (i = 0; i < P->rows; i++)
    for (r = 0; r < b; r++)
      T->row_ptr[i * b + r + 1] = (P->row_ptr[i + 1] - P->row_ptr[i]) * b;
  if (spmv_gen_commit(T, err) != 0 || spmv_gen_values(T, seed, err) != 0)
    return spmv_csr_free(T);
  for (i = 0; i < P->rows; i++)
    for (r = 0; r < b; r++) {
      at = T->row_ptr[i * b + r];
      for (k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++)
        for (c = 0; c < b; c++)
          T->col_idx[at++] = (int32_t)(P->col_idx[k] * b + c);
      spmv_gen_sort(T->col_idx + T->row_ptr[i * b + r],
                    T->val + T->row_ptr[i * b + r], at - T->row_ptr[i * b + r]);
    }
  return T;
}
