/* check_profile.c: profile statistics and fingerprints, checked by hand. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "spmv_gen.h"
#include "spmv_profile.h"

Suite *profile_suite(void);

/* Builds a CSR from literal arrays (values 1, 2, ...). */
static struct spmv_csr *build(int64_t rows, int64_t cols, const int64_t *rp,
                              const int32_t *ci)
{
  struct spmv_csr *A = spmv_csr_new(rows, cols, rp[rows]);
  int64_t k;

  ck_assert_ptr_nonnull(A);
  memcpy(A->row_ptr, rp, (size_t)(rows + 1) * sizeof *rp);
  if (rp[rows] > 0)
    memcpy(A->col_idx, ci, (size_t)rp[rows] * sizeof *ci);
  for (k = 0; k < rp[rows]; k++)
    A->val[k] = (double)(k + 1);
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  return A;
}

/*
 * 6 x 64, row lengths 3, 0, 1, 2, 8, 1:
 *   row 0: 0 1 2            offsets 0 1 2, two local steps
 *   row 1: (empty)
 *   row 2: 2                offset 0
 *   row 3: 50 3 (unsorted)  offsets 47 0, one step of 47: not local
 *   row 4: 4 .. 11          offsets 0 .. 7, seven local steps
 *   row 5: 0                offset -5
 */
static struct spmv_csr *hand(void)
{
  static const int64_t rp[] = { 0, 3, 3, 4, 6, 14, 15 };
  static const int32_t ci[] = { 0, 1, 2, 2, 50, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                0 };

  return build(6, 64, rp, ci);
}

#define EPS 1e-12

START_TEST(hand_statistics)
{
  struct spmv_csr *A = hand();
  struct spmv_profile p;
  struct spmv_error err;
  int b;

  ck_assert_int_eq(spmv_profile_compute(A, &p, &err), 0);
  ck_assert_int_eq(p.rows, 6);
  ck_assert_int_eq(p.cols, 64);
  ck_assert_int_eq(p.nnz, 15);
  ck_assert_int_eq(p.rl_min, 0);
  ck_assert_int_eq(p.rl_max, 8);
  ck_assert_double_eq_tol(p.rl_mean, 2.5, EPS);
  /* deviations .5 -2.5 -1.5 -.5 5.5 -1.5: squares sum to 41.5 */
  ck_assert_double_eq_tol(p.rl_sigma, sqrt(41.5 / 6.0), EPS);
  ck_assert_double_eq_tol(p.rl_cv, sqrt(41.5 / 6.0) / 2.5, EPS);
  ck_assert_int_eq(p.hist[0], 1);   /* row 1 */
  ck_assert_int_eq(p.hist[1], 2);   /* [1, 2): rows 2, 5 */
  ck_assert_int_eq(p.hist[2], 2);   /* [2, 4): rows 0, 3 */
  ck_assert_int_eq(p.hist[3], 0);   /* [4, 8) */
  ck_assert_int_eq(p.hist[4], 1);   /* [8, 16): row 4 */
  for (b = 5; b < SPMV_PROFILE_BINS; b++)
    ck_assert_int_eq(p.hist[b], 0);
  ck_assert_int_eq(p.empty_rows, 1);
  ck_assert_double_eq_tol(p.ell_fill, 6.0 * 8.0 / 15.0, EPS);
  /* 2 of 6 rows have >= 3 entries, 1 has >= 4: K = 3. */
  ck_assert_int_eq(p.hyb_k, 3);
  /* offsets -5, 0 .. 7, 47 */
  ck_assert_int_eq(p.ndiags, 10);
  ck_assert_double_eq_tol(p.dia_fill, 10.0 * 6.0 / 15.0, EPS);
  ck_assert_double_eq_tol(p.col_locality, 9.0 / 10.0, EPS);
  spmv_csr_free(A);
}
END_TEST

