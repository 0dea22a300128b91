/* fuzz_tuning.c: a stored tuning row as spmvd reads it back.  The cache
 * (in memory) holds one sound tuning of one matrix, with a trial and a
 * calibration; each input edits that row's columns in the database, as a
 * hand edit or a damaged file would, and the daemon's and spmvctl's reads
 * of it run: lookup (and the row checks), list, show, export and the
 * predictor's load.  The edit is rolled back after each input.
 *
 * Input: lines "<table>.<column>=<type><value>", table t (tunings), m
 * (matrices), r (trials) or c (calibrations); type i (int64), r (real,
 * strtod: "r1e999" is an Inf), s (text, the rest of the line), x (blob) or
 * n (NULL).  Columns are taken only from the schema's names. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "spmvd_cache_impl.h"
#include "spmvd_predict.h"

#define FP "0123456789abcdef0123456789abcdef"

static struct spmvd_cache *cache;
static struct spmvd_device_info dev;

/* The columns an input may edit, per table letter. */
static const char *const columns[] = {
    "t:fingerprint", "t:device_key", "t:software_key", "t:dtype",
    "t:kernel_version", "t:format", "t:bs", "t:tpr", "t:param", "t:param2",
    "t:config", "t:time_us", "t:gflops", "t:gbps", "t:strategy",
    "t:cost_spmv", "t:created", "t:hits", "t:last_used", "t:quarantined",
    "m:fingerprint", "m:rows", "m:cols", "m:nnz", "m:profile", "m:created",
    "r:seq", "r:config", "r:status", "r:time_us", "r:best_us", "r:rounds",
    "r:runs", "r:message", "c:dtype", "c:format", "c:fit", "c:created",
    NULL};

static const char *table_of(char t)
{
  return t == 't' ? "tunings" : t == 'm' ? "matrices" : t == 'r' ? "trials"
                                                                 : "calibrations";
}

/* Is "<t>:<col>" of the schema? */
static int known(char t, const char *col, size_t n)
{
  int k;

  for (k = 0; columns[k] != NULL; k++)
    if (columns[k][0] == t && strlen(columns[k] + 2) == n &&
        memcmp(columns[k] + 2, col, n) == 0)
      return 1;
  return 0;
}

