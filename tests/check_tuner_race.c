/* check_tuner_race.c: the race with a fake timing callback, and the
 * strategies run through it. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "tuner_test.h"

/* The fake device: times per format, failures, and counters. */
struct fake {
  struct spmv_config loaded, kept;
  int is_loaded, is_kept;
  int loads, unloads, times, progress, keeps;
  int ellr_calls;
  int ellr_close;  /* ellr-t answers 5.2 always */
  int sticky;
  const double *sell;  /* sell's answers, call by call (the last repeats) */
  int sell_n, sell_calls;
};

static int fake_load(void *ctx, const struct spmv_config *cfg,
                     struct spmv_error *err)
{
  struct fake *f = ctx;

  ck_assert(!f->is_loaded);
  f->loads++;
  if (cfg->format == SPMV_FMT_JAD)
    return spmv_error_set(err, SPMV_ENOMEM, "jad: no memory left");
  f->loaded = *cfg;
  f->is_loaded = 1;
  f->ellr_calls = 0;
  f->sell_calls = 0;
  return 0;
}

static int fake_time(void *ctx, int warmup, int reps, double *us,
                     struct spmv_error *err)
{
  struct fake *f = ctx;

  ck_assert(f->is_loaded);
  ck_assert_int_ge(reps, 1);
  f->times++;
  switch (f->loaded.format) {
  case SPMV_FMT_CSR_SCALAR: *us = 10; return 0;
  case SPMV_FMT_CSR_VECTOR: *us = 5; return 0;
  case SPMV_FMT_COO: *us = 20; return 0;
  case SPMV_FMT_ELLR_T:  /* never stable: 6.0, 6.6, 6.0, ... */
    *us = f->ellr_close ? 5.2 : f->ellr_calls++ % 2 ? 6.6 : 6.0;
    return 0;
  case SPMV_FMT_HYB:
    return spmv_error_set(err, f->sticky ? SPMV_EGPU_STICKY : SPMV_EGPU,
                          "hyb: launch failed");
  case SPMV_FMT_SELL:
    if (f->sell_n > 0) {
      *us = f->sell[f->sell_calls < f->sell_n ? f->sell_calls : f->sell_n - 1];
      f->sell_calls++;
      return 0;
    }
    *us = 100;
    return 0;
  default:
    *us = 100;
    return 0;
  }
}

static void fake_unload(void *ctx)
{
  struct fake *f = ctx;

  ck_assert(f->is_loaded);
  f->is_loaded = 0;
  f->unloads++;
}

static void fake_progress(void *ctx, int done, int total,
                          const struct spmvd_trial *t)
{
  struct fake *f = ctx;

  f->progress++;
  ck_assert_int_eq(done, f->progress);
  ck_assert_int_ge(total, done);
  ck_assert_ptr_nonnull(t);
}

/* The leader kept in place of the one kept before. */
static void fake_keep(void *ctx)
{
  struct fake *f = ctx;

  ck_assert(f->is_loaded);
  f->kept = f->loaded;
  f->is_kept = 1;
  f->is_loaded = 0;
  f->keeps++;
}

static const struct spmvd_race_ops fake_ops = { fake_load, fake_time,
                                                fake_unload, fake_progress,
                                                NULL };
static const struct spmvd_race_ops fake_keep_ops = { fake_load, fake_time,
                                                     fake_unload, fake_progress,
                                                     fake_keep };

/* scalar (10 us), vector (5), coo (20), jad (load fails), hyb (time
 * fails), ellr-t (6.0 / 6.6, never stable). */
static void race_list(struct spmvd_candidates *c)
{
  static const struct spmv_config cfgs[] = {
    { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 }, { SPMV_FMT_CSR_VECTOR, 256, 4, 0, 0 },
    { SPMV_FMT_COO, 256, 0, 0, 0 },        { SPMV_FMT_JAD, 256, 0, 0, 0 },
    { SPMV_FMT_HYB, 256, 0, 0, 0 },        { SPMV_FMT_ELLR_T, 256, 2, 0, 0 },
  };
  size_t k;

  c->n = 6;
  for (k = 0; k < 6; k++)
    c->cfg[k] = cfgs[k];
}

/*
 * The cost bound: csr-vector leads at 5 us, three ellr-t at 5.2 us stay
 * within close_tol of it and take a second round each: 93 us, 18.6
 * SpMV-equivalents.  With max_cost 18 the last gets no second round
 * (82.6 us, 16.5).
 */
