/* check_predict.c: the statistical predictor: fits recovering known
 * coefficients, the calibration plan and driver, storage of the fits. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_cache.h"
#include "spmvd_predict.h"
#include "testdata.h"

/* A device: H100-like (cuda) or a tiny GPU for fast end-to-end runs. */
static struct spmvd_device_info device(int sms, int threads_per_sm, int cuda)
{
  struct spmvd_device_info d;

  memset(&d, 0, sizeof d);
  snprintf(d.backend, sizeof d.backend, "%s", cuda ? "cuda" : "cpu");
  snprintf(d.name, sizeof d.name, "Test device");
  snprintf(d.device_key, sizeof d.device_key, "dev-%d", sms);
  snprintf(d.software_key, sizeof d.software_key, "sw");
  d.sms = sms;
  d.warp_size = 32;
  d.max_threads_per_sm = threads_per_sm;
  d.max_blocks_per_sm = 32;
  d.max_threads_per_block = 1024;
  d.l2_bytes = (uint64_t)1 << 20;
  return d;
}

/* A deterministic noise factor in [1 - amp, 1 + amp]. */
static double noise(unsigned *s, double amp)
{
  *s = *s * 1664525u + 1013904223u;
  return 1 + amp * (2.0 * (*s >> 8) / (double)(1u << 24) - 1);
}

/* The saddle with a, b, c, d at (I, P). */
static double saddle(double a, double b, double c, double d, double i,
                     double p)
{
  return (a * i + b) * p + (c * i + d);
}

START_TEST(test_fit_saddle_exact_and_noisy)
{
  static const int is[] = { 1, 2, 3, 4, 6, 8, 10 };
  static const int ps[] = { 4, 8, 16, 32, 64 };
  double i[70], p[70], t[70];
  struct spmvd_fit f;
  unsigned s = 7;
  size_t n = 0, a, b;

  for (a = 0; a < 7; a++)
    for (b = 0; b < 5; b++) {
      i[n] = is[a];
      p[n] = ps[b];
      t[n++] = saddle(0.002, 0.05, 1.5, 3, is[a], ps[b]);
    }
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_predict_fit_saddle(i, p, t, n, &f, NULL), 0);
  ck_assert_int_eq(f.kind, SPMVD_FIT_SADDLE);
  ck_assert_double_eq_tol(f.a, 0.002, 1e-12);
  ck_assert_double_eq_tol(f.b, 0.05, 1e-12);
  ck_assert_double_eq_tol(f.gc, 1.5, 1e-10);
  ck_assert_double_eq_tol(f.gd, 3, 1e-10);
  ck_assert_double_le(f.err_mean, 1e-12);
  ck_assert_int_eq(f.npoints, 35);
  /* With +-1 % noise, predictions inside and outside the grid stay within
   * a few percent. */
  for (a = 0; a < n; a++)
    t[a] *= noise(&s, 0.01);
  ck_assert_int_eq(spmvd_predict_fit_saddle(i, p, t, n, &f, NULL), 0);
  ck_assert_double_le(f.err_mean, 0.01);
  ck_assert_double_eq_tol(spmvd_fit_eval(&f, 5, 20) /
                              saddle(0.002, 0.05, 1.5, 3, 5, 20), 1, 0.02);
  ck_assert_double_eq_tol(spmvd_fit_eval(&f, 12, 128) /
                              saddle(0.002, 0.05, 1.5, 3, 12, 128), 1, 0.03);
  /* One P only: undetermined. */
  for (a = 0; a < n; a++)
    p[a] = 8;
  ck_assert_int_eq(spmvd_predict_fit_saddle(i, p, t, n, &f, NULL),
                   SPMV_EINVAL);
}
END_TEST

/*
 * Vector CSR with T(P) = 0.5 P + 4 at I = 2 and E(I) = 6 I + 8 at P = 32
 * (both 20 us at (2, 32), so t0 = 20): at (I0, P0) = (5, 100) the
 * prediction is T(100) / t0 * E(5) = 54 / 20 * 38 = 102.6 us.
 */
START_TEST(test_fit_vector)
{
  static const int ps[] = { 4, 8, 16, 32, 64, 128, 256, 512 };
  static const int is[] = { 1, 3, 4, 6, 8, 10, 12, 16, 20 };
  double i[40], p[40], t[40];
  struct spmvd_fit f;
  size_t n = 0, k;
  unsigned s = 3;

  for (k = 0; k < 8; k++) {
    i[n] = 2;
    p[n] = ps[k];
    t[n++] = 0.5 * ps[k] + 4;
  }
  for (k = 0; k < 9; k++) {
    i[n] = is[k];
    p[n] = 32;
    t[n++] = 6 * is[k] + 8;
  }
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_predict_fit_vector(i, p, t, n, 2, 32, &f, NULL), 0);
  ck_assert_int_eq(f.kind, SPMVD_FIT_VECTOR);
  ck_assert_double_eq_tol(f.m, 0.5, 1e-12);
  ck_assert_double_eq_tol(f.c, 4, 1e-10);
  ck_assert_double_eq_tol(f.p, 6, 1e-10);
  ck_assert_double_eq_tol(f.q, 8, 1e-10);
  ck_assert_double_eq_tol(f.t0, 20, 1e-12);
  ck_assert_double_eq_tol(spmvd_fit_eval(&f, 5, 100), 102.6, 1e-9);
  for (k = 0; k < n; k++)
    t[k] *= noise(&s, 0.01);
  ck_assert_int_eq(spmvd_predict_fit_vector(i, p, t, n, 2, 32, &f, NULL), 0);
  ck_assert_double_eq_tol(spmvd_fit_eval(&f, 5, 100) / 102.6, 1, 0.03);
  /* No I sweep: undetermined. */
  ck_assert_int_eq(spmvd_predict_fit_vector(i, p, t, 8, 2, 32, &f, NULL),
                   SPMV_EINVAL);
}
END_TEST

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

/* The fake device: a known time per format from I = rows / S and
 * P = nnz / rows, read off the matrix it is given. */
struct fake {
  struct spmvd_device_info dev;
  int calls, progress, fail_hyb_matrix;
  int bound;  /* > 0: calls after this many are past the time bound */
};

/* Asserts that a and b are the same work tree: splits, thresholds and
 * the leaves' coefficients, node by node from the root. */
static void assert_same_nodes(const struct spmvd_tree *a,
                              const struct spmvd_tree *b)
{
  int reach[SPMVD_TREE_NODES] = { 1 }, i, j;

  for (i = 0; i < SPMVD_TREE_NODES; i++) {
    if (!reach[i])
      continue;
    ck_assert_int_eq(a->split[i], b->split[i]);
    if (a->split[i] != SPMVD_SPLIT_NONE) {
      ck_assert_double_eq(a->thr[i], b->thr[i]);
      ck_assert_int_lt(2 * i + 2, SPMVD_TREE_NODES);
      reach[2 * i + 1] = reach[2 * i + 2] = 1;
      continue;
    }
    for (j = 0; j < SPMVD_WORK_TERMS; j++)
      ck_assert_double_eq(a->wc[i][j], b->wc[i][j]);
  }
}

/* Asserts that fits a and b hold the same work trees: the tree and each
 * bootstrap tree. */
static void assert_same_tree(const struct spmvd_fit *a,
                             const struct spmvd_fit *b)
{
  assert_same_nodes(&a->tree, &b->tree);
  ck_assert_int_eq(a->nbag, b->nbag);
  for (int k = 0; k < a->nbag; k++)
    assert_same_nodes(&a->bag[k], &b->bag[k]);
}

/* The true saddle coefficients of format f. */
static void truth(enum spmv_format f, double c[4])
{
  c[0] = 0.001 * (1 + (int)f);
  c[1] = 0.02 + 0.01 * (int)f;
  c[2] = 0.5 + 0.1 * (int)f;
  c[3] = 2 + (int)f;
}

static int fake_time(void *ctx, const struct spmv_csr *A, enum spmv_dtype dt,
                     const struct spmv_config *cfg, double *us,
                     struct spmv_error *err)
{
  struct fake *f = ctx;
  double S = (double)spmvd_predict_strip(cfg->format, &f->dev);
  double i = (double)A->rows / S, p = (double)A->nnz / (double)A->rows, c[4];

  ck_assert_int_eq(dt, SPMV_F32);
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  f->calls++;
  if (f->bound > 0 && f->calls > f->bound)
    return spmv_error_set(err, SPMV_ETIMEDOUT, "past the time bound");
  if (cfg->format == SPMV_FMT_CSR_VECTOR) {
    *us = (0.5 * p + 4) / 12 * (6 * i + 6);
    return 0;
  }
  if (cfg->format == SPMV_FMT_HYB && i == 2 && p == 8)
    return spmv_error_set(err, SPMV_EGPU, "hyb: launch failed");
  truth(cfg->format, c);
  *us = saddle(c[0], c[1], c[2], c[3], i, p);
  return 0;
}

static void fake_progress(void *ctx, int done, int total,
                          const struct spmvd_calib_point *pt)
{
  struct fake *f = ctx;

  f->progress++;
  ck_assert_int_eq(done, f->progress);
  ck_assert_int_ge(total, done);
  ck_assert_ptr_nonnull(pt);
}

/* Calibrates a tiny GPU (S = 128 rows per strip, 8 for csr-vector) through
 * the fake device; every fit must recover the truth. */
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

