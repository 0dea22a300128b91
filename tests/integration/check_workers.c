/* check_workers.c: a daemon of several workers (the cpu backend's
 * --cpu-workers): each listed, connections spread over them, a matrix used
 * from another worker's connection, one worker's death leaving the others
 * serving. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "itest.h"
#include "spmv_formats.h"

#define NW 3

static struct itest_daemon d;

static void setup(void)
{
  itest_daemon_init(&d);
  ck_assert_int_eq(itest_daemon_start(&d, "--cpu-workers=3"), 0);
}

static void teardown(void)
{
  itest_daemon_fini(&d);
}

/* status's workers on s (a new reference), after waiting up to 10 s for
 * NW of them to be ready. */
static json_t *ready_workers(int s)
{
  double t0 = itest_now_s();

  for (;;) {
    json_t *r = itest_call(s, json_pack("{ss si}", "op", "status", "id", 7),
                           NULL, 0, NULL, NULL);
    ck_assert_msg(r && json_is_true(json_object_get(r, "ok")), "no status");
    json_t *w = json_incref(json_object_get(r, "workers"));
    json_decref(r);
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(w); i++) {
      const char *st = json_string_value(json_object_get(json_array_get(w, i), "state"));
      n += st && strcmp(st, "ready") == 0;
    }
    if (n == NW)
      return w;
    if (itest_now_s() - t0 >= 10) {
      char *text = json_dumps(w, JSON_COMPACT);
      ck_abort_msg("%zu of %d workers ready after 10 s: %s (log %s)", n, NW,
                   text ? text : "?", d.log);
    }
    json_decref(w);
    usleep(20000);
  }
}

/* Waits until the daemon counts n connections: the start's own has gone,
 * so that the next connection's placement counts only the test's. */
static void settle(int s, int64_t n)
{
  double t0 = itest_now_s();
  int64_t have;

  while ((have = itest_status_int(s, "connections")) != n) {
    ck_assert_msg(itest_now_s() - t0 < 10, "%lld connections, not %lld",
                  (long long)have, (long long)n);
    usleep(10000);
  }
}

/* Opens a connection once the n before it are settled, placed where the
 * fewest connections are. */
static int open_next(int n)
{
  int s = itest_open(&d);
  settle(s, n + 1);
  return s;
}

static int64_t wint(json_t *workers, int i, const char *key)
{
  return json_integer_value(json_object_get(json_array_get(workers, (size_t)i), key));
}

/* NW connections, opened once every worker is ready (so that each is
 * placed on a worker of its own), each loading its A[i] as handle h[i]. */
static void open_and_load(int s[NW], int64_t h[NW], struct spmv_csr *const A[NW])
{
  s[0] = itest_open(&d);
  json_decref(ready_workers(s[0]));
  settle(s[0], 1);
  for (int i = 1; i < NW; i++)
    s[i] = open_next(i);
  for (int i = 0; i < NW; i++)
    for (int j = 0; j < i; j++)
      ck_assert_int_ne(itest_status_int(s[i], "worker"), itest_status_int(s[j], "worker"));
  for (int i = 0; i < NW; i++) {
    json_t *r = itest_load(s[i], 10 + i, A[i], 0, "auto");
    h[i] = itest_handle(r);
    json_decref(r);
  }
}

/* Placement weighs device vectors as it weighs matrices: with a small
 * matrix on every other worker and only vectors on one, a new connection
 * goes to another worker than that one (by matrices alone it held nothing
 * and took it). */
