/* sell.c: sliced ELLPACK, SELL-C-sigma (Kreutzer et al.), with 32-bit
 * columns (sell) or 16-bit offsets from each row's smallest column (sell16). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_layout.h"
#include "spmv_par.h"

/* Defaults when the configuration leaves them 0. */
#define SELL_C 32
#define SELL_SIGMA 1
#define SELL_MAX_C 1024
/* Windows up to this many rows are sorted through a buffer on the stack. */
#define SELL_MAX_WINDOW 4096

/* A row and its length, for sorting within a window. */
struct sell_row {
  int64_t len;
  int32_t row;
};

/* Orders by decreasing length, then by increasing row (a stable order). */
static int sell_cmp(const void *a, const void *b)
{
  const struct sell_row *p = a, *q = b;

  if (p->len != q->len)
    return p->len > q->len ? -1 : 1;
  return (p->row > q->row) - (p->row < q->row);
}

/* Lengths within a window that a counting sort takes (its counts on the
 * stack); a wider spread is sorted by comparisons. */
#define SELL_COUNT_SPREAD 1024

/*
 * Sorts one window of n rows, given in increasing row order, by
 * decreasing length, equal lengths in row order (sell_cmp's order): a
 * counting sort, stable, where the lengths spread over at most
 * SELL_COUNT_SPREAD values, as they do on most windows; else qsort.
 */
static void sort_window(struct sell_row *o, int64_t n)
{
  int64_t lo = o[0].len, hi = o[0].len, i;

  for (i = 1; i < n; i++) {
    lo = o[i].len < lo ? o[i].len : lo;
    hi = o[i].len > hi ? o[i].len : hi;
  }
  if (lo == hi)
    return;
  if (hi - lo >= SELL_COUNT_SPREAD || n > SELL_MAX_WINDOW) {
    qsort(o, (size_t)n, sizeof *o, sell_cmp);
    return;
  }
  int64_t at[SELL_COUNT_SPREAD + 1] = {0};
  struct sell_row tmp[SELL_MAX_WINDOW];
  /* at[d]: where rows of length hi - d start, the longest first. */
  for (i = 0; i < n; i++)
    at[hi - o[i].len + 1]++;
  for (i = 1; i <= hi - lo; i++)
    at[i] += at[i - 1];
  for (i = 0; i < n; i++)
    tmp[at[hi - o[i].len]++] = o[i];
  memcpy(o, tmp, (size_t)n * sizeof *o);
}

/* The rows of A and their lengths in windows of sigma, each window
 * sorted on its own (sort_windows: windows [w0, w1) of a pass split over
 * threads; sigma 1 leaves the rows in order). */
struct sort_ctx {
  struct sell_row *order;
  const struct spmv_csr *A;
  int64_t sigma;
};

static void sort_windows(void *ctx, int t, int64_t w0, int64_t w1)
{
  const struct sort_ctx *c = ctx;
  int64_t end = w1 * c->sigma < c->A->rows ? w1 * c->sigma : c->A->rows;

  (void)t;
  /* Each part writes its own rows first: the array's pages are then
   * faulted in by every thread, not by one. */
  for (int64_t i = w0 * c->sigma; i < end; i++) {
    c->order[i].len = c->A->row_ptr[i + 1] - c->A->row_ptr[i];
    c->order[i].row = (int32_t)i;
  }
  if (c->sigma > 1)
    for (int64_t w = w0 * c->sigma; w < end; w += c->sigma)
      sort_window(c->order + w, end - w < c->sigma ? end - w : c->sigma);
}

/* Reads and checks C and sigma from cfg into S. */
static int sell_params(struct spmv_sell_layout *S,
                       const struct spmv_config *cfg, struct spmv_error *err)
{
  S->c = cfg->param != 0 ? cfg->param : SELL_C;
  S->sigma = cfg->param2 != 0 ? cfg->param2 : SELL_SIGMA;
  if (S->c < 1 || S->c > SELL_MAX_C || (S->c & (S->c - 1)) != 0)
    return spmv_error_set(err, SPMV_EINVAL, "%s C=%d is not a power of two "
                          "in [1, %d]", spmv_format_name(cfg->format), S->c,
                          SELL_MAX_C);
  if (S->sigma < 1 || (S->sigma != 1 && S->sigma % S->c != 0))
    return spmv_error_set(err, SPMV_EINVAL, "%s sigma=%d is neither 1 nor "
                          "a positive multiple of C=%d",
                          spmv_format_name(cfg->format), S->sigma, S->c);
  return 0;
}