START_TEST(test_calibrate_end_to_end)
{
  struct spmvd_calib_ops ops = { fake_time, fake_progress };
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan;
  struct spmvd_predictor pr, pr2;
  struct spmv_profile prof;
  struct spmv_config ranked[SPMV_FMT_COUNT];
  struct spmvd_cache *cache;
  struct fake f;
  struct spmv_error e;
  double c[4], us[SPMV_FMT_COUNT];
  char path[4096], db[4200];
  json_t *doc;
  size_t k;
  int fmt, n, bad = 0;

  memset(&f, 0, sizeof f);
  f.dev = device(2, 64, 1);
  spmvd_calib_params_default(&prm);
  prm.max_nnz_matrix = 200000;
  prm.max_nnz_total = 4000000;
  ck_assert_int_eq(spmvd_calib_plan_new(&f.dev, SPMV_F32, &prm, &plan, &e), 0);
  ck_assert_msg(spmvd_calib_run(plan, &prm, &ops, &f, &e) == 0, "%s", e.msg);
  ck_assert_int_eq(f.progress, (int)plan->n);
  /* ell and ellr-t past fill 50 (the skewed shapes) are never timed. */
  int refused = 0;
  for (k = 0; k < plan->n; k++) {
    const struct spmvd_calib_point *pt = &plan->pt[k];
    int padded = pt->cfg.format == SPMV_FMT_ELL ||
                 pt->cfg.format == SPMV_FMT_ELLR_T;

    bad += !pt->ok;
    ck_assert_ptr_eq(spmvd_calib_point_of(plan, &pt->cfg), pt);
    if (padded && pt->feat.w_ell > SPMVD_CALIB_MAX_FILL * pt->feat.nnz) {
      ck_assert(!pt->ok && pt->time_us == 0);
      ck_assert(!spmvd_calib_point_applies(pt));
      refused++;
    } else {
      /* What a timer's prefetch (eval_store) reads from the point. */
      ck_assert(spmvd_calib_point_applies(pt));
    }
  }
  ck_assert_int_gt(refused, 0);
  /* A copy of a point's configuration is not the point's. */
  {
    struct spmv_config copy = plan->pt[0].cfg;

    ck_assert_ptr_null(spmvd_calib_point_of(plan, &copy));
    ck_assert_ptr_null(spmvd_calib_point_of(NULL, &plan->pt[0].cfg));
  }
  ck_assert_int_eq(f.calls, (int)plan->n - refused);
  ck_assert_int_eq(bad, 2 + refused);  /* and hyb at (2, 8), both dists */
  n = spmvd_predict_fit(plan, &f.dev, &pr, &e);
  ck_assert_int_eq(n, 12);  /* 11 thread formats (cusparse: cuda) + vector */
  for (fmt = 0; fmt < SPMV_FMT_COUNT; fmt++) {
    if (fmt == SPMV_FMT_CSR_VECTOR || pr.fit[fmt].kind == SPMVD_FIT_NONE)
      continue;
    truth(fmt, c);
    ck_assert_double_eq_tol(pr.fit[fmt].a, c[0], 1e-9);
    ck_assert_double_eq_tol(pr.fit[fmt].b, c[1], 1e-9);
    ck_assert_double_eq_tol(pr.fit[fmt].gc, c[2], 1e-7);
    ck_assert_double_eq_tol(pr.fit[fmt].gd, c[3], 1e-7);
    ck_assert_int_eq(pr.fit[fmt].strip, 128);
  }
  ck_assert_int_eq(pr.fit[SPMV_FMT_DIA].kind, SPMVD_FIT_NONE);
  ck_assert_int_eq(pr.fit[SPMV_FMT_CSR_VECTOR].kind, SPMVD_FIT_VECTOR);
  ck_assert_double_eq_tol(pr.fit[SPMV_FMT_CSR_VECTOR].m, 0.5, 1e-9);
  ck_assert_double_eq_tol(pr.fit[SPMV_FMT_CSR_VECTOR].p, 6, 1e-9);
  ck_assert_double_eq_tol(pr.fit[SPMV_FMT_CSR_VECTOR].q, 6, 1e-9);
  ck_assert_double_eq_tol(pr.fit[SPMV_FMT_CSR_VECTOR].t0, 12, 1e-9);
  ck_assert_int_eq(pr.fit[SPMV_FMT_CSR_VECTOR].strip, 8);
  /* A matrix of 1000 rows and 20000 nnz: I0 = 1000 / 128 = 7.8125 (a
   * real number of strips), P0 = 20 for the thread formats; csr-vector:
   * I0 = 1000 / 8 = 125. */
  memset(&prof, 0, sizeof prof);
  prof.rows = prof.cols = 1000;
  prof.nnz = 20000;
  prof.ell_fill = 1.5;
  truth(SPMV_FMT_JAD, c);
  ck_assert_double_eq_tol(spmvd_predict_time(&pr.fit[SPMV_FMT_JAD], &prof, NULL),
                          saddle(c[0], c[1], c[2], c[3], 7.8125, 20), 1e-6);
  ck_assert_double_eq_tol(spmvd_predict_time(&pr.fit[SPMV_FMT_CSR_VECTOR],
                                             &prof, NULL),
                          (0.5 * 20 + 4) / 12 * (6 * 125 + 6), 1e-6);
  /* The ranking is by predicted time: csr-scalar (format 0) is cheapest. */
  n = spmvd_predict_rank(&pr, &prof, NULL, ranked, us, SPMV_FMT_COUNT);
  ck_assert_int_eq(n, 12);
  ck_assert_int_eq(ranked[0].format, SPMV_FMT_CSR_SCALAR);
  for (k = 1; k < (size_t)n; k++)
    ck_assert_double_le(us[k - 1], us[k]);
  doc = spmvd_predict_report_json(&pr, &prof, NULL);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "predictions")), 12);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
                       json_object_get(doc, "predictions"), 0), "format")),
                   "csr-scalar");
  ck_assert_double_eq(json_real_value(json_object_get(json_array_get(
                          json_object_get(doc, "predictions"), 0), "time_us")),
                      us[0]);
  ck_assert_double_eq(json_real_value(json_object_get(json_array_get(
                          json_object_get(doc, "predictions"), 0), "i0")),
                      7.8125);
  json_decref(doc);
  prof.ell_fill = 10;
  ck_assert_int_eq(spmvd_predict_rank(&pr, &prof, NULL, ranked, us, SPMV_FMT_COUNT),
                   11);
  /* Past the calibration's fill (SPMVD_CALIB_MAX_FILL) ellr-t has no
   * prediction either: the calibration never timed it there.  At the
   * bound it still has. */
  prof.ell_fill = SPMVD_CALIB_MAX_FILL;
  ck_assert_int_eq(spmvd_predict_rank(&pr, &prof, NULL, ranked, us, SPMV_FMT_COUNT),
                   11);
  ck_assert(spmvd_predict_applies(&pr, SPMV_FMT_ELLR_T, &prof));
  ck_assert(!spmvd_predict_applies(&pr, SPMV_FMT_ELL, &prof));
  prof.ell_fill = 4 * SPMVD_CALIB_MAX_FILL;
  ck_assert(!spmvd_predict_applies(&pr, SPMV_FMT_ELLR_T, &prof));
  ck_assert(!spmvd_predict_applies(&pr, SPMV_FMT_DIA, &prof));
  ck_assert(spmvd_predict_applies(&pr, SPMV_FMT_CSR_SCALAR, &prof));
  n = spmvd_predict_rank(&pr, &prof, NULL, ranked, us, SPMV_FMT_COUNT);
  ck_assert_int_eq(n, 10);
  for (k = 0; k < (size_t)n; k++) {
    ck_assert_int_ne(ranked[k].format, SPMV_FMT_ELLR_T);
    ck_assert_int_ne(ranked[k].format, SPMV_FMT_ELL);
  }
  doc = spmvd_predict_report_json(&pr, &prof, NULL);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "predictions")), 10);
  json_decref(doc);
  /* Every fitted format has its work model too, kept through JSON. */
  for (fmt = 0; fmt < SPMV_FMT_COUNT; fmt++)
    if (pr.fit[fmt].kind != SPMVD_FIT_NONE)
      ck_assert_int_gt(pr.fit[fmt].work_npoints, 0);
  /* JSON round trip, then through the cache. */
  doc = spmvd_predict_to_json(&pr);
  ck_assert_ptr_nonnull(doc);
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), 0);
  ck_assert_int_eq(memcmp(&pr.fit[SPMV_FMT_JAD].a, &pr2.fit[SPMV_FMT_JAD].a,
                          sizeof(double)), 0);
  ck_assert_double_eq(spmvd_predict_time(&pr.fit[SPMV_FMT_CSR_VECTOR], &prof,
                                         NULL),
                      spmvd_predict_time(&pr2.fit[SPMV_FMT_CSR_VECTOR],
                                         &prof, NULL));
  assert_same_tree(&pr2.fit[SPMV_FMT_JAD], &pr.fit[SPMV_FMT_JAD]);
  ck_assert_int_eq(pr2.fit[SPMV_FMT_JAD].work_npoints,
                   pr.fit[SPMV_FMT_JAD].work_npoints);
  ck_assert_double_eq(pr2.fit[SPMV_FMT_JAD].l2_bytes, f.dev.l2_bytes);
  ck_assert_double_eq(pr2.fit[SPMV_FMT_JAD].threads,
                      (double)f.dev.sms * f.dev.max_threads_per_sm);
  /* The SMs and value width the block share needs: the device's, the
   * plan's f32. */
  ck_assert_double_eq(pr2.fit[SPMV_FMT_CSR_SCALAR].sms, f.dev.sms);
  ck_assert_int_eq(pr2.fit[SPMV_FMT_CSR_SCALAR].value_bytes, 4);
  /* Every field of a work model is required: one missing or out of range
   * is refused, naming the format and the field, and nothing is read. */
  {
    static const char *const keys[] = { "work_npoints", "work_err",
                                        "l2_bytes", "threads", "sms",
                                        "value_bytes", "bag", "npoints",
                                        "err_mean" };
    json_t *fj = json_object_get(doc, "csr-scalar"), *keep;
    struct spmvd_predictor old;

    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
      keep = json_incref(json_object_get(fj, keys[i]));
      ck_assert_ptr_nonnull(keep);
      json_object_del(fj, keys[i]);
      ck_assert_int_eq(spmvd_predict_from_json(doc, &old, &e), SPMV_EINVAL);
      ck_assert_ptr_nonnull(strstr(e.msg, "csr-scalar"));
      ck_assert_msg(strstr(e.msg, keys[i]) != NULL, "%s: %s", keys[i], e.msg);
      for (fmt = 0; fmt < SPMV_FMT_COUNT; fmt++)
        ck_assert_int_eq(old.fit[fmt].kind, SPMVD_FIT_NONE);
      json_object_set_new(fj, keys[i], keep);
    }
    json_object_set_new(fj, "value_bytes", json_integer(6));
    ck_assert_int_eq(spmvd_predict_from_json(doc, &old, &e), SPMV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "value_bytes"));
    json_object_set_new(fj, "value_bytes", json_integer(4));
    json_object_set_new(fj, "sms", json_real(-1));
    ck_assert_int_eq(spmvd_predict_from_json(doc, &old, &e), SPMV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "sms"));
    json_object_set_new(fj, "sms", json_real(f.dev.sms));
    ck_assert_int_eq(spmvd_predict_from_json(doc, &old, &e), 0);
  }
  /* A leaf holds SPMVD_WORK_TERMS coefficients, no fewer. */
  {
    json_t *w = json_object_get(json_object_get(doc, "jad"), "work");
    struct spmvd_predictor old;
    size_t node = 0;

    while (node < json_array_size(w) && !json_is_array(json_array_get(w, node)))
      node++;
    ck_assert_uint_lt(node, json_array_size(w));
    json_array_remove(json_array_get(w, node), SPMVD_WORK_TERMS - 1);
    ck_assert_int_eq(spmvd_predict_from_json(doc, &old, &e), SPMV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "jad"));
    ck_assert_ptr_nonnull(strstr(e.msg, "must hold 11 numbers"));
    json_array_append_new(json_array_get(w, node), json_real(0));
    ck_assert_int_eq(spmvd_predict_from_json(doc, &old, &e), 0);
  }
  /* A negative coefficient in one of coo's leaves is refused. */
  {
    json_t *w = json_object_get(json_object_get(doc, "coo"), "work");
    char want[32];
    size_t node = 0;

    while (node < json_array_size(w) && !json_is_array(json_array_get(w, node)))
      node++;
    ck_assert_uint_lt(node, json_array_size(w));
    json_array_set_new(json_array_get(w, node), 2, json_real(-1));
    ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.msg, "coo"));
    snprintf(want, sizeof want, "work[%zu][2]", node);
    ck_assert_ptr_nonnull(strstr(e.msg, want));
  }
  json_object_del(json_object_get(doc, "coo"), "work");
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), 0);
  ck_assert_int_eq(pr2.fit[SPMV_FMT_COO].work_npoints, 0);
  json_object_set_new(json_object_get(doc, "jad"), "kind",
                      json_string("cubic"));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "jad"));
  json_decref(doc);
  testdata_tmp(path, sizeof path, "check_predict.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(path));
  snprintf(db, sizeof db, "%s/c.db", path);
  ck_assert_int_eq(spmvd_cache_open(db, 0, &cache, &e), 0);
  ck_assert_int_eq(spmvd_predict_load(cache, &f.dev, SPMV_F32, &pr2, &e), 0);
  ck_assert_int_eq(spmvd_predict_save(cache, &f.dev, SPMV_F32, &pr, &e), 0);
  ck_assert_int_eq(spmvd_predict_load(cache, &f.dev, SPMV_F32, &pr2, &e), 1);
  ck_assert_int_eq(spmvd_predict_load(cache, &f.dev, SPMV_F64, &pr2, &e), 0);
  ck_assert_int_eq(spmvd_predict_load(cache, &f.dev, SPMV_F32, &pr2, &e), 1);
  for (fmt = 0; fmt < SPMV_FMT_COUNT; fmt++) {
    ck_assert_int_eq(pr2.fit[fmt].kind, pr.fit[fmt].kind);
    if (pr.fit[fmt].kind != SPMVD_FIT_NONE)
      ck_assert_double_eq_tol(spmvd_predict_time(&pr2.fit[fmt], &prof, NULL),
                              spmvd_predict_time(&pr.fit[fmt], &prof, NULL),
                              1e-9);
  }
  spmvd_cache_close(cache);
  unlink(db);
  snprintf(db, sizeof db, "%s/c.db-wal", path);
  unlink(db);
  snprintf(db, sizeof db, "%s/c.db-shm", path);
  unlink(db);
  rmdir(path);
  spmvd_calib_plan_free(plan);
}
END_TEST

