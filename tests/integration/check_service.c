/* check_service.c: a real spmvd (cpu backend): every shared matrix, the cache. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "itest.h"

/* Every shared matrix, f64 (and f32 for every third), equals spmv_csr_ref. */
/* The schema names every format a decision may carry. */
START_TEST(schema_formats)
{
  itest_schema_formats_check();
}
END_TEST

START_TEST(every_shared_matrix)
{
  char **names = itest_matrix_names();
  int fd = itest_open(&itest_d), n = 0;

  ck_assert_ptr_nonnull(names[0]);
  for (char **p = names; *p; p++, n++) {
    struct spmv_csr *A = itest_matrix(*p);
    for (int f32 = 0; f32 <= (n % 3 == 0); f32++) {
      json_t *r = itest_load(fd, 100 + n, A, f32, "trial");
      int64_t h = itest_handle(r);
      ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "tuned");
      ck_assert_int_eq(strlen(json_string_value(json_object_get(r, "fingerprint"))), 32);
      double q = itest_multiply_check(fd, h, A, f32, (unsigned)n, NULL);
      ck_assert_msg(q >= 0 && q <= 1.0,
                    "%s (%s, %s): residual %.3g of its bound", *p,
                    f32 ? "f32" : "f64",
                    json_string_value(json_object_get(
                        json_object_get(r, "config"), "text")), q);
      json_decref(r);
      r = itest_call(fd, json_pack("{ss si sI}", "op", "free", "id", 1,
                                   "handle", (json_int_t)h), NULL, 0, NULL, NULL);
      ck_assert(json_is_true(json_object_get(r, "ok")));
      json_decref(r);
    }
    spmv_csr_free(A);
  }
  close(fd);
  itest_names_free(names);
}
END_TEST

/* A restarted daemon answers from the cache with the same decision; new
 * values on the same structure hit the cache too. */
START_TEST(restart_hits_cache)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "auto");
  char cfg[64];

  itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "tuned");
  ck_assert_ptr_nonnull(json_object_get(r, "reason"));
  snprintf(cfg, sizeof cfg, "%s",
           json_string_value(json_object_get(json_object_get(r, "config"), "text")));
  json_decref(r);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  ck_assert_int_eq(access(itest_d.sock, F_OK), -1);

  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  fd = itest_open(&itest_d);
  r = itest_load(fd, 2, A, 0, "auto");
  int64_t h = itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "cache");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "config"), "text")), cfg);
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 3);

  for (int64_t k = 0; k < A->nnz; k++)
    A->val[k] = A->val[k] * 0.25 + (double)(k % 7);
  r = itest_load(fd, 3, A, 0, "auto");
  h = itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "cache");
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 4);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* A cached configuration that fails on its first use is quarantined and
 * the matrix is tuned again; the product stays right. */
START_TEST(bad_cache_entry_retuned)
{
  struct spmv_csr *A = itest_random_csr(3000, 8, 11, 11);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  sqlite3 *db;

  itest_handle(r);
  json_decref(r);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  ck_assert_int_eq(sqlite3_open(itest_d.db, &db), SQLITE_OK);
  ck_assert_int_eq(sqlite3_exec(db,
                                "UPDATE tunings SET format='ellr-t', tpr=64, "
                                "config='ellr-t bs=0 t=64'",
                                NULL, NULL, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_changes(db), 1);
  sqlite3_close(db);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  fd = itest_open(&itest_d);
  r = itest_load(fd, 2, A, 0, "trial");
  int64_t h = itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "tuned");
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(r, "reason")),
                               "cached configuration 'ellr-t"));
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 1);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* Tunes handle h again with strategy s; returns the reply (asserted ok),
 * its progress events counted in *ev. */
static json_t *tune(int fd, int id, int64_t h, const char *s, int *ev)
{
  json_t *r;

  ck_assert_int_eq(itest_send(fd, json_pack("{ss si sI ss}", "op", "tune", "id",
                                            id, "handle", (json_int_t)h,
                                            "strategy", s),
                              NULL, 0), 0);
  r = itest_recv_reply(fd, NULL, NULL, ev);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  return r;
}

