/* spmv_layout.h: internal interface between spmv_layout.c and the formats. */
#ifndef SPMV_LAYOUT_H
#define SPMV_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_formats.h"

/*
 * Every format file (csr.c, ell.c, ...) provides three functions with the
 * signatures below, called by spmv_layout.c through a table:
 *   _init  converts A into L->u (L->cfg, dtype, rows, cols, nnz are set);
 *          it checks the limits before allocating, sets L->bytes, and on
 *          failure leaves L->u for _fini to clean up;
 *   _fini  frees the arrays of L->u (some may be NULL);
 *   _spmv  the CPU reference over the layout (arguments already checked).
 */
typedef int spmv_layout_init_fn(struct spmv_layout *L, const struct spmv_csr *A,
                                const struct spmv_limits *lim,
                                struct spmv_error *err);
typedef void spmv_layout_fini_fn(struct spmv_layout *L);
typedef void spmv_layout_spmv_fn(const struct spmv_layout *L, double alpha,
                                 const void *x, double beta, void *y);

#define SPMV_DECLARE_FORMAT(name)                                        \
  spmv_layout_init_fn spmv_##name##_init;                                \
  spmv_layout_fini_fn spmv_##name##_fini;                                \
  spmv_layout_spmv_fn spmv_##name##_spmv

SPMV_DECLARE_FORMAT(csr_layout);   /* csr.c: csr-scalar/-vector/-merge, csr16 */
SPMV_DECLARE_FORMAT(cusparse_layout); /* cusparse_layout.c: cusparse (its CSR in csr.c) */
SPMV_DECLARE_FORMAT(csr_adaptive); /* csr_adaptive.c */
SPMV_DECLARE_FORMAT(csr_stream);   /* csr_stream.c: csr-stream, csr-stream16 */
SPMV_DECLARE_FORMAT(ell);          /* ell.c */
SPMV_DECLARE_FORMAT(ellr_t);       /* ellr_t.c */
SPMV_DECLARE_FORMAT(coo);          /* coo.c */
SPMV_DECLARE_FORMAT(hyb);          /* hyb.c */
SPMV_DECLARE_FORMAT(dia);          /* dia.c */
SPMV_DECLARE_FORMAT(jad);          /* jad.c */
SPMV_DECLARE_FORMAT(sell);         /* sell.c: sell and sell16 */
SPMV_DECLARE_FORMAT(csr_panel);    /* csr_panel.c */

/* csr-stream's cut of A for blocks of cap = BS x k entries: rows go into
 * the open block while it holds at most cap entries and cap rows; a row
 * longer than cap closes the open block (when it has rows) and belongs to
 * none.  Calls block(ctx, r0, r1) for each block of rows r0 .. r1-1 in row
 * order and, when not NULL, long_row(ctx, i) for each such row i.  The
 * layout's own cut, for whoever models it (the predictor's features). */
void spmv_csr_stream_cut(const struct spmv_csr *A, int64_t cap,
                         void (*block)(void *ctx, int64_t r0, int64_t r1),
                         void (*long_row)(void *ctx, int64_t i), void *ctx);

/* Pieces that one format builds for another (hyb uses ell and coo,
 * csr-adaptive uses the typed CSR). */

/* Adds the bytes of the typed CSR of A to *bytes; returns 0 or -1 on overflow. */
int spmv_csr_typed_bytes(const struct spmv_csr *A, enum spmv_dtype dt,
                         size_t *bytes);
/* The same with 2-byte column offsets in place of the columns (csr16,
 * csr-stream16), their bases aside. */
int spmv_csr_typed16_bytes(const struct spmv_csr *A, enum spmv_dtype dt,
                           size_t *bytes);
/* Allocates and fills C from A; returns 0 or SPMV_ENOMEM (C then partly
 * set).  With shell, only the row offsets: col and val stay NULL for the
 * GPU to fill (spmv_layout_new_shell). */
