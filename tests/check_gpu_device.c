/* check_gpu_device.c: the device machinery the GPU products run on: the
 * pool that keeps freed memory, graphs captured and replayed, and the timer
 * (split from check_gpu_formats.c, which checks every kernel and
 * configuration against the CPU references).  Without a CUDA device it
 * exits 77 (skipped); SPMV_GPU_QUICK=1 keeps one block size of the
 * configurations that test_graph runs (for compute-sanitizer runs). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"
#include "spmv_csr.h"
#include "spmv_formats.h"
#include "spmv_gen.h"
#include "spmv_kernels.h"
#include "gpu_formats_common.h"

/* check_yt() asserted: every row within tolerance; what names the
 * product. */
static void assert_yt(const struct spmv_csr *A, struct inputs *in, double alpha,
                      double beta, const char *what)
{
  double tol = 0;
  int64_t bad = check_yt(A, in, alpha, beta, &tol);

  ck_assert_msg(bad < 0, "%s: row %lld got %.17g, want %.17g (tol %.3g)", what,
                (long long)bad, bad < 0 ? 0.0 : in->got[bad], bad < 0 ? 0.0 : in->ref[bad], tol);
}

/* Kept, freed device memory stays in the pool (the driver would scrub it
 * while the next candidates are timed), is counted as free for
 * admission, is reused by the next allocation, and goes back to the
 * driver on trim. */
START_TEST(test_pool)
{
  struct spmv_error err = {0};
  size_t bytes = (size_t)64 << 20, slack = bytes / 4, f0, f1, f2, f3, f4, t;
  void *p = NULL;
  int dev = 0, pools = 0;

  ck_assert_int_eq(cudaGetDevice(&dev), cudaSuccess);
  ck_assert_int_eq(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev),
                   cudaSuccess);
  if (!pools) {
    ck_assert_uint_eq(spmv_dev_pool_idle(), 0);
    return;  /* plain cudaMalloc: nothing kept */
  }
  ck_assert_uint_ge(spmv_dev_pool_idle(), POISON_BYTES);  /* gpu_setup's */
  ck_assert_uint_ge(spmv_dev_pool_trim(), POISON_BYTES);
  ck_assert_uint_eq(spmv_dev_pool_idle(), 0);
  ck_assert_int_eq(cudaMemGetInfo(&f0, &t), cudaSuccess);
  ck_assert_msg(spmv_dev_alloc(&p, bytes, "a test", &err) == 0, "%s", err.msg);
  ck_assert_int_eq(cudaMemset(p, 1, bytes), cudaSuccess);
  ck_assert_int_eq(cudaMemGetInfo(&f1, &t), cudaSuccess);
  ck_assert_uint_le(f1 + bytes, f0 + slack);           /* taken from the driver */
  spmv_dev_free(p);
  ck_assert_uint_ge(spmv_dev_pool_idle(), bytes);
  ck_assert_int_eq(cudaMemGetInfo(&f2, &t), cudaSuccess);
  ck_assert_uint_le(f2, f1 + slack);                   /* kept, not given back */
  ck_assert_int_eq(spmv_dev_mem_info(&f3, &t, &err), 0);
  ck_assert_uint_ge(f3 + slack, f2 + bytes);           /* but counted as free */
  ck_assert_msg(spmv_dev_alloc(&p, bytes, "a test", &err) == 0, "%s", err.msg);
  ck_assert_int_eq(cudaMemGetInfo(&f4, &t), cudaSuccess);
  ck_assert_uint_ge(f4 + slack, f2);                   /* reused from the pool */
  spmv_dev_free(p);
  ck_assert_uint_ge(spmv_dev_pool_trim(), bytes);
  ck_assert_uint_eq(spmv_dev_pool_idle(), 0);
  ck_assert_int_eq(cudaMemGetInfo(&f4, &t), cudaSuccess);
  ck_assert_uint_ge(f4 + slack, f0);                   /* given back */
  ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
}
END_TEST

/* One graph product of d through g into in->dy, compared with the
 * reference; returns spmv_dev_graph_captures(g) after it. */
static long graph_product(const struct spmv_csr *A, struct inputs *in,
                          struct spmv_dev_graph *g, const struct spmv_dev_matrix *d,
                          void *dy, double alpha, double beta, const char *what)
{
  run_once(A, in, g, d, dy, alpha, beta);
  assert_yt(A, in, alpha, beta, what);
  return spmv_dev_graph_captures(g);
}

/* A product is captured when it comes twice in a row and replayed while
 * it stays; another alpha, beta or y runs directly once, then captures;
 * two that alternate never capture; each product is right (the
 * gallery's odd products check every format and matrix as graphs; this
 * checks the bookkeeping). */
