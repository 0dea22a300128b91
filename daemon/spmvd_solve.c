/* spmvd_solve.c: spmvd-worker's solve request: its parameters, the
 * vectors it solves with, the stopping rule shared by the methods, the
 * residual recomputed at the end and the reply. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_ipc.h"
#include "spmvd_solve.h"

/*
 * The front end has checked the request (PROTOCOL.md, solve) and sends
 *
 *   {op:"solve", handle, method, rtol, atol, maxiter, restart, damping,
 *    history, progress, vectors:[{id, dtype, n}], b_vec?, x_vec?, x0,
 *    buf?, buf_size?, buf_fd?, b_off, x_off}
 *
 * with the fd of the payload buffer when buf_fd is true.  A host b lies at
 * b_off of buffer buf, a host x0 (x0 true) at x_off, where the solution is
 * written back when no x_vec names a device vector.
 */

/* Monotonic seconds, on the clock of the loads' steps. */
static double now_s(void)
{
  return spmvd_wk_now_ms() * 1e-3;
}

/* --- the backend's operations, for the methods --- */

int spmvd_solve_vec(struct spmvd_solve *s, size_t n, struct spmvd_bvector **out,
                    struct spmv_error *err)
{
  if (s->ntmp == SPMVD_SOLVE_MAX_TMP)
    return spmv_error_set(err, SPMV_ELIMIT, "a solve uses at most %d vectors",
                          SPMVD_SOLVE_MAX_TMP);
  int rc = s->ops->vec_new(s->be, s->dt, n, out, err);
  if (rc == 0)
    s->tmp[s->ntmp++] = *out;
  return rc;
}

struct spmvd_scalar spmvd_solve_k(double c)
{
  return spmvd_solve_e(c, -1, -1);
}

struct spmvd_scalar spmvd_solve_e(double c, int mul, int div)
{
  struct spmvd_scalar k;

  memset(&k, 0, sizeof k);
  k.c = c;
  if (mul >= 0)
    k.mul[k.nmul++] = mul;
  if (div >= 0)
    k.div[k.ndiv++] = div;
  return k;
}

struct spmvd_scalar spmvd_solve_ef(double c, int mul, int div)
{
  struct spmvd_scalar k = spmvd_solve_e(c, mul, div);

  k.finite = 1;
  return k;
}

/* Queues one BLAS-1 operation. */
static int vop(struct spmvd_solve *s, enum spmvd_vop op,
               struct spmvd_bvector *x, struct spmvd_bvector *y,
               struct spmvd_bvector *z, struct spmvd_scalar a,
               struct spmvd_scalar b, int slot, struct spmv_error *err)
{
  struct spmvd_vop_args v = {op, x, y, z, a, b, slot};
  return s->ops->vec_op(s->be, &v, err);
}

int spmvd_solve_axpby(struct spmvd_solve *s, struct spmvd_bvector *x,
                      struct spmvd_bvector *y, struct spmvd_scalar a,
                      struct spmvd_scalar b, struct spmv_error *err)
{
  return vop(s, SPMVD_VOP_AXPBY, x, y, NULL, a, b, 0, err);
}

int spmvd_solve_mul(struct spmvd_solve *s, struct spmvd_bvector *x,
                    struct spmvd_bvector *y, struct spmvd_bvector *z,
                    struct spmv_error *err)
{
  struct spmvd_scalar k = spmvd_solve_k(0);
  return vop(s, SPMVD_VOP_MUL, x, y, z, k, k, 0, err);
}

int spmvd_solve_dot(struct spmvd_solve *s, struct spmvd_bvector *x,
                    struct spmvd_bvector *y, int slot, struct spmv_error *err)
{
  struct spmvd_scalar k = spmvd_solve_k(0);
  return vop(s, SPMVD_VOP_DOT, x, y, NULL, k, k, slot, err);
}

int spmvd_solve_nrm2(struct spmvd_solve *s, struct spmvd_bvector *x, int slot,
                     struct spmv_error *err)
{
  struct spmvd_scalar k = spmvd_solve_k(0);
  return vop(s, SPMVD_VOP_NRM2, x, NULL, NULL, k, k, slot, err);
}

int spmvd_solve_asum(struct spmvd_solve *s, struct spmvd_bvector *x, int slot,
                     struct spmv_error *err)
{
  struct spmvd_scalar k = spmvd_solve_k(0);
  return vop(s, SPMVD_VOP_ASUM, x, NULL, NULL, k, k, slot, err);
}

