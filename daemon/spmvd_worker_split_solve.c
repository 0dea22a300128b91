/* spmvd_worker_split_solve.c: a solve on a split matrix, run by the
 * workers of its blocks together (issue 54): each keeps its rows of the
 * vectors, reads the halo of those it multiplies from the memfd they share
 * (spmvd_split_shm.h) after a barrier, and every dot product is an
 * all-reduce in which each sums the blocks' parts in block order, so that
 * all take the same steps and return the same outcome. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_arnoldi.h"
#include "spmvd_solve.h"
#include "spmvd_split_shm.h"
#include "spmvd_worker_impl.h"


/* One block's side of a solve. */
struct split_run {
  struct worker *w;             /* heartbeats while it waits and works */
  struct wmatrix *m;
  struct spmvd_split_ctl *ctl;
  int nb, k;
  unsigned seq;                 /* reductions so far */
  int stop;                     /* a block had seen cancel at the last one */
  int aborted;                  /* another block failed or died */
  int agreed;                   /* the failure is every block's alike */
  int64_t r0, nl;               /* this block's rows */
  const double *b;              /* shared: b, x, and the vectors multiplied */
  double *x, *p, *sv;
  float *vf;                    /* f32: shared, the vector multiplied */
  float *yf;                    /* f32: this block's rows of the product */
  double bb;                    /* ||b||^2 */
  double rtol, atol;
  int64_t maxiter, it;
  int restart;                  /* gmres's m */
  double damping;               /* pagerank's */
  int x0;                       /* x holds an initial guess (pagerank) */
  double change;                /* pagerank: the 1-norm of the last change */
  json_int_t call;              /* the call's seq, for its progress events */
  int64_t progress;             /* > 0: an event every so many iterations */
  double t0;                    /* its start (ms) */
  double *history;              /* with history: the first residuals */
  size_t nhistory, history_cap;
  int want_history;
  enum spmvd_solve_reason why;  /* as on one worker (spmvd_solve.h) */
};

/* Once an iteration: other matrices' products on this worker are served,
 * as between a one-worker solve's iterations (a request naming this matrix
 * waits for the solve's end); the worker's heartbeat goes with them. */
static void between(struct split_run *s)
{
  spmvd_wk_serve_between(s->w, s->m->handle);
}

static int barrier(struct split_run *s)
{
  if (spmvd_wk_split_barrier(s->w, s->ctl, s->nb) < 0) {
    s->aborted = 1;
    return -1;
  }
  return 0;
}

/* Every block's v, in block order, once all have given theirs (slots
 * alternate, so that a fast block's next value cannot overwrite one that
 * a slow block still reads); NULL when the solve was aborted. */
static const double *gather(struct split_run *s, double v)
{
  unsigned parity = s->seq++ % 2;
  double *slot = s->ctl->slot[parity];

  slot[s->k] = v;
  s->ctl->stop[parity][s->k] = atomic_load(&s->ctl->cancel) != 0;
  if (barrier(s) < 0)
    return NULL;
  s->stop = 0;
  for (int i = 0; i < s->nb; i++)
    s->stop |= s->ctl->stop[parity][i];
  return slot;
}

/* The sum of every block's v, in block order; -1 when aborted. */
static int allreduce(struct split_run *s, double v, double *sum)
{
  const double *all = gather(s, v);

  if (!all)
    return -1;
  *sum = 0;
  for (int i = 0; i < s->nb; i++)
    *sum += all[i];
  return 0;
}

/* The least of every block's v; -1 when aborted. */
static int allmin(struct split_run *s, double v, double *min)
{
  const double *all = gather(s, v);

  if (!all)
    return -1;
  *min = all[0];
  for (int i = 1; i < s->nb; i++)
    *min = all[i] < *min ? all[i] : *min;
  return 0;
}

