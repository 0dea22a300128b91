/* check_gpu_blas.c: the BLAS-1 kernels of device vectors (spmv_blas1.cu)
 * against plain C references in double: every operation in f32 and f64 at
 * n in {0, 1, 1000, 1000003}, scalars read from the results array,
 * aliasing, axpby over NaN with beta 0, and reductions that give the same
 * bits every run.  Without a CUDA device it exits 77 (skipped). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"
#include "spmv_kernels.h"

static cudaStream_t stream;
static double *dres;   /* SPMV_DEV_RESULTS results, NaN until written */
static double *dpart;  /* the reductions' partials */

static const size_t sizes[] = {0, 1, 1000, 1000003};
static const enum spmv_dtype dts[] = {SPMV_F32, SPMV_F64};
#define NCASES 8  /* dts x sizes, for the loop tests */

/* A loop test's value type and length. */
static enum spmv_dtype case_dt(int i) { return dts[i / 4]; }
static size_t case_n(int i) { return sizes[i % 4]; }
static const char *dt_name(enum spmv_dtype dt) { return dt == SPMV_F32 ? "f32" : "f64"; }

/* Relative tolerance of one element-wise result computed in dt. */
static double rtol(enum spmv_dtype dt) { return dt == SPMV_F32 ? 1e-5 : 1e-12; }

