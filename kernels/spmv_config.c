/* spmv_config.c: format names and the text form of launch configurations. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_formats.h"

/* Where a key's value lives in struct spmv_config. */
enum field { F_BS, F_TPR, F_PARAM, F_PARAM2 };

/* What a key's value may be. */
enum rule {
  R_BS,     /* 0 (default) or a multiple of 32 up to 1024 */
  R_POW2,   /* 0 (default) or a power of two up to max */
  R_RANGE   /* 0 .. max */
};

/* One "key=value" of a format's text. */
struct key {
  const char *name;
  enum field field;
  enum rule rule;
  int max;
};

/* A format: its name and its keys, in the order they are written. */
struct format_desc {
  const char *name;
  struct key keys[3];
  int nkeys;
};

#define KEY_BS { "bs", F_BS, R_BS, 1024 }

/* Indexed by enum spmv_format. */
static const struct format_desc formats[SPMV_FMT_COUNT] = {
  [SPMV_FMT_CSR_SCALAR] = { "csr-scalar", { KEY_BS }, 1 },
  [SPMV_FMT_CSR_VECTOR] = { "csr-vector",
                            { KEY_BS, { "tpr", F_TPR, R_POW2, 32 } }, 2 },
  [SPMV_FMT_CSR_ADAPTIVE] = { "csr-adaptive",
                              { KEY_BS, { "maxtpr", F_TPR, R_POW2, 1024 },
                                { "base", F_PARAM, R_RANGE, INT_MAX } }, 3 },
  [SPMV_FMT_ELL] = { "ell", { KEY_BS }, 1 },
  [SPMV_FMT_ELLR_T] = { "ellr-t", { KEY_BS, { "t", F_TPR, R_POW2, 32 } }, 2 },
  [SPMV_FMT_COO] = { "coo", { KEY_BS }, 1 },
  [SPMV_FMT_HYB] = { "hyb",
                     { KEY_BS, { "k", F_PARAM, R_RANGE, INT_MAX } }, 2 },
  [SPMV_FMT_DIA] = { "dia", { KEY_BS }, 1 },
  [SPMV_FMT_JAD] = { "jad", { KEY_BS }, 1 },
  [SPMV_FMT_SELL] = { "sell",
                      { KEY_BS, { "c", F_PARAM, R_POW2, 1024 },
                        { "sigma", F_PARAM2, R_RANGE, INT_MAX } }, 3 },
  [SPMV_FMT_CSR_MERGE] = { "csr-merge", { KEY_BS }, 1 },
  [SPMV_FMT_CUSPARSE] = { "cusparse",
                          { { "alg", F_PARAM, R_RANGE, SPMV_CUSPARSE_NALGS } }, 1 },
  [SPMV_FMT_SELL16] = { "sell16",
                        { KEY_BS, { "c", F_PARAM, R_POW2, 1024 },
                          { "sigma", F_PARAM2, R_RANGE, INT_MAX } }, 3 },
  [SPMV_FMT_CSR16] = { "csr16", { KEY_BS, { "tpr", F_TPR, R_POW2, 32 } }, 2 },
  [SPMV_FMT_CSR_STREAM] = { "csr-stream",
                            { KEY_BS, { "k", F_PARAM, R_POW2, SPMV_STREAM_MAX_K } }, 2 },
  [SPMV_FMT_CSR_STREAM16] = { "csr-stream16",
                              { KEY_BS, { "k", F_PARAM, R_POW2, SPMV_STREAM_MAX_K } }, 2 },
  [SPMV_FMT_CSR_PANEL] = { "csr-panel",
                           { KEY_BS, { "tpr", F_TPR, R_POW2, 32 },
                             { "w", F_PARAM, R_POW2, SPMV_PANEL_MAX_WIDTH } }, 3 },
};

/* The layout key of c; see spmv_formats.h. */
struct spmv_config spmv_config_layout_key(const struct spmv_config *c)
{
  struct spmv_config k = *c;

  if (k.format != SPMV_FMT_CSR_STREAM && k.format != SPMV_FMT_CSR_STREAM16)
    k.bs = 256;
  if (k.format == SPMV_FMT_CSR_VECTOR)
    k.format = SPMV_FMT_CSR_SCALAR;
  if (k.format == SPMV_FMT_CSR_SCALAR || k.format == SPMV_FMT_CSR_PANEL)
    k.tpr = 0;
  return k;
}

/* Returns the name of format f ("ellr-t"), or NULL for an unknown format. */
const char *spmv_format_name(enum spmv_format f)
{
  if ((int)f < 0 || f >= SPMV_FMT_COUNT)
    return NULL;
  return formats[f].name;
}

/* Parses a format name; returns 0 or SPMV_EFORMAT. */
int spmv_format_parse(const char *name, enum spmv_format *out)
{
  int f;

  if (name == NULL)
    return SPMV_EFORMAT;
  for (f = 0; f < SPMV_FMT_COUNT; f++) {
    if (strcmp(name, formats[f].name) == 0) {
      if (out != NULL)
        *out = (enum spmv_format)f;
      return 0;
    }
  }
  return SPMV_EFORMAT;
}

