/* cusparse_layout.c: the cusparse format's layouts: the typed CSR of ALG1
 * and ALG2 (csr.c's), cuSPARSE's sliced ELL (alg=3) and BSR with its block
 * dimension chosen from the matrix (alg=4), and their CPU references. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_layout.h"

#define SLICE ((int64_t)SPMV_CUSPARSE_SLICE)

/* The most that cuSPARSE's 32-bit offsets and indices hold. */
#define INDEX_MAX ((int64_t)INT32_MAX)

/* Checks the fill of nval stored values and the bytes of both cuSPARSE
 * layouts' arrays against lim: noff 32-bit offsets, nidx 32-bit
 * columns, nval values; records the bytes (spmv_layout_reserve). */
static int reserve(struct spmv_layout *L, const struct spmv_limits *lim,
                   int64_t noff, int64_t nidx, int64_t nval,
                   struct spmv_error *err)
{
  size_t bytes = 0;
  int overflow, rc;

  if ((rc = spmv_layout_check_fill(L, lim, (double)nval, err)) != 0)
    return rc;
  overflow = spmv_bytes_add(&bytes, noff, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, nidx, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, nval, spmv_dtype_size(L->dtype)) != 0;
  return spmv_layout_reserve(L, lim, bytes, overflow, err);
}

/* Slice s's width: its longest row, and 1 where A has no entries at all
 * (spmv_formats.h: cuSPARSE is never given empty arrays). */
static int64_t csell_width(const struct spmv_csr *A, int64_t s)
{
  int64_t i, w = 0, end = (s + 1) * SLICE < A->rows ? (s + 1) * SLICE : A->rows;

  for (i = s * SLICE; i < end; i++)
    if (A->row_ptr[i + 1] - A->row_ptr[i] > w)
      w = A->row_ptr[i + 1] - A->row_ptr[i];
  return w > 0 || A->nnz > 0 ? w : 1;
}

/* The slots of A's cusparse alg=3 layout; see spmv_formats.h. */
int64_t spmv_csell_slots(const struct spmv_csr *A)
{
  int64_t s, n = 0, nslices = (A->rows + SLICE - 1) / SLICE;

  for (s = 0; s < nslices; s++)
    n += csell_width(A, s) * SLICE;
  return n;
}

/* cuSPARSE's sliced ELL of A: the slices' offsets, then (unless a shell)
 * every slot a pad and the rows' entries in their lanes. */
static int csell_init(struct spmv_layout *L, const struct spmv_csr *A,
                      const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_csell_layout *S = &L->u.csell;
  size_t vs = spmv_dtype_size(L->dtype);
  int64_t s, i, k, at = 0;
  int rc;

  S->nslices = (A->rows + SLICE - 1) / SLICE;
  S->slice_ptr = spmv_array_new(S->nslices + 1, sizeof(int32_t));
  if (S->slice_ptr == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "cusparse alg=3: out of memory "
                          "for %" PRId64 " slice offsets", S->nslices + 1);
  S->slice_ptr[0] = 0;
  for (s = 0; s < S->nslices; s++) {
    at += csell_width(A, s) * SLICE;
    if (at > INDEX_MAX)
      return spmv_error_set(err, SPMV_ETOOBIG, "cusparse alg=3: the sliced "
                            "ELL of %" PRId64 " x %" PRId64 " with %" PRId64
                            " entries passes %" PRId64 " slots at slice %"
                            PRId64 ", beyond cuSPARSE's 32-bit offsets",
                            A->rows, A->cols, A->nnz, INDEX_MAX, s);
    S->slice_ptr[s + 1] = (int32_t)at;
  }
  S->slots = at;
  if ((rc = reserve(L, lim, S->nslices + 1, at, at, err)) != 0)
    return rc;
  if (L->shell) /* the GPU fills the slots (spmv_dev_matrix_new_csr) */
    return 0;
  S->col = spmv_array_new(at, sizeof(int32_t));
  S->val = spmv_array_zero(at, vs);
  if (S->col == NULL || S->val == NULL)
    return spmv_layout_nomem(L, err);
  for (k = 0; k < at; k++)
    S->col[k] = -1;
  for (i = 0; i < A->rows; i++) {
    int64_t base = S->slice_ptr[i / SLICE] + i % SLICE, lo = A->row_ptr[i];

    for (k = 0; k < A->row_ptr[i + 1] - lo; k++) {
      S->col[base + k * SLICE] = A->col_idx[lo + k];
      spmv_val_set(S->val, L->dtype, base + k * SLICE, A->val[lo + k]);
    }
  }
  return 0;
}

/* Counts the b x b blocks that A's entries touch, block row after block
 * row (whose rows' entries lie together in the CSR), stopping once past
 * stop; mark[0 .. cols/b) (all -1 on entry) keeps the block row that last
 * touched each block column. */
