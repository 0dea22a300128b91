/* spmvd_backend_cpu.c: the cpu backend: reference layouts, threaded CSR. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spmv_stats.h"
#include "spmvd_backend.h"
#include "spmvd_backend_cpu_vec.h"

/*
 * Design: a matrix is converted with spmv_layout_new() to its
 * configuration's layout.  CSR-shaped layouts (csr-scalar, csr-vector,
 * csr-merge, cusparse, and csr-adaptive's CSR) are multiplied by a pool of
 * threads, each owning a contiguous block of rows holding about nnz/threads
 * entries; every other layout runs its CPU reference, so the timed race
 * compares the formats' real CPU kernels.  Small products run on the
 * calling thread only: waking the pool costs more than they do.
 */

#define MAX_THREADS 256
#define THREADED_MIN_NNZ 65536

struct job {
  const struct spmvd_bmatrix *m;
  double alpha, beta;
  const void *x;
  void *y;
  int nvec;
};

struct spmvd_backend {
  int nthreads;                 /* pool size, the calling thread included */
  pthread_t tid[MAX_THREADS];
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  unsigned long gen;            /* bumped for every job */
  int pending;                  /* workers still running the current job */
  int stop;
  struct job job;
  char model[128];
  double res[SPMVD_MAX_RESULTS];  /* a list's results (spmvd_backend.h) */
};

struct spmvd_bmatrix {
  struct spmv_layout *L;
  const struct spmv_csr_layout *csr;  /* the CSR to thread over, or NULL */
  int64_t *part;                      /* nthreads + 1 row bounds */
  void *tx, *ty;                      /* time(): random x, scratch y */
};

static size_t vsize(enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? sizeof(float) : sizeof(double);
}

/* Rows r0..r1 of one vector: y = alpha*A*x + beta*y in the layout's type. */
static void csr_rows(const struct spmvd_bmatrix *m, int64_t r0, int64_t r1,
                     double alpha, const void *xv, double beta, void *yv)
{
  const struct spmv_csr_layout *c = m->csr;
  const int32_t *col = c->col;

  if (m->L->dtype == SPMV_F64) {
    const double *val = c->val, *x = xv;
    double *y = yv;
    for (int64_t i = r0; i < r1; i++) {
      double s = 0;
      for (int64_t k = spmv_csr_layout_offset(c, i),
                   e = spmv_csr_layout_offset(c, i + 1);
           k < e; k++)
        s += val[k] * x[col[k]];
      y[i] = beta == 0 ? alpha * s : alpha * s + beta * y[i];
    }
  } else {
    const float *val = c->val, *x = xv;
    float *y = yv;
    float a = (float)alpha, b = (float)beta;
    for (int64_t i = r0; i < r1; i++) {
      float s = 0;
      for (int64_t k = spmv_csr_layout_offset(c, i),
                   e = spmv_csr_layout_offset(c, i + 1);
           k < e; k++)
        s += val[k] * x[col[k]];
      y[i] = beta == 0 ? a * s : a * s + b * y[i];
    }
  }
}

static void run_part(struct spmvd_backend *b, int t)
{
  const struct job *j = &b->job;
  const struct spmvd_bmatrix *m = j->m;
  size_t es = vsize(m->L->dtype);

  for (int v = 0; v < j->nvec; v++)
    csr_rows(m, m->part[t], m->part[t + 1], j->alpha,
             (const char *)j->x + (size_t)v * m->L->cols * es, j->beta,
             (char *)j->y + (size_t)v * m->L->rows * es);
}

static void *pool_main(void *arg)
{
  struct spmvd_backend *b = arg;
  unsigned long seen = 0;
  int t;

  pthread_mutex_lock(&b->mu);
  for (t = 1; t < b->nthreads && !pthread_equal(b->tid[t], pthread_self()); t++)
    ;
  for (;;) {
    while (b->gen == seen && !b->stop)
      pthread_cond_wait(&b->go, &b->mu);
    if (b->stop)
      break;
    seen = b->gen;
    pthread_mutex_unlock(&b->mu);
    run_part(b, t);
    pthread_mutex_lock(&b->mu);
    if (--b->pending == 0)
      pthread_cond_signal(&b->done);
  }
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

static int cpu_threads(void)
{
  const char *env = getenv("SPMVD_CPU_THREADS");
  long n = env ? strtol(env, NULL, 10) : 0;
  if (n <= 0)
    n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1)
    n = 1;
  return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static void read_model(char *out, size_t n)
{
  char line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");

  snprintf(out, n, "unknown CPU");
  if (!f)
    return;
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) != 0 || !colon)
      continue;
    colon++;
    while (*colon == ' ' || *colon == '\t')
      colon++;
    colon[strcspn(colon, "\n")] = '\0';
    snprintf(out, n, "%s", colon);
    break;
  }
  fclose(f);
}

