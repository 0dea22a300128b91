/* spmvd_cache.c: the SQLite cache's database: open (created and migrated
 * from schema/), its prepared statements and transactions, and the rows of
 * devices and calibrations. */
#include <errno.h>
#include <limits.h>
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
#include "spmvd_cache_impl.h"
#include "spmvd_schema.h"

/* Milliseconds a writer waits for another connection's lock. */
#define BUSY_TIMEOUT_MS 5000

/* The export's columns of a split row, in its order. */
#define SPLIT_COLS "fingerprint, device_set, software_key, dtype, blocks, " \
                   "configs, created"

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
  [ST_SPLIT_GET] =
    "SELECT configs FROM splits WHERE fingerprint = ?1 AND device_set = ?2"
    " AND software_key = ?3 AND dtype = ?4 AND blocks = ?5",
  [ST_SPLIT_PUT] =
    "INSERT OR REPLACE INTO splits (fingerprint, device_set, software_key,"
    " dtype, blocks, configs, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  [ST_SPLIT_EXPORT] =
    "SELECT " SPLIT_COLS " FROM splits WHERE fingerprint = ?1"
    " ORDER BY device_set, software_key, dtype, blocks",
  [ST_SPLIT_EXPORT_ALL] =
    "SELECT " SPLIT_COLS " FROM splits"
    " ORDER BY fingerprint, device_set, software_key, dtype, blocks",
};

/* Records the connection's last SQLite error as SPMV_ECACHE. */
int spmvd_cache_db_err(struct spmvd_cache *c, struct spmv_error *err,
                       const char *what)
{
  return spmv_error_set(err, SPMV_ECACHE, "cache: %s: %s", what,
                        sqlite3_errmsg(c->db));
}

/* Formats a warning and hands it to c->warn. */
void spmvd_cache_warn(struct spmvd_cache *c, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  if (c->warn == NULL)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->warn(msg);
}

/* Sets where the cache's warnings go. */
void spmvd_cache_set_warn(struct spmvd_cache *c, void (*warn)(const char *msg))
{
  c->warn = warn;
}

/* Refuses a write on a read-only cache. */
int spmvd_cache_check_writable(struct spmvd_cache *c, struct spmv_error *err,
                               const char *what)
{
  if (c->readonly)
    return spmv_error_set(err, SPMV_EPERM,
                          "cache: cannot %s: the cache is open read-only",
                          what);
  return 0;
}

/* Steps a statement that returns no row, then resets it. */
int spmvd_cache_step_done(struct spmvd_cache *c, enum stmt s,
                          struct spmv_error *err)
{
  int rc = sqlite3_step(c->st[s]);
  int ret = 0;

  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    ret = spmvd_cache_db_err(c, err, stmt_sql[s]);
  sqlite3_reset(c->st[s]);
  sqlite3_clear_bindings(c->st[s]);
  return ret;
}

/* Checks a fingerprint's text. */
int spmvd_cache_check_fingerprint(const char *fp, struct spmv_error *err)
{
  struct spmv_fingerprint f;

  if (fp == NULL || spmv_fingerprint_parse(fp, &f) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "bad fingerprint \"%s\": expected 32 hex digits",
                          fp != NULL ? fp : "(null)");
  return 0;
}

/* Starts a write transaction. */
int spmvd_cache_txn_begin(struct spmvd_cache *c, struct spmv_error *err)
{
  return spmvd_cache_step_done(c, ST_BEGIN, err);
}

/* Commits, or rolls back when ret is an error; returns ret or the commit's
 * failure. */
int spmvd_cache_txn_finish(struct spmvd_cache *c, int ret,
                           struct spmv_error *err)
{
  if (ret == 0) {
    ret = spmvd_cache_step_done(c, ST_COMMIT, err);
    if (ret == 0)
      return 0;
  }
  sqlite3_step(c->st[ST_ROLLBACK]);
  done(c, ST_ROLLBACK);
  return ret;
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
    return spmvd_cache_db_err(c, err, "reading the schema version");
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
    return spmvd_cache_db_err(c, err, "starting the migration");
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
      ret = spmvd_cache_db_err(c, err, "setting the schema version");
      goto fail;
    }
  }
  if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    ret = spmvd_cache_db_err(c, err, "committing the migration");
    goto fail;
  }
  return 0;
