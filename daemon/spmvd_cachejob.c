/* spmvd_cachejob.c: the front end's cache requests, run on the cache thread. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_bio.h"
#include "spmvd_cachejob.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_predict.h"

/* A new zeroed job of kind. */
struct spmvd_cachejob *spmvd_cachejob_new(enum spmvd_cachejob_kind kind)
{
  struct spmvd_cachejob *j = calloc(1, sizeof *j);
  if (j)
    j->kind = kind;
  return j;
}

/* Frees j, its trials and its json. */
void spmvd_cachejob_free(struct spmvd_cachejob *j)
{
  if (!j)
    return;
  free(j->trials);
  json_decref(j->json);
  free(j);
}

/* Reads a user database entry with a buffer that grows on ERANGE. */
static char *nss_buf(char *buf, size_t *n)
{
  free(buf);
  *n = *n ? *n * 2 : 4096;
  return *n > ((size_t)1 << 20) ? NULL : malloc(*n);
}

/* May uid (primary group gid) change the cache? */
int spmvd_cachejob_admin(uid_t uid, gid_t gid, const char *group)
{
  struct group gr, *grp = NULL;
  struct passwd pw, *pwp = NULL;
  char *buf = NULL, *pbuf = NULL;
  size_t n = 0, pn = 0;
  int rc, ok = 0;

  /* root, and the user whose daemon it is (a user instance's cache is
   * its user's own). */
  if (uid == 0 || uid == geteuid())
    return 1;
  if (!group || !*group)
    return 0;
  do {
    if (!(buf = nss_buf(buf, &n)))
      return 0;
    rc = getgrnam_r(group, &gr, buf, n, &grp);
  } while (rc == ERANGE);
  if (rc != 0 || !grp)
    goto out;
  if (gid == grp->gr_gid) {
    ok = 1;
    goto out;
  }
  /* The members' names live in buf: the passwd entry needs its own. */
  do {
    if (!(pbuf = nss_buf(pbuf, &pn)))
      goto out;
    rc = getpwuid_r(uid, &pw, pbuf, pn, &pwp);
  } while (rc == ERANGE);
  for (char **mem = grp->gr_mem; rc == 0 && pwp && mem && *mem; mem++)
    if (strcmp(*mem, pwp->pw_name) == 0)
      ok = 1;
out:
  free(pbuf);
  free(buf);
  return ok;
}

/* A hit's extras from the cache's show of its matrix: the trials stored
 * with its tuning, as the info op lists them (j->json, a new array), and
 * the matrix's profile (j->prof; j->have_prof 0 when it cannot be read). */
static void cached_extras(struct spmvd_cache *c, struct spmvd_cachejob *j)
{
  json_t *show = NULL, *out = json_array(), *tu, *t;
  struct spmv_error e;
  size_t i, k;

  j->json = out;
  if (spmvd_cache_show(c, j->fp, &show, &e) < 0) {
    spmvd_log_debug("cache show %s: %s", j->fp, e.msg);
    return;
  }
  j->have_prof = spmvd_ipc_profile_unpack(json_object_get(show, "profile"),
                                          &j->prof) == 0;
  json_array_foreach(json_object_get(show, "tunings"), i, tu) {
    if (json_integer_value(json_object_get(tu, "id")) != j->t.id)
      continue;
    json_array_foreach(json_object_get(tu, "trials"), k, t)
      json_array_append_new(out, json_pack("{sO sO sO}", "config",
                                           json_object_get(t, "config"),
                                           "time_us",
                                           json_object_get(t, "time_us"),
                                           "status",
                                           json_object_get(t, "status")));
  }
  json_decref(show);
}

static int do_lookup(struct spmvd_cache *c, struct spmvd_cachejob *j)
{
  int rc = spmvd_cache_lookup(c, j->fp, j->dev.device_key,
                              j->dev.software_key, j->dtype, &j->t,
                              j->reason, sizeof j->reason, &j->err);
  if (rc < 0)
    return rc;
  j->hit = rc;
  if (j->hit)
    cached_extras(c, j);
  return 0;
}

static int do_exclude(struct spmvd_cache *c, struct spmvd_cachejob *j)
{
  struct spmvd_predictor *pred = malloc(sizeof *pred);
  struct spmv_error e;
  int rc;

  rc = spmvd_cache_quarantined(c, j->fp, j->dev.device_key,
                               j->dev.software_key, j->dtype, j->ex,
                               SPMVD_CJ_MAX_EXCLUDE, &j->err);
  j->nex = rc > 0 ? rc : 0;
  if (!pred)
    return rc < 0 ? rc : 0;
  /* The fits are a help, not a need: a failure only loses them. */
  int got = spmvd_predict_load(c, &j->dev, j->dtype, pred, &e);
  if (got < 0)
    spmvd_log_warn("cache: the calibration of %s: %s", j->dev.name, e.msg);
  else if (got > 0)
    j->json = spmvd_predict_to_json(pred);
  free(pred);
  return rc < 0 ? rc : 0;
}

static int do_calibration(struct spmvd_cache *c, struct spmvd_cachejob *j)
{
  struct spmvd_predictor *pred = malloc(sizeof *pred);
  int rc;

  if (!pred)
    return spmv_error_set(&j->err, SPMV_ENOMEM, "out of memory");
  rc = spmvd_predict_from_json(j->json, pred, &j->err);
  if (rc == 0)
    rc = spmvd_predict_save(c, &j->dev, j->dtype, pred, &j->err);
  free(pred);
  return rc;
}

/* The export, measured here, off the loop: the document travels whole in
 * the reply's JSON, as import's does in its request. */
