/* check_split_vectors.c: device vectors split like a split matrix's rows
 * and the lists on them (issue 54), against a daemon of three cpu workers
 * (check_gpu_split.sh: cuda workers): products, reductions and the
 * scalars that read them against the double-precision reference, a CG
 * written as lists of operations against the reference and the same CG
 * on one worker, and the refusals of lists that mix splits; solves on
 * split device vectors against the same solves on host vectors and the
 * reference, and the refusals of vectors that lie otherwise than their
 * matrix. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"

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

static int load(const struct spmv_csr *A, enum spmv_dtype dt, int split,
                struct spmv_matrix **m)
{
  struct spmv_load_options o;
  float *v = NULL;

  if (dt == SPMV_F32) {
    v = malloc(sizeof *v * (size_t)(A->nnz ? A->nnz : 1));
    ck_assert_ptr_nonnull(v);
    for (int64_t k = 0; k < A->nnz; k++)
      v[k] = (float)A->val[k];
  }
  spmv_load_options_init(&o);
  o.split = split;
  int rc = spmv_load_csr(c, dt, A->rows, A->cols, A->nnz, A->row_ptr, A->col_idx,
                         v ? (const void *)v : (const void *)A->val, &o, m);
  free(v);
  return rc;
}

/* n values in [-0.5, 0.5) of seed, as dt (in buf) and in double (in d),
 * the double ones those the dt ones stand for. */
static void random_vec(unsigned seed, size_t n, enum spmv_dtype dt, void *buf,
                       double *dv)
{
  srand(seed);
  for (size_t i = 0; i < n; i++) {
    double x = (double)rand() / RAND_MAX - 0.5;
    if (dt == SPMV_F32) {
      ((float *)buf)[i] = (float)x;
      dv[i] = (float)x;
    } else {
      ((double *)buf)[i] = x;
      dv[i] = x;
    }
  }
}

static double at(const void *buf, enum spmv_dtype dt, size_t i)
{
  return dt == SPMV_F32 ? ((const float *)buf)[i] : ((const double *)buf)[i];
}

