/* spmvd_backend_cuda.c: the cuda backend: one GPU, layouts resident in device memory. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "spmvd_backend.h"

/*
 * Design: a matrix is converted on the host with spmv_layout_new() to its
 * configuration's layout, admitted against the device's free memory
 * (spmv_dev_mem_info(): arrays, scratch and two vectors, plus a reserve),
 * copied to the device
 * (spmv_dev_matrix_new, which also prepares cuSPARSE for the cusparse
 * format), and the host layout is dropped.  Every format but csr-panel
 * (spmv_layout_shell_ok) is converted on the device instead:
 * the host builds their row offsets, tables and slices
 * (spmv_layout_new_shell), the columns and values go from the CSR to the
 * GPU and are placed and narrowed there (spmv_dev_matrix_new_csr): on the
 * host the conversion is most of a load.  Products run on the backend's
 * one stream; multiply() copies each vector in and out around the launch.
 * Each matrix's products, timed or for clients, replay one CUDA graph
 * (spmv_dev_graph_spmv) of its launches on its own x and y.
 * Device memory comes from the device's pool, which keeps what is
 * freed until trim() (spmv_dev_pool_keep): a tuner's race frees a
 * candidate's layout and staging right before timing the next, and memory
 * given back to the driver is scrubbed meanwhile, which slows those
 * timings.
 * Any CUDA failure that leaves the context unusable comes back as
 * SPMV_EGPU_STICKY, on which the worker must exit.
 */

/* Device memory kept free beside the admitted matrices. */
#define RESERVE_BYTES ((size_t)256 << 20)

struct spmvd_backend {
  int dev;
  cudaStream_t stream;
  struct spmv_cusparse_handle *cs;
  struct spmv_dev_timer *timer;
  struct spmvd_device_info info;
  const struct spmvd_bmatrix *last; /* the matrix of the last product */
  int64_t run;                       /* last's client products in a row */
  int warmed;                        /* last taken into the L2 since */
};

struct spmvd_bmatrix {
  struct spmv_dev_matrix *d;
  void *dx, *dy;     /* one x (cols) and one y (rows) on the device */
  int x_random;      /* dx holds time()'s random vector */
  /* Its products replayed as a graph (spmv_dev_graph_spmv): dx and dy
   * never move, so one capture serves every product of an alpha, beta. */
  struct spmv_dev_graph *graph;
};

static size_t vsize(enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? sizeof(float) : sizeof(double);
}

static void cuda_close(struct spmvd_backend *b)
{
  if (!b)
    return;
  spmv_cusparse_handle_free(b->cs);
  spmv_dev_timer_free(b->timer);
  if (b->stream)
    cudaStreamDestroy(b->stream);
  free(b);
}

/* Fills the device and software keys (spmvd_backend.h) from the device. */
static void fill_info(struct spmvd_backend *b, const struct cudaDeviceProp *p)
{
  struct spmvd_device_info *in = &b->info;
  int drv = 0, rt = 0;
  char csv[32];

  snprintf(in->backend, sizeof in->backend, "cuda");
  snprintf(in->name, sizeof in->name, "%.127s", p->name);
  in->cc_major = p->major;
  in->cc_minor = p->minor;
  in->sms = p->multiProcessorCount;
  in->warp_size = p->warpSize;
  in->max_threads_per_sm = p->maxThreadsPerMultiProcessor;
  in->max_blocks_per_sm = p->maxBlocksPerMultiProcessor;
  in->max_threads_per_block = p->maxThreadsPerBlock;
  in->mem_bytes = (uint64_t)p->totalGlobalMem;
  in->l2_bytes = (uint64_t)p->l2CacheSize;
  snprintf(in->device_key, sizeof in->device_key, "%.127s cc%d.%d sms%d mem%llu",
           p->name, p->major, p->minor, p->multiProcessorCount,
           (unsigned long long)p->totalGlobalMem);
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  spmv_cusparse_version(csv, sizeof csv);
  snprintf(in->software_key, sizeof in->software_key,
           "driver %d runtime %d cusparse %s kernels %d", drv, rt, csv,
           SPMV_KERNEL_VERSION);
}

