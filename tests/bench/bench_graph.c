/* bench_graph.c: a product launched kernel by kernel against the same product replayed as a CUDA graph. */
/*
 * The cuda worker replays each matrix's product as a CUDA graph
 * (spmv_dev_graph_spmv).  This measures what that changes, side by side
 * in one process: for each matrix of the suite (the paper's and the real
 * ones by default) and value type, each calibrated configuration (one
 * per format, as the predictor's table names them) is uploaded once and
 * timed as the worker times a product (spmv_dev_time: 2 warm-ups, then the
 * median of 10 runs queued behind the timer's hold, x random), launched
 * directly and through a graph, alternating, -r rounds of each (5 by
 * default); each side's median of its rounds is reported, and the host
 * time of the graph's capture (spmv_dev_graph_prepare on a new graph).  The graph's
 * and the direct product are each checked once against a double CSR
 * product (gpu_reference) before any timing; a wrong one is reported and
 * not timed.
 * Output: a TSV line per matrix, type and configuration on stdout; per
 * format and type, the geometric mean of direct/graph and the median
 * saving in us, over every matrix and over those whose direct product
 * takes under 30 us, on stderr.  A benchmark, never run by make check.
 *   usage: bench_graph [-s paper,real,large] [-m NAMES] [-t f32|f64] [-r ROUNDS]
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"
#include "spmv_csr.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "suite.h"

#define MAX_ROUNDS 21
#define WARMUP 2
#define REPS 10
#define SMALL_US 30.0

static const char *cfg_text[] = {
  "csr-scalar bs=256", "csr-vector bs=256 tpr=16",
  "csr-adaptive bs=256 maxtpr=0 base=0", "ell bs=256", "ellr-t bs=256 t=1",
  "coo bs=256", "hyb bs=256 k=0", "jad bs=256", "sell bs=256 c=32 sigma=256",
  "csr-merge bs=256", "cusparse alg=2", "csr-stream bs=128 k=4",
};
#define NCFG ((int)(sizeof cfg_text / sizeof cfg_text[0]))

/* Per format and type: the ratios direct/graph and savings (us). */
struct tally {
  double *ratio, *save;
  int n, nsmall, cap;
  double logsum, logsum_small;
};

static struct tally tallies[NCFG][2];

static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

static void die(const char *what, const char *msg)
{
  fprintf(stderr, "bench_graph: %s: %s\n", what, msg);
  exit(1);
}

static void tally_add(struct tally *t, double direct, double graph)
{
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->ratio = realloc(t->ratio, sizeof *t->ratio * (size_t)t->cap);
    t->save = realloc(t->save, sizeof *t->save * (size_t)t->cap);
    if (t->ratio == NULL || t->save == NULL)
      die("tally", "out of memory");
  }
  t->ratio[t->n] = direct / graph;
  t->save[t->n++] = direct - graph;
  t->logsum += log(direct / graph);
  if (direct < SMALL_US) {
    t->nsmall++;
    t->logsum_small += log(direct / graph);
  }
}

/* One product of d (through g when not NULL) checked against ref: 0, or
 * -1 when a row is out of tolerance (*bad the first); exits when the
 * product cannot run. */
static int verify(const struct spmv_csr *A, enum spmv_dtype dt,
                  struct spmv_dev_graph *g, const struct spmv_dev_matrix *d,
                  const void *dx, void *dy, void *hy, const double *ref,
                  const double *mag, cudaStream_t s, int64_t *bad)
{
  struct spmv_error e = {0};
  int64_t n = gpu_product_check(A, dt, g, d, dx, dy, hy, s, ref, mag, bad, &e);

  if (n < 0)
    die("product", e.msg);
  return n == 0 ? 0 : -1;
}

static void run_matrix(const char *name, const struct spmv_csr *A,
                       enum spmv_dtype dt, int rounds, cudaStream_t s,
                       struct spmv_dev_timer *tm,
                       struct spmv_cusparse_handle *cs)
{
  size_t es = spmv_dtype_size(dt);
  size_t nr = (size_t)(A->rows ? A->rows : 1), nc = (size_t)(A->cols ? A->cols : 1);
  double *x = malloc(nc * 8), *ref = malloc(nr * 8), *mag = malloc(nr * 8);
  void *hx = malloc(nc * es), *hy = malloc(nr * es), *dx = NULL, *dy = NULL;
  struct spmv_error e = {0};
  int ti = dt == SPMV_F32 ? 1 : 0;

