/* spmvd_cache_split.c: the cache's split matrices, each block's pick on a
 * device set (spmvd_cache.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spmvd_cache.h"
#include "spmvd_cache_impl.h"

/* Binds the key of a split row to statement s's parameters 1 to 5. */
static int bind_split(struct spmvd_cache *c, enum stmt s, const char *fp,
                      const char *device_set, const char *software_key,
                      enum spmv_dtype dtype, int blocks, struct spmv_error *err)
{
  const char *dt = spmv_dtype_name(dtype);
  int ret = spmvd_cache_check_fingerprint(fp, err);

  if (ret != 0)
    return ret;
  if (dt == NULL || blocks < 2)
    return spmv_error_set(err, SPMV_EINVAL, "cache: bad value type or "
                          "number of blocks (%d) of a split", blocks);
  bind_text(c, s, 1, fp);
  bind_text(c, s, 2, device_set);
  bind_text(c, s, 3, software_key);
  bind_text(c, s, 4, dt);
  sqlite3_bind_int(c->st[s], 5, blocks);
  return 0;
}

int spmvd_cache_split_get(struct spmvd_cache *c, const char *fingerprint,
                          const char *device_set, const char *software_key,
                          enum spmv_dtype dtype, int blocks, char **configs,
                          struct spmv_error *err)
{
  sqlite3_stmt *st = c->st[ST_SPLIT_GET];
  int ret, rc;

  *configs = NULL;
  if ((ret = bind_split(c, ST_SPLIT_GET, fingerprint, device_set, software_key,
                        dtype, blocks, err)) != 0)
    return ret;
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && (*configs = strdup(col_text(st, 0))) == NULL)
    ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    ret = spmvd_cache_db_err(c, err, "looking up a split");
  done(c, ST_SPLIT_GET);
  return ret < 0 ? ret : *configs != NULL;
}

int spmvd_cache_split_put(struct spmvd_cache *c, const char *fingerprint,
                          const char *device_set, const char *software_key,
                          enum spmv_dtype dtype, int blocks, const char *configs,
                          struct spmv_error *err)
{
  int ret = spmvd_cache_check_writable(c, err, "store a split");

  if (ret == 0)
    ret = bind_split(c, ST_SPLIT_PUT, fingerprint, device_set, software_key,
                     dtype, blocks, err);
  if (ret != 0)
    return ret;
  bind_text(c, ST_SPLIT_PUT, 6, configs);
  sqlite3_bind_int64(c->st[ST_SPLIT_PUT], 7, (sqlite3_int64)time(NULL));
  return spmvd_cache_step_done(c, ST_SPLIT_PUT, err);
}

/* The split row at st as an export entry (NULL when out of memory). */
static json_t *split_json(sqlite3_stmt *st)
{
  json_error_t je;
  json_t *configs = json_loads(col_text(st, 5), 0, &je);

  /* A row whose configs are not an array is none: an export carries
   * picks to another cache. */
  if (!json_is_array(configs)) {
    json_decref(configs);
    return json_null();
  }
  return json_pack("{ss ss ss ss si so sI}", "fingerprint", col_text(st, 0),
                   "device_set", col_text(st, 1), "software_key",
                   col_text(st, 2), "dtype", col_text(st, 3), "blocks",
                   sqlite3_column_int(st, 4), "configs", configs, "created",
                   (json_int_t)sqlite3_column_int64(st, 6));
}

int spmvd_cache_split_export(struct spmvd_cache *c, const char *fingerprint,
                             json_t *arr, struct spmv_error *err)
{
  enum stmt s = fingerprint ? ST_SPLIT_EXPORT : ST_SPLIT_EXPORT_ALL;
  sqlite3_stmt *st = c->st[s];
  int rc, ret = 0;

  if (fingerprint)
    bind_text(c, s, 1, fingerprint);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = split_json(st);
    if (o == NULL || (!json_is_null(o) && json_array_append(arr, o) != 0)) {
      json_decref(o);
      ret = spmv_error_set(err, SPMV_ENOMEM, "out of memory exporting");
      break;
    }
    json_decref(o);
  }
  if (ret == 0 && rc != SQLITE_DONE)
    ret = spmvd_cache_db_err(c, err, "exporting splits");
  done(c, s);
  return ret;
}

/* Whether every block's device key in device_set (joined by " | ") is
 * device_key. */
