/* spmvd_solve_krylov.c: the Krylov methods of a solve (CG, PCG with the
 * Jacobi preconditioner, BiCGStab, GMRES(m)) on the backend's vectors:
 * each iteration queued as one list whose coefficients come from the
 * list's own dots where they can, with one wait (finish) per iteration. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_arnoldi.h"
#include "spmvd_solve.h"

/* Shorthands for the scalars of the lists. */
#define K(c) spmvd_solve_k(c)
#define E(c, mul, div) spmvd_solve_e((c), (mul), (div))

/* --- CG and PCG-Jacobi --- */

int64_t spmvd_solve_inverse_diagonal(const struct spmv_csr *A, int64_t r0,
                                     int64_t r1, double *inv)
{
  int64_t bad = -1;

  for (int64_t i = r0; i < r1; i++) {
    double a = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      if (A->col_idx[k] == i)
        a += A->val[k];
    if ((a == 0 || !isfinite(a)) && bad < 0)
      bad = i;
    inv[i - r0] = 1.0 / a;
  }
  return bad;
}

/* The inverse of A's diagonal, uploaded to d; a zero or missing diagonal
 * entry is EINVAL naming its row. */
static int jacobi(struct spmvd_solve *s, struct spmvd_bvector *d,
                  struct spmv_error *err)
{
  const struct spmv_csr *A = &s->m->A;
  double *inv = malloc((size_t)(A->rows ? A->rows : 1) * sizeof *inv);
  int64_t bad;
  int rc;

  if (!inv)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if ((bad = spmvd_solve_inverse_diagonal(A, 0, A->rows, inv)) >= 0)
    rc = spmv_error_set(err, SPMV_EINVAL, "pcg-jacobi: row %lld has a zero "
                        "or missing diagonal entry", (long long)bad);
  else
    rc = spmvd_solve_upload(s, d, inv, (size_t)A->rows, err);
  free(inv);
  return rc;
}

/*
 * CG, pipelined so that p.Ap is known before it is used: the list of
 * iteration k applies alpha = rho / pq (both read at the last wait), then
 * computes rho' = r.z and the next p, q = A p and p.q, which the host
 * checks (p.q <= 0: indefinite) before the next list uses them.  Slots:
 * 0 rho', 1 p.q, 2 ||r||.  With jacobi, z = D^-1 r, else z is r.
 */
