/* check_tuner.c: strategies, candidate rules and the race with a fake
 * timing callback. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"

/* An H100-like GPU, or the cpu backend. */
static struct spmvd_device_info device(int cuda)
{
  struct spmvd_device_info d;

  memset(&d, 0, sizeof d);
  snprintf(d.backend, sizeof d.backend, "%s", cuda ? "cuda" : "cpu");
  snprintf(d.name, sizeof d.name, "%s", cuda ? "Test GPU" : "Test CPU");
  d.sms = cuda ? 132 : 8;
  d.warp_size = cuda ? 32 : 1;
  d.max_threads_per_sm = cuda ? 2048 : 1;
  d.max_blocks_per_sm = cuda ? 32 : 1;
  d.max_threads_per_block = cuda ? 1024 : 1;
  return d;
}

/* A matrix of `rows` rows of `len` entries (row_ptr only) and its profile. */
struct mat {
  struct spmv_csr A;
  struct spmv_profile p;
};

static void mat_init(struct mat *m, int64_t rows, int len)
{
  int64_t i;

  memset(m, 0, sizeof *m);
  m->A.rows = m->A.cols = rows;
  m->A.nnz = rows * len;
  m->A.row_ptr = malloc((size_t)(rows + 1) * sizeof *m->A.row_ptr);
  m->A.col_idx = malloc((size_t)(rows * len + 1) * sizeof *m->A.col_idx);
  for (i = 0; i <= rows; i++)
    m->A.row_ptr[i] = i * len;
  /* Columns from the diagonal on (wrapping): every row spans < 2^16
   * columns, so sell16 applies; tests that need wide rows widen one. */
  for (i = 0; i < rows * len; i++)
    m->A.col_idx[i] = (int32_t)((i / len + i % len) % rows);
  m->p.rows = m->p.cols = rows;
  m->p.nnz = rows * len;
  m->p.rl_min = m->p.rl_max = len;
  m->p.rl_mean = len;
  m->p.ell_fill = 1;
  m->p.dia_fill = 1;
  m->p.ndiags = len;
  m->p.hyb_k = len;
}

static void mat_fini(struct mat *m)
{
  free(m->A.row_ptr);
  free(m->A.col_idx);
}

/* The input for matrix m on dev. */
static struct spmvd_tune_input input(const struct mat *m,
                                     const struct spmvd_device_info *dev)
{
  struct spmvd_tune_input in;

  memset(&in, 0, sizeof in);
  in.A = &m->A;
  in.prof = &m->p;
  in.dtype = SPMV_F64;
  in.dev = dev;
  return in;
}

/* Whether c lists cfg. */
static int has(const struct spmvd_candidates *c, enum spmv_format f, int bs,
               int tpr, int param, int param2)
{
  size_t k;

  for (k = 0; k < c->n; k++)
    if (c->cfg[k].format == f && c->cfg[k].bs == bs && c->cfg[k].tpr == tpr &&
        c->cfg[k].param == param && c->cfg[k].param2 == param2)
      return 1;
  return 0;
}

/* 20000 regular rows of len (cv 0.2, ELL fill 2, no diagonal band). */
static void regular_rows(struct mat *m, int len)
{
  mat_init(m, 20000, len);
  m->p.dia_fill = 50;
  m->p.rl_cv = 0.2;
  m->p.ell_fill = 2;
}

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

