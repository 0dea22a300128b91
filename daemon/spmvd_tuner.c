/* spmvd_tuner.c: tuning strategies, candidate rules and the timed race. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_stats.h"
#include "spmvd_model.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"

static const char *const strategy_names[SPMVD_STRATEGY_COUNT] = {
  [SPMVD_STRATEGY_AUTO] = "auto",
  [SPMVD_STRATEGY_MODEL] = "model",
  [SPMVD_STRATEGY_PREDICT] = "predict",
  [SPMVD_STRATEGY_TRIAL] = "trial",
  [SPMVD_STRATEGY_EXHAUSTIVE] = "exhaustive",
};

static const char *const status_names[] = { "ok", "dropped", "failed" };

/* Block sizes of the exhaustive grid. */
static const int bs_grid[] = { 64, 128, 256, 512 };
#define NBS (int)(sizeof bs_grid / sizeof bs_grid[0])

/* Fill bounds beyond which ELL and DIA are not worth a candidate. */
#define MAX_ELL_FILL 3.0
#define MAX_DIA_FILL 3.0
#define MAX_DIAGS 1024

/* Returns the name of strategy s, or NULL. */
const char *spmvd_strategy_name(enum spmvd_strategy s)
{
  if ((int)s < 0 || s >= SPMVD_STRATEGY_COUNT)
    return NULL;
  return strategy_names[s];
}

/* Parses a strategy name. */
int spmvd_strategy_parse(const char *name, enum spmvd_strategy *out,
                         struct spmv_error *err)
{
  int s;

  for (s = 0; name != NULL && s < SPMVD_STRATEGY_COUNT; s++) {
    if (strcmp(name, strategy_names[s]) == 0) {
      *out = (enum spmvd_strategy)s;
      return 0;
    }
  }
  return spmv_error_set(err, SPMV_EINVAL,
                        "unknown strategy \"%s\": expected auto, model, "
                        "predict, trial or exhaustive",
                        name != NULL ? name : "(null)");
}

/* Returns the name of a trial status, or NULL. */
const char *spmvd_trial_status_name(enum spmvd_trial_status s)
{
  if ((int)s < 0 || s > SPMVD_TRIAL_FAILED)
    return NULL;
  return status_names[s];
}

/* Parses a trial status name. */
int spmvd_trial_status_parse(const char *name, enum spmvd_trial_status *out)
{
  int s;

  for (s = 0; name != NULL && s <= SPMVD_TRIAL_FAILED; s++) {
    if (strcmp(name, status_names[s]) == 0) {
      *out = (enum spmvd_trial_status)s;
      return 0;
    }
  }
  return SPMV_EINVAL;
}

/* AUTOCSR's three TPR values from the mean row length. */
void spmvd_tuner_autocsr_tpr(double rl_mean, int tpr[3])
{
  int base = rl_mean < 16 ? 2 : rl_mean <= 32 ? 4 : 8;

  tpr[0] = base;
  tpr[1] = base * 2;
  tpr[2] = base * 4;
}

/* Whether the device is a CPU (no warps: BS and csr-vector's TPR do not
 * shape its layouts). */
static int is_cpu(const struct spmvd_device_info *dev)
{
  return strcmp(dev->backend, "cuda") != 0 || dev->warp_size < 2;
}

/* Whether the operator excluded format f (spmvd.conf exclude_formats). */
static int format_excluded(const struct spmvd_tune_input *in,
                           enum spmv_format f)
{
  return (in->exclude_formats & (1u << f)) != 0;
}

/* Whether c is quarantined or of a format the operator excluded. */
static int excluded(const struct spmvd_tune_input *in,
                    const struct spmv_config *c)
{
  size_t k;

  if (format_excluded(in, c->format))
    return 1;
  for (k = 0; k < in->nexclude; k++)
    if (spmv_config_equal(c, &in->exclude[k]))
      return 1;
  return 0;
}

/* Appends a candidate unless excluded or already listed; on the cpu the
 * configuration is normalised first. */
static void add(struct spmvd_candidates *out,
                const struct spmvd_tune_input *in, struct spmv_config cfg)
{
  size_t k;

  if (is_cpu(in->dev)) {
    /* cuSPARSE is the GPU's; csr-panel's point is the GPU's shared memory. */
    if (cfg.format == SPMV_FMT_CUSPARSE || cfg.format == SPMV_FMT_CSR_PANEL)
      return;
    cfg.bs = 0;
    if (cfg.format == SPMV_FMT_CSR_VECTOR) {
      cfg.format = SPMV_FMT_CSR_SCALAR;
      cfg.tpr = 0;
    }
    if (cfg.format == SPMV_FMT_CSR16)
      cfg.tpr = 0;
    if (cfg.format == SPMV_FMT_CSR_STREAM ||
        cfg.format == SPMV_FMT_CSR_STREAM16)
      cfg.param = 0;  /* k shapes only the GPU's blocks */
  }
  if (excluded(in, &cfg))
    return;
  for (k = 0; k < out->n; k++)
    if (spmv_config_equal(&cfg, &out->cfg[k]))
      return;
  if (out->n < SPMVD_MAX_CANDIDATES)
    out->cfg[out->n++] = cfg;
}

/* Builds a configuration. */
static struct spmv_config mk(enum spmv_format f, int bs, int tpr, int param,
                             int param2)
{
  struct spmv_config c;

  c.format = f;
  c.bs = bs;
  c.tpr = tpr;
  c.param = param;
  c.param2 = param2;
  return c;
}

/* The ELLR-T model's ranking for the input (up to max); 0 when the device
 * is no GPU; negative on failure. */
static int model_ranked(const struct spmvd_tune_input *in,
                        struct spmv_config *cfgs, int max,
                        struct spmv_error *err)
{
  struct spmvd_model_gpu g;
  struct spmvd_model_grid *grid;
  int n;

  spmvd_model_gpu_from_device(&g, in->dev);
  if (is_cpu(in->dev) || spmvd_model_gpu_check(&g, NULL) != 0)
    return 0;
  grid = malloc(sizeof *grid);
  if (grid == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "tuner: out of memory");
  n = spmvd_model_grid_compute(in->A, &g, grid, err);
  if (n == 0)
    n = spmvd_model_ranked(grid, cfgs, max);
  free(grid);
  return n;
}

/* The predictor's best formats as concrete configurations: csr-vector
 * takes AUTOCSR's middle TPR, ellr-t the model's pick (mpick, may be
 * NULL).  Returns how many (0 when not calibrated). */
static int predicted(const struct spmvd_tune_input *in,
                     const struct spmv_config *mpick, struct spmv_config *cfgs,
                     int max)
{
  int tpr[3], n, k, j;

  if (in->pred == NULL)
    return 0;
  n = spmvd_predict_rank(in->pred, in->prof, &in->feat, cfgs, NULL, max);
  spmvd_tuner_autocsr_tpr(in->prof->rl_mean, tpr);
  for (k = j = 0; k < n; k++) {
    /* The best formats the operator allows. */
    if (format_excluded(in, cfgs[k].format))
      continue;
    cfgs[j] = cfgs[k];
    if (cfgs[j].format == SPMV_FMT_CSR_VECTOR)
      cfgs[j].tpr = tpr[1];
    else if (cfgs[j].format == SPMV_FMT_ELLR_T && mpick != NULL)
      cfgs[j] = *mpick;
    j++;
  }
  return j;
}

/* Whether every row spans few enough columns for sell16's 16-bit offsets
 * (found once per spmvd_tuner_candidates call). */
static int sell16_fits(const struct spmvd_tune_input *in)
{
  return in->fits16;
}

