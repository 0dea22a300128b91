/* check_faults.c: the worker's faults on the cpu backend, injected by a
 * fault-injection build (SPMVD_FAULT): a crash while a configuration is
 * built quarantines it, a worker that hangs (building or starting) is
 * replaced by the device timeout, and what failed leaves nothing behind
 * (exit 77 in a build without --enable-fault-injection). */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

/* The whole suite needs the fault hooks: a build without them skips it. */
#ifdef SPMVD_FAULT_INJECTION

/* The error message of reply r, or "". */
static const char *error_msg(const json_t *r)
{
  const char *m = json_string_value(
      json_object_get(json_object_get(r, "error"), "message"));
  return m ? m : "";
}

/* A candidate that crashes the worker while tuning is quarantined: the
 * load fails with EWORKER, its retry tunes without it and stays right. */
START_TEST(abort_candidate_quarantined)
{
  struct spmv_csr *A = itest_random_csr(2000, 9, 13, 13);
  json_t *r;
  int fd;

  itest_daemon_restart(&itest_d, "abort:csr-scalar", NULL);
  fd = itest_open(&itest_d);
  r = itest_load(fd, 1, A, 0, "exhaustive");
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  ck_assert_msg(strstr(error_msg(r), "crashed"), "%s", error_msg(r));
  json_decref(r);
  for (int i = 0; i < 300; i++) {
    r = itest_load(fd, 2, A, 0, "exhaustive");
    if (strcmp(itest_error_code(r), "EWORKER") != 0)
      break;
    json_decref(r);
    r = NULL;
    usleep(20000);
  }
  ck_assert_msg(r && json_is_true(json_object_get(r, "ok")), "retry failed");
  const char *cfg = json_string_value(json_object_get(json_object_get(r, "config"), "text"));
  ck_assert_msg(strncmp(cfg, "csr-scalar", 10) != 0, "chose %s", cfg);
  int64_t h = json_integer_value(json_object_get(r, "handle"));
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 1);
  ck_assert_int_eq(itest_worker_int(fd, "restarts"), 1);
  ck_assert_int_eq(itest_worker_int(fd, "timeouts"), 0);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* Waits up to 10 s for n workers to be ready on s. */
static void wait_workers_ready(int s, size_t n)
{
  double t0 = itest_now_s();

  for (;;) {
    json_t *r = itest_call(s, json_pack("{ss si}", "op", "status", "id", 92),
                           NULL, 0, NULL, NULL);
    json_t *w = json_object_get(r, "workers");
    size_t ready = 0;
    for (size_t i = 0; i < json_array_size(w); i++) {
      const char *st = json_string_value(json_object_get(json_array_get(w, i), "state"));
      ready += st && strcmp(st, "ready") == 0;
    }
    json_decref(r);
    if (ready >= n)
      return;
    ck_assert_msg(itest_now_s() - t0 < 10, "%zu of %zu workers ready", ready, n);
    usleep(20000);
  }
}

/* A candidate that crashes a worker while a split load races its block
 * is quarantined for the matrix on that worker's device: the load fails
 * with EWORKER, and its retry tunes the blocks without it (before, every
 * retry raced it again and crashed again).  The whole matrix's decision
 * comes from the cache, made while the operator excluded the format, so
 * that only the blocks' races build it. */
START_TEST(block_candidate_quarantined)
{
  struct spmv_csr *A = itest_random_csr(3000, 9, 13, 17);
  json_t *r;
  int fd;

  itest_daemon_restart(&itest_d, NULL, "cpu_workers = 2\n"
                       "exclude_formats = csr-scalar\n");
  fd = itest_open(&itest_d);
  r = itest_load(fd, 1, A, 0, "exhaustive");
  itest_handle(r);
  json_decref(r);
  close(fd);
  itest_daemon_restart(&itest_d, "abort:csr-scalar", "cpu_workers = 2\n");
  fd = itest_open(&itest_d);
  wait_workers_ready(fd, 2);
  r = itest_load_as(fd, 2, A, 0, "exhaustive", 2);
  ck_assert_msg(r && strcmp(itest_error_code(r), "EWORKER") == 0 &&
                strstr(error_msg(r), "crashed"), "%s", r ? error_msg(r) : "no reply");
  json_decref(r);
  wait_workers_ready(fd, 2);
  r = itest_load_as(fd, 3, A, 0, "exhaustive", 2);
  ck_assert_msg(r && json_is_true(json_object_get(r, "ok")), "retry: %s",
                r ? error_msg(r) : "no reply");
  ck_assert_str_eq(json_string_value(json_object_get(r, "block_source")), "tuned");
  json_t *cfgs = json_object_get(r, "block_configs");
  ck_assert_int_eq(json_array_size(cfgs), 2);
  for (size_t b = 0; b < 2; b++) {
    const char *cfg = json_string_value(json_array_get(cfgs, b));
    ck_assert_msg(cfg && strncmp(cfg, "csr-scalar", 10) != 0, "block %zu: %s", b, cfg);
  }
  int64_t h = itest_handle(r);
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 1);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* Three loads that fail (refused by the worker's CSR validation for a
 * column out of range, a tune that crashes the worker, a NaN) leave status at
 * its baseline; a fourth succeeds under max_matrices_per_user = 3 and a
 * max_connection_bytes that three leaked host copies would exceed. */
