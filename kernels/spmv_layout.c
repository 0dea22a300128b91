/* spmv_layout.c: layout construction, release and the reference dispatch. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_layout.h"
#include "spmv_par.h"

/* What each format provides; indexed by enum spmv_format. */
struct format_ops {
  spmv_layout_init_fn *init;
  spmv_layout_fini_fn *fini;
  spmv_layout_spmv_fn *spmv;
};

#define OPS(name) { spmv_##name##_init, spmv_##name##_fini, spmv_##name##_spmv }

static const struct format_ops ops[SPMV_FMT_COUNT] = {
  [SPMV_FMT_CSR_SCALAR] = OPS(csr_layout),
  [SPMV_FMT_CSR_VECTOR] = OPS(csr_layout),
  [SPMV_FMT_CSR_ADAPTIVE] = OPS(csr_adaptive),
  [SPMV_FMT_ELL] = OPS(ell),
  [SPMV_FMT_ELLR_T] = OPS(ellr_t),
  [SPMV_FMT_COO] = OPS(coo),
  [SPMV_FMT_HYB] = OPS(hyb),
  [SPMV_FMT_DIA] = OPS(dia),
  [SPMV_FMT_JAD] = OPS(jad),
  [SPMV_FMT_SELL] = OPS(sell),
  [SPMV_FMT_CSR_MERGE] = OPS(csr_layout),
  [SPMV_FMT_CUSPARSE] = OPS(cusparse_layout),
  [SPMV_FMT_SELL16] = OPS(sell),
  [SPMV_FMT_CSR16] = OPS(csr_layout),
  [SPMV_FMT_CSR_STREAM] = OPS(csr_stream),
  [SPMV_FMT_CSR_STREAM16] = OPS(csr_stream),
  [SPMV_FMT_CSR_PANEL] = OPS(csr_panel),
};

/* Returns the operations of a layout's format, or NULL when it is unknown. */
static const struct format_ops *layout_ops(const struct spmv_layout *L)
{
  if ((int)L->cfg.format < 0 || L->cfg.format >= SPMV_FMT_COUNT)
    return NULL;
  if (L->dtype != SPMV_F32 && L->dtype != SPMV_F64)
    return NULL;
  return &ops[L->cfg.format];
}

/* Whether the GPU can complete f's layout from the CSR; see spmv_formats.h. */
int spmv_layout_shell_ok(enum spmv_format f)
{
  switch (f) {
  case SPMV_FMT_CSR_SCALAR:
  case SPMV_FMT_CSR_VECTOR:
  case SPMV_FMT_CSR_ADAPTIVE:
  case SPMV_FMT_CSR_MERGE:
  case SPMV_FMT_CSR_STREAM:
  case SPMV_FMT_CUSPARSE:
  case SPMV_FMT_SELL:
  case SPMV_FMT_SELL16:
  case SPMV_FMT_CSR16:
  case SPMV_FMT_ELL:
  case SPMV_FMT_ELLR_T:
  case SPMV_FMT_COO:
  case SPMV_FMT_HYB:
  case SPMV_FMT_JAD:
  case SPMV_FMT_DIA:
  case SPMV_FMT_CSR_STREAM16:
    return 1;
  default:
    return 0;
  }
}

/* The typed CSR inside L; see spmv_formats.h. */
const struct spmv_csr_layout *spmv_layout_typed_csr(const struct spmv_layout *L)
{
  switch (L != NULL ? L->cfg.format : SPMV_FMT_COUNT) {
  case SPMV_FMT_CUSPARSE:
    return spmv_cusparse_alg_csr(L->cfg.param) ? &L->u.csr : NULL;
  case SPMV_FMT_CSR_SCALAR:
  case SPMV_FMT_CSR_VECTOR:
  case SPMV_FMT_CSR_MERGE:
    return &L->u.csr;
  case SPMV_FMT_CSR_ADAPTIVE:
    return &L->u.adaptive.csr;
  case SPMV_FMT_CSR_STREAM:
    return &L->u.stream.csr;
  default:
    return NULL;
  }
}

/* spmv_layout_new() and, with shell, spmv_layout_new_shell(); with valid,
 * A's entries are not checked again (spmv_layout_new_valid). */
static int layout_new(const struct spmv_csr *A, enum spmv_dtype dt,
                      const struct spmv_config *cfg,
                      const struct spmv_limits *lim, int shell, int valid,
                      struct spmv_layout **out, struct spmv_error *err)
{
  const struct format_ops *o;
  struct spmv_layout *L = NULL;
  int rc;