/* SELL-C-sigma at C 32: sell16 where it fits (2 bytes less per entry,
 * else the same layout), sell otherwise. */
static struct spmv_config sell_for(const struct spmvd_tune_input *in,
                                   int bs, int sigma)
{
  /* The 32-bit twin where the operator excluded the 16-bit one. */
  int s16 = sell16_fits(in) && !format_excluded(in, SPMV_FMT_SELL16);

  return mk(s16 ? SPMV_FMT_SELL16 : SPMV_FMT_SELL, bs, 0, 32, sigma);
}

/* csr-panel's panels of w columns for the profile: how many, and their
 * mean entries per row slot (the layout refuses under 1 /
 * SPMV_PANEL_MAX_SLOTS_PER_ENTRY). */
static int64_t panel_count(const struct spmv_profile *p, int w)
{
  return spmv_panel_count(p->cols, w);
}

static double panel_density(const struct spmv_profile *p, int w)
{
  double slots = (double)panel_count(p, w) * (double)p->rows;

  return slots > 0 ? (double)p->nnz / slots : 0;
}

/* csr-panel's width in the shortlists: the widest of the exhaustive grid. */
#define PANEL_WIDTH 16384
/* Mean entries per row slot from which a panel's run of a row keeps the
 * loads of a lane in flight (denserows_20k_x2000: 16). */
#define PANEL_MIN_DENSITY 8.0
/* Panels x must span at least: below, x is a few hundred KB at most and
 * the L1 and L2 hold it. */
#define PANEL_MIN_COUNT 4

/* Every format x parameter grid. */
static void exhaustive(const struct spmvd_tune_input *in,
                       struct spmvd_candidates *out)
{
  const struct spmv_profile *p = in->prof;
  int b, t, bs, w, narrow = sell16_fits(in);

  for (b = 0; b < NBS; b++) {
    bs = bs_grid[b];
    add(out, in, mk(SPMV_FMT_CSR_SCALAR, bs, 0, 0, 0));
    for (t = 2; t <= 32; t *= 2)
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, bs, t, 0, 0));
    add(out, in, mk(SPMV_FMT_CSR_ADAPTIVE, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_CSR_MERGE, bs, 0, 0, 0));
    for (t = 2; t <= 8; t *= 2)
      add(out, in, mk(SPMV_FMT_CSR_STREAM, bs, 0, t, 0));
    for (t = 1; t <= 32; t *= 2)
      add(out, in, mk(SPMV_FMT_ELLR_T, bs, t, 0, 0));
    if (p->nnz > 0 && p->ell_fill <= MAX_ELL_FILL)
      add(out, in, mk(SPMV_FMT_ELL, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_COO, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_HYB, bs, 0, 0, 0));
    if (p->nnz > 0 && p->dia_fill <= MAX_DIA_FILL && p->ndiags <= MAX_DIAGS)
      add(out, in, mk(SPMV_FMT_DIA, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_JAD, bs, 0, 0, 0));
    add(out, in, mk(SPMV_FMT_SELL, bs, 0, 32, 1));
    add(out, in, mk(SPMV_FMT_SELL, bs, 0, 32, 256));
    if (narrow) {
      add(out, in, mk(SPMV_FMT_SELL16, bs, 0, 32, 1));
      add(out, in, mk(SPMV_FMT_SELL16, bs, 0, 32, 256));
      for (t = 1; t <= 32; t *= 2)
        add(out, in, mk(SPMV_FMT_CSR16, bs, t, 0, 0));
      /* Its blocks may still span too many columns: then the trial fails
       * on conversion. */
      for (t = 2; t <= 8; t *= 2)
        add(out, in, mk(SPMV_FMT_CSR_STREAM16, bs, 0, t, 0));
    }
  }
  /* csr-panel where x spans several panels that its layout takes, at BS
   * 512 and 1024 (512 led 256 at every TPR and width on
   * denserows_20k_x2000, H200; 1024 led 512 at w 16384, where a panel's
   * shared memory leaves an SM few blocks), panels of 4096 and 16384
   * columns (panels of 1024 ran 2-3x slower). */
  for (w = 4096; w <= 16384; w *= 4)
    if (panel_count(p, w) > 1 &&
        panel_density(p, w) >= 1.0 / SPMV_PANEL_MAX_SLOTS_PER_ENTRY)
      for (t = 1; t <= 8; t *= 2) {
        add(out, in, mk(SPMV_FMT_CSR_PANEL, 512, t, w, 0));
        add(out, in, mk(SPMV_FMT_CSR_PANEL, 1024, t, w, 0));
      }
  add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
  add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 2, 0));
}

/*
 * The shape of a matrix as the shortlist sees it (thresholds from the H200
 * tables of tests/bench/results, replayed by eval_tuner --replay).
 */
enum shape {
  SHAPE_STENCIL,   /* few dense diagonals (dia_fill <= 1.2): dia wins ~1.6x */
  SHAPE_SMALL,     /* a warp per row fits one wave: latency-bound */
  SHAPE_SKEWED,    /* rl_max > 16 x rl_mean and rl_cv > 1.5: power law */
  SHAPE_FLAT,      /* rl_cv <= 0.3 and ell_fill <= 1.2: ELL-like rows */
  SHAPE_REGULAR,   /* rl_cv <= 0.3 */
  SHAPE_IRREGULAR  /* mid-length rows of varied length */
};

#define STENCIL_DIA_FILL 1.2
#define SKEW_MAX_OVER_MEAN 16.0
#define SKEW_CV 1.5
#define REGULAR_CV 0.3
#define FLAT_ELL_FILL 1.2

/* Classifies a matrix on a GPU. */
static enum shape shape_of(const struct spmv_profile *p,
                           const struct spmvd_device_info *dev)
{
  int small = (double)p->rows * dev->warp_size <=
              (double)dev->sms * dev->max_threads_per_sm;

  if (p->nnz > 0 && p->dia_fill <= STENCIL_DIA_FILL &&
      p->ndiags <= MAX_DIAGS && !small)
    return SHAPE_STENCIL;
  if (small)
    return SHAPE_SMALL;
  if ((double)p->rl_max > SKEW_MAX_OVER_MEAN * p->rl_mean &&
      p->rl_cv > SKEW_CV)
    return SHAPE_SKEWED;
  if (p->rl_cv <= REGULAR_CV && p->ell_fill <= FLAT_ELL_FILL)
    return SHAPE_FLAT;
  if (p->rl_cv <= REGULAR_CV)
    return SHAPE_REGULAR;
  return SHAPE_IRREGULAR;
}

/*
 * csr-stream at BS 128 with k 4 (f64) or 8 (f32), over 16-bit offsets
 * when narrow: the best of its grid on the irregular and skewed matrices
 * of the H200 large suite (tests/bench/results/bench_spmv_h200_v3.md).
 */
static struct spmv_config stream_for(const struct spmvd_tune_input *in,
                                     int narrow)
{
  /* The 32-bit twin where the operator excluded the 16-bit one. */
  if (format_excluded(in, SPMV_FMT_CSR_STREAM16))
    narrow = 0;
  return mk(narrow ? SPMV_FMT_CSR_STREAM16 : SPMV_FMT_CSR_STREAM, 128, 0,
            in->dtype == SPMV_F32 ? 8 : 4, 0);
}

/* csr-adaptive at its default max TPR and base length base.  (Bins up to
 * BS threads ran 4 % slower in geometric mean over the 13 matrices of the
 * H200's v6 ground truths timing both at BS 256, 12 % on mac_econ f32:
 * their long rows go to chunks sooner.) */
