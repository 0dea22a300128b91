/* bench_service.c: the service path (device vectors, host vectors, op
 * lists, loads) against the same work done in-process. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "gpu_common.h"
#include "spmv.h"
#include "spmv_csr.h"
#include "spmv_stats.h"
#include "spmvd_backend.h"
#include "bench_clock.h"
#include "bench_service.h"
#include "bench_svc.h"
#include "suite.h"

/*
 * For each matrix of the large suite (generated and tiled real matrices,
 * sized >= 4x a GPU's L2) and of the paper suite (the ELLR-T paper's
 * matrices at their size) with 1M to 100M entries, and each value type, in
 * one process, side by side:
 *
 *   1. the kernel spmvd chose (spmv_info's config): the worker's own time
 *      (info time_us), and that configuration made and timed in-process
 *      with CUDA events (spmv_layout_new, spmv_dev_matrix_new,
 *      spmv_dev_spmv; back to back, and with the L2 flushed: TSV only);
 *   2. spmv_multiply_vec on device vectors, client-observed;
 *   3. spmv_multiply_inplace on the memfd vectors, and spmv_multiply with
 *      the vectors in the payload, client-observed;
 *   4. the host-vector bound: kernel + x up + y down at the pinned copy
 *      speed measured now (cudaMemcpyAsync of the vectors' sizes);
 *   5. one CG iteration as one op list (q = A p; pq = p.q; x += rho/pq p;
 *      r -= rho/pq q; rr = r.r; p = r + rr/rho p), client-observed,
 *      against the same iteration in-process with cuSPARSE (CSR,
 *      ALG_DEFAULT, buffer and preprocess) and cuBLAS (pointer mode host);
 *      both must leave the same residual after their first iteration; and
 *      CG as one server-side solve of 200 iterations (spmv_solve_vec),
 *      per iteration, client-observed and as the worker times it;
 *   6. the load: first sight (the daemon's default strategy) and a cache
 *      hit, client-observed, with the reply's "steps" when it has them,
 *      against the in-process cuSPARSE set-up from pageable memory.
 *
 * Every product (in-process, device vectors, memfd, payload) is checked
 * against a double CSR reference on a random x (+-[0.5, 1.5), never 0)
 * within gpu_row_tol before it is timed; a wrong one prints FAIL and the
 * run exits 1.  Client-observed times are CLOCK_MONOTONIC around the call,
 * the median of REPS after 5 warm-up calls.
 *
 *   bench_service [-m NAMES] [-t f32|f64|both] [-r REPS] [-s SOCKET]
 *                 [-o FILE] [-d DIR]
 *
 * -m keeps the matrices whose name contains one of the comma-separated
 * NAMES; -d is the matrix folder ($SPMV_MATRICES, else the tree's).
 * Without -s a private spmvd (cuda backend, an empty cache in a temporary
 * folder) is started from this build, so that the first load is a first
 * sight; with -s the first load's tuning is forgotten first (spmv_forget,
 * where the daemon permits it; else load_first is "-").
 */

#define WARMUP 5

static int reps = 50;
static int failed; /* a CG that disagreed, a pair not measured: exit 1 */

struct row {
  const char *name;
  enum spmv_dtype dt;
  int64_t rows, cols, nnz;
  char config[64];
  double k_spmvd, k_in, k_flush, dev, inpl, pay, h2d, d2h, bound;
  double cg_s, cg_in, res_s, res_in, res0, first_ms, hit_ms, cs_ms;
  double solve_us, solve_worker_us;  /* CG as one solve request, a step */
  char steps_first[512], steps_hit[512];
};

static double median_of(double *t, int n)
{
  return spmv_median(t, (size_t)n);
}

/* The product's result y (rows values of dt) against the reference. */
static int check(const struct spmv_csr *A, enum spmv_dtype dt, const void *y,
                 const double *ref, const double *mag, const char *name,
                 const char *what)
{
  int64_t first, bad = gpu_check_rows(A, dt, y, ref, mag, 1, 0, &first);

  if (bad == 0)
    return 0;
  fprintf(stderr, "FAIL: %s %s %s: %lld rows off the reference, first row "
          "%lld\n", name, spmv_dtype_name(dt), what, (long long)bad,
          (long long)first);
  return -1;
}

