/* csr_stream.c: csr-stream(16), typed CSR cut into nonzero-balanced row blocks. */
#include <inttypes.h>
#include <stdlib.h>

#include "spmv_layout.h"
#include "spmv_par.h"

/* Chunks of a long row, in blocks' caps: a chunk's block sums this many
 * entries per thread, enough to hide the one partial sum it writes. */
#define STREAM_CHUNK_CAPS 4

/* Reads and checks k and BS from cfg into D (BS 0 means the default). */
static int stream_params(struct spmv_stream_layout *D,
                         const struct spmv_layout *L, struct spmv_error *err)
{
  int k = L->cfg.param != 0 ? L->cfg.param : SPMV_STREAM_K;
  int bs = L->cfg.bs != 0 ? L->cfg.bs : SPMV_STREAM_BS;
  size_t shmem;

  if (k < 1 || k > SPMV_STREAM_MAX_K || (k & (k - 1)) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: k %d is not a power of two in [1, %d]",
                          spmv_layout_name(L), k, SPMV_STREAM_MAX_K);
  if (bs < 32 || bs > 1024 || bs % 32 != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: block size %d not a multiple of 32 "
                          "in [32, 1024]", spmv_layout_name(L), bs);
  shmem = spmv_stream_shmem(bs, k, spmv_dtype_size(L->dtype),
                            L->cfg.format == SPMV_FMT_CSR_STREAM16);
  if (shmem > SPMV_STREAM_SHMEM)
    return spmv_error_set(err, SPMV_EINVAL,
                          "%s: bs %d x k %d values and row ends take "
                          "%zu bytes of shared memory, over %d",
                          spmv_layout_name(L), bs, k, shmem, SPMV_STREAM_SHMEM);
  D->k = k;
  D->bs = bs;
  D->cap = (int64_t)bs * k;
  D->chunk_len = D->cap * STREAM_CHUNK_CAPS;
  return 0;
}

/* See spmv_layout.h. */
void spmv_csr_stream_cut(const struct spmv_csr *A, int64_t cap,
                         void (*block)(void *ctx, int64_t r0, int64_t r1),
                         void (*long_row)(void *ctx, int64_t i), void *ctx)
{
  int64_t i, start = 0, entries = 0;

  for (i = 0; i < A->rows; i++) {
    int64_t len = A->row_ptr[i + 1] - A->row_ptr[i];

    if (len > cap) {
      if (i > start)
        block(ctx, start, i);
      if (long_row != NULL)
        long_row(ctx, i);
      start = i + 1;
      entries = 0;
      continue;
    }
    if (entries + len > cap || i - start == cap) {
      block(ctx, start, i);
      start = i;
      entries = 0;
    }
    entries += len;
  }
  if (start < A->rows)
    block(ctx, start, A->rows);
}

/* stream_cut's walk: the layout being cut, its counts so far and the
 * room its arrays have; nomem once growing one failed. */
struct stream_walk {
  struct spmv_stream_layout *D;
  const struct spmv_csr *A;
  int64_t b, r, chunks;
  int64_t room[4];  /* of blk_row, blk_ent, long_rows, long_chunk */
  int nomem;
};

/* Makes *p hold at least n elements of sz bytes, doubling *room. */
static int grow(void **p, int64_t *room, int64_t n, size_t sz)
{
  int64_t r = *room > 0 ? *room : 1024;
  void *q;

  if (n <= *room)
    return 0;
  while (r < n)
    r *= 2;
  if ((q = realloc(*p, (size_t)r * sz)) == NULL)
    return -1;
  *p = q;
  *room = r;
  return 0;
}

