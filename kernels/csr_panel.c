/* csr_panel.c: csr-panel, the CSR cut into column panels (layout and CPU reference). */
#include <inttypes.h>
#include <stdlib.h>

#include "spmv_layout.h"

/* Row offsets of 32 bits below this many entries (as the typed CSR's). */
#define PANEL_PTR32_LIMIT ((int64_t)1 << 31)

/* Reads and checks the panel width from cfg into D. */
static int panel_params(struct spmv_panel_layout *D, const struct spmv_layout *L,
                        struct spmv_error *err)
{
  int64_t w = L->cfg.param != 0 ? L->cfg.param : SPMV_PANEL_WIDTH;
  size_t shmem = (size_t)w * spmv_dtype_size(L->dtype);

  if (w < SPMV_PANEL_MIN_WIDTH || w > SPMV_PANEL_MAX_WIDTH || (w & (w - 1)) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-panel: width %" PRId64 " is not a power of two "
                          "in [%d, %d]", w, SPMV_PANEL_MIN_WIDTH,
                          SPMV_PANEL_MAX_WIDTH);
  if (shmem > SPMV_PANEL_SHMEM)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-panel: a panel of %" PRId64 " %s values takes "
                          "%zu bytes of shared memory, over %d", w,
                          L->dtype == SPMV_F32 ? "f32" : "f64", shmem,
                          SPMV_PANEL_SHMEM);
  D->width = w;
  D->npanels = spmv_panel_count(L->cols, w);
  return 0;
}

/* The offset of slot s, from whichever row offsets C has. */
static void ptr_put(struct spmv_csr_layout *C, int64_t s, int64_t v)
{
  if (C->row_ptr32 != NULL)
    C->row_ptr32[s] = (int32_t)v;
  else
    C->row_ptr64[s] = v;
}

/*
 * Builds the panels of A: counts each slot's entries into next[], turns
 * the counts into the slots' offsets, then places every entry at its
 * slot's next free place, so a slot keeps its row's order.
 */
int spmv_csr_panel_init(struct spmv_layout *L, const struct spmv_csr *A,
                        const struct spmv_limits *lim, struct spmv_error *err)
{
  struct spmv_panel_layout *D = &L->u.panel;
  struct spmv_csr_layout *C = &D->csr;
  int64_t slots, i, k, s, at;
  int64_t *next;
  size_t bytes = 0;
  int overflow, rc, shift;

  if ((rc = panel_params(D, L, err)) != 0)
    return rc;
  shift = spmv_panel_shift(D->width);
  overflow = spmv_mul64(D->npanels, A->rows, &slots) != 0;
  /* Sparse panels would read more offsets than entries. */
  if (!overflow && D->npanels > 1 &&
      slots > SPMV_PANEL_MAX_SLOTS_PER_ENTRY * A->nnz)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "csr-panel: %" PRId64 " panels of %" PRId64
                          " columns x %" PRId64 " rows make %" PRId64
                          " row slots for %" PRId64 " entries, over two per "
                          "entry: too sparse for panels this narrow",
                          D->npanels, D->width, A->rows, slots, A->nnz);
  overflow = overflow ||
             spmv_bytes_add(&bytes, slots + 1,
                            A->nnz < PANEL_PTR32_LIMIT ? 4 : 8) ||
             spmv_bytes_add(&bytes, A->nnz, sizeof(uint16_t)) ||
             spmv_bytes_add(&bytes, A->nnz, spmv_dtype_size(L->dtype));
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  if (A->nnz < PANEL_PTR32_LIMIT)
    C->row_ptr32 = spmv_array_new(slots + 1, sizeof(int32_t));
  else
    C->row_ptr64 = spmv_array_new(slots + 1, sizeof(int64_t));
  C->col16 = spmv_array_new(A->nnz, sizeof(uint16_t));
  C->val = spmv_array_new(A->nnz, spmv_dtype_size(L->dtype));
  next = spmv_array_zero(slots, sizeof(int64_t));
  if ((C->row_ptr32 == NULL && C->row_ptr64 == NULL) || C->col16 == NULL ||
      C->val == NULL || next == NULL) {
    free(next);
    return spmv_layout_nomem(L, err);
  }
  for (i = 0; i < A->rows; i++)
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      next[(A->col_idx[k] >> shift) * A->rows + i]++;
  for (s = 0, at = 0; s < slots; s++) {
    int64_t n = next[s];

    ptr_put(C, s, at);
    next[s] = at;
    at += n;
  }
  ptr_put(C, slots, at);
  for (i = 0; i < A->rows; i++)
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      int64_t p = A->col_idx[k] >> shift, dst = next[p * A->rows + i]++;

      C->col16[dst] = (uint16_t)(A->col_idx[k] - (p << shift));
      spmv_val_set(C->val, L->dtype, dst, A->val[k]);
    }
  free(next);
  return 0;
}

/* Frees the arrays of a csr-panel layout. */
void spmv_csr_panel_fini(struct spmv_layout *L)
{
  spmv_csr_typed_fini(&L->u.panel.csr);
}

/* Each row: its panels' sums, each in entry order, added in panel order
 * (the GPU adds them in eight interleaved runs: the same sums, rounded
 * in another order). */
#define PANEL_SPMV(T)                                                        \
  static void panel_##T(const struct spmv_panel_layout *D, int64_t rows,     \
                        T alpha, const T *x, T beta, T *y)                   \
  {                                                                          \
    const T *val = D->csr.val;                                               \
    int64_t i, p, k;                                                         \
                                                                             \
    for (i = 0; i < rows; i++) {                                             \
      T total = 0;                                                           \
                                                                             \
      for (p = 0; p < D->npanels; p++) {                                     \
        const T *xp = x + p * D->width;                                      \
        int64_t s = p * rows + i;                                            \
        T sum = 0;                                                           \
                                                                             \
        for (k = spmv_csr_layout_offset(&D->csr, s);                         \
             k < spmv_csr_layout_offset(&D->csr, s + 1); k++)                \
          sum += val[k] * xp[D->csr.col16[k]];                               \
        total += sum;                                                        \
      }                                                                      \
      SPMV_FINISH(y, i, alpha, total, beta);                                 \
    }                                                                        \
  }
PANEL_SPMV(float)
PANEL_SPMV(double)

/* The CPU reference over the csr-panel layout. */
void spmv_csr_panel_spmv(const struct spmv_layout *L, double alpha,
                         const void *x, double beta, void *y)
{
  SPMV_DISPATCH(L->dtype, panel, alpha, x, beta, y, &L->u.panel, L->rows);
}
