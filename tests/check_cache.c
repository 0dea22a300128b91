/* check_cache.c: the SQLite cache: migrations, round trips, misses with
 * reasons, quarantine, forget, export/import, read-only opens. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "spmvd_cache.h"

#define FP1 "0123456789abcdef0123456789abcdef"
#define FP2 "fedcba9876543210fedcba9876543210"

static char dir[256];
static char path[320];

/* A fresh directory per test (CK_FORK runs each test in a child). */
static void setup(void)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(dir, sizeof dir, "%s/check_cache.XXXXXX", tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/sub/dir/cache.db", dir);
}

static void teardown(void)
{
  char cmd[400];

  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
}

/* A device with the given keys. */
static struct spmvd_device_info device(const char *dk, const char *sk)
{
  struct spmvd_device_info d;

  memset(&d, 0, sizeof d);
  snprintf(d.backend, sizeof d.backend, "cuda");
  snprintf(d.name, sizeof d.name, "Test GPU");
  d.sms = 132;
  d.warp_size = 32;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_threads_per_block = 1024;
  snprintf(d.device_key, sizeof d.device_key, "%s", dk);
  snprintf(d.software_key, sizeof d.software_key, "%s", sk);
  return d;
}

/* A profile of a small matrix. */
static struct spmv_profile profile(void)
{
  struct spmv_profile p;

  memset(&p, 0, sizeof p);
  p.rows = 1000;
  p.cols = 900;
  p.nnz = 5000;
  p.rl_min = 1;
  p.rl_max = 12;
  p.rl_mean = 5;
  p.rl_sigma = 1.5;
  p.rl_cv = 0.3;
  p.hist[1] = 10;
  p.hist[3] = 990;
  p.ell_fill = 2.4;
  p.hyb_k = 5;
  p.ndiags = 300;
  p.dia_fill = 60;
  p.col_locality = 0.5;
  return p;
}

/* A decision with two trials (caller finis it). */
static void decision(struct spmvd_decision *d, double us)
{
  spmvd_decision_init(d);
  d->cfg.format = SPMV_FMT_ELLR_T;
  d->cfg.bs = 256;
  d->cfg.tpr = 4;
  spmv_config_format(&d->cfg, d->text, sizeof d->text);
  d->strategy = SPMVD_STRATEGY_TRIAL;
  d->time_us = us;
  d->gflops = 2 * 5000 / (us * 1e3);
  d->gbps = 7.5;
  d->cost_spmv = 11.5;
  d->ntrials = 2;
  d->trials = calloc(2, sizeof *d->trials);
  d->trials[0].cfg = d->cfg;
  d->trials[0].time_us = us;
  d->trials[0].best_us = us * 0.99;
  d->trials[0].rounds = 2;
  d->trials[0].runs = 7;
  d->trials[1].cfg.format = SPMV_FMT_COO;
  d->trials[1].cfg.bs = 128;
  d->trials[1].status = SPMVD_TRIAL_FAILED;
  d->trials[1].code = SPMV_ENOMEM;
  snprintf(d->trials[1].msg, sizeof d->trials[1].msg, "out of memory");
}

/* Stores a tuning of fp for dev; returns its id. */
static int64_t store(struct spmvd_cache *c, const char *fp,
                     const struct spmvd_device_info *dev, enum spmv_dtype dt,
                     double us)
{
  struct spmvd_decision d;
  struct spmvd_tuning t;
  struct spmv_profile p = profile();
  struct spmv_error e;
  int64_t id = 0;

  decision(&d, us);
  spmvd_tuning_from_decision(&t, &d, fp, dev, dt);
  ck_assert_msg(spmvd_cache_store(c, &t, &p, d.trials, d.ntrials, &id, &e) ==
                0, "%s", e.msg);
  spmvd_decision_fini(&d);
  return id;
}

