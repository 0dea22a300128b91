/* check_solve_client.c: server-side solves (PROTOCOL.md, solve) through
 * libspmvclient (spmv_solve, spmv_solve_vec) and spmvctl solve, against a
 * real spmvd on the cpu backend; every residual is recomputed here in
 * double from the CSR. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"
#include "spmv_mmio.h"

/* Asserts that a library call on c succeeded, with its message if not. */
#define OK(c, call)                                                         \
  do {                                                                      \
    int rc_ = (call);                                                       \
    ck_assert_msg(rc_ == 0, "%s: %s (%d): %s", #call, spmv_err_name(rc_),  \
                  rc_, spmv_client_errmsg(c));                              \
  } while (0)

/* ||b - A x||_2 / ||b||_2 in double; b NULL stands for all ones. */
static double rel_residual(const struct spmv_csr *A, const double *b,
                           const double *x)
{
  double rr = 0, bb = 0;

  for (int64_t i = 0; i < A->rows; i++) {
    double bi = b != NULL ? b[i] : 1.0, s = bi;

    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s -= A->val[k] * x[A->col_idx[k]];
    rr += s * s;
    bb += bi * bi;
  }
  return sqrt(rr) / sqrt(bb);
}

/* Loads A into c with dtype (values rounded to f32 when asked). */
static struct spmv_matrix *load(struct spmv_client *c, const struct spmv_csr *A,
                                int f32)
{
  struct spmv_matrix *m = NULL;
  float *v32 = NULL;

  if (f32) {
    v32 = malloc((size_t)A->nnz * sizeof *v32 + 1);
    ck_assert_ptr_nonnull(v32);
    for (int64_t k = 0; k < A->nnz; k++)
      v32[k] = (float)A->val[k];
  }
  OK(c, spmv_load_csr(c, f32 ? SPMV_F32 : SPMV_F64, A->rows, A->cols, A->nnz,
                      A->row_ptr, A->col_idx, f32 ? (void *)v32 : A->val,
                      NULL, &m));
  free(v32);
  return m;
}

/* n ones, a new array. */
static double *ones(int64_t n)
{
  double *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);

  ck_assert_ptr_nonnull(b);
  for (int64_t i = 0; i < n; i++)
    b[i] = 1.0;
  return b;
}

/* Solves A x = 1 (A the test matrix name, f64) with o into r on a client
 * of its own; returns x, a new array, after freeing the rest. */
static double *solve_ones(const struct spmv_csr *A,
                          const struct spmv_solve_options *o,
                          struct spmv_solve_result *r)
{
  struct spmv_client *c = NULL;
  double *x = calloc((size_t)A->cols + 1, sizeof *x), *b = ones(A->rows);

  OK(c, spmv_connect(itest_d.sock, &c));
  struct spmv_matrix *m = load(c, A, 0);
  OK(c, spmv_solve(m, b, x, 0, o, r));
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(b);
  return x;
}

/* What the progress callback saw. */
struct seen {
  int calls, bad_stage;
  int64_t last_done, total;
  double last_residual;
};

/* Counts the solve's progress events and checks their fields. */
static void on_progress(const struct spmv_progress *p, void *arg)
{
  struct seen *s = arg;

  s->calls++;
  if (strcmp(p->stage, "solve") != 0 || p->done <= s->last_done ||
      !(p->residual >= 0))
    s->bad_stage++;
  s->last_done = p->done;
  s->total = p->total;
  s->last_residual = p->residual;
}

/* Jacobi-preconditioned CG on bcsstk13 in f64 to rtol 1e-8 (plain CG
 * does not get there in 10 x rows iterations: the matrix's condition
 * number is about 1e10 and its diagonal spans ten orders), with history
 * and progress; then again from its own solution (x_guess), which needs
 * almost nothing. */
