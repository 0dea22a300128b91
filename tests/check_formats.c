/* check_formats.c: every layout's CPU reference against the plain CSR loop. */
#include <check.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_formats.h"
#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "testdata.h"

Suite *formats_suite(void);

/* Every configuration whose parameters change the layout. */
static const struct spmv_config configs[] = {
  { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 },
  { SPMV_FMT_CSR_VECTOR, 0, 4, 0, 0 },
  { SPMV_FMT_CSR_MERGE, 0, 0, 0, 0 },
  { SPMV_FMT_CUSPARSE, 0, 0, 1, 0 },
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

/* A deterministic generator (xorshift64*). */
static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng_next(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* Uniform in [0, 1). */
static double rng_unit(void)
{
  return (double)(rng_next() >> 11) / 9007199254740992.0;
}

/* Non-zero, of either sign, magnitude in [0.5, 1.5). */
static double rng_value(void)
{
  double v = 0.5 + rng_unit();

  return rng_next() & 1 ? v : -v;
}

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

/* Generated matrices: a CSR from row lengths, columns and values drawn from
 * the generator (columns distinct within a row unless dup is set). */
static struct spmv_csr *from_lengths(int64_t rows, int64_t cols,
                                     const int64_t *len, int dup)
{
  struct spmv_csr *A;
  int64_t i, k, nnz = 0;
  char *used = calloc((size_t)cols + 1, 1);

  for (i = 0; i < rows; i++)
    nnz += len[i];
  A = spmv_csr_new(rows, cols, nnz);
  ck_assert(A != NULL && used != NULL);
  for (i = 0; i < rows; i++) {
    int64_t lo = A->row_ptr[i];

    A->row_ptr[i + 1] = lo + len[i];
    for (k = 0; k < len[i]; k++) {
      int64_t c = (int64_t)(rng_unit() * (double)cols);

      while (!dup && used[c])
        c = (c + 1) % cols;
      used[c] = 1;
      A->col_idx[lo + k] = (int32_t)c;
      A->val[lo + k] = rng_value();
    }
    for (k = 0; k < len[i]; k++)
      used[A->col_idx[lo + k]] = 0;
  }
  free(used);
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
  }
  return NULL;
}
#define NGALLERY 13

START_TEST(test_gallery)
{
  const char *name = "";
  struct spmv_csr *A = gallery(_i, &name);

  ck_assert(A != NULL);
  check_all(name, A, NULL);
  spmv_csr_free(A);
}
END_TEST

/*
 * The small matrix of the layout tests, 5x6 with row lengths 2, 0, 3, 1, 2:
 *   row 0: (0,1)=1 (0,4)=2
 *   row 2: (2,0)=3 (2,2)=4 (2,5)=5
 *   row 3: (3,3)=6
 *   row 4: (4,0)=7 (4,5)=8
 */
static struct spmv_csr *small_matrix(void)
{
  static const int64_t ptr[] = { 0, 2, 2, 5, 6, 8 };
  static const int32_t col[] = { 1, 4, 0, 2, 5, 3, 0, 5 };
  struct spmv_csr *A = spmv_csr_new(5, 6, 8);
  int i;

  ck_assert(A != NULL);
  memcpy(A->row_ptr, ptr, sizeof ptr);
  memcpy(A->col_idx, col, sizeof col);
  for (i = 0; i < 8; i++)
    A->val[i] = i + 1;
  return A;
}

/* Converts the small matrix to cfg in f64; the caller frees the layout. */
static struct spmv_layout *small_layout(enum spmv_format f, int tpr,
                                        int param, int param2)
{
  struct spmv_config cfg = { f, 0, tpr, param, param2 };
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = small_matrix();
  struct spmv_layout *L = NULL;

  ck_assert_msg(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err) == 0,
                "%s", err.msg);
  spmv_csr_free(A);
  return L;
}

/* Value at position k of a f64 layout array. */
#define V(arr, k) (((const double *)(arr))[k])

