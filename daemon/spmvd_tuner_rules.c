/* spmvd_tuner_rules.c: the shortlist rules: a matrix's shape from its
 * profile, and from it auto's short list and model's single pick. */
#include <string.h>

#include "spmvd_model.h"
#include "spmvd_tuner.h"
#include "spmvd_tuner_impl.h"

/* SELL-C-sigma at C 32: sell16 where it fits (2 bytes less per entry,
 * else the same layout), sell otherwise. */
static struct spmv_config sell_for(const struct spmvd_tune_input *in,
                                   int bs, int sigma)
{
  /* The 32-bit twin where the operator excluded the 16-bit one. */
  int s16 = sell16_fits(in) && !format_excluded(in, SPMV_FMT_SELL16);

  return mk(s16 ? SPMV_FMT_SELL16 : SPMV_FMT_SELL, bs, 0, 32, sigma);
}

/* csr-panel's width in the shortlists: the widest of the exhaustive grid. */
#define PANEL_WIDTH 16384
/* Mean entries per row slot from which a panel's run of a row keeps the
 * loads of a lane in flight. */
#define PANEL_MIN_DENSITY 8.0
/* Panels x must span at least: below, x is a few hundred KB at most and
 * the L1 and L2 hold it. */
#define PANEL_MIN_COUNT 4

/*
 * The shape of a matrix as the shortlist sees it, from its row-length
 * statistics and its fills.  tests/check_replay.sh replays the rules on
 * measured tables: a threshold moved here shows there first.
 */
enum shape {
  SHAPE_STENCIL,   /* few dense diagonals (dia_fill <= 1.2): dia reads no
                      column indices */
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
/* Rows of at most this many entries leave most lanes of a warp-group idle. */
#define SHORT_ROWS_MAX 8

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
 * when narrow: the point of its grid that leads on irregular and skewed
 * rows beyond the L2.
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

/* Every row short and of varied length (road networks): one thread a row
 * (csr-scalar) reads its few entries with no lane idle. */
static int short_irregular(const struct spmvd_tune_input *in)
{
  return shape_of(in->prof, in->dev) == SHAPE_IRREGULAR &&
         in->prof->rl_max <= SHORT_ROWS_MAX;
}

/* Where rows fit 16-bit offsets, csr-vector and csr-scalar become csr16
 * at the same TPR (1 for scalar): the same kernel moving 2 bytes less per
 * entry, which leads on stencils, flat and regular rows.  In f64 only
 * those shapes: on irregular rows, beyond the L2 and within it, csr16 runs
 * behind csr-vector at the same BS and TPR; in f32 it leads or ties there.
 * csr-vector loads the next columns ahead from TPR 16 and csr16 only at
 * TPR 32, so in f64 csr-vector at TPR 16 stays: within the L2 it leads
 * csr16 on regular rows of 50-100 entries.  csr-scalar stays on short
 * irregular rows, where csr16 at TPR 1 runs behind it.  Drops what the rewrite makes
 * excluded or duplicate. */
void spmvd_tuner_narrow_csr(const struct spmvd_tune_input *in,
                            struct spmvd_candidates *out)
{
  enum shape sh = shape_of(in->prof, in->dev);
  int flat = sh == SHAPE_REGULAR || sh == SHAPE_FLAT || sh == SHAPE_STENCIL;
  struct spmv_config c;
  size_t k, j, n = 0;
  int keep;

