/* spmvd_backend_cuda_vec.c: the cuda backend's device vectors and the
 * operations of a list on them (spmv_blas1.cu), on the backend's stream. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "spmv_kernels.h"
#include "spmvd_backend_cuda_impl.h"

/* The backend's scalars and results are handed to the kernels as they are. */
_Static_assert(SPMVD_MAX_RESULTS == SPMV_DEV_RESULTS, "one results array");
_Static_assert(SPMVD_SCALAR_MAX_TERMS == SPMV_DEV_SCALAR_TERMS, "one scalar shape");

void spmvd_cuda_vec_free(struct spmvd_backend *b, struct spmvd_bvector *v)
{
  (void)b;
  if (!v)
    return;
  spmv_dev_free(v->d); /* waits for the work queued on it */
  free(v);
}

/* Admits bytes of a new vector against the device's free memory, keeping
 * the reserve that the loads keep. */
static int admit_vector(size_t bytes, struct spmv_error *err)
{
  size_t free_b = 0, total_b = 0;
  int rc;

  if ((rc = spmv_dev_mem_info(&free_b, &total_b, err)) < 0)
    return rc;
  if (free_b <= RESERVE_BYTES || bytes > free_b - RESERVE_BYTES)
    return spmv_error_set(err, SPMV_ENOMEM,
                          "a vector needs %zu bytes of GPU memory, %zu free (%zu kept in reserve)",
                          bytes, free_b, RESERVE_BYTES);
  return 0;
}

int spmvd_cuda_vec_new(struct spmvd_backend *b, enum spmv_dtype dt, size_t n,
                       struct spmvd_bvector **out, struct spmv_error *err)
{
  struct spmvd_bvector *v;
  size_t es = vsize(dt);
  int rc;

  *out = NULL;
  if (dt != SPMV_F32 && dt != SPMV_F64)
    return spmv_error_set(err, SPMV_EINVAL, "vector value type %d is neither f32 nor f64",
                          (int)dt);
  if (n > SIZE_MAX / es)
    return spmv_error_set(err, SPMV_ENOMEM, "a vector of %zu values is too large", n);
  if ((rc = spmv_cuda_error(cudaSetDevice(b->dev), "cudaSetDevice", err)) < 0 ||
      (rc = admit_vector(n * es, err)) < 0)
    return rc;
  if (!(v = calloc(1, sizeof *v)))
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  v->dt = dt;
  v->n = n;
  if ((rc = spmv_dev_alloc(&v->d, n * es, "a vector", err)) < 0 ||
      (rc = spmv_cuda_error(cudaMemsetAsync(v->d, 0, n * es, b->stream),
                            "zero-filling a vector", err)) < 0) {
    spmvd_cuda_vec_free(b, v);
    return rc;
  }
  *out = v;
  return 0;
}

/* Copies v's n values to or from host memory, queued on the stream. */
static int vec_copy(struct spmvd_backend *b, struct spmvd_bvector *v, void *host,
                    enum cudaMemcpyKind kind, const char *what, struct spmv_error *err)
{
  size_t bytes = v->n * vsize(v->dt);

  if (bytes == 0)
    return 0;
  return spmv_cuda_error(kind == cudaMemcpyHostToDevice
                             ? cudaMemcpyAsync(v->d, host, bytes, kind, b->stream)
                             : cudaMemcpyAsync(host, v->d, bytes, kind, b->stream),
                         what, err);
}

int spmvd_cuda_vec_upload(struct spmvd_backend *b, struct spmvd_bvector *v,
                          const void *host, struct spmv_error *err)
{
  return vec_copy(b, v, (void *)host, cudaMemcpyHostToDevice,
                  "copy of a vector to the GPU", err);
}

int spmvd_cuda_vec_download(struct spmvd_backend *b, struct spmvd_bvector *v,
                            void *host, struct spmv_error *err)
{
  return vec_copy(b, v, host, cudaMemcpyDeviceToHost, "copy of a vector from the GPU",
                  err);
}

int spmvd_cuda_vec_spmv(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                        double alpha, struct spmvd_bvector *x, double beta,
                        struct spmvd_bvector *y, struct spmv_error *err)
{
  const struct spmv_layout *L = &m->d->L;
  int rc;

  if (x == y || x->dt != L->dtype || y->dt != L->dtype ||
      x->n != (size_t)L->cols || y->n != (size_t)L->rows)
    return spmv_error_set(err, SPMV_EINVAL,
                          "spmv of a %lld x %lld matrix needs distinct x of %lld and y of "
                          "%lld values of its type, not %zu and %zu",
                          (long long)L->rows, (long long)L->cols, (long long)L->cols,
                          (long long)L->rows, x->n, y->n);
  if ((rc = spmvd_cuda_warm_for(b, m, 1, err)) < 0)
    return rc;
  return spmv_dev_graph_spmv(m->graph, m->d, alpha, x->d, beta, y->d, b->stream, err);
}

/* The kernels' form of a scalar (the same fields: see the asserts above). */
static struct spmv_dev_scalar dev_scalar(const struct spmvd_scalar *s)
{
  struct spmv_dev_scalar d = {.c = s->c, .nmul = s->nmul, .ndiv = s->ndiv,
                              .finite = s->finite};