START_TEST(test_layout_csr)
{
  struct spmv_layout *L = small_layout(SPMV_FMT_CSR_SCALAR, 0, 0, 0);

  ck_assert(L->u.csr.row_ptr32 != NULL && L->u.csr.row_ptr64 == NULL);
  ck_assert_int_eq(L->u.csr.row_ptr32[3], 5);
  ck_assert_int_eq(L->u.csr.col[4], 5);
  ck_assert(V(L->u.csr.val, 4) == 5);
  ck_assert_uint_eq(L->bytes, 6 * 4 + 8 * 4 + 8 * 8);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_adaptive)
{
  /* base 1, max TPR 2: bin 0 lengths <= 1, bin 1 (1, 2], longer rows in
   * chunks of 4 * 1 * 2 = 8. */
  struct spmv_layout *L = small_layout(SPMV_FMT_CSR_ADAPTIVE, 2, 1, 0);
  const struct spmv_adaptive_layout *D = &L->u.adaptive;
  static const int32_t rows[] = { 1, 3, 0, 4 };

  ck_assert_int_eq(D->base, 1);
  ck_assert_int_eq(D->nbins, 2);
  ck_assert_int_eq(D->bin_start[0], 0);
  ck_assert_int_eq(D->bin_start[1], 2);
  ck_assert_int_eq(D->bin_start[2], 4);
  ck_assert_mem_eq(D->rows, rows, sizeof rows);
  ck_assert_int_eq(D->nlong, 1);
  ck_assert_int_eq(D->long_rows[0], 2);
  ck_assert_int_eq(D->long_chunk[0], 0);
  ck_assert_int_eq(D->long_chunk[1], 1);
  ck_assert_int_eq(D->chunk_len, 8);
  ck_assert_int_eq(D->nchunks, 1);
  L = spmv_layout_free(L);
  /* Defaults: base 8, max TPR 512, 10 bins, chunks of 16384. */
  L = small_layout(SPMV_FMT_CSR_ADAPTIVE, 0, 0, 0);
  ck_assert_int_eq(L->u.adaptive.base, 8);
  ck_assert_int_eq(L->u.adaptive.nbins, 10);
  ck_assert_int_eq(L->u.adaptive.chunk_len, 16384);
  ck_assert_int_eq(L->u.adaptive.bin_start[1], 5);
  ck_assert_int_eq(L->u.adaptive.nlong, 0);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_ell)
{
  struct spmv_layout *L = small_layout(SPMV_FMT_ELL, 0, 0, 0);
  const struct spmv_ell_layout *E = &L->u.ell;

  ck_assert_int_eq(E->width, 3);
  ck_assert_int_eq(E->pitch, 32);
  ck_assert_int_eq(E->col[0 * 32 + 0], 1);
  ck_assert_int_eq(E->col[1 * 32 + 0], 4);
  ck_assert_int_eq(E->col[2 * 32 + 0], -1);
  ck_assert_int_eq(E->col[0 * 32 + 1], -1);
  ck_assert_int_eq(E->col[2 * 32 + 2], 5);
  ck_assert_int_eq(E->col[0 * 32 + 5], -1);
  ck_assert(V(E->val, 2 * 32 + 2) == 5 && V(E->val, 2 * 32 + 0) == 0);
  ck_assert_uint_eq(L->bytes, 3 * 32 * (4 + 8));
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_ellr_t)
{
  /* T = 2: entry j of row i at (j / 2) * 64 + 2 i + j % 2. */
  struct spmv_layout *L = small_layout(SPMV_FMT_ELLR_T, 2, 0, 0);
  const struct spmv_ellr_layout *R = &L->u.ellr;

  ck_assert_int_eq(R->t, 2);
  ck_assert_int_eq(R->iters, 2);
  ck_assert_int_eq(R->pitch, 32);
  ck_assert_int_eq(R->rl[2], 3);
  ck_assert_int_eq(R->rl[1], 0);
  ck_assert_int_eq(R->col[4], 0);
  ck_assert_int_eq(R->col[5], 2);
  ck_assert_int_eq(R->col[64 + 4], 5);
  ck_assert_int_eq(R->col[64 + 5], -1);
  ck_assert_int_eq(R->col[1], 4);
  ck_assert(V(R->val, 64 + 4) == 5);
  ck_assert_uint_eq(L->bytes, 5 * 4 + 2 * 32 * 2 * (4 + 8));
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_coo_hyb)
{
  static const int32_t rows[] = { 0, 0, 2, 2, 2, 3, 4, 4 };
  static const int32_t rest[] = { 0, 2, 2, 4 };
  struct spmv_layout *L = small_layout(SPMV_FMT_COO, 0, 0, 0);

  ck_assert_mem_eq(L->u.coo.row, rows, sizeof rows);
  L = spmv_layout_free(L);
  L = small_layout(SPMV_FMT_HYB, 0, 1, 0);
  ck_assert_int_eq(L->u.hyb.k, 1);
  ck_assert_int_eq(L->u.hyb.ell.width, 1);
  ck_assert_int_eq(L->u.hyb.ell.col[2], 0);
  ck_assert_int_eq(L->u.hyb.coo_nnz, 4);
  ck_assert_mem_eq(L->u.hyb.coo.row, rest, sizeof rest);
  ck_assert_int_eq(L->u.hyb.coo.col[2], 5);
  L = spmv_layout_free(L);
  /* Lengths 3, 2, 2, 1, 0: three rows of 2 or more is at least 5/3. */
  L = small_layout(SPMV_FMT_HYB, 0, 0, 0);
  ck_assert_int_eq(L->u.hyb.k, 2);
  ck_assert_int_eq(L->u.hyb.coo_nnz, 1);
  L = spmv_layout_free(L);
  /* A K past the longest row is cut to it. */
  L = small_layout(SPMV_FMT_HYB, 0, 50, 0);
  ck_assert_int_eq(L->u.hyb.k, 3);
  ck_assert_int_eq(L->u.hyb.coo_nnz, 0);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_dia)
{
  static const int32_t offsets[] = { -4, -2, 0, 1, 3, 4 };
  struct spmv_layout *L = small_layout(SPMV_FMT_DIA, 0, 0, 0);
  const struct spmv_dia_layout *D = &L->u.dia;

  ck_assert_int_eq(D->ndiags, 6);
  ck_assert_mem_eq(D->offsets, offsets, sizeof offsets);
  ck_assert(V(D->val, 3 * 32 + 4) == 8);   /* offset 1, row 4 */
  ck_assert(V(D->val, 2 * 32 + 2) == 4);   /* offset 0, row 2 */
  ck_assert(V(D->val, 0 * 32 + 0) == 0);   /* offset -4, row 0: outside */
  ck_assert_uint_eq(L->bytes, 6 * 4 + 6 * 32 * 8);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_jad)
{
  static const int32_t perm[] = { 2, 0, 4, 3, 1 };
  static const int64_t jd_ptr[] = { 0, 4, 7, 8 };
  static const int32_t col[] = { 0, 1, 0, 3, 2, 4, 5, 5 };
  struct spmv_layout *L = small_layout(SPMV_FMT_JAD, 0, 0, 0);

  ck_assert_int_eq(L->u.jad.njd, 3);
  ck_assert_mem_eq(L->u.jad.perm, perm, sizeof perm);
  ck_assert_mem_eq(L->u.jad.jd_ptr, jd_ptr, sizeof jd_ptr);
  ck_assert_mem_eq(L->u.jad.col, col, sizeof col);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_sell)
{
  /* C = 2, sigma = 4: window {0,1,2,3} sorted to 2, 0, 3, 1; then 4. */
  static const int32_t perm[] = { 2, 0, 3, 1, 4, -1 };
  static const int64_t slice_ptr[] = { 0, 6, 8, 12 };
  static const int32_t width[] = { 3, 1, 2 };
  static const int32_t col[] = { 0, 1, 2, 4, 5, -1, 3, -1, 0, -1, 5, -1 };
  struct spmv_layout *L = small_layout(SPMV_FMT_SELL, 0, 2, 4);
  const struct spmv_sell_layout *S = &L->u.sell;

  ck_assert_int_eq(S->c, 2);
  ck_assert_int_eq(S->sigma, 4);
  ck_assert_int_eq(S->nslices, 3);
  ck_assert_mem_eq(S->perm, perm, sizeof perm);
  ck_assert_mem_eq(S->slice_ptr, slice_ptr, sizeof slice_ptr);
  ck_assert_mem_eq(S->slice_width, width, sizeof width);
  ck_assert_mem_eq(S->col, col, sizeof col);
  ck_assert(V(S->val, 3) == 2 && V(S->val, 5) == 0);
  L = spmv_layout_free(L);
  /* sigma 1: rows in order. */
  L = small_layout(SPMV_FMT_SELL, 0, 2, 1);
  ck_assert_int_eq(L->u.sell.perm[0], 0);
  ck_assert_int_eq(L->u.sell.perm[2], 2);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_sell16)
{
  /* The sell layout above (C 2, sigma 4) with each lane's smallest column
   * as base and offsets from it; padding 0xFFFF, the empty row's base 0. */
  static const int32_t base[] = { 0, 1, 3, 0, 0, 0 };
  static const uint16_t col16[] = { 0, 0, 2, 3, 5, 0xFFFF,
                                    0, 0xFFFF, 0, 0xFFFF, 5, 0xFFFF };
  struct spmv_layout *L = small_layout(SPMV_FMT_SELL16, 0, 2, 4);
  const struct spmv_sell_layout *S = &L->u.sell;

  ck_assert(S->col == NULL);
  ck_assert_int_eq(S->nslices, 3);
  ck_assert_mem_eq(S->base, base, sizeof base);
  ck_assert_mem_eq(S->col16, col16, sizeof col16);
  ck_assert(V(S->val, 3) == 2 && V(S->val, 5) == 0);
  spmv_layout_free(L);
}
END_TEST

