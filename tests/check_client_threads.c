/* check_client_threads.c: libspmvclient from many threads, sharing one
 * client or each with its own, against the in-process mock server
 * (client_mock.h) and against a real spmvd on a private socket (split from
 * check_client.c). */
#include "config.h"

#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "spmv.h"
#include "testdata.h"
#include "spmv_csr.h"
#include "itest.h"
#include "client_mock.h"

/* What a thread of the concurrency tests does. */
struct worker {
  const char *path;
  struct spmv_client *shared;  /* NULL: connect its own */
  const struct spmv_csr *A;
  int index;
  int failures;
  char msg[256];
};

/* Loads, multiplies a few times against the reference, frees. */
static void *worker_main(void *arg)
{
  struct worker *w = arg;
  const struct spmv_csr *A = w->A;
  struct spmv_client *c = w->shared;
  double *x = malloc((size_t)A->cols * sizeof *x);
  double *y = malloc((size_t)A->rows * sizeof *y);
  double *ref = malloc((size_t)A->rows * sizeof *ref);
  int round, rc;

  if (c == NULL && spmv_connect(w->path, &c) != 0) {
    snprintf(w->msg, sizeof w->msg, "%s", spmv_client_errmsg(NULL));
    w->failures++;
    goto out;
  }
  for (round = 0; round < 4; round++) {
    struct spmv_matrix *m = NULL;
    int rep;

    rc = spmv_load_csr(c, SPMV_F64, A->rows, A->cols, A->nnz, A->row_ptr,
                       A->col_idx, A->val, NULL, &m);
    if (rc != 0) {
      snprintf(w->msg, sizeof w->msg, "load: %s", spmv_client_errmsg(c));
      w->failures++;
      continue;
    }
    for (rep = 0; rep < 5; rep++) {
      double alpha = 1.0 + w->index + rep;

      fill(x, A->cols, (unsigned)(w->index * 31 + rep));
      spmv_csr_ref(A, alpha, x, 0.0, ref);
      if (spmv_multiply(m, alpha, x, 0.0, y) != 0 ||
          resid(A, x, y, ref) > 1e-13) {
        snprintf(w->msg, sizeof w->msg, "multiply: %s", spmv_client_errmsg(c));
        w->failures++;
      }
    }
    /* A failure of this thread is this thread's message. */
    if (spmv_multiply_batch(m, 0, 1.0, x, 0.0, y) != SPMV_EINVAL ||
        strstr(spmv_client_errmsg(c), "k is 0") == NULL)
      w->failures++;
    spmv_matrix_free(m);
  }
  if (w->shared == NULL)
    spmv_disconnect(c);
out:
  free(x);
  free(y);
  free(ref);
  return NULL;
}

/* Runs 16 workers, sharing one client or not, on the server at path. */
static void run_workers(const char *path, int share)
{
  struct worker w[16];
  pthread_t t[16];
  struct spmv_client *c = NULL;
  struct spmv_csr *A;
  char mpath[512];
  int i;

  A = read_matrix("impcol_a.mtx", mpath, sizeof mpath);
  if (share)
    ck_assert_msg(spmv_connect(path, &c) == 0, "%s", spmv_client_errmsg(NULL));
  for (i = 0; i < 16; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].path = path;
    w[i].shared = c;
    w[i].A = A;
    w[i].index = i;
    ck_assert_int_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
  }
  for (i = 0; i < 16; i++) {
    pthread_join(t[i], NULL);
    ck_assert_msg(w[i].failures == 0, "thread %d: %d failures, last: %s", i,
                  w[i].failures, w[i].msg);
  }
  spmv_disconnect(c);
  spmv_csr_free(A);
}

START_TEST(test_threads_shared_client)
{
  struct mock mk;

  mock_start(&mk);
  run_workers(mk.path, 1);
  mock_stop(&mk);
}
END_TEST

START_TEST(test_threads_own_clients)
{
  struct mock mk;

  mock_start(&mk);
  run_workers(mk.path, 0);
  mock_stop(&mk);
}
END_TEST

START_TEST(test_real_daemon)
{
  /* A real spmvd: the one SPMVD_TEST_SOCKET names, else a private one on a
   * temporary socket and database (the integration helpers start it). */
  const char *path = getenv("SPMVD_TEST_SOCKET");
  static const char *names[] = { "karate.mtx", "impcol_a.mtx", "west0479.mtx",
                                 "bcsstk16.mtx" };
  struct itest_daemon d;
  struct spmv_client *c = NULL;
  char mpath[512];
  size_t i;

  memset(&d, 0, sizeof d);
  if (path == NULL || *path == '\0') {
    itest_daemon_init(&d);
    ck_assert_int_eq(itest_daemon_start(&d, NULL), 0);
    path = d.sock;
  }
  ck_assert_msg(spmv_connect(path, &c) == 0, "%s", spmv_client_errmsg(NULL));
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    struct spmv_csr *A = read_matrix(names[i], mpath, sizeof mpath);

    check_products(c, A, SPMV_F64, (unsigned)i);
    check_products(c, A, SPMV_F32, (unsigned)i);
    spmv_csr_free(A);
  }
  spmv_disconnect(c);
  run_workers(path, 1);
  run_workers(path, 0);
  if (d.pid > 0) {
    ck_assert_int_eq(itest_daemon_stop(&d, SIGTERM), 0);
    itest_daemon_fini(&d);
  }
}
END_TEST

/* The suite of the client library from many threads. */
static Suite *client_threads_suite(void)
{
  Suite *s = suite_create("client_threads");
  TCase *tc = tcase_create("threads");

  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_threads_shared_client);
  tcase_add_test(tc, test_threads_own_clients);
  tcase_add_test(tc, test_real_daemon);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(client_threads_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
