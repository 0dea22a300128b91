/* check_gen.c: generators are deterministic, valid, and hit their numbers. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "spmv_formats.h"
#include "spmv_gen.h"
#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "testdata.h"

Suite *gen_suite(void);

/* Fails the test unless cond; for loops over entries, where ck_assert's
 * per-call bookkeeping would dominate the run time. */
#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond))                                                          \
      ck_abort_msg(__VA_ARGS__);                                          \
  } while (0)

/* Asserts A valid, columns strictly ascending in every row, and (when
 * random_values) every value in [-1, 1) and nonzero. */
static void check_shape(const struct spmv_csr *A, int random_values)
{
  struct spmv_error err;
  int64_t i, k;

  ck_assert_ptr_nonnull(A);
  ck_assert_msg(spmv_csr_validate(A, 0, &err) == 0, "%s", err.msg);
  for (i = 0; i < A->rows; i++)
    for (k = A->row_ptr[i] + 1; k < A->row_ptr[i + 1]; k++)
      CHECK(A->col_idx[k - 1] < A->col_idx[k], "row %lld not strictly "
            "ascending at entry %lld", (long long)i,
            (long long)(k - A->row_ptr[i]));
  for (k = 0; random_values && k < A->nnz; k++)
    CHECK(A->val[k] >= -1.0 && A->val[k] < 1.0 && A->val[k] != 0.0,
          "value %g at %lld", A->val[k], (long long)k);
}

/* Returns A's fingerprint and frees A. */
static struct spmv_fingerprint print_of(struct spmv_csr *A)
{
  struct spmv_fingerprint fp;

  spmv_fingerprint_compute(A, &fp);
  spmv_csr_free(A);
  return fp;
}

/* Descriptions of every random family, small enough to be quick. */
static const char *const families[] = {
  "banded n=3000 w=7 b=20",
  "random rows=2000 cols=1500 k=9",
  "dense rows=40 cols=500 k=30",
  "rmat scale=12 ef=8",
  "rmat scale=11 ef=4 sym=1",
  "pareto rows=4000 alpha=1.8 xmin=2",
  "dc1like n=5000 lambda=4 long=2000,4999",
  "matching rows=3000 mean=16 cv=0.4",
  "matching rows=3000 cols=9000 mean=10 cv=0.5 dist=uniform place=diagonal",
  "matching rows=3000 mean=8 cv=2.5 dist=lognormal",
};
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

START_TEST(deterministic)
{
  const char *text = families[_i];
  struct spmv_error err;
  struct spmv_csr *A, *B;
  struct spmv_fingerprint fa, fb, fc;

  A = spmv_gen_from_text(text, 11, &err);
  ck_assert_msg(A != NULL, "%s: %s", text, err.msg);
  check_shape(A, 1);
  B = spmv_gen_from_text(text, 11, &err);
  ck_assert_ptr_nonnull(B);
  ck_assert_int_eq(A->nnz, B->nnz);
  ck_assert_mem_eq(A->val, B->val, (size_t)A->nnz * sizeof *A->val);
  fa = print_of(A);
  fb = print_of(B);
  ck_assert(fa.hi == fb.hi && fa.lo == fb.lo);
  fc = print_of(spmv_gen_from_text(text, 12, &err));
  ck_assert_msg(fa.hi != fc.hi || fa.lo != fc.lo,
                "%s: seed 12 gave seed 11's structure", text);
}
END_TEST