/* The schema version of the file at p, read with SQLite directly. */
static int user_version(const char *p)
{
  sqlite3 *db;
  sqlite3_stmt *st;
  int v = -1;

  ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
  ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st,
                                      NULL), SQLITE_OK);
  if (sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

/* Runs one SQL statement on the file at p. */
static void exec_sql(const char *p, const char *sql)
{
  sqlite3 *db;

  ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
  ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

START_TEST(test_fresh_db)
{
  struct spmvd_cache *c;
  struct spmv_error e;
  struct stat sb;
  char d[400];

  ck_assert_msg(spmvd_cache_open(path, 0, &c, &e) == 0, "%s", e.msg);
  spmvd_cache_close(c);
  ck_assert_int_eq(user_version(path), spmvd_cache_schema_version());
  ck_assert_int_ge(spmvd_cache_schema_version(), 1);
  snprintf(d, sizeof d, "%s/sub/dir", dir);
  ck_assert_int_eq(stat(d, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 0777, 0700);
  /* Reopening an up-to-date database changes nothing. */
  ck_assert_msg(spmvd_cache_open(path, 0, &c, &e) == 0, "%s", e.msg);
  spmvd_cache_close(c);
  ck_assert_int_eq(user_version(path), spmvd_cache_schema_version());
}
END_TEST

START_TEST(test_existing_db_migrated)
{
  struct spmvd_cache *c;
  struct spmv_error e;
  char p[400];

  /* A database of version 0 (someone else's table in it) is migrated
   * read-write, refused read-only. */
  snprintf(p, sizeof p, "%s/old.db", dir);
  exec_sql(p, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('a')");
  ck_assert_int_eq(user_version(p), 0);
  ck_assert_int_eq(spmvd_cache_open(p, SPMVD_CACHE_READONLY, &c, &e),
                   SPMV_ECACHE);
  ck_assert_ptr_nonnull(strstr(e.msg, "start spmvd once"));
  ck_assert_msg(spmvd_cache_open(p, 0, &c, &e) == 0, "%s", e.msg);
  spmvd_cache_close(c);
  ck_assert_int_eq(user_version(p), spmvd_cache_schema_version());
  /* A database newer than this build is refused. */
  exec_sql(p, "PRAGMA user_version = 999");
  ck_assert_int_eq(spmvd_cache_open(p, 0, &c, &e), SPMV_ECACHE);
  ck_assert_ptr_nonnull(strstr(e.msg, "newer"));
  ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_store_lookup_reopen)
{
  struct spmvd_device_info dev = device("gpu-A", "sw-1");
  struct spmvd_cache *c;
  struct spmvd_tuning t;
  struct spmv_error e;
  char reason[256];
  int64_t id;

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  ck_assert_int_eq(spmvd_cache_device_put(c, &dev, &e), 0);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      reason, sizeof reason, &e), 0);
  ck_assert_str_eq(reason, "no cached tuning");
  id = store(c, FP1, &dev, SPMV_F64, 12.5);
  ck_assert_int_gt(id, 0);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      reason, sizeof reason, &e), 1);
  ck_assert_int_eq(t.id, id);
  ck_assert_int_eq(t.cfg.format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(t.cfg.bs, 256);
  ck_assert_int_eq(t.cfg.tpr, 4);
  ck_assert_str_eq(t.text, "ellr-t bs=256 t=4");
  ck_assert_double_eq(t.time_us, 12.5);
  ck_assert_double_eq(t.cost_spmv, 11.5);
  ck_assert_int_eq(t.strategy, SPMVD_STRATEGY_TRIAL);
  ck_assert_int_eq(t.hits, 0);
  ck_assert_int_eq(spmvd_cache_hit(c, id, &e), 0);
  ck_assert_int_eq(spmvd_cache_hit(c, id, &e), 0);
  ck_assert_int_eq(spmvd_cache_hit(c, id + 100, &e), SPMV_ENOENT);
  spmvd_cache_close(c);
  /* It survives a reopen, read-only too. */
  ck_assert_int_eq(spmvd_cache_open(path, SPMVD_CACHE_READONLY, &c, &e), 0);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      NULL, 0, &e), 1);
  ck_assert_int_eq(t.hits, 2);
  ck_assert_int_gt(t.last_used, 0);
  spmvd_cache_close(c);
  /* A re-tune replaces the row. */
  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &dev, SPMV_F64, 9.0);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      NULL, 0, &e), 1);
  ck_assert_double_eq(t.time_us, 9.0);
  ck_assert_int_eq(t.hits, 0);
  spmvd_cache_close(c);
}
END_TEST

