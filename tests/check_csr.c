/* check_csr.c: CSR allocation, validation messages, the reference product. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_csr.h"

Suite *csr_suite(void);

/*
 * The 3 x 4 matrix
 *   [ 1 0 2 0 ]
 *   [ 0 0 0 0 ]
 *   [ 3 0 4 5 ]
 * built fresh for each test so that tests may break it.
 */
static struct spmv_csr *small(void)
{
  static const int64_t rp[] = { 0, 2, 2, 5 };
  static const int32_t ci[] = { 0, 2, 0, 2, 3 };
  static const double v[] = { 1, 2, 3, 4, 5 };
  struct spmv_csr *A = spmv_csr_new(3, 4, 5);

  ck_assert_ptr_nonnull(A);
  memcpy(A->row_ptr, rp, sizeof rp);
  memcpy(A->col_idx, ci, sizeof ci);
  memcpy(A->val, v, sizeof v);
  return A;
}

/* Asserts that A is refused with exactly the message want. */
static void assert_refused(const struct spmv_csr *A, unsigned flags,
                           const char *want)
{
  struct spmv_error err;

  spmv_error_clear(&err);
  ck_assert_int_eq(spmv_csr_validate(A, flags, &err), SPMV_ECSR);
  ck_assert_int_eq(err.code, SPMV_ECSR);
  ck_assert_str_eq(err.msg, want);
}