START_TEST(stencils)
{
  struct spmv_csr *A;
  int64_t i, k, n;
  double sum;

  /* nnz of a 5-point stencil: 5 n^2 - 4 n; 9-point: (3n - 2)^2; 7-point:
   * 7 n^3 - 6 n^2; 27-point: (3n - 2)^3. */
  static const struct { int64_t nz; int points; int64_t nnz; } cases[] = {
    { 0, 5, 460 }, { 0, 9, 784 }, { 5, 7, 725 }, { 5, 27, 2197 },
  };
  size_t c;

  for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    A = cases[c].nz == 0 ? spmv_gen_stencil2d(10, 10, cases[c].points, NULL)
      : spmv_gen_stencil3d(5, 5, cases[c].nz, cases[c].points, NULL);
    check_shape(A, 0);
    ck_assert_int_eq(A->rows, cases[c].nz == 0 ? 100 : 125);
    ck_assert_int_eq(A->nnz, cases[c].nnz);
    spmv_csr_free(A);
  }
  /* Laplacian: diagonal 26, neighbours -1; an interior row sums to 0. */
  A = spmv_gen_stencil3d(5, 5, 5, 27, NULL);
  for (i = 0; i < A->rows; i++) {
    sum = 0.0;
    n = A->row_ptr[i + 1] - A->row_ptr[i];
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      CHECK(A->val[k] == (A->col_idx[k] == i ? 26.0 : -1.0),
            "value %g in row %lld", A->val[k], (long long)i);
      sum += A->val[k];
    }
    if (n == 27)
      ck_assert(sum == 0.0);
  }
  spmv_csr_free(A);
  /* Rectangular grid, x fastest: row 0's neighbours are 1 and nx. */
  A = spmv_gen_stencil2d(7, 3, 5, NULL);
  check_shape(A, 0);
  ck_assert_int_eq(A->row_ptr[1], 3);
  ck_assert_int_eq(A->col_idx[0], 0);
  ck_assert_int_eq(A->col_idx[1], 1);
  ck_assert_int_eq(A->col_idx[2], 7);
  ck_assert(A->val[0] == 4.0);
  spmv_csr_free(A);
}
END_TEST

START_TEST(banded_random_dense)
{
  struct spmv_csr *A;
  int64_t i, k, *count;

  A = spmv_gen_banded(1000, 5, 3, 1, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->row_ptr[1], 4);  /* window [0, 3] */
  for (i = 0; i < A->rows; i++) {
    CHECK(A->row_ptr[i + 1] - A->row_ptr[i] == (i == 0 || i == 999 ? 4 : 5),
          "row %lld", (long long)i);
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      CHECK(llabs(A->col_idx[k] - i) <= 3, "row %lld", (long long)i);
  }
  spmv_csr_free(A);
  /* w = 2b + 1 fills the band. */
  A = spmv_gen_banded(50, 5, 2, 1, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->nnz, 5 * 50 - 6);
  spmv_csr_free(A);

  /* 7 of 500 columns per row: every column used about 14 times. */
  A = spmv_gen_random(1000, 500, 7, 3, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->nnz, 7000);
  count = calloc(500, sizeof *count);
  for (k = 0; k < A->nnz; k++)
    count[A->col_idx[k]]++;
  for (i = 0; i < 500; i++)
    CHECK(count[i] >= 1 && count[i] <= 40, "column %lld used %lld times",
          (long long)i, (long long)count[i]);
  free(count);
  spmv_csr_free(A);
  /* Dense sampling path (k > cols / 2) and full rows. */
  A = spmv_gen_random(300, 40, 30, 3, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->nnz, 9000);
  spmv_csr_free(A);
  A = spmv_gen_random(5, 40, 40, 3, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->col_idx[39], 39);
  spmv_csr_free(A);

  A = spmv_gen_dense(50, 200, 20, 5, NULL);
  check_shape(A, 1);
  for (i = 1; i < 50; i++)
    CHECK(memcmp(A->col_idx + 20 * i, A->col_idx, 20 * sizeof(int32_t)) == 0,
          "row %lld", (long long)i);
  spmv_csr_free(A);
  A = spmv_gen_dense(3, 4, 4, 5, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->nnz, 12);
  spmv_csr_free(A);
}
END_TEST

