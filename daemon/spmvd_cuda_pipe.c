/* spmvd_cuda_pipe.c: the cuda backend's product of several host vectors,
 * copies of one vector overlapping the product of another. */
#include "config.h"

#include <stdlib.h>

#include "spmvd_cuda_pipe.h"

/*
 * A batch's vectors on one stream run copy, product, copy, copy, ...: the
 * PCIe link idles while the kernel runs and the kernel while the vectors
 * move.  Here x goes up on one stream, the product runs on the backend's,
 * y comes down on a third, and events hand each slot from one to the
 * next: a slot is filled again only once its y has come down (which
 * follows its product, which read its x).
 */

struct spmvd_cuda_pipe {
  cudaStream_t up, down;
  cudaEvent_t in[2], done[2], out[2];  /* per slot: x up, product, y down */
};

void spmvd_cuda_pipe_free(struct spmvd_cuda_pipe *p)
{
  if (!p)
    return;
  if (p->up)
    cudaStreamSynchronize(p->up);
  if (p->down)
    cudaStreamSynchronize(p->down);
  for (int k = 0; k < 2; k++) {
    if (p->in[k])
      cudaEventDestroy(p->in[k]);
    if (p->done[k])
      cudaEventDestroy(p->done[k]);
    if (p->out[k])
      cudaEventDestroy(p->out[k]);
  }
  if (p->up)
    cudaStreamDestroy(p->up);
  if (p->down)
    cudaStreamDestroy(p->down);
  free(p);
}

int spmvd_cuda_pipe_new(struct spmvd_cuda_pipe **out, struct spmv_error *err)
{
  struct spmvd_cuda_pipe *p = calloc(1, sizeof *p);
  int rc;

  *out = NULL;
  if (!p)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = spmv_cuda_error(cudaStreamCreateWithFlags(&p->up, cudaStreamNonBlocking),
                       "cudaStreamCreate", err);
  if (rc == 0)
    rc = spmv_cuda_error(cudaStreamCreateWithFlags(&p->down, cudaStreamNonBlocking),
                         "cudaStreamCreate", err);
  for (int k = 0; k < 2 && rc == 0; k++) {
    unsigned f = cudaEventDisableTiming;
    if ((rc = spmv_cuda_error(cudaEventCreateWithFlags(&p->in[k], f),
                              "cudaEventCreate", err)) == 0 &&
        (rc = spmv_cuda_error(cudaEventCreateWithFlags(&p->done[k], f),
                              "cudaEventCreate", err)) == 0)
      rc = spmv_cuda_error(cudaEventCreateWithFlags(&p->out[k], f),
                           "cudaEventCreate", err);
  }
  if (rc < 0) {
    spmvd_cuda_pipe_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

/* Queues vector v through slot v % 2. */
static int queue_one(struct spmvd_cuda_pipe *p, const struct spmv_dev_matrix *d,
                     cudaStream_t s, void *const dx[2], void *const dy[2],
                     double alpha, const void *xv, double beta, void *yv,
                     int v, struct spmv_error *err)
{
  size_t es = d->L.dtype == SPMV_F32 ? 4 : 8;
  size_t xb = (size_t)d->L.cols * es, yb = (size_t)d->L.rows * es;
  int k = v & 1, rc;

  if (v >= 2 &&
      (rc = spmv_cuda_error(cudaStreamWaitEvent(p->up, p->out[k], 0),
                            "ordering the copies", err)) < 0)
    return rc;
  if ((rc = spmv_cuda_error(cudaMemcpyAsync(dx[k], xv, xb, cudaMemcpyHostToDevice, p->up),
                            "copy of x to the GPU", err)) < 0)
    return rc;
  if (beta != 0 &&
      (rc = spmv_cuda_error(cudaMemcpyAsync(dy[k], yv, yb, cudaMemcpyHostToDevice, p->up),
                            "copy of y to the GPU", err)) < 0)
    return rc;
  if ((rc = spmv_cuda_error(cudaEventRecord(p->in[k], p->up), "cudaEventRecord", err)) < 0 ||
      (rc = spmv_cuda_error(cudaStreamWaitEvent(s, p->in[k], 0), "ordering the product",
                            err)) < 0 ||
      (rc = spmv_dev_spmv(d, alpha, dx[k], beta, dy[k], s, err)) < 0 ||
      (rc = spmv_cuda_error(cudaEventRecord(p->done[k], s), "cudaEventRecord", err)) < 0 ||
      (rc = spmv_cuda_error(cudaStreamWaitEvent(p->down, p->done[k], 0),
                            "ordering the copies", err)) < 0)
    return rc;
  if ((rc = spmv_cuda_error(cudaMemcpyAsync(yv, dy[k], yb, cudaMemcpyDeviceToHost, p->down),
                            "copy of y from the GPU", err)) < 0)
    return rc;
  return spmv_cuda_error(cudaEventRecord(p->out[k], p->down), "cudaEventRecord", err);
}

int spmvd_cuda_pipe_run(struct spmvd_cuda_pipe *p,
                        const struct spmv_dev_matrix *d, cudaStream_t s,
                        void *const dx[2], void *const dy[2], double alpha,
                        const void *x, double beta, void *y, int nvec,
                        struct spmv_error *err)
{
  size_t es = d->L.dtype == SPMV_F32 ? 4 : 8;
  size_t xb = (size_t)d->L.cols * es, yb = (size_t)d->L.rows * es;
  struct spmv_error werr;
  int rc = 0;

  for (int v = 0; v < nvec && rc == 0; v++)
    rc = queue_one(p, d, s, dx, dy, alpha, (const char *)x + (size_t)v * xb,
                   beta, (char *)y + (size_t)v * yb, v, err);
  /* All three streams, even after a failure: nothing may still write the
   * caller's memory on return; a lost context found here wins. */
  cudaStream_t all[3] = {p->up, s, p->down};
  for (int i = 0; i < 3; i++) {
    int wrc = spmv_cuda_error(cudaStreamSynchronize(all[i]), "SpMV", &werr);
    if (wrc < 0 && (rc == 0 || wrc == SPMV_EGPU_STICKY)) {
      *err = werr;
      rc = wrc;
    }
  }
  return rc;
}
