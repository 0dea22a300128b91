/* check_formats.c: every layout's CPU reference against the plain CSR loop,
 * on a gallery of edge cases and on the shared matrices, in every
 * configuration, and the same layouts built for a CSR known valid;
 * 16-bit column spans and 64-bit row offsets.  The layouts
 * worked by hand are checked in check_formats_layout.c, csr-stream's cuts
 * and the shells in check_formats_shell.c. */
#include <check.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_formats.h"
#include "spmv_gen.h"
#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "testdata.h"
#include "formats_common.h"

Suite *formats_suite(void);

/* Every configuration whose parameters change the layout. */
static const struct spmv_config configs[] = {
  { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 },
  { SPMV_FMT_CSR_VECTOR, 0, 4, 0, 0 },
  { SPMV_FMT_CSR_MERGE, 0, 0, 0, 0 },
  { SPMV_FMT_CUSPARSE, 0, 0, 1, 0 },
  { SPMV_FMT_CUSPARSE, 0, 0, 3, 0 },       /* cuSPARSE's sliced ELL */
  { SPMV_FMT_CUSPARSE, 0, 0, 4, 0 },       /* BSR, where A has blocks */
  { SPMV_FMT_CSR_ADAPTIVE, 0, 0, 0, 0 },   /* max TPR 512, base 8 */
  { SPMV_FMT_CSR_ADAPTIVE, 0, 1, 0, 0 },   /* rows over 8 split in 32s */
  { SPMV_FMT_CSR_ADAPTIVE, 0, 4, 2, 0 },
  { SPMV_FMT_CSR_ADAPTIVE, 0, 32, 1, 0 },
  { SPMV_FMT_ELL, 0, 0, 0, 0 },
  { SPMV_FMT_ELLR_T, 0, 1, 0, 0 },
  { SPMV_FMT_ELLR_T, 0, 2, 0, 0 },
  { SPMV_FMT_ELLR_T, 0, 4, 0, 0 },
  { SPMV_FMT_ELLR_T, 0, 8, 0, 0 },
  { SPMV_FMT_ELLR_T, 0, 16, 0, 0 },
  { SPMV_FMT_ELLR_T, 0, 32, 0, 0 },
  { SPMV_FMT_COO, 0, 0, 0, 0 },
  { SPMV_FMT_HYB, 0, 0, 0, 0 },            /* K from the histogram */
  { SPMV_FMT_HYB, 0, 0, 1, 0 },
  { SPMV_FMT_HYB, 0, 0, 4, 0 },
  { SPMV_FMT_HYB, 0, 0, 1000, 0 },
  { SPMV_FMT_DIA, 0, 0, 0, 0 },
  { SPMV_FMT_JAD, 0, 0, 0, 0 },
  { SPMV_FMT_SELL, 0, 0, 0, 0 },           /* C 32, no sorting */
  { SPMV_FMT_SELL, 0, 0, 32, 256 },
  { SPMV_FMT_SELL, 0, 0, 4, 1 },
  { SPMV_FMT_SELL, 0, 0, 4, 8 },
  { SPMV_FMT_SELL, 0, 0, 1, 1 },
  { SPMV_FMT_SELL, 0, 0, 8, 1024 },
  { SPMV_FMT_SELL16, 0, 0, 0, 0 },         /* C 32, no sorting */
  { SPMV_FMT_SELL16, 0, 0, 32, 256 },
  { SPMV_FMT_SELL16, 0, 0, 4, 8 },
  { SPMV_FMT_CSR16, 0, 4, 0, 0 },
  { SPMV_FMT_CSR_STREAM, 0, 0, 0, 0 },     /* BS 256, k 4 */
  { SPMV_FMT_CSR_STREAM, 32, 0, 1, 0 },    /* cap 32: long rows, many blocks */
  { SPMV_FMT_CSR_STREAM, 64, 0, 2, 0 },
  { SPMV_FMT_CSR_STREAM16, 0, 0, 0, 0 },
  { SPMV_FMT_CSR_STREAM16, 32, 0, 1, 0 },
  { SPMV_FMT_CSR_PANEL, 0, 4, 0, 0 },      /* panels of 8192 columns */
  { SPMV_FMT_CSR_PANEL, 0, 4, 1024, 0 },   /* the narrowest: most panels */
};
#define NCONFIGS ((int)(sizeof configs / sizeof configs[0]))