/* How many candidates of format f c lists. */
static int count(const struct spmvd_candidates *c, enum spmv_format f)
{
  size_t k;
  int n = 0;

  for (k = 0; k < c->n; k++)
    n += c->cfg[k].format == f;
  return n;
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
 * Per BS (64, 128, 256, 512): csr-scalar 1, csr-vector 5, csr-adaptive 1,
 * csr-merge 1, csr-stream 3 (k 2, 4, 8), ellr-t 6, ell 1, coo 1, hyb 1,
 * dia 1, jad 1, sell 2, and where every row spans < 2^16 columns sell16 2,
 * csr16 6 and csr-stream16 3 = 35; plus cusparse ALG1 and ALG2:
 * 4 * 35 + 2 = 142.
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
  ck_assert_int_eq(c->n, 142);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_STREAM16), 12);
  ck_assert_int_eq(count(c, SPMV_FMT_ELLR_T), 24);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_STREAM), 12);
  ck_assert(has(c, SPMV_FMT_CSR_STREAM, 512, 0, 8, 0));
  ck_assert_int_eq(count(c, SPMV_FMT_SELL16), 8);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR16), 24);
  ck_assert_int_eq(count(c, SPMV_FMT_CSR_VECTOR), 20);
  ck_assert_int_eq(count(c, SPMV_FMT_CUSPARSE), 2);
  ck_assert(has(c, SPMV_FMT_SELL, 512, 0, 32, 256));
  ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 64, 32, 0, 0));
  /* Huge fill: no ell, no dia (4 each fewer). */
  m.p.ell_fill = 50;
  m.p.dia_fill = 400;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 134);
  ck_assert_int_eq(count(c, SPMV_FMT_ELL), 0);
  ck_assert_int_eq(count(c, SPMV_FMT_DIA), 0);
  /* Low fill but too many diagonals: no dia. */
  m.p.ell_fill = 3;
  m.p.dia_fill = 1.5;
  m.p.ndiags = 2000;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 138);
  ck_assert_int_eq(count(c, SPMV_FMT_ELL), 4);
  /* The cpu: BS 0, no csr-vector (it is csr-scalar there), no cusparse:
   * scalar, adaptive, merge, csr-stream (its k too is 0), ellr-t x 6,
   * ell, coo, hyb, jad, sell x 2, sell16 x 2, csr16 (its TPR too is 0),
   * csr-stream16. */
  in.dev = &cpu;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 20);
  ck_assert(has(c, SPMV_FMT_CSR_STREAM, 0, 0, 0, 0));
  /* A row spanning 70000 columns: no sell16, no csr16, no csr-stream16. */
  m.A.cols = 70000;
  m.A.col_idx[1] = 69999;
  ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c,
                                          NULL), 0);
  ck_assert_int_eq(c->n, 16);
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

/* The model's pick for a matrix on a device. */
static struct spmv_config model_pick(const struct mat *m,
                                     const struct spmvd_device_info *dev)
{
  struct spmvd_model_grid *grid = malloc(sizeof *grid);
  struct spmvd_model_gpu g;
  struct spmv_config cfg;

  spmvd_model_gpu_from_device(&g, dev);
  ck_assert_int_eq(spmvd_model_grid_compute(&m->A, &g, grid, NULL), 0);
  spmvd_model_pick(grid, &cfg);
  free(grid);
  return cfg;
}

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

/* A predictor where csr-scalar beats jad beats coo (saddle fits). */
static void fake_predictor(struct spmvd_predictor *pr)
{
  static const struct {
    enum spmv_format f;
    double b;
  } fits[] = { { SPMV_FMT_CSR_SCALAR, 0.1 }, { SPMV_FMT_JAD, 0.2 },
               { SPMV_FMT_COO, 0.4 } };
  size_t k;

  memset(pr, 0, sizeof *pr);
  for (k = 0; k < 3; k++) {
    struct spmvd_fit *f = &pr->fit[fits[k].f];

    f->kind = SPMVD_FIT_SADDLE;
    f->cfg.format = fits[k].f;
    f->cfg.bs = 256;
    f->strip = 1000;
    f->a = 0.01;
    f->b = fits[k].b;
    f->gc = 1;
    f->gd = 2;
  }
}

/* Checks that c is exactly the n configurations want, in order. */
static void expect_list(const struct spmvd_candidates *c,
                        const struct spmv_config *want, size_t n)
{
  char a[64], b[64];
  size_t k;

  ck_assert_int_eq(c->n, n);
  for (k = 0; k < n; k++) {
    spmv_config_format(&c->cfg[k], a, sizeof a);
    spmv_config_format(&want[k], b, sizeof b);
    ck_assert_str_eq(a, b);
  }
}

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
  /* cv 0.6: irregular. */
  m.p.rl_cv = 0.6;
  m.p.ell_fill = 10;
  AUTO_IS(irregular);
  in.dtype = SPMV_F32;
  AUTO_IS(irregular_f32);
  in.dtype = SPMV_F64;
  m.p.rows = 100000;
  AUTO_IS(irregular_many);
  in.dtype = SPMV_F32;
  AUTO_IS(irregular_many_f32);
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