static int do_export(struct spmvd_cache *c, struct spmvd_cachejob *j)
{
  int rc = spmvd_cache_export(c, j->fp, &j->json, &j->err);
  size_t len = rc == 0 ? json_dumpb(j->json, NULL, 0, JSON_COMPACT) : 0;

  /* The reply's own fields ride beside it. */
  if (rc == 0 && len + 64 > j->max_json) {
    json_decref(j->json);
    j->json = NULL;
    rc = spmv_error_set(&j->err, SPMV_ELIMIT, "the export is %zu bytes of JSON, "
                        "over max_json_bytes (%zu): export one fingerprint at "
                        "a time, or read the database with spmvctl export",
                        len, j->max_json);
  }
  return rc;
}

static int do_admin(struct spmvd_cache *c, struct spmvd_cachejob *j)
{
  const char *op = j->kind == SPMVD_CJ_FORGET ? "forget"
                   : j->kind == SPMVD_CJ_EXPORT ? "export" : "import";

  if (!spmvd_cachejob_admin(j->uid, j->gid, j->admin_group))
    return spmv_error_set(&j->err, SPMV_EPERM,
                          "%s needs root or the admin group%s%s", op,
                          *j->admin_group ? " " : "", j->admin_group);
  if (j->invalid.code) {
    j->err = j->invalid;
    return j->invalid.code;
  }
  if (j->kind == SPMVD_CJ_FORGET)
    return spmvd_cache_forget(c, j->fp, &j->n, &j->err);
  if (j->kind == SPMVD_CJ_EXPORT)
    return do_export(c, j);
  return spmvd_cache_import(c, j->json, *j->dev.device_key ? j->dev.device_key : NULL,
                            *j->dev.software_key ? j->dev.software_key : NULL,
                            &j->n, &j->skipped, &j->err);
}

/* A split's blocks' configurations, looked up or stored. */
static int do_split(struct spmvd_cache *c, struct spmvd_cachejob *j)
{
  char *text = NULL;
  int rc;

  if (j->kind == SPMVD_CJ_SPLIT_PUT) {
    if (spmvd_cache_readonly(c))
      return 0;  /* said at start: no warning per split */
    if (!(text = json_dumps(j->json, JSON_COMPACT)))
      return spmv_error_set(&j->err, SPMV_ENOMEM, "out of memory");
    rc = spmvd_cache_split_put(c, j->fp, j->device_set, j->dev.software_key,
                               j->dtype, j->blocks, text, &j->err);
    free(text);
    return rc;
  }
  rc = spmvd_cache_split_get(c, j->fp, j->device_set, j->dev.software_key,
                             j->dtype, j->blocks, &text, &j->err);
  if (rc == 1) {
    json_t *a = json_loads(text, 0, NULL);
    /* A row that is not an array of that many texts is a miss. */
    j->hit = json_is_array(a) && (int)json_array_size(a) == j->blocks;
    for (size_t i = 0; j->hit && i < json_array_size(a); i++)
      j->hit = json_is_string(json_array_get(a, i));
    if (j->hit)
      j->json = a;
    else
      json_decref(a);
  }
  free(text);
  return rc < 0 ? rc : 0;
}

/* On the cache thread. */
static void work(struct spmvd_cache *c, void *arg)
{
  struct spmvd_cachejob *j = arg;

  spmv_error_clear(&j->err);
  switch (j->kind) {
  case SPMVD_CJ_DEVICE:
    /* A read-only cache was announced at start: no warning per write. */
    if (!spmvd_cache_readonly(c))
      j->rc = spmvd_cache_device_put(c, &j->dev, &j->err);
    break;
  case SPMVD_CJ_LOOKUP:
    j->rc = do_lookup(c, j);
    break;
  case SPMVD_CJ_EXCLUDE:
    j->rc = do_exclude(c, j);
    break;
  case SPMVD_CJ_STORE:
    j->rc = spmvd_cache_store(c, &j->t, &j->prof, j->trials, j->ntrials,
                              &j->id, &j->err);
    break;
  case SPMVD_CJ_HIT:
    if (!spmvd_cache_readonly(c))
      j->rc = spmvd_cache_hit(c, j->id, &j->err);
    break;
  case SPMVD_CJ_QUARANTINE:
    j->rc = spmvd_cache_quarantine(c, j->fp, j->dev.device_key,
                                   j->dev.software_key, j->dtype, &j->cfg,
                                   j->why, &j->err);
    break;
  case SPMVD_CJ_FORGET:
  case SPMVD_CJ_IMPORT:
  case SPMVD_CJ_EXPORT:
    j->rc = do_admin(c, j);
    break;
  case SPMVD_CJ_CALIBRATION:
    j->rc = do_calibration(c, j);
    break;
  case SPMVD_CJ_SPLIT_GET:
  case SPMVD_CJ_SPLIT_PUT:
    j->rc = do_split(c, j);
    break;
  }
}

/* On the loop. */
static void done(void *arg)
{
  struct spmvd_cachejob *j = arg;

  if (j->then)
    j->then(j);
  else if (j->rc < 0)
    spmvd_log_warn("cache: %s", j->err.msg);
  spmvd_cachejob_free(j);
}

/* Posts j with its continuation; then(j) runs at once when it cannot. */
void spmvd_cachejob_post(struct spmvd_bio *b, struct spmvd_cachejob *j,
                         void (*then)(struct spmvd_cachejob *j), void *ctx)
{
  j->then = then;
  j->ctx = ctx;
  if (!b)
    j->rc = spmv_error_set(&j->err, SPMV_ECACHE, "no cache is open");
  else if (spmvd_bio_post(b, work, done, j, &j->err) == 0)
    return;
  else
    j->rc = j->err.code;
  done(j);
}