int spmv_csr_typed_init(struct spmv_csr_layout *C,
                        const struct spmv_csr *A, enum spmv_dtype dt,
                        int shell);
/* Allocates and fills C's row offsets only; 0 or SPMV_ENOMEM. */
int spmv_csr_ptr_init(struct spmv_csr_layout *C, const struct spmv_csr *A);
/* Frees C's arrays (NULL pointers are skipped). */
void spmv_csr_typed_fini(struct spmv_csr_layout *C);

/* Adds the bytes of an ELL of the given rows and width; 0 or -1 on overflow. */
int spmv_ell_arrays_bytes(int64_t rows, int64_t width, enum spmv_dtype dt,
                          size_t *bytes);
/* Fills E with the first `width` entries of each row of A. */
int spmv_ell_arrays_init(struct spmv_ell_layout *E, const struct spmv_csr *A,
                         int64_t width, enum spmv_dtype dt);
/* Frees E's arrays. */
void spmv_ell_arrays_fini(struct spmv_ell_layout *E);
/* y = alpha*E*x + beta*y over the ELL arrays of a matrix of `rows` rows. */
void spmv_ell_arrays_apply(const struct spmv_ell_layout *E, int64_t rows,
                           enum spmv_dtype dt, double alpha, const void *x,
                           double beta, void *y);

/* Number of COO entries of A past the first `skip` of each row. */
int64_t spmv_coo_arrays_count(const struct spmv_csr *A, int64_t skip);
/* Adds the bytes of a COO of n entries; 0 or -1 on overflow. */
int spmv_coo_arrays_bytes(int64_t n, enum spmv_dtype dt, size_t *bytes);
/* Fills K with the entries of each row of A past the first `skip`, n of them. */
int spmv_coo_arrays_init(struct spmv_coo_layout *K, const struct spmv_csr *A,
                         int64_t skip, int64_t n, enum spmv_dtype dt);
/* Frees K's arrays. */
void spmv_coo_arrays_fini(struct spmv_coo_layout *K);
/* y = alpha*K*x + beta*y over n COO entries of a matrix of `rows` rows. */
void spmv_coo_arrays_apply(const struct spmv_coo_layout *K, int64_t n,
                           int64_t rows, enum spmv_dtype dt, double alpha,
                           const void *x, double beta, void *y);

/* The long rows of csr-adaptive and csr-stream, as their layouts hold
 * them: chunks chunk[r] .. chunk[r+1]-1 of rows[r], chunk_len entries each
 * (the last shorter); chunk_base is csr-stream16's (NULL with 32-bit
 * columns). */
struct spmv_long_rows {
  int64_t nlong;
  const int32_t *rows;
  const int64_t *chunk;
  int64_t chunk_len;
  const int32_t *chunk_base;
};
/* y of the long rows R of C, summed as the kernels do (csr_adaptive.c). */
void spmv_long_rows_spmv(const struct spmv_csr_layout *C, enum spmv_dtype dt,
                         const struct spmv_long_rows *R, double alpha,
                         const void *x, double beta, void *y);

/* The smallest column of nonempty row r of A, and its largest in *hi when
 * hi is not NULL (sell.c): the base of sell16's and csr16's offsets. */
int64_t spmv_row_col_range(const struct spmv_csr *A, int64_t r, int64_t *hi);

/* perm[0 .. rows): A's rows in jad's order, by decreasing length with ties
 * in row order, from a counting sort over count[0 .. max_len] (max_len A's
 * longest row; any contents on entry).  On return count[len] is the
 * number of rows of length >= len (jad.c). */
void spmv_jad_perm(const struct spmv_csr *A, int64_t max_len, int64_t *count,
                   int32_t *perm);

/* sell16, csr16: refuses (SPMV_ETOOBIG, naming the widest row and the
 * format fmt) a matrix with a row spanning over SPMV_SELL16_MAX_SPAN
 * columns; returns 0 otherwise (sell.c).  base, when not NULL, receives
 * every row's smallest column (0 for an empty row) from the same pass. */