/* hello negotiates; info, list, free, tune, bench and status answer. */
START_TEST(operations)
{
  int fd = itest_connect(itest_d.sock), ev = 0;
  struct spmv_csr *A = itest_random_csr(500, 6, 1, 1);
  json_t *r;

  r = itest_call(fd, json_pack("{ss si si ss}", "op", "hello", "id", 1,
                               "version", 2, "client", "t"), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EVERSION");
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
                                   json_object_get(r, "error"), "message")),
                               "client speaks 2, spmvd speaks 1"));
  json_decref(r);
  close(fd);
  fd = itest_open(&itest_d);
  r = itest_load(fd, 2, A, 1, NULL);
  int64_t h = itest_handle(r);
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si sI}", "op", "info", "id", 3, "handle",
                               (json_int_t)h), NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  ck_assert_int_eq(json_integer_value(json_object_get(r, "nnz")), 3000);
  ck_assert_str_eq(json_string_value(json_object_get(r, "dtype")), "f32");
  ck_assert_int_eq(json_integer_value(json_object_get(
                       json_object_get(r, "profile"), "rl_max")), 6);
  ck_assert(json_array_size(json_object_get(r, "trials")) >= 1);
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si}", "op", "list", "id", 4), NULL, 0,
                 NULL, NULL);
  ck_assert_int_eq(json_array_size(json_object_get(r, "matrices")), 1);
  json_decref(r);

  r = tune(fd, 5, h, "exhaustive", &ev);
  ck_assert_str_eq(json_string_value(json_object_get(r, "strategy")), "exhaustive");
  ck_assert_int_ge(ev, 3);
  json_decref(r);
  itest_multiply_ok(fd, h, A, 1, 5);

  ev = 0;
  ck_assert_int_eq(itest_send(fd, json_pack("{ss si sI}", "op", "bench", "id",
                                            6, "handle", (json_int_t)h),
                              NULL, 0), 0);
  r = itest_recv_reply(fd, NULL, NULL, &ev);
  json_t *t = json_object_get(r, "trials");
  ck_assert_int_ge(json_array_size(t), 3);
  ck_assert_int_ge(ev, (int)json_array_size(t));
  for (size_t i = 1; i < json_array_size(t); i++)
    ck_assert(json_real_value(json_object_get(json_array_get(t, i - 1), "time_us")) <=
              json_real_value(json_object_get(json_array_get(t, i), "time_us")));
  json_decref(r);

  r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 7), NULL, 0,
                 NULL, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(r, "backend")), "cpu");
  ck_assert_int_eq(json_integer_value(json_object_get(r, "matrices")), 1);
  ck_assert_str_eq(json_string_value(json_object_get(r, "socket_path")), itest_d.sock);
  json_decref(r);

  /* The cache's admin operations: the daemon's own user may (root, the
   * admin group and that user; check_cachefaults tries another uid). */
  r = itest_call(fd, json_pack("{ss si s[]}", "op", "import", "id", 10,
                               "tunings"), NULL, 0, NULL, NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "imported")), 0);
  json_decref(r);
  /* export: the matrix's tunings (the tune's store may still be on the
   * cache thread: asked again until it is there), then all of them. */
  r = itest_call(fd, json_pack("{ss si sI}", "op", "info", "id", 16, "handle",
                               (json_int_t)h), NULL, 0, NULL, NULL);
  char fp[33];
  snprintf(fp, sizeof fp, "%s", json_string_value(json_object_get(r, "fingerprint")));
  json_decref(r);
  int found = 0;
  for (int i = 0; i < 200 && !found; i++) {
    r = itest_call(fd, json_pack("{ss si ss}", "op", "export", "id", 13,
                                 "fingerprint", fp), NULL, 0, NULL, NULL);
    json_t *tun = json_object_get(json_object_get(r, "export"), "tunings");
    found = json_array_size(tun) > 0;
    if (found)
      ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tun, 0),
                                                         "fingerprint")), fp);
    else
      ck_assert_str_eq(itest_error_code(r), "ENOENT");
    json_decref(r);
    if (!found)
      usleep(20000);
  }
  ck_assert_msg(found, "export never held the matrix's tunings");
  r = itest_call(fd, json_pack("{ss si}", "op", "export", "id", 14), NULL, 0,
                 NULL, NULL);
  ck_assert_int_ge(json_array_size(json_object_get(json_object_get(r, "export"),
                                                   "tunings")), 1);
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si ss}", "op", "export", "id", 15,
                               "fingerprint", "xyz"), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si ss}", "op", "forget", "id", 11,
                               "fingerprint", "all"), NULL, 0, NULL, NULL);
  ck_assert_int_ge(json_integer_value(json_object_get(r, "forgotten")), 1);
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si ss}", "op", "forget", "id", 12,
                               "fingerprint", "xyz"), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  json_decref(r);

  r = itest_call(fd, json_pack("{ss si sI}", "op", "free", "id", 8, "handle",
                               (json_int_t)h), NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si sI}", "op", "info", "id", 9, "handle",
                               (json_int_t)h), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "ENOENT");
  json_decref(r);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* bench with configs: only those, in their order, each answered; a
 * text that is no configuration is named; the others still run when one
 * cannot; a product after it is still right. */