START_TEST(placed_by_vectors)
{
  struct spmv_csr *A = itest_random_csr(300, 5, 2, 77);
  int s[NW + 1];

  s[0] = itest_open(&d);
  json_decref(ready_workers(s[0]));
  settle(s[0], 1);
  for (int i = 1; i < NW; i++)
    s[i] = open_next(i);
  /* s[0] was placed while the daemon's start may still have held a
   * connection: its worker is read, not assumed. */
  int64_t w0 = itest_status_int(s[0], "worker");
  for (int i = 1; i < NW; i++)
    ck_assert_int_ne(itest_status_int(s[i], "worker"), w0);
  json_t *r = itest_call(s[0], json_pack("{ss si ss si}", "op", "vector-create",
                                         "id", 1, "dtype", "f64", "n", 1 << 20),
                         NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "vector-create failed");
  json_decref(r);
  for (int i = 1; i < NW; i++) {
    r = itest_load(s[i], 2, A, 0, "auto");
    itest_handle(r);
    json_decref(r);
  }
  s[NW] = open_next(NW);
  ck_assert_int_ne(itest_status_int(s[NW], "worker"), w0);
  for (int i = 0; i <= NW; i++)
    close(s[i]);
  spmv_csr_free(A);
}
END_TEST

/* Each worker listed once, numbered, with a process of its own. */
START_TEST(listed)
{
  int s = itest_open(&d);
  json_t *w = ready_workers(s);

  ck_assert_int_eq((int)json_array_size(w), NW);
  for (int i = 0; i < NW; i++) {
    ck_assert_int_eq(wint(w, i, "worker"), i);
    ck_assert_int_gt(wint(w, i, "pid"), 0);
    for (int j = 0; j < i; j++)
      ck_assert_int_ne(wint(w, i, "pid"), wint(w, j, "pid"));
  }
  json_decref(w);
  close(s);
}
END_TEST

/* Three connections, three workers: each one's matrix is resident on a
 * worker of its own, and multiplies right there. */
START_TEST(spread)
{
  static const char *const names[NW] = {"west0479.mtx", "bcsstk13.mtx", "lp_e226.mtx"};
  struct spmv_csr *A[NW];
  int s[NW];
  int64_t h[NW];

  for (int i = 0; i < NW; i++)
    A[i] = itest_matrix(names[i]);
  open_and_load(s, h, A);
  json_t *w = ready_workers(s[0]);
  for (int i = 0; i < NW; i++) {
    ck_assert_msg(wint(w, i, "matrices") == 1, "worker %d holds %lld matrices", i,
                  (long long)wint(w, i, "matrices"));
    ck_assert_int_ge(wint(w, i, "connections"), 1);
  }
  json_decref(w);
  for (int i = 0; i < NW; i++) {
    itest_multiply_ok(s[i], h[i], A[i], 0, 3u + i);
    spmv_csr_free(A[i]);
    close(s[i]);
  }
}
END_TEST

/* A matrix is the owner's on every connection: another connection of the
 * same user, placed on another worker, multiplies it (its vectors lent to
 * the matrix's worker for the call); device vectors and solves, which live
 * on a connection's worker, are refused with both workers named. */
