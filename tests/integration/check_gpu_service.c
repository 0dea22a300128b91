/* check_gpu_service.c: the service end to end on the GPU: load, tune,
 * multiply, restart, cache hit (exit 77 where no GPU is present). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "gpu_common.h"
#include "itest.h"
#include "spmv_gen.h"

/* The matrices of the suite: real ones of each kind, and two generated
 * ones large enough that the GPU kernels, not the launch, dominate. */
static const char *const real[] = {
  "bcsstk16.mtx", "raefsky1.mtx.gz", "rajat01_pattern.mtx",
  "ca-HepPh_snap_rawids.mtx", "Trefethen_500.mtx", "lp_afiro.mtx",
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
  suite_add_tcase(s, tc);
  return itest_run(s);
}
