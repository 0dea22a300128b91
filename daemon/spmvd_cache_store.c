/* spmvd_cache_store.c: the cache's tunings: looked up (or the miss
 * explained), stored with their matrix and trials, counted on each hit,
 * quarantined, forgotten. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "spmvd_cache.h"
#include "spmvd_cache_impl.h"

/* Bounds past which a stored number can only be damage: a product of more
 * than 10^12 us (11 days), 10^7 GFLOP/s or GB/s, a tuning of 10^12
 * products. */
#define TUNING_MAX_TIME_US 1e12
#define TUNING_MAX_RATE 1e7
#define TUNING_MAX_COST 1e12

/* Upserts a matrix row from its dimensions and profile JSON text. */
int spmvd_cache_matrix_put(struct spmvd_cache *c, const char *fp,
                           int64_t rows, int64_t cols, int64_t nnz,
                           const char *profile, struct spmv_error *err)
{
  enum stmt s = ST_MATRIX_PUT;

  bind_text(c, s, 1, fp);
  sqlite3_bind_int64(c->st[s], 2, rows);
  sqlite3_bind_int64(c->st[s], 3, cols);
  sqlite3_bind_int64(c->st[s], 4, nnz);
  bind_text(c, s, 5, profile);
  sqlite3_bind_int64(c->st[s], 6, (sqlite3_int64)time(NULL));
  return spmvd_cache_step_done(c, s, err);
}

int spmvd_cache_matrix_has(struct spmvd_cache *c, const char *fp,
                           struct spmv_error *err)
{
  int rc;

  bind_text(c, ST_MATRIX_HAS, 1, fp);
  rc = sqlite3_step(c->st[ST_MATRIX_HAS]);
  done(c, ST_MATRIX_HAS);
  if (rc == SQLITE_ROW)
    return 1;
  if (rc == SQLITE_DONE)
    return 0;
  return spmvd_cache_db_err(c, err, "looking up a matrix");
}

/* Reads a row of TUNING_COLS into t. */
void spmvd_cache_row_to_tuning(sqlite3_stmt *st, struct spmvd_tuning *t)
{
  enum spmv_format f = SPMV_FMT_CSR_SCALAR;
  enum spmv_dtype dt = SPMV_F64;
  enum spmvd_strategy s = SPMVD_STRATEGY_AUTO;

  memset(t, 0, sizeof *t);
  t->id = sqlite3_column_int64(st, 0);
  copy_str(t->fingerprint, sizeof t->fingerprint, col_text(st, 1));
  copy_str(t->device_key, sizeof t->device_key, col_text(st, 2));
  copy_str(t->software_key, sizeof t->software_key, col_text(st, 3));
  spmv_dtype_parse(col_text(st, 4), &dt);
  t->dtype = dt;
  t->kernel_version = sqlite3_column_int(st, 5);
  spmv_format_parse(col_text(st, 6), &f);
  t->cfg.format = f;
  t->cfg.bs = sqlite3_column_int(st, 7);
  t->cfg.tpr = sqlite3_column_int(st, 8);
  t->cfg.param = sqlite3_column_int(st, 9);
  t->cfg.param2 = sqlite3_column_int(st, 10);
  copy_str(t->text, sizeof t->text, col_text(st, 11));
  t->time_us = col_double(st, 12);
  t->gflops = col_double(st, 13);
  t->gbps = col_double(st, 14);
  spmvd_strategy_parse(col_text(st, 15), &s, NULL);
  t->strategy = s;
  t->cost_spmv = col_double(st, 16);
  t->created = sqlite3_column_int64(st, 17);
  t->hits = sqlite3_column_int64(st, 18);
  t->last_used = sqlite3_column_int64(st, 19);
  t->quarantined = sqlite3_column_int(st, 20);
}

/* Fills a tuning from a decision and the keys. */
void spmvd_tuning_from_decision(struct spmvd_tuning *t,
                                const struct spmvd_decision *d,
                                const char *fingerprint,
                                const struct spmvd_device_info *dev,
                                enum spmv_dtype dtype)
{
  memset(t, 0, sizeof *t);
  copy_str(t->fingerprint, sizeof t->fingerprint, fingerprint);
  copy_str(t->device_key, sizeof t->device_key, dev->device_key);
  copy_str(t->software_key, sizeof t->software_key, dev->software_key);
  t->dtype = dtype;
  t->kernel_version = SPMV_KERNEL_VERSION;
  t->cfg = d->cfg;
  spmv_config_format(&d->cfg, t->text, sizeof t->text);
  t->time_us = d->time_us;
  t->gflops = d->gflops;
  t->gbps = d->gbps;
  t->strategy = d->strategy;
  t->cost_spmv = d->cost_spmv;
  t->created = (int64_t)time(NULL);
}