/* Records rows r0 .. r1-1 as the next block. */
static void stream_block(void *ctx, int64_t r0, int64_t r1)
{
  struct stream_walk *w = ctx;
  struct spmv_stream_layout *D = w->D;

  if (w->nomem || grow((void **)&D->blk_row, &w->room[0], 2 * (w->b + 1), sizeof(int32_t)) ||
      grow((void **)&D->blk_ent, &w->room[1], 2 * (w->b + 1), sizeof(int64_t))) {
    w->nomem = 1;
    return;
  }
  D->blk_row[2 * w->b] = (int32_t)r0;
  D->blk_row[2 * w->b + 1] = (int32_t)r1;
  D->blk_ent[2 * w->b] = w->A->row_ptr[r0];
  D->blk_ent[2 * w->b + 1] = w->A->row_ptr[r1];
  w->b++;
}

/* Records long row i and its chunks. */
static void stream_long_row(void *ctx, int64_t i)
{
  struct stream_walk *w = ctx;
  struct spmv_stream_layout *D = w->D;
  int64_t len = w->A->row_ptr[i + 1] - w->A->row_ptr[i];

  if (w->nomem || grow((void **)&D->long_rows, &w->room[2], w->r + 1, sizeof(int32_t)) ||
      grow((void **)&D->long_chunk, &w->room[3], w->r + 2, sizeof(int64_t))) {
    w->nomem = 1;
    return;
  }
  w->chunks += (len + D->chunk_len - 1) / D->chunk_len;
  D->long_rows[w->r] = (int32_t)i;
  D->long_chunk[w->r + 1] = w->chunks;
  w->r++;
}

/*
 * Cuts A at D's cap (spmv_csr_stream_cut) in one pass, filling D's block
 * and long-row arrays as they grow (the cut is serial, and a pass to count
 * them first cost as much again), and whether the rows are sparse.
 * Returns 0 or SPMV_ENOMEM.
 */
static int stream_cut(struct spmv_stream_layout *D, const struct spmv_csr *A)
{
  struct stream_walk w = { .D = D, .A = A };
  int64_t empty;

  if (grow((void **)&D->long_chunk, &w.room[3], 1, sizeof(int64_t)) != 0)
    return SPMV_ENOMEM;
  D->long_chunk[0] = 0;
  spmv_csr_stream_cut(A, D->cap, stream_block, stream_long_row, &w);
  if (w.nomem)
    return SPMV_ENOMEM;
  D->nblocks = w.b;
  D->nlong = w.r;
  D->nchunks = w.chunks;
  empty = A->rows - spmv_par_rows_at_least(A, 1, spmv_par_threads(A->nnz));
  D->sparse = A->rows > 0 && (double)empty >= SPMV_STREAM_SPARSE * (double)A->rows;
  return 0;
}

/* The smallest column of entries e0 .. e1-1 of A into *base; refuses
 * (SPMV_ETOOBIG, naming what) a range spanning over SPMV_SELL16_MAX_SPAN
 * columns.  what is "rows R0 to R1" or "the chunk of row R at entry E". */
static int span16(const struct spmv_csr *A, int64_t e0, int64_t e1,
                  int32_t *base, const char *what, int64_t a, int64_t b,
                  struct spmv_error *err)
{
  int32_t lo = 0, hi = 0;
  int64_t k;

  for (k = e0; k < e1; k++) {
    int32_t c = A->col_idx[k];

    if (k == e0 || c < lo)
      lo = c;
    if (k == e0 || c > hi)
      hi = c;
  }
  *base = lo;
  if ((int64_t)hi - lo <= SPMV_SELL16_MAX_SPAN)
    return 0;
  return spmv_error_set(err, SPMV_ETOOBIG,
                        "csr-stream16: %s %" PRId64 " %s %" PRId64 " span %"
                        PRId64 " columns (%" PRId32 " to %" PRId32 "), over "
                        "the %d a 16-bit offset holds", what, a,
                        what[0] == 'r' ? "to" : "at entry", b,
                        (int64_t)hi - lo + 1, lo, hi,
                        SPMV_SELL16_MAX_SPAN + 1);
}

