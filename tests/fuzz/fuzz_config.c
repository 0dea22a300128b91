/* fuzz_config.c: the pure parts of the service path's operation list and
 * tuning requests.  The ops list itself (daemon/spmvd_ops_vec.c and its
 * worker side) is checked against a connection's vectors and a worker, so
 * what is fuzzed here is what it and the tune/exclude fields parse without
 * one: a configuration's text (spmv_config_parse, which must read back
 * what spmv_config_format writes) and the predictor's fits as JSON
 * (spmvd_predict_from_json, from a calibration row or an import), whose
 * accepted fits must render and read back too. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "spmv_formats.h"
#include "spmvd_predict.h"

/* A configuration's text: parsed, and a parsed one formatted and parsed
 * again to the same configuration. */
static void config_text(const uint8_t *data, size_t size)
{
  struct spmv_config c, back;
  struct spmv_error e;
  char *text = malloc(size + 1), out[128];

  if (text == NULL)
    return;
  memcpy(text, data, size);
  text[size] = '\0';
  spmv_error_clear(&e);
  if (spmv_config_parse(text, &c, &e) == 0) {
    spmv_config_format(&c, out, sizeof out);
    if (spmv_config_parse(out, &back, &e) != 0 || !spmv_config_equal(&c, &back))
      abort();  /* the text spmvd writes must read back */
  }
  free(text);
}

/* The fits as JSON, read; accepted ones written and read again. */
static void fits_json(const uint8_t *data, size_t size)
{
  struct spmvd_predictor *pred = malloc(sizeof *pred), *back;
  struct spmv_error e;
  json_error_t jerr;
  json_t *doc, *again;

  if (pred == NULL)
    return;
  doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
  if (doc != NULL && spmvd_predict_from_json(doc, pred, &e) == 0) {
    again = spmvd_predict_to_json(pred);
    back = malloc(sizeof *back);
    if (again != NULL && back != NULL &&
        spmvd_predict_from_json(again, back, &e) != 0)
      abort();  /* fits spmvd accepted must survive being stored */
    free(back);
    json_decref(again);
  }
  json_decref(doc);
  free(pred);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  config_text(data, size);
  fits_json(data, size);
  return 0;
}
