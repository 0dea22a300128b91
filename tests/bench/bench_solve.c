/* bench_solve.c: whole solves through spmvd (one request on device
 * vectors) against the same methods written in-process. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_common.h"
#include "spmv.h"
#include "spmv_csr.h"
#include "spmv_stats.h"
#include "spmvd_backend.h"
#include "bench_clock.h"
#include "bench_cusparse.h"
#include "bench_solve.h"
#include "bench_svc.h"
#include "suite.h"

/*
 * For each matrix below and each value type, in one process:
 *   1. a fixed count of iterations (-i, 200; PageRank PR_ITERS), rtol
 *      1e-300 so that both sides run that many: spmv_solve_vec on device
 *      vectors (the call timed alone, client-observed, and the worker's
 *      own time) against the same method in-process (bench_solve_gpu.c:
 *      cuSPARSE and cuBLAS with host-side scalars) timed from x = 0 to
 *      its stop with a device sync; us an iteration, median of -r runs
 *      after a warm-up;
 *   2. time to solution at a real tolerance: a first-sight load (the
 *      daemon tunes) and a cache hit, each followed by the vectors, b up,
 *      the solve and x down, against the in-process set-up (the CSR from
 *      pageable memory, descriptors, buffer, preprocess) and the same;
 *   3. every solution checked on the host in double from the CSR in the
 *      solver's type: ||b - A x|| / ||b|| against the solver's own, and
 *      for PageRank ||G x - x||_1, the sum and the 1-norm between the two.
 * A wrong solution prints FAIL and makes the exit status 1.  --dry-run
 * runs the same driver without a GPU: spmvd on its cpu backend against
 * the host reference in double (bench_solve_ref.c), each matrix small.
 */

#define PR_ITERS 50        /* PageRank: its change stays far above rounding */
#define TOL_MAXITER 5000   /* CG and BiCGStab to a tolerance */
#define PR_MAXITER 1000
#define DAMPING 0.85

/* A matrix of the benchmark. */
struct mat {
  const char *name;
  enum bsv_method method;
  const char *gen;       /* a spmv_gen_from_text line, or NULL */
  const char *file;      /* else a file of the matrix folder ... */
  int64_t tile_k;        /* ... tiled k times, whole copies */
  int64_t nx;            /* > 0: a 7-point stencil of x size nx, made a
                            convection-diffusion operator */
  const char *tiny_gen;  /* the dry run's gen (or the file tiled tiny_k) */
  int64_t tiny_k, tiny_nx;
};

/* SPD: the 27-point Laplacian of the large suite, bcsstk16 (a real
 * structural matrix) tiled; nonsymmetric: 3D convection-diffusion, pde2961
 * (a real one, 2D) tiled; a graph: email-Eu-core tiled, unweighted. */
static const struct mat mats[] = {
  {"stencil3d_27pt_128", BSV_CG, "stencil3d nx=128 ny=128 nz=128 points=27",
   NULL, 0, 0, "stencil3d nx=16 ny=16 nz=16 points=27", 0, 0},
  {"bcsstk16_tiled_x128", BSV_CG, NULL, "bcsstk16.mtx", 128, 0, NULL, 1, 0},
  {"convdiff3d_7pt_160", BSV_BICGSTAB, "stencil3d nx=160 ny=160 nz=160",
   NULL, 0, 160, "stencil3d nx=16 ny=16 nz=16", 0, 16},
  {"pde2961_tiled_x1024", BSV_BICGSTAB, NULL, "pde2961.mtx", 1024, 0, NULL,
   1, 0},
  {"email-Eu-core_tiled_x1024", BSV_PAGERANK, NULL, "email-Eu-core.mtx", 1024,
   0, NULL, 1, 0},
};
#define NMATS (sizeof mats / sizeof mats[0])

/* One matrix in one type: what was measured. */
struct row {
  const struct mat *mt;
  enum spmv_dtype dt;
  int64_t rows, nnz;
  double mbytes;               /* the 32-bit CSR's megabytes */
  char config[64];             /* spmvd's pick */
  int64_t n_s, n_in;           /* fixed count: iterations each side ran */
  char fwhy_s[32], fwhy_in[32];   /* and why they stopped */
  double frep_s, frep_in;      /* and the solvers' own final residuals */
  double it_s, it_w, it_in;    /* us an iteration: spmvd client-observed,
                                  its worker, in-process */
  double fix_s, fix_in;        /* host check of the fixed count's x */
  int64_t t_s, t_in;           /* to a tolerance: iterations */
  char why_s[32], why_in[32];
  double rtol, tol_s, tol_in;  /* host check of those x */
  double rep_s, rep_in;        /* the solvers' own final residuals */
  double sum_s, sum_in, l1_fix, l1_tol;  /* PageRank */
  double load1, hit, setup;    /* ms */
  double tts1, tts_hit, tts_in;
  int ok, drift;               /* checked; a converged solve over its rtol */
};

