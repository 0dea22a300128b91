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

/* Counts the rows of A with at least k entries. */
static int64_t rows_at_least(const struct spmv_csr *A, int64_t k)
{
  int64_t i, n = 0;

  for (i = 0; i < A->rows; i++)
    n += A->row_ptr[i + 1] - A->row_ptr[i] >= k;
  return n;
}

/*
 * HYB's K: the largest K such that at least rows/3 rows have K or more
 * entries.  The histogram bounds K to one power-of-two bin, and a binary
 * search over that bin, one pass over row_ptr per step, finds it exactly
 * in O(1) memory.
 */
static int64_t hyb_k(const struct spmv_csr *A, const struct spmv_profile *p)
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
    if (rows_at_least(A, mid) >= need)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* The pass over row_ptr: extremes, mean, sigma, histogram, empty rows. */
static void row_stats(const struct spmv_csr *A, struct spmv_profile *p)
{
  double ss = 0.0, d;
  int64_t i, len;

  p->rl_mean = A->rows > 0 ? (double)A->nnz / (double)A->rows : 0.0;
  p->rl_min = A->rows > 0 ? INT64_MAX : 0;
  p->rl_max = 0;
  for (i = 0; i < A->rows; i++) {
    len = A->row_ptr[i + 1] - A->row_ptr[i];
    if (len < p->rl_min)
      p->rl_min = len;
    if (len > p->rl_max)
      p->rl_max = len;
    p->hist[hist_bin(len)]++;
    d = (double)len - p->rl_mean;
    ss += d * d;
  }
  p->empty_rows = p->hist[0];
  p->rl_sigma = A->rows > 0 ? sqrt(ss / (double)A->rows) : 0.0;
  p->rl_cv = p->rl_mean > 0.0 ? p->rl_sigma / p->rl_mean : 0.0;
}

/* The pass over col_idx in blocks of rows: each marks its diagonals in
 * the shared bitmap and counts its column pairs. */
struct col_pass {
  const struct spmv_csr *A;
  uint64_t *seen;
  int64_t pairs[SPMV_PAR_MAX], local[SPMV_PAR_MAX];
};

static void col_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct col_pass *c = ctx;
  const struct spmv_csr *A = c->A;
  int64_t i, k, off, gap, pairs = 0, local = 0;

  for (i = r0; i < r1; i++) {
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      off = (int64_t)A->col_idx[k] - i + (A->rows - 1);
      uint64_t bit = (uint64_t)1 << (off % 64);
      /* Read first: the blocks of a banded matrix share a few words, and
       * writing them only once keeps those cache lines shared. */
      if (!(__atomic_load_n(&c->seen[off / 64], __ATOMIC_RELAXED) & bit))
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

/*
 * The pass over col_idx: distinct diagonals (col - row, a bitmap over the
 * rows + cols - 1 possible offsets) and column locality, in nthreads
 * blocks of rows (spmv_par_rows).  Every count is an integer, so the
 * profile is the same bits whatever the threads.
 */
static int col_stats(const struct spmv_csr *A, struct spmv_profile *p,
                     int nthreads)
{
  struct col_pass c = {.A = A};
  int64_t noffsets, w, pairs = 0, local = 0, ndiags = 0;

  noffsets = A->rows + A->cols > 0 ? A->rows + A->cols - 1 : 0;
  if (A->nnz > 0) {
    c.seen = calloc((size_t)(noffsets / 64 + 1), sizeof *c.seen);
    if (c.seen == NULL)
      return SPMV_ENOMEM;
  }
  if (nthreads < 1 || A->nnz == 0)
    nthreads = 1;
  if (nthreads > SPMV_PAR_MAX)
    nthreads = SPMV_PAR_MAX;
  spmv_par_rows(A, nthreads, col_block, &c);
  for (int t = 0; t < nthreads; t++) {
    pairs += c.pairs[t];
    local += c.local[t];
  }
  for (w = 0; c.seen && w <= noffsets / 64; w++)
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
  row_stats(A, p);
  p->hyb_k = hyb_k(A, p);
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
