/* check_client.c: tests of libspmvclient against a small in-process server
 * speaking the protocol (client_mock.h): connecting, requests, errors and
 * lost connections.  Many threads on one client or on their own, and a real
 * spmvd on a private socket, are tested in check_client_threads.c. */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include "spmv.h"
#include "testdata.h"
#include "spmv_csr.h"
#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "spmv_wire.h"
#include "client_mock.h"

START_TEST(test_connect_no_daemon)
{
  struct spmv_client *c = (struct spmv_client *)0x1;
  const char *msg;

  ck_assert_int_eq(spmv_connect("/nonexistent/spmvd-test.sock", &c), SPMV_ECONNECT);
  ck_assert_ptr_null(c);
  msg = spmv_client_errmsg(NULL);
  ck_assert_ptr_nonnull(strstr(msg, "spmvd is not running at /nonexistent/spmvd-test.sock"));
  ck_assert_ptr_nonnull(strstr(msg, "spmvd --socket /nonexistent/spmvd-test.sock"));
  ck_assert_ptr_nonnull(strstr(msg, "systemctl start spmvd"));
}
END_TEST

START_TEST(test_connect_refused)
{
  /* A stale socket file that nobody listens on. */
  struct spmv_client *c = NULL;
  struct mock m;

  struct sockaddr_un addr;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);

  testdata_tmp(m.dir, sizeof m.dir, "check_client.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(m.dir));
  snprintf(m.path, sizeof m.path, "%s/stale.sock", m.dir);
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", m.path);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
  close(fd);
  ck_assert_int_eq(spmv_connect(m.path, &c), SPMV_ECONNECT);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "is not running at"));
  unlink(m.path);
  rmdir(m.dir);
}
END_TEST

START_TEST(test_connect_bad_path)
{
  struct spmv_client *c = NULL;
  char longpath[300];

  memset(longpath, 'a', sizeof longpath - 1);
  longpath[0] = '/';
  longpath[sizeof longpath - 1] = '\0';
  ck_assert_int_eq(spmv_connect(longpath, &c), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "too long"));
  ck_assert_int_eq(spmv_connect("", &c), SPMV_EINVAL);
  ck_assert_int_eq(spmv_connect("/x", NULL), SPMV_EINVAL);
}
END_TEST

START_TEST(test_connect_default_paths)
{
  struct spmv_client *c = NULL;
  struct mock m;

  /* $SPMVD_SOCKET first. */
  setenv("SPMVD_SOCKET", "/nonexistent/env.sock", 1);
  ck_assert_int_eq(spmv_connect(NULL, &c), SPMV_ECONNECT);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "/nonexistent/env.sock"));
  unsetenv("SPMVD_SOCKET");

  /* Then $XDG_RUNTIME_DIR/spmvd.sock when it exists. */
  mock_start(&m);
  setenv("XDG_RUNTIME_DIR", m.dir, 1);
  ck_assert_msg(spmv_connect(NULL, &c) == 0, "%s", spmv_client_errmsg(NULL));
  ck_assert_str_eq(spmv_client_path(c), m.path);
  spmv_disconnect(c);
  mock_stop(&m);

  /* Else the system socket. */
  setenv("XDG_RUNTIME_DIR", "/nonexistent", 1);
  ck_assert_int_eq(spmv_connect(NULL, &c), SPMV_ECONNECT);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "/spmvd/spmvd.sock"));
}
END_TEST

START_TEST(test_hello_version)
{
  struct spmv_client *c = NULL;
  struct mock m;

  mock_start_version(&m, 2);
  ck_assert_int_eq(spmv_connect(m.path, &c), SPMV_EVERSION);
  ck_assert_ptr_null(c);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "client speaks 1"));
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "speaks 2"));
  mock_stop(&m);
}
END_TEST

