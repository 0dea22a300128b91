/* check_vectors.h: what check_vectors.c uses beside its cases: host
 * vectors in either dtype with their double copies, checks, and the
 * plain C references.  Static functions, for that one program. */
#ifndef CHECK_VECTORS_H
#define CHECK_VECTORS_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "spmv.h"

/* A host vector: its values as the daemon holds them (dtype) and the same
 * values as doubles for the references. */
struct hvec {
  int64_t n;
  int f32;
  void *v;
  double *d;
};

/* A zeroed host vector of n values (one spare), released by hv_free(). */
static struct hvec hv_new(int64_t n, int f32)
{
  struct hvec h = {n, f32, calloc((size_t)n + 1, f32 ? 4 : 8),
                   calloc((size_t)n + 1, sizeof(double))};
  ck_assert(h.v != NULL && h.d != NULL);
  return h;
}

/* Releases h's two arrays. */
static void hv_free(struct hvec *h)
{
  free(h->v);
  free(h->d);
}

/* Sets value i (rounded to the dtype, so that both copies agree). */
static void hv_set(struct hvec *h, int64_t i, double x)
{
  if (h->f32) {
    ((float *)h->v)[i] = (float)x;
    h->d[i] = (float)x;
  } else {
    ((double *)h->v)[i] = x;
    h->d[i] = x;
  }
}

/* Value i of the dtype copy (what a download wrote). */
static double hv_get(const struct hvec *h, int64_t i)
{
  return h->f32 ? ((const float *)h->v)[i] : ((const double *)h->v)[i];
}

/* Random values in [-1, 1). */
static void hv_rand(struct hvec *h, unsigned seed)
{
  srand(seed);
  for (int64_t i = 0; i < h->n; i++)
    hv_set(h, i, (double)rand() / RAND_MAX * 2 - 1);
}

/* The relative tolerance of one rounding in the dtype, with a margin. */
static double eps(int f32)
{
  return f32 ? 4e-7 : 1e-15;
}

/* Asserts that the downloaded h matches want[i] within tol * scale[i]
 * (scale NULL: |want[i]| + 1e-30). */
static void expect(const struct hvec *h, const double *want,
                   const double *scale, double tol, const char *what)
{
  for (int64_t i = 0; i < h->n; i++) {
    double s = scale != NULL ? scale[i] : fabs(want[i]) + 1e-30;
    ck_assert_msg(fabs(hv_get(h, i) - want[i]) <= tol * s,
                  "%s [%lld]: %.17g, reference %.17g", what, (long long)i,
                  hv_get(h, i), want[i]);
  }
}

/* Asserts that a client call succeeded, printing the client's message. */
#define OK(c, call) \
  ck_assert_msg((call) == 0, "%s: %s", #call, spmv_client_errmsg(c))

/* A new device vector of h's dtype and length holding h. */
static struct spmv_vector *dev_from(struct spmv_client *c,
                                    const struct hvec *h)
{
  struct spmv_vector *v = NULL;

  OK(c, spmv_vector_new(c, h->f32 ? SPMV_F32 : SPMV_F64, h->n, &v));
  OK(c, spmv_vector_upload(v, h->v));
  return v;
}

/* Loads the shipped matrix name as dtype into c; *A receives it as the
 * reference reads it (values rounded to f32 when f32). */
static struct spmv_matrix *load(struct spmv_client *c, const char *name,
                                int f32, struct spmv_csr **A)
{
  struct spmv_matrix *m = NULL;
  char path[4096];

  itest_matrix_path(name, path, sizeof path);
  OK(c, spmv_load_mtx(c, path, f32 ? SPMV_F32 : SPMV_F64, NULL, &m));
  *A = itest_matrix(name);
  if (f32)
    for (int64_t k = 0; k < (*A)->nnz; k++)
      (*A)->val[k] = (float)(*A)->val[k];
  return m;
}

/* CG in plain C double: rr[0] = r.r at the start, rr[k] after iteration
 * k (k = 1 .. iters); x receives the iterate. */
static void cg_ref(const struct spmv_csr *A, const double *b, int iters,
                   double *rr, double *x)
{
  size_t n = (size_t)A->rows;
  double *r = malloc(n * sizeof *r), *p = malloc(n * sizeof *p);
  double *q = malloc(n * sizeof *q);
  double rho = 0;

  for (size_t i = 0; i < n; i++) {
    x[i] = 0;
    r[i] = p[i] = b[i];
    rho += r[i] * r[i];
  }
  rr[0] = rho;
  for (int k = 1; k <= iters; k++) {
    double pq = 0, rn = 0;
    spmv_csr_ref(A, 1.0, p, 0.0, q);
    for (size_t i = 0; i < n; i++)
      pq += p[i] * q[i];
    for (size_t i = 0; i < n; i++) {
      x[i] += rho / pq * p[i];
      r[i] -= rho / pq * q[i];
      rn += r[i] * r[i];
    }
    for (size_t i = 0; i < n; i++)
      p[i] = r[i] + rn / rho * p[i];
    rr[k] = rho = rn;
  }
  free(r);
  free(p);
  free(q);
}


#endif /* CHECK_VECTORS_H */
