/* spmvd_fields.c: the request fields of schema/proto, one table per op, and
 * the one check that every op's request goes through. */
#include "config.h"

#include <string.h>

#include "spmvd_fields.h"

/* A field's JSON type, as the schema's "type" (an enum is a string). */
enum field_type { F_INT, F_NUMBER, F_STRING, F_BOOL, F_ARRAY };

/* One property of a request schema. */
struct field {
  const char *name;
  enum field_type type;
  int required;
};

/* One op's properties; "op" and "id" (required in every schema) are
 * implied. */
struct op_fields {
  const char *op;
  const struct field *fields;  /* ends with a NULL name */
};

static const struct field hello_f[] = {
    {"version", F_INT, 1}, {"client", F_STRING, 0}, {NULL, 0, 0}};
static const struct field load_f[] = {
    {"dtype", F_STRING, 1}, {"rows", F_INT, 1},      {"cols", F_INT, 1},
    {"nnz", F_INT, 1},      {"index", F_STRING, 0},  {"strategy", F_STRING, 0},
    {"name", F_STRING, 0},  {"verify", F_BOOL, 0},   {"memfd", F_BOOL, 0},
    {"split", F_INT, 0},    {NULL, 0, 0}};
static const struct field multiply_f[] = {
    {"handle", F_INT, 1}, {"alpha", F_NUMBER, 1}, {"beta", F_NUMBER, 1},
    {"inplace", F_BOOL, 0}, {NULL, 0, 0}};
static const struct field batch_f[] = {
    {"handle", F_INT, 1},   {"alpha", F_NUMBER, 1}, {"beta", F_NUMBER, 1},
    {"k", F_INT, 1},        {"inplace", F_BOOL, 0}, {NULL, 0, 0}};
static const struct field attach_f[] = {
    {"handle", F_INT, 1}, {"k", F_INT, 0}, {NULL, 0, 0}};
static const struct field handle_f[] = {{"handle", F_INT, 1}, {NULL, 0, 0}};
static const struct field none_f[] = {{NULL, 0, 0}};
static const struct field tune_f[] = {
    {"handle", F_INT, 1}, {"strategy", F_STRING, 0}, {NULL, 0, 0}};
static const struct field bench_f[] = {
    {"handle", F_INT, 1}, {"configs", F_ARRAY, 0}, {"rounds", F_INT, 0},
    {NULL, 0, 0}};
static const struct field calibrate_f[] = {
    {"dtype", F_STRING, 0}, {"max_seconds", F_NUMBER, 0},
    {"points", F_BOOL, 0},  {NULL, 0, 0}};
static const struct field forget_f[] = {
    {"fingerprint", F_STRING, 1}, {NULL, 0, 0}};
static const struct field import_f[] = {
    {"tunings", F_ARRAY, 1}, {"splits", F_ARRAY, 0}, {NULL, 0, 0}};
static const struct field export_f[] = {
    {"fingerprint", F_STRING, 0}, {NULL, 0, 0}};
static const struct field cancel_f[] = {
    {"target", F_INT, 1}, {NULL, 0, 0}};

/* vector-create, vector-free, ops and solve check their own fields. */
static const struct op_fields tables[] = {
    {"hello", hello_f},       {"load", load_f},
    {"multiply", multiply_f}, {"multiply-batch", batch_f},
    {"attach-vectors", attach_f}, {"info", handle_f},
    {"list", none_f},         {"free", handle_f},
    {"tune", tune_f},         {"bench", bench_f},
    {"calibrate", calibrate_f}, {"status", none_f},
    {"forget", forget_f},     {"import", import_f},
    {"cancel", cancel_f},     {"export", export_f},
    {"shutdown", none_f},
    {NULL, NULL}};

/* The words of the messages: "not a boolean". */
static const char *type_words(enum field_type t)
{
  static const char *const words[] = {"an integer", "a number", "a string",
                                      "a boolean", "an array"};
  return words[t];
}

static int type_ok(enum field_type t, const json_t *v)
{
  switch (t) {
  case F_INT: return json_is_integer(v);
  case F_NUMBER: return json_is_number(v);
  case F_STRING: return json_is_string(v);
  case F_BOOL: return json_is_boolean(v);
  case F_ARRAY: return json_is_array(v);
  }
  return 0;
}

static const struct field *find_field(const struct field *f, const char *name)
{
  for (; f->name; f++)
    if (strcmp(f->name, name) == 0)
      return f;
  return NULL;
}

static const struct op_fields *find_op(const char *op)
{
  for (const struct op_fields *t = tables; t->op; t++)
    if (strcmp(t->op, op) == 0)
      return t;
  return NULL;
}

/* Every field present is known and of its type ("op" and "id" are the
 * frame layer's to check). */
static int check_present(const struct op_fields *t, json_t *req,
                         struct spmv_error *err)
{
  const char *k;
  json_t *v;

  json_object_foreach(req, k, v) {
    if (strcmp(k, "op") == 0 || strcmp(k, "id") == 0)
      continue;
    const struct field *f = find_field(t->fields, k);
    if (!f)
      return spmv_error_set(err, SPMV_EPROTO, "%s: unknown field \"%s\"",
                            t->op, k);
    if (!type_ok(f->type, v))
      return spmv_error_set(err, SPMV_EPROTO, "field \"%s\" is not %s", k,
                            type_words(f->type));
  }
  return 0;
}

int spmvd_fields_check(const char *op, json_t *req, struct spmv_error *err)
{
  const struct op_fields *t = find_op(op);
  int rc;

  if (!t)
    return 0;
  if ((rc = check_present(t, req, err)) < 0)
    return rc;
  for (const struct field *f = t->fields; f->name; f++)
    if (f->required && !json_object_get(req, f->name))
      return spmv_error_set(err, SPMV_EPROTO, "field \"%s\" is missing",
                            f->name);
  return 0;
}
