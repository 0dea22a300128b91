/* spmv_gen.c: stencil, banded, random, dense, Pareto, dc1-like and matched
 * matrices. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_gen_impl.h"

/* ---- stencils ---------------------------------------------------------- */

/* Visits the neighbours (and centre) of grid point (x, y, z) in ascending
 * column order; full: the 27-point box, else the 7-point cross.  With fill
 * NULL only counts.  Returns the count. */
static int64_t stencil_row(int64_t nx, int64_t ny, int64_t nz, int full,
                           int64_t x, int64_t y, int64_t z, double diag,
                           int32_t *col, double *val)
{
  int64_t n = 0, dx, dy, dz, self = x + nx * (y + ny * z);

  for (dz = -1; dz <= 1; dz++) {
    for (dy = -1; dy <= 1; dy++) {
      for (dx = -1; dx <= 1; dx++) {
        if (!full && llabs(dx) + llabs(dy) + llabs(dz) > 1)
          continue;
        if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= ny ||
            z + dz < 0 || z + dz >= nz)
          continue;
        if (col != NULL) {
          col[n] = (int32_t)(self + dx + nx * (dy + ny * dz));
          val[n] = dx == 0 && dy == 0 && dz == 0 ? diag : -1.0;
        }
        n++;
      }
    }
  }
  return n;
}

/* The Laplacian on an nx x ny x nz grid; see spmv_gen_stencil3d(). */
static struct spmv_csr *stencil(int64_t nx, int64_t ny, int64_t nz, int full,
                                double diag, struct spmv_error *err)
{
  struct spmv_csr *A;
  int64_t x, y, z, i;

  if (nx < 1 || ny < 1 || nz < 1) {
    spmv_error_set(err, SPMV_EINVAL, "grid %" PRId64 " x %" PRId64 " x %"
                   PRId64 " has an empty side", nx, ny, nz);
    return NULL;
  }
  if (nx > SPMV_GEN_MAX_DIM || ny > SPMV_GEN_MAX_DIM / nx ||
      nz > SPMV_GEN_MAX_DIM / (nx * ny)) {
    spmv_error_set(err, SPMV_ETOOBIG, "grid %" PRId64 " x %" PRId64 " x %"
                   PRId64 " has more than %d points", nx, ny, nz,
                   SPMV_GEN_MAX_DIM);
    return NULL;
  }
  A = spmv_gen_begin(nx * ny * nz, nx * ny * nz, err);
  if (A == NULL)
    return NULL;
  i = 0;
  for (z = 0; z < nz; z++)
    for (y = 0; y < ny; y++)
      for (x = 0; x < nx; x++, i++)
        A->row_ptr[i + 1] = stencil_row(nx, ny, nz, full, x, y, z, diag,
                                        NULL, NULL);
  if (spmv_gen_commit(A, err) != 0 || spmv_gen_values(A, 0, err) != 0)
    return spmv_csr_free(A);
  i = 0;
  for (z = 0; z < nz; z++)
    for (y = 0; y < ny; y++)
      for (x = 0; x < nx; x++, i++)
        stencil_row(nx, ny, nz, full, x, y, z, diag,
                    A->col_idx + A->row_ptr[i], A->val + A->row_ptr[i]);
  return A;
}

/* 2D 5- or 9-point Laplacian on an nx x ny grid; new CSR or NULL. */
struct spmv_csr *spmv_gen_stencil2d(int64_t nx, int64_t ny, int points,
                                    struct spmv_error *err)
{
  if (points != 5 && points != 9) {
    spmv_error_set(err, SPMV_EINVAL, "2D stencil of %d points: use 5 or 9",
                   points);
    return NULL;
  }
  return stencil(nx, ny, 1, points == 9, points - 1, err);
}

/* 3D 7- or 27-point Laplacian on an nx x ny x nz grid; new CSR or NULL. */
struct spmv_csr *spmv_gen_stencil3d(int64_t nx, int64_t ny, int64_t nz,
                                    int points, struct spmv_error *err)
{
  if (points != 7 && points != 27) {
    spmv_error_set(err, SPMV_EINVAL, "3D stencil of %d points: use 7 or 27",
                   points);
    return NULL;
  }
  return stencil(nx, ny, nz, points == 27, points - 1, err);
}

/* ---- row lengths, then columns ----------------------------------------- */

/* Column placements of place_rows(). */
enum placement {
  PLACE_RANDOM,   /* uniformly over [0, cols) */
  PLACE_DIAGONAL, /* a window of twice the length around i * cols / rows */
  PLACE_BAND      /* within band columns of the diagonal i */
};

/* Fills every row of A (lengths committed) with distinct sorted columns. */
static void place_rows(struct spmv_csr *A, struct spmv_rng *rng,
                       enum placement how, int64_t band)
{
  int64_t i, len, lo, hi, m;