static int cuda_open(int dev, struct spmvd_backend **out,
                     struct spmv_error *err)
{
  struct spmvd_backend *b = NULL;
  struct cudaDeviceProp p;
  int n = 0, rc;
  cudaError_t e;

  *out = NULL;
  /* Every kernel loaded now, before CUDA starts, not at its first launch:
   * lazily, a fresh worker's first race times each candidate's one-off
   * module load with its first run, many times the run itself, and may
   * drop the fastest and cache a slower format.  An operator's own
   * setting is kept. */
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    cudaGetLastError();
    return spmv_error_set(err, SPMV_ENODEV, "no CUDA device: %s",
                          e != cudaSuccess ? cudaGetErrorString(e) : "count is 0");
  }
  if (dev < 0 || dev >= n)
    return spmv_error_set(err, SPMV_ENODEV, "device %d out of range [0, %d)",
                          dev, n);
  b = calloc(1, sizeof *b);
  if (!b)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  b->dev = dev;
  if ((rc = spmv_cuda_error(cudaSetDevice(dev), "cudaSetDevice", err)) < 0)
    goto fail;
  if ((rc = spmv_cuda_error(cudaGetDeviceProperties(&p, dev),
                            "cudaGetDeviceProperties", err)) < 0)
    goto fail;
  if ((rc = spmv_cuda_error(cudaStreamCreateWithFlags(&b->stream,
                                                      cudaStreamNonBlocking),
                            "cudaStreamCreate", err)) < 0)
    goto fail;
  if ((rc = spmv_dev_pool_keep(err)) < 0 ||
      (rc = spmv_cusparse_handle_new(b->stream, &b->cs, err)) < 0 ||
      (rc = spmv_dev_timer_new(&b->timer, err)) < 0)
    goto fail;
  fill_info(b, &p);
  *out = b;
  return 0;
fail:
  cuda_close(b);
  return rc;
}

static int cuda_info(struct spmvd_backend *b, struct spmvd_device_info *info)
{
  *info = b->info;
  return 0;
}

static void cuda_unload(struct spmvd_backend *b, struct spmvd_bmatrix *m)
{
  if (!m)
    return;
  if (b != NULL && b->last == m)
    b->last = NULL;
  spmv_dev_graph_free(m->graph); /* before the arrays it points at */
  spmv_dev_matrix_free(m->d);
  spmv_dev_free(m->dx);
  spmv_dev_free(m->dy);
  free(m);
}

static int cuda_load(struct spmvd_backend *b, const struct spmv_csr *A,
                     enum spmv_dtype dt, const struct spmv_config *cfg,
                     struct spmvd_bmatrix **out, struct spmv_error *err)
{
  struct spmvd_bmatrix *m = NULL;
  struct spmv_layout *L = NULL;
  struct spmv_limits lim = {0};
  size_t free_b = 0, total_b = 0, need, es = vsize(dt);
  int rc, shell;