/* Checks one number of a tuning against [0, max]; 1 (with why) when not. */
static int check_number(const char *name, double v, double max, char *why,
                        size_t n)
{
  const char *what = NULL;

  if (!isfinite(v))
    what = "is not finite";
  else if (v < 0)
    what = "is negative";
  else if (v > max)
    what = "is out of range";
  if (what == NULL)
    return 0;
  if (why != NULL && n > 0)
    snprintf(why, n, "%s %s (%g)", name, what, v);
  return 1;
}

/* Checks a tuning's numbers. */
int spmvd_tuning_check(const struct spmvd_tuning *t, char *why, size_t n)
{
  return check_number("time_us", t->time_us, TUNING_MAX_TIME_US, why, n) ||
         check_number("gflops", t->gflops, TUNING_MAX_RATE, why, n) ||
         check_number("gbps", t->gbps, TUNING_MAX_RATE, why, n) ||
         check_number("cost_spmv", t->cost_spmv, TUNING_MAX_COST, why, n);
}

/* Returns 1 the first time row id is reported on this open cache, so that
 * a corrupt row that stays (a read-only cache) is logged once, not on
 * every load; 0 after. */
static int first_report(struct spmvd_cache *c, int64_t id)
{
  int64_t *tmp;
  size_t k;

  for (k = 0; k < c->nreported; k++)
    if (c->reported[k] == id)
      return 0;
  if (c->nreported == c->capreported) {
    size_t cap = c->capreported ? 2 * c->capreported : 8;

    tmp = realloc(c->reported, cap * sizeof *tmp);
    if (tmp == NULL)
      return 1;  /* logging again beats not logging */
    c->reported = tmp;
    c->capreported = cap;
  }
  c->reported[c->nreported++] = id;
  return 1;
}

/* Writes a miss's reason. */
static void set_reason(char *reason, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_reason(char *reason, size_t n, const char *fmt, ...)
{
  va_list ap;

  if (reason == NULL || n == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(reason, n, fmt, ap);
  va_end(ap);
}

/* Explains why no tuning applies, from the best other row of the matrix. */
static int explain_miss(struct spmvd_cache *c, const char *fp,
                        const char *device_key, const char *software_key,
                        const char *dtname, char *reason, size_t n,
                        struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_LOOKUP_OTHER];
  int rc;

  bind_text(c, ST_LOOKUP_OTHER, 1, fp);
  bind_text(c, ST_LOOKUP_OTHER, 2, dtname);
  bind_text(c, ST_LOOKUP_OTHER, 3, device_key);
  rc = sqlite3_step(st);
  if (rc == SQLITE_DONE) {
    set_reason(reason, n, "no cached tuning");
  } else if (rc == SQLITE_ROW) {
    const char *dk = col_text(st, 0), *sk = col_text(st, 1);
    const char *dt = col_text(st, 2);

    if (strcmp(dt, dtname) != 0)
      set_reason(reason, n, "cached for %s only, tuning again", dt);
    else if (strcmp(dk, device_key) != 0)
      set_reason(reason, n, "cached for device '%s' / software '%s', "
                 "tuning again", dk, sk);
    else
      set_reason(reason, n, "cached for software '%s', this is '%s', "
                 "tuning again", sk, software_key);
  } else {
    done(c, ST_LOOKUP_OTHER);
    return spmvd_cache_db_err(c, err, "looking up other tunings");
  }
  done(c, ST_LOOKUP_OTHER);
  return 0;
}

/* Looks up the tuning of (fingerprint, keys, dtype). */
int spmvd_cache_lookup(struct spmvd_cache *c, const char *fingerprint,
                       const char *device_key, const char *software_key,
                       enum spmv_dtype dtype, struct spmvd_tuning *out,
                       char *reason, size_t reason_len,
                       struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_LOOKUP];
  const char *dtname = spmv_dtype_name(dtype);
  struct spmvd_tuning t;
  char why[96];
  int rc, ret;

  set_reason(reason, reason_len, "%s", "");
  if (dtname == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "bad value type %d", (int)dtype);
  ret = spmvd_cache_check_fingerprint(fingerprint, err);
  if (ret != 0)
    return ret;
  bind_text(c, ST_LOOKUP, 1, fingerprint);
  bind_text(c, ST_LOOKUP, 2, device_key);
  bind_text(c, ST_LOOKUP, 3, software_key);
  bind_text(c, ST_LOOKUP, 4, dtname);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    spmvd_cache_row_to_tuning(st, &t);
  done(c, ST_LOOKUP);
  if (rc == SQLITE_DONE)
    return explain_miss(c, fingerprint, device_key, software_key, dtname,
                        reason, reason_len, err);
  if (rc != SQLITE_ROW)
    return spmvd_cache_db_err(c, err, "looking up a tuning");
  if (t.quarantined) {
    set_reason(reason, reason_len, "cached configuration '%s' is "
               "quarantined, tuning again", t.text);
    return 0;
  }
  if (spmvd_tuning_check(&t, why, sizeof why)) {
    if (c->warn != NULL && first_report(c, t.id))
      spmvd_cache_warn(c, "cache: tuning row %lld of %s is corrupt: %s; it "
                       "is treated as a miss", (long long)t.id, fingerprint,
                       why);
    set_reason(reason, reason_len, "the cached tuning's %s: retuned", why);
    return 0;
  }
  if (t.kernel_version != SPMV_KERNEL_VERSION) {
    set_reason(reason, reason_len, "cached with kernel version %d, this is "
               "%d, tuning again", t.kernel_version, SPMV_KERNEL_VERSION);
    return 0;
  }
  if (out != NULL)
    *out = t;
  return 1;
}