/* Warnings of the cache, counted (a corrupt row must be logged once). */
static int nwarn;
static char last_warn[512];

static void count_warn(const char *msg)
{
  nwarn++;
  snprintf(last_warn, sizeof last_warn, "%s", msg);
}

/* Stores a sound row, damages it with sql (as a hand edit or a bad disk
 * would), then checks that a lookup misses with a reason naming want,
 * logs once over two lookups, and that list and show still answer. */
static void check_corrupt(const char *sql, const char *want)
{
  struct spmvd_device_info dev = device("gpu-A", "sw-1");
  struct spmvd_cache *c;
  struct spmvd_tuning t;
  struct spmv_error e;
  json_t *j = NULL, *row;
  char reason[256];

  unlink(path);
  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &dev, SPMV_F64, 12.5);
  spmvd_cache_close(c);
  exec_sql(path, sql);
  nwarn = 0;
  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  spmvd_cache_set_warn(c, count_warn);
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64,
                                        &t, reason, sizeof reason, &e), 0);
    ck_assert_msg(strstr(reason, want) != NULL && strstr(reason, "retuned"),
                  "reason \"%s\" does not name \"%s\"", reason, want);
  }
  ck_assert_int_eq(nwarn, 1);
  ck_assert_ptr_nonnull(strstr(last_warn, "corrupt"));
  /* The list and show carry the row, its bad numbers as null or as they
   * are, and say what is wrong. */
  ck_assert_msg(spmvd_cache_list(c, &j, &e) == 0, "%s", e.msg);
  row = json_array_get(j, 0);
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(row,
                                                                 "corrupt")),
                               want));
  json_decref(j);
  ck_assert_msg(spmvd_cache_show(c, FP1, &j, &e) == 0, "%s", e.msg);
  json_decref(j);
  /* An export leaves it out; a store of a sound tuning replaces it. */
  ck_assert_int_eq(spmvd_cache_export(c, NULL, &j, &e), 0);
  ck_assert_int_eq(json_array_size(json_object_get(j, "tunings")), 0);
  json_decref(j);
  store(c, FP1, &dev, SPMV_F64, 9.0);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      NULL, 0, &e), 1);
  ck_assert_double_eq(t.time_us, 9.0);
  spmvd_cache_close(c);
}

START_TEST(test_corrupt_rows)
{
  /* 1e999 is how SQLite's SQL writes an infinity. */
  check_corrupt("UPDATE tunings SET time_us = 1e999",
                "time_us is not finite");
  check_corrupt("UPDATE tunings SET time_us = -3", "time_us is negative");
  check_corrupt("UPDATE tunings SET gflops = -1e999",
                "gflops is not finite");
  check_corrupt("UPDATE tunings SET gbps = 1e300", "gbps is out of range");
  check_corrupt("UPDATE tunings SET cost_spmv = 1e13",
                "cost_spmv is out of range");
}
END_TEST

