/* check_tools.c: a real spmvd driven by libspmvclient and by spmvctl --json. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"


/* The path of a matrix of the test data (a rotating static buffer). */
static const char *mpath(const char *name)
{
  static char path[4][4096];
  static int k;

  k = (k + 1) % 4;
  itest_matrix_path(name, path[k], sizeof path[k]);
  return path[k];
}

/* libspmvclient: load files, multiply, batch, info, survive a worker kill. */
START_TEST(client_library)
{
  static const char *const files[] = {"bcsstk13.mtx", "west0479.mtx",
                                      "bcsstk16.mtx", "lp_afiro.mtx"};
  struct spmv_client *c = NULL;
  char path[1024];

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    struct spmv_csr *A = itest_matrix(files[f]);
    struct spmv_matrix *m = NULL;
    snprintf(path, sizeof path, "%s", mpath(files[f]));
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

/* Compares n values of y with yr (f64, or f32 rounded). */
static void expect_close(const void *y, const double *yr, int64_t n, int f32)
{
  for (int64_t i = 0; i < n; i++) {
    double v = f32 ? ((const float *)y)[i] : ((const double *)y)[i];
    ck_assert_msg(fabs(v - yr[i]) <= (f32 ? 1e-4 : 1e-12) * (8.0 + fabs(yr[i])),
                  "y[%lld] = %.17g, expected %.17g", (long long)i, v, yr[i]);
  }
}

/* libspmvclient's products on one connection with vectors of every size
 * (the daemon's kept buffer grows, then serves smaller ones), beta != 0
 * (x and y sent from where they lie), k > 1, f32, and y read in place. */
START_TEST(client_products_in_place)
{
  static const int64_t sizes[] = {3000, 200, 40000, 10, 40000};
  struct spmv_client *c = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    struct spmv_csr *A = itest_random_csr(sizes[s], 5, (unsigned)s + 1, 7);
    int f32 = s == 3 || s == 4;
    size_t es = f32 ? sizeof(float) : sizeof(double), n = (size_t)A->rows;
    double *x = malloc(sizeof *x * 2 * n), *y0 = malloc(sizeof *y0 * 2 * n);
    double *yr = malloc(sizeof *yr * 2 * n);
    float *vals = malloc(sizeof *vals * (size_t)A->nnz);
    void *xt = malloc(es * 2 * n), *yt = malloc(es * 2 * n);
    struct spmv_matrix *m = NULL;

    for (int64_t k = 0; k < A->nnz; k++) {
      vals[k] = (float)A->val[k];
      if (f32)
        A->val[k] = vals[k];
    }
    for (size_t i = 0; i < 2 * n; i++) {
      x[i] = (double)((i * 7919) % 101) / 50.0 - 1.0;
      y0[i] = (double)(i % 13) - 6.0;
      if (f32) {
        ((float *)xt)[i] = (float)x[i];
        x[i] = ((float *)xt)[i];
      } else {
        ((double *)xt)[i] = x[i];
      }
    }
    ck_assert_msg(spmv_load_csr(c, f32 ? SPMV_F32 : SPMV_F64, A->rows, A->cols,
                                A->nnz, A->row_ptr, A->col_idx,
                                f32 ? (void *)vals : (void *)A->val, NULL,
                                &m) == 0, "%s", spmv_client_errmsg(c));
    for (int k = 1; k <= 2; k++) {
      for (size_t i = 0; i < k * n; i++) {
        yr[i] = y0[i];
        if (f32)
          ((float *)yt)[i] = (float)y0[i];
        else
          ((double *)yt)[i] = y0[i];
      }
      ck_assert_msg((k == 1 ? spmv_multiply(m, 1.5, xt, -0.5, yt)
                            : spmv_multiply_batch(m, k, 1.5, xt, -0.5, yt)) == 0,
                    "%s", spmv_client_errmsg(c));
      for (int v = 0; v < k; v++)
        spmv_csr_ref(A, 1.5, x + v * n, -0.5, yr + v * n);
      expect_close(yt, yr, (int64_t)(k * n), f32);
    }
    memset(yt, 0xff, es * n);  /* NaN: beta = 0 must only write y */
    ck_assert_int_eq(spmv_multiply(m, 1.0, xt, 0.0, yt), 0);
    spmv_csr_ref(A, 1.0, x, 0.0, yr);
    expect_close(yt, yr, (int64_t)n, f32);
    spmv_matrix_free(m);
    free(x);
    free(y0);
    free(yr);
    free(vals);
    free(xt);
    free(yt);
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

static int spmvctl_fails(const char *args, char *err, size_t n);

/* Every spmvctl --json output parses; a second tune comes from the cache. */
START_TEST(spmvctl_json_outputs)
{
  char args[1200];
  json_t *j;

  j = spmvctl_json("status", 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "backend")), "cpu");
  json_decref(j);
  snprintf(args, sizeof args, "profile '%s'", mpath("bcsstk13.mtx"));
  j = spmvctl_json(args, 0);
  ck_assert_ptr_nonnull(json_object_get(j, "rows"));
  json_decref(j);
  snprintf(args, sizeof args, "tune --strategy trial '%s'",
           mpath("bcsstk13.mtx"));
  j = spmvctl_json(args, 0);
  char fp[64];
  snprintf(fp, sizeof fp, "%s", json_string_value(json_object_get(j, "fingerprint")));
  ck_assert_int_eq(strlen(fp), 32);
  /* The load's cost in products of the chosen kernel, from the client's
   * wall time, which holds the daemon's. */
  json_t *steps = json_object_get(j, "steps");
  double total_ms = json_number_value(json_object_get(steps, "client_total_ms"));
  double t_us = json_number_value(json_object_get(j, "time_us"));
  ck_assert(total_ms >= json_number_value(json_object_get(steps, "total_ms")));
  ck_assert(total_ms > 0 && t_us > 0);
  ck_assert_double_eq_tol(json_number_value(json_object_get(j, "load_cost_spmv")),
                          total_ms * 1e3 / t_us, 1e-6 * total_ms * 1e3 / t_us);
  json_decref(j);
  j = spmvctl_json(args, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "source")), "cache");
  json_decref(j);
  snprintf(args, sizeof args, "bench '%s'", mpath("west0479.mtx"));
  json_decref(spmvctl_json(args, 0));
  json_decref(spmvctl_json("list", 0));
  snprintf(args, sizeof args, "show %s", fp);
  json_decref(spmvctl_json(args, 0));
  json_decref(spmvctl_json("export", 0));
  /* The daemon's own user may forget (these tests run it). */
  json_decref(spmvctl_json("forget all", 0));
  /* ... and stop it: spmvctl returns once the daemon has finished, which
   * then exits 0; a second stop finds no daemon and starts none. */
  j = spmvctl_json("stop", 0);
  ck_assert(json_is_true(json_object_get(j, "stopped")));
  json_decref(j);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, 0), 0);
  char err[512];
  ck_assert_int_eq(spmvctl_fails("stop", err, sizeof err), 3);  /* no daemon */
  ck_assert_int_eq(access(itest_d.sock, F_OK), -1);
}
END_TEST

