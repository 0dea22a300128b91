/* bench_clock.h: the benchmarks' wall clock (monotonic), header only. */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock, from an arbitrary origin. */
static inline double bench_now_s(void)
{
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif /* BENCH_CLOCK_H */
