/* spmvd_predict_json.c: the fits as JSON, as the cache stores them and
 * the worker receives them; fits of another basis refused. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "spmvd_cache.h"
#include "spmvd_predict.h"

/* Whether tree node i is reached: the root, or a child of a split. */
static int node_used(const struct spmvd_tree *t, int i)
{
  return i == 0 || (t->split[(i - 1) / 2] != SPMVD_SPLIT_NONE &&
                    node_used(t, (i - 1) / 2));
}

/* A work tree node as JSON: null where unused, a leaf's coefficients, or
 * {"split": NAME, "at": THRESHOLD}. */
static json_t *work_node_json(const struct spmvd_tree *t, int i)
{
  json_t *a;
  int j;

  if (!node_used(t, i))
    return json_null();
  if (t->split[i] != SPMVD_SPLIT_NONE)
    return json_pack("{sssf}", "split",
                     spmvd_split_name((enum spmvd_split)t->split[i]), "at",
                     t->thr[i]);
  a = json_array();
  for (j = 0; a != NULL && j < SPMVD_WORK_TERMS; j++)
    if (json_array_append_new(a, json_real(t->wc[i][j])) != 0) {
      json_decref(a);
      a = NULL;
    }
  return a;
}

/* Returns a new reference to tree t as an array of its nodes. */
static json_t *tree_json(const struct spmvd_tree *t)
{
  json_t *w = json_array();
  int j;

  for (j = 0; w != NULL && j < SPMVD_TREE_NODES; j++)
    if (json_array_append_new(w, work_node_json(t, j)) != 0) {
      json_decref(w);
      w = NULL;
    }
  return w;
}

/* Returns a new reference to one fit as JSON: its paper form and basis,
 * then its work model (tree, bootstrap trees and the device's figures it
 * was fitted with) when it has one. */
