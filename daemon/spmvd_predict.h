/* spmvd_predict.h: the statistical performance predictor (Wang, Gu & Li)
 * and its work model: fits, trees, predictions and their JSON.  The
 * calibration they are fitted from is spmvd_calib.h's, the features they
 * see spmvd_predict_feat.h's; both come with this header. */
#ifndef SPMVD_PREDICT_H
#define SPMVD_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmv_profile.h"
#include "spmvd_backend.h"
#include "spmvd_calib.h"
#include "spmvd_predict_feat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Wang, Gu and Li's model.  A strip is the rows one full wave of blocks processes:
 * S = n * max_threads_per_sm / (ws / 2) for csr-vector (a half-warp per
 * row), S = n * max_threads_per_sm for the formats with a thread per row.
 * A calibration matrix has R = S * I rows whose lengths follow a normal or
 * a uniform distribution of mean P.  Fits per format:
 *  - vector (csr-vector): T(P) = m*P + c at I = i_cal, E(I) = p*I + q at
 *    P = p_cal, t0 the mean measured time at (i_cal, p_cal); a matrix's
 *    time is T(P0) / t0 * E(I0);
 *  - saddle (every other calibrated format): T = f(I)*P + g(I) with
 *    f(I) = a*I + b and g(I) = c*I + d, by least squares;
 * where I0 = rows / S, a real number (the paper's ceil(rows / S) in 1..10
 * mispredicts matrices below one strip and far above ten on a large GPU:
 * spmvd_calib.c says more), and P0 = nnz / rows.
 */

/* The two forms of fit. */
enum spmvd_fit_kind {
  SPMVD_FIT_NONE = 0,    /* not calibrated */
  SPMVD_FIT_VECTOR = 1,
  SPMVD_FIT_SADDLE = 2
};

/*
 * Beyond the paper: the work model.  The paper's two numbers (rows, mean
 * row length) cannot see what decides most real matrices' times: the
 * longest row, which a thread per row waits for; the padding a format
 * steps through; how many 32-byte sectors of x the columns touch, along
 * the longest warp, per warp of rows and in all; how much of the device
 * the rows occupy (the more warps at once, the less of the L1 each
 * keeps); whether HYB's COO part runs at all.  The work model is linear
 * in such counts (struct spmvd_pfeat), T = sum_j wc[j] * phi_j, with
 * non-negative coefficients fitted by weighted least squares (relative
 * errors) over every calibration point of the format: the paper's grid
 * and the work part's shapes.
 *
 * One line rarely fits a kernel from a launch of a few rows to a pass
 * over gigabytes: a merge kernel adds a fix-up once its work spans more
 * than one block, a thread per row goes from waiting on its longest row
 * to streaming.  So the calibration grows a model tree of depth 3 at
 * most (depth 2 leaves some formats' regimes to one line): a node splits
 * its points by rows, rows + nnz, the longest row or the mean row length
 * at a power of two, where the two sides' lines cut the relative error
 * by 3 % or more and each keeps 100 points or more (about ten per
 * coefficient: fewer let a leaf's line swing wide); each leaf holds its
 * own line.
 */
#define SPMVD_WORK_TERMS 11
/* The work model's terms as spmvd_predict_work_basis computes them: a
 * stored fit names its basis and is read only when it is this one (a fit
 * of another basis was fitted on other terms, and predicts nothing
 * here). */
#define SPMVD_WORK_BASIS 16
#define SPMVD_TREE_NODES 15  /* depth 3: node i's children 2i+1, 2i+2 */
/*
 * Bootstrap trees a work fit keeps beside its tree.  A tree's splits and
 * the terms its leaves keep jump with a few points' noise, so that two
 * calibrations of one device whose points agree closely can predict a
 * matrix far apart; trees grown on resamples of the points, averaged
 * with the tree, hold still.  Eight do as well as more, better than
 * fewer, and keep the fits' JSON small.
 */
#define SPMVD_BAG_TREES 8

/* One work model tree: a matrix goes from node 0 to the left child where
 * its split[i] value is <= thr[i], else to the right, down to a leaf
 * (split NONE) whose coefficients wc[i] give its time; nodes below a leaf
 * are unused. */
