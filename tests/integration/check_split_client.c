/* check_split_client.c: split matrices through libspmvclient (issue 54),
 * against a daemon of three cpu workers (check_gpu_split.sh: a cuda worker
 * per GPU): spmv_load_options.split, the blocks a load reports, products
 * and every solver's method on the blocks against the reference and the
 * unsplit solve, cancels, and the refusals' messages. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"
#include "spmvctl_exec.h"

/* The daemon's workers: three cpu workers, or on the cuda backend
 * (check_gpu_split.sh) one per GPU. */
static int nw = 3;

static struct itest_daemon d;
static struct spmv_client *c;

#define on_gpus itest_split_on_gpus

/* Every worker ready; nw counts them. */
static void wait_workers(void)
{
  nw = itest_split_wait(&d, 3);
}

static void setup(void)
{
  itest_daemon_init(&d);
  ck_assert_int_eq(itest_daemon_start(&d, itest_split_workers_arg(3)), 0);
  wait_workers();
  ck_assert_int_eq(spmv_connect(d.sock, &c), 0);
}

static void teardown(void)
{
  spmv_disconnect(c);
  itest_daemon_fini(&d);
}

/* A's values in f32. */
static float *to_f32(const struct spmv_csr *A)
{
  float *v = malloc(sizeof *v * (size_t)(A->nnz ? A->nnz : 1));
  ck_assert_ptr_nonnull(v);
  for (int64_t k = 0; k < A->nnz; k++)
    v[k] = (float)A->val[k];
  return v;
}

/* Loads A in dtype over split blocks; returns the call's code. */
static int load(const struct spmv_csr *A, enum spmv_dtype dt, int split,
                struct spmv_matrix **m)
{
  struct spmv_load_options o;
  float *v32 = dt == SPMV_F32 ? to_f32(A) : NULL;

  spmv_load_options_init(&o);
  o.split = split;
  int rc = spmv_load_csr(c, dt, A->rows, A->cols, A->nnz, A->row_ptr, A->col_idx,
                         v32 ? (const void *)v32 : (const void *)A->val, &o, m);
  free(v32);
  return rc;
}

/* Products of m (A in dt) on random x against the reference in double. */
static void products_ok(struct spmv_matrix *m, const struct spmv_csr *A,
                        enum spmv_dtype dt)
{
  size_t n = (size_t)A->rows, es = dt == SPMV_F32 ? 4 : 8;
  double *xd = malloc(n * 8), *yd = malloc(n * 8), *y0 = malloc(n * 8);
  void *x = malloc(n * es), *y = malloc(n * es);
  double tol = dt == SPMV_F32 ? 1e-4 : 1e-12;

  ck_assert(xd && yd && y0 && x && y);
  for (unsigned seed = 1; seed <= 3; seed++) {
    srand(seed);
    for (size_t i = 0; i < n; i++) {
      xd[i] = (double)rand() / RAND_MAX - 0.5;
      y0[i] = (double)rand() / RAND_MAX - 0.5;
      if (dt == SPMV_F32) {
        xd[i] = (float)xd[i];
        y0[i] = (float)y0[i];
        ((float *)x)[i] = (float)xd[i];
        ((float *)y)[i] = (float)y0[i];
      } else {
        ((double *)x)[i] = xd[i];
        ((double *)y)[i] = y0[i];
      }
    }
    memcpy(yd, y0, n * 8);
    spmv_csr_ref(A, 2.0, xd, 0.5, yd);
    ck_assert_int_eq(spmv_multiply(m, 2.0, x, 0.5, y), 0);
    double err = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
      double got = dt == SPMV_F32 ? ((float *)y)[i] : ((double *)y)[i];
      err = fmax(err, fabs(got - yd[i]));
      scale = fmax(scale, fabs(yd[i]));
    }
    ck_assert_msg(err <= tol * (scale > 1 ? scale : 1), "seed %u: error %g (scale %g)",
                  seed, err, scale);
  }
  free(xd);
  free(yd);
  free(y0);
  free(x);
  free(y);
}