/* The fake device: times per format, failures, and counters. */
struct fake {
  struct spmv_config loaded;
  int is_loaded;
  int loads, unloads, times, progress;
  int ellr_calls;
  int ellr_close;  /* ellr-t answers 5.2 always */
  int sticky;
  const double *sell;  /* sell's answers, call by call (the last repeats) */
  int sell_n, sell_calls;
};

static int fake_load(void *ctx, const struct spmv_config *cfg,
                     struct spmv_error *err)
{
  struct fake *f = ctx;

  ck_assert(!f->is_loaded);
  f->loads++;
  if (cfg->format == SPMV_FMT_JAD)
    return spmv_error_set(err, SPMV_ENOMEM, "jad: no memory left");
  f->loaded = *cfg;
  f->is_loaded = 1;
  f->ellr_calls = 0;
  f->sell_calls = 0;
  return 0;
}

static int fake_time(void *ctx, int warmup, int reps, double *us,
                     struct spmv_error *err)
{
  struct fake *f = ctx;

  ck_assert(f->is_loaded);
  ck_assert_int_ge(reps, 1);
  f->times++;
  switch (f->loaded.format) {
  case SPMV_FMT_CSR_SCALAR: *us = 10; return 0;
  case SPMV_FMT_CSR_VECTOR: *us = 5; return 0;
  case SPMV_FMT_COO: *us = 20; return 0;
  case SPMV_FMT_ELLR_T:  /* never stable: 6.0, 6.6, 6.0, ... */
    *us = f->ellr_close ? 5.2 : f->ellr_calls++ % 2 ? 6.6 : 6.0;
    return 0;
  case SPMV_FMT_HYB:
    return spmv_error_set(err, f->sticky ? SPMV_EGPU_STICKY : SPMV_EGPU,
                          "hyb: launch failed");
  case SPMV_FMT_SELL:
    if (f->sell_n > 0) {
      *us = f->sell[f->sell_calls < f->sell_n ? f->sell_calls : f->sell_n - 1];
      f->sell_calls++;
      return 0;
    }
    *us = 100;
    return 0;
  default:
    *us = 100;
    return 0;
  }
}

static void fake_unload(void *ctx)
{
  struct fake *f = ctx;

  ck_assert(f->is_loaded);
  f->is_loaded = 0;
  f->unloads++;
}

static void fake_progress(void *ctx, int done, int total,
                          const struct spmvd_trial *t)
{
  struct fake *f = ctx;

  f->progress++;
  ck_assert_int_eq(done, f->progress);
  ck_assert_int_ge(total, done);
  ck_assert_ptr_nonnull(t);
}

static const struct spmvd_race_ops fake_ops = { fake_load, fake_time,
                                                fake_unload, fake_progress };

/* scalar (10 us), vector (5), coo (20), jad (load fails), hyb (time
 * fails), ellr-t (6.0 / 6.6, never stable). */
static void race_list(struct spmvd_candidates *c)
{
  static const struct spmv_config cfgs[] = {
    { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 }, { SPMV_FMT_CSR_VECTOR, 256, 4, 0, 0 },
    { SPMV_FMT_COO, 256, 0, 0, 0 },        { SPMV_FMT_JAD, 256, 0, 0, 0 },
    { SPMV_FMT_HYB, 256, 0, 0, 0 },        { SPMV_FMT_ELLR_T, 256, 2, 0, 0 },
  };
  size_t k;

  c->n = 6;
  for (k = 0; k < 6; k++)
    c->cfg[k] = cfgs[k];
}

