/* spmv_admin.c: libspmvclient's requests about the daemon rather than a
 * matrix: status, list, forget, import, calibrate, shutdown. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmv_client_int.h"

/* Runs a request and hands its reply back as a string. */
static int call_to_string(struct spmv_client *c, json_t *req, char **json)
{
  struct spmv_error err;
  json_t *reply = NULL;
  int rc;

  *json = NULL;
  rc = spmvc_simple_call(c, req, &reply);
  if (rc < 0)
    return rc;
  *json = spmvc_dump_reply(reply);
  json_decref(reply);
  if (*json == NULL) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    return spmvc_fail(c, &err);
  }
  return 0;
}

/* The daemon's status as a new JSON string owned by the caller. */
int spmv_status_json(struct spmv_client *c, char **json)
{
  return call_to_string(c, json_pack("{s:s}", "op", "status"), json);
}

/* The caller's loaded matrices as a new JSON string owned by the caller. */
int spmv_list_json(struct spmv_client *c, char **json)
{
  return call_to_string(c, json_pack("{s:s}", "op", "list"), json);
}

/* A fingerprint as forget's schema takes it: 32 lower-case hex digits. */
static int is_fingerprint(const char *s)
{
  size_t n = 0;

  for (; s[n] != '\0'; n++)
    if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
      return 0;
  return n == 32;
}

/* Asks spmvd to forget the tunings of a fingerprint (or "all"). */
int spmv_forget(struct spmv_client *c, const char *fingerprint, int *forgotten)
{
  json_t *reply = NULL;
  int rc;

  /* Checked here, so that a bad argument is EINVAL and costs no request. */
  if (fingerprint == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_forget: fingerprint is NULL");
  if (strcmp(fingerprint, "all") != 0 && !is_fingerprint(fingerprint))
    return spmvc_failf(c, SPMV_EINVAL,
                       "spmv_forget: fingerprint '%.64s' is neither 32 "
                       "lower-case hex digits nor \"all\"", fingerprint);
  rc = spmvc_simple_call(c, json_pack("{s:s, s:s}", "op", "forget", "fingerprint",
                                fingerprint), &reply);
  if (rc == 0 && forgotten != NULL)
    *forgotten = (int)spmvc_get_int(reply, "forgotten", 0);
  json_decref(reply);
  return rc;
}

/* Asks spmvd for its cached tunings, as spmvctl export writes them. */
int spmv_export_json(struct spmv_client *c, const char *fingerprint,
                     char **json)
{
  struct spmv_error err;
  json_t *req, *reply = NULL;
  int rc;

  if (json == NULL)
    return spmvc_failf(c, SPMV_EINVAL, "spmv_export_json: json is NULL");
  *json = NULL;
  if (fingerprint != NULL && strcmp(fingerprint, "all") != 0 &&
      !is_fingerprint(fingerprint))
    return spmvc_failf(c, SPMV_EINVAL,
                       "spmv_export_json: fingerprint '%.64s' is neither 32 "
                       "lower-case hex digits nor \"all\"", fingerprint);
  req = fingerprint != NULL
            ? json_pack("{s:s, s:s}", "op", "export", "fingerprint", fingerprint)
            : json_pack("{s:s}", "op", "export");
  rc = spmvc_simple_call(c, req, &reply);
  if (rc < 0)
    return rc;
  json_t *doc = json_object_get(reply, "export");
  *json = json_is_object(doc) ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17))
                              : NULL;
  json_decref(reply);
  if (*json == NULL) {
    spmv_error_set(&err, doc ? SPMV_ENOMEM : SPMV_EPROTO,
                   doc ? "out of memory" : "spmvd's export reply has no document");
    return spmvc_fail(c, &err);
  }
  return 0;
}