START_TEST(test_miss_reasons)
{
  struct spmvd_device_info dev = device("gpu-A", "sw-1");
  struct spmvd_cache *c;
  struct spmvd_tuning t;
  struct spmv_error e;
  char reason[256];

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &dev, SPMV_F64, 10);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-B", "sw-1", SPMV_F64, &t,
                                      reason, sizeof reason, &e), 0);
  ck_assert_str_eq(reason,
                   "cached for device 'gpu-A' / software 'sw-1', tuning again");
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-2", SPMV_F64, &t,
                                      reason, sizeof reason, &e), 0);
  ck_assert_str_eq(reason,
                   "cached for software 'sw-1', this is 'sw-2', tuning again");
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F32, &t,
                                      reason, sizeof reason, &e), 0);
  ck_assert_str_eq(reason, "cached for f64 only, tuning again");
  ck_assert_int_eq(spmvd_cache_lookup(c, FP2, "gpu-A", "sw-1", SPMV_F64, &t,
                                      reason, sizeof reason, &e), 0);
  ck_assert_str_eq(reason, "no cached tuning");
  ck_assert_int_eq(spmvd_cache_lookup(c, "xyz", "gpu-A", "sw-1", SPMV_F64, &t,
                                      reason, sizeof reason, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "xyz"));
  spmvd_cache_close(c);
}
END_TEST

START_TEST(test_quarantine)
{
  struct spmvd_device_info dev = device("gpu-A", "sw-1");
  struct spmv_config bad = { SPMV_FMT_ELLR_T, 256, 4, 0, 0 }, out[4];
  struct spmvd_cache *c;
  struct spmvd_tuning t;
  struct spmv_error e;
  char reason[256];

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &dev, SPMV_F64, 10);
  ck_assert_int_eq(spmvd_cache_quarantine(c, FP1, "gpu-A", "sw-1", SPMV_F64,
                                          &bad, "illegal address", &e), 0);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      reason, sizeof reason, &e), 0);
  ck_assert_str_eq(reason, "cached configuration 'ellr-t bs=256 t=4' is "
                   "quarantined, tuning again");
  ck_assert_int_eq(spmvd_cache_quarantined(c, FP1, "gpu-A", "sw-1", SPMV_F64,
                                           out, 4, &e), 1);
  ck_assert_int_eq(out[0].format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(out[0].bs, 256);
  ck_assert_int_eq(out[0].tpr, 4);
  ck_assert_int_eq(spmvd_cache_quarantined(c, FP1, "gpu-A", "sw-1", SPMV_F32,
                                           out, 4, &e), 0);
  spmvd_cache_close(c);
}
END_TEST

START_TEST(test_forget)
{
  struct spmvd_device_info a = device("gpu-A", "sw-1");
  struct spmvd_device_info b = device("gpu-B", "sw-1");
  struct spmvd_cache *c;
  struct spmv_error e;
  json_t *list;
  int n;

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &a, SPMV_F64, 10);
  store(c, FP1, &b, SPMV_F64, 11);
  store(c, FP2, &a, SPMV_F32, 12);
  ck_assert_int_eq(spmvd_cache_list(c, &list, &e), 0);
  ck_assert_int_eq(json_array_size(list), 3);
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(list, 0),
                                                      "nnz")), 5000);
  json_decref(list);
  ck_assert_int_eq(spmvd_cache_forget(c, FP1, &n, &e), 0);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(spmvd_cache_show(c, FP1, &list, &e), SPMV_ENOENT);
  ck_assert_ptr_nonnull(strstr(e.msg, FP1));
  ck_assert_int_eq(spmvd_cache_forget(c, FP1, &n, &e), 0);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(spmvd_cache_forget(c, "all", &n, &e), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(spmvd_cache_list(c, &list, &e), 0);
  ck_assert_int_eq(json_array_size(list), 0);
  json_decref(list);
  ck_assert_int_eq(spmvd_cache_forget(c, "nope", &n, &e), SPMV_EINVAL);
  spmvd_cache_close(c);
}
END_TEST