START_TEST(degenerate)
{
  static const int64_t rp0[] = { 0 };
  static const int64_t rp3[] = { 0, 0, 0, 0 };
  static const int64_t rp1[] = { 0, 1 };
  static const int32_t c1[] = { 0 };
  struct spmv_csr *A;
  struct spmv_profile p;

  A = build(0, 0, rp0, NULL);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_eq(p.rows, 0);
  ck_assert_int_eq(p.rl_max, 0);
  ck_assert_int_eq(p.rl_min, 0);
  ck_assert(p.rl_mean == 0.0 && p.rl_sigma == 0.0 && p.rl_cv == 0.0);
  ck_assert(p.ell_fill == 0.0 && p.dia_fill == 0.0);
  ck_assert_int_eq(p.hyb_k, 0);
  ck_assert_int_eq(p.ndiags, 0);
  spmv_csr_free(A);

  A = build(3, 5, rp3, NULL);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_eq(p.hist[0], 3);
  ck_assert_int_eq(p.empty_rows, 3);
  ck_assert_int_eq(p.rl_min, 0);
  ck_assert(p.rl_cv == 0.0);
  ck_assert_int_eq(p.hyb_k, 0);
  ck_assert(p.col_locality == 0.0);
  spmv_csr_free(A);

  A = build(1, 1, rp1, c1);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_eq(p.rl_min, 1);
  ck_assert_int_eq(p.rl_max, 1);
  ck_assert(p.rl_sigma == 0.0 && p.rl_cv == 0.0);
  ck_assert_int_eq(p.hist[1], 1);
  ck_assert_int_eq(p.hyb_k, 1);
  ck_assert_int_eq(p.ndiags, 1);
  ck_assert(p.ell_fill == 1.0 && p.dia_fill == 1.0);
  spmv_csr_free(A);
  ck_assert_int_eq(spmv_profile_compute(NULL, &p, NULL), SPMV_EINVAL);
}
END_TEST

START_TEST(locality_boundary)
{
  /* Steps of 31 (local), 32 (not), -31 (local), -32 (not). */
  static const int64_t rp[] = { 0, 3, 6 };
  static const int32_t ci[] = { 0, 31, 63, 63, 32, 0 };
  struct spmv_csr *A = build(2, 64, rp, ci);
  struct spmv_profile p;

  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_double_eq_tol(p.col_locality, 0.5, EPS);
  /* offsets 0 31 63 62 31 -1 */
  ck_assert_int_eq(p.ndiags, 5);
  spmv_csr_free(A);
}
END_TEST

START_TEST(hyb_k_bins)
{
  /* Lengths 16, 16, 0: need 1 row, K = 16 (a bin's lower edge). */
  static const int64_t rpa[] = { 0, 16, 32, 32 };
  /* Lengths 100, 37, 5, 5, 5, 0, 0, 0, 0: need 3 rows, K = 5. */
  static const int64_t rpb[] = { 0, 100, 137, 142, 147, 152, 152, 152, 152,
                                 152 };
  /* Lengths 31, 31, 31, 1: need 2, K = 31 (a bin's upper edge). */
  static const int64_t rpc[] = { 0, 31, 62, 93, 94 };
  int32_t *ci = calloc(152, sizeof *ci);
  struct spmv_csr *A;
  struct spmv_profile p;

  ck_assert_ptr_nonnull(ci);
  A = build(3, 1, rpa, ci);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_eq(p.hyb_k, 16);
  spmv_csr_free(A);
  A = build(9, 1, rpb, ci);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_eq(p.hyb_k, 5);
  ck_assert_int_eq(p.hist[7], 1);  /* [64, 128) */
  ck_assert_int_eq(p.hist[6], 1);  /* [32, 64) */
  ck_assert_int_eq(p.hist[3], 3);  /* [4, 8) */
  spmv_csr_free(A);
  A = build(4, 1, rpc, ci);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_eq(p.hyb_k, 31);
  spmv_csr_free(A);
  free(ci);
}
END_TEST

/* Compares the profile with a plain two-pass computation on matrix A. */
static void brute_compare(const struct spmv_csr *A)
{
  struct spmv_profile p;
  double mean, ss = 0.0;
  int64_t i, k, len, K, cnt, need;
  int64_t *lens = malloc((size_t)(A->rows + 1) * sizeof *lens);
  char *diag = calloc((size_t)(A->rows + A->cols), 1);
  int64_t nd = 0;

  ck_assert(lens != NULL && diag != NULL);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  mean = (double)A->nnz / (double)A->rows;
  for (i = 0; i < A->rows; i++) {
    lens[i] = A->row_ptr[i + 1] - A->row_ptr[i];
    ss += ((double)lens[i] - mean) * ((double)lens[i] - mean);
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      if (!diag[A->col_idx[k] - i + A->rows]) {
        diag[A->col_idx[k] - i + A->rows] = 1;
        nd++;
      }
    }
  }
  ck_assert_double_eq_tol(p.rl_sigma, sqrt(ss / (double)A->rows),
                          1e-9 * (1.0 + p.rl_sigma));
  ck_assert_int_eq(p.ndiags, nd);
  /* HYB's K by its definition, K counting down from the longest row. */
  need = (A->rows + 2) / 3;
  for (K = p.rl_max; K > 0; K--) {
    for (cnt = 0, i = 0; i < A->rows; i++)
      cnt += lens[i] >= K;
    if (cnt >= need)
      break;
  }
  ck_assert_int_eq(p.hyb_k, K);
  for (len = 0, i = 0; i < A->rows; i++)
    len = lens[i] > len ? lens[i] : len;
  ck_assert_int_eq(p.rl_max, len);
  free(lens);
  free(diag);
}