static const double alphas[] = { 0.0, 1.0, -1.25 };
static const double betas[] = { 0.0, 1.0, 0.5 };

/* Fills n values of dt and their exact double images. */
static void random_vector(enum spmv_dtype dt, int64_t n, void *v, double *d)
{
  int64_t i;

  for (i = 0; i < n; i++) {
    double r = rng_value();

    if (dt == SPMV_F32) {
      ((float *)v)[i] = (float)r;
      d[i] = ((float *)v)[i];
    } else {
      ((double *)v)[i] = r;
      d[i] = r;
    }
  }
}

/* Returns element i of a vector of dt as a double. */
static double vget(enum spmv_dtype dt, const void *v, int64_t i)
{
  return dt == SPMV_F32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

/* ||A||_inf and the longest row. */
static double norm_inf(const struct spmv_csr *A, int64_t *max_row)
{
  double m = 0;
  int64_t i, k;

  *max_row = 0;
  for (i = 0; i < A->rows; i++) {
    double s = 0;

    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += fabs(A->val[k]);
    if (s > m)
      m = s;
    if (A->row_ptr[i + 1] - A->row_ptr[i] > *max_row)
      *max_row = A->row_ptr[i + 1] - A->row_ptr[i];
  }
  return m;
}

/* Writes the configuration and type for messages. */
static const char *label(const struct spmv_config *cfg, enum spmv_dtype dt)
{
  static char buf[128];
  int n = spmv_config_format(cfg, buf, sizeof buf);

  if (n < 0 || (size_t)n >= sizeof buf)
    n = 0;
  snprintf(buf + n, sizeof buf - (size_t)n, " %s", spmv_dtype_name(dt));
  return buf;
}

/* The largest (greatest - least column) over A's rows: sell16's bound. */
static int64_t widest_span(const struct spmv_csr *A)
{
  int64_t i, k, w = 0;

  for (i = 0; i < A->rows; i++) {
    int64_t lo = INT64_MAX, hi = -1;

    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      lo = A->col_idx[k] < lo ? A->col_idx[k] : lo;
      hi = A->col_idx[k] > hi ? A->col_idx[k] : hi;
    }
    if (hi >= 0 && hi - lo > w)
      w = hi - lo;
  }
  return w;
}

/*
 * Converts A to cfg's layout and compares the reference over it with
 * spmv_csr_ref for every alpha and beta, by the scaled residual
 * ||y - y_ref||_inf / (|alpha| ||A|| ||x|| + |beta| ||y0||) <= 2 eps (max
 * row + 4).  Returns 1 when lim refused the layout with SPMV_ETOOBIG and
 * may_refuse is set, else 0.
 */
/* spmv_layout_new_valid() of the valid A makes what the checking
 * constructors make: L's bytes and its product on x to the bit (into y
 * and y2, rows values of dt each), and the same shell. */