/* A 2-D Laplacian on a g x g grid whose diagonal grows along the rows
 * (4 + i % 7 * 50): SPD, and diagonally scaled so that Jacobi pays. */
static struct spmv_csr *scaled_laplacian(int64_t g)
{
  int64_t n = g * g, k = 0;
  struct spmv_csr *A = spmv_csr_new(n, n, 5 * n);

  ck_assert_ptr_nonnull(A);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = i / g, col = i % g;
    int64_t nb[5] = {r > 0 ? i - g : -1, col > 0 ? i - 1 : -1, i,
                     col < g - 1 ? i + 1 : -1, r < g - 1 ? i + g : -1};
    A->row_ptr[i] = k;
    for (int j = 0; j < 5; j++)
      if (nb[j] >= 0) {
        A->col_idx[k] = (int32_t)nb[j];
        A->val[k++] = nb[j] == i ? 4.0 + (double)(i % 7) * 50.0 : -1.0;
      }
  }
  A->row_ptr[n] = k;
  A->nnz = k;
  return A;
}

/* scaled_laplacian(g) with a convection term: the east and west
 * neighbours' entries -1.3 and -0.7, so that the matrix is not symmetric
 * (still diagonally dominant). */
static struct spmv_csr *convection(int64_t g)
{
  struct spmv_csr *A = scaled_laplacian(g);

  for (int64_t i = 0; i < A->rows; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      if (A->col_idx[k] == i + 1)
        A->val[k] = -1.3;
      else if (A->col_idx[k] == i - 1)
        A->val[k] = -0.7;
  return A;
}

/* Solves A x = b with method on m; returns the iterations, after checking
 * convergence and ||b - A x|| / ||b|| against the reference product. */
static int64_t solve_ok(struct spmv_matrix *m, const struct spmv_csr *A,
                        const char *method, const double *b)
{
  size_t n = (size_t)A->rows;
  double *x = calloc(n, sizeof *x), *y = malloc(n * sizeof *y);
  struct spmv_solve_options o;
  struct spmv_solve_result r;

  ck_assert(x && y);
  spmv_solve_options_init(&o);
  o.method = method;
  o.rtol = 1e-10;
  ck_assert_int_eq(spmv_solve(m, b, x, 0, &o, &r), 0);
  ck_assert_msg(r.converged, "%s: %s after %lld iterations", method, r.reason,
                (long long)r.iterations);
  spmv_csr_ref(A, 1.0, x, 0.0, y);
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += (b[i] - y[i]) * (b[i] - y[i]);
    den += b[i] * b[i];
  }
  ck_assert_msg(sqrt(num / den) <= 1e-9, "%s: relative residual %g", method,
                sqrt(num / den));
  free(x);
  free(y);
  return r.iterations;
}

/* spmv_load_options.split: the blocks the load reports, products right in
 * both types; 0 and 1 leave the matrix whole. */
START_TEST(split_option)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_matrix *m;

  for (int split = 0; split <= nw; split++)
    for (int f32 = 0; f32 <= 1; f32++) {
      enum spmv_dtype dt = f32 ? SPMV_F32 : SPMV_F64;
      ck_assert_int_eq(load(A, dt, split, &m), 0);
      ck_assert_int_eq(spmv_matrix_blocks(m), split > 1 ? split : 1);
      products_ok(m, A, dt);
      spmv_matrix_free(m);
    }
  spmv_csr_free(A);
}
END_TEST