static double dotd(const double *a, const double *b, size_t n)
{
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

/* Worst |got - want| over n, relative to the largest |want| (at least 1). */
static double rel_err(const void *got, enum spmv_dtype dt, const double *want,
                      size_t n)
{
  double e = 0, scale = 1;
  for (size_t i = 0; i < n; i++) {
    e = fmax(e, fabs(at(got, dt, i) - want[i]));
    scale = fmax(scale, fabs(want[i]));
  }
  return e / scale;
}

/* One list on vectors like m (A split in blocks): y = 2 A x + 0.5 y0,
 * r0 = x . y, r1 = ||y||, y += (r0 / r1) x, z = A y, then y and z
 * downloaded; each against the reference. */
static void list_ok(struct spmv_matrix *m, const struct spmv_csr *A,
                    enum spmv_dtype dt)
{
  size_t n = (size_t)A->rows, es = dt == SPMV_F32 ? 4 : 8;
  double *xd = malloc(n * 8), *yd = malloc(n * 8), *zd = malloc(n * 8);
  void *x = malloc(n * es), *y0 = malloc(n * es), *y = malloc(n * es),
       *z = malloc(n * es);
  double tol = dt == SPMV_F32 ? 1e-4 : 1e-12, res[2];
  struct spmv_vector *vx, *vy, *vz;
  struct spmv_oplist *l;

  ck_assert(xd && yd && zd && x && y0 && y && z);
  random_vec(7, n, dt, x, xd);
  random_vec(8, n, dt, y0, yd);
  ck_assert_int_eq(spmv_vector_new_like(m, &vx), 0);
  ck_assert_int_eq(spmv_vector_new_like(m, &vy), 0);
  ck_assert_int_eq(spmv_vector_new_like(m, &vz), 0);
  ck_assert_int_eq(spmv_vector_length(vx), A->rows);
  ck_assert_int_eq(spmv_vector_dtype(vx), dt);
  ck_assert_int_eq(spmv_oplist_new(c, &l), 0);
  ck_assert_int_eq(spmv_op_upload(l, vx, x), 0);
  ck_assert_int_eq(spmv_op_upload(l, vy, y0), 0);
  ck_assert_int_eq(spmv_op_spmv(l, m, 2.0, vx, 0.5, vy), 0);
  ck_assert_int_eq(spmv_op_dot(l, vx, vy), 0);
  ck_assert_int_eq(spmv_op_nrm2(l, vy), 1);
  ck_assert_int_eq(spmv_op_axpby(l, spmv_scalar_ratio(1.0, 0, 1), vx,
                                 spmv_scalar_const(1.0), vy), 0);
  ck_assert_int_eq(spmv_op_spmv(l, m, 1.0, vy, 0.0, vz), 0);
  ck_assert_int_eq(spmv_op_download(l, vy, y), 0);
  ck_assert_int_eq(spmv_op_download(l, vz, z), 0);
  ck_assert_msg(spmv_oplist_run(l, res, 2) == 0, "%s", spmv_client_errmsg(c));

  spmv_csr_ref(A, 2.0, xd, 0.5, yd);
  double r0 = dotd(xd, yd, n), r1 = sqrt(dotd(yd, yd, n));
  ck_assert_msg(fabs(res[0] - r0) <= tol * fmax(1, fabs(r0)) * 10,
                "x . y %.17g, reference %.17g", res[0], r0);
  ck_assert_msg(fabs(res[1] - r1) <= tol * fmax(1, r1) * 10,
                "||y|| %.17g, reference %.17g", res[1], r1);
  for (size_t i = 0; i < n; i++)
    yd[i] += r0 / r1 * xd[i];
  spmv_csr_ref(A, 1.0, yd, 0.0, zd);
  ck_assert_msg(rel_err(y, dt, yd, n) <= tol * 10, "y: error %g",
                rel_err(y, dt, yd, n));
  ck_assert_msg(rel_err(z, dt, zd, n) <= tol * 100, "z: error %g",
                rel_err(z, dt, zd, n));
  spmv_oplist_free(l);
  spmv_vector_free(vx);
  spmv_vector_free(vy);
  spmv_vector_free(vz);
  free(xd);
  free(yd);
  free(zd);
  free(x);
  free(y0);
  free(y);
  free(z);
}

/* Lists on 2 and 3 blocks (and 1: the vector is not split) in both
 * types, on a matrix whose blocks have halos both ways. */
START_TEST(split_lists)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_matrix *m;

  for (int split = 1; split <= nw; split++)
    for (int f32 = 0; f32 <= 1; f32++) {
      enum spmv_dtype dt = f32 ? SPMV_F32 : SPMV_F64;
      ck_assert_int_eq(load(A, dt, split, &m), 0);
      ck_assert_int_eq(spmv_matrix_blocks(m), split);
      list_ok(m, A, dt);
      spmv_matrix_free(m);
    }
  spmv_csr_free(A);
}
END_TEST

/* A 2-D Laplacian of a g x g grid, diagonal 4.5: SPD. */
static struct spmv_csr *laplacian(int64_t g)
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
        A->val[k++] = nb[j] == i ? 4.5 : -1.0;
      }
  }
  A->row_ptr[n] = k;
  A->nnz = k;
  return A;
}

/* CG written by the client, one list an iteration (p = r + beta p,
 * q = A p, alpha = rho / p.q in the list's scalars, x and r updated,
 * r . r), on m; returns the iterations to ||r|| <= 1e-10 ||b||, x in x. */