START_TEST(test_products_shared_matrices)
{
  static const char *names[] = { "karate.mtx", "impcol_a.mtx", "west0479.mtx",
                                 "lp_afiro.mtx", "gr_30_30.mtx" };
  struct spmv_client *c = NULL;
  struct mock m;
  char path[512];
  size_t i;

  mock_start(&m);
  ck_assert_int_eq(spmv_connect(m.path, &c), 0);
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    struct spmv_csr *A = read_matrix(names[i], path, sizeof path);

    check_products(c, A, SPMV_F64, (unsigned)i);
    check_products(c, A, SPMV_F32, (unsigned)i);
    spmv_csr_free(A);
  }
  spmv_disconnect(c);
  mock_stop(&m);
}
END_TEST

START_TEST(test_load_mtx_batch_info)
{
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  struct spmv_info info;
  struct spmv_profile p;
  struct spmv_error err;
  struct spmv_fingerprint fp;
  struct spmv_csr *A;
  struct mock mk;
  char path[512], hex[33], *json = NULL;
  double *x, *y, *ref;
  int k = 3, b;
  json_t *doc;

  A = read_matrix("west0479.mtx", path, sizeof path);
  mock_start(&mk);
  ck_assert_int_eq(spmv_connect(mk.path, &c), 0);
  ck_assert_msg(spmv_load_mtx(c, path, SPMV_F64, NULL, &m) == 0, "%s",
                spmv_client_errmsg(c));
  x = malloc((size_t)k * (size_t)A->cols * sizeof *x);
  y = malloc((size_t)k * (size_t)A->rows * sizeof *y);
  ref = malloc((size_t)A->rows * sizeof *ref);
  fill(x, k * A->cols, 5);
  fill(y, k * A->rows, 6);
  ck_assert_int_eq(spmv_multiply_batch(m, k, 2.0, x, 0.0, y), 0);
  for (b = 0; b < k; b++) {
    spmv_csr_ref(A, 2.0, x + b * A->cols, 0.0, ref);
    ck_assert(resid(A, x + b * A->cols, y + b * A->rows, ref) <= 1e-13);
  }
  /* beta != 0: y is sent and updated in place. */
  {
    double *expect = malloc((size_t)k * (size_t)A->rows * sizeof *expect);

    memcpy(expect, y, (size_t)k * (size_t)A->rows * sizeof *y);
    for (b = 0; b < k; b++)
      spmv_csr_ref(A, 1.0, x + b * A->cols, 3.0, expect + b * A->rows);
    ck_assert_int_eq(spmv_multiply_batch(m, k, 1.0, x, 3.0, y), 0);
    for (b = 0; b < k; b++)
      ck_assert(resid(A, x + b * A->cols, y + b * A->rows,
                      expect + b * A->rows) <= 1e-13);
    free(expect);
  }

  ck_assert_int_eq(spmv_info(m, &info), 0);
  spmv_profile_compute(A, &p, &err);
  spmv_fingerprint_compute(A, &fp);
  spmv_fingerprint_hex(&fp, hex);
  ck_assert_str_eq(info.fingerprint, hex);
  ck_assert_int_eq(info.rows, A->rows);
  ck_assert_int_eq(info.nnz, A->nnz);
  ck_assert_int_eq(info.rl_max, p.rl_max);
  ck_assert(info.rl_sigma == p.rl_sigma);
  ck_assert_str_eq(info.format, "csr-scalar");
  ck_assert_str_eq(info.config, "csr-scalar bs=128");
  ck_assert_int_eq(info.bs, 128);
  ck_assert_str_eq(info.source, "cache");
  ck_assert(info.time_us == 3.0);
  ck_assert_int_eq(info.multiplies, 2 * k);
  ck_assert_int_eq(info.dtype, SPMV_F64);

  ck_assert_int_eq(spmv_info_json(m, &json), 0);
  doc = json_loads(json, 0, NULL);
  ck_assert_ptr_nonnull(doc);
  ck_assert_ptr_null(json_object_get(doc, "id"));
  ck_assert_str_eq(json_string_value(json_object_get(doc, "fingerprint")), hex);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "trials")), 1);
  json_decref(doc);
  free(json);

  ck_assert_int_eq(spmv_status_json(c, &json), 0);
  doc = json_loads(json, 0, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(doc, "server")), "mock");
  json_decref(doc);
  free(json);

  m = spmv_matrix_free(m);
  free(x);
  free(y);
  free(ref);
  spmv_csr_free(A);
  spmv_disconnect(c);
  mock_stop(&mk);
}
END_TEST

