/* bench_spmv.c: every GPU format and configuration against cuSPARSE on the benchmark suite. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"
#include "spmv_csr.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "spmvd_backend.h"
#include "bench_clock.h"
#include "bound_gpu.h"
#include "suite.h"

/*
 * For each matrix of the suite (suite.h) and each value type, in one
 * process: every configuration of gpu_configs() and the cuSPARSE
 * baselines, CSR ALG1 (preprocessed), ALG2, sliced ELL and BSR (where the
 * matrix has blocks that fit, spmv_bsr_dim), each timed with CUDA events
 * after 3 warm-up runs as the median of -r runs (50 by default), with L2
 * flushed (a memset of twice its size) before every timed run.  Each
 * configuration's result is checked against a plain double CSR product
 * (gpu_reference) within gpu_row_tol, a baseline's on every row before it
 * is timed too; a wrong one is marked and never "best".
 * Layouts are converted on host threads ahead of the GPU, a few at a time.
 * Bytes are the CSR minimum: values + column indices + row pointers + x
 * once + y once.  The device's copy bandwidth (device-to-device memcpy,
 * bytes read + written) is measured in the same process.
 * Writes DIR/bench_full.tsv (every configuration) and DIR/bench_summary.txt
 * (one line per matrix and type, geomeans at the top).
 * With -B, each matrix and type also times the two bound kernels of
 * bound_gpu.cu (the entries' values and columns streamed, then with x
 * gathered per entry), timed and checked as the configurations are: rows
 * "bound:stream" and "bound:gather" of the TSV, whose %copy is that of
 * the CSR minimum bytes at the kernel's time: what gathering x once per
 * entry in CSR order allows before any row work.
 */

#define MAX_CONFIGS 256
#define AHEAD 4

/* A layout shared by the configurations that differ only in launch shape. */
struct group {
  struct spmv_config key;
  int var[MAX_CONFIGS];
  int nvar;
  struct spmv_layout *L;
  int rc, done;
  char msg[256];
};

/* Host threads converting groups [0, ngroups) ahead of the consumer. */
struct pool {
  const struct spmv_csr *A;
  enum spmv_dtype dt;
  struct spmv_limits lim;
  struct group *g;
  int ngroups, next, consumed;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

static struct spmv_config configs[MAX_CONFIGS];
static int nconfigs;

static int make_groups(struct group *g)
{
  int n = 0;
  for (int c = 0; c < nconfigs; c++) {
    struct spmv_config k = spmv_config_layout_key(&configs[c]);
    int i;
    for (i = 0; i < n; i++)
      if (memcmp(&g[i].key, &k, sizeof k) == 0)
        break;
    if (i == n) {
      memset(&g[n], 0, sizeof g[n]);
      g[n++].key = k;
    }
    g[i].var[g[i].nvar++] = c;
  }
  return n;
}

static void *pool_main(void *arg)
{
  struct pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (p->next < p->ngroups && p->next >= p->consumed + AHEAD)
      pthread_cond_wait(&p->cv, &p->mu);
    if (p->next >= p->ngroups) {
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    int k = p->next++;
    pthread_mutex_unlock(&p->mu);
    struct spmv_error err = {0};
    struct spmv_layout *L = NULL;
    int rc = spmv_layout_new(p->A, p->dt, &p->g[k].key, &p->lim, &L, &err);
    pthread_mutex_lock(&p->mu);
    p->g[k].L = L;
    p->g[k].rc = rc;
    snprintf(p->g[k].msg, sizeof p->g[k].msg, "%s", err.msg);
    p->g[k].done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
}

/* Waits for group k's layout and takes it. */
static struct group *pool_take(struct pool *p, int k)
{
  pthread_mutex_lock(&p->mu);
  while (!p->g[k].done)
    pthread_cond_wait(&p->cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
  return &p->g[k];
}

static void pool_consumed(struct pool *p, int k)
{
  pthread_mutex_lock(&p->mu);
  p->consumed = k + 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

#define CK(call)                                                             \
  do {                                                                       \
    cudaError_t e_ = (call);                                                 \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,          \
              cudaGetErrorString(e_));                                       \
      exit(2);                                                               \
    }                                                                        \
  } while (0)

static cudaStream_t stream;
static cudaEvent_t *ev;
static void *flush_buf;
static size_t flush_bytes;
static int reps = 50;
static int sms;
static int bounds;  /* -B */

static int cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* One launch of what a timing measures, on the stream; returns 0 or a
 * negative SPMV_E* code. */
typedef int (*launch_fn)(const void *ctx, struct spmv_error *err);

/*
 * The median in microseconds of n runs of launch(ctx) (n <= reps), each
 * timed with CUDA events after the L2 is flushed (a memset of twice its
 * size); what names the runs in an error.
 */
static int time_flushed(launch_fn launch, const void *ctx, int n,
                        const char *what, double *us, struct spmv_error *err)
{
  float t[1024];
  int rc;
  for (int r = 0; r < n; r++) {
    CK(cudaMemsetAsync(flush_buf, r & 0xff, flush_bytes, stream));
    CK(cudaEventRecord(ev[2 * r], stream));
    if ((rc = launch(ctx, err)) < 0)
      return rc;
    CK(cudaEventRecord(ev[2 * r + 1], stream));
  }
  cudaError_t e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess)
    return spmv_cuda_error(e, what, err);
  for (int r = 0; r < n; r++)
    CK(cudaEventElapsedTime(&t[r], ev[2 * r], ev[2 * r + 1]));
  qsort(t, (size_t)n, sizeof *t, cmp_float);
  *us = 1e3 * (n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]));
  return 0;
}

