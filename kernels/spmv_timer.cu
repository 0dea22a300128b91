/* spmv_timer.cu: GPU time of a product, free of host launch gaps. */
/*
 * Host code and one spinning kernel.  A product of a small matrix runs in
 * a few microseconds, about what the host needs to queue a launch and an
 * event; timed one launch at a time, the GPU waits on the host and the
 * events measure the host.  So the stream is first held by a one-thread
 * kernel that spins on a host-mapped flag; the host queues every run and
 * its event, then raises the flag, and the runs execute back to back.
 * The spin gives up after about 20 ms (a host descheduled mid-queue costs
 * accuracy, never a hang).
 */
#include <stdlib.h>

#include "spmv_cuda.cuh"

struct spmv_dev_timer {
  cudaEvent_t ev[SPMV_DEV_TIME_MAX_REPS + 1];
  int nev;
  volatile int *flag;  /* host-mapped, pinned */
  int *dflag;          /* its device address */
};

__global__ void spmv_hold_kernel(const volatile int *flag) {
  long long t0 = clock64();
  while (*flag == 0 && clock64() - t0 < 40000000LL) {
  }
}

extern "C" int spmv_dev_timer_new(struct spmv_dev_timer **out,
                                  struct spmv_error *err) {
  struct spmv_dev_timer *t = (struct spmv_dev_timer *)calloc(1, sizeof *t);
  void *h = NULL;
  int rc;

  *out = NULL;
  if (t == NULL) return spmv_error_set(err, SPMV_ENOMEM, "timer: out of memory");
  for (; t->nev <= SPMV_DEV_TIME_MAX_REPS; t->nev++)
    if ((rc = spmv_cuda_error(cudaEventCreate(&t->ev[t->nev]), "cudaEventCreate", err)) < 0)
      goto fail;
  if ((rc = spmv_cuda_error(cudaHostAlloc(&h, sizeof(int), cudaHostAllocMapped),
                            "cudaHostAlloc of the timer's flag", err)) < 0)
    goto fail;
  t->flag = (volatile int *)h;
  if ((rc = spmv_cuda_error(cudaHostGetDevicePointer((void **)&t->dflag, h, 0),
                            "cudaHostGetDevicePointer", err)) < 0)
    goto fail;
  *out = t;
  return 0;
fail:
  spmv_dev_timer_free(t);
  return rc;
}

extern "C" struct spmv_dev_timer *spmv_dev_timer_free(struct spmv_dev_timer *t) {
  if (t == NULL) return NULL;
  while (t->nev > 0) cudaEventDestroy(t->ev[--t->nev]);
  if (t->flag) cudaFreeHost((void *)t->flag);
  free(t);
  return NULL;
}

extern "C" int spmv_dev_time_turns(struct spmv_dev_timer *t,
                                   const struct spmv_dev_timed *p, int n,
                                   cudaStream_t s, int warmup, int reps,
                                   struct spmv_error *err) {
  int rc = 0, held = 0, nev;

  if (n < 1 || n > SPMV_DEV_TIME_TURNS_MAX || reps < 1 ||
      reps > SPMV_DEV_TIME_MAX_REPS / n || warmup < 0) /* no n x reps overflow */
    return spmv_error_set(err, SPMV_EINVAL,
                          "timing: %d products x %d reps not in [1, %d] x [1, %d] "
                          "within %d runs, or warmup %d < 0",
                          n, reps, SPMV_DEV_TIME_TURNS_MAX, SPMV_DEV_TIME_MAX_REPS,
                          SPMV_DEV_TIME_MAX_REPS, warmup);
  nev = n * reps + 1;
  /* Captured before anything is queued: the timed runs only launch. */
  for (int i = 0; i < n; i++)
    if ((rc = spmv_dev_graph_prepare(p[i].g, p[i].m, 1.0, p[i].x, 0.0, p[i].y, s,
                                     err)) < 0)
      return rc;
  /* Runs after warm-ups are the resident ones (spmv_dev_matrix_warm_l2). */
  for (int i = 0; warmup > 0 && i < n; i++)
    if ((rc = spmv_dev_matrix_warm_l2(p[i].m, s, err)) < 0)
      return rc;
  __atomic_store_n((int *)t->flag, 0, __ATOMIC_SEQ_CST);
  spmv_hold_kernel<<<1, 1, 0, s>>>(t->dflag);
  if ((rc = spmv_cuda_error(cudaGetLastError(), "timer hold kernel", err)) < 0)
    goto out;
  held = 1;
  for (int k = 0; k < warmup; k++)
    for (int i = 0; i < n; i++)
      if ((rc = spmv_dev_graph_spmv(p[i].g, p[i].m, 1.0, p[i].x, 0.0, p[i].y, s,
                                    err)) < 0)
        goto out;
  if ((rc = spmv_cuda_error(cudaEventRecord(t->ev[0], s), "cudaEventRecord", err)) < 0)
    goto out;
  for (int k = 0; k < reps; k++)
    for (int i = 0; i < n; i++)
      if ((rc = spmv_dev_graph_spmv(p[i].g, p[i].m, 1.0, p[i].x, 0.0, p[i].y, s,
                                    err)) < 0 ||
          (rc = spmv_cuda_error(cudaEventRecord(t->ev[k * n + i + 1], s),
                                "cudaEventRecord", err)) < 0)
        goto out;
out:
  /* Release the stream whatever happened, then wait for it. */
  if (held) __atomic_store_n((int *)t->flag, 1, __ATOMIC_SEQ_CST);
  if (rc < 0) return rc;
  if ((rc = spmv_cuda_error(cudaEventSynchronize(t->ev[nev - 1]), "SpMV", err)) < 0)
    return rc;
  for (int e = 1; e < nev; e++) {
    float ms;
    if ((rc = spmv_cuda_error(cudaEventElapsedTime(&ms, t->ev[e - 1], t->ev[e]),
                              "cudaEventElapsedTime", err)) < 0)
      return rc;
    p[(e - 1) % n].us[(e - 1) / n] = 1e3 * (double)ms;
  }
  return 0;
}

extern "C" int spmv_dev_time(struct spmv_dev_timer *t, struct spmv_dev_graph *g,
                             const struct spmv_dev_matrix *m, const void *x,
                             void *y, cudaStream_t s, int warmup, int reps,
                             double *us, struct spmv_error *err) {
  struct spmv_dev_timed one = {g, m, x, y, us};

  if (reps < 1 || reps > SPMV_DEV_TIME_MAX_REPS || warmup < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "timing: reps %d not in [1, %d] or warmup %d < 0",
                          reps, SPMV_DEV_TIME_MAX_REPS, warmup);
  return spmv_dev_time_turns(t, &one, 1, s, warmup, reps, err);
}
