/* eval_store.c: timing for the tuner evaluation: backend ops, or resident
 * layouts converted ahead and shared across launch shapes. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

#include "spmv_kernels.h"
#endif

#include "eval_store.h"
#include "spmv_stats.h"
#include "bench_clock.h"

/*
 * Design.  The exhaustive ground truth times about a hundred
 * configurations per matrix; converting each at its load (as the worker
 * does) costs far more than timing it.  In the resident modes a layout is
 * keyed by what it depends on (spmv_config_layout_key: not bs outside
 * csr-stream, not csr-vector's TPR),
 * converted by a pool of host threads a few layouts ahead of the race
 * (eval_store_prefetch announces the order), uploaded once and kept until
 * device memory runs short or the matrix changes; a load whose key is
 * resident only retargets the configuration.  The products and their
 * timing are those of the cuda backend: each product replayed as a CUDA
 * graph (spmv_dev_graph_spmv) between two CUDA events, the median of the
 * runs, x random and never zero.
 */

#define AHEAD 4
#define MAX_THREADS 8
#define MAX_RESIDENT 64
#define RESERVE_BYTES ((size_t)1 << 30)
#define CALIB_WARMUP 2
#define CALIB_REPS 10
#define MAX_REPS 256  /* SPMV_DEV_TIME_MAX_REPS */

enum mode { M_CPU, M_CUDA, M_REF };

/* One layout the pool converts. */
struct slot {
  struct spmv_config key;
  struct spmv_layout *L;  /* owned until taken */
  int rc, done, taken;
  char msg[200];
};

/* Host threads converting slots [0, n) at most AHEAD past the last taken. */
struct pool {
  const struct spmv_csr *A;
  enum spmv_dtype dt;
  struct spmv_limits lim;
  struct slot *slot;
  int n, next, consumed, stop, nthreads;
  pthread_t tid[MAX_THREADS];
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

/* A layout on the device (cuda) or kept on the host (ref). */
struct resident {
  struct spmv_config key;
  void *h;   /* struct spmv_dev_matrix * or struct spmv_layout * */
};

struct eval_store {
  enum mode mode;
  void *pad;                 /* eval_store_probe_pad's allocation */
  const struct spmvd_backend_ops *bops;
  struct spmvd_backend *be;
  struct spmvd_device_info info;
  const struct spmv_csr *A;
  enum spmv_dtype dt;
  struct spmvd_bmatrix *bm;          /* cpu mode: the loaded candidate */
  struct resident res[MAX_RESIDENT];
  int nres, cur;                     /* cur: resident in use, or -1 */
  struct spmv_config cur_cfg;
  struct pool pool;                  /* nthreads 0: not running */
  void *x, *y;                       /* timing vectors (device or host) */
  const struct spmvd_calib_plan *plan;
  int plan_matrix;
  int calib_direct;                  /* time points through the backend */
#ifdef HAVE_CUDA
  cudaStream_t stream;
  struct spmv_dev_timer *timer;
  struct spmv_dev_graph *graph;  /* products as the backend runs them */
  struct spmv_cusparse_handle *cs;
#endif
};

/* ---- the conversion pool ---- */

static void *pool_main(void *arg)
{
  struct pool *p = arg;

  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stop && p->next < p->n && p->next >= p->consumed + AHEAD)
      pthread_cond_wait(&p->cv, &p->mu);
    if (p->stop || p->next >= p->n)
      break;
    struct slot *sl = &p->slot[p->next++];
    struct spmv_layout *L = NULL;
    struct spmv_error e;
    pthread_mutex_unlock(&p->mu);
    spmv_error_clear(&e);
    int rc = spmv_layout_new(p->A, p->dt, &sl->key, &p->lim, &L, &e);
    pthread_mutex_lock(&p->mu);
    sl->L = L;
    sl->rc = rc;
    snprintf(sl->msg, sizeof sl->msg, "%.190s", e.msg);
    sl->done = 1;
    pthread_cond_broadcast(&p->cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* Stops the pool's threads and frees the layouts nobody took. */
static void pool_stop(struct pool *p)
{
  if (p->nthreads == 0)
    return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nthreads; i++)
    pthread_join(p->tid[i], NULL);
  for (int k = 0; k < p->n; k++)
    spmv_layout_free(p->slot[k].L);
  free(p->slot);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  memset(p, 0, sizeof *p);
}

/* Starts converting the distinct keys of cfgs (n) that are not resident. */
static void pool_start(struct eval_store *s, const struct spmv_config *cfgs,
                       size_t n)
{
  struct pool *p = &s->pool;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int k, j;

  pool_stop(p);
  p->slot = calloc(n ? n : 1, sizeof *p->slot);
  if (p->slot == NULL)
    return;  /* no prefetch: loads convert on demand */
  for (size_t i = 0; i < n; i++) {
    struct spmv_config key = spmv_config_layout_key(&cfgs[i]);
    for (j = 0; j < s->nres && !spmv_config_equal(&s->res[j].key, &key); j++)
      ;
    for (k = 0; k < p->n && !spmv_config_equal(&p->slot[k].key, &key); k++)
      ;
    if (j == s->nres && k == p->n)
      p->slot[p->n++].key = key;
  }
  p->A = s->A;
  p->dt = s->dt;
  p->lim.max_bytes = (size_t)(s->info.mem_bytes / 2);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  int nt = cpus > 2 ? (int)(cpus - 1) : 1;
  nt = nt > MAX_THREADS ? MAX_THREADS : nt;
  nt = nt > p->n ? p->n : nt;
  for (k = 0; k < nt; k++)
    if (pthread_create(&p->tid[p->nthreads], NULL, pool_main, p) == 0)
      p->nthreads++;
  if (p->nthreads == 0) {
    free(p->slot);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    memset(p, 0, sizeof *p);
  }
}

/* Takes key's layout from the pool (waiting for it); returns 1 when the
 * pool had the key (then *L and the return code in *rc), 0 when not. */
static int pool_take(struct pool *p, const struct spmv_config *key,
                     struct spmv_layout **L, int *rc, struct spmv_error *err)
{
  int k;

