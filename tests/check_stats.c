/* check_stats.c: the median every timing loop takes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "spmv_stats.h"

Suite *stats_suite(void);

START_TEST(test_median)
{
  double odd[] = { 7, 1, 5, 3, 9 }, even[] = { 4, 10, 2, 8 }, one[] = { 6.5 };
  double same[] = { 2, 2, 2 };

  ck_assert_double_eq(spmv_median(odd, 5), 5);
  /* Sorted in place. */
  ck_assert_double_eq(odd[0], 1);
  ck_assert_double_eq(odd[4], 9);
  ck_assert_double_eq(spmv_median(even, 4), 6);
  ck_assert_double_eq(spmv_median(one, 1), 6.5);
  ck_assert_double_eq(spmv_median(same, 3), 2);
  ck_assert(isnan(spmv_median(NULL, 0)));
}
END_TEST

Suite *stats_suite(void)
{
  Suite *s = suite_create("stats");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_median);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(stats_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