static void check_valid(const char *name, const struct spmv_csr *A,
                        const struct spmv_config *cfg, enum spmv_dtype dt,
                        const struct spmv_limits *lim,
                        const struct spmv_layout *L, const void *x, void *y,
                        void *y2)
{
  struct spmv_layout *V = NULL, *S = NULL, *VS = NULL;
  struct spmv_error err = { 0, "" };
  size_t yb = (size_t)A->rows * spmv_dtype_size(dt);

  ck_assert_msg(spmv_layout_new_valid(A, dt, cfg, lim, 0, &V, &err) == 0,
                "%s %s: %s", name, label(cfg, dt), err.msg);
  ck_assert_uint_eq(V->bytes, L->bytes);
  ck_assert_int_eq(V->shell, 0);
  ck_assert_int_eq(spmv_layout_spmv(L, -1.25, x, 0, y), 0);
  ck_assert_int_eq(spmv_layout_spmv(V, -1.25, x, 0, y2), 0);
  ck_assert_msg(yb == 0 || memcmp(y, y2, yb) == 0, "%s %s: another product",
                name, label(cfg, dt));
  if (spmv_layout_shell_ok(cfg->format)) {
    ck_assert_int_eq(spmv_layout_new_shell(A, dt, cfg, lim, &S, &err), 0);
    ck_assert_int_eq(spmv_layout_new_valid(A, dt, cfg, lim, 1, &VS, &err), 0);
    ck_assert(S->shell && VS->shell && S->bytes == VS->bytes);
  }
  spmv_layout_free(VS);
  spmv_layout_free(S);
  spmv_layout_free(V);
}

