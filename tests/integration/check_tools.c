/* check_tools.c: a real spmvd driven by libspmvclient and by spmvctl --json. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"


static const char *matrices_dir(void)
{
  const char *m = getenv("SPMV_MATRICES");
  return m ? m : ".";
}

/* libspmvclient: load files, multiply, batch, info, survive a worker kill. */
START_TEST(client_library)
{
  static const char *const files[] = {"bcsstk13.mtx", "west0479.mtx",
                                      "raefsky1.mtx.gz", "lp_afiro.mtx"};
  struct spmv_client *c = NULL;
  char path[1024];

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    struct spmv_csr *A = itest_matrix(files[f]);
    struct spmv_matrix *m = NULL;
    snprintf(path, sizeof path, "%s/%s", matrices_dir(), files[f]);
    ck_assert_msg(spmv_load_mtx(c, path, SPMV_F64, NULL, &m) == 0, "%s: %s",
                  files[f], spmv_client_errmsg(c));
    double *x = malloc(sizeof *x * (size_t)A->cols * 2);
    double *y = malloc(sizeof *y * (size_t)A->rows * 2);
    double *yr = malloc(sizeof *yr * (size_t)A->rows);
    for (int64_t j = 0; j < 2 * A->cols; j++)
      x[j] = (double)((j * 7919) % 101) / 50.0 - 1.0;
    ck_assert_int_eq(spmv_multiply_batch(m, 2, 1.0, x, 0.0, y), 0);
    for (int v = 0; v < 2; v++) {
      spmv_csr_ref(A, 1.0, x + v * A->cols, 0.0, yr);
      for (int64_t i = 0; i < A->rows; i++)
        ck_assert_double_eq_tol(y[v * A->rows + i], yr[i],
                                1e-12 * (1.0 + fabs(yr[i])) * 64);
    }
    char *json = NULL;
    ck_assert_int_eq(spmv_info_json(m, &json), 0);
    json_t *info = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(info);
    ck_assert_int_eq(json_integer_value(json_object_get(info, "nnz")), A->nnz);
    json_decref(info);
    free(json);
    if (f == 0) {
      /* Kill the worker: EWORKER at most, then the same matrix again. */
      struct spmv_client *c2 = NULL;
      ck_assert_int_eq(spmv_connect(itest_d.sock, &c2), 0);
      ck_assert_int_eq(spmv_status_json(c2, &json), 0);
      json_t *st = json_loads(json, 0, NULL);
      free(json);
      pid_t w = (pid_t)json_integer_value(json_object_get(
          json_array_get(json_object_get(st, "workers"), 0), "pid"));
      json_decref(st);
      spmv_disconnect(c2);
      ck_assert_int_eq(kill(w, SIGKILL), 0);
      int rc = SPMV_EWORKER;
      for (int i = 0; i < 300 && rc == SPMV_EWORKER; i++) {
        rc = spmv_multiply(m, 1.0, x, 0.0, y);
        if (rc == SPMV_EWORKER)
          usleep(20000);
      }
      ck_assert_msg(rc == 0, "%s", spmv_client_errmsg(c));
      spmv_csr_ref(A, 1.0, x, 0.0, yr);
      for (int64_t i = 0; i < A->rows; i++)
        ck_assert_double_eq_tol(y[i], yr[i], 1e-12 * (1.0 + fabs(yr[i])) * 64);
    }
    free(x);
    free(y);
    free(yr);
    m = spmv_matrix_free(m);
    spmv_csr_free(A);
  }
  spmv_disconnect(c);
}
END_TEST

/* Runs spmvctl with args; returns its stdout parsed as JSON (asserts). */
static json_t *spmvctl_json(const char *args, int expect_status)
{
  const char *b = getenv("SPMV_TOP_BUILDDIR");
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s/client/spmvctl --json --quiet --socket '%s' "
           "--db '%s' %s", b ? b : ".", itest_d.sock, itest_d.db, args);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  json_error_t jerr;
  json_t *j = json_loadf(p, JSON_DISABLE_EOF_CHECK, &jerr);
  char rest[256];
  while (fgets(rest, sizeof rest, p))
    ;
  int status = pclose(p);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == expect_status,
                "spmvctl %s: status %d", args, WEXITSTATUS(status));
  ck_assert_msg(j != NULL, "spmvctl %s: output is not JSON: %s", args,
                jerr.text);
  return j;
}

/* Every spmvctl --json output parses; a second tune comes from the cache. */
START_TEST(spmvctl_json_outputs)
{
  char args[1200];
  json_t *j;

  j = spmvctl_json("status", 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "backend")), "cpu");
  json_decref(j);
  snprintf(args, sizeof args, "profile '%s/bcsstk13.mtx'", matrices_dir());
  j = spmvctl_json(args, 0);
  ck_assert_ptr_nonnull(json_object_get(j, "rows"));
  json_decref(j);
  snprintf(args, sizeof args, "tune --strategy trial '%s/bcsstk13.mtx'",
           matrices_dir());
  j = spmvctl_json(args, 0);
  char fp[64];
  snprintf(fp, sizeof fp, "%s", json_string_value(json_object_get(j, "fingerprint")));
  ck_assert_int_eq(strlen(fp), 32);
  json_decref(j);
  j = spmvctl_json(args, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "source")), "cache");
  json_decref(j);
  snprintf(args, sizeof args, "bench '%s/west0479.mtx'", matrices_dir());
  json_decref(spmvctl_json(args, 0));
  json_decref(spmvctl_json("list", 0));
  snprintf(args, sizeof args, "show %s", fp);
  json_decref(spmvctl_json(args, 0));
  json_decref(spmvctl_json("export", 0));
  if (geteuid() == 0)
    json_decref(spmvctl_json("forget all", 0));
}
END_TEST

static Suite *tools_suite(void)
{
  Suite *s = suite_create("tools");
  TCase *tc = tcase_create("tools");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, client_library);
  tcase_add_test(tc, spmvctl_json_outputs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(tools_suite());
}
