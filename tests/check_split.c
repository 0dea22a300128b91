/* check_split.c: row blocks balanced by nonzeros, their parts, halos and
 * send lists, the split product against the plain reference, and the
 * planner's model and choice. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_gen.h"
#include "spmv_split.h"

static const char *const gallery[] = {
  "stencil2d nx=60 ny=50",
  "stencil3d nx=12 ny=10 nz=9 points=27",
  "banded n=3000 w=9 b=40",
  "random rows=2500 k=7",
  "pareto rows=3000 alpha=0.8",
  "dc1like n=4000 lambda=4 long=500,2000",
  "matching rows=2000 mean=12 cv=1.5 dist=lognormal",
};
#define NGALLERY (int)(sizeof gallery / sizeof gallery[0])
static const int nblocks[] = {1, 2, 3, 4, 7, 16};
#define NBLOCKS (int)(sizeof nblocks / sizeof nblocks[0])

static struct spmv_csr *make(const char *text)
{
  struct spmv_error err;
  struct spmv_csr *A = spmv_gen_from_text(text, 2026, &err);
  ck_assert_msg(A != NULL, "%s: %s", text, err.msg);
  return A;
}

/* Every entry of A is in exactly one block's local or remote part, at its
 * renumbered place, and the send lists deliver each halo exactly. */
static void check_structure(const struct spmv_csr *A,
                            const struct spmv_split *s, const char *what)
{
  int n = s->nblocks;
  int64_t total = 0;

  ck_assert_int_eq(s->block[0].r0, 0);
  ck_assert_int_eq(s->block[n - 1].r1, A->rows);
  for (int q = 0; q < n; q++) {
    const struct spmv_split_block *b = &s->block[q];
    int64_t rows = b->r1 - b->r0, received = 0;
    if (q > 0)
      ck_assert_int_eq(b->r0, s->block[q - 1].r1);
    ck_assert_int_eq(b->local->rows, rows);
    ck_assert_int_eq(b->local->cols, rows);
    ck_assert_int_eq(b->remote->rows, rows);
    ck_assert_int_eq(b->remote->cols, b->nhalo);
    for (int64_t h = 0; h < b->nhalo; h++) {
      ck_assert(b->halo[h] < b->r0 || b->halo[h] >= b->r1);
      if (h > 0)
        ck_assert_int_lt(b->halo[h - 1], b->halo[h]);
    }
    /* Row by row, local then remote entries are A's, in A's order. */
    for (int64_t i = 0; i < rows; i++) {
      int64_t kl = b->local->row_ptr[i], kr = b->remote->row_ptr[i];
      for (int64_t k = A->row_ptr[b->r0 + i]; k < A->row_ptr[b->r0 + i + 1]; k++) {
        int32_t c = A->col_idx[k];
        if (c >= b->r0 && c < b->r1) {
          ck_assert_int_eq(b->local->col_idx[kl] + b->r0, c);
          ck_assert(b->local->val[kl++] == A->val[k]);
        } else {
          ck_assert_int_eq(b->halo[b->remote->col_idx[kr]], c);
          ck_assert(b->remote->val[kr++] == A->val[k]);
        }
      }
      ck_assert_int_eq(kl, b->local->row_ptr[i + 1]);
      ck_assert_int_eq(kr, b->remote->row_ptr[i + 1]);
    }
    total += b->local->nnz + b->remote->nnz;
    /* Sender by sender, the runs make up q's halo in its order. */
    for (int p = 0; p < n; p++) {
      const struct spmv_split_block *sb = &s->block[p];
      ck_assert_int_eq(sb->send_off[0], 0);
      ck_assert_int_le(sb->send_off[q], sb->send_off[q + 1]);
      if (p == q)
        ck_assert_int_eq(sb->send_off[q], sb->send_off[q + 1]);
      for (int64_t k = sb->send_off[q]; k < sb->send_off[q + 1]; k++) {
        ck_assert_int_ge(sb->send_idx[k], 0);
        ck_assert_int_lt(sb->send_idx[k], sb->r1 - sb->r0);
        ck_assert_int_eq(sb->r0 + sb->send_idx[k], b->halo[received++]);
      }
    }
    ck_assert_msg(received == b->nhalo, "%s block %d: %lld of %lld halo "
                  "entries sent", what, q, (long long)received,
                  (long long)b->nhalo);
  }
  ck_assert_int_eq(total, A->nnz);
}

