/* csr.c: the typed CSR layout (csr-scalar, csr-vector, csr-merge, cusparse,
 * and csr16 with 16-bit column offsets). */
#include <stdlib.h>
#include <string.h>

#include "spmv_layout.h"
#include "spmv_par.h"

/* Row offsets narrow to 32 bits below this many entries. */
#define CSR_PTR32_LIMIT ((int64_t)1 << 31)

/* Adds the bytes of a typed CSR of A whose columns take col bytes each:
 * offsets (32-bit when they fit), columns, values. */
static int typed_bytes(const struct spmv_csr *A, enum spmv_dtype dt,
                       size_t col, size_t *bytes)
{
  size_t ptr = A->nnz < CSR_PTR32_LIMIT ? sizeof(int32_t) : sizeof(int64_t);

  if (spmv_bytes_add(bytes, A->rows + 1, ptr) != 0 ||
      spmv_bytes_add(bytes, A->nnz, col) != 0 ||
      spmv_bytes_add(bytes, A->nnz, spmv_dtype_size(dt)) != 0)
    return -1;
  return 0;
}

/* Adds the bytes of A's typed CSR: offsets, columns, values. */
int spmv_csr_typed_bytes(const struct spmv_csr *A, enum spmv_dtype dt,
                         size_t *bytes)
{
  return typed_bytes(A, dt, sizeof(int32_t), bytes);
}

/* Adds the bytes of A's typed CSR with 16-bit column offsets (csr16,
 * csr-stream16): offsets, 2-byte columns, values; their bases aside. */
int spmv_csr_typed16_bytes(const struct spmv_csr *A, enum spmv_dtype dt,
                           size_t *bytes)
{
  return typed_bytes(A, dt, sizeof(uint16_t), bytes);
}

/* A part of the offsets' copy: the copy is mostly the first touch of a
 * fresh array's pages, which threads take in parallel. */
struct ptr_copy {
  const int64_t *src;
  struct spmv_csr_layout *C;
};

static void ptr_copy_block(void *ctx, int t, int64_t i0, int64_t i1)
{
  const struct ptr_copy *p = ctx;

  (void)t;
  if (p->C->row_ptr32 != NULL)
    for (int64_t i = i0; i < i1; i++)
      p->C->row_ptr32[i] = (int32_t)p->src[i];
  else
    memcpy(p->C->row_ptr64 + i0, p->src + i0, (size_t)(i1 - i0) * sizeof(int64_t));
}

/* Allocates and fills C's row offsets from A's, 32-bit when they fit, over
 * threads; returns 0 or SPMV_ENOMEM. */
int spmv_csr_ptr_init(struct spmv_csr_layout *C, const struct spmv_csr *A)
{
  struct ptr_copy p = {.src = A->row_ptr, .C = C};

  if (A->nnz < CSR_PTR32_LIMIT)
    C->row_ptr32 = spmv_array_new(A->rows + 1, sizeof(int32_t));
  else
    C->row_ptr64 = spmv_array_new(A->rows + 1, sizeof(int64_t));
  if (C->row_ptr32 == NULL && C->row_ptr64 == NULL)
    return SPMV_ENOMEM;
  spmv_par_range(A->rows + 1, spmv_par_threads(A->nnz), ptr_copy_block, &p);
  return 0;
}

/* Allocates C's arrays and copies A into them, values narrowed to dt. */
int spmv_csr_typed_init(struct spmv_csr_layout *C, const struct spmv_csr *A,
                        enum spmv_dtype dt, int shell)
{
  int64_t k;

  if (spmv_csr_ptr_init(C, A) != 0)
    return SPMV_ENOMEM;
  if (shell)
    return 0;
  C->col = spmv_array_new(A->nnz, sizeof(int32_t));
  C->val = spmv_array_new(A->nnz, spmv_dtype_size(dt));
  if (C->col == NULL || C->val == NULL)
    return SPMV_ENOMEM;
  if (A->nnz > 0)
    memcpy(C->col, A->col_idx, (size_t)A->nnz * sizeof(int32_t));
  for (k = 0; k < A->nnz; k++)
    spmv_val_set(C->val, dt, k, A->val[k]);
  return 0;
}

