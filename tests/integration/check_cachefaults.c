/* check_cachefaults.c: a real spmvd over a damaged cache: a corrupt
 * tuning row is retuned, not served or failed on. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "itest.h"

/* Runs one SQL statement on the daemon's database. */
static void db_exec(const char *sql)
{
  sqlite3 *db;

  ck_assert_int_eq(sqlite3_open(itest_d.db, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s: %s",
                sql, sqlite3_errmsg(db));
  sqlite3_close(db);
}

/* The string field key of r (borrowed), "" when missing. */
static const char *str(const json_t *r, const char *key)
{
  const char *s = json_string_value(json_object_get(r, key));
  return s ? s : "";
}

/* Counts the lines of the daemon's log that hold text. */
static int log_count(const char *text)
{
  FILE *f = fopen(itest_d.log, "r");
  char line[2048];
  int n = 0;

  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f))
    n += strstr(line, text) != NULL;
  fclose(f);
  return n;
}

/* A load tunes and stores; the row's time_us is set to infinity behind the
 * daemon's back; after a restart the load is retuned (the reason names the
 * corruption, logged once), multiplies right, and info answers. */
START_TEST(corrupt_row_is_retuned)
{
  struct spmv_csr *A = itest_random_csr(500, 4, 5, 5);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");

  itest_handle(r);
  ck_assert_str_eq(str(r, "source"), "tuned");
  json_decref(r);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  db_exec("UPDATE tunings SET time_us = 1e999");
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);

  fd = itest_open(&itest_d);
  for (int k = 0; k < 2; k++) {
    r = itest_load(fd, 2 + k, A, 0, "trial");
    int64_t h = itest_handle(r);
    double q = itest_multiply_check(fd, h, A, 0, 9, NULL);
    ck_assert_msg(q >= 0 && q <= 1.0, "multiply after a corrupt row: %g", q);
    if (k == 0) {
      /* The first load meets the corrupt row; its retune replaces it. */
      ck_assert_str_eq(str(r, "source"), "tuned");
      ck_assert_msg(strstr(str(r, "reason"), "time_us is not finite"),
                    "reason \"%s\"", str(r, "reason"));
    } else {
      ck_assert_str_eq(str(r, "source"), "cache");
    }
    json_decref(r);
    r = itest_call(fd, json_pack("{ss si sI}", "op", "info", "id", 10 + k,
                                 "handle", (json_int_t)h),
                   NULL, 0, NULL, NULL);
    ck_assert(json_is_true(json_object_get(r, "ok")));
    json_decref(r);
  }
  ck_assert_int_eq(log_count("is corrupt"), 1);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

static Suite *cachefaults_suite(void)
{
  Suite *s = suite_create("cachefaults");
  TCase *tc = tcase_create("cachefaults");

  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, corrupt_row_is_retuned);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(cachefaults_suite());
}
