/* check_predict.c: the statistical predictor's fits: the paper's saddle
 * and csr-vector forms recovering known coefficients, the work model's
 * fit, its trees and their bootstrap bag, the block share. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict_test.h"
#include "spmvd_predict.h"

/* A deterministic noise factor in [1 - amp, 1 + amp]. */
static double noise(unsigned *s, double amp)
{
  *s = *s * 1664525u + 1013904223u;
  return 1 + amp * (2.0 * (*s >> 8) / (double)(1u << 24) - 1);
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

/* The predictor's fits suite. */
static Suite *predict_suite(void)
{
  Suite *s = suite_create("predict");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_fit_saddle_exact_and_noisy);
  tcase_add_test(tc, test_fit_vector);
  tcase_add_test(tc, test_fit_work);
  tcase_add_test(tc, test_fit_tree);
  tcase_add_test(tc, test_fit_bag);
  tcase_add_test(tc, test_fit_l1_term);
  tcase_add_test(tc, test_block_share);
  tcase_add_test(tc, test_heaviest_block);
  tcase_add_test(tc, test_fit_block_share);
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