static struct spmv_config adaptive(int bs, int base)
{
  return mk(SPMV_FMT_CSR_ADAPTIVE, bs, 0, base, 0);
}

/*
 * The ELLR-T layout's bytes for a configuration: its arrays hold rows x
 * rl_max entries (padded per row to the T threads), so a long row makes it
 * huge (powerlaw_1M: 12 TB).
 */
static double ellr_bytes(const struct spmv_profile *p, enum spmv_dtype dt)
{
  return (double)p->rows * (double)p->rl_max *
         ((double)spmv_dtype_size(dt) + 4);
}

/* The most an ELLR-T layout may store over the CSR bytes in model's pick. */
#define MODEL_MAX_ELLR_OVER_CSR 3.0

/* Whether the CSR bytes of one product exceed times x the device's L2
 * (an L2 of unknown size counts as exceeded): the bandwidth regime. */
static int beyond_l2_by(const struct spmvd_tune_input *in, double times)
{
  struct spmv_config csr = mk(SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0);

  return spmvd_tuner_bytes(in->prof, &csr, in->dtype) >
         times * (double)in->dev->l2_bytes;
}

static int beyond_l2(const struct spmvd_tune_input *in)
{
  return beyond_l2_by(in, 1);
}

/* Where rows fit 16-bit offsets, csr-vector and csr-scalar become csr16
 * at the same TPR (1 for scalar): the same kernel moving 2 bytes less per
 * entry (H200, tests/bench/results: 0-34 % faster on the large suite's
 * stencils, flat and regular rows).  In f64 only those shapes: beyond the
 * L2 csr16 ran 3-6 % slower on irregular rows (cop20k_A_x16,
 * maceconlike_x16; bench_spmv_h200_v4), and within it every f64 miss of
 * auto in eval-h200-v7 was a csr16 pick that confirm() timed 5-7 %
 * behind csr-vector at the same BS and TPR (G51, bcsstk13, bcsstk16,
 * crack, jagmesh7, karate).  In f32 csr16 led or tied there.  Kernels v6
 * load the next columns ahead in csr-vector from TPR 16 and in csr16 only
 * at TPR 32, so in f64 csr-vector at TPR 16 stays: within the L2 it then
 * led csr16 by 5-11 % on cant, consph and shipsec1 (eval-h200-v12-f64).
 * Drops what the rewrite makes excluded or duplicate. */
static void narrow_csr(const struct spmvd_tune_input *in,
                       struct spmvd_candidates *out)
{
  enum shape sh = shape_of(in->prof, in->dev);
  int flat = sh == SHAPE_REGULAR || sh == SHAPE_FLAT || sh == SHAPE_STENCIL;
  struct spmv_config c;
  size_t k, j, n = 0;
  int keep;

  /* Nor on small matrices in f32: over five H200 evaluations (eval-h200-v29
   * to v32, kernels v10) csr-vector was the best of 112 of their 225
   * small f32 cases and csr16 of 29, and auto's csr16 picks confirmed at
   * 98.4 % of a best csr-vector in mean; bcsstk13 fell under 97 % in all
   * five. */
  if (is_cpu(in->dev) || !sell16_fits(in) ||
      format_excluded(in, SPMV_FMT_CSR16) ||
      (!flat && (in->dtype == SPMV_F64 || sh == SHAPE_SMALL)))
    return;
  for (k = 0; k < out->n; k++) {
    c = out->cfg[k];
    if ((c.format == SPMV_FMT_CSR_VECTOR &&
         !(in->dtype == SPMV_F64 && c.tpr == 16)) ||
        c.format == SPMV_FMT_CSR_SCALAR) {
      c.tpr = c.format == SPMV_FMT_CSR_SCALAR ? 1 : c.tpr;
      c.format = SPMV_FMT_CSR16;
    }
    keep = !excluded(in, &c);
    for (j = 0; j < n && keep; j++)
      keep = !spmv_config_equal(&c, &out->cfg[j]);
    if (keep)
      out->cfg[n++] = c;
  }
  out->n = n;
}

/* Regular rows switch to sell later than the others: on the H200 csr-vector
 * still wins at 2.3x the L2 (pwtk, 140 MB), sell from 12x (shipsec1_x8). */
#define REGULAR_SELL_L2_TIMES 4.0

/* Whether ELLR-T's layout stays within MODEL_MAX_ELLR_OVER_CSR x the CSR
 * bytes. */
static int ellr_within_bound(const struct spmvd_tune_input *in)
{
  struct spmv_config csr = mk(SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0);

  return ellr_bytes(in->prof, in->dtype) <=
         MODEL_MAX_ELLR_OVER_CSR * spmvd_tuner_bytes(in->prof, &csr, in->dtype);
}

/* Whether ELLR-T pays: flat long rows (ell_fill <= 1.2, rl_mean >= 64: no
 * padding, T threads share a row) and a layout within 3x the CSR bytes. */
static int ellr_pays(const struct spmvd_tune_input *in)
{
  return shape_of(in->prof, in->dev) == SHAPE_FLAT &&
         in->prof->rl_mean >= 64 && ellr_within_bound(in);
}

/* The ELLR-T model's pick when ELLR-T pays; returns 0 when there is none. */
static int model_ellr_pick(const struct spmvd_tune_input *in,
                           struct spmv_config *out)
{
  struct spmv_config ranked[SPMVD_MODEL_MAX_T];
  struct spmv_error e;

  if (!ellr_pays(in))
    return 0;
  spmv_error_clear(&e);
  if (model_ranked(in, ranked, SPMVD_MODEL_MAX_T, &e) <= 0)
    return 0;
  *out = ranked[0];
  return 1;
}

/* The least power of two >= v, clamped to [lo, hi]. */
static int pow2_at_least(double v, int lo, int hi)
{
  int p = lo;

  while (p < hi && p < v)
    p *= 2;
  return p;
}

/*
 * Whether csr-panel is likely the best, and its configuration: long rows
 * over an x many panels wide, in the bandwidth regime, where a GPU reads a
 * 32-byte L2 sector of x per entry otherwise (denserows_20k_x2000 on the
 * H200: 124 us in f32 against ellr-t's 230 and cuSPARSE's 293).  Not
 * where every row spans under 2^16 columns: there neighbouring rows share
 * x's lines in the caches and csr16 led csr-panel 2-5x (wbp256_x2, 8
 * panels of 60 entries a row).  BS 1024 and TPR the largest power of two
 * that leaves a lane four entries of a slot: on denserows 4 in both types
 * (at BS 1024 107.5 us in f32 and 184.9 in f64 against 112.2 and 239.7 at
 * BS 512, timed as the race does).
 */
static int panel_pick(const struct spmvd_tune_input *in, struct spmv_config *out)
{
  const struct spmv_profile *p = in->prof;
  double d = panel_density(p, PANEL_WIDTH);
  int t;

  if (is_cpu(in->dev) || sell16_fits(in) ||
      panel_count(p, PANEL_WIDTH) < PANEL_MIN_COUNT ||
      d < PANEL_MIN_DENSITY || !beyond_l2(in))
    return 0;
  d /= 4;
  t = pow2_at_least(d, 1, 32);
  *out = mk(SPMV_FMT_CSR_PANEL, 1024, t > d && t > 1 ? t / 2 : t,
            PANEL_WIDTH, 0);
  return 1;
}

/* csr-vector's TPR for rows of 32-100 entries: an eighth of the row,
 * rounded up to a power of two; 0 outside that range. */
static int eighth_tpr(const struct spmv_profile *p)
{
  return p->rl_mean >= 32 && p->rl_mean < 100
             ? pow2_at_least(p->rl_mean, 2, 256) / 8
             : 0;
}