/*
 * Rounds until stable (probe_ratio 0, close_tol 0, min_rounds 2,
 * max_rounds 5): 1 warm-up, rounds of 3, stable after 2 equal rounds,
 * dropped beyond 1.5 x the leader.
 *  scalar: 2 rounds, 7 runs of 10 us = 70 us; leader 10.
 *  vector: 2 rounds, 7 runs of 5 us = 35 us; leader 5.
 *  coo: round 1 at 20 > 7.5: dropped, 4 runs = 80 us.
 *  jad: load fails; hyb: time fails (0 runs).
 *  ellr-t: 5 rounds 6.0, 6.6, 6.0, 6.6, 6.0: 4*6 + 3*6.6 + 3*6 + 3*6.6 +
 *    3*6 = 99.6 us over 16 runs; median 6.0 > 5, not the leader.
 * Cost = (70 + 35 + 80 + 99.6) / 5 = 56.92 SpMV-equivalents.
 */
/*
 * The cost bound: csr-vector leads at 5 us, three ellr-t at 5.2 us stay
 * within close_tol of it and take a second round each: 93 us, 18.6
 * SpMV-equivalents.  With max_cost 18 the last gets no second round
 * (82.6 us, 16.5).
 */
START_TEST(test_race_cost_bound)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_race_params p;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;

  c->n = 0;
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 };
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_ELLR_T, 64, 2, 0, 0 };
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_ELLR_T, 128, 2, 0, 0 };
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_ELLR_T, 256, 2, 0, 0 };
  spmvd_race_params_default(&p);
  memset(&f, 0, sizeof f);
  f.ellr_close = 1;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, &p, NULL, &d, &e), 0);
  ck_assert_double_eq_tol(d.cost_spmv, 18.6, 1e-9);
  ck_assert_int_eq(d.trials[3].rounds, 2);
  spmvd_decision_fini(&d);
  p.max_cost = 18;
  memset(&f, 0, sizeof f);
  f.ellr_close = 1;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, &p, NULL, &d, &e), 0);
  ck_assert_double_eq_tol(d.cost_spmv, 16.52, 1e-9);
  ck_assert_int_eq(d.trials[2].rounds, 2);
  ck_assert_int_eq(d.trials[3].rounds, 1);
  ck_assert_str_eq(d.text, "csr-vector bs=128 tpr=4");
  spmvd_decision_fini(&d);
  free(c);
}
END_TEST

START_TEST(test_race_rounds)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_device_info gpu = device(1);
  struct spmvd_tune_input in;
  struct spmvd_race_params p;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;
  struct mat m;

  mat_init(&m, 1000, 5);
  in = input(&m, &gpu);
  memset(&f, 0, sizeof f);
  race_list(c);
  spmvd_race_params_default(&p);
  p.reps = 3;
  p.probe_ratio = 0;
  p.close_tol = 0;
  p.min_rounds = 2;
  p.max_rounds = 5;
  ck_assert_msg(spmvd_tuner_race(c, &fake_ops, &f, &p, &in, &d, &e) == 0,
                "%s", e.msg);
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_CSR_VECTOR);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  ck_assert_double_eq(d.time_us, 5);
  ck_assert_double_eq_tol(d.cost_spmv, 56.92, 1e-9);
  ck_assert_double_eq_tol(d.gflops, 2.0 * 5000 / 5e3, 1e-12);
  ck_assert_double_eq_tol(d.gbps,
                          spmvd_tuner_bytes(&m.p, &d.cfg, SPMV_F64) / 5e3,
                          1e-12);
  ck_assert_int_eq(d.ntrials, 6);
  ck_assert_int_eq(d.trials[0].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[0].rounds, 2);
  ck_assert_int_eq(d.trials[0].runs, 7);
  ck_assert_int_eq(d.trials[2].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[2].rounds, 1);
  ck_assert_double_eq(d.trials[2].time_us, 20);
  ck_assert_int_eq(d.trials[3].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[3].code, SPMV_ENOMEM);
  ck_assert_str_eq(d.trials[3].msg, "jad: no memory left");
  ck_assert_int_eq(d.trials[4].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[4].code, SPMV_EGPU);
  ck_assert_int_eq(d.trials[5].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[5].rounds, 5);
  ck_assert_double_eq(d.trials[5].time_us, 6.0);
  ck_assert_double_eq(d.trials[5].best_us, 6.0);
  ck_assert_int_eq(f.loads, 6);
  ck_assert_int_eq(f.unloads, 5);
  ck_assert_int_eq(f.progress, 6);
  ck_assert(!f.is_loaded);
  spmvd_decision_fini(&d);
  ck_assert_ptr_null(d.trials);
  mat_fini(&m);
  free(c);
}
END_TEST

