/* spmvctl_solve.c: spmvctl solve: loads a matrix, builds b, solves in
 * spmvd and prints what the solve found (and writes x with --output). */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spmv_mmio.h"
#include "spmvctl.h"

/* Progress every so many iterations: a line a second or so on a long
 * solve, without flooding stderr as one a iteration would. */
#define SOLVE_PROGRESS_EVERY 100

/* The seed of --rhs random: fixed, so that runs can be compared. */
#define SOLVE_RANDOM_SEED 0x9e3779b97f4a7c15ULL

/* Seconds on the monotonic clock. */
static double now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether the run solves with pagerank, which takes no b. */
static int run_is_pagerank(const struct spmvctl *ctl)
{
  return ctl->method != NULL && strcmp(ctl->method, "pagerank") == 0;
}

/* Fills b with xorshift64 values of magnitude in [0.5, 1.5) and random
 * sign: no zeros, no structure a method could exploit. */
static void random_rhs(double *b, int64_t n)
{
  uint64_t s = SOLVE_RANDOM_SEED;
  int64_t i;

  for (i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    b[i] = (0.5 + (double)(s >> 11) * 0x1p-53) * ((s & 1) ? -1.0 : 1.0);
  }
}

/* Builds b of rows values (double) from --rhs into *out, a new array;
 * returns an exit status after saying what is wrong. */
static int build_rhs(struct spmvctl *ctl, int64_t rows, double **out)
{
  const char *rhs = ctl->rhs != NULL ? ctl->rhs : "ones";
  struct spmv_error err = { 0, "" };
  int64_t i, n = 0;
  int status;

  if (strcmp(rhs, "ones") == 0 || strcmp(rhs, "random") == 0) {
    if ((*out = malloc(((size_t)rows + 1) * sizeof **out)) == NULL)
      return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory for b");
    for (i = 0; i < rows; i++)
      (*out)[i] = 1.0;
    if (rhs[0] == 'r')
      random_rhs(*out, rows);
    return SPMVCTL_EXIT_OK;
  }
  if ((status = spmvctl_check_file(ctl, rhs)) != SPMVCTL_EXIT_OK)
    return status;
  if (spmv_mmio_read_vector(rhs, out, &n, &err) < 0)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "%s", err.msg);
  if (n != rows) {
    free(*out);
    *out = NULL;
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR,
                        "%s holds %lld values, but the matrix has %lld rows",
                        rhs, (long long)n, (long long)rows);
  }
  return SPMVCTL_EXIT_OK;
}

/* Converts n doubles into a new array of dtype (a copy either way, so
 * that its owner frees it the same way). */
static void *to_dtype(const double *v, int64_t n, enum spmv_dtype dtype)
{
  size_t vsz = spmv_dtype_size(dtype);
  void *out = malloc((size_t)(n > 0 ? n : 1) * vsz);
  int64_t i;

  if (out == NULL)
    return NULL;
  for (i = 0; i < n; i++) {
    if (dtype == SPMV_F32)
      ((float *)out)[i] = (float)v[i];
    else
      ((double *)out)[i] = v[i];
  }
  return out;
}

/* Writes x (n values of dtype) as an array file; an exit status. */
static int write_solution(struct spmvctl *ctl, const void *x, int64_t n,
                          enum spmv_dtype dtype)
{
  struct spmv_error err = { 0, "" };
  double *d = malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
  int64_t i;
  int rc;

  if (d == NULL)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory writing %s",
                        ctl->output);
  for (i = 0; i < n; i++)
    d[i] = dtype == SPMV_F32 ? (double)((const float *)x)[i]
                             : ((const double *)x)[i];
  rc = spmv_mmio_write_vector(ctl->output, d, n, &err);
  free(d);
  if (rc < 0)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "%s", err.msg);
  return SPMVCTL_EXIT_OK;
}

/* The options of the run as the library's. */
static void solve_options(struct spmvctl *ctl, struct spmv_solve_options *o)
{
  spmv_solve_options_init(o);
  o->method = ctl->method;
  o->rtol = ctl->rtol;
  o->maxiter = ctl->maxiter;
  o->damping = ctl->damping;
  if (!ctl->quiet) {
    o->progress_every = SOLVE_PROGRESS_EVERY;
    o->progress = spmvctl_progress;
    o->progress_arg = ctl;
  }
}

/* What the run measured, beside the library's result. */
struct solve_run {
  const char *file;
  struct spmv_info info;
  double load_s;      /* spmv_load_mtx: reading, sending, tuning */
  double solve_s;     /* spmv_solve as the client saw it: time to solution */
  int blocks;         /* the matrix's row blocks (1: not split) */
};

/* Builds solve's output object. */
static json_t *solve_json(const struct spmvctl *ctl, const struct solve_run *run,
                          const struct spmv_solve_result *r)
{
  json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:I, s:b, s:s,"
                        " s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                        "file", run->file, "rows", (json_int_t)run->info.rows,
                        "cols", (json_int_t)run->info.cols,
                        "nnz", (json_int_t)run->info.nnz,
                        "dtype", spmv_dtype_name(run->info.dtype),
                        "method", ctl->method != NULL ? ctl->method : "cg",
                        "rhs", run_is_pagerank(ctl) ? "none"
                               : ctl->rhs != NULL ? ctl->rhs : "ones",
                        "iterations", (json_int_t)r->iterations,
                        "converged", r->converged, "reason", r->reason,
                        "residual", r->residual,
                        "relative_residual", r->relative_residual,
                        "rhs_norm", r->rhs_norm,
                        "us_per_iteration", r->us_per_iteration,
                        "worker_seconds", r->seconds,
                        "solve_seconds", run->solve_s,
                        "load_seconds", run->load_s);

  if (o != NULL && ctl->output != NULL)
    json_object_set_new(o, "output", json_string(ctl->output));
  if (o != NULL)
    json_object_set_new(o, "blocks", json_integer(run->blocks));
  return o;
}

