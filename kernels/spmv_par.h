/* spmv_par.h: passes over a whole matrix, split over threads. */
#ifndef SPMV_PAR_H
#define SPMV_PAR_H

#include <stdint.h>

#include "spmv_csr.h"

/* The most threads a pass takes. */
#define SPMV_PAR_MAX 16

/* Threads for a pass over nnz entries: 1 below a million entries (the
 * threads' start costs more than they save), else the online CPUs up to
 * SPMV_PAR_MAX. */
int spmv_par_threads(int64_t nnz);

/* A pass's work on rows [r0, r1) as part t of n. */
typedef void spmv_par_fn(void *ctx, int t, int64_t r0, int64_t r1);

/* Runs fn over n blocks of A's rows holding about equal numbers of
 * entries, on n threads (the calling thread among them; one where threads
 * cannot be started), and returns when all are done. */
void spmv_par_rows(const struct spmv_csr *A, int n, spmv_par_fn *fn,
                   void *ctx);

/* Runs fn over n equal blocks of [0, len) (r0, r1 its bounds), as
 * spmv_par_rows does over rows: for passes over a vector. */
void spmv_par_range(int64_t len, int n, spmv_par_fn *fn, void *ctx);

/* The rows of A with at least k entries, counted over n threads. */
int64_t spmv_par_rows_at_least(const struct spmv_csr *A, int64_t k, int n);

/* spmv_csr_validate() with the entries' pass split over n threads; the
 * same result and message. */
int spmv_par_validate(const struct spmv_csr *A, unsigned flags, int n,
                      struct spmv_error *err);

#endif /* SPMV_PAR_H */