/*
 * Defaults (the short race): the first warm-up run is timed and drops a
 * candidate beyond 1.8 x the leader; one round of 2 decides unless within
 * 5 % of the leader.
 *  scalar: warm-up 10, round 10 (no leader: clear): 3 runs, 30 us.
 *  vector: warm-up 5 (< 1.8 x 10), round 5 (50 % ahead): 3 runs, 15 us.
 *  coo: warm-up 20 > 1.8 x 5 + 0: dropped on it, 1 run, 20 us.
 *  jad: load fails; hyb: its warm-up fails (0 runs).
 *  ellr-t: warm-up 6.0, round 6.6 (32 % behind 5: clear): 3 runs,
 *    6 + 2 * 6.6 = 19.2 us; time 6.6.
 * Cost = (30 + 15 + 20 + 19.2) / 5 = 16.84 SpMV-equivalents.
 */
START_TEST(test_race)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_device_info gpu = device(1);
  struct spmvd_tune_input in;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;
  struct mat m;

  mat_init(&m, 1000, 5);
  in = input(&m, &gpu);
  memset(&f, 0, sizeof f);
  race_list(c);
  ck_assert_msg(spmvd_tuner_race(c, &fake_ops, &f, NULL, &in, &d, &e) == 0,
                "%s", e.msg);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  ck_assert_double_eq(d.time_us, 5);
  ck_assert_double_eq_tol(d.cost_spmv, 16.84, 1e-9);
  ck_assert_int_eq(d.trials[0].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[0].rounds, 1);
  ck_assert_int_eq(d.trials[0].runs, 3);
  ck_assert_int_eq(d.trials[1].runs, 3);
  ck_assert_double_eq(d.trials[0].probe_us, 10);
  ck_assert_int_eq(d.trials[2].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[2].rounds, 0);
  ck_assert_int_eq(d.trials[2].runs, 1);
  ck_assert_double_eq(d.trials[2].time_us, 20);
  ck_assert_double_eq(d.trials[2].probe_us, 20);
  ck_assert_int_eq(d.trials[3].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[4].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[4].runs, 0);
  ck_assert_int_eq(d.trials[5].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[5].rounds, 1);
  ck_assert_int_eq(d.trials[5].runs, 3);
  ck_assert_double_eq(d.trials[5].time_us, 6.6);
  ck_assert_double_eq(d.trials[5].best_us, 6.6);  /* rounds only */
  ck_assert_int_eq(f.loads, 6);
  ck_assert_int_eq(f.unloads, 5);
  ck_assert(!f.is_loaded);
  spmvd_decision_fini(&d);
  /* Close to the leader (within 5 %): rounds go on until stable.  csr-
   * vector 5 leads; ellr-t at 5.2 (4 %): warm-up 5.2, rounds 5.2, 5.2
   * (stable): 5 runs. */
  memset(&f, 0, sizeof f);
  f.ellr_close = 1;
  c->n = 2;
  c->cfg[0] = c->cfg[1];
  c->cfg[1].format = SPMV_FMT_ELLR_T;
  c->cfg[1].tpr = 2;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, &in, &d, &e), 0);
  ck_assert_int_eq(d.trials[1].rounds, 2);
  ck_assert_int_eq(d.trials[1].runs, 5);
  ck_assert_double_eq_tol(d.cost_spmv, (3 * 5 + 5 * 5.2) / 5, 1e-9);
  spmvd_decision_fini(&d);
  /* Two equal times: the earlier candidate keeps the lead (auto lists
   * the one it trusts more first). */
  memset(&f, 0, sizeof f);
  c->n = 2;
  c->cfg[0] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 512, 16, 0, 0 };
  c->cfg[1] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 };
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, &in, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-vector bs=512 tpr=16");
  spmvd_decision_fini(&d);
  mat_fini(&m);
  free(c);
}
END_TEST

