/* check_slowcache.c: a real spmvd whose cache is locked: the loop still serves. */
#include "config.h"

#include <check.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "itest.h"

/*
 * The test takes SQLite's write lock on the daemon's database (BEGIN
 * EXCLUSIVE from its own connection), so that every cache write of the
 * daemon waits in its busy handler (5 s).  Cache work runs on the daemon's
 * cache thread: other clients must be answered meanwhile, and a stop must
 * wait for the writes still queued, then store them.
 */

/* Takes the database's write lock; returns the connection holding it. */
static sqlite3 *lock_db(void)
{
  sqlite3 *db;

  ck_assert_int_eq(sqlite3_open(itest_d.db, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  ck_assert_int_eq(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL),
                   SQLITE_OK);
  return db;
}

static void unlock_db(sqlite3 *db)
{
  ck_assert_int_eq(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

/* One integer from the database (-1 when no row). */
static int64_t db_int(const char *sql)
{
  sqlite3 *db;
  sqlite3_stmt *st;
  int64_t v = -1;

  ck_assert_int_eq(sqlite3_open(itest_d.db, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  if (sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

/* A reply that does not come within s seconds ends the read (instead of
 * hanging the test on a stalled daemon). */
static void recv_timeout(int fd, int s)
{
  struct timeval tv = {s, 0};
  ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
}

/* While a tuning's store waits for the locked database, another client's
 * hello and multiply are answered, and the store lands once it is free. */
START_TEST(locked_cache_does_not_stall_others)
{
  struct spmv_csr *A = itest_random_csr(2000, 5, 1, 1);
  struct spmv_csr *B = itest_random_csr(300, 3, 2, 2);
  int fa = itest_open(&itest_d), fb = itest_open(&itest_d);
  json_t *r = itest_load(fa, 1, A, 0, "trial");
  int64_t ha = itest_handle(r);
  struct pollfd pfd = {fb, POLLIN, 0};
  char fp[40];

  json_decref(r);
  sqlite3 *db = lock_db();
  /* B's tuning ends in a store that must wait for the lock. */
  uint64_t len;
  void *p = itest_csr_payload(B, 0, 0, &len);
  ck_assert_int_eq(itest_send(fb, json_pack("{ss si ss sI sI sI ss ss}", "op",
                                            "load", "id", 2, "dtype", "f64",
                                            "rows", (json_int_t)B->rows,
                                            "cols", (json_int_t)B->cols, "nnz",
                                            (json_int_t)B->nnz, "index", "i32",
                                            "strategy", "trial"),
                              p, len), 0);
  free(p);
  ck_assert_msg(itest_log_wait(&itest_d, "matrix 2: tuning (trial)", 10000),
                "'matrix 2: tuning (trial)' never appeared in %s", itest_d.log);
  usleep(300000);  /* the tuning of 900 entries is over: the store waits */

  recv_timeout(fa, 3);
  r = itest_call(fa, json_pack("{ss si si ss}", "op", "hello", "id", 3,
                               "version", 1, "client", "again"),
                 NULL, 0, NULL, NULL);
  ck_assert_msg(r != NULL, "hello was not answered while the cache was locked");
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  double q = itest_multiply_check(fa, ha, A, 0, 7, NULL);
  ck_assert_msg(q >= 0 && q <= 1.0,
                "multiply while the cache was locked: %g (-2: no answer)", q);
  /* B is still waiting for its store (the lock is still held): only its
   * progress events have come. */
  while (poll(&pfd, 1, 0) == 1) {
    struct spmv_wire_limits lim;
    struct spmv_error err;
    void *pl = NULL;
    uint64_t plen;
    spmv_wire_limits_default(&lim);
    ck_assert_int_eq(spmv_wire_read_frame(fb, &lim, &r, &pl, &plen, &err), 0);
    ck_assert_msg(json_object_get(r, "ok") == NULL,
                  "B was answered before the cache was unlocked");
    json_decref(r);
    free(pl);
  }

  unlock_db(db);
  r = itest_recv_reply(fb, NULL, NULL, NULL);
  itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "tuned");
  snprintf(fp, sizeof fp, "%s",
           json_string_value(json_object_get(r, "fingerprint")));
  json_decref(r);
  char sql[160];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM tunings WHERE fingerprint = '%s'", fp);
  ck_assert_int_eq(db_int(sql), 1);
  close(fa);
  close(fb);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

/* SIGTERM while a cache write nobody waits for (the hit count of a load
 * served from the cache) is queued behind the lock: the daemon stays until
 * it is written, then exits 0 with the write in the database. */
START_TEST(sigterm_stores_pending_write)
{
  struct spmv_csr *A = itest_random_csr(1000, 4, 3, 3);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  int status;

  itest_handle(r);
  json_decref(r);
  ck_assert_int_eq(db_int("SELECT hits FROM tunings"), 0);
  sqlite3 *db = lock_db();
  recv_timeout(fd, 3);
  r = itest_load(fd, 2, A, 0, "trial");
  itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "cache");
  json_decref(r);
  close(fd);

  kill(itest_d.pid, SIGTERM);
  usleep(300000);
  ck_assert_msg(waitpid(itest_d.pid, &status, WNOHANG) == 0,
                "spmvd exited with a cache write pending");
  unlock_db(db);
  itest_d.pid = waitpid(itest_d.pid, &status, 0) > 0 ? 0 : itest_d.pid;
  ck_assert_int_eq(itest_d.pid, 0);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  ck_assert_int_eq(db_int("SELECT hits FROM tunings"), 1);
  spmv_csr_free(A);
}
END_TEST

static Suite *slowcache_suite(void)
{
  Suite *s = suite_create("slowcache");
  TCase *tc = tcase_create("slowcache");

  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, locked_cache_does_not_stall_others);
  tcase_add_test(tc, sigterm_stores_pending_write);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(slowcache_suite());
}
