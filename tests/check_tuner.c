/* check_tuner.c: the strategies and their candidates: names, AUTOCSR's
 * TPRs, exhaustive's and trial's lists, errors, excluded formats, the
 * bytes a configuration moves. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "tuner_test.h"

START_TEST(test_strategy_names)
{
  enum spmvd_strategy s;
  struct spmv_error e;
  int k;

  for (k = 0; k < SPMVD_STRATEGY_COUNT; k++) {
    ck_assert_int_eq(spmvd_strategy_parse(spmvd_strategy_name(k), &s, &e), 0);
    ck_assert_int_eq(s, k);
  }
  ck_assert_str_eq(spmvd_strategy_name(SPMVD_STRATEGY_AUTO), "auto");
  ck_assert_ptr_null(spmvd_strategy_name(SPMVD_STRATEGY_COUNT));
  ck_assert_int_eq(spmvd_strategy_parse("fastest", &s, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "\"fastest\""));
  ck_assert_ptr_nonnull(strstr(e.msg, "exhaustive"));
}
END_TEST

START_TEST(test_autocsr_tpr)
{
  int t[3];

  spmvd_tuner_autocsr_tpr(10, t);
  ck_assert(t[0] == 2 && t[1] == 4 && t[2] == 8);
  spmvd_tuner_autocsr_tpr(20, t);
  ck_assert(t[0] == 4 && t[1] == 8 && t[2] == 16);
  spmvd_tuner_autocsr_tpr(40, t);
  ck_assert(t[0] == 8 && t[1] == 16 && t[2] == 32);
  spmvd_tuner_autocsr_tpr(15.9, t);
  ck_assert_int_eq(t[0], 2);
  spmvd_tuner_autocsr_tpr(16, t);
  ck_assert_int_eq(t[0], 4);
  spmvd_tuner_autocsr_tpr(32, t);
  ck_assert_int_eq(t[0], 4);
  spmvd_tuner_autocsr_tpr(32.1, t);
  ck_assert_int_eq(t[0], 8);
}
END_TEST

/*
 * Per BS (64, 128, 256, 512): csr-scalar 1, csr-vector 5, csr-adaptive 2
 * (base 0 and 2), csr-merge 1, csr-stream 3 (k 2, 4, 8), ellr-t 6, ell 1,
 * coo 1, hyb 1, dia 1, jad 1, sell 2, and where every row spans < 2^16
 * columns sell16 2, csr16 6 and csr-stream16 3 = 36; plus cusparse ALG1
 * and ALG2, its sliced ELL (no padding: rows of 7) and its BSR (2x2
 * blocks hold the band's 7 entries a row in 8 values): 4 * 36 + 4 = 148.
 */
START_TEST(test_exhaustive_counts)
{
  struct spmvd_device_info gpu = device(1), cpu = device(0);
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_tune_input in;
  struct mat m;
  size_t k;

  mat_init(&m, 1000, 7);
  in = input(&m, &gpu);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 148);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_STREAM16), 12);
  ck_assert_int_eq(count(c, SPMV_FMT_ELLR_T), 24);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_STREAM), 12);
  ck_assert(has(c, SPMV_FMT_CSR_STREAM, 512, 0, 8, 0));
  ck_assert_int_eq(count(c, SPMV_FMT_SELL16), 8);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR16), 24);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_VECTOR), 20);
  ck_assert_int_eq(count(c, SPMV_FMT_CUSPARSE), 4);
  ck_assert(has(c, SPMV_FMT_CUSPARSE, 0, 0, SPMV_CUSPARSE_SELL, 0));
  ck_assert(has(c, SPMV_FMT_CUSPARSE, 0, 0, SPMV_CUSPARSE_BSR, 0));
  ck_assert(has(c, SPMV_FMT_SELL, 512, 0, 32, 256));
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 64, 32, 0, 0));
  /* Huge fill: no ell, no dia (4 each fewer). */
  m.p.ell_fill = 50;
  m.p.dia_fill = 400;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 140);
  ck_assert_int_eq(count(c, SPMV_FMT_ELL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_DIA), 0);
  /* Low fill but too many diagonals: no dia. */
  m.p.ell_fill = 3;
  m.p.dia_fill = 1.5;
  m.p.ndiags = 2000;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 144);
  ck_assert_int_eq(count(c, SPMV_FMT_ELL), 4);
  /* 1001 rows: only 7 divides them, and 7x7 blocks would hold the band in
   * twice its entries: no BSR. */
  mat_fini(&m);
  mat_init(&m, 1001, 7);
  in = input(&m, &gpu);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CUSPARSE), 3);
  ck_assert(!has(c, SPMV_FMT_CUSPARSE, 0, 0, SPMV_CUSPARSE_BSR, 0));
  mat_fini(&m);
  mat_init(&m, 1000, 7);
  m.p.ndiags = 2000;  /* as before: no dia */
  in = input(&m, &gpu);
  /* The cpu: BS 0, no csr-vector (it is csr-scalar there), no cusparse:
   * scalar, adaptive x 2, merge, csr-stream (its k too is 0), ellr-t x 6,
   * ell, coo, hyb, jad, sell x 2, sell16 x 2, csr16 (its TPR too is 0),
   * csr-stream16. */
  in.dev = &cpu;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 21);
  ck_assert(has(c, SPMV_FMT_CSR_STREAM, 0, 0, 0, 0));
  /* A row spanning 70000 columns: no sell16, no csr16, no csr-stream16. */
  m.A.cols = 70000;
  m.A.col_idx[1] = 69999;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 17);
  ck_assert_int_eq(count(c, SPMV_FMT_SELL16), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_STREAM16), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR16), 0);
  for (k = 0; k < c->n; k++) {
    ck_assert_int_eq(c->cfg[k].bs, 0);
    ck_assert_int_ne(c->cfg[k].format, SPMV_FMT_CSR_VECTOR);
    ck_assert_int_ne(c->cfg[k].format, SPMV_FMT_CUSPARSE);
  }
  mat_fini(&m);
  free(c);
}
END_TEST

