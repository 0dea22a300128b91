/* spmv_solve.c: libspmvclient's server-side solves (PROTOCOL.md, solve):
 * the request from the options, the vectors as payload or as device
 * vector numbers, the reply into struct spmv_solve_result. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_client_int.h"

/* Sets every option to its default. */
void spmv_solve_options_init(struct spmv_solve_options *o)
{
  memset(o, 0, sizeof *o);
}

/* Whether o asks for pagerank, the one method without a right-hand side. */
static int is_pagerank(const struct spmv_solve_options *o)
{
  return o != NULL && o->method != NULL && strcmp(o->method, "pagerank") == 0;
}

/* Refuses a non-finite tolerance or damping here: JSON cannot carry it,
 * and the daemon would only see a missing field. */
static int check_options(struct spmv_client *c, const char *fn,
                         const struct spmv_solve_options *o)
{
  if (o == NULL)
    return 0;
  if (!isfinite(o->rtol))
    return spmvc_failf(c, SPMV_EINVAL, "%s: rtol is %g, must be finite", fn, o->rtol);
  if (!isfinite(o->atol))
    return spmvc_failf(c, SPMV_EINVAL, "%s: atol is %g, must be finite", fn, o->atol);
  if (!isfinite(o->damping))
    return spmvc_failf(c, SPMV_EINVAL, "%s: damping is %g, must be finite", fn,
                       o->damping);
  return 0;
}

/* Sets key to a new value in req; returns -1 when either is NULL. */
static int put(json_t *req, const char *key, json_t *v)
{
  return v == NULL ? -1 : json_object_set_new(req, key, v);
}

/* Adds the method and the options that are set; those left at their
 * defaults are not sent, so that the daemon's defaults (by value type, by
 * method) apply. */
static int put_options(json_t *req, const struct spmv_solve_options *o)
{
  int bad = 0;

  /* PROTOCOL.md makes "method" a required field: NULL means CG. */
  bad |= put(req, "method", json_string(o != NULL && o->method != NULL
                                            ? o->method : "cg"));
  if (o == NULL)
    return bad;
  if (o->rtol > 0)
    bad |= put(req, "rtol", json_real(o->rtol));
  if (o->atol > 0)
    bad |= put(req, "atol", json_real(o->atol));
  if (o->maxiter > 0)
    bad |= put(req, "maxiter", json_integer(o->maxiter));
  if (o->restart > 0)
    bad |= put(req, "restart", json_integer(o->restart));
  if (o->damping > 0)
    bad |= put(req, "damping", json_real(o->damping));
  if (o->history)
    bad |= put(req, "history", json_true());
  if (o->progress_every > 0)
    bad |= put(req, "progress", json_integer(o->progress_every));
  return bad;
}

/* Builds the solve request on m (vector numbers b, x: -1 for none; x0:
 * the payload carries an initial guess) into *out; 0 or the failure
 * recorded on m's client. */
static int solve_request(struct spmv_matrix *m,
                         const struct spmv_solve_options *o, int64_t b,
                         int64_t x, int x0, json_t **out)
{
  json_t *req = json_pack("{s:s, s:I}", "op", "solve", "handle",
                          (json_int_t)m->handle);
  int bad = req == NULL;

  if (!bad && b >= 0)
    bad |= put(req, "b", json_integer(b));
  if (!bad && x >= 0)
    bad |= put(req, "x", json_integer(x));
  if (!bad && x0)
    bad |= put(req, "x0", json_true());
  if (!bad && put_options(req, o) < 0) {
    json_decref(req);
    return spmvc_failf(m->client, SPMV_EINVAL,
                       "spmv_solve: the method name is not valid UTF-8");
  }
  if (bad) {
    json_decref(req);
    return spmvc_failf(m->client, SPMV_ENOMEM, "out of memory");
  }
  *out = req;
  return 0;
}

/* A reply's number: a JSON number, or the strings "NaN", "Infinity" and
 * "-Infinity" by which the protocol sends what JSON cannot hold. */
static double get_real(const json_t *v, double def)
{
  const char *s = json_string_value(v);

  if (json_is_number(v))
    return json_number_value(v);
  if (s == NULL)
    return def;
  if (strcmp(s, "NaN") == 0)
    return NAN;
  if (strcmp(s, "Infinity") == 0)
    return INFINITY;
  if (strcmp(s, "-Infinity") == 0)
    return -INFINITY;
  return def;
}

