/* spmv_gen_util.c: random streams, sampling, sorting and assembly. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "spmv_gen_impl.h"
#include "spmv_mix.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Rows shorter than this are sorted by insertion. */
#define INSERTION_CUTOFF 24

/* Poisson deviates are summed from pieces of at most this mean. */
#define POISSON_PIECE 30.0

/* splitmix64: expands a seed into well-mixed words. */
static uint64_t splitmix64(uint64_t *x)
{
  return spmv_mix64(*x += 0x9e3779b97f4a7c15ULL);
}

/* Seeds rng from seed and stream through splitmix64. */
void spmv_rng_seed(struct spmv_rng *rng, uint64_t seed, uint64_t stream)
{
  uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  int i;

  for (i = 0; i < 4; i++)
    rng->s[i] = splitmix64(&x);
}

/* Returns a standard normal deviate (Box-Muller, one of the pair). */
double spmv_rng_normal(struct spmv_rng *rng)
{
  double u1 = 1.0 - spmv_rng_unit(rng); /* (0, 1]: log is finite */
  double u2 = spmv_rng_unit(rng);

  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Returns a Poisson(lambda) deviate: Knuth's product method, in pieces. */
int64_t spmv_rng_poisson(struct spmv_rng *rng, double lambda)
{
  int64_t k = 0;
  double piece, limit, prod;

  while (lambda > 0.0) {
    piece = lambda < POISSON_PIECE ? lambda : POISSON_PIECE;
    lambda -= piece;
    limit = exp(-piece);
    prod = spmv_rng_unit(rng);
    while (prod > limit) {
      k++;
      prod *= spmv_rng_unit(rng);
    }
  }
  return k;
}

/* Swaps entries i and j of keys and vals (which may be NULL). */
static void swap2(int32_t *keys, double *vals, int64_t i, int64_t j)
{
  int32_t k = keys[i];
  double v;

  keys[i] = keys[j];
  keys[j] = k;
  if (vals != NULL) {
    v = vals[i];
    vals[i] = vals[j];
    vals[j] = v;
  }
}

/* Insertion sort of a short range. */
static void insertion_sort(int32_t *keys, double *vals, int64_t n)
{
  int64_t i, j;

  for (i = 1; i < n; i++)
    for (j = i; j > 0 && keys[j - 1] > keys[j]; j--)
      swap2(keys, vals, j - 1, j);
}

/* Sorts keys[0 .. n) ascending, moving vals alongside (quicksort, median of
 * three, recursing into the smaller part so the stack stays O(log n)). */
void spmv_gen_sort(int32_t *keys, double *vals, int64_t n)
{
  int64_t i, j, mid;
  int32_t pivot;

  while (n > INSERTION_CUTOFF) {
    mid = n / 2;
    if (keys[mid] < keys[0])
      swap2(keys, vals, mid, 0);
    if (keys[n - 1] < keys[0])
      swap2(keys, vals, n - 1, 0);
    if (keys[n - 1] < keys[mid])
      swap2(keys, vals, n - 1, mid);
    pivot = keys[mid];
    i = 0;
    j = n - 1;
    for (;;) {
      while (keys[i] < pivot)
        i++;
      while (keys[j] > pivot)
        j--;
      if (i >= j)
        break;
      swap2(keys, vals, i, j);
      i++;
      j--;
    }
    /* Now [0, j] <= pivot <= [j + 1, n). */
    if (j + 1 < n - (j + 1)) {
      spmv_gen_sort(keys, vals, j + 1);
      keys += j + 1;
      if (vals != NULL)
        vals += j + 1;
      n -= j + 1;
    } else {
      spmv_gen_sort(keys + j + 1, vals != NULL ? vals + j + 1 : NULL,
                    n - (j + 1));
      n = j + 1;
    }
  }
  insertion_sort(keys, vals, n);
}

/* Removes repeats from sorted a[0 .. n); returns the new length. */
static int64_t unique_sorted(int32_t *a, int64_t n)
{
  int64_t i, w = 0;

  for (i = 0; i < n; i++)
    if (w == 0 || a[i] != a[w - 1])
      a[w++] = a[i];
  return w;
}

/* Writes n distinct sorted random integers of [lo, lo + m) into out. */
void spmv_gen_sample(struct spmv_rng *rng, int32_t *out, int64_t n,
                     int64_t lo, int64_t m)
{
  int64_t have = 0, t, i;

  if (n >= m) { /* every candidate */
    for (i = 0; i < n; i++)
      out[i] = (int32_t)(lo + i);
    return;
  }
  if (2 * n > m) { /* selection sampling: keep t with (n - have) / (m - t) */
    for (t = 0; t < m && have < n; t++)
      if (spmv_rng_below(rng, (uint64_t)(m - t)) < (uint64_t)(n - have))
        out[have++] = (int32_t)(lo + t);
    return;
  }
  /* Sparse: draw, sort, drop repeats, draw again for what is missing.  The
   * first n distinct values of a uniform stream are a uniform n-subset. */
  while (have < n) {
    for (i = have; i < n; i++)
      out[i] = (int32_t)(lo + (int64_t)spmv_rng_below(rng, (uint64_t)m));
    spmv_gen_sort(out, NULL, n);
    have = unique_sorted(out, n);
  }
}

/* Returns a random permutation of [0, n) (Fisher-Yates) owned by the
 * caller, or NULL when out of memory. */
int32_t *spmv_gen_perm(int64_t n, uint64_t seed)
{
  struct spmv_rng rng;
  int32_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p), t;
  int64_t i, j;

  if (p == NULL)
    return NULL;
  for (i = 0; i < n; i++)
    p[i] = (int32_t)i;
  spmv_rng_seed(&rng, seed, SPMV_STREAM_PERM);
  for (i = n - 1; i > 0; i--) {
    j = (int64_t)spmv_rng_below(&rng, (uint64_t)i + 1);
    t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

/* Starts a generated matrix with no entries; see spmv_gen_impl.h. */
struct spmv_csr *spmv_gen_begin(int64_t rows, int64_t cols,
                                struct spmv_error *err)
{
  struct spmv_csr *A;

  if (rows < 0 || cols < 0) {
    spmv_error_set(err, SPMV_EINVAL, "negative dimension: %" PRId64 " x %"
                   PRId64, rows, cols);
    return NULL;
  }
  if (rows > SPMV_GEN_MAX_DIM || cols > SPMV_GEN_MAX_DIM) {
    spmv_error_set(err, SPMV_ETOOBIG, "%" PRId64 " x %" PRId64 " exceeds "
                   "the 32-bit index limit %d", rows, cols, SPMV_GEN_MAX_DIM);
    return NULL;
  }
  A = spmv_csr_new(rows, cols, 0);
  if (A == NULL)
    spmv_error_set(err, SPMV_ENOMEM, "out of memory for %" PRId64
                   " row offsets", rows + 1);
  return A;
}

/* Allocates n entries of size bytes (one byte at least), or NULL. */
static void *alloc_entries(int64_t n, size_t size)
{
  if ((uint64_t)n > SIZE_MAX / size)
    return NULL;
  return malloc(n > 0 ? (size_t)n * size : 1);
}

/* Turns the row lengths in row_ptr into offsets and sets nnz. */
void spmv_gen_offsets(struct spmv_csr *A)
{
  int64_t i;

  for (i = 0; i < A->rows; i++)
    A->row_ptr[i + 1] += A->row_ptr[i];
  A->nnz = A->row_ptr[A->rows];
}

/* Turns row lengths into offsets and allocates col_idx; see the header. */
int spmv_gen_commit(struct spmv_csr *A, struct spmv_error *err)
{
  int32_t *col;

  spmv_gen_offsets(A);
  if ((col = alloc_entries(A->nnz, sizeof *col)) == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for %" PRId64
                          " column indices", A->nnz);
  free(A->col_idx);
  A->col_idx = col;
  return 0;
}

/* Allocates and fills A's values from seed; returns 0 or SPMV_ENOMEM. */
int spmv_gen_values(struct spmv_csr *A, uint64_t seed, struct spmv_error *err)
{
  double *val;

  if ((val = alloc_entries(A->nnz, sizeof *val)) == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for %" PRId64
                          " values", A->nnz);
  free(A->val);
  A->val = val;
  spmv_gen_fill_values(A, seed);
  return 0;
}

/* Records an out-of-memory error naming what, frees A, returns NULL. */
struct spmv_csr *spmv_gen_nomem(struct spmv_csr *A, const char *what,
                                struct spmv_error *err)
{
  spmv_error_set(err, SPMV_ENOMEM, "out of memory for %s", what);
  return spmv_csr_free(A);
}

/* Overwrites A's values with uniform values in [-1, 1) \ {0} from seed. */
void spmv_gen_fill_values(struct spmv_csr *A, uint64_t seed)
{
  spmv_gen_vector(A->val, A->nnz, seed);
}

/* Fills x[0 .. n) with uniform values in [-1, 1) \ {0} from seed. */
void spmv_gen_vector(double *x, int64_t n, uint64_t seed)
{
  struct spmv_rng rng;
  int64_t i;

  spmv_rng_seed(&rng, seed, SPMV_STREAM_VALUES);
  for (i = 0; i < n; i++)
    x[i] = spmv_rng_value(&rng);
}