START_TEST(test_trial_candidates)
{
  struct spmvd_device_info gpu = device(1);
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_tune_input in;
  struct spmv_config pick;
  struct mat m;

  mat_init(&m, 5000, 10);
  in = input(&m, &gpu);
  pick = model_pick(&m, &gpu);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_TRIAL, &in, c, NULL),
                   0);
  ck_assert_int_eq(c->n, 8);  /* + dia: 10 full diagonals, dia_fill 1 */
  ck_assert(has(c, SPMV_FMT_DIA, 128, 0, 0, 0));
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 2, 0, 0));
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0));
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 8, 0, 0));
  ck_assert(has(c, SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0));
  ck_assert(has(c, SPMV_FMT_ELLR_T, pick.bs, pick.tpr, 0, 0));
  ck_assert(has(c, SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
  ck_assert(has(c, SPMV_FMT_CUSPARSE, 0, 0, 2, 0));
  mat_fini(&m);
  /* Mean 40: TPR 8, 16, 32. */
  mat_init(&m, 5000, 40);
  in = input(&m, &gpu);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_TRIAL, &in, c, NULL),
                   0);
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 8, 0, 0));
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 16, 0, 0));
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 32, 0, 0));
  ck_assert(!has(c, SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0));
  mat_fini(&m);
  /* A row of 10^6 entries: the ELLR-T layout would be 3 x 10^5 times the
   * CSR bytes, so trial leaves the model's pick out. */
  mat_init(&m, 5000, 40);
  in = input(&m, &gpu);
  m.p.rl_max = 1000000;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_TRIAL, &in, c, NULL),
                   0);
  ck_assert_int_eq(count(c, SPMV_FMT_ELLR_T), 0);
  mat_fini(&m);
  free(c);
}
END_TEST

START_TEST(test_strategy_errors)
{
  struct spmvd_device_info cpu = device(0), gpu = device(1);
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_tune_input in;
  struct spmv_error e;
  struct mat m;

  mat_init(&m, 100, 3);
  in = input(&m, &cpu);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_MODEL, &in, c, &e),
                   SPMV_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(e.msg, "needs a GPU"));
  in.dev = &gpu;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_PREDICT, &in, c, &e),
                   SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "not calibrated"));
  /* trial on the cpu still has candidates: csr-scalar, csr-adaptive and
   * dia (3 full diagonals). */
  in.dev = &cpu;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_TRIAL, &in, c, &e),
                   0);
  ck_assert_int_eq(c->n, 3);
  mat_fini(&m);
  free(c);
}
END_TEST

/*
 * The operator's exclude_formats: no strategy proposes an excluded format
 * (on a stencil, regular rows and skewed rows, on the GPU and the cpu, for
 * each format alone); a strategy left with nothing says so; the 16-bit
 * layouts give way to their 32-bit twins in auto's shortlist; predict
 * takes the best allowed format.
 */
