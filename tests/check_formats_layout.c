/* check_formats_layout.c: the layouts of a small matrix worked by hand, one
 * format after another, csr-panel's, the L2 warm-up's choice, and the
 * refusals of spmv_layout_new (split from check_formats.c, which checks
 * every layout's CPU product against the plain CSR loop). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_formats.h"
#include "spmv_gen.h"

Suite *formats_layout_suite(void);

/* A rows x cols CSR of row offsets ptr and columns col, entry k's value
 * k + 1. */
static struct spmv_csr *matrix_of(int64_t rows, int64_t cols,
                                  const int64_t *ptr, const int32_t *col)
{
  struct spmv_csr *A = spmv_csr_new(rows, cols, ptr[rows]);
  int64_t k;

  ck_assert(A != NULL);
  memcpy(A->row_ptr, ptr, (size_t)(rows + 1) * sizeof *ptr);
  memcpy(A->col_idx, col, (size_t)ptr[rows] * sizeof *col);
  for (k = 0; k < ptr[rows]; k++)
    A->val[k] = (double)(k + 1);
  return A;
}

/*
 * The small matrix of the layout tests, 5x6 with row lengths 2, 0, 3, 1, 2:
 *   row 0: (0,1)=1 (0,4)=2
 *   row 2: (2,0)=3 (2,2)=4 (2,5)=5
 *   row 3: (3,3)=6
 *   row 4: (4,0)=7 (4,5)=8
 */
static struct spmv_csr *small_matrix(void)
{
  static const int64_t ptr[] = { 0, 2, 2, 5, 6, 8 };
  static const int32_t col[] = { 1, 4, 0, 2, 5, 3, 0, 5 };

  return matrix_of(5, 6, ptr, col);
}

/* Converts the small matrix to cfg in f64; the caller frees the layout. */
static struct spmv_layout *small_layout(enum spmv_format f, int tpr,
                                        int param, int param2)
{
  struct spmv_config cfg = { f, 0, tpr, param, param2 };
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = small_matrix();
  struct spmv_layout *L = NULL;

  ck_assert_msg(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err) == 0,
                "%s", err.msg);
  spmv_csr_free(A);
  return L;
}

/* Value at position k of a f64 layout array. */
#define V(arr, k) (((const double *)(arr))[k])