START_TEST(rmat)
{
  struct spmv_csr *A;
  struct spmv_profile p;
  int64_t i, k, j;
  int found;

  A = spmv_gen_rmat(12, 16, SPMV_GEN_RMAT_A, SPMV_GEN_RMAT_B,
                    SPMV_GEN_RMAT_C, 0, 1, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->rows, 4096);
  ck_assert_int_le(A->nnz, 16 * 4096);
  ck_assert_int_gt(A->nnz, 8 * 4096);  /* duplicates merged, most kept */
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_msg(p.rl_cv > 2.0, "cv %g: not skewed", p.rl_cv);
  ck_assert_int_gt(p.rl_max, 20 * (int64_t)p.rl_mean);
  ck_assert_int_gt(p.empty_rows, 0);
  spmv_csr_free(A);

  /* Symmetric: (i, j) stored iff (j, i) is. */
  A = spmv_gen_rmat(10, 8, SPMV_GEN_RMAT_A, SPMV_GEN_RMAT_B,
                    SPMV_GEN_RMAT_C, 1, 2, NULL);
  check_shape(A, 1);
  for (i = 0; i < A->rows; i++) {
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      j = A->col_idx[k];
      found = 0;
      for (int64_t m = A->row_ptr[j]; m < A->row_ptr[j + 1]; m++)
        found |= A->col_idx[m] == i;
      CHECK(found, "(%lld, %lld) without its mirror", (long long)i,
            (long long)j);
    }
  }
  spmv_csr_free(A);

  /* a = 1: every edge in quadrant A, i.e. vertex 0 (relabelled): one entry. */
  A = spmv_gen_rmat(8, 4, 1.0, 0.0, 0.0, 0, 3, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->nnz, 1);
  spmv_csr_free(A);
}
END_TEST