START_TEST(across)
{
  struct spmv_csr *A = itest_matrix("karate.mtx");  /* a graph: pagerank */
  int a = itest_open(&d);
  json_decref(ready_workers(a));
  settle(a, 1);
  int b = open_next(1);
  ck_assert_int_ne(itest_status_int(a, "worker"), itest_status_int(b, "worker"));
  json_t *r = itest_load(a, 1, A, 0, "auto");
  int64_t h = itest_handle(r);
  json_decref(r);

  for (unsigned k = 0; k < 3; k++)
    itest_multiply_ok(b, h, A, 0, 11u + k);
  itest_multiply_ok(a, h, A, 0, 17u);

  json_t *v = itest_call(b, json_pack("{ss si ss sI}", "op", "vector-create", "id", 2,
                                      "dtype", "f64", "n", (json_int_t)A->rows),
                         NULL, 0, NULL, NULL);
  ck_assert_msg(v && json_is_true(json_object_get(v, "ok")), "vector-create failed");
  json_int_t x = json_integer_value(json_object_get(v, "vector"));
  json_decref(v);
  v = itest_call(b, json_pack("{ss si ss sI}", "op", "vector-create", "id", 3,
                              "dtype", "f64", "n", (json_int_t)A->rows),
                 NULL, 0, NULL, NULL);
  json_int_t y = json_integer_value(json_object_get(v, "vector"));
  json_decref(v);
  r = itest_call(b, json_pack("{ss si s[{ss sI sI sI}]}", "op", "ops", "id", 4, "ops",
                              "op", "spmv", "handle", (json_int_t)h, "x", x, "y", y),
                 NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  const char *msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
  ck_assert_msg(msg && strstr(msg, "ops[0] (spmv)") && strstr(msg, "worker"),
                "message: %s", msg ? msg : "(none)");
  json_decref(r);
  r = itest_call(b, json_pack("{ss si sI ss}", "op", "solve", "id", 5, "handle",
                              (json_int_t)h, "method", "pagerank"),
                 NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  json_decref(r);
  /* The owner's connection solves it. */
  r = itest_call(a, json_pack("{ss si sI ss}", "op", "solve", "id", 6, "handle",
                              (json_int_t)h, "method", "pagerank"),
                 NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "the owner's solve: %s",
                json_string_value(json_object_get(json_object_get(r, "error"), "message")));
  json_decref(r);
  itest_multiply_ok(b, h, A, 0, 19u);
  close(b);
  close(a);
  spmv_csr_free(A);
}
END_TEST

/* Killing one worker: its matrix comes back on its successor, the others'
 * products never stop, no other worker restarts. */
START_TEST(one_dies)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  struct spmv_csr *As[NW] = {A, A, A};
  int s[NW];
  int64_t h[NW];

  open_and_load(s, h, As);
  int vw = (int)itest_status_int(s[1], "worker");
  json_t *w = ready_workers(s[0]);
  pid_t victim = (pid_t)wint(w, vw, "pid");
  json_decref(w);
  ck_assert_int_eq(kill(victim, SIGKILL), 0);
  for (int k = 0; k < 5; k++) {
    itest_multiply_ok(s[0], h[0], A, 0, 31u + k);
    itest_multiply_ok(s[2], h[2], A, 0, 41u + k);
  }
  itest_multiply_after_restart(s[1], h[1], A);
  w = ready_workers(s[0]);
  for (int i = 0; i < NW; i++)
    ck_assert_int_eq(wint(w, i, "restarts"), i == vw);
  ck_assert_int_ne(wint(w, vw, "pid"), victim);
  ck_assert_int_eq(wint(w, vw, "matrices"), 1);
  json_decref(w);
  for (int i = 0; i < NW; i++)
    close(s[i]);
  spmv_csr_free(A);
}
END_TEST

/* Loads A (f32 or f64) split over n workers; returns the reply. */
/* An arrow: a full first row and column around the diagonal, so that the
 * first row's block reads every other block's x and every block reads x[0]. */
static struct spmv_csr *arrow(int64_t n)
{
  struct spmv_csr *A = spmv_csr_new(n, n, 3 * n - 2);
  int64_t k = 0;

  ck_assert_ptr_nonnull(A);
  for (int64_t i = 0; i < n; i++) {
    A->row_ptr[i] = k;
    if (i == 0) {
      for (int64_t j = 0; j < n; j++) {
        A->col_idx[k] = (int32_t)j;
        A->val[k++] = 1.0 + (double)j / (double)n;
      }
      continue;
    }
    A->col_idx[k] = 0;
    A->val[k++] = -0.5;
    A->col_idx[k] = (int32_t)i;
    A->val[k++] = 2.0 + (double)(i % 7);
  }
  A->row_ptr[n] = k;
  return A;
}

static const char *err_msg(json_t *r)
{
  const char *m = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
  return m ? m : "";
}

/* Split products equal the reference: a real matrix in f64 and f32 over 2
 * and 3 workers, an arrow whose blocks exchange a large halo, each block on
 * a worker of its own, and nothing left on the workers once freed. */
START_TEST(split_products)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx"), *W = arrow(1500);
  int s = itest_open(&d);
  json_decref(ready_workers(s));

  for (int n = 2; n <= NW; n++)
    for (int f32 = 0; f32 <= 1; f32++) {
      json_t *r = itest_load_split(s, 100 + 10 * n + f32, A, f32, n);
      int64_t h = itest_handle(r);
      ck_assert_int_eq(json_integer_value(json_object_get(r, "blocks")), n);
      json_t *wks = json_object_get(r, "workers");
      ck_assert_int_eq((int)json_array_size(wks), n);
      for (int b = 0; b < n; b++)
        for (int c = 0; c < b; c++)
          ck_assert_int_ne(json_integer_value(json_array_get(wks, (size_t)b)),
                           json_integer_value(json_array_get(wks, (size_t)c)));
      json_decref(r);
      for (unsigned k = 0; k < 3; k++)
        itest_multiply_ok(s, h, A, f32, 50u + k);
      json_decref(itest_call(s, json_pack("{ss si sI}", "op", "free", "id", 9,
                                          "handle", (json_int_t)h),
                             NULL, 0, NULL, NULL));
    }
  json_t *r = itest_load_split(s, 200, W, 0, NW);
  int64_t hw = itest_handle(r);
  json_decref(r);
  r = itest_call(s, json_pack("{ss si sI}", "op", "info", "id", 201, "handle",
                              (json_int_t)hw), NULL, 0, NULL, NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "blocks")), NW);
  json_decref(r);
  itest_multiply_ok(s, hw, W, 0, 61u);
  itest_multiply_ok(s, hw, W, 0, 62u);
  json_t *w = ready_workers(s);
  int mine = (int)itest_status_int(s, "worker");
  for (int i = 0; i < NW; i++)  /* listed on its first block's worker, s's */
    ck_assert_int_eq(wint(w, i, "matrices"), i == mine);
  json_decref(w);
  close(s);
  spmv_csr_free(W);
  spmv_csr_free(A);
}
END_TEST