/* Term 6 of cfg's work basis for features g (borrowed): csr-scalar's
 * lanes past the L1, ellr-t's and jad's longest row from DRAM. */
static double term6(const struct spmv_config *cfg, double l2_bytes,
                    double threads, const struct spmvd_pfeat *g)
{
  double phi[SPMVD_WORK_TERMS];

  spmvd_predict_work_basis(cfg, l2_bytes, threads, g, phi);
  return phi[6];
}

/* csr-stream's sum steps over its cut, counted by hand: rows 0..99 of one
 * entry, row 100 of 600 (longer than a block's 512: a row of its own, in
 * no block), rows 101..150 of 7.  Block 0..99: a lane a row (2 x 100 >
 * 128), 128 groups, one round of one step.  Block 101..150: 2 lanes a row
 * (2 x 2 x 50 > 128), one round of ceil(7 / 2) = 4 steps.  Then 600 rows
 * of one entry: blocks of 512 rows at most, the first in 4 rounds of 128
 * rows (4 steps), the second of 88 rows in one (1 step). */
START_TEST(test_features_stream)
{
  struct spmv_csr *A = spmv_csr_new(151, 600, 100 + 600 + 50 * 7);
  struct spmv_csr *B = spmv_csr_new(600, 600, 600);
  struct spmv_profile prof;
  struct spmvd_pfeat f;
  int64_t r, k = 0;

  ck_assert_ptr_nonnull(A);
  ck_assert_ptr_nonnull(B);
  for (r = 0; r < 151; r++) {
    int len = r < 100 ? 1 : r == 100 ? 600 : 7;

    A->row_ptr[r] = k;
    for (int c = 0; c < len; c++) {
      A->col_idx[k] = c;
      A->val[k++] = 1;
    }
  }
  A->row_ptr[151] = k;
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
  spmvd_predict_features(A, &prof, SPMV_F64, &f);
  ck_assert_double_eq(f.w_stream, 1 + 4);
  ck_assert_double_eq(f.path_stream, 4);
  /* Each of the two blocks in one round. */
  ck_assert_double_eq(f.path_rounds, 1);
  for (r = 0; r < 600; r++) {
    B->row_ptr[r] = r;
    B->col_idx[r] = (int32_t)r;
    B->val[r] = 1;
  }
  B->row_ptr[600] = 600;
  ck_assert_int_eq(spmv_profile_compute(B, &prof, NULL), 0);
  spmvd_predict_features(B, &prof, SPMV_F32, &f);
  ck_assert_double_eq(f.w_stream, 4 + 1);
  ck_assert_double_eq(f.path_stream, 4);
  /* The first block's 512 rows in four rounds of 128. */
  ck_assert_double_eq(f.path_rounds, 4);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

/* The features of a hand-made matrix, counted by hand: 34 rows of 64
 * columns; row 0 has columns 0..9, rows 1..31 the column r, row 32 none,
 * row 33 the columns 0, 31, 63. */
START_TEST(test_features)
{
  struct spmv_csr *A = spmv_csr_new(34, 64, 44);
  struct spmv_profile prof;
  struct spmvd_pfeat f;
  int64_t r, k = 0;

  ck_assert_ptr_nonnull(A);
  for (r = 0; r < 34; r++) {
    A->row_ptr[r] = k;
    if (r == 0)
      for (int c = 0; c < 10; c++)
        A->col_idx[k++] = c;
    else if (r < 32)
      A->col_idx[k++] = (int32_t)r;
    else if (r == 33) {
      A->col_idx[k++] = 0;
      A->col_idx[k++] = 31;
      A->col_idx[k++] = 63;
    }
  }
  A->row_ptr[34] = k;
  ck_assert_int_eq(k, 44);
  for (k = 0; k < 44; k++)
    A->val[k] = 1;
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
  ck_assert_int_eq(prof.hyb_k, 1);
  spmvd_predict_features(A, &prof, SPMV_F64, &f);
  ck_assert_double_eq(f.rows, 34);
  ck_assert_double_eq(f.nnz, 44);
  ck_assert_double_eq(f.rl_max, 10);
  ck_assert_double_eq(f.w_warp, 32 * 10 + 32 * 3);
  ck_assert_double_eq(f.w_ell, 34 * 10);
  /* Pairs at TPR 16: 16 pairs of one step in the first warp, one pair
   * (empty, 3 entries) of one step in the second. */
  ck_assert_double_eq(f.w_vec, 32 * 16 + 32);
  /* One window: sorted 10, 3, 1 x 31, 0; slices start at 10 and at 1. */
  ck_assert_double_eq(f.w_sell, 32 * 10 + 32 * 1);
  ck_assert_double_eq(f.hyb_k, 1);
  ck_assert_double_eq(f.w_hyb, 34);
  ck_assert_double_eq(f.hyb_coo, 9 + 2);
  ck_assert_double_eq(f.empty, 1);
  /* Sectors of 4 doubles: row 0 spans 3, rows 1..31 one each, row 33 3. */
  ck_assert_double_eq(f.sectors, 3 + 31 + 3);
  /* jad's warps: rows 0, 33, 1..30, then 31 (and the empty 32).  Step 0
   * of the first: columns 0, 0, 1..30 in sectors 0..7 (8); steps 1 and 2:
   * row 0's sector 0 and row 33's 7, then 15 (2 + 2); steps 3..9 row 0
   * alone (7).  The second warp: row 31 (1). */
  ck_assert_double_eq(f.sectors_jad, 8 + 2 + 2 + 7 + 1);
  /* The longest path: in row order the first warp (rows 0..31, the only
   * one as long as row 0): step 0 columns 0, 1..31 in sectors 0..7 (8),
   * then row 0 alone (9).  jad's first warp: as above, without the
   * second warp. */
  ck_assert_double_eq(f.path_x, 8 + 9);
  ck_assert_double_eq(f.path_x_jad, 8 + 2 + 2 + 7);
  /* Its entries: step 0 at 0 and 10..40, sectors 0 and 2..10 (10), then
   * row 0's 1..9, one each (9). */
  ck_assert_double_eq(f.path_m, 10 + 9);
  /* x per warp of 32 rows in row order, 4 doubles a sector: rows 0..31
   * touch columns 0..31 (sectors 0..7: 8), rows 32..33 columns 0, 31 and
   * 63 (sectors 0, 7, 15: 3). */
  ck_assert_double_eq(f.x_warp, 8 + 3);
  /* Along jad's warps: rows 0, 33, 1..30 (sectors 0..7 and 15: 9), then
   * 31 and the empty 32 (sector 7: 1). */
  ck_assert_double_eq(f.x_warp_jad, 9 + 1);
  /* csr-stream at BS 128, k 4: one block of the 34 rows, summed 2 lanes a
   * row (2 x 2 x 34 > 128) in 64 groups, 16 a warp, in one round: the
   * first warp waits ceil(10 / 2) steps for row 0. */
  ck_assert_double_eq(f.w_stream, 5);
  ck_assert_double_eq(f.path_stream, 5);
  ck_assert_double_eq(f.path_rounds, 1);
  /* Of 8 floats: row 0 spans 2. */
  spmvd_predict_features(A, &prof, SPMV_F32, &f);
  ck_assert_double_eq(f.sectors, 2 + 31 + 3);
  /* Of 8: step 0 in sectors 0..3 (4), row 33 at 3 then 7. */
  ck_assert_double_eq(f.sectors_jad, 4 + 2 + 2 + 7 + 1);
  ck_assert_double_eq(f.path_x, 4 + 9);
  ck_assert_double_eq(f.path_x_jad, 4 + 2 + 2 + 7);
  /* Of 8: step 0 in sectors 0..5 (6). */
  ck_assert_double_eq(f.path_m, 6 + 9);
  /* Of 8: sectors 0..3 (4), then 0, 3 and 7 (3). */
  ck_assert_double_eq(f.x_warp, 4 + 3);
  ck_assert_double_eq(f.x_warp_jad, 5 + 1);
  /* The terms: hyb's path is its ELL width, the others' the longest row;
   * csr-stream's second kernel runs for rows longer than BS x k. */
  struct spmv_config hyb = { SPMV_FMT_HYB, 256, 0, 0, 0 };
  struct spmv_config st128 = { SPMV_FMT_CSR_STREAM, 128, 0, 4, 0 };
  struct spmv_config st256 = { SPMV_FMT_CSR_STREAM, 256, 0, 4, 0 };
  struct spmv_config jad = { SPMV_FMT_JAD, 256, 0, 0, 0 };
  struct spmv_config sc = { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 };
  struct spmv_config vec = { SPMV_FMT_CSR_VECTOR, 256, 16, 0, 0 };
  struct spmv_config coo = { SPMV_FMT_COO, 256, 0, 0, 0 };
  struct spmv_config ell = { SPMV_FMT_ELL, 256, 0, 0, 0 };
  double phi[SPMVD_WORK_TERMS];
  /* The path term: jad's own, csr-scalar's entries', another thread per
   * row's x in row order (ell's), none for the others; the occupancy
   * term: the sectors times rows x TPR over the device's threads (68
   * here), at most 1, none when they are unknown. */
  spmvd_predict_work_basis(&jad, 0, 68, &f, phi);
  ck_assert_double_eq(phi[9], 15);
  ck_assert_double_eq(phi[10], 0.5 * f.sectors_jad);
  /* The x a warp keeps, for a thread per row and csr-adaptive's blocks:
   * x_warp times the same share of the device (rows alone), at most 1;
   * jad's own, csr-stream's and coo's x_warp as they are. */
  ck_assert_double_eq(phi[7], 6);
  spmvd_predict_work_basis(&sc, 0, 68, &f, phi);
  ck_assert_double_eq(phi[9], 15);
  ck_assert_double_eq(phi[10], 0);  /* csr-scalar's: on the L2's cliff */
  ck_assert_double_eq(phi[7], 0.5 * 7);
  spmvd_predict_work_basis(&sc, 0, 17, &f, phi);
  ck_assert_double_eq(phi[7], 7);
  spmvd_predict_work_basis(&sc, 0, 0, &f, phi);
  ck_assert_double_eq(phi[7], 0);
  spmvd_predict_work_basis(&st128, 0, 68, &f, phi);
  ck_assert_double_eq(phi[7], 7);
  spmvd_predict_work_basis(&ell, 0, 68, &f, phi);
  ck_assert_double_eq(phi[9], 13);
  ck_assert_double_eq(phi[10], 0.5 * 36);
  ck_assert_double_eq(phi[7], 0.5 * 7);
  spmvd_predict_work_basis(&vec, 0, 68, &f, phi);
  ck_assert_double_eq(phi[9], 0);
  ck_assert_double_eq(phi[10], 36);
  ck_assert_double_eq(phi[7], 0);
  spmvd_predict_work_basis(&coo, 0, 68, &f, phi);
  ck_assert_double_eq(phi[9], 0);
  ck_assert_double_eq(phi[10], 0.5 * 36);
  ck_assert_double_eq(phi[7], 7);
  spmvd_predict_work_basis(&coo, 0, 0, &f, phi);
  ck_assert_double_eq(phi[10], 0);
  spmvd_predict_work_basis(&hyb, 0, 0, &f, phi);
  ck_assert_double_eq(phi[3], 34);
  ck_assert_double_eq(phi[4], 1);
  /* Its COO part's step grows 5 % a doubling of its 11 entries. */
  ck_assert_double_eq_tol(phi[6], 1 + 0.05 * log2(12), 1e-12);
  ck_assert_double_eq(phi[7], 11);
  ck_assert_double_eq(phi[9], 0);
  /* hyb's ELL part keeps x per warp as ell does: x_warp times the share
   * of the device (34 rows of 68 threads). */
  spmvd_predict_work_basis(&hyb, 0, 68, &f, phi);
  ck_assert_double_eq(phi[9], 0.5 * 7);
  ck_assert_double_eq(phi[7], 11);
  /* csr-stream's sum steps, in all and along the slowest block, and its
   * block of the most rounds in the sectors' slot (x's sectors stay in
   * the occupancy-weighted term). */
  f.w_stream = 7;
  spmvd_predict_work_basis(&st128, 0, 0, &f, phi);
  ck_assert_double_eq(phi[3], 7);
  ck_assert_double_eq(phi[9], 5);
  ck_assert_double_eq(phi[4], 10);
  ck_assert_double_eq(phi[6], 0);
  ck_assert_double_eq(phi[7], 7);
  ck_assert_double_eq(phi[5], 1);
  f.path_rounds = 3;
  spmvd_predict_work_basis(&st128, 0, 0, &f, phi);
  ck_assert_double_eq(phi[5], 3);
  spmvd_predict_work_basis(&sc, 0, 0, &f, phi);
  ck_assert_double_eq(phi[5], f.sectors);
  /* csr-adaptive's longest row counts as log2(1 + rl_max) (its lanes grow
   * with the row), the others' as rl_max. */
  struct spmv_config ad = { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 };
  spmvd_predict_work_basis(&ad, 0, 0, &f, phi);
  ck_assert_double_eq_tol(phi[4], log2(11), 1e-12);
  spmvd_predict_work_basis(&sc, 0, 0, &f, phi);
  ck_assert_double_eq(phi[4], 10);
  f.rl_max = 600;
  spmvd_predict_work_basis(&st128, 0, 0, &f, phi);
  ck_assert_double_eq(phi[6], 1);
  spmvd_predict_work_basis(&st256, 0, 0, &f, phi);
  ck_assert_double_eq(phi[6], 0);
  /* x's sectors from DRAM: none while the footprint fits the L2, then
   * the share beyond it.  f32 footprint: 44 x 8 + 35 x 8 + 98 x 4. */
  ck_assert_double_eq(f.bytes, 44 * 8 + 35 * 8 + 98 * 4);
  spmvd_predict_work_basis(&st256, 0, 0, &f, phi);
  ck_assert_double_eq(phi[8], 0);
  spmvd_predict_work_basis(&st256, 2 * f.bytes, 0, &f, phi);
  ck_assert_double_eq(phi[8], 0);
  spmvd_predict_work_basis(&st256, f.bytes / 4, 0, &f, phi);
  ck_assert_double_eq_tol(phi[8], 0.75 * (2 + 31 + 3), 1e-12);
  /* csr-scalar: its warp work (416) and longest row (600 by now) times
   * the footprint's place on the L2's cliff: none up to 0.65 of the L2,
   * all from 0.85, linear between; none without an L2; the other formats
   * x's sectors from DRAM. */
  {
    static const struct { double l2_per_byte, r; } cliff[] = {
      { 1 / 0.5, 0 }, { 1 / 0.65, 0 }, { 1 / 0.75, 0.5 }, { 1 / 0.85, 1 },
      { 1 / 1.0, 1 }, { 1 / 3.0, 1 },
    };

    for (size_t i = 0; i < sizeof cliff / sizeof cliff[0]; i++) {
      spmvd_predict_work_basis(&sc, f.bytes * cliff[i].l2_per_byte, 0, &f,
                               phi);
      ck_assert_double_eq_tol(phi[8], cliff[i].r * 416, 1e-9);
      ck_assert_double_eq_tol(phi[10], cliff[i].r * 600, 1e-9);
    }
    spmvd_predict_work_basis(&sc, 0, 0, &f, phi);
    ck_assert_double_eq(phi[8], 0);
    ck_assert_double_eq(phi[10], 0);
    spmvd_predict_work_basis(&st256, f.bytes / 4, 0, &f, phi);
    ck_assert_double_eq_tol(phi[8], 0.75 * (2 + 31 + 3), 1e-12);
  }
  /* The row term (34 rows): for a thread per row, hyb and csr-adaptive
   * only the rows beyond one wave of threads, all of them for the other
   * formats and when the threads are unknown. */
  {
    const struct spmv_config *beyond[] = { &sc, &ell, &hyb, &ad };
    const struct spmv_config *all[] = { &vec, &coo, &jad, &st128 };

    for (size_t i = 0; i < 4; i++) {
      spmvd_predict_work_basis(beyond[i], 0, 68, &f, phi);
      ck_assert_double_eq(phi[1], 0);
      spmvd_predict_work_basis(beyond[i], 0, 20, &f, phi);
      ck_assert_double_eq(phi[1], 34 - 20);
      spmvd_predict_work_basis(beyond[i], 0, 0, &f, phi);
      ck_assert_double_eq(phi[1], 34);
      spmvd_predict_work_basis(all[i], 0, 20, &f, phi);
      ck_assert_double_eq(phi[1], 34);
    }
  }
  /* csr-scalar's lanes past the L1: rows of 32 on average (a line of
   * columns), 34 rows on 40 threads (0.85 of the device): 1 - 0.32 / 0.85
   * of the entries whose x is free (1088 - 300).  Nothing without
   * threads, for shorter rows, within 0.32 of the device, or for another
   * format. */
  {
    struct spmvd_pfeat g = f;

    g.nnz = 32 * 34;
    g.sectors = 300;
    ck_assert_double_eq_tol(term6(&sc, 0, 40, &g),
                            (1 - 0.32 / 0.85) * (32 * 34 - 300), 1e-9);
    ck_assert_double_eq_tol(term6(&sc, 0, 100, &g),
                            (1 - 0.32 / 0.34) * (32 * 34 - 300), 1e-9);
    ck_assert_double_eq_tol(term6(&sc, 0, 20, &g), 0.68 * (32 * 34 - 300),
                            1e-9);
    ck_assert_double_eq(term6(&sc, 0, 0, &g), 0);
    ck_assert_double_eq(term6(&sc, 0, 200, &g), 0);
    ck_assert_double_eq(term6(&ell, 0, 40, &g), 0);
    g.nnz = 31 * 34;
    ck_assert_double_eq(term6(&sc, 0, 40, &g), 0);
  }
  /* ellr-t's longest row from DRAM: rl_max times the share of its padded
   * layout (bytes x w_ell / nnz) beyond half the L2.  Nothing without an
   * L2, while the layout fits half of it, or for another format. */
  {
    struct spmv_config et = { SPMV_FMT_ELLR_T, 256, 1, 0, 0 };
    struct spmvd_pfeat g = f;
    double lb;

    g.nnz = 100;
    g.w_ell = 400;
    g.rl_max = 50;
    g.bytes = 1000;
    lb = 1000.0 * 400 / 100;
    ck_assert_double_eq_tol(term6(&et, 1000, 0, &g), (1 - 500 / lb) * 50,
                            1e-9);
    ck_assert_double_eq(term6(&et, 0, 0, &g), 0);
    ck_assert_double_eq(term6(&et, 2 * lb, 0, &g), 0);
    ck_assert_double_eq(term6(&ell, 1000, 0, &g), 0);
  }
  /* jad's longest row from DRAM: rl_max times the share of its unpadded
   * layout (bytes) beyond half the L2.  Nothing without an L2 or while the
   * layout fits half of it; ellr-t's own term likewise. */
  {
    struct spmv_config jd = { SPMV_FMT_JAD, 256, 0, 0, 0 };
    struct spmv_config et = { SPMV_FMT_ELLR_T, 256, 1, 0, 0 };
    struct spmvd_pfeat g = f;

    g.nnz = 100;
    g.w_ell = 100;
    g.rl_max = 50;
    g.bytes = 1000;
    ck_assert_double_eq_tol(term6(&jd, 1000, 0, &g), 0.5 * 50, 1e-9);
    ck_assert_double_eq_tol(term6(&jd, 400, 0, &g), 0.8 * 50, 1e-9);
    ck_assert_double_eq(term6(&jd, 0, 0, &g), 0);
    ck_assert_double_eq(term6(&jd, 2000, 0, &g), 0);
    ck_assert_double_eq_tol(term6(&et, 1000, 0, &g), 0.5 * 50, 1e-9);
  }
  spmv_csr_free(A);
}
END_TEST

/* jad's order of A's rows, plainly: a stable sort by decreasing length
 * (a pass over the rows for each length); returns a new array of rows and
 * the longest row's length in *maxlen. */
static int64_t *jad_order_ref(const struct spmv_csr *A, int64_t *maxlen)
{
  int64_t *order = malloc((size_t)(A->rows > 0 ? A->rows : 1) * sizeof *order);
  int64_t r, len, k = 0;

  ck_assert_ptr_nonnull(order);
  *maxlen = 0;
  for (r = 0; r < A->rows; r++)
    if (A->row_ptr[r + 1] - A->row_ptr[r] > *maxlen)
      *maxlen = A->row_ptr[r + 1] - A->row_ptr[r];
  for (len = *maxlen; len >= 0; len--)
    for (r = 0; r < A->rows; r++)
      if (A->row_ptr[r + 1] - A->row_ptr[r] == len)
        order[k++] = r;
  return order;
}

/* jad's sectors counted plainly: jad_order_ref's order, every warp, every
 * step. */
static double jad_sectors_ref(const struct spmv_csr *A, int shift)
{
  int64_t n = A->rows, maxlen, w, d, j, prev, sec;
  int64_t *order = jad_order_ref(A, &maxlen);
  double total = 0;

  for (w = 0; w < n; w += 32)
    for (d = 0; d < maxlen; d++) {
      prev = -1;
      for (j = w; j < w + 32 && j < n; j++) {
        if (A->row_ptr[order[j] + 1] - A->row_ptr[order[j]] <= d)
          break;
        sec = A->col_idx[A->row_ptr[order[j]] + d] >> shift;
        total += sec != prev;
        prev = sec;
      }
    }
  free(order);
  return total;
}

/* x_warp counted plainly: each warp's sectors sorted, the distinct ones
 * counted; rows in row order, or in jad_order_ref's when jad is set. */
static double x_warp_ref(const struct spmv_csr *A, int shift, int jad)
{
  int64_t *s = malloc((size_t)(A->nnz > 0 ? A->nnz : 1) * sizeof *s);
  int64_t w, k, n, a, b, tmp, r, maxlen, j;
  int64_t *order = jad_order_ref(A, &maxlen);
  double total = 0;

  ck_assert_ptr_nonnull(s);
  for (r = 0; !jad && r < A->rows; r++)
    order[r] = r;
  for (w = 0; w < A->rows; w += 32) {
    n = 0;
    for (j = w; j < w + 32 && j < A->rows; j++)
      for (k = A->row_ptr[order[j]]; k < A->row_ptr[order[j] + 1]; k++)
        s[n++] = A->col_idx[k] >> shift;
    for (a = 1; a < n; a++)  /* insertion sort: warps are small here */
      for (b = a; b > 0 && s[b - 1] > s[b]; b--) {
        tmp = s[b];
        s[b] = s[b - 1];
        s[b - 1] = tmp;
      }
    for (k = 0; k < n; k++)
      total += k == 0 || s[k] != s[k - 1];
  }
  free(s);
  free(order);
  return total;
}

/* sectors_jad on the two sorts (by counting where lengths are few, else
 * a sort of the rows) and past the sampling threshold, against the plain
 * count. */
START_TEST(test_features_jad)
{
  struct spmv_csr *A = spmv_csr_new(3, 200, 200);
  struct spmv_gen_spec spec;
  struct spmv_profile prof;
  struct spmvd_pfeat f;
  struct spmv_error e;
  double want;
  int64_t k = 0;

  /* Rows 0 and 2 of 100 entries (columns 0.. and 100..), row 1 empty:
   * longest row 100 > 2 x 3 + 64, so the rows are sorted, not counted.
   * Every step gathers two sectors apart. */
  ck_assert_ptr_nonnull(A);
  A->row_ptr[0] = 0;
  for (int c = 0; c < 100; c++)
    A->col_idx[k++] = c;
  A->row_ptr[1] = k;
  A->row_ptr[2] = k;
  for (int c = 100; c < 200; c++)
    A->col_idx[k++] = c;
  A->row_ptr[3] = k;
  for (k = 0; k < 200; k++)
    A->val[k] = 1;
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
  spmvd_predict_features(A, &prof, SPMV_F64, &f);
  ck_assert_double_eq(f.sectors_jad, 200);
  ck_assert_double_eq(f.sectors_jad, jad_sectors_ref(A, 2));
  spmv_csr_free(A);

  /* 300000 rows: every 2nd warp is counted, scaled by the entries. */
  memset(&spec, 0, sizeof spec);
  spec.rows = 300000;
  spec.mean = 8;
  spec.cv = 0.5;
  spec.dist = SPMV_GEN_NORMAL;
  spec.place = SPMV_GEN_DIAGONAL;
  A = spmv_gen_matching(&spec, 11, &e);
  ck_assert_msg(A != NULL, "%s", e.msg);
  ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
  spmvd_predict_features(A, &prof, SPMV_F32, &f);
  want = jad_sectors_ref(A, 3);
  ck_assert_msg(fabs(f.sectors_jad - want) <= 0.01 * want,
                "sampled %g, counted %g", f.sectors_jad, want);
  /* Sorting scatters the near-diagonal rows: more sectors than per row. */
  ck_assert_double_gt(f.sectors_jad, 1.5 * f.sectors);
  /* In row order a warp's near-diagonal rows share their sectors: fewer
   * than per row; every 2nd warp counted, scaled, within 1 % of the
   * plain count. */
  want = x_warp_ref(A, 3, 0);
  ck_assert_msg(fabs(f.x_warp - want) <= 0.01 * want, "sampled %g, counted %g",
                f.x_warp, want);
  want = x_warp_ref(A, 3, 1);
  ck_assert_msg(fabs(f.x_warp_jad - want) <= 0.01 * want,
                "sampled %g, counted %g", f.x_warp_jad, want);
  ck_assert_double_lt(f.x_warp, 0.5 * f.sectors);
  spmv_csr_free(A);
  /* Random columns among a million: a warp's rows share next to nothing
   * (5000 rows: every warp counted, exactly). */
  spec.rows = 5000;
  spec.cols = 1000000;
  spec.place = SPMV_GEN_RANDOM;
  A = spmv_gen_matching(&spec, 12, &e);
  ck_assert_msg(A != NULL, "%s", e.msg);
  ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
  spmvd_predict_features(A, &prof, SPMV_F64, &f);
  ck_assert_double_eq(f.x_warp, x_warp_ref(A, 2, 0));
  ck_assert_double_eq(f.x_warp_jad, x_warp_ref(A, 2, 1));
  ck_assert_double_gt(f.x_warp, 0.98 * f.sectors);
  spmv_csr_free(A);
}
END_TEST

/* The work fit recovers a known model from times it generated: features
 * of real generated matrices (skewed, banded, equal rows), times exact and
 * then with 2 % noise; predictions on matrices the fit never saw. */
START_TEST(test_fit_work)
{
  static const double truth_scalar[SPMVD_WORK_TERMS] = {
    3.0, 1e-4, 2e-4, 5e-5, 0.05, 0, 0, 0 };
  static const double truth_hyb[SPMVD_WORK_TERMS] = {
    4.0, 0, 1e-4, 1e-4, 0, 2e-5, 6.0, 3e-4 };
  struct spmvd_pfeat x[40];
  struct spmv_profile prof;
  struct spmv_gen_spec spec;
  struct spmvd_fit f;
  struct spmv_csr *A;
  struct spmv_error e;
  struct spmv_config coo = { SPMV_FMT_COO, 256, 0, 0, 0 };
  double t[40], phi[SPMVD_WORK_TERMS], want;
  unsigned seed = 7;
  int k, j, fmt, nohyb = 0;

  for (k = 0; k < 40; k++) {
    memset(&spec, 0, sizeof spec);
    spec.rows = 200 + 300 * (k % 7);
    spec.mean = 2 + (k % 5) * 6;
    spec.cv = (k % 3) == 0 ? 0 : (k % 3) == 1 ? 0.5 : 2;
    spec.dist = spec.cv > 1 ? SPMV_GEN_LOGNORMAL : SPMV_GEN_NORMAL;
    spec.place = (k % 2) ? SPMV_GEN_DIAGONAL : SPMV_GEN_RANDOM;
    A = spmv_gen_matching(&spec, 100 + (uint64_t)k, &e);
    ck_assert_msg(A != NULL, "%s", e.msg);
    ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
    spmvd_predict_features(A, &prof, SPMV_F64, &x[k]);
    nohyb += x[k].hyb_coo == 0;
    spmv_csr_free(A);
  }
  ck_assert_int_gt(nohyb, 3);
  for (fmt = 0; fmt < 2; fmt++) {
    enum spmv_format ff = fmt ? SPMV_FMT_HYB : SPMV_FMT_CSR_SCALAR;
    struct spmv_config cfg = { ff, 256, 0, 0, 0 };
    const double *c = fmt ? truth_hyb : truth_scalar;

    for (k = 0; k < 40; k++) {
      spmvd_predict_work_basis(&cfg, 0, 0, &x[k], phi);
      for (t[k] = 0, j = 0; j < SPMVD_WORK_TERMS; j++)
        t[k] += c[j] * phi[j];
    }
    memset(&f, 0, sizeof f);
    f.kind = SPMVD_FIT_SADDLE;
    f.cfg = cfg;
    f.strip = 1;
    /* Fitted on 30 exact times, judged on the other 10. */
    ck_assert_int_eq(spmvd_predict_fit_work(&cfg, x, t, 30, &f, &e), 0);
    ck_assert_int_eq(f.work_npoints, 30);
    ck_assert_double_lt(f.work_err, 1e-6);
    for (j = 0; j < SPMVD_WORK_TERMS; j++)
      ck_assert_double_ge(f.tree.wc[0][j], 0);
    memset(&prof, 0, sizeof prof);
    prof.rows = 1;
    for (k = 30; k < 40; k++) {
      want = t[k];
      ck_assert_double_eq_tol(spmvd_predict_time(&f, &prof, &x[k]), want,
                              1e-6 * want);
    }
    /* With 2 % noise the held-out predictions stay within 4 %. */
    for (k = 0; k < 40; k++)
      t[k] *= noise(&seed, 0.02);
    ck_assert_int_eq(spmvd_predict_fit_work(&cfg, x, t, 30, &f, &e), 0);
    ck_assert_double_lt(f.work_err, 0.03);
    for (k = 30; k < 40; k++)
      ck_assert_double_le(fabs(spmvd_predict_time(&f, &prof, &x[k]) - t[k]),
                          0.04 * t[k]);
  }
  /* Times that fall as rows grow get no negative coefficient. */
  for (k = 0; k < 40; k++)
    t[k] = 50 - 1e-3 * x[k].rows + 1e-3 * x[k].nnz;
  ck_assert_int_eq(spmvd_predict_fit_work(&coo, x, t, 40, &f, &e), 0);
  for (j = 0; j < SPMVD_WORK_TERMS; j++)
    ck_assert_double_ge(f.tree.wc[0][j], 0);
  ck_assert_int_eq(spmvd_predict_fit_work(&coo, x, t, 5, &f, &e),
                   SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "coo"));
}
END_TEST

