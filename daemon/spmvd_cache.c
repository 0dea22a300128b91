/* spmvd_cache.c: SQLite cache of devices, matrices, tunings, trials and
 * calibrations. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "spmvd_cache.h"
#include "spmvd_schema.h"

/* Milliseconds a writer waits for another connection's lock. */
#define BUSY_TIMEOUT_MS 5000

/* The columns of a tunings row, in the order row_to_tuning() reads them. */
#define TUNING_COLS                                                         \
  "t.id, t.fingerprint, t.device_key, t.software_key, t.dtype, "            \
  "t.kernel_version, t.format, t.bs, t.tpr, t.param, t.param2, t.config, "  \
  "t.time_us, t.gflops, t.gbps, t.strategy, t.cost_spmv, t.created, "       \
  "t.hits, t.last_used, t.quarantined"
#define NTUNING_COLS 21

/* Every statement, prepared once at open. */
enum stmt {
  ST_BEGIN,
  ST_COMMIT,
  ST_ROLLBACK,
  ST_DEVICE_PUT,
  ST_MATRIX_PUT,
  ST_MATRIX_HAS,
  ST_MATRIX_GET,
  ST_LOOKUP,
  ST_LOOKUP_OTHER,
  ST_TUNING_DEL,
  ST_TUNING_INS,
  ST_TRIAL_INS,
  ST_TRIALS_OF,
  ST_HIT,
  ST_QUAR_INS,
  ST_QUAR_FLAG,
  ST_QUAR_LIST,
  ST_LIST,
  ST_TUNINGS_OF,
  ST_EXPORT_ALL,
  ST_FORGET_COUNT_ALL,
  ST_FORGET_TUNINGS_ALL,
  ST_FORGET_QUAR_ALL,
  ST_FORGET_MATRICES_ALL,
  ST_FORGET_TUNINGS,
  ST_FORGET_QUAR,
  ST_FORGET_MATRIX,
  ST_CAL_PUT,
  ST_CAL_GET,
  ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
  [ST_BEGIN] = "BEGIN IMMEDIATE",
  [ST_COMMIT] = "COMMIT",
  [ST_ROLLBACK] = "ROLLBACK",
  [ST_DEVICE_PUT] =
    "INSERT INTO devices (device_key, software_key, backend, name, cc_major,"
    " cc_minor, sms, warp_size, max_threads_per_sm, max_blocks_per_sm,"
    " max_threads_per_block, mem_bytes, l2_bytes, first_seen, last_seen)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)"
    " ON CONFLICT (device_key, software_key) DO UPDATE SET"
    " backend = excluded.backend, name = excluded.name,"
    " last_seen = excluded.last_seen",
  [ST_MATRIX_PUT] =
    "INSERT INTO matrices (fingerprint, rows, cols, nnz, profile, created)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
    " ON CONFLICT (fingerprint) DO UPDATE SET profile = excluded.profile",
  [ST_MATRIX_HAS] = "SELECT 1 FROM matrices WHERE fingerprint = ?1",
  [ST_MATRIX_GET] =
    "SELECT rows, cols, nnz, profile FROM matrices WHERE fingerprint = ?1",
  [ST_LOOKUP] =
    "SELECT " TUNING_COLS " FROM tunings t WHERE t.fingerprint = ?1"
    " AND t.device_key = ?2 AND t.software_key = ?3 AND t.dtype = ?4",
  [ST_LOOKUP_OTHER] =
    "SELECT t.device_key, t.software_key, t.dtype FROM tunings t"
    " WHERE t.fingerprint = ?1"
    " ORDER BY (t.dtype = ?2) DESC, (t.device_key = ?3) DESC, t.created DESC"
    " LIMIT 1",
  [ST_TUNING_DEL] =
    "DELETE FROM tunings WHERE fingerprint = ?1 AND device_key = ?2"
    " AND software_key = ?3 AND dtype = ?4",
  [ST_TUNING_INS] =
    "INSERT INTO tunings (fingerprint, device_key, software_key, dtype,"
    " kernel_version, format, bs, tpr, param, param2, config, time_us, gflops,"
    " gbps, strategy, cost_spmv, created, hits, last_used, quarantined)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
    " ?15, ?16, ?17, ?18, ?19, ?20)",
  [ST_TRIAL_INS] =
    "INSERT INTO trials (tuning_id, seq, config, status, time_us, best_us,"
    " rounds, runs, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
  [ST_TRIALS_OF] =
    "SELECT config, status, time_us, best_us, rounds, runs, message"
    " FROM trials WHERE tuning_id = ?1 ORDER BY seq",
  [ST_HIT] =
    "UPDATE tunings SET hits = hits + 1, last_used = ?2 WHERE id = ?1",
  [ST_QUAR_INS] =
    "INSERT OR REPLACE INTO quarantine (fingerprint, device_key,"
    " software_key, dtype, config, reason, created)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  [ST_QUAR_FLAG] =
    "UPDATE tunings SET quarantined = 1 WHERE fingerprint = ?1"
    " AND device_key = ?2 AND software_key = ?3 AND dtype = ?4 AND config = ?5",
  [ST_QUAR_LIST] =
    "SELECT config FROM quarantine WHERE fingerprint = ?1 AND device_key = ?2"
    " AND software_key = ?3 AND dtype = ?4 ORDER BY created, config",
  [ST_LIST] =
    "SELECT " TUNING_COLS ", m.rows, m.cols, m.nnz FROM tunings t"
    " JOIN matrices m ON m.fingerprint = t.fingerprint"
    " ORDER BY t.last_used DESC, t.created DESC, t.id DESC",
  [ST_TUNINGS_OF] =
    "SELECT " TUNING_COLS " FROM tunings t WHERE t.fingerprint = ?1"
    " ORDER BY t.created DESC, t.id DESC",
  [ST_EXPORT_ALL] =
    "SELECT DISTINCT fingerprint FROM tunings ORDER BY fingerprint",
  [ST_FORGET_COUNT_ALL] = "SELECT count(*) FROM tunings",
  [ST_FORGET_TUNINGS_ALL] = "DELETE FROM tunings",
  [ST_FORGET_QUAR_ALL] = "DELETE FROM quarantine",
  [ST_FORGET_MATRICES_ALL] = "DELETE FROM matrices",
  [ST_FORGET_TUNINGS] = "DELETE FROM tunings WHERE fingerprint = ?1",
  [ST_FORGET_QUAR] = "DELETE FROM quarantine WHERE fingerprint = ?1",
  [ST_FORGET_MATRIX] = "DELETE FROM matrices WHERE fingerprint = ?1",
  [ST_CAL_PUT] =
    "INSERT OR REPLACE INTO calibrations (device_key, software_key, dtype,"
    " format, fit, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
  [ST_CAL_GET] =
    "SELECT format, fit FROM calibrations WHERE device_key = ?1"
    " AND software_key = ?2 AND dtype = ?3 ORDER BY format",
};

