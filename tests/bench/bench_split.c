/* bench_split.c: one matrix on one worker against the same matrix in row
 * blocks over several workers (issue 54), side by side in one run. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "spmv.h"
#include "spmv_csr.h"
#include "spmv_gen.h"
#include "spmv_mix.h"
#include "spmv_split.h"
#include "spmv_stats.h"
#include "bench_clock.h"
#include "bench_svc.h"
#include "suite.h"

/*
 * For each matrix (the -g generator lines, else the large suite's) and
 * value type, through a private spmvd with a worker per GPU (-b cuda:
 * --devices all; -b cpu: --cpu-workers K) or a running one (-s):
 *
 *   1. the split's shape as the daemon cuts it (spmv_split_measure, K
 *      blocks balanced by entries): the entries multiplied against a
 *      halo (remote, % of nnz) and the halo's entries of x (% of rows),
 *      and the planner's predicted gain (spmv_split_predict) with the
 *      costs of a pair of H200s over NVLink (those check_split uses);
 *   2. two loads of it, one unsplit and one split in K blocks (the
 *      daemon's default strategy for each, the blocks tuned on their own
 *      workers);
 *   3. products on host vectors (spmv_multiply; x from a hash, never
 *      zeros): -r runs of each after 3 warm-up runs, client-observed, the
 *      median; every y checked against the double CSR reference within
 *      the bound of a sum of that many terms in the type;
 *   4. products on device vectors made like each matrix
 *      (spmv_vector_new_like, split as its rows on the split one;
 *      spmv_multiply_vec, x uploaded once): timed and checked as 3, y
 *      downloaded after the runs;
 *   5. where A is symmetric, a fixed count of iterations (-i) of CG from
 *      x = 0 on b = A 1, on each, on host vectors (spmv_solve) and on
 *      device vectors like it (spmv_solve_vec): the vectors
 *      stay on the workers between iterations, the dots are reductions
 *      over the blocks; the worker's time an iteration, median of -r
 *      solves; where both ran every iteration, the split's and the
 *      unsplit's x must agree (1e-6 f64, 1e-2 f32, relative 2-norm), and
 *      each residual the solver reports must be the one the host
 *      recomputes from its x.
 * A wrong product or solve prints FAIL and the run exits 1; fewer than K
 * workers exits 77.  A benchmark, never run by make check (but for its
 * small cpu run, tests/check_bench_split.sh).
 *
 *   bench_split [-b cuda|cpu] [-k BLOCKS] [-g GEN]... [-m NAMES] [-d DIR]
 *               [-t f32|f64|both] [-i ITERS] [-r REPS] [-s SOCKET] [-o FILE]
 */

#define MAX_GEN 16
#define MAX_REPS 100
#define WARMUP 3

static int blocks = 2, iters = 100, reps = 10;

/* A pair of H200s over NVLink 4 (check_split.c's orders of magnitude). */
static const struct spmv_split_costs h200_pair = {
  4000.0, 10000.0, 60u << 20, 450.0, 15.0, 3.0, 8,
};

/* One matrix and type: what is printed. */
struct row {
  const char *name;
  enum spmv_dtype dt;
  int64_t rows, nnz, remote, halo;
  double model_gain;
  const char *method;
  double mul_us[2], it_us[2];  /* unsplit, split; host vectors */
  double vmul_us[2], vit_us[2]; /* the same on device vectors */
  int64_t its[2];
  double rel_res[2], x_diff;
};

static void usage(FILE *f)
{
  fprintf(f, "usage: bench_split [-b cuda|cpu] [-k BLOCKS] [-g GEN]... [-m NAMES] [-d DIR]\n"
             "                   [-t f32|f64|both] [-i ITERS] [-r REPS] [-s SOCKET] [-o FILE]\n"
             "  -k  row blocks of the split, over as many workers (default 2)\n"
             "  -g  a generated matrix (spmv_gen_from_text), up to 16; without -g the\n"
             "      large suite (1M-100M entries)\n"
             "  -i  iterations of each solve (default 100)\n"
             "  -r  timed products and solves of each (default 10)\n");
}

/* x[j]: a hash of j in [0.5, 1.5), never zero. */
static double xval(int64_t j)
{
  uint64_t z = spmv_mix64((uint64_t)(j + 1) * 0x9e3779b97f4a7c15ull);
  return 0.5 + (double)(z >> 11) / 9007199254740992.0;
}