static int cg_lists(struct spmv_matrix *m, const double *b, double *x)
{
  struct spmv_vector *vx, *vr, *vp, *vq;
  struct spmv_oplist *l;
  double rho, prev = 0, bb, res[2];
  int it;

  ck_assert_int_eq(spmv_vector_new_like(m, &vx), 0);
  ck_assert_int_eq(spmv_vector_new_like(m, &vr), 0);
  ck_assert_int_eq(spmv_vector_new_like(m, &vp), 0);
  ck_assert_int_eq(spmv_vector_new_like(m, &vq), 0);
  ck_assert_int_eq(spmv_oplist_new(c, &l), 0);
  spmv_op_upload(l, vr, b);
  spmv_op_copy(l, vr, vp);
  spmv_op_fill(l, vx, spmv_scalar_const(0.0));
  spmv_op_dot(l, vr, vr);
  ck_assert_msg(spmv_oplist_run(l, res, 1) == 0, "%s", spmv_client_errmsg(c));
  rho = bb = res[0];
  for (it = 0; it < 2000 && rho > 1e-20 * bb; it++) {
    spmv_oplist_clear(l);
    if (it > 0)
      spmv_op_axpby(l, spmv_scalar_const(1.0), vr, spmv_scalar_const(rho / prev), vp);
    spmv_op_spmv(l, m, 1.0, vp, 0.0, vq);
    spmv_op_dot(l, vp, vq);
    spmv_op_axpby(l, spmv_scalar_ratio(rho, -1, 0), vp, spmv_scalar_const(1.0), vx);
    spmv_op_axpby(l, spmv_scalar_ratio(-rho, -1, 0), vq, spmv_scalar_const(1.0), vr);
    spmv_op_dot(l, vr, vr);
    ck_assert_msg(spmv_oplist_run(l, res, 2) == 0, "iteration %d: %s", it,
                  spmv_client_errmsg(c));
    prev = rho;
    rho = res[1];
  }
  ck_assert_int_eq(spmv_vector_download(vx, x), 0);
  spmv_oplist_free(l);
  spmv_vector_free(vx);
  spmv_vector_free(vr);
  spmv_vector_free(vp);
  spmv_vector_free(vq);
  return it;
}

/* The same CG on 1, 2 and 3 blocks: each converges, to ||b - A x|| <=
 * 1e-9 ||b|| by the reference product, in about the unsplit iterations
 * (the blocks' sums run in another order). */
START_TEST(split_cg)
{
  struct spmv_csr *A = laplacian(48);
  size_t n = (size_t)A->rows;
  double *b = malloc(n * 8), *x = malloc(n * 8), *ax = malloc(n * 8);
  struct spmv_matrix *m;
  int whole = 0;

  ck_assert(b && x && ax);
  random_vec(3, n, SPMV_F64, b, b);
  for (int split = 1; split <= nw; split++) {
    ck_assert_int_eq(load(A, SPMV_F64, split, &m), 0);
    int it = cg_lists(m, b, x);
    ck_assert_msg(it < 2000, "%d blocks: no convergence", split);
    spmv_csr_ref(A, 1.0, x, 0.0, ax);
    double num = 0;
    for (size_t i = 0; i < n; i++)
      num += (b[i] - ax[i]) * (b[i] - ax[i]);
    ck_assert_msg(sqrt(num / dotd(b, b, n)) <= 1e-9, "%d blocks: relative "
                  "residual %g", split, sqrt(num / dotd(b, b, n)));
    if (split == 1)
      whole = it;
    ck_assert_msg(abs(it - whole) <= whole / 10 + 2, "%d blocks: %d iterations, "
                  "unsplit %d", split, it, whole);
    spmv_matrix_free(m);
  }
  free(b);
  free(x);
  free(ax);
  spmv_csr_free(A);
}
END_TEST

/* A list that mixes split and unsplit vectors, or two splits, is refused
 * naming both steps, and nothing runs; like names a matrix of the
 * caller's of n rows; the client goes on. */