START_TEST(failed_loads_leave_nothing)
{
  struct spmv_csr *A = itest_random_csr(2000, 9, 13, 13);
  struct spmv_csr *bad = itest_random_csr(2000, 9, 13, 19);
  json_t *r = NULL;

  itest_daemon_restart(&itest_d, "abort:csr-scalar",
                       "max_matrices_per_user = 3\n"
                       "max_connection_bytes = 1000000\n");
  int fd = itest_open(&itest_d);
  int64_t base = itest_resident(fd);
  bad->col_idx[40] = 5000;
  r = itest_load(fd, 1, bad, 0, "trial");
  ck_assert_str_eq(itest_error_code(r), "ECSR");
  json_decref(r);
  ck_assert_int_eq(itest_resident(fd), base);
  r = itest_load(fd, 2, A, 0, "exhaustive");
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  json_decref(r);
  ck_assert(itest_worker_wait_ready(fd, 1, 10) >= 0);
  ck_assert_int_eq(itest_resident(fd), base);
  bad->col_idx[40] = 1;
  bad->val[7] = 0.0 / 0.0;
  r = itest_load(fd, 3, bad, 0, "trial");
  ck_assert_str_eq(itest_error_code(r), "ECSR");
  json_decref(r);
  ck_assert_int_eq(itest_resident(fd), base);
  /* csr-scalar is quarantined for A now: its load succeeds. */
  r = itest_load(fd, 4, A, 0, "exhaustive");
  int64_t h = itest_handle(r);
  json_decref(r);
  ck_assert_int_eq(itest_resident(fd), base + 1);
  itest_multiply_ok(fd, h, A, 0, 1);
  close(fd);
  spmv_csr_free(A);
  spmv_csr_free(bad);
}
END_TEST

/* hang_times_out's device timeout, as its spmvd.conf says. */
#define TIMEOUT_S 2

/*
 * A worker that hangs building a bench's configuration is killed by the
 * device timeout: the bench and a product of another client that waited
 * behind it both get the retriable EWORKER, within the timeout and a
 * generous bound; the log says why, naming the request and its client;
 * a new worker serves the next product; and the configuration is
 * quarantined, so that an exhaustive tune, which would build it, passes.
 */
