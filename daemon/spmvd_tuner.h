/* spmvd_tuner.h: tuning strategies, candidate rules and the timed race. */
#ifndef SPMVD_TUNER_H
#define SPMVD_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmv_profile.h"
#include "spmvd_backend.h"
#include "spmvd_decision.h"
#include "spmvd_predict.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The tuner is pure logic: it never touches a device.  It proposes
 * candidate configurations from a matrix's profile, its row lengths and the
 * device's description, and decides among them either from the models
 * (spmvd_model.h, spmvd_predict.h) or by a race that times candidates
 * through callbacks the device worker implements with its backend's
 * load / time / unload.
 */


/* At most this many candidates in one list (exhaustive has about 100). */
#define SPMVD_MAX_CANDIDATES 256

/* A candidate list, caller's storage (no heap inside). */
struct spmvd_candidates {
  size_t n;
  struct spmv_config cfg[SPMVD_MAX_CANDIDATES];
};

struct spmvd_predictor; /* spmvd_predict.h */

/* What the tuner knows of a matrix and its device.  All pointers borrowed. */
struct spmvd_tune_input {
  const struct spmv_csr *A;              /* row_ptr and col_idx are read; val never */
  const struct spmv_profile *prof;       /* A's profile */
  enum spmv_dtype dtype;
  const struct spmvd_device_info *dev;   /* sms, warp size, limits, backend */
  const struct spmvd_predictor *pred;    /* NULL: not calibrated on this device */
  const struct spmv_config *exclude;     /* quarantined configurations to skip */
  size_t nexclude;
  uint32_t exclude_formats;  /* bit 1 << f: the operator's formats to skip
                                (spmvd.conf(5) exclude_formats) */
  int fits16;  /* ignored on input: spmvd_tuner_candidates finds once per
                  call whether every row of A spans at most
                  SPMV_SELL16_MAX_SPAN columns (an O(nnz) scan) */
  struct spmvd_pfeat feat; /* ignored on input: the predictor's features of
                              A, found once per call where pred is set */
};