static void poison(void *y, int64_t n, enum spmv_dtype dt)
{
  for (int64_t i = 0; i < n; i++) {
    if (dt == SPMV_F32)
      ((float *)y)[i] = NAN;
    else
      ((double *)y)[i] = NAN;
  }
}

/* The reply's "steps" object as "key=value ..." into out ("" if none). */
static void decision_steps(struct spmv_matrix *m, char *out, size_t n)
{
  char *text = NULL;
  json_t *root, *steps, *v;
  const char *key;
  size_t len = 0;

  out[0] = '\0';
  if (spmv_matrix_decision_json(m, &text) < 0)
    return;
  root = json_loads(text, 0, NULL);
  free(text);
  steps = root ? json_object_get(root, "steps") : NULL;
  if (json_is_object(steps)) {
    json_object_foreach(steps, key, v) {
      char val[64];
      char *d;
      if (json_is_number(v))
        snprintf(val, sizeof val, "%.4g", json_number_value(v));
      else if (json_is_string(v))
        snprintf(val, sizeof val, "%s", json_string_value(v));
      else if ((d = json_dumps(v, JSON_COMPACT)) != NULL) {
        snprintf(val, sizeof val, "%s", d);
        free(d);
      } else
        snprintf(val, sizeof val, "?");
      if (len < n)
        len += (size_t)snprintf(out + len, n - len, "%s%s=%s", len ? " " : "",
                                key, val);
    }
  }
  json_decref(root);
}

/* The loads: r->first_ms (NAN when no first sight could be had) and
 * r->hit_ms; *m is the first load's matrix, used for the products. */
static int loads(struct spmv_client *c, const struct spmv_csr *A,
                 struct row *r, const void *val, struct spmv_matrix **m)
{
  struct spmv_matrix *h = NULL;

  if (bench_load_fresh(c, A, r->dt, val, r->name, "bench_service", m,
                       &r->first_ms) < 0)
    return -1;
  decision_steps(*m, r->steps_first, sizeof r->steps_first);
  if (bench_load_hit(c, A, r->dt, val, r->name, "bench_service", &h,
                     &r->hit_ms) < 0) {
    spmv_matrix_free(h);
    return -1;
  }
  decision_steps(h, r->steps_hit, sizeof r->steps_hit);
  spmv_matrix_free(h);
  return 0;
}

/* Client-observed products: device vectors, memfd, payload.  Each checked
 * before its timing; 0, 1 (FAIL) or -1. */