/* Each block within one row's entries of an even share. */
static void check_balance(const struct spmv_csr *A, const int64_t *bounds,
                          int n)
{
  int64_t maxrow = 0;
  for (int64_t i = 0; i < A->rows; i++)
    if (A->row_ptr[i + 1] - A->row_ptr[i] > maxrow)
      maxrow = A->row_ptr[i + 1] - A->row_ptr[i];
  for (int k = 1; k < n; k++) {
    double target = (double)A->nnz * k / n;
    ck_assert_int_le(bounds[k - 1], bounds[k]);
    ck_assert_msg(fabs((double)A->row_ptr[bounds[k]] - target) <= (double)maxrow,
                  "boundary %d at %lld entries, target %.0f, longest row %lld",
                  k, (long long)A->row_ptr[bounds[k]], target,
                  (long long)maxrow);
  }
}

START_TEST(split_gallery)
{
  struct spmv_csr *A = make(gallery[_i]);
  double *x = malloc((size_t)A->cols * sizeof *x);
  double *y = malloc((size_t)A->rows * sizeof *y);
  double *yref = malloc((size_t)A->rows * sizeof *yref);
  double *scratch = malloc((size_t)A->cols * sizeof *scratch);
  int64_t bounds[SPMV_SPLIT_MAX + 1];
  struct spmv_error err;

  ck_assert(x && y && yref && scratch);
  spmv_gen_vector(x, A->cols, 7);
  spmv_csr_ref(A, 1.0, x, 0.0, yref);
  for (int j = 0; j < NBLOCKS; j++) {
    struct spmv_split *s;
    int n = nblocks[j];
    spmv_split_bounds(A, n, bounds);
    check_balance(A, bounds, n);
    ck_assert_msg(spmv_split_new(A, n, &s, &err) == 0, "%s: %s", gallery[_i],
                  err.msg);
    check_structure(A, s, gallery[_i]);
    ck_assert_int_eq(spmv_split_remote_nnz(s) == 0, n == 1);
    spmv_split_ref(s, x, y, scratch);
    for (int64_t i = 0; i < A->rows; i++) {
      double bound = 0.0;
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
        bound += fabs(A->val[k] * x[A->col_idx[k]]);
      ck_assert_msg(fabs(y[i] - yref[i]) <= 4 * 2.3e-16 * bound + 1e-300,
                    "%s, %d blocks, row %lld: %.17g against %.17g",
                    gallery[_i], n, (long long)i, y[i], yref[i]);
    }
    spmv_split_free(s);
  }
  free(x);
  free(y);
  free(yref);
  free(scratch);
  spmv_csr_free(A);
}
END_TEST

/* A 5-point stencil's row blocks need a row of the grid from each side:
 * the halo of a middle block is 2 nx, of an end block nx, wherever in a
 * grid row the boundary falls. */
START_TEST(stencil_halo)
{
  struct spmv_csr *A = make("stencil2d nx=64 ny=64");
  struct spmv_split *s;
  struct spmv_error err;

  ck_assert_int_eq(spmv_split_new(A, 4, &s, &err), 0);
  ck_assert_int_eq(s->block[0].nhalo, 64);
  ck_assert_int_eq(s->block[1].nhalo, 128);
  ck_assert_int_eq(s->block[2].nhalo, 128);
  ck_assert_int_eq(s->block[3].nhalo, 64);
  ck_assert_int_eq(spmv_split_halo_total(s), 384);
  /* A boundary inside a grid row adds the pair of entries across it. */
  ck_assert_int_ge(spmv_split_remote_nnz(s), 384);
  ck_assert_int_le(spmv_split_remote_nnz(s), 384 + 2 * 3);
  spmv_split_free(s);
  spmv_csr_free(A);
}
END_TEST

/* Rows that hold most entries: blocks may be empty but stay in order, and
 * no entries at all split by rows. */
