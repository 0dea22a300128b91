/* itest_fault.c: helpers of the integration tests: the worker's life
 * (faults on cue, its status, its restarts) and requests left in flight. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

void itest_daemon_restart(struct itest_daemon *d, const char *fault,
                          const char *conf)
{
  if (d->pid > 0)
    itest_daemon_stop(d, SIGTERM);
  d->pid = 0;
  if (conf)
    itest_daemon_config(d, conf);
  else
    d->conf[0] = '\0';
  if (fault)
    setenv("SPMVD_FAULT", fault, 1);
  int rc = itest_daemon_start(d, NULL);
  unsetenv("SPMVD_FAULT");
  ck_assert_int_eq(rc, 0);
}

json_t *itest_worker_status(int s)
{
  json_t *r = itest_call(s, json_pack("{ss si}", "op", "status", "id", 91),
                         NULL, 0, NULL, NULL);
  ck_assert_msg(r && json_is_true(json_object_get(r, "ok")), "no status");
  json_t *w = json_incref(json_array_get(json_object_get(r, "workers"), 0));
  json_decref(r);
  ck_assert_ptr_nonnull(w);
  return w;
}

int64_t itest_worker_int(int s, const char *key)
{
  json_t *w = itest_worker_status(s);
  int64_t v = json_integer_value(json_object_get(w, key));
  json_decref(w);
  return v;
}

double itest_worker_wait_ready(int s, int64_t restarts, double max_s)
{
  double t0 = itest_now_s();

  do {
    json_t *w = itest_worker_status(s);
    const char *st = json_string_value(json_object_get(w, "state"));
    int ready = st && strcmp(st, "ready") == 0 &&
                json_integer_value(json_object_get(w, "restarts")) >= restarts;
    json_decref(w);
    if (ready)
      return itest_now_s() - t0;
    usleep(10000);
  } while (itest_now_s() - t0 < max_s);
  return -1;
}

void itest_send_multiply(int s, int64_t id, int64_t handle,
                         const struct spmv_csr *A)
{
  double *x = malloc(sizeof *x * (size_t)(A->cols + 1));

  ck_assert_ptr_nonnull(x);
  for (int64_t j = 0; j < A->cols; j++)
    x[j] = 1.0;
  ck_assert_int_eq(itest_send(s, json_pack("{ss sI sI sf sf}", "op", "multiply",
                                           "id", (json_int_t)id, "handle",
                                           (json_int_t)handle, "alpha", 1.0,
                                           "beta", 0.0),
                              x, sizeof *x * (size_t)A->cols), 0);
  free(x);
}