/* What cannot be split is refused with why, and the client goes on. */
START_TEST(split_refused)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx"), *R = itest_matrix("lp_e226.mtx");
  struct spmv_matrix *m = NULL;

  ck_assert_int_eq(load(A, SPMV_F64, -1, &m), SPMV_EINVAL);
  ck_assert_ptr_null(m);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "split is -1"), "%s", spmv_client_errmsg(c));
  char runs[32];
  snprintf(runs, sizeof runs, "%d workers", nw);
  ck_assert_int_eq(load(A, SPMV_F64, nw + 1, &m), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), runs), "%s", spmv_client_errmsg(c));
  ck_assert_int_eq(load(R, SPMV_F64, 2, &m), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "square"), "%s", spmv_client_errmsg(c));
  ck_assert_int_eq(load(A, SPMV_F64, 2, &m), 0);
  products_ok(m, A, SPMV_F64);
  spmv_matrix_free(m);
  spmv_csr_free(R);
  spmv_csr_free(A);
}
END_TEST

/* Each method of a split solve on 1 (unsplit), 2 and 3 blocks of A:
 * all reach the tolerance against the reference product, the split ones
 * in about the unsplit solve's iterations (their sums run in another
 * order); the iterations of the unsplit solves in whole[]. */
static void methods_ok(const struct spmv_csr *A, const char *const *methods,
                       int nm, const double *b, int64_t *whole)
{
  struct spmv_matrix *m;

  for (int n = 1; n <= nw; n++) {
    ck_assert_int_eq(load(A, SPMV_F64, n, &m), 0);
    ck_assert_int_eq(spmv_matrix_blocks(m), n);
    for (int k = 0; k < nm; k++) {
      int64_t it = solve_ok(m, A, methods[k], b);
      if (n == 1)
        whole[k] = it;
      ck_assert_msg(llabs(it - whole[k]) <= whole[k] / 5 + 2,
                    "%s on %d blocks: %lld iterations, unsplit %lld", methods[k],
                    n, (long long)it, (long long)whole[k]);
    }
    spmv_matrix_free(m);
  }
}

/* CG, PCG-Jacobi, BiCGStab and GMRES on the scaled Laplacian (Jacobi
 * takes fewer iterations than CG there), BiCGStab and GMRES on a matrix
 * that is not symmetric. */
START_TEST(split_solves)
{
  static const char *const methods[] = {"cg", "pcg-jacobi", "bicgstab", "gmres"};
  struct spmv_csr *A = scaled_laplacian(40), *C = convection(40);
  double *b = malloc(sizeof *b * (size_t)A->rows);
  int64_t whole[4];

  ck_assert_ptr_nonnull(b);
  srand(11);
  for (int64_t i = 0; i < A->rows; i++)
    b[i] = (double)rand() / RAND_MAX - 0.5;
  methods_ok(A, methods, 4, b, whole);
  ck_assert_msg(whole[1] < whole[0], "pcg-jacobi %lld iterations, cg %lld",
                (long long)whole[1], (long long)whole[0]);
  methods_ok(C, methods + 2, 2, b, whole);
  spmv_csr_free(C);
  /* The reply names the method that ran. */
  int s = itest_open(&d);
  json_t *r = itest_load_split(s, 1, A, 0, 2);
  int64_t h = itest_handle(r);
  json_decref(r);
  r = itest_call(s, json_pack("{ss si sI ss}", "op", "solve", "id", 2, "handle",
                              (json_int_t)h, "method", "pcg-jacobi"),
                 b, sizeof *b * (size_t)A->rows, NULL, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(r, "method")), "pcg-jacobi");
  json_decref(r);
  close(s);
  free(b);
  spmv_csr_free(A);
}
END_TEST

/* PCG-Jacobi on a split matrix with a zero diagonal entry in its last
 * block: EINVAL naming the row, as unsplit; the matrix still solves CG. */