START_TEST(split_mixed_refused)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  /* The other split: A's rows over 3 workers, or on 2 (one GPU's two
   * workers) another matrix's rows. */
  int kb = nw >= 3 ? 3 : 2;
  struct spmv_csr *B = kb == 3 ? A : laplacian(30);
  struct spmv_matrix *m2, *m3;
  struct spmv_vector *a, *b, *plain;
  struct spmv_oplist *l;
  double r;
  char msg[96];

  ck_assert_int_eq(load(A, SPMV_F64, 2, &m2), 0);
  ck_assert_int_eq(load(B, SPMV_F64, kb, &m3), 0);
  ck_assert_int_eq(spmv_vector_new_like(m2, &a), 0);
  ck_assert_int_eq(spmv_vector_new_like(m3, &b), 0);
  ck_assert_int_eq(spmv_vector_new(c, SPMV_F64, A->rows, &plain), 0);
  ck_assert_int_eq(spmv_oplist_new(c, &l), 0);

  spmv_op_fill(l, a, spmv_scalar_const(1.0));
  spmv_op_spmv(l, m2, 1.0, a, 0.0, plain);
  ck_assert_int_eq(spmv_oplist_run(l, NULL, 0), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "ops[1] (spmv): vector") &&
                strstr(spmv_client_errmsg(c), "is not split, and ops[0]"),
                "%s", spmv_client_errmsg(c));

  spmv_oplist_clear(l);
  spmv_op_fill(l, a, spmv_scalar_const(1.0));
  spmv_op_dot(l, a, b);
  ck_assert_int_eq(spmv_oplist_run(l, &r, 1), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "other rows or workers than "
                       "what ops[0]"), "%s", spmv_client_errmsg(c));

  spmv_oplist_clear(l);
  spmv_op_fill(l, plain, spmv_scalar_const(1.0));
  spmv_op_spmv(l, m3, 1.0, plain, 0.0, b);
  ck_assert_int_eq(spmv_oplist_run(l, NULL, 0), SPMV_EINVAL);
  snprintf(msg, sizeof msg, "is split over %d workers, and ops[0] names one "
           "that is not", kb);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "matrix") &&
                strstr(spmv_client_errmsg(c), msg), "%s", spmv_client_errmsg(c));

  /* Through the protocol: like's errors, and a split vector's reply. */
  int s = itest_open(&d);
  json_t *rep = itest_call(s, json_pack("{ss si ss si si}", "op", "vector-create",
                                        "id", 2, "dtype", "f64", "n", 5, "like",
                                        999999), NULL, 0, NULL, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rep, "error"), "code")), "ENOENT");
  json_decref(rep);
  /* A handle of this uid's, loaded on the client's connection. */
  char *dec = NULL;
  ck_assert_int_eq(spmv_matrix_decision_json(m3, &dec), 0);
  json_t *dj = json_loads(dec, 0, NULL);
  free(dec);
  json_int_t h = json_integer_value(json_object_get(dj, "handle"));
  json_decref(dj);
  ck_assert_int_gt(h, 0);
  rep = itest_call(s, json_pack("{ss si ss si sI}", "op", "vector-create", "id",
                                3, "dtype", "f64", "n", 5, "like", h),
                   NULL, 0, NULL, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rep, "error"), "code")), "EINVAL");
  ck_assert_msg(strstr(json_string_value(json_object_get(json_object_get(rep, "error"), "message")),
                       "a vector like it holds a value a row"), "%s",
                json_string_value(json_object_get(json_object_get(rep, "error"), "message")));
  json_decref(rep);
  rep = itest_call(s, json_pack("{ss si ss sI sI}", "op", "vector-create", "id",
                                4, "dtype", "f32", "n", (json_int_t)B->rows,
                                "like", h), NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(rep, "ok")), "vector-create like");
  ck_assert_int_eq(json_integer_value(json_object_get(rep, "blocks")), kb);
  json_decref(rep);
  close(s);

  /* The refusals ran nothing: a's fill did not happen. */
  spmv_oplist_clear(l);
  spmv_op_nrm2(l, a);
  ck_assert_int_eq(spmv_oplist_run(l, &r, 1), 0);
  ck_assert(r == 0.0);
  spmv_oplist_free(l);
  spmv_vector_free(a);
  spmv_vector_free(b);
  spmv_vector_free(plain);
  spmv_matrix_free(m2);
  spmv_matrix_free(m3);
  if (B != A)
    spmv_csr_free(B);
  spmv_csr_free(A);
}
END_TEST

/* The solve on device vectors split like the matrix equals the same solve
 * on host vectors (the blocks run one code on the same inputs: the same
 * iterations and bits), and its x lies within the method's tolerance of
 * the reference; on 2 and 3 blocks, both types, CG, GMRES and PageRank
 * (on the grid's absolute values, a graph), from a start that is not zero. */