START_TEST(test_layout_csr16)
{
  /* Rows 0, 2, 3, 4 start at columns 1, 0, 3, 0; the empty row's base 0. */
  static const int32_t base[] = { 1, 0, 0, 3, 0 };
  static const uint16_t col16[] = { 0, 3, 0, 2, 5, 0, 0, 5 };
  static const int32_t ptr[] = { 0, 2, 2, 5, 6, 8 };
  struct spmv_layout *L = small_layout(SPMV_FMT_CSR16, 4, 0, 0);
  const struct spmv_csr_layout *C = &L->u.csr;

  ck_assert(C->col == NULL && C->row_ptr64 == NULL);
  ck_assert_mem_eq(C->row_ptr32, ptr, sizeof ptr);
  ck_assert_mem_eq(C->base, base, sizeof base);
  ck_assert_mem_eq(C->col16, col16, sizeof col16);
  ck_assert(V(C->val, 4) == 5);
  /* 6 offsets, 5 bases, 8 offsets of 2 bytes, 8 doubles. */
  ck_assert_uint_eq(L->bytes, 6 * 4 + 5 * 4 + 8 * 2 + 8 * 8);
  spmv_layout_free(L);
}
END_TEST

/* csr-panel: three panels of 1024 columns, slots panel-major, offsets from
 * the panel's first column; a panel sum per slot, added in panel order. */
