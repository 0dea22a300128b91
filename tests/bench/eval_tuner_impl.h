/* eval_tuner_impl.h: what eval_tuner's files share: the strategies
 * evaluated, a matrix's and a calibration's records, the options, the
 * ground-truth table, the confirm passes' counts and the functions one file
 * calls in another; internal to eval_tuner.  (The comments' confirm() is
 * eval_tuner_confirm, in eval_tuner_confirm.c.) */
#ifndef EVAL_TUNER_IMPL_H
#define EVAL_TUNER_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eval_store.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "suite.h"

#define NSTRAT 4
#define MEAS_ROUNDS 3  /* worker loads of a format for the predictor */
/* Six loads more where the three read under MEAS_SMALL_US, and the
 * median of the nine.  There a load's runs move by a few percent as a
 * whole (graph replays), which a median of three carries into every
 * error. */
#define MEAS_ROUNDS_SMALL 9
#define MEAS_SMALL_US 20.0

/* The strategies evaluated, in the report's order (eval_tuner_live.c). */
extern const enum spmvd_strategy eval_tuner_strats[NSTRAT];

/* One strategy on one matrix. */
struct strat_res {
  int ok;           /* 0: not applicable or failed, see note */
  int failed;       /* 1: it ran and gave no usable pick */
  char pick[64];
  struct spmv_config cfg;  /* the pick */
  double pick_us;   /* the pick's ground-truth time */
  double match;     /* best_us / pick_us */
  double cost;      /* decision cost in SpMV-equivalents */
  int ncand;        /* candidates it timed */
  double wall_ms;   /* host time of spmvd_tuner_run (models and race; the
                       layouts were resident already) */
  char note[120];
  char race[1024];  /* its trials: "cfg=median status runs probe P;..." */
};

/* One matrix in one value type. */
struct mrec {
  char name[96];
  int set;
  char family[16];                 /* held-out entries: their family */
  int part;                        /* and their enum bench_heldout_part */
  enum spmv_dtype dt;
  int64_t rows, nnz;
  double cv;
  char best[64];
  double best_us;                  /* confirmed (see confirm()) */
  double raced_best_us;            /* as the exhaustive race timed it */
  /* The confirmed configurations timed again one product at a time
   * (confirm()): the best of them and each strategy's pick, 0 when not. */
  char single_best[64];
  double single_best_us, single_us[NSTRAT];
  /* The confirmed best's pass medians, least and most, over npass
   * passes (confirm()): the ground truth's timing noise. */
  double noise_lo_us, noise_hi_us;
  int noise_npass;
  double best_ellrt_us;            /* fastest ellr-t of the ground truth */
  int ncand;                       /* ground-truth candidates timed */
  double gt_cost;                  /* ground truth's cost, SpMV-equivalents */
  struct strat_res st[NSTRAT];
  double perr[SPMV_FMT_COUNT];     /* predictor error, NAN when none */
  double ppred[SPMV_FMT_COUNT], pmeas[SPMV_FMT_COUNT];
  double ppaper[SPMV_FMT_COUNT];   /* the paper's form alone (Wang, Gu and Li) */
  double pstore[SPMV_FMT_COUNT];   /* the ground-truth race's time */
  int hit_ok;
  struct eval_cache_hit hit;
  char hit_msg[120];
};

/* The calibration of one value type. */
struct calib_res {
  int done, nfit, npoints, nok;
  int loaded;                /* from --calib-db, not calibrated here */
  char from[160];            /* that cache's path */
  double seconds;
  int64_t total_nnz;
  struct spmvd_predictor pred;
  char msg[160];
};

struct opts {
  const char *mode, *dir, *only, *tsv, *replay, *gt_tsv, *probe;
  const char *calib_db;      /* the daemon's cache: its calibration */
  int sets, quick, dts;      /* dts: bit 1 f32, bit 2 f64 */
  int64_t heldout_nnz;       /* the held-out suite's size (0: its default) */
  int heldout_draw;          /* the held-out suite's draw (0: the suite's) */
  int part;                  /* enum bench_heldout_part: keep that part only */
  int list;                  /* --list: the suite's matrices, no evaluation */
  double budget;             /* seconds; 0 = none */
  double deadline;           /* seconds: report what is done and exit */
  int64_t calib_nnz;         /* 0: the daemon's default */
  int64_t max_nnz;           /* 0: no bound */
  int probe_idle_ms;         /* --probe: host sleep before each load */
  int probe_busy_ms;         /* --probe: host busy before each load */
  int probe_turns;           /* --probe: turns over the configurations */
  int probe_long;            /* --probe: more timings of 30 runs a load */
  const char *probe_pads;    /* --probe: pad sizes before each load */
};

/* The ground-truth table: the exhaustive decision's trials, grown by the
 * configurations timed later. */
struct gt {
  struct spmvd_trial *t;
  size_t n, cap;
};

/* The confirm passes' counts (eval_tuner_confirm.c says why). */
#define CONFIRM_TOP 6
#define CONFIRM_PASSES 12
#define CONFIRM_REPS 30
/* Warm-up runs before each timing.  (The evict-first matrix loads cannot
 * bring a layout of about the L2's size back into an L2 that other data
 * holds, so spmv_dev_time reads it in first.) */
#define CONFIRM_WARMUP 20
/* After each held timing, as many products timed one at a time, each in
 * its own hold: no queue of back-to-back runs behind it, as a client's
 * request runs in the worker (the held runs' queue reads small products
 * slower). */
#define CONFIRM_SINGLES CONFIRM_REPS

/* What the report needs; shared with the deadline watchdog under mu. */
struct run {
  struct opts o;
  struct eval_store *s;
  struct calib_res cr[3];
  struct mrec *recs;
  size_t nrec, skipped, cut;
  double t_start;
  char current[96];           /* matrix under way, "" between them */
  int printed;
  pthread_mutex_t mu;
};

/* eval_tuner_live.c: the evaluation on the device. */
size_t eval_tuner_gt_find(const struct gt *g, const struct spmv_config *cfg);
void eval_tuner_run_dtype(struct run *r, const struct bench_suite *suite, int dti,
                          FILE *tsv, FILE *gtf);

/* eval_tuner_confirm.c: the best few and the picks timed again. */
void eval_tuner_confirm(struct eval_store *s, struct gt *g, struct mrec *r);

/* eval_tuner_report.c: the markdown report and the TSV. */
double eval_tuner_gmean(double logsum, int n);
void eval_tuner_print_report(struct run *r, const char *stopped);
void eval_tuner_tsv_line(FILE *f, const struct mrec *r);

/* eval_tuner.c: the suite the options name (--suite, --quick, --only,
 * --heldout-nnz, --part). */
int eval_tuner_suite_init(const struct opts *o, struct bench_suite *s,
                          struct spmv_error *err);

/* eval_tuner_heldout.c: the report's held-out section. */
void eval_tuner_report_heldout(FILE *f, const struct mrec *r, size_t n,
                               enum spmv_dtype dt);

/* eval_tuner_replay.c: --replay, no device. */
int eval_tuner_replay_main(const struct opts *o, const char *files);

/* eval_tuner_probe.c: --probe. */
int eval_tuner_probe_main(const struct opts *o, struct eval_store *s,
                          const struct bench_suite *suite);

#endif