/* A split's picks are cached by the devices of its blocks: the second
 * split load of a matrix on the same workers takes them from the cache
 * (block_source), the same picks; another number of blocks tunes again. */
START_TEST(split_cached)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  const char *want[] = {"tuned", "cache", "tuned"};
  int blocks[] = {2, 2, 3};
  json_t *first = NULL;
  int s = itest_open(&d);

  json_decref(ready_workers(s));
  for (int k = 0; k < 3; k++) {
    json_t *r = itest_load_split(s, 10 + k, A, 0, blocks[k]);
    int64_t h = itest_handle(r);
    ck_assert_str_eq(json_string_value(json_object_get(r, "block_source")), want[k]);
    /* The blocks' time is in the load's steps and in their total. */
    json_t *steps = json_object_get(r, "steps");
    double bms = json_number_value(json_object_get(steps, "blocks_ms"));
    ck_assert_msg(bms > 0 && json_number_value(json_object_get(steps, "total_ms")) >= bms,
                  "steps: blocks_ms %g, total_ms %g", bms,
                  json_number_value(json_object_get(steps, "total_ms")));
    json_t *cfgs = json_object_get(r, "block_configs");
    ck_assert_int_eq((int)json_array_size(cfgs), blocks[k]);
    if (k == 0)
      first = json_incref(cfgs);
    if (k == 1)
      ck_assert(json_equal(cfgs, first));
    json_decref(r);
    itest_multiply_ok(s, h, A, 0, 90u + (unsigned)k);
    json_decref(itest_call(s, json_pack("{ss si sI}", "op", "free", "id", 9,
                                        "handle", (json_int_t)h),
                           NULL, 0, NULL, NULL));
  }
  /* The picks travel in an export: forgotten, imported back, they are a
   * cache hit again. */
  json_t *ex = itest_call(s, json_pack("{ss si}", "op", "export", "id", 20),
                          NULL, 0, NULL, NULL);
  json_t *doc = json_object_get(ex, "export");
  json_t *tunings = json_object_get(doc, "tunings");
  json_t *splits = json_object_get(doc, "splits");
  ck_assert_int_eq((int)json_array_size(splits), 2);
  json_decref(itest_call(s, json_pack("{ss si ss}", "op", "forget", "id", 21,
                                      "fingerprint", "all"),
                         NULL, 0, NULL, NULL));
  json_t *im = itest_call(s, json_pack("{ss si sO sO}", "op", "import", "id", 22,
                                       "tunings", tunings, "splits", splits),
                          NULL, 0, NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(im, "ok")), "import: %s",
                json_string_value(json_object_get(json_object_get(im, "error"),
                                                  "message")));
  ck_assert_int_eq(json_integer_value(json_object_get(im, "imported")),
                   (json_int_t)(json_array_size(tunings) + 2));
  json_decref(im);
  json_decref(ex);
  json_t *r = itest_load_split(s, 30, A, 0, 2);
  int64_t h = itest_handle(r);
  ck_assert_str_eq(json_string_value(json_object_get(r, "source")), "cache");
  ck_assert_str_eq(json_string_value(json_object_get(r, "block_source")), "cache");
  ck_assert(json_equal(json_object_get(r, "block_configs"), first));
  json_decref(r);
  itest_multiply_ok(s, h, A, 0, 99u);
  json_decref(first);
  close(s);
  spmv_csr_free(A);
}
END_TEST

