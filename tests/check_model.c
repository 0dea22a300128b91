/* check_model.c: the ELLR-T analytical model against hand-computed values
 * and a thread-by-thread brute force. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_gen.h"
#include "spmvd_model.h"

/* A GPU with 32-thread warps; sms varies per test. */
static struct spmvd_model_gpu gpu(int sms)
{
  struct spmvd_model_gpu g = { sms, 32, 2048, 32, 1024 };

  return g;
}

/* Row offsets from row lengths (caller frees). */
static int64_t *offsets(const int *rl, int64_t rows)
{
  int64_t *rp = malloc((size_t)(rows + 1) * sizeof *rp);
  int64_t i;

  rp[0] = 0;
  for (i = 0; i < rows; i++)
    rp[i + 1] = rp[i] + rl[i];
  return rp;
}

/* M for row lengths rl. */
static int64_t cost(const int *rl, int64_t rows, int sms, int bs, int t)
{
  struct spmvd_model_gpu g = gpu(sms);
  int64_t *rp = offsets(rl, rows), m;

  m = spmvd_model_cost(rp, rows, &g, bs, t, NULL);
  free(rp);
  return m;
}

/*
 * 64 rows of length 1 except rl[0] = 10, rl[20] = 5, rl[40] = 3; 2 SMs.
 *  T=1, BS=32: warp 0 (rows 0..31): halves rows 0..15 -> 10 and 16..31 ->
 *    5, cost 15, block 0 on SM 0; warp 1 (rows 32..63): 3 + 1 = 4, block 1
 *    on SM 1.  M = max(15, 4) = 15.
 *  T=1, BS=64: one block with both warps on SM 0: M = 19.
 *  T=2, BS=32: iterations ceil(rl/2): 5, 3, 2, else 1; a warp covers 16
 *    rows, a half 8.  warp 0: 5 + 1 = 6 (SM 0); warp 1: rows 16..23 hold
 *    row 20 -> 3 + 1 = 4 (SM 1); warp 2: 1 + 2 = 3 (SM 0); warp 3: 2 (SM 1).
 *    M = max(6 + 3, 4 + 2) = 9.
 *  T=32, BS=64: one row per warp, each half pays ceil(rl/32) = 1: warps
 *    cost 2; 32 blocks of 2 warps, 16 blocks per SM: M = 16 * 2 * 2 = 64.
 */
START_TEST(test_hand_small)
{
  int rl[64], i;

  for (i = 0; i < 64; i++)
    rl[i] = 1;
  rl[0] = 10;
  rl[20] = 5;
  rl[40] = 3;
  ck_assert_int_eq(cost(rl, 64, 2, 32, 1), 15);
  ck_assert_int_eq(cost(rl, 64, 2, 64, 1), 19);
  ck_assert_int_eq(cost(rl, 64, 2, 32, 2), 9);
  ck_assert_int_eq(cost(rl, 64, 2, 64, 32), 64);
}
END_TEST

/*
 * A partial last warp: rows {4, 0, 7}, T=4, BS=32, 3 SMs: 12 threads, one
 * warp whose first half covers rows 0..3 (only 0..2 exist): iterations 1,
 * 0, 2 -> 2; the second half has no thread.  M = 2.
 * Empty rows cost nothing: T=32 on {0, 0}: M = 0.
 */
START_TEST(test_hand_tail)
{
  int rl[3] = { 4, 0, 7 }, z[2] = { 0, 0 };

  ck_assert_int_eq(cost(rl, 3, 3, 32, 4), 2);
  ck_assert_int_eq(cost(z, 2, 3, 64, 32), 0);
  ck_assert_int_eq(cost(rl, 0, 3, 64, 1), 0);
}
END_TEST

/*
 * Cyclic blocks: 5 blocks of 32 rows (T=1, BS=32) whose rows all have
 * length b+1 in block b, on 3 SMs.  Block b costs 2(b+1): SM 0 gets blocks
 * 0 and 3 (2 + 8 = 10), SM 1 blocks 1 and 4 (4 + 10 = 14), SM 2 block 2
 * (6).  M = 14.  On 1 SM everything adds up: 2+4+6+8+10 = 30.
 */