START_TEST(against_brute_force)
{
  static const char *const gens[] = {
    "matching rows=3000 mean=12 cv=0.8 dist=normal",
    "matching rows=2000 cols=5000 mean=30 cv=2 dist=lognormal place=diagonal",
    "pareto rows=3000 alpha=1.2 xmin=1",
    "rmat scale=11 ef=8",
    "banded n=2000 w=3 b=40",
    "stencil2d nx=30 ny=31 points=9",
    "dc1like n=4000 lambda=3 long=1500,3999",
  };
  struct spmv_error err;
  struct spmv_csr *A;
  size_t g;

  for (g = 0; g < sizeof gens / sizeof gens[0]; g++) {
    A = spmv_gen_from_text(gens[g], 7, &err);
    ck_assert_msg(A != NULL, "%s: %s", gens[g], err.msg);
    brute_compare(A);
    spmv_csr_free(A);
  }
}
END_TEST

/* The profile split over threads is the same, to the bit, for any count
 * of threads, empty blocks included, whichever bitmaps its diagonals go
 * to: the shared one (banded, and the small rmat and dc1like, whose few
 * words are not scattered), the blocks' own (the scattered pattern of a
 * random matrix), or the shared one again where the blocks' own would take
 * more memory than the columns (a wide random matrix of few entries). */
START_TEST(threads_same_bits)
{
  static const char *const gens[] = {
    "banded n=20000 w=3 b=40",
    "rmat scale=12 ef=8",
    "dc1like n=4000 lambda=3 long=1500,3999",
    "random rows=20000 k=8",
    "random rows=2000 cols=4000000 k=3",
  };
  static const int threads[] = {2, 3, 7, 16, 100};
  struct spmv_error err;
  struct spmv_profile one, many;

  for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
    struct spmv_csr *A = spmv_gen_from_text(gens[g], 3, &err);
    ck_assert_msg(A != NULL, "%s: %s", gens[g], err.msg);
    ck_assert_int_eq(spmv_profile_compute(A, &one, &err), 0);
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
      ck_assert_int_eq(spmv_profile_compute_threads(A, &many, threads[t], &err), 0);
      ck_assert_msg(memcmp(&one, &many, sizeof one) == 0,
                    "%s: %d threads give another profile", gens[g], threads[t]);
    }
    spmv_csr_free(A);
  }
}
END_TEST

/* ---- fingerprints ------------------------------------------------------- */

/* The fingerprint of A by an independent route: one buffer, one-shot XXH3. */
static void reference_print(const struct spmv_csr *A,
                            struct spmv_fingerprint *fp)
{
  size_t n = 24 + (size_t)(A->rows + 1) * 8 + (size_t)A->nnz * 4, o = 0;
  unsigned char *buf = malloc(n);
  int64_t head[3] = { A->rows, A->cols, A->nnz }, i;
  XXH128_hash_t h;
  int b;

  ck_assert_ptr_nonnull(buf);
  for (i = 0; i < 3; i++)
    for (b = 0; b < 8; b++)
      buf[o++] = (unsigned char)((uint64_t)head[i] >> (8 * b));
  for (i = 0; i <= A->rows; i++)
    for (b = 0; b < 8; b++)
      buf[o++] = (unsigned char)((uint64_t)A->row_ptr[i] >> (8 * b));
  for (i = 0; i < A->nnz; i++)
    for (b = 0; b < 4; b++)
      buf[o++] = (unsigned char)((uint32_t)A->col_idx[i] >> (8 * b));
  h = XXH3_128bits(buf, n);
  fp->hi = h.high64;
  fp->lo = h.low64;
  free(buf);
}

/* Returns 1 when two fingerprints are equal. */
static int same(const struct spmv_fingerprint *a,
                const struct spmv_fingerprint *b)
{
  return a->hi == b->hi && a->lo == b->lo;
}

