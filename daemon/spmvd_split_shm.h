/* spmvd_split_shm.h: the memfd that the workers of a split solve share
 * with each other and the front end: this control block, then
 * SPMVD_SPLIT_VECS vectors of rows doubles each: b, x, and those whose
 * halo the blocks read from each other (p; s of BiCGStab). */
#ifndef SPMVD_SPLIT_SHM_H
#define SPMVD_SPLIT_SHM_H

#include <stdatomic.h>

#include "spmv_split.h"

/*
 * The workers meet at its barrier (count, gen) and all-reduce through its
 * slots, double-buffered by the reduction's parity so that a fast worker's
 * next sum never overwrites one a slow worker still reads.  The front end
 * (or a failing block) sets abort, which frees the others.  The front end
 * sets cancel when the client cancels or goes: each block notes in stop
 * whether it has seen it as it gives a reduction its part, so that all
 * stop after the same reduction.
 */
struct spmvd_split_ctl {
  _Atomic unsigned count, gen, abort, cancel;
  double slot[2][SPMV_SPLIT_MAX];
  unsigned char stop[2][SPMV_SPLIT_MAX];
};

/* The message of a block that another's failure or death stopped. */
#define SPMVD_SPLIT_ABORTED "aborted: the worker of another block died or failed"

/* Bytes before b. */
#define SPMVD_SPLIT_CTL_BYTES 4096
/* The vectors after it. */
#define SPMVD_SPLIT_VECS 4

/* Where the vector in float lies, after the vectors in double: an f32
 * matrix's blocks read the vector they multiply through it (and the
 * front end sends an f32 solution from it). */
static inline size_t spmvd_split_f32_off(size_t n)
{
  return SPMVD_SPLIT_CTL_BYTES + SPMVD_SPLIT_VECS * n * sizeof(double);
}

/* The shared memfd's size for n rows. */
static inline size_t spmvd_split_shm_bytes(size_t n)
{
  return spmvd_split_f32_off(n) + n * sizeof(float);
}

/* A split list's memfd: this control block, then two vectors of n values
 * (of the list's widest type) into which the blocks publish their rows of
 * a product's x, the list's products taking them in turn, so that a block
 * publishing the next product's x never writes one that a slower block
 * still gathers its halo from. */
static inline size_t spmvd_split_list_x_off(size_t n, int product)
{
  return SPMVD_SPLIT_CTL_BYTES + (size_t)(product % 2) * n * sizeof(double);
}
static inline size_t spmvd_split_list_bytes(size_t n)
{
  return SPMVD_SPLIT_CTL_BYTES + 2 * n * sizeof(double);
}

#endif /* SPMVD_SPLIT_SHM_H */