static double get(const void *v, int64_t i, enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

/* Whether y (of dt) is A x within the bound of a sum of each row's terms
 * in dt, A's values val as dt holds them. */
static int product_ok(const struct spmv_csr *A, const void *val, const void *x,
                      const void *y, enum spmv_dtype dt, double *worst)
{
  double eps = dt == SPMV_F32 ? 5.96e-8 : 1.11e-16;
  int ok = 1;

  *worst = 0;
  for (int64_t i = 0; i < A->rows; i++) {
    double s = 0, a = 0;
    int64_t n = A->row_ptr[i + 1] - A->row_ptr[i];
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      double t = get(val, k, dt) * get(x, A->col_idx[k], dt);
      s += t;
      a += fabs(t);
    }
    double bound = 2.0 * (double)(n + 1) * eps * a + 1e-300;
    double e = fabs(get(y, i, dt) - s) / bound;
    *worst = e > *worst ? e : *worst;
    ok &= e <= 1.0;
  }
  return ok;
}

/* ||b - A x||_2 on the host in double, A's values val in dt. */
static double residual(const struct spmv_csr *A, const void *val, const void *b,
                       const void *x, enum spmv_dtype dt)
{
  double ss = 0;

  for (int64_t i = 0; i < A->rows; i++) {
    double s = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += get(val, k, dt) * get(x, A->col_idx[k], dt);
    double d = get(b, i, dt) - s;
    ss += d * d;
  }
  return sqrt(ss);
}

/* Whether A equals its transpose, pattern and values: each (i, j) found
 * as (j, i) by a binary search of row j (rows whose columns are not
 * sorted may be found not symmetric: the benchmark then only multiplies). */
static int symmetric(const struct spmv_csr *A)
{
  if (A->rows != A->cols)
    return 0;
  for (int64_t i = 0; i < A->rows; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      int64_t j = A->col_idx[k], lo = A->row_ptr[j], hi = A->row_ptr[j + 1];
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->col_idx[mid] < i)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo == A->row_ptr[j + 1] || A->col_idx[lo] != i || A->val[lo] != A->val[k])
        return 0;
    }
  return 1;
}

/* Waits up to 120 s for n workers ready (5 s while it lists fewer: the
 * front end lists its workers as it starts them); how many the daemon has
 * (-1 when its status cannot be read). */
static int wait_workers(struct spmv_client *c, int n)
{
  int total = -1;

  for (int t = 0; t < 1200; t++, usleep(100000)) {
    char *js = NULL;
    json_t *st;
    int ready = 0;

    if (spmv_status_json(c, &js) < 0)
      return -1;
    st = json_loads(js, 0, NULL);
    free(js);
    json_t *w = json_object_get(st, "workers");
    total = (int)json_array_size(w);
    for (size_t i = 0; i < json_array_size(w); i++) {
      const char *s = json_string_value(json_object_get(json_array_get(w, i), "state"));
      ready += s && strcmp(s, "ready") == 0;
    }
    json_decref(st);
    if (ready >= n || (total < n && t >= 50))
      return total;
  }
  return total;
}

/* The median of -r timed products of m (after the warm-up), in us; y
 * checked.  NAN after a message on failure. */
static double time_products(struct spmv_matrix *m, const struct spmv_csr *A,
                            const void *val, const void *x, void *y,
                            enum spmv_dtype dt, const char *what, int *bad)
{
  double t[MAX_REPS], worst;

  for (int r = -WARMUP; r < reps; r++) {
    double t0 = bench_now_us();
    if (spmv_multiply(m, 1.0, x, 0.0, y) < 0) {
      fprintf(stderr, "bench_split: %s: multiply: %s\n", what,
              spmv_client_errmsg(NULL));
      return NAN;
    }
    if (r >= 0)
      t[r] = bench_now_us() - t0;
  }
  if (!product_ok(A, val, x, y, dt, &worst)) {
    printf("FAIL %s: y off the reference by %.3g times its bound\n", what, worst);
    *bad = 1;
    return NAN;
  }
  return spmv_median(t, (size_t)reps);
}

/* time_products() on device vectors like m: x uploaded once, y
 * downloaded after the runs and checked. */
static double time_vec_products(struct spmv_matrix *m, const struct spmv_csr *A,
                                const void *val, const void *x, void *y,
                                enum spmv_dtype dt, const char *what, int *bad)
{
  struct spmv_vector *xv = NULL, *yv = NULL;
  double t[MAX_REPS], worst, med = NAN;