/*
 * Fills out with the candidates of strategy s, most promising first, with
 * duplicates, excluded configurations and the excluded formats'
 * configurations removed (where sell16, csr16 or csr-stream16 is excluded,
 * the rules that would list it list sell, csr-vector or csr-stream):
 *  - exhaustive: every format x parameter grid: BS in {64,128,256,512};
 *    csr-vector TPR 2..32; ellr-t T 1..32; csr-adaptive base 0 and 2;
 *    csr-merge;
 *    csr-scalar; coo; jad; hyb (K from the histogram); sell C=32 with sigma
 *    1 and 256; csr-stream k 2, 4, 8; and where every row spans at most
 *    SPMV_SELL16_MAX_SPAN columns sell16 the same, csr16 TPR 1..32 and
 *    csr-stream16 k 2, 4, 8 (whose conversion fails where a block spans
 *    more); ell only when ell_fill <= 3; dia only when dia_fill <= 3 and
 *    ndiags <= 1024; csr-panel at BS 512 and 1024, TPR 1..8 and widths 4096 and
 *    16384 where x spans several panels holding 0.5 entries or more per
 *    row slot; cusparse ALG1 and ALG2, cuSPARSE's sliced ELL (alg=3)
 *    where its slots are at most 3 times nnz, its BSR (alg=4) where
 *    spmv_bsr_dim() finds blocks, and csr-panel only on the cuda
 *    backend.  No race lists alg=3 or alg=4: nothing measured yet says
 *    where they would win.
 *  - trial: AUTOCSR's three csr-vector TPR values from the mean row length
 *    (2,4,8 below 16; 4,8,16 from 16 to 32; 8,16,32 above 32) at BS 128,
 *    csr-adaptive, the ELLR-T model's pick (unless its layout would exceed
 *    3x the CSR bytes), the predictor's two best formats (when
 *    calibrated), cusparse ALG1 and ALG2 (cuda only), and dia when
 *    dia_fill <= 1.5.
 *  - auto: a short list (3 to 5) from the profile (spmvd_tuner_rules.c,
 *    shape_of: stencil, small, skewed, flat, regular, irregular), most likely
 *    winner first: dia on stencils; cusparse ALG2/ALG1, csr-adaptive,
 *    csr-merge on power laws (csr-stream for csr-merge beyond the L2);
 *    csr-vector at AUTOCSR's TPRs and BS 128 with sell C=32 on regular rows
 *    (and hyb on ELL-like rows; beyond the L2, on short ones, csr-stream16 in
 *    f64, on the others csr-stream16 second); csr-vector, csr-stream16 (in
 *    f64 where the rows fit one wave) and csr-adaptive on irregular ones, and
 *    beyond the L2 csr-stream16 and csr-stream first, then cusparse ALG1; a
 *    warp per row on small matrices.  On stencils, flat and regular rows that
 *    fit 16-bit offsets, csr16 and sell16 stand in for csr-vector/csr-scalar
 *    and sell.  tests/check_replay.sh replays these rules on measured
 *    tables.
 *  The predictor's csr-vector takes AUTOCSR's middle TPR, its ellr-t the
 *  model's pick.  The model needs a GPU: on the cpu, model fails with
 *  SPMV_EUNSUPPORTED and the other strategies go without it.
 *  - model: one configuration, no timing: the ELLR-T model's pick on flat
 *    long rows (where ELLR-T wins), never one whose layout would exceed 3x
 *    the CSR bytes; elsewhere the profile's choice (see model_choice).
 *    On the cuda backend, rows of 8 or more entries per panel of 16384
 *    columns, over an x of 4 or more panels, beyond the L2, where some row
 *    spans over SPMV_SELL16_MAX_SPAN columns, take csr-panel (BS 1024,
 *    w 16384) first, in auto and model alike.
 *  - predict: the predictor's best alone (SPMV_EINVAL "not calibrated"
 *    when in->pred is NULL).
 * On the cpu backend BS is 0 (ignored) and csr-vector is left out (its TPR
 * does not shape the CPU layout).  Returns 0 or a negative SPMV_E* code.
 */
int spmvd_tuner_candidates(enum spmvd_strategy s,
                           const struct spmvd_tune_input *in,
                           struct spmvd_candidates *out,
                           struct spmv_error *err);

/* AUTOCSR's three TPR values for a mean row length (Gropp & Guo). */
void spmvd_tuner_autocsr_tpr(double rl_mean, int tpr[3]);


/*
 * What the race needs from the device worker.  ctx is passed back
 * unchanged.  At most one candidate is loaded at a time: load, then one or
 * more time calls, then unload (also after a failed time).
 */
struct spmvd_race_ops {
  /* Converts the matrix to cfg's layout and makes it resident. */
  int (*load)(void *ctx, const struct spmv_config *cfg,
              struct spmv_error *err);
  /* Runs warmup untimed then reps timed products; *median_us = median. */
  int (*time)(void *ctx, int warmup, int reps, double *median_us,
              struct spmv_error *err);
  /* Releases what load made resident. */
  void (*unload)(void *ctx);
  /* Called after each candidate (done of total); may be NULL.  t borrowed. */
  void (*progress)(void *ctx, int done, int total,
                   const struct spmvd_trial *t);
  /* May be NULL.  Called in place of unload when the candidate just timed
   * leads the race: what load made resident is kept (releasing the one
   * kept before), so that the race's pick need not be built again; it is
   * the caller's after the race, which the caller must release. */
  void (*keep)(void *ctx);
};

/*
 * Knobs of the race.  A candidate costs its timed warm-up run (dropped
 * there when > probe_ratio x the leader), then one round of reps runs when
 * it is clearly (> close_tol) ahead of or behind the leader, more rounds
 * only when it is close; so a short list of 4-5 candidates costs about
 * 3 + 3 x (their time / the pick's) SpMV-equivalents (1 x for those
 * dropped on the warm-up run).  Within close_tol the pick may miss the
 * better one by at most close_tol, which is what the race trades for cost.
 */