static int products(struct spmv_client *c, struct spmv_matrix *m,
                    const struct spmv_csr *A, struct row *r, const void *xt,
                    const double *ref, const double *mag)
{
  size_t es = spmv_dtype_size(r->dt);
  size_t xb = (size_t)A->cols * es, yb = (size_t)A->rows * es;
  struct spmv_vector *vx = NULL, *vy = NULL;
  double *t = malloc(sizeof *t * (size_t)reps), t0;
  void *y = malloc(yb + 1), *hx = NULL, *hy = NULL;
  int rc = -1, err = 0;

  if (!t || !y)
    goto out;
  /* Device vectors: x uploaded once, y poisoned (a fill, since NaN has no
   * JSON form) before the checked product. */
  if (spmv_vector_new(c, r->dt, A->cols, &vx) < 0 ||
      spmv_vector_new(c, r->dt, A->rows, &vy) < 0 ||
      spmv_vector_upload(vx, xt) < 0 || spmv_vector_fill(vy, 1e30) < 0 ||
      spmv_multiply_vec(m, 1.0, vx, 0.0, vy) < 0 ||
      spmv_vector_download(vy, y) < 0)
    goto cerr;
  if (check(A, r->dt, y, ref, mag, r->name, "device-vector product") < 0)
    goto bad;
  for (int i = -WARMUP; i < reps; i++) {
    t0 = bench_now_us();
    err |= spmv_multiply_vec(m, 1.0, vx, 0.0, vy);
    if (i >= 0)
      t[i] = bench_now_us() - t0;
  }
  if (err)
    goto cerr;
  r->dev = median_of(t, reps);
  poison(y, A->rows, r->dt);
  if (spmv_vector_download(vy, y) < 0)
    goto cerr;
  if (check(A, r->dt, y, ref, mag, r->name, "device-vector product, timed") < 0)
    goto bad;

  /* memfd vectors. */
  if (spmv_matrix_vectors(m, 1, &hx, &hy) < 0)
    goto cerr;
  memcpy(hx, xt, xb);
  poison(hy, A->rows, r->dt);
  if (spmv_multiply_inplace(m, 1.0, 0.0) < 0)
    goto cerr;
  if (check(A, r->dt, hy, ref, mag, r->name, "in-place product") < 0)
    goto bad;
  for (int i = -WARMUP; i < reps; i++) {
    t0 = bench_now_us();
    err |= spmv_multiply_inplace(m, 1.0, 0.0);
    if (i >= 0)
      t[i] = bench_now_us() - t0;
  }
  if (err)
    goto cerr;
  r->inpl = median_of(t, reps);
  if (check(A, r->dt, hy, ref, mag, r->name, "in-place product, timed") < 0)
    goto bad;

  /* Payload vectors. */
  poison(y, A->rows, r->dt);
  if (spmv_multiply(m, 1.0, xt, 0.0, y) < 0)
    goto cerr;
  if (check(A, r->dt, y, ref, mag, r->name, "payload product") < 0)
    goto bad;
  for (int i = -WARMUP; i < reps; i++) {
    t0 = bench_now_us();
    err |= spmv_multiply(m, 1.0, xt, 0.0, y);
    if (i >= 0)
      t[i] = bench_now_us() - t0;
  }
  if (err)
    goto cerr;
  r->pay = median_of(t, reps);
  if (check(A, r->dt, y, ref, mag, r->name, "payload product, timed") < 0)
    goto bad;
  rc = 0;
  goto out;
cerr:
  fprintf(stderr, "bench_service: %s %s: %s\n", r->name,
          spmv_dtype_name(r->dt), spmv_client_errmsg(c));
  goto out;
bad:
  rc = 1;
out:
  spmv_vector_free(vx);
  spmv_vector_free(vy);
  free(t);
  free(y);
  return rc;
}

/* CG through spmvd: b uploaded once; each block restarts from x = 0,
 * r = p = b (one untimed list), then BS_CG_BLOCK iterations, one list
 * each, rebuilt with the host's rho. */