/* A 2 x 2 matrix [[0 2] [3 0]] for the small cases. */
static const int64_t rp[3] = { 0, 1, 2 };
static const int32_t ci[2] = { 1, 0 };
static const double v[2] = { 2.0, 3.0 };

/* Counts progress events. */
static void on_progress(const struct spmv_progress *p, void *arg)
{
  int *n = arg;

  ck_assert_str_eq(p->stage, "tuning");
  ck_assert_int_eq(p->done, *n + 1);
  ck_assert_int_eq(p->total, 2);
  ck_assert_str_eq(p->candidate, "csr-scalar bs=128");
  (*n)++;
}

START_TEST(test_progress)
{
  struct spmv_load_options o;
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  struct mock mk;
  double x[2] = { 1, 10 }, y[2];
  int n = 0;

  mock_start(&mk);
  ck_assert_int_eq(spmv_connect(mk.path, &c), 0);
  spmv_load_options_init(&o);
  o.progress = on_progress;
  o.progress_arg = &n;
  o.strategy = "trial";
  o.name = "tiny";
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, 2, 2, rp, ci, v, &o, &m), 0);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(spmv_multiply(m, 1.0, x, 0.0, y), 0);
  ck_assert(y[0] == 20.0 && y[1] == 3.0);
  ck_assert_ptr_eq(spmv_matrix_client(m), c);
  {
    char *json = NULL;
    json_t *doc;

    ck_assert_int_eq(spmv_matrix_decision_json(m, &json), 0);
    doc = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "source")), "tuned");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "config"), "text")), "csr-scalar bs=128");
    ck_assert_ptr_null(json_object_get(doc, "ok"));
    json_decref(doc);
    free(json);
  }
  /* Left loaded: disconnect frees it. */
  spmv_disconnect(c);
  mock_stop(&mk);
}
END_TEST

START_TEST(test_daemon_errors)
{
  static const int32_t bad_ci[2] = { 1, 7 };
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  struct mock mk;
  int n = 0;

  mock_start(&mk);
  ck_assert_int_eq(spmv_connect(mk.path, &c), 0);
  /* The daemon's ECSR comes back by name, with its message. */
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, 2, 2, rp, bad_ci, v, NULL, &m),
                   SPMV_ECSR);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "column index 7"));
  /* The connection is still good after a refusal. */
  ck_assert_int_eq(spmv_forget(c, "all", &n), SPMV_EPERM);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "admin"));
  ck_assert_int_eq(spmv_forget(c, NULL, &n), SPMV_EINVAL);
  spmv_disconnect(c);
  mock_stop(&mk);
}
END_TEST

