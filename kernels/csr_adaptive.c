/* csr_adaptive.c: csr-adaptive (Gropp & Guo TPR_A I and II) over typed CSR. */
#include <stdlib.h>

#include "spmv_layout.h"
#include "spmv_par.h"

/* Defaults when the configuration leaves them 0. */
#define ADAPTIVE_BASE 8
#define ADAPTIVE_MAX_TPR 512

/*
 * Entries per chunk of a long row: chunk_len = 4 * base * max TPR, so that
 * a block of max-TPR threads sums 4 * base entries per thread.  Rows longer
 * than base * 2^(nbins-1) = base * max TPR / 2 but no longer than one chunk
 * get one block each (TPR_A I); longer rows are split over several blocks
 * whose partial sums a second step adds (TPR_A II).  Chunk j of a long row
 * covers its entries [j * chunk_len, min((j+1) * chunk_len, length)).
 */
#define ADAPTIVE_CHUNK_FACTOR 4

/* Returns the bin of a row of length len (nbins for a long row). */
static int row_bin(int64_t len, int64_t base, int nbins)
{
  int k = 0;

  while (k < nbins && len > base << k)
    k++;
  return k;
}

/* Reads and checks base and max TPR from cfg into D. */
static int adaptive_params(struct spmv_adaptive_layout *D,
                           const struct spmv_config *cfg,
                           struct spmv_error *err)
{
  int base = cfg->param != 0 ? cfg->param : ADAPTIVE_BASE;
  int tpr = cfg->tpr != 0 ? cfg->tpr : ADAPTIVE_MAX_TPR;
  int nbins = 1;

  if (base < 1)
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-adaptive base length %d is not positive", base);
  if (tpr < 1 || (tpr & (tpr - 1)) != 0 ||
      tpr > 1 << (SPMV_ADAPTIVE_MAX_BINS - 1))
    return spmv_error_set(err, SPMV_EINVAL,
                          "csr-adaptive max TPR %d is not a power of two in "
                          "[1, %d]", tpr, 1 << (SPMV_ADAPTIVE_MAX_BINS - 1));
  while ((1 << (nbins - 1)) < tpr)
    nbins++;
  D->base = base;
  D->nbins = nbins;
  D->chunk_len = (int64_t)ADAPTIVE_CHUNK_FACTOR * base * tpr;
  return 0;
}

/* The bins' passes over threads: each part's count of rows per bin (at
 * nbins, its long rows) and of long rows' chunks, from which the fill
 * places each part's rows after the parts before it, so that the rows
 * come out as one pass in row order would place them. */
struct adaptive_pass {
  struct spmv_adaptive_layout *D;
  const struct spmv_csr *A;
  int64_t cnt[SPMV_PAR_MAX][SPMV_ADAPTIVE_MAX_BINS + 1];
  int64_t chunks[SPMV_PAR_MAX];
};

static void count_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct adaptive_pass *p = ctx;
  const struct spmv_adaptive_layout *D = p->D;
  const int64_t *rp = p->A->row_ptr;

  for (int64_t i = r0; i < r1; i++) {
    int64_t len = rp[i + 1] - rp[i];
    int k = row_bin(len, D->base, D->nbins);

    p->cnt[t][k]++;
    if (k == D->nbins)
      p->chunks[t] += (len + D->chunk_len - 1) / D->chunk_len;
  }
}

static void fill_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct adaptive_pass *p = ctx;
  struct spmv_adaptive_layout *D = p->D;
  const int64_t *rp = p->A->row_ptr;
  int64_t next[SPMV_ADAPTIVE_MAX_BINS + 1], chunk = 0;

  for (int k = 0; k <= D->nbins; k++) {
    next[k] = k < D->nbins ? D->bin_start[k] : 0;
    for (int u = 0; u < t; u++)
      next[k] += p->cnt[u][k];
  }
  for (int u = 0; u < t; u++)
    chunk += p->chunks[u];
  for (int64_t i = r0; i < r1; i++) {
    int64_t len = rp[i + 1] - rp[i];
    int k = row_bin(len, D->base, D->nbins);

    if (k < D->nbins) {
      D->rows[next[k]++] = (int32_t)i;
    } else {
      chunk += (len + D->chunk_len - 1) / D->chunk_len;
      D->long_rows[next[k]] = (int32_t)i;
      D->long_chunk[++next[k]] = chunk;
    }
  }
}

/* Counts the rows of each bin (into bin_start[k + 1]), the long rows and
 * their chunks. */
static void adaptive_count(struct adaptive_pass *p, int n)
{
  struct spmv_adaptive_layout *D = p->D;

  spmv_par_range(p->A->rows, n, count_block, p);
  for (int t = 0; t < n; t++) {
    for (int k = 0; k < D->nbins; k++)
      D->bin_start[k + 1] += p->cnt[t][k];
    D->nlong += p->cnt[t][D->nbins];
    D->nchunks += p->chunks[t];
  }
}

/* Fills rows (grouped by bin, ascending), long_rows and long_chunk, the
 * rows cut as adaptive_count cut them. */
static void adaptive_fill(struct adaptive_pass *p, int n)
{
  p->D->long_chunk[0] = 0;
  spmv_par_range(p->A->rows, n, fill_block, p);
}

/* Builds the typed CSR and the bins of a csr-adaptive configuration. */
int spmv_csr_adaptive_init(struct spmv_layout *L, const struct spmv_csr *A,
                           const struct spmv_limits *lim,
                           struct spmv_error *err)
{
  struct spmv_adaptive_layout *D = &L->u.adaptive;
  struct adaptive_pass *p = calloc(1, sizeof *p);
  int n = spmv_par_threads(A->nnz);
  size_t bytes = 0;
  int overflow, rc, k;