/* Runs spmvctl with args (stdout dropped); returns its exit status and
 * puts its stderr in err. */
static int spmvctl_fails(const char *args, char *err, size_t n)
{
  const char *b = getenv("SPMV_TOP_BUILDDIR");
  char cmd[4096];
  size_t len = 0;
  snprintf(cmd, sizeof cmd, "%s/client/spmvctl --quiet --socket '%s' --db '%s' "
           "%s 2>&1 >/dev/null", b ? b : ".", itest_d.sock, itest_d.db, args);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  while (len + 1 < n && fgets(err + len, (int)(n - len), p))
    len = strlen(err);
  err[len] = '\0';
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The message of an error reply (borrowed), "" when none. */
static const char *error_message(const json_t *r)
{
  const char *m = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
  return m ? m : "";
}

/* A calibrate request on fd (dtype, max_seconds <= 0: left out). */
static json_t *calibrate_req(int64_t id, const char *dtype, double max_s)
{
  json_t *r = json_pack("{ss sI ss}", "op", "calibrate", "id", (json_int_t)id,
                        "dtype", dtype);
  if (max_s > 0)
    json_object_set_new(r, "max_seconds", json_real(max_s));
  return r;
}

/* Checks a calibrate reply: formats fitted, each with its fit, and the
 * time it reports.  How long it took is not asserted: the bound governs the
 * timing, and a loaded machine stretches the fits after it. */
static void check_calibration(const json_t *r, const char *dtype, double max_s)
{
  const json_t *formats = json_object_get(r, "formats");
  const json_t *fits = json_object_get(r, "fits");
  size_t i;

  ck_assert_msg(json_is_true(json_object_get(r, "ok")) ||
                    !json_object_get(r, "ok"), "calibrate failed: %s",
                json_string_value(json_object_get(json_object_get(r, "error"),
                                                  "message")));
  ck_assert_str_eq(json_string_value(json_object_get(r, "dtype")), dtype);
  ck_assert_str_eq(json_string_value(json_object_get(r, "backend")), "cpu");
  ck_assert_uint_ge(json_array_size(formats), 1);
  ck_assert_uint_eq(json_array_size(formats), json_object_size(fits));
  for (i = 0; i < json_array_size(formats); i++) {
    const json_t *f = json_object_get(fits, json_string_value(json_array_get(formats, i)));
    ck_assert_ptr_nonnull(f);
    ck_assert(json_integer_value(json_object_get(f, "npoints")) >= 2);
    ck_assert(isfinite(json_number_value(json_object_get(f, "err_mean"))));
  }
  ck_assert(json_number_value(json_object_get(r, "seconds")) > 0);
  if (max_s > 0)
    ck_assert(json_number_value(json_object_get(r, "max_seconds")) == max_s);
  ck_assert_int_le(json_integer_value(json_object_get(r, "points")),
                   json_integer_value(json_object_get(r, "planned_points")));
  ck_assert_int_ge(json_integer_value(json_object_get(r, "timed")), 4);
}

static void count_progress(const struct spmv_progress *p, void *arg)
{
  int *n = arg;
  ck_assert_str_eq(p->stage, "calibration");
  ck_assert(p->total > 0 && p->done <= p->total);
  (*n)++;
}

/* The tests of a worker slowed on cue need the fault-injection build. */
#ifdef SPMVD_FAULT_INJECTION

/* Restarts the daemon with fault (SPMVD_FAULT), its configuration kept. */
static void restart_with_fault(const char *fault)
{
  itest_daemon_stop(&itest_d, SIGTERM);
  setenv("SPMVD_FAULT", fault, 1);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  unsetenv("SPMVD_FAULT");
}

/* A calibration holds the device worker for seconds: another client's
 * products are served between its points, answered (and right) before it
 * ends. */
START_TEST(products_during_calibration)
{
  struct spmv_csr *A = itest_matrix("west0479.mtx");
  int fd, fd2, events = 0;
  int64_t h;
  json_t *r;

  /* The cpu backend calibrates in a tenth of a second: points of 20 ms
   * make it last about as long as its bound. */
  restart_with_fault("slow-step:20");
  fd = itest_open(&itest_d);
  fd2 = itest_open(&itest_d);
  r = itest_load(fd2, 1, A, 0, "trial");
  h = json_integer_value(json_object_get(r, "handle"));
  json_decref(r);
  ck_assert_int_eq(itest_send(fd, calibrate_req(2, "f64", 4), NULL, 0), 0);
  usleep(300 * 1000);
  for (int k = 0; k < 3; k++)
    itest_multiply_ok(fd2, h, A, 0, 20 + k);
  /* The products were answered while the calibration still ran. */
  r = itest_recv_ready(fd, &events);
  ck_assert_msg(r == NULL, "the calibration ended before the products were answered: "
                "they waited for it");
  /* A load waits for the calibration's end, then tunes as usual. */
  r = itest_load(fd2, 3, A, 1, "trial");
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s", error_message(r));
  itest_multiply_ok(fd2, json_integer_value(json_object_get(r, "handle")),
                                 A, 1, 30);
  json_decref(r);
  r = itest_recv_reply(fd, NULL, NULL, &events);
  ck_assert_ptr_nonnull(r);
  check_calibration(r, "f64", 4);
  json_decref(r);
  close(fd);
  close(fd2);
  spmv_csr_free(A);
}
END_TEST

/* A tune holds the worker for seconds: another matrix's products are
 * served between its candidates, answered before the load that tunes ends;
 * the tuned matrix then multiplies right. */
START_TEST(products_during_tuning)
{
  struct spmv_csr *A = itest_matrix("west0479.mtx");
  struct spmv_csr *B = itest_matrix("bcsstk13.mtx");
  uint64_t len;
  void *payload;
  int fd, fd2;
  int64_t h;
  json_t *r, *req;

  /* Candidates of 100 ms: exhaustive on the cpu backend lasts seconds. */
  restart_with_fault("slow-step:100");
  fd = itest_open(&itest_d);
  fd2 = itest_open(&itest_d);
  r = itest_load(fd2, 1, A, 0, "trial");
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s", error_message(r));
  h = json_integer_value(json_object_get(r, "handle"));
  json_decref(r);

  payload = itest_csr_payload(B, 0, 0, &len);
  req = json_pack("{ss sI ss sI sI sI ss ss}", "op", "load", "id", (json_int_t)3,
                  "dtype", "f64", "rows", (json_int_t)B->rows, "cols",
                  (json_int_t)B->cols, "nnz", (json_int_t)B->nnz, "index", "i32",
                  "strategy", "exhaustive");
  ck_assert_int_eq(itest_send(fd, req, payload, len), 0);
  free(payload);
  usleep(300 * 1000);
  for (int k = 0; k < 3; k++)
    itest_multiply_ok(fd2, h, A, 0, 40 + k);
  /* The products were answered while the tune still ran. */
  r = itest_recv_ready(fd, NULL);
  ck_assert_msg(r == NULL, "the load (an exhaustive tune) ended before the products "
                "were answered: they waited for it");
  r = itest_recv_reply(fd, NULL, NULL, NULL);
  ck_assert_ptr_nonnull(r);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s", error_message(r));
  itest_multiply_ok(fd, json_integer_value(json_object_get(r, "handle")),
                                 B, 0, 50);
  json_decref(r);
  close(fd);
  close(fd2);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST
#endif /* SPMVD_FAULT_INJECTION */

/* Uncalibrated, predict is refused; calibrate (raw, library, spmvctl with a
 * bounded time) stores fits; then predict names the formats and the
 * predict strategy tunes. */
START_TEST(calibrate_and_predict)
{
  struct spmv_csr *A = itest_matrix("west0479.mtx");
  char args[1200], err[2048];
  int fd = itest_open(&itest_d), events = 0;
  json_t *r, *j;

  /* Not calibrated yet: predict and the predict strategy say so; the
   * model strategy needs a GPU. */
  snprintf(args, sizeof args, "predict '%s'", mpath("west0479.mtx"));
  ck_assert_int_eq(spmvctl_fails(args, err, sizeof err), 4);
  ck_assert_msg(strstr(err, "has no f64 calibration for") &&
                    strstr(err, "run `spmvctl calibrate`"), "%s", err);
  r = itest_load(fd, 1, A, 0, "predict");
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  ck_assert_ptr_nonnull(strstr(error_message(r), "not calibrated"));
  json_decref(r);
  r = itest_load(fd, 2, A, 0, "model");
  ck_assert_str_eq(itest_error_code(r), "EUNSUPPORTED");
  ck_assert_ptr_nonnull(strstr(error_message(r), "needs a GPU"));
  json_decref(r);

  /* Bad requests. */
  j = calibrate_req(4, "f64", 0);
  json_object_set_new(j, "max_seconds", json_real(-1));
  r = itest_call(fd, j, NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  json_decref(r);
  r = itest_call(fd, calibrate_req(5, "f16", 1), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  json_decref(r);

  /* Raw frames, the cpu backend's default bound (10 s): progress events,
   * then the reply (both schema-checked). */
  ck_assert_int_eq(itest_send(fd, calibrate_req(6, "f64", 0), NULL, 0), 0);
  r = itest_recv_reply(fd, NULL, NULL, &events);
  ck_assert_ptr_nonnull(r);
  check_calibration(r, "f64", 10);
  ck_assert(json_number_value(json_object_get(r, "max_seconds")) == 10);
  ck_assert_int_ge(events, 1);
  json_decref(r);

  /* One at a time: of two sent together, whichever arrives second is
   * EBUSY (unless the first has already ended). */
  int busy = 0, fd2 = itest_open(&itest_d);
  for (int k = 0; k < 10 && !busy; k++) {
    json_t *two[2];
    ck_assert_int_eq(itest_send(fd, calibrate_req(10 + k, "f64", 3), NULL, 0), 0);
    two[1] = itest_call(fd2, calibrate_req(100 + k, "f64", 3), NULL, 0, NULL, NULL);
    two[0] = itest_recv_reply(fd, NULL, NULL, NULL);
    for (int w = 0; w < 2; w++) {
      ck_assert_ptr_nonnull(two[w]);
      if (strcmp(itest_error_code(two[w]), "EBUSY") == 0) {
        ck_assert_ptr_nonnull(strstr(error_message(two[w]), "already running"));
        ck_assert_str_eq(itest_error_code(two[1 - w]), "");
        busy = 1;
      } else {
        check_calibration(two[w], "f64", 3);
      }
    }
    json_decref(two[0]);
    json_decref(two[1]);
  }
  ck_assert_msg(busy, "a second calibration was never refused");
  close(fd2);

  /* The library, f32, with progress. */
  struct spmv_client *c = NULL;
  char *text = NULL;
  int progress = 0;
  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  ck_assert_msg(spmv_calibrate(c, SPMV_F32, 2.0, count_progress, &progress,
                               &text) == 0, "%s", spmv_client_errmsg(c));
  ck_assert_int_ge(progress, 1);
  j = json_loads(text, 0, NULL);
  check_calibration(j, "f32", 2.0);
  json_decref(j);
  free(text);
  spmv_disconnect(c);

  /* spmvctl with a tiny bound: trimmed and on time, or too short to fit. */
  int st = spmvctl_fails("calibrate --max-seconds 0.05", err, sizeof err);
  ck_assert_msg(st == 0 || (st == 1 && strstr(err, "too short")), "%d %s", st, err);
  j = spmvctl_json("calibrate --max-seconds 1.5", 0);
  check_calibration(j, "f64", 1.5);
  json_t *formats = json_incref(json_object_get(j, "formats"));
  json_decref(j);

  /* predict: the calibrated formats, fastest first, the best first. */
  snprintf(args, sizeof args, "predict '%s'", mpath("west0479.mtx"));
  j = spmvctl_json(args, 0);
  json_t *preds = json_object_get(j, "predictions");
  ck_assert_uint_ge(json_array_size(preds), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "nnz")), A->nnz);
  for (size_t i = 0; i < json_array_size(preds); i++) {
    const json_t *p = json_array_get(preds, i);
    const char *fmt = json_string_value(json_object_get(p, "format"));
    int known = 0;
    for (size_t k = 0; k < json_array_size(formats); k++)
      known |= strcmp(fmt, json_string_value(json_array_get(formats, k))) == 0;
    ck_assert_msg(known, "predict names %s, not calibrated", fmt);
    ck_assert(json_number_value(json_object_get(p, "time_us")) > 0);
    /* The work model where the calibration reached its points, else the
     * paper's form; the paper's own prediction always beside it. */
    const char *model = json_string_value(json_object_get(p, "model"));
    ck_assert_msg(model && (!strcmp(model, "work") || !strcmp(model, "paper")),
                  "model %s", model ? model : "(none)");
    ck_assert(json_number_value(json_object_get(p, "paper_us")) > 0);
    if (!strcmp(model, "paper"))
      ck_assert(json_number_value(json_object_get(p, "paper_us")) ==
                json_number_value(json_object_get(p, "time_us")));
    if (i > 0)
      ck_assert(json_number_value(json_object_get(json_array_get(preds, i - 1), "time_us")) <=
                json_number_value(json_object_get(p, "time_us")));
  }
  ck_assert(json_equal(json_object_get(j, "best"), json_array_get(preds, 0)));
  json_decref(j);
  json_decref(formats);

  /* The predict strategy now tunes, through the wire and spmvctl. */
  r = itest_load(fd, 30, A, 0, "predict");
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s", error_message(r));
  ck_assert_str_eq(json_string_value(json_object_get(r, "strategy")), "predict");
  json_decref(r);
  snprintf(args, sizeof args, "tune --force --strategy predict '%s'",
           mpath("west0479.mtx"));
  j = spmvctl_json(args, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "strategy")), "predict");
  ck_assert_str_eq(json_string_value(json_object_get(j, "source")), "tuned");
  json_decref(j);

  /* predict --measure (after the tunes: it loads the file, as bench does,
   * so that its decision is cached): spmvd times each prediction's
   * configuration; the error is the prediction's distance from it, the
   * mean their mean. */
  snprintf(args, sizeof args, "predict --measure '%s'", mpath("west0479.mtx"));
  j = spmvctl_json(args, 0);
  preds = json_object_get(j, "predictions");
  ck_assert_uint_ge(json_array_size(preds), 1);
  double sum = 0;
  for (size_t i = 0; i < json_array_size(preds); i++) {
    const json_t *p = json_array_get(preds, i);
    double pu = json_number_value(json_object_get(p, "time_us"));
    double mu = json_number_value(json_object_get(p, "measured_us"));
    double e = json_number_value(json_object_get(p, "error"));
    ck_assert_msg(mu > 0, "%s not measured", json_string_value(json_object_get(p, "config")));
    ck_assert(fabs(e - fabs(pu - mu) / mu) <= 1e-12 * (1 + e));
    sum += e;
  }
  ck_assert(fabs(json_number_value(json_object_get(j, "mean_error")) -
                 sum / (double)json_array_size(preds)) <= 1e-12 * (1 + sum));
  json_decref(j);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* What spmv_calibrate_points handed over: the events, checked as they
 * come, and the points per configuration. */
struct points_seen {
  int events;
  int64_t next, total;        /* the next point expected, of total */
  json_t *per_config;         /* config text -> points */
};

static void collect_points(const char *text, void *arg)
{
  struct points_seen *ps = arg;
  json_t *ev = json_loads(text, 0, NULL), *cols, *row;
  size_t i;

  ck_assert_ptr_nonnull(ev);
  ck_assert_str_eq(json_string_value(json_object_get(ev, "event")), "points");
  ck_assert_str_eq(json_string_value(json_object_get(ev, "dtype")), "f32");
  ck_assert_int_eq(json_integer_value(json_object_get(ev, "first")), ps->next);
  ps->total = json_integer_value(json_object_get(ev, "total"));
  cols = json_object_get(ev, "columns");
  /* The shape, the 21 features, the configuration and its time: the
   * 30 columns after the type of calib_points' tables. */
  ck_assert_uint_eq(json_array_size(cols), 30);
  ck_assert_str_eq(json_string_value(json_array_get(cols, 0)), "matrix");
  ck_assert_str_eq(json_string_value(json_array_get(cols, 7)), "rows");
  ck_assert_str_eq(json_string_value(json_array_get(cols, 26)), "path_rounds");
  ck_assert_str_eq(json_string_value(json_array_get(cols, 27)), "w_block");
  ck_assert_str_eq(json_string_value(json_array_get(cols, 28)), "config");
  ck_assert_str_eq(json_string_value(json_array_get(cols, 29)), "us");
  ck_assert_uint_le(json_array_size(json_object_get(ev, "points")), 128);
  json_array_foreach(json_object_get(ev, "points"), i, row) {
    const char *cfg = json_string_value(json_array_get(row, 28));
    ck_assert_uint_eq(json_array_size(row), 30);
    ck_assert_ptr_nonnull(cfg);
    ck_assert(json_number_value(json_array_get(row, 29)) > 0);
    /* The heaviest block holds at most all of the warp work. */
    ck_assert(json_number_value(json_array_get(row, 27)) > 0);
    ck_assert(json_number_value(json_array_get(row, 27)) <=
              json_number_value(json_array_get(row, 10)));
    ck_assert(json_number_value(json_array_get(row, 7)) >= 1);
    json_object_set_new(ps->per_config, cfg, json_integer(
        json_integer_value(json_object_get(ps->per_config, cfg)) + 1));
    ps->next++;
  }
  ps->events++;
  json_decref(ev);
}

/* Each fitted format's points among those handed over: as many as its
 * work model was fitted on. */
static void check_points_per_format(const json_t *r, const json_t *per_config)
{
  const json_t *fits = json_object_get(r, "fits"), *f, *n;
  const char *name, *cfg;

  json_object_foreach((json_t *)fits, name, f) {
    int64_t want = json_integer_value(json_object_get(f, "work_npoints"));
    int64_t have = 0;
    json_object_foreach((json_t *)per_config, cfg, n)
      if (strncmp(cfg, name, strlen(name)) == 0 && cfg[strlen(name)] == ' ')
        have += json_integer_value(n);
    ck_assert_msg(have == want, "%s: %lld points handed over, its fit has %lld",
                  name, (long long)have, (long long)want);
  }
}

/* calibrate's points (for replaying its fits off the device): the raw
 * events (schema-checked), the library's callback, and spmvctl
 * calibrate --points, whose table calib_points --replay --fits fits to
 * the daemon's own work models; a bad value or path is refused by name. */
START_TEST(calibrate_points)
{
  char args[1200], err[2048], path[400], line[512];
  int fd = itest_open(&itest_d), events = 0;
  json_t *r, *j;

  /* Raw: "points" must be a boolean; with true, points events come
   * before the reply. */
  j = calibrate_req(1, "f64", 1);
  json_object_set_new(j, "points", json_string("yes"));
  r = itest_call(fd, j, NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  ck_assert_ptr_nonnull(strstr(error_message(r), "\"points\""));
  json_decref(r);
  j = calibrate_req(2, "f64", 1);
  json_object_set_new(j, "points", json_true());
  ck_assert_int_eq(itest_send(fd, j, NULL, 0), 0);
  r = itest_recv_reply(fd, NULL, NULL, &events);
  check_calibration(r, "f64", 1);
  /* At most 128 points an event, and progress besides. */
  ck_assert_int_ge(events, (int)((json_integer_value(json_object_get(r, "timed")) + 127) / 128) + 1);
  json_decref(r);
  close(fd);

  /* The library: every timed point once, in order, as many per format as
   * its fit used. */
  struct spmv_client *c = NULL;
  struct points_seen ps = { 0, 0, 0, json_object() };
  char *text = NULL;
  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  ck_assert_msg(spmv_calibrate_points(c, SPMV_F32, 1.0, NULL, collect_points,
                                      &ps, &text) == 0, "%s",
                spmv_client_errmsg(c));
  j = json_loads(text, 0, NULL);
  check_calibration(j, "f32", 1.0);
  ck_assert_int_ge(ps.events, 1);
  ck_assert_int_eq(ps.next, ps.total);
  ck_assert_int_eq(ps.total, json_integer_value(json_object_get(j, "timed")));
  check_points_per_format(j, ps.per_config);
  json_decref(j);
  json_decref(ps.per_config);
  free(text);
  spmv_disconnect(c);

  /* spmvctl: the table, then its replay gives each format's work model
   * the daemon fitted: its points and its error. */
  snprintf(path, sizeof path, "%s/points.tsv", itest_d.dir);
  snprintf(args, sizeof args, "calibrate --max-seconds 1 --points '%s'", path);
  j = spmvctl_json(args, 0);
  check_calibration(j, "f64", 1);
  const char *b = getenv("SPMV_TOP_BUILDDIR");
  char cmd[1600];
  snprintf(cmd, sizeof cmd, "%s/tests/bench/calib_points --replay '%s' --fits",
           b ? b : ".", path);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  int replayed = 0;
  while (fgets(line, sizeof line, p)) {
    char dt[8], cfg[128];
    int npts, nwork;
    double werr;
    if (line[0] == '#')
      continue;
    ck_assert_msg(sscanf(line, "%7[^\t]\t%127[^\t]\t%d\t%d\t%lf", dt, cfg,
                         &npts, &nwork, &werr) == 5, "%s", line);
    ck_assert_str_eq(dt, "f64");
    *strchr(cfg, ' ') = '\0';  /* the format's name */
    const json_t *fit = json_object_get(json_object_get(j, "fits"), cfg);
    ck_assert_msg(fit != NULL, "%s replayed, not fitted", cfg);
    ck_assert_int_eq(nwork, json_integer_value(json_object_get(fit, "work_npoints")));
    ck_assert_msg(fabs(werr - json_number_value(json_object_get(fit, "work_err"))) < 1e-6,
                  "%s: replayed work error %.9f, the daemon's %.9f", cfg, werr,
                  json_number_value(json_object_get(fit, "work_err")));
    replayed++;
  }
  ck_assert_int_eq(WEXITSTATUS(pclose(p)), 0);
  ck_assert_int_eq(replayed, (int)json_object_size(json_object_get(j, "fits")));
  json_decref(j);

  /* A table that cannot be written: refused before calibrating; and the
   * option is calibrate's only. */
  snprintf(args, sizeof args, "calibrate --points '%s/no/such/dir/p.tsv'",
           itest_d.dir);
  ck_assert_int_eq(spmvctl_fails(args, err, sizeof err), 1);
  ck_assert_msg(strstr(err, "cannot write") && strstr(err, "p.tsv"), "%s", err);
  ck_assert_int_eq(spmvctl_fails("status --points x", err, sizeof err), 2);
  ck_assert_msg(strstr(err, "--points does not apply to 'status'"), "%s", err);
}
END_TEST

#ifdef SPMVD_FAULT_INJECTION
/* A calibration asked for while the device's worker still starts waits
 * for it, as a load does, and runs under the backend's default bound (the
 * front end cannot know it before the worker says which backend it has). */
START_TEST(calibrate_while_worker_starts)
{
  int fd;
  json_t *r;

  restart_with_fault("slow-start:1500");
  fd = itest_open(&itest_d);
  r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 1), NULL, 0, NULL, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(r, "device")), "(starting)");
  json_decref(r);
  r = itest_call(fd, calibrate_req(2, "f64", 0), NULL, 0, NULL, NULL);
  ck_assert_ptr_nonnull(r);
  check_calibration(r, "f64", 10);
  ck_assert(json_number_value(json_object_get(r, "max_seconds")) == 10);
  json_decref(r);
  close(fd);
}
END_TEST
#endif /* SPMVD_FAULT_INJECTION */