/* What cannot be split, and what a split matrix does not do yet, is
 * EINVAL naming why; the matrix multiplies right after each refusal. */
START_TEST(split_refused)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx"), *R = itest_matrix("lp_e226.mtx");
  int s = itest_open(&d);
  json_decref(ready_workers(s));
  json_t *r = itest_load_split(s, 1, R, 0, 2);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  ck_assert_msg(strstr(err_msg(r), "square"), "%s", err_msg(r));
  json_decref(r);
  r = itest_load_split(s, 2, A, 0, NW + 1);
  ck_assert_str_eq(itest_error_code(r), "EINVAL");
  ck_assert_msg(strstr(err_msg(r), "3 workers"), "%s", err_msg(r));
  json_decref(r);
  ck_assert_int_eq(itest_resident(s), 0);

  r = itest_load_split(s, 3, A, 0, 2);
  int64_t h = itest_handle(r);
  json_decref(r);
  json_t *refused[] = {
      json_pack("{ss si sI}", "op", "tune", "id", 5, "handle", (json_int_t)h),
      json_pack("{ss si sI}", "op", "bench", "id", 6, "handle", (json_int_t)h),
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    r = itest_call(s, refused[i], NULL, 0, NULL, NULL);
    ck_assert_str_eq(itest_error_code(r), "EINVAL");
    ck_assert_msg(strstr(err_msg(r), "split over 2 workers"), "%s", err_msg(r));
    json_decref(r);
    itest_multiply_ok(s, h, A, 0, 70u + (unsigned)i);
  }
  close(s);
  spmv_csr_free(R);
  spmv_csr_free(A);
}
END_TEST

/* A block's worker dies: products fail with EWORKER until its successor
 * holds the block again, then are right; the other workers never restart. */