/* Inserts one trial row. */
int spmvd_cache_trial_put(struct spmvd_cache *c, int64_t id, int seq,
                          const char *config, const char *status,
                          double time_us, double best_us, int rounds,
                          int runs, const char *msg, struct spmv_error *err)
{
  enum stmt s = ST_TRIAL_INS;

  sqlite3_bind_int64(c->st[s], 1, id);
  sqlite3_bind_int(c->st[s], 2, seq);
  bind_text(c, s, 3, config);
  bind_text(c, s, 4, status);
  sqlite3_bind_double(c->st[s], 5, time_us);
  sqlite3_bind_double(c->st[s], 6, best_us);
  sqlite3_bind_int(c->st[s], 7, rounds);
  sqlite3_bind_int(c->st[s], 8, runs);
  bind_text(c, s, 9, msg);
  return spmvd_cache_step_done(c, s, err);
}

/* Replaces the tuning of t's key with t; *id_out gets the new row id.
 * Runs inside a transaction. */
int spmvd_cache_tuning_put(struct spmvd_cache *c, const struct spmvd_tuning *t,
                           int64_t *id_out, struct spmv_error *err)
{
  enum stmt s = ST_TUNING_INS;
  const char *dtname = spmv_dtype_name(t->dtype);
  const char *fmt = spmv_format_name(t->cfg.format);
  const char *strat = spmvd_strategy_name(t->strategy);
  char text[64];
  int ret;

  if (dtname == NULL || fmt == NULL || strat == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "cache: tuning with bad value type, format or "
                          "strategy (%d, %d, %d)", (int)t->dtype,
                          (int)t->cfg.format, (int)t->strategy);
  if (!isfinite(t->time_us) || !isfinite(t->gflops) || !isfinite(t->gbps) ||
      !isfinite(t->cost_spmv))
    return spmv_error_set(err, SPMV_EINVAL,
                          "cache: tuning with a non-finite time or rate");
  spmv_config_format(&t->cfg, text, sizeof text);
  bind_text(c, ST_TUNING_DEL, 1, t->fingerprint);
  bind_text(c, ST_TUNING_DEL, 2, t->device_key);
  bind_text(c, ST_TUNING_DEL, 3, t->software_key);
  bind_text(c, ST_TUNING_DEL, 4, dtname);
  ret = spmvd_cache_step_done(c, ST_TUNING_DEL, err);
  if (ret != 0)
    return ret;
  bind_text(c, s, 1, t->fingerprint);
  bind_text(c, s, 2, t->device_key);
  bind_text(c, s, 3, t->software_key);
  bind_text(c, s, 4, dtname);
  sqlite3_bind_int(c->st[s], 5, t->kernel_version);
  bind_text(c, s, 6, fmt);
  sqlite3_bind_int(c->st[s], 7, t->cfg.bs);
  sqlite3_bind_int(c->st[s], 8, t->cfg.tpr);
  sqlite3_bind_int(c->st[s], 9, t->cfg.param);
  sqlite3_bind_int(c->st[s], 10, t->cfg.param2);
  bind_text(c, s, 11, text);
  sqlite3_bind_double(c->st[s], 12, t->time_us);
  sqlite3_bind_double(c->st[s], 13, t->gflops);
  sqlite3_bind_double(c->st[s], 14, t->gbps);
  bind_text(c, s, 15, strat);
  sqlite3_bind_double(c->st[s], 16, t->cost_spmv);
  sqlite3_bind_int64(c->st[s], 17,
                     t->created != 0 ? t->created : (int64_t)time(NULL));
  sqlite3_bind_int64(c->st[s], 18, t->hits);
  sqlite3_bind_int64(c->st[s], 19, t->last_used);
  sqlite3_bind_int(c->st[s], 20, t->quarantined != 0);
  ret = spmvd_cache_step_done(c, s, err);
  if (ret == 0)
    *id_out = sqlite3_last_insert_rowid(c->db);
  return ret;
}