/* Races csr-vector (5 us, first) against sell answering sell[0..n) call by
 * call (the last repeats); the decision goes to d. */
static void race_vector_sell(const double *sell, int n, struct spmvd_decision *d)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct fake f;
  struct spmv_error e;
  int rc;

  ck_assert_ptr_nonnull(c);
  c->n = 2;
  c->cfg[0] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 256, 4, 0, 0 };
  c->cfg[1] = (struct spmv_config){ SPMV_FMT_SELL, 256, 0, 32, 256 };
  memset(&f, 0, sizeof f);
  f.sell = sell;
  f.sell_n = n;
  rc = spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, d, &e);
  ck_assert_msg(rc == 0, "%s", e.msg);
  ck_assert(!f.is_loaded);
  free(c);
}

/*
 * A candidate that ran one round is compared on first rounds: csr-vector
 * leads at 5 us in one round; sell's warm-up 5.1, then rounds 5.2 (close:
 * more), 4.7 (unstable), 4.7 (stable), median 4.7, would win on its later
 * rounds, but its first round, 5.2, is behind 5.  With a first round of
 * 4.85 it is ahead and wins.
 */
START_TEST(test_race_first_rounds)
{
  static const double slow_first[] = {5.1, 5.2, 4.7, 4.7};
  static const double ahead[] = {5.0, 4.85, 4.85};
  struct spmvd_decision d;

  race_vector_sell(slow_first, 4, &d);
  ck_assert_int_eq(d.trials[0].rounds, 1);
  ck_assert_double_eq(d.trials[0].first_us, 5);
  ck_assert_int_eq(d.trials[1].rounds, 3);
  ck_assert_double_eq(d.trials[1].first_us, 5.2);
  ck_assert_double_eq(d.trials[1].time_us, 4.7);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  ck_assert_double_eq(d.time_us, 5);
  spmvd_decision_fini(&d);
  race_vector_sell(ahead, 3, &d);
  ck_assert_int_eq(d.trials[1].rounds, 2);
  ck_assert_str_eq(d.text, "sell bs=256 c=32 sigma=256");
  ck_assert_double_eq(d.time_us, 4.85);
  spmvd_decision_fini(&d);
}
END_TEST

/*
 * The probe's threshold, 1.8 x the leader: csr-vector leads at 5 us; sell's
 * warm-up run at 9.5 (1.9 x) drops it there, one run; at 8.5 (1.7 x) it
 * runs its round, 8.6 > 1.5 x 5, and is dropped after it, three runs.
 */
START_TEST(test_race_probe_ratio)
{
  static const double at_19[] = {9.5, 9.6}, at_17[] = {8.5, 8.6};
  struct spmvd_decision d;

  race_vector_sell(at_19, 2, &d);
  ck_assert_int_eq(d.trials[1].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[1].runs, 1);
  ck_assert_double_eq(d.trials[1].probe_us, 9.5);
  ck_assert_double_eq_tol(d.cost_spmv, (3 * 5 + 9.5) / 5, 1e-9);
  spmvd_decision_fini(&d);
  race_vector_sell(at_17, 2, &d);
  ck_assert_int_eq(d.trials[1].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[1].runs, 3);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  spmvd_decision_fini(&d);
}
END_TEST

START_TEST(test_race_no_drop_and_failures)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_race_params p;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;

  /* drop_ratio 0 (bench): coo is timed to stability. */
  memset(&f, 0, sizeof f);
  race_list(c);
  spmvd_race_params_default(&p);
  p.drop_ratio = 0;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, &p, NULL, &d, &e), 0);
  ck_assert_int_eq(d.trials[2].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[2].rounds, 2);
  ck_assert_double_eq(d.gflops, 0);
  spmvd_decision_fini(&d);
  /* Every candidate fails: the first failure is returned. */
  c->n = 1;
  c->cfg[0].format = SPMV_FMT_JAD;
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, &d, &e),
                   SPMV_ENOMEM);
  ck_assert_ptr_nonnull(strstr(e.msg, "every candidate failed"));
  ck_assert_int_eq(d.ntrials, 1);
  spmvd_decision_fini(&d);
  /* A sticky error stops the race at once. */
  race_list(c);
  memset(&f, 0, sizeof f);
  f.sticky = 1;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, &d, &e),
                   SPMV_EGPU_STICKY);
  ck_assert_int_eq(d.ntrials, 5);
  ck_assert_int_eq(f.loads, 5);
  ck_assert(!f.is_loaded);
  spmvd_decision_fini(&d);
  /* No candidates. */
  c->n = 0;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, &d, &e),
                   SPMV_EINVAL);
  spmvd_decision_fini(&d);
  free(c);
}
END_TEST