static int cg_spmvd(struct spmv_client *c, struct spmv_matrix *m,
                    const struct spmv_csr *A, struct row *r, const double *b,
                    int blocks)
{
  struct spmv_vector *v[5] = {0}; /* b, x, r, p, q */
  struct spmv_vector *vb, *vx, *vr, *vp, *vq;
  struct spmv_oplist *l = NULL;
  double *per = malloc(sizeof *per * (size_t)(blocks + 1)), res[2], rho, t0;
  void *bt = bench_typed(b, A->rows, r->dt);
  int rc = -1;

  if (!per || !bt || spmv_oplist_new(c, &l) < 0)
    goto out;
  for (int i = 0; i < 5; i++)
    if (spmv_vector_new(c, r->dt, A->rows, &v[i]) < 0)
      goto cerr;
  vb = v[0], vx = v[1], vr = v[2], vp = v[3], vq = v[4];
  if (spmv_vector_upload(vb, bt) < 0)
    goto cerr;
  for (int k = 0; k <= blocks; k++) {
    spmv_oplist_clear(l);
    if (spmv_op_fill(l, vx, spmv_scalar_const(0.0)) < 0 ||
        spmv_op_copy(l, vb, vr) < 0 || spmv_op_copy(l, vb, vp) < 0 ||
        spmv_op_dot(l, vr, vr) < 0 || spmv_oplist_run(l, res, 1) < 0)
      goto cerr;
    rho = res[0];
    if (k == 0)
      r->res0 = sqrt(rho);
    t0 = bench_now_us();
    for (int it = 0; it < BS_CG_BLOCK; it++) {
      int ipq, irr;
      spmv_oplist_clear(l);
      if (spmv_op_spmv(l, m, 1.0, vp, 0.0, vq) < 0 ||
          (ipq = spmv_op_dot(l, vp, vq)) < 0 ||
          spmv_op_axpby(l, spmv_scalar_ratio(rho, -1, ipq), vp,
                        spmv_scalar_const(1.0), vx) < 0 ||
          spmv_op_axpby(l, spmv_scalar_ratio(-rho, -1, ipq), vq,
                        spmv_scalar_const(1.0), vr) < 0 ||
          (irr = spmv_op_dot(l, vr, vr)) < 0 ||
          spmv_op_axpby(l, spmv_scalar_const(1.0), vr,
                        spmv_scalar_ratio(1.0 / rho, irr, -1), vp) < 0 ||
          spmv_oplist_run(l, res, 2) < 0)
        goto cerr;
      rho = res[1];
      if (k == 0 && it + 1 == BS_CG_CHECK)
        r->res_s = sqrt(rho);
    }
    per[k] = (bench_now_us() - t0) / BS_CG_BLOCK;
  }
  r->cg_s = spmv_median(per + 1, (size_t)blocks);
  rc = 0;
  goto out;
cerr:
  fprintf(stderr, "bench_service: %s %s: CG: %s\n", r->name,
          spmv_dtype_name(r->dt), spmv_client_errmsg(c));
out:
  for (int i = 0; i < 5; i++)
    spmv_vector_free(v[i]);
  spmv_oplist_free(l);
  free(per);
  free(bt);
  return rc;
}

/* CG as one server-side solve (spmv_solve_vec) of a fixed count of
 * iterations (rtol 0 never stops it early): the client-observed time per
 * iteration, and the worker's own. */
#define BS_SOLVE_ITERS 200
static int cg_solve(struct spmv_client *c, struct spmv_matrix *m,
                    const struct spmv_csr *A, struct row *r, const double *b)
{
  struct spmv_vector *vb = NULL, *vx = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result res;
  void *bt = bench_typed(b, A->rows, r->dt);
  int rc = -1;

  spmv_solve_options_init(&o);
  o.maxiter = BS_SOLVE_ITERS;
  o.rtol = 1e-300;
  if (!bt || spmv_vector_new(c, r->dt, A->rows, &vb) < 0 ||
      spmv_vector_new(c, r->dt, A->rows, &vx) < 0 ||
      spmv_vector_upload(vb, bt) < 0)
    goto out;
  for (int k = 0; k < 2; k++) {  /* the first as a warm-up */
    if (spmv_vector_fill(vx, 0.0) < 0)
      goto out;
    double t0 = bench_now_us();
    if (spmv_solve_vec(m, vb, vx, &o, &res) < 0)
      goto out;
    r->solve_us = (bench_now_us() - t0) / (double)(res.iterations ? res.iterations : 1);
    r->solve_worker_us = res.us_per_iteration;
  }
  rc = 0;
out:
  if (rc < 0)
    fprintf(stderr, "bench_service: %s %s: solve: %s\n", r->name,
            spmv_dtype_name(r->dt), spmv_client_errmsg(c));
  spmv_vector_free(vb);
  spmv_vector_free(vx);
  free(bt);
  return rc;
}

/* Both CGs' residuals after BS_CG_CHECK iterations agree: within 1e-6
 * (f64) or 1e-2 (f32) of the larger, both finite. */
static int cg_agree(const struct row *r)
{
  double tol = r->dt == SPMV_F64 ? 1e-6 : 1e-2;
  double big = fmax(r->res_s, r->res_in);

  return isfinite(r->res_s) && isfinite(r->res_in) &&
         fabs(r->res_s - r->res_in) <= tol * big + 1e-30 * r->res0;
}