START_TEST(test_hand_cyclic)
{
  int rl[160], i;

  for (i = 0; i < 160; i++)
    rl[i] = i / 32 + 1;
  ck_assert_int_eq(cost(rl, 160, 3, 32, 1), 14);
  ck_assert_int_eq(cost(rl, 160, 1, 32, 1), 30);
}
END_TEST

/*
 * T = 16: a row fills one half-warp, so each half costs its own row.  Rows
 * {40, 3, 17, 16}: iterations 3, 1, 2, 1; warp 0 = rows 0, 1 -> 3 + 1 = 4,
 * warp 1 = rows 2, 3 -> 2 + 1 = 3.  BS = 64 (one block): M = 7; BS = 32 on
 * 2 SMs: M = 4.
 */
START_TEST(test_hand_t16)
{
  int rl[4] = { 40, 3, 17, 16 };

  ck_assert_int_eq(cost(rl, 4, 1, 64, 16), 7);
  ck_assert_int_eq(cost(rl, 4, 2, 32, 16), 4);
}
END_TEST

/* The model computed thread by thread, as the paper words it. */
static int64_t brute(const int *rl, int64_t rows, int sms, int ws, int bs,
                     int t)
{
  int64_t nblocks = (rows * t + bs - 1) / bs, b, w, th, best = 0;
  int64_t *sm = calloc((size_t)sms, sizeof *sm);
  int h;

  for (b = 0; b < nblocks; b++) {
    for (w = 0; w < bs / ws; w++) {
      int64_t c = 0;

      for (h = 0; h < 2; h++) {
        int64_t mx = 0;

        for (th = 0; th < ws / 2; th++) {
          int64_t g = b * bs + w * ws + h * (ws / 2) + th, r = g / t, it;

          if (r >= rows)
            continue;
          it = (rl[r] + t - 1) / t;
          if (it > mx)
            mx = it;
        }
        c += mx;
      }
      sm[b % sms] += c;
    }
  }
  for (b = 0; b < sms; b++)
    if (sm[b] > best)
      best = sm[b];
  free(sm);
  return best;
}

START_TEST(test_brute_force)
{
  int rows = 1000 + _i * 37, *rl = malloc((size_t)rows * sizeof *rl);
  int sms = 1 + _i * 3, i, bs, t;
  unsigned s = 12345u + (unsigned)_i;
  struct spmvd_model_gpu g = gpu(sms);
  int64_t *rp;

  for (i = 0; i < rows; i++) {
    s = s * 1103515245u + 12345u;
    rl[i] = (int)((s >> 16) % 50);
    if (i % 97 == 0)
      rl[i] += 300;
  }
  rp = offsets(rl, rows);
  for (bs = 32; bs <= 256; bs += 32)
    for (t = 1; t <= 32; t *= 2)
      ck_assert_int_eq(spmvd_model_cost(rp, rows, &g, bs, t, NULL),
                       brute(rl, rows, sms, 32, bs, t));
  free(rp);
  free(rl);
}
END_TEST

/* The grid computes every BS of a T in one pass over the rows: each cell
 * must equal the brute-force M of Eq. 1-4 for its (BS, T). */
START_TEST(test_grid_brute_force)
{
  int rows = 5003, *rl = malloc((size_t)rows * sizeof *rl), i, j;
  unsigned s = 777u;
  struct spmvd_model_gpu g = gpu(7);
  struct spmvd_model_grid *grid = malloc(sizeof *grid);
  struct spmv_csr A;

  for (i = 0; i < rows; i++) {
    s = s * 1103515245u + 12345u;
    rl[i] = (int)((s >> 16) % 40);
    if (i % 211 == 0)
      rl[i] += 900;
  }
  memset(&A, 0, sizeof A);
  A.rows = A.cols = rows;
  A.row_ptr = offsets(rl, rows);
  A.nnz = A.row_ptr[rows];
  ck_assert_int_eq(spmvd_model_grid_compute(&A, &g, grid, NULL), 0);
  ck_assert_int_ge(grid->nbs, 2);
  for (i = 0; i < grid->nbs; i++)
    for (j = 0; j < grid->nt; j++)
      ck_assert_int_eq(grid->m[i][j],
                       brute(rl, rows, 7, 32, grid->bs[i], grid->t[j]));
  free(A.row_ptr);
  free(grid);
  free(rl);
}
END_TEST

