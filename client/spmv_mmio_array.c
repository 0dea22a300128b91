/* spmv_mmio_array.c: dense vectors as Matrix Market array files (one
 * column), read through the matrix reader and written with %.17g. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_mmio.h"

/* Checks that the file read was an array of one column; 0 or EPARSE. */
static int check_vector_shape(const char *path,
                              const struct spmv_mmio_info *info,
                              struct spmv_error *err)
{
  if (strcmp(info->format, "array") != 0)
    return spmv_error_set(err, SPMV_EPARSE,
                          "%s:1: a vector is a Matrix Market array file, "
                          "not %s", path, info->format);
  if (info->cols != 1)
    return spmv_error_set(err, SPMV_EPARSE,
                          "%s: the size line says %lld x %lld: a vector is an "
                          "array of one column", path, (long long)info->rows,
                          (long long)info->cols);
  return 0;
}

/* Reads a vector from an array file; see spmv_mmio.h. */
int spmv_mmio_read_vector(const char *path, double **out, int64_t *n,
                          struct spmv_error *err)
{
  struct spmv_mmio_info info;
  struct spmv_csr *A = NULL;
  double *v;
  int64_t i, k;
  int rc;

  if (out == NULL || n == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "spmv_mmio_read_vector: no output");
  /* The matrix reader checks the banner, the size line, each value and
   * the count, naming the line; an array keeps its zeros explicit. */
  rc = spmv_mmio_read(path, &A, &info, err);
  if (rc != 0)
    return rc;
  if ((rc = check_vector_shape(path, &info, err)) != 0)
    goto out;
  v = calloc((size_t)A->rows + 1, sizeof *v);
  if (v == NULL) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "%s: out of memory for %lld values",
                        path, (long long)A->rows);
    goto out;
  }
  for (i = 0; i < A->rows; i++)
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      v[i] += A->val[k];
  *out = v;
  *n = A->rows;
out:
  spmv_csr_free(A);
  return rc;
}

/* Writes a vector as an array file; see spmv_mmio.h. */
int spmv_mmio_write_vector(const char *path, const double *x, int64_t n,
                           struct spmv_error *err)
{
  FILE *f;
  int64_t i;
  int bad;

  if (path == NULL || (x == NULL && n > 0) || n < 0)
    return spmv_error_set(err, SPMV_EINVAL, "spmv_mmio_write_vector: no path, "
                          "no values or a negative length");
  f = fopen(path, "w");
  if (f == NULL)
    return spmv_error_set(err, SPMV_EIO, "%s: cannot write: %s", path,
                          strerror(errno));
  bad = fprintf(f, "%%%%MatrixMarket matrix array real general\n%lld 1\n",
                (long long)n) < 0;
  for (i = 0; i < n && !bad; i++)
    bad = fprintf(f, "%.17g\n", x[i]) < 0;
  errno = 0;
  bad |= ferror(f);
  bad |= fclose(f) != 0;
  if (bad)
    return spmv_error_set(err, SPMV_EIO, "%s: cannot write: %s", path,
                          errno != 0 ? strerror(errno) : "write error");
  return 0;
}