START_TEST(split_jacobi_zero_diagonal)
{
  struct spmv_csr *A = scaled_laplacian(30);
  int64_t bad = A->rows - 7;
  double *b = malloc(sizeof *b * (size_t)A->rows), *x = calloc((size_t)A->rows, 8);
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  struct spmv_matrix *m;
  char want[64];

  ck_assert(b && x);
  for (int64_t k = A->row_ptr[bad]; k < A->row_ptr[bad + 1]; k++)
    if (A->col_idx[k] == bad)
      A->val[k] = 0.0;
  for (int64_t i = 0; i < A->rows; i++)
    b[i] = 1.0;
  snprintf(want, sizeof want, "row %lld", (long long)bad);
  for (int split = 1; split <= nw; split += nw - 1) {
    ck_assert_int_eq(load(A, SPMV_F64, split, &m), 0);
    spmv_solve_options_init(&o);
    o.method = "pcg-jacobi";
    ck_assert_int_eq(spmv_solve(m, b, x, 0, &o, &r), SPMV_EINVAL);
    ck_assert_msg(strstr(spmv_client_errmsg(c), want), "split %d: %s", split,
                  spmv_client_errmsg(c));
    products_ok(m, A, SPMV_F64);
    spmv_matrix_free(m);
  }
  free(b);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* The plain Laplacian of a g x g grid (diagonal 4): its condition grows
 * as g^2, so that CG at rtol 0 on a large grid runs for tens of thousands
 * of iterations before its residual's square underflows. */
static struct spmv_csr *plain_laplacian(int64_t g)
{
  struct spmv_csr *A = scaled_laplacian(g);

  for (int64_t i = 0; i < A->rows; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      if (A->col_idx[k] == i)
        A->val[k] = 4.0;
  return A;
}

static void count_progress(const struct spmv_progress *p, void *arg)
{
  int64_t *last = arg;

  ck_assert_str_eq(p->stage, "solve");
  ck_assert_int_eq(p->done, *last + 5);  /* every 5 iterations, in order */
  ck_assert(p->residual > 0);
  *last = p->done;
}

/* A split solve's history and progress, as the unsplit solve's: the same
 * residuals within rounding, one per iteration, and an event every 5
 * iterations; and a split solve in f32. */
START_TEST(split_history)
{
  struct spmv_csr *A = scaled_laplacian(30);
  size_t n = (size_t)A->rows;
  double *b = malloc(n * 8), *x = calloc(n, 8);
  struct spmv_solve_options o;
  struct spmv_solve_result r1, r;
  struct spmv_matrix *m;
  int64_t last;

  ck_assert(b && x);
  for (size_t i = 0; i < n; i++)
    b[i] = 1.0 + (double)(i % 3);
  spmv_solve_options_init(&o);
  o.method = "cg";
  o.history = 1;
  o.progress_every = 5;
  o.progress = count_progress;
  o.progress_arg = &last;
  for (int split = 1; split <= 2; split++) {
    last = 0;
    ck_assert_int_eq(load(A, SPMV_F64, split, &m), 0);
    memset(x, 0, n * 8);
    ck_assert_int_eq(spmv_solve(m, b, x, 0, &o, split == 1 ? &r1 : &r), 0);
    spmv_matrix_free(m);
    struct spmv_solve_result *q = split == 1 ? &r1 : &r;
    ck_assert(q->converged);
    ck_assert_int_eq(q->nhistory, q->iterations);
    ck_assert_int_eq(last, q->iterations / 5 * 5);
  }
  /* Sums in another order: the residuals part by rounding only, which
   * the iterations amplify (1e-6 relative here). */
  ck_assert_int_eq(r.iterations, r1.iterations);
  for (int64_t i = 0; i < r.nhistory; i++)
    ck_assert_msg(fabs(r.history[i] - r1.history[i]) <= 1e-6 * r1.history[i],
                  "iteration %lld: %.17g, unsplit %.17g", (long long)i,
                  r.history[i], r1.history[i]);
  free(r1.history);
  free(r.history);
  /* f32: the blocks iterate in double on the matrix's f32 products; the
   * solution, in float, meets f32's default tolerance against the
   * reference product of the float values. */
  struct spmv_csr *A32 = spmv_csr_new(A->rows, A->cols, A->nnz);
  float *b32 = malloc(n * 4), *x32 = malloc(n * 4);
  double *xd = malloc(n * 8), *y = malloc(n * 8);
  ck_assert(A32 && b32 && x32 && xd && y);
  memcpy(A32->row_ptr, A->row_ptr, sizeof *A->row_ptr * (size_t)(A->rows + 1));
  memcpy(A32->col_idx, A->col_idx, sizeof *A->col_idx * (size_t)A->nnz);
  for (int64_t k = 0; k < A->nnz; k++)
    A32->val[k] = (float)A->val[k];
  for (size_t i = 0; i < n; i++)
    b32[i] = (float)b[i];
  o.history = 0;
  o.progress = NULL;
  o.rtol = 0;  /* f32's default, 1e-5 */
  ck_assert_int_eq(load(A, SPMV_F32, 2, &m), 0);
  ck_assert_msg(spmv_solve(m, b32, x32, 0, &o, &r) == 0, "%s", spmv_client_errmsg(c));
  spmv_matrix_free(m);
  ck_assert_msg(r.converged, "f32: %s after %lld", r.reason, (long long)r.iterations);
  for (size_t i = 0; i < n; i++)
    xd[i] = x32[i];
  spmv_csr_ref(A32, 1.0, xd, 0.0, y);
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += ((double)b32[i] - y[i]) * ((double)b32[i] - y[i]);
    den += (double)b32[i] * b32[i];
  }
  ck_assert_msg(sqrt(num / den) <= 1e-5, "f32: relative residual %g", sqrt(num / den));
  free(b32);
  free(x32);
  free(xd);
  free(y);
  spmv_csr_free(A32);
  free(b);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* PageRank on 2 and 3 blocks: the unsplit solution within rounding (sums
 * in another order), summing to 1, in as many iterations give or take
 * one; negative edge weights are the same EINVAL split as unsplit. */
START_TEST(split_pagerank)
{
  struct spmv_csr *G = itest_matrix("email-Eu-core.mtx"), *A = itest_matrix("bcsstk13.mtx");
  size_t n = (size_t)G->rows;
  double *x1 = malloc(n * 8), *x = malloc(n * 8);
  struct spmv_solve_options o;
  struct spmv_solve_result r1, r;
  struct spmv_matrix *m;

  ck_assert(x1 && x);
  spmv_solve_options_init(&o);
  o.method = "pagerank";
  o.maxiter = 1000;
  for (int split = 1; split <= nw; split++) {
    ck_assert_int_eq(load(G, SPMV_F64, split, &m), 0);
    ck_assert_int_eq(spmv_solve(m, NULL, split == 1 ? x1 : x, 0, &o,
                                split == 1 ? &r1 : &r), 0);
    spmv_matrix_free(m);
    if (split == 1)
      continue;
    ck_assert_msg(r.converged && llabs(r.iterations - r1.iterations) <= 1,
                  "split %d: %s after %lld iterations, unsplit %lld", split,
                  r.reason, (long long)r.iterations, (long long)r1.iterations);
    double diff = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
      diff += fabs(x[i] - x1[i]);
      sum += x[i];
    }
    ck_assert_msg(diff <= 1e-12 && fabs(sum - 1) <= 1e-12,
                  "split %d: |x - x_unsplit|_1 %g, sum %.15f", split, diff, sum);
  }
  ck_assert_int_eq(load(A, SPMV_F64, 2, &m), 0);
  ck_assert_int_eq(spmv_solve(m, NULL, x, 0, &o, &r), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "edge weights"), "%s",
                spmv_client_errmsg(c));
  products_ok(m, A, SPMV_F64);
  spmv_matrix_free(m);
  free(x1);
  free(x);
  spmv_csr_free(G);
  spmv_csr_free(A);
}
END_TEST