static int64_t bsr_count(const struct spmv_csr *A, int64_t b, int64_t stop,
                         int32_t *mark)
{
  int64_t br, k, n = 0, brows = A->rows / b;

  for (br = 0; br < brows; br++)
    for (k = A->row_ptr[br * b]; k < A->row_ptr[(br + 1) * b]; k++) {
      int64_t bc = A->col_idx[k] / b;

      if (mark[bc] != br) {
        mark[bc] = (int32_t)br;
        if (++n > stop)
          return n;
      }
    }
  return n;
}

/* The block dimension of A's BSR; see spmv_formats.h.  Returns
 * SPMV_ENOMEM when its scratch cannot be had. */
int spmv_bsr_dim(const struct spmv_csr *A, int64_t *nblocks)
{
  int32_t *mark;
  int64_t b, n, stop, best_n = 0;
  double vals, best_vals = 0;
  int best = 0;

  if (nblocks != NULL)
    *nblocks = 0;
  if (A->nnz == 0 || A->rows < SPMV_BSR_MIN_DIM || A->cols < SPMV_BSR_MIN_DIM)
    return 0;
  mark = malloc((size_t)(A->cols / SPMV_BSR_MIN_DIM) * sizeof *mark);
  if (mark == NULL)
    return SPMV_ENOMEM;
  for (b = SPMV_BSR_MIN_DIM; b <= SPMV_BSR_MAX_DIM; b++) {
    if (A->rows % b != 0 || A->cols % b != 0)
      continue;
    stop = (int64_t)(SPMV_BSR_MAX_FILL * (double)A->nnz / (double)(b * b));
    memset(mark, 0xff, (size_t)(A->cols / b) * sizeof *mark);
    n = bsr_count(A, b, stop, mark);
    vals = (double)n * (double)(b * b);
    if (n <= stop && (best == 0 || vals <= best_vals)) {
      best = (int)b;
      best_vals = vals;
      best_n = n;
    }
  }
  free(mark);
  if (nblocks != NULL)
    *nblocks = best_n;
  return best;
}

static int cmp_int32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

  return (x > y) - (x < y);
}

/* B's block rows: each one's block columns, ascending, from A's entries
 * (mark as bsr_count's). */
static void bsr_blocks(struct spmv_bsr_layout *B, const struct spmv_csr *A,
                       int32_t *mark)
{
  int64_t br, k, pos = 0;

  memset(mark, 0xff, (size_t)B->bcols * sizeof *mark);
  for (br = 0; br < B->brows; br++) {
    B->row_ptr[br] = (int32_t)pos;
    for (k = A->row_ptr[br * B->b]; k < A->row_ptr[(br + 1) * B->b]; k++) {
      int32_t bc = A->col_idx[k] / B->b;

      if (mark[bc] != br) {
        mark[bc] = (int32_t)br;
        B->col[pos++] = bc;
      }
    }
    qsort(B->col + B->row_ptr[br], (size_t)(pos - B->row_ptr[br]),
          sizeof *B->col, cmp_int32);
  }
  B->row_ptr[B->brows] = (int32_t)pos;
}

/* cuSPARSE's BSR of A at the block dimension spmv_bsr_dim() picks: the
 * blocks, then (unless a shell) the entries summed into their slots. */
static int bsr_init(struct spmv_layout *L, const struct spmv_csr *A,
                    const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_bsr_layout *B = &L->u.bsr;
  size_t vs = spmv_dtype_size(L->dtype);
  int64_t nblocks, vals, br, i, k;
  int32_t *mark;
  int b = spmv_bsr_dim(A, &nblocks), rc;

  if (b < 0)
    return spmv_error_set(err, SPMV_ENOMEM, "cusparse alg=4: out of memory "
                          "weighing block dimensions");
  if (b == 0)
    return spmv_error_set(err, SPMV_ETOOBIG, "cusparse alg=4: no block "
                          "dimension from %d to %d divides %" PRId64 " x %"
                          PRId64 " into blocks that hold its %" PRId64
                          " entries in at most %.1f values each (no block "
                          "structure)", SPMV_BSR_MIN_DIM, SPMV_BSR_MAX_DIM,
                          A->rows, A->cols, A->nnz, SPMV_BSR_MAX_FILL);
  B->b = b;
  B->brows = A->rows / b;
  B->bcols = A->cols / b;
  B->nblocks = nblocks;
  vals = nblocks * b * b;
  if (vals > INDEX_MAX)
    return spmv_error_set(err, SPMV_ETOOBIG, "cusparse alg=4: %" PRId64
                          " blocks of %d x %d hold %" PRId64 " values, beyond "
                          "cuSPARSE's 32-bit indices", nblocks, b, b, vals);
  if ((rc = reserve(L, lim, B->brows + 1, nblocks, vals, err)) != 0)
    return rc;
  B->row_ptr = spmv_array_new(B->brows + 1, sizeof(int32_t));
  B->col = spmv_array_new(nblocks, sizeof(int32_t));
  mark = spmv_array_new(B->bcols, sizeof(int32_t));
  if (B->row_ptr == NULL || B->col == NULL || mark == NULL) {
    free(mark);
    return spmv_layout_nomem(L, err);
  }
  bsr_blocks(B, A, mark);
  /* the GPU sums the entries in (spmv_dev_matrix_new_csr) */
  if (!L->shell && (B->val = spmv_array_zero(vals, vs)) == NULL) {
    free(mark);
    return spmv_layout_nomem(L, err);
  }
  for (br = 0; !L->shell && br < B->brows; br++) {
    /* mark now holds each of the block row's block columns' block. */
    for (k = B->row_ptr[br]; k < B->row_ptr[br + 1]; k++)
      mark[B->col[k]] = (int32_t)k;
    for (i = br * b; i < (br + 1) * b; i++)
      for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
        int32_t c = A->col_idx[k];

        spmv_val_add(B->val, L->dtype,
                     ((int64_t)mark[c / b] * b + i % b) * b + c % b, A->val[k]);
      }
  }
  free(mark);
  return 0;
}

