/* spmv_mmio_build.h: triplets to CSR, the second half of the reader. */
#ifndef SPMV_MMIO_BUILD_H
#define SPMV_MMIO_BUILD_H

#include <stdint.h>

#include "spmv_csr.h"

/* How stored entries are mirrored. */
enum spmv_mmio_sym {
  SPMV_MMIO_GENERAL = 0,    /* no mirroring */
  SPMV_MMIO_SYMMETRIC = 1,  /* (i,j) also stored at (j,i) */
  SPMV_MMIO_SKEW = 2        /* (i,j) also stored at (j,i) with -v */
};

/* Entries as read, in file order, 0-based. */
struct spmv_mmio_triplets {
  int64_t n;       /* entries held */
  int32_t *row;    /* n row indices in [0, rows) */
  int32_t *col;    /* n column indices in [0, cols) */
  double *val;     /* n values */
};

/*
 * Builds a new CSR owned by the caller from t (borrowed): every entry, and
 * for a symmetric or skew-symmetric matrix the mirror of every
 * off-diagonal entry; columns sorted within each row; duplicates summed in
 * file order, their number stored in *duplicates.  Uses two stable
 * counting passes (by column, then by row), no comparison sort.  Returns 0
 * or SPMV_ENOMEM (message in err naming the file).
 */
int spmv_mmio_build_csr(const struct spmv_mmio_triplets *t, int64_t rows,
                        int64_t cols, enum spmv_mmio_sym sym, const char *name,
                        struct spmv_csr **out, int64_t *duplicates,
                        struct spmv_error *err)
    __attribute__((visibility("hidden")));

#endif /* SPMV_MMIO_BUILD_H */