int spmvd_solve_copy(struct spmvd_solve *s, struct spmvd_bvector *x,
                     struct spmvd_bvector *y, struct spmv_error *err)
{
  struct spmvd_scalar k = spmvd_solve_k(0);
  return vop(s, SPMVD_VOP_COPY, x, y, NULL, k, k, 0, err);
}

int spmvd_solve_scale(struct spmvd_solve *s, struct spmvd_bvector *x,
                      struct spmvd_scalar a, struct spmv_error *err)
{
  return vop(s, SPMVD_VOP_SCALE, x, NULL, NULL, a, spmvd_solve_k(0), 0, err);
}

int spmvd_solve_fill(struct spmvd_solve *s, struct spmvd_bvector *x,
                     struct spmvd_scalar a, struct spmv_error *err)
{
  return vop(s, SPMVD_VOP_FILL, x, NULL, NULL, a, spmvd_solve_k(0), 0, err);
}

int spmvd_solve_spmv(struct spmvd_solve *s, double alpha,
                     struct spmvd_bvector *x, double beta,
                     struct spmvd_bvector *y, struct spmv_error *err)
{
  return s->ops->vec_spmv(s->be, s->m->bm, alpha, x, beta, y, err);
}

int spmvd_solve_finish(struct spmvd_solve *s, double *res, int n,
                       struct spmv_error *err)
{
  return s->ops->finish(s->be, res, n, err);
}

int spmvd_solve_residual(struct spmvd_solve *s, struct spmvd_bvector *r,
                         struct spmv_error *err)
{
  int rc = spmvd_solve_spmv(s, -1.0, s->x, 0.0, r, err);
  return rc < 0 ? rc
                : spmvd_solve_axpby(s, s->b, r, spmvd_solve_k(1),
                                    spmvd_solve_k(1), err);
}

/* --- the stopping rule --- */

enum spmvd_solve_reason spmvd_solve_stop_rule(double r, double atol, double tol)
{
  if (!isfinite(r))
    return SPMVD_SOLVE_BREAKDOWN;
  if (r <= atol)
    return SPMVD_SOLVE_ATOL;
  return r <= tol ? SPMVD_SOLVE_RTOL : SPMVD_SOLVE_RUNNING;
}

int spmvd_solve_converged(struct spmvd_solve *s, double r)
{
  enum spmvd_solve_reason why = spmvd_solve_stop_rule(r, s->atol, s->tol);

  if (why != SPMVD_SOLVE_RUNNING)
    s->reason = why;
  return s->reason != SPMVD_SOLVE_RUNNING;
}

/* Keeps r in the history. */
static int keep_history(struct spmvd_solve *s, double r,
                        struct spmv_error *err)
{
  if (s->iters >= SPMVD_SOLVE_HISTORY_MAX)
    return 0;  /* the first ones kept, as PETSc's residual history does */
  if ((size_t)s->iters >= s->history_cap) {
    size_t cap = s->history_cap ? 2 * s->history_cap : 64;
    double *h = realloc(s->history, cap * sizeof *h);
    if (!h)
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory for the history");
    s->history = h;
    s->history_cap = cap;
  }
  s->history[s->iters] = r;
  return 0;
}

void spmvd_solve_send_progress(struct worker *w, json_int_t seq, int64_t done,
                               int64_t total, double r, double elapsed_s)
{
  spmvd_wk_send_msg(w, json_pack("{sI ss ss sI sI so sf}", "seq", seq, "event",
                                 "progress", "stage", "solve", "done",
                                 (json_int_t)done, "total", (json_int_t)total,
                                 "residual", spmvd_ipc_real(r), "elapsed_s",
                                 elapsed_s));
}

int spmvd_solve_iterated(struct spmvd_solve *s, double r,
                         struct spmv_error *err)
{
  int rc;

  if (s->want_history && (rc = keep_history(s, r, err)) < 0)
    return rc;
  s->iters++;
  s->resid = r;
  if (s->progress > 0 && s->iters % s->progress == 0)
    spmvd_solve_send_progress(s->w, s->seq, s->iters, s->maxiter, r,
                              now_s() - s->t0);
  /* Other clients' products go on between iterations, and the front end
   * may cancel this solve meanwhile (its client went away). */
  spmvd_wk_serve_between(s->w, s->m->handle);
  SPMVD_WK_SLOW(SOLVE);
  if (s->w->cancelled == SPMVD_WK_DROP)
    return spmv_error_set(err, SPMV_ECLOSED, "cancelled: the client of the "
                          "solve closed its connection");
  if (s->w->cancelled == SPMVD_WK_STOP) {
    s->reason = SPMVD_SOLVE_CANCELLED;
    return 1;
  }
  if (spmvd_solve_converged(s, r))
    return 1;
  if (s->iters >= s->maxiter) {
    s->reason = SPMVD_SOLVE_MAXITER;
    return 1;
  }
  return 0;
}