START_TEST(split_worker_dies)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int s = itest_open(&d);
  json_t *w = ready_workers(s);
  json_t *r = itest_load_split(s, 1, A, 0, NW);
  int64_t h = itest_handle(r);
  pid_t victim = (pid_t)wint(w, (int)json_integer_value(
                                   json_array_get(json_object_get(r, "workers"), 2)),
                             "pid");
  /* Each block's local part tuned on its own: a configuration each. */
  json_t *cfgs = json_incref(json_object_get(r, "block_configs"));
  ck_assert_int_eq((int)json_array_size(cfgs), NW);
  for (int b = 0; b < NW; b++) {
    struct spmv_config cfg;
    ck_assert_int_eq(spmv_config_parse(json_string_value(json_array_get(cfgs, (size_t)b)),
                                       &cfg, NULL), 0);
  }
  json_decref(r);
  json_decref(w);
  itest_multiply_ok(s, h, A, 0, 80u);
  ck_assert_int_eq(kill(victim, SIGKILL), 0);
  itest_multiply_after_restart(s, h, A);
  itest_multiply_ok(s, h, A, 0, 81u);
  w = ready_workers(s);
  int restarts = 0;
  for (int i = 0; i < NW; i++)
    restarts += (int)wint(w, i, "restarts");
  ck_assert_int_eq(restarts, 1);
  json_decref(w);
  /* The block re-created kept its pick. */
  r = itest_call(s, json_pack("{ss si sI}", "op", "info", "id", 2, "handle",
                              (json_int_t)h), NULL, 0, NULL, NULL);
  ck_assert(json_equal(json_object_get(r, "block_configs"), cfgs));
  json_decref(r);
  json_decref(cfgs);
  close(s);
  spmv_csr_free(A);
}
END_TEST

/* A 2-D Laplacian on a g x g grid (SPD): CG's test matrix. */
static struct spmv_csr *laplacian(int64_t g)
{
  int64_t n = g * g, k = 0;
  struct spmv_csr *A = spmv_csr_new(n, n, 5 * n);

  ck_assert_ptr_nonnull(A);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = i / g, c = i % g;
    A->row_ptr[i] = k;
    int64_t nb[5] = {r > 0 ? i - g : -1, c > 0 ? i - 1 : -1, i,
                     c < g - 1 ? i + 1 : -1, r < g - 1 ? i + g : -1};
    for (int j = 0; j < 5; j++)
      if (nb[j] >= 0) {
        A->col_idx[k] = (int32_t)nb[j];
        A->val[k++] = nb[j] == i ? 4.0 : -1.0;
      }
  }
  A->row_ptr[n] = k;
  A->nnz = k;
  return A;
}

/* CG on s of matrix h with b (rows doubles): the reply (x in *x, malloc'd). */
static json_t *cg(int s, int64_t h, const struct spmv_csr *A, const double *b,
                  double **x)
{
  void *out = NULL;
  uint64_t len = 0;
  json_t *r = itest_call(s, json_pack("{ss si sI ss sf}", "op", "solve", "id", 30,
                                      "handle", (json_int_t)h, "method", "cg",
                                      "rtol", 1e-10),
                         b, sizeof *b * (size_t)A->rows, &out, &len);
  ck_assert_ptr_nonnull(r);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "cg: %s", err_msg(r));
  ck_assert_uint_eq(len, sizeof **x * (size_t)A->rows);
  *x = out;
  return r;
}

/* CG on a matrix split over 2 and 3 workers converges to the reference
 * solution as the unsplit matrix does, in about as many iterations. */