  if (cfg == NULL || out == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "no configuration or output");
  if (dt != SPMV_F32 && dt != SPMV_F64)
    return spmv_error_set(err, SPMV_EINVAL, "unknown value type %d", (int)dt);
  if ((int)cfg->format < 0 || cfg->format >= SPMV_FMT_COUNT)
    return spmv_error_set(err, SPMV_EFORMAT, "unknown format %d",
                          (int)cfg->format);
  if (shell && !spmv_layout_shell_ok(cfg->format))
    return spmv_error_set(err, SPMV_EFORMAT,
                          "%s: no device conversion (its layout is built "
                          "on the host)", spmv_format_name(cfg->format));
  if (A == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "no matrix");
  if (!valid && (rc = spmv_csr_validate(A, SPMV_CSR_ALLOW_NONFINITE, err)) != 0)
    return rc;
  if (A->rows > INT32_MAX)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "%s: %" PRId64 " rows exceed the 32-bit row index "
                          "range", spmv_format_name(cfg->format), A->rows);
  if (spmv_csr_max_row(A) > INT32_MAX)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "%s: a row of %" PRId64 " entries exceeds the "
                          "32-bit row length range",
                          spmv_format_name(cfg->format), spmv_csr_max_row(A));
  L = calloc(1, sizeof *L);
  if (L == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for a layout");
  L->cfg = *cfg;
  L->dtype = dt;
  L->shell = shell;
  L->rows = A->rows;
  L->cols = A->cols;
  L->nnz = A->nnz;
  o = layout_ops(L);
  if ((rc = o->init(L, A, lim, err)) != 0)
    goto fail;
  spmv_error_clear(err);
  *out = L;
  return 0;
fail:
  spmv_layout_free(L);
  return rc;
}

/* Converts A to the layout of cfg; see spmv_formats.h. */
int spmv_layout_new(const struct spmv_csr *A, enum spmv_dtype dt,
                    const struct spmv_config *cfg,
                    const struct spmv_limits *lim, struct spmv_layout **out,
                    struct spmv_error *err)
{
  return layout_new(A, dt, cfg, lim, 0, 0, out, err);
}

/* The layout of cfg less its entries' arrays; see spmv_formats.h. */
int spmv_layout_new_shell(const struct spmv_csr *A, enum spmv_dtype dt,
                          const struct spmv_config *cfg,
                          const struct spmv_limits *lim,
                          struct spmv_layout **out, struct spmv_error *err)
{
  return layout_new(A, dt, cfg, lim, 1, 0, out, err);
}

/* Either of them for a CSR validated before; see spmv_formats.h. */
int spmv_layout_new_valid(const struct spmv_csr *A, enum spmv_dtype dt,
                          const struct spmv_config *cfg,
                          const struct spmv_limits *lim, int shell,
                          struct spmv_layout **out, struct spmv_error *err)
{
  return layout_new(A, dt, cfg, lim, shell != 0, 1, out, err);
}

/* Frees a layout and its arrays (NULL is a no-op); returns NULL. */
struct spmv_layout *spmv_layout_free(struct spmv_layout *L)
{
  const struct format_ops *o;

  if (L == NULL)
    return NULL;
  o = layout_ops(L);
  if (o != NULL)
    o->fini(L);
  free(L);
  return NULL;
}

/* The CPU reference over L: y = alpha*A*x + beta*y in L's dtype. */
int spmv_layout_spmv(const struct spmv_layout *L, double alpha,
                     const void *x, double beta, void *y)
{
  const struct format_ops *o;

  if (L == NULL || L->shell || (o = layout_ops(L)) == NULL)
    return SPMV_EFORMAT;
  if ((x == NULL && L->cols > 0) || (y == NULL && L->rows > 0))
    return SPMV_EINVAL;
  o->spmv(L, alpha, x, beta, y);
  return 0;
}

/* Adds n elements of sz bytes to *bytes; 0, or -1 on overflow. */
int spmv_bytes_add(size_t *bytes, int64_t n, size_t sz)
{
  size_t b;

  if (n < 0 || (uint64_t)n > SIZE_MAX / sz)
    return -1;
  b = (size_t)n * sz;
  if (*bytes > SIZE_MAX - b)
    return -1;
  *bytes += b;
  return 0;
}

/* Sets *out = a * b for non-negative a and b; 0, or -1 on overflow. */
int spmv_mul64(int64_t a, int64_t b, int64_t *out)
{
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, out))
    return -1;
  return 0;
}