/* The most threads per row (a power of two <= 32) with which every row
 * runs in one wave of the device; 0 when not even one thread per row. */
static int wave_tpr(const struct spmv_profile *p,
                    const struct spmvd_device_info *dev)
{
  double cap = (double)dev->sms * dev->max_threads_per_sm;
  int t = 0;

  while (t < 32 && (double)p->rows * (t ? 2 * t : 1) <= cap)
    t = t ? 2 * t : 1;
  return t;
}

/* A small matrix with a few long rows: csr-adaptive splits them. */
static int small_skewed(const struct spmv_profile *p)
{
  return p->rl_cv > 2 && p->rl_max >= 256;
}

/*
 * The TPR of regular rows outside eighth_tpr's range: AUTOCSR's largest;
 * but in f32 for rows of 100 or more, where a lane's step loads half the
 * bytes, an eighth of the row as for rows of 32-100, up to 32 (the only
 * TPR of that size auto races).  On
 * pdb1HYS (rows of 119) csr16 ran TPR 32 ahead in f64 (20.1 against 22.3
 * us on the H100, 18.7-20.3 against 21.1 on the H200) and TPR 16 ahead in
 * f32 (11.9 against 12.1, 12.1-12.2 against 12.5-12.8), and so did
 * pdb1HYS_x8 (f32 85.8 against 96.2 us on the H200), while wbp256 (rows
 * of 479) ran TPR 32 ahead in both (f32 72.4 against 82.0 in auto's race,
 * eval-h100-v68): gt-h100-v1, -v2, gt-h200-v5..v8,
 * bench_spmv_h200_v10_large.
 */
static int long_row_tpr(const struct spmvd_tune_input *in, const int tpr[3])
{
  int t = pow2_at_least(in->prof->rl_mean, 2, 256) / 8;

  return in->dtype == SPMV_F32 && in->prof->rl_mean >= 100 && t < tpr[2]
             ? t
             : tpr[2];
}

/*
 * The single most likely winner of a shape (the model strategy's pick
 * outside ELLR-T's ground, and the head of auto's shortlist where the race
 * gains from a fast leader).  From the H200 ground truth of eval_tuner
 * (tests/bench/results): on small matrices one warp-group per row sized
 * to the mean row (32 when rows vary), csr-adaptive when a few rows are
 * long; on power laws and irregular rows beyond the L2 cuSPARSE ALG1
 * (within 5 % of the best there), within it csr-adaptive (power laws,
 * short rows at base 2) or csr-vector at AUTOCSR's middle TPR; on regular
 * rows of 100 or more long_row_tpr, below 100 beyond 4x the L2 sell
 * (C 32), below that, for rows of 32..100, a TPR of an eighth of the row.
 */
static struct spmv_config likely_best(const struct spmvd_tune_input *in,
                                      enum shape sh, const int tpr[3])
{
  const struct spmv_profile *p = in->prof;
  int wt = wave_tpr(p, in->dev), t;

  switch (sh) {
  case SHAPE_SMALL:
    if (small_skewed(p))
      return adaptive(256, 0);
    return mk(SPMV_FMT_CSR_VECTOR, 512,
              p->rl_cv > 1 ? 32 : pow2_at_least(p->rl_mean, 4, 32), 0, 0);
  case SHAPE_SKEWED:
    if (beyond_l2(in))
      return mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0);
    return adaptive(256, p->rl_mean < 8 ? 2 : 0);
  case SHAPE_STENCIL:
    return mk(SPMV_FMT_DIA, 128, 0, 0, 0);
  case SHAPE_FLAT:
    /* Short rows that fit one wave at >= 4 threads each: latency-bound,
     * threads to the row's length, in blocks of 512 (fewer blocks, as on
     * small matrices: epb1, rows of 6.5, f64 on the H200, 3.89 us at BS
     * 512 and TPR 8 against 4.13 at 256, eval-h200-v23.md). */
    t = pow2_at_least(p->rl_mean, 2, 32);
    if (p->rl_mean < 8 && wt >= 4)
      return mk(SPMV_FMT_CSR_VECTOR, 512, t < wt ? t : wt, 0, 0);
    return mk(SPMV_FMT_CSR_VECTOR, 128, tpr[0], 0, 0);
  case SHAPE_REGULAR:
    if (p->rl_mean >= 100)
      return mk(SPMV_FMT_CSR_VECTOR, 128, long_row_tpr(in, tpr), 0, 0);
    if (beyond_l2_by(in, REGULAR_SELL_L2_TIMES))
      return sell_for(in, 128, p->rl_cv < 0.05 ? 1 : 256);
    if ((t = eighth_tpr(p)) > 0)
      return mk(SPMV_FMT_CSR_VECTOR, 128, t, 0, 0);
    return mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0);
  default:
    /* csr-stream16 where it fits: with kernels v4 (f32 at K 8 within 32
     * registers) it led csr-stream by 1.5-4 % in f32 too, on the seven
     * irregular matrices of bench_spmv_h200_v4.md. */
    if (beyond_l2(in))
      return stream_for(in, sell16_fits(in));
    return mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0);
  }
}

/* Where csr-panel is likely the best (panel_pick), it leads the shortlist
 * and the list keeps its length: its last candidate makes room. */
static void panel_first(const struct spmvd_tune_input *in,
                        struct spmvd_candidates *out)
{
  struct spmv_config pc;
  size_t k;

  if (!panel_pick(in, &pc) || out->n == 0 || spmv_config_equal(&out->cfg[0], &pc) ||
      excluded(in, &pc))
    return;
  for (k = 1; k < out->n && !spmv_config_equal(&out->cfg[k], &pc); k++)
    ;
  if (k == out->n)
    k--;  /* not listed: the last one goes */
  memmove(&out->cfg[1], &out->cfg[0], k * sizeof out->cfg[0]);
  out->cfg[0] = pc;
}

/*
 * auto's shortlist on a GPU, most likely winner first, 3 or 4 candidates
 * (cost on first sight about 3 + 3 x the others' time over the pick's,
 * SpMV-equivalents, with the default race; dia first on stencils so that
 * the slower ones drop on their warm-up run).
 */
static void auto_gpu(const struct spmvd_tune_input *in,
                     struct spmvd_candidates *out)
{
  const struct spmv_profile *p = in->prof;
  int sigma = p->rl_cv < 0.05 ? 1 : 256;  /* sell's, where a shape races it */
  enum shape sh = shape_of(p, in->dev);
  struct spmv_config mp;
  int tpr[3], wt, t8 = eighth_tpr(p);