struct spmvd_cache {
  sqlite3 *db;
  int readonly;
  sqlite3_stmt *st[ST_COUNT];
};

/* Records the connection's last SQLite error as SPMV_ECACHE. */
static int db_err(struct spmvd_cache *c, struct spmv_error *err,
                  const char *what)
{
  return spmv_error_set(err, SPMV_ECACHE, "cache: %s: %s", what,
                        sqlite3_errmsg(c->db));
}

/* Refuses a write on a read-only cache. */
static int check_writable(struct spmvd_cache *c, struct spmv_error *err,
                          const char *what)
{
  if (c->readonly)
    return spmv_error_set(err, SPMV_EPERM,
                          "cache: cannot %s: the cache is open read-only",
                          what);
  return 0;
}

/* Steps a statement that returns no row, then resets it. */
static int step_done(struct spmvd_cache *c, enum stmt s,
                     struct spmv_error *err)
{
  int rc = sqlite3_step(c->st[s]);
  int ret = 0;

  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    ret = db_err(c, err, stmt_sql[s]);
  sqlite3_reset(c->st[s]);
  sqlite3_clear_bindings(c->st[s]);
  return ret;
}

/* Resets a statement after reading its rows. */
static void done(struct spmvd_cache *c, enum stmt s)
{
  sqlite3_reset(c->st[s]);
  sqlite3_clear_bindings(c->st[s]);
}