START_TEST(test_exclude_formats)
{
  static const enum spmvd_strategy strats[] = {
    SPMVD_STRATEGY_EXHAUSTIVE, SPMVD_STRATEGY_TRIAL, SPMVD_STRATEGY_AUTO,
    SPMVD_STRATEGY_MODEL, SPMVD_STRATEGY_PREDICT };
  static const struct spmv_config stencil32[] = {
    { SPMV_FMT_DIA, 128, 0, 0, 0 }, { SPMV_FMT_SELL, 128, 0, 32, 1 },
    { SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 } };
  struct spmvd_device_info devs[2] = { device(1), device(0) };
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_tune_input in;
  struct spmvd_predictor pr;
  struct spmv_error e;
  struct mat m;
  int shape, d, f, rc;
  size_t k;

  fake_predictor(&pr);
  devs[0].l2_bytes = (uint64_t)60 << 20;
  for (shape = 0; shape < 3; shape++) {
    if (shape == 0)
      mat_init(&m, 20000, 5);  /* stencil: 5 full diagonals */
    else
      regular_rows(&m, 8);
    if (shape == 2) {  /* one long row: skewed */
      m.p.rl_max = 5000;
      m.p.rl_cv = 4;
    }
    for (d = 0; d < 2; d++)
      for (f = 0; f < SPMV_FMT_COUNT; f++)
        for (k = 0; k < sizeof strats / sizeof strats[0]; k++) {
          in = input(&m, &devs[d]);
          /* The predictor (its features: the slow part) where it is used. */
          if (strats[k] == SPMVD_STRATEGY_PREDICT ||
              strats[k] == SPMVD_STRATEGY_TRIAL)
            in.pred = &pr;
          in.exclude_formats = 1u << f;
          rc = spmvd_tuner_candidates(strats[k], &in, c, &e);
          if (rc != 0) {
            ck_assert_msg(strstr(e.msg, "no candidate left") != NULL ||
                              strstr(e.msg, "needs a GPU") != NULL,
                          "%s without %s: %s", spmvd_strategy_name(strats[k]),
                          spmv_format_name(f), e.msg);
            continue;
          }
          ck_assert_msg(count(c, f) == 0, "%s on shape %d proposes %s",
                        spmvd_strategy_name(strats[k]), shape,
                        spmv_format_name(f));
        }
    mat_fini(&m);
  }
  /* The stencil's sell16 and csr16 become sell and csr-vector. */
  mat_init(&m, 20000, 5);
  in = input(&m, &devs[0]);
  in.exclude_formats = (1u << SPMV_FMT_SELL16) | (1u << SPMV_FMT_CSR16);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL),
                   0);
  expect_list(c, stencil32, 3);
  /* predict: csr-scalar is predicted best; without it, jad. */
  in.exclude_formats = 1u << SPMV_FMT_CSR_SCALAR;
  in.pred = &pr;
  ck_assert_int_eq(
      spmvd_tuner_candidates(SPMVD_STRATEGY_PREDICT, &in, c, NULL), 0);
  ck_assert_int_eq(c->n, 1);
  ck_assert_int_eq(c->cfg[0].format, SPMV_FMT_JAD);
  /* model: where the profile's choice is excluded, the ELLR-T model's. */
  mat_fini(&m);
  regular_rows(&m, 8);
  in = input(&m, &devs[0]);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_MODEL, &in, c, NULL),
                   0);
  ck_assert_int_eq(c->n, 1);
  ck_assert_int_ne(c->cfg[0].format, SPMV_FMT_ELLR_T);
  /* (csr-vector, then csr16 where csr-vector becomes csr16.) */
  for (k = 0; k < 3 && c->cfg[0].format != SPMV_FMT_ELLR_T; k++) {
    in.exclude_formats |= 1u << c->cfg[0].format;
    ck_assert_int_eq(
        spmvd_tuner_candidates(SPMVD_STRATEGY_MODEL, &in, c, NULL), 0);
    ck_assert_int_eq(c->n, 1);
    ck_assert(!(in.exclude_formats & (1u << c->cfg[0].format)));
  }
  ck_assert_int_eq(c->cfg[0].format, SPMV_FMT_ELLR_T);
  /* Every format excluded: nothing to race. */
  in.exclude_formats = (1u << SPMV_FMT_COUNT) - 1;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, &e),
                   SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "no candidate left"));
  mat_fini(&m);
  free(c);
}
END_TEST

/* csr f64: nnz * 12 + (rows + 1) * 4 + cols * 8 + rows * 8; ell pads. */
START_TEST(test_bytes)
{
  struct spmv_config csr = { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 };
  struct spmv_config ell = { SPMV_FMT_ELL, 256, 0, 0, 0 };
  struct mat m;

  mat_init(&m, 1000, 5);
  ck_assert_double_eq(spmvd_tuner_bytes(&m.p, &csr, SPMV_F64),
                      5000.0 * 12 + 1001 * 4 + 1000 * 8 + 1000 * 8);
  ck_assert_double_eq(spmvd_tuner_bytes(&m.p, &csr, SPMV_F32),
                      5000.0 * 8 + 1001 * 4 + 1000 * 4 + 1000 * 4);
  m.p.rl_max = 50;
  ck_assert_double_eq(spmvd_tuner_bytes(&m.p, &ell, SPMV_F64),
                      1000.0 * 50 * 12 + 1000 * 8 + 1000 * 8);
  mat_fini(&m);
}
END_TEST

/* The strategies suite. */
static Suite *tuner_suite(void)
{
  Suite *s = suite_create("tuner");
  TCase *tc = tcase_create("core");

  /* Well under a second here; an --enable-asan build under a parallel make
   * check took test_exclude_formats past check's default 4 s. */
  tcase_set_timeout(tc, 30);

  tcase_add_test(tc, test_strategy_names);
  tcase_add_test(tc, test_autocsr_tpr);
  tcase_add_test(tc, test_exhaustive_counts);
  tcase_add_test(tc, test_trial_candidates);
  tcase_add_test(tc, test_strategy_errors);
  tcase_add_test(tc, test_exclude_formats);
  tcase_add_test(tc, test_bytes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(tuner_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