static json_t *fit_json(const struct spmvd_fit *f)
{
  json_t *o, *w, *bag;
  char text[64];
  int j;

  spmv_config_format(&f->cfg, text, sizeof text);
  if (f->kind == SPMVD_FIT_VECTOR)
    o = json_pack("{sssssIsfsfsfsfsfsfsfsisfsi}", "kind", "vector", "config",
                  text, "strip", (json_int_t)f->strip, "m", f->m, "c", f->c,
                  "p", f->p, "q", f->q, "t0", f->t0, "i_cal", f->i_cal,
                  "p_cal", f->p_cal, "npoints", f->npoints, "err_mean",
                  f->err_mean, "basis", SPMVD_WORK_BASIS);
  else
    o = json_pack("{sssssIsfsfsfsfsisfsi}", "kind", "saddle", "config", text,
                  "strip", (json_int_t)f->strip, "a", f->a, "b", f->b, "c",
                  f->gc, "d", f->gd, "npoints", f->npoints, "err_mean",
                  f->err_mean, "basis", SPMVD_WORK_BASIS);
  if (o == NULL || f->work_npoints <= 0)
    return o;
  w = tree_json(&f->tree);
  if (w == NULL || json_object_set_new(o, "work", w) != 0 ||
      json_object_set_new(o, "work_npoints",
                          json_integer(f->work_npoints)) != 0 ||
      json_object_set_new(o, "l2_bytes", json_real(f->l2_bytes)) != 0 ||
      json_object_set_new(o, "threads", json_real(f->threads)) != 0 ||
      json_object_set_new(o, "sms", json_real(f->sms)) != 0 ||
      json_object_set_new(o, "value_bytes", json_integer(f->value_bytes)) !=
          0 ||
      json_object_set_new(o, "work_err", json_real(f->work_err)) != 0) {
    json_decref(o);
    return NULL;
  }
  bag = json_array();
  for (j = 0; bag != NULL && j < f->nbag; j++)
    if (json_array_append_new(bag, tree_json(&f->bag[j])) != 0) {
      json_decref(bag);
      bag = NULL;
    }
  if (bag == NULL || json_object_set_new(o, "bag", bag) != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Returns a new reference to the fits as JSON. */
json_t *spmvd_predict_to_json(const struct spmvd_predictor *pred)
{
  json_t *o = json_object(), *fj;
  int f;

  for (f = 0; o != NULL && f < SPMV_FMT_COUNT; f++) {
    if (pred->fit[f].kind == SPMVD_FIT_NONE)
      continue;
    fj = fit_json(&pred->fit[f]);
    if (fj == NULL ||
        json_object_set_new(o, spmv_format_name((enum spmv_format)f), fj)) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

/* Reads one number member of a fit. */
static int num(json_t *o, const char *fmt, const char *key, double *v,
               struct spmv_error *err)
{
  json_t *j = json_object_get(o, key);

  if (!json_is_number(j) || !isfinite(json_number_value(j)))
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"%s\" missing or not a number", fmt,
                          key);
  *v = json_number_value(j);
  return 0;
}

/* Reads a non-negative number member of a fit. */
static int count(json_t *o, const char *fmt, const char *key, double *v,
                 struct spmv_error *err)
{
  if (num(o, fmt, key, v, err) != 0 || *v < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"%s\" missing or not a non-negative "
                          "number", fmt, key);
  return 0;
}

/* Reads work tree node i (nodes before it read already): null exactly
 * where unused, else a leaf of SPMVD_WORK_TERMS non-negative numbers or a
 * split with children. */
static int work_node_from_json(json_t *v, const char *name, const char *what,
                               int i, struct spmvd_tree *t,
                               struct spmv_error *err)
{
  enum spmvd_split s;
  json_t *c;
  size_t j;

  if (!node_used(t, i)) {
    if (!json_is_null(v))
      return spmv_error_set(err, SPMV_EINVAL,
                            "fit of %s: %s[%d] is under a leaf and must "
                            "be null", name, what, i);
    return 0;
  }
  if (json_is_array(v)) {
    if (json_array_size(v) != SPMVD_WORK_TERMS)
      return spmv_error_set(err, SPMV_EINVAL,
                            "fit of %s: %s[%d] must hold %d numbers", name,
                            what, i, SPMVD_WORK_TERMS);
    json_array_foreach(v, j, c) {
      if (!json_is_number(c) || !isfinite(json_number_value(c)) ||
          json_number_value(c) < 0)
        return spmv_error_set(err, SPMV_EINVAL,
                              "fit of %s: %s[%d][%zu] is not a "
                              "non-negative number", name, what, i, j);
      t->wc[i][j] = json_number_value(c);
    }
    t->split[i] = SPMVD_SPLIT_NONE;
    return 0;
  }
  if (!json_is_object(v) || 2 * i + 2 >= SPMVD_TREE_NODES ||
      spmvd_split_parse(json_string_value(json_object_get(v, "split")),
                        &s) != 0 ||
      s == SPMVD_SPLIT_NONE ||
      !json_is_number(json_object_get(v, "at")) ||
      !isfinite(json_number_value(json_object_get(v, "at"))))
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: %s[%d] is neither a leaf nor a split "
                          "{\"split\": rows|work|rl_max|mean, \"at\": N} "
                          "above two more nodes", name, what, i);
  t->split[i] = s;
  t->thr[i] = json_number_value(json_object_get(v, "at"));
  return 0;
}

/* Reads a tree (an array of SPMVD_TREE_NODES nodes, v) into t; what names
 * it in errors. */
static int tree_from_json(json_t *v, const char *name, const char *what,
                          struct spmvd_tree *t, struct spmv_error *err)
{
  int i, ret;

  memset(t, 0, sizeof *t);
  if (!json_is_array(v) || json_array_size(v) != SPMVD_TREE_NODES)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: %s must be an array of %d tree nodes",
                          name, what, SPMVD_TREE_NODES);
  for (i = 0; i < SPMVD_TREE_NODES; i++)
    if ((ret = work_node_from_json(json_array_get(v, (size_t)i), name, what,
                                   i, t, err)) != 0)
      return ret;
  return 0;
}

/* Reads a fit's work model, when it has one: its tree, its bootstrap
 * trees and every figure of the device it was fitted with. */
static int work_from_json(json_t *o, const char *name, struct spmvd_fit *f,
                          struct spmv_error *err)
{
  json_t *bag;
  double np = 0, vb = 0;
  int i, ret;

  if (json_object_get(o, "work") == NULL)
    return 0;
  if ((ret = tree_from_json(json_object_get(o, "work"), name, "work",
                            &f->tree, err)) != 0)
    return ret;
  bag = json_object_get(o, "bag");
  if (!json_is_array(bag) || json_array_size(bag) > SPMVD_BAG_TREES)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"bag\" must be an array of at most %d "
                          "trees", name, SPMVD_BAG_TREES);
  for (i = 0; i < (int)json_array_size(bag); i++) {
    char what[32];

    snprintf(what, sizeof what, "bag[%d]", i);
    if ((ret = tree_from_json(json_array_get(bag, (size_t)i), name, what,
                              &f->bag[i], err)) != 0)
      return ret;
    f->nbag = i + 1;
  }
  if (num(o, name, "work_npoints", &np, err) != 0 || !(np >= 1) ||
      np > (double)INT_MAX)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"work_npoints\" missing or not in "
                          "[1, 2^31)", name);
  f->work_npoints = (int)np;
  if ((ret = count(o, name, "work_err", &f->work_err, err)) != 0 ||
      (ret = count(o, name, "l2_bytes", &f->l2_bytes, err)) != 0 ||
      (ret = count(o, name, "threads", &f->threads, err)) != 0 ||
      (ret = count(o, name, "sms", &f->sms, err)) != 0 ||
      (ret = count(o, name, "value_bytes", &vb, err)) != 0)
    return ret;
  if (vb != 0 && vb != 4 && vb != 8)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"value_bytes\" not 0, 4 or 8", name);
  f->value_bytes = (int)vb;
  return 0;
}