START_TEST(test_layout_panel)
{
  static const int64_t rp[] = { 0, 4, 6 };
  static const int32_t ci[] = { 5, 10, 1500, 2999, 1024, 2048 };
  static const double v[] = { 1, 2, 3, 4, 5, 6 };
  /* Slots p0r0, p0r1, p1r0, p1r1, p2r0, p2r1. */
  static const int32_t ptr[] = { 0, 2, 2, 3, 4, 5, 6 };
  static const uint16_t col16[] = { 5, 10, 476, 0, 951, 0 };
  static const double val[] = { 1, 2, 3, 5, 4, 6 };
  struct spmv_config cfg = { SPMV_FMT_CSR_PANEL, 0, 2, 1024, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = spmv_csr_new(2, 3000, 6);
  struct spmv_layout *L = NULL;
  double *x = calloc(3000, sizeof *x), y[2] = { 7, 7 };

  ck_assert(A != NULL && x != NULL);
  memcpy(A->row_ptr, rp, sizeof rp);
  memcpy(A->col_idx, ci, sizeof ci);
  memcpy(A->val, v, sizeof v);
  x[5] = 1, x[10] = 10, x[1500] = 100, x[2999] = 1000, x[1024] = 3;
  x[2048] = 0.5;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  ck_assert_int_eq(L->u.panel.npanels, 3);
  ck_assert_int_eq(L->u.panel.width, 1024);
  ck_assert(L->u.panel.csr.col == NULL && L->u.panel.csr.row_ptr64 == NULL);
  ck_assert_mem_eq(L->u.panel.csr.row_ptr32, ptr, sizeof ptr);
  ck_assert_mem_eq(L->u.panel.csr.col16, col16, sizeof col16);
  ck_assert_mem_eq(L->u.panel.csr.val, val, sizeof val);
  /* 7 offsets, 6 offsets of 2 bytes, 6 doubles. */
  ck_assert_uint_eq(L->bytes, 7 * 4 + 6 * 2 + 6 * 8);
  ck_assert_int_eq(spmv_layout_spmv(L, 2, x, 0.5, y), 0);
  ck_assert(y[0] == 2 * (1 + 20 + 300 + 4000) + 3.5);
  ck_assert(y[1] == 2 * (15 + 3) + 3.5);
  spmv_layout_free(L);
  /* One entry per row: 6 slots for 2 entries, over two per entry. */
  A->row_ptr[1] = 1;
  A->row_ptr[2] = 2;
  A->col_idx[1] = 2500;
  A->nnz = 2;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err),
                   SPMV_ETOOBIG);
  ck_assert_msg(strstr(err.msg, "3 panels of 1024 columns x 2 rows make 6 "
                       "row slots for 2 entries") != NULL, "%s", err.msg);
  /* One panel is never too sparse: a wide panel takes the same matrix. */
  cfg.param = 4096;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  ck_assert_int_eq(L->u.panel.npanels, 1);
  spmv_layout_free(L);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* How the GPU worker takes a matrix into the L2: read within half of it
 * (arrays, x and y), written back within SPMV_L2_WRITE_SHARE, streamed
 * beyond; an unknown L2 (0) or no arrays never. */
START_TEST(test_l2_warm_mode)
{
  const size_t l2 = (size_t)60 << 20; /* an H200's */

  /* cop20k_A in f32: 21.3 MB of arrays, 121192 rows and columns. */
  ck_assert_int_eq(spmv_l2_warm_mode(21300000, 121192, 121192, SPMV_F32, l2),
                   SPMV_L2_WARM_READ);
  /* The same in f64 (32.5 MB of arrays): over 30 MB with x and y. */
  ck_assert_int_eq(spmv_l2_warm_mode(32500000, 121192, 121192, SPMV_F64, l2),
                   SPMV_L2_WARM_WRITE);
  /* Exactly half, counting x and y: read; one byte more: written. */
  ck_assert_int_eq(spmv_l2_warm_mode(l2 / 2 - 16 * 8, 8, 8, SPMV_F64, l2),
                   SPMV_L2_WARM_READ);
  ck_assert_int_eq(spmv_l2_warm_mode(l2 / 2 - 16 * 8 + 1, 8, 8, SPMV_F64, l2),
                   SPMV_L2_WARM_WRITE);
  /* pdb1HYS's sell in f32, 52 MB: written; cant's ell, 70 MB: streamed. */
  ck_assert_int_eq(spmv_l2_warm_mode(52000000, 36417, 36417, SPMV_F32, l2),
                   SPMV_L2_WARM_WRITE);
  ck_assert_int_eq(spmv_l2_warm_mode(70000000, 62451, 62451, SPMV_F32, l2),
                   SPMV_L2_WARM_NONE);
  /* The write share's edge. */
  size_t edge = (size_t)(SPMV_L2_WRITE_SHARE * (double)l2) - 16 * 8;
  ck_assert_int_eq(spmv_l2_warm_mode(edge, 8, 8, SPMV_F64, l2), SPMV_L2_WARM_WRITE);
  ck_assert_int_eq(spmv_l2_warm_mode(edge + 2, 8, 8, SPMV_F64, l2), SPMV_L2_WARM_NONE);
  ck_assert_int_eq(spmv_l2_warm_mode(1000, 10, 10, SPMV_F32, 0), SPMV_L2_WARM_NONE);
  ck_assert_int_eq(spmv_l2_warm_mode(0, 10, 10, SPMV_F32, l2), SPMV_L2_WARM_NONE);
  /* When: once the matrix is reused (its second product in a row, or a
   * batch of two); never without products or beyond the L2. */
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_READ, 0, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_READ, 1, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_READ, 0, 3));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 0, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 1, 1));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 0, 2));
  ck_assert(spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 40, 1));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_NONE, 40, 8));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_READ, 0, 0));
  ck_assert(!spmv_l2_warm_now(SPMV_L2_WARM_WRITE, 5, 0));
}
END_TEST

/* csr-stream's cut at BS 32, k 1 (cap 32 entries and rows, chunks of 128),
 * worked by hand: rows of 10, 20 | 5 | 40L | 33L | 0, 32 | 1 | 200L, where a
 * long row (L) closes the open block and is in none. */
