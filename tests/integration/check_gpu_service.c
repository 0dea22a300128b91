/* check_gpu_service.c: the service end to end on the GPU: load, tune,
 * multiply, restart, cache hit; calibrate, then the predict and model
 * strategies (exit 77 where no GPU is present). */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "gpu_common.h"
#include "itest.h"
#include "spmv_gen.h"

/* The matrices of the suite: real ones of each kind, and two generated
 * ones large enough that the GPU kernels, not the launch, dominate. */
static const char *const real[] = {
  "bcsstk16.mtx", "bcsstk13.mtx", "rajat01_pattern.mtx",
  "email-Eu-core.mtx", "Trefethen_500.mtx", "lp_afiro.mtx",
  "illc1850.mtx", NULL
};
#define NGEN 2
#define NMAT (sizeof real / sizeof real[0] - 1 + NGEN)

static struct spmv_csr *matrix(size_t i)
{
  struct spmv_error err;
  struct spmv_csr *A;

  if (i < NMAT - NGEN)
    return itest_matrix(real[i]);
  if (i == NMAT - NGEN)
    A = spmv_gen_stencil2d(1000, 1000, 5, &err);
  else
    A = spmv_gen_dc1like(200000, 6.0, 2, (const int64_t[]){40000, 120000}, 7, &err);
  ck_assert_msg(A != NULL, "generator: %s", err.msg);
  return A;
}

static const char *str(const json_t *r, const char *key)
{
  const char *s = json_string_value(json_object_get(r, key));
  return s ? s : "";
}

/* Loads, tunes on the GPU and multiplies; restarts; the same matrices come
 * from the cache with the same decisions, and still multiply right. */
START_TEST(tune_multiply_restart_cache)
{
  char cfg[NMAT][2][64];
  int fd = itest_open(&itest_d);
  json_t *r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 1),
                         NULL, 0, NULL, NULL);

  ck_assert_str_eq(str(r, "backend"), "cuda");
  json_decref(r);
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < NMAT; i++) {
      struct spmv_csr *A = matrix(i);
      for (int f32 = 0; f32 <= 1; f32++) {
        char code[32] = "";
        r = itest_load(fd, 10 + (int64_t)i, A, f32, "auto");
        int64_t h = itest_handle(r);
        const char *text = str(json_object_get(r, "config"), "text");
        if (pass == 0) {
          ck_assert_str_eq(str(r, "source"), "tuned");
          snprintf(cfg[i][f32], sizeof cfg[i][f32], "%s", text);
        } else {
          ck_assert_msg(strcmp(str(r, "source"), "cache") == 0,
                        "matrix %zu %s: source %s after restart", i,
                        f32 ? "f32" : "f64", str(r, "source"));
          ck_assert_str_eq(text, cfg[i][f32]);
        }
        double q = itest_multiply_check(fd, h, A, f32, 17 + (unsigned)i, code);
        ck_assert_msg(q >= 0 && q <= 1.0, "matrix %zu %s (%s): residual %.3g of its bound (%s)",
                      i, f32 ? "f32" : "f64", text, q, code);
        if (pass == 0 && i == NMAT - 1 && f32) {
          /* The candidates' memory, which the worker kept while it raced
           * them, goes back to the driver a second after the last tune
           * even while products keep coming. */
          double t0 = itest_now_s();
          do {
            q = itest_multiply_check(fd, h, A, f32, 18, code);
            ck_assert_msg(q >= 0 && q <= 1.0, "residual %.3g (%s)", q, code);
          } while (itest_now_s() - t0 < 1.5);
          ck_assert_msg(itest_log_wait(&itest_d, "bytes of device memory back", 200),
                        "the worker kept its pool's memory while products came (log %s)",
                        itest_d.log);
        }
        json_decref(r);
      }
      spmv_csr_free(A);
    }
    if (pass == 0) {
      close(fd);
      ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
      ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
      fd = itest_open(&itest_d);
    }
  }
  close(fd);
}
END_TEST

/* A format's fit in a calibrate reply r (borrowed), NULL when absent. */
static const json_t *fit_of(const json_t *r, const char *format)
{
  return json_object_get(json_object_get(r, "fits"), format);
}

/*
 * `spmvctl calibrate`'s path on the GPU, within a short bound: the cuda
 * worker times the plan, fits every GPU format (cusparse included) with
 * its work model, sends the points it fitted, and stores the fits; then
 * the predict strategy (which reads them) and the model strategy (which
 * needs the GPU's parameters) tune real matrices, and their picks
 * multiply right.
 */
