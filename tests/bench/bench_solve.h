/* bench_solve.h: what bench_solve.c (the driver and the service side),
 * bench_solve_gpu.c (the same methods in-process with cuSPARSE and
 * cuBLAS) and bench_solve_ref.c (the methods and the checks in double on
 * the host) share. */
#ifndef BENCH_SOLVE_H
#define BENCH_SOLVE_H

#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_types.h"

/* The methods compared, by spmvd's names (bsv_method_name). */
enum bsv_method { BSV_CG, BSV_BICGSTAB, BSV_PAGERANK };

/* What a solve is asked: its iteration limit, rtol (on ||r||_2 / ||b||_2;
 * pagerank: on the 1-norm of an iteration's change) and, for pagerank,
 * the damping. */
struct bsv_params {
  enum bsv_method method;
  int64_t maxiter;
  double rtol, damping;
};

/* What a solve did. */
struct bsv_run {
  int64_t iters;
  char reason[32];  /* spmvd's words: converged-rtol, maxiter, breakdown,
                       indefinite */
  double resid;     /* the recurrence's last ||r||_2 (pagerank: change) */
  double final;     /* ||b - A x||_2 / ||b||_2 recomputed at the end, as
                       spmvd's reply does (pagerank: NAN) */
  double ms;        /* wall clock of the method alone */
};

const char *bsv_method_name(enum bsv_method m);

/* r->reason = why. */
void bsv_reason(struct bsv_run *r, const char *why);

/* Ends an iteration whose residual norm (pagerank: change) is res, as
 * spmvd's stopping rule does against tol = rtol ||b||: counts it, keeps
 * res, and returns 1 with r->reason set when the method must stop (res
 * <= tol, not finite, or maxiter reached), else 0. */
int bsv_iterated(struct bsv_run *r, const struct bsv_params *p, double res,
                 double tol);

/* --- the host, in double (bench_solve_ref.c) --- */

/* ||b - A x||_2 / ||b||_2 from the CSR, a plain loop in double; *mag
 * (may be NULL) = || |b| + |A| |x| ||_2 / ||b||_2, the size of what the
 * residual's computation cancels. */
double bsv_relres(const struct spmv_csr *A, const double *b, const double *x,
                  double *mag);

/*
 * PageRank's weights as spmvd takes them (A[i][j] an edge j -> i): wt[j]
 * = 1 / (column j's sum), 0 where the column is empty, and dang[j] = 1
 * there, else 0 (both cols long, the caller's).
 */
void bsv_pr_weights(const struct spmv_csr *A, double *wt, double *dang);

/* ||G x - x||_1 for one power step G x = d A (wt .* x) + (d dang.x +
 * 1 - d) / n, recomputed in double: how far x is from the fixed point. */
double bsv_pr_step_change(const struct spmv_csr *A, double damping,
                          const double *x);

/* The method of p on A in double from x = 0 (pagerank: x = 1/n, no b),
 * the same recurrences and stopping rule as spmvd's; x receives the
 * solution (cols values).  0 or -1 (out of memory). */
int bsv_ref_solve(const struct spmv_csr *A, const struct bsv_params *p,
                  const double *b, double *x, struct bsv_run *r);

/* --- the device, in-process (bench_solve_gpu.c) --- */

/* Device 0 and the library handles; 0, 77 (no CUDA device) or 1. */
int bsv_gpu_init(char *device, size_t cap, char *versions, size_t vcap);
void bsv_gpu_fini(void);

/* A method's matrix resident for cuSPARSE and its vectors. */
struct bsv_prob;

/*
 * The in-process set-up of method m on A in dt: rp32 and val are A's
 * offsets and values already in the application's form (host, pageable,
 * borrowed); pagerank instead scales A's values into the column-
 * stochastic matrix A diag(wt) here, and uploads the dangling mask.  Then
 * bcs_csr_new (copies, descriptors, buffer, preprocess) and the method's
 * vectors.  *out a new problem, or -1 after a message.
 */
int bsv_prob_new(const struct spmv_csr *A, enum spmv_dtype dt,
                 enum bsv_method m, const int32_t *rp32, const void *val,
                 struct bsv_prob **out);
void bsv_prob_free(struct bsv_prob *p);

/*
 * One solve: b (rows values of dt, host; NULL for pagerank) uploaded,
 * then the method timed from x = 0 (pagerank 1/n) to its stop, ending
 * with a device sync, then x downloaded into x (cols values of dt; NULL:
 * not).  0 or -1.
 */
int bsv_prob_solve(struct bsv_prob *p, const struct bsv_params *par,
                   const void *b, void *x, struct bsv_run *r);

#endif /* BENCH_SOLVE_H */