START_TEST(split_solve_vec)
{
  struct spmv_csr *A = laplacian(40), *G = laplacian(40);
  size_t n = (size_t)A->rows;
  const char *methods[] = {"cg", "gmres", "pagerank"};
  double *bd = malloc(n * 8), *x0d = malloc(n * 8), *ax = malloc(n * 8);
  double *xd = malloc(n * 8);
  void *b = malloc(n * 8), *x0 = malloc(n * 8), *xh = malloc(n * 8),
       *xv = malloc(n * 8);

  ck_assert(bd && x0d && ax && xd && b && x0 && xh && xv);
  for (int64_t k = 0; k < G->nnz; k++)
    G->val[k] = fabs(G->val[k]);
  for (int split = 2; split <= nw; split++)
    for (int t = 0; t < 2; t++)
      for (int k = 0; k < 3; k++) {
        enum spmv_dtype dt = t ? SPMV_F32 : SPMV_F64;
        size_t vs = t ? 4 : 8;
        int pr = k == 2;
        const struct spmv_csr *M = pr ? G : A;
        struct spmv_matrix *m;
        struct spmv_vector *vb = NULL, *vx;
        struct spmv_solve_options o;
        struct spmv_solve_result rh, rv;

        ck_assert_int_eq(load(M, dt, split, &m), 0);
        random_vec(11, n, dt, b, bd);
        random_vec(12, n, dt, x0, x0d);
        if (pr)  /* a start of positive values */
          for (size_t i = 0; i < n; i++) {
            x0d[i] = fabs(x0d[i]) + 0.25;
            if (t)
              ((float *)x0)[i] = (float)x0d[i];
            else
              ((double *)x0)[i] = x0d[i];
          }
        spmv_solve_options_init(&o);
        o.method = methods[k];
        o.maxiter = pr ? 400 : 0;  /* 0.85^k falls to 1e-10 by k = 142 */
        memcpy(xh, x0, n * vs);
        ck_assert_msg(spmv_solve(m, pr ? NULL : b, xh, 1, &o, &rh) == 0,
                      "%s host: %s", methods[k], spmv_client_errmsg(c));
        if (!pr) {
          ck_assert_int_eq(spmv_vector_new_like(m, &vb), 0);
          ck_assert_int_eq(spmv_vector_upload(vb, b), 0);
        }
        ck_assert_int_eq(spmv_vector_new_like(m, &vx), 0);
        ck_assert_int_eq(spmv_vector_upload(vx, x0), 0);
        ck_assert_msg(spmv_solve_vec(m, vb, vx, &o, &rv) == 0, "%s %d blocks "
                      "%s: %s", methods[k], split, t ? "f32" : "f64",
                      spmv_client_errmsg(c));
        ck_assert_int_eq(spmv_vector_download(vx, xv), 0);
        ck_assert_msg(rv.converged && rv.iterations == rh.iterations &&
                      strcmp(rv.reason, rh.reason) == 0,
                      "%s %d blocks %s: %lld iterations (%s) on device vectors,"
                      " %lld (%s) on host ones", methods[k], split,
                      t ? "f32" : "f64", (long long)rv.iterations, rv.reason,
                      (long long)rh.iterations, rh.reason);
        ck_assert_msg(memcmp(xv, xh, n * vs) == 0, "%s %d blocks %s: x differs "
                      "from the host vectors' solve", methods[k], split,
                      t ? "f32" : "f64");
        for (size_t i = 0; i < n; i++)
          xd[i] = at(xv, dt, i);
        if (pr) {
          /* The solution sums to 1 and is the iteration's fixed point:
           * ||x - (0.85 G D^-1 x + 0.15 / n)||_1 small (no column of the
           * grid dangles). */
          double *csum = calloc(n, 8), *t1 = malloc(n * 8), sum = 0, dev = 0;
          ck_assert(csum && t1);
          for (int64_t r = 0; r < G->rows; r++)
            for (int64_t q = G->row_ptr[r]; q < G->row_ptr[r + 1]; q++)
              csum[G->col_idx[q]] += G->val[q];
          for (size_t i = 0; i < n; i++) {
            t1[i] = xd[i] / csum[i];
            sum += xd[i];
          }
          spmv_csr_ref(G, 0.85, t1, 0.0, ax);
          for (size_t i = 0; i < n; i++)
            dev += fabs(xd[i] - ax[i] - 0.15 / (double)n);
          ck_assert_msg(fabs(sum - 1) <= (t ? 1e-4 : 1e-9) && dev <= (t ? 1e-4 : 1e-8),
                        "pagerank %d blocks %s: sum %g, fixed point off by %g",
                        split, t ? "f32" : "f64", sum, dev);
          free(csum);
          free(t1);
        } else {
          spmv_csr_ref(A, 1.0, xd, 0.0, ax);
          double num = 0;
          for (size_t i = 0; i < n; i++)
            num += (bd[i] - ax[i]) * (bd[i] - ax[i]);
          double rel = sqrt(num / dotd(bd, bd, n));
          ck_assert_msg(rel <= (t ? 1e-4 : 1e-7), "%s %d blocks %s: relative "
                        "residual %g by the reference", methods[k], split,
                        t ? "f32" : "f64", rel);
        }
        spmv_vector_free(vb);
        spmv_vector_free(vx);
        spmv_matrix_free(m);
      }
  free(bd);
  free(x0d);
  free(ax);
  free(xd);
  free(b);
  free(x0);
  free(xh);
  free(xv);
  spmv_csr_free(A);
  spmv_csr_free(G);
}
END_TEST