/* doc, read back, holds coo's fit f: the same tree, the same predictions
 * at the n features xf. */
static void assert_reads_back(json_t *doc, const struct spmvd_fit *f,
                              const struct spmv_profile *prof,
                              const struct spmvd_pfeat *xf, size_t n)
{
  struct spmvd_predictor back;
  struct spmv_error e;

  spmv_error_clear(&e);
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), 0);
  assert_same_tree(&back.fit[SPMV_FMT_COO], f);
  for (size_t k = 0; k < n; k++)
    ck_assert_double_eq(spmvd_predict_time(&back.fit[SPMV_FMT_COO], prof,
                                           &xf[k]),
                        spmvd_predict_time(f, prof, &xf[k]));
}

/* The tree finds a regime change no line can follow: times that jump by
 * 6 us once rows + nnz passes 4096 (as a merge kernel's fix-up pass
 * does), fitted on three quarters of 400 generated matrices and judged on
 * the rest; then kept through JSON, and malformed trees refused. */
START_TEST(test_fit_tree)
{
  static struct spmvd_pfeat x[400], xf[400];
  static double t[400], tf[400];
  struct spmvd_pfeat *xk;
  double *tk;
  struct spmv_config coo = { SPMV_FMT_COO, 256, 0, 0, 0 };
  struct spmvd_predictor pr, pr2;
  struct spmv_profile prof;
  struct spmv_gen_spec spec;
  struct spmvd_fit *f = &pr.fit[SPMV_FMT_COO];
  struct spmv_csr *A;
  struct spmv_error e;
  json_t *doc, *work;
  size_t nf = 0, nj = 0;
  int k;

  for (k = 0; k < 400; k++) {
    memset(&spec, 0, sizeof spec);
    spec.rows = (int64_t)32 << (k % 10);
    spec.mean = 2 << ((k / 10) % 4);
    spec.cv = 0.3;
    spec.place = (k / 40) % 2 ? SPMV_GEN_DIAGONAL : SPMV_GEN_RANDOM;
    A = spmv_gen_matching(&spec, 500 + (uint64_t)k, &e);
    ck_assert_msg(A != NULL, "%s", e.msg);
    ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
    /* Every fourth is held out from the fit. */
    xk = k % 4 == 0 ? &xf[nj] : &x[nf];
    tk = k % 4 == 0 ? &tf[nj++] : &t[nf++];
    spmvd_predict_features(A, &prof, SPMV_F64, xk);
    *tk = 3 + 2e-4 * xk->nnz +
          (xk->rows + xk->nnz > 4096 ? 6 + 1e-5 * xk->rows : 0);
    spmv_csr_free(A);
  }
  memset(&pr, 0, sizeof pr);
  f->kind = SPMVD_FIT_SADDLE;
  f->cfg = coo;
  f->strip = 1;
  ck_assert_int_eq(spmvd_predict_fit_work(&coo, x, t, nf, f, &e), 0);
  ck_assert_int_eq(f->tree.split[0], SPMVD_SPLIT_WORK);
  ck_assert_double_eq(f->tree.thr[0], 4096);
  ck_assert_int_eq(f->tree.split[1], SPMVD_SPLIT_NONE);
  ck_assert_int_eq(f->tree.split[2], SPMVD_SPLIT_NONE);
  ck_assert_double_lt(f->work_err, 1e-6);
  memset(&prof, 0, sizeof prof);
  prof.rows = 1;
  for (k = 0; k < (int)nj; k++)
    ck_assert_double_eq_tol(spmvd_predict_time(f, &prof, &xf[k]), tf[k],
                            1e-6 * tf[k]);
  /* A single line misses the jump by far. */
  struct spmvd_fit line = *f;
  ck_assert_int_eq(spmvd_predict_fit_work(&coo, x, t, 150, &line, &e), 0);
  ck_assert_int_eq(line.tree.split[0], SPMVD_SPLIT_NONE);  /* no 100 a side */
  ck_assert_double_gt(line.work_err, 0.05);
  /* Through JSON. */
  doc = spmvd_predict_to_json(&pr);
  ck_assert_ptr_nonnull(doc);
  assert_reads_back(doc, f, &prof, xf, nj);
  work = json_object_get(json_object_get(doc, "coo"), "work");
  ck_assert_int_eq(json_array_size(work), SPMVD_TREE_NODES);
  ck_assert(json_is_null(json_array_get(work, 3)));
  /* A node under a leaf must be null. */
  json_array_set_new(work, 3, json_array());
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "work[3] is under a leaf"));
  json_array_set_new(work, 3, json_null());
  /* A split needs a known name and two more nodes below it. */
  json_object_set_new(json_array_get(work, 0), "split", json_string("cols"));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "work[0] is neither"));
  json_object_set_new(json_array_get(work, 0), "split", json_string("work"));
  json_array_set_new(work, 1, json_pack("{sssf}", "split", "rows", "at", 8.0));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "work[3]"));
  json_array_set_new(work, 1, json_pack("[fffffffffff]", 1.0, 0.0, 0.0, 0.0,
                                        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), 0);
  /* Depth 3 at most: a split at node 7 has no nodes below it. */
  json_array_set_new(work, 1, json_pack("{sssf}", "split", "rows", "at", 8.0));
  json_array_set_new(work, 3, json_pack("{sssf}", "split", "rows", "at", 4.0));
  json_array_set_new(work, 4, json_deep_copy(json_array_get(work, 2)));
  json_array_set_new(work, 7, json_pack("{sssf}", "split", "rows", "at", 2.0));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "work[7] is neither"));
  json_array_set_new(work, 7, json_deep_copy(json_array_get(work, 2)));
  json_array_set_new(work, 8, json_deep_copy(json_array_get(work, 2)));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), 0);
  /* A tree holds SPMVD_TREE_NODES nodes, no fewer (depth 2's 7 neither). */
  json_array_remove(work, 14);
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "work must be an array of 15 tree "
                                      "nodes"));
  while (json_array_size(work) > 7)
    json_array_remove(work, json_array_size(work) - 1);
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "array of 15 tree nodes"));
  json_decref(doc);
}
END_TEST

