/* spmvd_arnoldi.h: the host's side of a GMRES(m) cycle, shared by the
 * solve on one worker and the split solve: the Hessenberg matrix, its
 * Givens rotations, the rotated residual and the small triangular solve. */
#ifndef SPMVD_ARNOLDI_H
#define SPMVD_ARNOLDI_H

#include "spmv_error.h"

/* One cycle of at most m steps; the arrays are owned. */
struct spmvd_arnoldi {
  int m;
  double *h;      /* column j of the Hessenberg matrix at h + j * (m + 1) */
  double *cs, *sn;/* the rotations made so far */
  double *g;      /* the rotated residual, m + 1 values */
  double *y;      /* the step's coefficients, m values */
};

/* Allocates a's arrays for m steps; 0 or SPMV_ENOMEM with err set (a is
 * then freed by spmvd_arnoldi_free all the same). */
int spmvd_arnoldi_new(struct spmvd_arnoldi *a, int m, struct spmv_error *err);
void spmvd_arnoldi_free(struct spmvd_arnoldi *a);

/* Column j of h (m + 1 values). */
double *spmvd_arnoldi_column(struct spmvd_arnoldi *a, int j);

/* Starts a cycle from a residual of norm beta: g = (beta, 0, ...). */
void spmvd_arnoldi_start(struct spmvd_arnoldi *a, double beta);

/* Applies the earlier rotations to column j, makes rotation j and updates
 * g; returns the new residual estimate |g[j + 1]|. */
double spmvd_arnoldi_givens(struct spmvd_arnoldi *a, int j);

/* y[0 .. k) solving the k x k upper triangle of the rotated h against g. */
void spmvd_arnoldi_solve(struct spmvd_arnoldi *a, int k);

#endif /* SPMVD_ARNOLDI_H */