/* csr-stream16: the blocks' and chunks' bases (checked to fit 16-bit
 * offsets), the row offsets, the offsets and the values. */
static int stream16_fill(struct spmv_layout *L, const struct spmv_csr *A,
                         struct spmv_error *err)
{
  struct spmv_stream_layout *D = &L->u.stream;
  struct spmv_csr_layout *C = &D->csr;
  int64_t b, r, c, k;
  int rc;

  for (b = 0; b < D->nblocks; b++)
    if ((rc = span16(A, D->blk_ent[2 * b], D->blk_ent[2 * b + 1],
                     &D->blk_base[b], "rows", D->blk_row[2 * b],
                     (int64_t)D->blk_row[2 * b + 1] - 1, err)) != 0)
      return rc;
  for (r = 0; r < D->nlong; r++) {
    int64_t lo = A->row_ptr[D->long_rows[r]], hi = A->row_ptr[D->long_rows[r] + 1];

    for (c = D->long_chunk[r]; c < D->long_chunk[r + 1]; c++) {
      int64_t a = lo + (c - D->long_chunk[r]) * D->chunk_len;
      int64_t e = hi - a > D->chunk_len ? a + D->chunk_len : hi;

      if ((rc = span16(A, a, e, &D->chunk_base[c], "the chunk of row",
                       D->long_rows[r], a, err)) != 0)
        return rc;
    }
  }
  if (spmv_csr_ptr_init(C, A) != 0)
    return spmv_layout_nomem(L, err);
  if (L->shell) /* the GPU fills col16 and val (spmv_dev_matrix_new_csr) */
    return 0;
  C->col16 = spmv_array_new(A->nnz, sizeof(uint16_t));
  C->val = spmv_array_new(A->nnz, spmv_dtype_size(L->dtype));
  if (C->col16 == NULL || C->val == NULL)
    return spmv_layout_nomem(L, err);
  for (k = 0; k < A->nnz; k++)
    spmv_val_set(C->val, L->dtype, k, A->val[k]);
  for (b = 0; b < D->nblocks; b++)
    for (k = D->blk_ent[2 * b]; k < D->blk_ent[2 * b + 1]; k++)
      C->col16[k] = (uint16_t)(A->col_idx[k] - D->blk_base[b]);
  for (r = 0; r < D->nlong; r++) {
    int64_t lo = A->row_ptr[D->long_rows[r]], hi = A->row_ptr[D->long_rows[r] + 1];

    for (k = lo; k < hi; k++)
      C->col16[k] = (uint16_t)(A->col_idx[k] -
                               D->chunk_base[D->long_chunk[r] + (k - lo) / D->chunk_len]);
  }
  return 0;
}

/* Builds the typed CSR (or its 16-bit offsets) and the row blocks of a
 * csr-stream or csr-stream16 configuration. */
int spmv_csr_stream_init(struct spmv_layout *L, const struct spmv_csr *A,
                         const struct spmv_limits *lim,
                         struct spmv_error *err)
{
  struct spmv_stream_layout *D = &L->u.stream;
  int narrow = L->cfg.format == SPMV_FMT_CSR_STREAM16;
  size_t bytes = 0;
  int overflow, rc;