static int reps = 5, iters = 200, dry;
static double t_start;

/* A line of progress on stderr. */
static void progress(const struct row *r, const char *what)
{
  fprintf(stderr, "[%6.1f s] %s %s: %s\n", bench_now_s() - t_start,
          r->mt->name, spmv_dtype_name(r->dt), what);
}

/* The file name under the matrix folder: name, else name.gz. */
static void resolve(const char *dir, const char *name, char *out, size_t n)
{
  char path[4096];

  snprintf(path, sizeof path, "%s/%s", bench_suite_dir(dir), name);
  if (access(path, R_OK) == 0)
    snprintf(out, n, "%s", name);
  else
    snprintf(out, n, "%s.gz", name);
}

/* The 7-point stencil's values made -div(grad u) + convection by central
 * differences of cell Peclet numbers 0.5 (x) and 0.25 (y): nonsymmetric,
 * diagonally dominant, so BiCGStab converges. */
static void convect(struct spmv_csr *A, int64_t nx)
{
  for (int64_t i = 0; i < A->rows; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      int64_t off = A->col_idx[k] - i;
      if (off == -1 || off == 1)
        A->val[k] = -1.0 - 0.5 * (double)off;
      else if (off == -nx || off == nx)
        A->val[k] = -1.0 - 0.25 * (double)(off / nx);
    }
}

/* Builds m's matrix (its small size in a dry run); NULL with err set. */
static struct spmv_csr *make(const struct mat *m, const char *dir,
                             struct spmv_error *err)
{
  struct bench_suite_entry e;
  struct spmv_csr *A;
  int64_t nx = dry ? m->tiny_nx : m->nx;

  memset(&e, 0, sizeof e);
  snprintf(e.name, sizeof e.name, "%s", m->name);
  if (m->gen)
    snprintf(e.gen, sizeof e.gen, "%s", dry ? m->tiny_gen : m->gen);
  else
    resolve(dir, m->file, e.file, sizeof e.file);
  e.tile_k = dry ? m->tiny_k : m->tile_k;
  if (!(A = bench_suite_make(&e, dir, err)))
    return NULL;
  if (nx > 0)
    convect(A, nx);
  /* An unweighted graph: spmvd takes no negative edge weight. */
  for (int64_t k = 0; m->method == BSV_PAGERANK && k < A->nnz; k++)
    A->val[k] = 1.0;
  return A;
}

/* xt (n values of dt) widened to a new double array. */
static double *widen(const void *xt, int64_t n, enum spmv_dtype dt)
{
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);

  for (int64_t i = 0; x && i < n; i++)
    x[i] = dt == SPMV_F32 ? (double)((const float *)xt)[i]
                          : ((const double *)xt)[i];
  return x;
}

/* The fixed-count and the tolerance parameters of m in dt. */
static void params(const struct mat *m, enum spmv_dtype dt,
                   struct bsv_params *fix, struct bsv_params *tol)
{
  int pr = m->method == BSV_PAGERANK, f64 = dt == SPMV_F64;

  fix->method = tol->method = m->method;
  fix->damping = tol->damping = DAMPING;
  fix->maxiter = pr ? PR_ITERS : iters;
  fix->rtol = 1e-300;
  tol->maxiter = pr ? PR_MAXITER : TOL_MAXITER;
  tol->rtol = pr ? (f64 ? 1e-10 : 1e-6) : (f64 ? 1e-8 : 1e-5);
}

/* A solve's own final residual: recomputed from x, relative (PageRank:
 * the last change). */
static double own(const struct mat *m, const struct spmv_solve_result *res)
{
  return m->method == BSV_PAGERANK ? res->residual : res->relative_residual;
}

/* One spmv_solve_vec on b and x (x set to its start first, untimed):
 * *ms the call alone. */
static int svc_solve(struct spmv_matrix *m, struct spmv_vector *vb,
                     struct spmv_vector *vx, int64_t n,
                     const struct bsv_params *par,
                     struct spmv_solve_result *res, double *ms)
{
  struct spmv_solve_options o;
  double t0;