  spmvd_tuner_autocsr_tpr(p->rl_mean, tpr);
  switch (sh) {
  case SHAPE_STENCIL:
    add(out, in, mk(SPMV_FMT_DIA, 128, 0, 0, 0));
    add(out, in, sell_for(in, 128, sigma));
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
    break;
  case SHAPE_SKEWED:
    /* Within the L2 csr-adaptive first (likely_best): cuSPARSE ALG2 there
     * ran 2.8x and ALG1 1.5x its time on ca-HepPh, and as the first
     * candidate ALG2's three runs cost 8.5 SpMV-equivalents of the pick
     * (17.6-19.1 in all, the most costly race of every H100 evaluation,
     * eval-h100-v63..v68); behind a fast leader it drops on its first run. */
    if (!beyond_l2(in))
      add(out, in, likely_best(in, sh, tpr));
    /* Beyond the L2 csr-stream ran within 2 % of cuSPARSE (powerlaw_1M,
     * dc1like_4M) where csr-merge was 8-30 % behind. */
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 2, 0));
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    add(out, in, adaptive(256, p->rl_mean < 8 ? 2 : 0));
    if (beyond_l2(in))
      add(out, in, mk(SPMV_FMT_CSR_STREAM, 256, 0, 4, 0));
    else
      add(out, in, mk(SPMV_FMT_CSR_MERGE, 256, 0, 0, 0));
    break;
  case SHAPE_SMALL:
    /* Latency-bound: no dia (it never led here), at most 4; blocks of
     * 512 (fewer blocks to schedule: on the v5 ground truth auto's
     * replayed matches within 95 % rose from 329 to 337 of 385 over every
     * committed table). */
    add(out, in, likely_best(in, sh, tpr));
    if (small_skewed(p)) {
      /* csr-vector before csr-adaptive at base 2: the race keeps the
       * earlier of equal times, and on bp_1200 (f64, H200) they tie
       * within 0.02 us in the race while csr-vector confirmed 98.8 % of
       * the best and csr-adaptive 94.5-96.8 % (eval-h200-v21, -v23). */
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 256, 32, 0, 0));
      add(out, in, adaptive(256, 2));
      add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    } else {
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 512, 32, 0, 0));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 512, 16, 0, 0));
      /* Rows that vary (cv > 1) in place of TPR 8, which led none of the
       * nine such matrices' races in 16 evaluations (H100 and H200, 2 %
       * or more behind): TPR 32 in blocks of 256, which twice as many SMs
       * share.  It or csr16 at that shape was the best of email-Eu-core
       * in 10 of them, where auto's picks at BS 512 confirmed at 93.2 %
       * of it (eval-h100-v39, -v41). */
      if (p->rl_cv > 1)
        add(out, in, mk(SPMV_FMT_CSR_VECTOR, 256, 32, 0, 0));
      else
        add(out, in, mk(SPMV_FMT_CSR_VECTOR, 512, 8, 0, 0));
      add(out, in, adaptive(256, 2));
    }
    out->n = out->n > 4 ? 4 : out->n;
    break;
  case SHAPE_FLAT:
    if (p->rl_mean < 8) {
      /* Short equal rows: a thread or two per row, or as many as the row
       * has when the rows fit one wave at 4 each; over half the L2 hyb
       * (no row pointers) first, and beyond it csr-stream.  Between half
       * and 90 % of the L2 the worker writes the matrix back into it
       * (spmv_l2_warm_mode), and there the ELL-like layouts led: mc2depi
       * in f64 ran ell 8.85 us and hyb 8.96 against 9.1-10.0 for csr16
       * and ellr-t (eval-h200-v30), where auto took ellr-t at 90.5 %. */
      if (beyond_l2_by(in, 0.5)) {
        add(out, in, mk(SPMV_FMT_HYB, 256, 0, 0, 0));
        /* mc2depi_x8 (rows of 4), f64: csr-stream16 8 % ahead of hyb; in
         * f32 csr16 at TPR 1 leads and csr-stream would push it out. */
        if (in->dtype == SPMV_F64 && beyond_l2(in))
          add(out, in, stream_for(in, sell16_fits(in)));
      }
      /* f64 within the L2 past its half: the ELL-like layouts alone.  In
       * 14 evaluations (kernels 10, H200 and H100) mc2depi's best was ell
       * or hyb every time, yet csr16 at TPR 1 or 2 won auto's race in four
       * H100 ones within 1 % of hyb and confirmed at 90.7-92.8 %: it
       * slows more than hyb the longer it runs after a load (medians of
       * 10 runs 9.9 against 9.5 us, of 30 10.4 against 9.9;
       * eval-h100-v38-v45.md), which rounds of two runs do not see. */
      if (in->dtype == SPMV_F64 && beyond_l2_by(in, 0.5) && !beyond_l2(in)) {
        add(out, in, mk(SPMV_FMT_ELL, 256, 0, 0, 0));
        add(out, in, mk(SPMV_FMT_ELLR_T, 256, 1, 0, 0));
        add(out, in, sell_for(in, 128, sigma));
      }
      add(out, in, likely_best(in, sh, tpr));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[0], 0, 0));
      add(out, in, mk(SPMV_FMT_ELLR_T, 256, 1, 0, 0));
      add(out, in, mk(SPMV_FMT_CSR_SCALAR, 128, 0, 0, 0));
      add(out, in, sell_for(in, 128, sigma));
      out->n = out->n > 4 ? 4 : out->n;
      break;
    }
    /* Flat long rows: the ELLR-T model's pick leads, then the same with
     * half its T (f32 halves the bytes a thread loads per step: on the
     * H200 denserows_20k_x2000 in f32 ran 15 % faster at T 4 than at the
     * model's 8). */
    if (model_ellr_pick(in, &mp)) {
      add(out, in, mp);
      if (mp.tpr > 1) {
        mp.tpr /= 2;
        add(out, in, mp);
      }
    }
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
    add(out, in, sell_for(in, 128, sigma));
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, p->rl_mean < 64 ? tpr[0] : tpr[2],
                    0, 0));
    add(out, in, mk(SPMV_FMT_HYB, 256, 0, 0, 0));
    out->n = out->n > 4 ? 4 : out->n;
    break;
  case SHAPE_REGULAR:
    add(out, in, likely_best(in, sh, tpr));
    /* Beyond the L2 csr-stream16 led on cant_x16, pdb1HYS_x8 and
     * shipsec1_x8 (f64, within 1 % of sell16 on consph_x16) and on
     * cant, consph and shipsec1 in f32 by 3-5 % (bench_spmv_h200_v4.md). */
    if (beyond_l2(in))
      add(out, in, stream_for(in, sell16_fits(in)));
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
    /* f64 rows of 64-100 (an eighth of 16) where csr-vector leads: TPR 32
     * in sell's place, which led none of them.  On the H100 csr16 at TPR
     * 32 led consph in every evaluation (29.0-29.2 us against csr-vector
     * TPR 16's 30.3-30.7, the pick at 94.9-95.3 %: eval-h100-v38..v40),
     * where the H200 had csr-vector TPR 16 first; cant keeps its TPR 8. */
    if (in->dtype == SPMV_F64 && t8 == 16 &&
        !beyond_l2_by(in, REGULAR_SELL_L2_TIMES))
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, 32, 0, 0));
    else
      add(out, in, sell_for(in, 128, sigma));
    /* Rows of 32-100: a TPR of an eighth of the row, not AUTOCSR's
     * largest (32), which led on none of cant, consph, shipsec1 and pwtk
     * at the ELLR-T paper's size or 8-16x it; TPR 8 led cant_x16 in f32
     * by 5 % (eval-h200-v10-large-cant, bench_spmv_h200_v4).  Outside
     * that range long_row_tpr, so that f32 rows of 100-128 race no TPR 32
     * (pdb1HYS f32: raced alongside 16, 32 read 0.2-1.7 % ahead in auto's
     * two-run rounds in eval-h100-v68..v70 and confirmed 5-6 % behind). */
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128,
                    t8 > 0 ? t8 : long_row_tpr(in, tpr), 0, 0));
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[0], 0, 0));
    add(out, in, sell_for(in, 128, sigma));
    out->n = out->n > 4 ? 4 : out->n;
    break;
  case SHAPE_IRREGULAR:
    if (beyond_l2(in)) {
      /* csr-stream16 led by 20-43 % over cuSPARSE ALG1 in f64 (csr-stream
       * where a block spans too many columns for 16-bit offsets; its
       * trial then fails at conversion) and csr-stream by 2-5 % in f32. */
      if (sell16_fits(in))
        add(out, in, stream_for(in, 1));
      add(out, in, stream_for(in, 0));
      add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
      break;
    }
    /* Rows that fit one wave at >= 8 threads each are latency-bound: a
     * warp-group per row as wide as the wave allows, in few blocks (crack,
     * 10240 rows: 4.2 us at BS 512, TPR 16 against 4.4 at AUTOCSR's
     * middle TPR, H200 f64), in place of ALG1, and first: the race keeps
     * the earlier of two equal times, and AUTOCSR's middle TPR tied it
     * in a race on crack (f64) to confirm 5 % slower (eval-h200-v9-f64). */
    if ((wt = wave_tpr(p, in->dev)) >= 8) {
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 512, wt, 0, 0));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
      /* f64: csr-stream16, as beyond one wave; in f32 AUTOCSR's largest
       * TPR, which led within a wave (crack, bayer10, gt-h200-v5.tsv.gz). */
      if (in->dtype == SPMV_F64)
        add(out, in, stream_for(in, sell16_fits(in)));
      else
        add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[2], 0, 0));
    } else {
      /* Beyond one wave: csr-stream16 (K 8 in f32, 4 in f64) in place of
       * ALG1, which trailed the best by 25-45 % on mac_econ, cop20k_A and
       * rma10 in every H200 race (eval-h200-v23..v26), while csr-stream16
       * led mac_econ in both types (8.37 us f32 against csr16 TPR 2's
       * 8.59 and csr-adaptive's 8.56, gt-h200-v8; f32 auto there picked a
       * csr16 or csr-adaptive that confirmed at 89-91 %, v25-v26);
       * then AUTOCSR's least TPR (rma10, cop20k_A: 8.6 against 12.0,
       * 11.5 / 14.0 us as csr16 at the largest, gt-h200-v5.tsv.gz). */
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
      add(out, in, stream_for(in, sell16_fits(in)));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[0], 0, 0));
    }
    add(out, in, adaptive(256, 0));
    break;
  }
  panel_first(in, out);
}