START_TEST(cg_bcsstk13_f64)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_client *c = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result r, r2;
  struct seen seen = { 0, 0, 0, 0, 0 };
  double *b = malloc((size_t)A->rows * sizeof *b);
  double *x = calloc((size_t)A->cols, sizeof *x);
  double rel;

  for (int64_t i = 0; i < A->rows; i++)
    b[i] = 1.0 + (double)(i % 7) / 7.0;
  OK(c, spmv_connect(itest_d.sock, &c));
  struct spmv_matrix *m = load(c, A, 0);
  spmv_solve_options_init(&o);
  o.method = "pcg-jacobi";
  o.rtol = 1e-8;
  o.history = 1;
  o.progress_every = 50;
  o.progress = on_progress;
  o.progress_arg = &seen;
  OK(c, spmv_solve(m, b, x, 0, &o, &r));
  ck_assert_msg(r.converged && strcmp(r.reason, "converged-rtol") == 0,
                "cg on bcsstk13: %s after %lld iterations, relative %g", r.reason,
                (long long)r.iterations, r.relative_residual);
  rel = rel_residual(A, b, x);
  ck_assert_msg(rel <= 2e-8, "recomputed relative residual %g > 2e-8", rel);
  ck_assert_msg(fabs(rel - r.relative_residual) <= 1e-3 * rel + 1e-16,
                "the daemon says %.6g, recomputed %.6g", r.relative_residual, rel);
  ck_assert(r.rhs_norm > 0 && r.seconds > 0 && r.us_per_iteration > 0);
  ck_assert_int_gt(r.iterations, 0);
  ck_assert_ptr_nonnull(r.history);
  ck_assert_int_eq(r.nhistory, r.iterations);
  ck_assert(r.history[r.nhistory - 1] <= 2e-8 * r.rhs_norm);
  ck_assert_int_ge(seen.calls, r.iterations / 50 - 1);
  ck_assert_int_gt(seen.calls, 0);
  ck_assert_int_eq(seen.bad_stage, 0);
  ck_assert_int_eq(seen.total, 10 * A->rows);  /* the default maxiter */
  o.history = 0;
  o.progress = NULL;
  OK(c, spmv_solve(m, b, x, 1, &o, &r2));
  ck_assert_ptr_null(r2.history);
  ck_assert_msg(r2.converged && r2.iterations <= r.iterations / 10,
                "from its own solution: %s after %lld iterations (first %lld)",
                r2.reason, (long long)r2.iterations, (long long)r.iterations);
  free(r.history);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(x);
  free(b);
  spmv_csr_free(A);
}
END_TEST

/* Plain CG in f64 on bcsstk16 to rtol 1e-8, the residual recomputed. */
START_TEST(cg_bcsstk16_f64)
{
  struct spmv_csr *A = itest_matrix("bcsstk16.mtx");
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  double *x, rel;

  spmv_solve_options_init(&o);
  o.rtol = 1e-8;
  x = solve_ones(A, &o, &r);
  ck_assert_msg(r.converged, "cg on bcsstk16: %s after %lld", r.reason,
                (long long)r.iterations);
  rel = rel_residual(A, NULL, x);
  ck_assert_msg(rel <= 2e-8, "recomputed relative residual %g > 2e-8", rel);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* A history as long as the iteration limit allows comes back whole:
 * 14000 iterations of CG on bcsstk13 (it does not converge there). */
START_TEST(long_history)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_solve_options o;
  struct spmv_solve_result r;

  spmv_solve_options_init(&o);
  o.maxiter = 14000;
  o.history = 1;
  free(solve_ones(A, &o, &r));
  /* The first SPMV_SOLVE_HISTORY_MAX, as PETSc keeps its history. */
  ck_assert_int_eq(r.iterations, 14000);
  ck_assert_int_eq(r.nhistory, SPMV_SOLVE_HISTORY_MAX);
  ck_assert(r.history[0] > 0 && r.history[SPMV_SOLVE_HISTORY_MAX - 1] > 0);
  ck_assert_str_eq(r.reason, "maxiter");
  free(r.history);
  spmv_csr_free(A);
}
END_TEST

