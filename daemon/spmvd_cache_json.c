/* spmvd_cache_json.c: the cache as JSON: a profile, the list of tunings,
 * one matrix shown whole, and the export and import of tunings. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "spmvd_cache.h"
#include "spmvd_cache_impl.h"
#include "spmvd_schema.h"

/* Returns a new reference to the profile as JSON. */
json_t *spmvd_cache_profile_json(const struct spmv_profile *p)
{
  json_t *o, *hist;
  int i, last = 0;

  hist = json_array();
  for (i = 0; i < SPMV_PROFILE_BINS; i++)
    if (p->hist[i] != 0)
      last = i + 1;
  for (i = 0; hist != NULL && i < last; i++)
    json_array_append_new(hist, json_integer(p->hist[i]));
  o = json_pack("{sIsIsIsIsIsfsfsfsIsfsIsIsfsfso*}",
                "rows", (json_int_t)p->rows, "cols", (json_int_t)p->cols,
                "nnz", (json_int_t)p->nnz, "rl_min", (json_int_t)p->rl_min,
                "rl_max", (json_int_t)p->rl_max, "rl_mean", p->rl_mean,
                "rl_sigma", p->rl_sigma, "rl_cv", p->rl_cv,
                "empty_rows", (json_int_t)p->empty_rows,
                "ell_fill", p->ell_fill, "hyb_k", (json_int_t)p->hyb_k,
                "ndiags", (json_int_t)p->ndiags, "dia_fill", p->dia_fill,
                "col_locality", p->col_locality, "hist", hist);
  return o;
}


/* Returns a new reference to a non-finite-safe number. */
json_t *spmvd_cache_number_json(double v)
{
  return isfinite(v) ? json_real(v) : json_null();
}

/* Returns a new reference to a tuning's summary (config as text); a corrupt
 * row shows its numbers as they can be (null when not finite) and says
 * what is wrong in "corrupt", so that one damaged row does not fail the
 * listing of every other. */