struct spmvd_tree {
  int split[SPMVD_TREE_NODES];
  double thr[SPMVD_TREE_NODES];
  double wc[SPMVD_TREE_NODES][SPMVD_WORK_TERMS];
};

/* What a model tree node splits on (struct spmvd_fit). */
enum spmvd_split {
  SPMVD_SPLIT_NONE = 0,  /* a leaf */
  SPMVD_SPLIT_ROWS = 1,
  SPMVD_SPLIT_WORK = 2,  /* rows + nnz */
  SPMVD_SPLIT_RLMAX = 3,
  SPMVD_SPLIT_MEAN = 4,  /* nnz / rows */
  SPMVD_SPLIT_COUNT = 5
};

/* One format's fit. */
struct spmvd_fit {
  enum spmvd_fit_kind kind;
  struct spmv_config cfg;  /* the configuration that was timed */
  int64_t strip;           /* S in rows */
  double m, c;             /* vector: T(P) = m*P + c at I = i_cal */
  double p, q;             /* vector: E(I) = p*I + q at P = p_cal */
  double t0, i_cal, p_cal; /* vector: the calibration point of E */
  double a, b, gc, gd;     /* saddle: T = (a*I + b)*P + (gc*I + gd) */
  int npoints;             /* samples the fit used */
  double err_mean;         /* mean |fit - measured| / measured over them */
  /* The work model (spmvd_predict_work_basis): fitted when work_npoints
   * > 0 and then what predictions use, with the bootstrap trees below. */
  struct spmvd_tree tree;
  double l2_bytes;         /* the calibrated device's L2 (0: unknown) */
  double threads;          /* its resident threads, SMs x threads per SM
                              (0: unknown, the occupancy term off) */
  double sms;              /* its SMs (0: unknown, the block share off:
                              spmvd_predict_block_share) */
  int value_bytes;         /* the width of the values timed: 4 (f32) or
                              8 (f64); 0 unknown */
  int work_npoints;
  double work_err;         /* its mean relative error on its points */
  /* The bootstrap trees (SPMVD_BAG_TREES, fewer where a resample fitted
   * no tree): each grown as the tree above on as many points drawn at
   * random with replacement from its points; the time is then the mean of
   * the tree's and theirs but the least and the greatest. */
  int nbag;
  struct spmvd_tree bag[SPMVD_BAG_TREES];
};

/* A device's fits, indexed by format (kind NONE where not calibrated). */
struct spmvd_predictor {
  struct spmvd_fit fit[SPMV_FMT_COUNT];
};

/* The value a tree node of split s compares for features x. */
double spmvd_split_value(enum spmvd_split s, const struct spmvd_pfeat *x);

/* The name of split s ("rows", "work", "rl_max", "mean"; "leaf" for NONE)
 * and its inverse (0, or -1 when name is none of them). */
const char *spmvd_split_name(enum spmvd_split s);
int spmvd_split_parse(const char *name, enum spmvd_split *out);

/* The resident threads of dev (SMs x threads per SM) that a fit's
 * occupancy terms use (struct spmvd_fit's threads). */
double spmvd_predict_threads(const struct spmvd_device_info *dev);

/* The strip S of format f on device dev (rows), 0 when dev is unusable. */
int64_t spmvd_predict_strip(enum spmv_format f,
                            const struct spmvd_device_info *dev);

/*
 * Fits every format of the plan's timed points (plan borrowed) into out
 * (caller's storage, cleared first); strips from dev.  A format without
 * enough points (2 distinct I and 2 distinct P) stays uncalibrated.
 * Returns the number of formats fitted, or a negative code.
 */
int spmvd_predict_fit(const struct spmvd_calib_plan *plan,
                      const struct spmvd_device_info *dev,
                      struct spmvd_predictor *out, struct spmv_error *err);

/*
 * Least squares of the saddle T = (a*I + b)*P + (gc*I + gd) over n samples
 * (i[k], p[k], t[k]), all borrowed; fills f's a, b, gc, gd, npoints and
 * err_mean.  Returns 0 or SPMV_EINVAL when the samples do not determine
 * the four coefficients.
 */
int spmvd_predict_fit_saddle(const double *i, const double *p,
                             const double *t, size_t n, struct spmvd_fit *f,
                             struct spmv_error *err);