  *out = NULL;
  if ((rc = spmv_cuda_error(cudaSetDevice(b->dev), "cudaSetDevice", err)) < 0)
    return rc;
  if ((rc = spmv_dev_mem_info(&free_b, &total_b, err)) < 0)
    return rc;
  if (free_b <= RESERVE_BYTES)
    return spmv_error_set(err, SPMV_ENOMEM, "GPU has %zu bytes free, below the %zu-byte reserve",
                          free_b, RESERVE_BYTES);
  lim.max_bytes = free_b - RESERVE_BYTES;
  shell = spmv_layout_shell_ok(cfg->format);
  rc = shell ? spmv_layout_new_shell(A, dt, cfg, &lim, &L, err)
             : spmv_layout_new(A, dt, cfg, &lim, &L, err);
  if (rc < 0)
    return rc;
  need = spmv_dev_matrix_bytes(L) + ((size_t)A->rows + (size_t)A->cols) * es;
  switch (spmvd_load_path(shell, need, spmv_dev_shell_staging(L),
                          free_b - RESERVE_BYTES)) {
  case SPMVD_LOAD_NONE:
    rc = spmv_error_set(err, SPMV_ENOMEM,
                        "%s needs %zu bytes of GPU memory, %zu free (%zu kept in reserve)",
                        spmv_format_name(cfg->format), need, free_b, RESERVE_BYTES);
    goto fail;
  case SPMVD_LOAD_HOST:
    if (shell) { /* no room to stage the CSR beside the layout */
      L = spmv_layout_free(L);
      if ((rc = spmv_layout_new(A, dt, cfg, &lim, &L, err)) < 0)
        return rc;
      shell = 0;
    }
    break;
  case SPMVD_LOAD_DEVICE:
    break;
  }
  m = calloc(1, sizeof *m);
  if (!m || !(m->graph = spmv_dev_graph_new())) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory");
    goto fail;
  }
  if ((rc = spmv_dev_alloc(&m->dx, (size_t)A->cols * es, "x", err)) < 0 ||
      (rc = spmv_dev_alloc(&m->dy, (size_t)A->rows * es, "y", err)) < 0)
    goto fail;
  rc = shell ? spmv_dev_matrix_new_csr(L, A, b->cs, &m->d, err)
             : spmv_dev_matrix_new(L, b->cs, &m->d, err);
  if (rc < 0)
    goto fail;
  spmv_layout_free(L);
  *out = m;
  return 0;
fail:
  spmv_layout_free(L);
  cuda_unload(b, m);
  return rc;
}

/* m's products follow: a new run of them when another matrix's ran last. */
static void set_last(struct spmvd_backend *b, const struct spmvd_bmatrix *m)
{
  if (b->last != m) {
    b->last = m;
    b->run = 0;
    b->warmed = 0;
  }
}

static int cuda_multiply(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                         double alpha, const void *x, double beta, void *y,
                         int nvec, struct spmv_error *err)
{
  const struct spmv_layout *L = &m->d->L;
  size_t es = vsize(L->dtype), xb = (size_t)L->cols * es, yb = (size_t)L->rows * es;
  cudaStream_t s = b->stream;
  int rc;

  if (nvec < 0)
    return spmv_error_set(err, SPMV_EINVAL, "nvec must be >= 0, not %d", nvec);
  m->x_random = 0;
  /* Another matrix ran last: bring this one back into the L2 where it
   * fits (spmv_dev_matrix_warm_l2), or its products stay DRAM-bound;
   * only once it is reused (spmv_l2_warm_now). */
  if (nvec > 0) {
    set_last(b, m);
    if (!b->warmed &&
        spmv_l2_warm_now(spmv_dev_matrix_warm_mode(m->d), b->run, nvec)) {
      if ((rc = spmv_dev_matrix_warm_l2(m->d, s, err)) < 0)
        return rc;
      b->warmed = 1;
    }
    b->run += nvec;
  }
  for (int v = 0; v < nvec; v++) {
    const char *xv = (const char *)x + (size_t)v * xb;
    char *yv = (char *)y + (size_t)v * yb;
    if ((rc = spmv_cuda_error(cudaMemcpyAsync(m->dx, xv, xb, cudaMemcpyHostToDevice, s),
                              "copy of x to the GPU", err)) < 0)
      return rc;
    if (beta != 0 &&
        (rc = spmv_cuda_error(cudaMemcpyAsync(m->dy, yv, yb, cudaMemcpyHostToDevice, s),
                              "copy of y to the GPU", err)) < 0)
      return rc;
    if ((rc = spmv_dev_graph_spmv(m->graph, m->d, alpha, m->dx, beta, m->dy, s,
                                  err)) < 0)
      return rc;
    if ((rc = spmv_cuda_error(cudaMemcpyAsync(yv, m->dy, yb, cudaMemcpyDeviceToHost, s),
                              "copy of y from the GPU", err)) < 0)
      return rc;
    if ((rc = spmv_cuda_error(cudaStreamSynchronize(s), "SpMV", err)) < 0)
      return rc;
  }
  return 0;
}