START_TEST(new_free_dup)
{
  struct spmv_csr *A, *B;
  int64_t i;

  A = spmv_csr_new(4, 7, 9);
  ck_assert_ptr_nonnull(A);
  ck_assert_int_eq(A->rows, 4);
  ck_assert_int_eq(A->cols, 7);
  ck_assert_int_eq(A->nnz, 9);
  for (i = 0; i <= 4; i++)
    ck_assert_int_eq(A->row_ptr[i], 0);
  for (i = 0; i < 9; i++) {
    ck_assert_int_eq(A->col_idx[i], 0);
    ck_assert(A->val[i] == 0.0);
  }
  ck_assert_ptr_null(spmv_csr_free(A));
  ck_assert_ptr_null(spmv_csr_free(NULL));
  ck_assert_ptr_null(spmv_csr_new(-1, 3, 0));
  ck_assert_ptr_null(spmv_csr_new(3, -1, 0));
  ck_assert_ptr_null(spmv_csr_new(3, 3, -1));
  ck_assert_ptr_null(spmv_csr_new(3, (int64_t)INT32_MAX + 1, 0));
  A = spmv_csr_new(0, 0, 0);
  ck_assert_ptr_nonnull(A);
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  spmv_csr_free(A);

  A = small();
  B = spmv_csr_dup(A);
  ck_assert_ptr_nonnull(B);
  ck_assert_ptr_ne(B->row_ptr, A->row_ptr);
  ck_assert_ptr_ne(B->col_idx, A->col_idx);
  ck_assert_ptr_ne(B->val, A->val);
  ck_assert_mem_eq(B->row_ptr, A->row_ptr, 4 * sizeof *A->row_ptr);
  ck_assert_mem_eq(B->col_idx, A->col_idx, 5 * sizeof *A->col_idx);
  ck_assert_mem_eq(B->val, A->val, 5 * sizeof *A->val);
  B->val[0] = 9;
  ck_assert(A->val[0] == 1.0);
  ck_assert_ptr_null(spmv_csr_dup(NULL));
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

START_TEST(validate_accepts_good)
{
  struct spmv_csr *A = small();
  struct spmv_csr view;
  int64_t rp0[] = { 0, 0, 0 };
  struct spmv_error err;

  err.code = 1;
  strcpy(err.msg, "stale");
  ck_assert_int_eq(spmv_csr_validate(A, 0, &err), 0);
  ck_assert_int_eq(err.code, 0);
  ck_assert_str_eq(err.msg, "");
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  /* Explicit zeros, unsorted and repeated columns are allowed. */
  A->val[1] = 0.0;
  A->col_idx[2] = 3;
  A->col_idx[3] = 3;
  ck_assert_int_eq(spmv_csr_validate(A, 0, &err), 0);
  spmv_csr_free(A);
  /* A view of caller arrays with empty rows and no entries. */
  memset(&view, 0, sizeof view);
  view.rows = 2;
  view.cols = 5;
  view.row_ptr = rp0;
  ck_assert_int_eq(spmv_csr_validate(&view, 0, &err), 0);
  view.rows = 0;
  view.cols = 0;
  ck_assert_int_eq(spmv_csr_validate(&view, 0, &err), 0);
}
END_TEST

START_TEST(validate_rejects_row_ptr)
{
  struct spmv_csr *A = small();

  A->row_ptr[0] = 1;
  assert_refused(A, 0, "row_ptr[0] = 1 is not 0");
  A->row_ptr[0] = 0;
  A->row_ptr[1] = 3;
  assert_refused(A, 0, "row_ptr[2] = 2 is less than row_ptr[1] = 3");
  A->row_ptr[1] = 2;
  A->row_ptr[2] = 6;
  assert_refused(A, 0, "row_ptr[2] = 6 exceeds nnz = 5");
  A->row_ptr[2] = 2;
  A->row_ptr[3] = 4;
  assert_refused(A, 0, "row_ptr[3] = 4 differs from nnz = 5");
  A->row_ptr[3] = 5;
  A->row_ptr[1] = -1;
  assert_refused(A, 0, "row_ptr[1] = -1 is less than row_ptr[0] = 0");
  A->row_ptr[1] = 2;
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  spmv_csr_free(A);
}
END_TEST

START_TEST(validate_rejects_columns)
{
  struct spmv_csr *A = small();

  A->col_idx[3] = 4;
  assert_refused(A, 0, "column index 4 out of range [0, 4) in row 2");
  A->col_idx[3] = -1;
  assert_refused(A, 0, "column index -1 out of range [0, 4) in row 2");
  A->col_idx[3] = 2;
  A->col_idx[0] = INT32_MAX;
  assert_refused(A, 0,
                 "column index 2147483647 out of range [0, 4) in row 0");
  spmv_csr_free(A);
  /* The message the protocol reference shows (PROTOCOL.md). */
  A = spmv_csr_new(13, 70000, 1);
  ck_assert_ptr_nonnull(A);
  A->row_ptr[13] = 1;
  A->col_idx[0] = 70001;
  assert_refused(A, 0, "column index 70001 out of range [0, 70000) in row 12");
  spmv_csr_free(A);
}
END_TEST

/* The two parts of the validation, rows split in blocks, find what the
 * whole does: the same first offending position when blocks are checked
 * in order. */
START_TEST(validate_in_parts)
{
  struct spmv_csr *A = small();
  struct spmv_error err;

  ck_assert_int_eq(spmv_csr_validate_offsets(A, &err), 0);
  ck_assert_int_eq(spmv_csr_validate_rows(A, 0, 0, 1, &err), 0);
  ck_assert_int_eq(spmv_csr_validate_rows(A, 0, 1, 3, &err), 0);
  A->col_idx[4] = 9;
  A->val[3] = NAN;
  ck_assert_int_eq(spmv_csr_validate_rows(A, 0, 0, 2, &err), 0);
  ck_assert_int_eq(spmv_csr_validate_rows(A, 0, 2, 3, &err), SPMV_ECSR);
  ck_assert_str_eq(err.msg, "value NaN at row 2, entry 1 (column 2)");
  assert_refused(A, 0, "value NaN at row 2, entry 1 (column 2)");
  ck_assert_int_eq(spmv_csr_validate_rows(A, SPMV_CSR_ALLOW_NONFINITE, 2, 3,
                                          &err), SPMV_ECSR);
  ck_assert_str_eq(err.msg, "column index 9 out of range [0, 4) in row 2");
  A->row_ptr[2] = 1;
  ck_assert_int_eq(spmv_csr_validate_offsets(A, &err), SPMV_ECSR);
  ck_assert_str_eq(err.msg, "row_ptr[2] = 1 is less than row_ptr[1] = 2");
  spmv_csr_free(A);
}
END_TEST

START_TEST(validate_rejects_values)
{
  struct spmv_csr *A = small();
  struct spmv_error err;

  A->val[3] = NAN;
  assert_refused(A, 0, "value NaN at row 2, entry 1 (column 2)");
  ck_assert_int_eq(spmv_csr_validate(A, SPMV_CSR_ALLOW_NONFINITE, &err), 0);
  A->val[3] = 4;
  A->val[0] = INFINITY;
  assert_refused(A, 0, "value Inf at row 0, entry 0 (column 0)");
  A->val[0] = -INFINITY;
  assert_refused(A, 0, "value -Inf at row 0, entry 0 (column 0)");
  ck_assert_int_eq(spmv_csr_validate(A, SPMV_CSR_ALLOW_NONFINITE, &err), 0);
  /* A bad column is reported even when values are allowed to be odd. */
  A->col_idx[4] = 9;
  assert_refused(A, SPMV_CSR_ALLOW_NONFINITE,
                 "column index 9 out of range [0, 4) in row 2");
  spmv_csr_free(A);
}
END_TEST

START_TEST(validate_rejects_shape)
{
  struct spmv_csr view;
  int64_t rp[] = { 0, 1 };
  int32_t ci[] = { 0 };
  double v[] = { 1 };

  assert_refused(NULL, 0, "no matrix");
  memset(&view, 0, sizeof view);
  view.rows = 1;
  view.cols = 1;
  view.nnz = 1;
  view.row_ptr = rp;
  view.col_idx = ci;
  view.val = v;
  ck_assert_int_eq(spmv_csr_validate(&view, 0, NULL), 0);
  view.rows = -1;
  assert_refused(&view, 0, "negative dimension: rows -1, cols 1, nnz 1");
  view.rows = 1;
  view.cols = (int64_t)INT32_MAX + 1;
  assert_refused(&view, 0, "cols = 2147483648 exceeds the 32-bit column "
                 "index limit 2147483647");
  view.cols = 1;
  view.row_ptr = NULL;
  assert_refused(&view, 0, "row_ptr is missing");
  view.row_ptr = rp;
  view.col_idx = NULL;
  assert_refused(&view, 0, "col_idx is missing");
  view.col_idx = ci;
  view.val = NULL;
  assert_refused(&view, 0, "val is missing");
}
END_TEST

/* Checks y = alpha*A*x + beta*y0 against want, exactly (small integers). */
static void check_product(const struct spmv_csr *A, double alpha,
                          const double *x, double beta, const double *y0,
                          const double *want)
{
  double y[8];
  int64_t i;

  memcpy(y, y0, (size_t)A->rows * sizeof *y);
  spmv_csr_ref(A, alpha, x, beta, y);
  for (i = 0; i < A->rows; i++)
    ck_assert_msg(y[i] == want[i], "row %lld: got %g, want %g (alpha %g, "
                  "beta %g)", (long long)i, y[i], want[i], alpha, beta);
}

START_TEST(ref_alpha_beta)
{
  struct spmv_csr *A = small();
  const double x[] = { 1, 2, 3, 4 };
  const double y0[] = { 1, -1, 2 };
  const double ynan[] = { NAN, NAN, NAN };
  /* A*x = [1 + 6, 0, 3 + 12 + 20] = [7, 0, 35]. */
  const double ax[] = { 7, 0, 35 };

  check_product(A, 1, x, 0, y0, ax);
  check_product(A, 1, x, 0, ynan, ax);           /* y not read */
  check_product(A, 0, x, 0, ynan, (double[]){ 0, 0, 0 });
  check_product(A, 0, x, 1, y0, y0);
  check_product(A, 1, x, 1, y0, (double[]){ 8, -1, 37 });
  check_product(A, 2, x, 0.5, y0, (double[]){ 14.5, -0.5, 71 });
  check_product(A, -1, x, -2, y0, (double[]){ -9, 2, -39 });
  check_product(A, 0, x, 0.5, y0, (double[]){ 0.5, -0.5, 1 });
  spmv_csr_free(A);
}
END_TEST

START_TEST(ref_shapes)
{
  struct spmv_csr *A;
  double y[3] = { 5, 5, 5 };
  const double x1[] = { 2 };
  const double x3[] = { 1, 1, 1 };
  const double x2[] = { 1, -2 };

  /* Empty matrix: nothing read, nothing written. */
  A = spmv_csr_new(0, 0, 0);
  spmv_csr_ref(A, 1, NULL, 0, NULL);
  spmv_csr_free(A);
  /* No entries: y = beta*y. */
  A = spmv_csr_new(3, 3, 0);
  spmv_csr_ref(A, 2, x3, 0.5, y);
  ck_assert(y[0] == 2.5 && y[1] == 2.5 && y[2] == 2.5);
  spmv_csr_free(A);
  /* 1 x 1. */
  A = spmv_csr_new(1, 1, 1);
  A->row_ptr[1] = 1;
  A->val[0] = 3;
  check_product(A, 1, x1, 0, y, (double[]){ 6 });
  spmv_csr_free(A);
  /* 2 x 3: [1 2 0; 0 0 -1]. */
  A = spmv_csr_new(2, 3, 3);
  memcpy(A->row_ptr, (int64_t[]){ 0, 2, 3 }, 3 * sizeof(int64_t));
  memcpy(A->col_idx, (int32_t[]){ 0, 1, 2 }, 3 * sizeof(int32_t));
  memcpy(A->val, (double[]){ 1, 2, -1 }, 3 * sizeof(double));
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  check_product(A, 1, x3, 0, y, (double[]){ 3, -1 });
  spmv_csr_free(A);
  /* 3 x 2: [1 0; 0 0; 4 5], columns unsorted in the last row. */
  A = spmv_csr_new(3, 2, 3);
  memcpy(A->row_ptr, (int64_t[]){ 0, 1, 1, 3 }, 4 * sizeof(int64_t));
  memcpy(A->col_idx, (int32_t[]){ 0, 1, 0 }, 3 * sizeof(int32_t));
  memcpy(A->val, (double[]){ 1, 5, 4 }, 3 * sizeof(double));
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  check_product(A, 1, x2, 0, y, (double[]){ 1, 0, -6 });
  spmv_csr_free(A);
}
END_TEST

/* The suite of the CSR module. */
Suite *csr_suite(void)
{
  Suite *s = suite_create("csr");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, new_free_dup);
  tcase_add_test(tc, validate_accepts_good);
  tcase_add_test(tc, validate_rejects_row_ptr);
  tcase_add_test(tc, validate_rejects_columns);
  tcase_add_test(tc, validate_rejects_values);
  tcase_add_test(tc, validate_in_parts);
  tcase_add_test(tc, validate_rejects_shape);
  tcase_add_test(tc, ref_alpha_beta);
  tcase_add_test(tc, ref_shapes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(csr_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