static void cpu_close(struct spmvd_backend *b)
{
  if (!b)
    return;
  pthread_mutex_lock(&b->mu);
  b->stop = 1;
  pthread_cond_broadcast(&b->go);
  pthread_mutex_unlock(&b->mu);
  for (int t = 1; t < b->nthreads; t++)
    pthread_join(b->tid[t], NULL);
  pthread_cond_destroy(&b->go);
  pthread_cond_destroy(&b->done);
  pthread_mutex_destroy(&b->mu);
  free(b);
}

static int cpu_open(int dev, struct spmvd_backend **out,
                    struct spmv_error *err)
{
  struct spmvd_backend *b = calloc(1, sizeof *b);
  int want;

  if (!b)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if (dev != 0) {
    free(b);
    return spmv_error_set(err, SPMV_ENODEV,
                          "the cpu backend has only device 0, not %d", dev);
  }
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->go, NULL);
  pthread_cond_init(&b->done, NULL);
  read_model(b->model, sizeof b->model);
  want = cpu_threads();
  b->tid[0] = pthread_self();
  b->nthreads = 1;
  pthread_mutex_lock(&b->mu);
  for (int t = 1; t < want; t++) {
    if (pthread_create(&b->tid[t], NULL, pool_main, b) != 0)
      break;
    b->nthreads++;
  }
  pthread_mutex_unlock(&b->mu);
  *out = b;
  return 0;
}

static int cpu_info(struct spmvd_backend *b, struct spmvd_device_info *info)
{
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

  memset(info, 0, sizeof *info);
  snprintf(info->backend, sizeof info->backend, "cpu");
  snprintf(info->name, sizeof info->name, "%s", b->model);
  info->sms = b->nthreads;
  info->warp_size = 1;
  info->devices = 1;
  info->max_threads_per_sm = 1;
  info->max_blocks_per_sm = 1;
  info->max_threads_per_block = 1;
  info->mem_bytes = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
  snprintf(info->device_key, sizeof info->device_key, "cpu %s, %d threads",
           b->model, b->nthreads);
  snprintf(info->software_key, sizeof info->software_key,
           "spmv kernels %d, cpu reference", SPMV_KERNEL_VERSION);
  return 0;
}