START_TEST(pareto)
{
  struct spmv_csr *A = spmv_gen_pareto(20000, 20000, 2.0, 2.0, 4, NULL);
  struct spmv_profile p;

  check_shape(A, 1);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_ge(p.rl_min, 2);
  /* E[floor(X)] for Pareto(xmin 2, alpha 2): 4 less about one half. */
  ck_assert_msg(p.rl_mean > 3.0 && p.rl_mean < 4.0, "mean %g", p.rl_mean);
  ck_assert_int_gt(p.rl_max, 50);
  spmv_csr_free(A);
  /* Capped at cols. */
  A = spmv_gen_pareto(2000, 30, 1.0, 0.3, 4, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_int_eq(p.rl_max, 30);
  spmv_csr_free(A);
}
END_TEST

START_TEST(dc1like)
{
  const int64_t lens[] = SPMV_GEN_DC1_LONG;
  struct spmv_csr *A;
  struct spmv_profile p;
  int64_t i, k, len, seen47 = 0, seen114 = 0;
  int diag;

  A = spmv_gen_dc1like(SPMV_GEN_DC1_ROWS, SPMV_GEN_DC1_LAMBDA,
                       SPMV_GEN_DC1_NLONG, lens, 8, NULL);
  check_shape(A, 1);
  ck_assert_int_eq(A->rows, 116835);
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_msg(fabs(p.rl_mean - 6.6) < 0.2, "mean %g", p.rl_mean);
  ck_assert_int_eq(p.rl_max, 114190);
  for (i = 0; i < A->rows; i++) {
    len = A->row_ptr[i + 1] - A->row_ptr[i];
    seen47 += len == 47193;
    seen114 += len == 114190;
    if (len >= 1000)
      continue;
    CHECK(len >= 1, "row %lld empty", (long long)i);
    for (diag = 0, k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      diag |= A->col_idx[k] == i;
    CHECK(diag, "short row %lld lacks its diagonal", (long long)i);
  }
  ck_assert_int_eq(seen47, 1);
  ck_assert_int_eq(seen114, 1);
  spmv_csr_free(A);
}
END_TEST

/* Generates rows x mean with cv under dist and checks the statistics. */
static void check_matching(int64_t rows, int64_t cols, double mean, double cv,
                           enum spmv_gen_dist dist, enum spmv_gen_place place,
                           double cv_tol)
{
  struct spmv_gen_spec spec = { rows, cols, mean, cv, dist, place };
  struct spmv_error err;
  struct spmv_csr *A = spmv_gen_matching(&spec, 21, &err);
  struct spmv_profile p;
  int64_t i, k, c = cols > 0 ? cols : rows, centre, len;

  ck_assert_msg(A != NULL, "%s", err.msg);
  check_shape(A, 1);
  ck_assert_int_eq(A->rows, rows);
  ck_assert_int_eq(A->cols, c);
  ck_assert_int_eq(A->nnz, llround((double)rows * mean));
  ck_assert_int_eq(spmv_profile_compute(A, &p, NULL), 0);
  ck_assert_msg(fabs(p.rl_cv - cv) <= cv_tol, "dist %d mean %g: cv %g, "
                "asked %g", (int)dist, mean, p.rl_cv, cv);
  for (i = 0; place == SPMV_GEN_DIAGONAL && i < rows; i++) {
    centre = i * c / rows;
    len = A->row_ptr[i + 1] - A->row_ptr[i];
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      CHECK(llabs(A->col_idx[k] - centre) <= 2 * len, "row %lld",
            (long long)i);
  }
  spmv_csr_free(A);
}

START_TEST(matching)
{
  /* The predictor's calibration: normal and uniform lengths of mean P. */
  check_matching(6000, 0, 16, 0.3, SPMV_GEN_NORMAL, SPMV_GEN_RANDOM, 0.02);
  check_matching(6000, 0, 16, 0.3, SPMV_GEN_UNIFORM, SPMV_GEN_RANDOM, 0.02);
  check_matching(3000, 0, 256, 0.1, SPMV_GEN_NORMAL, SPMV_GEN_DIAGONAL, 0.01);
  check_matching(3000, 0, 256, 0.5, SPMV_GEN_UNIFORM, SPMV_GEN_DIAGONAL, 0.02);
  /* cv 0 at mean 4.5: half the rows 4, half 5, cv 0.5 / 4.5. */
  check_matching(4000, 9000, 4.5, 0.0, SPMV_GEN_NORMAL, SPMV_GEN_RANDOM, 0.112);
  /* High cv (ELLR-T's Table 1 reaches cv > 1): log-normal. */
  check_matching(20000, 0, 10, 1.5, SPMV_GEN_LOGNORMAL, SPMV_GEN_RANDOM, 0.25);
  /* Every row full (mean = cols): cv 0, whatever was asked. */
  check_matching(50, 20, 20, 0.5, SPMV_GEN_NORMAL, SPMV_GEN_RANDOM, 0.5);
  /* Empty. */
  check_matching(10, 5, 0, 1, SPMV_GEN_UNIFORM, SPMV_GEN_RANDOM, 1.0);
}
END_TEST

/* Orders (offset, value) pairs by offset, then value, for qsort. */
static int cmp_pair(const void *a, const void *b)
{
  const double *x = a, *y = b;

  if (x[0] != y[0])
    return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Hashes each row's (offset from the diagonal modulo modulus, value) pairs
 * in offset order; each hash is written copies times. */
static uint64_t *row_signatures(const struct spmv_csr *A, int64_t modulus,
                                int64_t copies)
{
  uint64_t *sig = malloc((size_t)(A->rows * copies + 1) * sizeof *sig);
  double *pairs = malloc((size_t)(2 * A->nnz + 2) * sizeof *pairs);
  int64_t i, k, n, c;

  ck_assert(sig != NULL && pairs != NULL);
  for (i = 0; i < A->rows; i++) {
    n = 0;
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++, n++) {
      pairs[2 * n] = (double)(((A->col_idx[k] - i) % modulus + modulus) %
                              modulus);
      pairs[2 * n + 1] = A->val[k];
    }
    qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_pair);
    for (c = 0; c < copies; c++)
      sig[i * copies + c] = XXH64(pairs, (size_t)n * 2 * sizeof *pairs, 0);
  }
  free(pairs);
  return sig;
}

/* Orders uint64 values for qsort. */
static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return x < y ? -1 : x > y;
}

/* Tiles square A k times in blocks of b rows and checks every row is one of
 * A's rows moved along the diagonal, each exactly k times. */