/* CG in f32 to rtol 1e-4 on gr_30_30 (well conditioned, values exact in
 * f32), then the same solve on device vectors. */
START_TEST(cg_f32_and_vectors)
{
  struct spmv_csr *A = itest_matrix("gr_30_30.mtx");
  struct spmv_client *c = NULL;
  struct spmv_vector *vb = NULL, *vx = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  float *x32 = calloc((size_t)A->cols, sizeof *x32);
  double *xd = calloc((size_t)A->cols, sizeof *xd);
  float *one32 = malloc((size_t)A->rows * sizeof *one32);

  for (int64_t i = 0; i < A->rows; i++)
    one32[i] = 1.0f;
  OK(c, spmv_connect(itest_d.sock, &c));
  struct spmv_matrix *m = load(c, A, 1);
  spmv_solve_options_init(&o);
  o.rtol = 1e-4;
  OK(c, spmv_solve(m, one32, x32, 0, &o, &r));
  ck_assert_msg(r.converged, "f32 cg: %s", r.reason);
  for (int64_t i = 0; i < A->cols; i++)
    xd[i] = x32[i];
  ck_assert_double_le(rel_residual(A, NULL, xd), 2e-4);
  /* Device vectors: b = 1, x = 0 as the guess; only numbers travel. */
  OK(c, spmv_vector_new(c, SPMV_F32, A->rows, &vb));
  OK(c, spmv_vector_new(c, SPMV_F32, A->cols, &vx));
  OK(c, spmv_vector_fill(vb, 1.0));
  OK(c, spmv_solve_vec(m, vb, vx, &o, &r));
  ck_assert_msg(r.converged, "f32 cg on vectors: %s", r.reason);
  OK(c, spmv_vector_download(vx, x32));
  for (int64_t i = 0; i < A->cols; i++)
    xd[i] = x32[i];
  ck_assert_double_le(rel_residual(A, NULL, xd), 2e-4);
  spmv_vector_free(vb);
  spmv_vector_free(vx);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(one32);
  free(xd);
  free(x32);
  spmv_csr_free(A);
}
END_TEST

/* PageRank in double as PROTOCOL.md defines it, by plain power iteration:
 * x = d A D^-1 x + (1 - d + d * dangling) / n. */
static void pagerank_ref(const struct spmv_csr *A, double d, double *x)
{
  int64_t n = A->rows;
  double *out = calloc((size_t)n, sizeof *out), *y = calloc((size_t)n, sizeof *y);

  for (int64_t k = 0; k < A->nnz; k++)
    out[A->col_idx[k]] += fabs(A->val[k]);
  for (int64_t i = 0; i < n; i++)
    x[i] = 1.0 / (double)n;
  for (int it = 0; it < 1000; it++) {
    double dangling = 0;

    for (int64_t j = 0; j < n; j++)
      if (out[j] == 0)
        dangling += x[j];
    for (int64_t i = 0; i < n; i++) {
      double s = 0;

      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
        s += fabs(A->val[k]) * x[A->col_idx[k]] / out[A->col_idx[k]];
      y[i] = d * s + (1 - d + d * dangling) / (double)n;
    }
    memcpy(x, y, (size_t)n * sizeof *x);
  }
  free(y);
  free(out);
}

/* PageRank on karate: sums to 1, matches the reference, ranks vertex 34
 * first. */
