/* check_formats_shell.c: csr-stream's and csr-stream16's cuts into blocks
 * worked by hand, and the shells (the layouts the GPU completes from the
 * CSR) against the full layouts, on matrices of given row lengths (split
 * from check_formats.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_formats.h"
#include "spmv_gen.h"
#include "formats_common.h"

Suite *formats_shell_suite(void);

/* csr-stream's cut at BS 32, k 1 (cap 32 entries and rows, chunks of 128),
 * worked by hand: rows of 10, 20 | 5 | 40L | 33L | 0, 32 | 1 | 200L, where a
 * long row (L) closes the open block and is in none. */
START_TEST(test_layout_stream)
{
  static const int64_t len[] = { 10, 20, 5, 40, 33, 0, 32, 1, 200 };
  static const int32_t blk_row[] = { 0, 2, 2, 3, 5, 7, 7, 8 };
  static const int64_t blk_ent[] = { 0, 30, 30, 35, 108, 140, 140, 141 };
  static const int32_t long_rows[] = { 3, 4, 8 };
  static const int64_t long_chunk[] = { 0, 1, 2, 4 };
  int64_t empty[70] = { 0 };
  struct spmv_config cfg = { SPMV_FMT_CSR_STREAM, 32, 0, 1, 0 };
  struct spmv_csr *A = from_lengths(9, 300, len, 0);
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL;
  const struct spmv_stream_layout *D;

  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  D = &L->u.stream;
  ck_assert_int_eq(D->cap, 32);
  ck_assert_int_eq(D->chunk_len, 128);
  ck_assert_int_eq(D->nblocks, 4);
  ck_assert_int_eq(D->nlong, 3);
  ck_assert_int_eq(D->nchunks, 4);
  ck_assert_int_eq(D->sparse, 0); /* 1 of 9 rows empty, under an eighth */
  ck_assert_mem_eq(D->blk_row, blk_row, sizeof blk_row);
  ck_assert_mem_eq(D->blk_ent, blk_ent, sizeof blk_ent);
  ck_assert_mem_eq(D->long_rows, long_rows, sizeof long_rows);
  ck_assert_mem_eq(D->long_chunk, long_chunk, sizeof long_chunk);
  /* Typed CSR (10 offsets, 341 columns and doubles), the blocks' rows
   * and entries, long rows, chunks. */
  ck_assert_uint_eq(L->bytes,
                    10 * 4 + 341 * 12 + 8 * 4 + 8 * 8 + 3 * 4 + 4 * 8);
  spmv_layout_free(L);
  spmv_csr_free(A);
  /* 70 empty rows: blocks of at most cap = 32 rows. */
  A = from_lengths(70, 5, empty, 0);
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F32, &cfg, NULL, &L, &err), 0);
  ck_assert_int_eq(L->u.stream.nblocks, 3);
  ck_assert_int_eq(L->u.stream.blk_row[1], 32);
  ck_assert_int_eq(L->u.stream.blk_row[4], 64);
  ck_assert_int_eq(L->u.stream.blk_row[5], 70);
  ck_assert_int_eq(L->u.stream.sparse, 1);
  spmv_layout_free(L);
  spmv_csr_free(A);
}
END_TEST

/* Shells (the layouts the GPU completes from the CSR): for each typed-CSR
 * format, the full layout less col and val, with the same row offsets,
 * tables and byte count; for sell and sell16 the same slices, and for the
 * other staged formats (cusparse's sliced ELL and BSR among them) what
 * their host part builds, without the entries;
 * the CPU product refuses one; csr-panel has none, and says so. */