  if (p->nthreads == 0)
    return 0;
  pthread_mutex_lock(&p->mu);
  for (k = 0; k < p->n && !(spmv_config_equal(&p->slot[k].key, key) && !p->slot[k].taken);
       k++)
    ;
  if (k == p->n) {
    pthread_mutex_unlock(&p->mu);
    return 0;
  }
  if (k + 1 > p->consumed) {
    p->consumed = k + 1;
    pthread_cond_broadcast(&p->cv);
  }
  while (!p->slot[k].done)
    pthread_cond_wait(&p->cv, &p->mu);
  *L = p->slot[k].L;
  *rc = p->slot[k].rc;
  if (*rc < 0)
    spmv_error_set(err, *rc, "%s", p->slot[k].msg);
  p->slot[k].L = NULL;
  p->slot[k].taken = 1;
  pthread_mutex_unlock(&p->mu);
  return 1;
}

/* ---- the device: cuda kernels, or the layouts' CPU references ---- */

static size_t vsize(enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? sizeof(float) : sizeof(double);
}

/* Fills n typed values in +-[0.5, 1.5), never zero. */
static void random_typed(void *v, int64_t n, enum spmv_dtype dt, uint64_t seed)
{
  uint64_t st = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
  for (int64_t i = 0; i < n; i++) {
    st ^= st << 13;
    st ^= st >> 7;
    st ^= st << 17;
    double x = 0.5 + (double)(st >> 11) / 9007199254740992.0;
    if (st & 1)
      x = -x;
    if (dt == SPMV_F32)
      ((float *)v)[i] = (float)x;
    else
      ((double *)v)[i] = x;
  }
}

static void dev_release(struct eval_store *s, void *h)
{
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    spmv_dev_matrix_free(h);
    return;
  }
#endif
  (void)s;
  spmv_layout_free(h);
}

/* Device memory free now (ref: plenty). */
static size_t dev_free_bytes(struct eval_store *s)
{
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    size_t f = 0, t = 0;
    if (cudaMemGetInfo(&f, &t) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return f;
  }
#endif
  (void)s;
  return SIZE_MAX / 2;
}