  if (!x || !ref || !mag || !hx || !hy)
    die(name, "out of memory");
  gpu_random_vector(x, A->cols, 17);
  for (size_t j = 0; j < (size_t)A->cols; j++) {
    if (dt == SPMV_F32)
      ((float *)hx)[j] = (float)x[j];
    else
      ((double *)hx)[j] = x[j];
  }
  gpu_reference(A, x, ref, mag);
  if (spmv_dev_alloc(&dx, nc * es, "x", &e) < 0 || spmv_dev_alloc(&dy, nr * es, "y", &e) < 0 ||
      spmv_dev_upload(dx, hx, nc * es, "x", &e) < 0)
    die(name, e.msg);
  for (int c = 0; c < NCFG; c++) {
    struct spmv_limits lim = {(size_t)4 << 30, 4096, 40.0};
    struct spmv_config cfg;
    struct spmv_layout *L = NULL;
    struct spmv_dev_matrix *d = NULL;
    struct spmv_dev_graph *g = spmv_dev_graph_new();
    double td[MAX_ROUNDS], tg[MAX_ROUNDS], us[REPS];
    int64_t bad = -1;
    int rc;

    if (g == NULL)
      die(name, "out of memory");
    if (spmv_config_parse(cfg_text[c], &cfg, &e) < 0)
      die(cfg_text[c], e.msg);
    rc = spmv_layout_new(A, dt, &cfg, &lim, &L, &e);
    if (rc == SPMV_ETOOBIG) {
      spmv_dev_graph_free(g);
      continue;
    }
    if (rc < 0 || spmv_dev_matrix_new(L, cs, &d, &e) < 0)
      die(cfg_text[c], e.msg);
    spmv_layout_free(L);
    /* The host's cost of a capture, which a product pays once. */
    cudaStreamSynchronize(s);
    double t0 = now_us();
    if (spmv_dev_graph_prepare(g, d, 1.0, dx, 0.0, dy, s, &e) < 0)
      die(cfg_text[c], e.msg);
    double capture_us = now_us() - t0;
    if (verify(A, dt, NULL, d, dx, dy, hy, ref, mag, s, &bad) < 0 ||
        verify(A, dt, g, d, dx, dy, hy, ref, mag, s, &bad) < 0) {
      printf("%s\t%s\t%s\tWRONG at row %lld\n", name, spmv_dtype_name(dt), cfg_text[c],
             (long long)bad);
    } else {
      for (int r = 0; r < rounds; r++) {
        for (int side = 0; side < 2; side++) {
          int k = (r & 1) ? 1 - side : side; /* alternate which goes first */
          if (spmv_dev_time(tm, k ? g : NULL, d, dx, dy, s, WARMUP, REPS, us, &e) < 0)
            die(cfg_text[c], e.msg);
          (k ? tg : td)[r] = spmv_median(us, REPS);
        }
      }
      double md = spmv_median(td, (size_t)rounds), mg = spmv_median(tg, (size_t)rounds);
      printf("%s\t%s\t%lld\t%lld\t%s\t%.3f\t%.3f\t%.4f\t%.3f\t%s\t%.1f\n", name,
             spmv_dtype_name(dt), (long long)A->rows, (long long)A->nnz, cfg_text[c], md,
             mg, md / mg, md - mg, spmv_dev_graph_plain(g) ? "direct" : "graph",
             capture_us);
      fflush(stdout);
      tally_add(&tallies[c][ti], md, mg);
    }
    spmv_dev_graph_free(g);
    spmv_dev_matrix_free(d);
  }
  spmv_dev_free(dx);
  spmv_dev_free(dy);
  free(x);
  free(ref);
  free(mag);
  free(hx);
  free(hy);
}

static void summary(void)
{
  fprintf(stderr, "| format | type | matrices | direct/graph, geomean | under %.0f us: matrices | geomean | median saving (us) |\n|---|---|---|---|---|---|---|\n",
          SMALL_US);
  for (int c = 0; c < NCFG; c++)
    for (int t = 0; t < 2; t++) {
      struct tally *y = &tallies[c][t];
      if (y->n == 0)
        continue;
      fprintf(stderr, "| %s | %s | %d | %.3f | %d | %.3f | %.3f |\n", cfg_text[c],
              t ? "f32" : "f64", y->n, exp(y->logsum / y->n), y->nsmall,
              y->nsmall ? exp(y->logsum_small / y->nsmall) : NAN,
              spmv_median(y->save, (size_t)y->n));
    }
}

int main(int argc, char **argv)
{
  struct bench_suite suite;
  struct spmv_error e = {0};
  struct spmv_dev_timer *tm = NULL;
  struct spmv_cusparse_handle *cs = NULL;
  const char *only = NULL, *dir = bench_suite_dir(NULL);
  int sets = BENCH_SUITE_PAPER | BENCH_SUITE_REAL, dts = 3, rounds = 5, opt, rc;
  char devname[256];
  void *sv = NULL;
  cudaStream_t s;

  while ((opt = getopt(argc, argv, "s:m:t:r:")) != -1) {
    switch (opt) {
    case 's':
      sets = (strstr(optarg, "large") ? BENCH_SUITE_LARGE : 0) |
             (strstr(optarg, "paper") ? BENCH_SUITE_PAPER : 0) |
             (strstr(optarg, "real") ? BENCH_SUITE_REAL : 0);
      break;
    case 'm': only = optarg; break;
    case 't': dts = strcmp(optarg, "f32") == 0 ? 2 : strcmp(optarg, "f64") == 0 ? 1 : 3; break;
    case 'r': rounds = atoi(optarg); break;
    default:
      fprintf(stderr, "usage: bench_graph [-s paper,real,large] [-m NAMES] [-t f32|f64] [-r ROUNDS]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > MAX_ROUNDS || sets == 0)
    die("usage", "-r takes 1 to 21 rounds, -s one of paper, real, large");
  if ((rc = gpu_probe_setup("bench_graph", devname, sizeof devname, &sv, &tm, &cs)) != 0)
    return rc;
  s = (cudaStream_t)sv;
  if (bench_suite_init(&suite, sets, 0, only, dir, &e) < 0)
    die("suite", e.msg);
  printf("# matrix\tdtype\trows\tnnz\tconfig\tdirect_us\tgraph_us\tdirect/graph\tsaving_us\tlaunched\tcapture_us\n");
  for (size_t k = 0; k < suite.n; k++) {
    struct spmv_csr *A = bench_suite_make(&suite.e[k], dir, &e);
    if (A == NULL)
      die(suite.e[k].name, e.msg);
    for (int t = 0; t < 2; t++)
      if (dts & (1 << t))
        run_matrix(suite.e[k].name, A, t ? SPMV_F32 : SPMV_F64, rounds, s, tm, cs);
    spmv_csr_free(A);
  }
  summary();
  bench_suite_fini(&suite);
  spmv_dev_timer_free(tm);
  spmv_cusparse_handle_free(cs);
  cudaStreamDestroy(s);
  return 0;
}