/* Binds a text parameter (copied). */
static void bind_text(struct spmvd_cache *c, enum stmt s, int i,
                      const char *v)
{
  sqlite3_bind_text(c->st[s], i, v, -1, SQLITE_TRANSIENT);
}

/* Reads a text column as a C string ("" when NULL). */
static const char *col_text(sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text(st, i);

  return t != NULL ? (const char *)t : "";
}

/* Copies src into dst of n bytes, truncating. */
static void copy_str(char *dst, size_t n, const char *src)
{
  snprintf(dst, n, "%s", src != NULL ? src : "");
}

/* Parses "f32" / "f64". */
static int dtype_parse(const char *s, enum spmv_dtype *dt)
{
  if (strcmp(s, "f32") == 0)
    *dt = SPMV_F32;
  else if (strcmp(s, "f64") == 0)
    *dt = SPMV_F64;
  else
    return SPMV_EINVAL;
  return 0;
}

/* Checks a fingerprint's text. */
static int check_fingerprint(const char *fp, struct spmv_error *err)
{
  struct spmv_fingerprint f;

  if (fp == NULL || spmv_fingerprint_parse(fp, &f) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "bad fingerprint \"%s\": expected 32 hex digits",
                          fp != NULL ? fp : "(null)");
  return 0;
}

/* Creates the missing directories of path's parent, 0700 each. */
static int make_parent_dirs(const char *path, struct spmv_error *err)
{
  char dir[PATH_MAX];
  char *p;
  size_t n = strlen(path);

  if (n >= sizeof dir)
    return spmv_error_set(err, SPMV_EINVAL, "cache path too long: %s", path);
  memcpy(dir, path, n + 1);
  p = strrchr(dir, '/');
  if (p == NULL || p == dir)
    return 0;
  *p = '\0';
  for (p = dir + 1; ; p++) {
    if (*p == '/' || *p == '\0') {
      char save = *p;

      *p = '\0';
      if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return spmv_error_set(err, SPMV_EIO,
                              "cannot create directory %s for the cache: %s",
                              dir, strerror(errno));
      *p = save;
      if (save == '\0')
        break;
    }
  }
  return 0;
}

/* Brings the schema to the newest migration in one transaction. */
static int migrate(struct spmvd_cache *c, const char *path,
                   struct spmv_error *err)
{
  sqlite3_stmt *st = NULL;
  char sql[64];
  int version = 0, i, rc, ret = 0;

  if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL) !=
      SQLITE_OK)
    return db_err(c, err, "reading the schema version");
  if (sqlite3_step(st) == SQLITE_ROW)
    version = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  if (version > spmvd_nmigrations)
    return spmv_error_set(err, SPMV_ECACHE,
                          "cache %s has schema version %d, newer than this "
                          "build's %d", path, version, spmvd_nmigrations);
  if (version == spmvd_nmigrations)
    return 0;
  if (c->readonly)
    return spmv_error_set(err, SPMV_ECACHE,
                          "cache %s has schema version %d, expected %d: "
                          "start spmvd once to migrate it", path, version,
                          spmvd_nmigrations);
  if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return db_err(c, err, "starting the migration");
  for (i = version; i < spmvd_nmigrations; i++) {
    rc = sqlite3_exec(c->db, spmvd_migrations[i].sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
      ret = spmv_error_set(err, SPMV_ECACHE, "cache: migration %s: %s",
                           spmvd_migrations[i].name, sqlite3_errmsg(c->db));
      goto fail;
    }
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d",
             spmvd_migrations[i].version);
    if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
      ret = db_err(c, err, "setting the schema version");
      goto fail;
    }
  }
  if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    ret = db_err(c, err, "committing the migration");
    goto fail;
  }
  return 0;
fail:
  sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
  return ret;
}

/* Returns the schema version this build migrates to. */
int spmvd_cache_schema_version(void)
{
  return spmvd_nmigrations;
}