/* A solve's device vectors lie as its matrix: a split matrix's must be
 * made like it (or like one split alike), an unsplit matrix's must not be
 * split; each refusal names the vector, and the vectors stay usable. */
START_TEST(split_solve_refused)
{
  struct spmv_csr *A = laplacian(20);
  struct spmv_matrix *m1, *m2, *m3;
  struct spmv_vector *plain, *v2, *v3;
  struct spmv_solve_result r;
  double nrm;

  ck_assert_int_eq(load(A, SPMV_F64, 1, &m1), 0);
  ck_assert_int_eq(load(A, SPMV_F64, 2, &m2), 0);
  ck_assert_int_eq(spmv_vector_new(c, SPMV_F64, A->rows, &plain), 0);
  ck_assert_int_eq(spmv_vector_new_like(m2, &v2), 0);
  ck_assert_int_eq(spmv_vector_fill(plain, 1.0), 0);
  ck_assert_int_eq(spmv_vector_fill(v2, 1.0), 0);

  ck_assert_int_eq(spmv_solve_vec(m2, plain, v2, NULL, &r), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "b: vector") &&
                strstr(spmv_client_errmsg(c), "is not split, matrix") &&
                strstr(spmv_client_errmsg(c), "like"), "%s",
                spmv_client_errmsg(c));
  ck_assert_int_eq(spmv_solve_vec(m1, plain, v2, NULL, &r), SPMV_EINVAL);
  ck_assert_msg(strstr(spmv_client_errmsg(c), "x: vector") &&
                strstr(spmv_client_errmsg(c), "is split over 2 workers, "
                       "matrix"), "%s", spmv_client_errmsg(c));
  if (nw >= 3) {
    ck_assert_int_eq(load(A, SPMV_F64, 3, &m3), 0);
    ck_assert_int_eq(spmv_vector_new_like(m3, &v3), 0);
    ck_assert_int_eq(spmv_solve_vec(m3, v3, v2, NULL, &r), SPMV_EINVAL);
    ck_assert_msg(strstr(spmv_client_errmsg(c), "x: vector") &&
                  strstr(spmv_client_errmsg(c), "other rows or workers"), "%s",
                  spmv_client_errmsg(c));
    spmv_vector_free(v3);
    spmv_matrix_free(m3);
  }
  /* Nothing ran: x is still the ones it was filled with. */
  struct spmv_oplist *l;
  ck_assert_int_eq(spmv_oplist_new(c, &l), 0);
  spmv_op_nrm2(l, v2);
  ck_assert_int_eq(spmv_oplist_run(l, &nrm, 1), 0);
  ck_assert_msg(fabs(nrm - sqrt((double)A->rows)) <= 1e-12 * nrm, "%g", nrm);
  spmv_oplist_free(l);
  spmv_vector_free(plain);
  spmv_vector_free(v2);
  spmv_matrix_free(m1);
  spmv_matrix_free(m2);
  spmv_csr_free(A);
}
END_TEST