START_TEST(test_layout_stream)
{
  static const int64_t len[] = { 10, 20, 5, 40, 33, 0, 32, 1, 200 };
  static const int32_t blk_row[] = { 0, 2, 2, 3, 5, 7, 7, 8 };
  static const int64_t blk_ent[] = { 0, 30, 30, 35, 108, 140, 140, 141 };
  static const int32_t long_rows[] = { 3, 4, 8 };
  static const int64_t long_chunk[] = { 0, 1, 2, 4 };
  int64_t empty[70] = { 0 };
  struct spmv_config cfg = { SPMV_FMT_CSR_STREAM, 32, 0, 1, 0 };
  struct spmv_csr *A = from_lengths(9, 300, len, 0);
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL;
  const struct spmv_stream_layout *D;

  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  D = &L->u.stream;
  ck_assert_int_eq(D->cap, 32);
  ck_assert_int_eq(D->chunk_len, 128);
  ck_assert_int_eq(D->nblocks, 4);
  ck_assert_int_eq(D->nlong, 3);
  ck_assert_int_eq(D->nchunks, 4);
  ck_assert_int_eq(D->sparse, 0); /* 1 of 9 rows empty, under an eighth */
  ck_assert_mem_eq(D->blk_row, blk_row, sizeof blk_row);
  ck_assert_mem_eq(D->blk_ent, blk_ent, sizeof blk_ent);
  ck_assert_mem_eq(D->long_rows, long_rows, sizeof long_rows);
  ck_assert_mem_eq(D->long_chunk, long_chunk, sizeof long_chunk);
  /* Typed CSR (10 offsets, 341 columns and doubles), the blocks' rows
   * and entries, long rows, chunks. */
  ck_assert_uint_eq(L->bytes,
                    10 * 4 + 341 * 12 + 8 * 4 + 8 * 8 + 3 * 4 + 4 * 8);
  spmv_layout_free(L);
  spmv_csr_free(A);
  /* 70 empty rows: blocks of at most cap = 32 rows. */
  A = from_lengths(70, 5, empty, 0);
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F32, &cfg, NULL, &L, &err), 0);
  ck_assert_int_eq(L->u.stream.nblocks, 3);
  ck_assert_int_eq(L->u.stream.blk_row[1], 32);
  ck_assert_int_eq(L->u.stream.blk_row[4], 64);
  ck_assert_int_eq(L->u.stream.blk_row[5], 70);
  ck_assert_int_eq(L->u.stream.sparse, 1);
  spmv_layout_free(L);
  spmv_csr_free(A);
}
END_TEST

/* Shells (the layouts the GPU completes from the CSR): for each typed-CSR
 * format, the full layout less col and val, with the same row offsets,
 * tables and byte count; for sell and sell16 the same slices, and for the
 * other staged formats what their host part builds, without the entries;
 * the CPU product refuses one; csr-panel has none, and says so. */
