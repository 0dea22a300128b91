/* spmv_mix.h: splitmix64's finalizer, one statement for the host's code
 * and the device's (the generators' seeds, the check's and the race's
 * vectors made from an index). */
#ifndef SPMV_MIX_H
#define SPMV_MIX_H

#include <stdint.h>

#ifdef __CUDACC__
#define SPMV_MIX_FN __host__ __device__ __forceinline__
#else
#define SPMV_MIX_FN inline
#endif

/* Mixes z into a well-spread 64-bit word (splitmix64's output step). */
static SPMV_MIX_FN uint64_t spmv_mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#endif /* SPMV_MIX_H */
