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

/* One test's vectors, n values each: random host x and y, room for what
 * the GPU gave (got), the reference and its tolerance's magnitude, and
 * device x, y and z (z a copy of y). */
struct vecs {
  enum spmv_dtype dt;
  size_t n;
  double *hx, *hy, *got, *ref, *mag;
  void *x, *y, *z;
};

static void vecs_init(struct vecs *v, enum spmv_dtype dt, size_t n, uint64_t seed)
{
  v->dt = dt;
  v->n = n;
  v->hx = rand_vec(n, seed);
  v->hy = rand_vec(n, seed + 1);
  v->got = rand_vec(n, seed + 2);
  v->ref = rand_vec(n, seed + 3);
  v->mag = rand_vec(n, seed + 4);
  v->x = to_dev(dt, v->hx, n);
  v->y = to_dev(dt, v->hy, n);
  v->z = to_dev(dt, v->hy, n);
}

static void vecs_fini(struct vecs *v)
{
  spmv_dev_free(v->x);
  spmv_dev_free(v->y);
  spmv_dev_free(v->z);
  free(v->hx);
  free(v->hy);
  free(v->got);
  free(v->ref);
  free(v->mag);
}

/* Reads device vector d into v->got and checks it against v->ref. */
static void check_vec(struct vecs *v, const void *d, const char *what)
{
  from_dev(v->dt, d, v->n, v->got);
  check_close(v->dt, v->got, v->ref, v->mag, v->n, what);
}

/* v->ref = a*x + b*y for the host values xs and ys, with its magnitude. */
static void ref_axpby(struct vecs *v, double a, const double *xs, double b, const double *ys)
{
  for (size_t i = 0; i < v->n; i++) {
    v->ref[i] = a * xs[i] + b * ys[i];
    v->mag[i] = fabs(a * xs[i]) + fabs(b * ys[i]);
  }
}

/* a = 1.25 * res[2] = -3.75 fills every element (exact in either type). */
START_TEST(test_fill)
{
  struct vecs v;
  struct spmv_error err = {0};
  struct spmv_dev_scalar a = {.c = 1.25, .nmul = 1, .mul = {2}};

  vecs_init(&v, case_dt(_i), case_n(_i), 1);
  set_res(2, -3.0);
  ck_assert_msg(spmv_blas_fill(v.dt, v.n, v.x, a, dres, stream, &err) == 0, "%s", err.msg);
  for (size_t i = 0; i < v.n; i++) {
    v.ref[i] = -3.75;
    v.mag[i] = 0;  /* exact */
  }
  check_vec(&v, v.x, "fill");
  vecs_fini(&v);
}
END_TEST

/* The host's own statement of spmv_blas_random's values (splitmix64 of
 * seed + (i + 1) * golden ratio, 53 bits to [0.5, 1.5), sign from bit 0). */
static double random_ref(uint64_t seed, uint64_t i)
{
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  double v = 0.5 + (double)(z >> 11) / 9007199254740992.0;
  return (z & 1) ? -v : v;
}

/* random: each element the hash's value (rounded to the type), never
 * zero, within +-[0.5, 1.5], of both signs; another seed, other values. */
START_TEST(test_random)
{
  struct vecs v;
  struct spmv_error err = {0};
  size_t neg = 0, same = 0;

  vecs_init(&v, case_dt(_i), case_n(_i), 7);
  ck_assert_msg(spmv_blas_random(v.dt, v.n, v.x, 42, stream, &err) == 0 &&
                spmv_blas_random(v.dt, v.n, v.y, 43, stream, &err) == 0, "%s", err.msg);
  for (size_t i = 0; i < v.n; i++) {
    double r = random_ref(42, i);
    v.ref[i] = v.dt == SPMV_F32 ? (double)(float)r : r;
    v.mag[i] = 0;  /* exact */
    neg += r < 0;
  }
  check_vec(&v, v.x, "random");
  for (size_t i = 0; i < v.n; i++)
    ck_assert_msg(fabs(v.got[i]) >= 0.5 && fabs(v.got[i]) <= 1.5, "x[%zu] = %g", i,
                  v.got[i]);
  if (v.n >= 64)
    ck_assert_msg(neg > v.n / 4 && neg < 3 * v.n / 4, "%zu of %zu negative", neg, v.n);
  from_dev(v.dt, v.y, v.n, v.got);
  for (size_t i = 0; i < v.n; i++)
    same += v.got[i] == v.ref[i];
  ck_assert_msg(v.n == 0 || same < v.n, "seeds 42 and 43 gave the same values");
  vecs_fini(&v);
}
END_TEST