static int check_layout(const char *name, const struct spmv_csr *A,
                        const struct spmv_config *cfg, enum spmv_dtype dt,
                        const struct spmv_limits *lim, int may_refuse)
{
  size_t sz = spmv_dtype_size(dt);
  struct spmv_layout *L = NULL;
  struct spmv_error err = { 0, "" };
  int64_t max_row, nx = A->cols > 0 ? A->cols : 1;
  int64_t ny = A->rows > 0 ? A->rows : 1, i;
  double anorm = norm_inf(A, &max_row), xnorm = 0, ynorm = 0;
  double eps = dt == SPMV_F32 ? FLT_EPSILON : DBL_EPSILON;
  double tol = 2 * eps * (double)(max_row + 4);
  void *x = malloc((size_t)nx * sz), *y0 = malloc((size_t)ny * sz);
  void *y = malloc((size_t)ny * sz);
  double *xd = malloc((size_t)nx * sizeof *xd);
  double *y0d = malloc((size_t)ny * sizeof *y0d);
  double *yr = malloc((size_t)ny * sizeof *yr);
  int rc, a, b;

  ck_assert(x && y0 && y && xd && y0d && yr);
  rc = spmv_layout_new(A, dt, cfg, lim, &L, &err);
  /* csr-stream16 refuses a block spanning over 65535 columns: surely when
   * a row does, never when the matrix has at most 65535 columns. */
  if (cfg->format == SPMV_FMT_CSR_STREAM16 && A->cols > 65535 &&
      (widest_span(A) > 65534 || rc == SPMV_ETOOBIG)) {
    ck_assert_msg(rc == SPMV_ETOOBIG &&
                  strstr(err.msg, "csr-stream16: ") == err.msg &&
                  strstr(err.msg, "over the 65535") != NULL,
                  "%s %s: a block spans over 65535 columns, got %d (%s)",
                  name, label(cfg, dt), rc, err.msg);
    goto out;
  }
  if ((cfg->format == SPMV_FMT_SELL16 || cfg->format == SPMV_FMT_CSR16) &&
      widest_span(A) > 65534) {
    ck_assert_msg(rc == SPMV_ETOOBIG && strstr(err.msg, ": row ") != NULL &&
                  strstr(err.msg, spmv_format_name(cfg->format)) == err.msg,
                  "%s %s: a row spans over 65535 columns, got %d (%s)", name,
                  label(cfg, dt), rc, err.msg);
    goto out;
  }
  /* cusparse alg=4 refuses a matrix without blocks that fit. */
  if (cfg->format == SPMV_FMT_CUSPARSE && cfg->param == SPMV_CUSPARSE_BSR &&
      spmv_bsr_dim(A, NULL) == 0) {
    ck_assert_msg(rc == SPMV_ETOOBIG &&
                  strstr(err.msg, "(no block structure)") != NULL,
                  "%s %s: no blocks, got %d (%s)", name, label(cfg, dt), rc,
                  err.msg);
    goto out;
  }
  /* csr-panel refuses panels of under half an entry per row slot. */
  if (cfg->format == SPMV_FMT_CSR_PANEL && rc == SPMV_ETOOBIG) {
    int64_t w = cfg->param > 0 ? cfg->param : SPMV_PANEL_WIDTH;

    ck_assert_msg(strstr(err.msg, "too sparse for panels") != NULL &&
                  (A->cols + w - 1) / w * A->rows > 2 * A->nnz,
                  "%s %s: refused (%s)", name, label(cfg, dt), err.msg);
    goto out;
  }
  if (rc == SPMV_ETOOBIG && may_refuse) {
    ck_assert_msg(err.msg[0] != '\0', "%s %s: refusal without a message",
                  name, label(cfg, dt));
    goto out;
  }
  ck_assert_msg(rc == 0, "%s %s: %s (%s)", name, label(cfg, dt), err.msg,
                spmv_err_name(rc));
  ck_assert(L->rows == A->rows && L->cols == A->cols && L->nnz == A->nnz);
  ck_assert(L->dtype == dt && L->cfg.format == cfg->format);
  ck_assert_msg(A->nnz == 0 || L->bytes > 0, "%s %s: bytes not set", name,
                label(cfg, dt));
  random_vector(dt, A->cols, x, xd);
  random_vector(dt, A->rows, y0, y0d);
  for (i = 0; i < A->cols; i++)
    xnorm = fmax(xnorm, fabs(xd[i]));
  for (i = 0; i < A->rows; i++)
    ynorm = fmax(ynorm, fabs(y0d[i]));
  for (a = 0; a < 3; a++) {
    for (b = 0; b < 3; b++) {
      double alpha = alphas[a], beta = betas[b], diff = 0, scale;

      if (beta == 0)
        memset(y, 0xff, (size_t)ny * sz); /* NaN: must not be read */
      else
        memcpy(y, y0, (size_t)ny * sz);
      memcpy(yr, y0d, (size_t)ny * sizeof *yr);
      ck_assert_int_eq(spmv_layout_spmv(L, alpha, x, beta, y), 0);
      spmv_csr_ref(A, alpha, xd, beta, yr);
      for (i = 0; i < A->rows; i++) {
        double d = fabs(vget(dt, y, i) - yr[i]);

        diff = isnan(d) ? INFINITY : fmax(diff, d);
      }
      scale = fabs(alpha) * anorm * xnorm + fabs(beta) * ynorm;
      ck_assert_msg(scale > 0 ? diff / scale <= tol : diff == 0,
                    "%s %s alpha %g beta %g: residual %g over %g (tol %g)",
                    name, label(cfg, dt), alpha, beta, diff, scale, tol);
    }
  }
  check_valid(name, A, cfg, dt, lim, L, x, y, y0);
out:
  spmv_layout_free(L);
  free(x);
  free(y0);
  free(y);
  free(xd);
  free(y0d);
  free(yr);
  return rc == SPMV_ETOOBIG;
}

/* Checks every configuration in both types; returns the refusals. */
static int check_all(const char *name, const struct spmv_csr *A,
                     const struct spmv_limits *lim)
{
  int c, refused = 0;

  for (c = 0; c < NCONFIGS; c++) {
    refused += check_layout(name, A, &configs[c], SPMV_F32, lim, lim != NULL);
    refused += check_layout(name, A, &configs[c], SPMV_F64, lim, lim != NULL);
  }
  return refused;
}

/* P with each entry a dense b x b block (P freed). */
static struct spmv_csr *blocks_of(struct spmv_csr *P, int64_t b)
{
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_gen_blocks(P, b, 5, &err);

  ck_assert_msg(A != NULL, "%s", err.msg);
  spmv_csr_free(P);
  return A;
}