/* Fit f's time at x from its tree alone (tree -1) or from bootstrap tree
 * b alone. */
static double one_tree_time(const struct spmvd_fit *f, int b,
                            const struct spmv_profile *prof,
                            const struct spmvd_pfeat *x)
{
  static struct spmvd_fit g;

  g = *f;
  if (b >= 0)
    g.tree = f->bag[b];
  g.nbag = 0;
  return spmvd_predict_time(&g, prof, x);
}

/* The bootstrap trees: grown on resamples of the points by a fixed
 * generator, so one set of points gives one fit; exact times of a line
 * give every tree that line; on noisy times of test_fit_tree's jump the
 * trees differ and a prediction is the mean of theirs and the tree's but
 * the least and the greatest, so one wild tree moves nothing past the
 * others.  Through JSON the bag reads back, an empty one predicts from
 * its tree alone, and missing or malformed bags are refused by name. */
START_TEST(test_fit_bag)
{
  static struct spmvd_pfeat x[300];
  static double t[300];
  struct spmv_config coo = { SPMV_FMT_COO, 256, 0, 0, 0 };
  static struct spmvd_predictor pr, pr2;
  struct spmvd_fit *f = &pr.fit[SPMV_FMT_COO], *g = &pr2.fit[SPMV_FMT_COO];
  struct spmv_profile prof;
  struct spmv_gen_spec spec;
  struct spmv_csr *A;
  struct spmv_error e;
  json_t *doc, *fj, *bag;
  unsigned seed = 7;
  int k, b, differ = 0;

  for (k = 0; k < 300; k++) {
    memset(&spec, 0, sizeof spec);
    spec.rows = (int64_t)32 << (k % 10);
    spec.mean = 2 << ((k / 10) % 4);
    spec.cv = 0.3;
    A = spmv_gen_matching(&spec, 900 + (uint64_t)k, &e);
    ck_assert_msg(A != NULL, "%s", e.msg);
    ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
    spmvd_predict_features(A, &prof, SPMV_F64, &x[k]);
    t[k] = 3 + 2e-4 * x[k].nnz;
    spmv_csr_free(A);
  }
  memset(&prof, 0, sizeof prof);
  prof.rows = 1;
  memset(&pr, 0, sizeof pr);
  f->kind = SPMVD_FIT_SADDLE;
  f->cfg = coo;
  f->strip = 1;
  /* One line, exactly: every tree holds it (to the ridge's 1e-10 of
   * the trace, up to a few 1e-6 here). */
  ck_assert_int_eq(spmvd_predict_fit_work(&coo, x, t, 300, f, &e), 0);
  ck_assert_int_eq(f->nbag, SPMVD_BAG_TREES);
  for (b = -1; b < f->nbag; b++)
    for (k = 0; k < 300; k += 7)
      ck_assert_double_eq_tol(one_tree_time(f, b, &prof, &x[k]), t[k],
                              1e-5 * t[k]);
  /* The jump with 5 % noise: the same points give the same fit. */
  for (k = 0; k < 300; k++)
    t[k] = (3 + 2e-4 * x[k].nnz +
            (x[k].rows + x[k].nnz > 4096 ? 6 + 1e-5 * x[k].rows : 0)) *
           noise(&seed, 0.05);
  ck_assert_int_eq(spmvd_predict_fit_work(&coo, x, t, 300, f, &e), 0);
  *g = *f;
  ck_assert_int_eq(spmvd_predict_fit_work(&coo, x, t, 300, g, &e), 0);
  assert_same_tree(f, g);
  ck_assert_int_eq(f->nbag, SPMVD_BAG_TREES);
  for (k = 0; k < 300; k++) {
    double one = one_tree_time(f, -1, &prof, &x[k]);
    double sum = one, lo = one, hi = one;

    for (b = 0; b < f->nbag; b++) {
      double tb = one_tree_time(f, b, &prof, &x[k]);

      differ += fabs(tb - one) > 1e-9 * one;
      sum += tb;
      lo = fmin(lo, tb);
      hi = fmax(hi, tb);
    }
    ck_assert_double_eq_tol(spmvd_predict_time(f, &prof, &x[k]),
                            (sum - lo - hi) / (f->nbag - 1), 1e-9 * sum);
  }
  ck_assert_int_gt(differ, 0);
  /* One tree 100 times too slow everywhere: the others bound the time. */
  *g = *f;
  for (int i = 0; i < SPMVD_TREE_NODES; i++)
    for (int j = 0; j < SPMVD_WORK_TERMS; j++)
      g->bag[3].wc[i][j] *= 100;
  for (k = 0; k < 300; k += 3) {
    double hi = one_tree_time(g, -1, &prof, &x[k]);

    for (b = 0; b < g->nbag; b++)
      if (b != 3)
        hi = fmax(hi, one_tree_time(g, b, &prof, &x[k]));
    ck_assert_double_le(spmvd_predict_time(g, &prof, &x[k]), hi);
  }
  /* Through JSON, bag and all. */
  doc = spmvd_predict_to_json(&pr);
  ck_assert_ptr_nonnull(doc);
  fj = json_object_get(doc, "coo");
  bag = json_object_get(fj, "bag");
  ck_assert_int_eq(json_array_size(bag), SPMVD_BAG_TREES);
  spmv_error_clear(&e);
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), 0);
  assert_same_tree(g, f);
  for (k = 0; k < 300; k += 3)
    ck_assert_double_eq(spmvd_predict_time(g, &prof, &x[k]),
                        spmvd_predict_time(f, &prof, &x[k]));
  /* Malformed bags, each named. */
  json_array_set_new(json_array_get(bag, 2), 0, json_string("tree"));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "bag[2][0] is neither"));
  json_array_remove(json_array_get(bag, 2), 0);
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "bag[2] must be an array of 15"));
  json_array_set(bag, 2, json_array_get(bag, 1));
  json_array_append(bag, json_array_get(bag, 1));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "\"bag\" must be an array of at most 8"));
  json_object_set_new(fj, "bag", json_object());
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  /* Without a bag it is refused; an empty one (every resample failed)
   * predicts from its tree alone, and is how such a fit is stored. */
  json_object_del(fj, "bag");
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "\"bag\""));
  json_object_set_new(fj, "bag", json_array());
  ck_assert_int_eq(spmvd_predict_from_json(doc, &pr2, &e), 0);
  ck_assert_int_eq(g->nbag, 0);
  for (k = 0; k < 300; k += 3)
    ck_assert_double_eq(spmvd_predict_time(g, &prof, &x[k]),
                        one_tree_time(f, -1, &prof, &x[k]));
  json_decref(doc);
  doc = spmvd_predict_to_json(&pr2);
  ck_assert_ptr_nonnull(doc);
  bag = json_object_get(json_object_get(doc, "coo"), "bag");
  ck_assert(json_is_array(bag));
  ck_assert_int_eq(json_array_size(bag), 0);
  json_decref(doc);
}
END_TEST