START_TEST(test_layout_shell)
{
  static const int64_t len[] = { 10, 20, 5, 40, 33, 0, 32, 1, 200 };
  static const struct spmv_config ok[] = {
    { SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0 }, { SPMV_FMT_CSR_VECTOR, 64, 8, 0, 0 },
    { SPMV_FMT_CSR_ADAPTIVE, 64, 0, 0, 0 }, { SPMV_FMT_CSR_MERGE, 128, 0, 0, 0 },
    { SPMV_FMT_CSR_STREAM, 32, 0, 1, 0 }, { SPMV_FMT_CUSPARSE, 0, 0, 1, 0 },
  };
  static const enum spmv_format no[] = { SPMV_FMT_CSR_PANEL };
  struct spmv_csr *A = from_lengths(9, 300, len, 0);
  struct spmv_error err = { 0, "" };
  double x[300] = { 0 }, y[9] = { 0 };

  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    for (int dt = 0; dt < 2; dt++) {
      enum spmv_dtype t = dt ? SPMV_F32 : SPMV_F64;
      struct spmv_layout *L = NULL, *S = NULL;
      const struct spmv_csr_layout *c, *cs;

      ck_assert_int_eq(spmv_layout_shell_ok(ok[i].format), 1);
      ck_assert_int_eq(spmv_layout_new(A, t, &ok[i], NULL, &L, &err), 0);
      ck_assert_int_eq(spmv_layout_new_shell(A, t, &ok[i], NULL, &S, &err), 0);
      c = spmv_layout_typed_csr(L);
      cs = spmv_layout_typed_csr(S);
      ck_assert_ptr_nonnull(cs);
      ck_assert_int_eq(S->shell, 1);
      ck_assert_int_eq(L->shell, 0);
      ck_assert_ptr_null(cs->col);
      ck_assert_ptr_null(cs->val);
      ck_assert_ptr_nonnull(c->col);
      ck_assert_ptr_nonnull(c->val);
      ck_assert_mem_eq(cs->row_ptr32, c->row_ptr32, 10 * sizeof(int32_t));
      ck_assert_uint_eq(S->bytes, L->bytes);
      if (ok[i].format == SPMV_FMT_CSR_STREAM) {
        ck_assert_int_eq(S->u.stream.nblocks, L->u.stream.nblocks);
        ck_assert_mem_eq(S->u.stream.blk_ent, L->u.stream.blk_ent,
                         2 * (size_t)L->u.stream.nblocks * sizeof(int64_t));
      }
      if (ok[i].format == SPMV_FMT_CSR_ADAPTIVE) {
        ck_assert_int_eq(S->u.adaptive.nlong, L->u.adaptive.nlong);
        ck_assert_mem_eq(S->u.adaptive.rows, L->u.adaptive.rows,
                         (size_t)(9 - L->u.adaptive.nlong) * sizeof(int32_t));
      }
      ck_assert_int_eq(spmv_layout_spmv(S, 1, x, 0, y), SPMV_EFORMAT);
      spmv_layout_free(S);
      spmv_layout_free(L);
    }
  }
  /* sell and sell16: the slices (and sell16's lane bases) without the
   * entries. */
  for (int f = 0; f < 2; f++) {
    struct spmv_config cfg = { f ? SPMV_FMT_SELL16 : SPMV_FMT_SELL, 32, 0, 4, 8 };
    struct spmv_layout *L = NULL, *S = NULL;
    const struct spmv_sell_layout *a, *b;

    ck_assert_int_eq(spmv_layout_new(A, SPMV_F32, &cfg, NULL, &L, &err), 0);
    ck_assert_int_eq(spmv_layout_new_shell(A, SPMV_F32, &cfg, NULL, &S, &err), 0);
    a = &L->u.sell;
    b = &S->u.sell;
    ck_assert_ptr_null(spmv_layout_typed_csr(S));
    ck_assert_ptr_null(b->col);
    ck_assert_ptr_null(b->col16);
    ck_assert_ptr_null(b->val);
    ck_assert_uint_eq(S->bytes, L->bytes);
    ck_assert_int_eq(b->nslices, a->nslices);
    ck_assert_mem_eq(b->perm, a->perm, (size_t)(a->nslices * a->c) * sizeof(int32_t));
    ck_assert_mem_eq(b->slice_ptr, a->slice_ptr, (size_t)(a->nslices + 1) * sizeof(int64_t));
    if (f)
      ck_assert_mem_eq(b->base, a->base, (size_t)(a->nslices * a->c) * sizeof(int32_t));
    else
      ck_assert_ptr_null(b->base);
    ck_assert_int_eq(spmv_layout_spmv(S, 1, x, 0, y), SPMV_EFORMAT);
    spmv_layout_free(S);
    spmv_layout_free(L);
  }
  /* csr16, ell, ellr-t, coo, hyb, jad, dia and csr-stream16: what the host
   * builds (row offsets and bases, widths, row lengths, hyb's split, jad's
   * order, dia's offsets, the blocks' and chunks' bases), without the
   * entries. */
  {
    static const struct spmv_config st[] = {
      { SPMV_FMT_CSR16, 64, 4, 0, 0 }, { SPMV_FMT_ELL, 64, 0, 0, 0 },
      { SPMV_FMT_ELLR_T, 64, 4, 0, 0 }, { SPMV_FMT_COO, 64, 0, 0, 0 },
      { SPMV_FMT_HYB, 64, 0, 16, 0 }, { SPMV_FMT_JAD, 64, 0, 0, 0 },
      { SPMV_FMT_DIA, 64, 0, 0, 0 }, { SPMV_FMT_CSR_STREAM16, 32, 0, 1, 0 },
    };
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
      struct spmv_layout *L = NULL, *S = NULL;

      ck_assert_int_eq(spmv_layout_shell_ok(st[i].format), 1);
      ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &st[i], NULL, &L, &err), 0);
      ck_assert_int_eq(spmv_layout_new_shell(A, SPMV_F64, &st[i], NULL, &S, &err), 0);
      ck_assert_ptr_null(spmv_layout_typed_csr(S));
      ck_assert_int_eq(S->shell, 1);
      ck_assert_uint_eq(S->bytes, L->bytes);
      if (st[i].format == SPMV_FMT_CSR16) {
        ck_assert_ptr_null(S->u.csr.col16);
        ck_assert_ptr_null(S->u.csr.val);
        ck_assert_mem_eq(S->u.csr.row_ptr32, L->u.csr.row_ptr32, 10 * sizeof(int32_t));
        ck_assert_mem_eq(S->u.csr.base, L->u.csr.base, 9 * sizeof(int32_t));
      } else if (st[i].format == SPMV_FMT_ELL) {
        ck_assert_ptr_null(S->u.ell.col);
        ck_assert_ptr_null(S->u.ell.val);
        ck_assert_int_eq(S->u.ell.width, L->u.ell.width);
        ck_assert_int_eq(S->u.ell.pitch, L->u.ell.pitch);
      } else if (st[i].format == SPMV_FMT_COO) {
        ck_assert_ptr_null(S->u.coo.row);
        ck_assert_ptr_null(S->u.coo.col);
        ck_assert_ptr_null(S->u.coo.val);
      } else if (st[i].format == SPMV_FMT_HYB) {
        ck_assert_ptr_null(S->u.hyb.ell.col);
        ck_assert_ptr_null(S->u.hyb.ell.val);
        ck_assert_ptr_null(S->u.hyb.coo.row);
        ck_assert_ptr_null(S->u.hyb.coo.val);
        ck_assert_int_eq(S->u.hyb.k, 16);
        ck_assert_int_eq(S->u.hyb.ell.width, L->u.hyb.ell.width);
        ck_assert_int_eq(S->u.hyb.ell.pitch, L->u.hyb.ell.pitch);
        ck_assert_int_eq(S->u.hyb.coo_nnz, L->u.hyb.coo_nnz);
        ck_assert_int_gt(S->u.hyb.coo_nnz, 0);
      } else if (st[i].format == SPMV_FMT_JAD) {
        ck_assert_ptr_null(S->u.jad.col);
        ck_assert_ptr_null(S->u.jad.val);
        ck_assert_int_eq(S->u.jad.njd, L->u.jad.njd);
        ck_assert_mem_eq(S->u.jad.perm, L->u.jad.perm, 9 * sizeof(int32_t));
        ck_assert_mem_eq(S->u.jad.jd_ptr, L->u.jad.jd_ptr,
                         (size_t)(L->u.jad.njd + 1) * sizeof(int64_t));
      } else if (st[i].format == SPMV_FMT_CSR_STREAM16) {
        const struct spmv_stream_layout *a = &L->u.stream, *b = &S->u.stream;
        ck_assert_ptr_null(b->csr.col16);
        ck_assert_ptr_null(b->csr.val);
        ck_assert_mem_eq(b->csr.row_ptr32, a->csr.row_ptr32, 10 * sizeof(int32_t));
        ck_assert_int_eq(b->nblocks, a->nblocks);
        ck_assert_int_eq(b->nchunks, a->nchunks);
        ck_assert_int_gt(b->nlong, 0);
        ck_assert_mem_eq(b->blk_base, a->blk_base, (size_t)a->nblocks * sizeof(int32_t));
        ck_assert_mem_eq(b->chunk_base, a->chunk_base, (size_t)a->nchunks * sizeof(int32_t));
      } else if (st[i].format == SPMV_FMT_DIA) {
        ck_assert_ptr_null(S->u.dia.val);
        ck_assert_int_eq(S->u.dia.ndiags, L->u.dia.ndiags);
        ck_assert_int_eq(S->u.dia.pitch, L->u.dia.pitch);
        ck_assert_mem_eq(S->u.dia.offsets, L->u.dia.offsets,
                         (size_t)L->u.dia.ndiags * sizeof(int32_t));
      } else {
        ck_assert_ptr_null(S->u.ellr.col);
        ck_assert_ptr_null(S->u.ellr.val);
        ck_assert_int_eq(S->u.ellr.iters, L->u.ellr.iters);
        ck_assert_int_eq(S->u.ellr.pitch, L->u.ellr.pitch);
        ck_assert_mem_eq(S->u.ellr.rl, L->u.ellr.rl, 9 * sizeof(int32_t));
      }
      ck_assert_int_eq(spmv_layout_spmv(S, 1, x, 0, y), SPMV_EFORMAT);
      spmv_layout_free(S);
      spmv_layout_free(L);
    }
  }
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    struct spmv_config cfg = { no[i], 32, 0, 0, 0 };
    struct spmv_layout *S = NULL;

    ck_assert_int_eq(spmv_layout_shell_ok(no[i]), 0);
    ck_assert_int_eq(spmv_layout_new_shell(A, SPMV_F64, &cfg, NULL, &S, &err),
                     SPMV_EFORMAT);
    ck_assert_ptr_null(S);
    ck_assert_msg(strstr(err.msg, spmv_format_name(no[i])) != NULL &&
                  strstr(err.msg, "on the host") != NULL, "%s", err.msg);
  }
  spmv_csr_free(A);
}
END_TEST

