/* check_load_memfd.c: loads whose matrix lies in a client's sealed memfd,
 * in the host layout ("memfd": true), by raw frames and through
 * libspmvclient, their refusals, and their re-adoption after a worker
 * restart. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "spmv.h"

#define NAME "check-load-memfd"
#define ALL_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* A load request of A, with "memfd": true when memfd is set. */
static json_t *load_req(int64_t id, const struct spmv_csr *A, int memfd)
{
  json_t *req = json_pack("{ss sI ss sI sI sI}", "op", "load", "id",
                          (json_int_t)id, "dtype", "f64", "rows",
                          (json_int_t)A->rows, "cols", (json_int_t)A->cols,
                          "nnz", (json_int_t)A->nnz);
  if (memfd)
    json_object_set_new(req, "memfd", json_true());
  else
    json_object_set_new(req, "index", json_string("i32"));
  return req;
}

/* Loads A through a memfd on s; returns its handle (asserting success and
 * that no copy step was taken). */
static int64_t memfd_load(int s, int64_t id, const struct spmv_csr *A)
{
  int fd = itest_csr_memfd(A, NAME, itest_csr_layout_size(A), ALL_SEALS);
  json_t *r = itest_call_fd(s, load_req(id, A, 1), fd, NULL, 0);
  close(fd);  /* the daemon holds its own */
  int64_t h = itest_handle(r);
  json_t *steps = json_object_get(r, "steps");
  ck_assert_ptr_nonnull(steps);
  ck_assert_ptr_null(json_object_get(steps, "copy_ms"));
  ck_assert_ptr_nonnull(json_object_get(steps, "validate_ms"));
  json_decref(r);
  return h;
}

/* A shipped matrix loaded by raw frames through a memfd multiplies right;
 * the worker maps it read-only and the daemon holds it once. */
START_TEST(raw_memfd_load)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int s = itest_open(&itest_d);
  int64_t h = memfd_load(s, 1, A);

  itest_multiply_ok(s, h, A, 0, 1);
  itest_multiply_ok(s, h, A, 0, 2);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, NAME), 1);
  char perms[8];
  itest_memfd_perms(itest_worker_pid(s), NAME, perms);
  ck_assert_str_eq(perms, "r--s");
  json_decref(itest_call(s, json_pack("{ss si sI}", "op", "free", "id", 3,
                                      "handle", (json_int_t)h),
                         NULL, 0, NULL, NULL));
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, NAME), 0);
  close(s);
  spmv_csr_free(A);
}
END_TEST

/* The refusals of memfd loads, each with its message; the connection goes
 * on after each and the daemon keeps none of the descriptors. */
