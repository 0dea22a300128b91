/* spmvd_backend_cpu_vec.h: the cpu backend's device vectors (host memory)
 * and their operations; internal to the cpu backend. */
#ifndef SPMVD_BACKEND_CPU_VEC_H
#define SPMVD_BACKEND_CPU_VEC_H

#include <stddef.h>

#include "spmv_error.h"
#include "spmvd_backend.h"

/* A vector of n values of dt in the worker's memory. */
struct spmvd_bvector {
  enum spmv_dtype dt;
  size_t n;
  void *v;
};

/* The backend ops of spmvd_backend.h, with the results array res
 * (SPMVD_MAX_RESULTS doubles) that the scalars read and the reductions
 * write. */
int spmvd_cpu_vec_new(enum spmv_dtype dt, size_t n, struct spmvd_bvector **out,
                      struct spmv_error *err);
void spmvd_cpu_vec_free(struct spmvd_bvector *v);
int spmvd_cpu_vec_op(double *res, const struct spmvd_vop_args *a,
                     struct spmv_error *err);

#endif /* SPMVD_BACKEND_CPU_VEC_H */
