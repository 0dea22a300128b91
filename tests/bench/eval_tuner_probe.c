/* eval_tuner_probe.c: eval_tuner --probe: listed configurations timed as
 * the race and as the confirm passes time them, in turns, to tell why the
 * two disagree. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "eval_store.h"
#include "eval_tuner_impl.h"
#include "suite.h"
#include "bench_clock.h"

/* Keeps the host's thread busy for ms milliseconds (no GPU work): a
 * tuner's profile and features, as --probe-busy stands for them. */
static void busy_host(int ms)
{
  double end = bench_now_s() + ms / 1e3;
  volatile double sink = 0;

  while (bench_now_s() < end)
    for (int i = 0; i < 1000; i++)
      sink += i;
}

/*
 * --probe: for each matrix and value type, --probe-turns turns (3) over
 * the listed configurations, each load after --probe-idle's sleep or
 * --probe-busy's busy host when given; each load is timed as auto's race
 * times it (a run alone, then rounds of 2 without warm-up), then 30
 * more runs without warm-up (as a client's products go on after the
 * race: no warm-up takes the matrix into the L2 again), as the
 * exhaustive race does (2 + 10) and as confirm() does
 * (CONFIRM_WARMUP + CONFIRM_REPS), then confirm()'s warm-ups with the
 * race's 10 runs and the race's warm-ups with confirm()'s runs (which of
 * the two its offset follows), the medians printed in that order.
 */
#define PROBE_MAX 8
#define PROBE_MAX_PADS 16
int eval_tuner_probe_main(const struct opts *o, struct eval_store *s,
                          const struct bench_suite *suite)
{
  static const int plan[][2] = { {0, 1}, {0, 2}, {0, 2}, {0, 2}, {0, 30}, {2, 10},
                                 {CONFIRM_WARMUP, CONFIRM_REPS},
                                 {CONFIRM_WARMUP, 10}, {2, CONFIRM_REPS} };
  struct spmv_config cfg[PROBE_MAX];
  struct spmv_error err;
  char buf[512], *tok, *save = NULL;
  long pads[PROBE_MAX_PADS] = { 0 };
  int n = 0, bad = 0, npads = 1;

  snprintf(buf, sizeof buf, "%s", o->probe);
  for (tok = strtok_r(buf, ";", &save); tok != NULL && n < PROBE_MAX;
       tok = strtok_r(NULL, ";", &save)) {
    spmv_error_clear(&err);
    if (spmv_config_parse(tok, &cfg[n], &err) < 0) {
      fprintf(stderr, "eval_tuner: --probe '%s': %s\n", tok, err.msg);
      return 1;
    }
    n++;
  }
  if (o->probe_pads != NULL) {
    snprintf(buf, sizeof buf, "%s", o->probe_pads);
    npads = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL && npads < PROBE_MAX_PADS;
         tok = strtok_r(NULL, ",", &save)) {
      char *end;
      pads[npads] = strtol(tok, &end, 10);
      if (*end != '\0' || pads[npads] < 0) {
        fprintf(stderr, "eval_tuner: --probe-pads '%s': a byte count\n", tok);
        return 1;
      }
      npads++;
    }
    if (npads == 0) {
      fprintf(stderr, "eval_tuner: --probe-pads '%s': no byte counts\n", o->probe_pads);
      return 1;
    }
  }
  printf("matrix\tdtype\tturn\tconfig%s\trace 0+1\t0+2\t0+2\t0+2\t0+30\t2+10\tconfirm %d+%d"
         "\t%d+10\t2+%d\n", o->probe_pads != NULL ? "\tpad" : "", CONFIRM_WARMUP,
         CONFIRM_REPS, CONFIRM_WARMUP, CONFIRM_REPS);
  for (size_t q = 0; q < suite->n; q++) {
    struct spmv_csr *A = bench_suite_make(&suite->e[q], o->dir, &err);
    if (A == NULL) {
      fprintf(stderr, "%s: %s\n", suite->e[q].name, err.msg);
      bad++;
      continue;
    }
    for (int dti = 2; dti >= 1; dti--) {
      enum spmv_dtype dt = dti == 2 ? SPMV_F64 : SPMV_F32;
      if (!(o->dts & dti))
        continue;
      spmv_error_clear(&err);
      if (eval_store_matrix(s, A, dt, &err) < 0) {
        fprintf(stderr, "%s: %s\n", suite->e[q].name, err.msg);
        bad++;
        continue;
      }
      for (int turn = 0; turn < o->probe_turns; turn++)
        for (int k = 0; k < n * npads; k++) {
          char name[96];
          spmv_config_format(&cfg[k / npads], name, sizeof name);
          printf("%s\t%s\t%d\t%s", suite->e[q].name, spmv_dtype_name(dt), turn, name);
          if (o->probe_pads != NULL) {
            printf("\t%ld", pads[k % npads]);
            spmv_error_clear(&err);
            if (eval_store_probe_pad(s, (size_t)pads[k % npads], &err) < 0) {
              printf("\t%s\n", err.msg);
              bad++;
              continue;
            }
          }
          if (o->probe_busy_ms > 0)
            busy_host(o->probe_busy_ms);
          if (o->probe_idle_ms > 0) {
            struct timespec ts = { o->probe_idle_ms / 1000,
                                   (long)(o->probe_idle_ms % 1000) * 1000000L };
            nanosleep(&ts, NULL);
          }
          spmv_error_clear(&err);
          if (eval_store_race_ops.load(s, &cfg[k / npads], &err) < 0) {
            printf("\t%s\n", err.msg);
            continue;
          }
          for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
            double us = NAN;
            if (eval_store_race_ops.time(s, plan[i][0], plan[i][1], &us, &err) < 0)
              bad++;
            printf("\t%.3f", us);
          }
          /* --probe-long: whether a layout keeps getting faster over
           * hundreds of runs (30 a timing, no warm-up). */
          for (int i = 0; i < o->probe_long; i++) {
            double us = NAN;
            if (eval_store_race_ops.time(s, 0, 30, &us, &err) < 0)
              bad++;
            printf("\t%.3f", us);
          }
          printf("\n");
          eval_store_race_ops.unload(s);
        }
    }
    spmv_csr_free(A);
  }
  return bad ? 1 : 0;
}