/* A product of a resident matrix, as time_flushed() launches it. */
struct product {
  const struct spmv_dev_matrix *m;
  const void *dx;
  void *dy;
};

static int launch_product(const void *ctx, struct spmv_error *err)
{
  const struct product *p = ctx;
  return spmv_dev_spmv(p->m, 1.0, p->dx, 0.0, p->dy, stream, err);
}

/*
 * Median time in microseconds of m's product, L2 flushed before each run.
 * A first run sizes the rest: products slower than a few milliseconds get
 * fewer runs (at least 3), and one over 20 ms and ten times the best so
 * far is not run again, so that hopeless configurations (one thread on a
 * row of 10^6 entries) do not eat the session.
 */
static int time_product(const struct spmv_dev_matrix *m, const void *dx,
                        void *dy, double best_us, double *us, int *runs,
                        struct spmv_error *err)
{
  struct product p = { m, dx, dy };
  float first;
  int rc, n;
  CK(cudaEventRecord(ev[0], stream));
  if ((rc = launch_product(&p, err)) < 0)
    return rc;
  CK(cudaEventRecord(ev[1], stream));
  cudaError_t e = cudaEventSynchronize(ev[1]);
  if (e != cudaSuccess)
    return spmv_cuda_error(e, "first product", err);
  CK(cudaEventElapsedTime(&first, ev[0], ev[1]));
  if (first > 20.0f && 1e3 * first > 10 * best_us) {
    *us = 1e3 * first;  /* hopeless: one run says enough */
    *runs = 1;
    return 0;
  }
  n = first > 0 ? (int)(250.0f / first) : reps;
  n = n < 3 ? 3 : n; /* at least 3 timed runs, but never more than ev holds */
  n = n > reps ? reps : n;
  for (int i = 0; first < 5.0f && i < 2; i++)
    if ((rc = launch_product(&p, err)) < 0)
      return rc;
  if ((rc = time_flushed(launch_product, &p, n, "timed products", us, err)) < 0)
    return rc;
  *runs = n;
  return 0;
}

/* Device copy bandwidth: bytes read + written per second, GB/s. */
static double copy_bandwidth(void)
{
  size_t n = (size_t)2 << 30;
  void *a, *b;
  float t[21];
  cudaEvent_t e0, e1;
  CK(cudaMalloc(&a, n));
  CK(cudaMalloc(&b, n));
  CK(cudaMemset(a, 1, n));
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 21; i++) {
    CK(cudaEventRecord(e0, stream));
    CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, stream));
    CK(cudaEventRecord(e1, stream));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&t[i], e0, e1));
  }
  qsort(t + 1, 20, sizeof *t, cmp_float);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * (double)n / (0.5 * (t[10] + t[11]) * 1e-3) / 1e9;
}