/* Cancels the solve of c after delay_us, and again every 50 ms until it
 * has returned (a cancel while no solve runs does nothing: the solve may
 * not have reached the daemon yet on a loaded machine). */
struct canceller {
  pthread_t t;
  struct spmv_client *c;
  useconds_t delay_us;
  _Atomic int done;
};

static void *cancel_later(void *arg)
{
  struct canceller *k = arg;

  usleep(k->delay_us);
  while (!atomic_load(&k->done)) {
    spmv_solve_cancel(k->c);
    usleep(50000);
  }
  return NULL;
}

static void canceller_start(struct canceller *k, useconds_t delay_us)
{
  k->c = c;
  k->delay_us = delay_us;
  atomic_store(&k->done, 0);
  ck_assert_int_eq(pthread_create(&k->t, NULL, cancel_later, k), 0);
}

static void canceller_stop(struct canceller *k)
{
  atomic_store(&k->done, 1);
  pthread_join(k->t, NULL);
}

/* A split CG that would run for seconds (rtol 1e-300 on a 90000-row grid),
 * cancelled from another thread: it returns with reason "cancelled", the iterations done and x as
 * it is, whose residual the reply gives; then a hang-up in the middle of
 * another frees the blocks' workers for the next request. */
START_TEST(split_cancel)
{
  struct spmv_csr *A = plain_laplacian(300);
  size_t n = (size_t)A->rows;
  double *b = malloc(n * 8), *x = calloc(n, 8), *y = malloc(n * 8);
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  struct spmv_matrix *m;
  struct canceller k;

  ck_assert(b && x && y);
  for (size_t i = 0; i < n; i++)
    b[i] = 1.0 + (double)(i % 5);
  ck_assert_int_eq(load(A, SPMV_F64, nw, &m), 0);
  spmv_solve_options_init(&o);
  o.rtol = 1e-300;  /* 0 would be the default; this one only an underflow meets */
  o.atol = 0;
  o.maxiter = (int64_t)1 << 40;
  canceller_start(&k, 300000);
  ck_assert_int_eq(spmv_solve(m, b, x, 0, &o, &r), 0);
  canceller_stop(&k);
  ck_assert_str_eq(r.reason, "cancelled");
  ck_assert(!r.converged && r.iterations > 0);
  spmv_csr_ref(A, 1.0, x, 0.0, y);
  double res = 0;
  for (size_t i = 0; i < n; i++)
    res += (b[i] - y[i]) * (b[i] - y[i]);
  res = sqrt(res);
  ck_assert_msg(fabs(res - r.residual) <= 1e-8 * (res > 1 ? res : 1),
                "residual %g, the reply's %g", res, r.residual);
  products_ok(m, A, SPMV_F64);

  /* The same solve from a raw connection that then hangs up: the blocks
   * stop (the daemon says so), and m, on the same workers, multiplies. */
  int s = itest_open(&d);
  json_t *lr = itest_load_split(s, 1, A, 0, nw);
  int64_t h = itest_handle(lr);
  json_decref(lr);
  ck_assert_int_eq(itest_send(s, json_pack("{ss si sI ss sf sI}", "op", "solve",
                                           "id", 2, "handle", (json_int_t)h,
                                           "method", "cg", "rtol", 0.0,
                                           "maxiter", (json_int_t)1 << 40),
                              b, n * 8), 0);
  usleep(300000);
  close(s);
  ck_assert_msg(itest_log_wait(&d, "split solve was cancelled after", 10000) == 1,
                "no cancelled split solve in %s", d.log);
  ck_assert_msg(itest_log_wait(&d, "(its client went)", 10000) == 1,
                "the hung-up solve was not cancelled (log %s)", d.log);
  products_ok(m, A, SPMV_F64);
  spmv_matrix_free(m);
  free(b);
  free(x);
  free(y);
  spmv_csr_free(A);
}
END_TEST

