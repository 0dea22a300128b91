/* check_predict_calib.c: the calibration plan (its bounds, trimmed and mid
 * parts), the driver's time bound, a backend's timings, where a load
 * goes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict_test.h"
#include "spmvd_predict.h"

START_TEST(test_strips)
{
  struct spmvd_device_info h = device(132, 2048, 1);

  ck_assert_int_eq(spmvd_predict_strip(SPMV_FMT_CSR_SCALAR, &h), 132 * 2048);
  ck_assert_int_eq(spmvd_predict_strip(SPMV_FMT_ELL, &h), 132 * 2048);
  ck_assert_int_eq(spmvd_predict_strip(SPMV_FMT_CSR_VECTOR, &h), 132 * 128);
}
END_TEST

/* The default plan on an H100-like GPU stays within its bounds. */
START_TEST(test_plan_bounds)
{
  struct spmvd_device_info h = device(132, 2048, 1), cpu = device(132, 2048, 0);
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan;
  int64_t total = 0, nnz;
  size_t k;
  int m = -1, vec_p = 0, vec_i = 0, cus = 0, dists[2] = { 0, 0 };
  int below = 0, pmax = 0, work = 0, wdiag = 0, wlog = 0, wmat = -1;
  int64_t wtotal = 0, fem_max = 0, other_max = 0;
  double imax = 0;

  /* The plan before its mid part (test_plan_mid). */
  spmvd_calib_params_default(&prm);
  prm.mid_nnz = 0;
  ck_assert_int_eq(spmvd_calib_plan_new(&h, SPMV_F64, &prm, &plan, NULL), 0);
  for (k = 0; k < plan->n; k++) {
    const struct spmvd_calib_point *pt = &plan->pt[k];

    nnz = pt->rows * pt->p;
    ck_assert_int_le(nnz, prm.max_nnz_matrix);
    if (pt->matrix != m) {
      ck_assert_int_eq(pt->matrix, m + 1);
      m = pt->matrix;
      total += nnz;
    }
    if (pt->work) {
      /* The work part: after the paper's grid, every configuration on
       * each of its matrices, shapes beyond the paper's. */
      work++;
      ck_assert(pt->shape >= 0 && pt->shape < SPMVD_CALIB_SHAPES);
      if (pt->matrix != wmat) {
        wmat = pt->matrix;
        wtotal += nnz;
        ck_assert_int_eq(pt->cfg.format, SPMV_FMT_CSR_VECTOR);
        if (pt->place == SPMV_GEN_DIAGONAL && pt->dist == SPMV_GEN_NORMAL &&
            pt->cv == 0.25)
          fem_max = nnz > fem_max ? nnz : fem_max;
        else
          other_max = nnz > other_max ? nnz : other_max;
      }
      wdiag += pt->place == SPMV_GEN_DIAGONAL;
      wlog += pt->dist == SPMV_GEN_LOGNORMAL && pt->cv >= 3;
      continue;
    }
    ck_assert_int_eq(work, 0);
    ck_assert_int_eq(pt->shape, -1);
    ck_assert_int_eq(pt->place, SPMV_GEN_RANDOM);
    ck_assert_double_eq(pt->cv, prm.cv);
    if (pt->cfg.format == SPMV_FMT_CSR_VECTOR) {
      ck_assert_int_eq(pt->rows, llround(132 * 128 * pt->strips));
      vec_p += pt->strips == 1;
      vec_i += pt->p == 16;
    } else {
      ck_assert_int_eq(pt->rows, llround(132 * 2048 * pt->strips));
      /* Fractions of a strip, and P up to 1024 on them. */
      below += pt->strips < 1;
      pmax = pt->p > pmax ? pt->p : pmax;
      imax = pt->strips > imax ? pt->strips : imax;
    }
    ck_assert_int_eq(pt->i, (int)ceil(pt->strips));
    cus += pt->cfg.format == SPMV_FMT_CUSPARSE;
    dists[pt->dist == SPMV_GEN_UNIFORM]++;
  }
  ck_assert_int_eq(total, plan->total_nnz);
  ck_assert_int_le(total - wtotal, prm.max_nnz_total);
  /* The budget, and half as much again for the FEM shape's larger
   * matrices (up to 8.6M nonzeros here, past every other shape's). */
  ck_assert_int_le(wtotal, prm.work_nnz + prm.work_nnz / 2);
  ck_assert_int_le(wtotal, (prm.max_nnz_total / 2) * 3 / 2);
  ck_assert_int_gt(fem_max, other_max);
  ck_assert_int_gt(wdiag, 0);
  ck_assert_int_gt(wlog, 0);
  ck_assert_int_eq(work % 12, 0);  /* csr-vector + 11 thread configurations */
  ck_assert_int_eq(m + 1, plan->nmatrices);
  ck_assert_int_ge(vec_p, 10);
  ck_assert_int_ge(vec_i, 10);
  ck_assert_int_gt(below, 0);
  ck_assert_int_eq(pmax, 1024);
  ck_assert_double_ge(imax, 8);
  ck_assert_int_gt(cus, 0);
  ck_assert_int_eq(dists[0], dists[1]);
  fprintf(stderr, "H100 plan: %d matrices, %zu timings (%d of the work "
          "part), %lld nnz\n", plan->nmatrices, plan->n, work,
          (long long)plan->total_nnz);
  spmvd_calib_plan_free(plan);
  ck_assert_int_eq(spmvd_calib_plan_new(&cpu, SPMV_F64, NULL, &plan, NULL), 0);
  for (k = 0; k < plan->n; k++)
    ck_assert_int_ne(plan->pt[k].cfg.format, SPMV_FMT_CUSPARSE);
  spmvd_calib_plan_free(plan);
}
END_TEST