/*
 * Checks y (typed) against the double reference: every row when stride is
 * 1, else the rows i = phase (mod stride).  Returns a bad row or -1.
 */
static int64_t check_result(const struct spmv_csr *A, const void *y,
                            enum spmv_dtype dt, const double *ref,
                            const double *absum, int64_t stride, int64_t phase)
{
  int64_t first;

  gpu_check_rows(A, dt, y, ref, absum, stride, phase, &first);
  return first;
}

/* A bound kernel's launch (bound_gpu.cu), as time_flushed() makes it. */
struct bound {
  int gather, f64, blocks;
  const int *dcol;
  const void *dval, *dx;
  long long nnz;
  double *dpart;
};

static int launch_bound(const void *ctx, struct spmv_error *err)
{
  const struct bound *b = ctx;
  return spmv_cuda_error(bench_bound_launch(b->gather, b->f64, b->dcol, b->dval,
                                            b->dx, b->nnz, b->blocks, b->dpart,
                                            stream),
                         "bound kernel", err);
}

/*
 * Times bench_spmv's bound kernel (gather 0: stream, 1: gather) over A's
 * entries as time_product() times a product (3 warm-up runs, L2 flushed
 * before each of reps runs, median), checks the sum of its block sums
 * against the host's in double, and writes its TSV row.
 */
static void time_bound(const char *name, const struct spmv_csr *A,
                       enum spmv_dtype dt, int gather, const int *dcol,
                       const void *dval, const void *dx, const double *x,
                       double bytes, double copy_bw, FILE *tsv)
{
  int blocks = bench_bound_blocks(sms), f64 = dt == SPMV_F64, n = reps;
  double *dpart, *part = malloc((size_t)blocks * sizeof *part), got = 0,
                 want = 0, mag = 0, us;
  const char *status = "bound";
  struct spmv_error err = {0};

  if (part == NULL || A->nnz == 0) {
    free(part);
    return;
  }
  CK(cudaMalloc((void **)&dpart, (size_t)blocks * sizeof *dpart));
  struct bound bk = { gather, f64, blocks, dcol, dval, dx, (long long)A->nnz, dpart };
  int rc = 0;
  for (int i = 0; rc == 0 && i < 3; i++)
    rc = launch_bound(&bk, &err);
  if (rc == 0)
    rc = time_flushed(launch_bound, &bk, n, "timed bound kernels", &us, &err);
  if (rc < 0) {
    fprintf(stderr, "%s %s bound: %s\n", name, spmv_dtype_name(dt), err.msg);
    exit(2);
  }
  CK(cudaMemcpy(part, dpart, (size_t)blocks * sizeof *part,
                cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; b++)
    got += part[b];
  /* The device rounds each entry's product to dt; a thread sums its
   * share in dt too: bound by dt's epsilon times the entries' magnitude
   * and the longest chain (nnz / threads). */
  for (int64_t k = 0; k < A->nnz; k++) {
    double v = f64 ? A->val[k] : (double)(float)A->val[k];
    double xv = gather ? (f64 ? x[A->col_idx[k]] : (double)(float)x[A->col_idx[k]])
                       : (double)(A->col_idx[k] & 1023);
    want += v * xv;
    mag += fabs(v * xv);
  }
  double eps = f64 ? 1.11e-16 : 5.96e-8;
  double chain = (double)A->nnz / ((double)blocks * 256) + 64;
  if (!(fabs(got - want) <= 4 * eps * chain * mag + 1e-300))
    status = "WRONG";
  fprintf(tsv, "%s\t%s\tbound:%s\t%s\t%.2f\t%.1f\t%.1f\t%.1f\t%d\t%s\n", name,
          spmv_dtype_name(dt), gather ? "gather" : "stream", status, us,
          2.0 * (double)A->nnz / us / 1e3, bytes / us / 1e3,
          100.0 * bytes / us / 1e3 / copy_bw, n,
          gather ? "values, columns and x[column] per entry; no rows"
                 : "values and columns per entry; no x, no rows");
  printf("  %s %s bound:%s %.1f us, %.1f %% of copy on the CSR minimum bytes%s\n",
         name, spmv_dtype_name(dt), gather ? "gather" : "stream", us,
         100.0 * bytes / us / 1e3 / copy_bw,
         status[0] == 'W' ? " (WRONG sum)" : "");
  cudaFree(dpart);
  free(part);
}

struct outcome {
  double best_us;   /* ours (no cusparse) */
  double cus_us[SPMV_CUSPARSE_NALGS + 1];  /* cuSPARSE's by algorithm (1 .. 4),
                                              INFINITY where none came */
  int best_cfg;
};

/* The best cuSPARSE baseline's time (INFINITY when none came). */
static double best_vendor(const struct outcome *o)
{
  double t = INFINITY;

  for (int a = 1; a <= SPMV_CUSPARSE_NALGS; a++)
    t = fmin(t, o->cus_us[a]);
  return t;
}

/*
 * A baseline's product checked on every row against the double reference
 * before it is timed, y poisoned with NaN first (every row must be
 * written): the first wrong row in *bad, or -1.  Returns 0 or a negative
 * SPMV_E* code.
 */
static int verify_product(const struct spmv_dev_matrix *d, const struct spmv_csr *A,
                          enum spmv_dtype dt, const void *dx, void *dy, void *yt,
                          const double *ref, const double *absum, int64_t *bad,
                          struct spmv_error *err)
{
  size_t yb = (size_t)A->rows * spmv_dtype_size(dt);
  int rc;

  CK(cudaMemsetAsync(dy, 0xff, yb, stream));
  if ((rc = spmv_dev_spmv(d, 1.0, dx, 0.0, dy, stream, err)) < 0)
    return rc;
  cudaError_t e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess)
    return spmv_cuda_error(e, "checked product", err);
  CK(cudaMemcpy(yt, dy, yb, cudaMemcpyDeviceToHost));
  *bad = check_result(A, yt, dt, ref, absum, 1, 0);
  return 0;
}

