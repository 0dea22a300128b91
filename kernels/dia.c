/* dia.c: stored diagonals (CDS), one row of each diagonal per thread. */
#include <inttypes.h>
#include <stdlib.h>

#include "spmv_layout.h"
#include "spmv_par.h"

/* Bytes the threads' bitmaps may take together beyond the first. */
#define DIA_BITMAPS_MAX ((size_t)256 << 20)

/* Part t's bitmap of the diagonals its rows [r0, r1) occupy. */
struct bitmap_ctx {
  const struct spmv_csr *A;
  uint64_t *bits[SPMV_PAR_MAX];
};

static void mark_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct bitmap_ctx *c = ctx;
  const struct spmv_csr *A = c->A;
  uint64_t *bits = c->bits[t];

  for (int64_t i = r0; i < r1; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      int64_t b = A->col_idx[k] - i + A->rows - 1;
      bits[b / 64] |= (uint64_t)1 << (b % 64);
    }
}

/* Marks the occupied diagonals of A in a bitmap of 64-bit words indexed
 * by col - row + rows - 1; returns the bitmap (new) or NULL.  The rows
 * are split over threads, each marking a bitmap of its own (as many as
 * DIA_BITMAPS_MAX holds), then OR-ed into the first. */
static uint64_t *dia_bitmap(const struct spmv_csr *A, int64_t *ndiags)
{
  struct bitmap_ctx c = {A, {NULL}};
  int64_t span = A->rows + A->cols, nw = span / 64 + 1, w;
  size_t bytes = (size_t)nw * sizeof(uint64_t);
  int n = spmv_par_threads(A->nnz), t;  /* at most SPMV_PAR_MAX */

  if ((size_t)(n - 1) * bytes > DIA_BITMAPS_MAX)
    n = 1 + (int)(DIA_BITMAPS_MAX / bytes);
  for (t = 0; t < n; t++)
    if ((c.bits[t] = calloc((size_t)nw, sizeof(uint64_t))) == NULL)
      break;
  if (t == 0)
    return NULL;
  n = t;  /* fewer threads where memory ran short */
  spmv_par_rows(A, n, mark_rows, &c);
  *ndiags = 0;
  for (w = 0; w < nw; w++) {
    for (t = 1; t < n; t++)
      c.bits[0][w] |= c.bits[t][w];
    *ndiags += __builtin_popcountll(c.bits[0][w]);
  }
  for (t = 1; t < n; t++)
    free(c.bits[t]);
  return c.bits[0];
}

/* rank[w]: the occupied diagonals in the words before w, so that a
 * diagonal's slot is found in constant time (dia_slot) rather than by a
 * search per entry; new, or NULL. */
static int64_t *dia_rank(const uint64_t *bits, int64_t span)
{
  int64_t w, nw = span / 64 + 1;
  int64_t *rank = malloc((size_t)nw * sizeof *rank);

  if (rank == NULL)
    return NULL;
  rank[0] = 0;
  for (w = 1; w < nw; w++)
    rank[w] = rank[w - 1] + __builtin_popcountll(bits[w - 1]);
  return rank;
}

/* The slot of occupied diagonal b among the ascending offsets. */
static inline int64_t dia_slot(const uint64_t *bits, const int64_t *rank,
                               int64_t b)
{
  uint64_t below = ((uint64_t)1 << (b % 64)) - 1;

  return rank[b / 64] + __builtin_popcountll(bits[b / 64] & below);
}

