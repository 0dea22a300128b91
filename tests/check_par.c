/* check_par.c: the passes split over threads cover each row, or each
 * element of a range, exactly once, part t with its own bounds. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "spmv_csr.h"
#include "spmv_par.h"

/* What each visited index saw: how often, and from which part. */
struct seen {
  int64_t len;
  int *count;
  int *part;
  int parts;
};

static void visit(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct seen *s = ctx;

  if (!(r0 >= 0 && r0 <= r1 && r1 <= s->len))
    abort();  /* out of bounds: the loop below would write outside */
  for (int64_t i = r0; i < r1; i++) {
    __atomic_add_fetch(&s->count[i], 1, __ATOMIC_RELAXED);
    s->part[i] = t;
  }
  __atomic_add_fetch(&s->parts, 1, __ATOMIC_RELAXED);
}

static struct seen seen_new(int64_t len)
{
  struct seen s = {len, calloc((size_t)len + 1, sizeof(int)),
                   calloc((size_t)len + 1, sizeof(int)), 0};
  ck_assert(s.count && s.part);
  return s;
}

/* Every index once, the parts in order (part t's indices before t+1's),
 * and every one of the n parts run (clamped to [1, SPMV_PAR_MAX]). */
static void check_seen(struct seen *s, int n)
{
  int want = n < 1 ? 1 : n > SPMV_PAR_MAX ? SPMV_PAR_MAX : n;
  int64_t bad = -1, unordered = -1;

  /* One assertion for the whole pass: check's cost per assertion would
   * outlast the timeout on a million indices. */
  for (int64_t i = 0; i < s->len; i++) {
    if (s->count[i] != 1 && bad < 0)
      bad = i;
    if (i > 0 && s->part[i] < s->part[i - 1] && unordered < 0)
      unordered = i;
  }
  ck_assert_msg(bad < 0, "length %lld, %d parts: index %lld seen %d times",
                (long long)s->len, n, (long long)bad, bad < 0 ? 1 : s->count[bad]);
  ck_assert_msg(unordered < 0, "index %lld in an earlier part than %lld's",
                (long long)unordered, (long long)unordered - 1);
  ck_assert_int_eq(s->parts, want);
  free(s->count);
  free(s->part);
}

START_TEST(test_range)
{
  const int64_t lens[] = {0, 1, 5, 16, 1000003};
  const int ns[] = {0, 1, 3, 16, 40};

  for (size_t a = 0; a < sizeof lens / sizeof lens[0]; a++)
    for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
      struct seen s = seen_new(lens[a]);
      spmv_par_range(lens[a], ns[b], visit, &s);
      check_seen(&s, ns[b]);
    }
}
END_TEST

/* Rows of 0 to 9 entries, some empty: every row once for any n. */
START_TEST(test_rows)
{
  const int64_t rows = 5001;
  struct spmv_csr A = {0};
  int64_t *rp = malloc(sizeof *rp * (size_t)(rows + 1));

  ck_assert_ptr_nonnull(rp);
  rp[0] = 0;
  for (int64_t i = 0; i < rows; i++)
    rp[i + 1] = rp[i] + (i * 7919) % 10;
  A.rows = rows;
  A.cols = rows;
  A.nnz = rp[rows];
  A.row_ptr = rp;
  for (int n = 1; n <= SPMV_PAR_MAX + 1; n += 5) {
    struct seen s = seen_new(rows);
    spmv_par_rows(&A, n, visit, &s);
    check_seen(&s, n);
  }
  free(rp);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("par");
  TCase *tc = tcase_create("core");
  SRunner *sr;
  int failed;

  tcase_add_test(tc, test_range);
  tcase_add_test(tc, test_rows);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
