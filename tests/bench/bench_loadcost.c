/* bench_loadcost.c: what a load costs its user, from the request to the
 * decision, in products of the kernel it chose. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "spmv.h"
#include "spmv_csr.h"
#include "spmv_gen.h"
#include "spmv_stats.h"
#include "bench_svc.h"
#include "suite.h"

/*
 * For each matrix (the -g generator lines, else the large and paper
 * suites' matrices of 1M to 100M entries) and value type, through a
 * private spmvd (-b cuda or cpu, an empty cache) or a running one (-s):
 *
 *   1. -F first sights: the load that tunes (the daemon's default
 *      strategy, or -S), the decision forgotten before each, each
 *      client-observed (CLOCK_MONOTONIC around spmv_load_csr);
 *   2. -r cache hits of the same matrix, each freed after it;
 *   3. each in products of the chosen kernel: the load's wall time over
 *      the kernel's own time per product (info time_us, as the worker
 *      timed it): "first x" and "hit x";
 *   4. where the time went: the reply's steps (the daemon's and the
 *      client's own, client_write_ms and client_total_ms), and what no
 *      step holds (the wall time less client_write_ms and total_ms: the
 *      request's and reply's way between the two processes).
 *
 * Every figure is the median of its repetitions, each step's on its own
 * (so the steps need not add up to the wall time exactly).
 *
 * Both loads' products are checked against a double CSR reference on a
 * random x before anything is printed; a wrong one prints FAIL and the run
 * exits 1.  A benchmark, never run by make check.
 *
 *   bench_loadcost [-b cuda|cpu] [-g GEN]... [-m NAMES] [-d DIR]
 *                  [-t f32|f64|both] [-F FIRST] [-r REPS] [-S STRATEGY]
 *                  [-s SOCKET] [-o FILE]
 */

#define MAX_GEN 16

/* The steps of the TSV, in the order a load takes them. */
static const char *const step_keys[] = {
  "client_write", "receive", "copy", "validate", "fingerprint", "lookup",
  "tune", "profile", "race", "pin", "race_load", "race_time", "resident",
  "store", "convert", "check", "total",
  "client_total", NULL
};
#define NSTEPS (sizeof step_keys / sizeof step_keys[0] - 1)

#define MAX_REPS 100

/* A kind of load, its repetitions' medians. */
struct load {
  double ms;                /* client-observed */
  double step[NSTEPS];      /* NAN where the replies have no such step */
};

/* The repetitions of a kind of load as they come. */
struct samples {
  int n;
  double ms[MAX_REPS];
  double step[NSTEPS][MAX_REPS];
};

struct row {
  const char *name;
  enum spmv_dtype dt;
  int64_t rows, nnz;
  char config[64];
  double kernel_us;
  struct load first, hit;
};

static int reps = 3, first_reps = 1;
static const char *strategy;

/* m's load (ms, client-observed) and its reply's steps into the samples. */
static void sample(struct spmv_matrix *m, double ms, struct samples *sm)
{
  char *text = NULL, key[40];
  json_t *root = NULL, *v;
  int n = sm->n++;

  sm->ms[n] = ms;
  if (spmv_matrix_decision_json(m, &text) == 0)
    root = json_loads(text, 0, NULL);
  free(text);
  for (size_t i = 0; i < NSTEPS; i++) {
    snprintf(key, sizeof key, "%s_ms", step_keys[i]);
    v = json_object_get(json_object_get(root, "steps"), key);
    sm->step[i][n] = json_is_number(v) ? json_number_value(v) : NAN;
  }
  json_decref(root);
}

/* The median of the finite ones of v[0..n), NAN when none. */
static double median_finite(const double *v, int n)
{
  double t[MAX_REPS];
  int k = 0;

  for (int i = 0; i < n; i++)
    if (isfinite(v[i]))
      t[k++] = v[i];
  return k ? spmv_median(t, (size_t)k) : NAN;
}

/* The samples' medians into l. */
static void medians(const struct samples *sm, struct load *l)
{
  l->ms = median_finite(sm->ms, sm->n);
  for (size_t i = 0; i < NSTEPS; i++)
    l->step[i] = median_finite(sm->step[i], sm->n);
}

/* What no step holds: the wall time less the client's packing and the
 * daemon's total (NAN when either is missing). */
static double unaccounted(const struct load *l)
{
  return l->ms - l->step[0] - l->step[NSTEPS - 2];
}

/* m's product on x (of dt; xd the same in double) against the double
 * CSR reference, normwise: ||y - ref|| <= 16 eps max_row_nnz (||A|| ||x||
 * + ||ref||), in the max norm.  0, 1 (FAIL printed) or -1. */
