/* predict_test.h: what the predictor's check programs share (check_predict,
 * check_predict_calib, check_predict_store): a test device, the saddle, the
 * fake calibration device, and the comparison of work trees.  Static
 * inline, so that a program leaves unused what it does not call. */
#ifndef SPMV_PREDICT_TEST_H
#define SPMV_PREDICT_TEST_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "spmvd_predict.h"

/* A device: H100-like (cuda) or a tiny GPU for fast end-to-end runs. */
static inline struct spmvd_device_info device(int sms, int threads_per_sm,
                                              int cuda)
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

/* The saddle with a, b, c, d at (I, P). */
static inline double saddle(double a, double b, double c, double d, double i,
                            double p)
{
  return (a * i + b) * p + (c * i + d);
}

/* The fake device: a known time per format from I = rows / S and
 * P = nnz / rows, read off the matrix it is given. */
struct fake {
  struct spmvd_device_info dev;
  int calls, progress, fail_hyb_matrix;
  int bound;  /* > 0: calls after this many are past the time bound */
};

/* Asserts that a and b are the same work tree: splits, thresholds and
 * the leaves' coefficients, node by node from the root. */
static inline void assert_same_nodes(const struct spmvd_tree *a,
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
static inline void assert_same_tree(const struct spmvd_fit *a,
                                    const struct spmvd_fit *b)
{
  assert_same_nodes(&a->tree, &b->tree);
  ck_assert_int_eq(a->nbag, b->nbag);
  for (int k = 0; k < a->nbag; k++)
    assert_same_nodes(&a->bag[k], &b->bag[k]);
}

/* The true saddle coefficients of format f. */
static inline void truth(enum spmv_format f, double c[4])
{
  c[0] = 0.001 * (1 + (int)f);
  c[1] = 0.02 + 0.01 * (int)f;
  c[2] = 0.5 + 0.1 * (int)f;
  c[3] = 2 + (int)f;
}

static inline int fake_time(void *ctx, const struct spmv_csr *A,
                            enum spmv_dtype dt,
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

static inline void fake_progress(void *ctx, int done, int total,
                                 const struct spmvd_calib_point *pt)
{
  struct fake *f = ctx;

  f->progress++;
  ck_assert_int_eq(done, f->progress);
  ck_assert_int_ge(total, done);
  ck_assert_ptr_nonnull(pt);
}

#endif