static json_t *tuning_json(const struct spmvd_tuning *t)
{
  char why[96];
  json_t *o = json_pack(
      "{sIsssssssssisssosososssosIsIsIsb}", "id", (json_int_t)t->id,
      "fingerprint", t->fingerprint, "device_key", t->device_key,
      "software_key", t->software_key, "dtype", spmv_dtype_name(t->dtype),
      "kernel_version", t->kernel_version, "config", t->text, "time_us",
      spmvd_cache_number_json(t->time_us), "gflops",
      spmvd_cache_number_json(t->gflops), "gbps",
      spmvd_cache_number_json(t->gbps), "strategy",
      spmvd_strategy_name(t->strategy), "cost_spmv",
      spmvd_cache_number_json(t->cost_spmv), "created",
      (json_int_t)t->created, "last_used", (json_int_t)t->last_used, "hits",
      (json_int_t)t->hits, "quarantined", t->quarantined != 0);

  if (o != NULL && spmvd_tuning_check(t, why, sizeof why) &&
      json_object_set_new(o, "corrupt", json_string(why)) != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Lists every tuning. */
int spmvd_cache_list(struct spmvd_cache *c, json_t **out,
                     struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_LIST];
  struct spmvd_tuning t;
  json_t *arr = json_array(), *o;
  int rc, ret = 0;

  *out = NULL;
  if (arr == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory listing tunings");
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    spmvd_cache_row_to_tuning(st, &t);
    o = tuning_json(&t);
    if (o == NULL ||
        json_object_set_new(o, "rows",
                            json_integer(sqlite3_column_int64(st, NTUNING_COLS))) ||
        json_object_set_new(o, "cols",
                            json_integer(sqlite3_column_int64(st, NTUNING_COLS + 1))) ||
        json_object_set_new(o, "nnz",
                            json_integer(sqlite3_column_int64(st, NTUNING_COLS + 2))) ||
        json_array_append_new(arr, o)) {
      ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory listing tunings");
      break;
    }
  }
  done(c, ST_LIST);
  if (ret == 0 && rc != SQLITE_DONE)
    ret = spmvd_cache_db_err(c, err, "listing tunings");
  if (ret != 0) {
    json_decref(arr);
    return ret;
  }
  *out = arr;
  return 0;
}

json_t *spmvd_cache_config_json(const struct spmv_config *cfg, const char *text)
{
  return json_pack("{sssisisisiss}", "format", spmv_format_name(cfg->format),
                   "bs", cfg->bs, "tpr", cfg->tpr, "param", cfg->param,
                   "param2", cfg->param2, "text", text);
}

/* Returns a new reference to the trials of tuning id, or NULL. */
static json_t *trials_json(struct spmvd_cache *c, int64_t id,
                           struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_TRIALS_OF];
  json_t *arr = json_array(), *o;
  int rc;

  if (arr == NULL) {
    spmv_error_set(err, SPMV_ENOMEM, "out of memory reading trials");
    return NULL;
  }
  sqlite3_bind_int64(st, 1, id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    o = json_pack("{sssssososisiss}", "config", col_text(st, 0),
                  "status", col_text(st, 1),
                  "time_us", spmvd_cache_number_json(sqlite3_column_double(st, 2)),
                  "best_us", spmvd_cache_number_json(sqlite3_column_double(st, 3)),
                  "rounds", sqlite3_column_int(st, 4),
                  "runs", sqlite3_column_int(st, 5),
                  "message", col_text(st, 6));
    if (o == NULL || json_array_append_new(arr, o) != 0) {
      rc = SQLITE_NOMEM;
      break;
    }
  }
  done(c, ST_TRIALS_OF);
  if (rc != SQLITE_DONE) {
    if (rc == SQLITE_NOMEM)
      spmv_error_set(err, SPMV_ENOMEM, "out of memory reading trials");
    else
      spmvd_cache_db_err(c, err, "reading trials");
    json_decref(arr);
    return NULL;
  }
  return arr;
}

/* Returns a new reference to {rows, cols, nnz, profile} of a matrix, or
 * NULL with err set (SPMV_ENOENT when unknown). */
static json_t *matrix_json(struct spmvd_cache *c, const char *fp,
                           struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_MATRIX_GET];
  json_t *o = NULL, *prof;
  int rc;

  bind_text(c, ST_MATRIX_GET, 1, fp);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    prof = json_loads(col_text(st, 3), 0, NULL);
    o = json_pack("{sIsIsIso}", "rows",
                  (json_int_t)sqlite3_column_int64(st, 0), "cols",
                  (json_int_t)sqlite3_column_int64(st, 1), "nnz",
                  (json_int_t)sqlite3_column_int64(st, 2), "profile",
                  prof != NULL ? prof : json_object());
    if (o == NULL)
      spmv_error_set(err, SPMV_ENOMEM, "out of memory reading a matrix");
  } else if (rc == SQLITE_DONE) {
    spmv_error_set(err, SPMV_ENOENT, "no cached matrix with fingerprint %s",
                   fp);
  } else {
    spmvd_cache_db_err(c, err, "reading a matrix");
  }
  done(c, ST_MATRIX_GET);
  return o;
}

/* Returns a new reference to every tuning of fp with its config object
 * and trials; each gets the matrix object m (borrowed) when m is not
 * NULL.  NULL with err set on failure. */