START_TEST(test_run_strategies)
{
  struct spmvd_device_info gpu = device(1), cpu = device(0);
  struct spmvd_tune_input in;
  struct spmvd_predictor pr;
  struct spmvd_decision d;
  struct spmv_config pick;
  struct fake f;
  struct spmv_error e;
  struct mat m;
  double want;

  /* Flat rows of 80 (ell_fill 1, scattered diagonals, 20000 rows): the
   * ELLR-T model's pick. */
  mat_init(&m, 20000, 80);
  m.p.dia_fill = 50;
  in = input(&m, &gpu);
  pick = model_pick(&m, &gpu);
  /* model without timing: the pick, no time, no cost. */
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(d.cfg.bs, pick.bs);
  ck_assert_int_eq(d.cfg.tpr, pick.tpr);
  ck_assert_int_eq(d.strategy, SPMVD_STRATEGY_MODEL);
  ck_assert_double_eq(d.time_us, 0);
  ck_assert_double_eq(d.cost_spmv, 0);
  ck_assert_int_eq(d.ntrials, 0);
  spmvd_decision_fini(&d);
  /* model with timing: one round of the pick (1 + 2 runs: cost 3). */
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, &fake_ops, &f,
                                   NULL, &d, &e), 0);
  ck_assert_int_eq(d.ntrials, 1);
  ck_assert_int_eq(d.trials[0].rounds, 1);
  ck_assert_double_eq(d.time_us, 6.0);
  ck_assert_double_eq(d.cost_spmv, 3);
  spmvd_decision_fini(&d);
  /* A row of 10^6 would make the ELLR-T layout huge: never picked; flat
   * rows take hyb instead. */
  m.p.rl_max = 1000000;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "hyb bs=256 k=0");
  spmvd_decision_fini(&d);
  /* ... when its CSR bytes (19 MB) exceed the L2; within it csr-vector at
   * AUTOCSR's least TPR (80: 8), as csr16 (rows span < 2^16 columns). */
  gpu.l2_bytes = (uint64_t)60 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr16 bs=128 tpr=8");
  spmvd_decision_fini(&d);
  gpu.l2_bytes = 0;
  /* Irregular rows within the L2: csr-vector at AUTOCSR's middle TPR (80:
   * 8, 16, 32), as csr-vector in f64 (csr16 in f32); beyond it csr-stream16 (rows span < 2^16
   * columns) at BS 128, k 4 in f64; auto races it, csr-stream, ALG1 and
   * csr-vector (f64 beyond the L2 keeps csr-vector). */
  m.p.rl_max = 300;
  m.p.rl_cv = 0.6;
  m.p.ell_fill = 3.75;
  gpu.l2_bytes = (uint64_t)60 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-vector bs=128 tpr=16");
  spmvd_decision_fini(&d);
  in.dtype = SPMV_F32;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr16 bs=128 tpr=16");
  spmvd_decision_fini(&d);
  in.dtype = SPMV_F64;
  gpu.l2_bytes = (uint64_t)8 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-stream16 bs=128 k=4");
  spmvd_decision_fini(&d);
  {
    struct spmvd_candidates *c = malloc(sizeof *c);

    ck_assert(c != NULL);
    ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c,
                                            NULL), 0);
    ck_assert_int_eq(c->n, 4);
    ck_assert(has(c, SPMV_FMT_CSR_STREAM16, 128, 0, 4, 0));
    ck_assert(has(c, SPMV_FMT_CSR_STREAM, 128, 0, 4, 0));
    ck_assert(has(c, SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 16, 0, 0)); /* not csr16 */
    /* f32: k 8, csr-vector as csr16. */
    in.dtype = SPMV_F32;
    ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c,
                                            NULL), 0);
    ck_assert(has(c, SPMV_FMT_CSR_STREAM16, 128, 0, 8, 0));
    ck_assert(has(c, SPMV_FMT_CSR_STREAM, 128, 0, 8, 0));
    ck_assert(has(c, SPMV_FMT_CSR16, 128, 16, 0, 0));
    /* The model's pick in f32 too: csr-stream16, at k 8. */
    ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                     NULL, &d, &e), 0);
    ck_assert_str_eq(d.text, "csr-stream16 bs=128 k=8");
    spmvd_decision_fini(&d);
    in.dtype = SPMV_F64;
    free(c);
  }
  /* A power law: within the L2 csr-adaptive (rows of 80: base 0), beyond
   * it cuSPARSE ALG1. */
  m.p.rl_max = 100000;
  m.p.rl_cv = 20;
  gpu.l2_bytes = (uint64_t)60 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-adaptive bs=256 maxtpr=0 base=0");
  spmvd_decision_fini(&d);
  gpu.l2_bytes = (uint64_t)8 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "cusparse alg=1");
  spmvd_decision_fini(&d);
  gpu.l2_bytes = 0;
  mat_fini(&m);
  mat_init(&m, 5000, 10);
  in = input(&m, &gpu);
  /* predict without timing: the predicted time of csr-scalar: I0 = 5,
   * P0 = 10: (0.01*5 + 0.1)*10 + (1*5 + 2) = 8.5 us. */
  fake_predictor(&pr);
  in.pred = &pr;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_PREDICT, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_CSR_SCALAR);
  want = (0.01 * 5 + 0.1) * 10 + (1 * 5 + 2);
  ck_assert_double_eq_tol(d.time_us, want, 1e-12);
  ck_assert_double_eq_tol(d.gflops, 2.0 * 50000 / (want * 1e3), 1e-12);
  spmvd_decision_fini(&d);
  /* Racing strategies need callbacks. */
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_TRIAL, &in, NULL, NULL,
                                   NULL, &d, &e), SPMV_EINVAL);
  spmvd_decision_fini(&d);
  /* exhaustive on the cpu through the fake device. */
  in.dev = &cpu;
  in.pred = NULL;
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_EXHAUSTIVE, &in, &fake_ops,
                                   &f, NULL, &d, &e), 0);
  ck_assert_int_eq(d.ntrials, 21);  /* 20 + dia (10 diagonals, fill 1) */
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(d.cfg.tpr, 1);
  ck_assert_int_eq(d.strategy, SPMVD_STRATEGY_EXHAUSTIVE);
  spmvd_decision_fini(&d);
  mat_fini(&m);
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

/* The tuner suite. */
static Suite *tuner_suite(void)
{
  Suite *s = suite_create("tuner");
  TCase *tc = tcase_create("core");

  /* Well under a second here; an --enable-asan build under a parallel make
   * check took test_exclude_formats past check's default 4 s. */
  tcase_set_timeout(tc, 30);

  tcase_add_test(tc, test_panel_rules);
  tcase_add_test(tc, test_strategy_names);
  tcase_add_test(tc, test_autocsr_tpr);
  tcase_add_test(tc, test_race_cost_bound);
  tcase_add_test(tc, test_exhaustive_counts);
  tcase_add_test(tc, test_trial_candidates);
  tcase_add_test(tc, test_auto_candidates);
  tcase_add_test(tc, test_strategy_errors);
  tcase_add_test(tc, test_exclude_formats);
  tcase_add_test(tc, test_race_rounds);
  tcase_add_test(tc, test_race);
  tcase_add_test(tc, test_race_first_rounds);
  tcase_add_test(tc, test_race_probe_ratio);
  tcase_add_test(tc, test_race_no_drop_and_failures);
  tcase_add_test(tc, test_run_strategies);
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