/* --- the request --- */

static const char *const reason_names[] = {
  "running", "converged-rtol", "converged-atol", "maxiter", "breakdown",
  "indefinite", "cancelled", "stagnated",
};

const char *spmvd_solve_reason_name(enum spmvd_solve_reason r)
{
  return reason_names[r];
}

/* The backend's vector of id (a device vector of the front end's), or
 * NULL. */
static struct spmvd_bvector *wvec_of(struct worker *w, json_int_t id)
{
  struct wvec *v = spmvd_wk_vec(w, id);
  return v ? v->bv : NULL;
}

/* The solve's parameters from req. */
static int get_params(struct spmvd_solve *s, json_t *req,
                      struct spmv_error *err)
{
  json_int_t maxiter = 0, progress = 0, restart = 30;
  int hist = 0;

  if (json_unpack(req, "{sF sF sI sI sF sb sI}", "rtol", &s->rtol, "atol",
                  &s->atol, "maxiter", &maxiter, "restart", &restart,
                  "damping", &s->damping, "history", &hist, "progress",
                  &progress) < 0 || maxiter < 0 || restart < 1 ||
      restart > SPMVD_SOLVE_MAX_TMP - 8)
    return spmv_error_set(err, SPMV_EPROTO, "bad solve message");
  s->maxiter = maxiter;
  s->progress = progress;
  s->restart = (int)restart;
  s->want_history = hist;
  return 0;
}

/* b and x: the front end's device vectors, or temporaries loaded from the
 * payload buffer (at *host, the buffer's mapping, or NULL). */
static int get_vectors(struct spmvd_solve *s, json_t *req, char *host,
                       int pagerank, struct spmv_error *err)
{
  json_t *bv = json_object_get(req, "b_vec"), *xv = json_object_get(req, "x_vec");
  json_int_t boff = json_integer_value(json_object_get(req, "b_off"));
  json_int_t xoff = json_integer_value(json_object_get(req, "x_off"));
  int rc;

  if (pagerank)
    s->b = NULL;
  else if (bv && !(s->b = wvec_of(s->w, json_integer_value(bv))))
    return spmv_error_set(err, SPMV_EPROTO, "unknown vector b");
  else if (!bv) {
    if (!host)
      return spmv_error_set(err, SPMV_EPROTO, "a solve without b");
    if ((rc = spmvd_solve_vec(s, s->rows, &s->b, err)) < 0 ||
        (rc = s->ops->vec_upload(s->be, s->b, host + boff, err)) < 0)
      return rc;
  }
  s->x_given = xv != NULL || json_is_true(json_object_get(req, "x0"));
  if (xv)
    return (s->x = wvec_of(s->w, json_integer_value(xv)))
               ? 0 : spmv_error_set(err, SPMV_EPROTO, "unknown vector x");
  if ((rc = spmvd_solve_vec(s, s->cols, &s->x, err)) < 0)
    return rc;
  if (json_is_true(json_object_get(req, "x0"))) {
    if (!host)
      return spmv_error_set(err, SPMV_EPROTO, "a solve's x0 without a buffer");
    return s->ops->vec_upload(s->be, s->x, host + xoff, err);
  }
  return 0;
}

/* The payload buffer's mapping, or NULL when the request has none. */
static int get_buffer(struct worker *w, json_t *req, int *fds, int nfds,
                      char **host, struct spmv_error *err)
{
  json_int_t id = 0, size = 0;
  int hasfd = 0;

  *host = NULL;
  json_unpack(req, "{s?I s?I s?b}", "buf", &id, "buf_size", &size, "buf_fd",
              &hasfd);
  if (id <= 0)
    return 0;
  if (hasfd && nfds < 1)
    return spmv_error_set(err, SPMV_EPROTO, "a solve's buffer without its fd");
  int fd = hasfd ? fds[0] : -1;
  if (hasfd)
    fds[0] = -1;
  struct spmvd_shm *shm = spmvd_wk_buf_get(w, id, fd, (size_t)size, 0, err);
  if (!shm)
    return err->code;
  *host = shm->addr;
  return 0;
}

/* Runs the method named in req. */
static int run_method(struct spmvd_solve *s, const char *method,
                      struct spmv_error *err)
{
  if (strcmp(method, "cg") == 0)
    return spmvd_solve_cg(s, 0, err);
  if (strcmp(method, "pcg-jacobi") == 0)
    return spmvd_solve_cg(s, 1, err);
  if (strcmp(method, "bicgstab") == 0)
    return spmvd_solve_bicgstab(s, err);
  if (strcmp(method, "gmres") == 0)
    return spmvd_solve_gmres(s, err);
  if (strcmp(method, "pagerank") == 0)
    return spmvd_solve_pagerank(s, err);
  return spmv_error_set(err, SPMV_EPROTO, "unknown method '%s'", method);
}

