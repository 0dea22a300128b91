/* calib_points_refeat.c: calib_points --refeature: the features of the
 * calibration plan's matrices computed here, kept in a file, in place of a
 * table's own; and --rewrite's table. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_points_impl.h"
#include "spmv_profile.h"
#include "spmvd_predict.h"

/*
 * --refeature: the features of the plan's matrices computed here, for
 * tables timed before a feature existed.  The plan is an H100's or H200's
 * (132 SMs, 2048 threads per SM), as every committed table's; a table row
 * whose matrix differs in rows or entries from the plan's is an error.
 * The features are kept in a file, computed once.
 */
static struct {
  int on;
  struct spmvd_pfeat *x[2]; /* [0] f64, [1] f32, by plan matrix index */
  int n[2];
} refeat;

static int refeat_compute(double l2_bytes)
{
  struct spmvd_device_info dev;
  struct spmvd_calib_params prm;
  struct spmv_error e;
  int d;

  memset(&dev, 0, sizeof dev);
  snprintf(dev.backend, sizeof dev.backend, "cuda");
  snprintf(dev.name, sizeof dev.name, "plan of a 132-SM GPU");
  dev.sms = 132;  /* replay_threads */
  dev.warp_size = 32;
  dev.max_threads_per_sm = 2048;
  dev.max_blocks_per_sm = 32;
  dev.max_threads_per_block = 1024;
  dev.l2_bytes = (uint64_t)l2_bytes;
  spmvd_calib_params_default(&prm);
  for (d = 0; d < 2; d++) {
    enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;
    struct spmvd_calib_plan *plan = NULL;
    size_t k;

    spmv_error_clear(&e);
    if (spmvd_calib_plan_new(&dev, dt, &prm, &plan, &e) != 0) {
      fprintf(stderr, "calib_points: %s\n", e.msg);
      return -1;
    }
    refeat.n[d] = plan->nmatrices;
    refeat.x[d] = calloc((size_t)plan->nmatrices, sizeof *refeat.x[d]);
    for (k = 0; refeat.x[d] != NULL && k < plan->n; k++) {
      const struct spmvd_calib_point *pt = &plan->pt[k];
      struct spmv_profile prof;
      struct spmv_csr *A;

      if (k > 0 && pt->matrix == plan->pt[k - 1].matrix)
        continue;
      A = spmvd_calib_matrix(pt, &prm, &e);
      if (A == NULL || spmv_profile_compute(A, &prof, &e) != 0) {
        fprintf(stderr, "calib_points: matrix %d: %s\n", pt->matrix, e.msg);
        spmv_csr_free(A);
        spmvd_calib_plan_free(plan);
        return -1;
      }
      spmvd_predict_features(A, &prof, dt, &refeat.x[d][pt->matrix]);
      spmv_csr_free(A);
    }
    spmvd_calib_plan_free(plan);
    if (refeat.x[d] == NULL) {
      fprintf(stderr, "calib_points: out of memory\n");
      return -1;
    }
  }
  return 0;
}

/* Reads the features file, or computes it and writes it there. */
int calib_points_refeat_load(const char *path, double l2_bytes)
{
  FILE *fp = fopen(path, "rb");
  int d, ok = 1;

  refeat.on = 1;
  if (fp != NULL) {
    size_t size = 0;

    ok = fread(&size, sizeof size, 1, fp) == 1 && size == sizeof **refeat.x;
    for (d = 0; d < 2 && ok; d++) {
      ok = fread(&refeat.n[d], sizeof refeat.n[d], 1, fp) == 1 &&
           refeat.n[d] > 0 &&
           (refeat.x[d] = calloc((size_t)refeat.n[d], sizeof *refeat.x[d])) != NULL &&
           fread(refeat.x[d], sizeof *refeat.x[d], (size_t)refeat.n[d], fp) ==
               (size_t)refeat.n[d];
    }
    fclose(fp);
    if (!ok)
      fprintf(stderr, "calib_points: %s: unreadable, or from a build with "
                      "other features (remove it)\n", path);
    return ok ? 0 : -1;
  }
  if (refeat_compute(l2_bytes) != 0)
    return -1;
  if ((fp = fopen(path, "wb")) == NULL)
    return 0;  /* computed; only not kept */
  {
    size_t size = sizeof **refeat.x;

    fwrite(&size, sizeof size, 1, fp);
  }
  for (d = 0; d < 2; d++) {
    fwrite(&refeat.n[d], sizeof refeat.n[d], 1, fp);
    fwrite(refeat.x[d], sizeof *refeat.x[d], (size_t)refeat.n[d], fp);
  }
  fclose(fp);
  return 0;
}

/* --rewrite's table, or NULL. */
FILE *calib_points_rewrite;

/* Replaces the features x of plan matrix m (of type dtype) when on. */
int calib_points_refeat_apply(const char *dtype, int m, struct spmvd_pfeat *x)
{
  int d = strcmp(dtype, "f32") == 0;
  const struct spmvd_pfeat *r;

  if (!refeat.on)
    return 0;
  if (m < 0 || m >= refeat.n[d] || refeat.x[d][m].rows != x->rows ||
      refeat.x[d][m].nnz != x->nnz) {
    fprintf(stderr, "calib_points: --refeature: %s matrix %d is not the "
                    "plan's (%.0f rows, %.0f entries)\n", dtype, m, x->rows,
            x->nnz);
    return -1;
  }
  r = &refeat.x[d][m];
  *x = *r;
  return 0;
}