/* Splits rows into nthreads blocks of about equal nonzeros. */
static void partition(struct spmvd_bmatrix *m, int nthreads)
{
  const struct spmv_csr_layout *c = m->csr;
  int64_t rows = m->L->rows, nnz = m->L->nnz, r = 0;

  m->part[0] = 0;
  for (int t = 1; t < nthreads; t++) {
    int64_t target = nnz / nthreads * t;
    int64_t lo = r, hi = rows;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (spmv_csr_layout_offset(c, mid) < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    r = lo;
    m->part[t] = r;
  }
  m->part[nthreads] = rows;
}

static void cpu_unload(struct spmvd_backend *b, struct spmvd_bmatrix *m)
{
  if (!m)
    return;
  spmv_layout_free(m->L);
  free(m->part);
  free(m->tx);
  free(m->ty);
  free(m);
}

static int cpu_load(struct spmvd_backend *b, const struct spmv_csr *A,
                    enum spmv_dtype dt, const struct spmv_config *cfg,
                    struct spmvd_bmatrix **out, struct spmv_error *err)
{
  struct spmvd_bmatrix *m = calloc(1, sizeof *m);
  struct spmv_limits lim = {0};
  int rc;

  if (!m)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  lim.max_fill = 0;
  rc = spmv_layout_new_valid(A, dt, cfg, &lim, 0, &m->L, err);
  if (rc < 0)
    goto fail;
  m->csr = spmv_layout_typed_csr(m->L);
  if (m->csr) {
    m->part = malloc(sizeof *m->part * (size_t)(b->nthreads + 1));
    if (!m->part) {
      rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory");
      goto fail;
    }
    partition(m, b->nthreads);
  }
  *out = m;
  return 0;
fail:
  cpu_unload(b, m);
  return rc;
}

static int cpu_multiply(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                        double alpha, const void *x, double beta, void *y,
                        int nvec, struct spmv_error *err)
{
  size_t es = vsize(m->L->dtype);

  if (m->csr && b->nthreads > 1 && m->L->nnz >= THREADED_MIN_NNZ) {
    pthread_mutex_lock(&b->mu);
    b->job = (struct job){m, alpha, beta, x, y, nvec};
    b->pending = b->nthreads - 1;
    b->gen++;
    pthread_cond_broadcast(&b->go);
    pthread_mutex_unlock(&b->mu);
    run_part(b, 0);
    pthread_mutex_lock(&b->mu);
    while (b->pending > 0)
      pthread_cond_wait(&b->done, &b->mu);
    pthread_mutex_unlock(&b->mu);
    return 0;
  }
  for (int v = 0; v < nvec; v++) {
    const void *xv = (const char *)x + (size_t)v * m->L->cols * es;
    void *yv = (char *)y + (size_t)v * m->L->rows * es;
    if (m->csr) {
      csr_rows(m, 0, m->L->rows, alpha, xv, beta, yv);
      continue;
    }
    int rc = spmv_layout_spmv(m->L, alpha, xv, beta, yv);
    if (rc < 0)
      return spmv_error_set(err, rc, "layout '%s' cannot be multiplied",
                            spmv_format_name(m->L->cfg.format));
  }
  return 0;
}

static double now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cpu_time(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                    int warmup, int reps, double *median_us,
                    struct spmv_error *err)
{
  size_t es = vsize(m->L->dtype);
  double *t = NULL;
  int rc = 0;

  if (reps < 1)
    return spmv_error_set(err, SPMV_EINVAL, "reps must be >= 1, not %d", reps);
  if (!m->tx) {
    size_t nx = (size_t)(m->L->cols ? m->L->cols : 1);
    size_t ny = (size_t)(m->L->rows ? m->L->rows : 1);
    m->tx = malloc(nx * es);
    m->ty = malloc(ny * es);
    if (!m->tx || !m->ty)
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory for timing vectors");
    unsigned s = 12345;
    for (size_t i = 0; i < nx; i++) {
      s = s * 1103515245u + 12345u;
      double v = 0.5 + (double)(s >> 16 & 0x7fff) / 32768.0;
      if (es == sizeof(float))
        ((float *)m->tx)[i] = (float)v;
      else
        ((double *)m->tx)[i] = v;
    }
  }
  t = malloc(sizeof *t * (size_t)reps);
  if (!t)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  for (int i = 0; i < warmup; i++) {
    rc = cpu_multiply(b, m, 1.0, m->tx, 0.0, m->ty, 1, err);
    if (rc < 0)
      goto out;
  }
  for (int i = 0; i < reps; i++) {
    double t0 = now_us();
    rc = cpu_multiply(b, m, 1.0, m->tx, 0.0, m->ty, 1, err);
    if (rc < 0)
      goto out;
    t[i] = now_us() - t0;
  }
  *median_us = spmv_median(t, (size_t)reps);
out:
  free(t);
  return rc;
}

/* Device vectors are host memory here: every operation runs at once. */
static int cpu_vec_new(struct spmvd_backend *b, enum spmv_dtype dt, size_t n,
                       struct spmvd_bvector **out, struct spmv_error *err)
{
  (void)b;
  return spmvd_cpu_vec_new(dt, n, out, err);
}

static void cpu_vec_free(struct spmvd_backend *b, struct spmvd_bvector *v)
{
  (void)b;
  spmvd_cpu_vec_free(v);
}

static int cpu_vec_upload(struct spmvd_backend *b, struct spmvd_bvector *v,
                          const void *host, struct spmv_error *err)
{
  (void)b;
  (void)err;
  memcpy(v->v, host, v->n * vsize(v->dt));
  return 0;
}

static int cpu_vec_download(struct spmvd_backend *b, struct spmvd_bvector *v,
                            void *host, struct spmv_error *err)
{
  (void)b;
  (void)err;
  memcpy(host, v->v, v->n * vsize(v->dt));
  return 0;
}

static int cpu_vec_spmv(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                        double alpha, struct spmvd_bvector *x, double beta,
                        struct spmvd_bvector *y, struct spmv_error *err)
{
  return cpu_multiply(b, m, alpha, x->v, beta, y->v, 1, err);
}

static int cpu_vec_op(struct spmvd_backend *b, const struct spmvd_vop_args *a,
                      struct spmv_error *err)
{
  return spmvd_cpu_vec_op(b->res, a, err);
}

static int cpu_res_set(struct spmvd_backend *b, const double *res, int nres,
                       struct spmv_error *err)
{
  if (nres < 0 || nres > SPMVD_MAX_RESULTS)
    return spmv_error_set(err, SPMV_EINVAL, "nres %d not in [0, %d]", nres,
                          SPMVD_MAX_RESULTS);
  if (nres > 0)
    memcpy(b->res, res, sizeof *res * (size_t)nres);
  return 0;
}

static int cpu_finish(struct spmvd_backend *b, double *res, int nres,
                      struct spmv_error *err)
{
  (void)err;
  if (nres > 0)
    memcpy(res, b->res, sizeof *res * (size_t)nres);
  return 0;
}

/* The cpu backend: reference layouts and a threaded CSR. */
const struct spmvd_backend_ops spmvd_backend_cpu = {
  .name = "cpu",
  .open = cpu_open,
  .close = cpu_close,
  .info = cpu_info,
  .load = cpu_load,
  .multiply = cpu_multiply,
  .time = cpu_time,
  .unload = cpu_unload,
  .vec_new = cpu_vec_new,
  .vec_free = cpu_vec_free,
  .vec_upload = cpu_vec_upload,
  .vec_download = cpu_vec_download,
  .vec_spmv = cpu_vec_spmv,
  .vec_op = cpu_vec_op,
  .res_set = cpu_res_set,
  .finish = cpu_finish,
};
