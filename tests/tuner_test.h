/* tuner_test.h: what the tuner's check programs share (check_tuner,
 * check_tuner_auto, check_tuner_race): test devices and matrices, the
 * candidate lists' checks, the model's pick and a fake predictor.  Static
 * inline, so that a program leaves unused what it does not call. */
#ifndef SPMV_TUNER_TEST_H
#define SPMV_TUNER_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"

/* An H100-like GPU, or the cpu backend. */
static inline struct spmvd_device_info device(int cuda)
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

static inline void mat_init(struct mat *m, int64_t rows, int len)
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

static inline void mat_fini(struct mat *m)
{
  free(m->A.row_ptr);
  free(m->A.col_idx);
}

/* The input for matrix m on dev. */
static inline struct spmvd_tune_input input(const struct mat *m,
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
static inline int has(const struct spmvd_candidates *c, enum spmv_format f,
                      int bs, int tpr, int param, int param2)
{
  size_t k;

  for (k = 0; k < c->n; k++)
    if (c->cfg[k].format == f && c->cfg[k].bs == bs && c->cfg[k].tpr == tpr &&
        c->cfg[k].param == param && c->cfg[k].param2 == param2)
      return 1;
  return 0;
}

/* 20000 regular rows of len (cv 0.2, ELL fill 2, no diagonal band). */
static inline void regular_rows(struct mat *m, int len)
{
  mat_init(m, 20000, len);
  m->p.dia_fill = 50;
  m->p.rl_cv = 0.2;
  m->p.ell_fill = 2;
}

/* How many candidates of format f c lists. */
static inline int count(const struct spmvd_candidates *c, enum spmv_format f)
{
  size_t k;
  int n = 0;

  for (k = 0; k < c->n; k++)
    n += c->cfg[k].format == f;
  return n;
}

/* The model's pick for a matrix on a device. */
static inline struct spmv_config model_pick(const struct mat *m,
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

/* A predictor where csr-scalar beats jad beats coo (saddle fits). */
static inline void fake_predictor(struct spmvd_predictor *pr)
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
static inline void expect_list(const struct spmvd_candidates *c,
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

#endif
