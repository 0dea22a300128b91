/* spmv_gen_impl.h: the generators' random streams and building blocks. */
#ifndef SPMV_GEN_IMPL_H
#define SPMV_GEN_IMPL_H

#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_gen.h"

/* Largest row or column count of a generated matrix (32-bit indices). */
#define SPMV_GEN_MAX_DIM INT32_MAX

/* xoshiro256**: a small, fast generator with 256 bits of state. */
struct spmv_rng {
  uint64_t s[4];
};

/* Seeds rng from seed and a stream number, through splitmix64. */
void spmv_rng_seed(struct spmv_rng *rng, uint64_t seed, uint64_t stream);

/* Returns the next 64 random bits. */
static inline uint64_t spmv_rng_next(struct spmv_rng *rng)
{
  uint64_t *s = rng->s;
  uint64_t x = s[1] * 5, r = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return r;
}

/* Returns a uniform double in [0, 1). */
static inline double spmv_rng_unit(struct spmv_rng *rng)
{
  return (double)(spmv_rng_next(rng) >> 11) * 0x1p-53;
}

/* Returns a uniform integer in [0, n), n >= 1, without bias (Lemire). */
static inline uint64_t spmv_rng_below(struct spmv_rng *rng, uint64_t n)
{
  unsigned __int128 m = (unsigned __int128)spmv_rng_next(rng) * n;
  uint64_t low = (uint64_t)m, thresh;

  if (low < n) {
    thresh = -n % n;
    while (low < thresh) {
      m = (unsigned __int128)spmv_rng_next(rng) * n;
      low = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

/* Returns a uniform value in [-1, 1), never exactly 0. */
static inline double spmv_rng_value(struct spmv_rng *rng)
{
  double v;

  do
    v = 2.0 * spmv_rng_unit(rng) - 1.0;
  while (v == 0.0);
  return v;
}

/* Returns a standard normal deviate (Box-Muller). */
double spmv_rng_normal(struct spmv_rng *rng);

/* Returns a Poisson(lambda) deviate, lambda >= 0, in O(lambda) time. */
int64_t spmv_rng_poisson(struct spmv_rng *rng, double lambda);

/* Stream numbers, so that structure and values never share a stream. */
enum {
  SPMV_STREAM_STRUCT = 1,
  SPMV_STREAM_VALUES = 2,
  SPMV_STREAM_PERM = 3
};

/*
 * Writes n distinct uniformly random integers of [lo, lo + m), sorted
 * ascending, into out; needs 0 <= n <= m.  O(n log n) when n <= m/2,
 * O(m) = O(n) otherwise.
 */
void spmv_gen_sample(struct spmv_rng *rng, int32_t *out, int64_t n,
                     int64_t lo, int64_t m);

/* Returns a random permutation of [0, n), n <= 2^31 - 1, from seed's
 * permutation stream: a new array owned by the caller, or NULL. */
int32_t *spmv_gen_perm(int64_t n, uint64_t seed);

/* Sorts keys[0 .. n) ascending, moving vals (NULL: none) alongside. */
void spmv_gen_sort(int32_t *keys, double *vals, int64_t n);

/*
 * Starts a generated matrix: checks the dimensions (SPMV_EINVAL when
 * negative, SPMV_ETOOBIG past SPMV_GEN_MAX_DIM) and returns a new CSR with
 * no entries.  The caller stores row i's length in row_ptr[i + 1], then
 * calls spmv_gen_commit().
 */
struct spmv_csr *spmv_gen_begin(int64_t rows, int64_t cols,
                                struct spmv_error *err);

/* Turns the lengths in row_ptr into offsets and sets nnz. */
void spmv_gen_offsets(struct spmv_csr *A);

/* Turns the lengths in row_ptr into offsets and allocates col_idx for them;
 * returns 0 or SPMV_ENOMEM (the caller frees A). */
int spmv_gen_commit(struct spmv_csr *A, struct spmv_error *err);

/* Allocates val for A->nnz entries and fills it from seed; returns 0 or
 * SPMV_ENOMEM. */
int spmv_gen_values(struct spmv_csr *A, uint64_t seed,
                    struct spmv_error *err);

/* Sets err to SPMV_ENOMEM naming what, frees A, and returns NULL. */
struct spmv_csr *spmv_gen_nomem(struct spmv_csr *A, const char *what,
                                struct spmv_error *err);

#endif /* SPMV_GEN_IMPL_H */