static void check_tile(const struct spmv_csr *A, int64_t k, int64_t b)
{
  struct spmv_csr *T = spmv_gen_tile(A, k, b, 5, NULL);
  uint64_t *want, *got;
  int64_t n;

  check_shape(T, 0);
  ck_assert_int_eq(T->rows, k * A->rows);
  ck_assert_int_eq(T->cols, k * A->cols);
  ck_assert_int_eq(T->nnz, k * A->nnz);
  n = T->rows;
  want = row_signatures(A, T->cols, k);
  got = row_signatures(T, T->cols, 1);
  qsort(want, (size_t)n, sizeof *want, cmp_u64);
  qsort(got, (size_t)n, sizeof *got, cmp_u64);
  ck_assert_mem_eq(want, got, (size_t)n * sizeof *want);
  free(want);
  free(got);
  spmv_csr_free(T);
}

/* A real matrix of the test data. */
static struct spmv_csr *real_matrix(void)
{
  struct spmv_csr *A = NULL;
  struct spmv_error err;
  char path[4096];

  ck_assert_msg(testdata_path("bcspwr10.mtx", path, sizeof path) == 0,
                "%s: not found", path);
  ck_assert_msg(spmv_mmio_read(path, &A, NULL, &err) == 0, "%s: %s", path,
                err.msg);
  return A;
}

START_TEST(tile)
{
  struct spmv_csr *A = real_matrix(), *T;
  struct spmv_fingerprint f1, f2, f3;
  int64_t i, k, c;

  ck_assert_ptr_nonnull(A);
  ck_assert_int_eq(A->rows, A->cols);
  check_tile(A, 1, 0);
  check_tile(A, 3, 0);
  check_tile(A, 4, 64);
  check_tile(A, 2, 1);
  check_tile(A, 3, A->rows - 1);
  /* Whole copies: block diagonal, copy c holding A shifted by c. */
  T = spmv_gen_tile(A, 3, 0, 9, NULL);
  ck_assert_ptr_nonnull(T);
  for (i = 0; i < T->rows; i++) {
    c = i / A->rows;
    CHECK(T->row_ptr[i + 1] - T->row_ptr[i] ==
          A->row_ptr[i % A->rows + 1] - A->row_ptr[i % A->rows],
          "row %lld", (long long)i);
    for (k = T->row_ptr[i]; k < T->row_ptr[i + 1]; k++)
      CHECK(T->col_idx[k] / A->cols == c, "row %lld", (long long)i);
  }
  spmv_csr_free(T);
  /* Block order follows the seed. */
  f1 = print_of(spmv_gen_tile(A, 4, 100, 1, NULL));
  f2 = print_of(spmv_gen_tile(A, 4, 100, 1, NULL));
  f3 = print_of(spmv_gen_tile(A, 4, 100, 2, NULL));
  ck_assert(f1.hi == f2.hi && f1.lo == f2.lo);
  ck_assert(f1.hi != f3.hi || f1.lo != f3.lo);
  spmv_csr_free(A);
}
END_TEST

START_TEST(tile_rectangular)
{
  struct spmv_csr *A = spmv_gen_random(30, 70, 6, 2, NULL);
  struct spmv_csr *T = spmv_gen_tile(A, 5, 4, 3, NULL);
  struct spmv_profile pa, pt;

  check_shape(T, 1);
  ck_assert_int_eq(T->rows, 150);
  ck_assert_int_eq(T->cols, 350);
  ck_assert_int_eq(spmv_profile_compute(A, &pa, NULL), 0);
  ck_assert_int_eq(spmv_profile_compute(T, &pt, NULL), 0);
  ck_assert_double_eq_tol(pt.rl_mean, pa.rl_mean, 1e-12);
  ck_assert_double_eq_tol(pt.rl_sigma, pa.rl_sigma, 1e-12);
  spmv_csr_free(T);
  spmv_csr_free(A);
}
END_TEST

/* Blocks: each entry of a random pattern a dense b x b block, the columns
 * sorted, every entry's block in the pattern; BSR takes b back. */