START_TEST(split_cg)
{
  struct spmv_csr *A = laplacian(48);
  int s = itest_open(&d);
  double *b = malloc(sizeof *b * (size_t)A->rows), *y = malloc(sizeof *y * (size_t)A->rows);
  json_decref(ready_workers(s));

  ck_assert(b && y);
  srand(5);
  for (int64_t i = 0; i < A->rows; i++)
    b[i] = (double)rand() / RAND_MAX - 0.5;
  json_t *r = itest_load(s, 1, A, 0, "auto");
  int64_t h1 = itest_handle(r);
  json_decref(r);
  double *x;
  r = cg(s, h1, A, b, &x);
  json_int_t it1 = json_integer_value(json_object_get(r, "iterations"));
  json_decref(r);
  free(x);
  for (int n = 2; n <= NW; n++) {
    r = itest_load_split(s, 10 + n, A, 0, n);
    int64_t h = itest_handle(r);
    json_decref(r);
    r = cg(s, h, A, b, &x);
    ck_assert(json_is_true(json_object_get(r, "converged")));
    json_int_t it = json_integer_value(json_object_get(r, "iterations"));
    ck_assert_msg(it >= it1 - it1 / 10 - 1 && it <= it1 + it1 / 10 + 1,
                  "split %d: %lld iterations, unsplit %lld", n, (long long)it,
                  (long long)it1);
    json_decref(r);
    /* ||b - A x|| against the reference product, in double. */
    spmv_csr_ref(A, 1.0, x, 0.0, y);
    double num = 0, den = 0;
    for (int64_t i = 0; i < A->rows; i++) {
      num += (b[i] - y[i]) * (b[i] - y[i]);
      den += b[i] * b[i];
    }
    ck_assert_msg(sqrt(num / den) <= 1e-9, "split %d: relative residual %g", n,
                  sqrt(num / den));
    free(x);
  }
  close(s);
  free(b);
  free(y);
  spmv_csr_free(A);
}
END_TEST

/* A block's worker killed during a split CG that would otherwise run for
 * minutes (rtol 0): the solve is answered EWORKER, the other blocks freed
 * from their barrier, and once the worker is back the same solve runs. */
START_TEST(split_cg_worker_dies)
{
  struct spmv_csr *A = laplacian(48);
  int s = itest_open(&d);
  double *b = malloc(sizeof *b * (size_t)A->rows), *x;
  json_t *w = ready_workers(s);

  ck_assert_ptr_nonnull(b);
  for (int64_t i = 0; i < A->rows; i++)
    b[i] = 1.0;
  json_t *r = itest_load_split(s, 1, A, 0, NW);
  int64_t h = itest_handle(r);
  int victim_wk = (int)json_integer_value(json_array_get(json_object_get(r, "workers"), 1));
  pid_t victim = (pid_t)wint(w, victim_wk, "pid");
  json_decref(r);
  json_decref(w);
  ck_assert_int_eq(itest_send(s, json_pack("{ss si sI ss sf sf sI}", "op", "solve",
                                           "id", 40, "handle", (json_int_t)h,
                                           "method", "cg", "rtol", 0.0, "atol", 0.0,
                                           "maxiter", (json_int_t)100000000),
                              b, sizeof *b * (size_t)A->rows),
                   0);
  /* Killed only once its block's call is on its way (a worker killed
   * before would serve it from its successor, and the solve would run). */
  int watch = itest_open(&d);
  for (;;) {
    w = ready_workers(watch);
    int sent = (int)wint(w, victim_wk, "pending") > 0;
    json_decref(w);
    if (sent)
      break;
    usleep(1000);
  }
  close(watch);
  ck_assert_int_eq(kill(victim, SIGKILL), 0);
  r = itest_recv_reply(s, NULL, NULL, NULL);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(itest_error_code(r), "EWORKER");
  json_decref(r);
  itest_multiply_after_restart(s, h, A);
  r = cg(s, h, A, b, &x);
  ck_assert(json_is_true(json_object_get(r, "converged")));
  json_decref(r);
  free(x);
  free(b);
  close(s);
  spmv_csr_free(A);
}
END_TEST