/* auto's shortlist on the cpu (no warps: csr, the ELL-like layouts). */
static void auto_cpu(const struct spmvd_tune_input *in,
                     struct spmvd_candidates *out)
{
  const struct spmv_profile *p = in->prof;

  if (p->nnz > 0 && p->dia_fill <= 1.5 && p->ndiags <= MAX_DIAGS)
    add(out, in, mk(SPMV_FMT_DIA, 0, 0, 0, 0));
  add(out, in, mk(SPMV_FMT_CSR_SCALAR, 0, 0, 0, 0));
  if (p->rl_cv <= REGULAR_CV)
    add(out, in, mk(SPMV_FMT_SELL, 0, 0, 32, p->rl_cv < 0.05 ? 1 : 256));
  add(out, in, mk(SPMV_FMT_CSR_ADAPTIVE, 0, 0, 0, 0));
}


/*
 * model's pick, no timing: csr-panel where its x gathers stay in shared
 * memory (panel_pick: they would read an L2 sector per entry), else the
 * ELLR-T model (Eq. 1-4) where ELLR-T pays,
 * i.e. on flat long rows (ell_fill <= 1.2, rl_mean >= 64: its padding is
 * nil and T threads share a row), else the profile's likely best
 * (likely_best), refined by the bytes one product moves: flat rows whose
 * CSR bytes exceed the L2 take hyb (no row pointers).  An ELLR-T pick
 * whose layout would exceed 3x the CSR bytes is never taken (next best of
 * M, else the profile's choice).  Where the operator excluded the chosen
 * format, the ELLR-T model's pick within that bound.
 */
static int model_choice(const struct spmvd_tune_input *in,
                        const struct spmv_config *ranked, int nm,
                        struct spmvd_candidates *out)
{
  const struct spmv_profile *p = in->prof;
  enum shape sh = shape_of(p, in->dev);
  struct spmv_config pc;
  int k, tpr[3];

  if (panel_pick(in, &pc)) {
    add(out, in, pc);
    if (out->n > 0)
      return 0;
  }
  if (ellr_pays(in))
    for (k = 0; k < nm && out->n == 0; k++)
      add(out, in, ranked[k]);
  if (out->n > 0)
    return 0;
  spmvd_tuner_autocsr_tpr(p->rl_mean, tpr);
  if (sh == SHAPE_FLAT && beyond_l2(in))
    add(out, in, mk(SPMV_FMT_HYB, 256, 0, 0, 0));
  else
    add(out, in, likely_best(in, sh, tpr));
  /* That format excluded by the operator: the ELLR-T model's own pick,
   * within the same bound on its layout's bytes. */
  if (out->n == 0 && ellr_within_bound(in))
    for (k = 0; k < nm && out->n == 0; k++)
      add(out, in, ranked[k]);
  out->n = out->n > 0 ? 1 : 0;
  return 0;
}

/* Copies in0 into w with what is found once per tuning filled in: the
 * row-span scan, and the predictor's features where it is calibrated. */
static int prepare(const struct spmvd_tune_input *in0,
                   struct spmvd_tune_input *w, struct spmv_error *err)
{
  if (in0 == NULL || in0->A == NULL || in0->prof == NULL || in0->dev == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "tuner: incomplete input");
  *w = *in0;
  w->fits16 = spmv_csr_max_row_span(w->A) <= SPMV_SELL16_MAX_SPAN;
  if (w->pred != NULL)
    spmvd_predict_features(w->A, w->prof, w->dtype, &w->feat);
  return 0;
}

/* Fills the candidates of strategy s for a prepared input. */
static int candidates(enum spmvd_strategy s, const struct spmvd_tune_input *in,
                      struct spmvd_candidates *out, struct spmv_error *err)
{
  struct spmv_config model[SPMVD_MODEL_MAX_T], pred[SPMV_FMT_COUNT];
  int nm, np, k, tpr[3];

  out->n = 0;
  nm = 0;
  if (s == SPMVD_STRATEGY_MODEL || s == SPMVD_STRATEGY_TRIAL) {
    nm = model_ranked(in, model, SPMVD_MODEL_MAX_T, err);
    if (nm < 0)
      return nm;
  }
  np = predicted(in, nm > 0 ? &model[0] : NULL, pred, SPMV_FMT_COUNT);
  spmvd_tuner_autocsr_tpr(in->prof->rl_mean, tpr);
  switch (s) {
  case SPMVD_STRATEGY_EXHAUSTIVE:
    exhaustive(in, out);
    break;
  case SPMVD_STRATEGY_TRIAL:
    for (k = 0; k < 3; k++)
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[k], 0, 0));
    add(out, in, adaptive(256, 0));
    if (nm > 0 && ellr_bytes(in->prof, in->dtype) <=
                      MODEL_MAX_ELLR_OVER_CSR *
                          spmvd_tuner_bytes(in->prof, &model[0], in->dtype))
      add(out, in, model[0]);
    for (k = 0; k < np && k < 2; k++)
      add(out, in, pred[k]);
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 2, 0));
    if (in->prof->nnz > 0 && in->prof->dia_fill <= 1.5 &&
        in->prof->ndiags <= MAX_DIAGS)
      add(out, in, mk(SPMV_FMT_DIA, 128, 0, 0, 0));
    break;
  case SPMVD_STRATEGY_AUTO:
    if (is_cpu(in->dev))
      auto_cpu(in, out);
    else
      auto_gpu(in, out);
    narrow_csr(in, out);
    break;
  case SPMVD_STRATEGY_MODEL:
    if (nm == 0)
      return spmv_error_set(err, SPMV_EUNSUPPORTED,
                            "strategy model: the ELLR-T model needs a GPU "
                            "(backend %s, warp size %d)", in->dev->backend,
                            in->dev->warp_size);
    model_choice(in, model, nm, out);
    narrow_csr(in, out);
    break;
  case SPMVD_STRATEGY_PREDICT:
    if (in->pred == NULL)
      return spmv_error_set(err, SPMV_EINVAL,
                            "strategy predict: device '%s' is not "
                            "calibrated (run spmvctl calibrate)",
                            in->dev->name);
    for (k = 0; k < np && out->n == 0; k++)
      add(out, in, pred[k]);
    break;
  default:
    return spmv_error_set(err, SPMV_EINVAL, "unknown strategy %d", (int)s);
  }
  if (out->n == 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "strategy %s: no candidate left (all excluded or "
                          "not applicable)", spmvd_strategy_name(s));
  return 0;
}