static int set_of(const char *device_set, const char *device_key)
{
  size_t n = strlen(device_key);
  const char *p = device_set;

  for (;;) {
    if (strncmp(p, device_key, n) != 0)
      return 0;
    p += n;
    if (*p == '\0')
      return 1;
    if (strncmp(p, " | ", 3) != 0)
      return 0;
    p += 3;
  }
}

/* Checks split k of an import; its fields into the out pointers. */
static int check_split(json_t *o, size_t k, const char **fp, const char **set,
                       const char **sk, enum spmv_dtype *dt, int *blocks,
                       json_t **configs, struct spmv_error *err)
{
  json_t *b = json_object_get(o, "blocks");
  const char *d;

  *fp = json_string_value(json_object_get(o, "fingerprint"));
  *set = json_string_value(json_object_get(o, "device_set"));
  *sk = json_string_value(json_object_get(o, "software_key"));
  d = json_string_value(json_object_get(o, "dtype"));
  *configs = json_object_get(o, "configs");
  if (!json_is_object(o) || !*fp || !*set || !*sk || !d)
    return spmv_error_set(err, SPMV_EINVAL, "import: split %zu needs "
                          "fingerprint, device_set, software_key and dtype "
                          "strings", k);
  if (spmvd_cache_check_fingerprint(*fp, NULL) != 0)
    return spmv_error_set(err, SPMV_EINVAL, "import: split %zu: bad "
                          "\"fingerprint\"", k);
  if (spmv_dtype_parse(d, dt) != 0)
    return spmv_error_set(err, SPMV_EINVAL, "import: split %zu: bad "
                          "\"dtype\" \"%s\"", k, d);
  if (!json_is_integer(b) || json_integer_value(b) < 2 ||
      json_integer_value(b) > 1024 || !json_is_array(*configs) ||
      json_array_size(*configs) != (size_t)json_integer_value(b))
    return spmv_error_set(err, SPMV_EINVAL, "import: split %zu: \"blocks\" "
                          "(2 or more) and the \"configs\" array must agree",
                          k);
  *blocks = (int)json_integer_value(b);
  for (int i = 0; i < *blocks; i++) {
    struct spmv_config cfg;
    const char *t = json_string_value(json_array_get(*configs, (size_t)i));
    if (!t || spmv_config_parse(t, &cfg, NULL) != 0)
      return spmv_error_set(err, SPMV_EINVAL, "import: split %zu: configs[%d] "
                            "is not a configuration", k, i);
  }
  return 0;
}

int spmvd_cache_split_import_check(json_t *splits, struct spmv_error *err)
{
  const char *fp, *set, *sk;
  enum spmv_dtype dt;
  json_t *configs;
  int blocks, ret;

  if (splits == NULL)
    return 0;
  if (!json_is_array(splits))
    return spmv_error_set(err, SPMV_EINVAL, "import: \"splits\" is not an "
                          "array");
  for (size_t k = 0; k < json_array_size(splits); k++)
    if ((ret = check_split(json_array_get(splits, k), k, &fp, &set, &sk, &dt,
                           &blocks, &configs, err)) != 0)
      return ret;
  return 0;
}

int spmvd_cache_split_import(struct spmvd_cache *c, json_t *splits,
                             const char *device_key, const char *software_key,
                             int *imported, int *skipped,
                             struct spmv_error *err)
{
  const char *fp, *set, *sk;
  enum spmv_dtype dt;
  json_t *configs;
  int blocks, ret = 0;

  for (size_t k = 0; ret == 0 && k < json_array_size(splits); k++) {
    if ((ret = check_split(json_array_get(splits, k), k, &fp, &set, &sk, &dt,
                           &blocks, &configs, err)) != 0)
      break;
    if ((device_key && !set_of(set, device_key)) ||
        (software_key && strcmp(sk, software_key) != 0) ||
        (ret = spmvd_cache_matrix_has(c, fp, err)) == 0) {
      /* Another device's, or of a matrix whose tunings were not taken. */
      (*skipped)++;
      continue;
    }
    if (ret < 0)
      break;
    char *text = json_dumps(configs, JSON_COMPACT);
    ret = text ? spmvd_cache_split_put(c, fp, set, sk, dt, blocks, text, err)
               : spmv_error_set(err, SPMV_ENOMEM, "out of memory importing");
    free(text);
    if (ret == 0)
      (*imported)++;
  }
  return ret;
}