START_TEST(blocks)
{
  struct spmv_csr *P = spmv_gen_random(30, 20, 4, 2, NULL);
  struct spmv_csr *T = spmv_gen_blocks(P, 3, 7, NULL);
  int64_t i, k, j;

  check_shape(T, 1);
  ck_assert(T->rows == 90 && T->cols == 60 && T->nnz == 9 * P->nnz);
  for (i = 0; i < T->rows; i++) {
    ck_assert_int_eq(T->row_ptr[i + 1] - T->row_ptr[i],
                     3 * (P->row_ptr[i / 3 + 1] - P->row_ptr[i / 3]));
    for (k = T->row_ptr[i]; k < T->row_ptr[i + 1]; k++) {
      int found = 0;

      for (j = P->row_ptr[i / 3]; j < P->row_ptr[i / 3 + 1]; j++)
        found |= P->col_idx[j] == T->col_idx[k] / 3;
      ck_assert(found);
    }
  }
  ck_assert_int_eq(spmv_bsr_dim(T, NULL), 3);
  spmv_csr_free(T);
  spmv_csr_free(P);
}
END_TEST

/* Asserts that a call returned NULL with code and a message holding part. */
static void refused(struct spmv_csr *A, const struct spmv_error *err,
                    int code, const char *part)
{
  ck_assert_ptr_null(A);
  ck_assert_int_eq(err->code, code);
  ck_assert_msg(strstr(err->msg, part) != NULL, "message \"%s\" lacks "
                "\"%s\"", err->msg, part);
}

START_TEST(bad_arguments)
{
  struct spmv_gen_spec spec = { 10, 0, 20, 0, SPMV_GEN_NORMAL,
                                SPMV_GEN_RANDOM };
  const int64_t big[] = { 11 };
  struct spmv_csr *A;
  struct spmv_error e;

  refused(spmv_gen_stencil2d(10, 10, 7, &e), &e, SPMV_EINVAL, "use 5 or 9");
  refused(spmv_gen_stencil3d(10, 10, 10, 9, &e), &e, SPMV_EINVAL,
          "use 7 or 27");
  refused(spmv_gen_stencil2d(0, 10, 5, &e), &e, SPMV_EINVAL, "empty side");
  refused(spmv_gen_stencil2d(100000, 100000, 5, &e), &e, SPMV_ETOOBIG,
          "more than 2147483647 points");
  refused(spmv_gen_banded(10, 8, 3, 1, &e), &e, SPMV_EINVAL, "w = 8");
  refused(spmv_gen_banded(-5, 1, 0, 1, &e), &e, SPMV_EINVAL, "negative");
  refused(spmv_gen_random(10, 5, 6, 1, &e), &e, SPMV_EINVAL, "k = 6");
  refused(spmv_gen_random(10, (int64_t)1 << 32, 1, 1, &e), &e, SPMV_ETOOBIG,
          "32-bit");
  refused(spmv_gen_dense(10, 5, -1, 1, &e), &e, SPMV_EINVAL, "k = -1");
  refused(spmv_gen_rmat(0, 16, 0.57, 0.19, 0.19, 0, 1, &e), &e, SPMV_EINVAL,
          "scale 0");
  refused(spmv_gen_rmat(10, 16, 0.6, 0.3, 0.3, 0, 1, &e), &e, SPMV_EINVAL,
          "a + b + c <= 1");
  refused(spmv_gen_rmat(10, 0, 0.57, 0.19, 0.19, 0, 1, &e), &e, SPMV_EINVAL,
          "edgefactor 0");
  refused(spmv_gen_pareto(10, 10, 2, 0, 1, &e), &e, SPMV_EINVAL, "alpha");
  refused(spmv_gen_pareto(10, 10, 20, 1, 1, &e), &e, SPMV_EINVAL, "xmin");
  refused(spmv_gen_dc1like(10, -1, 0, NULL, 1, &e), &e, SPMV_EINVAL,
          "lambda = -1");
  refused(spmv_gen_dc1like(10, 1, 1, big, 1, &e), &e, SPMV_EINVAL,
          "length 11");
  refused(spmv_gen_dc1like(10, 1, 11, big, 1, &e), &e, SPMV_EINVAL,
          "11 long rows");
  refused(spmv_gen_matching(&spec, 1, &e), &e, SPMV_EINVAL, "mean = 20");
  spec.mean = 2;
  spec.cv = -1;
  refused(spmv_gen_matching(&spec, 1, &e), &e, SPMV_EINVAL, "cv = -1");
  refused(spmv_gen_matching(NULL, 1, &e), &e, SPMV_EINVAL, "no spec");
  refused(spmv_gen_tile(NULL, 2, 0, 1, &e), &e, SPMV_EINVAL, "no matrix");
  A = spmv_gen_random(10, 10, 2, 1, NULL);
  refused(spmv_gen_tile(A, 0, 0, 1, &e), &e, SPMV_EINVAL, "k = 0");
  refused(spmv_gen_tile(A, (int64_t)1 << 30, 0, 1, &e), &e, SPMV_ETOOBIG,
          "32-bit");
  A->col_idx[0] = 10;
  refused(spmv_gen_tile(A, 2, 0, 1, &e), &e, SPMV_ECSR, "column index 10");
  refused(spmv_gen_blocks(A, 2, 1, &e), &e, SPMV_ECSR, "column index 10");
  A->col_idx[0] = 0;
  refused(spmv_gen_blocks(A, 0, 1, &e), &e, SPMV_EINVAL, "need b >= 1");
  refused(spmv_gen_blocks(A, (int64_t)1 << 30, 1, &e), &e, SPMV_ETOOBIG,
          "blocks of 1073741824");
  refused(spmv_gen_blocks(NULL, 2, 1, &e), &e, SPMV_EINVAL, "no matrix");
  spmv_csr_free(A);
}
END_TEST