  spmv_solve_options_init(&o);
  o.method = bsv_method_name(par->method);
  o.maxiter = par->maxiter;
  o.rtol = par->rtol;
  if (par->method == BSV_PAGERANK)
    o.damping = par->damping;
  if (spmv_vector_fill(vx, par->method == BSV_PAGERANK ? 1.0 / (double)n
                                                       : 0.0) < 0)
    return -1;
  t0 = bench_now_s();
  if (spmv_solve_vec(m, vb, vx, &o, res) < 0)
    return -1;
  *ms = 1e3 * (bench_now_s() - t0);
  free(res->history);
  return 0;
}

/* b (NULL for pagerank) and x as new device vectors, b uploaded. */
static int svc_vectors(struct spmv_client *c, enum spmv_dtype dt, int64_t n,
                       const void *bt, struct spmv_vector **vb,
                       struct spmv_vector **vx)
{
  *vb = *vx = NULL;
  if (bt && (spmv_vector_new(c, dt, n, vb) < 0 ||
             spmv_vector_upload(*vb, bt) < 0))
    return -1;
  return spmv_vector_new(c, dt, n, vx);
}

/* An application's solve after its load: vectors, b up, the solve, x
 * down into xt; *ms all of it. */
static int svc_once(struct spmv_client *c, struct spmv_matrix *m,
                    struct row *r, const void *bt, const struct bsv_params *par,
                    void *xt, struct spmv_solve_result *res, double *ms)
{
  struct spmv_vector *vb, *vx;
  double t0 = bench_now_s(), solve;
  int rc = -1;

  if (svc_vectors(c, r->dt, r->rows, bt, &vb, &vx) == 0 &&
      svc_solve(m, vb, vx, r->rows, par, res, &solve) == 0 &&
      spmv_vector_download(vx, xt) == 0) {
    *ms = 1e3 * (bench_now_s() - t0);
    rc = 0;
  }
  spmv_vector_free(vb);
  spmv_vector_free(vx);
  return rc;
}

/* The fixed count through spmvd: r->it_s, r->it_w, r->n_s; x into xt. */
static int svc_fixed(struct spmv_client *c, struct spmv_matrix *m,
                     struct row *r, const void *bt,
                     const struct bsv_params *par, void *xt)
{
  struct spmv_vector *vb = NULL, *vx = NULL;
  struct spmv_solve_result res;
  double *t = malloc(2 * sizeof *t * (size_t)reps), ms;
  int rc = -1, k;

  if (!t || svc_vectors(c, r->dt, r->rows, bt, &vb, &vx) < 0)
    goto out;
  for (k = -1; k < reps; k++) {
    if (svc_solve(m, vb, vx, r->rows, par, &res, &ms) < 0)
      goto out;
    if (k >= 0 && res.iterations > 0) {
      t[k] = 1e3 * ms / (double)res.iterations;
      t[reps + k] = res.us_per_iteration;
    }
  }
  r->n_s = res.iterations;
  snprintf(r->fwhy_s, sizeof r->fwhy_s, "%s", res.reason);
  r->frep_s = own(r->mt, &res);
  if (res.iterations > 0 && spmv_vector_download(vx, xt) == 0) {
    r->it_s = spmv_median(t, (size_t)reps);
    r->it_w = spmv_median(t + reps, (size_t)reps);
    rc = 0;
  }
out:
  spmv_vector_free(vb);
  spmv_vector_free(vx);
  free(t);
  return rc;
}

/* The spmvd side of r: both loads with their solve to the tolerance (x of
 * the first into xtol), and the fixed count (x into xfix). */
static int svc_side(struct spmv_client *c, const struct spmv_csr *A,
                    struct row *r, const void *val, const void *bt,
                    void *xtol, void *xfix)
{
  struct bsv_params fix, tol;
  struct spmv_matrix *m = NULL, *h = NULL;
  struct spmv_solve_result res;
  struct spmv_info info;
  double ms;
  int rc = -1;

  params(r->mt, r->dt, &fix, &tol);
  progress(r, "spmvd: first-sight load and solve");
  if (bench_load_fresh(c, A, r->dt, val, r->mt->name, "bench_solve", &m,
                       &r->load1) < 0 || spmv_info(m, &info) < 0 ||
      svc_once(c, m, r, bt, &tol, xtol, &res, &ms) < 0)
    goto cerr;
  snprintf(r->config, sizeof r->config, "%s", info.config);
  r->tts1 = r->load1 + ms;
  r->t_s = res.iterations;
  snprintf(r->why_s, sizeof r->why_s, "%s", res.reason);
  r->rep_s = own(r->mt, &res);
  progress(r, "spmvd: cache-hit load and solve");
  if (bench_load_hit(c, A, r->dt, val, r->mt->name, "bench_solve", &h,
                     &r->hit) < 0 ||
      svc_once(c, h, r, bt, &tol, xfix, &res, &ms) < 0)
    goto cerr;
  r->tts_hit = r->hit + ms;
  h = spmv_matrix_free(h);
  progress(r, "spmvd: fixed count");
  if (svc_fixed(c, m, r, bt, &fix, xfix) < 0)
    goto cerr;
  rc = 0;
  goto out;
cerr:
  fprintf(stderr, "bench_solve: %s %s: spmvd: %s\n", r->mt->name,
          spmv_dtype_name(r->dt), spmv_client_errmsg(c));
out:
  spmv_matrix_free(h);
  spmv_matrix_free(m);
  return rc;
}