static void blas_setup(void)
{
  struct spmv_error err = {0};

  ck_assert_int_eq(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ck_assert_msg(spmv_dev_alloc((void **)&dres, SPMV_DEV_RESULTS * sizeof(double), "res",
                               &err) == 0, "%s", err.msg);
  ck_assert_msg(spmv_dev_alloc((void **)&dpart, SPMV_BLAS_MAX_PARTIALS * sizeof(double),
                               "partials", &err) == 0, "%s", err.msg);
  /* NaN everywhere: a result that is never written shows. */
  ck_assert_int_eq(cudaMemset(dres, 0xff, SPMV_DEV_RESULTS * sizeof(double)), cudaSuccess);
  ck_assert_int_eq(cudaMemset(dpart, 0xff, SPMV_BLAS_MAX_PARTIALS * sizeof(double)),
                   cudaSuccess);
  ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
}

static void blas_teardown(void)
{
  spmv_dev_free(dres);
  spmv_dev_free(dpart);
  cudaStreamDestroy(stream);
}

static size_t esize(enum spmv_dtype dt) { return dt == SPMV_F32 ? sizeof(float) : sizeof(double); }

/* n random values in +-[0.5, 1.5), exact in float; the caller frees. */
static double *rand_vec(size_t n, uint64_t seed)
{
  double *h = malloc((n ? n : 1) * sizeof *h);

  ck_assert_ptr_nonnull(h);
  gpu_random_vector(h, (int64_t)n, seed);
  return h;
}

/* A new device vector holding h's n values as dt (at least 1 byte). */
static void *to_dev(enum spmv_dtype dt, const double *h, size_t n)
{
  struct spmv_error err = {0};
  void *d = NULL, *t = malloc((n ? n : 1) * esize(dt));

  ck_assert_ptr_nonnull(t);
  for (size_t i = 0; i < n; i++) {
    if (dt == SPMV_F32)
      ((float *)t)[i] = (float)h[i];
    else
      ((double *)t)[i] = h[i];
  }
  ck_assert_msg(spmv_dev_alloc(&d, n * esize(dt), "a test vector", &err) == 0 &&
                spmv_dev_upload(d, t, n * esize(dt), "a test vector", &err) == 0,
                "%s", err.msg);
  free(t);
  return d;
}

/* Waits for the stream and reads device vector d (n values of dt) into h. */
static void from_dev(enum spmv_dtype dt, const void *d, size_t n, double *h)
{
  void *t = malloc((n ? n : 1) * esize(dt));

  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
  ck_assert_int_eq(cudaMemcpy(t, d, n * esize(dt), cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < n; i++)
    h[i] = dt == SPMV_F32 ? (double)((float *)t)[i] : ((double *)t)[i];
  free(t);
}

/* Result slot writes and reads, in the stream's order. */
static void set_res(int slot, double v)
{
  ck_assert_int_eq(cudaMemcpyAsync(dres + slot, &v, sizeof v, cudaMemcpyHostToDevice, stream),
                   cudaSuccess);
  ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
}

static double get_res(int slot)
{
  double v = 0;

  ck_assert_int_eq(cudaMemcpyAsync(&v, dres + slot, sizeof v, cudaMemcpyDeviceToHost, stream),
                   cudaSuccess);
  ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
  return v;
}

/* Every got[i] within rtol(dt) * mag[i] of ref[i] (NaN fails). */
static void check_close(enum spmv_dtype dt, const double *got, const double *ref,
                        const double *mag, size_t n, const char *what)
{
  for (size_t i = 0; i < n; i++) {
    double tol = rtol(dt) * mag[i];
    ck_assert_msg(fabs(got[i] - ref[i]) <= tol, "%s %s n=%zu: [%zu] got %.17g, want %.17g",
                  what, dt_name(dt), n, i, got[i], ref[i]);
  }
}

/* A scalar with no terms. */
static struct spmv_dev_scalar konst(double c)
{
  struct spmv_dev_scalar s = {.c = c};
  return s;
}

/* a = 1.25 * res[2] = -3.75 fills every element. */
START_TEST(test_fill)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  struct spmv_dev_scalar a = {.c = 1.25, .nmul = 1, .mul = {2}};
  double *h = rand_vec(n, 1), *got = rand_vec(n, 2);
  void *d = to_dev(dt, h, n);

  set_res(2, -3.0);
  ck_assert_msg(spmv_blas_fill(dt, n, d, a, dres, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, d, n, got);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(got[i] == -3.75, "fill %s n=%zu: [%zu] = %g", dt_name(dt), n, i, got[i]);
  spmv_dev_free(d);
  free(h);
  free(got);
}
END_TEST

START_TEST(test_copy)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  double *hx = rand_vec(n, 3), *hy = rand_vec(n, 4), *got = rand_vec(n, 5);
  void *x = to_dev(dt, hx, n), *y = to_dev(dt, hy, n);

  ck_assert_msg(spmv_blas_copy(dt, n, x, y, stream, &err) == 0, "%s", err.msg);
  ck_assert_msg(spmv_blas_copy(dt, n, x, x, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, y, n, got);
  ck_assert_msg(n == 0 || memcmp(got, hx, n * sizeof *got) == 0, "copy %s n=%zu", dt_name(dt), n);
  from_dev(dt, x, n, got);
  ck_assert_msg(n == 0 || memcmp(got, hx, n * sizeof *got) == 0, "copy onto itself %s n=%zu",
                dt_name(dt), n);
  spmv_dev_free(x);
  spmv_dev_free(y);
  free(hx);
  free(hy);
  free(got);
}
END_TEST

/* a = 0.5 * res[1] * res[2] / res[3] = 0.5 * 3 * -1.5 / 0.75 = -3. */
START_TEST(test_scale)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  struct spmv_dev_scalar a = {.c = 0.5, .nmul = 2, .mul = {1, 2}, .ndiv = 1, .div = {3}};
  double *hx = rand_vec(n, 6), *got = rand_vec(n, 7), *ref = rand_vec(n, 8),
         *mag = rand_vec(n, 9);
  void *x = to_dev(dt, hx, n);

  set_res(1, 3.0);
  set_res(2, -1.5);
  set_res(3, 0.75);
  ck_assert_msg(spmv_blas_scale(dt, n, x, a, dres, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, x, n, got);
  for (size_t i = 0; i < n; i++) {
    ref[i] = -3.0 * hx[i];
    mag[i] = fabs(ref[i]);
  }
  check_close(dt, got, ref, mag, n, "scale");
  spmv_dev_free(x);
  free(hx);
  free(got);
  free(ref);
  free(mag);
}
END_TEST

/* y = a*x + b*y on device inputs, checked against the double reference;
 * x == y when alias. */
static void axpby_case(enum spmv_dtype dt, size_t n, struct spmv_dev_scalar a, double av,
                       struct spmv_dev_scalar b, double bv, int alias, const char *what)
{
  struct spmv_error err = {0};
  double *hx = rand_vec(n, 10), *hy = rand_vec(n, 11), *got = rand_vec(n, 12),
         *ref = rand_vec(n, 13), *mag = rand_vec(n, 14);
  void *y = to_dev(dt, hy, n), *x = alias ? y : to_dev(dt, hx, n);
  const double *xs = alias ? hy : hx;

  ck_assert_msg(spmv_blas_axpby(dt, n, a, x, b, y, dres, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, y, n, got);
  for (size_t i = 0; i < n; i++) {
    ref[i] = av * xs[i] + bv * hy[i];
    mag[i] = fabs(av * xs[i]) + fabs(bv * hy[i]);
  }
  check_close(dt, got, ref, mag, n, what);
  if (!alias)
    spmv_dev_free(x);
  spmv_dev_free(y);
  free(hx);
  free(hy);
  free(got);
  free(ref);
  free(mag);
}

/* a = -2 * res[4] = 1.5, b = 3 / (res[5] * res[4]) = -1.6 (res[4] -0.75,
 * res[5] 2.5), then x aliasing y. */
START_TEST(test_axpby)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_dev_scalar a = {.c = -2, .nmul = 1, .mul = {4}};
  struct spmv_dev_scalar b = {.c = 3, .ndiv = 2, .div = {5, 4}};

  set_res(4, -0.75);
  set_res(5, 2.5);
  axpby_case(dt, n, a, 1.5, b, 3 / (2.5 * -0.75), 0, "axpby");
  axpby_case(dt, n, a, 1.5, b, 3 / (2.5 * -0.75), 1, "axpby x == y");
  axpby_case(dt, n, konst(0.25), 0.25, konst(1), 1, 0, "axpby constants");
}
END_TEST

/* beta the constant 0: y's NaN never reaches the result. */
START_TEST(test_axpby_beta0)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  double *hx = rand_vec(n, 15), *got = rand_vec(n, 16);
  void *x = to_dev(dt, hx, n), *y = to_dev(dt, hx, n);

  ck_assert_int_eq(cudaMemset(y, 0xff, n * esize(dt)), cudaSuccess);  /* NaN */
  ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
  ck_assert_msg(spmv_blas_axpby(dt, n, konst(-0.5), x, konst(0), y, dres, stream, &err) == 0,
                "%s", err.msg);
  from_dev(dt, y, n, got);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(got[i] == -0.5 * hx[i], "axpby beta 0 %s n=%zu: [%zu] got %g, want %g",
                  dt_name(dt), n, i, got[i], -0.5 * hx[i]);
  spmv_dev_free(x);
  spmv_dev_free(y);
  free(hx);
  free(got);
}
END_TEST

/* z = x .* y into z, then into x, then into y (aliases). */
START_TEST(test_mul)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  double *hx = rand_vec(n, 17), *hy = rand_vec(n, 18), *got = rand_vec(n, 19),
         *ref = rand_vec(n, 20), *mag = rand_vec(n, 21);
  void *x = to_dev(dt, hx, n), *y = to_dev(dt, hy, n), *z = to_dev(dt, hy, n);

  for (size_t i = 0; i < n; i++)
    mag[i] = fabs(ref[i] = hx[i] * hy[i]);
  ck_assert_msg(spmv_blas_mul(dt, n, x, y, z, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, z, n, got);
  check_close(dt, got, ref, mag, n, "mul");
  ck_assert_msg(spmv_blas_mul(dt, n, x, y, x, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, x, n, got);
  check_close(dt, got, ref, mag, n, "mul z == x");
  /* y = (x .* y) .* y now: the reference follows. */
  for (size_t i = 0; i < n; i++)
    mag[i] = fabs(ref[i] = hx[i] * hy[i] * hy[i]);
  ck_assert_msg(spmv_blas_mul(dt, n, x, y, y, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, y, n, got);
  check_close(dt, got, ref, mag, n, "mul z == y");
  spmv_dev_free(x);
  spmv_dev_free(y);
  spmv_dev_free(z);
  free(hx);
  free(hy);
  free(got);
  free(ref);
  free(mag);
}
END_TEST

/* The reference x . y (y NULL: x . x) in long double, and sum |x_i y_i|. */
static double ref_dot(const double *x, const double *y, size_t n, double *mag)
{
  long double s = 0, m = 0;

  for (size_t i = 0; i < n; i++) {
    long double t = (long double)x[i] * (y ? y[i] : x[i]);
    s += t;
    m += fabsl(t);
  }
  *mag = (double)m;
  return (double)s;
}

/* The reductions sum in double for either type, and the inputs are exact
 * in float: 1e-12 of sum |x_i y_i| fits both. */
#define REDUCE_RTOL 1e-12

START_TEST(test_dot)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  double *hx = rand_vec(n, 22), *hy = rand_vec(n, 23), mag;
  void *x = to_dev(dt, hx, n), *y = to_dev(dt, hy, n);
  double want = ref_dot(hx, hy, n, &mag);

  ck_assert_msg(spmv_blas_dot(dt, n, x, y, dres, 7, dpart, stream, &err) == 0, "%s", err.msg);
  double got = get_res(7);
  ck_assert_msg(fabs(got - want) <= REDUCE_RTOL * mag, "dot %s n=%zu: got %.17g, want %.17g",
                dt_name(dt), n, got, want);
  ck_assert_msg(n > 0 || memcmp(&got, &(double){0}, sizeof got) == 0, "empty dot %g", got);
  spmv_dev_free(x);
  spmv_dev_free(y);
  free(hx);
  free(hy);
}
END_TEST

START_TEST(test_nrm2)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  double *hx = rand_vec(n, 24), mag;
  void *x = to_dev(dt, hx, n);
  double want = sqrt(ref_dot(hx, NULL, n, &mag));

  ck_assert_msg(spmv_blas_nrm2(dt, n, x, dres, 63, dpart, stream, &err) == 0, "%s", err.msg);
  double got = get_res(63);
  ck_assert_msg(fabs(got - want) <= REDUCE_RTOL * want, "nrm2 %s n=%zu: got %.17g, want %.17g",
                dt_name(dt), n, got, want);
  ck_assert_msg(n > 0 || memcmp(&got, &(double){0}, sizeof got) == 0, "empty nrm2 %g", got);
  spmv_dev_free(x);
  free(hx);
}
END_TEST

/* A Krylov step queued with no wait: rho = x.x, q = x.y, then
 * y = (rho / q) x - (2 q / rho) y reads both results on the device. */
START_TEST(test_chain)
{
  enum spmv_dtype dt = case_dt(_i);
  size_t n = case_n(_i);
  struct spmv_error err = {0};
  struct spmv_dev_scalar a = {.c = 1, .nmul = 1, .mul = {10}, .ndiv = 1, .div = {11}};
  struct spmv_dev_scalar b = {.c = -2, .nmul = 1, .mul = {11}, .ndiv = 1, .div = {10}};
  double *hx = rand_vec(n, 25), *hy = rand_vec(n, 26), *got = rand_vec(n, 27),
         *ref = rand_vec(n, 28), *mag = rand_vec(n, 29);
  void *x = to_dev(dt, hx, n), *y = to_dev(dt, hy, n);

  ck_assert_msg(spmv_blas_dot(dt, n, x, x, dres, 10, dpart, stream, &err) == 0 &&
                spmv_blas_dot(dt, n, x, y, dres, 11, dpart, stream, &err) == 0 &&
                spmv_blas_axpby(dt, n, a, x, b, y, dres, stream, &err) == 0, "%s", err.msg);
  from_dev(dt, y, n, got);
  double rho = get_res(10), q = get_res(11), av = rho / q, bv = -2 * q / rho;
  for (size_t i = 0; i < n; i++) {
    ref[i] = av * hx[i] + bv * hy[i];
    mag[i] = fabs(av * hx[i]) + fabs(bv * hy[i]);
  }
  check_close(dt, got, ref, mag, n, "chain");
  spmv_dev_free(x);
  spmv_dev_free(y);
  free(hx);
  free(hy);
  free(got);
  free(ref);
  free(mag);
}
END_TEST

/* The same dot and norm of a 1e6-vector five times: the same bits. */
START_TEST(test_determinism)
{
  enum spmv_dtype dt = dts[_i];
  size_t n = 1000000;
  struct spmv_error err = {0};
  double *hx = rand_vec(n, 30), *hy = rand_vec(n, 31), d[5], r[5];
  void *x = to_dev(dt, hx, n), *y = to_dev(dt, hy, n);

  for (int k = 0; k < 5; k++)
    ck_assert_msg(spmv_blas_dot(dt, n, x, y, dres, 20 + k, dpart, stream, &err) == 0 &&
                  spmv_blas_nrm2(dt, n, x, dres, 30 + k, dpart, stream, &err) == 0,
                  "%s", err.msg);
  for (int k = 0; k < 5; k++) {
    d[k] = get_res(20 + k);
    r[k] = get_res(30 + k);
    ck_assert_msg(memcmp(&d[k], &d[0], sizeof d[0]) == 0, "dot %s run %d: %a, run 0: %a",
                  dt_name(dt), k, d[k], d[0]);
    ck_assert_msg(memcmp(&r[k], &r[0], sizeof r[0]) == 0, "nrm2 %s run %d: %a, run 0: %a",
                  dt_name(dt), k, r[k], r[0]);
  }
  ck_assert(!isnan(d[0]) && d[0] != 0 && r[0] > 0);
  spmv_dev_free(x);
  spmv_dev_free(y);
  free(hx);
  free(hy);
}
END_TEST

/* Slots, terms and types out of range are refused before any launch. */
START_TEST(test_errors)
{
  struct spmv_error err = {0};
  struct spmv_dev_scalar many = {.c = 1, .nmul = SPMV_DEV_SCALAR_TERMS + 1};
  struct spmv_dev_scalar far = {.c = 1, .ndiv = 1, .div = {SPMV_DEV_RESULTS}};
  double h[4] = {1, 2, 3, 4};
  void *x = to_dev(SPMV_F64, h, 4);

  ck_assert_int_eq(spmv_blas_dot(SPMV_F64, 4, x, x, dres, SPMV_DEV_RESULTS, dpart, stream,
                                 &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_blas_nrm2(SPMV_F64, 4, x, dres, -1, dpart, stream, &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_blas_scale(SPMV_F64, 4, x, many, dres, stream, &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_blas_fill(SPMV_F64, 4, x, far, dres, stream, &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_blas_axpby(SPMV_F64, 4, konst(1), x, far, x, dres, stream, &err),
                   SPMV_EINVAL);
  ck_assert_int_eq(spmv_blas_mul((enum spmv_dtype)0, 4, x, x, x, stream, &err), SPMV_EINVAL);
  ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
  ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
  spmv_dev_free(x);
}
END_TEST

static Suite *gpu_blas_suite(void)
{
  Suite *s = suite_create("gpu_blas");
  TCase *tc = tcase_create("blas1");
  tcase_add_checked_fixture(tc, blas_setup, blas_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_fill, 0, NCASES);
  tcase_add_loop_test(tc, test_copy, 0, NCASES);
  tcase_add_loop_test(tc, test_scale, 0, NCASES);
  tcase_add_loop_test(tc, test_axpby, 0, NCASES);
  tcase_add_loop_test(tc, test_axpby_beta0, 0, NCASES);
  tcase_add_loop_test(tc, test_mul, 0, NCASES);
  tcase_add_loop_test(tc, test_dot, 0, NCASES);
  tcase_add_loop_test(tc, test_nrm2, 0, NCASES);
  tcase_add_loop_test(tc, test_chain, 0, NCASES);
  tcase_add_loop_test(tc, test_determinism, 0, 2);
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  int failed;
  if (!gpu_present()) {
    fprintf(stderr, "no CUDA device: skipped\n");
    return 77;
  }
  SRunner *sr = srunner_create(gpu_blas_suite());
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