START_TEST(bench_configs)
{
  int fd = itest_open(&itest_d), ev = 0;
  struct spmv_csr *A = itest_random_csr(400, 5, 3, 4);
  json_t *r, *t;
  int64_t h;

  r = itest_load(fd, 1, A, 0, NULL);
  h = itest_handle(r);
  json_decref(r);
  /* Bad requests: named, nothing timed. */
  r = itest_call(fd, json_pack("{ss si sI s[ss]}", "op", "bench", "id", 2, "handle",
                               (json_int_t)h, "configs", "ell bs=256", "ell bs=7x"),
                 NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
                                   json_object_get(r, "error"), "message")),
                               "configs[1] 'ell bs=7x'"));
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si sI s[] }", "op", "bench", "id", 3, "handle",
                               (json_int_t)h, "configs"), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si sI si}", "op", "bench", "id", 4, "handle",
                               (json_int_t)h, "rounds", 2), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si sI s[s] si}", "op", "bench", "id", 5, "handle",
                               (json_int_t)h, "configs", "ell bs=256", "rounds", 10),
                 NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  json_decref(r);

  /* Five, two of which cannot be built (sell's sigma not a multiple of
   * its C; cuSPARSE's BSR of a matrix without blocks), cuSPARSE's sliced
   * ELL run by the cpu backend as its CPU reference. */
  ck_assert_int_eq(itest_send(fd, json_pack("{ss si sI s[sssss] si}", "op", "bench", "id", 6,
                                            "handle", (json_int_t)h, "configs",
                                            "jad bs=128", "sell bs=128 c=32 sigma=48",
                                            "csr-vector bs=256 tpr=4", "cusparse alg=3",
                                            "cusparse alg=4", "rounds", 2),
                              NULL, 0), 0);
  r = itest_recv_reply(fd, NULL, NULL, &ev);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s", itest_error_code(r));
  t = json_object_get(r, "trials");
  ck_assert_uint_eq(json_array_size(t), 5);
  ck_assert_int_ge(ev, 5);
  static const char *const want[] = {"jad bs=128", "sell bs=128 c=32 sigma=48",
                                     "csr-vector bs=256 tpr=4", "cusparse alg=3",
                                     "cusparse alg=4"};
  for (size_t i = 0; i < 5; i++) {
    const json_t *x = json_array_get(t, i);
    int bad = i == 1 || i == 4;
    ck_assert_str_eq(json_string_value(json_object_get(x, "config")), want[i]);
    ck_assert_str_eq(json_string_value(json_object_get(x, "status")), (bad ? "failed" : "ok"));
    if (bad) {
      const json_t *e = json_object_get(x, "error");
      ck_assert_str_eq(json_string_value(json_object_get(e, "code")),
                       i == 1 ? "EINVAL" : "ETOOBIG");
      ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(e, "message")),
                                   i == 1 ? "sigma=48" : "(no block structure)"));
      ck_assert(json_real_value(json_object_get(x, "time_us")) == 0);
    } else {
      ck_assert_ptr_null(json_object_get(x, "error"));
      double us = json_real_value(json_object_get(x, "time_us"));
      ck_assert(us > 0);
      ck_assert(fabs(json_real_value(json_object_get(x, "gflops")) -
                     2.0 * (double)A->nnz / us / 1e3) < 1e-9 * (1 + 2.0 * (double)A->nnz / us));
    }
  }
  json_decref(r);
  /* The resident configuration still multiplies right. */
  itest_multiply_ok(fd, h, A, 0, 9);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* The format of a configuration text ("csr-scalar bs=256": "csr-scalar"). */