/* Makes L (taken) resident: *h owned by the store. */
static int dev_upload(struct eval_store *s, struct spmv_layout *L, void **h,
                      struct spmv_error *err)
{
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    struct spmv_dev_matrix *d = NULL;
    int rc = spmv_dev_matrix_new(L, s->cs, &d, err);
    spmv_layout_free(L);
    *h = d;
    return rc;
  }
#endif
  (void)s;
  (void)err;
  *h = L;
  return 0;
}

/* The median of reps products of resident h under cfg, after warmup. */
static int dev_time(struct eval_store *s, void *h, const struct spmv_config *cfg,
                    int warmup, int reps, double *us, struct spmv_error *err)
{
  double t[MAX_REPS];
  int rc = 0;

  if (reps < 1 || reps > MAX_REPS)
    return spmv_error_set(err, SPMV_EINVAL, "reps %d out of [1, %d]", reps,
                          MAX_REPS);
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    struct spmv_dev_matrix *d = h;
    d->L.cfg = *cfg;
    if ((rc = spmv_dev_time(s->timer, s->graph, d, s->x, s->y, s->stream, warmup, reps,
                             t, err)) < 0)
      return rc;
    *us = spmv_median(t, (size_t)reps);
    return 0;
  }
#endif
  struct spmv_layout *L = h;
  L->cfg = *cfg;
  for (int i = 0; i < warmup + reps; i++) {
    double t0 = bench_now_us();
    if ((rc = spmv_layout_spmv(L, 1.0, s->x, 0.0, s->y)) < 0)
      return spmv_error_set(err, rc, "reference product of %s failed",
                            spmv_format_name(cfg->format));
    if (i >= warmup)
      t[i - warmup] = fmax(bench_now_us() - t0, 1e-3);
  }
  *us = spmv_median(t, (size_t)reps);
  return 0;
}

/* Frees every resident layout. */
static void evict_all(struct eval_store *s)
{
#ifdef HAVE_CUDA
  spmv_dev_graph_reset(s->graph);  /* it may hold a resident's arrays */
#endif
  for (int i = 0; i < s->nres; i++)
    dev_release(s, s->res[i].h);
  s->nres = 0;
  s->cur = -1;
}

/* Makes cfg's layout current: resident, from the pool, or converted now. */
static int resident_load(struct eval_store *s, const struct spmv_config *cfg,
                         struct spmv_error *err)
{
  struct spmv_config key = spmv_config_layout_key(cfg);
  struct spmv_layout *L = NULL;
  struct spmv_limits lim = {0};
  void *h = NULL;
  int rc = 0;

  if (s->A == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "eval store: no matrix");
  for (int i = 0; i < s->nres; i++)
    if (spmv_config_equal(&s->res[i].key, &key)) {
      s->cur = i;
      s->cur_cfg = *cfg;
      return 0;
    }
  if (!pool_take(&s->pool, &key, &L, &rc, err)) {
    lim.max_bytes = (size_t)(s->info.mem_bytes / 2);
    rc = spmv_layout_new(s->A, s->dt, &key, &lim, &L, err);
  }
  if (rc < 0)
    return rc;
  if (s->nres == MAX_RESIDENT ||
      dev_free_bytes(s) < L->bytes + L->bytes / 2 + RESERVE_BYTES)
    evict_all(s);
  if ((rc = dev_upload(s, L, &h, err)) < 0)
    return rc;
  s->res[s->nres].key = key;
  s->res[s->nres].h = h;
  s->cur = s->nres++;
  s->cur_cfg = *cfg;
  return 0;
}

/* ---- the store ---- */

/* Frees the timing vectors. */
static void free_vectors(struct eval_store *s)
{
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    spmv_dev_free(s->x);
    spmv_dev_free(s->y);
    s->x = s->y = NULL;
    return;
  }
#endif
  free(s->x);
  free(s->y);
  s->x = s->y = NULL;
}