  if ((rc = stream_params(D, L, err)) != 0)
    return rc;
  if (stream_cut(D, A) != 0)
    return spmv_layout_nomem(L, err);
  if (narrow)
    overflow = spmv_csr_typed16_bytes(A, L->dtype, &bytes) != 0 ||
               spmv_bytes_add(&bytes, D->nblocks, sizeof(int32_t)) ||
               spmv_bytes_add(&bytes, D->nchunks, sizeof(int32_t));
  else
    overflow = spmv_csr_typed_bytes(A, L->dtype, &bytes) != 0;
  overflow = overflow ||
             spmv_bytes_add(&bytes, 2 * D->nblocks, sizeof(int32_t)) ||
             spmv_bytes_add(&bytes, 2 * D->nblocks, sizeof(int64_t)) ||
             spmv_bytes_add(&bytes, D->nlong, sizeof(int32_t)) ||
             spmv_bytes_add(&bytes, D->nlong + 1, sizeof(int64_t));
  if ((rc = spmv_layout_reserve(L, lim, bytes, overflow, err)) != 0)
    return rc;
  /* A matrix of no blocks or long rows leaves those arrays unmade: one
   * element each, as spmv_array_new makes for none. */
  if ((D->blk_row == NULL && (D->blk_row = spmv_array_new(0, sizeof(int32_t))) == NULL) ||
      (D->blk_ent == NULL && (D->blk_ent = spmv_array_new(0, sizeof(int64_t))) == NULL) ||
      (D->long_rows == NULL && (D->long_rows = spmv_array_new(0, sizeof(int32_t))) == NULL))
    return spmv_layout_nomem(L, err);
  if (!narrow)
    return spmv_csr_typed_init(&D->csr, A, L->dtype, L->shell) != 0
               ? spmv_layout_nomem(L, err) : 0;
  D->blk_base = spmv_array_new(D->nblocks, sizeof(int32_t));
  D->chunk_base = spmv_array_new(D->nchunks, sizeof(int32_t));
  if (D->blk_base == NULL || D->chunk_base == NULL)
    return spmv_layout_nomem(L, err);
  return stream16_fill(L, A, err);
}

/* Frees the arrays of a csr-stream layout. */
void spmv_csr_stream_fini(struct spmv_layout *L)
{
  struct spmv_stream_layout *D = &L->u.stream;

  spmv_csr_typed_fini(&D->csr);
  free(D->blk_row);
  free(D->blk_ent);
  free(D->long_rows);
  free(D->long_chunk);
  free(D->blk_base);
  free(D->chunk_base);
}

/*
 * Walks the layout as the kernels do: block by block, each row summed on
 * its own, then the long rows (spmv_long_rows_spmv).  Columns come from
 * col, or (csr-stream16) from the block's base plus col16.
 */
#define STREAM_SPMV(T)                                                       \
  static void stream_##T(const struct spmv_stream_layout *D, T alpha,        \
                         const T *x, T beta, T *y)                           \
  {                                                                          \
    const T *val = D->csr.val;                                               \
    const int32_t *col = D->csr.col;                                         \
    int64_t b, i, k;                                                         \
                                                                             \
    for (b = 0; b < D->nblocks; b++) {                                       \
      int64_t r0 = D->blk_row[2 * b], r1 = D->blk_row[2 * b + 1];            \
      int32_t base = D->blk_base != NULL ? D->blk_base[b] : 0;               \
                                                                             \
      for (i = r0; i < r1; i++) {                                            \
        T sum = 0;                                                           \
                                                                             \
        for (k = spmv_csr_layout_offset(&D->csr, i);                         \
             k < spmv_csr_layout_offset(&D->csr, i + 1); k++)                \
          sum += val[k] *                                                    \
                 x[col != NULL ? col[k] : base + D->csr.col16[k]];           \
        SPMV_FINISH(y, i, alpha, sum, beta);                                 \
      }                                                                      \
    }                                                                        \
  }
STREAM_SPMV(float)
STREAM_SPMV(double)

/* The CPU reference over the csr-stream(16) layout. */
void spmv_csr_stream_spmv(const struct spmv_layout *L, double alpha,
                          const void *x, double beta, void *y)
{
  const struct spmv_stream_layout *D = &L->u.stream;
  struct spmv_long_rows R = { D->nlong, D->long_rows, D->long_chunk,
                              D->chunk_len, D->chunk_base };

  SPMV_DISPATCH(L->dtype, stream, alpha, x, beta, y, D);
  spmv_long_rows_spmv(&D->csr, L->dtype, &R, alpha, x, beta, y);
}