/* Everything for A in dt: 0, 1 (a wrong product: stop) or -1. */
static int bench_pair(struct spmv_client *c, const struct spmv_csr *A,
                      struct row *r)
{
  size_t es = spmv_dtype_size(r->dt);
  double *x = malloc(sizeof *x * (size_t)(A->cols + 1));
  double *ref = malloc(sizeof *ref * (size_t)(A->rows + 1));
  double *mag = malloc(sizeof *mag * (size_t)(A->rows + 1));
  double *b = malloc(sizeof *b * (size_t)(A->rows + 1));
  void *val = bench_typed(A->val, A->nnz, r->dt), *xt = NULL;
  struct spmv_matrix *m = NULL;
  struct spmv_info info;
  int blocks = reps / BS_CG_BLOCK < 3 ? 3 : reps / BS_CG_BLOCK, rc = -1, k;

  r->rows = A->rows, r->cols = A->cols, r->nnz = A->nnz;
  r->cg_s = r->cg_in = r->res_s = r->res_in = NAN;
  r->solve_us = r->solve_worker_us = NAN;
  if (!x || !ref || !mag || !b || !val)
    goto out;
  gpu_random_vector(x, A->cols, 99);
  gpu_random_vector(b, A->rows, 7);
  gpu_reference(A, x, ref, mag);
  if (!(xt = bench_typed(x, A->cols, r->dt)))
    goto out;
  if (loads(c, A, r, val, &m) < 0 || spmv_info(m, &info) < 0)
    goto out;
  snprintf(r->config, sizeof r->config, "%s", info.config);
  r->k_spmvd = info.time_us;
  if ((k = bsg_kernel(A, r->dt, info.config, x, ref, mag, &r->k_in,
                      &r->k_flush)) != 0 ||
      (k = products(c, m, A, r, xt, ref, mag)) != 0) {
    rc = k;
    goto out;
  }
  if (bsg_copies((size_t)A->cols * es, (size_t)A->rows * es, &r->h2d,
                 &r->d2h) < 0 ||
      bsg_cusparse_setup(A, r->dt, &r->cs_ms) < 0)
    goto out;
  r->bound = r->k_in + r->h2d + r->d2h;
  if (A->rows == A->cols) {
    if (cg_spmvd(c, m, A, r, b, blocks) < 0 ||
        bsg_cg(A, r->dt, b, blocks, &r->res_in, &r->cg_in) < 0 ||
        cg_solve(c, m, A, r, b) < 0)
      goto out;
    if (!cg_agree(r)) {
      fprintf(stderr, "FAIL: %s %s: CG residual after %d iterations: spmvd "
              "%.9g, in-process %.9g (from %.9g)\n", r->name,
              spmv_dtype_name(r->dt), BS_CG_CHECK, r->res_s, r->res_in, r->res0);
      failed = 1;
    }
  }
  rc = 0;
out:
  spmv_matrix_free(m);
  free(x);
  free(ref);
  free(mag);
  free(b);
  free(val);
  free(xt);
  return rc;
}

static const char *const cols_tsv[] = {
  "matrix", "dtype", "rows", "nnz", "config", "kernel_us_spmvd",
  "kernel_us_inproc", "dev_vec_us", "dev_vec_pct", "inplace_us", "payload_us",
  "host_bound_us", "host_pct", "cg_spmvd_us", "cg_inproc_us", "cg_ratio",
  "load_first_ms", "load_hit_ms", "cusparse_setup_ms", "hit_ratio",
  "kernel_us_inproc_l2flushed", "h2d_us", "d2h_us", "cg_res0",
  "cg_res1_spmvd", "cg_res1_inproc", "steps_first", "steps_hit",
  "cg_solve_us", "cg_solve_worker_us", NULL
};

static void print_head(FILE *f, const char *pre)
{
  fprintf(f, "%s%-22s %-3s %9s %10s %-30s %8s %8s %8s %6s %8s %8s %8s %6s "
          "%8s %8s %6s %9s %8s %8s %6s\n", pre, "matrix", "dt", "rows", "nnz",
          "config", "k_spmvd", "k_inproc", "dev_vec", "dev%", "inplace",
          "payload", "h_bound", "host%", "cg_spmvd", "cg_inpr", "cg_x",
          "load1_ms", "hit_ms", "cs_ms", "hit_x");
}