/* Opens (and, read-write, creates and migrates) the cache at path. */
int spmvd_cache_open(const char *path, unsigned flags,
                     struct spmvd_cache **out, struct spmv_error *err)
{
  struct spmvd_cache *c = NULL;
  struct stat sb;
  int oflags, i, ret;

  *out = NULL;
  if (path == NULL || path[0] == '\0')
    return spmv_error_set(err, SPMV_EINVAL, "no cache path given");
  c = calloc(1, sizeof *c);
  if (c == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory opening cache");
  c->readonly = (flags & SPMVD_CACHE_READONLY) != 0;
  if (c->readonly) {
    if (stat(path, &sb) != 0) {
      ret = spmv_error_set(err, errno == ENOENT ? SPMV_ENOENT : SPMV_EIO,
                           "no cache database at %s: %s", path,
                           strerror(errno));
      goto fail;
    }
    oflags = SQLITE_OPEN_READONLY;
  } else {
    ret = make_parent_dirs(path, err);
    if (ret != 0)
      goto fail;
    oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  }
  if (sqlite3_open_v2(path, &c->db, oflags | SQLITE_OPEN_NOMUTEX, NULL) !=
      SQLITE_OK) {
    ret = spmv_error_set(err, SPMV_ECACHE, "cannot open cache %s: %s", path,
                         c->db != NULL ? sqlite3_errmsg(c->db)
                                       : "out of memory");
    goto fail;
  }
  sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
  if (sqlite3_exec(c->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) !=
      SQLITE_OK) {
    ret = db_err(c, err, "enabling foreign keys");
    goto fail;
  }
  if (!c->readonly &&
      (sqlite3_exec(c->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) !=
           SQLITE_OK ||
       sqlite3_exec(c->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) !=
           SQLITE_OK)) {
    ret = spmv_error_set(err, SPMV_ECACHE, "cannot use cache %s: %s", path,
                         sqlite3_errmsg(c->db));
    goto fail;
  }
  ret = migrate(c, path, err);
  if (ret != 0)
    goto fail;
  for (i = 0; i < ST_COUNT; i++) {
    if (sqlite3_prepare_v3(c->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                           &c->st[i], NULL) != SQLITE_OK) {
      ret = spmv_error_set(err, SPMV_ECACHE, "cache %s: preparing \"%s\": %s",
                           path, stmt_sql[i], sqlite3_errmsg(c->db));
      goto fail;
    }
  }
  *out = c;
  return 0;
fail:
  spmvd_cache_close(c);
  return ret;
}

/* Finalizes every statement, closes the database and frees c. */
void spmvd_cache_close(struct spmvd_cache *c)
{
  int i;

  if (c == NULL)
    return;
  for (i = 0; i < ST_COUNT; i++)
    sqlite3_finalize(c->st[i]);
  sqlite3_close(c->db);
  free(c);
}

/* Records or refreshes a device row. */
int spmvd_cache_device_put(struct spmvd_cache *c,
                           const struct spmvd_device_info *dev,
                           struct spmv_error *err)
{
  enum stmt s = ST_DEVICE_PUT;
  int ret = check_writable(c, err, "record a device");

  if (ret != 0)
    return ret;
  bind_text(c, s, 1, dev->device_key);
  bind_text(c, s, 2, dev->software_key);
  bind_text(c, s, 3, dev->backend);
  bind_text(c, s, 4, dev->name);
  sqlite3_bind_int(c->st[s], 5, dev->cc_major);
  sqlite3_bind_int(c->st[s], 6, dev->cc_minor);
  sqlite3_bind_int(c->st[s], 7, dev->sms);
  sqlite3_bind_int(c->st[s], 8, dev->warp_size);
  sqlite3_bind_int(c->st[s], 9, dev->max_threads_per_sm);
  sqlite3_bind_int(c->st[s], 10, dev->max_blocks_per_sm);
  sqlite3_bind_int(c->st[s], 11, dev->max_threads_per_block);
  sqlite3_bind_int64(c->st[s], 12, (sqlite3_int64)dev->mem_bytes);
  sqlite3_bind_int64(c->st[s], 13, (sqlite3_int64)dev->l2_bytes);
  sqlite3_bind_int64(c->st[s], 14, (sqlite3_int64)time(NULL));
  return step_done(c, s, err);
}

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

/* Upserts a matrix row from its dimensions and profile JSON text. */
static int matrix_put(struct spmvd_cache *c, const char *fp, int64_t rows,
                      int64_t cols, int64_t nnz, const char *profile,
                      struct spmv_error *err)
{
  enum stmt s = ST_MATRIX_PUT;

