/* spmvd_calib_bound.h: a calibration bounded in time, as the device worker
 * runs it for the calibrate operation. */
#ifndef SPMVD_CALIB_BOUND_H
#define SPMVD_CALIB_BOUND_H

#include <jansson.h>

#include "spmv_error.h"
#include "spmvd_backend.h"
#include "spmvd_calib.h"

/* What a bounded calibration needs from the process that owns the device;
 * every pointer borrowed, ctx passed back. */
struct spmvd_calib_host {
  const struct spmvd_backend_ops *ops;
  struct spmvd_backend *be;
  const struct spmvd_device_info *dev;
  /* Serves what came meanwhile, before each probe matrix (point 0) and
   * each plan point timed (point 1); may be NULL. */
  void (*between)(void *ctx, int point);
  /* Sends event ev (stolen) to the front end. */
  void (*send)(void *ctx, json_t *ev);
  void *ctx;
};

/*
 * The statistical predictor's calibration of values dt on h's device
 * within max_s seconds (0: the backend's default): a probe measures what
 * points cost, the plan is trimmed to fit what is left, and points still
 * waiting at the deadline are skipped.  Progress goes out as {seq,
 * event:"progress", stage:"calibration", done, total, candidate, time_us}
 * events; with want_points the timed points follow once fitted, as {seq,
 * event:"points", ...} events.  On success *rep is a new {fits,
 * planned_points, points, timed, late, matrices, nnz, trimmed,
 * probe_seconds, estimate_seconds, seconds, max_seconds} (the front end
 * stores the fits).  Returns 0 or a negative code: SPMV_ETIMEDOUT when
 * the bound left no format fitted, the backend's (SPMV_EGPU_STICKY among
 * them), SPMV_ENOMEM.
 */
int spmvd_calib_bounded(const struct spmvd_calib_host *h, json_int_t seq,
                        enum spmv_dtype dt, double max_s, int want_points,
                        json_t **rep, struct spmv_error *err);

#endif /* SPMVD_CALIB_BOUND_H */