START_TEST(pagerank_karate)
{
  struct spmv_csr *A = itest_matrix("karate.mtx");
  struct spmv_client *c = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  double *x = calloc((size_t)A->cols, sizeof *x);
  double *ref = calloc((size_t)A->cols, sizeof *ref);
  double sum = 0, diff = 0;
  int64_t best = 0;

  OK(c, spmv_connect(itest_d.sock, &c));
  struct spmv_matrix *m = load(c, A, 0);
  spmv_solve_options_init(&o);
  o.method = "pagerank";
  OK(c, spmv_solve(m, NULL, x, 0, &o, &r));
  ck_assert_msg(r.converged, "pagerank: %s after %lld", r.reason, (long long)r.iterations);
  pagerank_ref(A, 0.85, ref);
  for (int64_t i = 0; i < A->cols; i++) {
    sum += x[i];
    diff += fabs(x[i] - ref[i]);
    if (x[i] > x[best])
      best = i;
  }
  ck_assert_msg(fabs(sum - 1) <= 1e-12, "pagerank sums to %.17g", sum);
  ck_assert_msg(diff <= 1e-8, "pagerank differs from the reference by %g (1-norm)", diff);
  ck_assert_int_eq(best, 33);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(ref);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* The daemon's refusals come back with their message; r stays zeroed. */
START_TEST(daemon_errors)
{
  struct spmv_csr *A = itest_matrix("karate.mtx");
  struct spmv_client *c = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  double *x = calloc((size_t)A->cols, sizeof *x);
  double *b = calloc((size_t)A->rows, sizeof *b);

  OK(c, spmv_connect(itest_d.sock, &c));
  struct spmv_matrix *m = load(c, A, 0);
  spmv_solve_options_init(&o);
  o.method = "jacobi-davidson";
  ck_assert_int_eq(spmv_solve(m, b, x, 0, &o, &r), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "jacobi-davidson") != NULL,
                "message: %s", spmv_client_errmsg(c));
  ck_assert_ptr_null(r.history);
  o.method = "pagerank";
  o.damping = 1.5;
  ck_assert_int_eq(spmv_solve(m, NULL, x, 0, &o, &r), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "damping") != NULL,
                "message: %s", spmv_client_errmsg(c));
  /* The connection goes on. */
  o.damping = 0;
  OK(c, spmv_solve(m, NULL, x, 0, &o, &r));
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(b);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* What the library refuses before sending anything. */
START_TEST(local_errors)
{
  struct spmv_csr *A = itest_matrix("karate.mtx");
  struct spmv_client *c = NULL, *c2 = NULL;
  struct spmv_vector *vb = NULL, *vx = NULL, *other = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  double *x = calloc((size_t)A->cols, sizeof *x);

  OK(c, spmv_connect(itest_d.sock, &c));
  OK(c2, spmv_connect(itest_d.sock, &c2));
  struct spmv_matrix *m = load(c, A, 0);
  spmv_solve_options_init(&o);
  ck_assert_int_eq(spmv_solve(NULL, x, x, 0, &o, &r), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "matrix is NULL"));
  ck_assert_int_eq(spmv_solve(m, NULL, x, 0, &o, &r), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "b is NULL"));
  ck_assert_int_eq(spmv_solve(m, x, NULL, 0, &o, &r), SPMV_EINVAL);
  ck_assert_int_eq(spmv_solve(m, x, x, 0, &o, NULL), SPMV_EINVAL);
  o.rtol = NAN;
  ck_assert_int_eq(spmv_solve(m, x, x, 0, &o, &r), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "rtol"));
  o.rtol = 0;
  o.method = "pagerank";
  ck_assert_int_eq(spmv_solve(m, x, x, 0, &o, &r), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "pagerank takes no b"));
  o.method = NULL;
  OK(c, spmv_vector_new(c, SPMV_F64, A->rows, &vb));
  OK(c, spmv_vector_new(c, SPMV_F64, A->cols, &vx));
  OK(c2, spmv_vector_new(c2, SPMV_F64, A->cols, &other));
  ck_assert_int_eq(spmv_solve_vec(m, vb, other, &o, &r), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(c), "another client"));
  ck_assert_int_eq(spmv_solve_vec(m, other, vx, &o, &r), SPMV_EINVAL);
  ck_assert_int_eq(spmv_solve_vec(m, vb, NULL, &o, &r), SPMV_EINVAL);
  ck_assert_int_eq(spmv_solve_vec(m, NULL, vx, &o, &r), SPMV_EINVAL);
  ck_assert_int_eq(spmv_solve_vec(NULL, vb, vx, &o, &r), SPMV_EINVAL);
  spmv_vector_free(other);
  spmv_disconnect(c2);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(x);
  spmv_csr_free(A);
}
END_TEST

