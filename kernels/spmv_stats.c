/* spmv_stats.c: the median every timing loop of the project takes. */
#include "spmv_stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return (x > y) - (x < y);
}

/* The median of v[0..n), sorting v in place. */
double spmv_median(double *v, size_t n)
{
  if (n == 0)
    return NAN;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