fail:
  sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
  return ret;
}

/* Opens the SQLite connection of c with oflags. */
static int open_db(struct spmvd_cache *c, const char *path, int oflags,
                   struct spmv_error *err)
{
  if (sqlite3_open_v2(path, &c->db, oflags | SQLITE_OPEN_NOMUTEX, NULL) !=
      SQLITE_OK)
    return spmv_error_set(err, SPMV_ECACHE, "cannot open cache %s: %s", path,
                          c->db != NULL ? sqlite3_errmsg(c->db)
                                        : "out of memory");
  sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
  return 0;
}

/* Writes path as a file: URI with immutable=1 into uri (n bytes), its
 * '%', '?' and '#' escaped; returns -1 when it does not fit. */
static int immutable_uri(const char *path, char *uri, size_t n)
{
  size_t k = (size_t)snprintf(uri, n, "file:");

  for (; *path && k + 4 < n; path++) {
    if (*path == '%' || *path == '?' || *path == '#')
      k += (size_t)snprintf(uri + k, n - k, "%%%02X", (unsigned char)*path);
    else
      uri[k++] = *path;
  }
  if (*path || k + sizeof "?immutable=1" > n)
    return -1;
  snprintf(uri + k, n - k, "?immutable=1");
  return 0;
}

/* Reads the schema version of a read-only cache, once more as immutable
 * when SQLite cannot read it as it is: a WAL database in a directory we
 * may not write needs its -shm file, which cannot be made there. */
static int readonly_probe(struct spmvd_cache *c, const char *path,
                          struct spmv_error *err)
{
  char uri[PATH_MAX + 32];

  if (sqlite3_exec(c->db, "PRAGMA user_version", NULL, NULL, NULL) ==
      SQLITE_OK)
    return 0;
  if (immutable_uri(path, uri, sizeof uri) != 0)
    return spmv_error_set(err, SPMV_EINVAL, "cache path too long: %s", path);
  sqlite3_close(c->db);
  c->db = NULL;
  return open_db(c, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err);
}

/* Does the system refuse writing the cache at path (or its directory)?
 * That, unlike a damaged database, is a cache to serve read-only. */
int spmvd_cache_denied(const char *path)
{
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  size_t n = slash == NULL ? 1 : (size_t)(slash - path);

  if (access(path, W_OK) != 0 && errno != ENOENT)
    return errno == EACCES || errno == EROFS || errno == EPERM;
  if (slash == NULL)
    snprintf(dir, sizeof dir, ".");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(n == 0 ? 1 : n), path);
  return access(dir, W_OK) != 0 &&
         (errno == EACCES || errno == EROFS || errno == EPERM);
}

/* Is c open read-only? */
int spmvd_cache_readonly(const struct spmvd_cache *c)
{
  return c->readonly;
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
  ret = open_db(c, path, oflags, err);
  if (ret != 0)
    goto fail;
  if (sqlite3_exec(c->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) !=
      SQLITE_OK) {
    ret = spmvd_cache_db_err(c, err, "enabling foreign keys");
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
  if (c->readonly && (ret = readonly_probe(c, path, err)) != 0)
    goto fail;
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
  free(c->reported);
  free(c);
}

/* Records or refreshes a device row. */
int spmvd_cache_device_put(struct spmvd_cache *c,
                           const struct spmvd_device_info *dev,
                           struct spmv_error *err)
{
  enum stmt s = ST_DEVICE_PUT;
  int ret = spmvd_cache_check_writable(c, err, "record a device");

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
  return spmvd_cache_step_done(c, s, err);
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
  int ret = spmvd_cache_check_writable(c, err, "store a calibration");

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
  ret = spmvd_cache_step_done(c, ST_CAL_PUT, err);
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
    ret = spmvd_cache_db_err(c, err, "reading calibrations");
  if (ret != 0 || json_object_size(o) == 0) {
    json_decref(o);
    return ret != 0 ? ret : 0;
  }
  *out = o;
  return 1;
}