START_TEST(test_layout_csr)
{
  struct spmv_layout *L = small_layout(SPMV_FMT_CSR_SCALAR, 0, 0, 0);

  ck_assert(L->u.csr.row_ptr32 != NULL && L->u.csr.row_ptr64 == NULL);
  ck_assert_int_eq(L->u.csr.row_ptr32[3], 5);
  ck_assert_int_eq(L->u.csr.col[4], 5);
  ck_assert(V(L->u.csr.val, 4) == 5);
  ck_assert_uint_eq(L->bytes, 6 * 4 + 8 * 4 + 8 * 8);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_adaptive)
{
  /* base 1, max TPR 2: bin 0 lengths <= 1, bin 1 (1, 2], longer rows in
   * chunks of 4 * 1 * 2 = 8. */
  struct spmv_layout *L = small_layout(SPMV_FMT_CSR_ADAPTIVE, 2, 1, 0);
  const struct spmv_adaptive_layout *D = &L->u.adaptive;
  static const int32_t rows[] = { 1, 3, 0, 4 };

  ck_assert_int_eq(D->base, 1);
  ck_assert_int_eq(D->nbins, 2);
  ck_assert_int_eq(D->bin_start[0], 0);
  ck_assert_int_eq(D->bin_start[1], 2);
  ck_assert_int_eq(D->bin_start[2], 4);
  ck_assert_mem_eq(D->rows, rows, sizeof rows);
  ck_assert_int_eq(D->nlong, 1);
  ck_assert_int_eq(D->long_rows[0], 2);
  ck_assert_int_eq(D->long_chunk[0], 0);
  ck_assert_int_eq(D->long_chunk[1], 1);
  ck_assert_int_eq(D->chunk_len, 8);
  ck_assert_int_eq(D->nchunks, 1);
  L = spmv_layout_free(L);
  /* Defaults: base 8, max TPR 512, 10 bins, chunks of 16384. */
  L = small_layout(SPMV_FMT_CSR_ADAPTIVE, 0, 0, 0);
  ck_assert_int_eq(L->u.adaptive.base, 8);
  ck_assert_int_eq(L->u.adaptive.nbins, 10);
  ck_assert_int_eq(L->u.adaptive.chunk_len, 16384);
  ck_assert_int_eq(L->u.adaptive.bin_start[1], 5);
  ck_assert_int_eq(L->u.adaptive.nlong, 0);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_ell)
{
  struct spmv_layout *L = small_layout(SPMV_FMT_ELL, 0, 0, 0);
  const struct spmv_ell_layout *E = &L->u.ell;

  ck_assert_int_eq(E->width, 3);
  ck_assert_int_eq(E->pitch, 32);
  ck_assert_int_eq(E->col[0 * 32 + 0], 1);
  ck_assert_int_eq(E->col[1 * 32 + 0], 4);
  ck_assert_int_eq(E->col[2 * 32 + 0], -1);
  ck_assert_int_eq(E->col[0 * 32 + 1], -1);
  ck_assert_int_eq(E->col[2 * 32 + 2], 5);
  ck_assert_int_eq(E->col[0 * 32 + 5], -1);
  ck_assert(V(E->val, 2 * 32 + 2) == 5 && V(E->val, 2 * 32 + 0) == 0);
  ck_assert_uint_eq(L->bytes, 3 * 32 * (4 + 8));
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_ellr_t)
{
  /* T = 2: entry j of row i at (j / 2) * 64 + 2 i + j % 2. */
  struct spmv_layout *L = small_layout(SPMV_FMT_ELLR_T, 2, 0, 0);
  const struct spmv_ellr_layout *R = &L->u.ellr;

  ck_assert_int_eq(R->t, 2);
  ck_assert_int_eq(R->iters, 2);
  ck_assert_int_eq(R->pitch, 32);
  ck_assert_int_eq(R->rl[2], 3);
  ck_assert_int_eq(R->rl[1], 0);
  ck_assert_int_eq(R->col[4], 0);
  ck_assert_int_eq(R->col[5], 2);
  ck_assert_int_eq(R->col[64 + 4], 5);
  ck_assert_int_eq(R->col[64 + 5], -1);
  ck_assert_int_eq(R->col[1], 4);
  ck_assert(V(R->val, 64 + 4) == 5);
  ck_assert_uint_eq(L->bytes, 5 * 4 + 2 * 32 * 2 * (4 + 8));
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_coo_hyb)
{
  static const int32_t rows[] = { 0, 0, 2, 2, 2, 3, 4, 4 };
  static const int32_t rest[] = { 0, 2, 2, 4 };
  struct spmv_layout *L = small_layout(SPMV_FMT_COO, 0, 0, 0);

  ck_assert_mem_eq(L->u.coo.row, rows, sizeof rows);
  L = spmv_layout_free(L);
  L = small_layout(SPMV_FMT_HYB, 0, 1, 0);
  ck_assert_int_eq(L->u.hyb.k, 1);
  ck_assert_int_eq(L->u.hyb.ell.width, 1);
  ck_assert_int_eq(L->u.hyb.ell.col[2], 0);
  ck_assert_int_eq(L->u.hyb.coo_nnz, 4);
  ck_assert_mem_eq(L->u.hyb.coo.row, rest, sizeof rest);
  ck_assert_int_eq(L->u.hyb.coo.col[2], 5);
  L = spmv_layout_free(L);
  /* Lengths 3, 2, 2, 1, 0: three rows of 2 or more is at least 5/3. */
  L = small_layout(SPMV_FMT_HYB, 0, 0, 0);
  ck_assert_int_eq(L->u.hyb.k, 2);
  ck_assert_int_eq(L->u.hyb.coo_nnz, 1);
  L = spmv_layout_free(L);
  /* A K past the longest row is cut to it. */
  L = small_layout(SPMV_FMT_HYB, 0, 50, 0);
  ck_assert_int_eq(L->u.hyb.k, 3);
  ck_assert_int_eq(L->u.hyb.coo_nnz, 0);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_dia)
{
  static const int32_t offsets[] = { -4, -2, 0, 1, 3, 4 };
  struct spmv_layout *L = small_layout(SPMV_FMT_DIA, 0, 0, 0);
  const struct spmv_dia_layout *D = &L->u.dia;

  ck_assert_int_eq(D->ndiags, 6);
  ck_assert_mem_eq(D->offsets, offsets, sizeof offsets);
  ck_assert(V(D->val, 3 * 32 + 4) == 8);   /* offset 1, row 4 */
  ck_assert(V(D->val, 2 * 32 + 2) == 4);   /* offset 0, row 2 */
  ck_assert(V(D->val, 0 * 32 + 0) == 0);   /* offset -4, row 0: outside */
  ck_assert_uint_eq(L->bytes, 6 * 4 + 6 * 32 * 8);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_jad)
{
  static const int32_t perm[] = { 2, 0, 4, 3, 1 };
  static const int64_t jd_ptr[] = { 0, 4, 7, 8 };
  static const int32_t col[] = { 0, 1, 0, 3, 2, 4, 5, 5 };
  struct spmv_layout *L = small_layout(SPMV_FMT_JAD, 0, 0, 0);

  ck_assert_int_eq(L->u.jad.njd, 3);
  ck_assert_mem_eq(L->u.jad.perm, perm, sizeof perm);
  ck_assert_mem_eq(L->u.jad.jd_ptr, jd_ptr, sizeof jd_ptr);
  ck_assert_mem_eq(L->u.jad.col, col, sizeof col);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_sell)
{
  /* C = 2, sigma = 4: window {0,1,2,3} sorted to 2, 0, 3, 1; then 4. */
  static const int32_t perm[] = { 2, 0, 3, 1, 4, -1 };
  static const int64_t slice_ptr[] = { 0, 6, 8, 12 };
  static const int32_t width[] = { 3, 1, 2 };
  static const int32_t col[] = { 0, 1, 2, 4, 5, -1, 3, -1, 0, -1, 5, -1 };
  struct spmv_layout *L = small_layout(SPMV_FMT_SELL, 0, 2, 4);
  const struct spmv_sell_layout *S = &L->u.sell;

  ck_assert_int_eq(S->c, 2);
  ck_assert_int_eq(S->sigma, 4);
  ck_assert_int_eq(S->nslices, 3);
  ck_assert_mem_eq(S->perm, perm, sizeof perm);
  ck_assert_mem_eq(S->slice_ptr, slice_ptr, sizeof slice_ptr);
  ck_assert_mem_eq(S->slice_width, width, sizeof width);
  ck_assert_mem_eq(S->col, col, sizeof col);
  ck_assert(V(S->val, 3) == 2 && V(S->val, 5) == 0);
  L = spmv_layout_free(L);
  /* sigma 1: rows in order. */
  L = small_layout(SPMV_FMT_SELL, 0, 2, 1);
  ck_assert_int_eq(L->u.sell.perm[0], 0);
  ck_assert_int_eq(L->u.sell.perm[2], 2);
  spmv_layout_free(L);
}
END_TEST