/* The gallery of edge cases, by number; *name is set for messages. */
static struct spmv_csr *gallery(int which, const char **name)
{
  int64_t len[400] = { 0 };
  int64_t i;

  switch (which) {
  case 0: *name = "empty 0x0"; return from_lengths(0, 0, len, 0);
  case 1: *name = "empty 0x5"; return from_lengths(0, 5, len, 0);
  case 2: *name = "empty 5x0"; return from_lengths(5, 0, len, 0);
  case 3: *name = "no entries 6x7"; return from_lengths(6, 7, len, 0);
  case 4: *name = "1x1 empty"; return from_lengths(1, 1, len, 0);
  case 5:
    *name = "1x1";
    len[0] = 1;
    return from_lengths(1, 1, len, 0);
  case 6:
    *name = "wide 3x200";
    for (i = 0; i < 3; i++)
      len[i] = 60 + 20 * i;
    return from_lengths(3, 200, len, 0);
  case 7:
    *name = "tall 200x3";
    for (i = 0; i < 200; i++)
      len[i] = i % 4;
    return from_lengths(200, 3, len, 0);
  case 8:
    *name = "empty rows 100x80";
    for (i = 0; i < 100; i++)
      len[i] = i % 3 == 0 ? 0 : (int64_t)(rng_unit() * 11);
    return from_lengths(100, 80, len, 0);
  case 9:
    *name = "one full row 64x64";
    for (i = 0; i < 64; i++)
      len[i] = i == 10 ? 64 : i % 3;
    return from_lengths(64, 64, len, 0);
  case 10:
    /* Long rows: with max TPR 512 and base 8, rows over 2048 are split in
     * chunks of 16384: 2049 (one chunk), 16384 (one), 16385 and 18000 (two). */
    *name = "long rows 40x20000";
    for (i = 0; i < 40; i++)
      len[i] = (int64_t)(rng_unit() * 13);
    len[3] = 2048;
    len[7] = 2049;
    len[11] = 16384;
    len[20] = 16385;
    len[39] = 18000;
    return from_lengths(40, 20000, len, 0);
  case 11:
    *name = "unsorted columns and duplicates 50x30";
    for (i = 0; i < 50; i++)
      len[i] = (int64_t)(rng_unit() * 20);
    return from_lengths(50, 30, len, 1);
  case 12:
    *name = "varied rows 257x300";
    for (i = 0; i < 257; i++)
      len[i] = (int64_t)(rng_unit() * rng_unit() * 60);
    return from_lengths(257, 300, len, 0);
  case 13:
  case 14:
    /* Blocks of 3 (BSR at 3), and of 2 over duplicates (summed in). */
    *name = which == 13 ? "3x3 blocks 60x48" : "2x2 blocks, duplicates 40x40";
    for (i = 0; i < 20; i++)
      len[i] = (int64_t)(rng_unit() * 7);
    return blocks_of(from_lengths(20, which == 13 ? 16 : 20, len, which == 14),
                     which == 13 ? 3 : 2);
  }
  return NULL;
}
#define NGALLERY 15

START_TEST(test_gallery)
{
  const char *name = "";
  struct spmv_csr *A = gallery(_i, &name);

  ck_assert(A != NULL);
  check_all(name, A, NULL);
  spmv_csr_free(A);
}
END_TEST

/* sell16 and csr16 hold a row spanning 65535 columns (offsets 0..65534;
 * 0xFFFF is sell16's padding) and refuse one spanning 65536, naming the
 * row. */