  if (spmv_vector_new_like(m, &xv) < 0 || spmv_vector_new_like(m, &yv) < 0 ||
      spmv_vector_upload(xv, x) < 0) {
    fprintf(stderr, "bench_split: %s: device vectors: %s\n", what,
            spmv_client_errmsg(NULL));
    goto out;
  }
  for (int r = -WARMUP; r < reps; r++) {
    double t0 = bench_now_us();
    if (spmv_multiply_vec(m, 1.0, xv, 0.0, yv) < 0) {
      fprintf(stderr, "bench_split: %s: multiply_vec: %s\n", what,
              spmv_client_errmsg(NULL));
      goto out;
    }
    if (r >= 0)
      t[r] = bench_now_us() - t0;
  }
  if (spmv_vector_download(yv, y) < 0) {
    fprintf(stderr, "bench_split: %s: download: %s\n", what,
            spmv_client_errmsg(NULL));
    goto out;
  }
  if (!product_ok(A, val, x, y, dt, &worst)) {
    printf("FAIL %s: y on device vectors off the reference by %.3g times its "
           "bound\n", what, worst);
    *bad = 1;
    goto out;
  }
  med = spmv_median(t, (size_t)reps);
out:
  spmv_vector_free(xv);
  spmv_vector_free(yv);
  return med;
}

/* One solve of m from x = 0 into x_out: on host vectors, or (dev) on
 * device vectors like m, b uploaded before and x downloaded after. */
static int solve_once(struct spmv_matrix *m, const void *b, void *x_out, int dev,
                      const struct spmv_solve_options *o,
                      struct spmv_solve_result *res)
{
  struct spmv_vector *bv = NULL, *xv = NULL;
  int rc;

  if (!dev)
    return spmv_solve(m, b, x_out, 0, o, res);
  if ((rc = spmv_vector_new_like(m, &bv)) == 0 &&
      (rc = spmv_vector_new_like(m, &xv)) == 0 &&
      (rc = spmv_vector_upload(bv, b)) == 0 &&
      (rc = spmv_solve_vec(m, bv, xv, o, res)) == 0)
    rc = spmv_vector_download(xv, x_out);
  spmv_vector_free(bv);
  spmv_vector_free(xv);
  return rc;
}

/* -r solves of m from x = 0 (on device vectors when dev): the median of
 * the worker's time an iteration; x_out the last solution, *its and *rel its iterations and
 * relative residual, checked against the host's.  NAN on failure. */
static double time_solves(struct spmv_matrix *m, const struct spmv_csr *A,
                          const void *val, const void *b, void *x_out, int dev,
                          enum spmv_dtype dt, const char *method, const char *what,
                          int64_t *its, double *rel, int *bad)
{
  struct spmv_solve_options o;
  struct spmv_solve_result res = {0};
  double t[MAX_REPS];

  spmv_solve_options_init(&o);
  o.method = method;
  o.rtol = 1e-300;  /* a fixed count: every solve runs iters iterations */
  o.maxiter = iters;
  for (int r = 0; r < reps; r++) {
    memset(&res, 0, sizeof res);
    if (solve_once(m, b, x_out, dev, &o, &res) < 0) {
      fprintf(stderr, "bench_split: %s: solve: %s\n", what, spmv_client_errmsg(NULL));
      return NAN;
    }
    t[r] = res.us_per_iteration;
  }
  double host = residual(A, val, b, x_out, dt);
  double tol = (dt == SPMV_F32 ? 1e-4 : 1e-9) * res.rhs_norm;
  if (!(fabs(host - res.residual) <= tol + 1e-3 * host)) {
    printf("FAIL %s: the solver's residual %.6g, the host's %.6g\n", what,
           res.residual, host);
    *bad = 1;
    return NAN;
  }
  *its = res.iterations;
  *rel = res.relative_residual;
  return spmv_median(t, (size_t)reps);
}

/* v in a field of 10 in %e form, "-" when not measured. */
static void cell_e(double v)
{
  if (isfinite(v))
    printf(" %10.2e", v);
  else
    printf(" %10s", "-");
}