/* cusparse alg=3: one slice of 32 lanes, 3 wide (row 2's length): entry
 * k of row l at k * 32 + l; pads (row 0's third slot, the empty row 1,
 * the lanes past row 4) column -1, value 0. */
START_TEST(test_layout_csell)
{
  struct spmv_layout *L = small_layout(SPMV_FMT_CUSPARSE, 0, 3, 0);
  const struct spmv_csell_layout *S = &L->u.csell;
  struct spmv_csr *A = small_matrix();

  ck_assert_ptr_null(spmv_layout_typed_csr(L));
  ck_assert_int_eq(S->nslices, 1);
  ck_assert_int_eq(S->slots, 96);
  ck_assert_int_eq(spmv_csell_slots(A), 96);
  ck_assert(S->slice_ptr[0] == 0 && S->slice_ptr[1] == 96);
  ck_assert(S->col[0] == 1 && V(S->val, 0) == 1);
  ck_assert(S->col[32] == 4 && V(S->val, 32) == 2);
  ck_assert(S->col[2] == 0 && S->col[34] == 2 && S->col[66] == 5);
  ck_assert(V(S->val, 66) == 5);
  ck_assert(S->col[3] == 3 && S->col[4] == 0 && S->col[36] == 5);
  ck_assert(S->col[1] == -1 && S->col[64] == -1 && S->col[5] == -1);
  ck_assert(S->col[95] == -1 && V(S->val, 64) == 0 && V(S->val, 5) == 0);
  ck_assert_uint_eq(L->bytes, 2 * 4 + 96 * 4 + 96 * 8);
  L = spmv_layout_free(L);
  /* No entries: slices one pad wide; no rows: no slots. */
  A->row_ptr[1] = A->row_ptr[2] = A->row_ptr[3] = A->row_ptr[4] = 0;
  A->row_ptr[5] = 0;
  A->nnz = 0;
  ck_assert_int_eq(spmv_csell_slots(A), 32);
  A->rows = 0;
  ck_assert_int_eq(spmv_csell_slots(A), 0);
  spmv_csr_free(A);
}
END_TEST

/*
 * A 4x6 matrix of 2x2 blocks, row 1's columns out of order and (3,3)
 * twice:
 *   row 0: (0,0)=1 (0,1)=2 (0,5)=3
 *   row 1: (1,5)=4 (1,0)=5 (1,4)=6
 *   row 2: (2,2)=7 (2,3)=8
 *   row 3: (3,3)=9 (3,3)=10
 * in blocks (0,0) (0,2) (1,1): 12 values for 10 entries.
 */
static struct spmv_csr *block_matrix(void)
{
  static const int64_t ptr[] = { 0, 3, 6, 8, 10 };
  static const int32_t col[] = { 0, 1, 5, 5, 0, 4, 2, 3, 3, 3 };

  return matrix_of(4, 6, ptr, col);
}

/* cusparse alg=4: the blocks of block_matrix() at b = 2 (the only
 * dimension that divides 4 and 6), row-major within a block, the
 * duplicates summed. */
START_TEST(test_layout_bsr)
{
  static const int32_t row_ptr[] = { 0, 2, 3 }, col[] = { 0, 2, 1 };
  static const double val[] = { 1, 2, 5, 0, 0, 3, 6, 4, 7, 8, 0, 19 };
  struct spmv_config cfg = { SPMV_FMT_CUSPARSE, 0, 0, 4, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = block_matrix();
  struct spmv_layout *L = NULL;
  const struct spmv_bsr_layout *B;
  int64_t nblocks = 0;

  ck_assert_int_eq(spmv_bsr_dim(A, &nblocks), 2);
  ck_assert_int_eq(nblocks, 3);
  ck_assert_msg(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err) == 0, "%s",
                err.msg);
  B = &L->u.bsr;
  ck_assert_ptr_null(spmv_layout_typed_csr(L));
  ck_assert(B->b == 2 && B->brows == 2 && B->bcols == 3 && B->nblocks == 3);
  ck_assert_mem_eq(B->row_ptr, row_ptr, sizeof row_ptr);
  ck_assert_mem_eq(B->col, col, sizeof col);
  ck_assert_mem_eq(B->val, val, sizeof val);
  ck_assert_uint_eq(L->bytes, 3 * 4 + 3 * 4 + 12 * 8);
  spmv_layout_free(L);
  spmv_csr_free(A);
}
END_TEST

/* A dense n x n matrix, or with bd > 0 only its diagonal blocks of bd. */
static struct spmv_csr *dense_or_blocks(int64_t n, int64_t bd)
{
  int64_t w = bd > 0 ? bd : n, i, j, k = 0;
  struct spmv_csr *A = spmv_csr_new(n, n, n * w);