static int check(struct spmv_matrix *m, const struct spmv_csr *A,
                 enum spmv_dtype dt, const void *x, const double *xd,
                 const char *name, const char *what)
{
  double eps = dt == SPMV_F32 ? 0x1p-23 : 0x1p-52;
  double *ref = malloc(sizeof *ref * (size_t)(A->rows + 1));
  void *y = malloc((size_t)(A->rows + 1) * spmv_dtype_size(dt));
  double an = 0, xn = 0, rn = 0, diff = 0;
  int64_t maxlen = 1;
  int rc = -1;

  if (!ref || !y || spmv_multiply(m, 1.0, x, 0.0, y) < 0) {
    fprintf(stderr, "bench_loadcost: %s: multiply: %s\n", name,
            spmv_client_errmsg(spmv_matrix_client(m)));
    goto out;
  }
  spmv_csr_ref(A, 1.0, xd, 0.0, ref);
  for (int64_t i = 0; i < A->rows; i++) {
    double v = dt == SPMV_F32 ? ((float *)y)[i] : ((double *)y)[i], a = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      a += fabs(A->val[k]);
    an = fmax(an, a);
    rn = fmax(rn, fabs(ref[i]));
    diff = isnan(v) ? INFINITY : fmax(diff, fabs(v - ref[i]));
    if (A->row_ptr[i + 1] - A->row_ptr[i] > maxlen)
      maxlen = A->row_ptr[i + 1] - A->row_ptr[i];
  }
  for (int64_t j = 0; j < A->cols; j++)
    xn = fmax(xn, fabs(xd[j]));
  rc = diff <= 16 * eps * (double)maxlen * (an * xn + rn) ? 0 : 1;
  if (rc)
    fprintf(stderr, "FAIL: %s %s %s: max |y - ref| %.3g against ||A|| ||x|| "
            "+ ||ref|| = %.3g\n", name, spmv_dtype_name(dt), what, diff,
            an * xn + rn);
out:
  free(ref);
  free(y);
  return rc;
}

/* One load of A with -S's strategy. */
static int load_once(struct spmv_client *c, const struct spmv_csr *A,
                     enum spmv_dtype dt, const void *val, const char *name,
                     struct spmv_matrix **m, double *ms)
{
  struct spmv_load_options o;

  spmv_load_options_init(&o);
  o.name = name;
  o.strategy = strategy;
  return bench_load_opt(c, A, dt, val, &o, "bench_loadcost", m, ms);
}

/* The first sights (-F of them: each but the first after the decision is
 * forgotten), then the hits (-r). */
static int measure(struct spmv_client *c, const struct spmv_csr *A,
                   struct row *r, const void *val, const void *x,
                   const double *xd)
{
  struct spmv_matrix *m = NULL;
  struct spmv_info info;
  struct samples *sm = calloc(2, sizeof *sm);
  double ms;
  int rc = -1, forgotten, k;

  if (!sm)
    return -1;
  /* A decision cached before the first is forgotten too. */
  for (int i = 0; i < first_reps; i++) {
    do {
      m = spmv_matrix_free(m);
      if (load_once(c, A, r->dt, val, r->name, &m, &ms) < 0 ||
          spmv_info(m, &info) < 0)
        goto out;
      if (strcmp(info.source, "cache") == 0 &&
          spmv_forget(c, info.fingerprint, &forgotten) < 0) {
        fprintf(stderr, "bench_loadcost: %s: cached and not forgettable "
                "(%s)\n", r->name, spmv_client_errmsg(c));
        goto out;
      }
    } while (strcmp(info.source, "cache") == 0);
    sample(m, ms, &sm[0]);
    if (i + 1 < first_reps && spmv_forget(c, info.fingerprint, &forgotten) < 0)
      goto out;
  }
  snprintf(r->config, sizeof r->config, "%s", info.config);
  r->kernel_us = info.time_us;
  if ((k = check(m, A, r->dt, x, xd, r->name, "first-sight load")) != 0) {
    rc = k;
    goto out;
  }
  for (int i = 0; i < reps; i++) {
    m = spmv_matrix_free(m);
    if (load_once(c, A, r->dt, val, r->name, &m, &ms) < 0 ||
        spmv_info(m, &info) < 0)
      goto out;
    if (strcmp(info.source, "cache") != 0)
      fprintf(stderr, "bench_loadcost: %s: a load after the first was not a "
              "cache hit\n", r->name);
    sample(m, ms, &sm[1]);
  }
  medians(&sm[0], &r->first);
  medians(&sm[1], &r->hit);
  rc = check(m, A, r->dt, x, xd, r->name, "cache-hit load");
out:
  spmv_matrix_free(m);
  free(sm);
  return rc;
}