START_TEST(text)
{
  struct spmv_gen_spec spec = { 500, 0, 7, 0.5, SPMV_GEN_UNIFORM,
                                SPMV_GEN_DIAGONAL };
  const int64_t lens[] = { 100, 250 };
  struct spmv_fingerprint a, b;
  struct spmv_error e;

  /* Text and direct calls give the same matrices. */
#define SAME(text, call) do {                                            \
    a = print_of(spmv_gen_from_text(text, 3, &e));                       \
    b = print_of(call);                                                  \
    ck_assert_msg(a.hi == b.hi && a.lo == b.lo, "%s", text);             \
  } while (0)
  SAME("stencil2d nx=9 ny=4", spmv_gen_stencil2d(9, 4, 5, NULL));
  SAME("stencil3d nz=3 ny=4 nx=5 points=27",
       spmv_gen_stencil3d(5, 4, 3, 27, NULL));
  SAME("banded n=90 w=3 b=4", spmv_gen_banded(90, 3, 4, 3, NULL));
  SAME("random rows=40 k=3", spmv_gen_random(40, 40, 3, 3, NULL));
  SAME("dense rows=40 cols=9 k=3", spmv_gen_dense(40, 9, 3, 3, NULL));
  SAME("rmat scale=9", spmv_gen_rmat(9, 16, 0.57, 0.19, 0.19, 0, 3, NULL));
  SAME("pareto rows=60 alpha=1.5", spmv_gen_pareto(60, 60, 1, 1.5, 3, NULL));
  SAME("dc1like n=300 lambda=2 long=100,250",
       spmv_gen_dc1like(300, 2, 2, lens, 3, NULL));
  SAME("matching rows=500 mean=7 cv=0.5 dist=uniform place=diagonal",
       spmv_gen_matching(&spec, 3, NULL));