/*
 * The mid part: after the plan without it, unchanged, csr-scalar alone on
 * matrices of 0.02 to 0.2 strips near the diagonal whose CSR lies on both
 * sides of the L2's cliff (0.65-0.85 of it), the same bytes in either value
 * type, within its budget; a third of max_nnz_total bounds that budget,
 * and a device without an L2 has none.
 */
START_TEST(test_plan_mid)
{
  struct spmvd_device_info h = device(132, 2048, 1);
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *base, *plan;
  double l2 = 50.0 * 1048576, lo = 1e300, hi = 0, bytes;
  int64_t spent, under, over;
  size_t k;
  int d;

  h.l2_bytes = (uint64_t)l2;
  spmvd_calib_params_default(&prm);
  ck_assert_int_gt(prm.mid_nnz, 0);
  for (d = 0; d < 2; d++) {
    enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;

    prm.mid_nnz = 0;
    ck_assert_int_eq(spmvd_calib_plan_new(&h, dt, &prm, &base, NULL), 0);
    ck_assert_int_eq(spmvd_calib_plan_new(&h, dt, NULL, &plan, NULL), 0);
    spmvd_calib_params_default(&prm);
    ck_assert_uint_gt(plan->n, base->n + 10);
    for (k = 0; k < base->n; k++) {
      ck_assert_int_eq(plan->pt[k].rows, base->pt[k].rows);
      ck_assert_int_eq(plan->pt[k].p, base->pt[k].p);
      ck_assert_int_eq(plan->pt[k].matrix, base->pt[k].matrix);
      ck_assert_int_eq(plan->pt[k].cfg.format, base->pt[k].cfg.format);
    }
    for (spent = under = over = 0; k < plan->n; k++) {
      const struct spmvd_calib_point *pt = &plan->pt[k];

      ck_assert(pt->work);
      ck_assert_int_eq(pt->cfg.format, SPMV_FMT_CSR_SCALAR);
      ck_assert_int_eq(pt->place, SPMV_GEN_DIAGONAL);
      ck_assert_int_eq(pt->matrix, base->nmatrices + (int)(k - base->n));
      ck_assert_int_ge(pt->rows, llround(132 * 2048 * 0.02));
      ck_assert_int_le(pt->rows, llround(132 * 2048 * 0.2));
      spent += pt->rows * pt->p;
      bytes = (double)(pt->rows * pt->p) * (spmv_dtype_size(dt) + 4);
      under += bytes < 0.65 * l2;
      over += bytes > 0.85 * l2;
      lo = fmin(lo, bytes / l2);
      hi = fmax(hi, bytes / l2);
    }
    ck_assert_int_eq(plan->nmatrices, base->nmatrices + (int)(plan->n - base->n));
    ck_assert_int_le(spent, prm.mid_nnz);
    ck_assert_int_eq(plan->total_nnz, base->total_nnz + spent);
    ck_assert_int_ge(under, 6);
    ck_assert_int_ge(over, 6);
    spmvd_calib_plan_free(plan);
    spmvd_calib_plan_free(base);
  }
  ck_assert_double_ge(lo, 0.45);
  ck_assert_double_le(hi, 1.25);
  /* A trimmed plan trims the mid part to a third of its total. */
  prm.max_nnz_total = 60000000;
  prm.mid_nnz = 0;
  ck_assert_int_eq(spmvd_calib_plan_new(&h, SPMV_F64, &prm, &base, NULL), 0);
  spmvd_calib_params_default(&prm);
  prm.max_nnz_total = 60000000;
  ck_assert_int_eq(spmvd_calib_plan_new(&h, SPMV_F64, &prm, &plan, NULL), 0);
  spent = plan->total_nnz - base->total_nnz;
  ck_assert_int_gt(spent, 0);
  ck_assert_int_le(spent, prm.max_nnz_total / 3);
  spmvd_calib_plan_free(plan);
  spmvd_calib_plan_free(base);
  /* Without an L2, no mid part. */
  h.l2_bytes = 0;
  spmvd_calib_params_default(&prm);
  prm.mid_nnz = 0;
  ck_assert_int_eq(spmvd_calib_plan_new(&h, SPMV_F64, &prm, &base, NULL), 0);
  ck_assert_int_eq(spmvd_calib_plan_new(&h, SPMV_F64, NULL, &plan, NULL), 0);
  ck_assert_uint_eq(plan->n, base->n);
  spmvd_calib_plan_free(plan);
  spmvd_calib_plan_free(base);
}
END_TEST

