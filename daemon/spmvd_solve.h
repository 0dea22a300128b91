/* spmvd_solve.h: the solvers that spmvd-worker runs for a solve request
 * (PROTOCOL.md, solve), written against the backend's vector interface
 * only, so that every backend runs them.  Internal to spmvd-worker. */
#ifndef SPMVD_SOLVE_H
#define SPMVD_SOLVE_H

#include <stddef.h>

#include <jansson.h>

#include "spmv_error.h"
#include "spmvd_backend.h"
#include "spmvd_worker_impl.h"

/* The most residuals a reply's history holds: the first ones.  A reply is
 * one worker message (SPMVD_IPC_MAX_BYTES) and one frame the client
 * reads (1 MiB of JSON), at about 25 bytes a residual. */
#define SPMVD_SOLVE_HISTORY_MAX 8000

/* Why a method stopped (PROTOCOL.md's table). */
enum spmvd_solve_reason {
  SPMVD_SOLVE_RUNNING,
  SPMVD_SOLVE_RTOL,
  SPMVD_SOLVE_ATOL,
  SPMVD_SOLVE_MAXITER,
  SPMVD_SOLVE_BREAKDOWN,
  SPMVD_SOLVE_INDEFINITE,
  SPMVD_SOLVE_CANCELLED,      /* its client sent cancel */
  SPMVD_SOLVE_STAGNATED       /* converged by the recurrence, not in fact */
};

#define SPMVD_SOLVE_MAX_TMP 1040  /* temporaries of one solve (gmres: m + 4) */

/* How many times a method whose recurrence claims a convergence that the
 * residual recomputed from x does not bear out starts again from x. */
#define SPMVD_SOLVE_REPLACEMENTS 3

/* The stopping rule on residual norm r: a norm that is not finite is a
 * breakdown, then atol before tol (rtol's share of ||b||); RUNNING when
 * none applies. */
enum spmvd_solve_reason spmvd_solve_stop_rule(double r, double atol, double tol);

/* The protocol's name of reason r ("converged-rtol", ...). */
const char *spmvd_solve_reason_name(enum spmvd_solve_reason r);

/* inv[i - r0] = 1 / A's diagonal entry of row i for rows r0 .. r1 (r1
 * excluded); returns the first of those rows whose diagonal entry is zero,
 * missing or not finite, or -1 when there is none (pcg-jacobi's). */
int64_t spmvd_solve_inverse_diagonal(const struct spmv_csr *A, int64_t r0,
                                     int64_t r1, double *inv);

/* One solve on the worker: its matrix, vectors, parameters and outcome.
 * The solve owns its temporaries (tmp), freed by spmvd_solve_fini(). */
struct spmvd_solve {
  struct worker *w;
  const struct spmvd_backend_ops *ops;
  struct spmvd_backend *be;
  struct wmatrix *m;
  enum spmv_dtype dt;
  size_t rows, cols;
  struct spmvd_bvector *b, *x;    /* borrowed (device vectors or tmp) */
  int x_given;                    /* x holds an initial guess */
  /* parameters */
  double rtol, atol, damping;
  long long maxiter, progress;
  int restart, want_history;
  json_int_t seq;
  /* outcome */
  double bnorm, tol, resid;       /* resid: the recurrence's, after each iteration */
  long long iters;
  enum spmvd_solve_reason reason;
  double *history;                /* owned, iters values */
  size_t history_cap;
  double t0;
  struct spmvd_bvector *tmp[SPMVD_SOLVE_MAX_TMP];
  int ntmp;
};

/* A new temporary vector of n values (zero), owned by s. */
int spmvd_solve_vec(struct spmvd_solve *s, size_t n, struct spmvd_bvector **out,
                    struct spmv_error *err);
/* A constant scalar, and c * res[i] / res[j] (i or j < 0: none). */
struct spmvd_scalar spmvd_solve_k(double c);
struct spmvd_scalar spmvd_solve_e(double c, int mul, int div);
/* The same, a value that is not finite counting as 0 (a breakdown the
 * host sees only after the list then leaves the vector as it was). */