/* Records an in-process run: the fixed count's or the tolerance's. */
static void took_in(struct row *r, int fixed, const struct bsv_run *run)
{
  double own = r->mt->method == BSV_PAGERANK ? run->resid : run->final;

  if (fixed) {
    r->n_in = run->iters;
    snprintf(r->fwhy_in, sizeof r->fwhy_in, "%s", run->reason);
    r->frep_in = own;
  } else {
    r->t_in = run->iters;
    snprintf(r->why_in, sizeof r->why_in, "%s", run->reason);
    r->rep_in = own;
  }
}

/* The in-process side on the GPU: the set-up and solve to the tolerance
 * three times (x into xtol), then the fixed count (x into xfix). */
static int gpu_side(const struct spmv_csr *A, struct row *r,
                    const int32_t *rp, const void *val, const void *bt,
                    void *xtol, void *xfix)
{
  struct bsv_params fix, tol;
  struct bsv_prob *p = NULL;
  struct bsv_run run;
  double set[3], tts[3], *t = malloc(sizeof *t * (size_t)reps), t0, t1;
  int rc = -1;

  params(r->mt, r->dt, &fix, &tol);
  progress(r, "in-process: set-up and solve");
  for (int i = 0; i < 3; i++) {
    if (!t)
      goto out;
    t0 = bench_now_s();
    if (bsv_prob_new(A, r->dt, r->mt->method, rp, val, &p) < 0)
      goto out;
    t1 = bench_now_s();
    if (bsv_prob_solve(p, &tol, bt, xtol, &run) < 0)
      goto out;
    tts[i] = 1e3 * (bench_now_s() - t0);
    set[i] = 1e3 * (t1 - t0);
    bsv_prob_free(p);
    p = NULL;
  }
  took_in(r, 0, &run);
  r->setup = spmv_median(set, 3);
  r->tts_in = spmv_median(tts, 3);
  progress(r, "in-process: fixed count");
  if (bsv_prob_new(A, r->dt, r->mt->method, rp, val, &p) < 0)
    goto out;
  for (int k = -1; k < reps; k++) {
    if (bsv_prob_solve(p, &fix, bt, k + 1 == reps ? xfix : NULL, &run) < 0 ||
        run.iters == 0)
      goto out;
    if (k >= 0)
      t[k] = 1e3 * run.ms / (double)run.iters;
  }
  took_in(r, 1, &run);
  r->it_in = spmv_median(t, (size_t)reps);
  rc = 0;
out:
  bsv_prob_free(p);
  free(t);
  return rc;
}

/* The dry run's in-process side: the host reference in double, once. */
static int ref_side(const struct spmv_csr *A, struct row *r, const double *b,
                    void *xtol, void *xfix)
{
  struct bsv_params fix, tol;
  struct bsv_run run;
  double *x = malloc(sizeof *x * (size_t)(A->cols + 1));
  size_t bytes = (size_t)A->cols * spmv_dtype_size(r->dt);
  void *xt;
  int rc = -1;

  params(r->mt, r->dt, &fix, &tol);
  progress(r, "host reference");
  if (x && bsv_ref_solve(A, &tol, b, x, &run) == 0 &&
      (xt = bench_typed(x, A->cols, r->dt))) {
    memcpy(xtol, xt, bytes);
    free(xt);
    took_in(r, 0, &run);
    r->tts_in = r->setup = 0;
    if (bsv_ref_solve(A, &fix, b, x, &run) == 0 &&
        (xt = bench_typed(x, A->cols, r->dt))) {
      memcpy(xfix, xt, bytes);
      free(xt);
      took_in(r, 1, &run);
      r->it_in = 1e3 * run.ms / (double)(run.iters ? run.iters : 1);
      rc = 0;
    }
  }
  free(x);
  return rc;
}

/* The Krylov checks of solution i: its residual on the host h against
 * the solver's own (a wrong x, or one other than the solver's, fails)
 * and, when it converged, against the tolerance (a recurrence that
 * drifted from the true residual is flagged).  NULL or what failed. */
