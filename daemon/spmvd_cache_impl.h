/* spmvd_cache_impl.h: what the cache's files share (spmvd_cache.c, the
 * store, the JSON views): the prepared statements and the helpers that run
 * them; internal to the cache. */
#ifndef SPMVD_CACHE_IMPL_H
#define SPMVD_CACHE_IMPL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "spmvd_cache.h"

/* The columns of a tunings row, in the order spmvd_cache_row_to_tuning()
 * reads them. */
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
  ST_SPLIT_GET,
  ST_SPLIT_PUT,
  ST_SPLIT_EXPORT,
  ST_SPLIT_EXPORT_ALL,
  ST_COUNT
};

/* An open database and its statements. */
struct spmvd_cache {
  sqlite3 *db;
  int readonly;
  sqlite3_stmt *st[ST_COUNT];
  void (*warn)(const char *msg);  /* spmvd_cache_set_warn(); may be NULL */
  int64_t *reported;          /* corrupt tuning rows already logged */
  size_t nreported, capreported;
};


/* --- spmvd_cache.c: errors, statements and transactions --- */

/* Records the connection's last SQLite error as SPMV_ECACHE. */
int spmvd_cache_db_err(struct spmvd_cache *c, struct spmv_error *err,
                       const char *what);
/* Formats a warning and hands it to c->warn (when set). */
void spmvd_cache_warn(struct spmvd_cache *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Refuses a write on a read-only cache (SPMV_EPERM). */
int spmvd_cache_check_writable(struct spmvd_cache *c, struct spmv_error *err,
                               const char *what);
/* Steps a statement that returns no row, then resets it. */
/* Returns 1 when the matrix row of fp exists, 0 when not, or a negative
 * code. */
int spmvd_cache_matrix_has(struct spmvd_cache *c, const char *fp,
                           struct spmv_error *err);
int spmvd_cache_step_done(struct spmvd_cache *c, enum stmt s,
                          struct spmv_error *err);
/* Checks a fingerprint's text (SPMV_EINVAL). */
int spmvd_cache_check_fingerprint(const char *fp, struct spmv_error *err);
/* Starts a write transaction. */
int spmvd_cache_txn_begin(struct spmvd_cache *c, struct spmv_error *err);
/* Commits, or rolls back when ret is an error; returns ret or the commit's
 * failure. */
int spmvd_cache_txn_finish(struct spmvd_cache *c, int ret,
                           struct spmv_error *err);

/* Resets a statement after reading its rows. */
static inline void done(struct spmvd_cache *c, enum stmt s)
{
  sqlite3_reset(c->st[s]);
  sqlite3_clear_bindings(c->st[s]);
}

/* Binds a text parameter (copied). */
static inline void bind_text(struct spmvd_cache *c, enum stmt s, int i,
                             const char *v)
{
  sqlite3_bind_text(c->st[s], i, v, -1, SQLITE_TRANSIENT);
}

/* Reads a text column as a C string ("" when NULL). */
static inline const char *col_text(sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text(st, i);

  return t != NULL ? (const char *)t : "";
}

/* Reads a real column; NULL (which is what SQLite makes of a NaN) reads as
 * NaN, so that the row's check sees it is missing instead of taking 0. */
static inline double col_double(sqlite3_stmt *st, int i)
{
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return (double)NAN;
  return sqlite3_column_double(st, i);
}

/* Copies src into dst of n bytes, truncating. */
static inline void copy_str(char *dst, size_t n, const char *src)
{
  snprintf(dst, n, "%s", src != NULL ? src : "");
}

/* --- spmvd_cache_store.c: the rows that export and import share --- */

/* Upserts a matrix row from its dimensions and profile JSON text. */
int spmvd_cache_matrix_put(struct spmvd_cache *c, const char *fp,
                           int64_t rows, int64_t cols, int64_t nnz,
                           const char *profile, struct spmv_error *err);
/* Reads a row of TUNING_COLS into t. */
void spmvd_cache_row_to_tuning(sqlite3_stmt *st, struct spmvd_tuning *t);
/* Replaces the tuning of t's key with t; *id_out gets the new row id.
 * Runs inside a transaction. */
int spmvd_cache_tuning_put(struct spmvd_cache *c, const struct spmvd_tuning *t,
                           int64_t *id_out, struct spmv_error *err);
/* Inserts one trial row. */
int spmvd_cache_trial_put(struct spmvd_cache *c, int64_t id, int seq,
                          const char *config, const char *status,
                          double time_us, double best_us, int rounds,
                          int runs, const char *msg, struct spmv_error *err);

#endif /* SPMVD_CACHE_IMPL_H */