START_TEST(skewed_and_empty)
{
  struct spmv_csr *A = spmv_csr_new(10, 10, 20);
  struct spmv_split *s;
  struct spmv_error err;
  int64_t bounds[5];
  double x[10], y[10], yref[10], scratch[10];

  ck_assert_ptr_nonnull(A);
  /* Row 3 holds 10 entries, row 7 ten more, the others none. */
  for (int64_t i = 0; i < 10; i++)
    A->row_ptr[i + 1] = i < 3 ? 0 : i < 7 ? 10 : 20;
  for (int k = 0; k < 20; k++) {
    A->col_idx[k] = k % 10;
    A->val[k] = k + 1;
  }
  spmv_split_bounds(A, 4, bounds);
  check_balance(A, bounds, 4);
  ck_assert_int_eq(spmv_split_new(A, 4, &s, &err), 0);
  check_structure(A, s, "skewed");
  spmv_gen_vector(x, 10, 3);
  spmv_csr_ref(A, 1.0, x, 0.0, yref);
  spmv_split_ref(s, x, y, scratch);
  for (int i = 0; i < 10; i++)
    ck_assert(fabs(y[i] - yref[i]) <= 1e-12 * (1 + fabs(yref[i])));
  spmv_split_free(s);
  spmv_csr_free(A);

  A = spmv_csr_new(9, 9, 0);
  ck_assert_ptr_nonnull(A);
  spmv_split_bounds(A, 3, bounds);
  ck_assert_int_eq(bounds[1], 3);
  ck_assert_int_eq(bounds[2], 6);
  ck_assert_int_eq(spmv_split_new(A, 3, &s, &err), 0);
  check_structure(A, s, "empty");
  spmv_split_free(s);
  spmv_csr_free(A);
}
END_TEST