/* Stores a tuning with its matrix and trials in one transaction. */
int spmvd_cache_store(struct spmvd_cache *c, const struct spmvd_tuning *t,
                      const struct spmv_profile *prof,
                      const struct spmvd_trial *trials, size_t ntrials,
                      int64_t *id_out, struct spmv_error *err)
{
  char *ptext = NULL;
  char ctext[64];
  json_t *pj = NULL;
  int64_t id = 0;
  size_t k;
  int ret;

  ret = spmvd_cache_check_writable(c, err, "store a tuning");
  if (ret == 0)
    ret = spmvd_cache_check_fingerprint(t->fingerprint, err);
  if (ret != 0)
    return ret;
  if (prof != NULL) {
    pj = spmvd_cache_profile_json(prof);
    ptext = pj != NULL ? json_dumps(pj, JSON_COMPACT) : NULL;
    if (ptext == NULL) {
      ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory storing a tuning");
      goto out;
    }
  }
  ret = spmvd_cache_txn_begin(c, err);
  if (ret != 0)
    goto out;
  if (prof != NULL) {
    ret = spmvd_cache_matrix_put(c, t->fingerprint, prof->rows, prof->cols, prof->nnz,
                     ptext, err);
  } else {
    ret = spmvd_cache_matrix_has(c, t->fingerprint, err);
    if (ret == 0)
      ret = spmv_error_set(err, SPMV_EINVAL,
                           "cache: matrix %s is not cached: store its "
                           "profile with the tuning", t->fingerprint);
    else if (ret == 1)
      ret = 0;
  }
  if (ret == 0)
    ret = spmvd_cache_tuning_put(c, t, &id, err);
  for (k = 0; ret == 0 && k < ntrials; k++) {
    spmv_config_format(&trials[k].cfg, ctext, sizeof ctext);
    ret = spmvd_cache_trial_put(c, id, (int)k, ctext,
                    spmvd_trial_status_name(trials[k].status),
                    trials[k].time_us, trials[k].best_us, trials[k].rounds,
                    trials[k].runs, trials[k].msg, err);
  }
  ret = spmvd_cache_txn_finish(c, ret, err);
  if (ret == 0 && id_out != NULL)
    *id_out = id;
out:
  free(ptext);
  json_decref(pj);
  return ret;
}

/* Counts a cache hit of tuning id. */
int spmvd_cache_hit(struct spmvd_cache *c, int64_t id,
                    struct spmv_error *err)
{
  int ret = spmvd_cache_check_writable(c, err, "count a hit");

  if (ret != 0)
    return ret;
  sqlite3_bind_int64(c->st[ST_HIT], 1, id);
  sqlite3_bind_int64(c->st[ST_HIT], 2, (sqlite3_int64)time(NULL));
  ret = spmvd_cache_step_done(c, ST_HIT, err);
  if (ret == 0 && sqlite3_changes(c->db) == 0)
    return spmv_error_set(err, SPMV_ENOENT, "cache: no tuning with id %lld",
                          (long long)id);
  return ret;
}

/* Binds (fingerprint, device key, software key, dtype) as ?1 .. ?4. */
static void bind_key(struct spmvd_cache *c, enum stmt s, const char *fp,
                     const char *dk, const char *sk, const char *dt)
{
  bind_text(c, s, 1, fp);
  bind_text(c, s, 2, dk);
  bind_text(c, s, 3, sk);
  bind_text(c, s, 4, dt);
}