/* Sets the matrix the race times. */
int eval_store_matrix(struct eval_store *s, const struct spmv_csr *A,
                      enum spmv_dtype dt, struct spmv_error *err)
{
  size_t es = vsize(dt), nx = (size_t)(A && A->cols > 0 ? A->cols : 1);
  size_t ny = (size_t)(A && A->rows > 0 ? A->rows : 1);
  void *hx;
  int rc = 0;

  pool_stop(&s->pool);
  evict_all(s);
  if (s->bm != NULL)
    s->bops->unload(s->be, s->bm);
  s->bm = NULL;
  free_vectors(s);
  s->A = A;
  s->dt = dt;
  if (s->mode == M_CPU || A == NULL)
    return 0;
  hx = malloc(nx * es);
  if (hx == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory for x");
  random_typed(hx, (int64_t)nx, dt, (uint64_t)A->nnz);
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    if ((rc = spmv_dev_alloc(&s->x, nx * es, "x", err)) < 0 ||
        (rc = spmv_dev_alloc(&s->y, ny * es, "y", err)) < 0 ||
        (rc = spmv_dev_upload(s->x, hx, nx * es, "copy of x", err)) < 0)
      free_vectors(s);
    free(hx);
    return rc;
  }
#endif
  s->x = hx;
  s->y = malloc(ny * es);
  if (s->y == NULL) {
    free_vectors(s);
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory for y");
  }
  return rc;
}

/* Reorders c so that candidates sharing a layout follow each other, keys
 * in the order they first appear, candidates of a key in their order. */
void eval_store_group(struct spmvd_candidates *c)
{
  struct spmvd_candidates *o = malloc(sizeof *o);
  unsigned char used[SPMVD_MAX_CANDIDATES] = {0};

  if (o == NULL)
    return;  /* order kept: slower, still right */
  o->n = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (used[i])
      continue;
    struct spmv_config key = spmv_config_layout_key(&c->cfg[i]);
    for (size_t j = i; j < c->n; j++) {
      struct spmv_config kj = spmv_config_layout_key(&c->cfg[j]);
      if (!used[j] && spmv_config_equal(&kj, &key)) {
        o->cfg[o->n++] = c->cfg[j];
        used[j] = 1;
      }
    }
  }
  *c = *o;
  free(o);
}

/* Converts the candidates' layouts ahead of their loads. */
void eval_store_prefetch(struct eval_store *s, const struct spmvd_candidates *c)
{
  if (s->mode != M_CPU && s->A != NULL)
    pool_start(s, c->cfg, c->n);
}

/* Opens a store. */
int eval_store_open(const char *mode, struct eval_store **out,
                    struct spmv_error *err)
{
  struct eval_store *s;
  int rc;

  *out = NULL;
  s = calloc(1, sizeof *s);
  if (s == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  s->cur = -1;
  if (strcmp(mode, "cpu") == 0 || strcmp(mode, "ref") == 0) {
    s->mode = mode[0] == 'c' ? M_CPU : M_REF;
    s->bops = &spmvd_backend_cpu;
  } else if (strcmp(mode, "cuda") == 0) {
#ifdef HAVE_CUDA
    s->mode = M_CUDA;
    s->bops = &spmvd_backend_cuda;
#else
    free(s);
    return spmv_error_set(err, SPMV_ENODEV, "built without CUDA");
#endif
  } else {
    free(s);
    return spmv_error_set(err, SPMV_EINVAL,
                          "unknown mode '%s': expected cpu, cuda or ref", mode);
  }
  if ((rc = s->bops->open(0, &s->be, err)) < 0 ||
      (rc = s->bops->info(s->be, &s->info)) < 0) {
    if (rc < 0 && s->be == NULL) {
      free(s);
      return rc;
    }
    goto fail;
  }
  if (s->mode == M_REF) {
    /* A small GPU as the models see it, its products the references. */
    struct spmvd_device_info *in = &s->info;
    char cpu[81];
    snprintf(cpu, sizeof cpu, "%.80s", in->name);
    snprintf(in->backend, sizeof in->backend, "cuda");
    snprintf(in->name, sizeof in->name, "reference layouts as a 4-SM GPU (%s)", cpu);
    in->sms = 4;
    in->warp_size = 32;
    in->max_threads_per_sm = 2048;
    in->max_blocks_per_sm = 32;
    in->max_threads_per_block = 1024;
    in->cc_major = 9;
  }
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    if ((rc = spmv_cuda_error(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking),
                              "cudaStreamCreate", err)) < 0 ||
        (rc = spmv_cusparse_handle_new(s->stream, &s->cs, err)) < 0 ||
        (rc = spmv_dev_timer_new(&s->timer, err)) < 0)
      goto fail;
    if ((s->graph = spmv_dev_graph_new()) == NULL) {
      rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory");
      goto fail;
    }
  }