/* A fit of another basis was fitted on other terms and predicts nothing
 * here: it is refused, as is one that names no basis (from before fits
 * named theirs), whatever else it holds, by a message that says which
 * calibration to run, and nothing is read.  Through the cache the load
 * fails so (the daemon then tunes as without fits) until a calibration
 * stores fits of this basis. */
START_TEST(test_refuse_other_basis)
{
  struct spmvd_device_info dev = device(4, 64, 0);
  struct spmv_config coo = { SPMV_FMT_COO, 256, 0, 0, 0 };
  struct spmvd_predictor pr, back;
  struct spmvd_fit *f = &pr.fit[SPMV_FMT_COO];
  struct spmvd_cache *cache;
  struct spmv_error e;
  char path[4096], db[4200];
  json_t *doc, *fj, *leaf;

  memset(&pr, 0, sizeof pr);
  f->kind = SPMVD_FIT_SADDLE;
  f->cfg = coo;
  f->strip = 256;
  f->a = 0.01;
  f->b = 0.02;
  f->gc = 0.5;
  f->gd = 3;
  f->npoints = 4;
  f->work_npoints = 20;
  f->tree.wc[0][0] = 3;
  f->tree.wc[0][2] = 1e-3;
  f->value_bytes = 8;
  doc = spmvd_predict_to_json(&pr);
  ck_assert_ptr_nonnull(doc);
  fj = json_object_get(doc, "coo");
  ck_assert_int_eq(json_integer_value(json_object_get(fj, "basis")),
                   SPMVD_WORK_BASIS);
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), 0);
  ck_assert_int_eq(back.fit[SPMV_FMT_COO].kind, SPMVD_FIT_SADDLE);
  ck_assert_int_eq(back.fit[SPMV_FMT_COO].work_npoints, 20);

  json_object_set_new(fj, "basis", json_integer(12));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), SPMV_EINVAL);
  ck_assert_str_eq(e.msg, "calibration fit of coo, basis 12, is from an "
                          "older spmvd; run `spmvctl calibrate`");
  ck_assert_int_eq(back.fit[SPMV_FMT_COO].kind, SPMVD_FIT_NONE);
  /* In its own layout too (leaves of 9 terms, no bag, no threads): the
   * basis is what is refused. */
  leaf = json_array_get(json_object_get(fj, "work"), 0);
  json_array_remove(leaf, SPMVD_WORK_TERMS - 1);
  json_array_remove(leaf, SPMVD_WORK_TERMS - 2);
  json_object_del(fj, "bag");
  json_object_del(fj, "threads");
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "basis 12, is from an older spmvd"));
  json_object_set_new(fj, "basis", json_integer(SPMVD_WORK_BASIS + 1));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "basis 17, is from a newer spmvd"));
  ck_assert_ptr_nonnull(strstr(e.msg, "run `spmvctl calibrate`"));
  json_object_del(fj, "basis");
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), SPMV_EINVAL);
  ck_assert_str_eq(e.msg, "calibration fit of coo has no basis: it is from "
                          "an older spmvd; run `spmvctl calibrate`");
  /* Without a work model (the paper's form alone) likewise. */
  json_object_del(fj, "work");
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "has no basis"));
  json_object_set_new(fj, "basis", json_real(15.5));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "\"basis\" is not a positive integer"));
  json_object_set_new(fj, "basis", json_string("16"));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "\"basis\" is not a positive integer"));
  json_object_set_new(fj, "basis", json_integer(SPMVD_WORK_BASIS));
  ck_assert_int_eq(spmvd_predict_from_json(doc, &back, &e), 0);
  ck_assert_int_eq(back.fit[SPMV_FMT_COO].work_npoints, 0);

  /* Stored by an older spmvd: the load names the calibration of its
   * type; a calibration's fits replace it. */
  json_object_set_new(fj, "basis", json_integer(12));
  testdata_tmp(path, sizeof path, "check_predict.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(path));
  snprintf(db, sizeof db, "%s/c.db", path);
  ck_assert_int_eq(spmvd_cache_open(db, 0, &cache, &e), 0);
  ck_assert_int_eq(spmvd_cache_device_put(cache, &dev, &e), 0);
  ck_assert_int_eq(spmvd_cache_calibration_put(cache, dev.device_key,
                                               dev.software_key, SPMV_F32,
                                               SPMV_FMT_COO, fj, &e), 0);
  ck_assert_int_eq(spmvd_predict_load(cache, &dev, SPMV_F32, &back, &e),
                   SPMV_EINVAL);
  ck_assert_str_eq(e.msg, "calibration fit of coo, basis 12, is from an "
                          "older spmvd; run `spmvctl calibrate --dtype f32`");
  ck_assert_int_eq(back.fit[SPMV_FMT_COO].kind, SPMVD_FIT_NONE);
  ck_assert_int_eq(spmvd_predict_load(cache, &dev, SPMV_F64, &back, &e), 0);
  ck_assert_int_eq(spmvd_cache_calibration_put(cache, dev.device_key,
                                               dev.software_key, SPMV_F64,
                                               SPMV_FMT_COO, fj, &e), 0);
  ck_assert_int_eq(spmvd_predict_load(cache, &dev, SPMV_F64, &back, &e),
                   SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "run `spmvctl calibrate`"));
  ck_assert_int_eq(spmvd_predict_save(cache, &dev, SPMV_F32, &pr, &e), 0);
  ck_assert_int_eq(spmvd_predict_load(cache, &dev, SPMV_F32, &back, &e), 1);
  ck_assert_int_eq(back.fit[SPMV_FMT_COO].kind, SPMVD_FIT_SADDLE);
  ck_assert_int_eq(back.fit[SPMV_FMT_COO].work_npoints, 20);
  json_decref(doc);
  spmvd_cache_close(cache);
  unlink(db);
  snprintf(db, sizeof db, "%s/c.db-wal", path);
  unlink(db);
  snprintf(db, sizeof db, "%s/c.db-shm", path);
  unlink(db);
  rmdir(path);
}
END_TEST