/* Refuses a fit of another basis than SPMVD_WORK_BASIS (or of none: from
 * before fits named theirs), telling the operator to run redo, the
 * calibration that replaces it. */
static int basis_check(json_t *o, const char *name, const char *redo,
                       struct spmv_error *err)
{
  json_t *b = json_object_get(o, "basis");
  double v;

  if (b == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration fit of %s has no basis: it is from an "
                          "older spmvd; run `%s`", name, redo);
  v = json_number_value(b);
  if (!json_is_number(b) || v != floor(v) || v < 1 || v > INT32_MAX)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"basis\" is not a positive integer",
                          name);
  if (v < SPMVD_WORK_BASIS)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration fit of %s, basis %d, is from an older "
                          "spmvd; run `%s`", name, (int)v, redo);
  if (v > SPMVD_WORK_BASIS)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration fit of %s, basis %d, is from a newer "
                          "spmvd (this one reads basis %d); run `%s`", name,
                          (int)v, SPMVD_WORK_BASIS, redo);
  return 0;
}

/* Reads one format's fit. */
static int fit_from_json(json_t *o, const char *name, const char *redo,
                         struct spmvd_fit *f, struct spmv_error *err)
{
  const char *kind = json_string_value(json_object_get(o, "kind"));
  const char *cfg = json_string_value(json_object_get(o, "config"));
  double strip = 0, np = 0;
  int ret;

