/* spmvd_backend_cuda.c: the cuda backend: one GPU, layouts resident in device memory. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "spmvd_backend.h"
#include "spmvd_backend_cuda_impl.h"
#include "spmvd_cuda_pipe.h"
#include "spmvd_log.h"

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
 * host the conversion is most of a load.  A race's candidates convert
 * from one copy of the CSR staged on the device for them all (stage()).
 * Products run on the backend's one stream; multiply() copies each
 * vector in and out around the launch, all of a call's vectors queued in
 * stream order and waited for once.  Device vectors
 * (spmvd_backend_cuda_vec.c) and their operations (spmv_blas1.cu) run on
 * the same stream; their scalars and reductions read and write a device
 * array of results, copied back by finish() with the call's one wait.
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

static void cuda_unstage(struct spmvd_backend *b)
{
  b->staged = spmv_dev_csr_free(b->staged);
  b->staged_A = NULL;
}

static void cuda_close(struct spmvd_backend *b)
{
  if (!b)
    return;
  cuda_unstage(b);
  spmv_cusparse_handle_free(b->cs);
  spmv_dev_timer_free(b->timer);
  spmv_dev_free(b->dres);
  spmv_dev_free(b->dpart);
  spmvd_cuda_pipe_free(b->pipe);
  if (b->hres)
    cudaFreeHost(b->hres);
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
  if (cudaGetDeviceCount(&in->devices) != cudaSuccess || in->devices < 1)
    in->devices = 1;
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

/* The list results, zeroed so that a slot read before it is written reads
 * the same every time, the reductions' partials and finish()'s pinned copy. */
static int alloc_results(struct spmvd_backend *b, struct spmv_error *err)
{
  size_t rb = SPMVD_MAX_RESULTS * sizeof(double);
  int rc;

  if ((rc = spmv_dev_alloc((void **)&b->dres, rb, "list results", err)) < 0 ||
      (rc = spmv_dev_alloc((void **)&b->dpart, SPMV_BLAS_MAX_PARTIALS * sizeof(double),
                           "reduction partials", err)) < 0)
    return rc;
  if ((rc = spmv_cuda_error(cudaMallocHost((void **)&b->hres, rb),
                            "pinned host results", err)) < 0) {
    b->hres = NULL;
    return rc;
  }
  return spmv_cuda_error(cudaMemsetAsync(b->dres, 0, rb, b->stream),
                         "zeroing the list results", err);
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
      (rc = spmv_dev_timer_new(&b->timer, err)) < 0 ||
      (rc = alloc_results(b, err)) < 0)
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
  spmv_dev_free(m->dx2);
  spmv_dev_free(m->dy2);
  free(m);
}

/*
 * Loads A as cuda_load does, its entries read from S (A staged, or NULL).
 * With S, a layout that fits only once S is freed (or only by converting
 * on the host beside it) is refused as SPMV_ENOMEM with *give_way set,
 * for cuda_load to free S and try again without it.
 */
static int load_from(struct spmvd_backend *b, const struct spmv_csr *A,
                     enum spmv_dtype dt, const struct spmv_config *cfg,
                     const struct spmv_dev_csr *S, int *give_way,
                     struct spmvd_bmatrix **out, struct spmv_error *err)
{
  struct spmvd_bmatrix *m = NULL;
  struct spmv_layout *L = NULL;
  struct spmv_limits lim = {0};
  size_t free_b = 0, total_b = 0, need, es = vsize(dt), room;
  size_t staged = S ? spmv_dev_csr_bytes(A) : 0;
  int rc, shell;