/* y = x, and x = x (nothing to do): the same bits. */
START_TEST(test_copy)
{
  struct vecs v;
  struct spmv_error err = {0};

  vecs_init(&v, case_dt(_i), case_n(_i), 6);
  ck_assert_msg(spmv_blas_copy(v.dt, v.n, v.x, v.y, stream, &err) == 0 &&
                spmv_blas_copy(v.dt, v.n, v.x, v.x, stream, &err) == 0, "%s", err.msg);
  for (size_t i = 0; i < v.n; i++) {
    v.ref[i] = v.hx[i];
    v.mag[i] = 0;  /* exact */
  }
  check_vec(&v, v.y, "copy");
  check_vec(&v, v.x, "copy onto itself");
  vecs_fini(&v);
}
END_TEST

/* a = 0.5 * res[1] * res[2] / res[3] = 0.5 * 3 * -1.5 / 0.75 = -3. */
START_TEST(test_scale)
{
  struct vecs v;
  struct spmv_error err = {0};
  struct spmv_dev_scalar a = {.c = 0.5, .nmul = 2, .mul = {1, 2}, .ndiv = 1, .div = {3}};

  vecs_init(&v, case_dt(_i), case_n(_i), 11);
  set_res(1, 3.0);
  set_res(2, -1.5);
  set_res(3, 0.75);
  ck_assert_msg(spmv_blas_scale(v.dt, v.n, v.x, a, dres, stream, &err) == 0, "%s", err.msg);
  ref_axpby(&v, -3.0, v.hx, 0, v.hy);
  check_vec(&v, v.x, "scale");
  vecs_fini(&v);
}
END_TEST

/* y = a*x + b*y (x == y when alias) against the double reference with
 * the scalars' values av, bv. */
static void axpby_case(enum spmv_dtype dt, size_t n, struct spmv_dev_scalar a, double av,
                       struct spmv_dev_scalar b, double bv, int alias, const char *what)
{
  struct vecs v;
  struct spmv_error err = {0};

  vecs_init(&v, dt, n, 16);
  ck_assert_msg(spmv_blas_axpby(dt, n, a, alias ? v.y : v.x, b, v.y, dres, stream, &err) == 0,
                "%s", err.msg);
  ref_axpby(&v, av, alias ? v.hy : v.hx, bv, v.hy);
  check_vec(&v, v.y, what);
  vecs_fini(&v);
}

/* a = -2 * res[4] = 1.5, b = 3 / (res[5] * res[4]) = -1.6 (res[4] -0.75,
 * res[5] 2.5), then x aliasing y, then constants. */
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

/* beta the constant 0: y's NaN never reaches the result (-0.5 x, exact). */
START_TEST(test_axpby_beta0)
{
  struct vecs v;
  struct spmv_error err = {0};

  vecs_init(&v, case_dt(_i), case_n(_i), 21);
  ck_assert_int_eq(cudaMemset(v.y, 0xff, v.n * esize(v.dt)), cudaSuccess);  /* NaN */
  ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
  ck_assert_msg(spmv_blas_axpby(v.dt, v.n, konst(-0.5), v.x, konst(0), v.y, dres, stream,
                                &err) == 0, "%s", err.msg);
  ref_axpby(&v, -0.5, v.hx, 0, v.hy);
  for (size_t i = 0; i < v.n; i++)
    v.mag[i] = 0;  /* exact: a power of two */
  check_vec(&v, v.y, "axpby beta 0");
  vecs_fini(&v);
}
END_TEST