  /* Nor on small matrices in f32: csr-vector leads there far more often
   * than csr16, and a csr16 pick confirms behind it. */
  if (is_cpu(in->dev) || !sell16_fits(in) ||
      format_excluded(in, SPMV_FMT_CSR16) ||
      (!flat && (in->dtype == SPMV_F64 || sh == SHAPE_SMALL)))
    return;
  for (k = 0; k < out->n; k++) {
    c = out->cfg[k];
    if ((c.format == SPMV_FMT_CSR_VECTOR &&
         !(in->dtype == SPMV_F64 && c.tpr == 16)) ||
        (c.format == SPMV_FMT_CSR_SCALAR && !short_irregular(in))) {
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

/* Regular rows switch to sell later than the others: csr-vector keeps the
 * lead on them up to a few times the L2's bytes, sell beyond. */
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
  if (spmvd_tuner_model_ranked(in, ranked, SPMVD_MODEL_MAX_T, &e) <= 0)
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
 * (PANEL_MIN_DENSITY entries or more a row per panel) over an x of
 * PANEL_MIN_COUNT panels or more, beyond the L2, where a GPU otherwise
 * reads a 32-byte L2 sector of x per entry.  Not where every row spans
 * under 2^16 columns: there neighbouring rows share x's lines in the
 * caches and csr16 leads.  BS 1024, as a panel's shared memory leaves an
 * SM few blocks, and TPR the largest power of two that leaves a lane four
 * entries of a slot.
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
 * TPR of that size auto races).  So f32 rows of 100-128 take TPR 16 and
 * f64 ones 32, at any footprint, and longer rows take 32 in both types.
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
 * gains from a fast leader): on small matrices one warp-group per row
 * sized to the mean row (32 when rows vary), csr-adaptive when a few rows
 * are long; on power laws cuSPARSE ALG1 beyond the L2, csr-adaptive within
 * it (at base 2 for rows under 8); dia on stencils; on flat rows
 * csr-vector at AUTOCSR's least TPR, or sized to short rows that fit one
 * wave; on regular rows of 100 or more long_row_tpr, below 100 beyond 4x
 * the L2 sell (C 32), below that, for rows of 32..100, a TPR of an eighth
 * of the row; on irregular rows csr-stream beyond the L2, csr-vector at
 * AUTOCSR's middle TPR within it.
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
    /* Rows under 8 that fit one wave at >= 4 threads each: latency-bound,
     * threads to the row's length, in blocks of 512 (fewer blocks to
     * schedule, as on small matrices). */
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
    /* Beyond the L2 csr-stream16 where it fits, in f32 too: at K 8 it
     * stays within 32 registers and moves 2 bytes less per entry. */
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
void spmvd_tuner_auto_gpu(const struct spmvd_tune_input *in,
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
    /* Within the L2 csr-adaptive first (likely_best): cuSPARSE runs
     * well behind it there, and as the first candidate ALG2's slow runs
     * all count in the race's cost; behind a fast leader it drops on its
     * first run. */
    if (!beyond_l2(in))
      add(out, in, likely_best(in, sh, tpr));
    /* Beyond the L2 csr-stream keeps up with cuSPARSE on power laws,
     * where csr-merge falls behind. */
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 2, 0));
    add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    add(out, in, adaptive(256, p->rl_mean < 8 ? 2 : 0));
    if (beyond_l2(in))
      add(out, in, mk(SPMV_FMT_CSR_STREAM, 256, 0, 4, 0));
    else
      add(out, in, mk(SPMV_FMT_CSR_MERGE, 256, 0, 0, 0));
    break;
  case SHAPE_SMALL:
    /* Latency-bound: no dia (it does not lead on small matrices), at
     * most 4; blocks of 512, fewer blocks to schedule. */
    add(out, in, likely_best(in, sh, tpr));
    if (small_skewed(p)) {
      /* csr-vector before csr-adaptive at base 2: the race keeps the
       * earlier of equal times, and on a few long rows among short ones
       * the two tie in the race while csr-vector holds up better when
       * timed for longer. */
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 256, 32, 0, 0));
      add(out, in, adaptive(256, 2));
      add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
    } else {
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 512, 32, 0, 0));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 512, 16, 0, 0));
      /* Rows that vary (cv > 1): TPR 32 in blocks of 256, which twice as
       * many SMs share, in place of TPR 8, which trails where row lengths
       * vary that much; in blocks of 512 the same TPR runs behind it. */
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
       * (spmv_l2_warm_mode), and there the ELL-like layouts lead, ell and
       * hyb ahead of csr16 and ellr-t. */
      if (beyond_l2_by(in, 0.5)) {
        add(out, in, mk(SPMV_FMT_HYB, 256, 0, 0, 0));
        /* Beyond the L2 in f64 csr-stream16 runs ahead of hyb on these
         * rows; in f32 csr16 at TPR 1 leads and csr-stream would push it
         * out of the four. */
        if (in->dtype == SPMV_F64 && beyond_l2(in))
          add(out, in, stream_for(in, sell16_fits(in)));
      }
      /* f64 within the L2 past its half: the ELL-like layouts alone.
       * csr16 at TPR 1 or 2 can win the race there by a hair, yet it slows
       * more than hyb the longer it runs after a load, which the race's
       * rounds of two runs do not see. */
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
     * half its T, which can lead in f32, where a thread loads half the
     * bytes per step. */
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
    /* Beyond the L2 csr-stream16 leads on regular rows in both types
     * (level with sell16 on some). */
    if (beyond_l2(in))
      add(out, in, stream_for(in, sell16_fits(in)));
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
    /* f64 rows of 64-100 (an eighth of 16) within 4x the L2, where
     * csr-vector leads: TPR 32 in sell's place, which leads none of them;
     * on some GPUs csr16 at TPR 32 leads these rows and on others
     * csr-vector at TPR 16, so both race.  Rows of 32-64 keep sell. */
    if (in->dtype == SPMV_F64 && t8 == 16 &&
        !beyond_l2_by(in, REGULAR_SELL_L2_TIMES))
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, 32, 0, 0));
    else
      add(out, in, sell_for(in, 128, sigma));
    /* Rows of 32-100: a TPR of an eighth of the row, not AUTOCSR's
     * largest (32), which does not lead on regular rows of that length
     * within the L2 or beyond it.  Outside that range long_row_tpr, so
     * that f32 rows of 100-128 race no TPR 32: raced alongside 16, it can
     * read ahead in the race's two-run rounds and then confirm behind. */
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128,
                    t8 > 0 ? t8 : long_row_tpr(in, tpr), 0, 0));
    add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[0], 0, 0));
    add(out, in, sell_for(in, 128, sigma));
    out->n = out->n > 4 ? 4 : out->n;
    break;
  case SHAPE_IRREGULAR:
    /* Short irregular rows: csr-scalar leads the warp-group and streaming
     * kernels in both types, within the L2 and beyond (and, in f32,
     * csr16 at TPR 1, which the narrowing therefore leaves it). */
    if (short_irregular(in))
      add(out, in, mk(SPMV_FMT_CSR_SCALAR, 128, 0, 0, 0));
    if (beyond_l2(in)) {
      /* Beyond the L2 csr-stream16 and csr-stream lead cuSPARSE ALG1 on
       * irregular rows in both types (csr-stream where a block spans too
       * many columns for 16-bit offsets: csr-stream16's trial then fails
       * at conversion). */
      if (sell16_fits(in))
        add(out, in, stream_for(in, 1));
      add(out, in, stream_for(in, 0));
      add(out, in, mk(SPMV_FMT_CUSPARSE, 0, 0, 1, 0));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
      break;
    }
    /* Rows that fit one wave at >= 8 threads each are latency-bound: a
     * warp-group per row as wide as the wave allows, in few blocks (BS
     * 512), in place of ALG1, and first: the race keeps the earlier of two
     * equal times, and AUTOCSR's middle TPR can tie it in the race yet
     * confirm slower. */
    if ((wt = wave_tpr(p, in->dev)) >= 8) {
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 512, wt, 0, 0));
      add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[1], 0, 0));
      /* f64: csr-stream16, as beyond one wave; in f32 AUTOCSR's largest
       * TPR, which leads on irregular rows within a wave. */
      if (in->dtype == SPMV_F64)
        add(out, in, stream_for(in, sell16_fits(in)));
      else
        add(out, in, mk(SPMV_FMT_CSR_VECTOR, 128, tpr[2], 0, 0));
    } else {
      /* Beyond one wave: csr-stream16 (K 8 in f32, 4 in f64) in place of
       * ALG1, which trails far behind on irregular rows within the L2,
       * while csr-stream16 can lead them in both types; then AUTOCSR's
       * least TPR, which runs well ahead of its largest on them. */
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
void spmvd_tuner_auto_cpu(const struct spmvd_tune_input *in,
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
int spmvd_tuner_model_choice(const struct spmvd_tune_input *in,
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