START_TEST(test_show)
{
  struct spmvd_device_info a = device("gpu-A", "sw-1");
  struct spmvd_cache *c;
  struct spmv_error e;
  json_t *doc, *tu, *tr;

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &a, SPMV_F64, 10);
  spmvd_cache_close(c);
  ck_assert_int_eq(spmvd_cache_open(path, SPMVD_CACHE_READONLY, &c, &e), 0);
  ck_assert_int_eq(spmvd_cache_show(c, FP1, &doc, &e), 0);
  ck_assert_str_eq(json_string_value(json_object_get(doc, "fingerprint")), FP1);
  ck_assert_int_eq(json_integer_value(json_object_get(doc, "rows")), 1000);
  ck_assert_double_eq(json_real_value(json_object_get(
                          json_object_get(doc, "profile"), "rl_cv")), 0.3);
  ck_assert_int_eq(json_array_size(json_object_get(
                       json_object_get(doc, "profile"), "hist")), 4);
  tu = json_array_get(json_object_get(doc, "tunings"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(
                       json_object_get(tu, "config"), "format")), "ellr-t");
  tr = json_object_get(tu, "trials");
  ck_assert_int_eq(json_array_size(tr), 2);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tr, 0),
                                                     "status")), "ok");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tr, 1),
                                                     "status")), "failed");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tr, 1),
                                                     "config")), "coo bs=128");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tr, 1),
                                                     "message")),
                   "out of memory");
  json_decref(doc);
  spmvd_cache_close(c);
}
END_TEST

START_TEST(test_export_import)
{
  struct spmvd_device_info a = device("gpu-A", "sw-1");
  struct spmvd_device_info b = device("gpu-B", "sw-1");
  struct spmvd_cache *c, *c2;
  struct spmvd_tuning t;
  struct spmv_error e;
  json_t *doc, *doc2, *bad;
  char p2[400], *text;
  int in, sk;

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &a, SPMV_F64, 10);
  store(c, FP2, &a, SPMV_F32, 20);
  store(c, FP2, &b, SPMV_F32, 30);
  ck_assert_int_eq(spmvd_cache_export(c, NULL, &doc, &e), 0);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "tunings")), 3);
  ck_assert_int_eq(spmvd_cache_export(c, FP1, &doc2, &e), 0);
  ck_assert_int_eq(json_array_size(json_object_get(doc2, "tunings")), 1);
  json_decref(doc2);
  spmvd_cache_close(c);
  /* Through text, as spmvctl would carry it to another machine. */
  text = json_dumps(doc, 0);
  json_decref(doc);
  doc = json_loads(text, 0, NULL);
  free(text);
  ck_assert_ptr_nonnull(doc);
  snprintf(p2, sizeof p2, "%s/other.db", dir);
  ck_assert_int_eq(spmvd_cache_open(p2, 0, &c2, &e), 0);
  ck_assert_msg(spmvd_cache_import(c2, doc, "gpu-A", "sw-1", &in, &sk, &e) ==
                0, "%s", e.msg);
  ck_assert_int_eq(in, 2);
  ck_assert_int_eq(sk, 1);
  ck_assert_int_eq(spmvd_cache_lookup(c2, FP2, "gpu-A", "sw-1", SPMV_F32, &t,
                                      NULL, 0, &e), 1);
  ck_assert_double_eq(t.time_us, 20);
  ck_assert_str_eq(t.text, "ellr-t bs=256 t=4");
  ck_assert_int_eq(spmvd_cache_lookup(c2, FP2, "gpu-B", "sw-1", SPMV_F32, &t,
                                      NULL, 0, &e), 0);
  /* Re-exported, it carries the same trials. */
  ck_assert_int_eq(spmvd_cache_export(c2, FP1, &doc2, &e), 0);
  ck_assert_int_eq(json_array_size(json_object_get(json_array_get(
                       json_object_get(doc2, "tunings"), 0), "trials")), 2);
  json_decref(doc2);
  /* A malformed entry fails the whole import, naming it; nothing written. */
  bad = json_deep_copy(doc);
  json_object_del(json_array_get(json_object_get(bad, "tunings"), 2),
                  "time_us");
  ck_assert_int_eq(spmvd_cache_forget(c2, "all", NULL, &e), 0);
  ck_assert_int_eq(spmvd_cache_import(c2, bad, NULL, NULL, &in, &sk, &e),
                   SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "tuning 2"));
  ck_assert_ptr_nonnull(strstr(e.msg, "time_us"));
  ck_assert_int_eq(spmvd_cache_lookup(c2, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      NULL, 0, &e), 0);
  /* The array alone is accepted, with no key filter. */
  ck_assert_int_eq(spmvd_cache_import(c2, json_object_get(doc, "tunings"),
                                      NULL, NULL, &in, &sk, &e), 0);
  ck_assert_int_eq(in, 3);
  ck_assert_int_eq(sk, 0);
  json_decref(bad);
  json_decref(doc);
  spmvd_cache_close(c2);
}
END_TEST