static void print_row(const struct row *r, FILE *tsv)
{
  double devpct = 100.0 * r->k_in / r->dev, hpct = 100.0 * r->bound / r->inpl;
  double cgx = r->cg_s / r->cg_in, hitx = r->hit_ms / r->cs_ms;
  const double v[] = { r->k_spmvd, r->k_in, r->dev, devpct, r->inpl, r->pay,
                       r->bound, hpct, r->cg_s, r->cg_in, cgx, r->first_ms,
                       r->hit_ms, r->cs_ms, hitx };
  const int w[] = { 8, 8, 8, 6, 8, 8, 8, 6, 8, 8, 6, 9, 8, 8, 6 };
  const int prec[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 2 };

  printf("%-22s %-3s %9lld %10lld %-30s", r->name, spmv_dtype_name(r->dt),
         (long long)r->rows, (long long)r->nnz, r->config);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    bench_cell(v[i], w[i], prec[i]);
  putchar('\n');
  if (r->steps_first[0] || r->steps_hit[0])
    printf("  steps: first {%s} hit {%s}\n", r->steps_first, r->steps_hit);
  if (isfinite(r->solve_us))
    printf("  solve: cg, %d iterations in one request: %.1f us an iteration "
           "(the worker's %.1f), %.2fx the in-process one\n", BS_SOLVE_ITERS,
           r->solve_us, r->solve_worker_us, r->solve_us / r->cg_in);
  fflush(stdout);
  if (!tsv)
    return;
  fprintf(tsv, "%s\t%s\t%lld\t%lld\t%s\t%.2f\t%.2f\t%.2f\t%.1f\t%.2f\t%.2f\t"
          "%.2f\t%.1f\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\t"
          "%.2f\t%.9g\t%.9g\t%.9g\t%s\t%s\t%.2f\t%.2f\n", r->name, spmv_dtype_name(r->dt),
          (long long)r->rows, (long long)r->nnz, r->config, r->k_spmvd,
          r->k_in, r->dev, devpct, r->inpl, r->pay, r->bound, hpct, r->cg_s,
          r->cg_in, cgx, r->first_ms, r->hit_ms, r->cs_ms, hitx, r->k_flush,
          r->h2d, r->d2h, r->res0, r->res_s, r->res_in, r->steps_first,
          r->steps_hit, r->solve_us, r->solve_worker_us);
  fflush(tsv);
}

static void header(FILE *f, const char *pre, const char *dev, const char *ver)
{
  char date[64];
  time_t now = time(NULL);

  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  fprintf(f,
    "%sbench_service: device %s; %s; kernels v%d; %s\n"
    "%smethod: client times CLOCK_MONOTONIC around each call, median of %d "
    "after %d warm-up; in-process kernel and copies CUDA events, median of %d "
    "after 3 warm-up (k_inproc back to back; L2-flushed in the TSV); every "
    "product checked against a double CSR reference on x in +-[0.5,1.5) "
    "before timing\n"
    "%sdev%% = k_inproc / dev_vec; h_bound = k_inproc + x up + y down at the "
    "pinned copy speed of now; host%% = h_bound / inplace; cg = us per "
    "iteration (one op list vs cuSPARSE ALG_DEFAULT + cuBLAS pointer mode "
    "host, wall clock over blocks of %d with the sync), cg_x = spmvd / "
    "in-process; load1 = first sight (daemon's default strategy), hit = "
    "second load, cs = in-process cuSPARSE set-up from pageable memory "
    "(median of 3), hit_x = hit / cs\n"
    "%stargets (judged, not asserted): dev%% >= 90 for nnz >= 10M and "
    "dev_vec <= k_inproc + 15 us always; host%% >= 70; cg_x <= 1.1; "
    "hit_x <= 2\n", pre, dev, ver, SPMV_KERNEL_VERSION, date, pre, reps,
    WARMUP, reps, pre, BS_CG_BLOCK, pre);
}