START_TEST(test_race_cost_bound)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_race_params p;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;

  c->n = 0;
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 };
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_ELLR_T, 64, 2, 0, 0 };
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_ELLR_T, 128, 2, 0, 0 };
  c->cfg[c->n++] = (struct spmv_config){ SPMV_FMT_ELLR_T, 256, 2, 0, 0 };
  spmvd_race_params_default(&p);
  memset(&f, 0, sizeof f);
  f.ellr_close = 1;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, &p, NULL, &d, &e), 0);
  ck_assert_double_eq_tol(d.cost_spmv, 18.6, 1e-9);
  ck_assert_int_eq(d.trials[3].rounds, 2);
  spmvd_decision_fini(&d);
  p.max_cost = 18;
  memset(&f, 0, sizeof f);
  f.ellr_close = 1;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, &p, NULL, &d, &e), 0);
  ck_assert_double_eq_tol(d.cost_spmv, 16.52, 1e-9);
  ck_assert_int_eq(d.trials[2].rounds, 2);
  ck_assert_int_eq(d.trials[3].rounds, 1);
  ck_assert_str_eq(d.text, "csr-vector bs=128 tpr=4");
  spmvd_decision_fini(&d);
  free(c);
}
END_TEST

/*
 * Rounds until stable (probe_ratio 0, close_tol 0, min_rounds 2,
 * max_rounds 5): 1 warm-up, rounds of 3, stable after 2 equal rounds,
 * dropped beyond 1.5 x the leader.
 *  scalar: 2 rounds, 7 runs of 10 us = 70 us; leader 10.
 *  vector: 2 rounds, 7 runs of 5 us = 35 us; leader 5.
 *  coo: round 1 at 20 > 7.5: dropped, 4 runs = 80 us.
 *  jad: load fails; hyb: time fails (0 runs).
 *  ellr-t: 5 rounds 6.0, 6.6, 6.0, 6.6, 6.0: 4*6 + 3*6.6 + 3*6 + 3*6.6 +
 *    3*6 = 99.6 us over 16 runs; median 6.0 > 5, not the leader.
 * Cost = (70 + 35 + 80 + 99.6) / 5 = 56.92 SpMV-equivalents.
 */
START_TEST(test_race_rounds)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_device_info gpu = device(1);
  struct spmvd_tune_input in;
  struct spmvd_race_params p;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;
  struct mat m;

  mat_init(&m, 1000, 5);
  in = input(&m, &gpu);
  memset(&f, 0, sizeof f);
  race_list(c);
  spmvd_race_params_default(&p);
  p.reps = 3;
  p.probe_ratio = 0;
  p.close_tol = 0;
  p.min_rounds = 2;
  p.max_rounds = 5;
  ck_assert_msg(spmvd_tuner_race(c, &fake_ops, &f, &p, &in, &d, &e) == 0,
                "%s", e.msg);
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_CSR_VECTOR);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  ck_assert_double_eq(d.time_us, 5);
  ck_assert_double_eq_tol(d.cost_spmv, 56.92, 1e-9);
  ck_assert_double_eq_tol(d.gflops, 2.0 * 5000 / 5e3, 1e-12);
  ck_assert_double_eq_tol(d.gbps,
                          spmvd_tuner_bytes(&m.p, &d.cfg, SPMV_F64) / 5e3,
                          1e-12);
  ck_assert_int_eq(d.ntrials, 6);
  ck_assert_int_eq(d.trials[0].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[0].rounds, 2);
  ck_assert_int_eq(d.trials[0].runs, 7);
  ck_assert_int_eq(d.trials[2].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[2].rounds, 1);
  ck_assert_double_eq(d.trials[2].time_us, 20);
  ck_assert_int_eq(d.trials[3].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[3].code, SPMV_ENOMEM);
  ck_assert_str_eq(d.trials[3].msg, "jad: no memory left");
  ck_assert_int_eq(d.trials[4].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[4].code, SPMV_EGPU);
  ck_assert_int_eq(d.trials[5].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[5].rounds, 5);
  ck_assert_double_eq(d.trials[5].time_us, 6.0);
  ck_assert_double_eq(d.trials[5].best_us, 6.0);
  ck_assert_int_eq(f.loads, 6);
  ck_assert_int_eq(f.unloads, 5);
  ck_assert_int_eq(f.progress, 6);
  ck_assert(!f.is_loaded);
  spmvd_decision_fini(&d);
  ck_assert_ptr_null(d.trials);
  mat_fini(&m);
  free(c);
}
END_TEST