/* csr-stream16 at BS 32, k 1: block bases and 16-bit offsets, a long
 * row's chunk bases; then a block whose two rows together span 70001
 * columns (each alone spans 1) is refused, naming its rows. */
START_TEST(test_layout_stream16)
{
  static const int64_t len[] = { 2, 3, 40 };
  struct spmv_config cfg = { SPMV_FMT_CSR_STREAM16, 32, 0, 1, 0 };
  struct spmv_csr *A = from_lengths(3, 200, len, 0);
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL;
  const struct spmv_stream_layout *D;
  int64_t k, lo = 200;

  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err), 0);
  D = &L->u.stream;
  ck_assert(D->csr.col == NULL && D->csr.col16 != NULL);
  ck_assert_int_eq(D->nblocks, 1);
  ck_assert_int_eq(D->nlong, 1);
  ck_assert_int_eq(D->nchunks, 1);
  for (k = 0; k < 5; k++)
    lo = A->col_idx[k] < lo ? A->col_idx[k] : lo;
  ck_assert_int_eq(D->blk_base[0], lo);
  for (k = 0; k < 5; k++)
    ck_assert_int_eq(D->blk_base[0] + D->csr.col16[k], A->col_idx[k]);
  for (k = 5; k < 45; k++)
    ck_assert_int_eq(D->chunk_base[0] + D->csr.col16[k], A->col_idx[k]);
  /* 4 offsets, 45 offsets and doubles, a block base, a chunk base, the
   * block's rows and entries, a long row and its chunk bounds. */
  ck_assert_uint_eq(L->bytes, 4 * 4 + 45 * 10 + 4 + 4 + 2 * 4 + 2 * 8 + 4 + 2 * 8);
  spmv_layout_free(L);
  spmv_csr_free(A);

  A = spmv_csr_new(2, 70001, 2);
  ck_assert(A != NULL);
  A->row_ptr[1] = 1;
  A->row_ptr[2] = 2;
  A->col_idx[0] = 0;
  A->col_idx[1] = 70000;
  A->val[0] = A->val[1] = 1;
  L = NULL;
  ck_assert_int_eq(spmv_layout_new(A, SPMV_F64, &cfg, NULL, &L, &err),
                   SPMV_ETOOBIG);
  ck_assert_msg(strstr(err.msg, "csr-stream16: rows 0 to 1 span 70001 "
                                "columns (0 to 70000)") == err.msg, "%s",
                err.msg);
  ck_assert(L == NULL);
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

/* Expects spmv_layout_new to fail with code and a message containing want. */
static void expect_refusal(const struct spmv_csr *A, enum spmv_format f,
                           int tpr, int param, int param2,
                           const struct spmv_limits *lim, int code,
                           const char *want)
{
  struct spmv_config cfg = { f, 0, tpr, param, param2 };
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL;
  int rc = spmv_layout_new(A, SPMV_F32, &cfg, lim, &L, &err);

  ck_assert_msg(rc == code, "%s: got %s (%s), want %s",
                spmv_format_name(f), spmv_err_name(rc), err.msg,
                spmv_err_name(code));
  ck_assert(L == NULL);
  ck_assert_msg(strstr(err.msg, want) != NULL, "message \"%s\" lacks \"%s\"",
                err.msg, want);
}

