/* mmio_common.h: what the Matrix Market reader's test programs (check_mmio,
 * check_mmio_scan) share: comparing doubles and checking a CSR the reader
 * built.  Static functions: each program has its own copy. */
#ifndef MMIO_COMMON_H
#define MMIO_COMMON_H

#include <math.h>

#include <check.h>

#include "spmv_csr.h"

/* Whether two doubles are the same value (NaN equals NaN, -0 differs from 0). */
static int same_double(double a, double b)
{
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

/* Checks the invariants of a CSR the reader built: valid, columns strictly
 * increasing within each row. */
static void check_sorted(const struct spmv_csr *A, const char *what)
{
  struct spmv_error err = { 0, "" };
  int64_t i, k;

  ck_assert_msg(spmv_csr_validate(A, SPMV_CSR_ALLOW_NONFINITE, &err) == 0,
                "%s: %s", what, err.msg);
  /* Plain tests in loops: every ck_assert costs a write to check's pipe. */
  for (i = 0; i < A->rows; i++)
    for (k = A->row_ptr[i] + 1; k < A->row_ptr[i + 1]; k++)
      if (A->col_idx[k - 1] >= A->col_idx[k])
        ck_abort_msg("%s: row %lld columns not strictly increasing", what, (long long)i);
}

#endif /* MMIO_COMMON_H */