static json_t *tunings_of(struct spmvd_cache *c, const char *fp, json_t *m,
                          struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_TUNINGS_OF];
  struct spmvd_tuning *ts = NULL, *tmp;
  size_t n = 0, cap = 0, k;
  json_t *arr = NULL, *o = NULL, *tr;
  int rc;

  /* Rows first: trials_json() uses another statement. */
  bind_text(c, ST_TUNINGS_OF, 1, fp);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (n == cap) {
      cap = cap ? 2 * cap : 4;
      tmp = realloc(ts, cap * sizeof *ts);
      if (tmp == NULL) {
        rc = SQLITE_NOMEM;
        break;
      }
      ts = tmp;
    }
    spmvd_cache_row_to_tuning(st, &ts[n++]);
  }
  done(c, ST_TUNINGS_OF);
  if (rc != SQLITE_DONE) {
    if (rc == SQLITE_NOMEM)
      spmv_error_set(err, SPMV_ENOMEM, "out of memory reading tunings");
    else
      spmvd_cache_db_err(c, err, "reading tunings");
    goto out;
  }
  arr = json_array();
  if (arr == NULL) {
    spmv_error_set(err, SPMV_ENOMEM, "out of memory reading tunings");
    goto out;
  }
  for (k = 0; k < n; k++) {
    /* An export carries decisions to another cache: a corrupt row is none. */
    if (m != NULL && spmvd_tuning_check(&ts[k], NULL, 0))
      continue;
    tr = trials_json(c, ts[k].id, err);
    if (tr == NULL)
      goto fail;
    o = tuning_json(&ts[k]);
    if (o == NULL) {
      json_decref(tr);
      goto nomem;
    }
    /* The setters steal their value even when they fail. */
    if (json_object_set_new(o, "config",
                            spmvd_cache_config_json(&ts[k].cfg, ts[k].text)) != 0 ||
        json_object_set_new(o, "trials", tr) != 0 ||
        (m != NULL && json_object_set(o, "matrix", m) != 0))
      goto nomem;
    rc = json_array_append_new(arr, o);
    o = NULL;
    if (rc != 0)
      goto nomem;
  }
  goto out;
nomem:
  json_decref(o);
  spmv_error_set(err, SPMV_ENOMEM, "out of memory reading tunings");
fail:
  json_decref(arr);
  arr = NULL;
out:
  free(ts);
  return arr;
}

/* Shows one matrix with its tunings and trials. */
int spmvd_cache_show(struct spmvd_cache *c, const char *fingerprint,
                     json_t **out, struct spmv_error *err)
{
  json_t *m, *ts;
  int ret;

  *out = NULL;
  ret = spmvd_cache_check_fingerprint(fingerprint, err);
  if (ret != 0)
    return ret;
  m = matrix_json(c, fingerprint, err);
  if (m == NULL)
    return err != NULL ? err->code : SPMV_ECACHE;
  ts = tunings_of(c, fingerprint, NULL, err);
  if (ts == NULL) {
    json_decref(m);
    return err != NULL ? err->code : SPMV_ECACHE;
  }
  if (json_object_set_new(m, "fingerprint", json_string(fingerprint)) ||
      json_object_set_new(m, "tunings", ts)) {
    json_decref(m);
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory showing a matrix");
  }
  *out = m;
  return 0;
}

/* Appends the export entries of one fingerprint to arr. */
static int export_one(struct spmvd_cache *c, const char *fp, json_t *arr,
                      struct spmv_error *err)
{
  json_t *m, *ts;
  int ret = 0;

  m = matrix_json(c, fp, err);
  if (m == NULL)
    return err != NULL ? err->code : SPMV_ECACHE;
  ts = tunings_of(c, fp, m, err);
  json_decref(m);
  if (ts == NULL)
    return err != NULL ? err->code : SPMV_ECACHE;
  if (json_array_extend(arr, ts) != 0)
    ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory exporting");
  json_decref(ts);
  return ret;
}

