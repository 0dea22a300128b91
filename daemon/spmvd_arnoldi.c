/* spmvd_arnoldi.c: a GMRES cycle's small dense algebra on the host
 * (spmvd_arnoldi.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_arnoldi.h"

int spmvd_arnoldi_new(struct spmvd_arnoldi *a, int m, struct spmv_error *err)
{
  a->m = m;
  a->h = calloc((size_t)(m + 1) * (size_t)m, sizeof *a->h);
  a->cs = calloc((size_t)m, sizeof *a->cs);
  a->sn = calloc((size_t)m, sizeof *a->sn);
  a->g = calloc((size_t)m + 1, sizeof *a->g);
  a->y = calloc((size_t)m, sizeof *a->y);
  if (!a->h || !a->cs || !a->sn || !a->g || !a->y)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for gmres(%d)", m);
  return 0;
}

void spmvd_arnoldi_free(struct spmvd_arnoldi *a)
{
  free(a->h);
  free(a->cs);
  free(a->sn);
  free(a->g);
  free(a->y);
  memset(a, 0, sizeof *a);
}

double *spmvd_arnoldi_column(struct spmvd_arnoldi *a, int j)
{
  return a->h + (size_t)j * (size_t)(a->m + 1);
}

void spmvd_arnoldi_start(struct spmvd_arnoldi *a, double beta)
{
  memset(a->g, 0, (size_t)(a->m + 1) * sizeof *a->g);
  a->g[0] = beta;
}

double spmvd_arnoldi_givens(struct spmvd_arnoldi *a, int j)
{
  double *c = spmvd_arnoldi_column(a, j);

  for (int i = 0; i < j; i++) {
    double t = a->cs[i] * c[i] + a->sn[i] * c[i + 1];
    c[i + 1] = -a->sn[i] * c[i] + a->cs[i] * c[i + 1];
    c[i] = t;
  }
  double r = hypot(c[j], c[j + 1]);
  a->cs[j] = r > 0 ? c[j] / r : 1;
  a->sn[j] = r > 0 ? c[j + 1] / r : 0;
  c[j] = r;
  c[j + 1] = 0;
  a->g[j + 1] = -a->sn[j] * a->g[j];
  a->g[j] = a->cs[j] * a->g[j];
  return fabs(a->g[j + 1]);
}

void spmvd_arnoldi_solve(struct spmvd_arnoldi *a, int k)
{
  for (int i = k - 1; i >= 0; i--) {
    double t = a->g[i];
    for (int l = i + 1; l < k; l++)
      t -= spmvd_arnoldi_column(a, l)[i] * a->y[l];
    a->y[i] = t / spmvd_arnoldi_column(a, i)[i];
  }
}
