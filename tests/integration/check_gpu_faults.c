/* check_gpu_faults.c: GPU faults on the device, injected by a
 * fault-injection build (SPMVD_FAULT): an illegal address, round after
 * round, with clients in flight; a kernel that never ends against the
 * device timeout; device memory too small for a matrix, round after
 * round, without a leak.  Prints what it measures and PASS or FAIL (exit
 * 77 without a GPU or without --enable-fault-injection). */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu_common.h"
#include "itest.h"

/* The whole suite needs the fault hooks: a build without them skips it. */
#ifdef SPMVD_FAULT_INJECTION

/* The configuration the faults strike: a block size no strategy takes
 * (the tuner's grid starts at 64), so only the tests' benches build it. */
#define FAULT_CFG "csr-scalar bs=32"
/* Clients with a product in flight when the worker faults. */
#define NCLIENTS 4
/* The device timeout of the hang test's daemon. */
#define HANG_TIMEOUT_S 3

/* A count from the environment variable var, else def. */
static int env_count(const char *var, int def)
{
  const char *v = getenv(var);
  int n = v ? atoi(v) : 0;
  return n > 0 ? n : def;
}

static const char *error_msg(const json_t *r)
{
  const char *m = json_string_value(
      json_object_get(json_object_get(r, "error"), "message"));
  return m ? m : "";
}

/* Loads A on s with strategy trial; returns the handle, and its
 * fingerprint into fp (33 bytes) when fp is not NULL. */
static int64_t load(int s, int64_t id, const struct spmv_csr *A, char *fp)
{
  json_t *r = itest_load(s, id, A, 0, "trial");
  int64_t h = itest_handle(r);
  const char *cfg = json_string_value(json_object_get(json_object_get(r, "config"), "text"));

  ck_assert_msg(cfg && strncmp(cfg, FAULT_CFG, strlen(FAULT_CFG)) != 0,
                "the tune chose %s, which the fault strikes", cfg);
  if (fp)
    snprintf(fp, 33, "%s", json_string_value(json_object_get(r, "fingerprint")));
  json_decref(r);
  return h;
}

/* Sends a bench of FAULT_CFG on matrix h as request id on s. */
static void send_bench(int s, int64_t id, int64_t h)
{
  ck_assert_int_eq(itest_send(s, json_pack("{ss sI sI s[s]}", "op", "bench",
                                           "id", (json_int_t)id, "handle",
                                           (json_int_t)h, "configs", FAULT_CFG),
                              NULL, 0), 0);
}

/*
 * Reads the replies of n connections fds (one request each in flight,
 * sent at sent[i]) as they come, within max_s: code[i] receives each
 * reply's error name ("" when ok, "none" when none came), msg[i] its
 * message, at[i] the seconds from sending to its arrival.
 */
static void gather(int n, const int *fds, const double *sent, double max_s,
                   char code[][32], char msg[][256], double *at)
{
  struct pollfd p[NCLIENTS + 1];
  int left = n;
  double t0 = itest_now_s();

  for (int i = 0; i < n; i++) {
    p[i] = (struct pollfd){fds[i], POLLIN, 0};
    snprintf(code[i], 32, "none");
    msg[i][0] = '\0';
    at[i] = -1;
  }
  while (left > 0 && itest_now_s() - t0 < max_s) {
    if (poll(p, (nfds_t)n, 100) <= 0)
      continue;
    for (int i = 0; i < n; i++) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
        continue;
      json_t *r = itest_recv_ready(fds[i], NULL);
      if (!r && !(p[i].revents & POLLHUP))
        continue;  /* a progress event, not the reply */
      at[i] = itest_now_s() - sent[i];
      snprintf(code[i], 32, "%s", r ? itest_error_code(r) : "ECLOSED");
      snprintf(msg[i], 256, "%s", r ? error_msg(r) : "");
      json_decref(r);
      p[i].fd = -1;
      left--;
    }
  }
}

/* Whether the cache at path holds the quarantine of FAULT_CFG for the
 * matrix of fingerprint fp; waits up to 5 s for the cache thread. */