static const char *check_krylov(struct row *r, double h, double own,
                                double mag, const char *why)
{
  double eps = r->dt == SPMV_F64 ? 0x1p-52 : 0x1p-23;

  if (!isfinite(h))
    return "x is not finite";
  if (!(fabs(h - own) <= 0.05 * fmax(h, own) + 100 * eps * mag))
    return "x is not the solution the solver reports";
  if (why && !strcmp(why, "converged-rtol") &&
      !(h <= (r->dt == SPMV_F64 ? 10 : 100) * r->rtol))
    r->drift = 1;
  return NULL;
}

/* Checks the four solutions on the host (Av: A with the values in the
 * solvers' type): r's check columns, FAIL lines, r->ok. */
static void verify(const struct spmv_csr *Av, struct row *r, const double *b,
                   void *const xt[4])
{
  double *x[4], mag, *h[4] = { &r->fix_s, &r->fix_in, &r->tol_s,
                                  &r->tol_in };
  const double own[4] = { r->frep_s, r->frep_in, r->rep_s, r->rep_in };
  const char *why[4] = { NULL, NULL, r->why_s, r->why_in }, *bad = NULL;
  double sum_tol = r->dt == SPMV_F64 ? 1e-9 : 1e-4;
  double l1_tol = r->dt == SPMV_F64 ? 1e-10 : 1e-3;
  double floor = r->dt == SPMV_F64 ? 1e-12 : 1e-6;
  struct bsv_params fix, tol;
  int pr = r->mt->method == BSV_PAGERANK;

  params(r->mt, r->dt, &fix, &tol);
  r->rtol = tol.rtol;
  for (int i = 0; i < 4; i++)
    x[i] = widen(xt[i], Av->cols, r->dt);
  for (int i = 0; i < 4; i++) {
    const char *no = NULL;
    if (!x[i])
      no = "out of memory";
    else if (!pr) {
      *h[i] = bsv_relres(Av, b, x[i], &mag);
      no = check_krylov(r, *h[i], own[i], mag, why[i]);
    }
    else if (!isfinite(*h[i] = bsv_pr_step_change(Av, DAMPING, x[i])))
      no = "x is not finite";
    else if (i >= 2 && !(*h[i] <= 10 * r->rtol + floor))
      no = "a converged PageRank vector is not the fixed point";
    bad = bad ? bad : no;
  }
  if (pr && x[0] && x[1] && x[2] && x[3]) {
    r->sum_s = r->sum_in = r->l1_fix = r->l1_tol = 0;
    for (int64_t i = 0; i < Av->cols; i++) {
      r->sum_s += x[0][i];
      r->sum_in += x[1][i];
      r->l1_fix += fabs(x[0][i] - x[1][i]);
      r->l1_tol += fabs(x[2][i] - x[3][i]);
    }
    if (!(fabs(r->sum_s - 1) <= sum_tol) || !(fabs(r->sum_in - 1) <= sum_tol))
      bad = bad ? bad : "a PageRank vector does not sum to 1";
    else if (!(r->l1_fix <= l1_tol))
      bad = bad ? bad : "the two PageRank vectors differ";
  }
  r->ok = bad == NULL;
  if (bad)
    fprintf(stderr, "FAIL: %s %s %s: %s (on the host: fixed count %.3g / "
            "%.3g, tolerance %.3g / %.3g; the solvers' own %.3g / %.3g, "
            "%.3g / %.3g)\n", r->mt->name, spmv_dtype_name(r->dt),
            bsv_method_name(r->mt->method), bad, r->fix_s, r->fix_in,
            r->tol_s, r->tol_in, own[0], own[1], own[2], own[3]);
  if (r->drift)
    fprintf(stderr, "bench_solve: %s %s: a solve that converged by its "
            "recurrence is over its tolerance on the host (%.3g / %.3g, "
            "rtol %g)\n", r->mt->name, spmv_dtype_name(r->dt), r->tol_s,
            r->tol_in, r->rtol);
  for (int i = 0; i < 4; i++)
    free(x[i]);
}

/* Everything for A in r->dt: 0 (r->ok says whether it checked), -1 when
 * it could not be measured. */
static int bench_pair(struct spmv_client *c, const struct spmv_csr *A,
                      struct row *r)
{
  size_t xb = (size_t)A->cols * spmv_dtype_size(r->dt) + 1;
  double *b = malloc(sizeof *b * (size_t)(A->rows + 1)), *vd = NULL;
  int32_t *rp = NULL;
  void *val = NULL, *bt = NULL, *xt[4] = {0};
  struct spmv_csr Av = *A;
  int pr = r->mt->method == BSV_PAGERANK, rc = -1;