/*
 * Defaults (the short race): the first warm-up run is timed and drops a
 * candidate beyond 1.8 x the leader; one round of 2 decides unless within
 * 5 % of the leader.
 *  scalar: warm-up 10, round 10 (no leader: clear): 3 runs, 30 us.
 *  vector: warm-up 5 (< 1.8 x 10), round 5 (50 % ahead): 3 runs, 15 us.
 *  coo: warm-up 20 > 1.8 x 5 + 0: dropped on it, 1 run, 20 us.
 *  jad: load fails; hyb: its warm-up fails (0 runs).
 *  ellr-t: warm-up 6.0, round 6.6 (32 % behind 5: clear): 3 runs,
 *    6 + 2 * 6.6 = 19.2 us; time 6.6.
 * Cost = (30 + 15 + 20 + 19.2) / 5 = 16.84 SpMV-equivalents.
 */
START_TEST(test_race)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_device_info gpu = device(1);
  struct spmvd_tune_input in;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;
  struct mat m;

  mat_init(&m, 1000, 5);
  in = input(&m, &gpu);
  memset(&f, 0, sizeof f);
  race_list(c);
  ck_assert_msg(spmvd_tuner_race(c, &fake_ops, &f, NULL, &in, &d, &e) == 0,
                "%s", e.msg);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  ck_assert_double_eq(d.time_us, 5);
  ck_assert_double_eq_tol(d.cost_spmv, 16.84, 1e-9);
  ck_assert_int_eq(d.trials[0].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[0].rounds, 1);
  ck_assert_int_eq(d.trials[0].runs, 3);
  ck_assert_int_eq(d.trials[1].runs, 3);
  ck_assert_double_eq(d.trials[0].probe_us, 10);
  ck_assert_int_eq(d.trials[2].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[2].rounds, 0);
  ck_assert_int_eq(d.trials[2].runs, 1);
  ck_assert_double_eq(d.trials[2].time_us, 20);
  ck_assert_double_eq(d.trials[2].probe_us, 20);
  ck_assert_int_eq(d.trials[3].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[4].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(d.trials[4].runs, 0);
  ck_assert_int_eq(d.trials[5].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[5].rounds, 1);
  ck_assert_int_eq(d.trials[5].runs, 3);
  ck_assert_double_eq(d.trials[5].time_us, 6.6);
  ck_assert_double_eq(d.trials[5].best_us, 6.6);  /* rounds only */
  ck_assert_int_eq(f.loads, 6);
  ck_assert_int_eq(f.unloads, 5);
  ck_assert(!f.is_loaded);
  spmvd_decision_fini(&d);
  /* With keep, each new leader is kept in place of being unloaded (csr-
   * scalar, then csr-vector), the others unloaded as before; what is kept
   * at the end is the same decision. */
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_keep_ops, &f, NULL, &in, &d, &e),
                   0);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  ck_assert_double_eq_tol(d.cost_spmv, 16.84, 1e-9);
  ck_assert_int_eq(f.loads, 6);
  ck_assert_int_eq(f.keeps, 2);
  ck_assert_int_eq(f.unloads, 3);
  ck_assert(!f.is_loaded && f.is_kept);
  ck_assert_mem_eq(&f.kept, &d.cfg, sizeof d.cfg);
  spmvd_decision_fini(&d);
  /* Close to the leader (within 5 %): rounds go on until stable.  csr-
   * vector 5 leads; ellr-t at 5.2 (4 %): warm-up 5.2, rounds 5.2, 5.2
   * (stable): 5 runs. */
  memset(&f, 0, sizeof f);
  f.ellr_close = 1;
  c->n = 2;
  c->cfg[0] = c->cfg[1];
  c->cfg[1].format = SPMV_FMT_ELLR_T;
  c->cfg[1].tpr = 2;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, &in, &d, &e), 0);
  ck_assert_int_eq(d.trials[1].rounds, 2);
  ck_assert_int_eq(d.trials[1].runs, 5);
  ck_assert_double_eq_tol(d.cost_spmv, (3 * 5 + 5 * 5.2) / 5, 1e-9);
  spmvd_decision_fini(&d);
  /* Two equal times: the earlier candidate keeps the lead (auto lists
   * the one it trusts more first). */
  memset(&f, 0, sizeof f);
  c->n = 2;
  c->cfg[0] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 512, 16, 0, 0 };
  c->cfg[1] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 128, 4, 0, 0 };
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, &in, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-vector bs=512 tpr=16");
  spmvd_decision_fini(&d);
  mat_fini(&m);
  free(c);
}
END_TEST

