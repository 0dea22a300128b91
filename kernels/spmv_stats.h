/* spmv_stats.h: the median every timing loop of the project takes. */
#ifndef SPMV_STATS_H
#define SPMV_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The median of v[0..n) (n >= 1), sorting v in place; NAN when n is 0. */
double spmv_median(double *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif
