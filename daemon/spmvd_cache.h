/* spmvd_cache.h: the SQLite cache of devices, matrices, tunings, trials and
 * calibrations. */
#ifndef SPMVD_CACHE_H
#define SPMVD_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmv_profile.h"
#include "spmvd_backend.h"
#include "spmvd_decision.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One open database.  The daemon opens it read-write (migrations from
 * schema/ applied, WAL, busy timeout); spmvctl opens it read-only for
 * list / show / export.  Every function returns 0 (or a documented positive
 * value) or a negative SPMV_E* code: SQLite failures are SPMV_ECACHE with
 * sqlite3_errmsg() in err->msg, writes on a read-only cache SPMV_EPERM.
 * A cache is used by one thread at a time.
 */
struct spmvd_cache;

/* Flags of spmvd_cache_open(). */
#define SPMVD_CACHE_READONLY 0x1u /* no writes, no migrations, must exist */

/*
 * Opens (read-write: creates, with the directory made 0700 when missing,
 * and migrates) the database at path.  A read-only open of a WAL database
 * whose -shm file cannot be made (a read-only directory or mount) reads it
 * as immutable.  A read-only open of a missing file
 * fails with SPMV_ENOENT; of a database older than this build's schema with
 * SPMV_ECACHE ("schema version 0, expected 1: start spmvd once to
 * migrate"); a database newer than this build fails either way.  On success
 * *out is owned by the caller and released with spmvd_cache_close().
 */
int spmvd_cache_open(const char *path, unsigned flags,
                     struct spmvd_cache **out, struct spmv_error *err);

/* Sets where the cache's warnings (a corrupt row found by a lookup) go:
 * the daemon's log; NULL (the default, e.g. spmvctl) drops them.  The
 * library itself does not log. */
void spmvd_cache_set_warn(struct spmvd_cache *c, void (*warn)(const char *msg));

/* Is c open read-only (1) or read-write (0)? */
int spmvd_cache_readonly(const struct spmvd_cache *c);

/*
 * Returns 1 when the system refuses writing the database at path or its
 * directory (a read-only file, directory or mount: EACCES, EROFS, EPERM),
 * 0 otherwise.  The daemon then opens it read-only instead of failing.
 */
int spmvd_cache_denied(const char *path);

/* Closes the database and frees c (NULL is a no-op). */
void spmvd_cache_close(struct spmvd_cache *c);

/* The schema version this build migrates to (the highest migration). */
int spmvd_cache_schema_version(void);

/*
 * A split matrix's blocks' configurations (issue 54), keyed by the
 * matrix's fingerprint, the devices of its blocks in block order
 * (device_set: their device keys joined by " | "), the software key, the
 * value type and the number of blocks.  configs is a JSON array of that
 * many configuration texts.  get: 1 and *configs (a new string, free()) on
 * a hit, 0 on a miss, or a negative code; put replaces any earlier row,
 * and needs the matrix's row (a stored tuning of it).
 */
int spmvd_cache_split_get(struct spmvd_cache *c, const char *fingerprint,
                          const char *device_set, const char *software_key,
                          enum spmv_dtype dtype, int blocks, char **configs,
                          struct spmv_error *err);
/* The split rows of fingerprint (NULL: of every matrix) appended to arr as
 * the export's "splits" entries (spmvd_cache_export). */
int spmvd_cache_split_export(struct spmvd_cache *c, const char *fingerprint,
                             json_t *arr, struct spmv_error *err);
/* Checks an import's "splits" array (NULL: none) before anything is
 * written; then, inside the import's transaction, writes those for this
 * device (spmvd_cache_import), counting them in *imported, the others in
 * *skipped. */
int spmvd_cache_split_import_check(json_t *splits, struct spmv_error *err);
int spmvd_cache_split_import(struct spmvd_cache *c, json_t *splits,
                             const char *device_key, const char *software_key,
                             int *imported, int *skipped,
                             struct spmv_error *err);
int spmvd_cache_split_put(struct spmvd_cache *c, const char *fingerprint,
                          const char *device_set, const char *software_key,
                          enum spmv_dtype dtype, int blocks, const char *configs,
                          struct spmv_error *err);

/* Records (or refreshes) a device and its software key.  dev borrowed. */
int spmvd_cache_device_put(struct spmvd_cache *c,
                           const struct spmvd_device_info *dev,
                           struct spmv_error *err);