START_TEST(hang_times_out)
{
  struct spmv_csr *A = itest_random_csr(2000, 9, 13, 13);
  struct spmv_csr *B = itest_random_csr(1500, 7, 21, 21);
  char text[128];
  json_t *r;

  /* ell: a format the trial loads below never build on the cpu. */
  itest_daemon_restart(&itest_d, "hang:ell bs=", "device_timeout_s = 2\n");
  int a = itest_open(&itest_d), b = itest_open(&itest_d);
  ck_assert_int_eq(itest_worker_int(a, "device_timeout_s"), TIMEOUT_S);
  r = itest_load(a, 1, A, 0, "trial");
  int64_t ha = itest_handle(r);
  json_decref(r);
  r = itest_load(b, 1, B, 0, "trial");
  int64_t hb = itest_handle(r);
  json_decref(r);

  double t0 = itest_now_s();
  ck_assert_int_eq(itest_send(a, json_pack("{ss si sI s[s]}", "op", "bench",
                                           "id", 2, "handle", (json_int_t)ha,
                                           "configs", "ell"),
                              NULL, 0), 0);
  ck_assert(itest_log_wait(&itest_d, "fault injection: hang building "
                           "'ell bs=", 10000));
  double t1 = itest_now_s();
  itest_send_multiply(b, 3, hb, B);

  r = itest_recv_reply(a, NULL, NULL, NULL);
  double ta = itest_now_s() - t0;
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  ck_assert_msg(strstr(error_msg(r), "timed out"), "%s", error_msg(r));
  json_decref(r);
  r = itest_recv_reply(b, NULL, NULL, NULL);
  double tb = itest_now_s() - t1;
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  json_decref(r);
  printf("hang_times_out: the bench answered after %.2f s, the product "
         "behind it after %.2f s (device_timeout_s %d)\n", ta, tb, TIMEOUT_S);
  ck_assert_msg(ta >= TIMEOUT_S - 0.05 && ta < TIMEOUT_S + 10,
                "the bench answered after %.2f s", ta);
  ck_assert_msg(tb < TIMEOUT_S + 10, "the product answered after %.2f s", tb);

  snprintf(text, sizeof text, "(device_timeout_s %d) serving 'bench'",
           TIMEOUT_S);
  ck_assert_msg(itest_log_wait(&itest_d, text, 1000), "no '%s' in %s", text,
                itest_d.log);
  snprintf(text, sizeof text, "for pid %ld uid %ld", (long)getpid(),
           (long)getuid());
  ck_assert_msg(itest_log_wait(&itest_d, text, 1000), "no '%s' in %s", text,
                itest_d.log);

  itest_multiply_after_restart(b, hb, B);
  ck_assert_int_eq(itest_worker_int(b, "timeouts"), 1);
  ck_assert_int_eq(itest_worker_int(b, "restarts"), 1);

  /* Quarantined: the exhaustive tune leaves ell out, else it hangs. */
  r = itest_call(a, json_pack("{ss si sI ss}", "op", "tune", "id", 4,
                              "handle", (json_int_t)ha, "strategy",
                              "exhaustive"), NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "tune: %s %s",
                itest_error_code(r), error_msg(r));
  const char *cfg = json_string_value(json_object_get(json_object_get(r, "config"), "text"));
  ck_assert_msg(strncmp(cfg, "ell bs=", 7) != 0, "chose %s", cfg);
  json_decref(r);
  r = itest_call(a, json_pack("{ss si sI}", "op", "info", "id", 5, "handle",
                              (json_int_t)ha), NULL, 0, NULL, NULL);
  json_t *trials = json_object_get(r, "trials"), *t;
  size_t i;
  ck_assert_int_gt(json_array_size(trials), 1);
  json_array_foreach(trials, i, t) {
    const char *c = json_string_value(json_object_get(t, "config"));
    ck_assert_msg(c && strncmp(c, "ell bs=", 7) != 0, "the tune tried %s", c);
  }
  json_decref(r);
  itest_multiply_ok(a, ha, A, 0, 5);
  ck_assert_int_eq(itest_worker_int(a, "timeouts"), 1);
  close(a);
  close(b);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

/* A worker that stalls at start (a device that never answers its first
 * call) is killed by the device timeout too: a load queued behind its start
 * gets the retriable EWORKER saying so, the log says why, and the daemon
 * answers on. */
START_TEST(hang_at_start_times_out)
{
  struct spmv_csr *A = itest_random_csr(500, 5, 7, 7);
  json_t *r;

  itest_daemon_restart(&itest_d, "slow-start:60000", "device_timeout_s = 2\n");
  int a = itest_open(&itest_d);
  double t0 = itest_now_s();
  r = itest_load(a, 1, A, 0, "trial");
  double ta = itest_now_s() - t0;
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  ck_assert_msg(strstr(error_msg(r), "did not start"), "%s", error_msg(r));
  json_decref(r);
  printf("hang_at_start_times_out: the load answered after %.2f s "
         "(device_timeout_s %d)\n", ta, TIMEOUT_S);
  ck_assert_msg(ta < TIMEOUT_S + 10, "the load answered after %.2f s", ta);
  ck_assert_msg(itest_log_wait(&itest_d, "did not start within", 1000),
                "no 'did not start within' in %s", itest_d.log);
  ck_assert_int_ge(itest_worker_int(a, "timeouts"), 1);
  close(a);
  spmv_csr_free(A);
}
END_TEST

/* An SPMVD_FAULT the worker cannot honour stops its start with a message
 * naming it; the daemon lives on. */
START_TEST(bad_fault_refused)
{
  itest_daemon_restart(&itest_d, "illegal-address:csr-scalar", NULL);
  ck_assert(itest_log_wait(&itest_d, "SPMVD_FAULT: illegal-address needs the "
                           "cuda backend", 10000));
  itest_daemon_restart(&itest_d, "slow:csr", NULL);
  ck_assert(itest_log_wait(&itest_d, "SPMVD_FAULT: 'slow:csr': the kind is "
                           "not", 10000));
  int fd = itest_open(&itest_d);
  json_t *w = itest_worker_status(fd);
  ck_assert_str_ne(json_string_value(json_object_get(w, "state")), "ready");
  json_decref(w);
  close(fd);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("faults");
  TCase *tc = tcase_create("faults");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, abort_candidate_quarantined);
  tcase_add_test(tc, failed_loads_leave_nothing);
  tcase_add_test(tc, block_candidate_quarantined);
  tcase_add_test(tc, hang_times_out);
  tcase_add_test(tc, hang_at_start_times_out);
  tcase_add_test(tc, bad_fault_refused);
  suite_add_tcase(s, tc);
  return itest_run(s);
}

#else

int main(void)
{
  printf("check_faults: not a fault-injection build (configure "
         "--enable-fault-injection); skipped\n");
  return 77;
}

#endif