/* csr-scalar's L1 term is fitted where the points hold it: a
 * quarter of them near the diagonal (x sectors half the entries) at 0.5
 * to 1 of the device's threads, rows of 34 to 40.  (Its guard keeps it
 * out of a leaf where fewer than two points hold it: fitted on points of
 * random columns alone, it predicts near-diagonal matrices far too
 * slow.) */
START_TEST(test_fit_l1_term)
{
  struct spmvd_pfeat x[40];
  struct spmv_config sc = { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 };
  struct spmvd_fit f;
  struct spmv_error e;
  double t[40], phi[SPMVD_WORK_TERMS];
  int k;

  memset(x, 0, sizeof x);
  for (k = 0; k < 40; k++) {
    x[k].rows = 500 + 13 * k;
    x[k].nnz = (34 + k % 7) * x[k].rows;
    x[k].w_warp = x[k].nnz;
    x[k].rl_max = 34 + k % 7;
    x[k].sectors = k % 4 == 0 ? x[k].nnz / 2 : x[k].nnz;
    spmvd_predict_work_basis(&sc, 0, 1000, &x[k], phi);
    if (k % 4 == 0)
      ck_assert_double_gt(phi[6], 0);
    t[k] = 2 + 1e-3 * x[k].nnz + 2e-3 * x[k].sectors + 5e-3 * phi[6];
  }
  memset(&f, 0, sizeof f);
  f.kind = SPMVD_FIT_SADDLE;
  f.cfg = sc;
  f.strip = 1;
  f.threads = 1000;
  ck_assert_int_eq(spmvd_predict_fit_work(&sc, x, t, 40, &f, &e), 0);
  ck_assert_double_eq_tol(f.tree.wc[0][6], 5e-3, 1e-6);
  ck_assert_double_lt(f.work_err, 1e-6);
}
END_TEST