struct sums {
  double log_ours[3], log_all[3];  /* per dtype index 1, 2 */
  int n[3];
  double worst[3];
  char worst_name[3][96];
};

/* Runs every configuration of A for dtype dt; fills o and writes TSV lines. */
static void bench_one(const char *name, const struct spmv_csr *A,
                      enum spmv_dtype dt, struct spmv_cusparse_handle *h,
                      FILE *tsv, double copy_bw, struct outcome *o)
{
  static struct group groups[MAX_CONFIGS];
  size_t es = spmv_dtype_size(dt);
  size_t nr = (size_t)(A->rows ? A->rows : 1), nc = (size_t)(A->cols ? A->cols : 1);
  double bytes = (double)A->nnz * (double)(es + 4) + (double)(A->rows + 1) * 4 +
                 (double)A->cols * (double)es + (double)A->rows * (double)es;
  double *x = malloc(nc * 8), *ref = malloc(nr * 8), *absum = calloc(nr, 8);
  void *xt = malloc(nc * es), *yt = NULL, *dx, *dy;
  struct pool p;
  pthread_t tid[8];
  int nt = 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);

  CK(cudaMallocHost(&yt, nr * es));
  if (!x || !ref || !absum || !xt) {
    fprintf(stderr, "out of host memory for %s\n", name);
    exit(2);
  }
  gpu_random_vector(x, A->cols, 99);
  for (int64_t i = 0; i < A->cols; i++) {
    if (dt == SPMV_F32)
      ((float *)xt)[i] = (float)x[i];
    else
      ((double *)xt)[i] = x[i];
  }
  gpu_reference(A, x, ref, absum);
  CK(cudaMalloc(&dx, nc * es));
  CK(cudaMalloc(&dy, nr * es));
  CK(cudaMemcpy(dx, xt, (size_t)A->cols * es, cudaMemcpyHostToDevice));

  memset(&p, 0, sizeof p);
  p.A = A;
  p.dt = dt;
  p.lim.max_bytes = (size_t)24 << 30;
  p.lim.max_diags = 4096;
  p.lim.max_fill = 20;
  p.g = groups;
  p.ngroups = make_groups(groups);
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  nt = cpus > 2 ? (int)(cpus - 1 < 8 ? cpus - 1 : 8) : 1;
  for (int i = 0; i < nt; i++)
    pthread_create(&tid[i], NULL, pool_main, &p);

  o->best_us = INFINITY;
  for (int a = 0; a <= SPMV_CUSPARSE_NALGS; a++)
    o->cus_us[a] = INFINITY;
  o->best_cfg = -1;
  for (int k = 0; k < p.ngroups; k++) {
    struct group *g = pool_take(&p, k);
    struct spmv_dev_matrix *d = NULL;
    struct spmv_error err = {0};
    int rc = g->rc;
    if (rc == 0) {
      rc = spmv_dev_matrix_new(g->L, h, &d, &err);
      if (rc < 0)
        snprintf(g->msg, sizeof g->msg, "%s", err.msg);
    }
    g->L = spmv_layout_free(g->L);
    pool_consumed(&p, k);
    for (int v = 0; v < g->nvar; v++) {
      const struct spmv_config *c = &configs[g->var[v]];
      char txt[96];
      double us = NAN;
      const char *status = "ok";
      spmv_config_format(c, txt, sizeof txt);
      if (rc < 0) {
        fprintf(tsv, "%s\t%s\t%s\tskipped\t\t\t\t\t\t%s\n", name,
                spmv_dtype_name(dt), txt, g->msg);
        continue;
      }
      d->L.cfg = *c;
      int runs = 0, vendor = c->format == SPMV_FMT_CUSPARSE;
      int64_t bad = -1;
      int r = vendor ? verify_product(d, A, dt, dx, dy, yt, ref, absum, &bad, &err) : 0;
      if (r == 0 && bad < 0)
        r = time_product(d, dx, dy, fmin(o->best_us, best_vendor(o)), &us, &runs, &err);
      if (r == SPMV_EGPU_STICKY) {
        fprintf(stderr, "%s %s %s: %s\n", name, spmv_dtype_name(dt), txt, err.msg);
        exit(3);
      }
      if (r < 0) {
        fprintf(tsv, "%s\t%s\t%s\terror\t\t\t\t\t\t%s\n", name, spmv_dtype_name(dt),
                txt, err.msg);
        continue;
      }
      /* Ours are checked after their runs: the first configuration of a
         layout on every row, the others on a rotating seventh of the rows
         (a baseline that failed its check was not timed). */
      if (bad < 0) {
        CK(cudaMemcpy(yt, dy, (size_t)A->rows * es, cudaMemcpyDeviceToHost));
        bad = check_result(A, yt, dt, ref, absum, v == 0 || vendor ? 1 : 7, v);
      }
      if (bad >= 0)
        status = "WRONG";
      fprintf(tsv, "%s\t%s\t%s\t%s\t%.2f\t%.1f\t%.1f\t%.1f\t%d\t%lld\n", name,
              spmv_dtype_name(dt), txt, status, us, 2.0 * (double)A->nnz / us / 1e3,
              bytes / us / 1e3, 100.0 * bytes / us / 1e3 / copy_bw, runs, (long long)bad);
      if (bad >= 0)
        continue;
      if (vendor) {
        if (c->param >= 1 && c->param <= SPMV_CUSPARSE_NALGS)
          o->cus_us[c->param] = us;
      } else if (us < o->best_us) {
        o->best_us = us;
        o->best_cfg = g->var[v];
      }
    }
    spmv_dev_matrix_free(d);
  }
  fflush(tsv);
  for (int i = 0; i < nt; i++)
    pthread_join(tid[i], NULL);
  pthread_mutex_destroy(&p.mu);
  pthread_cond_destroy(&p.cv);
  if (bounds && A->nnz > 0) {
    int *dcol;
    void *dval, *hval = malloc((size_t)A->nnz * es);
    if (hval == NULL) {
      fprintf(stderr, "out of host memory for %s\n", name);
      exit(2);
    }
    for (int64_t k = 0; k < A->nnz; k++) {
      if (dt == SPMV_F32)
        ((float *)hval)[k] = (float)A->val[k];
      else
        ((double *)hval)[k] = A->val[k];
    }
    CK(cudaMalloc((void **)&dcol, (size_t)A->nnz * sizeof *dcol));
    CK(cudaMalloc(&dval, (size_t)A->nnz * es));
    CK(cudaMemcpy(dcol, A->col_idx, (size_t)A->nnz * sizeof *dcol,
                  cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dval, hval, (size_t)A->nnz * es, cudaMemcpyHostToDevice));
    for (int gather = 0; gather < 2; gather++)
      time_bound(name, A, dt, gather, dcol, dval, dx, x, bytes, copy_bw, tsv);
    cudaFree(dcol);
    cudaFree(dval);
    free(hval);
  }
  cudaFree(dx);
  cudaFree(dy);
  free(x); free(ref); free(absum); free(xt);
  cudaFreeHost(yt);
}