/* Builds the layout of a cusparse configuration: its algorithm's. */
int spmv_cusparse_layout_init(struct spmv_layout *L, const struct spmv_csr *A,
                              const struct spmv_limits *lim,
                              struct spmv_error *err)
{
  switch (L->cfg.param) {
  case SPMV_CUSPARSE_SELL:
    return csell_init(L, A, lim, err);
  case SPMV_CUSPARSE_BSR:
    return bsr_init(L, A, lim, err);
  default:
    return spmv_csr_layout_init(L, A, lim, err);
  }
}

/* Frees a cusparse layout's arrays. */
void spmv_cusparse_layout_fini(struct spmv_layout *L)
{
  switch (L->cfg.param) {
  case SPMV_CUSPARSE_SELL:
    free(L->u.csell.slice_ptr);
    free(L->u.csell.col);
    free(L->u.csell.val);
    break;
  case SPMV_CUSPARSE_BSR:
    free(L->u.bsr.row_ptr);
    free(L->u.bsr.col);
    free(L->u.bsr.val);
    break;
  default:
    spmv_csr_layout_fini(L);
  }
}

/* A row at a time over its slots in slice order, skipping the pads. */
#define CSELL_ROWS(T)                                                        \
  static void csell_rows_##T(const struct spmv_csell_layout *S, int64_t rows,\
                             T alpha, const T *x, T beta, T *y)              \
  {                                                                          \
    const T *val = S->val;                                                   \
    int64_t i, k;                                                            \
                                                                             \
    for (i = 0; i < rows; i++) {                                             \
      int64_t s = i / SLICE, at = S->slice_ptr[s] + i % SLICE;               \
      int64_t w = (S->slice_ptr[s + 1] - S->slice_ptr[s]) / SLICE;           \
      T sum = 0;                                                             \
                                                                             \
      for (k = 0; k < w; k++, at += SLICE)                                   \
        if (S->col[at] >= 0)                                                 \
          sum += val[at] * x[S->col[at]];                                    \
      SPMV_FINISH(y, i, alpha, sum, beta);                                   \
    }                                                                        \
  }
CSELL_ROWS(float)
CSELL_ROWS(double)

/* A row at a time over its block row's blocks, each block's row in
 * column order, zeros included. */
#define BSR_ROWS(T)                                                          \
  static void bsr_rows_##T(const struct spmv_bsr_layout *B, T alpha,         \
                           const T *x, T beta, T *y)                         \
  {                                                                          \
    const int64_t b = B->b;                                                  \
    int64_t br, r, k, c;                                                     \
                                                                             \
    for (br = 0; br < B->brows; br++) {                                      \
      for (r = 0; r < b; r++) {                                              \
        T sum = 0;                                                           \
                                                                             \
        for (k = B->row_ptr[br]; k < B->row_ptr[br + 1]; k++) {              \
          const T *v = (const T *)B->val + (k * b + r) * b;                  \
          const T *xb = x + (int64_t)B->col[k] * b;                          \
                                                                             \
          for (c = 0; c < b; c++)                                            \
            sum += v[c] * xb[c];                                             \
        }                                                                    \
        SPMV_FINISH(y, br * b + r, alpha, sum, beta);                        \
      }                                                                      \
    }                                                                        \
  }
BSR_ROWS(float)
BSR_ROWS(double)

/* The CPU reference over a cusparse layout. */
void spmv_cusparse_layout_spmv(const struct spmv_layout *L, double alpha,
                               const void *x, double beta, void *y)
{
  switch (L->cfg.param) {
  case SPMV_CUSPARSE_SELL:
    SPMV_DISPATCH(L->dtype, csell_rows, alpha, x, beta, y, &L->u.csell,
                  L->rows);
    break;
  case SPMV_CUSPARSE_BSR:
    SPMV_DISPATCH(L->dtype, bsr_rows, alpha, x, beta, y, &L->u.bsr);
    break;
  default:
    spmv_csr_layout_spmv(L, alpha, x, beta, y);
  }
}