  for (i = 0; i < A->rows; i++) {
    len = A->row_ptr[i + 1] - A->row_ptr[i];
    switch (how) {
    case PLACE_RANDOM:
      lo = 0;
      m = A->cols;
      break;
    case PLACE_DIAGONAL:
      m = 2 * len < A->cols ? 2 * len : A->cols;
      lo = A->rows > 0 ? (int64_t)((__int128)i * A->cols / A->rows) - m / 2
                       : 0;
      if (lo > A->cols - m)
        lo = A->cols - m;
      if (lo < 0)
        lo = 0;
      break;
    default: /* PLACE_BAND */
      lo = i - band > 0 ? i - band : 0;
      hi = i + band < A->cols - 1 ? i + band : A->cols - 1;
      m = hi - lo + 1;
      break;
    }
    spmv_gen_sample(rng, A->col_idx + A->row_ptr[i], len, lo, m);
  }
}

/* Commits the lengths in A, places the columns, draws the values. */
static struct spmv_csr *finish(struct spmv_csr *A, struct spmv_rng *rng,
                               enum placement how, int64_t band,
                               uint64_t seed, struct spmv_error *err)
{
  if (spmv_gen_commit(A, err) != 0)
    return spmv_csr_free(A);
  place_rows(A, rng, how, band);
  if (spmv_gen_values(A, seed, err) != 0)
    return spmv_csr_free(A);
  return A;
}

/* n x n banded: min(w, window) random columns within +-b; new CSR or NULL. */
struct spmv_csr *spmv_gen_banded(int64_t n, int64_t w, int64_t b,
                                 uint64_t seed, struct spmv_error *err)
{
  struct spmv_rng rng;
  struct spmv_csr *A;
  int64_t i, window;

  if (b < 0 || w < 1 || (b < INT64_MAX / 4 && w > 2 * b + 1)) {
    spmv_error_set(err, SPMV_EINVAL, "banded: need 1 <= w <= 2b + 1, got w = %"
                   PRId64 ", b = %" PRId64, w, b);
    return NULL;
  }
  if (b > n) /* a wider band changes nothing */
    b = n;
  if ((A = spmv_gen_begin(n, n, err)) == NULL)
    return NULL;
  for (i = 0; i < n; i++) {
    window = (i + b < n - 1 ? i + b : n - 1) - (i - b > 0 ? i - b : 0) + 1;
    A->row_ptr[i + 1] = w < window ? w : window;
  }
  spmv_rng_seed(&rng, seed, SPMV_STREAM_STRUCT);
  return finish(A, &rng, PLACE_BAND, b, seed, err);
}

/* Starts a rows x cols matrix of k entries in every row; what names the
 * generator in messages. */
static struct spmv_csr *constant_rows(const char *what, int64_t rows,
                                      int64_t cols, int64_t k,
                                      struct spmv_error *err)
{
  struct spmv_csr *A;
  int64_t i;

  if (k < 0 || k > cols) {
    spmv_error_set(err, SPMV_EINVAL, "%s: k = %" PRId64 " columns per row, "
                   "need 0 <= k <= cols = %" PRId64, what, k, cols);
    return NULL;
  }
  if ((A = spmv_gen_begin(rows, cols, err)) == NULL)
    return NULL;
  for (i = 0; i < rows; i++)
    A->row_ptr[i + 1] = k;
  return A;
}

/* rows x cols with k random distinct columns per row; new CSR or NULL. */
struct spmv_csr *spmv_gen_random(int64_t rows, int64_t cols, int64_t k,
                                 uint64_t seed, struct spmv_error *err)
{
  struct spmv_rng rng;
  struct spmv_csr *A = constant_rows("random", rows, cols, k, err);

  if (A == NULL)
    return NULL;
  spmv_rng_seed(&rng, seed, SPMV_STREAM_STRUCT);
  return finish(A, &rng, PLACE_RANDOM, 0, seed, err);
}

/* rows x cols whose rows share the same k random columns; new CSR or NULL. */
struct spmv_csr *spmv_gen_dense(int64_t rows, int64_t cols, int64_t k,
                                uint64_t seed, struct spmv_error *err)
{
  struct spmv_rng rng;
  struct spmv_csr *A = constant_rows("dense", rows, cols, k, err);
  int64_t i;

  if (A == NULL || spmv_gen_commit(A, err) != 0)
    return spmv_csr_free(A);
  spmv_rng_seed(&rng, seed, SPMV_STREAM_STRUCT);
  if (rows > 0)
    spmv_gen_sample(&rng, A->col_idx, k, 0, cols);
  for (i = 1; i < rows; i++)
    memcpy(A->col_idx + i * k, A->col_idx, (size_t)k * sizeof *A->col_idx);
  if (spmv_gen_values(A, seed, err) != 0)
    return spmv_csr_free(A);
  return A;
}

