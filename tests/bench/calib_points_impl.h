/* calib_points_impl.h: what calib_points' files share: each mode's entry
 * (--points, --features, --twins, --replay), the features' columns that
 * every table prints, and --refeature's features and --rewrite's table,
 * which the replay reads the points through; internal to calib_points. */
#ifndef CALIB_POINTS_IMPL_H
#define CALIB_POINTS_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "spmvd_predict.h"

/* calib_points_collect.c: --points, the calibration plan timed on the
 * device, a line per point. */
int calib_points_run_points(const char *mode, int dts, int64_t work_nnz,
                            int64_t mid_nnz, double budget, int worker, int rounds,
                            const char *rounds_tsv);

/* calib_points_features.c: the features' columns, and --features. */
void calib_points_print_feat(FILE *fp, const struct spmvd_pfeat *f);
void calib_points_print_feat_header(FILE *fp);
int calib_points_run_features(int sets, const char *only, int dts);

/* calib_points_twins.c: --twins. */
int calib_points_run_twins(const char *mode, int sets, const char *only, int dts,
                           int64_t max_nnz);

/* calib_points_refeat.c: --refeature's features and --rewrite's table. */
extern FILE *calib_points_rewrite;
int calib_points_refeat_load(const char *path, double l2_bytes);
int calib_points_refeat_apply(const char *dtype, int m, struct spmvd_pfeat *x);

/* calib_points_replay.c: --replay, the fits against a measured table. */
int calib_points_run_replay(const char *points, const char *measured, double bound,
                            double l2_bytes, int each);

#endif