/* Sorts rows by decreasing length within windows of sigma rows and fills
 * perm, slice_width and slice_ptr; returns 0, 1 when the slots overflow
 * int64, or SPMV_ENOMEM. */
static int sell_order(struct spmv_sell_layout *S, const struct spmv_csr *A)
{
  struct sell_row *order = spmv_array_new(A->rows, sizeof *order);
  int64_t i, s, l;
  int rc = 0;

  if (order == NULL)
    return SPMV_ENOMEM;
  struct sort_ctx c = {order, A, S->sigma};
  spmv_par_range((A->rows + S->sigma - 1) / S->sigma, spmv_par_threads(A->nnz),
                 sort_windows, &c);
  S->slice_ptr[0] = 0;
  for (s = 0; s < S->nslices; s++) {
    int64_t width = 0, slots;

    for (l = 0; l < S->c; l++) {
      i = s * S->c + l;
      S->perm[i] = i < A->rows ? order[i].row : -1;
      if (i < A->rows && order[i].len > width)
        width = order[i].len;
    }
    S->slice_width[s] = (int32_t)width;
    if (spmv_mul64(width, S->c, &slots) != 0 ||
        S->slice_ptr[s] > INT64_MAX - slots) {
      rc = 1;
      break;
    }
    S->slice_ptr[s + 1] = S->slice_ptr[s] + slots;
  }
  free(order);
  return rc;
}

/* Copies the rows into their slices: entry k of lane l of slice s at
 * slice_ptr[s] + k * C + l, padding (column -1, value 0) elsewhere.  For
 * sell16 the column is stored as its offset from the lane's base
 * (sell_bases, made before) and padding as SPMV_SELL16_PAD. */
static void sell_fill(struct spmv_sell_layout *S, const struct spmv_csr *A,
                      enum spmv_dtype dt)
{
  int64_t s, l, k;

  for (k = 0; k < S->slice_ptr[S->nslices]; k++) {
    if (S->col16 != NULL)
      S->col16[k] = SPMV_SELL16_PAD;
    else
      S->col[k] = -1;
  }
  for (s = 0; s < S->nslices; s++) {
    for (l = 0; l < S->c; l++) {
      int32_t r = S->perm[s * S->c + l];
      int32_t base = S->base != NULL ? S->base[s * S->c + l] : 0;
      int64_t lo, at;

      if (r < 0)
        continue;
      lo = A->row_ptr[r];
      for (k = 0; k < A->row_ptr[r + 1] - lo; k++) {
        at = S->slice_ptr[s] + k * S->c + l;
        if (S->col16 != NULL)
          S->col16[at] = (uint16_t)(A->col_idx[lo + k] - base);
        else
          S->col[at] = A->col_idx[lo + k];
        spmv_val_set(S->val, dt, at, A->val[lo + k]);
      }
    }
  }
}

/* The smallest column of nonempty row r of A, and its largest in *hi when
 * hi is not NULL (columns need not be sorted). */
int64_t spmv_row_col_range(const struct spmv_csr *A, int64_t r, int64_t *hi)
{
  int64_t k, a, b;

  a = b = A->col_idx[A->row_ptr[r]];
  for (k = A->row_ptr[r] + 1; k < A->row_ptr[r + 1]; k++) {
    if (A->col_idx[k] < a)
      a = A->col_idx[k];
    if (A->col_idx[k] > b)
      b = A->col_idx[k];
  }
  if (hi != NULL)
    *hi = b;
  return a;
}

/* The widest column span of rows [r0, r1) of A, as widest_row says it. */
struct span {
  int64_t span, row, lo, hi;
};

struct span_ctx {
  const struct spmv_csr *A;
  int32_t *base;
  struct span part[SPMV_PAR_MAX];
};