/* Both loads of A in r->dt: 0, 1 (a wrong product) or -1. */
static int bench_pair(struct spmv_client *c, const struct spmv_csr *A,
                      struct row *r)
{
  double *x = malloc(sizeof *x * (size_t)(A->cols + 1));
  void *val = bench_typed(A->val, A->nnz, r->dt), *xt = NULL;
  uint64_t s = 0x9e3779b97f4a7c15ull;
  int rc = -1;

  r->rows = A->rows;
  r->nnz = A->nnz;
  if (x && val) {
    for (int64_t j = 0; j < A->cols; j++) {  /* +-[0.5, 1.5): never 0 */
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      x[j] = (0.5 + (double)(s >> 11) * 0x1p-53) * ((s & 1) ? -1 : 1);
    }
    /* The reference sees the x the daemon does. */
    if ((xt = bench_typed(x, A->cols, r->dt)) && r->dt == SPMV_F32)
      for (int64_t j = 0; j < A->cols; j++)
        x[j] = ((float *)xt)[j];
    if (xt)
      rc = measure(c, A, r, val, xt, x);
  }
  free(x);
  free(val);
  free(xt);
  return rc;
}

/* l's steps as "key=ms ..." (those it has) on stdout. */
static void print_steps(const char *what, const struct load *l)
{
  printf("  %-5s", what);
  for (size_t i = 0; i < NSTEPS; i++)
    if (isfinite(l->step[i]))
      printf(" %s=%.1f", step_keys[i], l->step[i]);
  printf(" other=%.1f\n", unaccounted(l));
}

static void print_row(const struct row *r, FILE *tsv)
{
  double fx = r->first.ms * 1e3 / r->kernel_us;
  double hx = r->hit.ms * 1e3 / r->kernel_us;

  printf("%-24s %-3s %10lld %-30s %9.2f %10.1f %9.0f %9.1f %8.0f\n", r->name,
         spmv_dtype_name(r->dt), (long long)r->nnz, r->config, r->kernel_us,
         r->first.ms, fx, r->hit.ms, hx);
  print_steps("first", &r->first);
  print_steps("hit", &r->hit);
  fflush(stdout);
  if (!tsv)
    return;
  fprintf(tsv, "%s\t%s\t%lld\t%lld\t%s\t%.3f\t%.3f\t%.1f\t%.3f\t%.1f", r->name,
          spmv_dtype_name(r->dt), (long long)r->rows, (long long)r->nnz,
          r->config, r->kernel_us, r->first.ms, fx, r->hit.ms, hx);
  for (int w = 0; w < 2; w++) {
    const struct load *l = w ? &r->hit : &r->first;
    for (size_t i = 0; i < NSTEPS; i++)
      fprintf(tsv, isfinite(l->step[i]) ? "\t%.3f" : "\t-", l->step[i]);
    fprintf(tsv, "\t%.3f", unaccounted(l));
  }
  fputc('\n', tsv);
  fflush(tsv);
}

static void tsv_head(FILE *f)
{
  fprintf(f, "matrix\tdtype\trows\tnnz\tconfig\tkernel_us\tfirst_ms\tfirst_x"
          "\thit_ms\thit_x");
  for (int w = 0; w < 2; w++) {
    for (size_t i = 0; i < NSTEPS; i++)
      fprintf(f, "\t%s_%s_ms", w ? "hit" : "first", step_keys[i]);
    fprintf(f, "\t%s_other_ms", w ? "hit" : "first");
  }
  fputc('\n', f);
}

static void header(FILE *f, const char *backend)
{
  char date[64];
  time_t now = time(NULL);

  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  fprintf(f, "# bench_loadcost: backend %s, strategy %s, %s; first = the "
          "median of %d loads that tune, hit = of %d cache hits, both "
          "client-observed; x = load / the chosen kernel's time per product "
          "(info time_us); other = wall - client_write - total (the way "
          "between the processes); each step its own median, in ms\n",
          backend, strategy ? strategy : "the daemon's default", date,
          first_reps, reps);
}

static void usage(FILE *f)
{
  fprintf(f,
    "usage: bench_loadcost [-b cuda|cpu] [-g GEN]... [-m NAMES] [-d DIR]\n"
    "                      [-t f32|f64|both] [-F FIRST] [-r REPS] [-S STRATEGY]\n"
    "                      [-s SOCKET] [-o FILE]\n"
    "  -b  the private spmvd's backend (default cuda)\n"
    "  -g  a generated matrix (spmv_gen_from_text: \"stencil2d nx=2048 "
    "ny=2048\"),\n"
    "      up to 16; without -g the large and paper suites (1M-100M "
    "entries)\n"
    "  -m  only the suites' matrices whose name contains one of NAMES\n"
    "  -d  matrix folder (default $SPMV_MATRICES, else tests/data/matrices)\n"
    "  -t  value types (default f64)      -r  cache hits timed (default 3)\n"
    "  -F  first sights timed, the decision forgotten before each (default 1)\n"
    "  -S  the loads' strategy (default: the daemon's)\n"
    "  -s  a running spmvd's socket       -o  also write the rows as TSV\n");
}