  ck_assert(A != NULL);
  for (i = 0; i < n; i++) {
    for (j = 0; j < w; j++) {
      A->col_idx[k] = (int32_t)(bd > 0 ? i / bd * bd + j : j);
      A->val[k++] = 1;
    }
    A->row_ptr[i + 1] = k;
  }
  return A;
}

/* The block dimension: the least fill, the larger on ties, none past
 * SPMV_BSR_MAX_FILL or where no dimension divides the shape. */
START_TEST(test_bsr_dim)
{
  static const struct {
    int64_t n, bd;  /* dense_or_blocks() */
    int b;
    int64_t nblocks;
  } cases[] = {
    /* Dense: every dimension dividing 24 stores 576 values; 8 is largest. */
    { 24, 0, 8, 9 },
    /* 2x2 diagonal blocks: fill 1 at 2, 2 at 4, 3 at 3 or 6. */
    { 24, 2, 2, 12 },
    /* 3x3 ones: exact at 3; 2 would store 28 values for every 18. */
    { 24, 3, 3, 8 },
    /* The diagonal alone: 2 stores twice its entries, past 1.5. */
    { 24, 1, 0, 0 },
    /* 7 rows: only 7 divides them, and holds the dense 7 x 7 exactly. */
    { 7, 0, 7, 1 },
    /* 11 rows: no dimension divides them. */
    { 11, 0, 0, 0 },
  };
  struct spmv_config cfg = { SPMV_FMT_CUSPARSE, 0, 0, 4, 0 };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct spmv_csr *A = dense_or_blocks(cases[i].n, cases[i].bd);
    struct spmv_layout *L = NULL;
    int64_t n = -1;

    ck_assert_int_eq(spmv_bsr_dim(A, &n), cases[i].b);
    ck_assert_int_eq(n, cases[i].nblocks);
    ck_assert_int_eq(spmv_layout_new(A, SPMV_F32, &cfg, NULL, &L, NULL),
                     cases[i].b > 0 ? 0 : SPMV_ETOOBIG);
    ck_assert(cases[i].b == 0 || (L->u.bsr.b == cases[i].b &&
                                  L->u.bsr.nblocks == cases[i].nblocks));
    spmv_layout_free(L);
    spmv_csr_free(A);
  }
}
END_TEST

START_TEST(test_layout_sell16)
{
  /* The sell layout above (C 2, sigma 4) with each lane's smallest column
   * as base and offsets from it; padding 0xFFFF, the empty row's base 0. */
  static const int32_t base[] = { 0, 1, 3, 0, 0, 0 };
  static const uint16_t col16[] = { 0, 0, 2, 3, 5, 0xFFFF,
                                    0, 0xFFFF, 0, 0xFFFF, 5, 0xFFFF };
  struct spmv_layout *L = small_layout(SPMV_FMT_SELL16, 0, 2, 4);
  const struct spmv_sell_layout *S = &L->u.sell;

  ck_assert(S->col == NULL);
  ck_assert_int_eq(S->nslices, 3);
  ck_assert_mem_eq(S->base, base, sizeof base);
  ck_assert_mem_eq(S->col16, col16, sizeof col16);
  ck_assert(V(S->val, 3) == 2 && V(S->val, 5) == 0);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_csr16)
{
  /* Rows 0, 2, 3, 4 start at columns 1, 0, 3, 0; the empty row's base 0. */
  static const int32_t base[] = { 1, 0, 0, 3, 0 };
  static const uint16_t col16[] = { 0, 3, 0, 2, 5, 0, 0, 5 };
  static const int32_t ptr[] = { 0, 2, 2, 5, 6, 8 };
  struct spmv_layout *L = small_layout(SPMV_FMT_CSR16, 4, 0, 0);
  const struct spmv_csr_layout *C = &L->u.csr;

  ck_assert(C->col == NULL && C->row_ptr64 == NULL);
  ck_assert_mem_eq(C->row_ptr32, ptr, sizeof ptr);
  ck_assert_mem_eq(C->base, base, sizeof base);
  ck_assert_mem_eq(C->col16, col16, sizeof col16);
  ck_assert(V(C->val, 4) == 5);
  /* 6 offsets, 5 bases, 8 offsets of 2 bytes, 8 doubles. */
  ck_assert_uint_eq(L->bytes, 6 * 4 + 5 * 4 + 8 * 2 + 8 * 8);
  spmv_layout_free(L);
}
END_TEST

/* A stable order by decreasing length within windows of sigma rows, from
 * scratch: the reference for sell's order. */
static int64_t len_of(const struct spmv_csr *A, int32_t r)
{
  return A->row_ptr[r + 1] - A->row_ptr[r];
}

/* The smallest column of row r, 0 for an empty row. */
static int32_t min_col(const struct spmv_csr *A, int32_t r)
{
  int32_t lo = 0;

  for (int64_t k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++)
    if (k == A->row_ptr[r] || A->col_idx[k] < lo)
      lo = A->col_idx[k];
  return lo;
}

/* sell16 of a matrix of a million entries and more, whose order, widths
 * and lane bases are made over threads: the same as a plain pass makes. */