/* Quarantines a configuration of a matrix on a device. */
int spmvd_cache_quarantine(struct spmvd_cache *c, const char *fingerprint,
                           const char *device_key, const char *software_key,
                           enum spmv_dtype dtype,
                           const struct spmv_config *cfg, const char *reason,
                           struct spmv_error *err)
{
  const char *dt = spmv_dtype_name(dtype);
  char text[64];
  int ret;

  ret = spmvd_cache_check_writable(c, err, "quarantine a configuration");
  if (ret == 0)
    ret = spmvd_cache_check_fingerprint(fingerprint, err);
  if (ret != 0)
    return ret;
  if (dt == NULL || spmv_config_format(cfg, text, sizeof text) < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "cache: bad value type or configuration to "
                          "quarantine");
  ret = spmvd_cache_txn_begin(c, err);
  if (ret != 0)
    return ret;
  bind_key(c, ST_QUAR_INS, fingerprint, device_key, software_key, dt);
  bind_text(c, ST_QUAR_INS, 5, text);
  bind_text(c, ST_QUAR_INS, 6, reason != NULL ? reason : "");
  sqlite3_bind_int64(c->st[ST_QUAR_INS], 7, (sqlite3_int64)time(NULL));
  ret = spmvd_cache_step_done(c, ST_QUAR_INS, err);
  if (ret == 0) {
    bind_key(c, ST_QUAR_FLAG, fingerprint, device_key, software_key, dt);
    bind_text(c, ST_QUAR_FLAG, 5, text);
    ret = spmvd_cache_step_done(c, ST_QUAR_FLAG, err);
  }
  return spmvd_cache_txn_finish(c, ret, err);
}

/* Lists the quarantined configurations of a matrix on a device. */
int spmvd_cache_quarantined(struct spmvd_cache *c, const char *fingerprint,
                            const char *device_key, const char *software_key,
                            enum spmv_dtype dtype, struct spmv_config *cfgs,
                            size_t max, struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_QUAR_LIST];
  const char *dt = spmv_dtype_name(dtype);
  size_t n = 0;
  int rc;

  if (dt == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "bad value type %d", (int)dtype);
  bind_key(c, ST_QUAR_LIST, fingerprint, device_key, software_key, dt);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (n < max && spmv_config_parse(col_text(st, 0), &cfgs[n], NULL) == 0)
      n++;
  }
  done(c, ST_QUAR_LIST);
  if (rc != SQLITE_DONE)
    return spmvd_cache_db_err(c, err, "listing quarantined configurations");
  return (int)n;
}


/* Forgets one fingerprint's tunings, or every one. */
int spmvd_cache_forget(struct spmvd_cache *c, const char *fingerprint,
                       int *count, struct spmv_error *err)
{
  int all, ret, n = 0;

  if (count != NULL)
    *count = 0;
  ret = spmvd_cache_check_writable(c, err, "forget tunings");
  if (ret != 0)
    return ret;
  all = fingerprint != NULL && strcmp(fingerprint, "all") == 0;
  if (!all && (ret = spmvd_cache_check_fingerprint(fingerprint, err)) != 0)
    return ret;
  ret = spmvd_cache_txn_begin(c, err);
  if (ret != 0)
    return ret;
  if (all) {
    if (sqlite3_step(c->st[ST_FORGET_COUNT_ALL]) == SQLITE_ROW)
      n = sqlite3_column_int(c->st[ST_FORGET_COUNT_ALL], 0);
    done(c, ST_FORGET_COUNT_ALL);
    ret = spmvd_cache_step_done(c, ST_FORGET_TUNINGS_ALL, err);
    if (ret == 0)
      ret = spmvd_cache_step_done(c, ST_FORGET_QUAR_ALL, err);
    if (ret == 0)
      ret = spmvd_cache_step_done(c, ST_FORGET_MATRICES_ALL, err);
  } else {
    bind_text(c, ST_FORGET_TUNINGS, 1, fingerprint);
    ret = spmvd_cache_step_done(c, ST_FORGET_TUNINGS, err);
    if (ret == 0) {
      n = sqlite3_changes(c->db);
      bind_text(c, ST_FORGET_QUAR, 1, fingerprint);
      ret = spmvd_cache_step_done(c, ST_FORGET_QUAR, err);
    }
    if (ret == 0) {
      bind_text(c, ST_FORGET_MATRIX, 1, fingerprint);
      ret = spmvd_cache_step_done(c, ST_FORGET_MATRIX, err);
    }
  }
  ret = spmvd_cache_txn_finish(c, ret, err);
  if (ret == 0 && count != NULL)
    *count = n;
  return ret;
}