int spmvd_solve_cg(struct spmvd_solve *s, int jac, struct spmv_error *err)
{
  struct spmvd_bvector *r, *p, *q, *z = NULL, *d = NULL;
  double res[3];
  int rc;

  if ((rc = spmvd_solve_vec(s, s->rows, &r, err)) < 0 ||
      (rc = spmvd_solve_vec(s, s->rows, &p, err)) < 0 ||
      (rc = spmvd_solve_vec(s, s->rows, &q, err)) < 0)
    return rc;
  if (jac && ((rc = spmvd_solve_vec(s, s->rows, &z, err)) < 0 ||
              (rc = spmvd_solve_vec(s, s->rows, &d, err)) < 0 ||
              (rc = jacobi(s, d, err)) < 0))
    return rc;
  if (!jac)
    z = r;
  /* r = b - A x, z, p = z, q = A p, rho, p.q, ||r||. */
  if ((rc = spmvd_solve_residual(s, r, err)) < 0 ||
      (jac && (rc = spmvd_solve_mul(s, d, r, z, err)) < 0) ||
      (rc = spmvd_solve_copy(s, z, p, err)) < 0 ||
      (rc = spmvd_solve_spmv(s, 1, p, 0, q, err)) < 0 ||
      (rc = spmvd_solve_dot(s, r, z, 0, err)) < 0 ||
      (rc = spmvd_solve_dot(s, p, q, 1, err)) < 0 ||
      (rc = spmvd_solve_nrm2(s, r, 2, err)) < 0 ||
      (rc = spmvd_solve_finish(s, res, 3, err)) < 0)
    return rc;
  if (spmvd_solve_converged(s, res[2]))
    return 0;
  for (;;) {
    double rho = res[0], pq = res[1];
    if (!(pq > 0)) {
      s->reason = isnan(pq) ? SPMVD_SOLVE_BREAKDOWN : SPMVD_SOLVE_INDEFINITE;
      return 0;
    }
    if (rho == 0 || !isfinite(rho)) {
      s->reason = SPMVD_SOLVE_BREAKDOWN;
      return 0;
    }
    double alpha = rho / pq;
    if ((rc = spmvd_solve_axpby(s, p, s->x, K(alpha), K(1), err)) < 0 ||
        (rc = spmvd_solve_axpby(s, q, r, K(-alpha), K(1), err)) < 0 ||
        (jac && (rc = spmvd_solve_mul(s, d, r, z, err)) < 0) ||
        (rc = spmvd_solve_dot(s, r, z, 0, err)) < 0 ||
        (rc = spmvd_solve_nrm2(s, r, 2, err)) < 0 ||
        /* p = z + (rho' / rho) p, rho' on the device */
        (rc = spmvd_solve_axpby(s, z, p, K(1), E(1.0 / rho, 0, -1), err)) < 0 ||
        (rc = spmvd_solve_spmv(s, 1, p, 0, q, err)) < 0 ||
        (rc = spmvd_solve_dot(s, p, q, 1, err)) < 0 ||
        (rc = spmvd_solve_finish(s, res, 3, err)) < 0)
      return rc;
    if ((rc = spmvd_solve_iterated(s, res[2], err)) != 0)
      return rc < 0 ? rc : 0;
  }
}

/* --- BiCGStab --- */

/* Whether v is a usable divisor. */
static int usable(double v)
{
  return v != 0 && isfinite(v);
}

/*
 * BiCGStab (van der Vorst): one list an iteration, alpha = rho / (rhat.v)
 * and omega = (t.s) / (t.t) taken from its own dots (slots 0, 1, 2), the
 * next rho (slot 3) and ||r|| (slot 4) read at its wait; the host checks
 * rho, rhat.v and omega for a breakdown.
 */
