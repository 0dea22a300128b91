/* calib_points_twins.c: calib_points --twins: real matrices timed beside
 * their permuted and generated twins, to tell the calibration's matrices
 * from real ones. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_points_impl.h"
#include "eval_store.h"
#include "spmv_gen.h"
#include "spmv_gen_impl.h"
#include "spmv_profile.h"
#include "spmv_stats.h"
#include "suite.h"

/* A with its columns sent through perm (a permutation of the columns),
 * each row's entries sorted again: the same rows, another x pattern. */
static struct spmv_csr *permute_cols(const struct spmv_csr *A,
                                     const int32_t *perm)
{
  struct spmv_csr *B = spmv_csr_new(A->rows, A->cols, A->nnz);

  if (B == NULL)
    return NULL;
  memcpy(B->row_ptr, A->row_ptr, (size_t)(A->rows + 1) * sizeof *B->row_ptr);
  memcpy(B->val, A->val, (size_t)A->nnz * sizeof *B->val);
  for (int64_t k = 0; k < A->nnz; k++)
    B->col_idx[k] = perm[A->col_idx[k]];
  for (int64_t i = 0; i < A->rows; i++)
    spmv_gen_sort(B->col_idx + B->row_ptr[i], B->val + B->row_ptr[i],
                  B->row_ptr[i + 1] - B->row_ptr[i]);
  return B;
}

#define TWIN_VARIANTS 4
#define TWIN_PASSES 3

/*
 * --twins: does a calibration matrix of a real matrix's statistics time
 * as the real one does?  For each matrix of the suite under max_nnz entries:
 * the matrix, its columns permuted at random, and two generated twins
 * (rows, columns, mean and cv of its row lengths, normal lengths, columns
 * near the diagonal or at random), each timed as the worker times a
 * calibration point under a few configurations, in TWIN_PASSES passes
 * that alternate the variants; a line per matrix, configuration and
 * variant with the median of the passes.
 */
int calib_points_run_twins(const char *mode, int sets, const char *only, int dts,
                           int64_t max_nnz)
{
  static const char *cfgs[] = {
    "csr-vector bs=256 tpr=16", "csr-stream bs=128 k=4", "csr-scalar bs=256",
    "jad bs=256", "coo bs=256", "hyb bs=256 k=0",
  };
  enum { NC = sizeof cfgs / sizeof cfgs[0] };
  static const char *vname[TWIN_VARIANTS] = { "real", "colperm", "twin-diag",
                                              "twin-random" };
  struct bench_suite suite;
  struct eval_store *s = NULL;
  struct spmv_error e;
  const char *dir = bench_suite_dir(NULL);

  spmv_error_clear(&e);
  if (bench_suite_init(&suite, sets, 0, only, dir, &e) != 0 ||
      eval_store_open(mode, &s, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    return 1;
  }
  eval_store_calib_direct(s, 1);
  printf("# device: %s (%d SMs)\n# matrix\tdtype\trows\tnnz\tconfig\tvariant\tus\n",
         eval_store_info(s)->name, eval_store_info(s)->sms);
  for (size_t k = 0; k < suite.n; k++) {
    struct spmv_csr *V[TWIN_VARIANTS] = { NULL };
    struct spmv_profile prof;
    int32_t *perm = NULL;

    V[0] = bench_suite_make(&suite.e[k], dir, &e);
    if (V[0] == NULL || V[0]->nnz >= max_nnz ||
        spmv_profile_compute(V[0], &prof, &e) != 0) {
      spmv_csr_free(V[0]);
      continue;
    }
    perm = spmv_gen_perm(V[0]->cols, (uint64_t)k + 1);
    if (perm != NULL) {
      V[1] = permute_cols(V[0], perm);
      free(perm);
    }
    for (int v = 2; v < TWIN_VARIANTS; v++) {
      struct spmv_gen_spec sp = {
        V[0]->rows, V[0]->cols, prof.rl_mean, prof.rl_cv, SPMV_GEN_NORMAL,
        v == 2 ? SPMV_GEN_DIAGONAL : SPMV_GEN_RANDOM,
      };
      V[v] = spmv_gen_matching(&sp, 1, &e);
    }
    for (int d = 0; d < 2; d++) {
      enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;
      double t[NC][TWIN_VARIANTS][TWIN_PASSES];

      if (!(dts & (d == 0 ? 2 : 1)))
        continue;
      for (int p = 0; p < TWIN_PASSES; p++)
        for (int c = 0; c < (int)NC; c++)
          for (int v = 0; v < TWIN_VARIANTS; v++) {
            struct spmv_config cfg;
            int w = (v + p) % TWIN_VARIANTS;  /* another order each pass */

            t[c][w][p] = NAN;
            if (V[w] != NULL && spmv_config_parse(cfgs[c], &cfg, &e) == 0 &&
                eval_store_calib_time(s, V[w], dt, &cfg, &t[c][w][p], &e) != 0)
              t[c][w][p] = NAN;
          }
      for (int c = 0; c < (int)NC; c++)
        for (int v = 0; v < TWIN_VARIANTS; v++)
          printf("%s\t%s\t%lld\t%lld\t%s\t%s\t%.4f\n", suite.e[k].name,
                 spmv_dtype_name(dt), (long long)V[0]->rows,
                 (long long)V[0]->nnz, cfgs[c], vname[v],
                 spmv_median(t[c][v], TWIN_PASSES));
      fflush(stdout);
    }
    for (int v = 0; v < TWIN_VARIANTS; v++)
      spmv_csr_free(V[v]);
  }
  eval_store_close(s);
  bench_suite_fini(&suite);
  return 0;
}