/* Stores the one sound tuning that every input starts from. */
static int seed(void)
{
  struct spmvd_decision d;
  struct spmvd_tuning t;
  struct spmv_profile p;
  struct spmv_error e;
  char sql[1024];

  memset(&p, 0, sizeof p);
  p.rows = p.cols = 100;
  p.nnz = 500;
  p.rl_min = 1;
  p.rl_max = 9;
  p.rl_mean = 5;
  spmvd_decision_init(&d);
  d.cfg.format = SPMV_FMT_ELLR_T;
  d.cfg.bs = 256;
  d.cfg.tpr = 4;
  spmv_config_format(&d.cfg, d.text, sizeof d.text);
  d.time_us = 10;
  d.gflops = 0.1;
  d.gbps = 1;
  d.cost_spmv = 5;
  d.ntrials = 1;
  d.trials = calloc(1, sizeof *d.trials);
  if (d.trials == NULL)
    return -1;
  d.trials[0].cfg = d.cfg;
  d.trials[0].time_us = 10;
  d.trials[0].best_us = 9;
  d.trials[0].rounds = 2;
  d.trials[0].runs = 7;
  spmvd_tuning_from_decision(&t, &d, FP, &dev, SPMV_F64);
  if (spmvd_cache_device_put(cache, &dev, &e) != 0 ||
      spmvd_cache_store(cache, &t, &p, d.trials, d.ntrials, NULL, &e) != 0) {
    spmvd_decision_fini(&d);
    return -1;
  }
  spmvd_decision_fini(&d);
  snprintf(sql, sizeof sql, "INSERT INTO calibrations VALUES('%s', '%s', "
           "'f64', 'csr-vector', '{}', 0)", dev.device_key, dev.software_key);
  return sqlite3_exec(cache->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  struct spmv_error e;

  snprintf(dev.backend, sizeof dev.backend, "cpu");
  snprintf(dev.name, sizeof dev.name, "fuzz");
  dev.sms = 2;
  dev.warp_size = 1;
  snprintf(dev.device_key, sizeof dev.device_key, "fuzz-device");
  snprintf(dev.software_key, sizeof dev.software_key, "fuzz-software");
  if (spmvd_cache_open(":memory:", 0, &cache, &e) != 0 || seed() != 0)
    abort();  /* a target that cannot set up would pass everything */
  return 0;
}

/* Applies one "<t>.<col>=<type><value>" line; a malformed one is skipped. */
static void apply(const char *line, size_t n)
{
  const char *dot = memchr(line, '.', n), *eq = memchr(line, '=', n);
  sqlite3_stmt *st;
  char sql[128], buf[64];
  size_t vlen;
  const char *v;

  if (dot != line + 1 || eq == NULL || eq < dot || eq + 1 >= line + n ||
      !known(line[0], dot + 1, (size_t)(eq - dot - 1)))
    return;
  snprintf(sql, sizeof sql, "UPDATE %s SET %.*s = ?", table_of(line[0]),
           (int)(eq - dot - 1), dot + 1);
  if (sqlite3_prepare_v2(cache->db, sql, -1, &st, NULL) != SQLITE_OK)
    return;
  v = eq + 2;
  vlen = (size_t)(line + n - v);
  snprintf(buf, sizeof buf, "%.*s", (int)(vlen < 63 ? vlen : 63), v);
  switch (eq[1]) {
  case 'i':
    sqlite3_bind_int64(st, 1, strtoll(buf, NULL, 0));
    break;
  case 'r':
    sqlite3_bind_double(st, 1, strtod(buf, NULL));
    break;
  case 's':
    sqlite3_bind_text(st, 1, v, (int)vlen, SQLITE_TRANSIENT);
    break;
  case 'x':
    sqlite3_bind_blob(st, 1, v, (int)vlen, SQLITE_TRANSIENT);
    break;
  default:
    sqlite3_bind_null(st, 1);
  }
  sqlite3_step(st);  /* a constraint refusing the edit is fine */
  sqlite3_finalize(st);
}

/* Renders what a reply would carry, as the daemon and spmvctl do. */
static void render(json_t *j)
{
  free(json_dumps(j, JSON_COMPACT));
  json_decref(j);
}

/* Every read of the row that spmvd and spmvctl make. */
static void read_back(void)
{
  struct spmvd_tuning t;
  struct spmvd_predictor pred;
  struct spmv_error e;
  char reason[256];
  json_t *j = NULL;

  spmvd_cache_lookup(cache, FP, dev.device_key, dev.software_key, SPMV_F64,
                     &t, reason, sizeof reason, &e);
  spmvd_cache_lookup(cache, FP, dev.device_key, dev.software_key, SPMV_F32,
                     &t, reason, sizeof reason, &e);
  if (spmvd_cache_list(cache, &j, &e) == 0)
    render(j);
  if (spmvd_cache_show(cache, FP, &j, &e) == 0)
    render(j);
  if (spmvd_cache_export(cache, NULL, &j, &e) == 0)
    render(j);
  if (spmvd_cache_export(cache, FP, &j, &e) == 0)
    render(j);
  if (spmvd_cache_calibration_get(cache, dev.device_key, dev.software_key,
                                  SPMV_F64, &j, &e) == 1)
    render(j);
  spmvd_predict_load(cache, &dev, SPMV_F64, &pred, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *p = (const char *)data, *end = p + size;

  if (cache == NULL)
    LLVMFuzzerInitialize(NULL, NULL);
  if (sqlite3_exec(cache->db, "SAVEPOINT fuzz", NULL, NULL, NULL) != SQLITE_OK)
    abort();
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

    apply(p, n);
    p += n + 1;
  }
  read_back();
  if (sqlite3_exec(cache->db, "ROLLBACK TO fuzz; RELEASE fuzz", NULL, NULL,
                   NULL) != SQLITE_OK)
    abort();
  return 0;
}
