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