/* The silence after which a worker counts as hung, here: 2 s, 10 s on
 * GPUs (the limit bounds a worker's start too, and a CUDA context takes
 * seconds to make). */
static int short_timeout_s(void)
{
  return on_gpus() ? 10 : 2;
}

/* A daemon whose workers count as hung after short_timeout_s(). */
static void setup_short_timeout(void)
{
  itest_daemon_init(&d);
  char conf[64];
  snprintf(conf, sizeof conf, "device_timeout_s = %d\n", short_timeout_s());
  itest_daemon_config(&d, conf);
  ck_assert_int_eq(itest_daemon_start(&d, itest_split_workers_arg(3)), 0);
  wait_workers();
  ck_assert_int_eq(spmv_connect(d.sock, &c), 0);
}

/* A split solve that never converges (GMRES on a singular Laplacian with
 * Neumann boundaries, b of nonzero mean: its residual never falls below
 * b's part along the null space) runs for twice device_timeout_s: the
 * blocks' heartbeats, while they compute and while they wait for each
 * other, keep every worker from counting as hung, and the cancel ends it. */
/* The Laplacian of a g x g grid with Neumann boundaries (singular: each
 * diagonal its row's degree) and b all ones, whose part along the null
 * space no solve removes: GMRES on it never converges. */