START_TEST(raw_refusals)
{
  struct spmv_csr *A = itest_random_csr(500, 6, 3, 4);
  struct spmv_csr *B = itest_random_csr(5000, 16, 5, 6);
  int s = itest_open(&itest_d);
  json_t *r = itest_load(s, 1, A, 0, NULL);
  int64_t h = itest_handle(r);
  size_t need = itest_csr_layout_size(B);
  char want[160], file[400];
  int p[2];

  json_decref(r);
  ck_assert_int_eq(pipe(p), 0);
  itest_refused(s, itest_call_fd(s, load_req(2, B, 1), p[0], NULL, 0), "EINVAL",
          "the file descriptor passed is not a memfd", h, A);
  close(p[0]);
  close(p[1]);
  /* A regular file: not a memfd (or, on tmpfs, one without the seals). */
  snprintf(file, sizeof file, "%s/not-a-memfd", itest_d.dir);
  int f = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_int_ge(f, 0);
  ck_assert_int_eq(ftruncate(f, (off_t)need), 0);
  itest_refused(s, itest_call_fd(s, load_req(3, B, 1), f, NULL, 0), "EINVAL",
          "memfd", h, A);
  close(f);
  int fd = itest_csr_memfd(B, NAME, need, F_SEAL_SHRINK | F_SEAL_GROW);
  itest_refused(s, itest_call_fd(s, load_req(4, B, 1), fd, NULL, 0), "EINVAL",
          "the matrix memfd is not sealed against writing (F_SEAL_WRITE)", h, A);
  close(fd);
  fd = itest_csr_memfd(B, NAME, need, F_SEAL_GROW | F_SEAL_WRITE);
  itest_refused(s, itest_call_fd(s, load_req(5, B, 1), fd, NULL, 0), "EINVAL",
          "not sealed against shrinking (F_SEAL_SHRINK)", h, A);
  close(fd);
  fd = itest_csr_memfd(B, NAME, need - 8, ALL_SEALS);
  snprintf(want, sizeof want, "the matrix memfd holds %zu bytes, but 5000 "
           "rows and 80000 entries need %zu", need - 8, need);
  itest_refused(s, itest_call_fd(s, load_req(6, B, 1), fd, NULL, 0), "EINVAL", want,
          h, A);
  close(fd);
  fd = itest_csr_memfd(B, NAME, need, ALL_SEALS);
  itest_refused(s, itest_call_fd(s, load_req(7, B, 1), fd, B->val, 64), "EPROTO",
          "takes no payload, got 64 bytes", h, A);
  itest_refused(s, itest_call_fd(s, load_req(8, B, 1), -1, NULL, 0), "EPROTO",
          "takes exactly one file descriptor", h, A);
  uint64_t plen;
  void *pl = itest_csr_payload(B, 0, 0, &plen);
  itest_refused(s, itest_call_fd(s, load_req(9, B, 0), fd, pl, plen), "EPROTO",
          "a load takes one only with \"memfd\": true", h, A);
  free(pl);
  close(fd);
  /* An invalid CSR in a memfd is ECSR, as in a payload. */
  B->col_idx[17] = (int32_t)B->cols;
  fd = itest_csr_memfd(B, NAME, need, ALL_SEALS);
  itest_refused(s, itest_call_fd(s, load_req(10, B, 1), fd, NULL, 0), "ECSR",
          "column index 5000 out of range", h, A);
  close(fd);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, NAME), 0);
  /* And the connection still loads through a memfd. */
  B->col_idx[17] = 0;
  int64_t hb = memfd_load(s, 11, B);
  itest_multiply_ok(s, hb, B, 0, 4);
  close(s);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

/* y = A*x through libspmvclient, checked against spmv_csr_ref. */
static void client_multiply_check(struct spmv_matrix *m,
                                  const struct spmv_csr *A, int f32)
{
  double *x = malloc(sizeof *x * (size_t)A->cols);
  double *yr = malloc(sizeof *yr * (size_t)A->rows);
  void *xt = malloc(8 * (size_t)A->cols), *yt = malloc(8 * (size_t)A->rows);
  double tol = f32 ? 1e-5 : 1e-13;

  ck_assert(x && yr && xt && yt);
  for (int64_t j = 0; j < A->cols; j++) {
    x[j] = (double)((j * 7919) % 1000) / 500.0 - 1.0;
    if (f32)
      ((float *)xt)[j] = (float)x[j];
    else
      ((double *)xt)[j] = x[j];
  }
  ck_assert_int_eq(spmv_multiply(m, 1.0, xt, 0.0, yt), 0);
  spmv_csr_ref(A, 1.0, x, 0.0, yr);
  for (int64_t i = 0; i < A->rows; i++) {
    double s = 0, got = f32 ? ((float *)yt)[i] : ((double *)yt)[i];
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += fabs(A->val[k] * x[A->col_idx[k]]);
    ck_assert_msg(fabs(got - yr[i]) <= tol * (1.0 + s) * 10, "row %lld: %g, "
                  "reference %g", (long long)i, got, yr[i]);
  }
  free(x);
  free(yr);
  free(xt);
  free(yt);
}

/* spmv_load_csr of a matrix over 1 MiB goes through a memfd (the daemon
 * holds the client's, named spmv-matrix; its steps have no copy, and the
 * client's own) and multiplies right, f64 and f32; a small one still
 * travels as payload.  An odd count of entries: the column array has its
 * padding, and the f32 values' last chunk of widening is a short one. */
