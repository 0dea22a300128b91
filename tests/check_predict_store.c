/* check_predict_store.c: a calibration end to end through the fake device,
 * its fits through JSON and the cache, and the refusal of fits of another
 * basis. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predict_test.h"
#include "spmvd_cache.h"
#include "spmvd_predict.h"
#include "testdata.h"

/* Calibrates a tiny GPU (S = 128 rows per strip, 8 for csr-vector) through
 * the fake device; every fit must recover the truth. */
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

/* The fits' storage suite. */
static Suite *predict_store_suite(void)
{
  Suite *s = suite_create("predict_store");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_calibrate_end_to_end);
  tcase_add_test(tc, test_refuse_other_basis);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(predict_store_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