/* v->ref = x .* y for the host values, with its magnitude. */
static void ref_mul(struct vecs *v, const double *xs, const double *ys)
{
  for (size_t i = 0; i < v->n; i++)
    v->mag[i] = fabs(v->ref[i] = xs[i] * ys[i]);
}

/* z = x .* y into z, then into x, then into y (aliases). */
START_TEST(test_mul)
{
  struct vecs v;
  struct spmv_error err = {0};

  vecs_init(&v, case_dt(_i), case_n(_i), 26);
  ref_mul(&v, v.hx, v.hy);
  ck_assert_msg(spmv_blas_mul(v.dt, v.n, v.x, v.y, v.z, stream, &err) == 0, "%s", err.msg);
  check_vec(&v, v.z, "mul");
  ck_assert_msg(spmv_blas_mul(v.dt, v.n, v.x, v.y, v.x, stream, &err) == 0, "%s", err.msg);
  check_vec(&v, v.x, "mul z == x");
  /* y = (x .* y) .* y now. */
  for (size_t i = 0; i < v.n; i++)
    v.hx[i] *= v.hy[i];
  ref_mul(&v, v.hx, v.hy);
  ck_assert_msg(spmv_blas_mul(v.dt, v.n, v.x, v.y, v.y, stream, &err) == 0, "%s", err.msg);
  check_vec(&v, v.y, "mul z == y");
  vecs_fini(&v);
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

/* res[slot] = x . y (norm: ||x||_2) against the reference; n == 0 must
 * write +0 over the slot's NaN. */
static void reduce_case(enum spmv_dtype dt, size_t n, int norm, int slot)
{
  struct vecs v;
  struct spmv_error err = {0};
  const char *what = norm ? "nrm2" : "dot";
  double mag;

  vecs_init(&v, dt, n, 31);
  double want = ref_dot(v.hx, norm ? NULL : v.hy, n, &mag);
  int rc = norm ? spmv_blas_nrm2(dt, n, v.x, dres, slot, dpart, stream, &err)
                : spmv_blas_dot(dt, n, v.x, v.y, dres, slot, dpart, stream, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
  if (norm) {
    want = sqrt(want);
    mag = want;  /* sqrt halves the sum's relative error */
  }
  double got = get_res(slot);
  ck_assert_msg(fabs(got - want) <= REDUCE_RTOL * mag, "%s %s n=%zu: got %.17g, want %.17g",
                what, dt_name(dt), n, got, want);
  ck_assert_msg(n > 0 || memcmp(&got, &(double){0}, sizeof got) == 0, "empty %s: %g", what,
                got);
  vecs_fini(&v);
}

START_TEST(test_dot)
{
  reduce_case(case_dt(_i), case_n(_i), 0, 7);
}
END_TEST

START_TEST(test_nrm2)
{
  reduce_case(case_dt(_i), case_n(_i), 1, SPMV_DEV_RESULTS - 1);
}
END_TEST

/* res[slot] = sum |x_i| against the reference in long double; the same
 * bits twice; n == 0 writes +0. */
START_TEST(test_asum)
{
  struct vecs v;
  struct spmv_error err = {0};
  long double want = 0;
  double got[2];

  vecs_init(&v, case_dt(_i), case_n(_i), 33);
  for (size_t i = 0; i < v.n; i++)
    want += fabsl((long double)v.hx[i]);
  for (int k = 0; k < 2; k++) {
    ck_assert_msg(spmv_blas_asum(v.dt, v.n, v.x, dres, 20, dpart, stream, &err) == 0,
                  "%s", err.msg);
    got[k] = get_res(20);
  }
  ck_assert_msg(fabs(got[0] - (double)want) <= REDUCE_RTOL * (double)want,
                "asum %s n=%zu: got %.17g, want %.17Lg", dt_name(v.dt), v.n, got[0], want);
  ck_assert_int_eq(memcmp(&got[0], &got[1], sizeof got[0]), 0);
  ck_assert_msg(v.n > 0 || memcmp(&got[0], &(double){0}, sizeof got[0]) == 0,
                "empty asum: %g", got[0]);
  vecs_fini(&v);
}
END_TEST

/* A Krylov step queued with no wait: rho = x.x, q = x.y, then
 * y = (rho / q) x - (2 q / rho) y reads both results on the device. */
START_TEST(test_chain)
{
  struct vecs v;
  struct spmv_error err = {0};
  struct spmv_dev_scalar a = {.c = 1, .nmul = 1, .mul = {10}, .ndiv = 1, .div = {11}};
  struct spmv_dev_scalar b = {.c = -2, .nmul = 1, .mul = {11}, .ndiv = 1, .div = {10}};

  vecs_init(&v, case_dt(_i), case_n(_i), 36);
  ck_assert_msg(spmv_blas_dot(v.dt, v.n, v.x, v.x, dres, 10, dpart, stream, &err) == 0 &&
                spmv_blas_dot(v.dt, v.n, v.x, v.y, dres, 11, dpart, stream, &err) == 0 &&
                spmv_blas_axpby(v.dt, v.n, a, v.x, b, v.y, dres, stream, &err) == 0,
                "%s", err.msg);
  double rho = get_res(10), q = get_res(11);
  ref_axpby(&v, rho / q, v.hx, -2 * q / rho, v.hy);
  check_vec(&v, v.y, "chain");
  vecs_fini(&v);
}
END_TEST

/* The same dot and norm of a 1e6-vector five times: the same bits. */
START_TEST(test_determinism)
{
  struct vecs v;
  struct spmv_error err = {0};
  double d[5], r[5];

  vecs_init(&v, dts[_i], 1000000, 41);
  for (int k = 0; k < 5; k++)
    ck_assert_msg(spmv_blas_dot(v.dt, v.n, v.x, v.y, dres, 20 + k, dpart, stream, &err) == 0 &&
                  spmv_blas_nrm2(v.dt, v.n, v.x, dres, 30 + k, dpart, stream, &err) == 0,
                  "%s", err.msg);
  for (int k = 0; k < 5; k++) {
    d[k] = get_res(20 + k);
    r[k] = get_res(30 + k);
    ck_assert_msg(memcmp(&d[k], &d[0], sizeof d[0]) == 0, "dot %s run %d: %a, run 0: %a",
                  dt_name(v.dt), k, d[k], d[0]);
    ck_assert_msg(memcmp(&r[k], &r[0], sizeof r[0]) == 0, "nrm2 %s run %d: %a, run 0: %a",
                  dt_name(v.dt), k, r[k], r[0]);
  }
  ck_assert(!isnan(d[0]) && d[0] != 0 && r[0] > 0);
  vecs_fini(&v);
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
  ck_assert_int_eq(spmv_blas_random((enum spmv_dtype)0, 4, x, 1, stream, &err), SPMV_EINVAL);
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
  tcase_add_loop_test(tc, test_random, 0, NCASES);
  tcase_add_loop_test(tc, test_copy, 0, NCASES);
  tcase_add_loop_test(tc, test_scale, 0, NCASES);
  tcase_add_loop_test(tc, test_axpby, 0, NCASES);
  tcase_add_loop_test(tc, test_axpby_beta0, 0, NCASES);
  tcase_add_loop_test(tc, test_mul, 0, NCASES);
  tcase_add_loop_test(tc, test_dot, 0, NCASES);
  tcase_add_loop_test(tc, test_nrm2, 0, NCASES);
  tcase_add_loop_test(tc, test_asum, 0, NCASES);
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