static void format_of(const char *cfg, char *out, size_t n)
{
  size_t k = strcspn(cfg, " ");

  snprintf(out, n, "%.*s", (int)k, cfg);
}

/* Whether trials (an array of {config}) lists a configuration of fmt. */
static int lists_format(const json_t *trials, const char *fmt)
{
  char f[32];

  for (size_t i = 0; i < json_array_size(trials); i++) {
    format_of(json_string_value(json_object_get(json_array_get(trials, i),
                                                "config")), f, sizeof f);
    if (strcmp(f, fmt) == 0)
      return 1;
  }
  return 0;
}

/*
 * exclude_formats in spmvd.conf: status names the formats; a cached
 * decision of one is not used (tuned again, the reason says why); no
 * tuning or bench times one, and a bench that names one is refused; the
 * products stay right; SIGHUP changes the list at once.
 */
START_TEST(excluded_formats)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_csr *B = itest_random_csr(400, 5, 3, 4);
  int fd = itest_open(&itest_d), ev = 0;
  char conf[128], fmt[32], cfg[64];
  json_t *r;
  int64_t h;

  r = itest_load(fd, 1, A, 0, "auto");
  itest_handle(r);
  snprintf(cfg, sizeof cfg, "%s", json_string_value(json_object_get(
                                      json_object_get(r, "config"), "text")));
  format_of(cfg, fmt, sizeof fmt);
  json_decref(r);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);

  /* The first decision's format and cuSPARSE's (absent on the cpu: its
   * name alone must be accepted). */
  snprintf(conf, sizeof conf, "exclude_formats = %s , cusparse\n", fmt);
  itest_daemon_config(&itest_d, conf);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  fd = itest_open(&itest_d);
  r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 2), NULL, 0,
                 NULL, NULL);
  ck_assert_ptr_nonnull(
      strstr(json_string_value(json_object_get(r, "exclude_formats")), fmt));
  ck_assert_ptr_nonnull(strstr(
      json_string_value(json_object_get(r, "exclude_formats")), "cusparse"));
  json_decref(r);

  r = itest_load(fd, 3, A, 0, "auto");
  h = itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "tuned");
  ck_assert_msg(strstr(json_string_value(json_object_get(r, "reason")),
                       "exclude_formats") != NULL,
                "%s", json_string_value(json_object_get(r, "reason")));
  format_of(json_string_value(json_object_get(json_object_get(r, "config"),
                                              "text")), cfg, sizeof cfg);
  ck_assert_str_ne(cfg, fmt);
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 7);

  /* trial, with its trials listed by info: none of the format. */
  json_decref(tune(fd, 4, h, "trial", &ev));
  r = itest_call(fd, json_pack("{ss si sI}", "op", "info", "id", 5, "handle",
                               (json_int_t)h), NULL, 0, NULL, NULL);
  ck_assert(json_array_size(json_object_get(r, "trials")) >= 1);
  ck_assert(!lists_format(json_object_get(r, "trials"), fmt));
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 8);

  /* bench: every candidate but the format's; naming one is refused. */
  r = itest_load(fd, 6, B, 0, NULL);
  h = itest_handle(r);
  json_decref(r);
  ck_assert_int_eq(itest_send(fd, json_pack("{ss si sI}", "op", "bench", "id",
                                            7, "handle", (json_int_t)h),
                              NULL, 0), 0);
  r = itest_recv_reply(fd, NULL, NULL, &ev);
  ck_assert(json_array_size(json_object_get(r, "trials")) >= 3);
  ck_assert(!lists_format(json_object_get(r, "trials"), fmt));
  json_decref(r);
  snprintf(cfg, sizeof cfg, "%s", fmt);
  r = itest_call(fd, json_pack("{ss si sI s[ss]}", "op", "bench", "id", 8,
                               "handle", (json_int_t)h, "configs", "jad",
                               cfg), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
                                   json_object_get(r, "error"), "message")),
                               "is excluded"));
  json_decref(r);
  itest_multiply_ok(fd, h, B, 0, 9);

  /* SIGHUP with the list emptied: at once, and the bench runs. */
  itest_daemon_config(&itest_d, "exclude_formats = none\n");
  kill(itest_d.pid, SIGHUP);
  for (int i = 0; i < 50; i++) {
    r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 10), NULL, 0,
                   NULL, NULL);
    int done = strcmp(json_string_value(json_object_get(r, "exclude_formats")),
                      "") == 0;
    json_decref(r);
    if (done)
      break;
    usleep(100000);
  }
  r = itest_call(fd, json_pack("{ss si sI s[s]}", "op", "bench", "id", 11,
                               "handle", (json_int_t)h, "configs", cfg), NULL,
                 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s",
                itest_error_code(r));
  json_decref(r);
  close(fd);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