  r->rows = A->rows, r->nnz = A->nnz;
  r->mbytes = ((double)A->nnz * (double)(spmv_dtype_size(r->dt) + 4) +
               4.0 * (double)(A->rows + 1)) / 1e6;
  for (int i = 0; i < 4; i++)
    if (!(xt[i] = malloc(xb)))
      goto out;
  if (!b || bcs_narrow(A, r->dt, &rp, &val) < 0)
    goto out;
  gpu_random_vector(b, A->rows, 7);
  if (!pr && !(bt = bench_typed(b, A->rows, r->dt)))
    goto out;
  /* xt: the fixed counts' x (spmvd, in-process), then the tolerance's
   * (svc_side lets the cache hit's solve write xt[0] before the fixed
   * count does). */
  if (r->dt == SPMV_F32 && !(Av.val = vd = widen(val, A->nnz, r->dt)))
    goto out;
  if (svc_side(c, A, r, val, bt, xt[2], xt[0]) < 0 ||
      (dry ? ref_side(&Av, r, b, xt[3], xt[1])
           : gpu_side(A, r, rp, val, bt, xt[3], xt[1])) < 0)
    goto out;
  progress(r, "host check");
  verify(&Av, r, b, xt);
  rc = 0;
out:
  free(vd);
  free(bt);
  free(val);
  free(rp);
  free(b);
  for (int i = 0; i < 4; i++)
    free(xt[i]);
  return rc;
}

/* Load (or set-up) plus the fixed count at the measured speed: time to
 * solution for that many iterations. */
static double tts_n(double load_ms, double it_us, int64_t n)
{
  return load_ms + 1e-3 * it_us * (double)n;
}

static const char *const cols_tsv[] = {
  "matrix", "method", "dtype", "rows", "nnz", "csr_mb", "config",
  "iters_spmvd", "iters_inproc", "reason_spmvd", "reason_inproc",
  "it_us_spmvd", "it_us_worker",
  "it_us_inproc", "it_ratio", "rtol", "tol_iters_spmvd", "tol_reason_spmvd",
  "tol_iters_inproc", "tol_reason_inproc", "load_first_ms", "load_hit_ms",
  "setup_inproc_ms", "tts_first_ms", "tts_hit_ms", "tts_inproc_ms",
  "tts_hit_ratio", "ttsN_hit_ms", "ttsN_inproc_ms", "ttsN_hit_ratio",
  "check_fixed_spmvd", "check_fixed_inproc", "check_tol_spmvd",
  "check_tol_inproc", "own_fixed_spmvd", "own_fixed_inproc",
  "own_tol_spmvd", "own_tol_inproc", "pr_sum_spmvd",
  "pr_sum_inproc", "pr_l1_fixed", "pr_l1_tol", "ok", "drift", NULL
};

static void print_head(void)
{
  printf("%-26s %-3s %-8s %9s %7s %-34s %4s %8s %8s %8s %5s %9s %8s %8s "
         "%7s %8s %8s %8s %5s %5s %s\n", "matrix", "dt", "method", "nnz", "MB",
         "config", "N", "it_spmvd", "it_wkr", "it_inpr", "it_x", "tol_its",
         "load1", "hit", "setup", "tts1", "tts_hit", "tts_in", "hit_x",
         "N_x", "check");
}