/*
 * The vector fit over n samples: T(P) by least squares over the samples at
 * I = i_cal, E(I) over those at P = p_cal, t0 their mean at (i_cal, p_cal).
 * Fills f's m, c, p, q, t0, i_cal, p_cal, npoints, err_mean.  Returns 0 or
 * SPMV_EINVAL when either line is undetermined.
 */
int spmvd_predict_fit_vector(const double *i, const double *p,
                             const double *t, size_t n, double i_cal,
                             double p_cal, struct spmvd_fit *f,
                             struct spmv_error *err);

/*
 * The work model's terms (SPMVD_WORK_BASIS) for configuration cfg at
 * features x, on a device of an L2 of l2_bytes and threads resident
 * threads (either 0 when unknown: the terms that need it are then 0).
 * "The share" is rows / threads, at most 1.
 *   0: 1.
 *   1: rows; for csr-scalar, ell, ellr-t, sell, hyb and csr-adaptive only
 *      the rows beyond one wave of threads.
 *   2: nnz.
 *   3: the padded entries: w_warp (csr-scalar, ellr-t), w_vec
 *      (csr-vector), w_ell, w_sell, w_hyb, w_stream (csr-stream,
 *      csr-stream16); 0 for the others.
 *   4: one thread's longest path: hyb_k for hyb, log2(1 + rl_max) for
 *      csr-adaptive, rl_max for the others.
 *   5: x's sectors (sectors_jad for jad); path_rounds for csr-stream and
 *      csr-stream16.
 *   6: hyb's COO part, 1 + 0.05 log2(1 + hyb_coo) where it has one;
 *      csr-stream's second kernel, 1 where a row is longer than a block's
 *      BS x k entries; csr-scalar's lanes past the L1, (1 - 0.32 / share)
 *      x (nnz - sectors) for a mean row of 32 or more where the share is
 *      over 0.32; ellr-t's longest row from DRAM, rl_max times the share
 *      of its padded layout (bytes x w_ell / nnz) beyond half the L2, and
 *      jad's, of its layout (bytes); 0 for the others.
 *   7: hyb_coo for hyb; the share times x_warp for csr-scalar, ell,
 *      ellr-t, sell and csr-adaptive; x_warp for csr-stream, csr-stream16
 *      and coo; x_warp_jad for jad; 0 for the others.
 *   8: x's sectors from DRAM, the sectors times (1 - l2_bytes / bytes)
 *      where the footprint outgrows the L2; for csr-scalar w_warp times
 *      the footprint's place on the L2's cliff (0 up to 0.65 of l2_bytes,
 *      1 from 0.85, linear between).
 *   9: the longest warp's sectors: path_x_jad for jad, path_m for
 *      csr-scalar, path_x for ell, ellr-t and sell, path_stream for
 *      csr-stream and csr-stream16, the share times x_warp for hyb; 0 for
 *      the others.
 *  10: the sectors times rows x lanes / threads, at most 1 (lanes:
 *      csr-vector's TPR, else 1); for csr-scalar rl_max times the
 *      footprint's place on the L2's cliff.
 */
void spmvd_predict_work_basis(const struct spmv_config *cfg, double l2_bytes,
                              double threads, const struct spmvd_pfeat *x,
                              double phi[SPMVD_WORK_TERMS]);

/*
 * The block share of a launch of cfg over rows on a device of sms SMs:
 * ceil(B / sms) x sms / B for its B = ceil(rows / cfg->bs) blocks, the
 * busiest SM's blocks against an even spread (1 where B is a multiple of
 * sms; 1 when sms, bs or rows is 0).  A csr-scalar fit over 4-byte values
 * multiplies the entries, warp work, sectors, L1 and x-per-warp terms of
 * spmvd_predict_work_basis by it (spmvd_predict_time does, and the fit),
 * or, where B <= sms (a block an SM) and the features hold w_block at
 * cfg's block size, by sms x w_block / w_warp: the heaviest block's
 * share, which this even one equals when the blocks are alike.
 */
double spmvd_predict_block_share(const struct spmv_config *cfg, double rows,
                                 double sms);