/* Runs spmvctl solve with args; returns its JSON output (asserting the
 * exit status). */
static json_t *spmvctl_solve(const char *args, int expect_status)
{
  const char *bd = getenv("SPMV_TOP_BUILDDIR");
  char cmd[4096], rest[256];
  json_error_t jerr;

  snprintf(cmd, sizeof cmd, "%s/client/spmvctl --json --quiet --socket '%s' solve %s",
           bd ? bd : ".", itest_d.sock, args);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  json_t *j = json_loadf(p, JSON_DISABLE_EOF_CHECK, &jerr);
  while (fgets(rest, sizeof rest, p))
    ;
  int status = pclose(p);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == expect_status,
                "spmvctl solve %s: status %d, expected %d", args,
                WEXITSTATUS(status), expect_status);
  ck_assert_msg(j != NULL, "spmvctl solve %s: not JSON: %s", args, jerr.text);
  return j;
}

/* Reads the solution spmvctl wrote and checks its residual against b. */
static void check_output(const char *path, const struct spmv_csr *A,
                         const double *b, double bound)
{
  struct spmv_error err = { 0, "" };
  double *x = NULL, rel;
  int64_t n = 0;

  ck_assert_msg(spmv_mmio_read_vector(path, &x, &n, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(n, A->cols);
  rel = rel_residual(A, b, x);
  ck_assert_msg(rel <= bound, "%s: relative residual %g > %g", path, rel, bound);
  free(x);
}

/* spmvctl solve: --output read back, --rhs FILE, and a solve cut short
 * by --maxiter, which exits 6. */
START_TEST(spmvctl_solve_output)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_error err = { 0, "" };
  char mtx[512], out[400], rhs[400], args[2048];
  double *b = malloc((size_t)A->rows * sizeof *b);
  json_t *j;

  itest_matrix_path("bcsstk13.mtx", mtx, sizeof mtx);
  snprintf(out, sizeof out, "%s/x.mtx", itest_d.dir);
  snprintf(rhs, sizeof rhs, "%s/b.mtx", itest_d.dir);
  snprintf(args, sizeof args, "--method pcg-jacobi --rtol 1e-9 --output '%s' '%s'",
           out, mtx);
  j = spmvctl_solve(args, 0);
  ck_assert(json_is_true(json_object_get(j, "converged")));
  ck_assert_str_eq(json_string_value(json_object_get(j, "method")), "pcg-jacobi");
  ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "converged-rtol");
  ck_assert(json_integer_value(json_object_get(j, "iterations")) > 0);
  ck_assert(json_number_value(json_object_get(j, "solve_seconds")) > 0);
  ck_assert(json_number_value(json_object_get(j, "load_seconds")) > 0);
  ck_assert(json_number_value(json_object_get(j, "us_per_iteration")) > 0);
  json_decref(j);
  check_output(out, A, NULL, 2e-9);
  /* b from a file: 1..7 repeating. */
  for (int64_t i = 0; i < A->rows; i++)
    b[i] = (double)(1 + i % 7);
  ck_assert_msg(spmv_mmio_write_vector(rhs, b, A->rows, &err) == 0, "%s", err.msg);
  snprintf(args, sizeof args, "--method pcg-jacobi --rhs '%s' --output '%s' '%s'",
           rhs, out, mtx);
  json_decref(spmvctl_solve(args, 0));
  check_output(out, A, b, 2e-8);
  /* Cut short: exit 6, the reason printed, x still written. */
  unlink(out);
  snprintf(args, sizeof args, "--maxiter 3 --output '%s' '%s'", out, mtx);
  j = spmvctl_solve(args, 6);
  ck_assert(json_is_false(json_object_get(j, "converged")));
  ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "maxiter");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "iterations")), 3);
  json_decref(j);
  ck_assert_int_eq(access(out, R_OK), 0);
  free(b);
  spmv_csr_free(A);
}
END_TEST