static void usage(FILE *f)
{
  fprintf(f,
    "usage: bench_service [-m NAMES] [-t f32|f64|both] [-r REPS] [-s SOCKET]\n"
    "                     [-o FILE] [-d DIR]\n"
    "  -m  only matrices whose name contains one of NAMES (comma-separated)\n"
    "  -t  value types (default both)     -r  timed runs per measurement (50)\n"
    "  -s  an running spmvd's socket (default: start a private one, cuda\n"
    "      backend, empty cache)          -o  also write the rows as TSV\n"
    "  -d  matrix folder (default $SPMV_MATRICES, else tests/data/matrices)\n"
    "Matrices: the large and paper suites with 1M to 100M entries.\n");
}

int main(int argc, char **argv)
{
  static const struct option lopts[] = { {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0} };
  char dev[256], ver[256];
  const char *path = NULL, *only = NULL, *out = NULL, *dir = NULL;
  struct spmv_client *c;
  struct bench_svc svc;
  struct bench_suite s = {0};
  struct spmv_error err = {0};
  FILE *tsv = NULL;
  int dts = 3, opt, rc = 0;

  while ((opt = getopt_long(argc, argv, "m:t:r:s:o:d:h", lopts, NULL)) != -1) {
    switch (opt) {
    case 'm': only = optarg; break;
    case 't': dts = bench_dtypes(optarg); break;
    case 'r': reps = atoi(optarg); break;
    case 's': path = optarg; break;
    case 'o': out = optarg; break;
    case 'd': dir = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc || dts == 0 || reps < 1 || reps > 10000) {
    usage(stderr);
    return 2;
  }
  if ((rc = bsg_init(reps, dev, sizeof dev, ver, sizeof ver)) != 0)
    return rc;
  if (bench_suite_init(&s, BENCH_SUITE_LARGE | BENCH_SUITE_PAPER, 0, only, dir, &err) < 0) {
    fprintf(stderr, "bench_service: %s\n", err.msg);
    return 1;
  }
  if (out && !(tsv = fopen(out, "w"))) {
    fprintf(stderr, "bench_service: %s: %s\n", out, strerror(errno));
    return 1;
  }
  if (bench_svc_open(&svc, "bench_service", SPMV_BENCH_SPMVD, "cuda",
                     path) < 0) {
    rc = 1;
    goto done;
  }
  c = svc.c;
  header(stdout, "# ", dev, ver);
  if (tsv) {
    header(tsv, "# ", dev, ver);
    bench_tsv_head(tsv, cols_tsv);
  }
  print_head(stdout, "");
  for (size_t i = 0; i < s.n && rc == 0; i++) {
    struct spmv_csr *A = bench_suite_make(&s.e[i], dir, &err);
    if (!A) {
      fprintf(stderr, "bench_service: %s: %s: skipped\n", s.e[i].name,
              err.msg);
      failed = 1;
      continue;
    }
    if (A->nnz < 1000000 || A->nnz > 100000000) {
      fprintf(stderr, "bench_service: %s: %lld entries, outside 1M-100M: "
              "skipped\n", s.e[i].name, (long long)A->nnz);
      spmv_csr_free(A);
      continue;
    }
    for (int d = 2; d >= 1 && rc == 0; d--) {
      struct row r;
      int k;
      if (!(dts & d))
        continue;
      memset(&r, 0, sizeof r);
      r.name = s.e[i].name;
      r.dt = d == 1 ? SPMV_F32 : SPMV_F64;
      /* A wrong product stops the run; a failure to measure skips on. */
      if ((k = bench_pair(c, A, &r)) < 0) {
        fprintf(stderr, "bench_service: %s %s: could not be measured\n",
                r.name, spmv_dtype_name(r.dt));
        failed = 1;
      } else if (k > 0) {
        rc = 1;
      } else {
        print_row(&r, tsv);
      }
    }
    spmv_csr_free(A);
  }
done:
  bench_svc_close(&svc);
  if (tsv)
    fclose(tsv);
  bench_suite_fini(&s);
  bsg_fini();
  return rc || failed;
}