/* Keeps the configurations of the named formats and cusparse; returns 0,
 * or 1 after a message naming an unknown format. */
static int keep_formats(const char *list)
{
  int keep[SPMV_FMT_COUNT] = { 0 }, n = 0;
  char *copy = strdup(list);
  enum spmv_format f;

  keep[SPMV_FMT_CUSPARSE] = 1;
  for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
    if (spmv_format_parse(tok, &f) != 0) {
      fprintf(stderr, "bench_spmv: unknown format \"%s\"\n", tok);
      free(copy);
      return 1;
    }
    keep[f] = 1;
  }
  free(copy);
  for (int c = 0; c < nconfigs; c++)
    if (keep[configs[c].format])
      configs[n++] = configs[c];
  nconfigs = n;
  return 0;
}

static void usage(void)
{
  fprintf(stderr,
          "usage: bench_spmv [-s large,paper,real] [-m NAME] [-t f32|f64] [-r REPS] [-B]\n"
          "                  [-T SECONDS] [-o DIR] [-b 64,128,256,512] [-f FORMATS]\n"
          "  -s  suites to run (default large,paper,real)   -m  only matrices whose name contains NAME\n"
          "  -t  one value type                            -r  timed runs per configuration (50)\n"
          "  -T  start no new matrix after SECONDS          -o  output folder (.)\n"
          "  -b  block sizes to try (default all four)\n"
          "  -f  only these formats (comma-separated names; cusparse, the baseline, always runs)\n"
          "  -B  also time the bound kernels (entries streamed; x gathered per entry)\n");
}