START_TEST(test_readonly_refuses_writes)
{
  struct spmvd_device_info a = device("gpu-A", "sw-1");
  struct spmv_config cfg = { SPMV_FMT_COO, 128, 0, 0, 0 };
  struct spmvd_cache *c;
  struct spmvd_tuning t;
  struct spmvd_decision d;
  struct spmv_profile p = profile();
  struct spmv_error e;
  json_t *doc, *fit = json_pack("{sf}", "a", 1.0);
  int n;

  ck_assert_int_eq(spmvd_cache_open(path, SPMVD_CACHE_READONLY, &c, &e),
                   SPMV_ENOENT);
  ck_assert_ptr_nonnull(strstr(e.msg, path));
  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &a, SPMV_F64, 10);
  spmvd_cache_close(c);
  ck_assert_int_eq(spmvd_cache_open(path, SPMVD_CACHE_READONLY, &c, &e), 0);
  decision(&d, 5);
  spmvd_tuning_from_decision(&t, &d, FP2, &a, SPMV_F64);
  ck_assert_int_eq(spmvd_cache_store(c, &t, &p, NULL, 0, NULL, &e),
                   SPMV_EPERM);
  ck_assert_ptr_nonnull(strstr(e.msg, "read-only"));
  ck_assert_int_eq(spmvd_cache_hit(c, 1, &e), SPMV_EPERM);
  ck_assert_int_eq(spmvd_cache_forget(c, "all", &n, &e), SPMV_EPERM);
  ck_assert_int_eq(spmvd_cache_quarantine(c, FP1, "gpu-A", "sw-1", SPMV_F64,
                                          &cfg, NULL, &e), SPMV_EPERM);
  ck_assert_int_eq(spmvd_cache_device_put(c, &a, &e), SPMV_EPERM);
  ck_assert_int_eq(spmvd_cache_calibration_put(c, "gpu-A", "sw-1", SPMV_F64,
                                               SPMV_FMT_COO, fit, &e),
                   SPMV_EPERM);
  ck_assert_int_eq(spmvd_cache_export(c, NULL, &doc, &e), 0);
  ck_assert_int_eq(spmvd_cache_import(c, doc, NULL, NULL, &n, &n, &e),
                   SPMV_EPERM);
  json_decref(doc);
  ck_assert_int_eq(spmvd_cache_lookup(c, FP1, "gpu-A", "sw-1", SPMV_F64, &t,
                                      NULL, 0, &e), 1);
  spmvd_decision_fini(&d);
  json_decref(fit);
  spmvd_cache_close(c);
}
END_TEST

START_TEST(test_calibrations)
{
  struct spmvd_cache *c;
  struct spmv_error e;
  json_t *fit = json_pack("{sssf}", "kind", "saddle", "a", 0.25), *out;

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  ck_assert_int_eq(spmvd_cache_calibration_get(c, "gpu-A", "sw-1", SPMV_F64,
                                               &out, &e), 0);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(spmvd_cache_calibration_put(c, "gpu-A", "sw-1", SPMV_F64,
                                               SPMV_FMT_JAD, fit, &e), 0);
  ck_assert_int_eq(spmvd_cache_calibration_put(c, "gpu-A", "sw-1", SPMV_F64,
                                               SPMV_FMT_JAD, fit, &e), 0);
  ck_assert_int_eq(spmvd_cache_calibration_get(c, "gpu-A", "sw-1", SPMV_F64,
                                               &out, &e), 1);
  ck_assert_int_eq(json_object_size(out), 1);
  ck_assert_double_eq(json_real_value(json_object_get(
                          json_object_get(out, "jad"), "a")), 0.25);
  json_decref(out);
  ck_assert_int_eq(spmvd_cache_calibration_get(c, "gpu-A", "sw-1", SPMV_F32,
                                               &out, &e), 0);
  json_decref(fit);
  spmvd_cache_close(c);
}
END_TEST

