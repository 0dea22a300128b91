/* spmv_mmio_build.c: turns Matrix Market triplets into a sorted CSR. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "spmv_mmio_build.h"

/* Appends entry (r, v) to column c's bucket of the column-major copy. */
#define PLACE(c, r, v)               \
  do {                               \
    int64_t q_ = next[(c)]++;        \
    crow[q_] = (r);                  \
    cval[q_] = (v);                  \
  } while (0)

/* Builds the CSR; see spmv_mmio_build.h. */
int spmv_mmio_build_csr(const struct spmv_mmio_triplets *t, int64_t rows,
                        int64_t cols, enum spmv_mmio_sym sym, const char *name,
                        struct spmv_csr **out, int64_t *duplicates,
                        struct spmv_error *err)
{
  int64_t *colptr = NULL;  /* cols + 1 offsets of the column-major copy */
  int64_t *next = NULL;    /* per column, then per row: the next free slot */
  int32_t *crow = NULL;    /* rows of the column-major copy */
  double *cval = NULL;     /* values of the column-major copy */
  int32_t *last = NULL;    /* per row, the last column placed (-1: none) */
  struct spmv_csr *A = NULL;
  int64_t total, dups, nnz, k, r, c, q;
  int rc = SPMV_ENOMEM;

  /* Pass 1: bucket every entry and its mirror by column, in file order. */
  colptr = calloc((size_t)cols + 1, sizeof *colptr);
  next = malloc(((size_t)(rows > cols ? rows : cols) + 1) * sizeof *next);
  last = malloc(((size_t)rows + 1) * sizeof *last);
  if (colptr == NULL || next == NULL || last == NULL)
    goto fail;
  for (k = 0; k < t->n; k++) {
    colptr[t->col[k] + 1]++;
    if (sym != SPMV_MMIO_GENERAL && t->row[k] != t->col[k])
      colptr[t->row[k] + 1]++;
  }
  for (c = 0; c < cols; c++)
    colptr[c + 1] += colptr[c];
  total = colptr[cols];
  crow = malloc(((size_t)total + 1) * sizeof *crow);
  cval = malloc(((size_t)total + 1) * sizeof *cval);
  if (crow == NULL || cval == NULL)
    goto fail;
  memcpy(next, colptr, (size_t)cols * sizeof *next);
  for (k = 0; k < t->n; k++) {
    int32_t i = t->row[k], j = t->col[k];
    double v = t->val[k];

    PLACE(j, i, v);
    if (sym != SPMV_MMIO_GENERAL && i != j)
      PLACE(i, j, sym == SPMV_MMIO_SKEW ? -v : v);
  }

  /* Pass 2: count each row's distinct columns (columns come ascending). */
  for (r = 0; r < rows; r++) {
    last[r] = -1;
    next[r] = 0;
  }
  dups = 0;
  for (c = 0; c < cols; c++) {
    for (q = colptr[c]; q < colptr[c + 1]; q++) {
      int32_t i = crow[q];

      if (last[i] == (int32_t)c) {
        dups++;
      } else {
        last[i] = (int32_t)c;
        next[i]++;
      }
    }
  }
  nnz = total - dups;
  A = spmv_csr_new(rows, cols, nnz);
  if (A == NULL)
    goto fail;
  A->row_ptr[0] = 0;
  for (r = 0; r < rows; r++) {
    A->row_ptr[r + 1] = A->row_ptr[r] + next[r];
    next[r] = A->row_ptr[r];
    last[r] = -1;
  }

  /* Pass 3: scatter by row, summing repeated columns in file order. */
  for (c = 0; c < cols; c++) {
    for (q = colptr[c]; q < colptr[c + 1]; q++) {
      int32_t i = crow[q];

      if (last[i] == (int32_t)c) {
        A->val[next[i] - 1] += cval[q];
      } else {
        last[i] = (int32_t)c;
        A->col_idx[next[i]] = (int32_t)c;
        A->val[next[i]] = cval[q];
        next[i]++;
      }
    }
  }
  *out = A;
  A = NULL;
  if (duplicates != NULL)
    *duplicates = dups;
  rc = 0;
  goto out;

fail:
  spmv_error_set(err, rc, "%s: out of memory building a %lld x %lld CSR from "
                 "%lld entries", name, (long long)rows, (long long)cols,
                 (long long)t->n);
out:
  spmv_csr_free(A);
  free(cval);
  free(crow);
  free(last);
  free(next);
  free(colptr);
  return rc;
}