START_TEST(test_layout_sell_threaded)
{
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_gen_pareto(200000, 50000, 4.0, 1.5, 7, &err);
  struct spmv_config cfg = { SPMV_FMT_SELL16, 0, 0, 32, 256 };
  struct spmv_layout *L = NULL;
  int64_t bad = -1;

  ck_assert_msg(A != NULL, "%s", err.msg);
  ck_assert_int_ge(A->nnz, 1000000);
  ck_assert_msg(spmv_layout_new_shell(A, SPMV_F64, &cfg, NULL, &L, &err) == 0,
                "%s", err.msg);
  const struct spmv_sell_layout *S = &L->u.sell;
  int32_t *want = malloc((size_t)A->rows * sizeof *want);
  ck_assert(want != NULL);
  for (int64_t w = 0; w < A->rows; w += 256) {
    int64_t n = A->rows - w < 256 ? A->rows - w : 256;
    /* Insertion: each row after the longer ones and the equal ones before it. */
    for (int64_t i = 0; i < n; i++) {
      int64_t j = i;
      while (j > 0 && len_of(A, want[w + j - 1]) < len_of(A, (int32_t)(w + i))) {
        want[w + j] = want[w + j - 1];
        j--;
      }
      want[w + j] = (int32_t)(w + i);
    }
  }
  for (int64_t i = 0; i < A->rows && bad < 0; i++)
    if (S->perm[i] != want[i])
      bad = i;
  ck_assert_msg(bad < 0, "lane %lld holds row %d, not %d", (long long)bad,
                bad < 0 ? 0 : S->perm[bad], bad < 0 ? 0 : want[bad]);
  for (int64_t s = 0; s < S->nslices && bad < 0; s++) {
    int64_t width = 0;
    for (int l = 0; l < 32; l++) {
      int64_t i = s * 32 + l;
      if (i < A->rows && len_of(A, want[i]) > width)
        width = len_of(A, want[i]);
      if (i < A->rows && S->base[i] != min_col(A, want[i]))
        bad = i;
    }
    if (S->slice_width[s] != width)
      bad = s;
  }
  ck_assert_msg(bad < 0, "slice or lane %lld differs", (long long)bad);
  free(want);
  spmv_layout_free(L);
  spmv_csr_free(A);
}
END_TEST

/* The 16-bit span check over threads names the first of the widest rows,
 * as a plain pass over the rows does, wherever the threads cut. */
START_TEST(test_span16_threaded)
{
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_gen_banded(300000, 4, 8, 3, &err);
  struct spmv_config cfg = { SPMV_FMT_CSR16, 0, 4, 0, 0 };
  struct spmv_layout *L = NULL;
  const int64_t rows[2] = { 100000, 200000 };

  ck_assert_msg(A != NULL, "%s", err.msg);
  ck_assert_int_ge(A->nnz, 1000000);
  /* Two rows of one span over 16 bits: their last column moved out. */
  for (int i = 0; i < 2; i++) {
    int64_t r = rows[i];
    A->col_idx[A->row_ptr[r + 1] - 1] = A->col_idx[A->row_ptr[r]] + 70000;
  }
  ck_assert_int_eq(spmv_csr_max_row_span(A), 70000);
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), SPMV_ETOOBIG);
  ck_assert_msg(strstr(err.msg, "row 100000 spans 70001 columns") != NULL, "%s",
                err.msg);
  spmv_csr_free(A);
}
END_TEST

/* csr-vector's offsets copied over threads, and the longest row found
 * over them, on a matrix of a million entries or more whose longest row
 * is its last: every offset as A's, the width the plain pass's. */
START_TEST(test_layout_csr_threaded)
{
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_gen_banded(300000, 4, 8, 3, &err);
  struct spmv_config cfg = { SPMV_FMT_CSR_VECTOR, 0, 4, 0, 0 };
  struct spmv_layout *L = NULL;
  int64_t widest = 0;

  ck_assert_msg(A != NULL, "%s", err.msg);
  ck_assert_int_ge(A->nnz, 1000000);
  /* The last row's entries grow: the others' move down by what it lost
   * from the row before it. */
  A->row_ptr[A->rows - 1] -= 3;
  for (int64_t i = 0; i < A->rows; i++)
    widest = A->row_ptr[i + 1] - A->row_ptr[i] > widest ? A->row_ptr[i + 1] - A->row_ptr[i]
                                                         : widest;
  ck_assert_int_eq(spmv_csr_max_row(A), widest);
  ck_assert_int_eq(widest, A->row_ptr[A->rows] - A->row_ptr[A->rows - 1]);
  ck_assert_msg(spmv_layout_new_shell(A, SPMV_F64, &cfg, NULL, &L, &err) == 0, "%s", err.msg);
  const struct spmv_csr_layout *C = spmv_layout_typed_csr(L);
  ck_assert_ptr_nonnull(C);
  ck_assert_ptr_nonnull(C->row_ptr32);
  for (int64_t i = 0; i <= A->rows; i++)
    ck_assert_int_eq(C->row_ptr32[i], A->row_ptr[i]);
  spmv_layout_free(L);
  spmv_csr_free(A);
}
END_TEST

/* csr-adaptive's bins filled over threads, on a matrix of a million
 * entries or more with rows in every bin and long rows among them: the
 * rows of each bin ascending, the long rows and their chunks, each as one
 * pass over the rows in order places them. */
