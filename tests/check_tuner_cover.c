/* check_tuner_cover.c: the exhaustive list (bench's, the evaluation's
 * ground truth) holds every configuration any other strategy returns, on
 * a gallery of generated matrices, both backends, both value types and
 * L2s that put the matrices within and beyond the cache. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_gen.h"
#include "spmv_profile.h"
#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "tuner_test.h"

/* Whether c holds cfg (compared as their texts, the key the cache and
 * bench use). */
static int holds(const struct spmvd_candidates *c, const struct spmv_config *cfg)
{
  char a[64], b[64];

  spmv_config_format(cfg, a, sizeof a);
  for (size_t k = 0; k < c->n; k++) {
    spmv_config_format(&c->cfg[k], b, sizeof b);
    if (strcmp(a, b) == 0)
      return 1;
  }
  return 0;
}

/* The gallery: the generators' families, small enough to profile at once. */
static struct spmv_csr *gallery(int i, const char **name)
{
  static const int64_t dc1_long[] = {3000, 9000};
  struct spmv_error err;

  switch (i) {
  case 0: *name = "stencil2d 5pt"; return spmv_gen_stencil2d(60, 60, 5, &err);
  case 1: *name = "stencil3d 27pt"; return spmv_gen_stencil3d(16, 16, 16, 27, &err);
  case 2: *name = "banded"; return spmv_gen_banded(4000, 12, 40, 1, &err);
  case 3: *name = "random k=3"; return spmv_gen_random(5000, 5000, 3, 2, &err);
  case 4: *name = "random k=40"; return spmv_gen_random(2000, 30000, 40, 3, &err);
  case 5: *name = "pareto"; return spmv_gen_pareto(6000, 6000, 1, 1.2, 4, &err);
  case 6: *name = "dc1like"; return spmv_gen_dc1like(10000, 4.22, 2, dc1_long, 5, &err);
  case 7: *name = "rmat"; return spmv_gen_rmat(12, 8, SPMV_GEN_RMAT_A, SPMV_GEN_RMAT_B,
                                               SPMV_GEN_RMAT_C, 0, 6, &err);
  case 8: *name = "dense block"; return spmv_gen_dense(64, 4000, 500, 7, &err);
  case 9: *name = "road-like k=2"; return spmv_gen_banded(8000, 2, 3, 8, &err);
  default: return NULL;
  }
}

START_TEST(test_exhaustive_covers)
{
  static const enum spmvd_strategy others[] = {
      SPMVD_STRATEGY_AUTO, SPMVD_STRATEGY_TRIAL, SPMVD_STRATEGY_MODEL,
      SPMVD_STRATEGY_PREDICT};
  static const uint64_t l2s[] = {64u << 10, 60u << 20};
  struct spmvd_candidates *ex = malloc(sizeof *ex), *c = malloc(sizeof *c);
  struct spmvd_predictor pr;
  const char *name = "";
  int checked = 0;

  fake_predictor(&pr);
  for (int g = 0; g < 10; g++) {
    struct spmv_csr *A = gallery(g, &name);
    struct spmv_profile p;
    struct spmv_error err;
    ck_assert_msg(A != NULL, "gallery %d", g);
    ck_assert_int_eq(spmv_profile_compute(A, &p, &err), 0);
    for (int cuda = 0; cuda <= 1; cuda++)
      for (size_t l = 0; l < sizeof l2s / sizeof l2s[0]; l++)
        for (int f32 = 0; f32 <= 1; f32++) {
          struct spmvd_device_info dev = device(cuda);
          struct spmvd_tune_input in;
          dev.l2_bytes = l2s[l];
          memset(&in, 0, sizeof in);
          in.A = A;
          in.prof = &p;
          in.dev = &dev;
          in.dtype = f32 ? SPMV_F32 : SPMV_F64;
          in.pred = &pr;
          ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE,
                                                  &in, ex, NULL), 0);
          for (size_t s = 0; s < sizeof others / sizeof others[0]; s++) {
            if (spmvd_tuner_candidates(others[s], &in, c, NULL) < 0)
              continue;  /* model on the cpu backend */
            for (size_t k = 0; k < c->n; k++) {
              char t[64];
              spmv_config_format(&c->cfg[k], t, sizeof t);
              ck_assert_msg(holds(ex, &c->cfg[k]),
                            "%s, %s, L2 %llu, %s: strategy %d lists %s, "
                            "which exhaustive does not", name,
                            cuda ? "cuda" : "cpu", (unsigned long long)l2s[l],
                            f32 ? "f32" : "f64", (int)others[s], t);
              checked++;
            }
          }
        }
    spmv_csr_free(A);
  }
  ck_assert_int_ge(checked, 500);
  free(ex);
  free(c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("tuner_cover");
  TCase *tc = tcase_create("cover");
  SRunner *sr;
  int failed;

  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_exhaustive_covers);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