static void print_row(const struct row *r, FILE *tsv)
{
  int pr = r->mt->method == BSV_PAGERANK;
  double itx = r->it_s / r->it_in, hitx = r->tts_hit / r->tts_in;
  double nh = tts_n(r->hit, r->it_s, r->n_s);
  double ni = tts_n(r->setup, r->it_in, r->n_in);
  char its[32];
  const double v[] = { r->it_s, r->it_w, r->it_in, itx };
  const double w[] = { r->load1, r->hit, r->setup, r->tts1, r->tts_hit,
                       r->tts_in, hitx, nh / ni };
  const int wv[] = { 8, 8, 8, 5 }, ww[] = { 8, 8, 7, 8, 8, 8, 5, 5 };

  snprintf(its, sizeof its, "%lld/%lld", (long long)r->t_s, (long long)r->t_in);
  printf("%-26s %-3s %-8s %9lld %7.1f %-34s %4lld", r->mt->name,
         spmv_dtype_name(r->dt), bsv_method_name(r->mt->method),
         (long long)r->nnz, r->mbytes, r->config, (long long)r->n_s);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    bench_cell(v[i], wv[i], i == 3 ? 2 : 1);
  printf(" %9s", its);
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    bench_cell(w[i], ww[i], i >= 6 ? 2 : 1);
  printf(" %s\n", !r->ok ? "FAIL" : r->drift ? "drift" : "ok");
  if (pr)
    printf("  pagerank, spmvd / in-process: sum %.9f / %.9f, L1 between the "
           "two %.3g (fixed) %.3g (tolerance), ||Gx - x||_1 %.3g / %.3g "
           "(fixed: %s / %s) %.3g / %.3g (rtol %g: %s / %s)\n", r->sum_s,
           r->sum_in, r->l1_fix, r->l1_tol, r->fix_s, r->fix_in, r->fwhy_s,
           r->fwhy_in, r->tol_s, r->tol_in, r->rtol, r->why_s, r->why_in);
  else
    printf("  residual on the host, spmvd / in-process: %.3g / %.3g after "
           "%lld / %lld iterations (%s / %s); to rtol %g: %.3g / %.3g (%s / "
           "%s; the solvers' own %.3g / %.3g)\n", r->fix_s, r->fix_in,
           (long long)r->n_s, (long long)r->n_in, r->fwhy_s, r->fwhy_in,
           r->rtol, r->tol_s, r->tol_in, r->why_s, r->why_in, r->rep_s,
           r->rep_in);
  fflush(stdout);
  if (!tsv)
    return;
  fprintf(tsv, "%s\t%s\t%s\t%lld\t%lld\t%.1f\t%s\t%lld\t%lld\t%s\t%s\t"
          "%.2f\t%.2f\t%.2f\t%.3f\t%g\t%lld\t%s\t%lld\t%s\t%.2f\t%.2f\t%.2f\t"
          "%.2f\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\t%.3f\t%.6g\t%.6g\t%.6g\t%.6g\t"
          "%.6g\t%.6g\t%.6g\t%.6g\t%.12g\t%.12g\t%.6g\t%.6g\t%d\t%d\n",
          r->mt->name, bsv_method_name(r->mt->method), spmv_dtype_name(r->dt),
          (long long)r->rows, (long long)r->nnz, r->mbytes, r->config,
          (long long)r->n_s, (long long)r->n_in, r->fwhy_s, r->fwhy_in,
          r->it_s, r->it_w, r->it_in,
          itx, r->rtol, (long long)r->t_s, r->why_s, (long long)r->t_in,
          r->why_in, r->load1, r->hit, r->setup, r->tts1, r->tts_hit,
          r->tts_in, hitx, nh, ni, nh / ni, r->fix_s, r->fix_in, r->tol_s,
          r->tol_in, r->frep_s, r->frep_in, r->rep_s, r->rep_in,
          pr ? r->sum_s : NAN, pr ? r->sum_in : NAN, pr ? r->l1_fix : NAN,
          pr ? r->l1_tol : NAN, r->ok, r->drift);
  fflush(tsv);
}

static void header(FILE *f, const char *dev, const char *ver, int argc,
                   char **argv)
{
  char date[64];
  time_t now = time(NULL);

  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  fprintf(f, "# bench_solve: device %s; %s; kernels v%d; %s\n# command:", dev,
          ver, SPMV_KERNEL_VERSION, date);
  for (int i = 0; i < argc; i++)
    fprintf(f, " %s", argv[i]);
  fprintf(f,
    "\n# method: per matrix and type, a fixed count of iterations (N: %d, "
    "PageRank %d; rtol 1e-300) through spmvd (spmv_solve_vec on device "
    "vectors, the call timed alone: it_spmvd client-observed, it_wkr the "
    "worker's) and in-process (cuSPARSE CSR ALG_DEFAULT preprocessed + "
    "cuBLAS with host scalars, x = 0 to the stop, device-synced: it_inpr), "
    "us an iteration, median of %d after a warm-up; it_x = it_spmvd / "
    "it_inpr\n"
    "# to a tolerance (1e-8 f64 / 1e-5 f32; PageRank 1e-10 / 1e-6): tol_its "
    "spmvd/in-process; tts1 = first-sight load (empty cache: the daemon "
    "tunes) + vectors, b up, solve, x down; tts_hit = the same after a "
    "cache-hit load; tts_in = in-process set-up (CSR from pageable memory, "
    "descriptors, buffer, preprocess) + the same, median of 3; hit_x = "
    "tts_hit / tts_in; N_x = (hit + N it_spmvd) / (setup + N it_inpr); ms\n"
    "# check: every solution's ||b - Ax|| / ||b|| (PageRank ||Gx - x||_1, "
    "sum, L1 between the two) recomputed on the host in double from the "
    "CSR in the solver's type\n"
    "# targets (judged, not asserted): it_x <= 1.05 where the formats tie; "
    "hit_x and N_x <= 1 for %d iterations or more\n", iters, PR_ITERS, reps,
    iters);
}

