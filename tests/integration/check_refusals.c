/* check_refusals.c: what a refused request leaves: a load that fails
 * leaves no matrix and no memory counted (one failing by a crash:
 * check_faults.c), a field of the wrong type or
 * unknown to its op's schema is EPROTO naming it, and the library's own
 * refusals (spmv_forget, spmv_load_mtx) keep the connection working. */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"

/* A cached decision whose time is not finite (the battery's 1e999): the
 * load either answers (retuned) or fails, and a failure leaves no matrix:
 * four loads under max_matrices_per_user = 3 never meet the limit. */
START_TEST(unanswerable_cache_row)
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
  ck_assert_int_eq(sqlite3_exec(db, "UPDATE tunings SET time_us = 1e999",
                                NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  itest_daemon_config(&itest_d, "max_matrices_per_user = 3\n");
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  fd = itest_open(&itest_d);
  int64_t held = itest_resident(fd);
  /* A load that answers (retuned, as the cache now treats the row) is
   * freed again, so that only failures could use the limit up. */
  for (int i = 0; i < 4; i++) {
    r = itest_load(fd, 10 + i, A, 0, "trial");
    ck_assert_str_ne(itest_error_code(r), "ELIMIT");
    if (json_is_true(json_object_get(r, "ok"))) {
      ck_assert_int_eq(itest_resident(fd), held + 1);
      json_decref(itest_call(fd, json_pack("{ss si sI}", "op", "free", "id",
                                           20 + i, "handle",
                                           (json_int_t)itest_handle(r)),
                             NULL, 0, NULL, NULL));
    }
    json_decref(r);
    ck_assert_int_eq(itest_resident(fd), held);
  }
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* The length of r's "export" document as compact JSON. */
static size_t export_len(const json_t *r)
{
  json_t *doc = json_object_get(r, "export");

  ck_assert_msg(json_is_object(doc), "no export: %s",
                json_string_value(json_object_get(json_object_get(r, "error"),
                                                  "message")));
  return json_dumpb(doc, NULL, 0, JSON_COMPACT);
}

/* An export larger than max_json_bytes is ELIMIT naming the setting and
 * what to do; one fingerprint's, which fits, is still answered. */
START_TEST(export_over_max_json)
{
  int fd = itest_open(&itest_d);
  char fp[33], conf[64];

  for (int k = 0; k < 3; k++) {
    struct spmv_csr *A = itest_random_csr(1500 + 100 * k, 7, 3, 40 + (unsigned)k);
    json_t *r = itest_load(fd, 1 + k, A, 0, "trial");
    itest_handle(r);
    if (k == 0)
      snprintf(fp, sizeof fp, "%s", json_string_value(json_object_get(r, "fingerprint")));
    json_decref(r);
    spmv_csr_free(A);
  }
  /* Every store is on the cache thread: asked until all three are there. */
  json_t *all = NULL;
  for (int i = 0; i < 200; i++) {
    json_decref(all);
    all = itest_call(fd, json_pack("{ss si}", "op", "export", "id", 5), NULL, 0,
                     NULL, NULL);
    if (json_array_size(json_object_get(json_object_get(all, "export"), "tunings")) == 3)
      break;
    usleep(20000);
  }
  size_t nall = export_len(all);
  json_decref(all);
  json_t *one = itest_call(fd, json_pack("{ss si ss}", "op", "export", "id", 6,
                                         "fingerprint", fp), NULL, 0, NULL, NULL);
  size_t none = export_len(one);
  json_decref(one);
  close(fd);
  ck_assert_msg(nall > none + 200, "all %zu bytes, one %zu", nall, none);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  snprintf(conf, sizeof conf, "max_json_bytes = %zu\n", (nall + none) / 2 + 64);
  itest_daemon_config(&itest_d, conf);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  fd = itest_open(&itest_d);
  json_t *r = itest_call(fd, json_pack("{ss si}", "op", "export", "id", 7), NULL,
                         0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "ELIMIT");
  const char *msg = json_string_value(json_object_get(json_object_get(r, "error"),
                                                      "message"));
  ck_assert_msg(msg && strstr(msg, "max_json_bytes") && strstr(msg, "one fingerprint"),
                "%s", msg ? msg : "no message");
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si ss}", "op", "export", "id", 8,
                               "fingerprint", fp), NULL, 0, NULL, NULL);
  ck_assert_int_eq(export_len(r), none);
  json_decref(r);
  close(fd);
}
END_TEST

/* One row of the field table: op's request made valid by base (a JSON
 * object's text, "op" and "id" added), then field set to the JSON bad. */
struct bad_field {
  const char *op;
  const char *base;
  const char *field;
  const char *bad;
  const char *want;  /* in the error message */
};

