/* spmvd_ops_calib.c: calibrate, the predictor's calibration of the
 * device, run on the worker and stored by the cache thread. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_cache.h"
#include "spmvd_cachejob.h"
#include "spmvd_conn.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_predict.h"
#include "spmvd_server.h"
#include "spmvd_worker.h"

/* --- calibrate --- */

/* A calibration holds the device for minutes: one at a time.  The front
 * end is one per process, so this flag is the server's. */
static int calibrating;

/* The largest bound of a calibration in seconds (the worker has the
 * default, which depends on its backend). */
#define CALIB_MAX_S 3600.0

/* The fits are stored: the calibration's reply goes out. */
static void on_calibration_stored(struct spmvd_cachejob *j)
{
  struct spmvd_op *o = j->ctx;
  json_t *r = o->result;

  o->result = NULL;
  calibrating = 0;
  if (j->rc < 0) {
    spmvd_log_error("calibration of %s not stored: %s", j->dev.name,
                    j->err.msg);
    json_decref(r);
    spmvd_op_fail(o, &j->err);
    return;
  }
  spmvd_log_info("uid %ld calibrated %s (%s): %zu formats fitted in %.1f s",
                 (long)o->c->uid, j->dev.name, spmv_dtype_name(o->dtype),
                 json_object_size(j->json),
                 json_number_value(json_object_get(r, "seconds")));
  if (o->c->closing) {
    json_decref(r);
    spmvd_op_end(o);
    return;
  }
  spmvd_op_reply(o->c, o->id, r);
  spmvd_op_end(o);
}

/* The worker calibrated: the reply is made, then the fits are stored (on
 * the cache thread), even when the client has gone meanwhile. */
static void on_calibrated(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  const struct spmvd_device_info *dev = spmvd_worker_device(spmvd_op_worker(o));
  json_t *fits = json_object_get(rep, "fits"), *names = json_array(), *v;
  struct spmvd_cachejob *j = NULL;
  struct spmv_error e;
  const char *key;

  if (!err && (!dev || !json_is_object(fits) ||
               !(json_number_value(json_object_get(rep, "max_seconds")) > 0))) {
    spmv_error_set(&e, SPMV_EIO, "bad calibrate reply from the device worker");
    err = &e;
  }
  if (!err && !(j = spmvd_cachejob_new(SPMVD_CJ_CALIBRATION))) {
    spmv_error_set(&e, SPMV_ENOMEM, "out of memory");
    err = &e;
  }
  if (err) {
    calibrating = 0;
    json_decref(names);
    spmvd_op_fail(o, err);
    return;
  }
  json_object_foreach(fits, key, v)
    json_array_append_new(names, json_string(key));
  o->max_s = json_number_value(json_object_get(rep, "max_seconds"));
  o->result = json_copy(rep);
  if (o->result) {
    json_object_del(o->result, "seq");
    json_object_del(o->result, "ok");
    json_object_set_new(o->result, "device", json_string(dev->name));
    json_object_set_new(o->result, "backend", json_string(dev->backend));
    json_object_set_new(o->result, "device_key",
                        json_string(dev->device_key));
    json_object_set_new(o->result, "software_key",
                        json_string(dev->software_key));
    json_object_set_new(o->result, "dtype",
                        json_string(spmv_dtype_name(o->dtype)));
    json_object_set_new(o->result, "max_seconds", json_real(o->max_s));
    json_object_set(o->result, "formats", names);
  }
  json_decref(names);
  j->dev = *dev;
  j->dtype = o->dtype;
  j->json = json_incref(fits);
  spmvd_cachejob_post(o->srv->bio, j, on_calibration_stored, o);
}

/* calibrate {dtype, max_seconds}: the predictor's calibration of the
 * device, run by the worker, its fits stored in the cache. */
void spmvd_ops_run_calibrate(struct spmvd_conn *c, json_t *req, int64_t id)
{
  struct spmvd_server *srv = c->srv;
  const struct spmvd_device_info *dev = spmvd_worker_device(spmvd_conn_worker(c));
  const char *name = dev ? dev->name : "the device";  /* NULL: starting */
  json_t *dtv = json_object_get(req, "dtype");
  json_t *msv = json_object_get(req, "max_seconds");
  json_t *ptv = json_object_get(req, "points");
  char bound[48];
  enum spmv_dtype dt = SPMV_F64;
  struct spmv_error err;
  struct spmvd_op *o = NULL;
  double max_s = 0;
  int rc = 0;

  if (dtv && spmv_dtype_parse(json_string_value(dtv), &dt) < 0)
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "field \"dtype\" must be \"f32\" or \"f64\"");
  else if (msv && spmvd_op_get_number(req, "max_seconds", &max_s, &err) < 0)
    rc = err.code;
  else if (ptv && !json_is_boolean(ptv))
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "field \"points\" must be true or false");
  else if (msv && !(max_s > 0 && max_s <= CALIB_MAX_S))
    rc = spmv_error_set(&err, SPMV_EINVAL,
                        "max_seconds is %g, must be in (0, %g]", max_s,
                        CALIB_MAX_S);
  else if (calibrating)
    rc = spmv_error_set(&err, SPMV_EBUSY,
                        "a calibration of %s is already running: try again "
                        "when it ends", name);
  else if (!srv->bio)
    rc = spmv_error_set(&err, SPMV_ECACHE,
                        "no cache is open: the fits could not be stored");
  else if (!(o = spmvd_op_new(c, id, "calibrate")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  /* Without a bound the worker applies its backend's default; while it
   * starts (dev still NULL) the call waits in its queue like any other. */
  o->dtype = dt;
  o->max_s = max_s;
  calibrating = 1;
  if (max_s > 0)
    snprintf(bound, sizeof bound, "%g s at most", max_s);
  else
    snprintf(bound, sizeof bound, "the default bound");
  spmvd_log_info("uid %ld: calibrating %s (%s), %s", (long)c->uid, name,
                 spmv_dtype_name(dt), bound);
  json_t *call = json_pack("{ss ss}", "op", "calibrate", "dtype",
                           spmv_dtype_name(dt));
  if (call && max_s > 0)
    json_object_set_new(call, "max_seconds", json_real(max_s));
  if (call && json_is_true(ptv))
    json_object_set_new(call, "points", json_true());
  if (!call || spmvd_op_worker_call(o, call, NULL, 0, on_calibrated,
                                 spmvd_op_on_progress, o, &err) < 0) {
    if (!call)
      spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    calibrating = 0;
    spmvd_op_fail(o, &err);
  }
}