START_TEST(calibrate_predict_model)
{
  static const char *const gpu_formats[] = { "csr-vector", "ellr-t", "cusparse",
                                             "csr-stream", NULL };
  const double bound = 20;
  int fd = itest_open(&itest_d), events = 0;
  json_t *r;

  /* With its points (schema-checked events, the GPU's feature values in
   * each under the worker's message bound). */
  ck_assert_int_eq(itest_send(fd, json_pack("{ss sI ss sf sb}", "op", "calibrate",
                                            "id", (json_int_t)1, "dtype", "f32",
                                            "max_seconds", bound, "points", 1),
                              NULL, 0), 0);
  r = itest_recv_reply(fd, NULL, NULL, &events);
  ck_assert_ptr_nonnull(r);
  ck_assert_msg(itest_error_code(r)[0] == '\0', "calibrate: %s",
                json_string_value(json_object_get(json_object_get(r, "error"), "message")));
  ck_assert_str_eq(str(r, "backend"), "cuda");
  ck_assert_str_eq(str(r, "dtype"), "f32");
  ck_assert_int_ge(events, 1);
  /* The plan trimmed to fit the bound (how long it took is not asserted:
   * the fits after the timing stretch with the machine's load). */
  ck_assert(json_number_value(json_object_get(r, "max_seconds")) == bound);
  ck_assert(json_is_true(json_object_get(r, "trimmed")));
  ck_assert_int_ge(json_integer_value(json_object_get(r, "timed")), 100);
  /* Progress, and the points in events of 128 at most. */
  ck_assert_int_ge(events, 1 + (int)((json_integer_value(json_object_get(r, "timed")) + 127) / 128));
  ck_assert_uint_ge(json_array_size(json_object_get(r, "formats")), 10);
  for (size_t i = 0; gpu_formats[i] != NULL; i++) {
    const json_t *f = fit_of(r, gpu_formats[i]);
    ck_assert_msg(f != NULL, "no fit for %s", gpu_formats[i]);
    ck_assert_int_ge(json_integer_value(json_object_get(f, "work_npoints")), 20);
    double e = json_number_value(json_object_get(f, "work_err"));
    ck_assert_msg(isfinite(e) && e < 0.5, "%s: work model error %.3f", gpu_formats[i], e);
  }
  json_decref(r);

  /* Three matrices each (a second load of the same matrix would come
   * from the cache with the first's decision). */
  for (size_t i = 0; i < 6; i++) {
    struct spmv_csr *A = matrix(i);
    const char *strategy = i < 3 ? "predict" : "model";
    char code[32] = "";

    r = itest_load(fd, 50 + (int64_t)i, A, 1, strategy);
    int64_t h = itest_handle(r);
    ck_assert_str_eq(str(r, "strategy"), strategy);
    ck_assert_str_eq(str(r, "source"), "tuned");
    double q = itest_multiply_check(fd, h, A, 1, 23 + (unsigned)i, code);
    ck_assert_msg(q >= 0 && q <= 1.0, "matrix %zu %s (%s): residual %.3g of its bound (%s)",
                  i, strategy, str(json_object_get(r, "config"), "text"), q, code);
    json_decref(r);
    spmv_csr_free(A);
  }
  close(fd);
}
END_TEST

/* A large matrix loaded through a write-sealed memfd is mapped read-only
 * in the worker: its host copy is still registered with the device
 * (cudaHostRegisterReadOnly) for the load, and it multiplies right. */
START_TEST(memfd_load_pinned)
{
  struct spmv_error err;
  struct spmv_csr *A = spmv_gen_stencil2d(1000, 1000, 5, &err);
  int s, fd;

  ck_assert_msg(A != NULL, "generator: %s", err.msg);
  itest_daemon_stop(&itest_d, SIGTERM);
  itest_daemon_config(&itest_d, "log_level = debug\n");
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  s = itest_open(&itest_d);
  for (int f32 = 0; f32 <= 1; f32++) {
    fd = itest_csr_memfd(A, "check-gpu-memfd", itest_csr_layout_size(A),
                         F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
    json_t *r = itest_call_fd(
        s, json_pack("{ss si ss sI sI sI sb}", "op", "load", "id", 1 + f32,
                     "dtype", f32 ? "f32" : "f64", "rows", (json_int_t)A->rows,
                     "cols", (json_int_t)A->cols, "nnz", (json_int_t)A->nnz,
                     "memfd", 1), fd, NULL, 0);
    close(fd);
    int64_t h = itest_handle(r);
    json_decref(r);
    double q = itest_multiply_check(s, h, A, f32, 5, NULL);
    ck_assert_msg(q >= 0 && q <= 1.0, "%s: residual %.3g of its bound",
                  f32 ? "f32" : "f64", q);
  }
  ck_assert_msg(itest_log_wait(&itest_d, "bytes) registered for its loads",
                               5000),
                "the read-only host copy was not registered with the device");
  close(s);
  spmv_csr_free(A);
}
END_TEST

int main(void)
{
  Suite *s;
  TCase *tc;

  if (!gpu_present())
    return 77;
  setenv("SPMV_ITEST_BACKEND", "cuda", 1);
  s = suite_create("gpu_service");
  tc = tcase_create("service");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, tune_multiply_restart_cache);
  tcase_add_test(tc, memfd_load_pinned);
  suite_add_tcase(s, tc);
  /* Its own case: a calibration bounded in seconds cannot fit under a
   * sanitizer's slowed kernels, so gpu-sanitize.sh leaves it out
   * (CK_EXCLUDE_TAGS=calibrate); its kernels are the ones the others run. */
  tc = tcase_create("calibrate");
  tcase_set_tags(tc, "calibrate");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, calibrate_predict_model);
  suite_add_tcase(s, tc);
  return itest_run(s);
}