#undef SAME
  refused(spmv_gen_from_text("stencil2d nx=9", 1, &e), &e, SPMV_EINVAL,
          "stencil2d needs ny=");
  refused(spmv_gen_from_text("rmat scale=9 efx=3", 1, &e), &e, SPMV_EINVAL,
          "bad token \"efx=3\": rmat takes no key \"efx\"");
  refused(spmv_gen_from_text("rmat scale=9 scale=10", 1, &e), &e,
          SPMV_EINVAL, "bad token \"scale=10\": key given twice");
  refused(spmv_gen_from_text("rmat scale=-9", 1, &e), &e, SPMV_EINVAL,
          "bad token \"scale=-9\"");
  refused(spmv_gen_from_text("matching rows=9 mean=2 dist=poisson", 1, &e),
          &e, SPMV_EINVAL, "bad token \"dist=poisson\": unknown value");
  refused(spmv_gen_from_text("dc1like long=5,x", 1, &e), &e, SPMV_EINVAL,
          "bad token \"long=5,x\"");
  refused(spmv_gen_from_text("rmat scale=100", 1, &e), &e, SPMV_EINVAL,
          "scale 100 not in [1, 30]");
  refused(spmv_gen_from_text("stencil2d nx=3 ny=3 points=4294967301", 1, &e),
          &e, SPMV_EINVAL, "2D stencil of 2147483647 points");
  refused(spmv_gen_from_text("kron scale=3", 1, &e), &e, SPMV_EINVAL,
          "bad token \"kron\": unknown generator");
  refused(spmv_gen_from_text("random rows=5 k", 1, &e), &e, SPMV_EINVAL,
          "bad token \"k\": expected key=value");
  refused(spmv_gen_from_text("", 1, &e), &e, SPMV_EINVAL, "empty");
  refused(spmv_gen_from_text(NULL, 1, &e), &e, SPMV_EINVAL, "no generator");

  /* The names the parser reads, as progress messages print them: a
   * matrix named by them is the matrix of those values. */
  spec.dist = SPMV_GEN_LOGNORMAL;
  spec.place = SPMV_GEN_DIAGONAL;
  char line[160];
  snprintf(line, sizeof line, "matching rows=500 mean=7 cv=0.5 dist=%s place=%s",
           spmv_gen_dist_name(spec.dist), spmv_gen_place_name(spec.place));
  ck_assert_str_eq(line, "matching rows=500 mean=7 cv=0.5 dist=lognormal "
                         "place=diagonal");
  a = print_of(spmv_gen_from_text(line, 3, &e));
  b = print_of(spmv_gen_matching(&spec, 3, NULL));
  ck_assert(a.hi == b.hi && a.lo == b.lo);
  ck_assert_str_eq(spmv_gen_dist_name(SPMV_GEN_NORMAL), "normal");
  ck_assert_str_eq(spmv_gen_dist_name(SPMV_GEN_UNIFORM), "uniform");
  ck_assert_str_eq(spmv_gen_place_name(SPMV_GEN_RANDOM), "random");
  ck_assert_str_eq(spmv_gen_dist_name((enum spmv_gen_dist)7), "?");
  ck_assert_str_eq(spmv_gen_place_name((enum spmv_gen_place)-1), "?");
}
END_TEST

START_TEST(values_and_vectors)
{
  double x[1000], y[1000];
  int i, neg = 0;

  spmv_gen_vector(x, 1000, 5);
  spmv_gen_vector(y, 1000, 5);
  ck_assert_mem_eq(x, y, sizeof x);
  for (i = 0; i < 1000; i++) {
    CHECK(x[i] >= -1.0 && x[i] < 1.0 && x[i] != 0.0, "x[%d] = %g", i, x[i]);
    neg += x[i] < 0;
  }
  ck_assert(neg > 400 && neg < 600);
  spmv_gen_vector(y, 1000, 6);
  ck_assert(memcmp(x, y, sizeof x) != 0);
}
END_TEST

/* The suite of the generators. */
Suite *gen_suite(void)
{
  Suite *s = suite_create("gen");
  TCase *tc = tcase_create("core");

  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, deterministic, 0, NFAMILIES);
  tcase_add_test(tc, stencils);
  tcase_add_test(tc, banded_random_dense);
  tcase_add_test(tc, rmat);
  tcase_add_test(tc, pareto);
  tcase_add_test(tc, dc1like);
  tcase_add_test(tc, matching);
  tcase_add_test(tc, tile);
  tcase_add_test(tc, tile_rectangular);
  tcase_add_test(tc, blocks);
  tcase_add_test(tc, bad_arguments);
  tcase_add_test(tc, text);
  tcase_add_test(tc, values_and_vectors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(gen_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