static int quarantined(const char *path, const char *fp)
{
  for (int i = 0; i < 50; i++) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM quarantine WHERE "
                           "fingerprint = ?1 AND config = ?2", -1, &st,
                           NULL) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, fp, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st, 2, FAULT_CFG, -1, SQLITE_TRANSIENT);
      if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (n > 0)
      return 1;
    usleep(100000);
  }
  return 0;
}

/* Runs the list steps (JSON text) on s; returns the reply. */
static json_t *ops(int s, const char *steps)
{
  json_error_t e;
  json_t *o = json_loads(steps, 0, &e);
  ck_assert_msg(o != NULL, "bad list %s", steps);
  json_t *r = itest_call(s, json_pack("{ss si so}", "op", "ops", "id", 60,
                                      "ops", o), NULL, 0, NULL, NULL);
  ck_assert_ptr_nonnull(r);
  return r;
}

/* After a restart: vector v of n values on s is reported lost (EWORKER
 * naming it) until written; it is then filled with 2 again. */
static void vector_lost_then_refilled(int s, int64_t v, int64_t n)
{
  char steps[256];
  int lost = 0;

  snprintf(steps, sizeof steps, "[{\"op\":\"nrm2\",\"x\":%lld}]", (long long)v);
  for (int i = 0; i < 600 && !lost; i++) {
    json_t *r = ops(s, steps);
    ck_assert_str_eq(itest_error_code(r), "EWORKER");
    lost = strstr(error_msg(r), "were lost") != NULL;
    json_decref(r);
    if (!lost)
      usleep(20000);
  }
  ck_assert_msg(lost, "vector %lld was never reported lost", (long long)v);
  snprintf(steps, sizeof steps, "[{\"op\":\"fill\",\"x\":%lld,\"value\":2},"
           "{\"op\":\"nrm2\",\"x\":%lld}]", (long long)v, (long long)v);
  json_t *r = ops(s, steps);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "refill: %s",
                error_msg(r));
  double nrm = json_number_value(json_array_get(json_object_get(r, "results"), 0));
  ck_assert_msg(fabs(nrm - sqrt(4.0 * (double)n)) < 1e-9 * sqrt((double)n),
                "refilled norm %g", nrm);
  json_decref(r);
}