int spmv_span16_check(const struct spmv_csr *A, const char *fmt,
                      int32_t *base, struct spmv_error *err);

/* Helpers of spmv_layout.c. */

/* Adds n elements of sz bytes to *bytes; returns 0, or -1 when n < 0 or the
 * sum overflows size_t. */
int spmv_bytes_add(size_t *bytes, int64_t n, size_t sz);
/* Sets *out = a * b for a, b >= 0; returns 0, or -1 on int64 overflow. */
int spmv_mul64(int64_t a, int64_t b, int64_t *out);
/*
 * Records bytes in L->bytes after checking them against lim->max_bytes;
 * overflow != 0 means the size did not even fit in 64 bits.  Returns 0 or
 * SPMV_ETOOBIG with a message naming the format and the bound.
 */
int spmv_layout_reserve(struct spmv_layout *L, const struct spmv_limits *lim,
                        size_t bytes, int overflow, struct spmv_error *err);
/* Returns SPMV_ENOMEM with a message naming the format and the bytes. */
int spmv_layout_nomem(const struct spmv_layout *L, struct spmv_error *err);
/* Checks fill = stored / nnz against lim->max_fill; 0 or SPMV_ETOOBIG. */
int spmv_layout_check_fill(const struct spmv_layout *L,
                           const struct spmv_limits *lim, double stored,
                           struct spmv_error *err);
/* Returns the format's name for messages (never NULL). */
const char *spmv_layout_name(const struct spmv_layout *L);
/* Allocates n elements of sz bytes (at least one byte); the caller has
 * checked the size.  Returns new memory or NULL. */
void *spmv_array_new(int64_t n, size_t sz);
/* The same, zero-filled. */
void *spmv_array_zero(int64_t n, size_t sz);
/* Rounds rows up to a multiple of 32 (the pitch of column-major layouts). */
int64_t spmv_pitch(int64_t rows);
/* Returns the length of A's longest row (0 for no rows). */
int64_t spmv_csr_max_row(const struct spmv_csr *A);
/* Stores v, narrowed to dt, at val[k].  Inline: the conversions call it
 * once per entry. */
static inline void spmv_val_set(void *val, enum spmv_dtype dt, int64_t k,
                                double v)
{
  if (dt == SPMV_F32)
    ((float *)val)[k] = (float)v;
  else
    ((double *)val)[k] = v;
}
/* Adds v to val[k] (summing duplicates), in double, then narrows to dt. */
static inline void spmv_val_add(void *val, enum spmv_dtype dt, int64_t k,
                                double v)
{
  if (dt == SPMV_F32)
    ((float *)val)[k] = (float)((double)((float *)val)[k] + v);
  else
    ((double *)val)[k] += v;
}

/* One row's result in type T: y[i] = alpha*sum + beta*y[i], y not read when
 * beta == 0. */
#define SPMV_FINISH(y, i, alpha, sum, beta)                              \
  ((y)[i] = (beta) == 0 ? (alpha) * (sum) : (alpha) * (sum) + (beta) * (y)[i])

/* Calls FN##_float or FN##_double for the layout's dtype with typed
 * alpha, x, beta, y; the other arguments are passed first. */
#define SPMV_DISPATCH(dt, fn, alpha, x, beta, y, ...)                    \
  do {                                                                   \
    if ((dt) == SPMV_F32)                                                \
      fn##_float(__VA_ARGS__, (float)(alpha), (const float *)(x),        \
                 (float)(beta), (float *)(y));                           \
    else                                                                 \
      fn##_double(__VA_ARGS__, (double)(alpha), (const double *)(x),     \
                  (double)(beta), (double *)(y));                        \
  } while (0)

#endif /* SPMV_LAYOUT_H */
