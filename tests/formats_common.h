/* formats_common.h: what the check_formats programs share: a deterministic
 * generator and the matrices it makes from row lengths (check_formats.c's
 * gallery, check_formats_shell.c's worked cuts).  Static: each program has
 * its own generator, in the state it starts from in each test (check forks
 * the tests). */
#ifndef FORMATS_COMMON_H
#define FORMATS_COMMON_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "spmv_csr.h"

/* A deterministic generator (xorshift64*). */
static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng_next(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* Uniform in [0, 1). */
static double rng_unit(void)
{
  return (double)(rng_next() >> 11) / 9007199254740992.0;
}

/* Non-zero, of either sign, magnitude in [0.5, 1.5). */
static double rng_value(void)
{
  double v = 0.5 + rng_unit();

  return rng_next() & 1 ? v : -v;
}

/* Generated matrices: a CSR from row lengths, columns and values drawn from
 * the generator (columns distinct within a row unless dup is set). */
static struct spmv_csr *from_lengths(int64_t rows, int64_t cols,
                                     const int64_t *len, int dup)
{
  struct spmv_csr *A;
  int64_t i, k, nnz = 0;
  char *used = calloc((size_t)cols + 1, 1);

  for (i = 0; i < rows; i++)
    nnz += len[i];
  A = spmv_csr_new(rows, cols, nnz);
  ck_assert(A != NULL && used != NULL);
  for (i = 0; i < rows; i++) {
    int64_t lo = A->row_ptr[i];

    A->row_ptr[i + 1] = lo + len[i];
    for (k = 0; k < len[i]; k++) {
      int64_t c = (int64_t)(rng_unit() * (double)cols);

      while (!dup && used[c])
        c = (c + 1) % cols;
      used[c] = 1;
      A->col_idx[lo + k] = (int32_t)c;
      A->val[lo + k] = rng_value();
    }
    for (k = 0; k < len[i]; k++)
      used[A->col_idx[lo + k]] = 0;
  }
  free(used);
  return A;
}

#endif /* FORMATS_COMMON_H */
