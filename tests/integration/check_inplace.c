/* check_inplace.c: in-place products over a client's memfd (attach-vectors). */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"

/* Checks y (f32 or f64 values) against spmv_csr_ref on x (doubles holding
 * the same values) with a tolerance fitting the precision. */
static void check_y(const struct spmv_csr *A, double alpha, const double *x,
                    double beta, const double *y0, const void *y, int f32)
{
  double *yr = malloc(sizeof *yr * (size_t)(A->rows + 1));
  double tol = f32 ? 1e-5 : 1e-13;

  ck_assert_ptr_nonnull(yr);
  memcpy(yr, y0, sizeof *yr * (size_t)A->rows);
  spmv_csr_ref(A, alpha, x, beta, yr);
  for (int64_t i = 0; i < A->rows; i++) {
    double s = fabs(beta * y0[i]);
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += fabs(alpha * A->val[k] * x[A->col_idx[k]]);
    double got = f32 ? ((const float *)y)[i] : ((const double *)y)[i];
    ck_assert_msg(fabs(got - yr[i]) <= tol * (1.0 + s) *
                                           (double)(A->row_ptr[i + 1] -
                                                    A->row_ptr[i] + 2),
                  "row %lld: %.17g, reference %.17g", (long long)i, got, yr[i]);
  }
  free(yr);
}

/* Fills k vectors of n values (as dtype in v, as doubles in d). */
static void fill(void *v, double *d, int64_t n, int f32, unsigned seed)
{
  srand(seed);
  for (int64_t i = 0; i < n; i++) {
    d[i] = (double)rand() / RAND_MAX * 2 - 1;
    if (f32) {
      ((float *)v)[i] = (float)d[i];
      d[i] = (float)d[i];
    } else {
      ((double *)v)[i] = d[i];
    }
  }
}

/* libspmvclient: spmv_matrix_vectors + spmv_multiply_inplace, f64 and f32,
 * beta 0 and not, repeated on one mapping, k = 1 and 3. */
START_TEST(library_inplace)
{
  static const char *const files[] = {"bcsstk13.mtx", "west0479.mtx"};
  struct spmv_client *c = NULL;
  char path[4096];

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (int f32 = 0; f32 < 2; f32++)
    for (size_t f = 0; f < 2; f++) {
      struct spmv_csr *A = itest_matrix(files[f]);
      struct spmv_matrix *m = NULL;
      itest_matrix_path(files[f], path, sizeof path);
      ck_assert_msg(spmv_load_mtx(c, path, f32 ? SPMV_F32 : SPMV_F64, NULL,
                                  &m) == 0, "%s", spmv_client_errmsg(c));
      if (f32)  /* the reference sees the values the daemon holds */
        for (int64_t k = 0; k < A->nnz; k++)
          A->val[k] = (float)A->val[k];
      ck_assert_int_eq(spmv_multiply_inplace(m, 1.0, 0.0), SPMV_EINVAL);
      for (int k = 1; k <= 3; k += 2) {
        void *x = NULL, *y = NULL;
        size_t es = f32 ? 4 : 8;
        ck_assert_msg(spmv_matrix_vectors(m, k, &x, &y) == 0, "%s",
                      spmv_client_errmsg(c));
        ck_assert_ptr_eq((char *)x + (size_t)k * (size_t)A->cols * es, y);
        double *xd = malloc(sizeof *xd * (size_t)(k * A->cols + 1));
        double *y0 = malloc(sizeof *y0 * (size_t)(k * A->rows + 1));
        for (int rep = 0; rep < 3; rep++) {
          double alpha = 1.0 + rep, beta = rep == 0 ? 0.0 : -0.5;
          fill(x, xd, k * A->cols, f32, (unsigned)(rep + 10 * k));
          if (rep == 0)
            memset(y0, 0, sizeof *y0 * (size_t)(k * A->rows));
          else  /* y holds the last product: updated in place */
            for (int64_t i = 0; i < k * A->rows; i++)
              y0[i] = f32 ? ((float *)y)[i] : ((double *)y)[i];
          ck_assert_msg(spmv_multiply_inplace(m, alpha, beta) == 0, "%s",
                        spmv_client_errmsg(c));
          for (int v = 0; v < k; v++)
            check_y(A, alpha, xd + v * A->cols, beta, y0 + v * A->rows,
                    (char *)y + (size_t)v * (size_t)A->rows * es, f32);
        }
        free(xd);
        free(y0);
      }
      spmv_matrix_free(m);
      spmv_csr_free(A);
    }
  spmv_disconnect(c);
}
END_TEST