static void print_row(const struct row *r, FILE *tsv)
{
  printf("%-26s %-3s %9lld %10lld %7.3f %7.3f %6.2f ", r->name, spmv_dtype_name(r->dt),
         (long long)r->rows, (long long)r->nnz,
         100.0 * (double)r->remote / (double)(r->nnz ? r->nnz : 1),
         100.0 * (double)r->halo / (double)(r->rows ? r->rows : 1), r->model_gain);
  bench_cell(r->mul_us[0], 10, 1);
  bench_cell(r->mul_us[1], 10, 1);
  bench_cell(r->mul_us[0] / r->mul_us[1], 7, 2);
  printf("  %-8s", r->method);
  bench_cell(r->it_us[0], 10, 1);
  bench_cell(r->it_us[1], 10, 1);
  bench_cell(r->it_us[0] / r->it_us[1], 7, 2);
  cell_e(r->rel_res[1]);
  cell_e(r->x_diff);
  bench_cell(r->vmul_us[0], 10, 1);
  bench_cell(r->vmul_us[1], 10, 1);
  bench_cell(r->vmul_us[0] / r->vmul_us[1], 7, 2);
  bench_cell(r->vit_us[0], 10, 1);
  bench_cell(r->vit_us[1], 10, 1);
  bench_cell(r->vit_us[0] / r->vit_us[1], 7, 2);
  printf("\n");
  if (tsv)
    fprintf(tsv, "%s\t%s\t%lld\t%lld\t%lld\t%lld\t%.4f\t%.2f\t%.2f\t%s\t%lld\t"
                 "%.2f\t%.2f\t%.3e\t%.3e\t%.2f\t%.2f\t%.2f\t%.2f\n",
            r->name, spmv_dtype_name(r->dt), (long long)r->rows, (long long)r->nnz,
            (long long)r->remote, (long long)r->halo, r->model_gain, r->mul_us[0],
            r->mul_us[1], r->method, (long long)r->its[1], r->it_us[0], r->it_us[1],
            r->rel_res[1], r->x_diff, r->vmul_us[0], r->vmul_us[1], r->vit_us[0],
            r->vit_us[1]);
  /* Rows done survive a run cut short (device-run.sh's timeout). */
  fflush(stdout);
  if (tsv)
    fflush(tsv);
}

/* The relative 2-norm between two solutions of n values of dt. */
static double rel_diff(const void *a, const void *b, int64_t n, enum spmv_dtype dt)
{
  double d = 0, s = 0;

  for (int64_t i = 0; i < n; i++) {
    double u = get(a, i, dt), v = get(b, i, dt);
    d += (u - v) * (u - v);
    s += u * u;
  }
  return s > 0 ? sqrt(d / s) : sqrt(d);
}

/* One matrix in one type; 1 after a wrong result, -1 when it could not be
 * measured, else 0. */
static int bench_one(struct spmv_client *c, const struct spmv_csr *A, const char *name,
                     enum spmv_dtype dt, int sym, FILE *tsv)
{
  struct row r = {.name = name, .dt = dt, .rows = A->rows, .nnz = A->nnz,
                  .method = sym ? "cg" : "-", .it_us = {NAN, NAN}, .vit_us = {NAN, NAN},
                  .rel_res = {NAN, NAN}, .x_diff = NAN};
  struct spmv_split_shape shape[SPMV_SPLIT_MAX];
  struct spmv_split_costs costs = h200_pair;
  struct spmv_matrix *m[2] = {NULL, NULL};
  struct spmv_load_options o;
  struct spmv_error err = {0};
  size_t es = dt == SPMV_F32 ? 4 : 8;
  double *xd = malloc(sizeof *xd * (size_t)(A->cols + 1));
  void *val = bench_typed(A->val, A->nnz, dt), *x = NULL, *b = NULL;
  void *y = malloc(es * (size_t)(A->rows + 1));
  void *sol[2] = {malloc(es * (size_t)(A->cols + 1)), malloc(es * (size_t)(A->cols + 1))};
  int bad = 0, rc = -1;
  char what[160];