/* Every strategy through spmvctl on the cpu backend; --force re-tunes a
 * cached decision, without --force the cache answers. */
START_TEST(strategies_and_force)
{
  static const char *const ok[] = {"auto", "trial", "exhaustive"};
  char args[1200], err[2048];
  json_t *j;

  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    snprintf(args, sizeof args, "tune --force --strategy %s '%s'",
             ok[i], mpath("karate.mtx"));
    j = spmvctl_json(args, 0);
    ck_assert_str_eq(json_string_value(json_object_get(j, "strategy")), ok[i]);
    ck_assert_str_eq(json_string_value(json_object_get(j, "source")), "tuned");
    json_decref(j);
  }
  snprintf(args, sizeof args, "tune '%s'", mpath("karate.mtx"));
  j = spmvctl_json(args, 0);
  ck_assert_str_eq(json_string_value(json_object_get(j, "source")), "cache");
  ck_assert_str_eq(json_string_value(json_object_get(j, "strategy")), "exhaustive");
  json_decref(j);
  snprintf(args, sizeof args, "tune --force --strategy model '%s'",
           mpath("karate.mtx"));
  ck_assert_int_eq(spmvctl_fails(args, err, sizeof err), 1);
  ck_assert_msg(strstr(err, "needs a GPU") != NULL, "%s", err);
  snprintf(args, sizeof args, "tune --force --strategy predict '%s'",
           mpath("karate.mtx"));
  ck_assert_int_eq(spmvctl_fails(args, err, sizeof err), 1);
  ck_assert_msg(strstr(err, "not calibrated") != NULL, "%s", err);
}
END_TEST

static Suite *tools_suite(void)
{
  Suite *s = suite_create("tools");
  TCase *tc = tcase_create("tools");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, client_library);
  tcase_add_test(tc, client_products_in_place);
  tcase_add_test(tc, spmvctl_json_outputs);
  tcase_add_test(tc, calibrate_and_predict);
  tcase_add_test(tc, calibrate_points);
#ifdef SPMVD_FAULT_INJECTION
  tcase_add_test(tc, calibrate_while_worker_starts);
  tcase_add_test(tc, products_during_calibration);
  tcase_add_test(tc, products_during_tuning);
#endif
  tcase_add_test(tc, strategies_and_force);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(tools_suite());
}
