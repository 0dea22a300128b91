/* fuzz_import.c: an exported tuning file (spmvctl cache export's output)
 * as spmvd's import op takes it, into an in-memory cache: parsed, checked
 * entry by entry and stored; what was stored must export and import again,
 * and every input starts from an empty cache. */
#include "config.h"

#include <stdlib.h>

#include "fuzz_common.h"
#include "spmvd_cache.h"

static struct spmvd_cache *cache;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  struct spmv_error e;

  if (spmvd_cache_open(":memory:", 0, &cache, &e) != 0)
    abort();  /* a target that cannot set up would pass everything */
  return 0;
}

/* Exports what is stored and imports it back: an export spmvd wrote must
 * be one it accepts. */
static void round_trip(void)
{
  struct spmv_error e;
  json_t *doc = NULL;
  char *text;
  int in, skip;

  if (spmvd_cache_export(cache, NULL, &doc, &e) != 0)
    return;
  text = json_dumps(doc, JSON_COMPACT);
  free(text);
  if (spmvd_cache_import(cache, doc, NULL, NULL, &in, &skip, &e) != 0)
    abort();  /* our own export refused: a real bug, not bad input */
  json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spmv_error e;
  json_error_t jerr;
  json_t *doc, *j;
  int in = 0, skip = 0;

  if (cache == NULL)
    LLVMFuzzerInitialize(NULL, NULL);
  doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
  if (doc == NULL)
    return 0;
  /* Once with keys that most entries will not match, once accepting any. */
  spmvd_cache_import(cache, doc, "fuzz-device", "fuzz-software", &in, &skip,
                     &e);
  if (spmvd_cache_import(cache, doc, NULL, NULL, &in, &skip, &e) == 0 &&
      in > 0) {
    if (spmvd_cache_list(cache, &j, &e) == 0)
      json_decref(j);
    round_trip();
  }
  json_decref(doc);
  spmvd_cache_forget(cache, "all", NULL, &e);
  return 0;
}