START_TEST(library_memfd_load)
{
  struct spmv_csr *A = itest_random_csr(100001, 7, 7, 8);
  struct spmv_csr *S = itest_random_csr(500, 6, 3, 4);
  struct spmv_client *c = NULL;
  float *v32 = malloc(sizeof *v32 * (size_t)A->nnz);
  char *json = NULL;

  ck_assert_int_eq(spmv_connect(itest_d.sock, &c), 0);
  for (int f32 = 0; f32 < 2; f32++) {
    struct spmv_matrix *m = NULL;
    if (f32)  /* the reference sees the values the daemon holds */
      for (int64_t k = 0; k < A->nnz; k++)
        A->val[k] = v32[k] = (float)A->val[k];
    ck_assert_msg(spmv_load_csr(c, f32 ? SPMV_F32 : SPMV_F64, A->rows, A->cols,
                                A->nnz, A->row_ptr, A->col_idx,
                                f32 ? (void *)v32 : (void *)A->val, NULL,
                                &m) == 0, "%s", spmv_client_errmsg(c));
    ck_assert_int_eq(itest_count_memfds(itest_d.pid, "spmv-matrix"), 1);
    ck_assert_int_eq(spmv_matrix_decision_json(m, &json), 0);
    json_t *d = json_loads(json, 0, NULL);
    json_t *steps = json_object_get(d, "steps");
    ck_assert_ptr_nonnull(steps);
    ck_assert_ptr_null(json_object_get(steps, "copy_ms"));
    ck_assert(json_number_value(json_object_get(steps, "client_write_ms")) > 0);
    ck_assert(json_number_value(json_object_get(steps, "client_total_ms")) >=
              json_number_value(json_object_get(steps, "total_ms")));
    json_decref(d);
    free(json);
    client_multiply_check(m, A, f32);
    spmv_matrix_free(m);
    ck_assert_int_eq(itest_count_memfds(itest_d.pid, "spmv-matrix"), 0);
  }
  struct spmv_matrix *m = NULL;
  ck_assert_int_eq(spmv_load_csr(c, SPMV_F64, S->rows, S->cols, S->nnz,
                                 S->row_ptr, S->col_idx, S->val, NULL, &m), 0);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, "spmv-matrix"), 0);
  ck_assert_int_eq(spmv_matrix_decision_json(m, &json), 0);
  ck_assert_ptr_nonnull(strstr(json, "copy_ms"));
  free(json);
  client_multiply_check(m, S, 0);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  free(v32);
  spmv_csr_free(A);
  spmv_csr_free(S);
}
END_TEST

/* After the worker is killed, a memfd-loaded matrix is re-adopted from the
 * client's memfd (mapped read-only again) and multiplies right. */
START_TEST(worker_killed_readopts)
{
  struct spmv_csr *A = itest_matrix("west0479.mtx");
  int s = itest_open(&itest_d);
  int64_t h = memfd_load(s, 1, A);
  pid_t wpid = itest_worker_pid(s);
  char perms[8];

  itest_multiply_ok(s, h, A, 0, 1);
  ck_assert_int_eq(kill(wpid, SIGKILL), 0);
  itest_multiply_after_restart(s, h, A);
  pid_t now = itest_worker_pid(s);
  ck_assert_int_ne(now, wpid);
  itest_memfd_perms(now, NAME, perms);
  ck_assert_str_eq(perms, "r--s");
  close(s);
  spmv_csr_free(A);
}
END_TEST

static Suite *load_memfd_suite(void)
{
  Suite *s = suite_create("load_memfd");
  TCase *t = tcase_create("memfd");

  tcase_add_checked_fixture(t, itest_setup, itest_teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, raw_memfd_load);
  tcase_add_test(t, raw_refusals);
  tcase_add_test(t, library_memfd_load);
  tcase_add_test(t, worker_killed_readopts);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return itest_run(load_memfd_suite());
}