  if (!xd || !val || !y || !sol[0] || !sol[1])
    goto out;
  for (int64_t j = 0; j < A->cols; j++)
    xd[j] = xval(j);
  x = bench_typed(xd, A->cols, dt);
  b = malloc(es * (size_t)(A->rows + 1));
  if (!x || !b)
    goto out;
  /* b = A 1 in dt, from A's values as dt holds them. */
  for (int64_t i = 0; i < A->rows; i++) {
    double s = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += get(val, k, dt);
    if (dt == SPMV_F32)
      ((float *)b)[i] = (float)s;
    else
      ((double *)b)[i] = s;
  }
  if (spmv_split_measure(A, blocks, shape, &err) < 0) {
    fprintf(stderr, "bench_split: %s: %s\n", name, err.msg);
    goto out;
  }
  for (int p = 0; p < blocks; p++) {
    r.remote += shape[p].remote_nnz;
    r.halo += shape[p].halo;
  }
  costs.value_bytes = (int)es;
  r.model_gain = spmv_split_predict_one(A, &costs) / spmv_split_predict(shape, blocks, &costs);
  for (int s = 0; s < 2; s++) {
    double ms;
    spmv_load_options_init(&o);
    o.name = name;
    o.split = s ? blocks : 1;
    if (bench_load_opt(c, A, dt, val, &o, "bench_split", &m[s], &ms) < 0)
      goto out;
    if (spmv_matrix_blocks(m[s]) != (s ? blocks : 1)) {
      fprintf(stderr, "bench_split: %s: loaded in %d blocks, not %d\n", name,
              spmv_matrix_blocks(m[s]), s ? blocks : 1);
      goto out;
    }
  }
  for (int s = 0; s < 2; s++) {
    snprintf(what, sizeof what, "%s %s %s", name, spmv_dtype_name(dt),
             s ? "split" : "unsplit");
    r.mul_us[s] = time_products(m[s], A, val, x, y, dt, what, &bad);
    if (isnan(r.mul_us[s]))
      goto out;
    r.vmul_us[s] = time_vec_products(m[s], A, val, x, y, dt, what, &bad);
    if (isnan(r.vmul_us[s]))
      goto out;
    if (sym && isnan(r.it_us[s] = time_solves(m[s], A, val, b, sol[s], 0, dt, r.method,
                                              what, &r.its[s], &r.rel_res[s], &bad)))
      goto out;
    /* On device vectors the same iterations: x must be the host vectors'. */
    int64_t vits = 0;
    double vrel = 0;
    if (sym && isnan(r.vit_us[s] = time_solves(m[s], A, val, b, y, 1, dt, r.method,
                                               what, &vits, &vrel, &bad)))
      goto out;
    if (sym && (vits != r.its[s] || rel_diff(y, sol[s], A->cols, dt) != 0)) {
      printf("FAIL %s: the solve on device vectors (%lld iterations) is not the "
             "one on host vectors (%lld)\n", what, (long long)vits,
             (long long)r.its[s]);
      bad = 1;
      goto out;
    }
  }
  /* Both ran the same count (neither stopped early, as at rounding's
   * level): the same iterates but for the sums' order. */
  if (sym && r.its[0] == r.its[1]) {
    r.x_diff = rel_diff(sol[0], sol[1], A->cols, dt);
    if (!(r.x_diff <= (dt == SPMV_F32 ? 1e-2 : 1e-6))) {
      printf("FAIL %s %s: after %lld iterations the split's x is %.3g from the "
             "unsplit's\n", name, spmv_dtype_name(dt), (long long)r.its[1], r.x_diff);
      bad = 1;
      goto out;
    }
  } else if (sym) {
    fprintf(stderr, "bench_split: %s %s: the solves stopped after %lld (unsplit) and "
            "%lld (split) iterations\n", name, spmv_dtype_name(dt),
            (long long)r.its[0], (long long)r.its[1]);
  }
  print_row(&r, tsv);
  rc = 0;
out:
  for (int s = 0; s < 2; s++)
    spmv_matrix_free(m[s]);
  free(xd);
  free(val);
  free(x);
  free(b);
  free(y);
  free(sol[0]);
  free(sol[1]);
  return bad ? 1 : rc;
}

