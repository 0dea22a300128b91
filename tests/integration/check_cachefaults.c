/* check_cachefaults.c: a real spmvd over a damaged cache (a corrupt
 * tuning row or profile is retuned, not served or failed on) and over a
 * read-only one (served, decisions looked up, none stored). */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
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

/* Closes fd, stops the daemon, runs sql on its database behind its back
 * and starts it again; returns a new connection. */
static int restart_after(int fd, const char *sql)
{
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  db_exec(sql);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  return itest_open(&itest_d);
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
  fd = restart_after(fd, "UPDATE tunings SET time_us = 1e999");
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

/* The profile info gives for handle h (a new reference). */
static json_t *info_profile(int fd, int64_t id, int64_t h)
{
  json_t *r = itest_call(fd, json_pack("{ss sI sI}", "op", "info", "id",
                                       (json_int_t)id, "handle", (json_int_t)h),
                         NULL, 0, NULL, NULL);
  json_t *p = json_incref(json_object_get(r, "profile"));

  ck_assert_ptr_nonnull(p);
  json_decref(r);
  return p;
}

/* A cache hit takes the matrix's profile from the cache (the one its tune
 * computed: info shows the same, and the hit's steps have no profile_ms
 * where the tune's have one); a profile damaged behind the daemon's back
 * is not served: the load is tuned again, saying why, and the retune
 * stores a good one. */
START_TEST(hit_profile_from_cache)
{
  struct spmv_csr *A = itest_random_csr(700, 5, 9, 9);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial"), *p1, *p2;
  int64_t h = itest_handle(r);

  ck_assert_str_eq(str(r, "source"), "tuned");
  /* A tune's steps: its profile, its race, its pick made resident. */
  ck_assert(json_number_value(json_object_get(json_object_get(r, "steps"),
                                              "race_ms")) > 0);
  for (int k = 0; k < 2; k++)
    ck_assert_ptr_nonnull(json_object_get(json_object_get(r, "steps"),
                                          k ? "resident_ms" : "profile_ms"));
  /* The race's parts: its candidates' loads and timing runs, and the host
   * copy's pin, lie inside it. */
  json_t *st = json_object_get(r, "steps");
  double race = json_number_value(json_object_get(st, "race_ms"));
  double rl = json_number_value(json_object_get(st, "race_load_ms"));
  double rt = json_number_value(json_object_get(st, "race_time_ms"));
  double pin = json_number_value(json_object_get(st, "pin_ms"));
  ck_assert(json_is_number(json_object_get(st, "race_load_ms")) &&
            json_is_number(json_object_get(st, "race_time_ms")) &&
            json_is_number(json_object_get(st, "pin_ms")));
  ck_assert_msg(rl > 0 && rt > 0 && pin >= 0 && rl + rt + pin <= race,
                "race %g ms: loads %g, timing %g, pin %g", race, rl, rt, pin);
  json_decref(r);
  p1 = info_profile(fd, 2, h);
  ck_assert_int_eq(json_integer_value(json_object_get(p1, "nnz")), 3500);
  r = itest_load(fd, 3, A, 0, "trial");
  h = itest_handle(r);
  ck_assert_str_eq(str(r, "source"), "cache");
  ck_assert_ptr_null(json_object_get(json_object_get(r, "steps"),
                                     "profile_ms"));
  json_decref(r);
  p2 = info_profile(fd, 4, h);
  ck_assert(json_equal(p1, p2));
  json_decref(p2);
  fd = restart_after(fd, "UPDATE matrices SET profile = 'not json'");
  for (int k = 0; k < 2; k++) {
    r = itest_load(fd, 5 + k, A, 0, "trial");
    h = itest_handle(r);
    ck_assert_str_eq(str(r, "source"), k == 0 ? "tuned" : "cache");
    if (k == 0)
      ck_assert_msg(strstr(str(r, "reason"), "cached profile"), "reason "
                    "\"%s\"", str(r, "reason"));
    json_decref(r);
    itest_multiply_ok(fd, h, A, 0, 9);
    p2 = info_profile(fd, 7 + k, h);
    ck_assert(json_equal(p1, p2));
    json_decref(p2);
  }
  json_decref(p1);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* Reads the whole file at p into a new buffer; *n gets its size. */
static char *slurp(const char *p, size_t *n)
{
  FILE *f = fopen(p, "rb");
  char *buf;

  ck_assert_msg(f != NULL, "%s: %s", p, strerror(errno));
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  rewind(f);
  buf = malloc(*n + 1);
  ck_assert_uint_eq(fread(buf, 1, *n, f), *n);
  fclose(f);
  return buf;
}

/* Copies the file at from to to. */
static void copy_file(const char *from, const char *to)
{
  size_t n;
  char *buf = slurp(from, &n);
  FILE *f = fopen(to, "wb");

  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
  fclose(f);
  free(buf);
}

/* Root ignores file permissions: as root, the test (a forked child) hands
 * its directory to nobody and becomes nobody, so that a chmod denies for
 * real.  Returns 0 when permissions deny from here on, -1 when not. */
static int become_unprivileged(void)
{
  char cmd[400];

  if (geteuid() != 0)
    return 0;
  snprintf(cmd, sizeof cmd, "chown -R 65534:65534 '%s'", itest_d.dir);
  if (system(cmd) != 0 || setgroups(0, NULL) != 0 ||
      setresgid(65534, 65534, 65534) != 0 ||
      setresuid(65534, 65534, 65534) != 0)
    return -1;
  return 0;
}

/* The daemon's cache, made read-only (0444 in a 0555 directory) behind its
 * back: it starts, says so at start and in status, serves a cached
 * decision, tunes and answers a new matrix with "stored": false, and the
 * file is left byte for byte as it was. */
START_TEST(readonly_cache_serves)
{
  struct spmv_csr *A = itest_random_csr(400, 4, 7, 7);
  struct spmv_csr *B = itest_random_csr(300, 3, 8, 8);
  int fd = itest_open(&itest_d), rw;
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  char rodir[264], rodb[280];
  size_t n0, n1;

  itest_handle(r);
  json_decref(r);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  snprintf(rodir, sizeof rodir, "%s/ro", itest_d.dir);
  snprintf(rodb, sizeof rodb, "%s/cache.db", rodir);
  ck_assert_int_eq(mkdir(rodir, 0755), 0);
  copy_file(itest_d.db, rodb);
  if (become_unprivileged() != 0) {
    fprintf(stderr, "readonly_cache_serves: skipped, cannot drop root\n");
    return;
  }
  /* The build tree may be out of the unprivileged user's reach (a CI
   * clone in a private temporary folder): nothing to run then. */
  char spmvd[600];
  const char *top = getenv("SPMV_TOP_BUILDDIR");
  snprintf(spmvd, sizeof spmvd, "%s/daemon/spmvd", top ? top : ".");
  if (access(spmvd, X_OK) != 0) {
    fprintf(stderr, "readonly_cache_serves: skipped, %s cannot be run as "
            "uid %ld here\n", spmvd, (long)geteuid());
    return;
  }
  ck_assert_int_eq(chmod(rodb, 0444), 0);
  ck_assert_int_eq(chmod(rodir, 0555), 0);
  rw = open(rodb, O_RDWR);
  if (rw >= 0) {
    close(rw);
    chmod(rodir, 0755);
    fprintf(stderr, "readonly_cache_serves: skipped, permissions do not "
            "deny here\n");
    return;
  }
  char *before = slurp(rodb, &n0);
  snprintf(itest_d.db, sizeof itest_d.db, "%s", rodb);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  ck_assert_int_eq(log_count("is read-only: decisions are looked up but "
                             "not stored"), 1);

  fd = itest_open(&itest_d);
  r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 2), NULL, 0,
                 NULL, NULL);
  ck_assert_str_eq(str(r, "cache_state"), "read-only");
  json_decref(r);
  r = itest_load(fd, 3, A, 0, "trial");
  double q = itest_multiply_check(fd, itest_handle(r), A, 0, 3, NULL);
  ck_assert_msg(q >= 0 && q <= 1.0, "multiply of the cached matrix: %g", q);
  ck_assert_str_eq(str(r, "source"), "cache");
  ck_assert_ptr_null(json_object_get(r, "stored"));
  json_decref(r);
  r = itest_load(fd, 4, B, 0, "trial");
  q = itest_multiply_check(fd, itest_handle(r), B, 0, 4, NULL);
  ck_assert_msg(q >= 0 && q <= 1.0, "multiply of the new matrix: %g", q);
  ck_assert_str_eq(str(r, "source"), "tuned");
  ck_assert(json_is_false(json_object_get(r, "stored")));
  ck_assert_msg(strstr(str(r, "store_error"), "read-only"),
                "store_error \"%s\"", str(r, "store_error"));
  json_decref(r);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);

  char *after = slurp(rodb, &n1);
  ck_assert_msg(n0 == n1 && memcmp(before, after, n0) == 0,
                "the read-only cache changed");
  free(before);
  free(after);
  ck_assert_int_eq(chmod(rodir, 0755), 0);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

static Suite *cachefaults_suite(void)
{
  Suite *s = suite_create("cachefaults");
  TCase *tc = tcase_create("cachefaults");

  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, corrupt_row_is_retuned);
  tcase_add_test(tc, hit_profile_from_cache);
  tcase_add_test(tc, readonly_cache_serves);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(cachefaults_suite());
}
