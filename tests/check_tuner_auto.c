/* check_tuner_auto.c: the auto strategy's shortlist rules per matrix shape,
 * device, value type and L2, and csr-panel's. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "tuner_test.h"

/* auto's shortlist for in at value type dt on gpu with an L2 of l2 bytes
 * (in->dev is gpu). */
static void auto_list(struct spmvd_candidates *c, struct spmvd_tune_input *in,
                      struct spmvd_device_info *gpu, uint64_t l2,
                      enum spmv_dtype dt)
{
  gpu->l2_bytes = l2;
  in->dtype = dt;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, in, c, NULL), 0);
}

/*
 * csr-panel on the cuda backend: exhaustive at BS 512 for each width whose
 * panels its layout takes; auto and model lead with it on long rows over
 * an x of many panels beyond the L2 where rows span over 2^16 columns
 * (denserows_20k_x2000's profile), and auto's list keeps its length; never
 * on the cpu, on few or sparse panels, on narrow rows or within the L2.
 */
START_TEST(test_panel_rules)
{
  struct spmvd_device_info gpu = device(1), cpu = device(0);
  struct spmvd_candidates *c = malloc(sizeof *c), *c0 = malloc(sizeof *c0);
  struct spmvd_tune_input in;
  struct mat m;
  size_t k;

  mat_init(&m, 1000, 7);
  m.p.rows = 20000;
  m.p.nnz = 40000000;
  m.p.rl_min = m.p.rl_max = 2000;
  m.p.rl_mean = 2000;
  m.p.hyb_k = 2000;
  m.p.dia_fill = 400;
  m.p.ndiags = 1000000;
  m.A.cols = 2000000;
  m.A.col_idx[1] = 1999999;  /* a row spanning 2M columns */
  in = input(&m, &gpu);
  in.dtype = SPMV_F32;
  /* Two panels of 16384: x within the caches' reach, no panel. */
  m.p.cols = 20000;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c0, NULL), 0);
  ck_assert_int_eq(count(c0, SPMV_FMT_CSR_PANEL), 0);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c, NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_PANEL), 16);  /* 5 and 2 panels */
  ck_assert(has(c, SPMV_FMT_CSR_PANEL, 512, 1, 4096, 0));
  ck_assert(has(c, SPMV_FMT_CSR_PANEL, 1024, 8, 16384, 0));
  /* 2M columns: 123 panels of 16.3 entries a row. */
  m.p.cols = 2000000;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);
  ck_assert_int_eq(c->n, c0->n);
  ck_assert(c->cfg[0].format == SPMV_FMT_CSR_PANEL && c->cfg[0].bs == 1024 &&
            c->cfg[0].tpr == 4 && c->cfg[0].param == 16384);
  for (k = 1; k < c->n; k++)
    ck_assert(memcmp(&c->cfg[k], &c0->cfg[k - 1], sizeof c->cfg[k]) == 0);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_MODEL, &in, c, NULL), 0);
  ck_assert(c->n == 1 && c->cfg[0].format == SPMV_FMT_CSR_PANEL);
  in.dtype = SPMV_F64;  /* the same in f64 */
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);
  ck_assert(c->cfg[0].format == SPMV_FMT_CSR_PANEL && c->cfg[0].tpr == 4);
  /* Excluded: auto goes without it. */
  in.exclude = &c->cfg[0];
  in.nexclude = 1;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c0, NULL), 0);
  ck_assert_int_eq(count(c0, SPMV_FMT_CSR_PANEL), 0);
  in.nexclude = 0;
  m.p.nnz = 20000000;  /* 1000 a row: 8.1 a slot, TPR 2 */
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);
  ck_assert(c->cfg[0].format == SPMV_FMT_CSR_PANEL && c->cfg[0].tpr == 2);
  m.p.nnz = 40000000;
  /* Within the L2: no panel first. */
  gpu.l2_bytes = (size_t)1 << 40;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_PANEL), 0);
  gpu.l2_bytes = 0;
  /* 100 entries a row: under one a slot at 4096, 0.8 at 16384. */
  m.p.nnz = 2000000;
  m.p.rl_min = m.p.rl_max = 100;
  m.p.rl_mean = 100;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_PANEL), 0);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c, NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_PANEL), 8);
  ck_assert(!has(c, SPMV_FMT_CSR_PANEL, 512, 1, 4096, 0));
  /* Every row within 2^16 columns (csr16's ground): no panel first. */
  m.p.nnz = 40000000;
  m.p.rl_min = m.p.rl_max = 2000;
  m.p.rl_mean = 2000;
  m.A.col_idx[1] = 1;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_PANEL), 0);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_MODEL, &in, c, NULL), 0);
  ck_assert_int_ne(c->cfg[0].format, SPMV_FMT_CSR_PANEL);
  /* The cpu: never. */
  m.A.col_idx[1] = 1999999;
  in.dev = &cpu;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c, NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_PANEL), 0);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_PANEL), 0);
  mat_fini(&m);
  free(c);
  free(c0);
}
END_TEST