START_TEST(test_graph)
{
  struct spmv_limits lim = {(size_t)1 << 30, 4096, 40.0};
  struct spmv_error err = {0};
  struct spmv_csr *A = spmv_gen_from_text("pareto rows=3000 alpha=0.8", 5, &err);
  ck_assert_msg(A != NULL, "%s", err.msg);
  for (int t = 0; t < 2; t++) {
    enum spmv_dtype dt = t == 0 ? SPMV_F64 : SPMV_F32;
    struct inputs in;
    void *dy2 = NULL;

    inputs_init(&in, A, dt);
    ck_assert_int_eq(cudaMalloc(&dy2, (size_t)A->rows * in.es), cudaSuccess);
    for (int c = 0; c < nconfigs; c++) {
      struct spmv_layout *L = NULL;
      struct spmv_dev_matrix *d = NULL;
      struct spmv_dev_graph *g = spmv_dev_graph_new();
      char w[160], cfgtxt[96];
      long n;

      spmv_config_format(&configs[c], cfgtxt, sizeof cfgtxt);
      snprintf(w, sizeof w, "%s %s", cfgtxt, spmv_dtype_name(dt));
      if (spmv_layout_new(A, dt, &configs[c], &lim, &L, &err) == SPMV_ETOOBIG) {
        spmv_dev_graph_free(g);
        continue;
      }
      ck_assert_msg(L != NULL && spmv_dev_matrix_new(L, handle, &d, &err) == 0, "%s: %s", w,
                    err.msg);
      /* want[k]: captures after product k of seq. */
      static const struct { double alpha, beta; int y2; long want; } seq[] = {
        {1.0, 0.0, 0, 0},   /* seen once: directly */
        {1.0, 0.0, 0, 1},   /* twice: captured */
        {1.0, 0.0, 0, 1},   /* replayed */
        {-1.5, 0.75, 0, 1}, /* new scalars: directly */
        {1.0, 0.0, 0, 1},   /* the graph's own: replayed */
        {-1.5, 0.75, 0, 1}, /* alternating: directly */
        {1.0, 0.0, 0, 1},
        {-1.5, 0.75, 0, 1},
        {-1.5, 0.75, 0, 2}, /* twice in a row: captured */
        {-1.5, 0.75, 1, 2}, /* another y: directly */
        {-1.5, 0.75, 1, 3}, /* then captured */
      };
      for (size_t k = 0; k < sizeof seq / sizeof seq[0]; k++) {
        n = graph_product(A, &in, g, d, seq[k].y2 ? dy2 : in.dy, seq[k].alpha, seq[k].beta, w);
        ck_assert_msg(n == seq[k].want, "%s: product %zu: %ld captures, want %ld", w, k, n,
                      seq[k].want);
      }
      ck_assert_msg(!spmv_dev_graph_plain(g), "%s: launched directly", w);
      spmv_dev_graph_free(g);
      spmv_dev_matrix_free(d);
      spmv_layout_free(L);
    }
    cudaFree(dy2);
    inputs_fini(&in);
  }
  spmv_csr_free(A);
}
END_TEST

/* The product in in->dy after timed runs of y = A*x against the double
 * reference; what names it. */
static void check_timed_y(const struct spmv_csr *A, struct inputs *in, const char *what)
{
  ck_assert_int_eq(cudaMemcpy(in->yt, in->dy, (size_t)A->rows * in->es,
                              cudaMemcpyDeviceToHost), cudaSuccess);
  assert_yt(A, in, 1.0, 0.0, what);
}

static void check_times(const double *us, int n, const char *what)
{
  for (int k = 0; k < n; k++)
    ck_assert_msg(isfinite(us[k]) && us[k] > 0 && us[k] < 1e6, "%s: run %d took %g us",
                  what, k, us[k]);
}

/* spmv_dev_time and spmv_dev_time_turns: every run timed, the products
 * right (y is poisoned first), a product of several kernels captured
 * once, bad counts refused with SPMV_EINVAL. */