/* A stored tuning: the decision plus where and when it applies. */
struct spmvd_tuning {
  int64_t id;                 /* row id (0 before it is stored) */
  char fingerprint[33];       /* 32 hex digits */
  char device_key[256];
  char software_key[256];
  enum spmv_dtype dtype;
  int kernel_version;         /* SPMV_KERNEL_VERSION when tuned */
  struct spmv_config cfg;
  char text[64];              /* spmv_config_format() of cfg */
  double time_us, gflops, gbps;
  enum spmvd_strategy strategy;
  double cost_spmv;           /* tuning cost in SpMV-equivalents */
  int64_t created;            /* unix seconds */
  int64_t last_used;          /* unix seconds, 0 = never */
  int64_t hits;               /* times served from the cache */
  int quarantined;            /* 1 once its configuration faulted */
};

/*
 * Fills t (caller's storage) from a decision d (borrowed) and the keys; id,
 * hits, last_used and quarantined are 0, created is now.
 */
void spmvd_tuning_from_decision(struct spmvd_tuning *t,
                                const struct spmvd_decision *d,
                                const char *fingerprint,
                                const struct spmvd_device_info *dev,
                                enum spmv_dtype dtype);

/*
 * Checks a tuning's numbers: time_us, gflops, gbps and cost_spmv must be
 * finite, not negative and below absurd bounds (a row edited by hand or
 * damaged on disk).  Returns 0 when sound; 1 when corrupt, with the field
 * named in why (why_len bytes, may be NULL): "time_us is not finite".
 */
int spmvd_tuning_check(const struct spmvd_tuning *t, char *why,
                       size_t why_len);

/* A number for a reply or a listing: a new reference to json_real(v), or to
 * JSON null when v is not finite (jansson refuses those, which would fail
 * the whole reply). */
json_t *spmvd_cache_number_json(double v);

/*
 * Looks up the tuning of a matrix for a device key, software key and value
 * type.  Returns 1 and fills *out when a usable (not quarantined, not
 * corrupt) row exists; returns 0 when not, with a sentence in reason
 * (reason_len bytes, may be NULL) saying why: "no cached tuning", "cached
 * for device 'X' / software 'Y', tuning again", "cached configuration
 * 'ell bs=256' is quarantined, tuning again", "cached for f64 only, tuning
 * again", "the cached tuning's time_us is not finite: retuned".  A corrupt
 * row is logged once per open cache.  Returns a negative SPMV_E* code on
 * failure.
 */
int spmvd_cache_lookup(struct spmvd_cache *c, const char *fingerprint,
                       const char *device_key, const char *software_key,
                       enum spmv_dtype dtype, struct spmvd_tuning *out,
                       char *reason, size_t reason_len,
                       struct spmv_error *err);

/*
 * Stores a tuning t (borrowed), the matrix's profile prof (borrowed; may be
 * NULL when the matrix row exists already) and its trials (borrowed, may be
 * NULL when ntrials is 0) in one transaction, replacing any earlier tuning
 * of the same (fingerprint, device key, software key, dtype) and its
 * trials.  *id_out (may be NULL) receives the new row id.
 */
int spmvd_cache_store(struct spmvd_cache *c, const struct spmvd_tuning *t,
                      const struct spmv_profile *prof,
                      const struct spmvd_trial *trials, size_t ntrials,
                      int64_t *id_out, struct spmv_error *err);

/* Counts one use of tuning id from the cache (hits + 1, last_used = now). */
int spmvd_cache_hit(struct spmvd_cache *c, int64_t id,
                    struct spmv_error *err);

/*
 * Quarantines configuration cfg for a matrix on a device: the tuning row
 * using it (if any) is flagged so lookups miss, and cfg is remembered so the
 * tuner excludes it (spmvd_cache_quarantined()).  reason (may be NULL) is
 * kept, e.g. "illegal address".
 */
int spmvd_cache_quarantine(struct spmvd_cache *c, const char *fingerprint,
                           const char *device_key, const char *software_key,
                           enum spmv_dtype dtype,
                           const struct spmv_config *cfg, const char *reason,
                           struct spmv_error *err);

/*
 * The quarantined configurations of a matrix on a device, to pass to the
 * tuner as spmvd_tune_input.exclude: at most max written to cfgs (caller's
 * storage); returns how many were written, or a negative code.
 */