/* Checks k products y_j = 1.5 A x_j - 0.5 y0_j (doubles) of a batch. */
static void check_batch(const struct spmv_csr *A, int k, const double *x,
                        const double *y0, const double *y)
{
  double *ref = malloc(sizeof *ref * (size_t)A->rows);

  ck_assert_ptr_nonnull(ref);
  for (int j = 0; j < k; j++) {
    memcpy(ref, y0 + (size_t)j * A->rows, sizeof *ref * (size_t)A->rows);
    spmv_csr_ref(A, 1.5, x + (size_t)j * A->cols, -0.5, ref);
    for (int64_t i = 0; i < A->rows; i++) {
      double sc = fabs(0.5 * y0[(size_t)j * A->rows + i]) + 1.0;
      for (int64_t e = A->row_ptr[i]; e < A->row_ptr[i + 1]; e++)
        sc += fabs(1.5 * A->val[e] * x[(size_t)j * A->cols + A->col_idx[e]]);
      ck_assert_msg(fabs(y[(size_t)j * A->rows + i] - ref[i]) <= 1e-13 * sc,
                    "vector %d row %lld: %.17g, reference %.17g", j, (long long)i,
                    y[(size_t)j * A->rows + i], ref[i]);
    }
  }
  free(ref);
}

/* A split matrix's batch of 3 products, and its products in place over an
 * attached memfd, equal the reference. */
START_TEST(split_batch_inplace)
{
  enum { K = 3 };
  struct spmv_csr *A = arrow(900);
  int s = itest_open(&d);
  size_t n = (size_t)A->rows, bytes = sizeof(double) * K * 2 * n;
  double *v = malloc(bytes), *out = NULL;
  uint64_t len = 0;

  json_decref(ready_workers(s));
  ck_assert_ptr_nonnull(v);
  srand(9);
  for (size_t i = 0; i < K * 2 * n; i++)
    v[i] = (double)rand() / RAND_MAX - 0.5;
  json_t *r = itest_load_split(s, 1, A, 0, NW);
  int64_t h = itest_handle(r);
  json_decref(r);
  r = itest_call(s, json_pack("{ss si sI sf sf si}", "op", "multiply-batch", "id", 2,
                              "handle", (json_int_t)h, "alpha", 1.5, "beta", -0.5,
                              "k", K),
                 v, bytes, (void **)&out, &len);
  ck_assert_msg(r && json_is_true(json_object_get(r, "ok")), "batch: %s", err_msg(r));
  ck_assert_uint_eq(len, sizeof(double) * K * n);
  check_batch(A, K, v, v + K * n, out);
  json_decref(r);
  free(out);

  /* In place: x then y of one product in a sealed memfd. */
  int fd = memfd_create("check-workers", MFD_ALLOW_SEALING);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)(2 * n * sizeof(double))), 0);
  ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  double *map = mmap(NULL, 2 * n * sizeof(double), PROT_READ | PROT_WRITE,
                     MAP_SHARED, fd, 0);
  ck_assert(map != MAP_FAILED);
  memcpy(map, v, 2 * n * sizeof(double));
  r = itest_call_fd(s, json_pack("{ss si sI}", "op", "attach-vectors", "id", 3,
                                 "handle", (json_int_t)h), fd, NULL, 0);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "attach: %s", err_msg(r));
  json_decref(r);
  r = itest_call_fd(s, json_pack("{ss si sI sf sf sb}", "op", "multiply", "id", 4,
                                 "handle", (json_int_t)h, "alpha", 1.5, "beta", -0.5,
                                 "inplace", 1), -1, NULL, 0);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "in place: %s", err_msg(r));
  json_decref(r);
  check_batch(A, 1, v, v + n, map + n);
  munmap(map, 2 * n * sizeof(double));
  close(fd);
  free(v);
  close(s);
  spmv_csr_free(A);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("workers");
  TCase *tc = tcase_create("workers");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, listed);
  tcase_add_test(tc, placed_by_vectors);
  tcase_add_test(tc, spread);
  tcase_add_test(tc, across);
  tcase_add_test(tc, one_dies);
  tcase_add_test(tc, split_products);
  tcase_add_test(tc, split_cached);
  tcase_add_test(tc, split_refused);
  tcase_add_test(tc, split_worker_dies);
  tcase_add_test(tc, split_cg);
  tcase_add_test(tc, split_cg_worker_dies);
  tcase_add_test(tc, split_batch_inplace);
  suite_add_tcase(s, tc);
  return itest_run(s);
}
