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

/* The same in microseconds. */
static inline double bench_now_us(void)
{
  return 1e6 * bench_now_s();
}

#endif /* BENCH_CLOCK_H */