/* Prints solve's output as a table. */
static void print_solve(const json_t *s)
{
  printf("file         %s\n", spmvctl_str(s, "file"));
  printf("matrix       %.0f x %.0f, %.0f nonzeros, %s\n", spmvctl_num(s, "rows"),
         spmvctl_num(s, "cols"), spmvctl_num(s, "nnz"), spmvctl_str(s, "dtype"));
  printf("method       %s (b: %s)\n", spmvctl_str(s, "method"), spmvctl_str(s, "rhs"));
  if (spmvctl_num(s, "blocks") > 1)
    printf("split        %.0f row blocks over as many workers\n", spmvctl_num(s, "blocks"));
  printf("reason       %s (%s)\n", spmvctl_str(s, "reason"),
         json_is_true(json_object_get(s, "converged")) ? "converged" : "not converged");
  printf("iterations   %.0f\n", spmvctl_num(s, "iterations"));
  printf("residual     %.6e (relative %.6e, ||b|| %.6e)\n", spmvctl_num(s, "residual"),
         spmvctl_num(s, "relative_residual"), spmvctl_num(s, "rhs_norm"));
  printf("time         %.3f us per iteration, %.3f ms on the worker\n",
         spmvctl_num(s, "us_per_iteration"), 1e3 * spmvctl_num(s, "worker_seconds"));
  printf("to solution  %.3f ms (the solve request); load %.3f ms\n",
         1e3 * spmvctl_num(s, "solve_seconds"), 1e3 * spmvctl_num(s, "load_seconds"));
  if (json_object_get(s, "output"))
    printf("output       %s\n", spmvctl_str(s, "output"));
}

/* The client whose solve an interrupt cancels. */
static struct spmv_client *volatile interrupted_client;

/* SIGINT and SIGTERM during a solve: the solve stops and its result is
 * still printed and written; a second signal acts as usual
 * (SA_RESETHAND). */
static void on_interrupt(int sig)
{
  (void)sig;
  spmv_solve_cancel(interrupted_client);
}

/* Solves on loaded matrix m with b (NULL: pagerank) into x (owned by the
 * caller), timing the request; an exit status. */
static int run_solve(struct spmvctl *ctl, struct spmv_client *c,
                     struct spmv_matrix *m, const double *b,
                     struct solve_run *run, void **x,
                     struct spmv_solve_result *r)
{
  struct spmv_solve_options o;
  enum spmv_dtype dt = run->info.dtype;
  void *bt = NULL;
  double t0;
  int rc;

  *x = malloc((size_t)(run->info.cols > 0 ? run->info.cols : 1) * spmv_dtype_size(dt));
  if (*x == NULL || (b != NULL && (bt = to_dtype(b, run->info.rows, dt)) == NULL))
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory for the vectors");
  solve_options(ctl, &o);
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  interrupted_client = c;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  t0 = now_s();
  rc = spmv_solve(m, bt, *x, 0, &o, r);
  run->solve_s = now_s() - t0;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  interrupted_client = NULL;
  free(bt);
  if (rc < 0)
    return spmvctl_call_failed(ctl, c, rc);
  return SPMVCTL_EXIT_OK;
}

/* spmvctl solve FILE: A x = b in spmvd. */
int spmvctl_solve(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmv_solve_result r = { 0 };
  struct solve_run run = { argv[0], { 0 }, 0, 0, 1 };
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  double *b = NULL, t0;
  void *x = NULL;
  json_t *out = NULL;
  int rc, status;

  (void)argc;
  if (run_is_pagerank(ctl) && ctl->rhs != NULL)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_USAGE, "pagerank takes no --rhs");
  if ((status = spmvctl_check_file(ctl, argv[0])) != SPMVCTL_EXIT_OK ||
      (status = spmvctl_connect(ctl, &c)) != SPMVCTL_EXIT_OK)
    return status;
  t0 = now_s();
  status = spmvctl_load_file(ctl, c, argv[0], NULL, &m);
  run.load_s = now_s() - t0;
  if (status != SPMVCTL_EXIT_OK)
    goto out;
  if ((rc = spmv_info(m, &run.info)) < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
    goto out;
  }
  run.blocks = spmv_matrix_blocks(m);
  if (!run_is_pagerank(ctl) &&
      (status = build_rhs(ctl, run.info.rows, &b)) != SPMVCTL_EXIT_OK)
    goto out;
  if ((status = run_solve(ctl, c, m, b, &run, &x, &r)) != SPMVCTL_EXIT_OK)
    goto out;
  /* The solution is written even when the method stopped short: it is
   * where the method got to, and the table says so. */
  if (ctl->output != NULL &&
      (status = write_solution(ctl, x, run.info.cols, run.info.dtype)) != SPMVCTL_EXIT_OK)
    goto out;
  out = solve_json(ctl, &run, &r);
  status = spmvctl_output(ctl, out, print_solve);
  if (status == SPMVCTL_EXIT_OK && !r.converged)
    status = SPMVCTL_EXIT_NOTCONVERGED;
out:
  json_decref(out);
  free(r.history);
  free(x);
  free(b);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  return status;
}