/* Splits travel in an export: exported with their matrix, imported where
 * every block's device is the importer's and the cache holds the matrix,
 * skipped (and counted) otherwise; a malformed one fails the import. */
START_TEST(test_splits_export_import)
{
  struct spmvd_device_info a = device("gpu-A", "sw-1");
  struct spmvd_device_info b = device("gpu-B", "sw-1");
  struct spmvd_cache *c, *c2;
  struct spmv_error e;
  json_t *doc, *sp, *bad;
  char p2[400], *got;
  int in, sk;

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  store(c, FP1, &a, SPMV_F64, 10);
  store(c, FP2, &b, SPMV_F32, 30);
  ck_assert_int_eq(spmvd_cache_split_put(c, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, "[\"coo bs=128\",\"ell bs=256\"]",
                                         &e), 0);
  ck_assert_int_eq(spmvd_cache_split_put(c, FP1, "gpu-A | gpu-B", "sw-1",
                                         SPMV_F64, 2, "[\"coo bs=128\",\"coo bs=128\"]",
                                         &e), 0);
  ck_assert_int_eq(spmvd_cache_split_put(c, FP2, "gpu-B | gpu-B | gpu-B", "sw-1",
                                         SPMV_F32, 3,
                                         "[\"coo bs=128\",\"coo bs=128\",\"coo bs=128\"]",
                                         &e), 0);
  ck_assert_int_eq(spmvd_cache_export(c, NULL, &doc, &e), 0);
  sp = json_object_get(doc, "splits");
  ck_assert_int_eq(json_array_size(sp), 3);
  ck_assert_str_eq(json_string_value(json_array_get(json_object_get(
                       json_array_get(sp, 0), "configs"), 1)), "ell bs=256");
  json_t *one;
  ck_assert_int_eq(spmvd_cache_export(c, FP2, &one, &e), 0);
  ck_assert_int_eq(json_array_size(json_object_get(one, "splits")), 1);
  json_decref(one);
  spmvd_cache_close(c);
  snprintf(p2, sizeof p2, "%s/other.db", dir);
  ck_assert_int_eq(spmvd_cache_open(p2, 0, &c2, &e), 0);
  /* gpu-A takes FP1's tuning and its split on two gpu-A, not the mixed
   * set, nor FP2's (a gpu-B tuning, not taken: no matrix). */
  ck_assert_msg(spmvd_cache_import(c2, doc, "gpu-A", "sw-1", &in, &sk, &e) == 0,
                "%s", e.msg);
  ck_assert_int_eq(in, 2);
  ck_assert_int_eq(sk, 3);
  ck_assert_int_eq(spmvd_cache_split_get(c2, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, &got, &e), 1);
  ck_assert_str_eq(got, "[\"coo bs=128\",\"ell bs=256\"]");
  free(got);
  ck_assert_int_eq(spmvd_cache_split_get(c2, FP1, "gpu-A | gpu-B", "sw-1",
                                         SPMV_F64, 2, &got, &e), 0);
  /* A split whose configs disagree with its blocks fails it all. */
  bad = json_deep_copy(doc);
  json_object_set_new(json_array_get(json_object_get(bad, "splits"), 2),
                      "blocks", json_integer(2));
  ck_assert_int_eq(spmvd_cache_forget(c2, "all", NULL, &e), 0);
  ck_assert_int_eq(spmvd_cache_import(c2, bad, NULL, NULL, &in, &sk, &e),
                   SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "split 2"));
  ck_assert_int_eq(spmvd_cache_split_get(c2, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, &got, &e), 0);
  /* With no key filter, every split whose matrix came too. */
  ck_assert_int_eq(spmvd_cache_import(c2, doc, NULL, NULL, &in, &sk, &e), 0);
  ck_assert_int_eq(in, 5);
  ck_assert_int_eq(sk, 0);
  ck_assert_int_eq(spmvd_cache_split_get(c2, FP2, "gpu-B | gpu-B | gpu-B",
                                         "sw-1", SPMV_F32, 3, &got, &e), 1);
  free(got);
  json_decref(bad);
  json_decref(doc);
  spmvd_cache_close(c2);
}
END_TEST