/* Empty shapes: 0 x 0, empty rows, no rows, no columns. */
START_TEST(empty_shapes)
{
  static const int64_t shapes[][2] = {{0, 0}, {5, 5}, {0, 3}, {3, 0}};
  int fd = itest_open(&itest_d);

  for (size_t i = 0; i < 4; i++) {
    struct spmv_csr *A = spmv_csr_new(shapes[i][0], shapes[i][1], 0);
    json_t *r = itest_load(fd, 1 + (int64_t)i, A, 0, NULL);
    int64_t h = itest_handle(r);
    json_decref(r);
    double q = itest_multiply_check(fd, h, A, 0, 1, NULL);
    ck_assert_msg(q >= 0 && q <= 1.0, "%lld x %lld: residual %g of its bound",
                  (long long)shapes[i][0], (long long)shapes[i][1], q);
    spmv_csr_free(A);
  }
  close(fd);
}
END_TEST

/* multiply-batch: k vectors at once, each equal to its own product. */
START_TEST(multiply_batch)
{
  int fd = itest_open(&itest_d);
  struct spmv_csr *A = itest_random_csr(300, 4, 2, 2);
  int k = 3;
  double *x = malloc(sizeof *x * (size_t)(k * 300)), *yref = malloc(sizeof *yref * 300);
  void *out = NULL;
  uint64_t outlen = 0;
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  int64_t h = itest_handle(r);

  json_decref(r);
  for (int i = 0; i < k * 300; i++)
    x[i] = (double)(i % 17) - 8;
  r = itest_call(fd, json_pack("{ss si sI sf sf si}", "op", "multiply-batch",
                               "id", 2, "handle", (json_int_t)h, "alpha", 2.0,
                               "beta", 0.0, "k", k),
                 x, sizeof *x * (size_t)(k * 300), &out, &outlen);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  ck_assert_uint_eq(outlen, sizeof(double) * (size_t)(k * 300));
  for (int j = 0; j < k; j++) {
    spmv_csr_ref(A, 2.0, x + j * 300, 0.0, yref);
    for (int i = 0; i < 300; i++)
      ck_assert_double_eq_tol(((double *)out)[j * 300 + i], yref[i], 1e-12);
  }
  json_decref(r);
  free(out);
  free(x);
  free(yref);
  spmv_csr_free(A);
  close(fd);
}
END_TEST