int spmvd_solve_bicgstab(struct spmvd_solve *s, struct spmv_error *err)
{
  struct spmvd_bvector *r, *rh, *p, *v, *sv, *t;
  double res[5], rho, rho_old = 1, alpha = 1, omega = 1;
  int rc;

  if ((rc = spmvd_solve_vec(s, s->rows, &r, err)) < 0 ||
      (rc = spmvd_solve_vec(s, s->rows, &rh, err)) < 0 ||
      (rc = spmvd_solve_vec(s, s->rows, &p, err)) < 0 ||
      (rc = spmvd_solve_vec(s, s->rows, &v, err)) < 0 ||
      (rc = spmvd_solve_vec(s, s->rows, &sv, err)) < 0 ||
      (rc = spmvd_solve_vec(s, s->rows, &t, err)) < 0)
    return rc;
  if ((rc = spmvd_solve_residual(s, r, err)) < 0 ||
      (rc = spmvd_solve_copy(s, r, rh, err)) < 0 ||
      (rc = spmvd_solve_dot(s, rh, r, 3, err)) < 0 ||
      (rc = spmvd_solve_nrm2(s, r, 4, err)) < 0 ||
      (rc = spmvd_solve_finish(s, res, 5, err)) < 0)
    return rc;
  if (spmvd_solve_converged(s, res[4]))
    return 0;
  for (;;) {
    rho = res[3];
    if (!usable(rho) || !usable(omega)) {
      s->reason = SPMVD_SOLVE_BREAKDOWN;
      return 0;
    }
    double beta = (rho / rho_old) * (alpha / omega);
    if ((rc = spmvd_solve_axpby(s, v, p, K(-omega), K(1), err)) < 0 ||
        (rc = spmvd_solve_axpby(s, r, p, K(1), K(beta), err)) < 0 ||
        (rc = spmvd_solve_spmv(s, 1, p, 0, v, err)) < 0 ||
        (rc = spmvd_solve_dot(s, rh, v, 0, err)) < 0 ||
        /* s = r - alpha v, alpha = rho / slot 0 */
        (rc = spmvd_solve_copy(s, r, sv, err)) < 0 ||
        (rc = spmvd_solve_axpby(s, v, sv, spmvd_solve_ef(-rho, -1, 0), K(1),
                                err)) < 0 ||
        (rc = spmvd_solve_spmv(s, 1, sv, 0, t, err)) < 0 ||
        (rc = spmvd_solve_dot(s, t, sv, 1, err)) < 0 ||
        (rc = spmvd_solve_dot(s, t, t, 2, err)) < 0)
      return rc;
    /* alpha and omega count as 0 where their divisor broke down (the host
     * sees it after this list): x then keeps its last value or takes only
     * the sound part of the step (s = r, or x + alpha p). */
    struct spmvd_scalar om = spmvd_solve_ef(1, 1, 2), nom = E(-1, 1, 2);
    if ((rc = spmvd_solve_axpby(s, p, s->x, spmvd_solve_ef(rho, -1, 0), K(1),
                                err)) < 0 ||
        (rc = spmvd_solve_axpby(s, sv, s->x, om, K(1), err)) < 0 ||
        (rc = spmvd_solve_copy(s, sv, r, err)) < 0 ||
        (rc = spmvd_solve_axpby(s, t, r, nom, K(1), err)) < 0 ||
        (rc = spmvd_solve_dot(s, rh, r, 3, err)) < 0 ||
        (rc = spmvd_solve_nrm2(s, r, 4, err)) < 0 ||
        (rc = spmvd_solve_finish(s, res, 5, err)) < 0)
      return rc;
    if (!usable(res[0]) || !usable(res[2])) {
      s->reason = SPMVD_SOLVE_BREAKDOWN;
      s->iters++;
      return 0;
    }
    rho_old = rho;
    alpha = rho / res[0];
    omega = res[1] / res[2];
    if ((rc = spmvd_solve_iterated(s, res[4], err)) != 0)
      return rc < 0 ? rc : 0;
  }
}

/* --- GMRES(m) --- */

/* x += V y, y solving the k x k triangle R y = g. */
static int update_x(struct spmvd_solve *s, struct spmvd_arnoldi *a,
                    struct spmvd_bvector **V, int k, struct spmv_error *err)
{
  int rc;

  spmvd_arnoldi_solve(a, k);
  for (int i = 0; i < k; i++)
    if ((rc = spmvd_solve_axpby(s, V[i], s->x, K(a->y[i]), K(1), err)) < 0)
      return rc;
  return 0;
}

/* The dots of modified Gram-Schmidt run in chunks of this many results,
 * each read at a wait (a list holds SPMVD_MAX_RESULTS). */
#define MGS_CHUNK (SPMVD_MAX_RESULTS - 2)

/* Arnoldi step j: V[j+1] = A V[j] orthogonalized against V[0..j] by
 * modified Gram-Schmidt (each coefficient from the dot just before it,
 * on the device), then normalized; column j of h read at the waits. */
static int arnoldi_step(struct spmvd_solve *s, struct spmvd_arnoldi *a,
                        struct spmvd_bvector **V, int j,
                        struct spmv_error *err)
{
  double *c = spmvd_arnoldi_column(a, j), res[SPMVD_MAX_RESULTS];
  struct spmvd_bvector *w = V[j + 1];
  int rc, from = 0;