/* Asks spmvd to import exported tunings (json borrowed). */
int spmv_import_json(struct spmv_client *c, const char *json, int *imported,
                     int *skipped)
{
  struct spmv_error err;
  json_error_t jerr;
  json_t *doc, *tunings, *reply = NULL;
  int rc;

  doc = json != NULL ? json_loads(json, 0, &jerr) : NULL;
  if (doc == NULL) {
    spmv_error_set(&err, SPMV_EINVAL, "tunings to import are not JSON: %s",
                   json != NULL ? jerr.text : "NULL");
    return spmvc_fail(c, &err);
  }
  tunings = json_is_array(doc) ? doc : json_object_get(doc, "tunings");
  if (!json_is_array(tunings)) {
    json_decref(doc);
    spmv_error_set(&err, SPMV_EINVAL,
                   "tunings to import need a \"tunings\" array (as spmvctl export writes)");
    return spmvc_fail(c, &err);
  }
  json_t *req = json_pack("{s:s, s:O}", "op", "import", "tunings", tunings);
  json_t *splits = json_is_object(doc) ? json_object_get(doc, "splits") : NULL;
  /* The splits' picks travel with the tunings, where the export has them. */
  if (req && json_is_array(splits))
    json_object_set(req, "splits", splits);
  rc = spmvc_simple_call(c, req, &reply);
  json_decref(doc);
  if (rc == 0) {
    if (imported != NULL)
      *imported = (int)spmvc_get_int(reply, "imported", 0);
    if (skipped != NULL)
      *skipped = (int)spmvc_get_int(reply, "skipped", 0);
  }
  json_decref(reply);
  return rc;
}

int spmv_shutdown(struct spmv_client *c, int wait)
{
  json_t *reply = NULL;
  int rc = spmvc_simple_call(c, json_pack("{s:s}", "op", "shutdown"), &reply);
  char buf[256];
  ssize_t n;

  json_decref(reply);
  if (rc != 0 || !wait)
    return rc;
  /* The daemon closes the connection once its requests are done; nothing
   * else is sent on it meanwhile. */
  pthread_mutex_lock(&c->lock);
  while (c->fd >= 0 && ((n = read(c->fd, buf, sizeof buf)) > 0 ||
                        (n < 0 && errno == EINTR)))
    ;
  pthread_mutex_unlock(&c->lock);
  return 0;
}

/* Calibrates the daemon's predictor; *json (may be NULL) gets the reply. */
int spmv_calibrate(struct spmv_client *c, enum spmv_dtype dtype,
                   double max_seconds, spmv_progress_fn progress, void *arg,
                   char **json)
{
  return spmv_calibrate_points(c, dtype, max_seconds, progress, NULL, arg,
                               json);
}

/* The same, handing the timed points to points when it is not NULL. */
int spmv_calibrate_points(struct spmv_client *c, enum spmv_dtype dtype,
                          double max_seconds, spmv_progress_fn progress,
                          spmv_points_fn points, void *arg, char **json)
{
  struct spmvc_progress_cb cb = { progress, arg, points, 0 };
  const char *dt = spmv_dtype_name(dtype);
  struct spmv_error err;
  json_t *req, *reply = NULL;
  int rc;

  spmv_error_clear(&err);
  if (json != NULL)
    *json = NULL;
  if (dt == NULL) {
    spmv_error_set(&err, SPMV_EINVAL, "spmv_calibrate: unknown value type %d",
                   (int)dtype);
    return spmvc_fail(c, &err);
  }
  req = json_pack("{s:s, s:s}", "op", "calibrate", "dtype", dt);
  if (req != NULL &&
      ((max_seconds > 0 &&
        json_object_set_new(req, "max_seconds", json_real(max_seconds)) < 0) ||
       (points != NULL &&
        json_object_set_new(req, "points", json_true()) < 0))) {
    json_decref(req);
    req = NULL;
  }
  if (req == NULL) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    return spmvc_fail(c, &err);
  }
  spmvc_lock(c);
  rc = spmvc_call(c, req, NULL, &cb, &reply, NULL, NULL, &err);
  spmvc_unlock(c);
  json_decref(req);
  if (rc == 0 && json != NULL && (*json = spmvc_dump_reply(reply)) == NULL)
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  json_decref(reply);
  if (rc < 0)
    spmvc_fail(c, &err);
  return rc;
}