/* A list's call on its way to block 1's worker, stopped, then killed:
 * the list is EWORKER and the other blocks, waiting at their barrier for
 * it, are let go; once the worker is back the vectors' values are lost
 * (a list reading them is EWORKER) and a list that writes them first runs
 * right. */
START_TEST(split_list_worker_dies)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  size_t n = (size_t)A->rows;
  int s = itest_open(&d);
  json_t *r = itest_load_split(s, 1, A, 0, 2);
  int64_t h = itest_handle(r);
  int vwk = (int)json_integer_value(json_array_get(json_object_get(r, "workers"), 1));
  json_decref(r);
  int64_t v[2];
  for (int i = 0; i < 2; i++) {
    r = itest_call(s, json_pack("{ss si ss sI sI}", "op", "vector-create", "id",
                                2 + i, "dtype", "f64", "n", (json_int_t)n, "like",
                                (json_int_t)h), NULL, 0, NULL, NULL);
    ck_assert_msg(json_is_true(json_object_get(r, "ok")), "vector-create");
    v[i] = json_integer_value(json_object_get(r, "vector"));
    json_decref(r);
  }
  r = itest_call(s, json_pack("{ss si}", "op", "status", "id", 4), NULL, 0, NULL,
                 NULL);
  pid_t victim = (pid_t)json_integer_value(json_object_get(
      json_array_get(json_object_get(r, "workers"), (size_t)vwk), "pid"));
  json_decref(r);
  ck_assert_int_gt(victim, 0);
  char steps[512];
  snprintf(steps, sizeof steps,
           "[{\"op\":\"fill\",\"x\":%lld,\"value\":1},"
           "{\"op\":\"spmv\",\"handle\":%lld,\"x\":%lld,\"y\":%lld},"
           "{\"op\":\"dot\",\"x\":%lld,\"y\":%lld}]",
           (long long)v[0], (long long)h, (long long)v[0], (long long)v[1],
           (long long)v[1], (long long)v[1]);
  ck_assert_int_eq(kill(victim, SIGSTOP), 0);
  ck_assert_int_eq(itest_send(s, json_pack("{ss si so}", "op", "ops", "id", 5,
                                           "ops", json_loads(steps, 0, NULL)),
                              NULL, 0), 0);
  usleep(200000);  /* block 0 at its barrier, for all the test can tell */
  ck_assert_int_eq(kill(victim, SIGKILL), 0);
  r = itest_recv_reply(s, NULL, NULL, NULL);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  json_decref(r);
  itest_multiply_after_restart(s, h, A);
  char reads[128];
  snprintf(reads, sizeof reads, "[{\"op\":\"dot\",\"x\":%lld,\"y\":%lld}]",
           (long long)v[1], (long long)v[1]);
  r = itest_call(s, json_pack("{ss si so}", "op", "ops", "id", 6, "ops",
                              json_loads(reads, 0, NULL)), NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  json_decref(r);
  r = itest_call(s, json_pack("{ss si so}", "op", "ops", "id", 7, "ops",
                              json_loads(steps, 0, NULL)), NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "the list after the "
                "restart: %s", itest_error_code(r));
  double got = json_number_value(json_array_get(json_object_get(r, "results"), 0));
  json_decref(r);
  double *one = malloc(n * 8), *y = malloc(n * 8);
  ck_assert(one && y);
  for (size_t i = 0; i < n; i++)
    one[i] = 1.0;
  spmv_csr_ref(A, 1.0, one, 0.0, y);
  double want = dotd(y, y, n);
  ck_assert_msg(fabs(got - want) <= 1e-12 * want, "(A 1).(A 1) = %.17g, "
                "reference %.17g", got, want);
  free(one);
  free(y);
  close(s);
  spmv_csr_free(A);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("split_vectors");
  TCase *tc = tcase_create("split_vectors");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, on_gpus() ? 300 : 120);
  tcase_add_test(tc, split_lists);
  tcase_add_test(tc, split_cg);
  tcase_add_test(tc, split_mixed_refused);
  tcase_add_test(tc, split_solve_vec);
  tcase_add_test(tc, split_solve_refused);
  tcase_add_test(tc, split_list_worker_dies);
  suite_add_tcase(s, tc);
  return itest_run(s);
}
