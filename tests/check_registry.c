/* check_registry.c: handles, ownership, counting and removal of matrices. */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "spmvd_registry.h"

START_TEST(handles_and_owners)
{
  struct spmvd_registry r;
  struct spmvd_conn *c1 = (struct spmvd_conn *)0x1, *c2 = (struct spmvd_conn *)0x2;

  spmvd_registry_init(&r);
  struct spmvd_matrix *a = spmvd_registry_add(&r, 1000, c1);
  struct spmvd_matrix *b = spmvd_registry_add(&r, 1000, c2);
  struct spmvd_matrix *c = spmvd_registry_add(&r, 2000, c2);
  ck_assert(a && b && c);
  ck_assert_int_eq(a->handle, 1);
  ck_assert_int_eq(b->handle, 2);
  ck_assert_int_eq(c->handle, 3);
  ck_assert_int_eq(a->state, SPMVD_MATRIX_LOADING);
  ck_assert_ptr_eq(spmvd_registry_get(&r, 2, 1000), b);
  ck_assert_ptr_null(spmvd_registry_get(&r, 3, 1000));  /* other uid */
  ck_assert_ptr_null(spmvd_registry_get(&r, 99, 1000));
  ck_assert_ptr_eq(spmvd_registry_find(&r, 3), c);
  ck_assert_int_eq(spmvd_registry_count_uid(&r, 1000), 2);
  ck_assert_int_eq(spmvd_registry_count_uid(&r, 2000), 1);
  ck_assert_int_eq(r.count, 3);
  spmvd_registry_remove(&r, b);
  ck_assert_ptr_null(spmvd_registry_find(&r, 2));
  ck_assert_int_eq(r.count, 2);
  /* Handles are never reused. */
  struct spmvd_matrix *d = spmvd_registry_add(&r, 1000, c1);
  ck_assert_int_eq(d->handle, 4);
  d->trials = json_array();
  spmvd_registry_fini(&r);
  ck_assert_int_eq(r.count, 0);
  ck_assert_ptr_null(r.head);
}
END_TEST

static Suite *registry_suite(void)
{
  Suite *s = suite_create("registry");
  TCase *tc = tcase_create("registry");
  tcase_add_test(tc, handles_and_owners);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(registry_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