/* A memfd of size bytes, sealed against shrinking when sealed is set. */
static int make_memfd(size_t size, int sealed)
{
  int fd = memfd_create("check-inplace", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
  if (sealed)
    ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
  return fd;
}

/* Whether process pid maps a memfd named check-inplace. */
static int maps_memfd(pid_t pid)
{
  char perms[8];

  itest_memfd_perms(pid, "check-inplace", perms);
  return perms[0] != 0;
}

/* The protocol by raw frames: attach-vectors and its refusals. */
START_TEST(raw_attach)
{
  struct spmv_csr *A = itest_random_csr(500, 6, 3, 4);
  int s = itest_open(&itest_d);
  json_t *loaded = itest_load(s, 1, A, 0, NULL);
  int64_t h = itest_handle(loaded);
  json_decref(loaded);
  size_t xb = (size_t)A->cols * 8, need = xb + (size_t)A->rows * 8;
  char want[128];

  /* A descriptor on any other op (each refused one is closed). */
  int fd = make_memfd(need, 1);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si}", "op", "list", "id", 2), fd, NULL, 0),
          "EPROTO", "only 'attach-vectors' and 'load' (with \"memfd\": true) take one", h, A);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI sf sf}", "op", "multiply", "id",
                                  3, "handle", (json_int_t)h, "alpha", 1.0,
                                  "beta", 0.0), fd, A->val, xb),
          "EPROTO", "file descriptor", h, A);
  /* None, or not sealed, or too small. */
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI}", "op", "attach-vectors", "id", 4,
                                  "handle", (json_int_t)h), -1, NULL, 0),
          "EPROTO", "exactly one file descriptor", h, A);
  int loose = make_memfd(need, 0);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI}", "op", "attach-vectors", "id", 5,
                                  "handle", (json_int_t)h), loose, NULL, 0),
          "EINVAL", "F_SEAL_SHRINK", h, A);
  close(loose);
  int small = make_memfd(need - 8, 1);
  snprintf(want, sizeof want, "holds %zu bytes, but k = 1 x (500 cols + 500 "
           "rows) of f64 need %zu", need - 8, need);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI}", "op", "attach-vectors", "id", 6,
                                  "handle", (json_int_t)h), small, NULL, 0),
          "EINVAL", want, h, A);
  close(small);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, "check-inplace"), 0);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI sf sf sb}", "op", "multiply",
                                  "id", 7, "handle", (json_int_t)h, "alpha",
                                  1.0, "beta", 0.0, "inplace", 1), -1, NULL, 0),
          "EINVAL", "no vectors attached", h, A);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI}", "op", "attach-vectors", "id", 8,
                                  "handle", (json_int_t)(h + 100)), fd, NULL, 0),
          "ENOENT", NULL, h, A);

  /* Attached: products in place, x and y in the memfd. */
  json_t *r = itest_call_fd(s, json_pack("{ss si sI}", "op", "attach-vectors", "id",
                                   9, "handle", (json_int_t)h), fd, NULL, 0);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s",
                json_dumps(r, 0));
  ck_assert_int_eq(json_integer_value(json_object_get(r, "y_offset")), xb);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "size")), need);
  json_decref(r);
  double *map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert(map != MAP_FAILED);
  close(fd);  /* the daemon holds its own */
  double *xd = malloc(xb), *y0 = calloc((size_t)A->rows, sizeof *y0);
  for (int rep = 0; rep < 2; rep++) {
    fill(map, xd, A->cols, 0, (unsigned)rep + 40);
    memcpy(y0, map + A->cols, sizeof *y0 * (size_t)A->rows);
    r = itest_call_fd(s, json_pack("{ss si sI sf sf sb}", "op", "multiply", "id",
                             10 + rep, "handle", (json_int_t)h, "alpha", 2.0,
                             "beta", rep ? 0.25 : 0.0, "inplace", 1),
                -1, NULL, 0);
    ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s",
                  json_dumps(r, 0));
    json_decref(r);
    check_y(A, 2.0, xd, rep ? 0.25 : 0.0, y0, map + A->cols, 0);
  }
  /* A payload with an in-place product, and k other than attached. */
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI sf sf sb}", "op", "multiply",
                                  "id", 12, "handle", (json_int_t)h, "alpha",
                                  1.0, "beta", 0.0, "inplace", 1), -1, xd, 8),
          "EPROTO", "takes no payload", h, A);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI sf sf si sb}", "op",
                                  "multiply-batch", "id", 13, "handle",
                                  (json_int_t)h, "alpha", 1.0, "beta", 0.0,
                                  "k", 2, "inplace", 1), -1, NULL, 0),
          "EINVAL", "holds k = 1", h, A);
  /* The daemon holds the memfd once; the worker maps it. */
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, "check-inplace"), 1);
  pid_t wpid = itest_worker_pid(s);
  ck_assert(maps_memfd(wpid));
  /* Freeing the matrix lets the vectors go, here and in the worker. */
  r = itest_call_fd(s, json_pack("{ss si sI}", "op", "free", "id", 14, "handle",
                           (json_int_t)h), -1, NULL, 0);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  r = itest_call_fd(s, json_pack("{ss si sI sf sf sb}", "op", "multiply", "id", 15,
                           "handle", (json_int_t)h, "alpha", 1.0, "beta", 0.0,
                           "inplace", 1), -1, NULL, 0);
  ck_assert_str_eq(itest_error_code(r), "ENOENT");
  json_decref(r);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, "check-inplace"), 0);
  for (int i = 0; i < 200 && maps_memfd(wpid); i++)
    usleep(10000);
  ck_assert_msg(!maps_memfd(wpid), "the worker still maps the vectors");
  munmap(map, need);
  free(xd);
  free(y0);
  close(s);
  spmv_csr_free(A);
}
END_TEST