static struct spmv_csr *never_converges(int64_t g, double **b)
{
  struct spmv_csr *A = plain_laplacian(g);

  *b = malloc((size_t)A->rows * 8);
  ck_assert_ptr_nonnull(*b);
  for (int64_t i = 0; i < A->rows; i++) {
    int64_t deg = 0, diag = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      if (A->col_idx[k] == i)
        diag = k;
      else
        deg++;
    A->val[diag] = (double)deg;
    (*b)[i] = 1.0;
  }
  return A;
}

START_TEST(split_heartbeats)
{
  double *b;
  struct spmv_csr *A = never_converges(40, &b);
  size_t n = (size_t)A->rows;
  double *x = calloc(n, 8);
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  struct spmv_matrix *m;
  struct canceller k;

  ck_assert(x);
  ck_assert_int_eq(load(A, SPMV_F64, nw, &m), 0);
  spmv_solve_options_init(&o);
  o.method = "gmres";
  o.maxiter = (int64_t)1 << 40;
  canceller_start(&k, (useconds_t)short_timeout_s() * 2000000);
  int rc = spmv_solve(m, b, x, 0, &o, &r);
  canceller_stop(&k);
  ck_assert_msg(rc == 0, "%s", spmv_client_errmsg(c));
  ck_assert_str_eq(r.reason, "cancelled");
  int s = itest_open(&d);
  json_t *st = itest_call(s, json_pack("{ss si}", "op", "status", "id", 1),
                          NULL, 0, NULL, NULL);
  json_t *w = json_object_get(st, "workers");
  ck_assert_int_eq((int)json_array_size(w), nw);
  for (size_t i = 0; i < json_array_size(w); i++) {
    json_t *wi = json_array_get(w, i);
    ck_assert_int_eq(json_integer_value(json_object_get(wi, "timeouts")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(wi, "restarts")), 0);
  }
  json_decref(st);
  close(s);
  products_ok(m, A, SPMV_F64);
  spmv_matrix_free(m);
  free(b);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* The other client of split_serves_others: its matrix, multiplied from
 * the solve's first progress event, then the solve cancelled. */
struct other {
  struct spmv_matrix *m;
  const struct spmv_csr *A;
  int products;
};

static void multiply_other(const struct spmv_progress *p, void *arg)
{
  struct other *o = arg;

  (void)p;
  if (o->products++ == 0) {
    products_ok(o->m, o->A, SPMV_F64);
    spmv_solve_cancel(c);
  }
}

/* Another client's products on the workers that hold a split solve's
 * blocks are answered while the solve runs, as between a one-worker
 * solve's iterations: the solve never converges, its first progress event
 * multiplies the other client's matrix and checks the products, and only
 * then cancels it (with the workers held until the solve's end, the
 * products would wait for it, and it for them: the test times out). */
START_TEST(split_serves_others)
{
  double *b;
  struct spmv_csr *A = never_converges(40, &b);
  struct spmv_csr *B = itest_random_csr(700, 7, 5, 29);
  double *x = calloc((size_t)A->rows, 8);
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  struct spmv_client *c2;
  struct spmv_matrix *m;
  struct other other = {.A = B};

  ck_assert_ptr_nonnull(x);
  ck_assert_int_eq(load(A, SPMV_F64, nw, &m), 0);
  ck_assert_int_eq(spmv_connect(d.sock, &c2), 0);
  ck_assert_msg(spmv_load_csr(c2, SPMV_F64, B->rows, B->cols, B->nnz, B->row_ptr,
                              B->col_idx, B->val, NULL, &other.m) == 0,
                "%s", spmv_client_errmsg(c2));
  spmv_solve_options_init(&o);
  o.method = "gmres";
  o.maxiter = (int64_t)1 << 40;
  o.progress_every = 10;
  o.progress = multiply_other;
  o.progress_arg = &other;
  ck_assert_msg(spmv_solve(m, b, x, 0, &o, &r) == 0, "%s", spmv_client_errmsg(c));
  ck_assert_str_eq(r.reason, "cancelled");
  ck_assert_int_ge(other.products, 1);
  spmv_matrix_free(other.m);
  spmv_disconnect(c2);
  products_ok(m, A, SPMV_F64);
  spmv_matrix_free(m);
  free(b);
  free(x);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

/* spmvctl --split: the solve runs on the blocks and says so; more blocks
 * than workers is refused with why (exit 1, not a usage error). */
START_TEST(spmvctl_split)
{
  struct spmvctl_run r;
  char path[4096];

  itest_matrix_path("bcsstk13.mtx", path, sizeof path);
  spmvctl_exec(&r, "--socket", d.sock, "--quiet", "--json", "--split", "2",
               "--method", "pcg-jacobi", "solve", path, NULL);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = json_loads(r.out, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "blocks")), 2);
  ck_assert(json_is_true(json_object_get(j, "converged")));
  ck_assert(json_real_value(json_object_get(j, "relative_residual")) <= 1e-7);
  json_decref(j);
  spmvctl_exec(&r, "--socket", d.sock, "--quiet", "--split", "2", "--method",
               "pcg-jacobi", "solve", path, NULL);
  ck_assert_msg(r.status == 0 && strstr(r.out, "split        2 row blocks"),
                "status %d: %s%s", r.status, r.out, r.err);
  char more[16], runs[32];
  snprintf(more, sizeof more, "%d", nw + 1);
  snprintf(runs, sizeof runs, "%d workers", nw);
  spmvctl_exec(&r, "--socket", d.sock, "--quiet", "--split", more, "solve", path, NULL);
  ck_assert_msg(r.status == 1 && strstr(r.err, runs), "status %d: %s",
                r.status, r.err);
  spmvctl_exec(&r, "--socket", d.sock, "--split", "0", "solve", path, NULL);
  ck_assert_msg(r.status == 2 && strstr(r.err, "--split"), "status %d: %s",
                r.status, r.err);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("split_client");
  TCase *tc = tcase_create("split_client");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, split_option);
  tcase_add_test(tc, split_refused);
  tcase_add_test(tc, split_solves);
  tcase_add_test(tc, split_jacobi_zero_diagonal);
  tcase_add_test(tc, split_pagerank);
  tcase_add_test(tc, split_history);
  tcase_add_test(tc, split_cancel);
  tcase_add_test(tc, spmvctl_split);
  suite_add_tcase(s, tc);
  TCase *slow = tcase_create("split_timeout");
  tcase_add_checked_fixture(slow, setup_short_timeout, teardown);
  tcase_set_timeout(slow, 60);
  tcase_add_test(slow, split_heartbeats);
  tcase_add_test(slow, split_serves_others);
  suite_add_tcase(s, slow);
  return itest_run(s);
}