START_TEST(test_layout_adaptive_threaded)
{
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_gen_from_text("dc1like n=200000 lambda=4 long=600,150000", 5, &err);
  struct spmv_config cfg = { SPMV_FMT_CSR_ADAPTIVE, 0, 16, 2, 0 };
  struct spmv_layout *L = NULL;

  ck_assert_msg(A != NULL, "%s", err.msg);
  ck_assert_int_ge(A->nnz, 1000000);
  ck_assert_msg(spmv_layout_new_shell(A, SPMV_F64, &cfg, NULL, &L, &err) == 0, "%s", err.msg);
  const struct spmv_adaptive_layout *D = &L->u.adaptive;
  int64_t next[SPMV_ADAPTIVE_MAX_BINS], r = 0, chunks = 0;
  int used = 0;

  ck_assert_int_gt(D->nlong, 1);
  for (int k = 0; k < D->nbins; k++) {
    next[k] = D->bin_start[k];
    used += D->bin_start[k + 1] > D->bin_start[k];
  }
  ck_assert_int_ge(used, 3);
  ck_assert_int_eq(D->long_chunk[0], 0);
  for (int64_t i = 0; i < A->rows; i++) {
    int64_t len = A->row_ptr[i + 1] - A->row_ptr[i];
    int k = 0;
    while (k < D->nbins && len > (int64_t)D->base << k)
      k++;
    if (k < D->nbins) {
      ck_assert_int_eq(D->rows[next[k]++], i);
    } else {
      chunks += (len + D->chunk_len - 1) / D->chunk_len;
      ck_assert_int_eq(D->long_rows[r], i);
      ck_assert_int_eq(D->long_chunk[++r], chunks);
    }
  }
  ck_assert_int_eq(r, D->nlong);
  ck_assert_int_eq(chunks, D->nchunks);
  for (int k = 0; k < D->nbins; k++)
    ck_assert_int_eq(next[k], D->bin_start[k + 1]);
  spmv_layout_free(L);
  spmv_csr_free(A);
}
END_TEST

/* dia of a million rows whose halves occupy different diagonals: the
 * threads' bitmaps, each of its own rows, are all merged. */
