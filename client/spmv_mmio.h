/* spmv_mmio.h: the Matrix Market reader (clients read their own files). */
#ifndef SPMV_MMIO_H
#define SPMV_MMIO_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the banner and size line said, and what reading did with it. */
struct spmv_mmio_info {
  char format[16];     /* "coordinate" or "array" */
  char field[16];      /* "real", "integer" or "pattern" */
  char symmetry[16];   /* "general", "symmetric" or "skew-symmetric" */
  int64_t rows, cols;
  int64_t entries;     /* data lines declared (coordinate) or rows*cols stored (array) */
  int64_t duplicates;  /* entries summed into an earlier one */
};

/*
 * Reads a Matrix Market file (plain or gzip-compressed, detected from the
 * content) into a new CSR owned by the caller: columns sorted within each
 * row, duplicates summed, explicit zeros kept, symmetric and skew-symmetric
 * files mirrored as scipy.io.mmread does.  info may be NULL.  Returns 0, or
 * SPMV_EIO / SPMV_EPARSE / SPMV_EUNSUPPORTED / SPMV_ENOMEM with a message
 * naming the file, the line and the problem; *out is then untouched.
 */
int spmv_mmio_read(const char *path, struct spmv_csr **out,
                   struct spmv_mmio_info *info, struct spmv_error *err);

/* The same from a buffer in memory (uncompressed text); name is used in
 * messages. */
int spmv_mmio_parse(const char *buf, size_t len, const char *name,
                    struct spmv_csr **out, struct spmv_mmio_info *info,
                    struct spmv_error *err);

/*
 * Reads a dense vector from a Matrix Market array file of one column
 * ("%%MatrixMarket matrix array real general", "ROWS 1", ROWS values, plain
 * or gzip) into a new array owned by the caller (*out, *n values).  Errors
 * as spmv_mmio_read() (EPARSE naming the file and the line of a bad value
 * or a wrong count), and EPARSE for a coordinate file or more columns.
 */
int spmv_mmio_read_vector(const char *path, double **out, int64_t *n,
                          struct spmv_error *err);

/* Writes x (n values) as such a file, each value with %.17g so that it
 * reads back to the same double.  Errors: SPMV_EIO naming the file. */
int spmv_mmio_write_vector(const char *path, const double *x, int64_t n,
                           struct spmv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_MMIO_H */