/*
 * A calibration trimmed to a short time bound (spmvctl calibrate's probe
 * cuts max_nnz_total) still fits every format from 3M nonzeros up:
 * csr-vector's sweeps keep to a quarter of the budget, and each part
 * admits first the two P by two I its fit needs, where admitting
 * csr-vector's sweeps first would leave a short bound fitting it alone.
 */
START_TEST(test_plan_trimmed)
{
  static const int64_t budgets[] = { 3000000, 4000000, 6000000, 8000000,
                                      34000000, 190000000 };
  struct spmvd_device_info h = device(132, 2048, 1);
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan;
  struct spmvd_predictor pr;

  for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
    int64_t grid = 0, vec = 0;
    int m = -1;

    spmvd_calib_params_default(&prm);
    prm.max_nnz_total = budgets[b];
    ck_assert_int_eq(spmvd_calib_plan_new(&h, SPMV_F64, &prm, &plan, NULL), 0);
    for (size_t k = 0; k < plan->n; k++) {
      struct spmvd_calib_point *pt = &plan->pt[k];
      int64_t nnz = pt->rows * pt->p;

      if (!pt->work && pt->matrix != m) {
        grid += nnz;
        vec += pt->cfg.format == SPMV_FMT_CSR_VECTOR ? nnz : 0;
      }
      m = pt->matrix;
      pt->ok = 1;
      pt->time_us = saddle(0.01, 0.02, 0.5, 3, pt->strips, pt->p);
    }
    ck_assert_int_le(grid, budgets[b]);
    ck_assert_int_le(vec, budgets[b] / 4);
    ck_assert_int_eq(spmvd_predict_fit(plan, &h, &pr, NULL), 12);
    /* Every calibrated format: dia, and the 16-bit and stream16 variants
     * (predicted from their 32-bit formats), are not. */
    for (int f = 0; f <= SPMV_FMT_CSR_STREAM; f++)
      ck_assert_int_eq(pr.fit[f].kind == SPMVD_FIT_NONE,
                       f == SPMV_FMT_DIA || f == SPMV_FMT_SELL16 ||
                           f == SPMV_FMT_CSR16);
    spmvd_calib_plan_free(plan);
  }
}
END_TEST

/* A time callback's SPMV_ETIMEDOUT ends the run: no later point is timed
 * (nor its matrix generated), each is counted as skipped, and the points
 * timed before the bound keep their times. */