static int64_t vcreate_filled(int s, int64_t n)
{
  json_t *r = itest_call(s, json_pack("{ss si ss sI}", "op", "vector-create",
                                      "id", 61, "dtype", "f64", "n",
                                      (json_int_t)n), NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "vector-create: %s",
                error_msg(r));
  int64_t v = json_integer_value(json_object_get(r, "vector"));
  json_decref(r);
  char steps[128];
  snprintf(steps, sizeof steps, "[{\"op\":\"fill\",\"x\":%lld,\"value\":2}]",
           (long long)v);
  r = ops(s, steps);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  return v;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/*
 * Rounds of: a bench builds FAULT_CFG, whose kernel stores through an
 * illegal address (a sticky error: the worker exits with status 3), while
 * NCLIENTS clients have a product of the bench's matrix in flight (it
 * waits behind the bench on the worker).  Each round: every client is
 * answered (EWORKER, or its product once a new worker serves it), the
 * bench EWORKER "crashed"; a new worker becomes ready; the configuration
 * is quarantined in the cache; a resident matrix multiplies right again;
 * a device vector is reported lost, then written again.  The answer and
 * ready times are printed (the 2 s and 10 s), not asserted.
 */
START_TEST(illegal_address_rounds)
{
  int rounds = env_count("SPMV_GPU_FAULT_ROUNDS", 20);
  struct spmv_csr *M = itest_random_csr(400000, 12, 3, 3);
  struct spmv_csr *K = itest_random_csr(100000, 9, 5, 5);
  int fds[NCLIENTS + 1], own, keep;
  double sent[NCLIENTS + 1], at[NCLIENTS + 1], worst_ans[64], worst_ready[64];
  char code[NCLIENTS + 1][32], msg[NCLIENTS + 1][256], fp[33];

  if (rounds > 64)
    rounds = 64;
  itest_daemon_restart(&itest_d, "illegal-address:" FAULT_CFG, NULL);
  own = itest_open(&itest_d);
  keep = itest_open(&itest_d);
  for (int i = 0; i < NCLIENTS; i++)
    fds[i] = itest_open(&itest_d);
  fds[NCLIENTS] = own;
  int64_t hm = load(own, 1, M, fp);
  int64_t hk = load(keep, 2, K, NULL);
  int64_t v = vcreate_filled(keep, K->rows);
  itest_multiply_ok(keep, hk, K, 0, 1);

  for (int r = 1; r <= rounds; r++) {
    int eworker = 0;
    double t0 = itest_now_s();
    send_bench(own, 100 + r, hm);
    sent[NCLIENTS] = t0;
    for (int i = 0; i < NCLIENTS; i++) {
      sent[i] = itest_now_s();
      itest_send_multiply(fds[i], 200 + r, hm, M);
    }
    gather(NCLIENTS + 1, fds, sent, 120, code, msg, at);
    ck_assert_msg(strcmp(code[NCLIENTS], "EWORKER") == 0 &&
                  strstr(msg[NCLIENTS], "crashed"),
                  "round %d: the bench answered %s %s", r, code[NCLIENTS],
                  msg[NCLIENTS]);
    double worst = 0;
    for (int i = 0; i < NCLIENTS; i++) {
      ck_assert_msg(strcmp(code[i], "EWORKER") == 0 || code[i][0] == '\0',
                    "round %d: client %d answered '%s' %s", r, i, code[i],
                    msg[i]);
      if (code[i][0] != '\0') {
        eworker++;
        worst = at[i] > worst ? at[i] : worst;
      }
    }
    double ready = itest_worker_wait_ready(own, r, 120);
    ck_assert_msg(ready >= 0, "round %d: no worker ready within 120 s", r);
    double ready_after = itest_now_s() - (t0 + at[NCLIENTS]);
    worst_ans[r - 1] = worst > at[NCLIENTS] ? worst : at[NCLIENTS];
    worst_ready[r - 1] = ready_after;
    printf("illegal-address round %2d: bench EWORKER after %.3f s; %d of %d "
           "products in flight answered EWORKER, the slowest after %.3f s; "
           "worker ready %.3f s after the crash was answered\n", r,
           at[NCLIENTS], eworker, NCLIENTS, worst, ready_after);
    fflush(stdout);
    if (r == 1)
      ck_assert_msg(quarantined(itest_d.db, fp), "%s not quarantined for %s",
                    FAULT_CFG, fp);
    itest_multiply_after_restart(keep, hk, K);
    itest_multiply_after_restart(fds[0], hm, M);
    vector_lost_then_refilled(keep, v, K->rows);
  }
  ck_assert_int_eq(itest_worker_int(own, "restarts"), rounds);
  ck_assert_int_eq(itest_worker_int(own, "timeouts"), 0);
  qsort(worst_ans, (size_t)rounds, sizeof *worst_ans, cmp_double);
  qsort(worst_ready, (size_t)rounds, sizeof *worst_ready, cmp_double);
  printf("illegal-address, %d rounds: in-flight answers median %.3f s, max "
         "%.3f s (issue: 2 s); new worker ready median %.3f s, max %.3f s "
         "(issue: 10 s)\n", rounds, worst_ans[rounds / 2],
         worst_ans[rounds - 1], worst_ready[rounds / 2],
         worst_ready[rounds - 1]);
  for (int i = 0; i <= NCLIENTS; i++)
    close(fds[i]);
  close(keep);
  spmv_csr_free(M);
  spmv_csr_free(K);
}
END_TEST

/*
 * A bench of FAULT_CFG launches a kernel that never ends: the device
 * timeout kills the worker, the bench and the products behind it are
 * answered EWORKER "timed out", the log says why, a new worker serves the
 * resident matrices and the configuration is quarantined.
 */
START_TEST(hang_times_out)
{
  struct spmv_csr *M = itest_random_csr(400000, 12, 7, 7);
  int fds[NCLIENTS + 1];
  double sent[NCLIENTS + 1], at[NCLIENTS + 1];
  char code[NCLIENTS + 1][32], msg[NCLIENTS + 1][256], fp[33], conf[64];

  snprintf(conf, sizeof conf, "device_timeout_s = %d\n", HANG_TIMEOUT_S);
  itest_daemon_restart(&itest_d, "hang:" FAULT_CFG, conf);
  for (int i = 0; i <= NCLIENTS; i++)
    fds[i] = itest_open(&itest_d);
  int own = fds[NCLIENTS];
  int64_t hm = load(own, 1, M, fp);
  double t0 = itest_now_s();
  send_bench(own, 2, hm);
  sent[NCLIENTS] = t0;
  ck_assert(itest_log_wait(&itest_d, "fault injection: hang building", 30000));
  for (int i = 0; i < NCLIENTS; i++) {
    sent[i] = itest_now_s();
    itest_send_multiply(fds[i], 3, hm, M);
  }
  gather(NCLIENTS + 1, fds, sent, 120, code, msg, at);
  for (int i = 0; i <= NCLIENTS; i++)
    ck_assert_msg(strcmp(code[i], "EWORKER") == 0 && strstr(msg[i], "timed out"),
                  "client %d answered '%s' %s", i, code[i], msg[i]);
  double ready = itest_worker_wait_ready(own, 1, 120);
  ck_assert_msg(ready >= 0, "no worker ready within 120 s of the timeout");
  double worst = 0;
  for (int i = 0; i < NCLIENTS; i++)
    worst = at[i] > worst ? at[i] : worst;
  printf("hang: device_timeout_s %d; the bench answered EWORKER after %.3f s, "
         "the %d products behind it after at most %.3f s; a new worker ready "
         "%.3f s after that\n", HANG_TIMEOUT_S, at[NCLIENTS], NCLIENTS, worst,
         ready);
  fflush(stdout);
  ck_assert(itest_log_wait(&itest_d, "serving 'bench'", 1000));
  ck_assert_msg(quarantined(itest_d.db, fp), "%s not quarantined", FAULT_CFG);
  itest_multiply_after_restart(fds[0], hm, M);
  ck_assert_int_eq(itest_worker_int(own, "timeouts"), 1);
  for (int i = 0; i <= NCLIENTS; i++)
    close(fds[i]);
  spmv_csr_free(M);
}
END_TEST

/* Device memory left free by the ballast of the memory test. */
#define LEAVE_FREE_MB 512
/* What two reports of free memory may differ by without a leak: the
 * driver's allocation granularity, twice. */
#define LEAK_SLACK ((int64_t)4 << 20)

/* The worker's device_free_bytes once its pool was trimmed (a second
 * after the last request that may free memory, then reported). */
static int64_t settled_free(int s)
{
  usleep(2500000);
  int64_t f = itest_worker_int(s, "device_free_bytes");
  ck_assert_msg(f > 0, "status has no device_free_bytes");
  return f;
}

/*
 * With a ballast leaving LEAVE_FREE_MB of device memory free: rounds of a
 * matrix of 1.2 x the free memory (its CSR in f64), refused with ENOMEM
 * naming GPU memory, then a small one loaded, multiplied and freed; the
 * free memory after the first round and after the last agree within
 * LEAK_SLACK, and the worker never restarted.
 */
START_TEST(memory_enomem_no_leak)
{
  int rounds = env_count("SPMV_GPU_MEMORY_ROUNDS", 100);
  char fault[64];

  snprintf(fault, sizeof fault, "leave-free:%dM", LEAVE_FREE_MB);
  itest_daemon_restart(&itest_d, fault, NULL);
  int s = itest_open(&itest_d);
  ck_assert(itest_worker_wait_ready(s, 0, 60) >= 0);
  int64_t f0 = 0;
  for (int i = 0; i < 500 && f0 <= 0; i++, usleep(10000))
    f0 = itest_worker_int(s, "device_free_bytes");
  ck_assert_msg(f0 > ((int64_t)LEAVE_FREE_MB << 20) / 2 &&
                f0 < ((int64_t)LEAVE_FREE_MB << 20) * 2,
                "device_free_bytes %lld with %d MB left free", (long long)f0,
                LEAVE_FREE_MB);
  int64_t n = (int64_t)1 << 20;
  int per_row = (int)ceil((1.2 * (double)f0 - 8.0 * (double)(n + 1)) /
                          (12.0 * (double)n));
  struct spmv_csr *big = itest_random_csr(n, per_row, 9, 9);
  struct spmv_csr *small = itest_random_csr(20000, 8, 4, 4);
  size_t big_bytes = (size_t)(n + 1) * 8 + (size_t)big->nnz * 12;
  int mfd = itest_csr_memfd(big, "gpu-faults-big", itest_csr_layout_size(big),
                            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
  printf("memory: %lld bytes free after the ballast; the large matrix holds "
         "%zu bytes of CSR in f64 (%.2f x)\n", (long long)f0, big_bytes,
         (double)big_bytes / (double)f0);
  fflush(stdout);
  int64_t f1 = 0, fn = 0;
  for (int r = 1; r <= rounds; r++) {
    json_t *q = itest_call_fd(s, json_pack("{ss sI ss sI sI sI sb ss}", "op",
                                           "load", "id", (json_int_t)r,
                                           "dtype", "f64", "rows",
                                           (json_int_t)big->rows, "cols",
                                           (json_int_t)big->cols, "nnz",
                                           (json_int_t)big->nnz, "memfd", 1,
                                           "strategy", "auto"),
                              mfd, NULL, 0);
    ck_assert_msg(strcmp(itest_error_code(q), "ENOMEM") == 0 &&
                  strstr(error_msg(q), "GPU memory"),
                  "round %d: the large load answered '%s' %s", r,
                  itest_error_code(q), error_msg(q));
    if (r == 1) {
      printf("memory: the large load: ENOMEM \"%s\"\n", error_msg(q));
      fflush(stdout);
    }
    json_decref(q);
    json_t *l = itest_load(s, 1000 + r, small, 0, "auto");
    int64_t h = itest_handle(l);
    json_decref(l);
    double res = itest_multiply_check(s, h, small, 0, (unsigned)r, NULL);
    ck_assert_msg(res >= 0 && res <= 1.0,
                  "round %d: the small matrix: residual %g of its bound", r, res);
    json_decref(itest_call(s, json_pack("{ss sI sI}", "op", "free", "id",
                                        (json_int_t)(2000 + r), "handle",
                                        (json_int_t)h), NULL, 0, NULL, NULL));
    if (r == 1)
      f1 = settled_free(s);
    if (r % 25 == 0 || r == rounds) {
      int64_t f = settled_free(s);
      printf("memory round %3d: %lld bytes free (%+lld since round 1)\n", r,
             (long long)f, (long long)(f - f1));
      fflush(stdout);
      fn = f;
    }
  }
  ck_assert_msg(fn + LEAK_SLACK >= f1, "device memory leaked: %lld bytes "
                "free after round 1, %lld after round %d", (long long)f1,
                (long long)fn, rounds);
  ck_assert_int_eq(itest_worker_int(s, "restarts"), 0);
  close(mfd);
  close(s);
  spmv_csr_free(big);
  spmv_csr_free(small);
}
END_TEST

/* Rows of 8 entries but the first, of WIDE_ROW: ELL's layout (every row
 * WIDE_ROW wide) holds 3.25 x the CSR's entries. */
#define WIDE_ROW 26

/* A random n x n matrix of 8 entries a row, its first row WIDE_ROW. */
static struct spmv_csr *one_wide_row_csr(int64_t n)
{
  struct spmv_csr *A = spmv_csr_new(n, n, 8 * n + (WIDE_ROW - 8));
  unsigned s = 12345u, v = 777u;

  ck_assert_ptr_nonnull(A);
  for (int64_t i = 0; i < n; i++) {
    A->row_ptr[i + 1] = A->row_ptr[i] + (i == 0 ? WIDE_ROW : 8);
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      s = s * 1103515245u + 12345u;
      v = v * 1103515245u + 12345u;
      A->col_idx[k] = (int32_t)((s >> 8) % (unsigned)n);
      A->val[k] = (double)(v >> 8 & 0xffff) / 65536.0 + 0.5;
    }
  }
  return A;
}

/*
 * A race stages the matrix's CSR on the device once; a candidate that
 * fits only without that copy beside it makes the copy go, and is loaded
 * from the host as without staging.  With a ballast, a matrix of n rows
 * (CSR about 104 n bytes in f64, resident as auto's pick in 100-140 n)
 * leaves room for staging (3 CSRs beside the resident one) and for ELL
 * (12 x WIDE_ROW n + x and y) only without the staged copy, for n in
 * about (free - reserve) / 532 .. / 452: the middle is taken.  A bench of
 * ELL then csr-scalar times both, the log names the copy given up, and
 * the resident matrix still multiplies right.
 */
START_TEST(staged_copy_gives_way)
{
  itest_daemon_restart(&itest_d, "leave-free:1024M", NULL);
  int s = itest_open(&itest_d);
  ck_assert(itest_worker_wait_ready(s, 0, 60) >= 0);
  int64_t f0 = 0;
  for (int i = 0; i < 500 && f0 <= 0; i++, usleep(10000))
    f0 = itest_worker_int(s, "device_free_bytes");
  ck_assert_msg(f0 > ((int64_t)768 << 20), "device_free_bytes %lld with 1024 MB "
                "left free", (long long)f0);
  /* 256 MiB: the cuda backend's RESERVE_BYTES (spmvd_backend_cuda_impl.h). */
  int64_t n = (f0 - ((int64_t)256 << 20)) / 492;
  struct spmv_csr *A = one_wide_row_csr(n);
  printf("staging: %lld bytes free after the ballast; %lld rows, %lld entries\n",
         (long long)f0, (long long)n, (long long)A->nnz);
  fflush(stdout);
  json_t *l = itest_load(s, 1, A, 0, "auto");
  int64_t h = itest_handle(l);
  json_decref(l);
  json_t *r = itest_call(s, json_pack("{ss si sI s[ss] si}", "op", "bench", "id", 2,
                                      "handle", (json_int_t)h, "configs",
                                      "ell bs=256", "csr-scalar bs=256", "rounds", 3),
                         NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "bench: %s %s",
                itest_error_code(r), error_msg(r));
  json_t *t = json_object_get(r, "trials");
  ck_assert_uint_eq(json_array_size(t), 2);
  for (size_t i = 0; i < 2; i++) {
    const json_t *x = json_array_get(t, i);
    const json_t *e = json_object_get(x, "error");
    ck_assert_msg(strcmp(json_string_value(json_object_get(x, "status")), "ok") == 0,
                  "%s: %s", json_string_value(json_object_get(x, "config")),
                  e ? json_string_value(json_object_get(e, "message")) : "(no error)");
  }
  json_decref(r);
  ck_assert_msg(itest_log_wait(&itest_d, "staged on the device", 1000),
                "the bench did not stage the CSR: the sizes above leave no room");
  ck_assert_msg(itest_log_wait(&itest_d, "the staged CSR gives its room to ell", 1000),
                "ELL was loaded beside the staged CSR: the sizes above leave too "
                "much room to test its giving way");
  itest_multiply_ok(s, h, A, 0, 3);
  ck_assert_int_eq(itest_worker_int(s, "restarts"), 0);
  close(s);
  spmv_csr_free(A);
}
END_TEST

/* A case of s named name, with a daemon of its own. */
static TCase *one_case(Suite *s, const char *name)
{
  TCase *tc = tcase_create(name);

  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 900);
  suite_add_tcase(s, tc);
  return tc;
}

int main(void)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!gpu_present()) {
    printf("check_gpu_faults: no GPU; skipped\n");
    return 77;
  }
  setenv("SPMV_ITEST_BACKEND", "cuda", 1);
  /* A case each, so that CK_RUN_CASE=illegal-address (hang, memory, staging) runs
   * one alone. */
  Suite *s = suite_create("gpu_faults");
  TCase *tc = one_case(s, "illegal-address");
  tcase_add_test(tc, illegal_address_rounds);
  tc = one_case(s, "hang");
  tcase_add_test(tc, hang_times_out);
  tc = one_case(s, "memory");
  tcase_add_test(tc, memory_enomem_no_leak);
  tc = one_case(s, "staging");
  tcase_add_test(tc, staged_copy_gives_way);
  int rc = itest_run(s);
  printf("check_gpu_faults: %s\n", rc == EXIT_SUCCESS ? "PASS" : "FAIL");
  return rc;
}

#else

int main(void)
{
  printf("check_gpu_faults: not a fault-injection build (configure "
         "--enable-fault-injection); skipped\n");
  return 77;
}

#endif