static double dot(const double *a, const double *b, int64_t n)
{
  double s = 0;
  for (int64_t i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

/* y (this block's rows) = A v, v a shared vector that every block has
 * written its rows of; -1 when aborted, else the product's code.  Every
 * function here returns 0 or nonzero so: s->aborted tells which. */
static int multiply_shared(struct split_run *s, const double *v, double *y,
                           struct spmv_error *err)
{
  int rc;

  if (s->m->dtype == SPMV_F64) {
    if (barrier(s) < 0)
      return -1;
    return spmvd_wk_block_multiply(s->w, s->m, 1.0, v, 0.0, y, err);
  }
  /* An f32 matrix multiplies v rounded to float: each block writes its
   * rows of the shared float vector, which a reduction after every
   * product keeps from being written again while another block reads it. */
  for (int64_t i = 0; i < s->nl; i++)
    s->vf[s->r0 + i] = (float)v[s->r0 + i];
  if (barrier(s) < 0)
    return -1;
  rc = spmvd_wk_block_multiply(s->w, s->m, 1.0, s->vf, 0.0, s->yf, err);
  for (int64_t i = 0; rc == 0 && i < s->nl; i++)
    y[i] = s->yf[i];
  return rc;
}

/* An iteration ended with residual norm rn: counted, kept in the history
 * (the first SPMVD_SOLVE_HISTORY_MAX, as on one worker) and sent as
 * progress when due (by block 0, whose call asked for it). */
static void iterated(struct split_run *s, double rn)
{
  if (s->want_history && s->nhistory < SPMVD_SOLVE_HISTORY_MAX) {
    if (s->nhistory == s->history_cap) {
      size_t cap = s->history_cap ? 2 * s->history_cap : 64;
      double *h = realloc(s->history, cap * sizeof *h);
      if (h) {
        s->history = h;
        s->history_cap = cap;
      }
    }
    /* Out of memory, the history ends there; the solve goes on. */
    if (s->nhistory < s->history_cap)
      s->history[s->nhistory++] = rn;
  }
  s->it++;
  if (s->progress > 0 && s->it % s->progress == 0)
    spmvd_solve_send_progress(s->w, s->call, s->it, s->maxiter, rn,
                              (spmvd_wk_now_ms() - s->t0) / 1e3);
}

/* Whether the residual norm rn ends the solve, and why: the stopping rule
 * of one worker, then a cancel. */
static int finished(struct split_run *s, double rn)
{
  enum spmvd_solve_reason why =
      spmvd_solve_stop_rule(rn, s->atol, s->rtol * sqrt(s->bb));

  if (why == SPMVD_SOLVE_RUNNING && s->stop)
    why = SPMVD_SOLVE_CANCELLED;  /* every block saw the same stop flags */
  if (why == SPMVD_SOLVE_RUNNING)
    return 0;
  s->why = why;
  return 1;
}

/* inv[0 .. nl) = 1 / A's diagonal on this block's rows; the first row of
 * the whole matrix whose diagonal entry is zero, missing or not finite is
 * EINVAL naming it, from every block alike. */
static int jacobi_setup(struct split_run *s, double *inv, struct spmv_error *err)
{
  int64_t bad = spmvd_solve_inverse_diagonal(&s->m->A, s->r0, s->r0 + s->nl, inv);
  double first;

  if (allmin(s, bad >= 0 ? (double)bad : HUGE_VAL, &first) < 0)
    return -1;
  if (first < HUGE_VAL) {
    s->agreed = 1;
    return spmv_error_set(err, SPMV_EINVAL, "pcg-jacobi: row %lld has a zero "
                          "or missing diagonal entry", (long long)first);
  }
  return 0;
}

/* r = b - A x0 on this block's rows and ||r||: is it already done? */
static int start(struct split_run *s, double *r, double *rr,
                 struct spmv_error *err)
{
  int rc = multiply_shared(s, s->x, r, err);

  if (rc != 0)
    return rc;
  for (int64_t i = 0; i < s->nl; i++)
    r[i] = s->b[s->r0 + i] - r[i];
  if (allreduce(s, dot(s->b + s->r0, s->b + s->r0, s->nl), &s->bb) < 0 ||
      allreduce(s, dot(r, r, s->nl), rr) < 0)
    return -1;
  return 0;
}

/* CG, or with inv (the inverse diagonal) PCG-Jacobi: z = D^-1 r. */
static int cg(struct split_run *s, const double *inv, double *r, double *q,
              double *z, struct spmv_error *err)
{
  int64_t r0 = s->r0, nl = s->nl;
  double *p = s->p, rr, rz, pq;
  int rc;

  if ((rc = start(s, r, &rr, err)) != 0)
    return rc;
  for (int64_t i = 0; i < nl; i++) {
    if (inv)
      z[i] = inv[i] * r[i];
    p[r0 + i] = z[i];
  }
  if (inv && allreduce(s, dot(r, z, nl), &rz) < 0)
    return -1;
  if (!inv)
    rz = rr;
  if (finished(s, sqrt(rr)))
    return 0;
  for (s->why = SPMVD_SOLVE_MAXITER; s->it < s->maxiter; ) {
    between(s);
    /* p is written again only after the next reduction, which every
     * block reaches once its product has read p's halo. */
    if ((rc = multiply_shared(s, p, q, err)) != 0 ||
        (rc = allreduce(s, dot(p + r0, q, nl), &pq)) != 0)
      return rc;
    if (!(pq > 0)) {
      s->why = isfinite(pq) && pq <= 0 ? SPMVD_SOLVE_INDEFINITE
                                       : SPMVD_SOLVE_BREAKDOWN;
      return 0;
    }
    double alpha = rz / pq, rz1;
    for (int64_t i = 0; i < nl; i++) {
      s->x[r0 + i] += alpha * p[r0 + i];
      r[i] -= alpha * q[i];
    }
    if (allreduce(s, dot(r, r, nl), &rr) < 0)
      return -1;
    iterated(s, sqrt(rr));
    if (finished(s, sqrt(rr)))
      return 0;
    if (inv) {
      for (int64_t i = 0; i < nl; i++)
        z[i] = inv[i] * r[i];
      if (allreduce(s, dot(r, z, nl), &rz1) < 0)
        return -1;
    } else {
      rz1 = rr;
    }
    double beta = rz1 / rz;
    rz = rz1;
    for (int64_t i = 0; i < nl; i++)
      p[r0 + i] = z[i] + beta * p[r0 + i];
  }
  return 0;
}

static int usable(double v)
{
  return v != 0 && isfinite(v);
}

/*
 * BiCGStab (van der Vorst), as on one worker: alpha and omega count as 0
 * where their divisor broke down, so that x takes only the sound part of
 * the step before the breakdown is reported.  w holds r-hat, v, t of this
 * block's rows (3 nl doubles).
 */
static int bicgstab(struct split_run *s, double *r, double *w,
                    struct spmv_error *err)
{
  int64_t r0 = s->r0, nl = s->nl;
  double *rh = w, *v = w + nl, *t = w + 2 * nl, *p = s->p, *sv = s->sv;
  double rr, rho, rho_old = 1, alpha = 1, omega = 1, rv, ts, tt;
  int rc;

  if ((rc = start(s, r, &rr, err)) != 0)
    return rc;
  memcpy(rh, r, sizeof *r * (size_t)nl);
  memset(v, 0, sizeof *v * (size_t)nl);
  for (int64_t i = 0; i < nl; i++)
    p[r0 + i] = 0;
  if (allreduce(s, dot(rh, r, nl), &rho) < 0)
    return -1;
  if (finished(s, sqrt(rr)))
    return 0;
  for (s->why = SPMVD_SOLVE_MAXITER; s->it < s->maxiter; ) {
    between(s);
    if (!usable(rho) || !usable(omega)) {
      s->why = SPMVD_SOLVE_BREAKDOWN;
      return 0;
    }
    double beta = (rho / rho_old) * (alpha / omega);
    for (int64_t i = 0; i < nl; i++)
      p[r0 + i] = r[i] + beta * (p[r0 + i] - omega * v[i]);
    if ((rc = multiply_shared(s, p, v, err)) != 0 ||
        (rc = allreduce(s, dot(rh, v, nl), &rv)) != 0)
      return rc;
    alpha = usable(rv) ? rho / rv : 0;
    for (int64_t i = 0; i < nl; i++)
      sv[r0 + i] = r[i] - alpha * v[i];
    if ((rc = multiply_shared(s, sv, t, err)) != 0 ||
        (rc = allreduce(s, dot(t, sv + r0, nl), &ts)) != 0 ||
        (rc = allreduce(s, dot(t, t, nl), &tt)) != 0)
      return rc;
    omega = usable(tt) ? ts / tt : 0;
    for (int64_t i = 0; i < nl; i++) {
      s->x[r0 + i] += alpha * p[r0 + i] + omega * sv[r0 + i];
      r[i] = sv[r0 + i] - omega * t[i];
    }
    rho_old = rho;
    if (allreduce(s, dot(rh, r, nl), &rho) < 0 ||
        allreduce(s, dot(r, r, nl), &rr) < 0)
      return -1;
    iterated(s, sqrt(rr));
    if (!usable(rv) || !usable(tt)) {
      s->why = SPMVD_SOLVE_BREAKDOWN;
      return 0;
    }
    if (finished(s, sqrt(rr)))
      return 0;
  }
  return 0;
}

/*
 * GMRES(m) with modified Gram-Schmidt, each coefficient an all-reduce:
 * every block holds its rows of the basis (V, (m + 1) nl doubles) and the
 * same Hessenberg matrix, so all take the same rotations and stop
 * together.  The vector multiplied goes through the shared p.  A cycle
 * that breaks down leaves x at the cycle's start, its last sound value.
 */
static int gmres(struct split_run *s, double *V, struct spmv_error *err)
{
  int64_t r0 = s->r0, nl = s->nl, ld = nl + 1;
  struct spmvd_arnoldi a;
  double beta, h;
  int rc = spmvd_arnoldi_new(&a, s->restart, err), j;

  for (s->why = SPMVD_SOLVE_MAXITER; rc == 0;) {
    double *r = V;
    if ((rc = start(s, r, &beta, err)) != 0)
      break;
    beta = sqrt(beta);
    if (finished(s, beta))
      break;
    for (int64_t i = 0; i < nl; i++)
      r[i] /= beta;
    spmvd_arnoldi_start(&a, beta);
    int stop = 0;
    for (j = 0; j < a.m && !stop; j++) {
      double *vj = V + j * ld, *w = V + (j + 1) * ld, *c = spmvd_arnoldi_column(&a, j);
      between(s);
      memcpy(s->p + r0, vj, sizeof *vj * (size_t)nl);
      if ((rc = multiply_shared(s, s->p, w, err)) != 0)
        break;
      for (int i = 0; i <= j && rc == 0; i++) {
        double *vi = V + i * ld;
        if ((rc = allreduce(s, dot(w, vi, nl), &c[i])) == 0)
          for (int64_t k = 0; k < nl; k++)
            w[k] -= c[i] * vi[k];
      }
      if (rc != 0 || (rc = allreduce(s, dot(w, w, nl), &h)) != 0)
        break;
      c[j + 1] = sqrt(h);
      for (int64_t k = 0; k < nl; k++)
        w[k] /= c[j + 1];  /* a zero norm: infinities the cycle never uses */
      int bad = 0;
      for (int i = 0; i <= j + 1; i++)
        bad |= !isfinite(c[i]);
      double est = spmvd_arnoldi_givens(&a, j);
      iterated(s, est);
      if (bad || c[j] == 0) {
        s->why = SPMVD_SOLVE_BREAKDOWN;
        goto out;
      }
      /* A zero h[j+1][j] (the lucky breakdown) makes est 0: converged. */
      stop = finished(s, est) || s->it >= s->maxiter;
    }
    if (rc != 0)
      break;
    spmvd_arnoldi_solve(&a, j);
    for (int i = 0; i < j; i++)
      for (int64_t k = 0; k < nl; k++)
        s->x[r0 + k] += a.y[i] * V[i * ld + k];
    if (stop)
      break;
  }
out:
  spmvd_arnoldi_free(&a);
  return rc;
}

/*
 * PageRank by the power iteration, as on one worker: each block writes its
 * rows of t = wt .* x into the shared p, multiplies its rows of A t, and
 * the dangling mass and the change's 1-norm are all-reduced; at the end x
 * is divided by its sum.  Every block computes the column weights of the
 * whole matrix (its host copy), so that a bad weight is the same EINVAL
 * from all.
 */
static int pagerank(struct split_run *s, struct spmv_error *err)
{
  int64_t r0 = s->r0, nl = s->nl, n = s->m->A.cols;
  const double *wt = spmvd_pagerank_weights(s->m, err);
  double *y = malloc(sizeof *y * (size_t)(nl + 1));
  double dn = s->damping / (double)n, tele = (1 - s->damping) / (double)n;
  double first, dm, sum;
  int rc = 0;

  /* Every block learns whether any failed before the first barrier. */
  if (allmin(s, wt && y ? 1.0 : 0.0, &first) < 0) {
    rc = -1;
    goto out;
  }
  if (first == 0) {
    if (!wt || !y) {
      rc = y ? err->code : spmv_error_set(err, SPMV_ENOMEM, "out of memory");
      s->agreed = wt == NULL && err->code == SPMV_EINVAL;
    } else {
      rc = spmv_error_set(err, SPMV_EWORKER, "pagerank: another block failed "
                          "to set up");
    }
    goto out;
  }
  if (!s->x0)
    for (int64_t i = 0; i < nl; i++)
      s->x[r0 + i] = 1.0 / (double)n;
  for (s->why = SPMVD_SOLVE_MAXITER; s->it < s->maxiter; ) {
    between(s);
    double dpart = 0, cpart = 0;
    for (int64_t i = 0; i < nl; i++) {
      s->p[r0 + i] = wt[r0 + i] * s->x[r0 + i];
      dpart += wt[r0 + i] == 0 ? s->x[r0 + i] : 0;
    }
    if ((rc = multiply_shared(s, s->p, y, err)) != 0 ||
        (rc = allreduce(s, dpart, &dm)) != 0)
      goto out;
    for (int64_t i = 0; i < nl; i++) {
      double xn = dn * dm + s->damping * y[i] + tele;
      cpart += fabs(xn - s->x[r0 + i]);
      s->x[r0 + i] = xn;
    }
    if ((rc = allreduce(s, cpart, &s->change)) != 0)
      goto out;
    iterated(s, s->change);
    if (!isfinite(s->change)) {
      s->why = SPMVD_SOLVE_BREAKDOWN;
      break;
    }
    if (s->change <= s->rtol) {
      s->why = SPMVD_SOLVE_RTOL;
      break;
    }
    if (s->stop) {
      s->why = SPMVD_SOLVE_CANCELLED;
      break;
    }
  }
  double part = 0;
  for (int64_t i = 0; i < nl; i++)
    part += s->x[r0 + i];
  if ((rc = allreduce(s, part, &sum)) != 0)
    goto out;
  for (int64_t i = 0; i < nl; i++)
    s->x[r0 + i] /= sum;
out:
  free(y);
  return rc;
}

/* The method's solve on this block: 0, or nonzero when it failed or was
 * aborted (s->aborted). */
static int run_method(struct split_run *s, const char *method,
                      struct spmv_error *err)
{
  int64_t nl = s->nl;
  int jacobi = strcmp(method, "pcg-jacobi") == 0;
  int bicg = strcmp(method, "bicgstab") == 0;
  int gm = strcmp(method, "gmres") == 0;
  /* CG: r, q, and z (D^-1 r) with Jacobi; BiCGStab: r, r-hat, v, t;
   * GMRES: its basis. */
  size_t words = (size_t)(nl + 1) *
                 (gm ? (size_t)s->restart + 1 : bicg || jacobi ? 4 : 2);
  double *buf = malloc(sizeof *buf * words), *inv = NULL;
  int rc;

  if (!buf)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  double *r = buf, *q = buf + nl + 1;
  if (gm) {
    rc = gmres(s, buf, err);
  } else if (bicg) {
    rc = bicgstab(s, r, q, err);
  } else {
    double *z = r;
    if (jacobi) {
      inv = q + nl + 1;
      z = inv + nl + 1;
      if ((rc = jacobi_setup(s, inv, err)) != 0) {
        free(buf);
        return rc;
      }
    }
    rc = cg(s, inv, r, q, z, err);
  }
  free(buf);
  return rc;
}

/* ||b - A x||^2 into *res2, once every block's x is in place. */
static int true_residual(struct split_run *s, double *res2,
                         struct spmv_error *err)
{
  double *q = malloc(sizeof *q * (size_t)(s->nl + 1));
  int rc;

  if (!q)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if ((rc = multiply_shared(s, s->x, q, err)) == 0) {
    for (int64_t i = 0; i < s->nl; i++)
      q[i] = s->b[s->r0 + i] - q[i];
    rc = allreduce(s, dot(q, q, s->nl), res2);
  }
  free(q);
  return rc;
}

/* The method, then the residual recomputed from x: where the method
 * claims convergence that it does not bear out, the method starts again
 * from x, at most SPMVD_SOLVE_REPLACEMENTS times within maxiter; then
 * "stagnated", or
 * "maxiter" at the limit.  Every block decides alike, on the same sums. */
static int run_checked(struct split_run *s, const char *method, double *res2,
                       struct spmv_error *err)
{
  for (int k = 0;; k++) {
    int rc = run_method(s, method, err);
    if (rc != 0 || (rc = true_residual(s, res2, err)) != 0)
      return rc;
    double res = sqrt(*res2), rt = s->rtol * sqrt(s->bb);
    int claimed = s->why == SPMVD_SOLVE_RTOL || s->why == SPMVD_SOLVE_ATOL;
    if (!claimed || res <= (rt > s->atol ? rt : s->atol) || !isfinite(res))
      return 0;
    if (s->it >= s->maxiter || k == SPMVD_SOLVE_REPLACEMENTS) {
      s->why = s->it >= s->maxiter ? SPMVD_SOLVE_MAXITER : SPMVD_SOLVE_STAGNATED;
      return 0;
    }
  }
}

/* This block's part of device vector id, as the front end made it: nl
 * values of dt; NULL with EPROTO otherwise. */
static struct wvec *block_part(struct split_run *s, json_int_t id,
                               struct spmv_error *err)
{
  struct wvec *v = spmvd_wk_vec(s->w, id);

  if (!v || v->n != s->nl || v->dtype != s->m->dtype) {
    spmv_error_set(err, SPMV_EPROTO, "solve-block: vector %lld is not this "
                   "block's part (%lld %s values)", (long long)id,
                   (long long)s->nl, spmv_dtype_name(s->m->dtype));
    return NULL;
  }
  return v;
}

/* dst[0 .. nl) = this block's part of device vector id, in double. */
static int part_in(struct split_run *s, json_int_t id, double *dst,
                   struct spmv_error *err)
{
  struct wvec *v = block_part(s, id, err);
  const struct spmvd_backend_ops *ops = s->w->ops;
  float *f = NULL;
  int rc;

  if (!v)
    return err->code;
  if (s->m->dtype == SPMV_F32 &&
      !(f = malloc(sizeof *f * (size_t)(s->nl + 1))))
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = ops->vec_download(s->w->be, v->bv, f ? (void *)f : (void *)dst, err);
  if (rc == 0)
    rc = ops->finish(s->w->be, NULL, 0, err);
  for (int64_t i = 0; rc == 0 && f && i < s->nl; i++)
    dst[i] = f[i];
  free(f);
  return rc;
}

/* This block's part of device vector id = src[0 .. nl), in its type. */
static int part_out(struct split_run *s, json_int_t id, const double *src,
                    struct spmv_error *err)
{
  struct wvec *v = block_part(s, id, err);
  const struct spmvd_backend_ops *ops = s->w->ops;
  float *f = NULL;
  int rc;

  if (!v)
    return err->code;
  if (s->m->dtype == SPMV_F32) {
    if (!(f = malloc(sizeof *f * (size_t)(s->nl + 1))))
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
    for (int64_t i = 0; i < s->nl; i++)
      f[i] = (float)src[i];
  }
  rc = ops->vec_upload(s->w->be, v->bv, f ? (const void *)f : (const void *)src,
                       err);
  if (rc == 0)
    rc = ops->finish(s->w->be, NULL, 0, err);
  free(f);
  return rc;
}

int spmvd_wk_op_solve_block(struct worker *w, json_t *req, int *fds, int nfds,
                            json_t **rep, struct spmv_error *err)
{
  json_int_t h, maxiter, restart = 30, seq = 0, progress = 0, bvec = 0, xvec = 0;
  double damping = 0.85;
  int x0 = 0, history = 0;
  double rtol, atol, res2 = 0, t0 = spmvd_wk_now_ms();
  const char *method = "cg";
  int nb, k, rc;
  struct spmvd_shm shm;
  struct wmatrix *m;

  if (json_unpack(req, "{sI sI si si sF sF sI s?s s?I s?F s?b s?b s?I s?I s?I}",
                  "seq", &seq, "handle", &h, "blocks", &nb, "block", &k, "rtol",
                  &rtol, "atol", &atol, "maxiter", &maxiter, "method", &method,
                  "restart", &restart, "damping", &damping, "x0", &x0,
                  "history", &history, "progress", &progress, "b_vec", &bvec,
                  "x_vec", &xvec) < 0 ||
      nfds != 1 || nb < 2 || nb > SPMV_SPLIT_MAX || k < 0 || k >= nb ||
      restart < 1 || restart > 1000 || progress < 0 ||
      (strcmp(method, "cg") != 0 && strcmp(method, "pcg-jacobi") != 0 &&
       strcmp(method, "bicgstab") != 0 && strcmp(method, "gmres") != 0 &&
       strcmp(method, "pagerank") != 0))
    return spmv_error_set(err, SPMV_EPROTO, "bad solve-block message");
  int fd;
  if (!(m = spmvd_wk_take_block(w, h, fds, &fd, err)))
    return err->code;
  int64_t n = m->A.rows, r1;
  spmvd_shm_init(&shm);
  if (spmvd_shm_map(&shm, fd, spmvd_split_shm_bytes((size_t)n), err) < 0)
    return err->code;
  struct split_run s = {.w = w, .m = m, .ctl = shm.addr, .nb = nb, .k = k,
                        .rtol = rtol, .atol = atol, .maxiter = maxiter,
                        .restart = (int)restart, .damping = damping, .x0 = x0,
                        .call = seq, .progress = progress, .t0 = t0,
                        .want_history = history};
  spmvd_wk_block_rows(m, &s.r0, &r1);
  s.nl = r1 - s.r0;
  s.b = (const double *)((char *)shm.addr + SPMVD_SPLIT_CTL_BYTES);
  s.x = (double *)s.b + n;
  s.p = s.x + n;
  s.sv = s.p + n;
  s.vf = (float *)((char *)shm.addr + spmvd_split_f32_off((size_t)n));
  if (m->dtype == SPMV_F32 &&
      !(s.yf = malloc(sizeof *s.yf * (size_t)(s.nl + 1)))) {
    /* Before any barrier: the others are told by abort. */
    atomic_store(&s.ctl->abort, 1);
    spmvd_shm_close(&shm);
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  }
  int pr = strcmp(method, "pagerank") == 0;
  /* Device vectors: this block's rows of b and of the start, before the
   * first barrier, which no block passes before all have written theirs. */
  rc = bvec ? part_in(&s, bvec, (double *)s.b + s.r0, err) : 0;
  if (rc == 0 && xvec)
    rc = part_in(&s, xvec, s.x + s.r0, err);
  if (rc != 0)
    atomic_store(&s.ctl->abort, 1);
  else {
    w->split_solving = 1;
    rc = pr ? pagerank(&s, err) : run_checked(&s, method, &res2, err);
    w->split_solving = 0;
  }
  /* Only this block's rows of x, which no other block writes. */
  if (rc == 0 && xvec)
    rc = part_out(&s, xvec, s.x + s.r0, err);
  if (rc == 0) {
    /* pagerank: the change's 1-norm, relative to the solution's sum. */
    double secs = (spmvd_wk_now_ms() - t0) / 1e3, bn = pr ? 1 : sqrt(s.bb);
    double res = pr ? s.change : sqrt(res2);
    *rep = json_pack("{ss sI sb ss so so so sf sf}", "method", method,
                     "iterations", (json_int_t)s.it, "converged",
                     s.why == SPMVD_SOLVE_RTOL || s.why == SPMVD_SOLVE_ATOL,
                     "reason", spmvd_solve_reason_name(s.why),
                     "residual", spmvd_ipc_real(res), "relative_residual",
                     spmvd_ipc_real(bn > 0 ? res / bn : res), "rhs_norm",
                     spmvd_ipc_real(bn), "seconds", secs, "us_per_iteration",
                     s.it > 0 ? secs * 1e6 / (double)s.it : 0.0);
    if (*rep && history) {
      json_t *hs = json_array();
      for (size_t i = 0; i < s.nhistory; i++)
        json_array_append_new(hs, spmvd_ipc_real(s.history[i]));
      json_object_set_new(*rep, "history", hs);
    }
  } else if (s.aborted) {
    rc = spmv_error_set(err, SPMV_EWORKER, "the split solve was "
                        SPMVD_SPLIT_ABORTED);
  } else if (!s.agreed) {
    atomic_store(&s.ctl->abort, 1);  /* this block failed: free the others */
  }
  free(s.history);
  free(s.yf);
  spmvd_shm_close(&shm);
  spmvd_wk_die_if_sticky(rc);
  return rc;
}