START_TEST(refusals)
{
  struct spmv_csr *A = make("random rows=50 cols=40 k=3");
  struct spmv_split *s = (struct spmv_split *)1;
  struct spmv_error err;

  ck_assert_int_eq(spmv_split_new(A, 2, &s, &err), SPMV_EINVAL);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(err.msg, "square") != NULL, "%s", err.msg);
  spmv_csr_free(A);
  A = make("random rows=5 k=2");
  ck_assert_int_eq(spmv_split_new(A, 0, &s, &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_split_new(A, 6, &s, &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_split_new(A, SPMV_SPLIT_MAX + 1, &s, &err),
                   SPMV_EINVAL);
  ck_assert_msg(strstr(err.msg, "blocks") != NULL, "%s", err.msg);
  ck_assert_int_eq(spmv_split_new(A, 5, &s, &err), 0);
  spmv_split_free(s);
  ck_assert_ptr_null(spmv_split_free(NULL));
  spmv_csr_free(A);
}
END_TEST

/* The counts without the arrays are the split's. */
START_TEST(measure_matches)
{
  struct spmv_csr *A = make(gallery[_i]);
  struct spmv_split_shape shape[16];
  struct spmv_split *s;
  struct spmv_error err;

  for (int n = 1; n <= 16; n *= 2) {
    ck_assert_int_eq(spmv_split_measure(A, n, shape, &err), 0);
    ck_assert_int_eq(spmv_split_new(A, n, &s, &err), 0);
    for (int p = 0; p < n; p++) {
      const struct spmv_split_block *b = &s->block[p];
      ck_assert_int_eq(shape[p].rows, b->r1 - b->r0);
      ck_assert_int_eq(shape[p].local_nnz, b->local->nnz);
      ck_assert_int_eq(shape[p].remote_nnz, b->remote->nnz);
      ck_assert_int_eq(shape[p].halo, b->nhalo);
    }
    spmv_split_free(s);
  }
  spmv_csr_free(A);
}
END_TEST

/* One block cut alone is the split's block, less its send lists. */
START_TEST(one_block)
{
  struct spmv_csr *A = make(gallery[_i]);
  struct spmv_split *s;
  struct spmv_split_block b;
  struct spmv_error err;

  for (int n = 1; n <= 8 && n <= A->rows; n *= 2) {
    ck_assert_int_eq(spmv_split_new(A, n, &s, &err), 0);
    for (int k = 0; k < n; k++) {
      const struct spmv_split_block *w = &s->block[k];
      ck_assert_int_eq(spmv_split_one(A, n, k, &b, &err), 0);
      ck_assert_int_eq(b.r0, w->r0);
      ck_assert_int_eq(b.r1, w->r1);
      ck_assert_int_eq(b.nhalo, w->nhalo);
      ck_assert(b.send_off == NULL && b.send_idx == NULL);
      ck_assert(b.nhalo == 0 || memcmp(b.halo, w->halo, sizeof *b.halo * (size_t)b.nhalo) == 0);
      const struct spmv_csr *p[2] = {b.local, b.remote}, *q[2] = {w->local, w->remote};
      for (int j = 0; j < 2; j++) {
        ck_assert_int_eq(p[j]->rows, q[j]->rows);
        ck_assert_int_eq(p[j]->cols, q[j]->cols);
        ck_assert_int_eq(p[j]->nnz, q[j]->nnz);
        ck_assert(memcmp(p[j]->row_ptr, q[j]->row_ptr, sizeof *p[j]->row_ptr * (size_t)(p[j]->rows + 1)) == 0);
        ck_assert(p[j]->nnz == 0 || (memcmp(p[j]->col_idx, q[j]->col_idx, sizeof *p[j]->col_idx * (size_t)p[j]->nnz) == 0 &&
                                     memcmp(p[j]->val, q[j]->val, sizeof *p[j]->val * (size_t)p[j]->nnz) == 0));
      }
      spmv_split_block_fini(&b);
    }
    spmv_split_free(s);
  }
  ck_assert_int_eq(spmv_split_one(A, 2, 2, &b, &err), SPMV_EINVAL);  /* no block 2 of 2 */
  spmv_csr_free(A);
}
END_TEST

/* An H200 pair's orders of magnitude (HBM3e 4 TB/s reached, 60 MB of L2,
 * NVLink 4 at 450 GB/s a direction, an exchange of ~15 us). */
static const struct spmv_split_costs h200x = {
  4000.0, 10000.0, 60u << 20, 450.0, 15.0, 3.0, 8,
};

/* Large and local: a split pays, near the device count; small: never
 * (Kuresson's slowdown), nor where the halo is the whole of x over a slow
 * link; a matrix that is not square stays whole. */
START_TEST(planner)
{
  struct spmv_csr *big = make("stencil2d nx=2048 ny=2048");
  struct spmv_csr *small = make("stencil2d nx=200 ny=200");
  struct spmv_csr *rnd = make("random rows=1000000 k=16");
  struct spmv_csr *rect = make("random rows=1000 cols=900 k=5");
  struct spmv_split_costs slow = h200x;
  struct spmv_split_shape shape[2];
  struct spmv_error err;
  double g;
  int n;

  n = spmv_split_choose(big, 2, &h200x, 1.15, &g, &err);
  /* 21M entries: the exchange's fixed cost is a fifth of a half's time. */
  ck_assert_msg(n == 2 && g > 1.3 && g < 2.0, "stencil: %d blocks, gain %.2f", n, g);
  ck_assert_int_eq(spmv_split_measure(big, 2, shape, &err), 0);
  ck_assert(spmv_split_predict(shape, 2, &h200x) < spmv_split_predict_one(big, &h200x));
  n = spmv_split_choose(small, 8, &h200x, 1.15, &g, &err);
  ck_assert_msg(n == 1 && g == 1.0, "small: %d blocks, gain %.2f", n, g);
  slow.link_gbs = 5.0;
  n = spmv_split_choose(rnd, 4, &slow, 1.15, &g, &err);
  ck_assert_msg(n == 1, "random columns over a 5 GB/s link: %d blocks", n);
  n = spmv_split_choose(rnd, 4, &h200x, 1.15, &g, &err);
  ck_assert_msg(n >= 2, "random columns over NVLink: %d blocks, gain %.2f", n, g);
  ck_assert_int_eq(spmv_split_choose(rect, 4, &h200x, 1.15, &g, &err), 1);
  ck_assert_int_eq(spmv_split_choose(big, 1, &h200x, 1.15, NULL, &err), 1);
  spmv_csr_free(big);
  spmv_csr_free(small);
  spmv_csr_free(rnd);
  spmv_csr_free(rect);
}
END_TEST

int main(void)
{
  Suite *su = suite_create("split");
  TCase *tc = tcase_create("split");
  tcase_add_loop_test(tc, split_gallery, 0, NGALLERY);
  tcase_add_test(tc, stencil_halo);
  tcase_add_test(tc, skewed_and_empty);
  tcase_add_test(tc, refusals);
  tcase_add_loop_test(tc, measure_matches, 0, NGALLERY);
  tcase_add_loop_test(tc, one_block, 0, NGALLERY);
  suite_add_tcase(su, tc);
  /* Its matrices (21M and 16M entries) take seconds to build and measure,
   * more than check's default 4 s on a loaded two-core machine. */
  tc = tcase_create("planner");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, planner);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