/* Returns a pointer to the field of c that a key writes. */
static int *field_of(struct spmv_config *c, enum field f)
{
  switch (f) {
  case F_BS: return &c->bs;
  case F_TPR: return &c->tpr;
  case F_PARAM: return &c->param;
  case F_PARAM2: return &c->param2;
  }
  return NULL;
}

/* Reads a field of c for printing. */
static int field_get(const struct spmv_config *c, enum field f)
{
  switch (f) {
  case F_BS: return c->bs;
  case F_TPR: return c->tpr;
  case F_PARAM: return c->param;
  case F_PARAM2: return c->param2;
  }
  return 0;
}

/* See spmv_formats.h. */
int spmv_config_equal(const struct spmv_config *a, const struct spmv_config *b)
{
  return a->format == b->format && a->bs == b->bs && a->tpr == b->tpr &&
         a->param == b->param && a->param2 == b->param2;
}

/* Writes "ellr-t bs=256 t=4" style text; returns what snprintf returns. */
int spmv_config_format(const struct spmv_config *c, char *buf, size_t n)
{
  const struct format_desc *d;
  size_t used;
  int i, len, total;

  if (c == NULL || (int)c->format < 0 || c->format >= SPMV_FMT_COUNT) {
    if (buf != NULL && n > 0)
      buf[0] = '\0';
    return -1;
  }
  d = &formats[c->format];
  total = snprintf(buf, n, "%s", d->name);
  for (i = 0; i < d->nkeys && total >= 0; i++) {
    used = (size_t)total < n ? (size_t)total : n;
    len = snprintf(buf != NULL ? buf + used : NULL, n - used, " %s=%d",
                   d->keys[i].name, field_get(c, d->keys[i].field));
    total = len < 0 ? len : total + len;
  }
  return total;
}

/* Checks a key's value against its rule; returns 0 or -1. */
static int check_rule(const struct key *k, long v)
{
  if (v < 0 || v > k->max)
    return -1;
  switch (k->rule) {
  case R_BS:
    return v % 32 == 0 ? 0 : -1;
  case R_POW2:
    return (v & (v - 1)) == 0 ? 0 : -1;
  case R_RANGE:
    return 0;
  }
  return -1;
}

/* Explains a key's rule for an error message. */
static const char *rule_text(const struct key *k)
{
  switch (k->rule) {
  case R_BS: return "a multiple of 32 up to";
  case R_POW2: return "a power of two up to";
  case R_RANGE: return "an integer from 0 to";
  }
  return "";
}

/* Parses one "key=value" token of format d into c; returns 0 or EINVAL. */
static int parse_token(const struct format_desc *d, const char *tok,
                       unsigned *seen, struct spmv_config *c,
                       struct spmv_error *err)
{
  const char *eq = strchr(tok, '=');
  const struct key *k = NULL;
  size_t klen;
  char *end;
  long v;
  int i;

  if (eq == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "bad token \"%s\": expected key=value", tok);
  klen = (size_t)(eq - tok);
  for (i = 0; i < d->nkeys; i++) {
    if (strlen(d->keys[i].name) == klen &&
        strncmp(d->keys[i].name, tok, klen) == 0) {
      k = &d->keys[i];
      break;
    }
  }
  if (k == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "bad token \"%s\": %s takes no key \"%.*s\"", tok,
                          d->name, (int)klen, tok);
  if (*seen & (1u << i))
    return spmv_error_set(err, SPMV_EINVAL,
                          "bad token \"%s\": key \"%s\" given twice", tok,
                          k->name);
  errno = 0;
  v = strtol(eq + 1, &end, 10);
  if (eq[1] < '0' || eq[1] > '9' || *end != '\0' || errno != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "bad token \"%s\": value is not a decimal integer",
                          tok);
  if (check_rule(k, v) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "bad token \"%s\": %s must be %s %d", tok, k->name,
                          rule_text(k), k->max);
  *seen |= 1u << i;
  *field_of(c, k->field) = (int)v;
  return 0;
}

/* Parses the text of spmv_config_format() into c; returns 0 or EINVAL. */
int spmv_config_parse(const char *text, struct spmv_config *c,
                      struct spmv_error *err)
{
  struct spmv_config out;
  enum spmv_format f;
  char *copy = NULL, *tok, *save = NULL;
  unsigned seen = 0;
  int rc = 0;

  if (text == NULL || c == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "no configuration text");
  copy = strdup(text);
  if (copy == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  tok = strtok_r(copy, " \t", &save);
  if (tok == NULL) {
    rc = spmv_error_set(err, SPMV_EINVAL, "empty configuration");
    goto out;
  }
  if (spmv_format_parse(tok, &f) != 0) {
    rc = spmv_error_set(err, SPMV_EINVAL, "bad token \"%s\": unknown format",
                        tok);
    goto out;
  }
  memset(&out, 0, sizeof out);
  out.format = f;
  while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
    rc = parse_token(&formats[f], tok, &seen, &out, err);
    if (rc != 0)
      goto out;
  }
  *c = out;
  spmv_error_clear(err);
out:
  free(copy);
  return rc;
}