/* f32 CG on an ill-conditioned matrix, whose recurrence drifts from the
 * true residual: "converged" only where the residual recomputed from x
 * meets the tolerance, and where it cannot, a reason that says not
 * converged; the reported residual is x's own (checked here in double). */
START_TEST(f32_drift_honest)
{
  struct spmv_csr *A = itest_matrix("bcsstk16.mtx");
  struct spmv_client *c = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  float *x32 = calloc((size_t)A->cols, sizeof *x32);
  float *one32 = malloc((size_t)A->rows * sizeof *one32);
  double *xd = calloc((size_t)A->cols, sizeof *xd);

  for (int64_t i = 0; i < A->rows; i++)
    one32[i] = 1.0f;
  OK(c, spmv_connect(itest_d.sock, &c));
  struct spmv_matrix *m = load(c, A, 1);
  spmv_solve_options_init(&o);
  o.rtol = 1e-5;
  o.maxiter = 3000;
  OK(c, spmv_solve(m, one32, x32, 0, &o, &r));
  if (r.converged)
    ck_assert_msg(r.relative_residual <= 1e-5, "converged with %g", r.relative_residual);
  else
    ck_assert_msg(strcmp(r.reason, "stagnated") == 0 || strcmp(r.reason, "maxiter") == 0,
                  "reason %s", r.reason);
  for (int64_t i = 0; i < A->cols; i++)
    xd[i] = x32[i];
  double rel = rel_residual(A, NULL, xd);
  /* The daemon's residual is x's in f32 arithmetic on the f32 matrix. */
  ck_assert_msg(fabs(r.relative_residual - rel) <= 0.05 * rel + 1e-5,
                "reported %g, recomputed %g", r.relative_residual, rel);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(one32);
  free(xd);
  free(x32);
  spmv_csr_free(A);
}
END_TEST

/* What a cancelling progress callback saw. */
struct canceller {
  struct spmv_client *c;
  int64_t at;       /* cancel once an event reports this iteration */
  int64_t seen;     /* the last iteration an event reported */
};

static void cancel_at(const struct spmv_progress *p, void *arg)
{
  struct canceller *k = arg;

  k->seen = p->done;
  if (p->done >= k->at)
    spmv_solve_cancel(k->c);
}

/* spmv_solve_cancel() from the progress callback stops a solve that would
 * not end: reason "cancelled", x the iterate reached (its residual
 * recomputed here), and the client goes on, a cancel outside a solve
 * changing nothing. */