/* Races csr-vector (5 us, first) against sell answering sell[0..n) call by
 * call (the last repeats); the decision goes to d. */
static void race_vector_sell(const double *sell, int n, struct spmvd_decision *d)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct fake f;
  struct spmv_error e;
  int rc;

  ck_assert_ptr_nonnull(c);
  c->n = 2;
  c->cfg[0] = (struct spmv_config){ SPMV_FMT_CSR_VECTOR, 256, 4, 0, 0 };
  c->cfg[1] = (struct spmv_config){ SPMV_FMT_SELL, 256, 0, 32, 256 };
  memset(&f, 0, sizeof f);
  f.sell = sell;
  f.sell_n = n;
  rc = spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, d, &e);
  ck_assert_msg(rc == 0, "%s", e.msg);
  ck_assert(!f.is_loaded);
  free(c);
}

/*
 * A candidate that ran one round is compared on first rounds: csr-vector
 * leads at 5 us in one round; sell's warm-up 5.1, then rounds 5.2 (close:
 * more), 4.7 (unstable), 4.7 (stable), median 4.7, would win on its later
 * rounds, but its first round, 5.2, is behind 5.  With a first round of
 * 4.85 it is ahead and wins.
 */
START_TEST(test_race_first_rounds)
{
  static const double slow_first[] = {5.1, 5.2, 4.7, 4.7};
  static const double ahead[] = {5.0, 4.85, 4.85};
  struct spmvd_decision d;

  race_vector_sell(slow_first, 4, &d);
  ck_assert_int_eq(d.trials[0].rounds, 1);
  ck_assert_double_eq(d.trials[0].first_us, 5);
  ck_assert_int_eq(d.trials[1].rounds, 3);
  ck_assert_double_eq(d.trials[1].first_us, 5.2);
  ck_assert_double_eq(d.trials[1].time_us, 4.7);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  ck_assert_double_eq(d.time_us, 5);
  spmvd_decision_fini(&d);
  race_vector_sell(ahead, 3, &d);
  ck_assert_int_eq(d.trials[1].rounds, 2);
  ck_assert_str_eq(d.text, "sell bs=256 c=32 sigma=256");
  ck_assert_double_eq(d.time_us, 4.85);
  spmvd_decision_fini(&d);
}
END_TEST

/*
 * The probe's threshold, 1.8 x the leader: csr-vector leads at 5 us; sell's
 * warm-up run at 9.5 (1.9 x) drops it there, one run; at 8.5 (1.7 x) it
 * runs its round, 8.6 > 1.5 x 5, and is dropped after it, three runs.
 */
START_TEST(test_race_probe_ratio)
{
  static const double at_19[] = {9.5, 9.6}, at_17[] = {8.5, 8.6};
  struct spmvd_decision d;

  race_vector_sell(at_19, 2, &d);
  ck_assert_int_eq(d.trials[1].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[1].runs, 1);
  ck_assert_double_eq(d.trials[1].probe_us, 9.5);
  ck_assert_double_eq_tol(d.cost_spmv, (3 * 5 + 9.5) / 5, 1e-9);
  spmvd_decision_fini(&d);
  race_vector_sell(at_17, 2, &d);
  ck_assert_int_eq(d.trials[1].status, SPMVD_TRIAL_DROPPED);
  ck_assert_int_eq(d.trials[1].runs, 3);
  ck_assert_str_eq(d.text, "csr-vector bs=256 tpr=4");
  spmvd_decision_fini(&d);
}
END_TEST

