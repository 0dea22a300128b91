/* check_vectors_proto.c: device vectors and lists of operations at the
 * protocol's level: what a client library cannot send (foreign numbers,
 * malformed steps), a worker restart, the limits, the cleanup. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

static json_t *call(int fd, json_t *req, const void *pl, uint64_t plen,
                    void **rp, uint64_t *rlen)
{
  json_t *r = itest_call(fd, req, pl, plen, rp, rlen);
  ck_assert_msg(r != NULL, "no reply");
  return r;
}

/* A new vector of n values; returns its number. */
static int64_t vcreate(int fd, const char *dt, int64_t n)
{
  json_t *r = call(fd, json_pack("{ss si ss sI}", "op", "vector-create", "id",
                                 2, "dtype", dt, "n", (json_int_t)n),
                   NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "vector-create: %s",
                itest_error_code(r));
  int64_t v = json_integer_value(json_object_get(r, "vector"));
  json_decref(r);
  return v;
}

/* Runs a list given as JSON text (steps), payload pl; returns the reply. */
static json_t *run(int fd, const char *steps, const void *pl, uint64_t plen,
                   void **rp, uint64_t *rlen)
{
  json_error_t e;
  json_t *ops = json_loads(steps, 0, &e);
  ck_assert_msg(ops != NULL, "bad test list %s: %s", steps, e.text);
  return call(fd, json_pack("{ss si so}", "op", "ops", "id", 3, "ops", ops),
              pl, plen, rp, rlen);
}

/* Expects reply r to fail with code and a message holding text. */
static void expect_error(json_t *r, const char *code, const char *text)
{
  const char *msg = json_string_value(
      json_object_get(json_object_get(r, "error"), "message"));
  ck_assert_str_eq(itest_error_code(r), code);
  ck_assert_msg(msg && strstr(msg, text), "message '%s' lacks '%s'",
                msg ? msg : "", text);
  json_decref(r);
}

static json_t *status(int fd)
{
  return call(fd, json_pack("{ss si}", "op", "status", "id", 50), NULL, 0,
              NULL, NULL);
}

static int64_t status_int(int fd, const char *key)
{
  json_t *r = status(fd);
  int64_t v = json_integer_value(json_object_get(r, key));
  json_decref(r);
  return v;
}

/* Values in +-[0.5, 1.5), never zero. */
static void fill_random(double *x, int n, unsigned seed)
{
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (0.5 + (seed >> 8 & 0xffff) / 65536.0) * (seed & 0x10000 ? -1 : 1);
  }
}

/* One list: upload, product, a dot whose value scales an axpby, a norm,
 * a download; checked against the same arithmetic in double here. */
START_TEST(list_computes)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  int64_t h = itest_handle(r);
  json_decref(r);
  int n = (int)A->rows;
  int64_t x = vcreate(fd, "f64", n), y = vcreate(fd, "f64", n);
  double *hx = malloc(sizeof *hx * n), *ref = calloc(n, sizeof *ref);
  fill_random(hx, n, 7);
  for (int i = 0; i < n; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      ref[i] += ((const double *)A->val)[k] * hx[A->col_idx[k]];
  double dot = 0, nrm = 0;
  for (int i = 0; i < n; i++)
    dot += hx[i] * ref[i];
  for (int i = 0; i < n; i++) {
    ref[i] = (2.0 * dot / dot) * hx[i] - ref[i];
    nrm += ref[i] * ref[i];
  }
  nrm = sqrt(nrm);
  char steps[512];
  snprintf(steps, sizeof steps,
           "[{\"op\":\"upload\",\"x\":%lld},"
           "{\"op\":\"spmv\",\"handle\":%lld,\"x\":%lld,\"y\":%lld},"
           "{\"op\":\"dot\",\"x\":%lld,\"y\":%lld},"
           "{\"op\":\"axpby\",\"x\":%lld,\"y\":%lld,"
           "\"alpha\":{\"c\":2,\"mul\":[0],\"div\":[0]},\"beta\":-1},"
           "{\"op\":\"nrm2\",\"x\":%lld},{\"op\":\"download\",\"x\":%lld}]",
           (long long)x, (long long)h, (long long)x, (long long)y,
           (long long)x, (long long)y, (long long)x, (long long)y,
           (long long)y, (long long)y);
  void *out = NULL;
  uint64_t olen = 0;
  r = run(fd, steps, hx, sizeof *hx * n, &out, &olen);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "ops: %s",
                itest_error_code(r));
  json_t *res = json_object_get(r, "results");
  ck_assert_int_eq(json_array_size(res), 2);
  ck_assert(fabs(json_number_value(json_array_get(res, 0)) - dot) <=
            1e-12 * fabs(dot));
  ck_assert(fabs(json_number_value(json_array_get(res, 1)) - nrm) <=
            1e-12 * nrm);
  ck_assert_uint_eq(olen, sizeof *hx * n);
  for (int i = 0; i < n; i++)
    ck_assert_msg(fabs(((double *)out)[i] - ref[i]) <= 1e-12 * (1 + fabs(ref[i])),
                  "y[%d] = %g, expected %g", i, ((double *)out)[i], ref[i]);
  json_decref(r);
  /* The same list again: the same bits. */
  void *out2 = NULL;
  json_t *r2 = run(fd, steps, hx, sizeof *hx * n, &out2, &olen);
  ck_assert_int_eq(memcmp(out, out2, olen), 0);
  json_decref(r2);
  free(out);
  free(out2);
  free(hx);
  free(ref);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* What JSON cannot hold comes back as a string. */
