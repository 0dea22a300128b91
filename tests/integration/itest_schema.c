/* itest_schema.c: checks replies against schema/proto (a JSON Schema subset). */
#include "config.h"

#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "spmv_formats.h"

/*
 * The subset of JSON Schema that schema/proto uses: $ref (within
 * common.json or the same file), type, const, enum, minimum, maximum,
 * minLength, pattern, required, properties, additionalProperties, items,
 * minItems, maxItems, oneOf and anyOf.  Anything else is ignored.
 */

static json_t *common_schema;

static json_t *load_schema(const char *file)
{
  const char *top = getenv("SPMV_TOP_SRCDIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/schema/proto/%s", top ? top : "..", file);
  return json_load_file(path, 0, NULL);
}

static const json_t *resolve(const json_t *doc, const char *ref)
{
  const char *hash = strchr(ref, '#');
  const json_t *root = doc;
  char key[128];

  if (hash != ref) {
    if (!common_schema)
      common_schema = load_schema("common.json");
    root = common_schema;
  }
  if (!hash || strncmp(hash, "#/$defs/", 8) != 0 || !root)
    return NULL;
  snprintf(key, sizeof key, "%s", hash + 8);
  return json_object_get(json_object_get(root, "$defs"), key);
}

static int type_ok(const char *t, const json_t *v)
{
  if (!strcmp(t, "object")) return json_is_object(v);
  if (!strcmp(t, "array")) return json_is_array(v);
  if (!strcmp(t, "string")) return json_is_string(v);
  if (!strcmp(t, "integer")) return json_is_integer(v);
  if (!strcmp(t, "number")) return json_is_number(v);
  if (!strcmp(t, "boolean")) return json_is_boolean(v);
  if (!strcmp(t, "null")) return json_is_null(v);
  return 1;
}

static int check(const json_t *doc, const json_t *s, const json_t *v,
                 const char *where, char *why, size_t n);

static int check_props(const json_t *doc, const json_t *s, const json_t *v,
                       const char *where, char *why, size_t n)
{
  const json_t *props = json_object_get(s, "properties");
  const json_t *extra = json_object_get(s, "additionalProperties");
  const json_t *req = json_object_get(s, "required");
  const char *key;
  json_t *val;
  size_t i;
  char sub[512];

  json_array_foreach(req, i, val) {
    if (!json_object_get(v, json_string_value(val))) {
      snprintf(why, n, "%s: missing \"%s\"", where, json_string_value(val));
      return 0;
    }
  }
  json_object_foreach((json_t *)v, key, val) {
    const json_t *ps = json_object_get(props, key);
    snprintf(sub, sizeof sub, "%s.%s", where, key);
    if (ps) {
      if (!check(doc, ps, val, sub, why, n))
        return 0;
    } else if (json_is_false(extra)) {
      snprintf(why, n, "%.200s: not allowed here", sub);
      return 0;
    } else if (json_is_object(extra) && !check(doc, extra, val, sub, why, n)) {
      return 0;
    }
  }
  return 1;
}