/* Exports the tunings of one fingerprint, or all. */
int spmvd_cache_export(struct spmvd_cache *c, const char *fingerprint,
                       json_t **out, struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_EXPORT_ALL];
  json_t *arr = json_array(), *doc = NULL;
  char **fps = NULL, **tmp;
  size_t n = 0, cap = 0, k;
  int rc, ret = 0;

  *out = NULL;
  if (arr == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory exporting");
  if (fingerprint != NULL && strcmp(fingerprint, "all") != 0) {
    ret = spmvd_cache_check_fingerprint(fingerprint, err);
    if (ret == 0)
      ret = export_one(c, fingerprint, arr, err);
    goto out;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      tmp = realloc(fps, cap * sizeof *fps);
      if (tmp == NULL)
        break;
      fps = tmp;
    }
    fps[n] = strdup(col_text(st, 0));
    if (fps[n] == NULL)
      break;
    n++;
  }
  done(c, ST_EXPORT_ALL);
  if (rc == SQLITE_ROW)
    ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory exporting");
  else if (rc != SQLITE_DONE)
    ret = spmvd_cache_db_err(c, err, "exporting");
  for (k = 0; ret == 0 && k < n; k++)
    ret = export_one(c, fps[k], arr, err);
out:
  for (k = 0; k < n; k++)
    free(fps[k]);
  free(fps);
  json_t *splits = json_array();
  if (ret == 0 && splits == NULL)
    ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory exporting");
  if (ret == 0)
    ret = spmvd_cache_split_export(c, fingerprint && strcmp(fingerprint, "all")
                                          ? fingerprint : NULL, splits, err);
  if (ret == 0) {
    doc = json_pack("{sisisOsO}", "spmvd_export", 1, "schema",
                    spmvd_nmigrations, "tunings", arr, "splits", splits);
    if (doc == NULL)
      ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory exporting");
  }
  json_decref(splits);
  json_decref(arr);
  *out = doc;
  return ret;
}

/* Reads an entry's member as text; NULL with err set when missing. */
static const char *get_str(json_t *o, const char *key, size_t k,
                           struct spmv_error *err)
{
  const char *s = json_string_value(json_object_get(o, key));

  if (s == NULL)
    spmv_error_set(err, SPMV_EINVAL,
                   "import: tuning %zu: \"%s\" missing or not a string", k,
                   key);
  return s;
}

/* Reads an entry's member as a number into *v; optional members keep *v. */
static int get_num(json_t *o, const char *key, int optional, size_t k,
                   double *v, struct spmv_error *err)
{
  json_t *j = json_object_get(o, key);

  if (j == NULL && optional)
    return 0;
  if (!json_is_number(j))
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: \"%s\" missing or not a "
                          "number", k, key);
  *v = json_number_value(j);
  if (!isfinite(*v))
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: \"%s\" is not finite", k, key);
  return 0;
}

/* An import entry, parsed and checked before anything is written. */
struct import_entry {
  struct spmvd_tuning t;
  int64_t rows, cols, nnz;
  char *profile;       /* JSON text, owned */
  json_t *trials;      /* borrowed from the document */
  int skip;
};

/* Parses one trial of an entry (validation only). */
static int check_trial(json_t *tr, size_t k, size_t j, struct spmv_error *err)
{
  enum spmvd_trial_status s;
  struct spmv_config cfg;
  const char *cs = json_string_value(json_object_get(tr, "config"));
  const char *ss = json_string_value(json_object_get(tr, "status"));

  if (cs == NULL || spmv_config_parse(cs, &cfg, NULL) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: trial %zu: bad \"config\"", k,
                          j);
  if (ss == NULL || spmvd_trial_status_parse(ss, &s) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: trial %zu: bad \"status\"", k,
                          j);
  if (!json_is_number(json_object_get(tr, "time_us")))
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: trial %zu: bad \"time_us\"",
                          k, j);
  return 0;
}

/* Parses and checks entry k of an import into e. */
static int parse_entry(json_t *o, size_t k, const char *dk, const char *sk,
                       struct import_entry *e, struct spmv_error *err)
{
  struct spmvd_tuning *t = &e->t;
  const char *s;
  json_t *cfgj, *m, *tr;
  double v;
  size_t j;
  int ret;