static void span_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct span_ctx *c = ctx;
  struct span w = {0, r0, 0, 0};
  int64_t i, a, b;

  for (i = r0; i < r1; i++) {
    if (c->A->row_ptr[i + 1] == c->A->row_ptr[i]) {
      if (c->base != NULL)
        c->base[i] = 0;
      continue;
    }
    a = spmv_row_col_range(c->A, i, &b);
    if (c->base != NULL)
      c->base[i] = (int32_t)a;
    if (b - a > w.span)
      w = (struct span){b - a, i, a, b};
  }
  c->part[t] = w;
}

/* The widest column span of A's rows: the span, with its row (the first
 * of that span) and smallest and largest column in *row, *lo, *hi; each
 * row's smallest column (0 for an empty row) in base[0 .. rows) when base
 * is not NULL.  One pass over the columns, split over threads. */
static int64_t widest_row(const struct spmv_csr *A, int64_t *row,
                          int64_t *lo, int64_t *hi, int32_t *base)
{
  struct span_ctx c = {A, base, {{0, 0, 0, 0}}};
  struct span w = {0, 0, 0, 0};
  int n = spmv_par_threads(A->nnz);  /* at most SPMV_PAR_MAX */

  spmv_par_rows(A, n, span_rows, &c);
  /* Parts in row order: a later part wins only with a wider span. */
  for (int t = 0; t < n; t++)
    if (c.part[t].span > w.span)
      w = c.part[t];
  *row = w.span > 0 ? w.row : 0;
  *lo = w.lo;
  *hi = w.hi;
  return w.span;
}

int64_t spmv_csr_max_row_span(const struct spmv_csr *A)
{
  int64_t row, lo, hi;

  return widest_row(A, &row, &lo, &hi, NULL);
}

/* sell16, csr16: refuses a matrix with a row whose columns span more than a
 * 16-bit offset holds, naming the widest. */
int spmv_span16_check(const struct spmv_csr *A, const char *fmt,
                      int32_t *base, struct spmv_error *err)
{
  int64_t row, lo, hi;

  if (widest_row(A, &row, &lo, &hi, base) <= SPMV_SELL16_MAX_SPAN)
    return 0;
  return spmv_error_set(err, SPMV_ETOOBIG,
                        "%s: row %" PRId64 " spans %" PRId64 " columns (%"
                        PRId64 " to %" PRId64 "), over the %d a 16-bit "
                        "offset holds", fmt, row, hi - lo + 1, lo, hi,
                        SPMV_SELL16_MAX_SPAN + 1);
}

/* sell16: refuses A where a row spans over 16-bit offsets, else makes the
 * lane bases: each lane's row's smallest column, 0 for an empty row or
 * lane (the rows' bases from the span check's own pass over the
 * columns). */
static int sell_bases(struct spmv_sell_layout *S, const struct spmv_csr *A,
                      const struct spmv_layout *L, struct spmv_error *err)
{
  int64_t i, lanes = S->nslices * S->c;
  int32_t *row_base = spmv_array_new(A->rows, sizeof(int32_t));
  int rc;

  S->base = spmv_array_new(lanes, sizeof(int32_t));
  if (S->base == NULL || row_base == NULL) {
    free(row_base);
    return spmv_layout_nomem(L, err);
  }
  if ((rc = spmv_span16_check(A, "sell16", row_base, err)) == 0)
    for (i = 0; i < lanes; i++)
      S->base[i] = S->perm[i] >= 0 ? row_base[S->perm[i]] : 0;
  free(row_base);
  return rc;
}

