/* spmv_gen_text.c: generators named by a line of text ("rmat scale=20"). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_gen_impl.h"

/* Most key=value tokens in one description. */
#define MAX_KEYS 8
/* Most lengths in dc1like's long=... list. */
#define MAX_LONG 64

/* The key=value tokens of a description, each marked when read. */
struct args {
  const char *name;          /* the generator */
  int n;
  char *key[MAX_KEYS];
  char *val[MAX_KEYS];
  int used[MAX_KEYS];
  struct spmv_error *err;
  int dry;                   /* read the keys only */
  int rc;                    /* first error, or 0 */
};

/* Finds key; returns its value (marking it used) or NULL. */
static const char *arg_find(struct args *a, const char *key)
{
  int i;

  for (i = 0; i < a->n; i++) {
    if (strcmp(a->key[i], key) == 0) {
      a->used[i] = 1;
      return a->val[i];
    }
  }
  return NULL;
}

/* Records the first error of a description. */
static void arg_fail(struct args *a, const char *key, const char *val,
                     const char *why)
{
  if (a->rc == 0)
    a->rc = spmv_error_set(a->err, SPMV_EINVAL, "bad token \"%s=%s\": %s",
                           key, val, why);
}

/* Reads an integer key; def < 0 makes it required. */
static int64_t arg_int(struct args *a, const char *key, int64_t def)
{
  const char *v = arg_find(a, key);
  char *end;
  long long x;

  if (v == NULL) {
    if (def < 0 && a->rc == 0)
      a->rc = spmv_error_set(a->err, SPMV_EINVAL, "%s needs %s=", a->name,
                             key);
    return def;
  }
  errno = 0;
  x = strtoll(v, &end, 10);
  if (*v == '\0' || *end != '\0' || errno != 0 || x < 0) {
    arg_fail(a, key, v, "not a non-negative integer");
    return 0;
  }
  return x;
}

/* Reads a real key; def < 0 (or NaN) makes it required. */
static double arg_real(struct args *a, const char *key, double def)
{
  const char *v = arg_find(a, key);
  char *end;
  double x;

  if (v == NULL) {
    if (!(def >= 0.0) && a->rc == 0)
      a->rc = spmv_error_set(a->err, SPMV_EINVAL, "%s needs %s=", a->name,
                             key);
    return def;
  }
  errno = 0;
  x = strtod(v, &end);
  if (*v == '\0' || *end != '\0' || errno != 0 || !isfinite(x)) {
    arg_fail(a, key, v, "not a number");
    return 0.0;
  }
  return x;
}

/* Reads a key whose value is one of words[0 .. n); returns its index. */
static int arg_word(struct args *a, const char *key, const char *const *words,
                    int n, int def)
{
  const char *v = arg_find(a, key);
  int i;

  if (v == NULL)
    return def;
  for (i = 0; i < n; i++)
    if (strcmp(v, words[i]) == 0)
      return i;
  arg_fail(a, key, v, "unknown value");
  return def;
}

/* Reads dc1like's comma-separated long row lengths into len; returns count. */
static int64_t arg_list(struct args *a, const char *key, int64_t *len)
{
  const char *v = arg_find(a, key), *p;
  char *end;
  int64_t n = 0;

  if (v == NULL) {
    len[0] = 47193;
    len[1] = 114190;
    return SPMV_GEN_DC1_NLONG;
  }
  if (*v == '\0')
    return 0;
  for (p = v;; p = end + 1) {
    errno = 0;
    if (n == MAX_LONG || *p < '0' || *p > '9') {
      arg_fail(a, key, v, "not a list of at most 64 lengths");
      return 0;
    }
    len[n++] = strtoll(p, &end, 10);
    if (errno != 0 || (*end != ',' && *end != '\0')) {
      arg_fail(a, key, v, "not a list of at most 64 lengths");
      return 0;
    }
    if (*end == '\0')
      return n;
  }
}

/* Narrows a key's value to int, saturating so that messages stay true. */
static int to_int(int64_t v)
{
  return v < INT_MAX ? (int)v : INT_MAX;
}

/* Splits text into the generator's name and its key=value tokens. */
static int split(char *text, struct args *a)
{
  char *tok, *save = NULL, *eq;

  a->name = strtok_r(text, " \t", &save);
  if (a->name == NULL)
    return spmv_error_set(a->err, SPMV_EINVAL, "empty generator description");
  while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
    eq = strchr(tok, '=');
    if (eq == NULL || eq == tok)
      return spmv_error_set(a->err, SPMV_EINVAL, "bad token \"%s\": expected "
                            "key=value", tok);
    if (a->n == MAX_KEYS)
      return spmv_error_set(a->err, SPMV_EINVAL, "bad token \"%s\": too many "
                            "keys", tok);
    *eq = '\0';
    a->key[a->n] = tok;
    a->val[a->n] = eq + 1;
    a->used[a->n] = 0;
    a->n++;
  }
  return 0;
}

/* The words of dist= and place=, in enum order. */
static const char *const dists[] = { "normal", "uniform", "lognormal" };
static const char *const places[] = { "random", "diagonal" };

/* The word of a row-length distribution ("?" for none). */
const char *spmv_gen_dist_name(enum spmv_gen_dist d)
{
  return (unsigned)d < sizeof dists / sizeof dists[0] ? dists[d] : "?";
}