/* The block share, by hand: 36417 rows are 143 blocks of 256, two
 * on 11 of 132 SMs, so the busiest SM holds 2 where 143/132 is the mean. */
START_TEST(test_block_share)
{
  struct spmv_config sc = { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 };
  struct spmv_config none = { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 };

  ck_assert_double_eq_tol(spmvd_predict_block_share(&sc, 36417, 132),
                          264.0 / 143.0, 1e-12);
  ck_assert_double_eq(spmvd_predict_block_share(&sc, 256.0 * 132, 132), 1);
  ck_assert_double_eq(spmvd_predict_block_share(&sc, 256.0 * 264, 132), 1);
  ck_assert_double_eq(spmvd_predict_block_share(&sc, 1, 132), 132);
  ck_assert_double_eq_tol(spmvd_predict_block_share(&sc, 1300, 4), 8.0 / 6.0,
                          1e-12);
  ck_assert_double_eq(spmvd_predict_block_share(&sc, 36417, 0), 1);
  ck_assert_double_eq(spmvd_predict_block_share(&sc, 0, 132), 1);
  ck_assert_double_eq(spmvd_predict_block_share(&none, 36417, 132), 1);
}
END_TEST

/* Where no SM holds two blocks, the heaviest block's share.  600 rows
 * are three blocks of 256 (the last of 88 rows, three warps); the middle
 * block's rows hold 5 entries, the others 1: w_warp 8 x 32 + 8 x 32 x 5 +
 * 3 x 32 = 1632, w_block 1280.  A fit of the entries alone (1e-3 us each)
 * on 4 SMs then predicts 4 x 1280 / 1632 of them, not the even 4 / 3. */
START_TEST(test_heaviest_block)
{
  struct spmv_csr *A = spmv_csr_new(600, 600, 256 + 256 * 5 + 88);
  struct spmv_config sc = { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 };
  struct spmv_profile prof;
  struct spmvd_pfeat x;
  struct spmvd_fit f;
  int64_t r, k = 0;

  ck_assert_ptr_nonnull(A);
  for (r = 0; r < 600; r++) {
    A->row_ptr[r] = k;
    for (int c = 0; c < (r >= 256 && r < 512 ? 5 : 1); c++) {
      A->col_idx[k] = (int32_t)((r + c) % 600);
      A->val[k++] = 1;
    }
  }
  A->row_ptr[600] = k;
  ck_assert_int_eq(spmv_csr_validate(A, 0, NULL), 0);
  ck_assert_int_eq(spmv_profile_compute(A, &prof, NULL), 0);
  spmvd_predict_features(A, &prof, SPMV_F32, &x);
  spmv_csr_free(A);
  ck_assert_double_eq(x.w_warp, 1632);
  ck_assert_double_eq(x.w_block, 1280);
  memset(&f, 0, sizeof f);
  f.kind = SPMVD_FIT_SADDLE;
  f.cfg = sc;
  f.strip = 1;
  f.work_npoints = 1;
  f.sms = 4;
  f.value_bytes = 4;
  f.tree.wc[0][2] = 1e-3;
  ck_assert_double_eq_tol(spmvd_predict_time(&f, &prof, &x),
                          1e-3 * x.nnz * 4 * 1280 / 1632, 1e-9);
  /* Two blocks an SM: the even share, whatever the heaviest. */
  f.sms = 2;
  ck_assert_double_eq_tol(spmvd_predict_time(&f, &prof, &x),
                          1e-3 * x.nnz * 4 / 3, 1e-9);
  /* Over f64 values: the device's totals. */
  f.sms = 4;
  f.value_bytes = 8;
  ck_assert_double_eq_tol(spmvd_predict_time(&f, &prof, &x), 1e-3 * x.nnz,
                          1e-9);
}
END_TEST

/* A csr-scalar fit over f32 values sees its throughput terms at the
 * busiest SM's share: times made of the entries at that share (2 to 8
 * blocks on 4 SMs) are fitted exactly and predicted so, where the same
 * points over f64 values (the device's totals) are not. */
START_TEST(test_fit_block_share)
{
  struct spmvd_pfeat x[60], y;
  struct spmv_config sc = { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 };
  struct spmv_profile prof;
  struct spmvd_fit f;
  struct spmv_error e;
  double t[60];
  int k, vb;

  memset(x, 0, sizeof x);
  for (k = 0; k < 60; k++) {
    x[k].rows = 300 + 29 * k;
    x[k].nnz = 8 * x[k].rows;
    x[k].w_warp = x[k].nnz;
    x[k].rl_max = 8;
    x[k].sectors = x[k].nnz;
    t[k] = 2 + 1e-3 * spmvd_predict_block_share(&sc, x[k].rows, 4) *
                   x[k].nnz;
  }
  y = x[0];
  y.rows = 1300;
  y.nnz = y.w_warp = y.sectors = 8 * y.rows;
  memset(&prof, 0, sizeof prof);
  prof.rows = (int64_t)y.rows;
  prof.nnz = (int64_t)y.nnz;
  for (vb = 4; vb <= 8; vb += 4) {
    memset(&f, 0, sizeof f);
    f.kind = SPMVD_FIT_SADDLE;
    f.cfg = sc;
    f.strip = 1;
    f.sms = 4;
    f.value_bytes = vb;
    ck_assert_int_eq(spmvd_predict_fit_work(&sc, x, t, 60, &f, &e), 0);
    if (vb == 4) {
      ck_assert_double_lt(f.work_err, 1e-6);
      ck_assert_double_eq_tol(spmvd_predict_time(&f, &prof, &y),
                              2 + 1e-3 * 8.0 / 6.0 * y.nnz, 1e-6);
    } else {
      ck_assert_double_gt(f.work_err, 1e-3);
    }
  }
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

/* The predictor suite. */
static Suite *predict_suite(void)
{
  Suite *s = suite_create("predict");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_fit_saddle_exact_and_noisy);
  tcase_add_test(tc, test_fit_vector);
  tcase_add_test(tc, test_strips);
  tcase_add_test(tc, test_plan_bounds);
  tcase_add_test(tc, test_plan_trimmed);
  tcase_add_test(tc, test_plan_mid);
  tcase_add_test(tc, test_calibrate_end_to_end);
  tcase_add_test(tc, test_calibrate_bound);
  tcase_add_test(tc, test_calib_backend_time);
  tcase_add_test(tc, test_features);
  tcase_add_test(tc, test_features_stream);
  tcase_add_test(tc, test_features_jad);
  tcase_add_test(tc, test_fit_work);
  tcase_add_test(tc, test_fit_tree);
  tcase_add_test(tc, test_fit_bag);
  tcase_add_test(tc, test_refuse_other_basis);
  tcase_add_test(tc, test_fit_l1_term);
  tcase_add_test(tc, test_block_share);
  tcase_add_test(tc, test_heaviest_block);
  tcase_add_test(tc, test_fit_block_share);
  tcase_add_test(tc, test_load_path);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(predict_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