START_TEST(test_race_no_drop_and_failures)
{
  struct spmvd_candidates *c = malloc(sizeof *c);
  struct spmvd_race_params p;
  struct spmvd_decision d;
  struct fake f;
  struct spmv_error e;

  /* drop_ratio 0 (bench): coo is timed to stability. */
  memset(&f, 0, sizeof f);
  race_list(c);
  spmvd_race_params_default(&p);
  p.drop_ratio = 0;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, &p, NULL, &d, &e), 0);
  ck_assert_int_eq(d.trials[2].status, SPMVD_TRIAL_OK);
  ck_assert_int_eq(d.trials[2].rounds, 2);
  ck_assert_double_eq(d.gflops, 0);
  spmvd_decision_fini(&d);
  /* Every candidate fails: the first failure is returned. */
  c->n = 1;
  c->cfg[0].format = SPMV_FMT_JAD;
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, &d, &e),
                   SPMV_ENOMEM);
  ck_assert_ptr_nonnull(strstr(e.msg, "every candidate failed"));
  ck_assert_int_eq(d.ntrials, 1);
  spmvd_decision_fini(&d);
  /* A sticky error stops the race at once. */
  race_list(c);
  memset(&f, 0, sizeof f);
  f.sticky = 1;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, &d, &e),
                   SPMV_EGPU_STICKY);
  ck_assert_int_eq(d.ntrials, 5);
  ck_assert_int_eq(f.loads, 5);
  ck_assert(!f.is_loaded);
  spmvd_decision_fini(&d);
  /* No candidates. */
  c->n = 0;
  ck_assert_int_eq(spmvd_tuner_race(c, &fake_ops, &f, NULL, NULL, &d, &e),
                   SPMV_EINVAL);
  spmvd_decision_fini(&d);
  free(c);
}
END_TEST

