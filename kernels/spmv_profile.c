/* spmv_profile.c: row-length statistics of a CSR, as the tuner sees them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_par.h"
#include "spmv_profile.h"

/* Entries of a row closer than this many columns count as local. */
#define LOCALITY_SPAN 32

/* Returns the histogram bin of a row of length len. */
static int hist_bin(int64_t len)
{
  int b = 0;

  while (len > 0 && b < SPMV_PROFILE_BINS - 1) {
    len >>= 1;
    b++;
  }
  return b;
}

/*
 * HYB's K: the largest K such that at least rows/3 rows have K or more
 * entries.  The histogram bounds K to one power-of-two bin, and a binary
 * search over that bin, one pass over row_ptr per step, finds it exactly
 * in O(1) memory.
 */
static int64_t hyb_k(const struct spmv_csr *A, const struct spmv_profile *p,
                     int nthreads)
{
  int64_t need = (A->rows + 2) / 3; /* ceil(rows / 3) */
  int64_t above = 0, lo, hi, mid;
  int b;

  if (A->rows == 0)
    return 0;
  for (b = SPMV_PROFILE_BINS - 1; b > 0; b--) {
    above += p->hist[b];
    if (above >= need)
      break;
  }
  if (b == 0)
    return 0;
  /* K lies in bin b: [2^(b-1), 2^b - 1], and never past the longest row. */
  lo = (int64_t)1 << (b - 1);
  hi = b == SPMV_PROFILE_BINS - 1 ? p->rl_max : ((int64_t)1 << b) - 1;
  if (hi > p->rl_max)
    hi = p->rl_max;
  while (lo < hi) {
    mid = lo + (hi - lo + 1) / 2;
    if (spmv_par_rows_at_least(A, mid, nthreads) >= need)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* The pass over row_ptr in blocks of rows, each with its own extremes,
 * histogram and sum of squared lengths: integers, so that the whole is the
 * same for any number of threads. */
struct row_pass {
  const struct spmv_csr *A;
  int64_t min[SPMV_PAR_MAX], max[SPMV_PAR_MAX];
  int64_t hist[SPMV_PAR_MAX][SPMV_PROFILE_BINS];
  unsigned __int128 sq[SPMV_PAR_MAX];
};

static void row_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct row_pass *c = ctx;
  const int64_t *rp = c->A->row_ptr;
  int64_t lo = INT64_MAX, hi = 0, *hist = c->hist[t];
  unsigned __int128 sq = 0;

  for (int64_t i = r0; i < r1; i++) {
    int64_t len = rp[i + 1] - rp[i];

    lo = len < lo ? len : lo;
    hi = len > hi ? len : hi;
    hist[hist_bin(len)]++;
    sq += (unsigned __int128)((uint64_t)len * (uint64_t)len);
  }
  c->min[t] = lo;
  c->max[t] = hi;
  c->sq[t] = sq;
}

/* Extremes, mean, sigma, histogram and empty rows, over nthreads.  The
 * sigma from the exact rows * sum(len^2) - nnz^2 (at most 2^125 for rows
 * under 2^31): the same bits for any split. */
static void row_stats(const struct spmv_csr *A, struct spmv_profile *p,
                      int nthreads)
{
  struct row_pass c = {.A = A};
  unsigned __int128 sq = 0, num;

  p->rl_mean = A->rows > 0 ? (double)A->nnz / (double)A->rows : 0.0;
  p->rl_min = A->rows > 0 ? INT64_MAX : 0;
  p->rl_max = 0;
  if (A->rows > 0) {
    spmv_par_range(A->rows, nthreads, row_block, &c);
    for (int t = 0; t < nthreads; t++) {
      p->rl_min = c.min[t] < p->rl_min ? c.min[t] : p->rl_min;
      p->rl_max = c.max[t] > p->rl_max ? c.max[t] : p->rl_max;
      for (int b = 0; b < SPMV_PROFILE_BINS; b++)
        p->hist[b] += c.hist[t][b];
      sq += c.sq[t];
    }
    num = (unsigned __int128)A->rows * sq -
          (unsigned __int128)A->nnz * (unsigned __int128)A->nnz;
    p->rl_sigma = sqrt((double)num) / (double)A->rows;
  }
  p->empty_rows = p->hist[0];
  p->rl_cv = p->rl_mean > 0.0 ? p->rl_sigma / p->rl_mean : 0.0;
}

/* The pass over col_idx in blocks of rows: each marks its diagonals in a
 * bitmap of its own (priv, words words each) or, where those would take
 * more memory than the matrix's columns, in the shared one, and counts its
 * column pairs. */
struct col_pass {
  const struct spmv_csr *A;
  uint64_t *seen;       /* shared, atomically; NULL with priv */
  uint64_t *priv;       /* nthreads bitmaps of words words, or NULL */
  int64_t words;
  int64_t pairs[SPMV_PAR_MAX], local[SPMV_PAR_MAX];
};

/* Rows r0..r1 of the pass into own, or the shared bitmap when own is
 * NULL; inlined into each case so that neither loop tests which. */
static inline __attribute__((always_inline)) void
col_rows(struct col_pass *c, uint64_t *own, int64_t r0, int64_t r1, int t)
{
  const struct spmv_csr *A = c->A;
  int64_t i, k, off, gap, pairs = 0, local = 0;

  for (i = r0; i < r1; i++) {
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      off = (int64_t)A->col_idx[k] - i + (A->rows - 1);
      uint64_t bit = (uint64_t)1 << (off % 64);
      /* The shared bitmap is read first: the blocks of a banded matrix
       * share a few words, and writing them only once keeps those cache
       * lines shared.  A scattered one's blocks share every word, and
       * mostly miss it: each block marks its own, with no test and no
       * atomic. */
      if (own)
        own[off / 64] |= bit;
      else if (!(__atomic_load_n(&c->seen[off / 64], __ATOMIC_RELAXED) & bit))
        __atomic_fetch_or(&c->seen[off / 64], bit, __ATOMIC_RELAXED);
      if (k > A->row_ptr[i]) {
        gap = (int64_t)A->col_idx[k] - A->col_idx[k - 1];
        pairs++;
        local += gap < LOCALITY_SPAN && gap > -LOCALITY_SPAN;
      }
    }
  }
  c->pairs[t] = pairs;
  c->local[t] = local;
}