/* Attached vectors count towards the connection's memory; a refused
 * attachment keeps the earlier one. */
START_TEST(attach_limits)
{
  itest_daemon_stop(&itest_d, SIGTERM);
  itest_daemon_config(&itest_d, "max_connection_bytes = 1M\n");
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  struct spmv_csr *A = itest_random_csr(500, 4, 5, 6);
  int s = itest_open(&itest_d);
  json_t *loaded = itest_load(s, 1, A, 0, NULL);
  int64_t h = itest_handle(loaded);
  json_decref(loaded);
  size_t need = (size_t)(A->cols + A->rows) * 8;
  int fd = make_memfd(need, 1), big = make_memfd(need * 4096, 1);

  json_t *r = itest_call_fd(s, json_pack("{ss si sI}", "op", "attach-vectors", "id",
                                   2, "handle", (json_int_t)h), fd, NULL, 0);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  itest_refused(s, itest_call_fd(s, json_pack("{ss si sI si}", "op", "attach-vectors",
                                  "id", 3, "handle", (json_int_t)h, "k", 4096),
                     big, NULL, 0),
          "ELIMIT", "max_connection_bytes", h, A);
  double *map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert(map != MAP_FAILED);
  double *xd = malloc(sizeof *xd * (size_t)A->cols);
  double *y0 = calloc((size_t)A->rows, sizeof *y0);
  fill(map, xd, A->cols, 0, 77);
  r = itest_call_fd(s, json_pack("{ss si sI sf sf sb}", "op", "multiply", "id", 4,
                           "handle", (json_int_t)h, "alpha", 1.0, "beta", 0.0,
                           "inplace", 1), -1, NULL, 0);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  check_y(A, 1.0, xd, 0.0, y0, map + A->cols, 0);
  /* A new worker gets the memfd again. */
  ck_assert_int_eq(kill(itest_worker_pid(s), SIGKILL), 0);
  char code[32] = "EWORKER";
  for (int i = 0; i < 300 && code[0]; i++) {
    fill(map, xd, A->cols, 0, 78 + (unsigned)i);
    r = itest_call_fd(s, json_pack("{ss si sI sf sf sb}", "op", "multiply", "id",
                             5, "handle", (json_int_t)h, "alpha", 1.0, "beta",
                             0.0, "inplace", 1), -1, NULL, 0);
    snprintf(code, sizeof code, "%s", itest_error_code(r));
    ck_assert_msg(!code[0] || !strcmp(code, "EWORKER"), "%s", code);
    json_decref(r);
    if (code[0])
      usleep(20000);
  }
  ck_assert_str_eq(code, "");
  check_y(A, 1.0, xd, 0.0, y0, map + A->cols, 0);
  munmap(map, need);
  close(fd);
  close(big);
  /* Closing the connection lets the vectors go, here and in the worker. */
  pid_t wpid = itest_worker_pid(s);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, "check-inplace"), 1);
  ck_assert(maps_memfd(wpid));
  close(s);
  for (int i = 0; i < 200 && (itest_count_memfds(itest_d.pid, "check-inplace") || maps_memfd(wpid)); i++)
    usleep(10000);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, "check-inplace"), 0);
  ck_assert(!maps_memfd(wpid));
  free(xd);
  free(y0);
  spmv_csr_free(A);
}
END_TEST

static Suite *inplace_suite(void)
{
  Suite *s = suite_create("inplace");
  TCase *tc = tcase_create("inplace");
  tcase_add_checked_fixture(tc, itest_setup, itest_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, library_inplace);
  tcase_add_test(tc, raw_attach);
  tcase_add_test(tc, attach_limits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return itest_run(inplace_suite());
}