/* Frees C's arrays. */
void spmv_csr_typed_fini(struct spmv_csr_layout *C)
{
  free(C->row_ptr32);
  free(C->row_ptr64);
  free(C->col);
  free(C->val);
  free(C->base);
  free(C->col16);
  C->row_ptr32 = NULL;
  C->row_ptr64 = NULL;
  C->col = NULL;
  C->val = NULL;
  C->base = NULL;
  C->col16 = NULL;
}

/* csr16: the typed CSR with each row's columns as 16-bit offsets from its
 * smallest column (checked to fit first). */
static int csr16_init(struct spmv_layout *L, const struct spmv_csr *A,
                      const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_csr_layout *C = &L->u.csr;
  size_t bytes = 0;
  int64_t i, k;
  int overflow, rc;

  overflow = spmv_csr_typed16_bytes(A, L->dtype, &bytes) != 0 ||
             spmv_bytes_add(&bytes, A->rows, sizeof(int32_t)) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  C->base = spmv_array_new(A->rows, sizeof(int32_t));
  if (C->base == NULL)
    return spmv_layout_nomem(L, err);
  /* The bases come from the span check's own pass over the columns. */
  if ((rc = spmv_span16_check(A, "csr16", C->base, err)) != 0)
    return rc;
  if (spmv_csr_ptr_init(C, A) != 0)
    return spmv_layout_nomem(L, err);
  if (L->shell) /* the GPU fills col16 and val (spmv_dev_matrix_new_csr) */
    return 0;
  C->col16 = spmv_array_new(A->nnz, sizeof(uint16_t));
  C->val = spmv_array_new(A->nnz, spmv_dtype_size(L->dtype));
  if (C->col16 == NULL || C->val == NULL)
    return spmv_layout_nomem(L, err);
  for (i = 0; i < A->rows; i++) {
    int32_t b = C->base[i];

    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      C->col16[k] = (uint16_t)(A->col_idx[k] - b);
      spmv_val_set(C->val, L->dtype, k, A->val[k]);
    }
  }
  return 0;
}

/* Builds the typed CSR of a csr-*, csr16 or cusparse configuration. */
int spmv_csr_layout_init(struct spmv_layout *L, const struct spmv_csr *A,
                         const struct spmv_limits *lim, struct spmv_error *err)
{
  size_t bytes = 0;
  int overflow, rc;

  if (L->cfg.format == SPMV_FMT_CSR16)
    return csr16_init(L, A, lim, err);
  overflow = spmv_csr_typed_bytes(A, L->dtype, &bytes) != 0;
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  if (spmv_csr_typed_init(&L->u.csr, A, L->dtype, L->shell) != 0)
    return spmv_layout_nomem(L, err);
  return 0;
}

/* Frees the typed CSR of L. */
void spmv_csr_layout_fini(struct spmv_layout *L)
{
  spmv_csr_typed_fini(&L->u.csr);
}

/* One thread per row, as csr-scalar: each row summed in entry order. */
#define CSR_ROWS(T)                                                          \
  static void csr_rows_##T(const struct spmv_csr_layout *C, int64_t rows,    \
                           T alpha, const T *x, T beta, T *y)                \
  {                                                                          \
    const T *val = C->val;                                                   \
    int64_t i, k;                                                            \
                                                                             \
    for (i = 0; i < rows; i++) {                                             \
      int64_t lo = C->row_ptr32 ? C->row_ptr32[i] : C->row_ptr64[i];         \
      int64_t hi = C->row_ptr32 ? C->row_ptr32[i + 1] : C->row_ptr64[i + 1]; \
      T sum = 0;                                                             \
                                                                             \
      if (C->col16 != NULL)                                                  \
        for (k = lo; k < hi; k++)                                            \
          sum += val[k] * x[C->base[i] + C->col16[k]];                       \
      else                                                                   \
        for (k = lo; k < hi; k++)                                            \
          sum += val[k] * x[C->col[k]];                                      \
      SPMV_FINISH(y, i, alpha, sum, beta);                                   \
    }                                                                        \
  }
CSR_ROWS(float)
CSR_ROWS(double)

/* The CPU reference over the typed CSR. */
void spmv_csr_layout_spmv(const struct spmv_layout *L, double alpha,
                          const void *x, double beta, void *y)
{
  SPMV_DISPATCH(L->dtype, csr_rows, alpha, x, beta, y, &L->u.csr, L->rows);
}