/* Copies the reply's history into a new array owned by r; 0 or ENOMEM. */
static int take_history(const json_t *h, struct spmv_solve_result *r)
{
  size_t i, n = json_array_size(h);

  if (n == 0)
    return 0;
  r->history = malloc(n * sizeof *r->history);
  if (r->history == NULL)
    return SPMV_ENOMEM;
  for (i = 0; i < n; i++)
    r->history[i] = get_real(json_array_get(h, i), NAN);
  r->nhistory = (int64_t)n;
  return 0;
}

/* Fills r from the reply; 0, or ENOMEM for the history. */
static int result_from_json(const json_t *reply, struct spmv_solve_result *r)
{
  const json_t *conv = json_object_get(reply, "converged");

  r->iterations = spmvc_get_int(reply, "iterations", 0);
  spmvc_get_str(reply, "reason", r->reason, sizeof r->reason);
  /* A daemon that leaves out "converged" still names the reason. */
  r->converged = json_is_boolean(conv) ? json_is_true(conv)
                                       : strncmp(r->reason, "converged-", 10) == 0;
  r->residual = get_real(json_object_get(reply, "residual"), NAN);
  r->relative_residual = get_real(json_object_get(reply, "relative_residual"), NAN);
  r->rhs_norm = get_real(json_object_get(reply, "rhs_norm"), 0);
  r->seconds = get_real(json_object_get(reply, "seconds"), 0);
  r->us_per_iteration = get_real(json_object_get(reply, "us_per_iteration"), 0);
  return take_history(json_object_get(reply, "history"), r);
}

/*
 * Sends req with payload pl under c's lock and, when xlen > 0, reads the
 * solution payload of xlen bytes into x (in host order); fills r from the
 * reply.  Returns 0 or the error, recorded on c.
 */
static int solve_call(struct spmv_client *c, json_t *req,
                      const struct spmvc_payload *pl,
                      const struct spmv_solve_options *o, void *x,
                      size_t xlen, size_t vsz, struct spmv_solve_result *r)
{
  struct spmvc_progress_cb cb = { NULL, NULL, NULL, 1 };
  struct spmv_error err;
  json_t *reply = NULL;
  void *rp = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  uint64_t rlen = 0;
#endif
  int rc;

  if (o != NULL) {
    cb.fn = o->progress;
    cb.arg = o->progress_arg;
  }
  spmv_error_clear(&err);
  spmvc_lock(c);
  /* A cancel asked before this solve began is not this solve's. */
  atomic_store(&c->cancel_asked, 0);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  (void)vsz;
  rc = spmvc_call(c, req, pl, &cb, &reply, &rp, &rlen, &err);
  if (rc == 0 && rlen != xlen)
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "spmvd answered a solve with %llu bytes, expected %zu",
                        (unsigned long long)rlen, xlen);
  if (rc == 0)
    spmvc_le_copy(x, rp, xlen / vsz, vsz);
#else
  /* The solution comes back straight into the caller's array. */
  (void)vsz;
  if (xlen > 0)
    rc = spmvc_call_into_cb(c, req, pl, &cb, &reply, x, xlen, &err);
  else
    rc = spmvc_call(c, req, pl, &cb, &reply, NULL, NULL, &err);
#endif
  spmvc_unlock(c);
  if (rc == 0 && result_from_json(reply, r) < 0)
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory for the solve's history");
  if (rc < 0)
    spmvc_fail(c, &err);
  free(rp);
  json_decref(reply);
  return rc;
}

/* The payload of a host solve: b (unless NULL), then x0 (unless NULL),
 * each in little-endian order; on a big-endian host they are converted
 * into *tmp, a new buffer owned by the caller. */
