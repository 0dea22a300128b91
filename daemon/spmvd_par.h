/* spmvd_par.h: the worker's passes over a whole matrix, split over threads. */
#ifndef SPMVD_PAR_H
#define SPMVD_PAR_H

#include <stdint.h>

#include "spmv_csr.h"

/* The most threads a pass takes. */
#define SPMVD_PAR_MAX 16

/* Threads for a pass over nnz entries: 1 below a million entries (the
 * threads' start costs more than they save), else the online CPUs up to
 * SPMVD_PAR_MAX. */
int spmvd_par_threads(int64_t nnz);

/* A pass's work on rows [r0, r1) as part t of n. */
typedef void spmvd_par_fn(void *ctx, int t, int64_t r0, int64_t r1);

/* Runs fn over n blocks of A's rows holding about equal numbers of
 * entries, on n threads (the calling thread among them; one where threads
 * cannot be started), and returns when all are done. */
void spmvd_par_rows(const struct spmv_csr *A, int n, spmvd_par_fn *fn,
                    void *ctx);

/* spmv_csr_validate() with the entries' pass split over
 * spmvd_par_threads() threads; the same result and message. */
int spmvd_par_validate(const struct spmv_csr *A, unsigned flags,
                       struct spmv_error *err);

#endif /* SPMVD_PAR_H */