/*
 * auto's shortlist per shape, on the test GPU (132 SMs x 2048 threads: a
 * matrix of <= 8448 rows is small).  Rows of 5 (AUTOCSR TPR 2, 4, 8).
 */
START_TEST(test_auto_candidates)
{
  static const struct spmv_config stencil[] = {
    { SPMV_FMT_DIA, 128, 0, 0, 0 }, { SPMV_FMT_SELL16, 128, 0, 32, 1 },
    { SPMV_FMT_CSR16, 128, 4, 0, 0 } };
  /* Short flat rows (mean < 8): a thread or two per row; first as many
   * as the row has (8), in blocks of 512, when the rows fit one wave at 8
   * each (20000).
   * Where rows span < 2^16 columns (all here but one case), on stencils,
   * flat and regular rows, csr-vector and csr-scalar become csr16 at the
   * same TPR (1 for scalar) and sell sell16. */
  static const struct spmv_config flat[] = {
    { SPMV_FMT_CSR16, 512, 8, 0, 0 }, { SPMV_FMT_CSR16, 128, 2, 0, 0 },
    { SPMV_FMT_ELLR_T, 256, 1, 0, 0 }, { SPMV_FMT_CSR16, 128, 1, 0, 0 } };
  static const struct spmv_config flat_big[] = {
    { SPMV_FMT_CSR16, 128, 2, 0, 0 }, { SPMV_FMT_ELLR_T, 256, 1, 0, 0 },
    { SPMV_FMT_CSR16, 128, 1, 0, 0 }, { SPMV_FMT_SELL16, 128, 0, 32, 1 } };
  static const struct spmv_config regular[] = {
    { SPMV_FMT_CSR16, 128, 4, 0, 0 },
    { SPMV_FMT_SELL16, 128, 0, 32, 256 },
    { SPMV_FMT_CSR16, 128, 8, 0, 0 },
    { SPMV_FMT_CSR16, 128, 2, 0, 0 } };
  /* The same beyond the L2: csr-stream16 second. */
  static const struct spmv_config regular_beyond[] = {
    { SPMV_FMT_CSR16, 128, 4, 0, 0 },
    { SPMV_FMT_CSR_STREAM16, 128, 0, 4, 0 },
    { SPMV_FMT_SELL16, 128, 0, 32, 256 },
    { SPMV_FMT_CSR16, 128, 8, 0, 0 } };
  /* Irregular rows within the L2: csr-stream16 at BS 128, k 4 in f64 (in
   * f32 AUTOCSR's largest TPR instead, csr-vector as csr16 there: f64
   * keeps csr-vector off flat rows); 20000 rows fit one wave at 8 threads
   * each: TPR 8 at BS 512 first, so that it wins a tie. */
  static const struct spmv_config irregular[] = {
    { SPMV_FMT_CSR_VECTOR, 512, 8, 0, 0 },
    { SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 },
    { SPMV_FMT_CSR_STREAM16, 128, 0, 4, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 } };
  static const struct spmv_config irregular_f32[] = {
    { SPMV_FMT_CSR16, 512, 8, 0, 0 }, { SPMV_FMT_CSR16, 128, 4, 0, 0 },
    { SPMV_FMT_CSR16, 128, 8, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 } };
  /* 100000 rows (at most 2 threads each in one wave): csr-stream16 second
   * (K 8 in f32), AUTOCSR's least TPR third, no ALG1. */
  static const struct spmv_config irregular_many[] = {
    { SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 },
    { SPMV_FMT_CSR_STREAM16, 128, 0, 4, 0 },
    { SPMV_FMT_CSR_VECTOR, 128, 2, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 } };
  static const struct spmv_config irregular_many_f32[] = {
    { SPMV_FMT_CSR16, 128, 4, 0, 0 },
    { SPMV_FMT_CSR_STREAM16, 128, 0, 8, 0 },
    { SPMV_FMT_CSR16, 128, 2, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 } };
  static const struct spmv_config irregular_many_short[] = {
    { SPMV_FMT_CSR_SCALAR, 128, 0, 0, 0 },
    { SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 },
    { SPMV_FMT_CSR_STREAM16, 128, 0, 4, 0 },
    { SPMV_FMT_CSR_VECTOR, 128, 2, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 } };
  static const struct spmv_config irregular_many_short_f32[] = {
    { SPMV_FMT_CSR_SCALAR, 128, 0, 0, 0 },
    { SPMV_FMT_CSR16, 128, 4, 0, 0 },
    { SPMV_FMT_CSR_STREAM16, 128, 0, 8, 0 },
    { SPMV_FMT_CSR16, 128, 2, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 } };
  /* Skewed within the L2: csr-adaptive first (a fast leader, so that
   * cuSPARSE drops on its first run); beyond it cuSPARSE first and
   * csr-stream in csr-merge's place. */
  static const struct spmv_config skewed[] = {
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 2, 0 },
    { SPMV_FMT_CUSPARSE, 0, 0, 2, 0 }, { SPMV_FMT_CUSPARSE, 0, 0, 1, 0 },
    { SPMV_FMT_CSR_MERGE, 256, 0, 0, 0 } };
  static const struct spmv_config skewed_beyond[] = {
    { SPMV_FMT_CUSPARSE, 0, 0, 2, 0 }, { SPMV_FMT_CUSPARSE, 0, 0, 1, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 2, 0 },
    { SPMV_FMT_CSR_STREAM, 256, 0, 4, 0 } };
  /* Small: TPR the mean row's power of two (>= 4) first, at most 4, in
   * blocks of 512, and in f32 too csr-vector (no csr16). */
  static const struct spmv_config small[] = {
    { SPMV_FMT_CSR_VECTOR, 512, 8, 0, 0 },
    { SPMV_FMT_CSR_VECTOR, 512, 32, 0, 0 },
    { SPMV_FMT_CSR_VECTOR, 512, 16, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 2, 0 } };
  /* Small with rows that vary (cv > 1, not skewed): TPR 32 in blocks of
   * 256 in place of TPR 8. */
  static const struct spmv_config small_varied[] = {
    { SPMV_FMT_CSR_VECTOR, 512, 32, 0, 0 },
    { SPMV_FMT_CSR_VECTOR, 512, 16, 0, 0 },
    { SPMV_FMT_CSR_VECTOR, 256, 32, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 2, 0 } };
  /* Small and skewed: csr-vector at TPR 32 before csr-adaptive at base
   * 2, so that it wins a tie. */
  static const struct spmv_config small_skewed[] = {
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 },
    { SPMV_FMT_CSR_VECTOR, 256, 32, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 2, 0 },
    { SPMV_FMT_CUSPARSE, 0, 0, 1, 0 } };
  static const struct spmv_config cpu_stencil[] = {
    { SPMV_FMT_DIA, 0, 0, 0, 0 }, { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 },
    { SPMV_FMT_SELL, 0, 0, 32, 1 }, { SPMV_FMT_CSR_ADAPTIVE, 0, 0, 0, 0 } };
  struct spmvd_device_info gpu = device(1), cpu = device(0);
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_tune_input in;
  struct spmvd_predictor pr;
  struct spmv_config excl;
  struct mat m;

