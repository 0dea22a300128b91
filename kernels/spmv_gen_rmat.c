/* spmv_gen_rmat.c: R-MAT / Kronecker graphs as Graph500 generates them. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "spmv_gen_impl.h"

/* Rounds of the vertex relabelling. */
#define RELABEL_ROUNDS 3

/* The Kronecker initiator, as cumulative quadrant thresholds in 2^-32 units. */
struct initiator {
  uint64_t a;   /* P(A) */
  uint64_t ab;  /* P(A or B) */
  uint64_t abc; /* P(A, B or C) */
  int scale;    /* levels: log2 of the vertex count */
  /* The vertex relabelling: rounds of x -> (x * mul + add) mod 2^scale,
   * then x ^= x >> shift; each step is a bijection of [0, 2^scale). */
  uint64_t mul[RELABEL_ROUNDS], add[RELABEL_ROUNDS], mask;
  int shift;
};

/* Returns the random label of vertex x: a bijection computed in place of a
 * stored permutation, so that no lookup misses the cache. */
static int64_t relabel(const struct initiator *ini, uint64_t x)
{
  int i;

  for (i = 0; i < RELABEL_ROUNDS; i++) {
    x = (x * ini->mul[i] + ini->add[i]) & ini->mask;
    x ^= x >> ini->shift;
  }
  return (int64_t)x;
}

/* Draws one edge: scale levels, each picking quadrant A (0,0), B (0,1),
 * C (1,0) or D (1,1) from 32 random bits, without branches (the choice is
 * unpredictable by design). */
static void draw_edge(struct spmv_rng *rng, const struct initiator *ini,
                      int64_t *row, int64_t *col)
{
  uint64_t bits = 0, u, q, r = 0, c = 0;
  int level;

  for (level = 0; level < ini->scale; level++) {
    if (level % 2 == 0)
      bits = spmv_rng_next(rng);
    u = bits & 0xffffffffULL;
    bits >>= 32;
    q = (uint64_t)(u >= ini->a) + (uint64_t)(u >= ini->ab) +
        (uint64_t)(u >= ini->abc); /* 0 = A, 1 = B, 2 = C, 3 = D */
    r |= (q >> 1) << level;
    c |= (q & 1) << level;
  }
  *row = (int64_t)r;
  *col = (int64_t)c;
}

/* Checks the arguments of spmv_gen_rmat(); returns 0 or SPMV_EINVAL. */
static int rmat_check(int scale, int64_t edgefactor, double a, double b,
                      double c, int symmetric, struct spmv_error *err)
{
  if (scale < 1 || scale > 30)
    return spmv_error_set(err, SPMV_EINVAL, "rmat: scale %d not in [1, 30]",
                          scale);
  if (edgefactor < 1 || edgefactor > (INT64_MAX >> 32))
    return spmv_error_set(err, SPMV_EINVAL, "rmat: edgefactor %" PRId64
                          " not in [1, 2^31)", edgefactor);
  if (!(a >= 0.0) || !(b >= 0.0) || !(c >= 0.0) || a + b + c > 1.0 + 1e-12)
    return spmv_error_set(err, SPMV_EINVAL, "rmat: need a, b, c >= 0 and "
                          "a + b + c <= 1, got %g, %g, %g", a, b, c);
  return 0;
}

/*
 * Sorts each row, drops repeated columns and closes the gaps, in place;
 * then shrinks col_idx to the new nnz.
 */
static void merge_duplicates(struct spmv_csr *A)
{
  int64_t i, start = 0, end, w = 0, k;
  int32_t *shrunk;

  for (i = 0; i < A->rows; i++) {
    end = A->row_ptr[i + 1];
    spmv_gen_sort(A->col_idx + start, NULL, end - start);
    for (k = start; k < end; k++)
      if (k == start || A->col_idx[k] != A->col_idx[k - 1])
        A->col_idx[w++] = A->col_idx[k];
    A->row_ptr[i + 1] = w;
    start = end;
  }
  A->nnz = w;
  shrunk = realloc(A->col_idx, (size_t)(w > 0 ? w : 1) * sizeof *shrunk);
  if (shrunk != NULL)
    A->col_idx = shrunk;
}

/*
 * Generates the edges twice from the same stream: first to count each
 * row's entries, then to place the columns, so no edge list is stored.
 */
static void rmat_edges(struct spmv_csr *A, const struct initiator *ini,
                       int64_t edges, int symmetric, uint64_t seed, int place)
{
  struct spmv_rng rng;
  int64_t e, r, c, *rp = A->row_ptr;

  spmv_rng_seed(&rng, seed, SPMV_STREAM_STRUCT);
  for (e = 0; e < edges; e++) {
    draw_edge(&rng, ini, &r, &c);
    r = relabel(ini, (uint64_t)r);
    c = relabel(ini, (uint64_t)c);
    if (!place) {
      rp[r + 1]++;
      if (symmetric && r != c)
        rp[c + 1]++;
      continue;
    }
    A->col_idx[rp[r]++] = (int32_t)c; /* rp[r] walks from row r's start */
    if (symmetric && r != c)
      A->col_idx[rp[c]++] = (int32_t)r;
  }
}

/* Draws the relabelling of ini from seed's permutation stream. */
static void relabel_init(struct initiator *ini, uint64_t seed)
{
  struct spmv_rng rng;
  int i;

  spmv_rng_seed(&rng, seed, SPMV_STREAM_PERM);
  ini->mask = ((uint64_t)1 << ini->scale) - 1;
  ini->shift = ini->scale / 2 + 1;
  for (i = 0; i < RELABEL_ROUNDS; i++) {
    ini->mul[i] = spmv_rng_next(&rng) | 1;
    ini->add[i] = spmv_rng_next(&rng);
  }
}

/* An R-MAT graph of 2^scale vertices; new CSR or NULL (see spmv_gen.h). */
struct spmv_csr *spmv_gen_rmat(int scale, int64_t edgefactor, double a,
                               double b, double c, int symmetric,
                               uint64_t seed, struct spmv_error *err)
{
  struct initiator ini;
  struct spmv_csr *A;
  int32_t *col;
  int64_t n, edges, i;

  if (rmat_check(scale, edgefactor, a, b, c, symmetric, err) != 0)
    return NULL;
  n = (int64_t)1 << scale;
  edges = edgefactor << scale;
  ini.scale = scale;
  ini.a = (uint64_t)ldexp(a, 32);
  ini.ab = (uint64_t)ldexp(a + b, 32);
  ini.abc = (uint64_t)ldexp(a + b + c, 32);
  relabel_init(&ini, seed);
  if ((A = spmv_gen_begin(n, n, err)) == NULL)
    return NULL;
  /* Room for every edge before drawing any, so that a graph too large
   * fails at once, not after the first pass. */
  if ((uint64_t)edges > SIZE_MAX / (2 * sizeof *col) ||
      (col = malloc((size_t)edges * (symmetric ? 2 : 1) * sizeof *col)) == NULL)
    return spmv_gen_nomem(A, "the edges", err);
  free(A->col_idx);
  A->col_idx = col;
  rmat_edges(A, &ini, edges, symmetric, seed, 0);
  spmv_gen_offsets(A);
  rmat_edges(A, &ini, edges, symmetric, seed, 1);
  for (i = n; i > 0; i--) /* row_ptr[i] now ends row i: shift back */
    A->row_ptr[i] = A->row_ptr[i - 1];
  A->row_ptr[0] = 0;
  merge_duplicates(A);
  if (spmv_gen_values(A, seed, err) != 0)
    return spmv_csr_free(A);
  return A;
}