/* The start: ||b||, and b = 0 (x = 0 at once) or a NaN in b. */
static int start(struct spmvd_solve *s, struct spmv_error *err)
{
  double r;
  int rc;

  if ((rc = spmvd_solve_nrm2(s, s->b, 0, err)) < 0 ||
      (rc = spmvd_solve_finish(s, &r, 1, err)) < 0)
    return rc;
  s->bnorm = r;
  s->tol = fmax(s->rtol * r, s->atol);
  if (!isfinite(r))
    s->reason = SPMVD_SOLVE_BREAKDOWN;
  else if (r == 0) {
    s->reason = SPMVD_SOLVE_ATOL;
    return spmvd_solve_fill(s, s->x, spmvd_solve_k(0), err);
  }
  return 0;
}

/* ||b - A x||_2 recomputed from the solution. */
static int final_residual(struct spmvd_solve *s, double *out,
                          struct spmv_error *err)
{
  struct spmvd_bvector *t;
  int rc;

  if ((rc = spmvd_solve_vec(s, s->rows, &t, err)) < 0 ||
      (rc = spmvd_solve_residual(s, t, err)) < 0 ||
      (rc = spmvd_solve_nrm2(s, t, 0, err)) < 0)
    return rc;
  return spmvd_solve_finish(s, out, 1, err);
}

/* The reply's result. */
static json_t *result(struct spmvd_solve *s, const char *method, double resid,
                      double secs)
{
  json_t *r = json_pack(
      "{ss sI sb ss so so so sf sf}", "method", method, "iterations",
      (json_int_t)s->iters, "converged",
      s->reason == SPMVD_SOLVE_RTOL || s->reason == SPMVD_SOLVE_ATOL, "reason",
      reason_names[s->reason], "residual", spmvd_ipc_real(resid),
      "relative_residual",
      spmvd_ipc_real(s->bnorm > 0 ? resid / s->bnorm : resid), "rhs_norm",
      spmvd_ipc_real(s->bnorm), "seconds", secs, "us_per_iteration",
      s->iters > 0 ? secs * 1e6 / (double)s->iters : 0.0);
  if (r && s->want_history) {
    json_t *h = json_array();
    long long n = s->iters < SPMVD_SOLVE_HISTORY_MAX ? s->iters
                                                    : SPMVD_SOLVE_HISTORY_MAX;
    for (long long i = 0; i < n; i++)
      json_array_append_new(h, spmvd_ipc_real(s->history[i]));
    json_object_set_new(r, "history", h);
  }
  return r;
}

/* Frees the solve's temporaries and history. */
static void solve_fini(struct spmvd_solve *s)
{
  for (int i = 0; i < s->ntmp; i++)
    s->ops->vec_free(s->be, s->tmp[i]);
  s->ntmp = 0;
  free(s->history);
  s->history = NULL;
}

/*
 * The method, then ||b - A x|| recomputed into *resid: where the method
 * claims convergence and that residual misses the tolerance, the method
 * starts again from x (a residual replacement, as in the literature on
 * attainable accuracy), at most SPMVD_SOLVE_REPLACEMENTS times within
 * maxiter (f32's rounding); then
 * the reason is "stagnated", or "maxiter" at the limit.
 */
static int run_checked(struct spmvd_solve *s, const char *method,
                       double *resid, struct spmv_error *err)
{
  int rc;

  for (int k = 0;; k++) {
    int base = s->ntmp;
    if (s->reason == SPMVD_SOLVE_RUNNING && (rc = run_method(s, method, err)) < 0)
      return rc;
    if ((rc = final_residual(s, resid, err)) < 0)
      return rc;
    int claimed = s->reason == SPMVD_SOLVE_RTOL || s->reason == SPMVD_SOLVE_ATOL;
    if (!claimed || *resid <= s->tol || !isfinite(*resid))
      return 0;
    if (s->iters >= s->maxiter || k == SPMVD_SOLVE_REPLACEMENTS) {
      s->reason = s->iters >= s->maxiter ? SPMVD_SOLVE_MAXITER : SPMVD_SOLVE_STAGNATED;
      return 0;
    }
    /* The last wait (final_residual's) is behind us: this run's vectors
     * are idle, and the next run makes its own. */
    while (s->ntmp > base)
      s->ops->vec_free(s->be, s->tmp[--s->ntmp]);
    s->reason = SPMVD_SOLVE_RUNNING;
  }
}

