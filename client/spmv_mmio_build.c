/* spmv_mmio_build.c: turns Matrix Market triplets into a sorted CSR. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "spmv_mmio_build.h"

/* Rows up to this length are sorted by insertion, longer ones by merging. */
#define INSERTION_MAX 24

/* Sorts the n entries (col, val) of one row by column, stably. */
static void sort_short(int32_t *col, double *val, int64_t n)
{
  int64_t i, j;

  for (i = 1; i < n; i++) {
    int32_t c = col[i];
    double v = val[i];

    for (j = i; j > 0 && col[j - 1] > c; j--) {
      col[j] = col[j - 1];
      val[j] = val[j - 1];
    }
    col[j] = c;
    val[j] = v;
  }
}

/*
 * Sorts the n entries (col, val) of one row by column, stably: insertion
 * sort of short runs, then bottom-up merges through tcol/tval (n slots).
 */
static void sort_long(int32_t *col, double *val, int64_t n, int32_t *tcol, double *tval)
{
  int32_t *sc = col, *dc = tcol;
  double *sv = val, *dv = tval;
  int64_t width, lo;

  for (lo = 0; lo < n; lo += INSERTION_MAX)
    sort_short(col + lo, val + lo, n - lo < INSERTION_MAX ? n - lo : INSERTION_MAX);
  for (width = INSERTION_MAX; width < n; width *= 2) {
    for (lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t a = lo, b = mid, k = lo;

      while (a < mid && b < hi) {
        if (sc[b] < sc[a]) {
          dc[k] = sc[b];
          dv[k++] = sv[b++];
        } else {
          dc[k] = sc[a];
          dv[k++] = sv[a++];
        }
      }
      while (a < mid) {
        dc[k] = sc[a];
        dv[k++] = sv[a++];
      }
      while (b < hi) {
        dc[k] = sc[b];
        dv[k++] = sv[b++];
      }
    }
    { int32_t *t = sc; sc = dc; dc = t; }
    { double *t = sv; sv = dv; dv = t; }
  }
  if (sc != col) {
    memcpy(col, sc, (size_t)n * sizeof *col);
    memcpy(val, sv, (size_t)n * sizeof *val);
  }
}

/*
 * Copies A into a new CSR of nnz entries, summing each run of equal
 * columns within a row (file order is kept by the stable sorts).
 */
static struct spmv_csr *merge_duplicates(const struct spmv_csr *A, int64_t nnz)
{
  struct spmv_csr *B = spmv_csr_new(A->rows, A->cols, nnz);
  int64_t i, k, q = 0;

  if (B == NULL)
    return NULL;
  for (i = 0; i < A->rows; i++) {
    int64_t start = q;

    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      if (q > start && B->col_idx[q - 1] == A->col_idx[k]) {
        B->val[q - 1] += A->val[k];
      } else {
        B->col_idx[q] = A->col_idx[k];
        B->val[q++] = A->val[k];
      }
    }
    B->row_ptr[i + 1] = q;
  }
  return B;
}

/*
 * Builds the CSR; see spmv_mmio_build.h.  One stable scatter by row puts
 * each row's entries in file order, which for the usual column-sorted
 * files is already column order; only rows found unsorted are sorted.
 */
int spmv_mmio_build_csr(const struct spmv_mmio_triplets *t, int64_t rows,
                        int64_t cols, enum spmv_mmio_sym sym, const char *name,
                        struct spmv_csr **out, int64_t *duplicates,
                        struct spmv_error *err)
{
  const int32_t *trow = t->row, *tcol = t->col;
  const double *tval = t->val;
  int64_t *next = NULL;   /* per row, the next free slot */
  int32_t *scol = NULL;   /* scratch for sorting long rows */
  double *sval = NULL;
  struct spmv_csr *A = NULL, *B;
  int64_t total, dups = 0, k, i, longest = 0;

  /* Count entries per row, mirrors included. */
  next = calloc((size_t)rows + 1, sizeof *next);
  if (next == NULL)
    goto fail;
  for (k = 0; k < t->n; k++) {
    next[trow[k]]++;
    if (sym != SPMV_MMIO_GENERAL && trow[k] != tcol[k])
      next[tcol[k]]++;
  }
  total = 0;
  for (i = 0; i < rows; i++)
    total += next[i];
  A = spmv_csr_new(rows, cols, total);
  if (A == NULL)
    goto fail;
  for (i = 0; i < rows; i++) {
    int64_t len = next[i];

    A->row_ptr[i + 1] = A->row_ptr[i] + len;
    next[i] = A->row_ptr[i];
    if (len > longest)
      longest = len;
  }

  /* Scatter in file order. */
  if (sym == SPMV_MMIO_GENERAL) {
    for (k = 0; k < t->n; k++) {
      int64_t q = next[trow[k]]++;

      A->col_idx[q] = tcol[k];
      A->val[q] = tval[k];
    }
  } else {
    for (k = 0; k < t->n; k++) {
      int32_t r = trow[k], c = tcol[k];
      int64_t q = next[r]++;

      A->col_idx[q] = c;
      A->val[q] = tval[k];
      if (r != c) {
        q = next[c]++;
        A->col_idx[q] = r;
        A->val[q] = sym == SPMV_MMIO_SKEW ? -tval[k] : tval[k];
      }
    }
  }

  /* Sort the rows that need it; count repeated columns. */
  for (i = 0; i < rows; i++) {
    int64_t lo = A->row_ptr[i], hi = A->row_ptr[i + 1], same = 0;

    for (k = lo + 1; k < hi && A->col_idx[k - 1] <= A->col_idx[k]; k++)
      same += A->col_idx[k - 1] == A->col_idx[k];
    if (k < hi) {
      if (hi - lo <= INSERTION_MAX) {
        sort_short(A->col_idx + lo, A->val + lo, hi - lo);
      } else {
        if (scol == NULL) {
          scol = malloc((size_t)longest * sizeof *scol);
          sval = malloc((size_t)longest * sizeof *sval);
          if (scol == NULL || sval == NULL)
            goto fail;
        }
        sort_long(A->col_idx + lo, A->val + lo, hi - lo, scol, sval);
      }
      for (same = 0, k = lo + 1; k < hi; k++)
        same += A->col_idx[k - 1] == A->col_idx[k];
    }
    dups += same;
  }
  if (dups > 0) {
    /* Rare: sum the repeats into a CSR of the exact size. */
    B = merge_duplicates(A, total - dups);
    if (B == NULL)
      goto fail;
    spmv_csr_free(A);
    A = B;
  }
  *out = A;
  if (duplicates != NULL)
    *duplicates = dups;
  free(sval);
  free(scol);
  free(next);
  return 0;

fail:
  spmv_csr_free(A);
  free(sval);
  free(scol);
  free(next);
  return spmv_error_set(err, SPMV_ENOMEM, "%s: out of memory building a %lld x %lld "
                        "CSR from %lld entries", name, (long long)rows, (long long)cols,
                        (long long)t->n);
}
