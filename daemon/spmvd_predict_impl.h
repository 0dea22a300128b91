/* spmvd_predict_impl.h: what the predictor's modules share and nothing
 * outside them uses (spmvd_predict.h is their public face). */
#ifndef SPMVD_PREDICT_IMPL_H
#define SPMVD_PREDICT_IMPL_H

#include "spmvd_predict.h"

/* csr-vector's calibration: its P sweep at I = SPMVD_VEC_I_CAL strips,
 * its I sweep at P = SPMVD_VEC_P_CAL (the plan's points and the fit's
 * lines). */
#define SPMVD_VEC_I_CAL 1
#define SPMVD_VEC_P_CAL 16

/* The largest least-squares system: the work model's terms. */
#define SPMVD_LSQ_MAX SPMVD_WORK_TERMS

/* Solves the n x n system M x = r (M, r overwritten) by Gaussian
 * elimination with partial pivoting; returns 0, or -1 when singular. */
int spmvd_predict_solve(double M[SPMVD_LSQ_MAX][SPMVD_LSQ_MAX],
                        double r[SPMVD_LSQ_MAX], int n,
                        double x[SPMVD_LSQ_MAX]);

/* The terms of fit f's work model for configuration cfg at features x:
 * spmvd_predict_work_basis on f's device, with csr-scalar's block share
 * for 4-byte values (spmvd_predict_block_share). */
void spmvd_predict_fit_terms(const struct spmvd_fit *f,
                             const struct spmv_config *cfg,
                             const struct spmvd_pfeat *x,
                             double phi[SPMVD_WORK_TERMS]);

/* The term of cfg's work basis that a leaf fits only where enough of its
 * points hold it, and in *ref the term its share is taken of; -1 when
 * none. */
int spmvd_predict_guarded_term(const struct spmv_config *cfg, int *ref);

/* Fit f's work model at features x (its trees' time, us; not floored). */
double spmvd_predict_work_eval(const struct spmvd_fit *f,
                               const struct spmvd_pfeat *x);

#endif /* SPMVD_PREDICT_IMPL_H */