/* Runs both value types of A; 0, or 1 after a wrong product. */
static int bench_matrix(struct spmv_client *c, const struct spmv_csr *A,
                        const char *name, int dts, FILE *tsv, int *failed)
{
  for (int d = 2; d >= 1; d--) {
    struct row r;
    int k;

    if (!(dts & d))
      continue;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.dt = d == 1 ? SPMV_F32 : SPMV_F64;
    if ((k = bench_pair(c, A, &r)) > 0)
      return 1;
    if (k < 0) {
      fprintf(stderr, "bench_loadcost: %s %s: could not be measured\n", name,
              spmv_dtype_name(r.dt));
      *failed = 1;
    } else {
      print_row(&r, tsv);
    }
  }
  return 0;
}

int main(int argc, char **argv)
{
  static const struct option lopts[] = { {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0} };
  struct bench_svc_args a = { .dts = 2, .reps = 3 };
  const char *backend = "cuda", *gen[MAX_GEN];
  struct bench_svc svc;
  struct bench_suite s = {0};
  struct spmv_error err = {0};
  FILE *tsv = NULL;
  int ngen = 0, opt, rc = 0, failed = 0;

  while ((opt = getopt_long(argc, argv, "b:g:F:m:d:t:r:S:s:o:h", lopts,
                            NULL)) != -1) {
    if (bench_svc_arg(&a, opt, optarg))
      continue;
    if (opt == 'b') {
      backend = optarg;
    } else if (opt == 'F') {
      first_reps = atoi(optarg);
    } else if (opt == 'S') {
      strategy = optarg;
    } else if (opt == 'g' && ngen < MAX_GEN) {
      gen[ngen++] = optarg;
    } else {
      usage(opt == 'h' ? stdout : stderr);
      return opt == 'h' ? 0 : 2;
    }
  }
  reps = a.reps;
  if (optind < argc || a.dts == 0 || reps < 1 || reps > MAX_REPS ||
      first_reps < 1 || first_reps > MAX_REPS) {
    usage(stderr);
    return 2;
  }
  if (!ngen && bench_suite_init(&s, BENCH_SUITE_LARGE | BENCH_SUITE_PAPER, 0,
                                a.only, a.dir, &err) < 0) {
    fprintf(stderr, "bench_loadcost: %s\n", err.msg);
    return 1;
  }
  if (a.out && !(tsv = fopen(a.out, "w"))) {
    fprintf(stderr, "bench_loadcost: %s: %s\n", a.out, strerror(errno));
    bench_suite_fini(&s);
    return 1;
  }
  if (bench_svc_open(&svc, "bench_loadcost", SPMV_BENCH_SPMVD, backend,
                     a.sock) < 0) {
    rc = 1;
    goto done;
  }
  header(stdout, backend);
  if (tsv) {
    header(tsv, backend);
    tsv_head(tsv);
  }
  printf("%-24s %-3s %10s %-30s %9s %10s %9s %9s %8s\n", "matrix", "dt", "nnz",
         "config", "kernel_us", "first_ms", "first_x", "hit_ms", "hit_x");
  for (size_t i = 0; i < (ngen ? (size_t)ngen : s.n) && rc == 0; i++) {
    const char *name = ngen ? gen[i] : s.e[i].name;
    struct spmv_csr *A = ngen ? spmv_gen_from_text(gen[i], 1, &err)
                              : bench_suite_make(&s.e[i], a.dir, &err);
    if (!A) {
      fprintf(stderr, "bench_loadcost: %s: %s: skipped\n", name, err.msg);
      failed = 1;
      continue;
    }
    if (!ngen && (A->nnz < 1000000 || A->nnz > 100000000))
      fprintf(stderr, "bench_loadcost: %s: %lld entries, outside 1M-100M: "
              "skipped\n", name, (long long)A->nnz);
    else
      rc = bench_matrix(svc.c, A, name, a.dts, tsv, &failed);
    spmv_csr_free(A);
  }
done:
  bench_svc_close(&svc);
  if (tsv)
    fclose(tsv);
  bench_suite_fini(&s);
  return rc || failed;
}