int main(int argc, char **argv)
{
  const char *outdir = ".", *only = NULL, *formats = NULL;
  int suites = BENCH_SUITE_LARGE | BENCH_SUITE_PAPER | BENCH_SUITE_REAL, dts = 3, opt;
  unsigned bs_mask = 0;
  double budget = 0, t_start = bench_now_s();

  while ((opt = getopt(argc, argv, "s:m:t:r:T:o:b:f:Bh")) != -1) {
    switch (opt) {
    case 's':
      suites = (strstr(optarg, "large") ? BENCH_SUITE_LARGE : 0) |
               (strstr(optarg, "paper") ? BENCH_SUITE_PAPER : 0) |
               (strstr(optarg, "real") ? BENCH_SUITE_REAL : 0);
      break;
    case 'm': only = optarg; break;
    case 't': dts = strcmp(optarg, "f32") == 0 ? 1 : 2; break;
    case 'r': reps = atoi(optarg); break;
    case 'T': budget = atof(optarg); break;
    case 'o': outdir = optarg; break;
    case 'f': formats = optarg; break;
    case 'B': bounds = 1; break;
    case 'b':
      bs_mask = 0;
      for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ","))
        for (int k = 0; k < 4; k++)
          if (atoi(tok) == 64 << k)
            bs_mask |= 1u << k;
      break;
    default: usage(); return opt == 'h' ? 0 : 1;
    }
  }
  if (reps < 1 || reps > 500 || suites == 0) {
    usage();
    return 1;
  }
  if (!gpu_present()) {
    fprintf(stderr, "bench_spmv: no CUDA device\n");
    return 77;
  }
  nconfigs = gpu_configs(configs, MAX_CONFIGS, bs_mask);
  if (formats != NULL && keep_formats(formats) != 0)
    return 1;

  struct cudaDeviceProp prop;
  int drv = 0, rt = 0;
  char csv[32], path[4096];
  CK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  CK(cudaStreamCreate(&stream));
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  spmv_cusparse_version(csv, sizeof csv);
  ev = malloc(sizeof *ev * 2 * (size_t)reps);
  for (int i = 0; i < 2 * reps; i++)
    CK(cudaEventCreate(&ev[i]));
  flush_bytes = 2 * (size_t)prop.l2CacheSize;
  CK(cudaMalloc(&flush_buf, flush_bytes));
  struct spmv_cusparse_handle *h;
  struct spmv_error err;
  if (spmv_cusparse_handle_new(stream, &h, &err) < 0) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  double copy_bw = copy_bandwidth();

  snprintf(path, sizeof path, "%s/bench_full.tsv", outdir);
  FILE *tsv = fopen(path, "w");
  snprintf(path, sizeof path, "%s/bench_summary.txt", outdir);
  FILE *sum = fopen(path, "w");
  if (!tsv || !sum) {
    fprintf(stderr, "bench_spmv: cannot write in %s: %s\n", outdir, strerror(errno));
    return 1;
  }
  char date[64];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  char head[1024];
  snprintf(head, sizeof head,
           "device %s, %d SMs, L2 %d MB, %.0f GB; driver %d runtime %d cusparse %s; %s\n"
           "copy bandwidth %.0f GB/s (device-to-device memcpy, read + write); "
           "median of %d runs after 3 warm-up, L2 flushed before each; kernels v%d\n",
           prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
           (double)prop.totalGlobalMem / 1e9, drv, rt, csv, date, copy_bw, reps,
           SPMV_KERNEL_VERSION);
  fputs(head, stdout);
  fprintf(tsv, "# %s", head);
  fprintf(tsv, "matrix\tdtype\tconfig\tstatus\tus\tGFLOP/s\tGB/s\t%%copy\truns\tbad_row_or_note\n");

  /* The matrix list: generated suites, then every shared matrix. */
  struct bench_suite suite;
  if (bench_suite_init(&suite, suites, 0, only, NULL, &err) < 0) {
    fprintf(stderr, "bench_spmv: %s\n", err.msg);
    return 1;
  }

  static char lines[8192][512];
  int nlines = 0;
  struct sums s_large, s_paper, s_real;
  memset(&s_large, 0, sizeof s_large);
  memset(&s_paper, 0, sizeof s_paper);
  memset(&s_real, 0, sizeof s_real);
  double reg_pct[3] = {1e9, 1e9, 1e9}, skew_pct[3] = {1e9, 1e9, 1e9};
  for (int i = 0; i < 3; i++)
    s_large.worst[i] = s_paper.worst[i] = s_real.worst[i] = 1e9;

  for (size_t mi = 0; mi < suite.n; mi++) {
    const struct bench_suite_entry *s = &suite.e[mi];
    if (budget > 0 && bench_now_s() - t_start > budget) {
      fprintf(stderr, "time budget spent: stopping before %s\n", s->name);
      break;
    }
    double t0 = bench_now_s();
    struct spmv_csr *A = bench_suite_make(s, NULL, &err);
    if (!A) {
      fprintf(stderr, "%s: %s\n", s->name, err.msg);
      continue;
    }
    for (int dti = 2; dti >= 1; dti--) {
      if (!(dts & dti))
        continue;
      enum spmv_dtype dt = dti == 1 ? SPMV_F32 : SPMV_F64;
      struct outcome o;
      bench_one(s->name, A, dt, h, tsv, copy_bw, &o);
      size_t es = spmv_dtype_size(dt);
      double bytes = (double)A->nnz * (double)(es + 4) + (double)(A->rows + 1) * 4 +
                     (double)(A->cols + A->rows) * (double)es;
      double cus = best_vendor(&o), all = fmin(cus, o.best_us);
      double sp = cus / o.best_us, spa = cus / all;
      double pct = 100.0 * bytes / all / 1e3 / copy_bw;
      char cfg[96] = "-", vus[4][16];
      if (o.best_cfg >= 0)
        spmv_config_format(&configs[o.best_cfg], cfg, sizeof cfg);
      for (int a = 0; a < 4; a++)  /* "-": not offered (BSR), or wrong */
        snprintf(vus[a], sizeof vus[a], isfinite(o.cus_us[a + 1]) ? "%.1f" : "-",
                 o.cus_us[a + 1]);
      snprintf(lines[nlines], sizeof lines[0],
               "%-22s %9lld %10lld %s | %-30s %9.1f %7.1f %6.0f %5.1f | %9s %9s %9s %9s"
               " | %5.2f %5.2f\n",
               s->name, (long long)A->rows, (long long)A->nnz, spmv_dtype_name(dt),
               cfg, o.best_us, 2.0 * (double)A->nnz / all / 1e3, bytes / all / 1e3, pct,
               vus[0], vus[1], vus[2], vus[3], sp, spa);
      fputs(lines[nlines], stdout);
      fflush(stdout);
      if (nlines < 8191)
        nlines++;
      struct sums *S = s->set == BENCH_SUITE_LARGE   ? &s_large
                       : s->set == BENCH_SUITE_PAPER ? &s_paper
                                                     : &s_real;
      if (isfinite(sp) && isfinite(cus)) {
        S->log_ours[dti] += log(sp);
        S->log_all[dti] += log(spa);
        S->n[dti]++;
        if (sp < S->worst[dti]) {
          S->worst[dti] = sp;
          snprintf(S->worst_name[dti], sizeof S->worst_name[0], "%s", s->name);
        }
      }
      if (s->kind == BENCH_SUITE_REGULAR && pct < reg_pct[dti]) reg_pct[dti] = pct;
      if (s->kind == BENCH_SUITE_SKEWED && pct < skew_pct[dti]) skew_pct[dti] = pct;
    }
    fprintf(stderr, "%s: %.1f s\n", s->name, bench_now_s() - t0);
    spmv_csr_free(A);
  }

  /* The summary file: headline numbers first, then the table. */
  fputs(head, sum);
  fprintf(sum, "\nspeedup = best cuSPARSE (CSR ALG1 preprocessed, ALG2, sliced ELL, BSR where"
               " the matrix has blocks) / our best kernel;"
               " with cusparse as a candidate (\"all\") it cannot fall below 1\n");
  struct sums *all_s[3] = {&s_large, &s_paper, &s_real};
  const char *snames[3] = {"large suite", "paper matrices (real size)", "shared real matrices"};
  for (int k = 0; k < 3; k++)
    for (int dti = 2; dti >= 1; dti--)
      if (all_s[k]->n[dti] > 0)
        fprintf(sum, "%-27s %s: geomean speedup ours %.3fx, best-of-all %.3fx over %d matrices;"
                     " worst ours %.3fx (%s)\n",
                snames[k], dti == 1 ? "f32" : "f64", exp(all_s[k]->log_ours[dti] / all_s[k]->n[dti]),
                exp(all_s[k]->log_all[dti] / all_s[k]->n[dti]), all_s[k]->n[dti],
                all_s[k]->worst[dti], all_s[k]->worst_name[dti]);
  for (int dti = 2; dti >= 1; dti--) {
    if (reg_pct[dti] < 1e9)
      fprintf(sum, "lowest %%copy of the best on stencils/banded %s: %.1f %%\n",
              dti == 1 ? "f32" : "f64", reg_pct[dti]);
    if (skew_pct[dti] < 1e9)
      fprintf(sum, "lowest %%copy of the best on power-law/dc1-like %s: %.1f %%\n",
              dti == 1 ? "f32" : "f64", skew_pct[dti]);
  }
  fprintf(sum, "\n%-22s %9s %10s %s | %-30s %9s %7s %6s %5s | %9s %9s %9s %9s | %5s %5s\n",
          "matrix", "rows", "nnz", "dt ", "our best configuration", "us", "GFLOP/s", "GB/s",
          "%copy", "alg1+pp", "alg2", "sell", "bsr", "ours", "all");
  for (int i = 0; i < nlines; i++)
    fputs(lines[i], sum);
  fprintf(sum, "\nGFLOP/s, GB/s and %%copy are of the best of all candidates; times in"
               " microseconds (- where a baseline was refused or wrong); GB/s = CSR"
               " minimum bytes / time.\n");
  fclose(sum);
  fclose(tsv);
  snprintf(path, sizeof path, "%s/bench_summary.txt", outdir);
  FILE *f = fopen(path, "r");
  if (f) {
    char buf[512];
    int line = 0;
    while (fgets(buf, sizeof buf, f) && line++ < 16)
      fputs(buf, stdout);
    fclose(f);
  }
  spmv_cusparse_handle_free(h);
  bench_suite_fini(&suite);
  return 0;
}