  memset(f, 0, sizeof *f);
  if (!json_is_object(o))
    return spmv_error_set(err, SPMV_EINVAL, "fit of %s: not an object", name);
  if ((ret = basis_check(o, name, redo, err)) != 0)
    return ret;
  if (cfg == NULL || spmv_config_parse(cfg, &f->cfg, NULL) != 0)
    return spmv_error_set(err, SPMV_EINVAL, "fit of %s: bad \"config\"",
                          name);
  /* Bounded before the conversions: a stored or imported fit is outside
   * data, and a double beyond the integer's range converts to nothing
   * defined (the fuzzer's finding). */
  if ((ret = num(o, name, "strip", &strip, err)) != 0 || !(strip >= 1) ||
      strip > (double)INT32_MAX)
    return ret != 0 ? ret
                    : spmv_error_set(err, SPMV_EINVAL,
                                     "fit of %s: strip must be in [1, 2^31)", name);
  f->strip = (int64_t)strip;
  if ((ret = count(o, name, "npoints", &np, err)) != 0 ||
      (ret = count(o, name, "err_mean", &f->err_mean, err)) != 0)
    return ret;
  if (!(np <= (double)INT_MAX))
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: npoints %g is out of range", name, np);
  f->npoints = (int)np;
  if (kind != NULL && strcmp(kind, "vector") == 0) {
    if ((ret = num(o, name, "m", &f->m, err)) != 0 ||
        (ret = num(o, name, "c", &f->c, err)) != 0 ||
        (ret = num(o, name, "p", &f->p, err)) != 0 ||
        (ret = num(o, name, "q", &f->q, err)) != 0 ||
        (ret = num(o, name, "t0", &f->t0, err)) != 0 ||
        (ret = num(o, name, "i_cal", &f->i_cal, err)) != 0 ||
        (ret = num(o, name, "p_cal", &f->p_cal, err)) != 0)
      return ret;
    if (!(f->t0 > 0))
      return spmv_error_set(err, SPMV_EINVAL, "fit of %s: t0 must be > 0",
                            name);
    f->kind = SPMVD_FIT_VECTOR;
  } else if (kind != NULL && strcmp(kind, "saddle") == 0) {
    if ((ret = num(o, name, "a", &f->a, err)) != 0 ||
        (ret = num(o, name, "b", &f->b, err)) != 0 ||
        (ret = num(o, name, "c", &f->gc, err)) != 0 ||
        (ret = num(o, name, "d", &f->gd, err)) != 0)
      return ret;
    f->kind = SPMVD_FIT_SADDLE;
  } else {
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"kind\" must be \"vector\" or "
                          "\"saddle\"", name);
  }
  return work_from_json(o, name, f, err);
}

/* Reads the fits of spmvd_predict_to_json(); redo names the calibration
 * that replaces a fit of another basis. */
static int fits_from_json(json_t *doc, const char *redo,
                          struct spmvd_predictor *out, struct spmv_error *err)
{
  const char *key;
  json_t *val;
  enum spmv_format f;
  int ret;

  memset(out, 0, sizeof *out);
  if (!json_is_object(doc))
    return spmv_error_set(err, SPMV_EINVAL, "fits: expected an object");
  json_object_foreach(doc, key, val) {
    if (spmv_format_parse(key, &f) != 0)
      ret = spmv_error_set(err, SPMV_EINVAL, "fits: unknown format \"%s\"",
                           key);
    else if ((ret = fit_from_json(val, key, redo, &out->fit[f], err)) == 0 &&
             out->fit[f].cfg.format != f)
      ret = spmv_error_set(err, SPMV_EINVAL,
                           "fit of %s: its config is of another format", key);
    if (ret != 0) {
      memset(out, 0, sizeof *out);
      return ret;
    }
  }
  return 0;
}

int spmvd_predict_from_json(json_t *doc, struct spmvd_predictor *out,
                            struct spmv_error *err)
{
  return fits_from_json(doc, "spmvctl calibrate", out, err);
}

/* Stores the calibrated fits in the cache. */
int spmvd_predict_save(struct spmvd_cache *c,
                       const struct spmvd_device_info *dev,
                       enum spmv_dtype dt, const struct spmvd_predictor *pred,
                       struct spmv_error *err)
{
  json_t *fj;
  int f, ret = 0;

  for (f = 0; ret == 0 && f < SPMV_FMT_COUNT; f++) {
    if (pred->fit[f].kind == SPMVD_FIT_NONE)
      continue;
    fj = fit_json(&pred->fit[f]);
    if (fj == NULL)
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory saving fits");
    ret = spmvd_cache_calibration_put(c, dev->device_key, dev->software_key,
                                      dt, (enum spmv_format)f, fj, err);
    json_decref(fj);
  }
  return ret;
}

/* Loads a device's fits from the cache. */
int spmvd_predict_load(struct spmvd_cache *c,
                       const struct spmvd_device_info *dev,
                       enum spmv_dtype dt, struct spmvd_predictor *out,
                       struct spmv_error *err)
{
  json_t *doc = NULL;
  int ret;

  memset(out, 0, sizeof *out);
  ret = spmvd_cache_calibration_get(c, dev->device_key, dev->software_key, dt,
                                    &doc, err);
  if (ret <= 0)
    return ret;
  ret = fits_from_json(doc, dt == SPMV_F32 ? "spmvctl calibrate --dtype f32"
                                           : "spmvctl calibrate",
                       out, err);
  json_decref(doc);
  return ret == 0 ? 1 : ret;
}