START_TEST(test_refusals)
{
  struct spmv_csr *A = small_matrix();
  struct spmv_limits diags = { 0, 3, 0 }, bytes = { 100, 0, 0 };
  struct spmv_limits fill = { 0, 0, 1.5 }, tiny = { 50, 0, 0 };
  struct spmv_config cfg = { SPMV_FMT_COO, 0, 0, 0, 0 };
  struct spmv_error err = { 0, "" };
  struct spmv_layout *L = NULL, bad;

  expect_refusal(A, SPMV_FMT_DIA, 0, 0, 0, &diags, SPMV_ETOOBIG,
                 "6 diagonals, limit 3");
  expect_refusal(A, SPMV_FMT_ELL, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  expect_refusal(A, SPMV_FMT_JAD, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  expect_refusal(A, SPMV_FMT_CSR_ADAPTIVE, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  /* ELL stores 5 * 3 = 15 for 8 entries; DIA 6 * 5 = 30. */
  expect_refusal(A, SPMV_FMT_ELL, 0, 0, 0, &fill, SPMV_ETOOBIG, "fill 1.88");
  expect_refusal(A, SPMV_FMT_DIA, 0, 0, 0, &fill, SPMV_ETOOBIG, "fill 3.75");
  expect_refusal(A, SPMV_FMT_ELLR_T, 3, 0, 0, NULL, SPMV_EINVAL, "T=3");
  expect_refusal(A, SPMV_FMT_ELLR_T, 0, 0, 0, NULL, SPMV_EINVAL, "T=0");
  expect_refusal(A, SPMV_FMT_ELLR_T, 64, 0, 0, NULL, SPMV_EINVAL, "T=64");
  expect_refusal(A, SPMV_FMT_SELL, 0, 3, 0, NULL, SPMV_EINVAL, "C=3");
  expect_refusal(A, SPMV_FMT_SELL, 0, 4, 6, NULL, SPMV_EINVAL, "sigma=6");
  expect_refusal(A, SPMV_FMT_CSR_ADAPTIVE, 3, 0, 0, NULL, SPMV_EINVAL,
                 "max TPR 3");
  expect_refusal(A, SPMV_FMT_CSR_ADAPTIVE, 0, -1, 0, NULL, SPMV_EINVAL,
                 "base length -1");
  expect_refusal(A, SPMV_FMT_HYB, 0, -2, 0, NULL, SPMV_EINVAL, "K=-2");
  expect_refusal(A, SPMV_FMT_CSR_STREAM, 0, 3, 0, NULL, SPMV_EINVAL, "k 3");
  expect_refusal(A, SPMV_FMT_CSR_STREAM, 0, 32, 0, NULL, SPMV_EINVAL, "k 32");
  expect_refusal(A, SPMV_FMT_CSR_STREAM, 0, 0, 0, &bytes, SPMV_ETOOBIG,
                 "limit 100");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 1000, 0, NULL, SPMV_EINVAL,
                 "width 1000 is not a power of two in [1024, 65536]");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 512, 0, NULL, SPMV_EINVAL,
                 "width 512");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 65536, 0, NULL, SPMV_EINVAL,
                 "262144 bytes of shared memory, over 131072");
  expect_refusal(A, SPMV_FMT_CSR_PANEL, 4, 0, 0, &tiny, SPMV_ETOOBIG,
                 "csr-panel needs 72 bytes, limit 50");
  expect_refusal(A, (enum spmv_format)99, 0, 0, 0, NULL, SPMV_EFORMAT,
                 "format 99");
  A->col_idx[3] = 6;
  expect_refusal(A, SPMV_FMT_COO, 0, 0, 0, NULL, SPMV_ECSR, "column index 6");
  ck_assert_int_eq(spmv_layout_new(A, (enum spmv_dtype)7, &cfg, NULL, &L,
                                   &err), SPMV_EINVAL);
  ck_assert(spmv_layout_free(NULL) == NULL);
  ck_assert_int_eq(spmv_layout_spmv(NULL, 1, NULL, 0, NULL), SPMV_EFORMAT);
  memset(&bad, 0, sizeof bad);
  bad.cfg.format = (enum spmv_format)99;
  bad.dtype = SPMV_F64;
  ck_assert_int_eq(spmv_layout_spmv(&bad, 1, NULL, 0, NULL), SPMV_EFORMAT);
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

  tcase_add_test(tc, test_layout_csr);
  tcase_add_test(tc, test_l2_warm_mode);
  tcase_add_test(tc, test_layout_adaptive);
  tcase_add_test(tc, test_layout_ell);
  tcase_add_test(tc, test_layout_ellr_t);
  tcase_add_test(tc, test_layout_coo_hyb);
  tcase_add_test(tc, test_layout_dia);
  tcase_add_test(tc, test_layout_jad);
  tcase_add_test(tc, test_layout_sell);
  tcase_add_test(tc, test_layout_sell16);
  tcase_add_test(tc, test_layout_csr16);
  tcase_add_test(tc, test_layout_stream);
  tcase_add_test(tc, test_layout_stream16);
  tcase_add_test(tc, test_layout_shell);
  tcase_add_test(tc, test_layout_panel);
  tcase_add_loop_test(tc, test_sell16_span, 0, 2);
  tcase_add_test(tc, test_refusals);
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