  memcpy(d.mul, s->mul, sizeof d.mul);
  memcpy(d.div, s->div, sizeof d.div);
  return d;
}

/* Whether the operation's vectors are there and agree with x in type and
 * length (the worker checked; this keeps a slip from faulting the GPU). */
static int vop_vectors_ok(const struct spmvd_vop_args *a, int ny, int nz)
{
  const struct spmvd_bvector *x = a->x;

  if (!x || (ny && !a->y) || (nz && !a->z))
    return 0;
  if (ny && (a->y->dt != x->dt || a->y->n != x->n))
    return 0;
  return !nz || (a->z->dt == x->dt && a->z->n == x->n);
}

int spmvd_cuda_vec_op(struct spmvd_backend *b, const struct spmvd_vop_args *a,
                      struct spmv_error *err)
{
  static const int needs_y[] = {[SPMVD_VOP_COPY] = 1, [SPMVD_VOP_AXPBY] = 1,
                                [SPMVD_VOP_MUL] = 1, [SPMVD_VOP_DOT] = 1, [SPMVD_VOP_ASUM] = 0};
  static const int needs_z[] = {[SPMVD_VOP_MUL] = 1, [SPMVD_VOP_ASUM] = 0};
  struct spmv_dev_scalar sa = dev_scalar(&a->a), sb = dev_scalar(&a->b);
  cudaStream_t s = b->stream;

  if ((unsigned)a->op > SPMVD_VOP_ASUM)
    return spmv_error_set(err, SPMV_EINVAL, "unknown vector operation %d", (int)a->op);
  if (!vop_vectors_ok(a, needs_y[a->op], needs_z[a->op]))
    return spmv_error_set(err, SPMV_EINVAL,
                          "vector operation %d: vectors missing or of other types or lengths",
                          (int)a->op);
  enum spmv_dtype dt = a->x->dt;
  size_t n = a->x->n;
  switch (a->op) {
  case SPMVD_VOP_FILL:
    return spmv_blas_fill(dt, n, a->x->d, sa, b->dres, s, err);
  case SPMVD_VOP_COPY:
    return spmv_blas_copy(dt, n, a->x->d, a->y->d, s, err);
  case SPMVD_VOP_SCALE:
    return spmv_blas_scale(dt, n, a->x->d, sa, b->dres, s, err);
  case SPMVD_VOP_AXPBY:
    return spmv_blas_axpby(dt, n, sa, a->x->d, sb, a->y->d, b->dres, s, err);
  case SPMVD_VOP_MUL:
    return spmv_blas_mul(dt, n, a->x->d, a->y->d, a->z->d, s, err);
  case SPMVD_VOP_DOT:
    return spmv_blas_dot(dt, n, a->x->d, a->y->d, b->dres, a->slot, b->dpart, s, err);
  case SPMVD_VOP_NRM2:
    return spmv_blas_nrm2(dt, n, a->x->d, b->dres, a->slot, b->dpart, s, err);
  case SPMVD_VOP_ASUM:
    return spmv_blas_asum(dt, n, a->x->d, b->dres, a->slot, b->dpart, s, err);
  }
  return spmv_error_set(err, SPMV_EINVAL, "unknown vector operation %d", (int)a->op);
}

/* Through the pinned copy, which nothing reads before finish() waits. */
int spmvd_cuda_res_set(struct spmvd_backend *b, const double *res, int nres,
                       struct spmv_error *err)
{
  if (nres < 0 || nres > SPMVD_MAX_RESULTS)
    return spmv_error_set(err, SPMV_EINVAL, "nres %d not in [0, %d]", nres,
                          SPMVD_MAX_RESULTS);
  if (nres == 0)
    return 0;
  memcpy(b->hres, res, (size_t)nres * sizeof(double));
  return spmv_cuda_error(cudaMemcpyAsync(b->dres, b->hres, (size_t)nres * sizeof(double),
                                         cudaMemcpyHostToDevice, b->stream),
                         "copy of the results to the GPU", err);
}

/* The results' copy is queued before the one wait, into pinned memory so
 * that it is truly stream-ordered. */
int spmvd_cuda_finish(struct spmvd_backend *b, double *res, int nres,
                      struct spmv_error *err)
{
  int rc = 0;

  if (nres < 0 || nres > SPMVD_MAX_RESULTS)
    return spmv_error_set(err, SPMV_EINVAL, "nres %d not in [0, %d]", nres,
                          SPMVD_MAX_RESULTS);
  if (nres > 0)
    rc = spmv_cuda_error(cudaMemcpyAsync(b->hres, b->dres, (size_t)nres * sizeof(double),
                                         cudaMemcpyDeviceToHost, b->stream),
                         "copy of the results from the GPU", err);
  if ((rc = spmvd_cuda_wait_stream(b, rc, "vector operations", err)) < 0)
    return rc;
  if (nres > 0)
    memcpy(res, b->hres, (size_t)nres * sizeof(double));
  return 0;
}