static void col_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct col_pass *c = ctx;

  if (c->priv)
    col_rows(c, c->priv + (size_t)t * (size_t)c->words, r0, r1, t);
  else
    col_rows(c, NULL, r0, r1, t);
}

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

  return (x > y) - (x < y);
}

/* Whether A's entries scatter over the diagonals' bitmap, as a random
 * pattern's do (a banded one's fall in a few words): of a sample of up to
 * 64 entries after each of 64 evenly spaced rows, more than 256 words. */
static int scattered(const struct spmv_csr *A)
{
  int64_t w[64 * 64], n = 0, distinct = 0;

  for (int g = 0; g < 64 && A->rows > 0; g++) {
    int64_t taken = 0;
    for (int64_t i = A->rows * g / 64; i < A->rows && taken < 64; i++)
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1] && taken < 64;
           k++, taken++)
        w[n++] = ((int64_t)A->col_idx[k] - i + (A->rows - 1)) / 64;
  }
  qsort(w, (size_t)n, sizeof *w, cmp_i64);
  for (int64_t k = 0; k < n; k++)
    distinct += k == 0 || w[k] != w[k - 1];
  return distinct > 256;
}

/*
 * The pass over col_idx: distinct diagonals (col - row, a bitmap over the
 * rows + cols - 1 possible offsets) and column locality, in nthreads
 * blocks of rows (spmv_par_rows).  Every count is an integer and the
 * bitmaps' union is the same, so the profile is the same bits whatever
 * the threads and whichever bitmaps.
 */
static int col_stats(const struct spmv_csr *A, struct spmv_profile *p,
                     int nthreads)
{
  struct col_pass c = {.A = A};
  int64_t noffsets, w, pairs = 0, local = 0, ndiags = 0;

  noffsets = A->rows + A->cols > 0 ? A->rows + A->cols - 1 : 0;
  c.words = noffsets / 64 + 1;
  if (A->nnz == 0)
    nthreads = 1;
  /* Bitmaps of the blocks' own for a scattered pattern, while they take
   * no more memory than the matrix's columns. */
  if (A->nnz > 0 && nthreads > 1 &&
      (uint64_t)nthreads * (uint64_t)c.words * 8 <= (uint64_t)A->nnz * 4 &&
      scattered(A))
    c.priv = calloc((size_t)nthreads * (size_t)c.words, sizeof *c.priv);
  if (A->nnz > 0 && !c.priv &&
      (c.seen = calloc((size_t)c.words, sizeof *c.seen)) == NULL)
    return SPMV_ENOMEM;
  spmv_par_rows(A, nthreads, col_block, &c);
  for (int t = 0; t < nthreads; t++) {
    pairs += c.pairs[t];
    local += c.local[t];
  }
  for (int t = 1; c.priv && t < nthreads; t++)
    for (w = 0; w < c.words; w++)
      c.priv[w] |= c.priv[(size_t)t * (size_t)c.words + (size_t)w];
  if (c.priv)
    c.seen = c.priv;
  for (w = 0; c.seen && w < c.words; w++)
    ndiags += __builtin_popcountll(c.seen[w]);
  free(c.seen);
  p->ndiags = ndiags;
  p->col_locality = pairs > 0 ? (double)local / (double)pairs : 0.0;
  return 0;
}

/* Computes the profile of a valid CSR A into p; returns 0 or an error. */
int spmv_profile_compute(const struct spmv_csr *A, struct spmv_profile *p,
                         struct spmv_error *err)
{
  return spmv_profile_compute_threads(A, p, 1, err);
}

int spmv_profile_compute_threads(const struct spmv_csr *A,
                                 struct spmv_profile *p, int nthreads,
                                 struct spmv_error *err)
{
  if (A == NULL || p == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "no matrix or no profile");
  memset(p, 0, sizeof *p);
  p->rows = A->rows;
  p->cols = A->cols;
  p->nnz = A->nnz;
  /* The passes' parts: nthreads within [1, SPMV_PAR_MAX]. */
  if (nthreads < 1 || nthreads > SPMV_PAR_MAX)
    nthreads = nthreads < 1 ? 1 : SPMV_PAR_MAX;
  row_stats(A, p, nthreads);
  p->hyb_k = hyb_k(A, p, nthreads);
  if (col_stats(A, p, nthreads) != 0)
    return spmv_error_set(err, SPMV_ENOMEM,
                          "out of memory for the diagonal bitmap of %lld "
                          "offsets", (long long)(A->rows + A->cols - 1));
  p->ell_fill = A->nnz > 0 ? (double)A->rows * (double)p->rl_max /
                             (double)A->nnz : 0.0;
  p->dia_fill = A->nnz > 0 ? (double)p->ndiags * (double)A->rows /
                             (double)A->nnz : 0.0;
  spmv_error_clear(err);
  return 0;
}