static int check(const json_t *doc, const json_t *s, const json_t *v,
                 const char *where, char *why, size_t n)
{
  const json_t *t, *x;
  size_t i;
  char sub[512];

  if ((t = json_object_get(s, "$ref"))) {
    const char *ref = json_string_value(t);
    const json_t *target = resolve(doc, ref);
    if (!target) {
      snprintf(why, n, "%s: cannot resolve %s", where, ref);
      return 0;
    }
    return check(strchr(ref, '#') == ref ? doc : common_schema, target, v,
                 where, why, n);
  }
  if ((t = json_object_get(s, "type"))) {
    int ok = 0;
    if (json_is_string(t))
      ok = type_ok(json_string_value(t), v);
    json_array_foreach(t, i, x) ok |= type_ok(json_string_value(x), v);
    if (!ok) {
      snprintf(why, n, "%s: wrong type", where);
      return 0;
    }
  }
  if ((t = json_object_get(s, "const")) && !json_equal(t, (json_t *)v)) {
    snprintf(why, n, "%s: not the constant", where);
    return 0;
  }
  if ((t = json_object_get(s, "enum"))) {
    int ok = 0;
    json_array_foreach(t, i, x) ok |= json_equal(x, (json_t *)v);
    if (!ok) {
      snprintf(why, n, "%s: not one of the enum", where);
      return 0;
    }
  }
  if (json_is_number(v)) {
    if ((t = json_object_get(s, "minimum")) && json_number_value(v) < json_number_value(t)) {
      snprintf(why, n, "%s: below its minimum", where);
      return 0;
    }
    if ((t = json_object_get(s, "maximum")) && json_number_value(v) > json_number_value(t)) {
      snprintf(why, n, "%s: above its maximum", where);
      return 0;
    }
  }
  if (json_is_string(v)) {
    if ((t = json_object_get(s, "minLength")) &&
        (json_int_t)strlen(json_string_value(v)) < json_integer_value(t)) {
      snprintf(why, n, "%s: too short", where);
      return 0;
    }
    if ((t = json_object_get(s, "pattern"))) {
      regex_t re;
      if (regcomp(&re, json_string_value(t), REG_EXTENDED | REG_NOSUB) == 0) {
        int m = regexec(&re, json_string_value(v), 0, NULL, 0);
        regfree(&re);
        if (m != 0) {
          snprintf(why, n, "%s: '%s' does not match %s", where,
                   json_string_value(v), json_string_value(t));
          return 0;
        }
      }
    }
  }
  if (json_is_object(v) && !check_props(doc, s, v, where, why, n))
    return 0;
  if (json_is_array(v) && (t = json_object_get(s, "minItems")) &&
      (json_int_t)json_array_size(v) < json_integer_value(t)) {
    snprintf(why, n, "%s: too few items", where);
    return 0;
  }
  if (json_is_array(v) && (t = json_object_get(s, "maxItems")) &&
      (json_int_t)json_array_size(v) > json_integer_value(t)) {
    snprintf(why, n, "%s: too many items", where);
    return 0;
  }
  if (json_is_array(v) && (t = json_object_get(s, "items"))) {
    json_array_foreach((json_t *)v, i, x) {
      snprintf(sub, sizeof sub, "%s[%zu]", where, i);
      if (!check(doc, t, x, sub, why, n))
        return 0;
    }
  }
  const char *alts[] = {"oneOf", "anyOf"};
  for (int a = 0; a < 2; a++) {
    if (!(t = json_object_get(s, alts[a])))
      continue;
    int ok = 0;
    char tmp[256];
    json_array_foreach(t, i, x) ok |= check(doc, x, v, where, tmp, sizeof tmp);
    if (!ok) {
      snprintf(why, n, "%s: matches none of %s (%s)", where, alts[a], tmp);
      return 0;
    }
  }
  return 1;
}

void itest_schema_formats_check(void)
{
  if (!common_schema)
    common_schema = load_schema("common.json");
  const json_t *e = json_object_get(
      json_object_get(json_object_get(resolve(common_schema, "#/$defs/config"),
                                      "properties"), "format"), "enum");
  ck_assert_msg(json_is_array(e), "common.json has no format enum");
  ck_assert_int_eq((int)json_array_size(e), SPMV_FMT_COUNT);
  for (int f = 0; f < SPMV_FMT_COUNT; f++)
    ck_assert_str_eq(json_string_value(json_array_get(e, (size_t)f)),
                     spmv_format_name((enum spmv_format)f));
}

/* Checks a frame the daemon sent in answer to op against schema/proto. */
void itest_schema_check(const char *op, const json_t *msg)
{
  char file[64], why[512] = "";
  json_t *doc;
  const json_t *s;

  if (!op || !*op)
    return;
  snprintf(file, sizeof file, "%s.json", op);
  doc = load_schema(file);
  if (!doc)
    return;  /* an op without a schema (e.g. a deliberately unknown one) */
  if (!common_schema)
    common_schema = load_schema("common.json");
  const json_t *base = common_schema;
  const char *kind;
  if (json_object_get(msg, "event")) {
    /* The op's own events (calibrate's points), else progress. */
    s = json_object_get(doc, "events");
    if (s)
      base = doc;
    else
      s = resolve(doc, "common.json#/$defs/progress_event");
    kind = "event";
  } else if (!json_is_true(json_object_get(msg, "ok"))) {
    s = resolve(doc, "common.json#/$defs/error_reply");
    kind = "error";
  } else {
    s = json_object_get(doc, "reply");
    base = doc;
    kind = "reply";
  }
  if (s && !check(base, s, msg, op, why, sizeof why)) {
    char *text = json_dumps(msg, JSON_COMPACT);
    ck_abort_msg("reply to '%s' breaks schema/proto/%s: %s\n%.400s", op, file,
                 why, text ? text : "");
  }
  if (s)
    itest_ops_note(kind, op);
  json_decref(doc);
}