#endif
  *out = s;
  return 0;
fail:
  eval_store_close(s);
  return rc;
}

/* Closes a store. */
void eval_store_close(struct eval_store *s)
{
  if (s == NULL)
    return;
  pool_stop(&s->pool);
  evict_all(s);
#ifdef HAVE_CUDA
  spmv_dev_free(s->pad);
#endif
  if (s->bm != NULL)
    s->bops->unload(s->be, s->bm);
  free_vectors(s);
#ifdef HAVE_CUDA
  if (s->mode == M_CUDA) {
    spmv_cusparse_handle_free(s->cs);
    spmv_dev_timer_free(s->timer);
    spmv_dev_graph_free(s->graph);
    if (s->stream)
      cudaStreamDestroy(s->stream);
  }
#endif
  if (s->be != NULL)
    s->bops->close(s->be);
  free(s);
}

/* The device description. */
const struct spmvd_device_info *eval_store_info(const struct eval_store *s)
{
  return &s->info;
}

/* ---- race and calibration callbacks ---- */

static int race_load(void *ctx, const struct spmv_config *cfg,
                     struct spmv_error *err)
{
  struct eval_store *s = ctx;

  if (s->mode == M_CPU) {
    if (s->bm != NULL)
      s->bops->unload(s->be, s->bm);
    s->bm = NULL;
    return s->bops->load(s->be, s->A, s->dt, cfg, &s->bm, err);
  }
  int rc = resident_load(s, cfg, err);
#ifdef HAVE_CUDA
  /* The worker's race uploads each candidate, which leaves a matrix that
   * meets the L2 rule (spmv_l2_warm_mode) in the L2; a layout already
   * resident here may have been displaced since, and the race's runs
   * (no warm-ups after its first) would then time it cold.  Take it in
   * as the upload would. */
  if (rc == 0 && s->mode == M_CUDA)
    rc = spmv_dev_matrix_warm_l2(s->res[s->cur].h, s->stream, err);
#endif
  return rc;
}

static int race_time(void *ctx, int warmup, int reps, double *us,
                     struct spmv_error *err)
{
  struct eval_store *s = ctx;

  if (s->mode == M_CPU) {
    if (s->bm == NULL)
      return spmv_error_set(err, SPMV_EINVAL, "eval store: nothing loaded");
    return s->bops->time(s->be, s->bm, warmup, reps, us, err);
  }
  if (s->cur < 0)
    return spmv_error_set(err, SPMV_EINVAL, "eval store: nothing loaded");
  return dev_time(s, s->res[s->cur].h, &s->cur_cfg, warmup, reps, us, err);
}

static void race_unload(void *ctx)
{
  struct eval_store *s = ctx;

  if (s->mode == M_CPU) {
    if (s->bm != NULL)
      s->bops->unload(s->be, s->bm);
    s->bm = NULL;
    return;
  }
  s->cur = -1;  /* stays resident for the next configuration of its key */
}

/* See eval_store.h. */
int eval_store_probe_pad(struct eval_store *s, size_t bytes,
                         struct spmv_error *err)
{
  if (s->mode != M_CUDA)
    return 0;
  evict_all(s);
#ifdef HAVE_CUDA
  spmv_dev_free(s->pad);
  s->pad = NULL;
  if (bytes > 0)
    return spmv_dev_alloc(&s->pad, bytes, "probe pad", err);
#else
  (void)bytes;
  (void)err;
#endif
  return 0;
}