START_TEST(test_calibrate_bound)
{
  struct spmvd_calib_ops ops = { fake_time, NULL };
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan;
  struct fake f;
  size_t k, ok = 0;

  memset(&f, 0, sizeof f);
  f.dev = device(2, 64, 1);
  f.bound = 100;
  spmvd_calib_params_default(&prm);
  prm.max_nnz_matrix = 200000;
  prm.max_nnz_total = 4000000;
  ck_assert_int_eq(spmvd_calib_plan_new(&f.dev, SPMV_F32, &prm, &plan, NULL), 0);
  ck_assert_uint_gt(plan->n, 200);
  ck_assert_int_eq(spmvd_calib_run(plan, &prm, &ops, &f, NULL), 0);
  ck_assert_int_eq(f.calls, f.bound + 1);
  for (k = 0; k < plan->n; k++) {
    ok += plan->pt[k].ok;
    if (k >= (size_t)f.bound)
      ck_assert(!plan->pt[k].ok && plan->pt[k].time_us == 0);
  }
  ck_assert_uint_ge(ok, (size_t)f.bound - 2);  /* hyb's failures at (2, 8) */
  ck_assert_uint_eq(plan->skipped, plan->n - (size_t)f.bound);
  spmvd_calib_plan_free(plan);
}
END_TEST

/* Where a load goes: staged on the device when the layout and its staging
 * fit, converted on the host when only the layout does (it stages
 * nothing), refused when not even the layout fits. */
START_TEST(test_load_path)
{
  ck_assert_int_eq(spmvd_load_path(1, 100, 50, 150), SPMVD_LOAD_DEVICE);
  ck_assert_int_eq(spmvd_load_path(1, 100, 50, 149), SPMVD_LOAD_HOST);
  ck_assert_int_eq(spmvd_load_path(1, 100, 0, 100), SPMVD_LOAD_DEVICE);
  ck_assert_int_eq(spmvd_load_path(0, 100, 0, 1000), SPMVD_LOAD_HOST);
  ck_assert_int_eq(spmvd_load_path(1, 101, 0, 100), SPMVD_LOAD_NONE);
  ck_assert_int_eq(spmvd_load_path(0, 101, 0, 100), SPMVD_LOAD_NONE);
  /* No wrap-around when the staging alone exceeds what is left. */
  ck_assert_int_eq(spmvd_load_path(1, 100, (size_t)-1, 200), SPMVD_LOAD_HOST);
}
END_TEST

/* Beside a staged copy of the CSR (50 bytes here, which avail leaves
 * out): a layout that fits beside it loads as without it; one that fits
 * only once the copy is freed, or only by the host's conversion beside
 * it, has the copy go first; one too big even then leaves the copy. */
START_TEST(test_load_path_beside)
{
  ck_assert_int_eq(spmvd_load_path_beside(1, 120, 0, 100, 0), SPMVD_LOAD_NONE);
  ck_assert_int_eq(spmvd_load_path_beside(1, 100, 50, 149, 0), SPMVD_LOAD_HOST);
  ck_assert_int_eq(spmvd_load_path_beside(1, 100, 0, 100, 50), SPMVD_LOAD_DEVICE);
  ck_assert_int_eq(spmvd_load_path_beside(1, 100, 10, 105, 50), SPMVD_LOAD_UNSTAGE);
  ck_assert_int_eq(spmvd_load_path_beside(1, 120, 0, 100, 50), SPMVD_LOAD_UNSTAGE);
  ck_assert_int_eq(spmvd_load_path_beside(1, 150, 0, 100, 50), SPMVD_LOAD_UNSTAGE);
  ck_assert_int_eq(spmvd_load_path_beside(1, 151, 0, 100, 50), SPMVD_LOAD_NONE);
  ck_assert_int_eq(spmvd_load_path_beside(0, 100, 0, 100, 50), SPMVD_LOAD_HOST);
  ck_assert_int_eq(spmvd_load_path_beside(0, 120, 0, 100, 50), SPMVD_LOAD_UNSTAGE);
  ck_assert_int_eq(spmvd_load_path_beside(0, 151, 0, 100, 50), SPMVD_LOAD_NONE);
  /* No wrap-around far beyond what is free. */
  ck_assert_int_eq(spmvd_load_path_beside(1, (size_t)-1, 0, 100, 50), SPMVD_LOAD_NONE);
}
END_TEST

/* A fake backend for spmvd_calib_backend_time(). */
static int be_loaded, be_unloaded;
static struct spmvd_bmatrix *be_token = (struct spmvd_bmatrix *)&be_loaded;

static int be_load(struct spmvd_backend *b, const struct spmv_csr *A,
                   enum spmv_dtype dt, const struct spmv_config *cfg,
                   struct spmvd_bmatrix **out, struct spmv_error *err)
{
  if (cfg->format == SPMV_FMT_DIA)
    return spmv_error_set(err, SPMV_ETOOBIG, "DIA needs 9999 diagonals");
  be_loaded++;
  *out = be_token;
  return 0;
}

