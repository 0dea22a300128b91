/* fuzz_csr.c: a CSR as a client hands one over (a load's payload), built
 * from the input's bytes; spmvd validates it, and only a valid one is
 * profiled, fingerprinted and multiplied. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "spmv_csr.h"
#include "spmv_profile.h"

/* The largest shape built: enough for every branch, small enough to stay
 * fast. */
#define MAX_DIM 4096

/* The input, read from the front; past its end every read gives zeros. */
struct reader {
  const uint8_t *p;
  size_t left;
};

static void take(struct reader *r, void *out, size_t n)
{
  size_t k = n < r->left ? n : r->left;

  memset(out, 0, n);
  memcpy(out, r->p, k);
  r->p += k;
  r->left -= k;
}

static uint8_t take_u8(struct reader *r)
{
  uint8_t v;

  take(r, &v, 1);
  return v;
}

/* A dimension: mostly small, sometimes negative or absurd (cols only,
 * since the arrays are sized by rows and nnz). */
static int64_t take_dim(struct reader *r, int absurd)
{
  uint16_t v;
  int64_t raw;

  switch (take_u8(r) & 7) {
  case 0:
    return -(int64_t)(take_u8(r) & 3) - 1;
  case 1:
    if (absurd) {
      take(r, &raw, sizeof raw);
      return raw;
    }
    /* fall through */
  default:
    take(r, &v, sizeof v);
    return v % (MAX_DIM + 1);
  }
}

/* Fills A's arrays: each of them either well-formed-ish (offsets rising by
 * small steps, columns in or near range, small values) or raw bytes. */
static void fill(struct reader *r, struct spmv_csr *A, uint8_t mode)
{
  /* Columns near the range: up to one past its end when it is small. */
  int64_t span = A->cols > 0 && A->cols < 256 ? A->cols + 1 : 256;
  int64_t i, off = 0;

  for (i = 0; i <= A->rows; i++) {
    if (mode & 1) {
      take(r, &A->row_ptr[i], sizeof A->row_ptr[i]);
    } else {
      off += i == 0 ? 0 : take_u8(r) % 4;
      A->row_ptr[i] = i == A->rows && (mode & 8) ? A->nnz : off;
    }
  }
  for (i = 0; i < A->nnz; i++) {
    if (mode & 2)
      take(r, &A->col_idx[i], sizeof A->col_idx[i]);
    else
      A->col_idx[i] = (int32_t)(take_u8(r) % span);
    if (mode & 4)
      take(r, &A->val[i], sizeof A->val[i]);
    else
      A->val[i] = (double)(int8_t)take_u8(r);
  }
}

/* What spmvd does with a valid matrix: its profile (one thread and two),
 * its fingerprint and its hex form, and the reference product. */
static void use_valid(const struct spmv_csr *A)
{
  struct spmv_profile p, q;
  struct spmv_fingerprint fp, back;
  struct spmv_error err;
  char hex[33];
  double *x, *y;
  int64_t k;

  spmv_error_clear(&err);
  if (spmv_profile_compute(A, &p, &err) == 0 &&
      spmv_profile_compute_threads(A, &q, 2, &err) == 0 &&
      (p.nnz != q.nnz || p.rl_max != q.rl_max || p.ndiags != q.ndiags))
    abort();  /* the threaded profile must equal the serial one */
  spmv_fingerprint_compute(A, &fp);
  spmv_fingerprint_hex(&fp, hex);
  if (spmv_fingerprint_parse(hex, &back) != 0 || back.hi != fp.hi ||
      back.lo != fp.lo)
    abort();
  if (A->cols > (1 << 20))
    return;  /* a valid matrix may be wide; its x is not worth gigabytes */
  x = malloc((size_t)(A->cols > 0 ? A->cols : 1) * sizeof *x);
  y = malloc((size_t)(A->rows > 0 ? A->rows : 1) * sizeof *y);
  if (x != NULL && y != NULL) {
    for (k = 0; k < A->cols; k++)
      x[k] = 1.0;
    spmv_csr_ref(A, 1.0, x, 0.0, y);
  }
  free(x);
  free(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct reader r = {data, size};
  struct spmv_csr A;
  struct spmv_error err;
  uint8_t mode = take_u8(&r);
  unsigned flags = (mode & 16) ? SPMV_CSR_ALLOW_NONFINITE : 0;

  A.rows = take_dim(&r, 0);
  A.cols = take_dim(&r, 1);
  A.nnz = take_dim(&r, 0);
  /* Arrays as the declared shape needs them (a negative one gets a single
   * element, which validation must refuse before reading). */
  A.row_ptr = calloc((size_t)(A.rows >= 0 ? A.rows + 1 : 1), sizeof *A.row_ptr);
  A.col_idx = calloc((size_t)(A.nnz > 0 ? A.nnz : 1), sizeof *A.col_idx);
  A.val = calloc((size_t)(A.nnz > 0 ? A.nnz : 1), sizeof *A.val);
  if (A.row_ptr != NULL && A.col_idx != NULL && A.val != NULL) {
    struct spmv_csr shape = A;

    if (A.rows < 0 || A.nnz < 0)
      shape.rows = shape.nnz = -1;  /* fill() touches nothing */
    if (shape.rows >= 0)
      fill(&r, &shape, mode);
    spmv_error_clear(&err);
    if (spmv_csr_validate(&A, flags, &err) == 0 &&
        (flags || spmv_csr_validate_offsets(&A, &err) == 0))
      use_valid(&A);
  }
  free(A.row_ptr);
  free(A.col_idx);
  free(A.val);
  return 0;
}