/*
 * The work model's tree over n samples (features x[k], times t[k],
 * borrowed), each leaf a non-negative weighted least squares, into f's
 * tree, and its SPMVD_BAG_TREES bootstrap trees into bag and
 * nbag (the resamples drawn by a fixed generator: the same samples give
 * the same fit), work_npoints and work_err, in basis SPMVD_WORK_BASIS, on
 * the device of f's l2_bytes, threads, sms and value_bytes (set by the
 * caller).  Returns
 * 0, SPMV_ENOMEM, or SPMV_EINVAL when the samples determine no model
 * (fewer than SPMVD_WORK_TERMS).
 */
int spmvd_predict_fit_work(const struct spmv_config *cfg,
                           const struct spmvd_pfeat *x,
                           const double *t, size_t n, struct spmvd_fit *f,
                           struct spmv_error *err);

/* Evaluates fit f at (I, P); returns microseconds (NAN when kind NONE). */
double spmvd_fit_eval(const struct spmvd_fit *f, double i, double p);

/*
 * Predicts the time (us) of fit f for a matrix of profile prof and
 * features feat: the work model where it is fitted and feat is not NULL,
 * else the paper's form at I0 = rows / S (real), P0 = nnz / rows.  NAN
 * when f is not calibrated; never below a small positive floor.
 */
double spmvd_predict_time(const struct spmvd_fit *f,
                          const struct spmv_profile *prof,
                          const struct spmvd_pfeat *feat);

/*
 * Whether pred predicts format f on a matrix of profile prof: f is fitted,
 * not dia, not ell past ell_fill 3 (the tuner never takes it there), and
 * the calibration times it on such a matrix (spmvd_calib_applies: not
 * ellr-t past SPMVD_CALIB_MAX_FILL, where its fit would extrapolate).
 */
int spmvd_predict_applies(const struct spmvd_predictor *pred,
                          enum spmv_format f, const struct spmv_profile *prof);

/*
 * Ranks the calibrated formats for prof by predicted time, fastest first:
 * writes at most max fits' configurations to cfgs and their times to us
 * (may be NULL), both caller's storage; returns how many.  Formats that
 * spmvd_predict_applies() refuses are left out.
 */
int spmvd_predict_rank(const struct spmvd_predictor *pred,
                       const struct spmv_profile *prof,
                       const struct spmvd_pfeat *feat,
                       struct spmv_config *cfgs, double *us, int max);

/* The fits as JSON {"csr-vector": {...}, ...}: a new reference or NULL. */
json_t *spmvd_predict_to_json(const struct spmvd_predictor *pred);

/*
 * Reads spmvd_predict_to_json()'s output (borrowed) into out; returns 0 or
 * SPMV_EINVAL naming the bad format or field, out then cleared (no
 * calibration).  Every field is required.  A fit of another basis than
 * SPMVD_WORK_BASIS, or of none, is refused so: "calibration fit of
 * csr-scalar, basis 12, is from an older spmvd; run `spmvctl calibrate`".
 */
int spmvd_predict_from_json(json_t *doc, struct spmvd_predictor *out,
                            struct spmv_error *err);

/*
 * The predictions for a matrix as JSON for `spmvctl predict`: a new
 * reference to {rows, nnz, p0, predictions:[{format, config, kind, strip,
 * i0, time_us, err_mean}] fastest first}, or NULL when out of memory.
 * Formats that do not apply (see spmvd_predict_rank()) are left out.
 */
json_t *spmvd_predict_report_json(const struct spmvd_predictor *pred,
                                  const struct spmv_profile *prof,
                                  const struct spmvd_pfeat *feat);

struct spmvd_cache; /* spmvd_cache.h */

/* Stores every calibrated fit of pred in the cache under dev's keys. */
int spmvd_predict_save(struct spmvd_cache *c,
                       const struct spmvd_device_info *dev,
                       enum spmv_dtype dt, const struct spmvd_predictor *pred,
                       struct spmv_error *err);

/* Loads dev's fits: returns 1 and fills out, 0 when the device was never
 * calibrated, or a negative code (spmvd_predict_from_json's refusals, the
 * calibration to run named for dt), out then cleared. */
int spmvd_predict_load(struct spmvd_cache *c,
                       const struct spmvd_device_info *dev,
                       enum spmv_dtype dt, struct spmvd_predictor *out,
                       struct spmv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_PREDICT_H */