  memset(e, 0, sizeof *e);
  if (!json_is_object(o))
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu is not an object", k);
  if ((s = get_str(o, "fingerprint", k, err)) == NULL)
    return SPMV_EINVAL;
  if (spmvd_cache_check_fingerprint(s, err) != 0)
    return SPMV_EINVAL;
  copy_str(t->fingerprint, sizeof t->fingerprint, s);
  if ((s = get_str(o, "device_key", k, err)) == NULL)
    return SPMV_EINVAL;
  copy_str(t->device_key, sizeof t->device_key, s);
  if ((s = get_str(o, "software_key", k, err)) == NULL)
    return SPMV_EINVAL;
  copy_str(t->software_key, sizeof t->software_key, s);
  if ((s = get_str(o, "dtype", k, err)) == NULL)
    return SPMV_EINVAL;
  if (spmv_dtype_parse(s, &t->dtype) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: bad \"dtype\" \"%s\"", k, s);
  if ((s = get_str(o, "strategy", k, err)) == NULL)
    return SPMV_EINVAL;
  if (spmvd_strategy_parse(s, &t->strategy, NULL) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: bad \"strategy\" \"%s\"", k, s);
  cfgj = json_object_get(o, "config");
  s = json_is_object(cfgj) ? json_string_value(json_object_get(cfgj, "text"))
                           : json_string_value(cfgj);
  if (s == NULL || spmv_config_parse(s, &t->cfg, NULL) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: bad \"config\"", k);
  spmv_config_format(&t->cfg, t->text, sizeof t->text);
  v = SPMV_KERNEL_VERSION;
  if ((ret = get_num(o, "kernel_version", 0, k, &v, err)) != 0)
    return ret;
  /* Bounded before the conversion, which is undefined past int's range. */
  if (!(v >= 0 && v <= INT_MAX))
    return spmv_error_set(err, SPMV_EINVAL, "import: tuning %zu: "
                          "\"kernel_version\" %g is out of range", k, v);
  t->kernel_version = (int)v;
  if ((ret = get_num(o, "time_us", 0, k, &t->time_us, err)) != 0 ||
      (ret = get_num(o, "gflops", 1, k, &t->gflops, err)) != 0 ||
      (ret = get_num(o, "gbps", 1, k, &t->gbps, err)) != 0 ||
      (ret = get_num(o, "cost_spmv", 1, k, &t->cost_spmv, err)) != 0)
    return ret;
  v = 0;
  if ((ret = get_num(o, "created", 1, k, &v, err)) != 0)
    return ret;
  if (!(v > -9.2e18 && v < 9.2e18))
    return spmv_error_set(err, SPMV_EINVAL, "import: tuning %zu: "
                          "\"created\" %g is out of range", k, v);
  t->created = (int64_t)v;
  v = 0;
  if ((ret = get_num(o, "hits", 1, k, &v, err)) != 0)
    return ret;
  if (!(v > -9.2e18 && v < 9.2e18))
    return spmv_error_set(err, SPMV_EINVAL, "import: tuning %zu: "
                          "\"hits\" %g is out of range", k, v);
  t->hits = (int64_t)v;
  t->quarantined = json_is_true(json_object_get(o, "quarantined"));
  m = json_object_get(o, "matrix");
  if (!json_is_object(m) ||
      !json_is_integer(json_object_get(m, "rows")) ||
      !json_is_integer(json_object_get(m, "cols")) ||
      !json_is_integer(json_object_get(m, "nnz")) ||
      !json_is_object(json_object_get(m, "profile")))
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: \"matrix\" needs rows, cols, "
                          "nnz and profile", k);
  e->rows = json_integer_value(json_object_get(m, "rows"));
  e->cols = json_integer_value(json_object_get(m, "cols"));
  e->nnz = json_integer_value(json_object_get(m, "nnz"));
  tr = json_object_get(o, "trials");
  if (tr != NULL && !json_is_array(tr))
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: tuning %zu: \"trials\" is not an array", k);
  for (j = 0; tr != NULL && j < json_array_size(tr); j++)
    if ((ret = check_trial(json_array_get(tr, j), k, j, err)) != 0)
      return ret;
  e->trials = tr;
  e->skip = (dk != NULL && strcmp(dk, t->device_key) != 0) ||
            (sk != NULL && strcmp(sk, t->software_key) != 0);
  e->profile = json_dumps(json_object_get(m, "profile"), JSON_COMPACT);
  if (e->profile == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory importing");
  return 0;
}