START_TEST(test_layout_dia_threaded)
{
  const int64_t n = 1200000;
  struct spmv_csr *A = spmv_csr_new(n, n, n);
  struct spmv_config cfg = { SPMV_FMT_DIA, 0, 0, 0, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL;

  ck_assert(A != NULL);
  for (int64_t i = 0; i < n; i++) {
    A->row_ptr[i] = i;
    A->col_idx[i] = (int32_t)(i < n / 2 ? i : i - 5);
    A->val[i] = 1.0;
  }
  A->row_ptr[n] = n;
  ck_assert_msg(spmv_layout_new_shell(A, SPMV_F64, &cfg, NULL, &L, &err) == 0,
                "%s", err.msg);
  ck_assert_int_eq(L->u.dia.ndiags, 2);
  ck_assert_int_eq(L->u.dia.offsets[0], -5);
  ck_assert_int_eq(L->u.dia.offsets[1], 0);
  spmv_layout_free(L);
  spmv_csr_free(A);
}
END_TEST

/* csr-panel: three panels of 1024 columns, slots panel-major, offsets from
 * the panel's first column; a panel sum per slot, added in panel order. */
START_TEST(test_layout_panel)
{
  static const int64_t rp[] = { 0, 4, 6 };
  static const int32_t ci[] = { 5, 10, 1500, 2999, 1024, 2048 };
  static const double v[] = { 1, 2, 3, 4, 5, 6 };
  /* Slots p0r0, p0r1, p1r0, p1r1, p2r0, p2r1. */
  static const int32_t ptr[] = { 0, 2, 2, 3, 4, 5, 6 };
  static const uint16_t col16[] = { 5, 10, 476, 0, 951, 0 };
  static const double val[] = { 1, 2, 3, 5, 4, 6 };
  struct spmv_config cfg = { SPMV_FMT_CSR_PANEL, 0, 2, 1024, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_csr_new(2, 3000, 6);
  struct spmv_layout *L = NULL;
  double *x = calloc(3000, sizeof *x), y[2] = { 7, 7 };

  ck_assert(A != NULL && x != NULL);
  memcpy(A->row_ptr, rp, sizeof rp);
  memcpy(A->col_idx, ci, sizeof ci);
  memcpy(A->val, v, sizeof v);
  x[5] = 1, x[10] = 10, x[1500] = 100, x[2999] = 1000, x[1024] = 3;
  x[2048] = 0.5;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  ck_assert_int_eq(L->u.panel.npanels, 3);
  ck_assert_int_eq(L->u.panel.width, 1024);
  ck_assert(L->u.panel.csr.col == NULL && L->u.panel.csr.row_ptr64 == NULL);
  ck_assert_mem_eq(L->u.panel.csr.row_ptr32, ptr, sizeof ptr);
  ck_assert_mem_eq(L->u.panel.csr.col16, col16, sizeof col16);
  ck_assert_mem_eq(L->u.panel.csr.val, val, sizeof val);
  /* 7 offsets, 6 offsets of 2 bytes, 6 doubles. */
  ck_assert_uint_eq(L->bytes, 7 * 4 + 6 * 2 + 6 * 8);
  ck_assert_int_eq(spmv_layout_spmv(L, 2, x, 0.5, y), 0);
  ck_assert(y[0] == 2 * (1 + 20 + 300 + 4000) + 3.5);
  ck_assert(y[1] == 2 * (15 + 3) + 3.5);
  spmv_layout_free(L);
  /* One entry per row: 6 slots for 2 entries, over two per entry. */
  A->row_ptr[1] = 1;
  A->row_ptr[2] = 2;
  A->col_idx[1] = 2500;
  A->nnz = 2;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err),
                   SPMV_ETOOBIG);
  ck_assert_msg(strstr(err.msg, "3 panels of 1024 columns x 2 rows make 6 "
                       "row slots for 2 entries") != NULL, "%s", err.msg);
  /* One panel is never too sparse: a wide panel takes the same matrix. */
  cfg.param = 4096;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  ck_assert_int_eq(L->u.panel.npanels, 1);
  spmv_layout_free(L);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* How the GPU worker takes a matrix into the L2: read within half of it
 * (arrays, x and y), written back within SPMV_L2_WRITE_SHARE, streamed
 * beyond; an unknown L2 (0) or no arrays never. */
START_TEST(test_l2_warm_mode)
{
  const size_t l2 = (size_t)60 << 20; /* an H200's */

  /* cop20k_A in f32: 21.3 MB of arrays, 121192 rows and columns. */
  ck_assert_int_eq(spmv_l2_warm_mode(21300000, 121192, 121192, SPMV_F32, l2),
                   SPMV_L2_WARM_READ);
  /* The same in f64 (32.5 MB of arrays): over 30 MB with x and y. */
  ck_assert_int_eq(spmv_l2_warm_mode(32500000, 121192, 121192, SPMV_F64, l2),
                   SPMV_L2_WARM_WRITE);
  /* Exactly half, counting x and y: read; one byte more: written. */
  ck_assert_int_eq(spmv_l2_warm_mode(l2 / 2 - 16 * 8, 8, 8, SPMV_F64, l2),
                   SPMV_L2_WARM_READ);
  ck_assert_int_eq(spmv_l2_warm_mode(l2 / 2 - 16 * 8 + 1, 8, 8, SPMV_F64, l2),
                   SPMV_L2_WARM_WRITE);
  /* pdb1HYS's sell in f32, 52 MB: written; cant's ell, 70 MB: streamed. */
  ck_assert_int_eq(spmv_l2_warm_mode(52000000, 36417, 36417, SPMV_F32, l2),
                   SPMV_L2_WARM_WRITE);
  ck_assert_int_eq(spmv_l2_warm_mode(70000000, 62451, 62451, SPMV_F32, l2),
                   SPMV_L2_WARM_NONE);
  /* The write share's edge. */
  size_t edge = (size_t)(SPMV_L2_WRITE_SHARE * (double)l2) - 16 * 8;
  ck_assert_int_eq(spmv_l2_warm_mode(edge, 8, 8, SPMV_F64, l2), SPMV_L2_WARM_WRITE);
  ck_assert_int_eq(spmv_l2_warm_mode(edge + 2, 8, 8, SPMV_F64, l2), SPMV_L2_WARM_NONE);
  ck_assert_int_eq(spmv_l2_warm_mode(1000, 10, 10, SPMV_F32, 0), SPMV_L2_WARM_NONE);
  ck_assert_int_eq(spmv_l2_warm_mode(0, 10, 10, SPMV_F32, l2), SPMV_L2_WARM_NONE);
  /* When: once the matrix is reused (its second product in a row, or a
   * batch of two); never without products or beyond the L2. */
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_READ, 0, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_READ, 1, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_READ, 0, 3));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 0, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 1, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 0, 2));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 40, 1));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_NONE, 40, 8));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_READ, 0, 0));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 5, 0));
}
END_TEST

/* Expects spmv_layout_new to fail with code and a message containing want. */
static void expect_refusal(const struct spmv_csr *A, enum spmv_format f,
                           int tpr, int param, int param2,
                           const struct spmv_limits *lim, int code,
                           const char *want)
{
  struct spmv_config cfg = { f, 0, tpr, param, param2 };
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL;
  int rc = spmv_layout_new(A, SPMV_F32, &cfg, lim, &L, &err);

  ck_assert_msg(rc == code, "%s: got %s (%s), want %s",
                spmv_format_name(f), spmv_err_name(rc), err.msg,
                spmv_err_name(code));
  ck_assert(L == NULL);
  ck_assert_msg(strstr(err.msg, want) != NULL, "message \"%s\" lacks \"%s\"",
                err.msg, want);
}