  bind_text(c, s, 1, fp);
  sqlite3_bind_int64(c->st[s], 2, rows);
  sqlite3_bind_int64(c->st[s], 3, cols);
  sqlite3_bind_int64(c->st[s], 4, nnz);
  bind_text(c, s, 5, profile);
  sqlite3_bind_int64(c->st[s], 6, (sqlite3_int64)time(NULL));
  return step_done(c, s, err);
}

/* Returns 1 when the matrix row exists, 0 when not, or a negative code. */
static int matrix_has(struct spmvd_cache *c, const char *fp,
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
  return db_err(c, err, "looking up a matrix");
}

/* Reads a row of TUNING_COLS into t. */
static void row_to_tuning(sqlite3_stmt *st, struct spmvd_tuning *t)
{
  enum spmv_format f = SPMV_FMT_CSR_SCALAR;
  enum spmv_dtype dt = SPMV_F64;
  enum spmvd_strategy s = SPMVD_STRATEGY_AUTO;

  memset(t, 0, sizeof *t);
  t->id = sqlite3_column_int64(st, 0);
  copy_str(t->fingerprint, sizeof t->fingerprint, col_text(st, 1));
  copy_str(t->device_key, sizeof t->device_key, col_text(st, 2));
  copy_str(t->software_key, sizeof t->software_key, col_text(st, 3));
  dtype_parse(col_text(st, 4), &dt);
  t->dtype = dt;
  t->kernel_version = sqlite3_column_int(st, 5);
  spmv_format_parse(col_text(st, 6), &f);
  t->cfg.format = f;
  t->cfg.bs = sqlite3_column_int(st, 7);
  t->cfg.tpr = sqlite3_column_int(st, 8);
  t->cfg.param = sqlite3_column_int(st, 9);
  t->cfg.param2 = sqlite3_column_int(st, 10);
  copy_str(t->text, sizeof t->text, col_text(st, 11));
  t->time_us = sqlite3_column_double(st, 12);
  t->gflops = sqlite3_column_double(st, 13);
  t->gbps = sqlite3_column_double(st, 14);
  spmvd_strategy_parse(col_text(st, 15), &s, NULL);
  t->strategy = s;
  t->cost_spmv = sqlite3_column_double(st, 16);
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
    return db_err(c, err, "looking up other tunings");
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
  int rc, ret;

  set_reason(reason, reason_len, "%s", "");
  if (dtname == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "bad value type %d", (int)dtype);
  ret = check_fingerprint(fingerprint, err);
  if (ret != 0)
    return ret;
  bind_text(c, ST_LOOKUP, 1, fingerprint);
  bind_text(c, ST_LOOKUP, 2, device_key);
  bind_text(c, ST_LOOKUP, 3, software_key);
  bind_text(c, ST_LOOKUP, 4, dtname);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    row_to_tuning(st, &t);
  done(c, ST_LOOKUP);
  if (rc == SQLITE_DONE)
    return explain_miss(c, fingerprint, device_key, software_key, dtname,
                        reason, reason_len, err);
  if (rc != SQLITE_ROW)
    return db_err(c, err, "looking up a tuning");
  if (t.quarantined) {
    set_reason(reason, reason_len, "cached configuration '%s' is "
               "quarantined, tuning again", t.text);
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

/* Starts a write transaction. */
static int begin(struct spmvd_cache *c, struct spmv_error *err)
{
  return step_done(c, ST_BEGIN, err);
}

/* Commits, or rolls back when ret is an error; returns ret or the commit's
 * failure. */
static int finish(struct spmvd_cache *c, int ret, struct spmv_error *err)
{
  if (ret == 0) {
    ret = step_done(c, ST_COMMIT, err);
    if (ret == 0)
      return 0;
  }
  sqlite3_step(c->st[ST_ROLLBACK]);
  done(c, ST_ROLLBACK);
  return ret;
}

/* Inserts one trial row. */
static int trial_put(struct spmvd_cache *c, int64_t id, int seq,
                     const char *config, const char *status, double time_us,
                     double best_us, int rounds, int runs, const char *msg,
                     struct spmv_error *err)
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
  return step_done(c, s, err);
}

/* Replaces the tuning of t's key with t; *id_out gets the new row id.
 * Runs inside a transaction. */
static int tuning_put(struct spmvd_cache *c, const struct spmvd_tuning *t,
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
  ret = step_done(c, ST_TUNING_DEL, err);
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
  ret = step_done(c, s, err);
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

  ret = check_writable(c, err, "store a tuning");
  if (ret == 0)
    ret = check_fingerprint(t->fingerprint, err);
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
  ret = begin(c, err);
  if (ret != 0)
    goto out;
  if (prof != NULL) {
    ret = matrix_put(c, t->fingerprint, prof->rows, prof->cols, prof->nnz,
                     ptext, err);
  } else {
    ret = matrix_has(c, t->fingerprint, err);
    if (ret == 0)
      ret = spmv_error_set(err, SPMV_EINVAL,
                           "cache: matrix %s is not cached: store its "
                           "profile with the tuning", t->fingerprint);
    else if (ret == 1)
      ret = 0;
  }
  if (ret == 0)
    ret = tuning_put(c, t, &id, err);
  for (k = 0; ret == 0 && k < ntrials; k++) {
    spmv_config_format(&trials[k].cfg, ctext, sizeof ctext);
    ret = trial_put(c, id, (int)k, ctext,
                    spmvd_trial_status_name(trials[k].status),
                    trials[k].time_us, trials[k].best_us, trials[k].rounds,
                    trials[k].runs, trials[k].msg, err);
  }
  ret = finish(c, ret, err);
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
  int ret = check_writable(c, err, "count a hit");

  if (ret != 0)
    return ret;
  sqlite3_bind_int64(c->st[ST_HIT], 1, id);
  sqlite3_bind_int64(c->st[ST_HIT], 2, (sqlite3_int64)time(NULL));
  ret = step_done(c, ST_HIT, err);
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

  ret = check_writable(c, err, "quarantine a configuration");
  if (ret == 0)
    ret = check_fingerprint(fingerprint, err);
  if (ret != 0)
    return ret;
  if (dt == NULL || spmv_config_format(cfg, text, sizeof text) < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "cache: bad value type or configuration to "
                          "quarantine");
  ret = begin(c, err);
  if (ret != 0)
    return ret;
  bind_key(c, ST_QUAR_INS, fingerprint, device_key, software_key, dt);
  bind_text(c, ST_QUAR_INS, 5, text);
  bind_text(c, ST_QUAR_INS, 6, reason != NULL ? reason : "");
  sqlite3_bind_int64(c->st[ST_QUAR_INS], 7, (sqlite3_int64)time(NULL));
  ret = step_done(c, ST_QUAR_INS, err);
  if (ret == 0) {
    bind_key(c, ST_QUAR_FLAG, fingerprint, device_key, software_key, dt);
    bind_text(c, ST_QUAR_FLAG, 5, text);
    ret = step_done(c, ST_QUAR_FLAG, err);
  }
  return finish(c, ret, err);
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
    return db_err(c, err, "listing quarantined configurations");
  return (int)n;
}

/* Returns a new reference to a tuning's summary (config as text). */
static json_t *tuning_json(const struct spmvd_tuning *t)
{
  return json_pack("{sIsssssssssisssfsfsfsssfsIsIsIsb}",
                   "id", (json_int_t)t->id, "fingerprint", t->fingerprint,
                   "device_key", t->device_key,
                   "software_key", t->software_key,
                   "dtype", spmv_dtype_name(t->dtype),
                   "kernel_version", t->kernel_version,
                   "config", t->text, "time_us", t->time_us,
                   "gflops", t->gflops, "gbps", t->gbps,
                   "strategy", spmvd_strategy_name(t->strategy),
                   "cost_spmv", t->cost_spmv,
                   "created", (json_int_t)t->created,
                   "last_used", (json_int_t)t->last_used,
                   "hits", (json_int_t)t->hits,
                   "quarantined", t->quarantined != 0);
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
    row_to_tuning(st, &t);
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
    ret = db_err(c, err, "listing tunings");
  if (ret != 0) {
    json_decref(arr);
    return ret;
  }
  *out = arr;
  return 0;
}

/* Returns a new reference to a configuration as an object. */
static json_t *config_json(const struct spmv_config *cfg, const char *text)
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
    o = json_pack("{sssssfsfsisiss}", "config", col_text(st, 0),
                  "status", col_text(st, 1),
                  "time_us", sqlite3_column_double(st, 2),
                  "best_us", sqlite3_column_double(st, 3),
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
      db_err(c, err, "reading trials");
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
    db_err(c, err, "reading a matrix");
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
    row_to_tuning(st, &ts[n++]);
  }
  done(c, ST_TUNINGS_OF);
  if (rc != SQLITE_DONE) {
    if (rc == SQLITE_NOMEM)
      spmv_error_set(err, SPMV_ENOMEM, "out of memory reading tunings");
    else
      db_err(c, err, "reading tunings");
    goto out;
  }
  arr = json_array();
  if (arr == NULL) {
    spmv_error_set(err, SPMV_ENOMEM, "out of memory reading tunings");
    goto out;
  }
  for (k = 0; k < n; k++) {
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
                            config_json(&ts[k].cfg, ts[k].text)) != 0 ||
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
  ret = check_fingerprint(fingerprint, err);
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
    ret = check_fingerprint(fingerprint, err);
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
    ret = db_err(c, err, "exporting");
  for (k = 0; ret == 0 && k < n; k++)
    ret = export_one(c, fps[k], arr, err);
out:
  for (k = 0; k < n; k++)
    free(fps[k]);
  free(fps);
  if (ret == 0) {
    doc = json_pack("{sisisO}", "spmvd_export", 1, "schema",
                    spmvd_nmigrations, "tunings", arr);
    if (doc == NULL)
      ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory exporting");
  }
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
  if (check_fingerprint(s, err) != 0)
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
  if (dtype_parse(s, &t->dtype) != 0)
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
  t->kernel_version = (int)v;
  if ((ret = get_num(o, "time_us", 0, k, &t->time_us, err)) != 0 ||
      (ret = get_num(o, "gflops", 1, k, &t->gflops, err)) != 0 ||
      (ret = get_num(o, "gbps", 1, k, &t->gbps, err)) != 0 ||
      (ret = get_num(o, "cost_spmv", 1, k, &t->cost_spmv, err)) != 0)
    return ret;
  v = 0;
  if ((ret = get_num(o, "created", 1, k, &v, err)) != 0)
    return ret;
  t->created = (int64_t)v;
  v = 0;
  if ((ret = get_num(o, "hits", 1, k, &v, err)) != 0)
    return ret;
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

  ret = matrix_put(c, e->t.fingerprint, e->rows, e->cols, e->nnz,
                   e->profile, err);
  if (ret == 0)
    ret = tuning_put(c, &e->t, &id, err);
  for (j = 0; ret == 0 && e->trials != NULL && j < json_array_size(e->trials);
       j++) {
    tr = json_array_get(e->trials, j);
    best = json_number_value(json_object_get(tr, "best_us"));
    ret = trial_put(c, id, (int)j,
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
  ret = check_writable(c, err, "import tunings");
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
  if (ret != 0)
    goto out;
  ret = begin(c, err);
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
  ret = finish(c, ret, err);
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

/* Forgets one fingerprint's tunings, or every one. */
int spmvd_cache_forget(struct spmvd_cache *c, const char *fingerprint,
                       int *count, struct spmv_error *err)
{
  int all, ret, n = 0;

  if (count != NULL)
    *count = 0;
  ret = check_writable(c, err, "forget tunings");
  if (ret != 0)
    return ret;
  all = fingerprint != NULL && strcmp(fingerprint, "all") == 0;
  if (!all && (ret = check_fingerprint(fingerprint, err)) != 0)
    return ret;
  ret = begin(c, err);
  if (ret != 0)
    return ret;
  if (all) {
    if (sqlite3_step(c->st[ST_FORGET_COUNT_ALL]) == SQLITE_ROW)
      n = sqlite3_column_int(c->st[ST_FORGET_COUNT_ALL], 0);
    done(c, ST_FORGET_COUNT_ALL);
    ret = step_done(c, ST_FORGET_TUNINGS_ALL, err);
    if (ret == 0)
      ret = step_done(c, ST_FORGET_QUAR_ALL, err);
    if (ret == 0)
      ret = step_done(c, ST_FORGET_MATRICES_ALL, err);
  } else {
    bind_text(c, ST_FORGET_TUNINGS, 1, fingerprint);
    ret = step_done(c, ST_FORGET_TUNINGS, err);
    if (ret == 0) {
      n = sqlite3_changes(c->db);
      bind_text(c, ST_FORGET_QUAR, 1, fingerprint);
      ret = step_done(c, ST_FORGET_QUAR, err);
    }
    if (ret == 0) {
      bind_text(c, ST_FORGET_MATRIX, 1, fingerprint);
      ret = step_done(c, ST_FORGET_MATRIX, err);
    }
  }
  ret = finish(c, ret, err);
  if (ret == 0 && count != NULL)
    *count = n;
  return ret;
}

/* Stores one format's calibration fit. */
int spmvd_cache_calibration_put(struct spmvd_cache *c, const char *device_key,
                                const char *software_key,
                                enum spmv_dtype dtype,
                                enum spmv_format format, json_t *fit,
                                struct spmv_error *err)
{
  const char *dt = spmv_dtype_name(dtype), *fn = spmv_format_name(format);
  char *text;
  int ret = check_writable(c, err, "store a calibration");

  if (ret != 0)
    return ret;
  if (dt == NULL || fn == NULL || fit == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "cache: bad value type, format or fit for a "
                          "calibration");
  text = json_dumps(fit, JSON_COMPACT);
  if (text == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory storing a fit");
  bind_text(c, ST_CAL_PUT, 1, device_key);
  bind_text(c, ST_CAL_PUT, 2, software_key);
  bind_text(c, ST_CAL_PUT, 3, dt);
  bind_text(c, ST_CAL_PUT, 4, fn);
  bind_text(c, ST_CAL_PUT, 5, text);
  sqlite3_bind_int64(c->st[ST_CAL_PUT], 6, (sqlite3_int64)time(NULL));
  ret = step_done(c, ST_CAL_PUT, err);
  free(text);
  return ret;
}

/* Loads the calibration fits of a device. */
int spmvd_cache_calibration_get(struct spmvd_cache *c, const char *device_key,
                                const char *software_key,
                                enum spmv_dtype dtype, json_t **out,
                                struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_CAL_GET];
  const char *dt = spmv_dtype_name(dtype);
  json_t *o = json_object(), *fit;
  int rc, ret = 0;

  *out = NULL;
  if (o == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory reading fits");
  if (dt == NULL) {
    json_decref(o);
    return spmv_error_set(err, SPMV_EINVAL, "bad value type %d", (int)dtype);
  }
  bind_text(c, ST_CAL_GET, 1, device_key);
  bind_text(c, ST_CAL_GET, 2, software_key);
  bind_text(c, ST_CAL_GET, 3, dt);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    fit = json_loads(col_text(st, 1), 0, NULL);
    if (fit == NULL) {
      ret = spmv_error_set(err, SPMV_ECACHE,
                           "cache: calibration of %s is not valid JSON",
                           col_text(st, 0));
      break;
    }
    json_object_set_new(o, col_text(st, 0), fit);
  }
  done(c, ST_CAL_GET);
  if (ret == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
    ret = db_err(c, err, "reading calibrations");
  if (ret != 0 || json_object_size(o) == 0) {
    json_decref(o);
    return ret != 0 ? ret : 0;
  }
  *out = o;
  return 1;
}