START_TEST(nonfinite_results)
{
  int fd = itest_open(&itest_d);
  int64_t x = vcreate(fd, "f32", 4), e = vcreate(fd, "f32", 0);
  float v[4] = {1, INFINITY, 2, 3};
  char steps[256];
  snprintf(steps, sizeof steps,
           "[{\"op\":\"upload\",\"x\":%lld},{\"op\":\"nrm2\",\"x\":%lld},"
           "{\"op\":\"fill\",\"x\":%lld,\"value\":{\"mul\":[0],\"div\":[0]}},"
           "{\"op\":\"dot\",\"x\":%lld,\"y\":%lld},{\"op\":\"nrm2\",\"x\":%lld}]",
           (long long)x, (long long)x, (long long)x, (long long)x,
           (long long)x, (long long)e);
  json_t *r = run(fd, steps, v, sizeof v, NULL, NULL);
  json_t *res = json_object_get(r, "results");
  ck_assert_str_eq(json_string_value(json_array_get(res, 0)), "Infinity");
  ck_assert_str_eq(json_string_value(json_array_get(res, 1)), "NaN");
  ck_assert(json_number_value(json_array_get(res, 2)) == 0.0);
  json_decref(r);
  close(fd);
}
END_TEST

/* Every malformed step names itself; nothing of the list runs. */
START_TEST(bad_lists)
{
  int fd = itest_open(&itest_d);
  int64_t x = vcreate(fd, "f64", 10), y = vcreate(fd, "f64", 9);
  int64_t z = vcreate(fd, "f32", 10);
  char s[512];

#define BAD(code, text, ...)                                                  \
  do {                                                                        \
    snprintf(s, sizeof s, __VA_ARGS__);                                       \
    expect_error(run(fd, s, NULL, 0, NULL, NULL), code, text);                \
  } while (0)
  BAD("EINVAL", "ops[0] (axpby): x has 10 values, y 9",
      "[{\"op\":\"axpby\",\"x\":%lld,\"y\":%lld,\"alpha\":1,\"beta\":1}]",
      (long long)x, (long long)y);
  BAD("EINVAL", "ops[1] (copy): x is f64, y f32",
      "[{\"op\":\"fill\",\"x\":%lld,\"value\":1},"
      "{\"op\":\"copy\",\"x\":%lld,\"y\":%lld}]",
      (long long)x, (long long)x, (long long)z);
  BAD("ENOENT", "ops[0] (nrm2): no vector 999999",
      "[{\"op\":\"nrm2\",\"x\":999999}]");
  BAD("EPROTO", "ops[0] (scale): \"alpha\" names a result",
      "[{\"op\":\"scale\",\"x\":%lld,\"alpha\":{\"mul\":[0]}},"
      "{\"op\":\"nrm2\",\"x\":%lld}]",
      (long long)x, (long long)x);
  BAD("EPROTO", "ops[0] (copy): unknown field \"w\"",
      "[{\"op\":\"copy\",\"x\":%lld,\"y\":%lld,\"w\":1}]", (long long)x,
      (long long)x);
  BAD("EPROTO", "ops[0] (dot): field \"y\" is missing",
      "[{\"op\":\"dot\",\"x\":%lld,\"y\":\"one\"}]", (long long)x);
  BAD("EPROTO", "ops[0]: unknown step 'frobnicate'",
      "[{\"op\":\"frobnicate\",\"x\":%lld}]", (long long)x);
  BAD("EPROTO", "ops[0] (fill): field \"value\" is missing or not a number",
      "[{\"op\":\"fill\",\"x\":%lld,\"value\":\"1\"}]", (long long)x);
  BAD("EPROTO", "\"ops\" must be an array of 1 to 256 steps", "[]");
  BAD("EPROTO", "payload is 0 bytes, but the list's uploads need 80",
      "[{\"op\":\"upload\",\"x\":%lld}]", (long long)x);
  BAD("EINVAL", "has no vectors attached",
      "[{\"op\":\"upload\",\"x\":%lld,\"memfd\":1,\"offset\":0}]",
      (long long)x);
#undef BAD
  /* 257 steps. */
  json_t *ops = json_array();
  for (int i = 0; i < 257; i++)
    json_array_append_new(ops, json_pack("{ss sI}", "op", "nrm2", "x",
                                         (json_int_t)x));
  expect_error(call(fd, json_pack("{ss si so}", "op", "ops", "id", 4, "ops",
                                  ops), NULL, 0, NULL, NULL),
               "EPROTO", "1 to 256 steps");
  /* An spmv of a matrix that is not the caller's, a vector as both. */
  snprintf(s, sizeof s, "[{\"op\":\"spmv\",\"handle\":77,\"x\":%lld,\"y\":%lld}]",
           (long long)x, (long long)y);
  expect_error(run(fd, s, NULL, 0, NULL, NULL), "ENOENT", "ops[0] (spmv)");
  close(fd);
}
END_TEST