/* The solve once its vectors are ready: the method, then the result. */
static int solve_run(struct spmvd_solve *s, const char *method, char *host,
                     json_t *req, json_t **rep, struct spmv_error *err)
{
  int pagerank = strcmp(method, "pagerank") == 0, rc = 0;
  double resid = 0;

  if (pagerank)
    s->bnorm = 1;  /* the solution's sum: the change's 1-norm is relative to it */
  else if ((rc = start(s, err)) < 0)
    return rc;
  if (s->reason == SPMVD_SOLVE_RUNNING && s->w->cancelled == SPMVD_WK_STOP)
    s->reason = SPMVD_SOLVE_CANCELLED;
  if (pagerank) {
    if (s->reason == SPMVD_SOLVE_RUNNING && (rc = run_method(s, method, err)) < 0)
      return rc;
    resid = s->resid;
  } else if ((rc = run_checked(s, method, &resid, err)) < 0)
    return rc;
  if (!json_object_get(req, "x_vec")) {
    json_int_t xoff = json_integer_value(json_object_get(req, "x_off"));
    if (!host)
      return spmv_error_set(err, SPMV_EPROTO, "a solve without its buffer");
    if ((rc = s->ops->vec_download(s->be, s->x, host + xoff, err)) < 0 ||
        (rc = spmvd_solve_finish(s, NULL, 0, err)) < 0)
      return rc;
  }
  *rep = result(s, method, resid, now_s() - s->t0);
  return *rep ? 0 : spmv_error_set(err, SPMV_ENOMEM, "out of memory");
}

int spmvd_wk_op_solve(struct worker *w, json_t *req, int *fds, int nfds,
                      json_int_t seq, json_t **rep, struct spmv_error *err)
{
  struct spmvd_solve *s = calloc(1, sizeof *s);
  const char *method = json_string_value(json_object_get(req, "method"));
  json_t *vs = json_object_get(req, "vectors"), *j;
  char *host = NULL;
  size_t i;
  int rc;

  if (!s)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  s->w = w;
  s->ops = w->ops;
  s->be = w->be;
  s->seq = seq;
  s->t0 = now_s();
  s->m = spmvd_wk_find(w, json_integer_value(json_object_get(req, "handle")));
  if (!method || !s->m || !s->m->bm || !w->ops->vec_new) {
    free(s);
    return spmv_error_set(err, method ? SPMV_ENOENT : SPMV_EPROTO,
                          "no resident matrix, method or device vectors for "
                          "the solve");
  }
  s->dt = s->m->dtype;
  s->rows = (size_t)s->m->A.rows;
  s->cols = (size_t)s->m->A.cols;
  w->solving = seq;
  /* A cancel that came while the solve waited stops it before it starts. */
  w->cancelled = json_is_true(json_object_get(req, "cancelled")) ? SPMVD_WK_STOP : 0;
  rc = get_params(s, req, err);
  json_array_foreach(vs, i, j)
    if (rc == 0)
      rc = spmvd_wk_vec_ensure(w, j, err);
  if (rc == 0)
    rc = get_buffer(w, req, fds, nfds, &host, err);
  if (rc == 0)
    rc = get_vectors(s, req, host, strcmp(method, "pagerank") == 0, err);
  if (rc == 0)
    rc = solve_run(s, method, host, req, rep, err);
  if (rc < 0) {
    /* What was queued is waited for before the temporaries go. */
    struct spmv_error ferr;
    int frc = s->ops->finish(s->be, NULL, 0, &ferr);
    if (frc == SPMV_EGPU_STICKY)
      *err = ferr, rc = frc;
  }
  solve_fini(s);
  free(s);
  w->solving = 0;
  w->cancelled = 0;
  return rc;
}

int spmvd_solve_upload(struct spmvd_solve *s, struct spmvd_bvector *v,
                       const double *vals, size_t n, struct spmv_error *err)
{
  void *host = malloc(n ? n * spmv_dtype_size(s->dt) : 1);
  int rc;

  if (!host)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for %zu values", n);
  for (size_t i = 0; i < n; i++) {
    if (s->dt == SPMV_F32)
      ((float *)host)[i] = (float)vals[i];
    else
      ((double *)host)[i] = vals[i];
  }
  rc = s->ops->vec_upload(s->be, v, host, err);
  /* The copy may run until finish: host stays until then. */
  struct spmv_error ferr;
  int frc = s->ops->finish(s->be, NULL, 0, rc < 0 ? &ferr : err);
  free(host);
  return rc < 0 ? rc : frc;
}