START_TEST(test_sell16_span)
{
  struct spmv_config cfg = { _i ? SPMV_FMT_CSR16 : SPMV_FMT_SELL16, 0, 1, 0, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_csr_new(3, 70000, 5);
  struct spmv_layout *L = NULL;
  ck_assert(A != NULL);
  A->row_ptr[1] = 1;
  A->row_ptr[2] = 3;
  A->row_ptr[3] = 5;
  A->col_idx[0] = 69999;                        /* one entry: span 0 */
  A->col_idx[1] = 70000 - 65535;
  A->col_idx[2] = 69999;                        /* span 65534 */
  A->col_idx[3] = 100;
  A->col_idx[4] = 100 + 65534;                  /* span 65534 */
  for (int k = 0; k < 5; k++)
    A->val[k] = k + 1;
  ck_assert_int_eq(spmv_csr_max_row_span(A), 65534);
  ck_assert_msg(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err) == 0,
                "%s", err.msg);
  if (_i) {
    ck_assert_int_eq(L->u.csr.base[1], 70000 - 65535);
    ck_assert_int_eq(L->u.csr.col16[2], 65534);
  } else {
    ck_assert_int_eq(L->u.sell.base[1], 70000 - 65535);
    ck_assert_int_eq(L->u.sell.col16[32 + 1], 65534);
  }
  L = spmv_layout_free(L);
  check_layout("span 65534", A, &cfg, SPMV_F64, NULL, 0);
  A->col_idx[4] = 100 + 65535;                  /* row 2 spans 65536 */
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err),
                   SPMV_ETOOBIG);
  ck_assert_msg(strstr(err.msg, "row 2 spans 65536 columns") != NULL &&
                strstr(err.msg, _i ? "csr16" : "sell16") == err.msg, "%s",
                err.msg);
  ck_assert(L == NULL);
  spmv_csr_free(A);
}
END_TEST

/* Replaces a typed CSR's 32-bit offsets with 64-bit ones, as a matrix of
 * 2^31 or more entries would have them. */
static void widen_offsets(struct spmv_csr_layout *C, int64_t rows)
{
  int64_t i;

  C->row_ptr64 = malloc((size_t)(rows + 1) * sizeof *C->row_ptr64);
  ck_assert(C->row_ptr64 != NULL);
  for (i = 0; i <= rows; i++)
    C->row_ptr64[i] = C->row_ptr32[i];
  free(C->row_ptr32);
  C->row_ptr32 = NULL;
}

/* The references read 64-bit offsets as they read 32-bit ones: same sums. */
START_TEST(test_row_ptr64)
{
  static const struct spmv_config cfgs[] = {
    { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 0, 2, 1, 0 },
    { SPMV_FMT_CSR_STREAM, 32, 0, 1, 0 },
  };
  const char *name;
  struct spmv_csr *A = gallery(12, &name);
  struct spmv_error err = { 0, "" };
  double *x = malloc((size_t)A->cols * sizeof *x);
  double *y32 = malloc((size_t)A->rows * sizeof *y32);
  double *y64 = malloc((size_t)A->rows * sizeof *y64);
  int c;

  ck_assert(x && y32 && y64);
  random_vector(SPMV_F64, A->cols, x, x);
  for (c = 0; c < 3; c++) {
    struct spmv_layout *L = NULL;
    struct spmv_csr_layout *C;

    ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfgs[c], NULL, &L, &err),
                     0);
    ck_assert_int_eq(spmv_layout_spmv(L, 1.5, x, 0, y32), 0);
    C = c == 0 ? &L->u.csr : c == 1 ? &L->u.adaptive.csr : &L->u.stream.csr;
    widen_offsets(C, A->rows);
    ck_assert_int_eq(spmv_layout_spmv(L, 1.5, x, 0, y64), 0);
    ck_assert_mem_eq(y32, y64, (size_t)A->rows * sizeof *y32);
    spmv_layout_free(L);
  }
  free(x);
  free(y32);
  free(y64);
  spmv_csr_free(A);
}
END_TEST

/* The shared matrices, listed once by formats_suite(). */
static char **matrix_paths;
static int nmatrices;