/* Returns the format's name for messages. */
const char *spmv_layout_name(const struct spmv_layout *L)
{
  const char *name = spmv_format_name(L->cfg.format);

  return name != NULL ? name : "layout";
}

/* Checks the layout's bytes against the limit and records them. */
int spmv_layout_reserve(struct spmv_layout *L, const struct spmv_limits *lim,
                        size_t bytes, int overflow, struct spmv_error *err)
{
  if (overflow)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "%s of %" PRId64 "x%" PRId64 " with %" PRId64
                          " entries: size overflows 64 bits",
                          spmv_layout_name(L), L->rows, L->cols, L->nnz);
  if (lim != NULL && lim->max_bytes > 0 && bytes > lim->max_bytes)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "%s needs %zu bytes, limit %zu",
                          spmv_layout_name(L), bytes, lim->max_bytes);
  L->bytes = bytes;
  return 0;
}

/* Reports that the arrays of L (L->bytes) could not be allocated. */
int spmv_layout_nomem(const struct spmv_layout *L, struct spmv_error *err)
{
  return spmv_error_set(err, SPMV_ENOMEM, "out of memory for %zu bytes of %s",
                        L->bytes, spmv_layout_name(L));
}

/* Checks stored / nnz against the fill limit. */
int spmv_layout_check_fill(const struct spmv_layout *L,
                           const struct spmv_limits *lim, double stored,
                           struct spmv_error *err)
{
  double fill;

  if (lim == NULL || lim->max_fill <= 0)
    return 0;
  fill = L->nnz > 0 ? stored / (double)L->nnz : 1.0;
  if (fill > lim->max_fill)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "%s fill %.3g (%.0f stored for %" PRId64
                          " entries) exceeds limit %.3g",
                          spmv_layout_name(L), fill, stored, L->nnz,
                          lim->max_fill);
  return 0;
}

/* Allocates n elements of sz bytes, at least one byte. */
void *spmv_array_new(int64_t n, size_t sz)
{
  return malloc(n > 0 ? (size_t)n * sz : 1);
}

/* Allocates n zeroed elements of sz bytes, at least one byte. */
void *spmv_array_zero(int64_t n, size_t sz)
{
  return calloc(n > 0 ? (size_t)n : 1, sz);
}

/* See spmv_formats.h. */
enum spmv_l2_warm spmv_l2_warm_mode(size_t array_bytes, int64_t rows,
                                    int64_t cols, enum spmv_dtype dt,
                                    size_t l2_bytes)
{
  double total = (double)array_bytes +
                 (double)(rows + cols) * (double)spmv_dtype_size(dt);

  if (l2_bytes == 0 || array_bytes == 0)
    return SPMV_L2_WARM_NONE;
  if (total <= 0.5 * (double)l2_bytes)
    return SPMV_L2_WARM_READ;
  if (total <= SPMV_L2_WRITE_SHARE * (double)l2_bytes)
    return SPMV_L2_WARM_WRITE;
  return SPMV_L2_WARM_NONE;
}

/* See spmv_formats.h. */
int spmv_l2_warm_now(enum spmv_l2_warm mode, int64_t run, int nvec)
{
  return nvec > 0 && mode != SPMV_L2_WARM_NONE && run + nvec >= 2;
}

/* Rounds rows up to a multiple of 32. */
int64_t spmv_pitch(int64_t rows)
{
  return (rows + 31) / 32 * 32;
}

/* Each part's longest row, for spmv_csr_max_row's pass over threads. */
struct max_row_pass {
  const struct spmv_csr *A;
  int64_t m[SPMV_PAR_MAX];
};

static void max_row_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct max_row_pass *c = ctx;
  const int64_t *rp = c->A->row_ptr;
  int64_t m = 0;

  for (int64_t i = r0; i < r1; i++)
    m = rp[i + 1] - rp[i] > m ? rp[i + 1] - rp[i] : m;
  c->m[t] = m;
}

/* The length of the longest row of A; every format's load asks it (the
 * 32-bit row length check). */
int64_t spmv_csr_max_row(const struct spmv_csr *A)
{
  struct max_row_pass c = {.A = A};
  int n = spmv_par_threads(A->nnz);
  int64_t m = 0;

  spmv_par_range(A->rows, n, max_row_block, &c);
  for (int t = 0; t < n; t++)
    m = c.m[t] > m ? c.m[t] : m;
  return m;
}