#define AUTO_IS(list)                                                       \
  do {                                                                      \
    ck_assert_int_eq(                                                       \
        spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL), 0);      \
    expect_list(c, list, sizeof list / sizeof list[0]);                     \
  } while (0)
  /* An H200's L2: the test matrices fit in it (the bandwidth regime
   * beyond it is checked below). */
  gpu.l2_bytes = (uint64_t)60 << 20;
  /* 20000 rows of 5, 5 full diagonals (dia_fill 1): a stencil. */
  mat_init(&m, 20000, 5);
  in = input(&m, &gpu);
  AUTO_IS(stencil);
  /* The predictor does not change the shortlist. */
  fake_predictor(&pr);
  in.pred = &pr;
  AUTO_IS(stencil);
  in.pred = NULL;
  /* A quarantined configuration is never proposed. */
  excl = stencil[0];
  in.exclude = &excl;
  in.nexclude = 1;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL),
                   0);
  expect_list(c, stencil + 1, 2);
  in.nexclude = 0;
  /* Scattered diagonals, equal rows (ell_fill 1): flat. */
  m.p.dia_fill = 50;
  AUTO_IS(flat);
  m.p.rows = 100000;
  AUTO_IS(flat_big);
  /* ... over half the L2 (where the worker writes it back into the L2),
   * hyb first, then in f64 the ELL-like layouts alone, in f32 the same
   * but the last. */
  {
    struct spmv_config csr = { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 };
    double b = spmvd_tuner_bytes(&m.p, &csr, in.dtype);
    static const struct spmv_config flat_half[] = {
      { SPMV_FMT_HYB, 256, 0, 0, 0 }, { SPMV_FMT_ELL, 256, 0, 0, 0 },
      { SPMV_FMT_ELLR_T, 256, 1, 0, 0 }, { SPMV_FMT_SELL16, 128, 0, 32, 1 } };
    static const struct spmv_config flat_half_f32[] = {
      { SPMV_FMT_HYB, 256, 0, 0, 0 }, { SPMV_FMT_CSR16, 128, 2, 0, 0 },
      { SPMV_FMT_ELLR_T, 256, 1, 0, 0 }, { SPMV_FMT_CSR16, 128, 1, 0, 0 } };

    gpu.l2_bytes = (uint64_t)(1.5 * b);
    AUTO_IS(flat_half);
    in.dtype = SPMV_F32;
    gpu.l2_bytes = (uint64_t)(1.5 * spmvd_tuner_bytes(&m.p, &csr, in.dtype));
    AUTO_IS(flat_half_f32);
    in.dtype = SPMV_F64;
    gpu.l2_bytes = (uint64_t)(2.1 * b);
    AUTO_IS(flat_big);
  }
  /* ... beyond the L2, hyb first. */
  gpu.l2_bytes = 1 << 20;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL),
                   0);
  ck_assert_int_eq(c->n, 4);
  ck_assert_int_eq(c->cfg[0].format, SPMV_FMT_HYB);
  gpu.l2_bytes = (uint64_t)60 << 20;
  m.p.rows = 20000;
  mat_fini(&m);
  /* Flat rows of 80: the ELLR-T model's pick leads, 4 in all. */
  mat_init(&m, 20000, 80);
  m.p.dia_fill = 50;
  in = input(&m, &gpu);
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL),
                   0);
  ck_assert_int_eq(c->n, 4);
  ck_assert_int_eq(c->cfg[0].format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(c->cfg[0].bs, model_pick(&m, &gpu).bs);
  ck_assert_int_eq(c->cfg[0].tpr, model_pick(&m, &gpu).tpr);
  /* ... then the same at half its T. */
  ck_assert_int_gt(c->cfg[0].tpr, 1);
  ck_assert_int_eq(c->cfg[1].format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(c->cfg[1].bs, c->cfg[0].bs);
  ck_assert_int_eq(c->cfg[1].tpr, c->cfg[0].tpr / 2);
  mat_fini(&m);
  mat_init(&m, 20000, 5);
  m.p.dia_fill = 50;
  in = input(&m, &gpu);
  /* cv 0.2 and ell_fill 2: regular (sell sorts, sigma 256); beyond the
   * L2 (1.3 MB of CSR here) csr-stream16 joins, beyond 4x sell leads. */
  m.p.rl_cv = 0.2;
  m.p.ell_fill = 2;
  AUTO_IS(regular);
  /* The same list in f32: rows this short keep AUTOCSR's TPRs (the f32
   * eighth-of-the-row rule is for rows of 100 or more). */
  in.dtype = SPMV_F32;
  AUTO_IS(regular);
  in.dtype = SPMV_F64;
  gpu.l2_bytes = 1 << 20;
  AUTO_IS(regular_beyond);
  gpu.l2_bytes = 256 << 10;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL),
                   0);
  ck_assert_int_eq(c->cfg[0].format, SPMV_FMT_SELL16);
  ck_assert_int_eq(c->cfg[0].param2, 256);
  ck_assert_int_eq(c->cfg[1].format, SPMV_FMT_CSR_STREAM16);
  /* A row spanning 70000 columns: sell with 32-bit columns instead. */
  m.A.cols = m.p.cols = 70000;
  m.A.col_idx[1] = 69999;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c, NULL),
                   0);
  ck_assert_int_eq(c->cfg[0].format, SPMV_FMT_SELL);
  ck_assert_int_eq(c->cfg[0].param2, 256);
  ck_assert_int_eq(count(c, SPMV_FMT_SELL16), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR16), 0);
  ck_assert_int_gt(count(c, SPMV_FMT_CSR_VECTOR), 0);
  m.A.cols = m.p.cols = 20000;
  m.A.col_idx[1] = 1;
  gpu.l2_bytes = (uint64_t)60 << 20;
  {
    /* Regular rows of 64 (AUTOCSR 8, 16, 32): TPR 8, an eighth of the
     * row, rather than 32, within the L2 and beyond it, in both types
     * (within the L2 the profile's pick is that TPR already: 3 in all). */
    struct mat r;
    struct spmvd_tune_input ri;
    uint64_t l2[] = { (uint64_t)60 << 20, 1 << 20 };

    regular_rows(&r, 64);
    ri = input(&r, &gpu);
    for (int k = 0; k < 4; k++) {
      auto_list(c, &ri, &gpu, l2[k % 2], k < 2 ? SPMV_F64 : SPMV_F32);
      ck_assert_int_ge(c->n, 3);
      ck_assert(has(c, SPMV_FMT_CSR16, 128, 8, 0, 0));
      ck_assert(!has(c, SPMV_FMT_CSR16, 128, 32, 0, 0));
      /* AUTOCSR's middle TPR, 16: in f64 csr-vector stays (kernels v6
       * load its next columns ahead there, csr16's not), in f32 csr16. */
      ck_assert(has(c, k < 2 ? SPMV_FMT_CSR_VECTOR : SPMV_FMT_CSR16, 128, 16,
                    0, 0));
      ck_assert(!has(c, k < 2 ? SPMV_FMT_CSR16 : SPMV_FMT_CSR_VECTOR, 128, 16,
                     0, 0));
    }
    mat_fini(&r);
    /* Rows of 72 (an eighth of 16): in f64 csr16 at TPR 32 in sell's
     * place, TPR 8 and 16 kept, within the L2 and beyond it (17 MB of CSR
     * over 8 MB, short of sell's lead); f32 keeps sell and no TPR 32. */
    l2[1] = 8 << 20;
    regular_rows(&r, 72);
    ri = input(&r, &gpu);
    for (int k = 0; k < 4; k++) {
      auto_list(c, &ri, &gpu, l2[k % 2], k < 2 ? SPMV_F64 : SPMV_F32);
      ck_assert_int_eq(c->n, (k == 2 ? 3 : 4));
      ck_assert(has(c, SPMV_FMT_CSR16, 128, 32, 0, 0) == (k < 2));
      ck_assert(has(c, SPMV_FMT_CSR16, 128, 8, 0, 0));
      ck_assert(has(c, k < 2 ? SPMV_FMT_CSR_VECTOR : SPMV_FMT_CSR16, 128, 16,
                    0, 0));
      /* Beyond the L2 csr-stream16 second; sell where room is left. */
      ck_assert(has(c, SPMV_FMT_CSR_STREAM16, 128, 0, k < 2 ? 4 : 8, 0) == (k % 2));
      ck_assert_int_eq(count(c, SPMV_FMT_SELL16), k == 1 ? 0 : 1);
    }
    mat_fini(&r);
    /* Rows of 120 (pdb1HYS's 119): TPR 32 first in f64; in f32 an eighth
     * of the row, 16, first and no 32.  Rows of 480 (wbp256's 479): 32
     * first in both. */
    for (int k = 0; k < 4; k++) {
      int len = k < 2 ? 120 : 480;
      enum spmv_dtype dt = k % 2 ? SPMV_F32 : SPMV_F64;

      regular_rows(&r, len);
      ri = input(&r, &gpu);
      auto_list(c, &ri, &gpu, (uint64_t)60 << 20, dt);
      ck_assert_int_ge(c->n, 3);
      ck_assert_int_eq(c->cfg[0].bs, 128);
      ck_assert_int_eq(c->cfg[0].tpr, len == 120 && dt == SPMV_F32 ? 16 : 32);
      ck_assert(has(c, c->cfg[0].format, 128, 32, 0, 0) ==
                !(len == 120 && dt == SPMV_F32));
      ck_assert(has(c, SPMV_FMT_CSR16, 128, 16, 0, 0) ||
                has(c, SPMV_FMT_CSR_VECTOR, 128, 16, 0, 0));
      /* The model strategy's pick is the shortlist's head here. */
      ck_assert_int_eq(
          spmvd_tuner_candidates(SPMVD_STRATEGY_MODEL, &ri, c, NULL), 0);
      ck_assert_int_eq(c->cfg[0].tpr, len == 120 && dt == SPMV_F32 ? 16 : 32);
      mat_fini(&r);
    }
    gpu.l2_bytes = (uint64_t)60 << 20;
  }
  /* cv 0.6, rows up to 20: irregular. */
  m.p.rl_cv = 0.6;
  m.p.rl_max = 20;
  m.p.ell_fill = 10;
  AUTO_IS(irregular);
  in.dtype = SPMV_F32;
  AUTO_IS(irregular_f32);
  in.dtype = SPMV_F64;
  m.p.rows = 100000;
  AUTO_IS(irregular_many);
  in.dtype = SPMV_F32;
  AUTO_IS(irregular_many_f32);
  /* Every row of 8 or fewer: csr-scalar first, the rest as before, and
   * in f32 not made csr16 at TPR 1. */
  m.p.rl_max = 8;
  in.dtype = SPMV_F64;
  AUTO_IS(irregular_many_short);
  in.dtype = SPMV_F32;
  AUTO_IS(irregular_many_short_f32);
  in.dtype = SPMV_F64;
  m.p.rows = 20000;
  /* A row of 1000 (> 16 x 5) and cv 5: skewed; mean < 8: base 2. */
  m.p.rl_max = 1000;
  m.p.rl_cv = 5;
  AUTO_IS(skewed);
  gpu.l2_bytes = 1 << 20;
  AUTO_IS(skewed_beyond);
  gpu.l2_bytes = (uint64_t)60 << 20;
  /* On the cpu: dia, csr, sell, csr-adaptive; no cusparse, no BS. */
  mat_fini(&m);
  mat_init(&m, 20000, 5);
  in = input(&m, &cpu);
  AUTO_IS(cpu_stencil);
  mat_fini(&m);
  /* 5000 rows: small (a warp per row fills less than a wave). */
  mat_init(&m, 5000, 5);
  in = input(&m, &gpu);
  m.p.dia_fill = 50;
  m.p.rl_cv = 0.6;
  AUTO_IS(small);
  in.dtype = SPMV_F32;
  AUTO_IS(small);
  m.p.rl_cv = 1.3;
  AUTO_IS(small_varied);
  in.dtype = SPMV_F64;
  AUTO_IS(small_varied);
  m.p.rl_max = 1000;
  m.p.rl_cv = 5;
  AUTO_IS(small_skewed);
#undef AUTO_IS
  mat_fini(&m);
  free(c);
}
END_TEST

/* The shortlist rules suite. */
static Suite *tuner_auto_suite(void)
{
  Suite *s = suite_create("tuner_auto");
  TCase *tc = tcase_create("core");

  /* As check_tuner's (where an --enable-asan build under a parallel make
   * check took test_exclude_formats past check's default 4 s). */
  tcase_set_timeout(tc, 30);

  tcase_add_test(tc, test_panel_rules);
  tcase_add_test(tc, test_auto_candidates);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(tuner_auto_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