/* Fills the candidates of a strategy. */
int spmvd_tuner_candidates(enum spmvd_strategy s,
                           const struct spmvd_tune_input *in,
                           struct spmvd_candidates *out,
                           struct spmv_error *err)
{
  struct spmvd_tune_input w;
  int ret;

  out->n = 0;
  if ((ret = prepare(in, &w, err)) != 0)
    return ret;
  return candidates(s, &w, out, err);
}

/* Fills the race defaults. */
void spmvd_race_params_default(struct spmvd_race_params *p)
{
  p->warmup = 1;
  p->reps = 2;
  p->min_rounds = 1;
  p->max_rounds = 3;
  p->stable_tol = 0.03;
  p->drop_ratio = 1.5;
  /* 1.8, not 2: over 550 of auto's races on an H100 (eval-h100-v63..v67)
   * no candidate within 1.2x of the leader ran its first run above 1.38x
   * it, while sell16 on cant, wbp256 and pdb1HYS ran theirs at 1.82-1.90x
   * and were dropped a round later (1.8-2.5x), their rounds costing 3.6-5.4
   * SpMV-equivalents; replayed over probe_rounds' 1560 races, the picks
   * did not change and the most costly race went from 20.6 to 18.5. */
  p->probe_ratio = 1.8;
  p->close_tol = 0.05;
  p->max_cost = 0;
}

/* Zeroes a decision. */
void spmvd_decision_init(struct spmvd_decision *d)
{
  memset(d, 0, sizeof *d);
}

/* Frees a decision's trials and zeroes it. */
void spmvd_decision_fini(struct spmvd_decision *d)
{
  free(d->trials);
  memset(d, 0, sizeof *d);
}

/* Median of n doubles (n <= 16), without changing v. */
static double median(const double *v, int n)
{
  double s[16];

  memcpy(s, v, sizeof *s * (size_t)n);
  return spmv_median(s, (size_t)n);
}

/* Records a candidate's failure. */
static void trial_fail(struct spmvd_trial *t, int code,
                       const struct spmv_error *e)
{
  t->status = SPMVD_TRIAL_FAILED;
  t->code = code;
  t->time_us = 0;
  t->best_us = 0;
  t->first_us = 0;
  snprintf(t->msg, sizeof t->msg, "%.*s", (int)sizeof t->msg - 1,
           e->msg[0] != '\0' ? e->msg : spmv_strerror(code));
}

/*
 * Times one loaded candidate; lead_us and lead_warm_us are the leader's
 * median and timed warm-up run (0 before there is a leader).  With
 * drop_ratio > 0 (a race that may drop) and probe_ratio > 0, the first
 * warm-up run is timed alone and the candidate is dropped on it when it
 * exceeds probe_ratio x the leader's median plus the leader's own first-run
 * excess (a first launch can pay a one-off setup, e.g. lazy module
 * loading: comparing excess to excess keeps it from dropping a fast
 * candidate).  Then rounds of reps runs: with close_tol > 0 one round
 * decides unless the candidate is within close_tol of the leader, when
 * rounds go on until two agree within stable_tol.  Every run, warm-ups
 * included, is added to *spent_us at its measured (or its round's median)
 * time.  Returns 0, or the failing code (trial marked failed).
 */
static int time_rounds(const struct spmvd_race_ops *ops, void *ctx,
                       const struct spmvd_race_params *p, double lead_us,
                       double lead_warm_us, int runs_after,
                       struct spmvd_trial *t, double *spent_us,
                       double *warm_us)
{
  double med[16], m, cur;
  struct spmv_error e;
  int r, warm, ret, maxr = p->max_rounds, warm_left = p->warmup;
  int racing = p->drop_ratio > 0;

  if (maxr > 16)
    maxr = 16;
  if (maxr < 1)
    maxr = 1;
  *warm_us = 0;
  if (racing && p->probe_ratio > 0 && warm_left > 0) {
    spmv_error_clear(&e);
    ret = ops->time(ctx, 0, 1, &m, &e);
    if (ret == 0 && !(m > 0 && isfinite(m)))
      ret = spmv_error_set(&e, SPMV_EINVAL, "timing gave %g us", m);
    if (ret != 0) {
      trial_fail(t, ret, &e);
      return ret;
    }
    warm_left--;
    t->runs++;
    *spent_us += m;
    *warm_us = m;
    t->probe_us = m;
    if (lead_us > 0 &&
        m > p->probe_ratio * lead_us + fmax(0, lead_warm_us - lead_us)) {
      t->status = SPMVD_TRIAL_DROPPED;
      t->time_us = t->best_us = m;
      return 0;
    }
  }
  for (r = 0; r < maxr; r++) {
    warm = r == 0 ? warm_left : 0;
    spmv_error_clear(&e);
    ret = ops->time(ctx, warm, p->reps, &m, &e);
    if (ret == 0 && !(m > 0 && isfinite(m)))
      ret = spmv_error_set(&e, SPMV_EINVAL, "timing gave %g us", m);
    if (ret != 0) {
      trial_fail(t, ret, &e);
      return ret;
    }
    med[r] = m;
    t->rounds = r + 1;
    t->runs += warm + p->reps;
    *spent_us += (warm + p->reps) * m;
    if (r == 0 && *warm_us == 0)
      *warm_us = m;
    if (r == 0)
      t->first_us = m;
    if (r == 0 || m < t->best_us)
      t->best_us = m;
    if (racing && lead_us > 0 && t->best_us > p->drop_ratio * lead_us) {
      t->status = SPMVD_TRIAL_DROPPED;
      break;
    }
    /* Its median so far clearly ahead of or behind the leader's (or the
     * first candidate): enough rounds. */
    cur = median(med, r + 1);
    if (racing && p->close_tol > 0 && r + 1 >= p->min_rounds &&
        (lead_us <= 0 ||
         fabs(cur - lead_us) > p->close_tol * fmin(cur, lead_us)))
      break;
    if (r + 1 >= p->min_rounds && r > 0 &&
        fabs(m - med[r - 1]) <= p->stable_tol * fmin(m, med[r - 1]))
      break;
    /* Another round must leave room for the candidates still to come. */
    if (p->max_cost > 0) {
      double unit = lead_us > 0 ? fmin(cur, lead_us) : cur;
      if (*spent_us + (p->reps + runs_after) * unit > p->max_cost * unit)
        break;
    }
  }
  t->time_us = median(med, t->rounds);
  return 0;
}

/*
 * Whether trial a beats the leader b.  A candidate's first round (its
 * second and third runs after its load) read 3-8 % slow against the
 * exhaustive race's 2 + 10 on 9-17 us products, and its later rounds
 * came down to it (per-round traces of auto's races on an H100,
 * race-rounds-h100.md); only a candidate close to the leader runs them.
 * So one that ran a single round, often the first candidate, is compared
 * on first rounds, like with like, not against a challenger's faster
 * later rounds.
 */