START_TEST(cancel_from_progress)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_client *c = NULL;
  struct spmv_solve_options o;
  struct spmv_solve_result r;
  double *x = malloc((size_t)A->cols * sizeof *x);
  double *b = malloc((size_t)A->rows * sizeof *b);

  for (int64_t i = 0; i < A->rows; i++)
    b[i] = 1.0;
  OK(c, spmv_connect(itest_d.sock, &c));
  struct spmv_matrix *m = load(c, A, 0);
  struct canceller k = {c, 30, 0};
  spmv_solve_options_init(&o);
  o.method = "gmres";
  o.rtol = 1e-300;
  o.maxiter = 100000000;
  o.progress_every = 10;
  o.progress = cancel_at;
  o.progress_arg = &k;
  OK(c, spmv_solve(m, b, x, 0, &o, &r));
  ck_assert_str_eq(r.reason, "cancelled");
  ck_assert(!r.converged);
  ck_assert_int_ge(r.iterations, 30);
  ck_assert_int_ge(r.iterations, k.seen);
  double rel = rel_residual(A, b, x);
  ck_assert(rel < 1);
  ck_assert_msg(fabs(r.relative_residual - rel) <= 1e-6 * rel,
                "reply %g, recomputed %g", r.relative_residual, rel);
  /* Outside a solve it does nothing: the next solve converges. */
  spmv_solve_cancel(c);
  spmv_solve_options_init(&o);
  o.method = "pcg-jacobi";
  o.rtol = 1e-8;
  OK(c, spmv_solve(m, b, x, 0, &o, &r));
  ck_assert_str_eq(r.reason, "converged-rtol");
  ck_assert(rel_residual(A, b, x) <= 2e-8);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(x);
  free(b);
  spmv_csr_free(A);
}
END_TEST

/* spmvctl solve interrupted (SIGINT) once it reports progress: the solve
 * stops, its result is printed with reason "cancelled", x is written, and
 * it exits 6 (not converged). */
START_TEST(spmvctl_interrupt)
{
  const char *bd = getenv("SPMV_TOP_BUILDDIR");
  char prog[1024], mtx[512], out[400], line[512];
  int po[2], pe[2], status;
  json_error_t jerr;

  itest_matrix_path("bcsstk13.mtx", mtx, sizeof mtx);
  snprintf(out, sizeof out, "%s/xi.mtx", itest_d.dir);
  snprintf(prog, sizeof prog, "%s/client/spmvctl", bd ? bd : ".");
  ck_assert(pipe(po) == 0 && pipe(pe) == 0);
  pid_t pid = fork();
  ck_assert(pid >= 0);
  if (pid == 0) {
    dup2(po[1], 1);
    dup2(pe[1], 2);
    close(po[0]);
    close(pe[0]);
    execl(prog, prog, "--json", "--socket", itest_d.sock, "solve", "--method",
          "gmres", "--rtol", "1e-300", "--maxiter", "100000000", "--output",
          out, mtx, (char *)NULL);
    _exit(127);
  }
  close(po[1]);
  close(pe[1]);
  FILE *err = fdopen(pe[0], "r");
  int running = 0;
  while (!running && fgets(line, sizeof line, err))
    running = strstr(line, "solve ") != NULL && strstr(line, "residual") != NULL;
  ck_assert_msg(running, "spmvctl solve reported no progress");
  kill(pid, SIGINT);
  FILE *o = fdopen(po[0], "r");
  json_t *j = json_loadf(o, JSON_DISABLE_EOF_CHECK, &jerr);
  while (fgets(line, sizeof line, err))
    ;
  ck_assert(waitpid(pid, &status, 0) == pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 6, "status %d", status);
  ck_assert_msg(j != NULL, "not JSON: %s", jerr.text);
  ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "cancelled");
  ck_assert(json_integer_value(json_object_get(j, "iterations")) > 0);
  json_decref(j);
  fclose(o);
  fclose(err);
  ck_assert_int_eq(access(out, R_OK), 0);
}
END_TEST

static Suite *solve_suite(void)
{
  Suite *s = suite_create("solve_client");
  TCase *tc = tcase_create("solve");

  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, local_errors);
  tcase_add_test(tc, cg_bcsstk13_f64);
  tcase_add_test(tc, cg_bcsstk16_f64);
  tcase_add_test(tc, long_history);
  tcase_add_test(tc, cg_f32_and_vectors);
  tcase_add_test(tc, pagerank_karate);
  tcase_add_test(tc, daemon_errors);
  tcase_add_test(tc, spmvctl_solve_output);
  tcase_add_test(tc, cancel_from_progress);
  tcase_add_test(tc, f32_drift_honest);
  tcase_add_test(tc, spmvctl_interrupt);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(solve_suite());
}