START_TEST(test_layout_shell)
{
  static const int64_t len[] = { 10, 20, 5, 40, 33, 0, 32, 1, 200 };
  static const struct spmv_config ok[] = {
    { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 }, { SPMV_FMT_CSR_VECTOR, 64, 8, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 64, 0, 0, 0 }, { SPMV_FMT_CSR_MERGE, 128, 0, 0, 0 },
    { SPMV_FMT_CSR_STREAM, 32, 0, 1, 0 }, { SPMV_FMT_CUSPARSE, 0, 0, 1, 0 },
  };
  static const enum spmv_format no[] = { SPMV_FMT_CSR_PANEL };
  struct spmv_csr *A = from_lengths(9, 300, len, 0);
  struct spmv_error err = { 0, "" };
  double x[300] = { 0 }, y[9] = { 0 };

  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    for (int dt = 0; dt < 2; dt++) {
      enum spmv_dtype t = dt ? SPMV_F32 : SPMV_F64;
      struct spmv_layout *L = NULL, *S = NULL;
      const struct spmv_csr_layout *c, *cs;

      ck_assert_int_eq(spmv_layout_shell_ok(ok[i].format), 1);
      ck_assert_int_eq(spmv_layout_new(A, t, &ok[i], NULL, &L, &err), 0);
      ck_assert_int_eq(spmv_layout_new_shell(A, t, &ok[i], NULL, &S, &err), 0);
      c = spmv_layout_typed_csr(L);
      cs = spmv_layout_typed_csr(S);
      ck_assert_ptr_nonnull(cs);
      ck_assert_int_eq(S->shell, 1);
      ck_assert_int_eq(L->shell, 0);
      ck_assert_ptr_null(cs->col);
      ck_assert_ptr_null(cs->val);
      ck_assert_ptr_nonnull(c->col);
      ck_assert_ptr_nonnull(c->val);
      ck_assert_mem_eq(cs->row_ptr32, c->row_ptr32, 10 * sizeof(int32_t));
      ck_assert_uint_eq(S->bytes, L->bytes);
      if (ok[i].format == SPMV_FMT_CSR_STREAM) {
        ck_assert_int_eq(S->u.stream.nblocks, L->u.stream.nblocks);
        ck_assert_mem_eq(S->u.stream.blk_ent, L->u.stream.blk_ent,
                         2 * (size_t)L->u.stream.nblocks * sizeof(int64_t));
      }
      if (ok[i].format == SPMV_FMT_CSR_ADAPTIVE) {
        ck_assert_int_eq(S->u.adaptive.nlong, L->u.adaptive.nlong);
        ck_assert_mem_eq(S->u.adaptive.rows, L->u.adaptive.rows,
                         (size_t)(9 - L->u.adaptive.nlong) * sizeof(int32_t));
      }
      ck_assert_int_eq(spmv_layout_spmv(S, 1, x, 0, y), SPMV_EFORMAT);
      spmv_layout_free(S);
      spmv_layout_free(L);
    }
  }
  /* sell and sell16: the slices (and sell16's lane bases) without the
   * entries. */
  for (int f = 0; f < 2; f++) {
    struct spmv_config cfg = { f ? SPMV_FMT_SELL16 : SPMV_FMT_SELL, 32, 0, 4, 8 };
    struct spmv_layout *L = NULL, *S = NULL;
    const struct spmv_sell_layout *a, *b;

    ck_assert_int_eq(spmv_layout_new(A, SPMV_F32, &cfg, NULL, &L, &err), 0);
    ck_assert_int_eq(spmv_layout_new_shell(A, SPMV_F32, &cfg, NULL, &S, &err), 0);
    a = &L->u.sell;
    b = &S->u.sell;
    ck_assert_ptr_null(spmv_layout_typed_csr(S));
    ck_assert_ptr_null(b->col);
    ck_assert_ptr_null(b->col16);
    ck_assert_ptr_null(b->val);
    ck_assert_uint_eq(S->bytes, L->bytes);
    ck_assert_int_eq(b->nslices, a->nslices);
    ck_assert_mem_eq(b->perm, a->perm, (size_t)(a->nslices * a->c) * sizeof(int32_t));
    ck_assert_mem_eq(b->slice_ptr, a->slice_ptr, (size_t)(a->nslices + 1) * sizeof(int64_t));
    if (f)
      ck_assert_mem_eq(b->base, a->base, (size_t)(a->nslices * a->c) * sizeof(int32_t));
    else
      ck_assert_ptr_null(b->base);
    ck_assert_int_eq(spmv_layout_spmv(S, 1, x, 0, y), SPMV_EFORMAT);
    spmv_layout_free(S);
    spmv_layout_free(L);
  }
  /* cusparse's sliced ELL and BSR (this on A's rows made 3x3 blocks): the
   * slices' offsets, the blocks' offsets and columns, without the
   * entries. */
  for (int alg = SPMV_CUSPARSE_SELL; alg <= SPMV_CUSPARSE_BSR; alg++) {
    struct spmv_config cfg = { SPMV_FMT_CUSPARSE, 0, 0, alg, 0 };
    struct spmv_csr *P = alg == SPMV_CUSPARSE_BSR ? from_lengths(3, 100, len, 0) : NULL;
    struct spmv_csr *M = P != NULL ? spmv_gen_blocks(P, 3, 1, &err) : A;
    struct spmv_layout *L = NULL, *S = NULL;

    ck_assert_ptr_nonnull(M);
    ck_assert_int_eq(spmv_layout_new(M, SPMV_F32, &cfg, NULL, &L, &err), 0);
    ck_assert_int_eq(spmv_layout_new_shell(M, SPMV_F32, &cfg, NULL, &S, &err), 0);
    ck_assert_ptr_null(spmv_layout_typed_csr(S));
    ck_assert_int_eq(S->shell, 1);
    ck_assert_uint_eq(S->bytes, L->bytes);
    if (alg == SPMV_CUSPARSE_SELL) {
      ck_assert_ptr_null(S->u.csell.col);
      ck_assert_ptr_null(S->u.csell.val);
      ck_assert_int_eq(S->u.csell.slots, L->u.csell.slots);
      ck_assert_mem_eq(S->u.csell.slice_ptr, L->u.csell.slice_ptr,
                       (size_t)(L->u.csell.nslices + 1) * sizeof(int32_t));
    } else {
      ck_assert_ptr_null(S->u.bsr.val);
      ck_assert(S->u.bsr.b == 3 && L->u.bsr.b == 3);
      ck_assert_int_eq(S->u.bsr.nblocks, L->u.bsr.nblocks);
      ck_assert_mem_eq(S->u.bsr.row_ptr, L->u.bsr.row_ptr, 4 * sizeof(int32_t));
      ck_assert_mem_eq(S->u.bsr.col, L->u.bsr.col,
                       (size_t)L->u.bsr.nblocks * sizeof(int32_t));
    }
    ck_assert_int_eq(spmv_layout_spmv(S, 1, x, 0, y), SPMV_EFORMAT);
    spmv_layout_free(S);
    spmv_layout_free(L);
    if (P != NULL) {
      spmv_csr_free(M);
      spmv_csr_free(P);
    }
  }
  /* csr16, ell, ellr-t, coo, hyb, jad, dia and csr-stream16: what the host
   * builds (row offsets and bases, widths, row lengths, hyb's split, jad's
   * order, dia's offsets, the blocks' and chunks' bases), without the
   * entries. */
  {
    static const struct spmv_config st[] = {
      { SPMV_FMT_CSR16, 64, 4, 0, 0 }, { SPMV_FMT_ELL, 64, 0, 0, 0 },
      { SPMV_FMT_ELLR_T, 64, 4, 0, 0 }, { SPMV_FMT_COO, 64, 0, 0, 0 },
      { SPMV_FMT_HYB, 64, 0, 16, 0 }, { SPMV_FMT_JAD, 64, 0, 0, 0 },
      { SPMV_FMT_DIA, 64, 0, 0, 0 }, { SPMV_FMT_CSR_STREAM16, 32, 0, 1, 0 },
    };
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
      struct spmv_layout *L = NULL, *S = NULL;

      ck_assert_int_eq(spmv_layout_shell_ok(st[i].format), 1);
      ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &st[i], NULL, &L, &err), 0);
      ck_assert_int_eq(spmv_layout_new_shell(A, SPMV_F64, &st[i], NULL, &S, &err), 0);
      ck_assert_ptr_null(spmv_layout_typed_csr(S));
      ck_assert_int_eq(S->shell, 1);
      ck_assert_uint_eq(S->bytes, L->bytes);
      if (st[i].format == SPMV_FMT_CSR16) {
        ck_assert_ptr_null(S->u.csr.col16);
        ck_assert_ptr_null(S->u.csr.val);
        ck_assert_mem_eq(S->u.csr.row_ptr32, L->u.csr.row_ptr32, 10 * sizeof(int32_t));
        ck_assert_mem_eq(S->u.csr.base, L->u.csr.base, 9 * sizeof(int32_t));
      } else if (st[i].format == SPMV_FMT_ELL) {
        ck_assert_ptr_null(S->u.ell.col);
        ck_assert_ptr_null(S->u.ell.val);
        ck_assert_int_eq(S->u.ell.width, L->u.ell.width);
        ck_assert_int_eq(S->u.ell.pitch, L->u.ell.pitch);
      } else if (st[i].format == SPMV_FMT_COO) {
        ck_assert_ptr_null(S->u.coo.row);
        ck_assert_ptr_null(S->u.coo.col);
        ck_assert_ptr_null(S->u.coo.val);
      } else if (st[i].format == SPMV_FMT_HYB) {
        ck_assert_ptr_null(S->u.hyb.ell.col);
        ck_assert_ptr_null(S->u.hyb.ell.val);
        ck_assert_ptr_null(S->u.hyb.coo.row);
        ck_assert_ptr_null(S->u.hyb.coo.val);
        ck_assert_int_eq(S->u.hyb.k, 16);
        ck_assert_int_eq(S->u.hyb.ell.width, L->u.hyb.ell.width);
        ck_assert_int_eq(S->u.hyb.ell.pitch, L->u.hyb.ell.pitch);
        ck_assert_int_eq(S->u.hyb.coo_nnz, L->u.hyb.coo_nnz);
        ck_assert_int_gt(S->u.hyb.coo_nnz, 0);
      } else if (st[i].format == SPMV_FMT_JAD) {
        ck_assert_ptr_null(S->u.jad.col);
        ck_assert_ptr_null(S->u.jad.val);
        ck_assert_int_eq(S->u.jad.njd, L->u.jad.njd);
        ck_assert_mem_eq(S->u.jad.perm, L->u.jad.perm, 9 * sizeof(int32_t));
        ck_assert_mem_eq(S->u.jad.jd_ptr, L->u.jad.jd_ptr,
                         (size_t)(L->u.jad.njd + 1) * sizeof(int64_t));
      } else if (st[i].format == SPMV_FMT_CSR_STREAM16) {
        const struct spmv_stream_layout *a = &L->u.stream, *b = &S->u.stream;
        ck_assert_ptr_null(b->csr.col16);
        ck_assert_ptr_null(b->csr.val);
        ck_assert_mem_eq(b->csr.row_ptr32, a->csr.row_ptr32, 10 * sizeof(int32_t));
        ck_assert_int_eq(b->nblocks, a->nblocks);
        ck_assert_int_eq(b->nchunks, a->nchunks);
        ck_assert_int_gt(b->nlong, 0);
        ck_assert_mem_eq(b->blk_base, a->blk_base, (size_t)a->nblocks * sizeof(int32_t));
        ck_assert_mem_eq(b->chunk_base, a->chunk_base, (size_t)a->nchunks * sizeof(int32_t));
      } else if (st[i].format == SPMV_FMT_DIA) {
        ck_assert_ptr_null(S->u.dia.val);
        ck_assert_int_eq(S->u.dia.ndiags, L->u.dia.ndiags);
        ck_assert_int_eq(S->u.dia.pitch, L->u.dia.pitch);
        ck_assert_mem_eq(S->u.dia.offsets, L->u.dia.offsets,
                         (size_t)L->u.dia.ndiags * sizeof(int32_t));
      } else {
        ck_assert_ptr_null(S->u.ellr.col);
        ck_assert_ptr_null(S->u.ellr.val);
        ck_assert_int_eq(S->u.ellr.iters, L->u.ellr.iters);
        ck_assert_int_eq(S->u.ellr.pitch, L->u.ellr.pitch);
        ck_assert_mem_eq(S->u.ellr.rl, L->u.ellr.rl, 9 * sizeof(int32_t));
      }
      ck_assert_int_eq(spmv_layout_spmv(S, 1, x, 0, y), SPMV_EFORMAT);
      spmv_layout_free(S);
      spmv_layout_free(L);
    }
  }
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    struct spmv_config cfg = { no[i], 32, 0, 0, 0 };
    struct spmv_layout *S = NULL;

    ck_assert_int_eq(spmv_layout_shell_ok(no[i]), 0);
    ck_assert_int_eq(spmv_layout_new_shell(A, SPMV_F64, &cfg, NULL, &S, &err),
                     SPMV_EFORMAT);
    ck_assert_ptr_null(S);
    ck_assert_msg(strstr(err.msg, spmv_format_name(no[i])) != NULL &&
                  strstr(err.msg, "on the host") != NULL, "%s", err.msg);
  }
  spmv_csr_free(A);
}
END_TEST

