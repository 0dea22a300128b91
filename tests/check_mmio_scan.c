/* check_mmio_scan.c: the Matrix Market reader's number scanners against
 * strtod, and random matrices read against a dense accumulation (split from
 * check_mmio.c, which tests the reader on files). */
#include "config.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "spmv_mmio.h"
#include "spmv_mmio_scan.h"
#include "mmio_common.h"

/* ------------------------------------------------------------------ */
/* Scanners against strtod                                            */
/* ------------------------------------------------------------------ */

/* A deterministic generator (xorshift64*). */
static uint64_t rng_next(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Scans token with mmio_scan_double; checks the result equals strtod's. */
static void check_token(const char *tok, locale_t loc)
{
  const char *p = tok, *end = tok + strlen(tok);
  char *stop;
  double want = strtod(tok, &stop), got = 0;
  int rc = mmio_scan_double(&p, end, loc, &got);

  if (*stop != '\0')
    ck_abort_msg("test token '%s' is not a full strtod number", tok);
  if (rc != MMIO_SCAN_OK || p != end)
    ck_abort_msg("'%s' refused (rc %d)", tok, rc);
  if (memcmp(&got, &want, sizeof got) != 0 && !(isnan(got) && isnan(want)))
    ck_abort_msg("'%s': got %a, strtod %a", tok, got, want);

  /* Inside a line: the scan stops at the blank, whatever follows it. */
  {
    static const char tails[3][12] = { " 12345678\n", "\t9", "\r\n1 2 3.25" };
    char line[160];
    size_t n = strlen(tok);
    int t;

    for (t = 0; t < 3; t++) {
      double inner = 0;
      memcpy(line, tok, n);
      memcpy(line + n, tails[t], strlen(tails[t]));
      p = line;
      rc = mmio_scan_double(&p, line + n + strlen(tails[t]), loc, &inner);
      if (rc != MMIO_SCAN_OK || p != line + n ||
          (memcmp(&inner, &want, sizeof inner) != 0 && !(isnan(inner) && isnan(want))))
        ck_abort_msg("'%s' followed by a blank: rc %d, %a", tok, rc, inner);
    }
  }
}

START_TEST(test_scan_double)
{
  static const char *const fixed[] = {
    "0", "-0", "+0", "0.0", "-0.0e5", "1", "-1", "1.", ".5", "-.5", "1e0", "1E+2",
    "1e-2", "123456789012345678", "9007199254740992", "9007199254740993",
    "9007199254740994", "1e22", "1e23", "9e22", "1.5e22", "4.5e37", "123e30",
    "1e-22", "1e-23", "4.9e-324", "2.4703282292062327e-324", "5e-324",
    "2.2250738585072011e-308", "2.2250738585072014e-308", "1.7976931348623157e308",
    "1.7976931348623159e308", "1e309", "-1e400", "1e-400", "0.1", "0.2", "0.3",
    "3.141592653589793", "2.718281828459045235360287", "1.0000000000000002",
    "0.000000000000000000000000000000000001", "100000000000000000000000",
    "7.2057594037927933e16", "1.2345678901234567890123e-5", "-.58580362E+00",
    "26666666.66228", "nan", "NaN", "-nan", "inf", "-Inf", "INFINITY",
    "00000000000000000000000000001", "0.00000000000000000000000000001e29",
    "1e00000000000000000000000005", "1e-99999999999999999999",
  };
  static const char *const refused[] = {
    "", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "--1", "+-1", "1x", "0x10",
    "-0X1p3", "1,5", "nanx", "1e5e5", "1..2", "1.5\xff", "123456789\xfa",
    "1234567\x80", "0.12345678901234567:", "12345678901234567890x",
  };
  locale_t loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  uint64_t s = 0x9E3779B97F4A7C15ULL;
  char tok[128];
  size_t i;
  int k;

  ck_assert_ptr_nonnull(loc);
  for (i = 0; i < sizeof fixed / sizeof *fixed; i++)
    check_token(fixed[i], loc);
  for (i = 0; i < sizeof refused / sizeof *refused; i++) {
    const char *p = refused[i];
    double d;
    ck_assert_msg(mmio_scan_double(&p, p + strlen(p), loc, &d) != MMIO_SCAN_OK,
                  "'%s' accepted", refused[i]);
    ck_assert_ptr_eq(p, refused[i]);
  }
  /* Random bit patterns printed the ways writers print them. */
  for (k = 0; k < 60000; k++) {
    uint64_t bits = rng_next(&s);
    double d;
    memcpy(&d, &bits, sizeof d);
    if (!isfinite(d))
      continue;
    switch (k % 6) {
    case 0: snprintf(tok, sizeof tok, "%.17g", d); break;
    case 1: snprintf(tok, sizeof tok, "%.16e", d); break;
    case 2: snprintf(tok, sizeof tok, "%.15g", d); break;
    case 3: snprintf(tok, sizeof tok, "%.6g", d); break;
    case 4: snprintf(tok, sizeof tok, "%.13E", fmod(d, 1e6)); break;
    default: snprintf(tok, sizeof tok, "%.12f", fmod(d, 1e4)); break;
    }
    check_token(tok, loc);
  }
  /* Random decimal strings: up to 24 digits around the point, exponents
   * near the fast path's edges. */
  for (k = 0; k < 60000; k++) {
    uint64_t r = rng_next(&s);
    int nint = (int)(r % 13), nfrac = (int)((r >> 8) % 13), n = 0, j;
    if (r & (1u << 20))
      tok[n++] = '-';
    for (j = 0; j < nint; j++)
      tok[n++] = (char)('0' + rng_next(&s) % 10);
    if (nfrac > 0 || nint == 0) {
      tok[n++] = '.';
      for (j = 0; j < (nfrac ? nfrac : 1); j++)
        tok[n++] = (char)('0' + rng_next(&s) % 10);
    }
    if (r & (1u << 21))
      n += snprintf(tok + n, sizeof tok - (size_t)n, "e%d", (int)((r >> 24) % 80) - 40);
    tok[n] = '\0';
    check_token(tok, loc);
  }
  freelocale(loc);
}
END_TEST

START_TEST(test_scan_int)
{
  static const struct { const char *tok; int signed_ok, rc; int64_t v; } cases[] = {
    { "0", 0, MMIO_SCAN_OK, 0 },
    { "42", 0, MMIO_SCAN_OK, 42 },
    { "+7", 1, MMIO_SCAN_OK, 7 },
    { "-7", 1, MMIO_SCAN_OK, -7 },
    { "-7", 0, MMIO_SCAN_NONE, 0 },
    { "9223372036854775807", 0, MMIO_SCAN_OK, INT64_MAX },
    { "9223372036854775808", 0, MMIO_SCAN_RANGE, 0 },
    { "-9223372036854775808", 1, MMIO_SCAN_OK, INT64_MIN },
    { "-9223372036854775809", 1, MMIO_SCAN_RANGE, 0 },
    { "99999999999999999999999999", 0, MMIO_SCAN_RANGE, 0 },
    { "", 0, MMIO_SCAN_NONE, 0 },
    { "-", 1, MMIO_SCAN_NONE, 0 },
    { "1.0", 0, MMIO_SCAN_NONE, 0 },
    { "1e3", 1, MMIO_SCAN_NONE, 0 },
    { "12a", 0, MMIO_SCAN_NONE, 0 },
  };
  size_t i;

  for (i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *p = cases[i].tok;
    int64_t v = 0;
    int rc = mmio_scan_int(&p, p + strlen(p), cases[i].signed_ok, &v);
    ck_assert_msg(rc == cases[i].rc, "'%s': rc %d", cases[i].tok, rc);
    if (rc == MMIO_SCAN_OK) {
      ck_assert_int_eq(v, cases[i].v);
      ck_assert_ptr_eq(p, cases[i].tok + strlen(cases[i].tok));
    }
  }
  /* A token ends at a blank or a line end, not at the buffer's end only. */
  {
    const char *t = "12 3\n", *p = t;
    int64_t v;
    ck_assert_int_eq(mmio_scan_int(&p, t + 5, 0, &v), MMIO_SCAN_OK);
    ck_assert_int_eq(v, 12);
    ck_assert_ptr_eq(p, t + 2);
  }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Random matrices against a dense accumulation                       */
/* ------------------------------------------------------------------ */

START_TEST(test_random_dense)
{
  static const char *const symname[3] = { "general", "symmetric", "skew-symmetric" };
  static const char *const fieldname[3] = { "real", "integer", "pattern" };
  /* Loops 0-2: tiny matrices; 3-4: long rows (the merge sort's path). */
  const int maxdim = _i < 3 ? 9 : 40, maxcols = _i < 3 ? 9 : 300;
  const int maxent = _i < 3 ? 60 : 4000, trials = _i < 3 ? 200 : 20;
  uint64_t s = 12345 + (uint64_t)_i;
  size_t cap = (size_t)maxent * 40 + 200;
  char *text = malloc(cap);
  double *dense = malloc((size_t)maxdim * (size_t)(maxcols > maxdim ? maxcols : maxdim) *
                         sizeof *dense);
  int *has = malloc((size_t)maxdim * (size_t)(maxcols > maxdim ? maxcols : maxdim) *
                    sizeof *has);
  int trial;

  ck_assert(text != NULL && dense != NULL && has != NULL);
  for (trial = 0; trial < trials; trial++) {
    int sym = (int)(rng_next(&s) % 3), field = (int)(rng_next(&s) % 3);
    int rows = 1 + (int)(rng_next(&s) % (uint64_t)maxdim);
    int cols = sym ? rows : 1 + (int)(rng_next(&s) % (uint64_t)maxcols);
    int nent = (int)(rng_next(&s) % (uint64_t)maxent), k, i, j, stored = 0, placed = 0;
    size_t n;
    struct spmv_error err = { 0, "" };
    struct spmv_mmio_info info;
    struct spmv_csr *A = NULL;
    int64_t q;

    if (field == 2 && sym == 2)
      field = 0;
    memset(has, 0, (size_t)rows * (size_t)cols * sizeof *has);
    n = (size_t)snprintf(text, cap, "%%%%MatrixMarket matrix coordinate %s %s\n"
                         "%d %d %d\n", fieldname[field], symname[sym], rows, cols, nent);
    for (k = 0; k < nent; k++) {
      double v = 1;
      int r = (int)(rng_next(&s) % (uint64_t)rows), c = (int)(rng_next(&s) % (uint64_t)cols);
      if (field == 0) {
        v = (double)((int64_t)(rng_next(&s) % 2001) - 1000) / 7.0;
        if (rng_next(&s) % 7 == 0)
          v = 0;
        n += (size_t)snprintf(text + n, cap - n, "%d %d %.17g\n", r + 1, c + 1, v);
      } else if (field == 1) {
        v = (double)((int64_t)(rng_next(&s) % 21) - 10);
        n += (size_t)snprintf(text + n, cap - n, "%d %d %d\n", r + 1, c + 1, (int)v);
      } else {
        n += (size_t)snprintf(text + n, cap - n, "%d %d\n", r + 1, c + 1);
      }
      /* The entry, then its mirror, accumulated in file order. */
      for (i = 0; i < 2; i++) {
        int a = i ? c : r, b = i ? r : c;
        double w = i && sym == 2 ? -v : v;
        if (i && (sym == 0 || r == c))
          break;
        placed++;
        if (has[a * cols + b]) {
          dense[a * cols + b] += w;
        } else {
          has[a * cols + b] = 1;
          dense[a * cols + b] = w;
          stored++;
        }
      }
    }
    ck_assert_uint_lt(n, cap);
    ck_assert_msg(spmv_mmio_parse(text, n, "random", &A, &info, &err) == 0, "%s", err.msg);
    check_sorted(A, "random");
    ck_assert_int_eq(A->nnz, stored);
    ck_assert_int_eq(info.duplicates, placed - stored);
    for (i = 0; i < rows; i++) {
      q = A->row_ptr[i];
      for (j = 0; j < cols; j++) {
        if (!has[i * cols + j])
          continue;
        if (q >= A->row_ptr[i + 1] || A->col_idx[q] != j)
          ck_abort_msg("trial %d: entry (%d,%d) missing", trial, i, j);
        if (!same_double(A->val[q], dense[i * cols + j]))
          ck_abort_msg("trial %d: (%d,%d): %.17g, expected %.17g", trial, i, j,
                       A->val[q], dense[i * cols + j]);
        q++;
      }
      ck_assert_int_eq(q, A->row_ptr[i + 1]);
    }
    spmv_csr_free(A);
  }
  free(has);
  free(dense);
  free(text);
}
END_TEST

/* The scanners' test suite. */
static Suite *mmio_scan_suite(void)
{
  Suite *s = suite_create("mmio_scan");
  TCase *tc = tcase_create("scan");

  tcase_add_test(tc, test_scan_double);
  tcase_add_test(tc, test_scan_int);
  tcase_add_loop_test(tc, test_random_dense, 0, 5);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(mmio_scan_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