static int be_time(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                   int warmup, int reps, double *median_us,
                   struct spmv_error *err)
{
  ck_assert_ptr_eq(m, be_token);
  *median_us = warmup * 100 + reps;
  return 0;
}

static void be_unload(struct spmvd_backend *b, struct spmvd_bmatrix *m)
{
  ck_assert_ptr_eq(m, be_token);
  be_unloaded++;
}

/* A fake backend's time that cycles through offsets: the median of five
 * rounds is the base, whatever the order. */
static int rounds_calls;

static int rounds_time(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                       int warmup, int reps, double *median_us,
                       struct spmv_error *err)
{
  static const double off[5] = { 0.5, -3, 0, 2, -0.25 };

  ck_assert_ptr_eq(m, be_token);
  *median_us = 10 + off[rounds_calls++ % 5];
  return 0;
}

START_TEST(test_calib_backend_time)
{
  struct spmvd_backend_ops ops;
  struct spmvd_calib_backend cb;
  struct spmv_config ell = { SPMV_FMT_ELL, 256, 0, 0, 0 };
  struct spmv_config dia = { SPMV_FMT_DIA, 256, 0, 0, 0 };
  struct spmv_csr *A = spmv_gen_random(100, 100, 3, 1, NULL);
  struct spmv_error e;
  double us = 0, each[5];

  memset(&ops, 0, sizeof ops);
  ops.load = be_load;
  ops.time = be_time;
  ops.unload = be_unload;
  cb.ops = &ops;
  cb.be = NULL;
  cb.warmup = 2;
  cb.reps = 7;
  ck_assert_int_eq(spmvd_calib_backend_time(&cb, A, SPMV_F64, &ell, &us, &e),
                   0);
  ck_assert_double_eq(us, 207);
  ck_assert_int_eq(be_loaded, 1);
  ck_assert_int_eq(be_unloaded, 1);
  ck_assert_int_eq(spmvd_calib_backend_time(&cb, A, SPMV_F64, &dia, &us, &e),
                   SPMV_ETOOBIG);
  ck_assert_int_eq(be_unloaded, 1);

  /* Rounds: five loads, each timed once, in the order taken, their
   * median. */
  ops.time = rounds_time;
  rounds_calls = 0;
  ck_assert_int_eq(spmvd_calib_backend_time_rounds(&cb, A, SPMV_F32, &ell, 5,
                                                   each, &us, &e), 0);
  ck_assert_double_eq(us, 10);
  ck_assert_double_eq(each[0], 10.5);
  ck_assert_double_eq(each[1], 7);
  ck_assert_double_eq(each[4], 9.75);
  ck_assert_int_eq(rounds_calls, 5);
  ck_assert_int_eq(be_loaded, 6);
  ck_assert_int_eq(be_unloaded, 6);
  /* each may be NULL; the rounds are bounded; a failed load times nothing. */
  ck_assert_int_eq(spmvd_calib_backend_time_rounds(&cb, A, SPMV_F32, &ell, 3,
                                                   NULL, &us, &e), 0);
  ck_assert_int_eq(spmvd_calib_backend_time_rounds(&cb, A, SPMV_F32, &ell, 0,
                                                   NULL, &us, &e), SPMV_EINVAL);
  ck_assert_int_eq(spmvd_calib_backend_time_rounds(&cb, A, SPMV_F32, &ell, 10,
                                                   NULL, &us, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "rounds 10"));
  rounds_calls = 0;
  ck_assert_int_eq(spmvd_calib_backend_time_rounds(&cb, A, SPMV_F32, &dia, 3,
                                                   NULL, &us, &e), SPMV_ETOOBIG);
  ck_assert_int_eq(rounds_calls, 0);
  ck_assert_int_eq(be_unloaded, 9);
  spmv_csr_free(A);
}
END_TEST

/* The calibration suite. */
static Suite *predict_calib_suite(void)
{
  Suite *s = suite_create("predict_calib");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_strips);
  tcase_add_test(tc, test_plan_bounds);
  tcase_add_test(tc, test_plan_trimmed);
  tcase_add_test(tc, test_plan_mid);
  tcase_add_test(tc, test_calibrate_bound);
  tcase_add_test(tc, test_calib_backend_time);
  tcase_add_test(tc, test_load_path);
  tcase_add_test(tc, test_load_path_beside);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(predict_calib_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