START_TEST(fingerprint_reference)
{
  struct spmv_fingerprint a, b;
  struct spmv_csr *A = hand();
  struct spmv_csr *B = spmv_gen_random(3000, 3000, 9, 1, NULL);

  spmv_fingerprint_compute(A, &a);
  reference_print(A, &b);
  ck_assert(same(&a, &b));
  ck_assert_ptr_nonnull(B);
  spmv_fingerprint_compute(B, &a);
  reference_print(B, &b);
  ck_assert(same(&a, &b));
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

START_TEST(fingerprint_structure_only)
{
  struct spmv_csr *A = hand(), *B;
  struct spmv_fingerprint fa, fb;
  static const int64_t rp7[] = { 0, 3, 3, 4, 6, 14, 15, 15 };
  static const int32_t ci[] = { 0, 1, 2, 2, 50, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                0 };

  spmv_fingerprint_compute(A, &fa);
  /* New values: same print. */
  B = spmv_csr_dup(A);
  spmv_gen_fill_values(B, 99);
  spmv_fingerprint_compute(B, &fb);
  ck_assert(same(&fa, &fb));
  /* One moved column. */
  B->col_idx[7] = 12;
  spmv_fingerprint_compute(B, &fb);
  ck_assert(!same(&fa, &fb));
  /* The same entries in another order within a row. */
  B->col_idx[7] = 5;
  B->col_idx[4] = 3;
  B->col_idx[5] = 50;
  spmv_fingerprint_compute(B, &fb);
  ck_assert(!same(&fa, &fb));
  spmv_csr_free(B);
  /* The same arrays with another column count. */
  B = spmv_csr_dup(A);
  B->cols = 65;
  spmv_fingerprint_compute(B, &fb);
  ck_assert(!same(&fa, &fb));
  spmv_csr_free(B);
  /* One extra (empty) row. */
  B = build(7, 64, rp7, ci);
  spmv_fingerprint_compute(B, &fb);
  ck_assert(!same(&fa, &fb));
  spmv_csr_free(B);
  /* An entry moved from one row to the next. */
  B = spmv_csr_dup(A);
  B->row_ptr[1] = 2;
  spmv_fingerprint_compute(B, &fb);
  ck_assert(!same(&fa, &fb));
  spmv_csr_free(B);
  spmv_csr_free(A);
}
END_TEST

START_TEST(fingerprint_hex)
{
  struct spmv_fingerprint fp = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
  struct spmv_fingerprint back;
  char hex[33];

  spmv_fingerprint_hex(&fp, hex);
  ck_assert_str_eq(hex, "0123456789abcdeffedcba9876543210");
  ck_assert_int_eq(spmv_fingerprint_parse(hex, &back), 0);
  ck_assert(same(&fp, &back));
  ck_assert_int_eq(spmv_fingerprint_parse("0123456789ABCDEFFEDCBA9876543210",
                                          &back), 0);
  ck_assert(same(&fp, &back));
  fp.hi = 0;
  fp.lo = 1;
  spmv_fingerprint_hex(&fp, hex);
  ck_assert_str_eq(hex, "00000000000000000000000000000001");
  ck_assert_int_eq(spmv_fingerprint_parse("0123456789abcdeffedcba987654321",
                                          &back), SPMV_EINVAL);
  ck_assert_int_eq(spmv_fingerprint_parse("0123456789abcdeffedcba98765432100",
                                          &back), SPMV_EINVAL);
  ck_assert_int_eq(spmv_fingerprint_parse("0123456789abcdefgedcba9876543210",
                                          &back), SPMV_EINVAL);
  ck_assert_int_eq(spmv_fingerprint_parse(" 123456789abcdeffedcba9876543210",
                                          &back), SPMV_EINVAL);
  ck_assert_int_eq(spmv_fingerprint_parse(NULL, &back), SPMV_EINVAL);
}
END_TEST

/* The suite of the profile and the fingerprint. */
Suite *profile_suite(void)
{
  Suite *s = suite_create("profile");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, hand_statistics);
  tcase_add_test(tc, degenerate);
  tcase_add_test(tc, locality_boundary);
  tcase_add_test(tc, hyb_k_bins);
  tcase_add_test(tc, threads_same_bits);
  tcase_add_test(tc, against_brute_force);
  tcase_add_test(tc, fingerprint_reference);
  tcase_add_test(tc, fingerprint_structure_only);
  tcase_add_test(tc, fingerprint_hex);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(profile_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