/* The word of a column placement ("?" for none). */
const char *spmv_gen_place_name(enum spmv_gen_place p)
{
  return (unsigned)p < sizeof places / sizeof places[0] ? places[p] : "?";
}

/*
 * Reads the keys of one generator and, unless a->dry, calls it.  A dry run
 * only marks the keys, so that a stray key is refused before any work.
 */
static struct spmv_csr *dispatch(struct args *a, uint64_t seed)
{
  struct spmv_gen_spec spec;
  int64_t len[MAX_LONG], nlong, r, c, z, k;
  double x, y;
  const char *g = a->name;

  if (strcmp(g, "stencil2d") == 0) {
    r = arg_int(a, "nx", -1);
    c = arg_int(a, "ny", -1);
    k = arg_int(a, "points", 5);
    return a->rc || a->dry ? NULL
                           : spmv_gen_stencil2d(r, c, to_int(k), a->err);
  }
  if (strcmp(g, "stencil3d") == 0) {
    r = arg_int(a, "nx", -1);
    c = arg_int(a, "ny", -1);
    z = arg_int(a, "nz", -1);
    k = arg_int(a, "points", 7);
    return a->rc || a->dry ? NULL
                           : spmv_gen_stencil3d(r, c, z, to_int(k), a->err);
  }
  if (strcmp(g, "banded") == 0) {
    r = arg_int(a, "n", -1);
    k = arg_int(a, "w", -1);
    c = arg_int(a, "b", -1);
    return a->rc || a->dry ? NULL : spmv_gen_banded(r, k, c, seed, a->err);
  }
  if (strcmp(g, "random") == 0 || strcmp(g, "dense") == 0) {
    r = arg_int(a, "rows", -1);
    c = arg_int(a, "cols", r);
    k = arg_int(a, "k", -1);
    if (a->rc || a->dry)
      return NULL;
    return g[0] == 'r' ? spmv_gen_random(r, c, k, seed, a->err)
                       : spmv_gen_dense(r, c, k, seed, a->err);
  }
  if (strcmp(g, "rmat") == 0) {
    r = arg_int(a, "scale", -1);
    k = arg_int(a, "ef", 16);
    c = arg_int(a, "sym", 0);
    if (a->rc || a->dry)
      return NULL;
    return spmv_gen_rmat(to_int(r), k, SPMV_GEN_RMAT_A,
                         SPMV_GEN_RMAT_B, SPMV_GEN_RMAT_C, c != 0, seed,
                         a->err);
  }
  if (strcmp(g, "pareto") == 0) {
    r = arg_int(a, "rows", -1);
    c = arg_int(a, "cols", r);
    x = arg_real(a, "xmin", 1.0);
    y = arg_real(a, "alpha", -1.0);
    return a->rc || a->dry ? NULL : spmv_gen_pareto(r, c, x, y, seed, a->err);
  }
  if (strcmp(g, "dc1like") == 0) {
    r = arg_int(a, "n", SPMV_GEN_DC1_ROWS);
    x = arg_real(a, "lambda", SPMV_GEN_DC1_LAMBDA);
    nlong = arg_list(a, "long", len);
    return a->rc || a->dry ? NULL
                           : spmv_gen_dc1like(r, x, nlong, len, seed, a->err);
  }
  if (strcmp(g, "matching") == 0) {
    spec.rows = arg_int(a, "rows", -1);
    spec.cols = arg_int(a, "cols", 0);
    spec.mean = arg_real(a, "mean", -1.0);
    spec.cv = arg_real(a, "cv", 0.0);
    spec.dist = (enum spmv_gen_dist)arg_word(a, "dist", dists, 3, 0);
    spec.place = (enum spmv_gen_place)arg_word(a, "place", places, 2, 0);
    return a->rc || a->dry ? NULL : spmv_gen_matching(&spec, seed, a->err);
  }
  a->rc = spmv_error_set(a->err, SPMV_EINVAL, "bad token \"%s\": unknown "
                         "generator", g);
  return NULL;
}

/* Refuses a key given twice or one the generator does not take. */
static int check_keys(struct args *a)
{
  int i, j;

  for (i = 0; i < a->n; i++) {
    for (j = 0; j < i; j++)
      if (strcmp(a->key[i], a->key[j]) == 0)
        return spmv_error_set(a->err, SPMV_EINVAL, "bad token \"%s=%s\": "
                              "key given twice", a->key[i], a->val[i]);
    if (!a->used[i])
      return spmv_error_set(a->err, SPMV_EINVAL, "bad token \"%s=%s\": %s "
                            "takes no key \"%s\"", a->key[i], a->val[i],
                            a->name, a->key[i]);
  }
  return 0;
}

/* Builds the matrix a description names; new CSR or NULL with err set. */
struct spmv_csr *spmv_gen_from_text(const char *text, uint64_t seed,
                                    struct spmv_error *err)
{
  struct args a;
  struct spmv_csr *A = NULL;
  char *copy;

  memset(&a, 0, sizeof a);
  a.err = err;
  if (text == NULL || (copy = strdup(text)) == NULL) {
    spmv_error_set(err, text == NULL ? SPMV_EINVAL : SPMV_ENOMEM,
                   "no generator description");
    return NULL;
  }
  if (split(copy, &a) != 0)
    goto out;
  a.dry = 1;
  dispatch(&a, seed);
  if (a.rc != 0 || check_keys(&a) != 0)
    goto out;
  a.dry = 0;
  A = dispatch(&a, seed);
out:
  free(copy);
  return A;
}