int main(int argc, char **argv)
{
  static const struct option lopts[] = { {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0} };
  struct bench_svc_args a = { .dts = 2, .reps = 10 };
  const char *backend = "cuda", *gen[MAX_GEN];
  const char *extra[3] = {NULL, NULL, NULL};
  char kbuf[16];
  struct bench_svc svc;
  struct bench_suite s = {0};
  struct spmv_error err = {0};
  FILE *tsv = NULL;
  int ngen = 0, opt, rc = 0, failed = 0;

  while ((opt = getopt_long(argc, argv, "b:k:g:i:m:d:t:r:s:o:h", lopts, NULL)) != -1) {
    if (bench_svc_arg(&a, opt, optarg))
      continue;
    if (opt == 'b') {
      backend = optarg;
    } else if (opt == 'k') {
      blocks = atoi(optarg);
    } else if (opt == 'i') {
      iters = atoi(optarg);
    } else if (opt == 'g' && ngen < MAX_GEN) {
      gen[ngen++] = optarg;
    } else {
      usage(opt == 'h' ? stdout : stderr);
      return opt == 'h' ? 0 : 2;
    }
  }
  reps = a.reps;
  if (optind < argc || a.dts == 0 || reps < 1 || reps > MAX_REPS || blocks < 2 ||
      blocks > SPMV_SPLIT_MAX || iters < 1 ||
      (strcmp(backend, "cuda") != 0 && strcmp(backend, "cpu") != 0)) {
    usage(stderr);
    return 2;
  }
  if (!ngen && bench_suite_init(&s, BENCH_SUITE_LARGE, 0, a.only, a.dir, &err) < 0) {
    fprintf(stderr, "bench_split: %s\n", err.msg);
    return 1;
  }
  if (a.out && !(tsv = fopen(a.out, "w"))) {
    fprintf(stderr, "bench_split: %s: %s\n", a.out, strerror(errno));
    bench_suite_fini(&s);
    return 1;
  }
  snprintf(kbuf, sizeof kbuf, "%d", blocks);
  extra[0] = strcmp(backend, "cuda") == 0 ? "--devices" : "--cpu-workers";
  extra[1] = strcmp(backend, "cuda") == 0 ? "all" : kbuf;
  if (bench_svc_open_with(&svc, "bench_split", SPMV_BENCH_SPMVD, backend, extra,
                          a.sock) < 0) {
    rc = 1;
    goto done;
  }
  int nw = wait_workers(svc.c, blocks);
  if (nw < blocks) {
    fprintf(stderr, "bench_split: %d blocks need as many workers; the daemon has %d\n",
            blocks, nw);
    rc = 77;
    goto done;
  }
  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  printf("# bench_split: backend %s, %d workers, %d blocks, %s; products on host "
         "vectors (mul) and on device vectors (vmul), client-observed, median of %d "
         "after %d; solves of %d iterations from x = 0 on host vectors (it) and "
         "device vectors (vit), the worker's us an iteration, median of %d; remote "
         "= entries against the halo, %% of nnz; halo = x's entries moved, %% of "
         "rows; model = the planner's predicted gain on an H200 pair\n", backend,
         nw, blocks, date, reps, WARMUP, iters, reps);
  printf("%-26s %-3s %9s %10s %7s %7s %6s  %9s %9s %6s  %-8s %9s %9s %6s  %9s %9s"
         "  %9s %9s %6s  %9s %9s %6s\n",
         "matrix", "dt", "rows", "nnz", "remote%", "halo%", "model", "mul_us_1",
         "mul_us_k", "gain", "method", "it_us_1", "it_us_k", "gain", "rel_res", "x_diff",
         "vmul_us_1", "vmul_us_k", "gain", "vit_us_1", "vit_us_k", "gain");
  if (tsv)
    fprintf(tsv, "matrix\tdtype\trows\tnnz\tremote_nnz\thalo\tmodel_gain\tmul_us_1\t"
                 "mul_us_k\tmethod\titerations\tit_us_1\tit_us_k\trel_res\tx_diff\t"
                 "vmul_us_1\tvmul_us_k\tvit_us_1\tvit_us_k\n");
  for (size_t i = 0; i < (ngen ? (size_t)ngen : s.n); i++) {
    const char *name = ngen ? gen[i] : s.e[i].name;
    struct spmv_csr *A = ngen ? spmv_gen_from_text(gen[i], 1, &err)
                              : bench_suite_make(&s.e[i], a.dir, &err);
    if (!A) {
      fprintf(stderr, "bench_split: %s: %s: skipped\n", name, err.msg);
      failed = 1;
      continue;
    }
    int sym = symmetric(A);
    for (int d = 2; d >= 1; d--) {
      if (!(a.dts & d))
        continue;
      int k = A->rows != A->cols ? -1
                                 : bench_one(svc.c, A, name, d == 1 ? SPMV_F32 : SPMV_F64,
                                             sym, tsv);
      if (k != 0)
        fprintf(stderr, "bench_split: %s %s: %s\n", name, d == 1 ? "f32" : "f64",
                k > 0 ? "a wrong result" : "not measured");
      failed |= k != 0;
    }
    spmv_csr_free(A);
  }
done:
  bench_svc_close(&svc);
  if (tsv)
    fclose(tsv);
  bench_suite_fini(&s);
  return rc ? rc : failed;
}