START_TEST(test_local_argument_errors)
{
  static const int64_t bad_rp[3] = { 0, 1, 3 };
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  struct mock mk;
  double x[2] = { 1, 1 }, y[2];

  mock_start(&mk);
  ck_assert_int_eq(spmv_connect(mk.path, &c), 0);
  ck_assert_int_eq(spmv_load_csr(c, (enum spmv_dtype)9, 2, 2, 2, rp, ci, v,
                                 NULL, &m), SPMV_EINVAL);
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, -1, 2, 2, rp, ci, v, NULL, &m),
                   SPMV_EINVAL);
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, (int64_t)1 << 32, 2, rp, ci,
                                 v, NULL, &m), SPMV_ETOOBIG);
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, 2, 2, bad_rp, ci, v, NULL, &m),
                   SPMV_ECSR);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "row_ptr[2] is 3"));
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, 2, 2, rp, NULL, v, NULL, &m),
                   SPMV_EINVAL);
  ck_assert_int_eq(spmv_load_mtx(c, "/nonexistent.mtx", SPMV_F64, NULL, &m),
                   SPMV_EIO);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "/nonexistent.mtx"));
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, 2, 2, rp, ci, v, NULL, &m), 0);
  ck_assert_int_eq(spmv_multiply(m, 1.0, NULL, 0.0, y), SPMV_EINVAL);
  ck_assert_int_eq(spmv_multiply(m, NAN, x, 0.0, y), SPMV_EINVAL);
  ck_assert_int_eq(spmv_multiply_batch(m, 0, 1.0, x, 0.0, y), SPMV_EINVAL);
  ck_assert_int_eq(spmv_info(m, NULL), SPMV_EINVAL);
  {
    const char *cf[2] = { "csr-scalar bs=128", NULL };
    char *json = NULL;
    ck_assert_int_eq(spmv_bench_configs_json(m, cf, 0, 3, NULL, NULL, &json),
                     SPMV_EINVAL);
    ck_assert_int_eq(spmv_bench_configs_json(m, cf, 65, 3, NULL, NULL, &json),
                     SPMV_EINVAL);
    ck_assert_int_eq(spmv_bench_configs_json(m, cf, 1, 10, NULL, NULL, &json),
                     SPMV_EINVAL);
    ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "rounds 10"));
    ck_assert_int_eq(spmv_bench_configs_json(m, cf, 2, 3, NULL, NULL, &json),
                     SPMV_EINVAL);
    ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "configuration 1 is NULL"));
    ck_assert_int_eq(spmv_bench_configs_json(m, cf, 1, 3, NULL, NULL, NULL),
                     SPMV_EINVAL);
    ck_assert_ptr_null(json);
  }
  /* Still usable. */
  ck_assert_int_eq(spmv_multiply(m, 1.0, x, 0.0, y), 0);
  ck_assert(y[0] == 2.0 && y[1] == 3.0);
  m = spmv_matrix_free(m);
  ck_assert_ptr_null(spmv_matrix_free(NULL));
  spmv_disconnect(c);
  spmv_disconnect(NULL);
  mock_stop(&mk);
}
END_TEST

START_TEST(test_connection_lost)
{
  struct spmv_load_options o;
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  struct mock mk;
  char *json = NULL;

  mock_start(&mk);
  spmv_load_options_init(&o);
  ck_assert_int_eq(spmv_connect(mk.path, &c), 0);
  o.name = "close-me";
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, 2, 2, rp, ci, v, &o, &m),
                   SPMV_ECLOSED);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "closed the connection"));
  ck_assert_int_eq(spmv_status_json(c, &json), SPMV_ECLOSED);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "reconnect"));
  spmv_disconnect(c);

  ck_assert_int_eq(spmv_connect(mk.path, &c), 0);
  o.name = "garbage";
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, 2, 2, 2, rp, ci, v, &o, &m),
                   SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "magic"));
  ck_assert_int_eq(spmv_status_json(c, &json), SPMV_ECLOSED);
  spmv_disconnect(c);
  mock_stop(&mk);
}
END_TEST

/* The suite of the client library. */
static Suite *client_suite(void)
{
  Suite *s = suite_create("client");
  TCase *tc = tcase_create("connect");

  tcase_add_test(tc, test_connect_no_daemon);
  tcase_add_test(tc, test_connect_refused);
  tcase_add_test(tc, test_connect_bad_path);
  tcase_add_test(tc, test_connect_default_paths);
  tcase_add_test(tc, test_hello_version);
  suite_add_tcase(s, tc);

  tc = tcase_create("requests");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_products_shared_matrices);
  tcase_add_test(tc, test_load_mtx_batch_info);
  tcase_add_test(tc, test_progress);
  tcase_add_test(tc, test_daemon_errors);
  tcase_add_test(tc, test_local_argument_errors);
  tcase_add_test(tc, test_connection_lost);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(client_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