/* Pareto row lengths floor(xmin * U^(-1/alpha)), capped at cols; new CSR
 * or NULL. */
struct spmv_csr *spmv_gen_pareto(int64_t rows, int64_t cols, double xmin,
                                 double alpha, uint64_t seed,
                                 struct spmv_error *err)
{
  struct spmv_rng rng;
  struct spmv_csr *A;
  double len;
  int64_t i;

  if (!(alpha > 0.0) || !(xmin >= 1.0) || !isfinite(xmin) || xmin > cols) {
    spmv_error_set(err, SPMV_EINVAL, "pareto: need alpha > 0 and 1 <= xmin "
                   "<= cols = %" PRId64 ", got alpha = %g, xmin = %g", cols,
                   alpha, xmin);
    return NULL;
  }
  if ((A = spmv_gen_begin(rows, cols, err)) == NULL)
    return NULL;
  spmv_rng_seed(&rng, seed, SPMV_STREAM_STRUCT);
  for (i = 0; i < rows; i++) {
    len = floor(xmin * pow(1.0 - spmv_rng_unit(&rng), -1.0 / alpha));
    A->row_ptr[i + 1] = len < (double)cols ? (int64_t)len : cols;
  }
  return finish(A, &rng, PLACE_RANDOM, 0, seed, err);
}

/* ---- dc1-like ---------------------------------------------------------- */

/* Checks the arguments of spmv_gen_dc1like(); returns 0 or SPMV_EINVAL. */
static int dc1_check(int64_t n, double lambda, int64_t nlong,
                     const int64_t *long_len, struct spmv_error *err)
{
  int64_t j;

  if (n < 1 || !(lambda >= 0.0) || !isfinite(lambda))
    return spmv_error_set(err, SPMV_EINVAL, "dc1like: need n >= 1 and "
                          "lambda >= 0, got n = %" PRId64 ", lambda = %g",
                          n, lambda);
  if (nlong < 0 || nlong > n || (nlong > 0 && long_len == NULL))
    return spmv_error_set(err, SPMV_EINVAL, "dc1like: %" PRId64 " long rows "
                          "among %" PRId64, nlong, n);
  for (j = 0; j < nlong; j++)
    if (long_len[j] < 1 || long_len[j] > n)
      return spmv_error_set(err, SPMV_EINVAL, "dc1like: long row %" PRId64
                            " of length %" PRId64 " not in [1, %" PRId64 "]",
                            j, long_len[j], n);
  return 0;
}

/* Fills short row i of length len: the diagonal plus len - 1 other random
 * columns, sorted. */
static void dc1_short_row(struct spmv_rng *rng, int32_t *out, int64_t len,
                          int64_t i, int64_t n)
{
  int64_t j;

  spmv_gen_sample(rng, out, len - 1, 0, n - 1);
  for (j = len - 2; j >= 0 && out[j] >= i; j--)
    out[j + 1] = out[j] + 1; /* skip the diagonal: columns >= i move up */
  out[j + 1] = (int32_t)i;
}

/* n x n with 1 + Poisson(lambda) rows and nlong long rows; new CSR or NULL. */
struct spmv_csr *spmv_gen_dc1like(int64_t n, double lambda, int64_t nlong,
                                  const int64_t *long_len, uint64_t seed,
                                  struct spmv_error *err)
{
  struct spmv_rng rng;
  struct spmv_csr *A;
  int32_t *where = NULL, *longest = NULL;
  int64_t i, j, len;

  if (dc1_check(n, lambda, nlong, long_len, err) != 0)
    return NULL;
  if ((A = spmv_gen_begin(n, n, err)) == NULL)
    return NULL;
  where = malloc((size_t)(nlong > 0 ? nlong : 1) * sizeof *where);
  longest = calloc((size_t)n, sizeof *longest); /* long row's length, or 0 */
  if (where == NULL || longest == NULL) {
    A = spmv_gen_nomem(A, "the long rows", err);
    goto out;
  }
  spmv_rng_seed(&rng, seed, SPMV_STREAM_STRUCT);
  spmv_gen_sample(&rng, where, nlong, 0, n);
  /* The j-th given length goes to the j-th sampled row (rows ascending). */
  for (j = 0; j < nlong; j++)
    longest[where[j]] = (int32_t)long_len[j];
  for (i = 0; i < n; i++) {
    len = 1 + spmv_rng_poisson(&rng, lambda);
    A->row_ptr[i + 1] = longest[i] > 0 ? longest[i] : (len < n ? len : n);
  }
  if (spmv_gen_commit(A, err) != 0) {
    A = spmv_csr_free(A);
    goto out;
  }
  for (i = 0; i < n; i++) {
    len = A->row_ptr[i + 1] - A->row_ptr[i];
    if (longest[i] > 0)
      spmv_gen_sample(&rng, A->col_idx + A->row_ptr[i], len, 0, n);
    else
      dc1_short_row(&rng, A->col_idx + A->row_ptr[i], len, i, n);
  }
  if (spmv_gen_values(A, seed, err) != 0)
    A = spmv_csr_free(A);
out:
  free(where);
  free(longest);
  return A;
}

