/* spmv_profile.h: row-length statistics and the structural fingerprint. */
#ifndef SPMV_PROFILE_H
#define SPMV_PROFILE_H

#include <stdint.h>

#include "spmv_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bins of the row-length histogram: bin 0 holds empty rows, bin k >= 1 rows
 * whose length is in [2^(k-1), 2^k). */
#define SPMV_PROFILE_BINS 34

/* What the tuner and the models know of a matrix: computed from CSR alone. */
struct spmv_profile {
  int64_t rows, cols, nnz;
  int64_t rl_min, rl_max;   /* shortest and longest row */
  double rl_mean;           /* nnz / rows */
  double rl_sigma;          /* population standard deviation of row lengths */
  double rl_cv;             /* sigma / mean (the ELLR-T paper's Table 1), 0 when mean is 0 */
  int64_t hist[SPMV_PROFILE_BINS];
  int64_t empty_rows;
  double ell_fill;          /* rows * rl_max / nnz: ELL's stored / real entries */
  int64_t hyb_k;            /* HYB's ELL width: largest K with >= rows/3 rows of length >= K */
  int64_t ndiags;           /* occupied diagonals (distinct col - row) */
  double dia_fill;          /* ndiags * rows / nnz: DIA's stored / real entries */
  double col_locality;      /* share of consecutive entries of a row less than 32 columns apart */
};

/* Computes the profile of a valid CSR; returns 0 or SPMV_ENOMEM. */
int spmv_profile_compute(const struct spmv_csr *A, struct spmv_profile *p,
                         struct spmv_error *err);

/* The same with the pass over the columns split over nthreads threads (at
 * most SPMV_PAR_MAX, spmv_par.h): the same profile, to the bit. */
int spmv_profile_compute_threads(const struct spmv_csr *A,
                                 struct spmv_profile *p, int nthreads,
                                 struct spmv_error *err);

/* XXH3-128 over rows, cols, nnz, row offsets and column indices: the
 * structure only, so equal structure with other values gives equal prints. */
struct spmv_fingerprint {
  uint64_t hi, lo;
};

/* Computes the fingerprint of A's structure. */
void spmv_fingerprint_compute(const struct spmv_csr *A,
                              struct spmv_fingerprint *fp);

/* Writes the fingerprint as 32 lower-case hex digits and a NUL into out. */
void spmv_fingerprint_hex(const struct spmv_fingerprint *fp, char out[33]);

/* Parses 32 hex digits; returns 0 or SPMV_EINVAL. */
int spmv_fingerprint_parse(const char *hex, struct spmv_fingerprint *fp);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_PROFILE_H */