/* Builds a SELL-C-sigma layout (sell16 when the format says so). */
int spmv_sell_init(struct spmv_layout *L, const struct spmv_csr *A,
                   const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_sell_layout *S = &L->u.sell;
  int narrow = L->cfg.format == SPMV_FMT_SELL16;
  size_t idx = narrow ? sizeof(uint16_t) : sizeof(int32_t);
  int64_t lanes;
  size_t bytes = 0;
  int overflow, rc;

  if ((rc = sell_params(S, &L->cfg, err)) != 0)
    return rc;
  S->nslices = (A->rows + S->c - 1) / S->c;
  lanes = S->nslices * S->c;
  S->perm = spmv_array_new(lanes, sizeof(int32_t));
  S->slice_ptr = spmv_array_new(S->nslices + 1, sizeof(int64_t));
  S->slice_width = spmv_array_new(S->nslices, sizeof(int32_t));
  if (S->perm == NULL || S->slice_ptr == NULL || S->slice_width == NULL ||
      (rc = sell_order(S, A)) == SPMV_ENOMEM)
    return spmv_layout_nomem(L, err);
  overflow = rc != 0 ||
             spmv_bytes_add(&bytes, lanes, sizeof(int32_t)) != 0 ||
             spmv_bytes_add(&bytes, S->nslices + 1, sizeof(int64_t)) != 0 ||
             spmv_bytes_add(&bytes, S->nslices, sizeof(int32_t)) != 0 ||
             (narrow && spmv_bytes_add(&bytes, lanes, sizeof(int32_t)) != 0) ||
             spmv_bytes_add(&bytes, S->slice_ptr[S->nslices], idx) != 0 ||
             spmv_bytes_add(&bytes, S->slice_ptr[S->nslices],
                            spmv_dtype_size(L->dtype)) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  if (narrow && (rc = sell_bases(S, A, L, err)) != 0)
    return rc;
  if (L->shell) /* the GPU fills the slices (spmv_dev_matrix_new_csr) */
    return 0;
  if (narrow)
    S->col16 = spmv_array_new(S->slice_ptr[S->nslices], sizeof(uint16_t));
  else
    S->col = spmv_array_new(S->slice_ptr[S->nslices], sizeof(int32_t));
  S->val = spmv_array_zero(S->slice_ptr[S->nslices],
                           spmv_dtype_size(L->dtype));
  if ((narrow ? S->col16 == NULL : S->col == NULL) || S->val == NULL)
    return spmv_layout_nomem(L, err);
  sell_fill(S, A, L->dtype);
  return 0;
}

/* Frees a SELL layout's arrays. */
void spmv_sell_fini(struct spmv_layout *L)
{
  struct spmv_sell_layout *S = &L->u.sell;

  free(S->perm);
  free(S->slice_ptr);
  free(S->slice_width);
  free(S->col);
  free(S->val);
  free(S->base);
  free(S->col16);
}

/* One thread per lane: walks its slice's columns up to the slice width,
 * skipping padding, and writes its original row. */
#define SELL_LANES(T)                                                        \
  static void sell_lanes_##T(const struct spmv_sell_layout *S, T alpha,      \
                             const T *x, T beta, T *y)                       \
  {                                                                          \
    const T *val = S->val;                                                   \
    int64_t s, l, k;                                                         \
                                                                             \
    for (s = 0; s < S->nslices; s++) {                                       \
      for (l = 0; l < S->c; l++) {                                           \
        int32_t r = S->perm[s * S->c + l];                                   \
        T sum = 0;                                                           \
                                                                             \
        if (r < 0)                                                           \
          continue;                                                          \
        for (k = 0; k < S->slice_width[s]; k++) {                            \
          int64_t at = S->slice_ptr[s] + k * S->c + l;                       \
                                                                             \
          if (S->col16 != NULL) {                                            \
            if (S->col16[at] != SPMV_SELL16_PAD)                             \
              sum += val[at] * x[S->base[s * S->c + l] + S->col16[at]];      \
          } else if (S->col[at] >= 0) {                                      \
            sum += val[at] * x[S->col[at]];                                  \
          }                                                                  \
        }                                                                    \
        SPMV_FINISH(y, r, alpha, sum, beta);                                 \
      }                                                                      \
    }                                                                        \
  }
SELL_LANES(float)
SELL_LANES(double)

/* The CPU reference over the SELL layout. */
void spmv_sell_spmv(const struct spmv_layout *L, double alpha, const void *x,
                    double beta, void *y)
{
  SPMV_DISPATCH(L->dtype, sell_lanes, alpha, x, beta, y, &L->u.sell);
}