/* csr-stream16 at BS 32, k 1: block bases and 16-bit offsets, a long
 * row's chunk bases; then a block whose two rows together span 70001
 * columns (each alone spans 1) is refused, naming its rows. */
START_TEST(test_layout_stream16)
{
  static const int64_t len[] = { 2, 3, 40 };
  struct spmv_config cfg = { SPMV_FMT_CSR_STREAM16, 32, 0, 1, 0 };
  struct spmv_csr *A = from_lengths(3, 200, len, 0);
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL;
  const struct spmv_stream_layout *D;
  int64_t k, lo = 200;

  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  D = &L->u.stream;
  ck_assert(D->csr.col == NULL && D->csr.col16 != NULL);
  ck_assert_int_eq(D->nblocks, 1);
  ck_assert_int_eq(D->nlong, 1);
  ck_assert_int_eq(D->nchunks, 1);
  for (k = 0; k < 5; k++)
    lo = A->col_idx[k] < lo ? A->col_idx[k] : lo;
  ck_assert_int_eq(D->blk_base[0], lo);
  for (k = 0; k < 5; k++)
    ck_assert_int_eq(D->blk_base[0] + D->csr.col16[k], A->col_idx[k]);
  for (k = 5; k < 45; k++)
    ck_assert_int_eq(D->chunk_base[0] + D->csr.col16[k], A->col_idx[k]);
  /* 4 offsets, 45 offsets and doubles, a block base, a chunk base, the
   * block's rows and entries, a long row and its chunk bounds. */
  ck_assert_uint_eq(L->bytes, 4 * 4 + 45 * 10 + 4 + 4 + 2 * 4 + 2 * 8 + 4 + 2 * 8);
  spmv_layout_free(L);
  spmv_csr_free(A);

  A = spmv_csr_new(2, 70001, 2);
  ck_assert(A != NULL);
  A->row_ptr[1] = 1;
  A->row_ptr[2] = 2;
  A->col_idx[0] = 0;
  A->col_idx[1] = 70000;
  A->val[0] = A->val[1] = 1;
  L = NULL;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err),
                   SPMV_ETOOBIG);
  ck_assert_msg(strstr(err.msg, "csr-stream16: rows 0 to 1 span 70001 "
                                "columns (0 to 70000)") == err.msg, "%s",
                err.msg);
  ck_assert(L == NULL);
  spmv_csr_free(A);
}
END_TEST

Suite *formats_shell_suite(void)
{
  Suite *s = suite_create("formats_shell");
  TCase *tc = tcase_create("layouts");

  tcase_add_test(tc, test_layout_stream);
  tcase_add_test(tc, test_layout_stream16);
  tcase_add_test(tc, test_layout_shell);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(formats_shell_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