  if (p == NULL)
    return spmv_layout_nomem(L, err);
  p->D = D;
  p->A = A;
  if ((rc = adaptive_params(D, &L->cfg, err)) != 0)
    goto out;
  adaptive_count(p, n);
  for (k = 0; k < SPMV_ADAPTIVE_MAX_BINS; k++)
    D->bin_start[k + 1] += D->bin_start[k];
  overflow = spmv_csr_typed_bytes(A, L->dtype, &bytes) != 0 ||
             spmv_bytes_add(&bytes, A->rows - D->nlong, sizeof(int32_t)) ||
             spmv_bytes_add(&bytes, D->nlong, sizeof(int32_t)) ||
             spmv_bytes_add(&bytes, D->nlong + 1, sizeof(int64_t));
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    goto out;
  D->rows = spmv_array_new(A->rows - D->nlong, sizeof(int32_t));
  D->long_rows = spmv_array_new(D->nlong, sizeof(int32_t));
  D->long_chunk = spmv_array_new(D->nlong + 1, sizeof(int64_t));
  if (D->rows == NULL || D->long_rows == NULL || D->long_chunk == NULL ||
      spmv_csr_typed_init(&D->csr, A, L->dtype, L->shell) != 0) {
    rc = spmv_layout_nomem(L, err);
    goto out;
  }
  adaptive_fill(p, n);
  rc = 0;
out:
  free(p);
  return rc;
}

/* Frees the arrays of a csr-adaptive layout. */
void spmv_csr_adaptive_fini(struct spmv_layout *L)
{
  struct spmv_adaptive_layout *D = &L->u.adaptive;

  spmv_csr_typed_fini(&D->csr);
  free(D->rows);
  free(D->long_rows);
  free(D->long_chunk);
}

/*
 * The long rows as the kernels sum them: chunk by chunk, every chunk on its
 * own (the kernel's partial[c]), then the partials added in chunk order
 * (the GPU's second step adds them a warp per row: the same sum, rounded
 * in another fixed order).  Columns from C->col, or chunk_base[c] + C->col16.
 */
#define LONG_ROWS_SPMV(T)                                                    \
  static void long_rows_##T(const struct spmv_csr_layout *C,                 \
                            const struct spmv_long_rows *R, T alpha,         \
                            const T *x, T beta, T *y)                        \
  {                                                                          \
    const T *val = C->val;                                                   \
    int64_t r, c, k;                                                         \
                                                                             \
    for (r = 0; r < R->nlong; r++) {                                         \
      int64_t lo = spmv_csr_layout_offset(C, R->rows[r]);                    \
      int64_t hi = spmv_csr_layout_offset(C, R->rows[r] + 1);                \
      T total = 0;                                                           \
                                                                             \
      for (c = R->chunk[r]; c < R->chunk[r + 1]; c++) {                      \
        int64_t a = lo + (c - R->chunk[r]) * R->chunk_len;                   \
        int64_t e = hi - a > R->chunk_len ? a + R->chunk_len : hi;           \
        T partial = 0;                                                       \
                                                                             \
        for (k = a; k < e; k++)                                              \
          partial += val[k] * x[C->col != NULL ? C->col[k]                   \
                                               : R->chunk_base[c] +          \
                                                 C->col16[k]];               \
        total += partial;                                                    \
      }                                                                      \
      SPMV_FINISH(y, R->rows[r], alpha, total, beta);                        \
    }                                                                        \
  }
LONG_ROWS_SPMV(float)
LONG_ROWS_SPMV(double)

/* The long rows' part of a reference; see spmv_layout.h. */
void spmv_long_rows_spmv(const struct spmv_csr_layout *C, enum spmv_dtype dt,
                         const struct spmv_long_rows *R, double alpha,
                         const void *x, double beta, void *y)
{
  SPMV_DISPATCH(dt, long_rows, alpha, x, beta, y, C, R);
}

/* The short rows bin by bin, as the kernels walk them (each row on its own). */
#define ADAPTIVE_SPMV(T)                                                     \
  static void adaptive_##T(const struct spmv_adaptive_layout *D, T alpha,    \
                           const T *x, T beta, T *y)                         \
  {                                                                          \
    const T *val = D->csr.val;                                               \
    const int32_t *col = D->csr.col;                                         \
    int64_t s, k;                                                            \
                                                                             \
    for (s = 0; s < D->bin_start[D->nbins]; s++) {                           \
      int64_t i = D->rows[s];                                                \
      T sum = 0;                                                             \
                                                                             \
      for (k = spmv_csr_layout_offset(&D->csr, i);                           \
           k < spmv_csr_layout_offset(&D->csr, i + 1); k++)                  \
        sum += val[k] * x[col[k]];                                           \
      SPMV_FINISH(y, i, alpha, sum, beta);                                   \
    }                                                                        \
  }
ADAPTIVE_SPMV(float)
ADAPTIVE_SPMV(double)

/* The CPU reference over the csr-adaptive layout. */
void spmv_csr_adaptive_spmv(const struct spmv_layout *L, double alpha,
                            const void *x, double beta, void *y)
{
  const struct spmv_adaptive_layout *D = &L->u.adaptive;
  struct spmv_long_rows R = { D->nlong, D->long_rows, D->long_chunk,
                              D->chunk_len, NULL };

  SPMV_DISPATCH(L->dtype, adaptive, alpha, x, beta, y, D);
  spmv_long_rows_spmv(&D->csr, L->dtype, &R, alpha, x, beta, y);
}