struct spmvd_scalar spmvd_solve_ef(double c, int mul, int div);
/* Queues y = a*x + b*y, z = x .* y, res[slot] = x . y / ||x||, y = x, x = a. */
int spmvd_solve_axpby(struct spmvd_solve *s, struct spmvd_bvector *x,
                      struct spmvd_bvector *y, struct spmvd_scalar a,
                      struct spmvd_scalar b, struct spmv_error *err);
int spmvd_solve_mul(struct spmvd_solve *s, struct spmvd_bvector *x,
                    struct spmvd_bvector *y, struct spmvd_bvector *z,
                    struct spmv_error *err);
int spmvd_solve_dot(struct spmvd_solve *s, struct spmvd_bvector *x,
                    struct spmvd_bvector *y, int slot, struct spmv_error *err);
int spmvd_solve_nrm2(struct spmvd_solve *s, struct spmvd_bvector *x, int slot,
                     struct spmv_error *err);
int spmvd_solve_asum(struct spmvd_solve *s, struct spmvd_bvector *x, int slot,
                     struct spmv_error *err);
int spmvd_solve_copy(struct spmvd_solve *s, struct spmvd_bvector *x,
                     struct spmvd_bvector *y, struct spmv_error *err);
int spmvd_solve_scale(struct spmvd_solve *s, struct spmvd_bvector *x,
                      struct spmvd_scalar a, struct spmv_error *err);
int spmvd_solve_fill(struct spmvd_solve *s, struct spmvd_bvector *x,
                     struct spmvd_scalar a, struct spmv_error *err);
/* Queues y = alpha*A*x + beta*y. */
int spmvd_solve_spmv(struct spmvd_solve *s, double alpha,
                     struct spmvd_bvector *x, double beta,
                     struct spmvd_bvector *y, struct spmv_error *err);
/* Waits for what was queued; res[0..n) the results. */
int spmvd_solve_finish(struct spmvd_solve *s, double *res, int n,
                       struct spmv_error *err);
/* Queues r = b - A x. */
int spmvd_solve_residual(struct spmvd_solve *s, struct spmvd_bvector *r,
                         struct spmv_error *err);

/* v = vals (n doubles, borrowed, converted to the solve's dtype), waited
 * for. */
int spmvd_solve_upload(struct spmvd_solve *s, struct spmvd_bvector *v,
                       const double *vals, size_t n, struct spmv_error *err);

/* Whether residual norm r meets the tolerance: sets s->reason to
 * converged-atol or -rtol and returns 1; a non-finite r is a breakdown
 * (returns 1 too); else 0. */
int spmvd_solve_converged(struct spmvd_solve *s, double r);
/* Ends an iteration whose residual norm is r: counts it, keeps the
 * history, sends the progress event, serves the front end's requests and
 * sets maxiter when reached.  Returns 1 when the method must stop (a
 * reason is set: "cancelled" when its client asked), 0 to go on,
 * SPMV_ECLOSED when the solve was dropped (its client went away),
 * SPMV_ENOMEM. */
int spmvd_solve_iterated(struct spmvd_solve *s, double r,
                         struct spmv_error *err);
/* Sends the front end a solve's progress event for call seq: done of total
 * iterations, residual norm r, elapsed_s since the start. */
void spmvd_solve_send_progress(struct worker *w, json_int_t seq, int64_t done,
                               int64_t total, double r, double elapsed_s);

/* The methods: run from x (the initial guess) until a reason is set;
 * 0 or a negative code. */
int spmvd_solve_cg(struct spmvd_solve *s, int jacobi, struct spmv_error *err);
int spmvd_solve_bicgstab(struct spmvd_solve *s, struct spmv_error *err);
int spmvd_solve_gmres(struct spmvd_solve *s, struct spmv_error *err);
int spmvd_solve_pagerank(struct spmvd_solve *s, struct spmv_error *err);

/* m's PageRank column weights (1 / column sum, 0 where dangling), cols
 * values computed once and kept with m; NULL with err set (EINVAL naming
 * an entry that is negative or not finite, ENOMEM). */
const double *spmvd_pagerank_weights(struct wmatrix *m, struct spmv_error *err);

#endif /* SPMVD_SOLVE_H */