int spmvd_cache_quarantined(struct spmvd_cache *c, const char *fingerprint,
                            const char *device_key, const char *software_key,
                            enum spmv_dtype dtype, struct spmv_config *cfgs,
                            size_t max, struct spmv_error *err);

/*
 * Lists every tuning: *out is a new reference to a JSON array of
 * {id, fingerprint, rows, cols, nnz, dtype, device_key, software_key,
 *  config:"text", time_us, gflops, gbps, strategy, cost_spmv, created,
 *  last_used, hits, quarantined}, most recently used first.
 */
int spmvd_cache_list(struct spmvd_cache *c, json_t **out,
                     struct spmv_error *err);

/*
 * Shows one matrix: *out is a new reference to {fingerprint, rows, cols,
 * nnz, profile:{...}, tunings:[{...as listed..., config:{format, bs, tpr,
 * param, param2, text}, trials:[{config:"text", time_us, best_us, rounds,
 * runs, status, message}]}]}.  Returns SPMV_ENOENT ("no cached matrix
 * with fingerprint X") when the matrix is unknown.
 */
int spmvd_cache_show(struct spmvd_cache *c, const char *fingerprint,
                     json_t **out, struct spmv_error *err);

/*
 * Exports tunings (of one fingerprint, or all when fingerprint is NULL or
 * "all"): *out is a new reference to {"spmvd_export":1, "schema":N,
 * "tunings":[{fingerprint, device_key, software_key, dtype,
 * kernel_version, config:{...}, time_us, gflops, gbps, strategy,
 * cost_spmv, created, hits, quarantined, matrix:{rows, cols, nnz,
 * profile}, trials:[...]}], "splits":[{fingerprint, device_set,
 * software_key, dtype, blocks, configs:[...], created}]}.  Quarantined
 * tunings are exported too.
 */
int spmvd_cache_export(struct spmvd_cache *c, const char *fingerprint,
                       json_t **out, struct spmv_error *err);

/*
 * Imports what spmvd_cache_export() wrote (the object, or its "tunings"
 * array alone; doc borrowed), in one transaction.  Tunings whose device key
 * or software key differs from device_key / software_key (either may be
 * NULL: accept any) are skipped and counted in *skipped; the others replace
 * local rows of the same key and are counted in *imported.  So are the
 * splits: one is taken where every block's device key is device_key, its
 * software key software_key, and the cache holds its matrix (after the
 * tunings).  A malformed entry fails the whole import with SPMV_EINVAL
 * naming the entry and field (nothing is written).
 */
int spmvd_cache_import(struct spmvd_cache *c, json_t *doc,
                       const char *device_key, const char *software_key,
                       int *imported, int *skipped, struct spmv_error *err);

/*
 * Forgets the tunings (and their trials and quarantined configurations) of
 * one fingerprint, or of every matrix when fingerprint is "all"; matrices
 * left without tunings are removed too.  *count (may be NULL) receives the
 * number of tunings removed.
 */
int spmvd_cache_forget(struct spmvd_cache *c, const char *fingerprint,
                       int *count, struct spmv_error *err);

/*
 * Stores a format's calibration fit (fit borrowed: copied as JSON text)
 * for a device, software key and value type, replacing an earlier one.
 * spmvd_predict_save() is the usual caller.
 */
int spmvd_cache_calibration_put(struct spmvd_cache *c, const char *device_key,
                                const char *software_key,
                                enum spmv_dtype dtype,
                                enum spmv_format format, json_t *fit,
                                struct spmv_error *err);

/*
 * Loads every calibration fit of a device, software key and value type:
 * returns 1 and *out a new reference to {"format name": fit, ...}, 0 (with
 * *out NULL) when none is stored, or a negative code.
 */
int spmvd_cache_calibration_get(struct spmvd_cache *c, const char *device_key,
                                const char *software_key,
                                enum spmv_dtype dtype, json_t **out,
                                struct spmv_error *err);

/* Returns a new reference to the profile as JSON (the info op's "profile"). */
json_t *spmvd_cache_profile_json(const struct spmv_profile *p);
/* Returns a new reference to a configuration as the replies and the
 * exports show it: format, bs, tpr, param, param2 and its text. */
json_t *spmvd_cache_config_json(const struct spmv_config *cfg, const char *text);

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_CACHE_H */
