/* check_mmio_array.c: dense vectors as Matrix Market array files
 * (spmv_mmio_read_vector, spmv_mmio_write_vector): round trips exact to
 * the bit, and malformed files refused with the file and the line. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "spmv_mmio.h"

/* A temporary file's path, removed by the test's end. */
static char tmp_path[64];

static void setup(void)
{
  int fd;

  snprintf(tmp_path, sizeof tmp_path, "/tmp/check_mmio_array.XXXXXX");
  fd = mkstemp(tmp_path);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

static void teardown(void)
{
  unlink(tmp_path);
}

/* Writes text as the temporary file. */
static void put_file(const char *text)
{
  FILE *f = fopen(tmp_path, "w");

  ck_assert_ptr_nonnull(f);
  ck_assert_int_ge(fputs(text, f), 0);
  ck_assert_int_eq(fclose(f), 0);
}

/* Reads the temporary file expecting failure code with every one of the
 * NULL-ended fragments in the message. */
static void expect_error(int code, ...)
{
  struct spmv_error err = { 0, "" };
  double *v = NULL;
  int64_t n = -7;
  const char *frag;
  va_list ap;

  ck_assert_int_eq(spmv_mmio_read_vector(tmp_path, &v, &n, &err), code);
  ck_assert_ptr_null(v);
  ck_assert_int_eq(n, -7);
  ck_assert_msg(strstr(err.msg, tmp_path) != NULL, "no file name in '%s'", err.msg);
  va_start(ap, code);
  while ((frag = va_arg(ap, const char *)) != NULL)
    ck_assert_msg(strstr(err.msg, frag) != NULL, "'%s' not in '%s'", frag, err.msg);
  va_end(ap);
}

START_TEST(test_round_trip)
{
  static const double x[] = { 1.0, -0.0, 0.1, 1e-300, -3.25e300, 2.0 / 3.0,
                              0.0, 123456789.123456789 };
  struct spmv_error err = { 0, "" };
  double *v = NULL;
  int64_t n = 0, i, len = sizeof x / sizeof x[0];

  ck_assert_int_eq(spmv_mmio_write_vector(tmp_path, x, len, &err), 0);
  ck_assert_int_eq(spmv_mmio_read_vector(tmp_path, &v, &n, &err), 0);
  ck_assert_int_eq(n, len);
  for (i = 0; i < n; i++)
    ck_assert_msg(memcmp(&v[i], &x[i], sizeof x[i]) == 0 || (x[i] == 0 && v[i] == 0),
                  "value %lld: wrote %.17g, read %.17g", (long long)i, x[i], v[i]);
  free(v);
}
END_TEST

START_TEST(test_header_written)
{
  static const double x[] = { 0.5, 2 };
  struct spmv_error err = { 0, "" };
  char line[128];
  FILE *f;

  ck_assert_int_eq(spmv_mmio_write_vector(tmp_path, x, 2, &err), 0);
  f = fopen(tmp_path, "r");
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
  ck_assert_str_eq(line, "%%MatrixMarket matrix array real general\n");
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
  ck_assert_str_eq(line, "2 1\n");
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
  ck_assert_str_eq(line, "0.5\n");
  fclose(f);
}
END_TEST

START_TEST(test_comments_and_empty)
{
  struct spmv_error err = { 0, "" };
  double *v = NULL;
  int64_t n = -1;

  put_file("%%MatrixMarket matrix array real general\n% b of a test\n3 1\n1\n"
           "% between values\n-2.5e0\n0\n");
  ck_assert_int_eq(spmv_mmio_read_vector(tmp_path, &v, &n, &err), 0);
  ck_assert_int_eq(n, 3);
  ck_assert(v[0] == 1 && v[1] == -2.5 && v[2] == 0);
  free(v);
  put_file("%%MatrixMarket matrix array real general\n0 1\n");
  ck_assert_int_eq(spmv_mmio_read_vector(tmp_path, &v, &n, &err), 0);
  ck_assert_int_eq(n, 0);
  free(v);
}
END_TEST

START_TEST(test_bad_header)
{
  put_file("%%MatrixMarket vector array real general\n2 1\n1\n2\n");
  expect_error(SPMV_EUNSUPPORTED, ":1:", NULL);
  put_file("%%MatrixMarket matrix coordinate real general\n2 1 1\n1 1 3\n");
  expect_error(SPMV_EPARSE, ":1:", "coordinate", NULL);
  put_file("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  expect_error(SPMV_EPARSE, "2 x 2", "one column", NULL);
  put_file("2 1\n1\n2\n");
  expect_error(SPMV_EPARSE, ":1:", NULL);
}
END_TEST

START_TEST(test_wrong_count)
{
  put_file("%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
  expect_error(SPMV_EPARSE, ":4:", "2 of the 3", NULL);
  put_file("%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n");
  expect_error(SPMV_EPARSE, ":5:", "more entries", NULL);
}
END_TEST

START_TEST(test_bad_number)
{
  put_file("%%MatrixMarket matrix array real general\n3 1\n1\n2.5x\n3\n");
  expect_error(SPMV_EPARSE, ":4:", NULL);
  put_file("%%MatrixMarket matrix array real general\n2 1\n1 2\n3\n");
  expect_error(SPMV_EPARSE, ":3:", NULL);
}
END_TEST

START_TEST(test_io_errors)
{
  struct spmv_error err = { 0, "" };
  double *v = NULL, x = 1;
  int64_t n = 0;

  ck_assert_int_eq(spmv_mmio_read_vector("/nonexistent/b.mtx", &v, &n, &err), SPMV_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/b.mtx"));
  ck_assert_int_eq(spmv_mmio_write_vector("/nonexistent/x.mtx", &x, 1, &err), SPMV_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/x.mtx"));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("mmio_array");
  TCase *tc = tcase_create("vectors");
  SRunner *sr;
  int failed;

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_header_written);
  tcase_add_test(tc, test_comments_and_empty);
  tcase_add_test(tc, test_bad_header);
  tcase_add_test(tc, test_wrong_count);
  tcase_add_test(tc, test_bad_number);
  tcase_add_test(tc, test_io_errors);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
