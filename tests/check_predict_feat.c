/* check_predict_feat.c: the predictor's features of a matrix, counted by
 * hand or plainly, and the work basis built on them. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_predict.h"

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

/* The predictor's features suite. */
static Suite *predict_feat_suite(void)
{
  Suite *s = suite_create("predict_feat");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_features);
  tcase_add_test(tc, test_features_stream);
  tcase_add_test(tc, test_features_jad);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(predict_feat_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