/* The cache suite. */
/* A split's picks: a miss until stored, then a hit for that key only (the
 * device set, the type, the number of blocks), replaced by a later put,
 * gone with the matrix; the matrix must be in the cache. */
START_TEST(test_splits)
{
  struct spmvd_device_info a = device("gpu-A", "sw-1");
  struct spmvd_cache *c;
  struct spmv_error e;
  char *got;
  int n;

  ck_assert_int_eq(spmvd_cache_open(path, 0, &c, &e), 0);
  ck_assert_int_lt(spmvd_cache_split_put(c, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, "[\"a\",\"b\"]", &e), 0);
  store(c, FP1, &a, SPMV_F64, 10);
  ck_assert_int_eq(spmvd_cache_split_get(c, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, &got, &e), 0);
  ck_assert_ptr_null(got);
  ck_assert_msg(spmvd_cache_split_put(c, FP1, "gpu-A | gpu-A", "sw-1", SPMV_F64,
                                      2, "[\"a\",\"b\"]", &e) == 0, "%s", e.msg);
  ck_assert_int_eq(spmvd_cache_split_get(c, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, &got, &e), 1);
  ck_assert_str_eq(got, "[\"a\",\"b\"]");
  free(got);
  const char *sets[] = {"gpu-A | gpu-B", "gpu-A | gpu-A"};
  const char *sws[] = {"sw-1", "sw-2"};
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(spmvd_cache_split_get(c, FP1, sets[k], sws[k], SPMV_F64, 2,
                                           &got, &e), 0);
    ck_assert_int_eq(spmvd_cache_split_get(c, FP1, "gpu-A | gpu-A", "sw-1",
                                           k ? SPMV_F32 : SPMV_F64, k ? 2 : 3,
                                           &got, &e), 0);
  }
  ck_assert_int_eq(spmvd_cache_split_put(c, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, "[\"c\",\"d\"]", &e), 0);
  ck_assert_int_eq(spmvd_cache_split_get(c, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, &got, &e), 1);
  ck_assert_str_eq(got, "[\"c\",\"d\"]");
  free(got);
  ck_assert_int_eq(spmvd_cache_split_get(c, FP1, "gpu-A", "sw-1", SPMV_F64, 1,
                                         &got, &e), SPMV_EINVAL);
  ck_assert_int_eq(spmvd_cache_forget(c, FP1, &n, &e), 0);
  ck_assert_int_eq(spmvd_cache_split_get(c, FP1, "gpu-A | gpu-A", "sw-1",
                                         SPMV_F64, 2, &got, &e), 0);
  spmvd_cache_close(c);
}
END_TEST

static Suite *cache_suite(void)
{
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("core");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_fresh_db);
  tcase_add_test(tc, test_existing_db_migrated);
  tcase_add_test(tc, test_store_lookup_reopen);
  tcase_add_test(tc, test_miss_reasons);
  tcase_add_test(tc, test_corrupt_rows);
  tcase_add_test(tc, test_quarantine);
  tcase_add_test(tc, test_forget);
  tcase_add_test(tc, test_show);
  tcase_add_test(tc, test_export_import);
  tcase_add_test(tc, test_splits_export_import);
  tcase_add_test(tc, test_readonly_refuses_writes);
  tcase_add_test(tc, test_calibrations);
  tcase_add_test(tc, test_splits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(cache_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