  if ((rc = spmvd_solve_spmv(s, 1, V[j], 0, w, err)) < 0)
    return rc;
  for (int i = 0; i <= j; i++) {
    int slot = i - from;
    if ((rc = spmvd_solve_dot(s, w, V[i], slot, err)) < 0 ||
        (rc = spmvd_solve_axpby(s, V[i], w, E(-1, slot, -1), K(1), err)) < 0)
      return rc;
    if (slot + 1 == MGS_CHUNK && i < j) {
      if ((rc = spmvd_solve_finish(s, res, slot + 1, err)) < 0)
        return rc;
      memcpy(c + from, res, (size_t)(slot + 1) * sizeof *res);
      from = i + 1;
    }
  }
  int n = j + 1 - from;
  /* A zero norm (the exact solution is in the space) gives infinities in
   * V[j+1], which the cycle then never uses. */
  if ((rc = spmvd_solve_nrm2(s, w, n, err)) < 0 ||
      (rc = spmvd_solve_scale(s, w, E(1, -1, n), err)) < 0 ||
      (rc = spmvd_solve_finish(s, res, n + 1, err)) < 0)
    return rc;
  memcpy(c + from, res, (size_t)n * sizeof *res);
  c[j + 1] = res[n];
  return 0;
}

/* One cycle's start: V[0] = r / ||r||, g = (||r||, 0, ...); *beta is
 * ||r||. */
static int cycle_start(struct spmvd_solve *s, struct spmvd_arnoldi *a,
                       struct spmvd_bvector **V, double *beta,
                       struct spmv_error *err)
{
  int rc;

  if ((rc = spmvd_solve_residual(s, V[0], err)) < 0 ||
      (rc = spmvd_solve_nrm2(s, V[0], 0, err)) < 0 ||
      (rc = spmvd_solve_scale(s, V[0], E(1, -1, 0), err)) < 0 ||
      (rc = spmvd_solve_finish(s, beta, 1, err)) < 0)
    return rc;
  spmvd_arnoldi_start(a, *beta);
  return 0;
}

/* One cycle of at most m Arnoldi steps, x updated at its end; *done when
 * the method stops (a reason set). */
static int cycle(struct spmvd_solve *s, struct spmvd_arnoldi *a,
                 struct spmvd_bvector **V, int *done, struct spmv_error *err)
{
  double beta;
  int rc, j, stop = 0;

  if ((rc = cycle_start(s, a, V, &beta, err)) < 0)
    return rc;
  if (spmvd_solve_converged(s, beta)) {
    *done = 1;
    return 0;
  }
  for (j = 0; j < a->m && !stop; j++) {
    if ((rc = arnoldi_step(s, a, V, j, err)) < 0)
      return rc;
    double *c = spmvd_arnoldi_column(a, j);
    int bad = 0;
    for (int i = 0; i <= j + 1; i++)
      bad |= !isfinite(c[i]);
    double est = spmvd_arnoldi_givens(a, j);
    if (bad || c[j] == 0) {
      s->reason = SPMVD_SOLVE_BREAKDOWN;
      s->iters++;
      *done = 1;
      return 0;   /* x stays the cycle's start: its last sound value */
    }
    /* A zero h[j+1][j] (the lucky breakdown) makes est 0: converged. */
    rc = spmvd_solve_iterated(s, est, err);
    if (rc < 0)
      return rc;
    stop = rc;
  }
  *done = stop;
  return update_x(s, a, V, j, err);
}

/* GMRES(m): cycles of m steps, each from the residual of the last one. */
int spmvd_solve_gmres(struct spmvd_solve *s, struct spmv_error *err)
{
  int m = s->restart, done = 0, rc;
  struct spmvd_bvector **V = calloc((size_t)m + 1, sizeof *V);
  struct spmvd_arnoldi a;

  memset(&a, 0, sizeof a);
  rc = V ? spmvd_arnoldi_new(&a, m, err)
         : spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  for (int i = 0; rc == 0 && i <= m; i++)
    rc = spmvd_solve_vec(s, s->rows, &V[i], err);
  while (rc == 0 && !done)
    rc = cycle(s, &a, V, &done, err);
  spmvd_arnoldi_free(&a);
  free(V);
  return rc;
}