/* Another connection's vector numbers are unknown there, and a freed
 * vector is gone. */
START_TEST(ownership)
{
  int a = itest_open(&itest_d), b = itest_open(&itest_d);
  int64_t x = vcreate(a, "f64", 5);
  char s[128];

  snprintf(s, sizeof s, "[{\"op\":\"nrm2\",\"x\":%lld}]", (long long)x);
  expect_error(run(b, s, NULL, 0, NULL, NULL), "ENOENT", "no vector");
  expect_error(call(b, json_pack("{ss si sI}", "op", "vector-free", "id", 5,
                                 "vector", (json_int_t)x),
                    NULL, 0, NULL, NULL),
               "ENOENT", "no vector");
  json_t *r = run(a, s, NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  r = call(a, json_pack("{ss si sI}", "op", "vector-free", "id", 6, "vector",
                        (json_int_t)x), NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  expect_error(run(a, s, NULL, 0, NULL, NULL), "ENOENT", "no vector");
  close(a);
  close(b);
}
END_TEST

/* A connection that goes with vectors alive leaves nothing behind. */
START_TEST(disconnect_frees)
{
  int watch = itest_open(&itest_d);
  int64_t base = status_int(watch, "vectors");
  for (int round = 0; round < 20; round++) {
    int fd = itest_open(&itest_d);
    for (int i = 0; i < 5; i++)
      vcreate(fd, i % 2 ? "f32" : "f64", 1000 + i);
    close(fd);
  }
  int64_t left = -1;
  /* The daemon sees each close in its own time: poll its count. */
  for (int i = 0; i < 500 && left != base; i++) {
    left = status_int(watch, "vectors");
    if (left != base)
      usleep(10000);
  }
  ck_assert_int_eq(left, base);
  ck_assert_int_eq(status_int(watch, "vector_bytes"), 0);
  close(watch);
}
END_TEST

/* After a worker restart a vector's values are gone: reading it first is
 * EWORKER naming it; writing it makes it usable again. */
START_TEST(restart_loses_values)
{
  int fd = itest_open(&itest_d);
  int64_t x = vcreate(fd, "f64", 8), y = vcreate(fd, "f64", 8);
  double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  char s[256];

  snprintf(s, sizeof s, "[{\"op\":\"upload\",\"x\":%lld},{\"op\":\"copy\","
           "\"x\":%lld,\"y\":%lld}]", (long long)x, (long long)x, (long long)y);
  json_decref(run(fd, s, v, sizeof v, NULL, NULL));
  json_t *r = status(fd);
  pid_t wpid = (pid_t)json_integer_value(json_object_get(
      json_array_get(json_object_get(r, "workers"), 0), "pid"));
  json_decref(r);
  ck_assert_int_eq(kill(wpid, SIGKILL), 0);
  snprintf(s, sizeof s, "[{\"op\":\"nrm2\",\"x\":%lld}]", (long long)x);
  /* EWORKER either way: the request met the dying worker, or the values
   * were found lost. */
  for (int i = 0; i < 300; i++) {
    r = run(fd, s, NULL, 0, NULL, NULL);
    ck_assert_str_eq(itest_error_code(r), "EWORKER");
    const char *msg = json_string_value(
        json_object_get(json_object_get(r, "error"), "message"));
    int lost = msg && strstr(msg, "were lost");
    json_decref(r);
    if (lost)
      break;
    usleep(10000);
  }
  snprintf(s, sizeof s, "[{\"op\":\"fill\",\"x\":%lld,\"value\":2},"
           "{\"op\":\"nrm2\",\"x\":%lld}]", (long long)x, (long long)x);
  r = run(fd, s, NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s",
                itest_error_code(r));
  ck_assert(fabs(json_number_value(json_array_get(
                json_object_get(r, "results"), 0)) - sqrt(32.0)) < 1e-12);
  json_decref(r);
  snprintf(s, sizeof s, "[{\"op\":\"nrm2\",\"x\":%lld}]", (long long)x);
  r = run(fd, s, NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  snprintf(s, sizeof s, "[{\"op\":\"dot\",\"x\":%lld,\"y\":%lld}]",
           (long long)x, (long long)y);
  expect_error(run(fd, s, NULL, 0, NULL, NULL), "EWORKER",
               "ops[0] (dot): vector");
  close(fd);
}
END_TEST

/* The limits of spmvd.conf(5) name themselves. */
START_TEST(limits)
{
  struct itest_daemon d;
  itest_daemon_init(&d);
  itest_daemon_config(&d, "max_vectors_per_connection = 2\n"
                          "max_device_bytes_per_user = 1000\n");
  ck_assert_int_eq(itest_daemon_start(&d, NULL), 0);
  int fd = itest_open(&d);
  vcreate(fd, "f64", 10);
  expect_error(call(fd, json_pack("{ss si ss si}", "op", "vector-create", "id",
                                  2, "dtype", "f64", "n", 200),
                    NULL, 0, NULL, NULL),
               "ELIMIT", "max_device_bytes_per_user (1000)");
  vcreate(fd, "f32", 10);
  expect_error(call(fd, json_pack("{ss si ss si}", "op", "vector-create", "id",
                                  2, "dtype", "f64", "n", 1),
                    NULL, 0, NULL, NULL),
               "ELIMIT", "max_vectors_per_connection (2)");
  expect_error(call(fd, json_pack("{ss si ss si}", "op", "vector-create", "id",
                                  2, "dtype", "f16", "n", 1),
                    NULL, 0, NULL, NULL),
               "EPROTO", "\"dtype\"");
  expect_error(call(fd, json_pack("{ss si ss si}", "op", "vector-create", "id",
                                  2, "dtype", "f64", "n", -1),
                    NULL, 0, NULL, NULL),
               "EINVAL", "n is -1");
  close(fd);
  itest_daemon_fini(&d);
}
END_TEST

/* A daemon that polls between messages (busy_poll_us, off by default on
 * small hosts such as CI's) serves and stops as one that sleeps. */
START_TEST(busy_poll)
{
  struct itest_daemon d;
  itest_daemon_init(&d);
  itest_daemon_config(&d, "busy_poll_us = 300\n");
  ck_assert_int_eq(itest_daemon_start(&d, NULL), 0);
  int fd = itest_open(&d);
  int64_t x = vcreate(fd, "f64", 3);
  double v[3] = {3, 0, 4};
  char s[160];
  snprintf(s, sizeof s, "[{\"op\":\"upload\",\"x\":%lld},"
           "{\"op\":\"nrm2\",\"x\":%lld}]", (long long)x, (long long)x);
  for (int i = 0; i < 50; i++) {
    json_t *r = run(fd, s, v, sizeof v, NULL, NULL);
    ck_assert(json_number_value(json_array_get(json_object_get(r, "results"),
                                               0)) == 5.0);
    json_decref(r);
  }
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&d, SIGTERM), 0);
  itest_daemon_fini(&d);
}
END_TEST

static Suite *vectors_suite(void)
{
  Suite *s = suite_create("vectors_proto");
  TCase *t = tcase_create("proto");

  tcase_add_checked_fixture(t, itest_setup, itest_teardown);
  tcase_set_timeout(t, 60);
  tcase_add_test(t, list_computes);
  tcase_add_test(t, nonfinite_results);
  tcase_add_test(t, bad_lists);
  tcase_add_test(t, ownership);
  tcase_add_test(t, disconnect_frees);
  tcase_add_test(t, restart_loses_values);
  tcase_add_test(t, limits);
  tcase_add_test(t, busy_poll);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return itest_run(vectors_suite());
}