START_TEST(test_timer)
{
  struct spmv_limits lim = {(size_t)1 << 30, 4096, 40.0};
  struct spmv_error err = {0};
  struct spmv_dev_timer *tm = NULL;
  const char *gens[2] = {"pareto rows=3000 alpha=0.8", "random rows=500 cols=700 k=5"};
  const char *cfgs[2] = {"csr-vector bs=256 tpr=8", "coo bs=256"};
  struct spmv_csr *M[2];

  ck_assert_msg(spmv_dev_timer_new(&tm, &err) == 0, "%s", err.msg);
  for (int i = 0; i < 2; i++) {
    M[i] = spmv_gen_from_text(gens[i], 7 + i, &err);
    ck_assert_msg(M[i] != NULL, "%s", err.msg);
  }
  for (int t = 0; t < 2; t++) {
    enum spmv_dtype dt = t == 0 ? SPMV_F64 : SPMV_F32;
    struct inputs in[2];
    struct spmv_dev_matrix *d[2];
    struct spmv_dev_graph *g[2];
    double us[2][8];
    char w[2][128];

    for (int i = 0; i < 2; i++) {
      struct spmv_config cfg;
      struct spmv_layout *L = NULL;
      snprintf(w[i], sizeof w[i], "%s %s", cfgs[i], spmv_dtype_name(dt));
      inputs_init(&in[i], M[i], dt);
      ck_assert_msg(spmv_config_parse(cfgs[i], &cfg, &err) == 0 &&
                    spmv_layout_new(M[i], dt, &cfg, &lim, &L, &err) == 0 &&
                    spmv_dev_matrix_new(L, handle, &d[i], &err) == 0, "%s: %s", w[i], err.msg);
      spmv_layout_free(L);
      ck_assert((g[i] = spmv_dev_graph_new()) != NULL);
      ck_assert_int_eq(cudaMemset(in[i].dy, 0xff, (size_t)M[i]->rows * in[i].es), cudaSuccess);
    }
    ck_assert_msg(spmv_dev_time(tm, g[0], d[0], in[0].dx, in[0].dy, stream, 1, 8, us[0],
                                &err) == 0, "%s: %s", w[0], err.msg);
    check_times(us[0], 8, w[0]);
    check_timed_y(M[0], &in[0], w[0]);

    ck_assert_int_eq(cudaMemset(in[0].dy, 0xff, (size_t)M[0]->rows * in[0].es), cudaSuccess);
    struct spmv_dev_timed p[2] = {{g[0], d[0], in[0].dx, in[0].dy, us[0]},
                                  {g[1], d[1], in[1].dx, in[1].dy, us[1]}};
    ck_assert_msg(spmv_dev_time_turns(tm, p, 2, stream, 2, 8, &err) == 0, "turns: %s",
                  err.msg);
    for (int i = 0; i < 2; i++) {
      check_times(us[i], 8, w[i]);
      check_timed_y(M[i], &in[i], w[i]);
      ck_assert_msg(spmv_dev_graph_captures(g[i]) == 1 && !spmv_dev_graph_plain(g[i]),
                    "%s: %ld captures", w[i], spmv_dev_graph_captures(g[i]));
    }

    ck_assert_int_eq(spmv_dev_time_turns(tm, p, 0, stream, 1, 2, &err), SPMV_EINVAL);
    ck_assert_int_eq(spmv_dev_time_turns(tm, p, SPMV_DEV_TIME_TURNS_MAX + 1, stream, 1, 2,
                                         &err), SPMV_EINVAL);
    ck_assert_int_eq(spmv_dev_time_turns(tm, p, 2, stream, 1, SPMV_DEV_TIME_MAX_REPS / 2 + 1,
                                         &err), SPMV_EINVAL);
    ck_assert_int_eq(spmv_dev_time_turns(tm, p, 2, stream, -1, 2, &err), SPMV_EINVAL);
    ck_assert_int_eq(spmv_dev_time(tm, g[0], d[0], in[0].dx, in[0].dy, stream, 0, 0, us[0],
                                   &err), SPMV_EINVAL);
    ck_assert_msg(strstr(err.msg, "reps") != NULL, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
      spmv_dev_graph_free(g[i]);
      spmv_dev_matrix_free(d[i]);
      inputs_fini(&in[i]);
    }
  }
  for (int i = 0; i < 2; i++)
    spmv_csr_free(M[i]);
  spmv_dev_timer_free(tm);
}
END_TEST

/* The tests of the gallery case that are not products of the gallery: the
 * case keeps its name, so that CK_RUN_CASE=gallery runs the same tests in
 * the two programs as it did in one. */
static Suite *gpu_device_suite(void)
{
  Suite *s = suite_create("gpu_device");
  TCase *tc = tcase_create("gallery");
  tcase_add_checked_fixture(tc, gpu_setup, gpu_teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_graph);
  tcase_add_test(tc, test_timer);
  tcase_add_test(tc, test_pool);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  int failed;
  if (!gpu_present()) {
    fprintf(stderr, "no CUDA device: skipped\n");
    return 77;
  }
  nconfigs = gpu_configs(configs, MAX_CONFIGS, getenv("SPMV_GPU_QUICK") ? 4u : 0u);
  SRunner *sr = srunner_create(gpu_device_suite());
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