static void usage(FILE *f)
{
  fprintf(f,
    "usage: bench_solve [-m NAMES] [-t f32|f64|both] [-r REPS] [-i ITERS]\n"
    "                   [-s SOCKET] [-o FILE] [-d DIR] [--dry-run]\n"
    "  -m  only matrices whose name contains one of NAMES (comma-separated)\n"
    "  -t  value types (default both)   -r  timed solves per measurement (5)\n"
    "  -i  CG and BiCGStab's fixed count of iterations (200; PageRank %d)\n"
    "  -s  a running spmvd's socket (default: start a private one, cuda\n"
    "      backend, empty cache)        -o  also write the rows as TSV\n"
    "  -d  matrix folder (default $SPMV_MATRICES, else tests/data/matrices)\n"
    "  --dry-run  no GPU: spmvd's cpu backend against the host reference in\n"
    "      double, on each matrix at a small size\n"
    "Matrices:", PR_ITERS);
  for (size_t i = 0; i < NMATS; i++)
    fprintf(f, " %s (%s)", mats[i].name, bsv_method_name(mats[i].method));
  fputc('\n', f);
}

int main(int argc, char **argv)
{
  static const struct option lopts[] = { {"help", no_argument, NULL, 'h'},
                                         {"dry-run", no_argument, NULL, 'D'},
                                         {NULL, 0, NULL, 0} };
  char dev[256] = "none (dry run)", ver[256] = "cpu backend";
  const char *sock = NULL, *only = NULL, *out = NULL, *dir = NULL;
  struct bench_svc svc;
  struct spmv_error err = {0};
  FILE *tsv = NULL;
  int dts = 3, opt, rc = 0, failed = 0;

  while ((opt = getopt_long(argc, argv, "m:t:r:i:s:o:d:h", lopts, NULL)) != -1) {
    switch (opt) {
    case 'm': only = optarg; break;
    case 't': dts = bench_dtypes(optarg); break;
    case 'r': reps = atoi(optarg); break;
    case 'i': iters = atoi(optarg); break;
    case 's': sock = optarg; break;
    case 'o': out = optarg; break;
    case 'd': dir = optarg; break;
    case 'D': dry = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc || dts == 0 || reps < 1 || reps > 1000 || iters < 1 ||
      iters > TOL_MAXITER) {
    usage(stderr);
    return 2;
  }
  t_start = bench_now_s();
  if (!dry && (rc = bsv_gpu_init(dev, sizeof dev, ver, sizeof ver)) != 0)
    return rc;
  if (out && !(tsv = fopen(out, "w"))) {
    fprintf(stderr, "bench_solve: %s: %s\n", out, strerror(errno));
    return 1;
  }
  if (bench_svc_open(&svc, "bench_solve", SPMV_BENCH_SPMVD, dry ? "cpu" : "cuda",
                     sock) < 0) {
    rc = 1;
    goto done;
  }
  header(stdout, dev, ver, argc, argv);
  if (tsv) {
    header(tsv, dev, ver, argc, argv);
    bench_tsv_head(tsv, cols_tsv);
  }
  print_head();
  for (size_t i = 0; i < NMATS; i++) {
    struct row r = { .mt = &mats[i] };
    struct spmv_csr *A;
    if (!bench_suite_name_matches(mats[i].name, only))
      continue;
    r.dt = dts & 2 ? SPMV_F64 : SPMV_F32;
    progress(&r, "building the matrix");
    if (!(A = make(&mats[i], dir, &err))) {
      fprintf(stderr, "bench_solve: %s: %s: skipped\n", mats[i].name, err.msg);
      failed = 1;
      continue;
    }
    for (int d = 2; d >= 1; d--) {
      if (!(dts & d))
        continue;
      memset(&r, 0, sizeof r);
      r.mt = &mats[i];
      r.dt = d == 1 ? SPMV_F32 : SPMV_F64;
      if (bench_pair(svc.c, A, &r) < 0) {
        fprintf(stderr, "bench_solve: %s %s: could not be measured\n",
                mats[i].name, spmv_dtype_name(r.dt));
        failed = 1;
      } else {
        print_row(&r, tsv);
        failed |= !r.ok;
      }
    }
    spmv_csr_free(A);
  }
  fprintf(stderr, "[%6.1f s] done\n", bench_now_s() - t_start);
done:
  bench_svc_close(&svc);
  if (tsv)
    fclose(tsv);
  if (!dry)
    bsv_gpu_fini();
  return rc || failed;
}
