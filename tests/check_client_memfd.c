/* check_client_memfd.c: the matrix libspmvclient writes into a memfd is
 * the host layout byte for byte (f32 values widened, padding zero) and
 * sealed, whether one thread writes it or several do. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spmv_client_int.h"
#include "spmv_par.h"
#include "spmv_wire.h"

/* A matrix of rows rows, k entries each (arbitrary columns and values:
 * the memfd holds what it is given, the daemon validates). */
struct mat {
  int64_t rows, nnz;
  int64_t *rp;
  int32_t *ci;
  double *v64;
  float *v32;
};

static struct mat mat_new(int64_t rows, int k)
{
  struct mat m = {rows, rows * k, malloc((size_t)(rows + 1) * 8),
                  malloc((size_t)(rows * k) * 4 + 4),
                  malloc((size_t)(rows * k) * 8 + 8), malloc((size_t)(rows * k) * 4 + 4)};
  uint64_t s = 0x9e3779b97f4a7c15u;

  ck_assert(m.rp && m.ci && m.v64 && m.v32);
  for (int64_t r = 0; r <= rows; r++)
    m.rp[r] = r * k;
  for (int64_t e = 0; e < m.nnz; e++) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    m.ci[e] = (int32_t)(s >> 40);
    m.v64[e] = (double)(int64_t)(s >> 11) * 0x1p-40 - 1.0;
    m.v32[e] = (float)(e % 977) * 0.125f - 50.0f;
  }
  return m;
}

static void mat_free(struct mat *m)
{
  free(m->rp);
  free(m->ci);
  free(m->v64);
  free(m->v32);
}

/* Writes m into a memfd in dt and checks every byte of it. */
static void check_memfd(const struct mat *m, enum spmv_dtype dt)
{
  struct spmv_wire_csr_layout l;
  const void *vals = dt == SPMV_F64 ? (const void *)m->v64 : (const void *)m->v32;
  int fd = spmvc_csr_memfd(dt, m->rows, m->nnz, m->rp, m->ci, vals);

  ck_assert_msg(fd >= 0, "no memfd for %lld entries", (long long)m->nnz);
  spmv_wire_csr_layout(m->rows, m->nnz, &l);
  ck_assert_int_eq(lseek(fd, 0, SEEK_END), (off_t)l.size);
  int seals = fcntl(fd, F_GET_SEALS);
  ck_assert_int_eq(seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
                   F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  const char *p = mmap(NULL, l.size, PROT_READ, MAP_SHARED, fd, 0);
  ck_assert(p != MAP_FAILED);
  ck_assert(memcmp(p + l.off_row, m->rp, (size_t)(m->rows + 1) * 8) == 0);
  ck_assert(memcmp(p + l.off_col, m->ci, (size_t)m->nnz * 4) == 0);
  /* The bytes between the columns and the values are never written. */
  for (size_t b = l.off_col + (size_t)m->nnz * 4; b < l.off_val; b++)
    ck_assert_int_eq(p[b], 0);
  const double *v = (const double *)(p + l.off_val);
  int64_t bad = -1;
  for (int64_t e = 0; e < m->nnz && bad < 0; e++)
    if (v[e] != (dt == SPMV_F64 ? m->v64[e] : (double)m->v32[e]))
      bad = e;
  ck_assert_msg(bad < 0, "value %lld of %lld differs", (long long)bad, (long long)m->nnz);
  munmap((void *)p, l.size);
  close(fd);
}

/* Below a million entries one thread writes it (spmv_par_threads). */
START_TEST(small_one_thread)
{
  struct mat m = mat_new(1001, 7);
  ck_assert_int_eq(spmv_par_threads(m.nnz), 1);
  check_memfd(&m, SPMV_F64);
  check_memfd(&m, SPMV_F32);
  mat_free(&m);
}
END_TEST

/* Above it, as many threads as the host's CPUs allow (one on one CPU). */
START_TEST(large_threads)
{
  struct mat m = mat_new(400003, 3);
  ck_assert(m.nnz >= 1000000);
  check_memfd(&m, SPMV_F64);
  check_memfd(&m, SPMV_F32);
  mat_free(&m);
}
END_TEST

/* No entries at all. */
START_TEST(empty)
{
  struct mat m = mat_new(5, 0);
  check_memfd(&m, SPMV_F64);
  mat_free(&m);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("client_memfd");
  TCase *tc = tcase_create("memfd");
  SRunner *sr;
  int failed;

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, small_one_thread);
  tcase_add_test(tc, large_threads);
  tcase_add_test(tc, empty);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