/* Writes one parsed entry (inside the import's transaction). */
static int import_entry_put(struct spmvd_cache *c, struct import_entry *e,
                            struct spmv_error *err)
{
  int64_t id = 0;
  double best;
  size_t j;
  json_t *tr;
  int ret;

  ret = spmvd_cache_matrix_put(c, e->t.fingerprint, e->rows, e->cols, e->nnz,
                   e->profile, err);
  if (ret == 0)
    ret = spmvd_cache_tuning_put(c, &e->t, &id, err);
  for (j = 0; ret == 0 && e->trials != NULL && j < json_array_size(e->trials);
       j++) {
    tr = json_array_get(e->trials, j);
    best = json_number_value(json_object_get(tr, "best_us"));
    ret = spmvd_cache_trial_put(c, id, (int)j,
                    json_string_value(json_object_get(tr, "config")),
                    json_string_value(json_object_get(tr, "status")),
                    json_number_value(json_object_get(tr, "time_us")), best,
                    (int)json_integer_value(json_object_get(tr, "rounds")),
                    (int)json_integer_value(json_object_get(tr, "runs")),
                    json_string_value(json_object_get(tr, "message")) != NULL
                        ? json_string_value(json_object_get(tr, "message"))
                        : "",
                    err);
  }
  return ret;
}

/* Imports exported tunings for this device. */
int spmvd_cache_import(struct spmvd_cache *c, json_t *doc,
                       const char *device_key, const char *software_key,
                       int *imported, int *skipped, struct spmv_error *err)
{
  struct import_entry *es = NULL;
  json_t *arr = doc;
  size_t n, k;
  int ret, nin = 0, nskip = 0;

  if (imported != NULL)
    *imported = 0;
  if (skipped != NULL)
    *skipped = 0;
  ret = spmvd_cache_check_writable(c, err, "import tunings");
  if (ret != 0)
    return ret;
  if (json_is_object(doc))
    arr = json_object_get(doc, "tunings");
  if (!json_is_array(arr))
    return spmv_error_set(err, SPMV_EINVAL,
                          "import: expected an export object with a "
                          "\"tunings\" array, or that array");
  n = json_array_size(arr);
  es = calloc(n ? n : 1, sizeof *es);
  if (es == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory importing");
  for (k = 0; ret == 0 && k < n; k++)
    ret = parse_entry(json_array_get(arr, k), k, device_key, software_key,
                      &es[k], err);
  json_t *splits = json_is_object(doc) ? json_object_get(doc, "splits") : NULL;
  if (ret == 0)
    ret = spmvd_cache_split_import_check(splits, err);
  if (ret != 0)
    goto out;
  ret = spmvd_cache_txn_begin(c, err);
  if (ret != 0)
    goto out;
  for (k = 0; ret == 0 && k < n; k++) {
    if (es[k].skip) {
      nskip++;
      continue;
    }
    ret = import_entry_put(c, &es[k], err);
    nin++;
  }
  if (ret == 0 && splits)
    ret = spmvd_cache_split_import(c, splits, device_key, software_key, &nin,
                                   &nskip, err);
  ret = spmvd_cache_txn_finish(c, ret, err);
  if (ret == 0) {
    if (imported != NULL)
      *imported = nin;
    if (skipped != NULL)
      *skipped = nskip;
  }
out:
  for (k = 0; k < n; k++)
    free(es[k].profile);
  free(es);
  return ret;
}