/* Sends multiply-batch of k vectors x (k * cols) with alpha 1, beta 0. */
static void send_batch(int fd, int64_t id, int64_t h, int k, const double *x,
                       int64_t cols)
{
  ck_assert_int_eq(itest_send(fd, json_pack("{ss sI sI sf sf si}", "op",
                                            "multiply-batch", "id",
                                            (json_int_t)id, "handle",
                                            (json_int_t)h, "alpha", 1.0,
                                            "beta", 0.0, "k", k),
                              x, sizeof *x * (size_t)(k * cols)), 0);
}

/* Reads a batch's reply and compares each y with spmv_csr_ref. */
static void check_batch(int fd, const struct spmv_csr *A, int k,
                        const double *x)
{
  double *yr = malloc(sizeof *yr * (size_t)A->rows);
  void *out = NULL;
  uint64_t len = 0;
  json_t *r = itest_recv_reply(fd, &out, &len, NULL);

  ck_assert(r && json_is_true(json_object_get(r, "ok")));
  ck_assert_uint_eq(len, sizeof(double) * (size_t)(k * A->rows));
  for (int v = 0; v < k; v++) {
    spmv_csr_ref(A, 1.0, x + v * A->cols, 0.0, yr);
    for (int64_t i = 0; i < A->rows; i++)
      ck_assert_double_eq_tol(((double *)out)[v * A->rows + i], yr[i],
                              1e-12 * (1.0 + fabs(yr[i])));
  }
  json_decref(r);
  free(out);
  free(yr);
}

/* Products sent back to back before any reply is read, each y larger than
 * the socket can hold: the second cannot reuse the vectors the first reply
 * is still leaving from, and both come back right; then the next product
 * on the connection reuses its buffer again. */
START_TEST(pipelined_multiplies)
{
  struct spmv_csr *A = itest_random_csr(200000, 2, 8, 8);
  int fd = itest_open(&itest_d), k = 8;
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  int64_t h = itest_handle(r);
  double *x1 = malloc(sizeof *x1 * (size_t)(k * A->cols));
  double *x2 = malloc(sizeof *x2 * (size_t)(k * A->cols));

  json_decref(r);
  for (int64_t j = 0; j < k * A->cols; j++) {
    x1[j] = (double)(j % 31) - 15;
    x2[j] = (double)(j % 17) * 0.5;
  }
  send_batch(fd, 2, h, k, x1, A->cols);
  send_batch(fd, 3, h, k, x2, A->cols);
  check_batch(fd, A, k, x1);
  check_batch(fd, A, k, x2);
  send_batch(fd, 4, h, k, x2, A->cols);
  check_batch(fd, A, k, x2);
  itest_multiply_ok(fd, h, A, 0, 9);
  free(x1);
  free(x2);
  spmv_csr_free(A);
  close(fd);
}
END_TEST

static Suite *service_suite(void)
{
  Suite *s = suite_create("service");
  TCase *tc = tcase_create("service");

  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, schema_formats);
  tcase_add_test(tc, every_shared_matrix);
  tcase_add_test(tc, restart_hits_cache);
  tcase_add_test(tc, operations);
  tcase_add_test(tc, bench_configs);
  tcase_add_test(tc, bad_cache_entry_retuned);
  tcase_add_test(tc, excluded_formats);
  tcase_add_test(tc, multiply_batch);
  tcase_add_test(tc, empty_shapes);
  tcase_add_test(tc, pipelined_multiplies);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(service_suite());
}