/* The race callbacks over a store. */
const struct spmvd_race_ops eval_store_race_ops = {
  race_load, race_time, race_unload, NULL, NULL,
};

/* Remembers the calibration plan. */
void eval_store_calib_plan(struct eval_store *s,
                           const struct spmvd_calib_plan *plan)
{
  s->plan = plan;
  s->plan_matrix = -1;
}

/* Times calibration points through the backend, or not. */
void eval_store_calib_direct(struct eval_store *s, int on)
{
  s->calib_direct = on;
}

/* Times one calibration point. */
int eval_store_calib_time(void *ctx, const struct spmv_csr *A,
                          enum spmv_dtype dt, const struct spmv_config *cfg,
                          double *us, struct spmv_error *err)
{
  struct eval_store *s = ctx;
  const struct spmvd_calib_point *pt = NULL;
  int rc;

  if (s->mode == M_CPU || s->calib_direct) {
    struct spmvd_calib_backend cb = { s->bops, s->be, CALIB_WARMUP, CALIB_REPS };
    return spmvd_calib_backend_time(&cb, A, dt, cfg, us, err);
  }
  /* The plan tells when the matrix changes (a new one may reuse the old
   * one's address) and which configurations follow on it.  The run hands
   * over its point's own configuration; a count of calls would fall
   * behind at the points it skips (spmvd_calib_applies). */
  pt = spmvd_calib_point_of(s->plan, cfg);
  if (pt == NULL || pt->matrix != s->plan_matrix || A != s->A || dt != s->dt) {
    if ((rc = eval_store_matrix(s, A, dt, err)) < 0)
      return rc;
    if (pt != NULL) {
      struct spmvd_candidates *c = malloc(sizeof *c);
      s->plan_matrix = pt->matrix;
      if (c != NULL) {
        c->n = 0;
        /* Not the points the run skips: ell past fill 50 would convert
         * layouts of gigabytes that nobody times. */
        for (size_t j = (size_t)(pt - s->plan->pt);
             j < s->plan->n && s->plan->pt[j].matrix == pt->matrix &&
             c->n < SPMVD_MAX_CANDIDATES; j++)
          if (spmvd_calib_point_applies(&s->plan->pt[j]))
            c->cfg[c->n++] = s->plan->pt[j].cfg;
        eval_store_prefetch(s, c);
        free(c);
      }
    } else {
      s->plan_matrix = -1;
    }
  }
  if ((rc = resident_load(s, cfg, err)) >= 0) {
    rc = dev_time(s, s->res[s->cur].h, cfg, CALIB_WARMUP, CALIB_REPS, us, err);
    s->cur = -1;
  }
  /* The run frees A after its matrix's last timed point, before the next
   * call, or at once after a sticky error: no conversion of the prefetch
   * may still be reading it then. */
  if (rc == SPMV_EGPU_STICKY)
    pool_stop(&s->pool);
  else if (pt != NULL) {
    size_t j = (size_t)(pt - s->plan->pt) + 1;
    while (j < s->plan->n && s->plan->pt[j].matrix == pt->matrix &&
           !spmvd_calib_point_applies(&s->plan->pt[j]))
      j++;
    if (j == s->plan->n || s->plan->pt[j].matrix != pt->matrix)
      pool_stop(&s->pool);
  }
  return rc;
}

/* Times A as the worker does. */
int eval_store_worker_time(struct eval_store *s, const struct spmv_csr *A,
                           enum spmv_dtype dt, const struct spmv_config *cfg,
                           int rounds, double *each, double *us,
                           struct spmv_error *err)
{
  struct spmvd_calib_backend cb = { s->bops, s->be, CALIB_WARMUP, CALIB_REPS };

  return spmvd_calib_backend_time_rounds(&cb, A, dt, cfg, rounds, each, us,
                                         err);
}

/* ---- the cache hit ---- */