/* Full-occupancy BS values and the tie rule. */
START_TEST(test_grid_bs_and_pick)
{
  struct spmvd_model_gpu h100 = { 132, 32, 2048, 32, 1024 };
  struct spmvd_model_gpu gt200 = { 2, 32, 1024, 8, 512 };
  struct spmvd_model_grid *grid = malloc(sizeof *grid);
  struct spmv_config cfg, ranked[8];
  struct spmv_csr A;
  int64_t *rp = malloc(4097 * sizeof *rp);
  int i, n;

  for (i = 0; i <= 4096; i++)
    rp[i] = i;
  memset(&A, 0, sizeof A);
  A.rows = A.cols = A.nnz = 4096;
  A.row_ptr = rp;
  ck_assert_int_eq(spmvd_model_grid_compute(&A, &h100, grid, NULL), 0);
  ck_assert_int_eq(grid->nbs, 5);
  ck_assert_int_eq(grid->bs[0], 64);
  ck_assert_int_eq(grid->bs[4], 1024);
  ck_assert_int_eq(grid->nt, 6);
  ck_assert_int_eq(grid->t[5], 32);
  /*
   * GT200-like: 8 blocks / SM of at most 512 threads, 1024 threads / SM:
   * only 128, 256 and 512 reach 1024 resident threads.  4096 rows of one
   * entry on 2 SMs, T = 1: 128 warps of cost 2 split evenly: M = 128 for
   * every BS, so the tie goes to BS = 128.  T = 2 doubles the warps: 256.
   */
  ck_assert_int_eq(spmvd_model_grid_compute(&A, &gt200, grid, NULL), 0);
  ck_assert_int_eq(grid->nbs, 3);
  ck_assert_int_eq(grid->bs[0], 128);
  ck_assert_int_eq(grid->bs[1], 256);
  ck_assert_int_eq(grid->bs[2], 512);
  ck_assert_int_eq(grid->m[0][0], 128);
  ck_assert_int_eq(grid->m[2][0], 128);
  ck_assert_int_eq(grid->m[0][1], 256);
  spmvd_model_pick(grid, &cfg);
  ck_assert_int_eq(cfg.format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(cfg.bs, 128);
  ck_assert_int_eq(cfg.tpr, 1);
  n = spmvd_model_ranked(grid, ranked, 8);
  ck_assert_int_eq(n, 6);
  ck_assert_int_eq(ranked[0].tpr, 1);
  ck_assert_int_eq(ranked[0].bs, 128);
  ck_assert_int_eq(ranked[1].tpr, 2);
  free(rp);
  free(grid);
}
END_TEST

/*
 * One row of 320 entries at the head of every half-warp of one-thread rows,
 * the other 15 empty: with T = 1 each half-warp pays 320 iterations for 16
 * rows; with T = 16 the long row pays 20 and the empty ones nothing; with
 * T = 32, 10 per half.  The model must pick T >= 16.  Rows of equal short
 * length cost the same per row for every T (2 iterations per 16 rows at
 * T = 1 and at T = 2), so the tie goes to the smallest T.
 */
START_TEST(test_pick_long_rows)
{
  struct spmvd_model_gpu g = { 8, 32, 2048, 32, 1024 };
  struct spmvd_model_grid *grid = malloc(sizeof *grid);
  struct spmv_csr A;
  struct spmv_config cfg;
  int rows = 16000, i, *rl = malloc((size_t)rows * sizeof *rl);

  for (i = 0; i < rows; i++)
    rl[i] = i % 16 == 0 ? 320 : 0;
  memset(&A, 0, sizeof A);
  A.rows = A.cols = rows;
  A.row_ptr = offsets(rl, rows);
  A.nnz = A.row_ptr[rows];
  ck_assert_int_eq(spmvd_model_grid_compute(&A, &g, grid, NULL), 0);
  spmvd_model_pick(grid, &cfg);
  ck_assert_int_ge(cfg.tpr, 16);
  free(A.row_ptr);
  /* 16384 rows: every BS spreads evenly over the 8 SMs at T = 1 and 2, so
   * both give M = 256 and the tie goes to T = 1 (with 16000 rows, T = 2's
   * smaller blocks balance better and win, 252 to 256). */
  rows = 16384;
  rl = realloc(rl, (size_t)rows * sizeof *rl);
  for (i = 0; i < rows; i++)
    rl[i] = 2;
  A.rows = A.cols = rows;
  A.row_ptr = offsets(rl, rows);
  A.nnz = A.row_ptr[rows];
  ck_assert_int_eq(spmvd_model_grid_compute(&A, &g, grid, NULL), 0);
  spmvd_model_pick(grid, &cfg);
  ck_assert_int_eq(cfg.tpr, 1);
  ck_assert_int_eq(cfg.bs, 64);
  ck_assert_int_eq(grid->m[grid->best_i][grid->best_j], 256);
  free(A.row_ptr);
  free(rl);
  free(grid);
}
END_TEST

/* Bad inputs give clear errors. */
START_TEST(test_bad_inputs)
{
  struct spmvd_model_gpu g = gpu(4), cpu = { 16, 1, 1, 1, 1 };
  int64_t rp[3] = { 0, 1, 2 };
  struct spmv_error e;

  ck_assert_int_eq(spmvd_model_cost(rp, 2, &g, 48, 1, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "BS = 48"));
  ck_assert_int_eq(spmvd_model_cost(rp, 2, &g, 64, 3, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "T = 3"));
  ck_assert_int_eq(spmvd_model_cost(rp, 2, &cpu, 64, 1, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "warp size 1"));
  g.sms = 0;
  ck_assert_int_eq(spmvd_model_gpu_check(&g, &e), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(e.msg, "SM count 0"));
}
END_TEST

/* The JSON report carries the grid and the pick. */
START_TEST(test_report_json)
{
  struct spmvd_model_gpu g = { 2, 32, 1024, 8, 512 };
  struct spmvd_model_grid *grid = malloc(sizeof *grid);
  struct spmv_csr *A = spmv_gen_stencil2d(30, 30, 5, NULL);
  json_t *doc, *m;
  struct spmv_config cfg;
  char text[64];
  FILE *f = tmpfile();

  ck_assert_int_eq(spmvd_model_grid_compute(A, &g, grid, NULL), 0);
  doc = spmvd_model_report_json(grid);
  ck_assert_ptr_nonnull(doc);
  ck_assert_int_eq(json_integer_value(json_object_get(doc, "rows")), 900);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "bs")), 3);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "t")), 6);
  m = json_object_get(doc, "m");
  ck_assert_int_eq(json_array_size(m), 3);
  ck_assert_int_eq(json_integer_value(json_array_get(
                       json_array_get(m, grid->best_i), grid->best_j)),
                   grid->m[grid->best_i][grid->best_j]);
  spmvd_model_pick(grid, &cfg);
  spmv_config_format(&cfg, text, sizeof text);
  ck_assert_str_eq(json_string_value(json_object_get(
                       json_object_get(doc, "pick"), "config")), text);
  ck_assert_int_eq(json_integer_value(json_object_get(
                       json_object_get(doc, "gpu"), "sms")), 2);
  spmvd_model_report_print(grid, f);
  ck_assert_int_gt(ftell(f), 100);
  fclose(f);
  json_decref(doc);
  spmv_csr_free(A);
  free(grid);
}
END_TEST

/* The model suite. */
static Suite *model_suite(void)
{
  Suite *s = suite_create("model");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_hand_small);
  tcase_add_test(tc, test_hand_tail);
  tcase_add_test(tc, test_hand_cyclic);
  tcase_add_test(tc, test_hand_t16);
  tcase_add_loop_test(tc, test_brute_force, 0, 4);
  tcase_add_test(tc, test_grid_brute_force);
  tcase_add_test(tc, test_grid_bs_and_pick);
  tcase_add_test(tc, test_pick_long_rows);
  tcase_add_test(tc, test_bad_inputs);
  tcase_add_test(tc, test_report_json);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(model_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