/* Puts a random x in m->dx: values in +-[0.5, 1.5), never zero. */
static int random_x(struct spmvd_bmatrix *m, struct spmv_error *err)
{
  const struct spmv_layout *L = &m->d->L;
  size_t es = vsize(L->dtype), n = (size_t)L->cols;
  uint64_t st = 0x9e3779b97f4a7c15ull;
  void *h;
  int rc;

  if (m->x_random || n == 0)
    return 0;
  h = malloc(n * es);
  if (!h)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for the timing vector");
  for (size_t i = 0; i < n; i++) {
    st ^= st << 13;
    st ^= st >> 7;
    st ^= st << 17;
    double v = 0.5 + (double)(st >> 11) / 9007199254740992.0;
    if (st & 1)
      v = -v;
    if (es == sizeof(float))
      ((float *)h)[i] = (float)v;
    else
      ((double *)h)[i] = v;
  }
  rc = spmv_dev_upload(m->dx, h, n * es, "copy of the timing vector", err);
  free(h);
  if (rc == 0)
    m->x_random = 1;
  return rc;
}

/* The median of reps back-to-back products (spmv_dev_time). */
static int cuda_time(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                     int warmup, int reps, double *median_us,
                     struct spmv_error *err)
{
  double *t;
  int rc;

  if (reps < 1)
    return spmv_error_set(err, SPMV_EINVAL, "reps must be >= 1, not %d", reps);
  if (reps > SPMV_DEV_TIME_MAX_REPS)
    reps = SPMV_DEV_TIME_MAX_REPS;
  if ((rc = random_x(m, err)) < 0)
    return rc;
  t = malloc(sizeof *t * (size_t)reps);
  if (!t)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = spmv_dev_time(b->timer, m->graph, m->d, m->dx, m->dy, b->stream, warmup,
                     reps, t, err);
  set_last(b, m);
  if (warmup > 0)
    b->warmed = 1;  /* spmv_dev_time took it into the L2 */
  if (rc == 0)
    *median_us = spmv_median(t, (size_t)reps);
  free(t);
  return rc;
}

/* Registers a matrix's host copy for the loads of one operation: a copy
 * from pinned memory is so much faster than from pageable memory that
 * registering and unregistering pay back within one load of a large
 * matrix.  The copy is registered only while loads need it, not for the
 * matrix's life: pinned memory is the host's. */
static int cuda_pin(struct spmvd_backend *b, void *addr, size_t size)
{
  if (size == 0 || cudaSetDevice(b->dev) != cudaSuccess)
    return 0;
  if (cudaHostRegister(addr, size, cudaHostRegisterDefault) != cudaSuccess) {
    cudaGetLastError(); /* not sticky: the loads copy from pageable memory */
    return 0;
  }
  return 1;
}

static void cuda_unpin(struct spmvd_backend *b, void *addr)
{
  (void)b;
  if (cudaHostUnregister(addr) != cudaSuccess)
    cudaGetLastError();
}

static size_t cuda_trim(struct spmvd_backend *b)
{
  if (cudaSetDevice(b->dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return spmv_dev_pool_trim();
}

/* The cuda backend: the kernels of kernels/ on one GPU. */
const struct spmvd_backend_ops spmvd_backend_cuda = {
  .name = "cuda",
  .open = cuda_open,
  .close = cuda_close,
  .info = cuda_info,
  .load = cuda_load,
  .multiply = cuda_multiply,
  .time = cuda_time,
  .unload = cuda_unload,
  .pin = cuda_pin,
  .unpin = cuda_unpin,
  .trim = cuda_trim,
};