/* The scaled residual of y (typed) against the double reference. */
static double residual(const struct spmv_csr *A, const void *xt, const void *yt,
                       enum spmv_dtype dt, int *ok)
{
  int64_t rows = A->rows, cols = A->cols, maxlen = 1;
  double *x = malloc(sizeof *x * (size_t)(cols + 1));
  double *yr = malloc(sizeof *yr * (size_t)(rows + 1));
  double an = 0, xn = 0, yn = 0, d = 0, r;

  if (x == NULL || yr == NULL) {
    free(x);
    free(yr);
    *ok = 0;
    return NAN;
  }
  for (int64_t j = 0; j < cols; j++) {
    x[j] = dt == SPMV_F32 ? ((const float *)xt)[j] : ((const double *)xt)[j];
    xn = fmax(xn, fabs(x[j]));
  }
  spmv_csr_ref(A, 1.0, x, 0.0, yr);
  for (int64_t i = 0; i < rows; i++) {
    double s = 0, y = dt == SPMV_F32 ? ((const float *)yt)[i] : ((const double *)yt)[i];
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += fabs(A->val[k]);
    an = fmax(an, s);
    if (A->row_ptr[i + 1] - A->row_ptr[i] > maxlen)
      maxlen = A->row_ptr[i + 1] - A->row_ptr[i];
    yn = fmax(yn, fabs(yr[i]));
    double e = fabs(y - yr[i]);
    d = (e > d || isnan(e)) ? e : d;
  }
  r = an * xn + yn > 0 ? d / (an * xn + yn) : d;
  *ok = !isnan(r) && r <= 16.0 * (dt == SPMV_F32 ? 1.1920929e-7 : 2.220446049250313e-16) *
                           (double)maxlen;
  free(x);
  free(yr);
  return r;
}

/* Measures a cache hit of cfg on the current matrix. */
int eval_store_cache_hit(struct eval_store *s, const struct spmv_config *cfg,
                         struct eval_cache_hit *out, struct spmv_error *err)
{
  const struct spmv_csr *A = s->A;
  size_t es = vsize(s->dt);
  struct spmvd_bmatrix *bm = NULL;
  void *x = NULL, *y = NULL;
  double t0;
  int rc;

  memset(out, 0, sizeof *out);
  if (A == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "eval store: no matrix");
  pool_stop(&s->pool);
  evict_all(s);
  if (s->bm != NULL)
    s->bops->unload(s->be, s->bm);
  s->bm = NULL;
  x = malloc(es * (size_t)(A->cols + 1));
  y = malloc(es * (size_t)(A->rows + 1));
  if (x == NULL || y == NULL) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory for the vectors");
    goto out;
  }
  random_typed(x, A->cols, s->dt, 77);
  memset(y, 0xff, es * (size_t)A->rows);  /* NaN: every element must be written */
  t0 = bench_now_us();
  if ((rc = s->bops->load(s->be, A, s->dt, cfg, &bm, err)) < 0)
    goto out;
  out->load_us = bench_now_us() - t0;
  if ((rc = s->bops->time(s->be, bm, 0, 1, &out->first_kernel_us, err)) < 0 ||
      (rc = s->bops->time(s->be, bm, 0, 1, &out->next_kernel_us[0], err)) < 0 ||
      (rc = s->bops->time(s->be, bm, 0, 1, &out->next_kernel_us[1], err)) < 0)
    goto out;
  t0 = bench_now_us();
  if ((rc = s->bops->multiply(s->be, bm, 1.0, x, 0.0, y, 1, err)) < 0)
    goto out;
  out->first_product_us = bench_now_us() - t0;
  out->resid = residual(A, x, y, s->dt, &out->verified);
  t0 = bench_now_us();
  if ((rc = s->bops->multiply(s->be, bm, 1.0, x, 0.0, y, 1, err)) < 0)
    goto out;
  out->product_us = bench_now_us() - t0;
  rc = s->bops->time(s->be, bm, 2, 10, &out->kernel_us, err);
out:
  if (bm != NULL)
    s->bops->unload(s->be, bm);
  free(x);
  free(y);
  return rc;
}