  *out = NULL;
  if ((rc = spmv_dev_mem_info(&free_b, &total_b, err)) < 0)
    return rc;
  if (free_b + staged <= RESERVE_BYTES)
    return spmv_error_set(err, SPMV_ENOMEM, "GPU has %zu bytes free, below the %zu-byte reserve",
                          free_b, RESERVE_BYTES);
  room = free_b > RESERVE_BYTES ? free_b - RESERVE_BYTES : 0;
  /* The layout's own limit is the room it would have without S: one that
   * fits only then is told from one that never fits below. */
  lim.max_bytes = free_b + staged - RESERVE_BYTES;
  /* Every layout holds at least the values and x and y: a matrix over
   * that is refused as out of GPU memory before any conversion, which
   * would only stop at the layout's limit (ETOOBIG). */
  need = (size_t)A->nnz * es + ((size_t)A->rows + (size_t)A->cols) * es;
  if (need > lim.max_bytes)
    return spmv_error_set(err, SPMV_ENOMEM,
                          "%s needs at least %zu bytes of GPU memory (values, x and y), "
                          "%zu free (%zu kept in reserve)",
                          spmv_format_name(cfg->format), need, free_b + staged,
                          RESERVE_BYTES);
  shell = spmv_layout_shell_ok(cfg->format);
  rc = spmv_layout_new_valid(A, dt, cfg, &lim, shell, &L, err);
  if (rc < 0)
    return rc;
  need = spmv_dev_matrix_bytes(L) + ((size_t)A->rows + (size_t)A->cols) * es;
  switch (spmvd_load_path_beside(shell, need, spmv_dev_shell_staging(L, S != NULL),
                                 room, staged)) {
  case SPMVD_LOAD_UNSTAGE:
    *give_way = 1;
    rc = spmv_error_set(err, SPMV_ENOMEM, "%s: no room beside the staged CSR",
                        spmv_format_name(cfg->format));
    goto fail;
  case SPMVD_LOAD_NONE:
    rc = spmv_error_set(err, SPMV_ENOMEM,
                        "%s needs %zu bytes of GPU memory, %zu free (%zu kept in reserve)",
                        spmv_format_name(cfg->format), need, free_b + staged,
                        RESERVE_BYTES);
    goto fail;
  case SPMVD_LOAD_HOST:
    /* Without S here (a shell beside S gives way): lim is the room. */
    if (shell) { /* no room to stage the CSR beside the layout */
      L = spmv_layout_free(L);
      if ((rc = spmv_layout_new_valid(A, dt, cfg, &lim, 0, &L, err)) < 0)
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
  rc = shell ? spmv_dev_matrix_new_staged(L, A, S, b->cs, &m->d, err)
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

static int cuda_load(struct spmvd_backend *b, const struct spmv_csr *A,
                     enum spmv_dtype dt, const struct spmv_config *cfg,
                     struct spmvd_bmatrix **out, struct spmv_error *err)
{
  int rc, give_way = 0;

  *out = NULL;
  if ((rc = spmv_cuda_error(cudaSetDevice(b->dev), "cudaSetDevice", err)) < 0)
    return rc;
  if (b->staged && b->staged_A == A) {
    rc = load_from(b, A, dt, cfg, b->staged, &give_way, out, err);
    if (!give_way)
      return rc;
    /* The staged copy takes the room this layout needs: it goes, and the
     * loads that follow copy from the host again. */
    spmvd_log_info("the staged CSR gives its room to %s (%s): the loads "
                   "that follow copy from the host",
                   spmv_format_name(cfg->format), err->msg);
    cuda_unstage(b);
    spmv_error_clear(err);
  }
  return load_from(b, A, dt, cfg, NULL, &give_way, out, err);
}

/* Stages A on the device for the loads that follow (see spmvd_backend.h);
 * where it does not fit, nothing is staged and loads copy from the host. */
static int cuda_stage(struct spmvd_backend *b, const struct spmv_csr *A,
                      struct spmv_error *err)
{
  size_t free_b = 0, total_b = 0;
  int rc;

  cuda_unstage(b);
  if ((rc = spmv_cuda_error(cudaSetDevice(b->dev), "cudaSetDevice", err)) < 0 ||
      (rc = spmv_dev_mem_info(&free_b, &total_b, err)) < 0)
    return rc;
  /* Room for the staged copy and the largest layout of the same entries
   * beside it (twice the CSR, the reserve kept); else the race's loads
   * would each find no room for it and drop it. */
  if (free_b <= RESERVE_BYTES || 3 * spmv_dev_csr_bytes(A) > free_b - RESERVE_BYTES)
    return 0;
  rc = spmv_dev_csr_new(A, &b->staged, err);
  if (rc == SPMV_ENOMEM) {
    spmv_error_clear(err);
    return 0;
  }
  if (rc < 0)
    return rc;
  b->staged_A = A;
  return 1;
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

/* nvec products of m follow: another matrix ran last, so bring this one
 * back into the L2 where it fits (spmv_dev_matrix_warm_l2), or its
 * products stay DRAM-bound; only once it is reused (spmv_l2_warm_now). */
int spmvd_cuda_warm_for(struct spmvd_backend *b, struct spmvd_bmatrix *m, int nvec,
                        struct spmv_error *err)
{
  int rc;

  if (nvec <= 0)
    return 0;
  set_last(b, m);
  if (!b->warmed &&
      spmv_l2_warm_now(spmv_dev_matrix_warm_mode(m->d), b->run, nvec)) {
    if ((rc = spmv_dev_matrix_warm_l2(m->d, b->stream, err)) < 0)
      return rc;
    b->warmed = 1;
  }
  b->run += nvec;
  return 0;
}

/* Queues vector v's copies and product through m->dx, m->dy: stream
 * order keeps the next vector's copies behind this one's. */
static int queue_product(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                         double alpha, const void *xv, double beta, void *yv,
                         struct spmv_error *err)
{
  const struct spmv_layout *L = &m->d->L;
  size_t es = vsize(L->dtype), xb = (size_t)L->cols * es, yb = (size_t)L->rows * es;
  cudaStream_t s = b->stream;
  int rc;

  if ((rc = spmv_cuda_error(cudaMemcpyAsync(m->dx, xv, xb, cudaMemcpyHostToDevice, s),
                            "copy of x to the GPU", err)) < 0)
    return rc;
  if (beta != 0 &&
      (rc = spmv_cuda_error(cudaMemcpyAsync(m->dy, yv, yb, cudaMemcpyHostToDevice, s),
                            "copy of y to the GPU", err)) < 0)
    return rc;
  if ((rc = spmv_dev_graph_spmv(m->graph, m->d, alpha, m->dx, beta, m->dy, s, err)) < 0)
    return rc;
  return spmv_cuda_error(cudaMemcpyAsync(yv, m->dy, yb, cudaMemcpyDeviceToHost, s),
                         "copy of y from the GPU", err);
}

/* Waits for the stream; after an earlier failure rc too, so that no copy
 * still writes the caller's memory on return, keeping rc's message
 * unless the wait found the context lost. */
int spmvd_cuda_wait_stream(struct spmvd_backend *b, int rc, const char *what,
                           struct spmv_error *err)
{
  struct spmv_error werr = {0};
  int wrc = spmv_cuda_error(cudaStreamSynchronize(b->stream), what, &werr);

  if (wrc < 0 && (rc == 0 || wrc == SPMV_EGPU_STICKY)) {
    *err = werr;
    return wrc;
  }
  return rc;
}

/* Whether a batch of m's can be pipelined: the pipe and m's second pair
 * of vectors exist, made now if not (without memory for them, the batch
 * runs one vector after another, as before). */
static int pipe_ready(struct spmvd_backend *b, struct spmvd_bmatrix *m)
{
  const struct spmv_layout *L = &m->d->L;
  size_t es = vsize(L->dtype);
  struct spmv_error e;

  if (!b->pipe && spmvd_cuda_pipe_new(&b->pipe, &e) < 0)
    return 0;
  if (!m->dx2 && spmv_dev_alloc(&m->dx2, (size_t)L->cols * es, "x", &e) < 0)
    return 0;
  if (!m->dy2 && spmv_dev_alloc(&m->dy2, (size_t)L->rows * es, "y", &e) < 0)
    return 0;
  return 1;
}

static int cuda_multiply(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                         double alpha, const void *x, double beta, void *y,
                         int nvec, struct spmv_error *err)
{
  const struct spmv_layout *L = &m->d->L;
  size_t es = vsize(L->dtype), xb = (size_t)L->cols * es, yb = (size_t)L->rows * es;
  int rc;

  if (nvec < 0)
    return spmv_error_set(err, SPMV_EINVAL, "nvec must be >= 0, not %d", nvec);
  m->x_random = 0;
  if ((rc = spmvd_cuda_warm_for(b, m, nvec, err)) < 0)
    return rc;
  if (nvec >= 2 && pipe_ready(b, m)) {
    void *const dx[2] = {m->dx, m->dx2}, *const dy[2] = {m->dy, m->dy2};
    return spmvd_cuda_pipe_run(b->pipe, m->d, b->stream, dx, dy, alpha, x,
                               beta, y, nvec, err);
  }
  /* One wait for all nvec: the worker pins the vectors' mappings, so the
   * copies are asynchronous and the host queues ahead of the GPU. */
  for (int v = 0; v < nvec && rc == 0; v++)
    rc = queue_product(b, m, alpha, (const char *)x + (size_t)v * xb, beta,
                       (char *)y + (size_t)v * yb, err);
  return spmvd_cuda_wait_stream(b, rc, "SpMV", err);
}

/* Puts a random x in m->dx: values in +-[0.5, 1.5), never zero, made on
 * the device (spmv_blas_random): a race times every candidate on its own
 * x, and a host-made one cost a host loop and an upload per candidate, on
 * matrices of millions of columns far more than the timing runs. */
static int random_x(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                    struct spmv_error *err)
{
  const struct spmv_layout *L = &m->d->L;
  int rc;

  if (m->x_random || L->cols == 0)
    return 0;
  rc = spmv_blas_random(L->dtype, (size_t)L->cols, m->dx, 0x9e3779b97f4a7c15ull,
                        b->stream, err);
  if (rc == 0)
    rc = spmv_cuda_error(cudaStreamSynchronize(b->stream), "timing vector", err);
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
  if ((rc = random_x(b, m, err)) < 0)
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
 * matrix's life: pinned memory is the host's.  The worker also pins its
 * vector mappings for their life, so that multiply's and the vector
 * copies are asynchronous. */
static int cuda_pin(struct spmvd_backend *b, void *addr, size_t size,
                    int readonly)
{
  if (size == 0 || cudaSetDevice(b->dev) != cudaSuccess)
    return 0;
  /* A matrix loaded from the client's memfd is write-sealed and mapped
   * read-only, which the default flags refuse (they want write access);
   * the device only reads a host copy, so it is registered read-only,
   * which suits either mapping.  Never a vector mapping: the device
   * writes y into those. */
  if (cudaHostRegister(addr, size, readonly ? cudaHostRegisterReadOnly
                                            : cudaHostRegisterDefault) == cudaSuccess)
    return 1;
  cudaGetLastError(); /* not sticky: the loads copy from pageable memory */
  return 0;
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

static int cuda_mem_info(struct spmvd_backend *b, uint64_t *free_bytes,
                         uint64_t *total_bytes, struct spmv_error *err)
{
  size_t free_b = 0, total_b = 0;
  int rc;

  if ((rc = spmv_cuda_error(cudaSetDevice(b->dev), "cudaSetDevice", err)) < 0 ||
      (rc = spmv_dev_mem_info(&free_b, &total_b, err)) < 0)
    return rc;
  *free_bytes = free_b;
  *total_bytes = total_b;
  return 0;
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
  .stage = cuda_stage,
  .unstage = cuda_unstage,
  .trim = cuda_trim,
  .mem_info = cuda_mem_info,
  .vec_new = spmvd_cuda_vec_new,
  .vec_free = spmvd_cuda_vec_free,
  .vec_upload = spmvd_cuda_vec_upload,
  .vec_download = spmvd_cuda_vec_download,
  .vec_spmv = spmvd_cuda_vec_spmv,
  .vec_op = spmvd_cuda_vec_op,
  .res_set = spmvd_cuda_res_set,
  .finish = spmvd_cuda_finish,
};