static int ahead(const struct spmvd_trial *a, const struct spmvd_trial *b)
{
  if (a->rounds == 1 || b->rounds == 1)
    return a->first_us < b->first_us;
  return a->time_us < b->time_us;
}

/* Races the candidates. */
int spmvd_tuner_race(const struct spmvd_candidates *c,
                     const struct spmvd_race_ops *ops, void *ctx,
                     const struct spmvd_race_params *p,
                     const struct spmvd_tune_input *in,
                     struct spmvd_decision *out, struct spmv_error *err)
{
  struct spmvd_race_params def;
  struct spmvd_trial *t;
  struct spmv_error e;
  double spent = 0, warm = 0, lead_warm = 0;
  int leader = -1, first_fail = 0, ret;
  size_t k;

  spmvd_decision_init(out);
  if (p == NULL) {
    spmvd_race_params_default(&def);
    p = &def;
  }
  if (c == NULL || c->n == 0)
    return spmv_error_set(err, SPMV_EINVAL, "race: no candidates");
  if (ops == NULL || ops->load == NULL || ops->time == NULL ||
      ops->unload == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "race: no timing callbacks");
  if (p->reps < 1 || p->warmup < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "race: reps %d must be >= 1 and warmup %d >= 0",
                          p->reps, p->warmup);
  out->trials = calloc(c->n, sizeof *out->trials);
  if (out->trials == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "race: out of memory");
  for (k = 0; k < c->n; k++) {
    t = &out->trials[out->ntrials++];
    t->cfg = c->cfg[k];
    warm = 0;
    spmv_error_clear(&e);
    ret = ops->load(ctx, &t->cfg, &e);
    if (ret != 0) {
      trial_fail(t, ret, &e);
    } else {
      ret = time_rounds(ops, ctx, p,
                        leader >= 0 ? out->trials[leader].time_us : 0,
                        lead_warm, (int)(c->n - k - 1) * (p->warmup + p->reps),
                        t, &spent, &warm);
      ops->unload(ctx);
    }
    if (ret != 0 && first_fail == 0)
      first_fail = ret;
    if (t->status == SPMVD_TRIAL_OK && (leader < 0 || ahead(t, &out->trials[leader]))) {
      leader = (int)k;
      lead_warm = warm;
    }
    if (ops->progress != NULL)
      ops->progress(ctx, (int)k + 1, (int)c->n, t);
    if (ret == SPMV_EGPU_STICKY)
      return spmv_error_set(err, ret, "race: %s: %s",
                            spmv_strerror(ret), t->msg);
  }
  if (leader < 0)
    return spmv_error_set(err, first_fail ? first_fail : SPMV_EINVAL,
                          "race: every candidate failed; the first: %s",
                          out->trials[0].msg);
  out->cfg = out->trials[leader].cfg;
  spmv_config_format(&out->cfg, out->text, sizeof out->text);
  out->time_us = out->trials[leader].time_us;
  out->cost_spmv = spent / out->time_us;
  if (in != NULL && in->prof != NULL)
    spmvd_decision_rates(out, in->prof, in->dtype);
  return 0;
}

/* Tunes with strategy s. */
int spmvd_tuner_run(enum spmvd_strategy s, const struct spmvd_tune_input *in0,
                    const struct spmvd_race_ops *ops, void *ctx,
                    const struct spmvd_race_params *p,
                    struct spmvd_decision *out, struct spmv_error *err)
{
  struct spmvd_candidates *c;
  struct spmvd_race_params one;
  struct spmvd_tune_input w;
  const struct spmvd_tune_input *in = &w;
  int ret, k;

  spmvd_decision_init(out);
  c = malloc(sizeof *c);
  if (c == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "tuner: out of memory");
  /* Prepared once: the predict strategy's time below reuses the features
   * its ranking was made with. */
  ret = prepare(in0, &w, err);
  if (ret == 0)
    ret = candidates(s, in, c, err);
  if (ret != 0)
    goto out;
  if (s == SPMVD_STRATEGY_MODEL || s == SPMVD_STRATEGY_PREDICT) {
    if (ops != NULL) {
      /* Time the pick once so the decision carries a measured time. */
      if (p != NULL)
        one = *p;
      else
        spmvd_race_params_default(&one);
      one.min_rounds = one.max_rounds = 1;
      one.drop_ratio = 0;
      ret = spmvd_tuner_race(c, ops, ctx, &one, in, out, err);
    } else {
      out->cfg = c->cfg[0];
      spmv_config_format(&out->cfg, out->text, sizeof out->text);
      if (s == SPMVD_STRATEGY_PREDICT) {
        k = out->cfg.format;
        out->time_us = spmvd_predict_time(&in->pred->fit[k], in->prof,
                                          &in->feat);
        if (!isfinite(out->time_us))
          out->time_us = 0;
      }
      spmvd_decision_rates(out, in->prof, in->dtype);
    }
  } else if (ops == NULL) {
    ret = spmv_error_set(err, SPMV_EINVAL,
                         "strategy %s needs timing callbacks",
                         spmvd_strategy_name(s));
  } else {
    if (s == SPMVD_STRATEGY_AUTO) {
      /* auto's race is bounded in cost. */
      if (p != NULL)
        one = *p;
      else
        spmvd_race_params_default(&one);
      if (one.max_cost <= 0)
        one.max_cost = SPMVD_AUTO_MAX_COST;
      p = &one;
    }
    ret = spmvd_tuner_race(c, ops, ctx, p, in, out, err);
  }
  out->strategy = s;
out:
  free(c);
  return ret;
}

/* Bytes one product moves under cfg (explicit per-format model). */
double spmvd_tuner_bytes(const struct spmv_profile *prof,
                         const struct spmv_config *cfg, enum spmv_dtype dt)
{
  double vs = (double)spmv_dtype_size(dt), rows = (double)prof->rows;
  double nnz = (double)prof->nnz, ent = vs + 4, ptr, xy, ell, k;

  ptr = prof->nnz < ((int64_t)1 << 31) ? 4 : 8;
  xy = (double)prof->cols * vs + rows * vs;
  switch (cfg->format) {
  case SPMV_FMT_ELL:
    return rows * (double)prof->rl_max * ent + xy;
  case SPMV_FMT_ELLR_T:
  case SPMV_FMT_JAD:
  case SPMV_FMT_SELL:
    return nnz * ent + rows * 4 + xy;
  case SPMV_FMT_SELL16:
    return nnz * (vs + 2) + rows * 8 + xy;
  case SPMV_FMT_CSR16:
    return nnz * (vs + 2) + rows * 4 + (rows + 1) * ptr + xy;
  case SPMV_FMT_COO:
    return nnz * (ent + 4) + xy;
  case SPMV_FMT_HYB:
    k = cfg->param > 0 ? cfg->param : (double)prof->hyb_k;
    ell = fmin(nnz, rows * k);
    return rows * k * ent + (nnz - ell) * (ent + 4) + xy;
  case SPMV_FMT_DIA:
    return (double)prof->ndiags * (rows * vs + 4) + xy;
  default:
    return nnz * ent + (rows + 1) * ptr + xy;
  }
}

/* Fills GFLOP/s and GB/s from the decision's time. */
void spmvd_decision_rates(struct spmvd_decision *d,
                          const struct spmv_profile *prof, enum spmv_dtype dt)
{
  if (!(d->time_us > 0)) {
    d->gflops = d->gbps = 0;
    return;
  }
  d->gflops = 2.0 * (double)prof->nnz / (d->time_us * 1e3);
  d->gbps = spmvd_tuner_bytes(prof, &d->cfg, dt) / (d->time_us * 1e3);
}