START_TEST(test_refusals)
{
  struct spmv_csr *A = small_matrix();
  struct spmv_limits diags = { 0, 3, 0 }, bytes = { 100, 0, 0 };
  struct spmv_limits fill = { 0, 0, 1.5 }, tiny = { 50, 0, 0 };
  struct spmv_config cfg = { SPMV_FMT_COO, 0, 0, 0, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL, bad;

  expect_refusal(A, SPMV_FMT_DIA, 0, 0, 0, &diags, SPMV_ETOOBIG,
                 "6 diagonals, limit 3");
  expect_refusal(A, SPMV_FMT_ELL, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  expect_refusal(A, SPMV_FMT_JAD, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  expect_refusal(A, SPMV_FMT_CSR_ADAPTIVE, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  /* ELL stores 5 * 3 = 15 for 8 entries; DIA 6 * 5 = 30. */
  expect_refusal(A, SPMV_FMT_ELL, 0, 0, 0, &fill, SPMV_ETOOBIG, "fill 1.88");
  expect_refusal(A, SPMV_FMT_DIA, 0, 0, 0, &fill, SPMV_ETOOBIG, "fill 3.75");
  expect_refusal(A, SPMV_FMT_ELLR_T, 3, 0, 0, NULL, SPMV_EINVAL, "T=3");
  expect_refusal(A, SPMV_FMT_ELLR_T, 0, 0, 0, NULL, SPMV_EINVAL, "T=0");
  expect_refusal(A, SPMV_FMT_ELLR_T, 64, 0, 0, NULL, SPMV_EINVAL, "T=64");
  expect_refusal(A, SPMV_FMT_SELL, 0, 3, 0, NULL, SPMV_EINVAL, "C=3");
  expect_refusal(A, SPMV_FMT_SELL, 0, 4, 6, NULL, SPMV_EINVAL, "sigma=6");
  expect_refusal(A, SPMV_FMT_CSR_ADAPTIVE, 3, 0, 0, NULL, SPMV_EINVAL,
                 "max TPR 3");
  expect_refusal(A, SPMV_FMT_CSR_ADAPTIVE, 0, -1, 0, NULL, SPMV_EINVAL,
                 "base length -1");
  expect_refusal(A, SPMV_FMT_HYB, 0, -2, 0, NULL, SPMV_EINVAL, "K=-2");
  expect_refusal(A, SPMV_FMT_CSR_STREAM, 0, 3, 0, NULL, SPMV_EINVAL, "k 3");
  expect_refusal(A, SPMV_FMT_CSR_STREAM, 0, 32, 0, NULL, SPMV_EINVAL, "k 32");
  expect_refusal(A, SPMV_FMT_CSR_STREAM, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 1000, 0, NULL, SPMV_EINVAL,
                 "width 1000 is not a power of two in [1024, 65536]");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 512, 0, NULL, SPMV_EINVAL,
                 "width 512");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 65536, 0, NULL, SPMV_EINVAL,
                 "262144 bytes of shared memory, over 131072");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 0, 0, &tiny, SPMV_ETOOBIG,
                 "csr-panel needs 72 bytes, limit 50");
  /* cuSPARSE's sliced ELL stores 96 slots for 8 entries; its BSR finds no
   * dimension that divides 5 x 6. */
  expect_refusal(A, SPMV_FMT_CUSPARSE, 0, 3, 0, &fill, SPMV_ETOOBIG,
                 "fill 12");
  expect_refusal(A, SPMV_FMT_CUSPARSE, 0, 3, 0, &bytes, SPMV_ETOOBIG,
                 "cusparse needs 776 bytes, limit 100");
  expect_refusal(A, SPMV_FMT_CUSPARSE, 0, 4, 0, NULL, SPMV_ETOOBIG,
                 "no block dimension from 2 to 8 divides 5 x 6 into blocks "
                 "that hold its 8 entries in at most 1.5 values each");
  expect_refusal(A, (enum spmv_format)99, 0, 0, 0, NULL, SPMV_EFORMAT,
                 "format 99");
  A->col_idx[3] = 6;
  expect_refusal(A, SPMV_FMT_COO, 0, 0, 0, NULL, SPMV_ECSR, "column index 6");
  ck_assert_int_eq(spmv_layout_new(A, (enum spmv_dtype)7, &cfg, NULL, &L,
                                   &err), SPMV_EINVAL);
  ck_assert(spmv_layout_free(NULL) == NULL);
  ck_assert_int_eq(spmv_layout_spmv(NULL, 1, NULL, 0, NULL), SPMV_EFORMAT);
  memset(&bad, 0, sizeof bad);
  bad.cfg.format = (enum spmv_format)99;
  bad.dtype = SPMV_F64;
  ck_assert_int_eq(spmv_layout_spmv(&bad, 1, NULL, 0, NULL), SPMV_EFORMAT);
  spmv_csr_free(A);
}
END_TEST

Suite *formats_layout_suite(void)
{
  Suite *s = suite_create("formats_layout");
  TCase *tc = tcase_create("layouts");

  tcase_add_test(tc, test_layout_csr);
  tcase_add_test(tc, test_l2_warm_mode);
  tcase_add_test(tc, test_layout_adaptive);
  tcase_add_test(tc, test_layout_ell);
  tcase_add_test(tc, test_layout_ellr_t);
  tcase_add_test(tc, test_layout_coo_hyb);
  tcase_add_test(tc, test_layout_dia);
  tcase_add_test(tc, test_layout_jad);
  tcase_add_test(tc, test_layout_sell);
  tcase_add_test(tc, test_layout_csell);
  tcase_add_test(tc, test_layout_bsr);
  tcase_add_test(tc, test_bsr_dim);
  tcase_add_test(tc, test_layout_sell16);
  tcase_add_test(tc, test_layout_csr16);
  tcase_add_test(tc, test_layout_sell_threaded);
  tcase_add_test(tc, test_span16_threaded);
  tcase_add_test(tc, test_layout_dia_threaded);
  tcase_add_test(tc, test_layout_csr_threaded);
  tcase_add_test(tc, test_layout_adaptive_threaded);
  tcase_add_test(tc, test_layout_panel);
  tcase_add_test(tc, test_refusals);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(formats_layout_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