struct spmvd_race_params {
  int warmup;          /* warm-up runs before a candidate's first round (1);
                          the first is timed when probe_ratio > 0 */
  int reps;            /* timed runs per round (2) */
  int min_rounds;      /* rounds before a median may be called stable or
                          clear (1) */
  int max_rounds;      /* rounds at most (3) */
  double stable_tol;   /* stable when two successive round medians differ
                          by at most this fraction (0.03) */
  double drop_ratio;   /* drop once best > drop_ratio x leader median (1.5);
                          0 = never drop and time every candidate to a
                          stable median (bench: probe and close unused) */
  double probe_ratio;  /* drop on the timed warm-up run when it exceeds
                          probe_ratio x the leader's median, plus the
                          leader's own first-run excess (1.8); 0 = no probe */
  double close_tol;    /* one round decides when the median is more than
                          this fraction away from the leader's (0.05);
                          0 = rounds until stable */
  double max_cost;     /* extra rounds only while the race's spent time,
                          the round and a first round for each candidate
                          still to come fit in this many SpMV-equivalents
                          of the leader; 0 = no bound (default; auto runs
                          with SPMVD_AUTO_MAX_COST) */
};

/* auto's bound on its race (issue 5: <= 20 SpMV-equivalents on first
 * sight), kept with a margin: the bound is reckoned in the leader's time
 * so far, and a faster pick later raises the cost it is divided into. */
#define SPMVD_AUTO_MAX_COST 17.0

/* Fills p with the defaults written above. */
void spmvd_race_params_default(struct spmvd_race_params *p);


/*
 * Races the candidates c through ops (ctx passed back): each after p->warmup
 * runs, in rounds of p->reps timed runs until its median is stable, dropped
 * early once clearly slower than the leader; a candidate whose load or time
 * fails is recorded as failed and skipped.  p may be NULL (defaults).  Two
 * candidates are compared on the median of their rounds, or on their first
 * rounds' medians when either ran only one.  Fills
 * out (initialised here; the caller finis it) with the fastest candidate,
 * every trial and the cost.  Returns 0, or SPMV_EINVAL when c is empty, or
 * the first failure's code when every candidate failed (out then still
 * holds the trials).  out->strategy is left for the caller to set.
 */
int spmvd_tuner_race(const struct spmvd_candidates *c,
                     const struct spmvd_race_ops *ops, void *ctx,
                     const struct spmvd_race_params *p,
                     const struct spmvd_tune_input *in,
                     struct spmvd_decision *out, struct spmv_error *err);

/*
 * Tunes: candidates of strategy s, then the race (trial, exhaustive, auto)
 * or the model's pick (model, predict).  For model and predict, ops may be
 * NULL: nothing is timed and time_us is the prediction (predict) or 0
 * (model); with ops, the pick alone is loaded and timed once (one round) so
 * that the decision carries a measured time.  ops must not be NULL for the
 * racing strategies.  Fills out (initialised here; the caller finis it).
 * Returns 0 or a negative SPMV_E* code with a message in err.
 */
int spmvd_tuner_run(enum spmvd_strategy s, const struct spmvd_tune_input *in,
                    const struct spmvd_race_ops *ops, void *ctx,
                    const struct spmvd_race_params *p,
                    struct spmvd_decision *out, struct spmv_error *err);

/*
 * Bytes one product moves under cfg for a matrix with profile prof and
 * values of type dt: matrix arrays (with the format's padding), x once per
 * entry-touching read counted once per column (a cache model: x and y read
 * or written once).  Used for GB/s.
 */
double spmvd_tuner_bytes(const struct spmv_profile *prof,
                         const struct spmv_config *cfg, enum spmv_dtype dt);

/* Fills d's gflops and gbps from d->time_us (0 when time_us is 0). */
void spmvd_decision_rates(struct spmvd_decision *d,
                          const struct spmv_profile *prof, enum spmv_dtype dt);

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_TUNER_H */
