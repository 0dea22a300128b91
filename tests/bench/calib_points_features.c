/* calib_points_features.c: the features' columns that calib_points'
 * tables print, and calib_points --features: the features and the CSR
 * footprint of the benchmark suite's matrices (no device). */
#include "config.h"

#include <stdio.h>

#include "calib_points_impl.h"
#include "spmv_profile.h"
#include "spmvd_predict.h"
#include "suite.h"

/* The features' columns of a points table (spmvd_pfeat_columns), on fp. */
void calib_points_print_feat(FILE *fp, const struct spmvd_pfeat *f)
{
  for (int i = 0; i < SPMVD_PFEAT_NCOLUMNS; i++)
    fprintf(fp, "%s%.0f", i > 0 ? "\t" : "", spmvd_pfeat_value(f, i));
}

/* Their names, tab-separated, on fp. */
void calib_points_print_feat_header(FILE *fp)
{
  for (int i = 0; i < SPMVD_PFEAT_NCOLUMNS; i++)
    fprintf(fp, "%s%s", i > 0 ? "\t" : "", spmvd_pfeat_columns[i].name);
}

int calib_points_run_features(int sets, const char *only, int dts)
{
  struct bench_suite suite;
  struct spmv_profile prof;
  struct spmvd_pfeat f;
  struct spmv_error e;
  struct spmv_csr *A;
  const char *dir = bench_suite_dir(NULL);
  size_t k;
  int d;

  spmv_error_clear(&e);
  if (bench_suite_init(&suite, sets, 0, only, dir, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    return 1;
  }
  printf("# matrix\tdtype\tcv\t");
  calib_points_print_feat_header(stdout);
  printf("\tbytes\n");
  for (k = 0; k < suite.n; k++) {
    A = bench_suite_make(&suite.e[k], dir, &e);
    if (A == NULL || spmv_profile_compute(A, &prof, &e) != 0) {
      fprintf(stderr, "calib_points: %s: %s\n", suite.e[k].name, e.msg);
      spmv_csr_free(A);
      continue;
    }
    for (d = 0; d < 2; d++) {
      enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;

      if (!(dts & (d == 0 ? 2 : 1)))
        continue;
      spmvd_predict_features(A, &prof, dt, &f);
      printf("%s\t%s\t%.4f\t", suite.e[k].name, spmv_dtype_name(dt),
             prof.rl_cv);
      calib_points_print_feat(stdout, &f);
      printf("\t%.0f\n", f.bytes);
    }
    spmv_csr_free(A);
  }
  bench_suite_fini(&suite);
  return 0;
}