/* ---- matching given statistics ----------------------------------------- */

/* Draws one row length of spec's distribution, clipped to [0, cols]. */
static int64_t draw_length(struct spmv_rng *rng,
                           const struct spmv_gen_spec *s, int64_t cols)
{
  double len = 0.0, h, s2;

  switch (s->dist) {
  case SPMV_GEN_NORMAL:
    len = s->mean + s->cv * s->mean * spmv_rng_normal(rng);
    break;
  case SPMV_GEN_UNIFORM:
    h = sqrt(3.0) * s->cv * s->mean;
    len = s->mean - h + 2.0 * h * spmv_rng_unit(rng);
    break;
  case SPMV_GEN_LOGNORMAL:
    if (s->mean <= 0.0)
      return 0;
    s2 = log1p(s->cv * s->cv);
    len = exp(log(s->mean) - s2 / 2.0 + sqrt(s2) * spmv_rng_normal(rng));
    break;
  }
  len = nearbyint(len);
  if (!(len > 0.0))
    return 0;
  return len < (double)cols ? (int64_t)len : cols;
}

/* Returns the greatest common divisor of a and b. */
static int64_t gcd(int64_t a, int64_t b)
{
  while (b != 0) {
    int64_t t = a % b;

    a = b;
    b = t;
  }
  return a;
}

/*
 * Moves the total of the lengths in A->row_ptr[1 .. rows] to target by
 * steps of one, visiting the rows in a random cyclic order (a random start
 * and a stride coprime to rows) so that no row moves twice before every
 * row with room has moved once: the least change to the distribution.
 */
static void nudge_lengths(struct spmv_csr *A, struct spmv_rng *rng,
                          int64_t total, int64_t target)
{
  int64_t *len = A->row_ptr + 1, n = A->rows, i, stride, step;

  step = total < target ? 1 : -1;
  i = (int64_t)spmv_rng_below(rng, (uint64_t)n);
  stride = 1 + (int64_t)spmv_rng_below(rng, (uint64_t)n);
  while (gcd(stride, n) != 1)
    stride++;
  while (total != target) {
    if ((step > 0 && len[i] < A->cols) || (step < 0 && len[i] > 0)) {
      len[i] += step;
      total += step;
    }
    i = (i + stride) % n;
  }
}

/* A matrix of the rows, mean and cv of spec; new CSR or NULL. */
struct spmv_csr *spmv_gen_matching(const struct spmv_gen_spec *spec,
                                   uint64_t seed, struct spmv_error *err)
{
  struct spmv_rng rng;
  struct spmv_csr *A;
  int64_t cols, i, total = 0, target;

  if (spec == NULL) {
    spmv_error_set(err, SPMV_EINVAL, "matching: no specification");
    return NULL;
  }
  cols = spec->cols > 0 ? spec->cols : spec->rows;
  if (!(spec->mean >= 0.0) || spec->mean > (double)cols || !(spec->cv >= 0.0)
      || !isfinite(spec->cv) || (unsigned)spec->dist > SPMV_GEN_LOGNORMAL ||
      (unsigned)spec->place > SPMV_GEN_DIAGONAL) {
    spmv_error_set(err, SPMV_EINVAL, "matching: need 0 <= mean <= cols = %"
                   PRId64 ", cv >= 0 and a known distribution and placement;"
                   " got mean = %g, cv = %g", cols, spec->mean, spec->cv);
    return NULL;
  }
  if ((A = spmv_gen_begin(spec->rows, cols, err)) == NULL)
    return NULL;
  spmv_rng_seed(&rng, seed, SPMV_STREAM_STRUCT);
  for (i = 0; i < A->rows; i++) {
    A->row_ptr[i + 1] = draw_length(&rng, spec, cols);
    total += A->row_ptr[i + 1];
  }
  target = llround((double)A->rows * spec->mean);
  if (A->rows > 0)
    nudge_lengths(A, &rng, total, target);
  return finish(A, &rng,
                spec->place == SPMV_GEN_DIAGONAL ? PLACE_DIAGONAL
                                                 : PLACE_RANDOM, 0, seed, err);
}