START_TEST(test_run_strategies)
{
  struct spmvd_device_info gpu = device(1), cpu = device(0);
  struct spmvd_tune_input in;
  struct spmvd_predictor pr;
  struct spmvd_decision d;
  struct spmv_config pick;
  struct fake f;
  struct spmv_error e;
  struct mat m;
  double want;

  /* Flat rows of 80 (ell_fill 1, scattered diagonals, 20000 rows): the
   * ELLR-T model's pick. */
  mat_init(&m, 20000, 80);
  m.p.dia_fill = 50;
  in = input(&m, &gpu);
  pick = model_pick(&m, &gpu);
  /* model without timing: the pick, no time, no cost. */
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(d.cfg.bs, pick.bs);
  ck_assert_int_eq(d.cfg.tpr, pick.tpr);
  ck_assert_int_eq(d.strategy, SPMVD_STRATEGY_MODEL);
  ck_assert_double_eq(d.time_us, 0);
  ck_assert_double_eq(d.cost_spmv, 0);
  ck_assert_int_eq(d.ntrials, 0);
  spmvd_decision_fini(&d);
  /* model with timing: one round of the pick (1 + 2 runs: cost 3). */
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, &fake_ops, &f,
                                   NULL, &d, &e), 0);
  ck_assert_int_eq(d.ntrials, 1);
  ck_assert_int_eq(d.trials[0].rounds, 1);
  ck_assert_double_eq(d.time_us, 6.0);
  ck_assert_double_eq(d.cost_spmv, 3);
  spmvd_decision_fini(&d);
  /* ... its one candidate kept, where the race's caller takes it. */
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, &fake_keep_ops,
                                   &f, NULL, &d, &e), 0);
  ck_assert_int_eq(f.keeps, 1);
  ck_assert_int_eq(f.unloads, 0);
  ck_assert_mem_eq(&f.kept, &d.cfg, sizeof d.cfg);
  spmvd_decision_fini(&d);
  /* A row of 10^6 would make the ELLR-T layout huge: never picked; flat
   * rows take hyb instead. */
  m.p.rl_max = 1000000;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "hyb bs=256 k=0");
  spmvd_decision_fini(&d);
  /* ... when its CSR bytes (19 MB) exceed the L2; within it csr-vector at
   * AUTOCSR's least TPR (80: 8), as csr16 (rows span < 2^16 columns). */
  gpu.l2_bytes = (uint64_t)60 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr16 bs=128 tpr=8");
  spmvd_decision_fini(&d);
  gpu.l2_bytes = 0;
  /* Irregular rows within the L2: csr-vector at AUTOCSR's middle TPR (80:
   * 8, 16, 32), as csr-vector in f64 (csr16 in f32); beyond it csr-stream16 (rows span < 2^16
   * columns) at BS 128, k 4 in f64; auto races it, csr-stream, ALG1 and
   * csr-vector (f64 beyond the L2 keeps csr-vector). */
  m.p.rl_max = 300;
  m.p.rl_cv = 0.6;
  m.p.ell_fill = 3.75;
  gpu.l2_bytes = (uint64_t)60 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-vector bs=128 tpr=16");
  spmvd_decision_fini(&d);
  in.dtype = SPMV_F32;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr16 bs=128 tpr=16");
  spmvd_decision_fini(&d);
  in.dtype = SPMV_F64;
  gpu.l2_bytes = (uint64_t)8 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-stream16 bs=128 k=4");
  spmvd_decision_fini(&d);
  {
    struct spmvd_candidates *c = malloc(sizeof *c);

    ck_assert(c != NULL);
    ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c,
                                            NULL), 0);
    ck_assert_int_eq(c->n, 4);
    ck_assert(has(c, SPMV_FMT_CSR_STREAM16, 128, 0, 4, 0));
    ck_assert(has(c, SPMV_FMT_CSR_STREAM, 128, 0, 4, 0));
    ck_assert(has(c, SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    ck_assert(has(c, SPMV_FMT_CSR_VECTOR, 128, 16, 0, 0)); /* not csr16 */
    /* f32: k 8, csr-vector as csr16. */
    in.dtype = SPMV_F32;
    ck_assert_int_eq(spmvd_tuner_candidates(SPMVD_STRATEGY_AUTO, &in, c,
                                            NULL), 0);
    ck_assert(has(c, SPMV_FMT_CSR_STREAM16, 128, 0, 8, 0));
    ck_assert(has(c, SPMV_FMT_CSR_STREAM, 128, 0, 8, 0));
    ck_assert(has(c, SPMV_FMT_CSR16, 128, 16, 0, 0));
    /* The model's pick in f32 too: csr-stream16, at k 8. */
    ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                     NULL, &d, &e), 0);
    ck_assert_str_eq(d.text, "csr-stream16 bs=128 k=8");
    spmvd_decision_fini(&d);
    in.dtype = SPMV_F64;
    free(c);
  }
  /* A power law: within the L2 csr-adaptive (rows of 80: base 0), beyond
   * it cuSPARSE ALG1. */
  m.p.rl_max = 100000;
  m.p.rl_cv = 20;
  gpu.l2_bytes = (uint64_t)60 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "csr-adaptive bs=256 maxtpr=0 base=0");
  spmvd_decision_fini(&d);
  gpu.l2_bytes = (uint64_t)8 << 20;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_MODEL, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_str_eq(d.text, "cusparse alg=1");
  spmvd_decision_fini(&d);
  gpu.l2_bytes = 0;
  mat_fini(&m);
  mat_init(&m, 5000, 10);
  in = input(&m, &gpu);
  /* predict without timing: the predicted time of csr-scalar: I0 = 5,
   * P0 = 10: (0.01*5 + 0.1)*10 + (1*5 + 2) = 8.5 us. */
  fake_predictor(&pr);
  in.pred = &pr;
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_PREDICT, &in, NULL, NULL,
                                   NULL, &d, &e), 0);
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_CSR_SCALAR);
  want = (0.01 * 5 + 0.1) * 10 + (1 * 5 + 2);
  ck_assert_double_eq_tol(d.time_us, want, 1e-12);
  ck_assert_double_eq_tol(d.gflops, 2.0 * 50000 / (want * 1e3), 1e-12);
  spmvd_decision_fini(&d);
  /* Racing strategies need callbacks. */
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_TRIAL, &in, NULL, NULL,
                                   NULL, &d, &e), SPMV_EINVAL);
  spmvd_decision_fini(&d);
  /* exhaustive on the cpu through the fake device. */
  in.dev = &cpu;
  in.pred = NULL;
  memset(&f, 0, sizeof f);
  ck_assert_int_eq(spmvd_tuner_run(SPMVD_STRATEGY_EXHAUSTIVE, &in, &fake_ops,
                                   &f, NULL, &d, &e), 0);
  ck_assert_int_eq(d.ntrials, 22);  /* 21 + dia (10 diagonals, fill 1) */
  ck_assert_int_eq(d.cfg.format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(d.cfg.tpr, 1);
  ck_assert_int_eq(d.strategy, SPMVD_STRATEGY_EXHAUSTIVE);
  spmvd_decision_fini(&d);
  mat_fini(&m);
}
END_TEST

/* The race suite. */
static Suite *tuner_race_suite(void)
{
  Suite *s = suite_create("tuner_race");
  TCase *tc = tcase_create("core");

  /* As check_tuner's (where an --enable-asan build under a parallel make
   * check took test_exclude_formats past check's default 4 s). */
  tcase_set_timeout(tc, 30);

  tcase_add_test(tc, test_race_cost_bound);
  tcase_add_test(tc, test_race_rounds);
  tcase_add_test(tc, test_race);
  tcase_add_test(tc, test_race_first_rounds);
  tcase_add_test(tc, test_race_probe_ratio);
  tcase_add_test(tc, test_race_no_drop_and_failures);
  tcase_add_test(tc, test_run_strategies);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(tuner_race_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