static int is_matrix(const char *f)
{
  size_t n = strlen(f);

  return (n > 4 && strcmp(f + n - 4, ".mtx") == 0) ||
         (n > 7 && strcmp(f + n - 7, ".mtx.gz") == 0);
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the matrix folder (testdata.h). */
static void list_matrices(void)
{
  const char *dir = testdata_dir();
  struct dirent *e;
  DIR *d;

  d = opendir(dir);
  if (d == NULL)
    return;
  while ((e = readdir(d)) != NULL) {
    char *p;

    if (!is_matrix(e->d_name))
      continue;
    p = malloc(strlen(dir) + strlen(e->d_name) + 2);
    matrix_paths = realloc(matrix_paths, (size_t)(nmatrices + 1) *
                                         sizeof *matrix_paths);
    if (p == NULL || matrix_paths == NULL)
      abort();
    sprintf(p, "%s/%s", dir, e->d_name);
    matrix_paths[nmatrices++] = p;
  }
  closedir(d);
  qsort(matrix_paths, (size_t)nmatrices, sizeof *matrix_paths, cmp_str);
}

/*
 * Every configuration on one shared matrix, within 1 GiB a layout: enough
 * for every padded ELL and ELLR-T layout of the shared matrices (the largest,
 * ca-HepPh's, is about 0.5 GB), so that only DIA is refused, on the three
 * matrices whose diagonals would need more; the formats without padding
 * never are.  Also checks
 * hyb's K and dia's diagonals against the profile's.
 */
START_TEST(test_shared)
{
  struct spmv_limits lim = { (size_t)1 << 30, 0, 0 };
  struct spmv_config hyb = { SPMV_FMT_HYB, 0, 0, 0, 0 };
  struct spmv_config dia = { SPMV_FMT_DIA, 0, 0, 0, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = NULL;
  struct spmv_layout *L = NULL;
  struct spmv_profile prof;
  const char *name = strrchr(matrix_paths[_i], '/') + 1;
  int c, refused = 0;

  ck_assert_msg(spmv_mmio_read(matrix_paths[_i], &A, NULL, &err) == 0,
                "%s: %s", name, err.msg);
  ck_assert_msg(spmv_profile_compute(A, &prof, &err) == 0, "%s", err.msg);
  for (c = 0; c < NCONFIGS; c++) {
    enum spmv_format f = configs[c].format;
    int padded = f == SPMV_FMT_ELL || f == SPMV_FMT_ELLR_T ||
                 f == SPMV_FMT_DIA || f == SPMV_FMT_HYB;

    refused += check_layout(name, A, &configs[c], SPMV_F32, &lim, padded);
    refused += check_layout(name, A, &configs[c], SPMV_F64, &lim, padded);
  }
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F32, &hyb, NULL, &L, &err), 0);
  ck_assert_msg(L->u.hyb.k == prof.hyb_k, "%s: hyb K %lld, profile %lld",
                name, (long long)L->u.hyb.k, (long long)prof.hyb_k);
  L = spmv_layout_free(L);
  if (spmv_layout_new(A, SPMV_F32, &dia, &lim, &L, &err) == 0)
    ck_assert_int_eq(L->u.dia.ndiags, prof.ndiags);
  L = spmv_layout_free(L);
  if (refused > 0)
    printf("%s: %d layouts over 1 GiB refused\n", name, refused);
  spmv_csr_free(A);
}
END_TEST

Suite *formats_suite(void)
{
  Suite *s = suite_create("formats");
  TCase *tc = tcase_create("layouts");

  tcase_add_loop_test(tc, test_sell16_span, 0, 2);
  tcase_add_test(tc, test_row_ptr64);
  suite_add_tcase(s, tc);
  tc = tcase_create("gallery");

  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_gallery, 0, NGALLERY);
  suite_add_tcase(s, tc);
  list_matrices();
  tc = tcase_create("shared");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_shared, 0, nmatrices);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(formats_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  if (nmatrices == 0)
    fprintf(stderr, "no .mtx or .mtx.gz files in %s\n", testdata_dir());
  return failed == 0 && nmatrices > 0 ? 0 : 1;
}
