/* spmvd_fields.h: every request's fields checked against its schema
 * (schema/proto/<op>.json): known names, JSON types, required ones. */
#ifndef SPMVD_FIELDS_H
#define SPMVD_FIELDS_H

#include <jansson.h>

#include "spmv_error.h"

/*
 * Checks req (borrowed), a request of op: a field the schema does not name
 * is EPROTO "unknown field \"x\"", one of the wrong JSON type EPROTO
 * "field \"x\" is not a boolean", a required one absent EPROTO "field \"x\"
 * is missing".  Values (ranges, enums) are the op's own to check.  An op
 * without a table here (those that check their own fields) passes.
 * Returns 0 or SPMV_EPROTO with the message in err.
 */
int spmvd_fields_check(const char *op, json_t *req, struct spmv_error *err);

#endif /* SPMVD_FIELDS_H */