static int solve_payload(const void *b, size_t blen, const void *x0,
                         size_t x0len, size_t vsz, struct spmvc_payload *pl,
                         void **tmp)
{
  *tmp = NULL;
  pl->p1 = b != NULL ? b : x0;
  pl->n1 = b != NULL ? blen : x0 != NULL ? x0len : 0;
  pl->p2 = b != NULL ? x0 : NULL;
  pl->n2 = b != NULL && x0 != NULL ? x0len : 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  {
    unsigned char *t = malloc(pl->n1 + pl->n2 + 1);

    if (t == NULL)
      return SPMV_ENOMEM;
    spmvc_le_copy(t, pl->p1, pl->n1 / vsz, vsz);
    spmvc_le_copy(t + pl->n1, pl->p2, pl->n2 / vsz, vsz);
    pl->p1 = t;
    pl->n1 += pl->n2;
    pl->p2 = NULL;
    pl->n2 = 0;
    *tmp = t;
  }
#else
  (void)vsz;
#endif
  return 0;
}

/* Checks the arguments common to both solves; 0 or the failure. */
static int check_solve(struct spmv_matrix *m, const char *fn,
                       const struct spmv_solve_options *o,
                       struct spmv_solve_result *r)
{
  if (r != NULL)
    memset(r, 0, sizeof *r);
  if (m == NULL)
    return spmvc_failf(NULL, SPMV_EINVAL, "%s: the matrix is NULL", fn);
  if (r == NULL)
    return spmvc_failf(m->client, SPMV_EINVAL, "%s: the result is NULL", fn);
  return check_options(m->client, fn, o);
}

/* Solves A x = b with host arrays; see spmv.h. */
int spmv_solve(struct spmv_matrix *m, const void *b, void *x, int x_guess,
               const struct spmv_solve_options *o, struct spmv_solve_result *r)
{
  size_t vsz, blen, xlen;
  struct spmvc_payload pl;
  json_t *req = NULL;
  void *tmp = NULL;
  int rc, pr = is_pagerank(o);

  if ((rc = check_solve(m, "spmv_solve", o, r)) < 0)
    return rc;
  if (x == NULL)
    return spmvc_failf(m->client, SPMV_EINVAL, "spmv_solve: x is NULL");
  if (pr != (b == NULL))
    return spmvc_failf(m->client, SPMV_EINVAL, pr
                       ? "spmv_solve: pagerank takes no b (pass NULL)"
                       : "spmv_solve: b is NULL (only pagerank takes none)");
  vsz = spmv_dtype_size(m->dtype);
  blen = (size_t)m->rows * vsz;
  xlen = (size_t)m->cols * vsz;
  if (solve_payload(b, blen, x_guess ? x : NULL, xlen, vsz, &pl, &tmp) < 0)
    return spmvc_failf(m->client, SPMV_ENOMEM, "out of memory");
  rc = solve_request(m, o, -1, -1, x_guess != 0, &req);
  if (rc == 0)
    rc = solve_call(m->client, req, &pl, o, x, xlen, vsz, r);
  free(tmp);
  json_decref(req);
  return rc;
}

/* Checks that device vector v (called name; may be NULL when optional) is
 * one of m's client's. */
static int check_vec(struct spmv_matrix *m, const struct spmv_vector *v,
                     const char *name, int optional)
{
  if (v == NULL && !optional)
    return spmvc_failf(m->client, SPMV_EINVAL, "spmv_solve_vec: %s is NULL", name);
  if (v != NULL && v->client != m->client)
    return spmvc_failf(m->client, SPMV_EINVAL,
                       "spmv_solve_vec: %s (vector %lld) belongs to another client",
                       name, (long long)v->id);
  return 0;
}

/* Solves A x = b on device vectors: only their numbers travel. */
int spmv_solve_vec(struct spmv_matrix *m, struct spmv_vector *b,
                   struct spmv_vector *x, const struct spmv_solve_options *o,
                   struct spmv_solve_result *r)
{
  struct spmvc_payload none = { NULL, 0, NULL, 0 };
  json_t *req = NULL;
  int rc, pr = is_pagerank(o);

  if ((rc = check_solve(m, "spmv_solve_vec", o, r)) < 0 ||
      (rc = check_vec(m, x, "x", 0)) < 0 ||
      (rc = check_vec(m, b, "b", pr)) < 0)
    return rc;
  if (pr && b != NULL)
    return spmvc_failf(m->client, SPMV_EINVAL,
                       "spmv_solve_vec: pagerank takes no b (pass NULL)");
  rc = solve_request(m, o, b != NULL ? b->id : -1, x->id, 0, &req);
  if (rc == 0)
    rc = solve_call(m->client, req, &none, o, NULL, 0, 0, r);
  json_decref(req);
  return rc;
}