/* Checks the diagonal count, fill and bytes of a DIA of ndiags diagonals. */
static int dia_check(struct spmv_layout *L, const struct spmv_limits *lim,
                     int64_t ndiags, struct spmv_error *err)
{
  int64_t slots = 0;
  size_t bytes = 0;
  int overflow, rc;

  if (lim != NULL && lim->max_diags > 0 && ndiags > lim->max_diags)
    return spmv_error_set(err, SPMV_ETOOBIG, "dia needs %" PRId64
                          " diagonals, limit %" PRId64, ndiags,
                          lim->max_diags);
  if ((rc = spmv_layout_check_fill(L, lim, (double)ndiags * (double)L->rows,
                                   err)) != 0)
    return rc;
  overflow = spmv_mul64(ndiags, spmv_pitch(L->rows), &slots) != 0 ||
             spmv_bytes_add(&bytes, ndiags, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, slots, spmv_dtype_size(L->dtype)) != 0;
  return spmv_layout_reserve(L, lim, bytes, overflow, err);
}

/* Builds a DIA layout of the occupied diagonals; duplicates are summed
 * (spmv_val_add). */
int spmv_dia_init(struct spmv_layout *L, const struct spmv_csr *A,
                  const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_dia_layout *D = &L->u.dia;
  uint64_t *bits;
  int64_t *rank = NULL, b, d = 0, i, k, span = A->rows + A->cols;
  int rc;

  bits = dia_bitmap(A, &D->ndiags);
  if (bits == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for the diagonal "
                          "bitmap of %" PRId64 " offsets", span);
  if ((rc = dia_check(L, lim, D->ndiags, err)) != 0)
    goto out;
  D->pitch = spmv_pitch(A->rows);
  D->offsets = spmv_array_new(D->ndiags, sizeof(int32_t));
  if (D->offsets == NULL) {
    rc = spmv_layout_nomem(L, err);
    goto out;
  }
  /* The set bits, word by word: most words of a banded matrix are 0. */
  for (b = 0; b < span; b += 64)
    for (uint64_t m = bits[b / 64]; m != 0; m &= m - 1)
      D->offsets[d++] = (int32_t)(b + __builtin_ctzll(m) - (A->rows - 1));
  if (L->shell) /* the GPU places the values (spmv_dev_matrix_new_csr) */
    goto out;
  D->val = spmv_array_zero(D->ndiags * D->pitch, spmv_dtype_size(L->dtype));
  rank = dia_rank(bits, span);
  if (D->val == NULL || rank == NULL) {
    rc = spmv_layout_nomem(L, err);
    goto out;
  }
  for (i = 0; i < A->rows; i++) {
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      int64_t at = dia_slot(bits, rank, A->col_idx[k] - i + A->rows - 1) *
                       D->pitch + i;

      spmv_val_add(D->val, L->dtype, at, A->val[k]);
    }
  }
out:
  free(rank);
  free(bits);
  return rc;
}

/* Frees a DIA layout's arrays. */
void spmv_dia_fini(struct spmv_layout *L)
{
  free(L->u.dia.offsets);
  free(L->u.dia.val);
}

/* One thread per row: each diagonal's value times x at column row + offset,
 * positions outside the matrix skipped. */
#define DIA_ROWS(T)                                                          \
  static void dia_rows_##T(const struct spmv_dia_layout *D, int64_t rows,    \
                           int64_t cols, T alpha, const T *x, T beta, T *y)  \
  {                                                                          \
    const T *val = D->val;                                                   \
    int64_t i, d;                                                            \
                                                                             \
    for (i = 0; i < rows; i++) {                                             \
      T sum = 0;                                                             \
                                                                             \
      for (d = 0; d < D->ndiags; d++) {                                      \
        int64_t j = i + D->offsets[d];                                       \
                                                                             \
        if (j >= 0 && j < cols)                                              \
          sum += val[d * D->pitch + i] * x[j];                               \
      }                                                                      \
      SPMV_FINISH(y, i, alpha, sum, beta);                                   \
    }                                                                        \
  }
DIA_ROWS(float)
DIA_ROWS(double)

/* The CPU reference over the DIA layout. */
void spmv_dia_spmv(const struct spmv_layout *L, double alpha, const void *x,
                   double beta, void *y)
{
  SPMV_DISPATCH(L->dtype, dia_rows, alpha, x, beta, y, &L->u.dia, L->rows,
                L->cols);
}