static const struct bad_field bad_fields[] = {
    {"hello", "{\"version\": 1}", "client", "5",
     "field \"client\" is not a string"},
    {"load", "{\"dtype\": \"f64\", \"rows\": 1, \"cols\": 1, \"nnz\": 0, "
     "\"index\": \"i32\"}", "verify", "\"yes\"",
     "field \"verify\" is not a boolean"},
    {"load", "{\"dtype\": \"f64\", \"rows\": 1, \"cols\": 1, \"nnz\": 0}",
     "name", "[]", "field \"name\" is not a string"},
    {"multiply", "{\"handle\": 1, \"alpha\": 1, \"beta\": 0}", "inplace", "1",
     "field \"inplace\" is not a boolean"},
    {"multiply-batch", "{\"handle\": 1, \"alpha\": 1, \"beta\": 0, \"k\": 2}",
     "inplace", "\"no\"", "field \"inplace\" is not a boolean"},
    {"attach-vectors", "{\"handle\": 1}", "k", "\"2\"",
     "field \"k\" is not an integer"},
    {"info", "{}", "handle", "\"1\"", "field \"handle\" is not an integer"},
    {"list", "{}", NULL, NULL, NULL},
    {"free", "{}", "handle", "1.5", "field \"handle\" is not an integer"},
    {"tune", "{\"handle\": 1}", "strategy", "5",
     "field \"strategy\" is not a string"},
    {"bench", "{\"handle\": 1}", "rounds", "\"3\"",
     "field \"rounds\" is not an integer"},
    {"bench", "{\"handle\": 1}", "configs", "\"csr-scalar\"",
     "field \"configs\" is not an array"},
    {"calibrate", "{}", "points", "\"yes\"",
     "field \"points\" is not a boolean"},
    {"calibrate", "{}", "max_seconds", "\"1\"",
     "field \"max_seconds\" is not a number"},
    {"status", "{}", NULL, NULL, NULL},
    {"forget", "{}", "fingerprint", "5",
     "field \"fingerprint\" is not a string"},
    {"import", "{}", "tunings", "{}", "field \"tunings\" is not an array"},
};

#define NBAD (int)(sizeof bad_fields / sizeof bad_fields[0])

/* Sends row t's request with field set to value (JSON text) on a fresh
 * connection (hello'd unless the op is hello); asserts EPROTO naming
 * want, and that the connection still answers status. */
static void expect_refused(const struct bad_field *t, const char *field,
                           const char *value, const char *want)
{
  int fd = strcmp(t->op, "hello") == 0 ? itest_connect(itest_d.sock)
                                       : itest_open(&itest_d);
  json_t *req = json_loads(t->base, 0, NULL);

  ck_assert_int_ge(fd, 0);
  ck_assert_ptr_nonnull(req);
  json_object_set_new(req, "op", json_string(t->op));
  json_object_set_new(req, "id", json_integer(7));
  json_object_set_new(req, field, json_loads(value, JSON_DECODE_ANY, NULL));
  json_t *r = itest_call(fd, req, NULL, 0, NULL, NULL);
  const char *msg = json_string_value(json_object_get(
      json_object_get(r, "error"), "message"));
  ck_assert_msg(strcmp(itest_error_code(r), "EPROTO") == 0 && msg &&
                    strstr(msg, want),
                "%s with %s = %s: %s %s", t->op, field, value,
                itest_error_code(r), msg ? msg : "(no message)");
  json_decref(r);
  if (strcmp(t->op, "hello") != 0)
    ck_assert_int_ge(itest_resident(fd), 0);
  close(fd);
}

/* Every op of the table: its field of the wrong type, and a field "x"
 * that no schema has. */
START_TEST(wrong_and_unknown_fields)
{
  for (int i = 0; i < NBAD; i++) {
    const struct bad_field *t = &bad_fields[i];
    if (t->field)
      expect_refused(t, t->field, t->bad, t->want);
    expect_refused(t, "x", "true", "unknown field \"x\"");
  }
}
END_TEST

/* spmv_forget of a string that is no fingerprint is EINVAL found here,
 * and the connection goes on. */
START_TEST(library_forget_einval)
{
  struct spmv_client *c = NULL;
  char *json = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  ck_assert_int_eq(spmv_forget(c, "xyz", NULL), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "xyz"));
  ck_assert_int_eq(spmv_forget(c, "0123456789ABCDEF0123456789abcdef", NULL),
                   SPMV_EINVAL);
  ck_assert_msg(spmv_status_json(c, &json) == 0, "%s", spmv_client_errmsg(c));
  free(json);
  spmv_disconnect(c);
}
END_TEST

/* spmv_load_mtx of a missing file is EIO, and the connection still loads
 * and multiplies. */
START_TEST(library_missing_file_eio)
{
  struct spmv_csr *A = itest_matrix("west0479.mtx");
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  char path[4096];

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  ck_assert_int_eq(spmv_load_mtx(c, "/nonexistent/none.mtx", SPMV_F64, NULL,
                                 &m), SPMV_EIO);
  itest_matrix_path("west0479.mtx", path, sizeof path);
  ck_assert_msg(spmv_load_mtx(c, path, SPMV_F64, NULL, &m) == 0, "%s",
                spmv_client_errmsg(c));
  double *x = calloc((size_t)A->cols, sizeof *x);
  double *y = calloc((size_t)A->rows, sizeof *y);
  double *y0 = calloc((size_t)A->rows, sizeof *y0);
  for (int64_t j = 0; j < A->cols; j++)
    x[j] = 1.0 + (double)(j % 7);
  ck_assert_msg(spmv_multiply(m, 1.0, x, 0.0, y) == 0, "%s",
                spmv_client_errmsg(c));
  for (int64_t i = 0; i < A->rows; i++) {
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      y0[i] += A->val[k] * x[A->col_idx[k]];
    ck_assert_double_eq_tol(y[i], y0[i], 1e-9 * (1.0 + fabs(y0[i])));
  }
  free(x);
  free(y);
  free(y0);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  spmv_csr_free(A);
}
END_TEST

static Suite *refusals_suite(void)
{
  Suite *s = suite_create("refusals");
  TCase *t = tcase_create("refusals");

  tcase_add_checked_fixture(t, itest_setup, itest_teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, unanswerable_cache_row);
  tcase_add_test(t, export_over_max_json);
  tcase_add_test(t, wrong_and_unknown_fields);
  tcase_add_test(t, library_forget_einval);
  tcase_add_test(t, library_missing_file_eio);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return itest_run(refusals_suite());
}
