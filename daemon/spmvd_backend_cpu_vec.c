/* spmvd_backend_cpu_vec.c: the cpu backend's device vectors and BLAS-1. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_backend_cpu_vec.h"

/*
 * Plain loops on the worker's thread: the cpu backend exists so that the
 * service's logic runs everywhere (CI); its sums run in one fixed order,
 * in double, so they repeat bit for bit.
 */

int spmvd_cpu_vec_new(enum spmv_dtype dt, size_t n, struct spmvd_bvector **out,
                      struct spmv_error *err)
{
  struct spmvd_bvector *v = calloc(1, sizeof *v);
  size_t es = spmv_dtype_size(dt);

  *out = NULL;
  if (!v || n > SIZE_MAX / es - 1 || !(v->v = calloc(n ? n : 1, es))) {
    free(v);
    return spmv_error_set(err, SPMV_ENOMEM,
                          "out of memory for a vector of %zu values", n);
  }
  v->dt = dt;
  v->n = n;
  *out = v;
  return 0;
}

void spmvd_cpu_vec_free(struct spmvd_bvector *v)
{
  if (!v)
    return;
  free(v->v);
  free(v);
}

/* A scalar's value from the results so far. */
static double scalar(const double *res, const struct spmvd_scalar *s)
{
  double v = s->c;

  for (int i = 0; i < s->nmul; i++)
    v *= res[s->mul[i]];
  for (int i = 0; i < s->ndiv; i++)
    v /= res[s->div[i]];
  return s->finite && !isfinite(v) ? 0.0 : v;
}

/* Whether s is the constant 0 (then y is not read: it may hold NaN). */
static int zero(const struct spmvd_scalar *s)
{
  return s->c == 0 && s->nmul == 0 && s->ndiv == 0;
}

/* Element i of v as a double / set from one. */
static double get(const struct spmvd_bvector *v, size_t i)
{
  return v->dt == SPMV_F32 ? (double)((const float *)v->v)[i]
                           : ((const double *)v->v)[i];
}

static void set(struct spmvd_bvector *v, size_t i, double d)
{
  if (v->dt == SPMV_F32)
    ((float *)v->v)[i] = (float)d;
  else
    ((double *)v->v)[i] = d;
}

/* The f32 operations round as the value type does, as on the GPU. */
static void axpby(const struct spmvd_vop_args *a, double al, double be)
{
  size_t n = a->x->n;

  if (a->x->dt == SPMV_F32) {
    const float *x = a->x->v;
    float *y = a->y->v, fa = (float)al, fb = (float)be;
    for (size_t i = 0; i < n; i++)
      y[i] = zero(&a->b) ? fa * x[i] : fa * x[i] + fb * y[i];
  } else {
    const double *x = a->x->v;
    double *y = a->y->v;
    for (size_t i = 0; i < n; i++)
      y[i] = zero(&a->b) ? al * x[i] : al * x[i] + be * y[i];
  }
}

int spmvd_cpu_vec_op(double *res, const struct spmvd_vop_args *a,
                     struct spmv_error *err)
{
  size_t n = a->x->n;
  double al = scalar(res, &a->a), s = 0;

  switch (a->op) {
  case SPMVD_VOP_FILL:
    for (size_t i = 0; i < n; i++)
      set(a->x, i, al);
    return 0;
  case SPMVD_VOP_COPY:
    memmove(a->y->v, a->x->v, n * spmv_dtype_size(a->x->dt));
    return 0;
  case SPMVD_VOP_SCALE:
    if (a->x->dt == SPMV_F32) {
      float *x = a->x->v, f = (float)al;
      for (size_t i = 0; i < n; i++)
        x[i] *= f;
    } else {
      double *x = a->x->v;
      for (size_t i = 0; i < n; i++)
        x[i] *= al;
    }
    return 0;
  case SPMVD_VOP_AXPBY:
    axpby(a, al, scalar(res, &a->b));
    return 0;
  case SPMVD_VOP_MUL:
    for (size_t i = 0; i < n; i++)
      set(a->z, i, a->x->dt == SPMV_F32
                       ? (double)((float)get(a->x, i) * (float)get(a->y, i))
                       : get(a->x, i) * get(a->y, i));
    return 0;
  case SPMVD_VOP_DOT:
    for (size_t i = 0; i < n; i++)
      s += get(a->x, i) * get(a->y, i);
    res[a->slot] = s;
    return 0;
  case SPMVD_VOP_NRM2:
    for (size_t i = 0; i < n; i++)
      s += get(a->x, i) * get(a->x, i);
    res[a->slot] = sqrt(s);
    return 0;
  case SPMVD_VOP_ASUM:
    for (size_t i = 0; i < n; i++)
      s += fabs(get(a->x, i));
    res[a->slot] = s;
    return 0;
  }
  return spmv_error_set(err, SPMV_EINVAL, "unknown vector operation %d",
                        (int)a->op);
}
