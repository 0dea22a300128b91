/* spmvd_predict.c: the statistical performance predictor (Wang, Gu & Li):
 * calibration plan and driver, least-squares fits, predictions. */
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_layout.h"
#include "spmv_stats.h"
#include "spmvd_cache.h"
#include "spmvd_predict.h"

/*
 * The calibration grid (MODELS.md, 3), cut by the nnz bounds.  Where we
 * deviate from the paper: I is a real number of strips, I = R / S, and the
 * grid starts below one strip.  On a large GPU a strip is big (an H200:
 * 132 x 2048 = 270336 rows), most matrices are a fraction of one and the
 * largest are tens of strips; the paper's I = ceil(rows / S) in 1..10
 * predicted a 46835-row matrix as a whole strip (6x its work) and
 * extrapolated a 63-strip one 6x past its data.  So the thread-per-row
 * formats take I in {0.1, 0.25, 0.5, 1} over every P first (small
 * matrices: cheap in nonzeros, and the span of P matters most to the
 * saddle), then I in {2, 4, 8, 16} while the budget lasts; csr-vector's I
 * sweep runs from 0.1 to 32 strips.
 */
static const double grid_i1[] = { 0.1, 0.25, 0.5, 1 };
static const double grid_i2[] = { 2, 4, 8, 16 };
static const int grid_p[] = { 4, 8, 16, 32, 64, 128, 256, 512, 1024 };
/* csr-vector: the P sweep at I = VEC_I_CAL, the I sweep at P = VEC_P_CAL. */
static const double vec_i[] = { 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32 };
#define VEC_I_CAL 1
#define VEC_P_CAL 16
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The work model's matrices: shapes the paper's grid lacks (skewed rows
 * with long ones, columns near the diagonal as most real matrices have
 * them, and matrices of a few hundred rows), each timed with every
 * calibrated configuration.  Rows are fractions of the thread strip; the
 * matrices run from the fewest nonzeros up, so a budget cuts the largest.
 */
static const struct {
  enum spmv_gen_dist dist;
  double cv;
  enum spmv_gen_place place;
} work_shapes[] = {
  { SPMV_GEN_NORMAL, 0.25, SPMV_GEN_RANDOM },
  { SPMV_GEN_LOGNORMAL, 1, SPMV_GEN_RANDOM },
  { SPMV_GEN_LOGNORMAL, 3, SPMV_GEN_RANDOM },
  { SPMV_GEN_NORMAL, 0.25, SPMV_GEN_DIAGONAL },  /* WORK_FEM_SHAPE */
  { SPMV_GEN_LOGNORMAL, 1, SPMV_GEN_DIAGONAL },
  { SPMV_GEN_NORMAL, 0, SPMV_GEN_DIAGONAL },  /* equal rows: HYB without COO */
  { SPMV_GEN_LOGNORMAL, 3, SPMV_GEN_DIAGONAL },
  { SPMV_GEN_NORMAL, 0, SPMV_GEN_RANDOM },
};
_Static_assert(NELEM(work_shapes) == SPMVD_CALIB_SHAPES,
               "SPMVD_CALIB_SHAPES names the work part's shapes");
/* From 27 rows (on an H100 or H200) up: many real matrices have a few
 * hundred rows or fewer, where a launch's fixed costs and a kernel's
 * one-block paths rule. */
#define WORK_FEM_SHAPE 3
static const double work_i[] = { 0.0001, 0.0005, 0.002, 0.01, 0.05, 0.25,
                                 1, 4 };
static const int work_p[] = { 2, 4, 8, 16, 32, 64, 128, 256, 1024 };

/*
 * The mid part, csr-scalar's alone: launches of 0.02 to 0.2 strips (5400
 * to 54000 rows on an H100 or H200, a few warps to a fifth of the
 * device's) whose matrix lies on either side of the L2's cliff,
 * at mid_l2 times the device's L2.  Its fit read its own points of a few
 * warps 10 % high at 12-25 MB and 14 % low at 25-50 MB with 35 points
 * there (predictor-insample-h100-v77.md), and the ELLR-T paper's
 * matrices lie there (pdb1HYS, consph, rma10).  The FEM shape and its
 * log-normal twin, near the diagonal as the paper's.  Only csr-scalar:
 * the other formats' fits have no term for the cliff, and these points
 * moved their errors on the evaluation by up to 0.7 points either way
 * (eval-h100-v79-v81.md).
 */
static const size_t mid_shapes[] = { WORK_FEM_SHAPE, 4 };
static const double mid_i[] = { 0.02, 0.06, 0.2 };
static const double mid_l2[] = { 0.5, 0.7, 0.9, 1.2 };
static const struct spmv_config scalar_cfg = { SPMV_FMT_CSR_SCALAR, 256, 0,
                                               0, 0 };

/* The largest least-squares system. */
#define MAXB SPMVD_WORK_TERMS

/* Fewest microseconds a prediction may give. */
#define PREDICT_FLOOR_US 1e-3

/* The configurations calibrated on the thread-per-row matrices. */
static const struct {
  struct spmv_config cfg;
  int cuda_only;
} thread_cfgs[] = {
  { { SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0 }, 0 },
  { { SPMV_FMT_ELL, 256, 0, 0, 0 }, 0 },
  { { SPMV_FMT_ELLR_T, 256, 1, 0, 0 }, 0 },
  { { SPMV_FMT_JAD, 256, 0, 0, 0 }, 0 },
  { { SPMV_FMT_COO, 256, 0, 0, 0 }, 0 },
  { { SPMV_FMT_HYB, 256, 0, 0, 0 }, 0 },
  { { SPMV_FMT_SELL, 256, 0, 32, 256 }, 0 },
  { { SPMV_FMT_CSR_ADAPTIVE, 256, 0, 0, 0 }, 0 },
  { { SPMV_FMT_CSR_MERGE, 256, 0, 0, 0 }, 0 },
  { { SPMV_FMT_CSR_STREAM, 128, 0, 4, 0 }, 0 },
  { { SPMV_FMT_CUSPARSE, 0, 0, 2, 0 }, 1 },
};
static const struct spmv_config vector_cfg = { SPMV_FMT_CSR_VECTOR, 256, 16,
                                               0, 0 };

/* Returns the resident threads of dev that the fits' occupancy terms use. */
double spmvd_predict_threads(const struct spmvd_device_info *dev)
{
  return (double)dev->sms * (double)(dev->max_threads_per_sm > 0
                                         ? dev->max_threads_per_sm
                                         : 1);
}

/* Returns the strip S of format f on dev. */
int64_t spmvd_predict_strip(enum spmv_format f,
                            const struct spmvd_device_info *dev)
{
  int64_t per_sm = dev->max_threads_per_sm > 0 ? dev->max_threads_per_sm : 1;
  int half = dev->warp_size >= 2 ? dev->warp_size / 2 : 1;

  if (dev->sms < 1)
    return 0;
  if (f == SPMV_FMT_CSR_VECTOR)
    per_sm = per_sm / half > 0 ? per_sm / half : 1;
  return (int64_t)dev->sms * per_sm;
}

/* Fills the calibration defaults. */
void spmvd_calib_params_default(struct spmvd_calib_params *p)
{
  p->max_nnz_matrix = (int64_t)32 << 20;
  p->max_nnz_total = (int64_t)480 << 20;
  p->cv = 0.25;
  p->seed = 1;
  p->work_nnz = (int64_t)240 << 20;
  p->mid_nnz = (int64_t)160 << 20;
}

/* Appends a point to the plan (capacity checked by the caller). */
static void add_point(struct spmvd_calib_plan *plan,
                      const struct spmv_config *cfg, int64_t rows,
                      double strips, int p, enum spmv_gen_dist dist,
                      double cv)
{
  struct spmvd_calib_point *pt = &plan->pt[plan->n++];

  memset(pt, 0, sizeof *pt);
  pt->cfg = *cfg;
  pt->rows = rows;
  pt->strips = strips;
  pt->i = (int)ceil(strips);
  pt->p = p;
  pt->dist = dist;
  pt->cv = cv;
  pt->place = SPMV_GEN_RANDOM;
  pt->shape = -1;
  pt->matrix = plan->nmatrices;
}

/* Whether the two matrices (normal, uniform) of rows x p fit the bounds;
 * counts them when they do. */
static int admit(struct spmvd_calib_plan *plan,
                 const struct spmvd_calib_params *prm, int64_t rows, int p)
{
  int64_t nnz = rows * p;

  if (nnz > prm->max_nnz_matrix ||
      plan->total_nnz + 2 * nnz > prm->max_nnz_total)
    return 0;
  plan->total_nnz += 2 * nnz;
  return 1;
}

/* The rows of I strips of s rows (at least one row). */
static int64_t strip_rows(int64_t s, double i)
{
  int64_t r = (int64_t)llround((double)s * i);

  return r > 0 ? r : 1;
}

/* The paper grid's two distributions of row lengths, a matrix of each. */
static const enum spmv_gen_dist grid_dists[2] = { SPMV_GEN_NORMAL,
                                                  SPMV_GEN_UNIFORM };

/* Adds csr-vector's two matrices (normal, uniform) of I strips of its
 * strip sv and mean length pp, when they fit the budget. */
static void add_vector_matrices(struct spmvd_calib_plan *plan,
                                const struct spmvd_calib_params *prm,
                                int64_t sv, double i, int pp)
{
  int64_t rows = strip_rows(sv, i);

  if (!admit(plan, prm, rows, pp))
    return;
  for (size_t d = 0; d < 2; d++) {
    add_point(plan, &vector_cfg, rows, i, pp, grid_dists[d], prm->cv);
    plan->nmatrices++;
  }
}

/* Adds the paper grid's two matrices (normal, uniform) of I strips of the
 * thread strip st and mean length pp, under every thread-per-row
 * configuration, when they fit the budget. */
static void add_grid_matrices(struct spmvd_calib_plan *plan,
                              const struct spmvd_calib_params *prm,
                              int64_t st, double i, int pp, int cuda)
{
  int64_t rows = strip_rows(st, i);

  if (!admit(plan, prm, rows, pp))
    return;
  for (size_t d = 0; d < 2; d++) {
    for (size_t k = 0; k < NELEM(thread_cfgs); k++)
      if (cuda || !thread_cfgs[k].cuda_only)
        add_point(plan, &thread_cfgs[k].cfg, rows, i, pp, grid_dists[d],
                  prm->cv);
    plan->nmatrices++;
  }
}

/* The mean row length of work-part shape sh at work_p[pi].  Equal rows
 * are one entry short of a power of two from 16 up: rows of exactly 2^k
 * put a warp's lanes of csr-scalar 2^k entries apart, on conflicting
 * cache sets, and from 32 entries and 135 rows up ran 1.6-1.9x slower on
 * the H200 than rows of the same mean with cv 0.25 (1.0-1.4x at 16),
 * which real matrices' rows of varied or odd lengths do not show; the
 * fits then bent to them (csr-scalar's fit error on its points 13.9 %,
 * 9.7 % without them). */
static int work_len(size_t sh, size_t pi)
{
  int p = work_p[pi];

  return work_shapes[sh].cv == 0 && p >= 16 ? p - 1 : p;
}

/* Marks the plan's points from pt0 on as the work part's, of shape sh. */
static void mark_work(struct spmvd_calib_plan *plan, size_t pt0, size_t sh)
{
  for (size_t k = pt0; k < plan->n; k++) {
    plan->pt[k].place = work_shapes[sh].place;
    plan->pt[k].work = 1;
    plan->pt[k].shape = (int)sh;
  }
}

/* Fills order[0..n) with 0..n-1 by nnz[] ascending, ties in index order
 * (a stable insertion sort: n is a few hundred). */
static void order_by_nnz(const int64_t *nnz, size_t n, size_t *order)
{
  size_t a, b;

  for (a = 0; a < n; a++) {
    for (b = a; b > 0 && nnz[order[b - 1]] > nnz[a]; b--)
      order[b] = order[b - 1];
    order[b] = a;
  }
}

/* Adds one work-part matrix: shape sh, i strips of the thread strip st
 * (sv: csr-vector's), mean length pp, under every configuration. */
static void add_work_matrix(struct spmvd_calib_plan *plan, size_t sh,
                            double i, int pp, int64_t st, int64_t sv,
                            int cuda)
{
  int64_t rows = strip_rows(st, i);
  size_t k, pt0 = plan->n;

  add_point(plan, &vector_cfg, rows, (double)rows / (double)sv, pp,
            work_shapes[sh].dist, work_shapes[sh].cv);
  for (k = 0; k < NELEM(thread_cfgs); k++)
    if (cuda || !thread_cfgs[k].cuda_only)
      add_point(plan, &thread_cfgs[k].cfg, rows, i, pp,
                work_shapes[sh].dist, work_shapes[sh].cv);
  mark_work(plan, pt0, sh);
  plan->nmatrices++;
}

/* The work part of the plan: work_shapes x work_i x work_p by nonzeros,
 * while p->work_nnz (at most half of max_nnz_total) lasts; then the FEM
 * shape's larger matrices with half as much again. */
static void add_work(struct spmvd_calib_plan *plan,
                     const struct spmvd_calib_params *p, int64_t st,
                     int64_t sv, int cuda)
{
  enum { NW = NELEM(work_shapes) * NELEM(work_i) * NELEM(work_p) };
  int64_t nnz[NW], budget, spent, cap;
  size_t order[NW], a, t, sh;
  size_t ni = NELEM(work_i), np = NELEM(work_p);
  char taken[NW] = { 0 };
  int pass;

  budget = p->work_nnz < p->max_nnz_total / 2 ? p->work_nnz
                                              : p->max_nnz_total / 2;
  /* Index a = (shape * ni + i) * np + p. */
  for (a = 0; a < NW; a++)
    nnz[a] = strip_rows(st, work_i[(a / np) % ni]) *
             work_len(a / (ni * np), a % np);
  order_by_nnz(nnz, NW, order);
  /* Every shape up to the budget; then, with half as much again, the
   * larger near-diagonal matrices of the FEM shape, the sizes of the
   * ELLR-T paper's set (a few 10^4 to 10^5 rows of 50 to 500), which the
   * budget cuts first. */
  for (pass = 0; pass < 2; pass++) {
    cap = pass == 0 ? budget : budget / 2;
    for (spent = 0, t = 0; t < NW; t++) {
      a = order[t];
      sh = a / (ni * np);
      if (nnz[a] > p->max_nnz_matrix || taken[a] ||
          (pass == 1 && sh != WORK_FEM_SHAPE))
        continue;
      if (spent + nnz[a] > cap)
        break;
      taken[a] = 1;
      spent += nnz[a];
      add_work_matrix(plan, sh, work_i[(a / np) % ni], work_len(sh, a % np),
                      st, sv, cuda);
    }
    plan->total_nnz += spent;
  }
}

/* The mean row length that puts a matrix of rows rows of values dt at
 * share of an L2 of l2 bytes (values and 4-byte columns), at least 8. */
static int mid_len(int64_t rows, double share, double l2, enum spmv_dtype dt)
{
  double p = share * l2 / ((double)rows * (double)(spmv_dtype_size(dt) + 4));

  return p > 8 ? (int)lround(p) : 8;
}

/* The mid part of the plan: mid_shapes x mid_i x mid_l2 by nonzeros, while
 * p->mid_nnz (at most a third of max_nnz_total, so that a plan trimmed
 * to a short bound trims it too) lasts; none at 0 or without an L2. */
static void add_mid(struct spmvd_calib_plan *plan,
                    const struct spmvd_calib_params *p,
                    const struct spmvd_device_info *dev, enum spmv_dtype dt,
                    int64_t st)
{
  enum { NM = NELEM(mid_shapes) * NELEM(mid_i) * NELEM(mid_l2) };
  int64_t nnz[NM], rows[NM], spent = 0;
  int64_t budget = p->mid_nnz < p->max_nnz_total / 3 ? p->mid_nnz
                                                      : p->max_nnz_total / 3;
  double l2 = (double)dev->l2_bytes, i;
  size_t order[NM], a, t, sh;
  size_t ni = NELEM(mid_i), nl = NELEM(mid_l2);
  int len[NM];

  if (l2 <= 0)
    return;
  /* Index a = (shape * ni + i) * nl + share. */
  for (a = 0; a < NM; a++) {
    rows[a] = strip_rows(st, mid_i[(a / nl) % ni]);
    len[a] = mid_len(rows[a], mid_l2[a % nl], l2, dt);
    nnz[a] = rows[a] * len[a];
  }
  order_by_nnz(nnz, NM, order);
  for (t = 0; t < NM; t++) {
    a = order[t];
    if (nnz[a] > p->max_nnz_matrix)
      continue;
    if (spent + nnz[a] > budget)
      break;
    spent += nnz[a];
    sh = mid_shapes[a / (ni * nl)];
    i = mid_i[(a / nl) % ni];
    add_point(plan, &scalar_cfg, rows[a], i, len[a], work_shapes[sh].dist,
              work_shapes[sh].cv);
    mark_work(plan, plan->n - 1, sh);
    plan->nmatrices++;
  }
  plan->total_nnz += spent;
}

/* Makes the calibration plan for a device. */
int spmvd_calib_plan_new(const struct spmvd_device_info *dev,
                         enum spmv_dtype dt,
                         const struct spmvd_calib_params *p,
                         struct spmvd_calib_plan **out,
                         struct spmv_error *err)
{
  struct spmvd_calib_params def, vp;
  struct spmvd_calib_plan *plan;
  int64_t sv, st;
  size_t cap, a, b, k;
  int pass, cuda = strcmp(dev->backend, "cuda") == 0;

  *out = NULL;
  if (p == NULL) {
    spmvd_calib_params_default(&def);
    p = &def;
  }
  sv = spmvd_predict_strip(SPMV_FMT_CSR_VECTOR, dev);
  st = spmvd_predict_strip(SPMV_FMT_CSR_SCALAR, dev);
  if (sv <= 0 || st <= 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration: device '%s' reports %d SMs",
                          dev->name, dev->sms);
  if (spmv_dtype_size(dt) == 0)
    return spmv_error_set(err, SPMV_EINVAL, "calibration: bad value type");
  plan = calloc(1, sizeof *plan);
  cap = 2 * (NELEM(grid_p) + NELEM(vec_i)) +
        2 * (NELEM(grid_i1) + NELEM(grid_i2)) * NELEM(grid_p) *
            NELEM(thread_cfgs) +
        NELEM(work_shapes) * NELEM(work_i) * NELEM(work_p) *
            (NELEM(thread_cfgs) + 1) +
        NELEM(mid_shapes) * NELEM(mid_i) * NELEM(mid_l2);
  if (plan != NULL)
    plan->pt = calloc(cap, sizeof *plan->pt);
  if (plan == NULL || plan->pt == NULL) {
    spmvd_calib_plan_free(plan);
    return spmv_error_set(err, SPMV_ENOMEM, "calibration: out of memory");
  }
  plan->dtype = dt;
  /* csr-vector: P sweep at I = VEC_I_CAL, then I sweep at P = VEC_P_CAL,
   * within a quarter of the budget (its whole sweeps take about 104M
   * nonzeros on an H200, a fifth of the default): admitted first, they
   * took a trimmed budget whole, and the thread-per-row formats were left
   * without the two P and two I their fits need.  The two smallest of
   * each sweep come first, what its fit needs. */
  vp = *p;
  vp.max_nnz_total = p->max_nnz_total / 4;
  for (pass = 0; pass < 2; pass++) {
    for (a = 0; a < NELEM(grid_p); a++)
      if ((a < 2) == (pass == 0))
        add_vector_matrices(plan, &vp, sv, VEC_I_CAL, grid_p[a]);
    for (b = 0, k = 0; b < NELEM(vec_i); b++) {
      if (vec_i[b] == VEC_I_CAL)
        continue;
      if ((k++ < 2) == (pass == 0))
        add_vector_matrices(plan, &vp, sv, vec_i[b], VEC_P_CAL);
    }
  }
  /* Thread-per-row formats share each matrix.  First the least their
   * saddle needs (two I at each of two P, the smallest: a P with a
   * single I leaves its I x P term undetermined), so that a plan trimmed
   * to a short bound still fits every format; then the rest, small P
   * first. */
  for (a = 0; a < 2; a++)
    for (b = 0; b < 2; b++)
      add_grid_matrices(plan, p, st, grid_i1[b], grid_p[a], cuda);
  for (pass = 0; pass < 2; pass++) {
    const double *gi = pass == 0 ? grid_i1 : grid_i2;
    size_t ni = pass == 0 ? NELEM(grid_i1) : NELEM(grid_i2);

    for (a = 0; a < NELEM(grid_p); a++)
      for (b = 0; b < ni; b++)
        if (pass > 0 || a >= 2 || b >= 2)
          add_grid_matrices(plan, p, st, gi[b], grid_p[a], cuda);
  }
  add_work(plan, p, st, sv, cuda);
  add_mid(plan, p, dev, dt, st);
  *out = plan;
  return 0;
}

/* Frees a plan. */
struct spmvd_calib_plan *spmvd_calib_plan_free(struct spmvd_calib_plan *plan)
{
  if (plan != NULL) {
    free(plan->pt);
    free(plan);
  }
  return NULL;
}

/* Generates a point's matrix. */
struct spmv_csr *spmvd_calib_matrix(const struct spmvd_calib_point *pt,
                                    const struct spmvd_calib_params *p,
                                    struct spmv_error *err)
{
  struct spmvd_calib_params def;
  struct spmv_gen_spec spec;

  if (p == NULL) {
    spmvd_calib_params_default(&def);
    p = &def;
  }
  memset(&spec, 0, sizeof spec);
  spec.rows = pt->rows;
  /* Square, unless the rows are too few for their length. */
  spec.cols = pt->rows >= 4 * (int64_t)pt->p ? pt->rows : 4 * (int64_t)pt->p;
  spec.mean = pt->p;
  spec.cv = pt->cv;
  spec.dist = pt->dist;
  spec.place = pt->place;
  return spmv_gen_matching(&spec, p->seed + (uint64_t)pt->matrix, err);
}

/* A work-part point of one shape. */
void spmvd_calib_shape_point(int shape, int64_t rows, int p,
                             struct spmvd_calib_point *out)
{
  memset(out, 0, sizeof *out);
  out->rows = rows;
  out->p = p;
  out->dist = work_shapes[shape].dist;
  out->cv = work_shapes[shape].cv;
  out->place = work_shapes[shape].place;
  out->work = 1;
  out->shape = shape;
}

/* Whether a calibration times cfg on a matrix of profile prof. */
int spmvd_calib_applies(const struct spmv_config *cfg,
                        const struct spmv_profile *prof)
{
  return !((cfg->format == SPMV_FMT_ELL || cfg->format == SPMV_FMT_ELLR_T) &&
           prof->ell_fill > SPMVD_CALIB_MAX_FILL);
}

int spmvd_calib_point_applies(const struct spmvd_calib_point *pt)
{
  struct spmv_profile prof;

  memset(&prof, 0, sizeof prof);
  prof.ell_fill = pt->feat.nnz > 0 ? pt->feat.w_ell / pt->feat.nnz : 0;
  return spmvd_calib_applies(&pt->cfg, &prof);
}

const struct spmvd_calib_point *
spmvd_calib_point_of(const struct spmvd_calib_plan *plan,
                     const struct spmv_config *cfg)
{
  uintptr_t first, at = (uintptr_t)cfg;
  size_t k;

  if (plan == NULL || plan->n == 0)
    return NULL;
  first = (uintptr_t)&plan->pt[0].cfg;
  if (at < first || (at - first) % sizeof *plan->pt != 0)
    return NULL;
  k = (size_t)((at - first) / sizeof *plan->pt);
  return k < plan->n ? &plan->pt[k] : NULL;
}

/* Runs the plan's timings through ops. */
int spmvd_calib_run(struct spmvd_calib_plan *plan,
                    const struct spmvd_calib_params *p,
                    const struct spmvd_calib_ops *ops, void *ctx,
                    struct spmv_error *err)
{
  struct spmvd_calib_params def;
  struct spmv_profile prof;
  struct spmvd_pfeat feat;
  struct spmv_error e;
  struct spmv_csr *A;
  size_t k = 0, j;
  int ret;

  if (p == NULL) {
    spmvd_calib_params_default(&def);
    p = &def;
  }
  plan->skipped = 0;
  while (k < plan->n) {
    A = spmvd_calib_matrix(&plan->pt[k], p, err);
    if (A == NULL)
      return err != NULL && err->code != 0 ? err->code : SPMV_ENOMEM;
    if ((ret = spmv_profile_compute(A, &prof, err)) != 0) {
      spmv_csr_free(A);
      return ret;
    }
    spmvd_predict_features(A, &prof, plan->dtype, &feat);
    for (j = k; j < plan->n && plan->pt[j].matrix == plan->pt[k].matrix;
         j++) {
      struct spmvd_calib_point *pt = &plan->pt[j];

      pt->feat = feat;
      if (!spmvd_calib_applies(&pt->cfg, &prof)) {
        pt->ok = 0;
        pt->time_us = 0;
        if (ops->progress != NULL)
          ops->progress(ctx, (int)j + 1, (int)plan->n, pt);
        continue;
      }
      spmv_error_clear(&e);
      ret = ops->time(ctx, A, plan->dtype, &pt->cfg, &pt->time_us, &e);
      pt->ok = ret == 0 && pt->time_us > 0 && isfinite(pt->time_us);
      if (!pt->ok)
        pt->time_us = 0;
      if (ret == SPMV_EGPU_STICKY) {
        spmv_csr_free(A);
        return spmv_error_set(err, ret, "%s", e.msg);
      }
      if (ret == SPMV_ETIMEDOUT) {
        for (; j < plan->n; j++) {
          plan->pt[j].ok = 0;
          plan->pt[j].time_us = 0;
          plan->skipped++;
        }
        break;
      }
      if (ops->progress != NULL)
        ops->progress(ctx, (int)j + 1, (int)plan->n, pt);
    }
    spmv_csr_free(A);
    k = j;
  }
  return 0;
}

/* Solves the n x n system M x = r (M, r overwritten) by Gaussian
 * elimination with partial pivoting; returns -1 when singular. */
static int solve(double M[MAXB][MAXB], double r[MAXB], int n, double x[MAXB])
{
  int i, j, k, piv;
  double f, tmp, scale = 0;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      if (fabs(M[i][j]) > scale)
        scale = fabs(M[i][j]);
  if (scale == 0)
    return -1;
  for (k = 0; k < n; k++) {
    piv = k;
    for (i = k + 1; i < n; i++)
      if (fabs(M[i][k]) > fabs(M[piv][k]))
        piv = i;
    if (fabs(M[piv][k]) <= 1e-12 * scale)
      return -1;
    if (piv != k) {
      for (j = 0; j < n; j++) {
        tmp = M[k][j];
        M[k][j] = M[piv][j];
        M[piv][j] = tmp;
      }
      tmp = r[k];
      r[k] = r[piv];
      r[piv] = tmp;
    }
    for (i = k + 1; i < n; i++) {
      f = M[i][k] / M[k][k];
      for (j = k; j < n; j++)
        M[i][j] -= f * M[k][j];
      r[i] -= f * r[k];
    }
  }
  for (i = n - 1; i >= 0; i--) {
    f = r[i];
    for (j = i + 1; j < n; j++)
      f -= M[i][j] * x[j];
    x[i] = f / M[i][i];
  }
  return 0;
}

/*
 * Weighted least squares of t ~ sum_j x[j] * phi_j over samples (weights
 * 1/t^2, so that relative errors count: times span orders of magnitude).
 * basis(i, p, phi) writes the nb basis values.  Returns 0 or -1.
 */
static int lsq(const double *i, const double *p, const double *t, size_t n,
               int nb, void (*basis)(double, double, double *), double x[MAXB])
{
  double M[MAXB][MAXB] = { { 0 } }, r[MAXB] = { 0 }, phi[MAXB], w;
  size_t k;
  int a, b;

  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    w = 1.0 / (t[k] * t[k]);
    basis(i[k], p[k], phi);
    for (a = 0; a < nb; a++) {
      for (b = 0; b < nb; b++)
        M[a][b] += w * phi[a] * phi[b];
      r[a] += w * phi[a] * t[k];
    }
  }
  return solve(M, r, nb, x);
}

/* Saddle basis: I*P, P, I, 1. */
static void basis_saddle(double i, double p, double *phi)
{
  phi[0] = i * p;
  phi[1] = p;
  phi[2] = i;
  phi[3] = 1;
}

/* Line in P: P, 1. */
static void basis_p(double i, double p, double *phi)
{
  (void)i;
  phi[0] = p;
  phi[1] = 1;
}

/* Line in I: I, 1. */
static void basis_i(double i, double p, double *phi)
{
  (void)p;
  phi[0] = i;
  phi[1] = 1;
}

/* Counts distinct values among n (small n: quadratic is fine). */
static size_t distinct(const double *v, size_t n)
{
  size_t a, b, d = 0;

  for (a = 0; a < n; a++) {
    for (b = 0; b < a && v[b] != v[a]; b++)
      ;
    if (b == a)
      d++;
  }
  return d;
}

/* Mean relative error of f over the samples. */
static double mean_err(const struct spmvd_fit *f, const double *i,
                       const double *p, const double *t, size_t n)
{
  double s = 0;
  size_t k, m = 0;

  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    s += fabs(spmvd_fit_eval(f, i[k], p[k]) - t[k]) / t[k];
    m++;
  }
  return m ? s / (double)m : 0;
}

/* Fits the saddle T = (a*I + b)*P + (gc*I + gd). */
int spmvd_predict_fit_saddle(const double *i, const double *p,
                             const double *t, size_t n, struct spmvd_fit *f,
                             struct spmv_error *err)
{
  double x[MAXB];

  if (n < 4 || distinct(i, n) < 2 || distinct(p, n) < 2 ||
      lsq(i, p, t, n, 4, basis_saddle, x) != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit: %zu samples do not determine the saddle "
                          "(need 2 distinct I and 2 distinct P)", n);
  f->kind = SPMVD_FIT_SADDLE;
  f->a = x[0];
  f->b = x[1];
  f->gc = x[2];
  f->gd = x[3];
  f->npoints = (int)n;
  f->err_mean = mean_err(f, i, p, t, n);
  return 0;
}

/* Fits the vector form from the samples on the two sweeps. */
int spmvd_predict_fit_vector(const double *i, const double *p,
                             const double *t, size_t n, double i_cal,
                             double p_cal, struct spmvd_fit *f,
                             struct spmv_error *err)
{
  double *si = NULL, *sp = NULL, *stt = NULL, xp[MAXB], xi[MAXB], t0 = 0;
  size_t k, np = 0, ni = 0, n0 = 0;
  int ret = 0;

  si = malloc(2 * (n ? n : 1) * sizeof *si);
  sp = malloc(2 * (n ? n : 1) * sizeof *sp);
  stt = malloc(2 * (n ? n : 1) * sizeof *stt);
  if (si == NULL || sp == NULL || stt == NULL) {
    ret = spmv_error_set(err, SPMV_ENOMEM, "fit: out of memory");
    goto out;
  }
  /* The P sweep in [0, n), the I sweep in [n, 2n). */
  for (k = 0; k < n; k++) {
    if (i[k] == i_cal) {
      si[np] = i[k];
      sp[np] = p[k];
      stt[np++] = t[k];
    }
    if (p[k] == p_cal) {
      si[n + ni] = i[k];
      sp[n + ni] = p[k];
      stt[n + ni++] = t[k];
    }
    if (i[k] == i_cal && p[k] == p_cal && t[k] > 0) {
      t0 += t[k];
      n0++;
    }
  }
  if (distinct(sp, np) < 2 || distinct(si + n, ni) < 2 ||
      lsq(si, sp, stt, np, 2, basis_p, xp) != 0 ||
      lsq(si + n, sp + n, stt + n, ni, 2, basis_i, xi) != 0) {
    ret = spmv_error_set(err, SPMV_EINVAL,
                         "fit: csr-vector needs 2 distinct P at I = %g and "
                         "2 distinct I at P = %g", i_cal, p_cal);
    goto out;
  }
  f->kind = SPMVD_FIT_VECTOR;
  f->m = xp[0];
  f->c = xp[1];
  f->p = xi[0];
  f->q = xi[1];
  f->i_cal = i_cal;
  f->p_cal = p_cal;
  f->t0 = n0 ? t0 / (double)n0 : f->m * p_cal + f->c;
  if (!(f->t0 > 0)) {
    f->kind = SPMVD_FIT_NONE;
    ret = spmv_error_set(err, SPMV_EINVAL,
                         "fit: csr-vector calibration time t0 is not "
                         "positive");
    goto out;
  }
  f->npoints = (int)n;
  f->err_mean = mean_err(f, i, p, t, n);
out:
  free(si);
  free(sp);
  free(stt);
  return ret;
}

/* Descending order of row lengths (sell's sort within a window). */
static int len_desc(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

  return x < y ? 1 : x > y ? -1 : 0;
}

#define FEAT_GROUP 32     /* a warp of rows */
_Static_assert(SPMVD_FEAT_BLOCK % FEAT_GROUP == 0,
               "w_block's blocks are whole warps of rows");
#define FEAT_WINDOW 256   /* sell's sigma in the calibrated configuration */
#define FEAT_VEC_TPR 16   /* csr-vector's TPR in the calibrated configuration */
#define FEAT_STREAM_BS 128 /* csr-stream's calibrated configuration */
#define FEAT_STREAM_K 4
#define PATH_WARPS 8      /* warps of the longest rows path_x looks at */

/* The footprint of spmvd_pfeat.bytes. */
double spmvd_predict_footprint(double rows, double cols, double nnz,
                               enum spmv_dtype dt)
{
  double vs = (double)spmv_dtype_size(dt);

  return nnz * (vs + 4) + (rows + 1) * 8 + (rows + cols) * vs;
}

/* Warps jad_sectors() and warp_x_sectors() visit at most: beyond, every
 * k-th, scaled up by the entries (a full pass cost 10 ns per entry on a
 * 100M-entry matrix, two thirds of the features' time; sampled, 0.04 %
 * off). */
#define JAD_SAMPLE_WARPS 8192

/* A row and its length, for jad_order's sort. */
struct len_row {
  int64_t len, row;
};

/* Longer rows first, ties in row order. */
static int len_row_cmp(const void *a, const void *b)
{
  const struct len_row *x = a, *y = b;

  if (x->len != y->len)
    return x->len < y->len ? 1 : -1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* A's rows in jad's order into order[rows]: jad's own counting sort
 * (spmv_jad_perm) when the lengths are few against the rows, else a sort
 * of the rows in the same order (a row of 10^8 entries must not cost 800
 * MB of counters).  Returns 0 or -1 when out of memory. */
static int jad_order(const struct spmv_csr *A, int64_t rl_max, int32_t *order)
{
  int64_t r, *count;
  struct len_row *lr;

  if (rl_max <= 2 * A->rows + 64) {
    if ((count = malloc(((size_t)rl_max + 1) * sizeof *count)) == NULL)
      return -1;
    spmv_jad_perm(A, rl_max, count, order);
    free(count);
    return 0;
  }
  if ((lr = malloc((size_t)A->rows * sizeof *lr)) == NULL)
    return -1;
  for (r = 0; r < A->rows; r++) {
    lr[r].len = A->row_ptr[r + 1] - A->row_ptr[r];
    lr[r].row = r;
  }
  qsort(lr, (size_t)A->rows, sizeof *lr, len_row_cmp);
  for (r = 0; r < A->rows; r++)
    order[r] = (int32_t)lr[r].row;
  free(lr);
  return 0;
}

/* x's sectors that one warp of n <= FEAT_GROUP rows (row offsets b,
 * lengths l, borrowed) gathers over its steps: at each step one for the
 * first live lane and one for each live lane whose sector differs from
 * the live lane before it; *entries the same for the entries' own
 * sectors (a value's width, in CSR order).  The live lanes are kept in a
 * list, so a warp costs its entries, not 32 lanes for each step of its
 * longest row. */
static double warp_sectors(const struct spmv_csr *A, const int64_t *b,
                           const int64_t *l, int64_t n, int shift,
                           double *entries)
{
  int64_t live[FEAT_GROUP], d, j, m = 0, nl, prev, sec, pe, se;
  double total = 0;

  *entries = 0;
  for (j = 0; j < n; j++)
    if (l[j] > 0)
      live[m++] = j;
  for (d = 0; m > 0; d++) {
    prev = -1;
    pe = -1;
    for (nl = 0, j = 0; j < m; j++) {
      sec = A->col_idx[b[live[j]] + d] >> shift;
      total += sec != prev;
      prev = sec;
      se = (b[live[j]] + d) >> shift;
      *entries += se != pe;
      pe = se;
      if (l[live[j]] > d + 1)
        live[nl++] = live[j];
    }
    m = nl;
  }
  return total;
}

/* x_warp: the distinct sectors of x each warp of 32 rows touches, the rows
 * taken in order (NULL: row order), summed over the warps: over an even
 * sample of the warps, as jad_sectors samples, scaled to all entries; a
 * stamp per sector (the last warp that counted it) makes it one pass over
 * their entries.  Returns -1 when out of memory (the caller then uses the
 * per-row count). */
static double warp_x_sectors(const struct spmv_csr *A, const int32_t *order,
                             int shift)
{
  int64_t nsec = ((int64_t)A->cols >> shift) + 1, s, k, r, row, w, step;
  int32_t *stamp = malloc((size_t)nsec * sizeof *stamp), id;
  double total = 0, seen = 0;

  if (stamp == NULL)
    return -1;
  for (s = 0; s < nsec; s++)
    stamp[s] = -1;
  step = (A->rows / FEAT_GROUP + JAD_SAMPLE_WARPS - 1) / JAD_SAMPLE_WARPS;
  step = FEAT_GROUP * (step > 1 ? step : 1);
  for (w = 0; w < A->rows; w += step) {
    id = (int32_t)(w / FEAT_GROUP);
    for (r = w; r < w + FEAT_GROUP && r < A->rows; r++) {
      row = order != NULL ? order[r] : r;
      seen += (double)(A->row_ptr[row + 1] - A->row_ptr[row]);
      for (k = A->row_ptr[row]; k < A->row_ptr[row + 1]; k++) {
        s = A->col_idx[k] >> shift;
        if (stamp[s] != id) {
          stamp[s] = id;
          total += 1;
        }
      }
    }
  }
  free(stamp);
  return seen > 0 ? total * ((double)A->nnz / seen) : 0;
}

/*
 * x's sectors as jad's warps gather them: rows in descending length, ties
 * in row order (jad_order), 32 rows to a warp, and at each
 * step one sector for the first lane plus one for every lane whose sector
 * differs from the previous lane's.  Why: sorting by length scatters the
 * rows of a warp over the matrix, so neighbouring lanes no longer share
 * the sectors of x that neighbouring rows' columns share; the per-row
 * count cannot see that (the paper matrices with near-diagonal columns
 * ran jad 1.6-1.9x slower than it predicted on the H200).  *x_warp the
 * distinct sectors per warp in that order (warp_x_sectors).  Returns -1
 * when out of memory (the caller then uses the per-row counts).
 */
static double jad_sectors(const struct spmv_csr *A, int64_t rl_max, int shift,
                          double *first, double *x_warp)
{
  int32_t *order = malloc((size_t)(A->rows > 0 ? A->rows : 1) * sizeof *order);
  int64_t b[FEAT_GROUP], l[FEAT_GROUP], w, d, n, j, prev, sec, step;
  double total = 0, seen = 0, ent;

  if (order == NULL || jad_order(A, rl_max, order) != 0 ||
      (*x_warp = warp_x_sectors(A, order, shift)) < 0) {
    free(order);
    return -1;
  }
  step = (A->rows / FEAT_GROUP + JAD_SAMPLE_WARPS - 1) / JAD_SAMPLE_WARPS;
  step = FEAT_GROUP * (step > 1 ? step : 1);
  for (w = 0; w < A->rows; w += step) {
    n = A->rows - w < FEAT_GROUP ? A->rows - w : FEAT_GROUP;
    for (j = 0; j < n; j++) {
      b[j] = A->row_ptr[order[w + j]];
      l[j] = A->row_ptr[order[w + j] + 1] - b[j];
      seen += (double)l[j];
    }
    if (w == 0)
      *first = warp_sectors(A, b, l, n, shift, &ent);
    /* The lanes are in descending length: those live at step d are a
     * prefix, which shrinks to n. */
    for (d = 0; n > 0 && d < l[0]; d++) {
      while (l[n - 1] <= d)
        n--;
      prev = -1;
      for (j = 0; j < n; j++) {
        sec = A->col_idx[b[j] + d] >> shift;
        total += sec != prev;
        prev = sec;
      }
    }
  }
  free(order);
  return seen > 0 ? total * ((double)A->nnz / seen) : 0;
}

/* path_x: the most sectors of x along a warp of the longest rows (rl_max
 * set), over its first PATH_WARPS warps of that length; *path_m the
 * sectors of the entries that warp loads. */
static double path_sectors(const struct spmv_csr *A, int64_t rl_max,
                           int shift, double *path_m)
{
  int64_t b[FEAT_GROUP], l[FEAT_GROUP], r0, r, n, mx;
  double best = 0, s, ent;
  int seen = 0;

  for (r0 = 0; r0 < A->rows && seen < PATH_WARPS; r0 += FEAT_GROUP) {
    mx = 0;
    for (n = 0, r = r0; r < A->rows && r < r0 + FEAT_GROUP; r++, n++) {
      b[n] = A->row_ptr[r];
      l[n] = A->row_ptr[r + 1] - b[n];
      mx = l[n] > mx ? l[n] : mx;
    }
    if (mx != rl_max)
      continue;
    seen++;
    s = warp_sectors(A, b, l, n, shift, &ent);
    if (s > best || seen == 1) {
      best = s;
      *path_m = ent;
    }
  }
  return best;
}

/* The sum steps of the slowest warp of csr-stream's block of rows r0 ..
 * r0+nr (the kernel's spmv_stream_reduce: TPR the largest power of two up
 * to 32 with TPR * nr <= BS, rows taken by groups of TPR lanes in rounds,
 * a warp's round as long as its longest row's ceil(len / TPR)). */
static double stream_block_steps(const struct spmv_csr *A, int64_t r0,
                                 int64_t nr, double *rounds)
{
  int64_t tpr = 1, groups, first, g, w, len, steps, wmax = 0, per_warp;

  while (tpr < 32 && 2 * tpr * nr <= FEAT_STREAM_BS)
    tpr *= 2;
  groups = FEAT_STREAM_BS / tpr;
  per_warp = 32 / tpr;
  *rounds = (double)((nr + groups - 1) / groups);
  for (w = 0; w < groups; w += per_warp) {
    int64_t tot = 0;

    for (first = 0; first < nr; first += groups) {
      int64_t m = 0;

      for (g = w; g < w + per_warp && first + g < nr; g++) {
        len = A->row_ptr[r0 + first + g + 1] - A->row_ptr[r0 + first + g];
        steps = (len + tpr - 1) / tpr;
        m = steps > m ? steps : m;
      }
      tot += m;
    }
    wmax = tot > wmax ? tot : wmax;
  }
  return (double)wmax;
}

/* stream_steps' sums over the blocks of a cut. */
struct stream_sum {
  const struct spmv_csr *A;
  double w, path, rounds;
};

static void stream_sum_block(void *ctx, int64_t r0, int64_t r1)
{
  struct stream_sum *t = ctx;
  double r, s = stream_block_steps(t->A, r0, r1 - r0, &r);

  t->w += s;
  t->path = s > t->path ? s : t->path;
  t->rounds = r > t->rounds ? r : t->rounds;
}

/* csr-stream's sum steps over its cut at FEAT_STREAM_BS and FEAT_STREAM_K
 * (spmv_csr_stream_cut): *w the blocks' steps summed, *path the most,
 * *rounds the most rounds of one block. */
static void stream_steps(const struct spmv_csr *A, double *w, double *path,
                         double *rounds)
{
  struct stream_sum t = { A, 0, 0, 0 };

  spmv_csr_stream_cut(A, (int64_t)FEAT_STREAM_BS * FEAT_STREAM_K,
                      stream_sum_block, NULL, &t);
  *w = t.w;
  *path = t.path;
  *rounds = t.rounds;
}

#define PFEAT_COLUMN(m) { #m, offsetof(struct spmvd_pfeat, m) }
const struct spmvd_pfeat_column spmvd_pfeat_columns[SPMVD_PFEAT_NCOLUMNS] = {
  PFEAT_COLUMN(rows), PFEAT_COLUMN(nnz), PFEAT_COLUMN(rl_max),
  PFEAT_COLUMN(w_warp), PFEAT_COLUMN(w_sell), PFEAT_COLUMN(w_ell),
  PFEAT_COLUMN(w_vec), PFEAT_COLUMN(hyb_coo), PFEAT_COLUMN(sectors),
  PFEAT_COLUMN(empty), PFEAT_COLUMN(w_hyb), PFEAT_COLUMN(sectors_jad),
  PFEAT_COLUMN(path_x), PFEAT_COLUMN(path_x_jad), PFEAT_COLUMN(path_m),
  PFEAT_COLUMN(x_warp), PFEAT_COLUMN(x_warp_jad), PFEAT_COLUMN(w_stream),
  PFEAT_COLUMN(path_stream), PFEAT_COLUMN(path_rounds),
  PFEAT_COLUMN(w_block),
};

/* Feature i of spmvd_pfeat_columns in f. */
double spmvd_pfeat_value(const struct spmvd_pfeat *f, int i)
{
  double v;

  memcpy(&v, (const char *)f + spmvd_pfeat_columns[i].offset, sizeof v);
  return v;
}

/* Sets feature i of spmvd_pfeat_columns in f to v. */
void spmvd_pfeat_set(struct spmvd_pfeat *f, int i, double v)
{
  memcpy((char *)f + spmvd_pfeat_columns[i].offset, &v, sizeof v);
}

/* Computes the work model's features of A. */
void spmvd_predict_features(const struct spmv_csr *A,
                            const struct spmv_profile *prof,
                            enum spmv_dtype dt, struct spmvd_pfeat *out)
{
  int64_t win[FEAT_WINDOW], r, r0, k, len, mx, steps[2];
  int shift = spmv_dtype_size(dt) == 4 ? 3 : 2; /* columns per sector: 8/4 */
  double blk = 0;
  size_t n, j;

  memset(out, 0, sizeof *out);
  out->rows = (double)A->rows;
  out->nnz = (double)A->nnz;
  for (r0 = 0; r0 < A->rows; r0 += FEAT_GROUP) {
    mx = 0;
    for (r = r0; r < A->rows && r < r0 + FEAT_GROUP; r++) {
      len = A->row_ptr[r + 1] - A->row_ptr[r];
      mx = len > mx ? len : mx;
      if (len == 0)
        out->empty += 1;
      if (len > prof->hyb_k)
        out->hyb_coo += (double)(len - prof->hyb_k);
      /* Sectors: a new one wherever the sorted columns cross into one. */
      for (k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++)
        if (k == A->row_ptr[r] ||
            (A->col_idx[k] >> shift) != (A->col_idx[k - 1] >> shift))
          out->sectors += 1;
    }
    out->w_warp += (double)FEAT_GROUP * (double)mx;
    /* Its block's share of it (a block starts every SPMVD_FEAT_BLOCK
     * rows, a multiple of FEAT_GROUP). */
    blk = (r0 % SPMVD_FEAT_BLOCK == 0 ? 0 : blk) +
          (double)FEAT_GROUP * (double)mx;
    out->w_block = blk > out->w_block ? blk : out->w_block;
    out->rl_max = (double)mx > out->rl_max ? (double)mx : out->rl_max;
    /* csr-vector: two rows per warp at TPR 16, the warp as slow as the
     * longer of each pair. */
    for (r = r0; r < A->rows && r < r0 + FEAT_GROUP; r += 2) {
      for (j = 0; j < 2; j++) {
        len = r + (int64_t)j < A->rows
                  ? A->row_ptr[r + j + 1] - A->row_ptr[r + j]
                  : 0;
        steps[j] = (len + FEAT_VEC_TPR - 1) / FEAT_VEC_TPR;
      }
      out->w_vec += 32.0 * (double)(steps[0] > steps[1] ? steps[0] : steps[1]);
    }
  }
  out->w_ell = (double)A->rows * out->rl_max;
  stream_steps(A, &out->w_stream, &out->path_stream, &out->path_rounds);
  out->sectors_jad = jad_sectors(A, (int64_t)out->rl_max, shift,
                                 &out->path_x_jad, &out->x_warp_jad);
  out->path_x = path_sectors(A, (int64_t)out->rl_max, shift, &out->path_m);
  out->x_warp = warp_x_sectors(A, NULL, shift);
  if (out->sectors_jad < 0) {
    out->sectors_jad = out->sectors;
    out->path_x_jad = out->path_x;
    out->x_warp_jad = out->sectors;
  }
  if (out->x_warp < 0)
    out->x_warp = out->sectors;
  out->bytes = spmvd_predict_footprint((double)A->rows, (double)A->cols,
                                       (double)A->nnz, dt);
  out->hyb_k = (double)prof->hyb_k;
  out->w_hyb = (double)A->rows * (double)prof->hyb_k;
  for (r0 = 0; r0 < A->rows; r0 += FEAT_WINDOW) {
    n = 0;
    for (r = r0; r < A->rows && r < r0 + FEAT_WINDOW; r++)
      win[n++] = A->row_ptr[r + 1] - A->row_ptr[r];
    qsort(win, n, sizeof win[0], len_desc);
    for (j = 0; j < n; j += FEAT_GROUP)
      out->w_sell += (double)FEAT_GROUP * (double)win[j];
  }
}

/* Whether format f runs a thread per row through whole rows (path_x is
 * its longest path; not hyb, whose ELL part stops at its width K and
 * whose long rows' rest goes to the COO part). */
static int per_row_thread(enum spmv_format f)
{
  return f == SPMV_FMT_CSR_SCALAR || f == SPMV_FMT_ELLR_T ||
         f == SPMV_FMT_ELL || f == SPMV_FMT_SELL;
}

/* csr-scalar's L1 term: the share of a full SM's lanes whose two lines
 * fit the L1, and the mean row length from which a lane's row spans a
 * line of its 4-byte columns (and so of its values, in either type).
 * Replayed on calib-points-h100-v59-f64 against eval-h100-v57..v59,
 * csr-scalar's f64 error fell from 7.0-7.4 to 6.2-6.6 % with rows of 32
 * against 16 (6.4-6.8 at 20, 7.2-7.5 at 48); f32's moved by 0.1 at most
 * (calib-points-h100-v52).  On the live calibrations' points of two H200
 * evaluations (calib-points-h200-v93, v94) and the H100's v77, v81 and
 * v87, csr-scalar's replayed error fell 0.1-0.3 points on every one of
 * the nine tables with the share from 0.32 against 0.4 (v94 f64 4.6 ->
 * 4.5 %, f32 7.9 -> 7.7; v93 f64 5.3 -> 5.1); from 0.25 or 0.2 the
 * H100's f64 rose (eval-h200-v93-v95.md). */
#define SCALAR_L1_OCC 0.32
#define SCALAR_LINE_ROW 32

/* A thread's longest row read from DRAM (ellr-t, jad): rl_max times the
 * share of a layout of lb bytes beyond what the L2 keeps of data it only
 * reads (about half of it: probe-l2-h200.md); 0 without an L2. */
static double dram_path(double lb, double l2_bytes, double rl_max)
{
  double kept = l2_bytes / 2;

  return l2_bytes > 0 && lb > kept ? (1 - kept / lb) * rl_max : 0;
}

/* csr-scalar's L2 cliff: 0 for a layout of lb bytes up to
 * SCALAR_CLIFF_LO of the L2, 1 from SCALAR_CLIFF_HI of it, linear
 * between; 0 without an L2.  On the H100's points of a few warps a SM
 * the step began past 0.6 of the L2 (2703 rows, f64: half way at 0.6),
 * was not yet taken at 0.7 (16220 rows), and was whole by 0.79 and 0.9
 * (calib-points-h100-v79, v81); of the ramps 0.6-0.8, 0.65-0.85 and
 * 0.7-0.9, 0.65-0.85 fitted v79's csr-scalar points best (6.5 against
 * 6.9 and 7.0 %; eval-h100-v79-v81.md). */
#define SCALAR_CLIFF_LO 0.65
#define SCALAR_CLIFF_HI 0.85
static double scalar_cliff(double lb, double l2_bytes)
{
  double r;

  if (l2_bytes <= 0)
    return 0;
  r = (lb - SCALAR_CLIFF_LO * l2_bytes) /
      ((SCALAR_CLIFF_HI - SCALAR_CLIFF_LO) * l2_bytes);
  return r < 0 ? 0 : r > 1 ? 1 : r;
}

/* The work model's terms of format f. */
void spmvd_predict_work_basis(const struct spmv_config *cfg, double l2_bytes,
                              double threads, const struct spmvd_pfeat *x,
                              double phi[SPMVD_WORK_TERMS])
{
  double w = 0, cap, lanes, occ;
  double sect = cfg->format == SPMV_FMT_JAD ? x->sectors_jad : x->sectors;
  /* The share of the device's threads the rows occupy, at most 1 (0 when
   * the threads are unknown). */
  double share = threads > 0 ? fmin(x->rows / threads, 1) : 0;

  switch (cfg->format) {
  case SPMV_FMT_CSR_SCALAR:
  case SPMV_FMT_ELLR_T:
    w = x->w_warp;
    break;
  case SPMV_FMT_CSR_VECTOR:
    w = x->w_vec;
    break;
  case SPMV_FMT_ELL:
    w = x->w_ell;
    break;
  case SPMV_FMT_SELL:
    w = x->w_sell;
    break;
  case SPMV_FMT_HYB:
    w = x->w_hyb;
    break;
  default:
    break;
  }
  phi[0] = 1;
  phi[1] = x->rows;
  /* Up to one wave of the device's threads more rows are more threads
   * running side by side, not more time, for the kernels that give a row
   * its own threads (replayed on the committed H200 calibration points:
   * csr-adaptive 5.0-5.2 to 4.3-4.7 %, ell f32 -0.5, hyb f64 -0.5 points,
   * no format worse by more than 0.2; eval-h100-v38-v45.md). */
  if (threads > 0 &&
      (per_row_thread(cfg->format) || cfg->format == SPMV_FMT_HYB ||
       cfg->format == SPMV_FMT_CSR_ADAPTIVE))
    phi[1] = x->rows > threads ? x->rows - threads : 0;
  phi[2] = x->nnz;
  phi[3] = w;
  /* A thread of HYB's ELL kernel steps through hyb_k entries at most. */
  phi[4] = cfg->format == SPMV_FMT_HYB ? x->hyb_k : x->rl_max;
  /* csr-adaptive gives a row of length L 2^k lanes, the fewest
   * that leave each lane 8 entries (kernels/csr_adaptive.c), so its
   * longest row's path grows with the reduction's log2 steps, not with L:
   * karate (17 entries a row at most) and dwt_992 (18) ran 9-10 % faster
   * than rl_max predicted, rdb3200l (6) and crack (9) 6-7 % slower.
   * Replayed on the 13 committed H200 tables of kernels 17 with the
   * bootstrap trees, csr-adaptive's mean error was 4.9 % with rl_max and
   * 4.5 % with this (bagging-h200.md); the reduction's steps themselves,
   * ceil(L / 2^k) + k, fitted worse than rl_max. */
  if (cfg->format == SPMV_FMT_CSR_ADAPTIVE)
    phi[4] = log2(1 + x->rl_max);
  phi[5] = sect;
  /* A second kernel: HYB's COO part when there is one; csr-stream's sum of
   * the chunks of rows longer than a block holds. */
  phi[6] = 0;
  /* hyb's COO part, past its two launches, costs more with its
   * entries long before their count does: about 3.8 us over the ELL part
   * for crack's one entry, 5.5 for a calibration point's thousand, 6.5
   * for ten thousand (H200, f32).  A fit with one step for all of them
   * took the points' 5.5-7 us and put crack 25 % over its time, mhd3200b
   * (1584 entries) 16 %.  The step grows by 5 % of itself for each
   * doubling of the entries; replayed on the 13 committed H200 tables of
   * kernels 17 (with the bootstrap trees) hyb's mean error fell from 4.4
   * to 3.8 %, its worst f32 table from 5.2 to 4.7 (bagging-h200.md; 2,
   * 3 and 10 % a doubling left 4.0, 3.9 and 4.1 %, 20 and 40 % 4.4 and
   * 4.8, the log as a term of its own in the sectors' place 4.0). */
  if (cfg->format == SPMV_FMT_HYB && x->hyb_coo > 0)
    phi[6] = 1 + 0.05 * log2(1 + x->hyb_coo);
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16) {
    cap = (double)(cfg->bs > 0 ? cfg->bs : SPMV_STREAM_BS) *
          (double)(cfg->param > 0 ? cfg->param : SPMV_STREAM_K);
    phi[6] = x->rl_max > cap ? 1 : 0;
  }
  /* csr-scalar's lanes past the L1.  A lane keeps a line of its
   * row's values and one of its columns while it walks them (the kernel
   * reads them through the L1: spmv_keep_entries); once a row spans a
   * line (16 f64 values) and the resident lanes' lines overflow the L1
   * (about 0.4 of a full SM: 0.4 x 2048 x 2 x 128 bytes is 210 KB), a
   * line is gone before its lane comes back, and a near-diagonal matrix
   * loses what its few x sectors saved.  On the H100 calibration points
   * (calib-points-h100-v46), rows of 270336 near the diagonal ran 5.5 ps
   * an entry at a mean length of 8, 16 ps from 15 up, as fast as random
   * columns; the share of the lanes beyond the L1 times the entries x
   * does not cost (nnz - sectors) took csr-scalar's replayed error from
   * 10.1 to 8.9 % (f64); eval-h100-v46-v49.md. */
  if (cfg->format == SPMV_FMT_CSR_SCALAR &&
      x->nnz >= SCALAR_LINE_ROW * x->rows && share > SCALAR_L1_OCC &&
      x->nnz > x->sectors)
    phi[6] = (1 - SCALAR_L1_OCC / share) * (x->nnz - x->sectors);
  /* ellr-t's longest row from DRAM.  A thread walks its row
   * alone, one step after another, through an interleaved layout padded
   * to the longest row (as ELL's, rows x rl_max slots, about the CSR's
   * bytes times w_ell / nnz); once that layout outgrows what the L2 keeps
   * of data it only reads (dram_path), a growing share of the steps waits
   * on DRAM.  Skewed matrices with a few long
   * rows ran 35-45 % slower than predicted without it (rajat01: 1442
   * steps in 221 us).  Replayed on calib-points-h100-v46 against
   * eval-h100-v46..v48, ellr-t's error fell from 6.0-7.1 to 4.8-5.5 %
   * in all six; against the whole L2 it fell in f64 only, against a third
   * of it f32 rose to 9 % (eval-h100-v46-v49.md). */
  if (cfg->format == SPMV_FMT_ELLR_T && x->nnz > 0)
    phi[6] = dram_path(x->bytes * x->w_ell / x->nnz, l2_bytes, x->rl_max);
  /* jad's longest row from DRAM, as ellr-t's; its
   * layout has no padding, so it is the CSR's bytes.  Four diagonals at a
   * time (the kernel since SPMV_KERNEL_VERSION 11), a thread still waits
   * on its entries once for each four.  On the H100's points of that
   * kernel (calib-points-h100-v50) jad's fit error fell from 3.5 to 3.0 %
   * (f64) and 2.9 to 2.4 % (f32); replayed against eval-h100-v50, timed
   * on another H100, f64 went 4.0 to 4.7 % and f32 5.0 to 4.3; the old
   * kernel's replays fell 10.5 to 9.3 and 10.0 to 8.9 % (eval-h100-v50.md). */
  if (cfg->format == SPMV_FMT_JAD)
    phi[6] = dram_path(x->bytes, l2_bytes, x->rl_max);
  phi[7] = cfg->format == SPMV_FMT_HYB ? x->hyb_coo : 0;
  /* A thread per row, or csr-adaptive's blocks of rows in row order: each
   * warp keeps the x of its 32 rows in the L1, and the more warps share an
   * SM the less of it stays.  Near-diagonal columns keep few sectors a
   * warp; FEM matrices' rows of far-apart nodes keep many, however few
   * each row touches (csr-scalar took pwtk and shipsec1 for near-diagonal
   * ones and ran them 2.2-2.5x slower than predicted; csr-stream's
   * replays did not move: predictor-anchor-h200.md). */
  if (per_row_thread(cfg->format) || cfg->format == SPMV_FMT_CSR_ADAPTIVE)
    phi[7] = share * x->x_warp;
  /* csr-stream's blocks and coo's threads walk rows in order
   * over entries laid side by side, so neighbouring rows' x comes from
   * the sectors a group of them shares, whatever the device's occupancy:
   * x_warp as it is.  Replayed on the H100's points against their
   * evaluations (calib-points-h100-v51 against eval-h100-v51, v52
   * against v52), csr-stream's error fell from 7.0-7.1 to 5.4 and 6.0 %
   * (f64) and from 6.9-7.0 to 5.1 and 5.6 % (f32), its worst matrix from
   * 27-29 to 15-19 %; coo's from 5.9 and 7.7 to 3.4 and 7.6 % (f64), 2.7
   * and 7.5 to 2.2 and 7.2 % (f32).  For csr-vector and csr-merge the
   * same term was mixed (eval-h100-v52.md). */
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16 || cfg->format == SPMV_FMT_COO)
    phi[7] = x->x_warp;
  /* jad's warps, of rows by length: x once a warp, as it would come were
   * it kept for the warp's life (replayed, the occupancy weight fitted
   * f32 worse and f64 no better). */
  if (cfg->format == SPMV_FMT_JAD)
    phi[7] = x->x_warp_jad;
  /* Beyond the L2, a growing share of x's sectors comes from DRAM. */
  phi[8] = l2_bytes > 0 && x->bytes > l2_bytes
               ? (1 - l2_bytes / x->bytes) * sect
               : 0;
  /* The longest warp of a launch with few warps: its steps wait on the
   * sectors its lanes load, one step after another: x's, or csr-scalar's
   * own entries, a row apart for each lane (which fit it better,
   * eval-h200-v25.md). */
  phi[9] = 0;
  if (cfg->format == SPMV_FMT_JAD)
    phi[9] = x->path_x_jad;
  else if (cfg->format == SPMV_FMT_CSR_SCALAR)
    phi[9] = x->path_m;
  else if (per_row_thread(cfg->format))
    phi[9] = x->path_x;
  /* The more of the device's threads the rows occupy, the more warps share
   * an SM's L1 and the less a gathered sector stays there for the next
   * step: x's sectors weighted by that occupancy (1 at a full device). */
  lanes = cfg->format == SPMV_FMT_CSR_VECTOR && cfg->tpr > 0 ? cfg->tpr : 1;
  occ = threads > 0 ? x->rows * lanes / threads : 0;
  phi[10] = (occ < 1 ? occ : 1) * sect;
  /* csr-scalar past the L2's cliff.  Its lanes walk their rows
   * side by side, so a product sweeps the whole matrix before it reads
   * any line again, and once the matrix outgrows what the L2 keeps of
   * it the lines all come from DRAM: on the H100 the time per step of
   * the longest row doubled between 32 and 45 MB and stayed there to
   * 300 MB, where the share of the matrix beyond half the L2 grows
   * smoothly (calib-points-h100-v79).  Its warp work and its
   * longest row, each times that step (scalar_cliff), in place of x's
   * sectors from DRAM and the occupancy-weighted sectors. */
  if (cfg->format == SPMV_FMT_CSR_SCALAR) {
    double r = scalar_cliff(x->bytes, l2_bytes);

    phi[8] = r * x->w_warp;
    phi[10] = r * x->rl_max;
  }
  /* csr-stream's sums.  A row block's rows are summed by groups
   * of lanes in rounds, so one long row among many short ones holds its
   * warp for ceil(len / TPR) steps at a TPR of 1 or 2: the blocks' steps
   * in all (w_stream) and along the slowest block, which a launch of one
   * wave waits for (path_stream).  Without them the work model had no
   * term that sees a block's shape, and ran 9-17 % slow or fast on small
   * irregular matrices (watt_2, rajat19, tols4000, Groebner_id2003_aug).
   * Replayed on the plan's points timed on an H100 against
   * eval-h100-v86, csr-stream's error fell from 5.3 to 4.7 % (f64) and
   * 5.4 to 4.6 % (f32), no other format moved (basis10-replay-h100.md). */
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16) {
    phi[3] = x->w_stream;
    phi[9] = x->path_stream;
    /* A block of more rows than its groups of lanes sums
     * them in rounds, each a pass of every lane over the staged
     * products, so a block of 512 one-entry rows takes four (Pd,
     * tols4000, zenios, hep-th ran 7-13 % slower than predicted, while
     * blocks of one round ran 5-8 % faster).  The block with the most
     * rounds (path_rounds) takes the slot of x's sectors, which stay in
     * the occupancy-weighted term (phi[10], the same count once the
     * rows fill the device).  Replayed on the 11 committed tables of
     * live and plan calibrations (H200 v93-v95, H100 v77, v81, v87),
     * csr-stream's error fell from 3.9-5.8 to 2.9-4.7 %, on every one;
     * in a twelfth slot of its own it fell as far but fitted a leaf
     * with zenios 107 % high (basis13-replay.md). */
    phi[5] = x->path_rounds;
  }
  /* hyb's ELL part is a thread per row as ell's is, each warp
   * keeping the x of its 32 rows in the L1, so it gets their term, x_warp
   * times the share of the device's threads the rows occupy, in its path
   * slot (its own slot of that term holds the COO part's entries).
   * Replayed on calib-points-h100-v87 against eval-h100-v86..v88, hyb's
   * error fell from 4.0-4.2 to 3.5-3.7 % (f64) and 5.7-6.1 to 4.8-5.1 %
   * (f32), its fit on its own points from 4.1 to 3.7 and 5.1 to 4.5 %
   * (basis10-replay-h100.md). */
  if (cfg->format == SPMV_FMT_HYB)
    phi[9] = share * x->x_warp;
}

/* The term of format cfg's basis that only some calibrations' points
 * carry, and the term its share is taken of (leaf_fit's guard), or -1:
 * csr-scalar's L1 term of the entries, ellr-t's and jad's DRAM paths of
 * the longest row. */
static int guarded_term(const struct spmv_config *cfg, int *ref)
{
  *ref = 2;
  if (cfg->format == SPMV_FMT_CSR_SCALAR)
    return 6;
  if (cfg->format == SPMV_FMT_ELLR_T || cfg->format == SPMV_FMT_JAD) {
    *ref = 4;
    return 6;
  }
  return -1;
}

/* The value a split compares. */
double spmvd_split_value(enum spmvd_split s, const struct spmvd_pfeat *x)
{
  switch (s) {
  case SPMVD_SPLIT_ROWS:
    return x->rows;
  case SPMVD_SPLIT_WORK:
    return x->rows + x->nnz;
  case SPMVD_SPLIT_RLMAX:
    return x->rl_max;
  case SPMVD_SPLIT_MEAN:
    return x->rows > 0 ? x->nnz / x->rows : 0;
  default:
    return 0;
  }
}

static const char *const split_names[SPMVD_SPLIT_COUNT] = {
  "leaf", "rows", "work", "rl_max", "mean"
};

const char *spmvd_split_name(enum spmvd_split s)
{
  return s >= 0 && s < SPMVD_SPLIT_COUNT ? split_names[s] : "?";
}

int spmvd_split_parse(const char *name, enum spmvd_split *out)
{
  int s;

  for (s = 0; name != NULL && s < SPMVD_SPLIT_COUNT; s++)
    if (strcmp(name, split_names[s]) == 0) {
      *out = (enum spmvd_split)s;
      return 0;
    }
  return -1;
}

/* The busiest SM's blocks against an even spread (spmvd_predict.h). */
double spmvd_predict_block_share(const struct spmv_config *cfg, double rows,
                                 double sms)
{
  double b;

  if (cfg->bs <= 0 || !(sms > 0) || !(rows > 0))
    return 1;
  b = ceil(rows / cfg->bs);
  return ceil(b / sms) * sms / b;
}

/*
 * The terms of fit f at features x.  csr-scalar's lanes walk a
 * row each, so every load of a warp asks its SM's L1 for 32 sectors, and
 * a launch of f32 values waits for its busiest SM: on an H200 the paper's
 * FEM twins and the calibration's FEM points of 13517 to 270336 rows ran
 * 380-470 ps a lane-step of the busiest SM's blocks (w_warp x ceil(B /
 * 132) / B), pdb1HYS's 143 blocks, two on 11 SMs, as long as 264 would
 * take, where the device's totals read it 26 % fast.  Its throughput
 * terms times the block share took csr-scalar's replayed error down on
 * all nine f32 tables (H200 v93-v98, v100 6.4 -> 5.4 %, v98 5.7 -> 5.3;
 * H100 v77, v87), and up on six of the eight f64 ones (H100 v77 4.1 ->
 * 6.0 %), so fits of 8-byte values keep the totals
 * (block-share-h200.md).  The past-the-cliff warp work stays a total:
 * DRAM is the device's.
 */
static void fit_basis(const struct spmvd_fit *f, const struct spmv_config *cfg,
                      const struct spmvd_pfeat *x, double phi[SPMVD_WORK_TERMS])
{
  double q;

  spmvd_predict_work_basis(cfg, f->l2_bytes, f->threads, x, phi);
  if (cfg->format != SPMV_FMT_CSR_SCALAR || f->value_bytes != 4)
    return;
  q = spmvd_predict_block_share(cfg, x->rows, f->sms);
  /* With no SM holding two blocks the launch waits for the
   * heaviest one, which an even share misses where blocks differ:
   * Groebner_id2003_aug holds 46 % of its entries in one of its 20
   * blocks.  Replayed on the nine H200 f32 tables (points refeatured),
   * csr-scalar's error fell on eight and held on v94 (v98 5.3 -> 4.6 %,
   * v100 5.4 -> 5.0, v102 4.6 -> 4.3, v104 5.6 -> 5.2; v95 6.4 -> 5.2);
   * Groebner -23.6 -> -9.7 % on v104 (block-share-h200.md). */
  if (cfg->bs == SPMVD_FEAT_BLOCK && x->w_block > 0 &&
      x->w_warp > 0 && ceil(x->rows / cfg->bs) <= f->sms)
    q = f->sms * x->w_block / x->w_warp;
  phi[2] *= q;
  phi[3] *= q;
  phi[5] *= q;
  phi[6] *= q;
  phi[7] *= q;
}

/* The tree's leaf for features x. */
static int tree_leaf(const struct spmvd_tree *w, const struct spmvd_pfeat *x)
{
  int i = 0;

  while (i < SPMVD_TREE_NODES && w->split[i] != SPMVD_SPLIT_NONE &&
         2 * i + 2 < SPMVD_TREE_NODES)
    i = spmvd_split_value((enum spmvd_split)w->split[i], x) <= w->thr[i]
            ? 2 * i + 1
            : 2 * i + 2;
  return i;
}

/* Tree w's time for terms phi of features x. */
static double tree_eval(const struct spmvd_tree *w, const struct spmvd_pfeat *x,
                        const double phi[SPMVD_WORK_TERMS])
{
  double t = 0;
  int j, i = tree_leaf(w, x);

  for (j = 0; j < SPMVD_WORK_TERMS; j++)
    t += w->wc[i][j] * phi[j];
  return t;
}

/* The work model at features x: its tree's time alone, or with its
 * bootstrap trees the mean of their and its times but the least and the
 * greatest.  A resample can leave a leaf to extrapolate wildly: one of
 * nine trees put an H100 f64 matrix at 157 % over its time, and the plain
 * mean took csr-vector's replayed error from 4.0 to 8.7 % (4.1 trimmed;
 * bagging-h200.md). */
static double work_eval(const struct spmvd_fit *f, const struct spmvd_pfeat *x)
{
  double phi[SPMVD_WORK_TERMS], t, lo, hi, sum;
  int b;

  fit_basis(f, &f->cfg, x, phi);
  t = tree_eval(&f->tree, x, phi);
  if (f->nbag < 2)
    return f->nbag == 0 ? t : (t + tree_eval(&f->bag[0], x, phi)) / 2;
  lo = hi = sum = t;
  for (b = 0; b < f->nbag; b++) {
    double tb = tree_eval(&f->bag[b], x, phi);

    sum += tb;
    lo = tb < lo ? tb : lo;
    hi = tb > hi ? tb : hi;
  }
  return (sum - lo - hi) / (f->nbag - 1);
}

/*
 * Weighted least squares (weights 1/t^2) of t over the terms on[] of the
 * samples' bases phi (n x SPMVD_WORK_TERMS, row-major) into c (0 off the
 * terms).  Columns are scaled to 1 (the counts span twelve orders of
 * magnitude) and a trace-relative ridge of 1e-10 keeps collinear terms
 * (equal-length rows make w_warp equal nnz) solvable.  Returns 0 or -1.
 */
static int work_lsq(const double *phi, const double *t, size_t n,
                    const int on[SPMVD_WORK_TERMS], double c[SPMVD_WORK_TERMS])
{
  double M[MAXB][MAXB] = { { 0 } }, r[MAXB] = { 0 }, x[MAXB], sc[MAXB];
  double v[MAXB], w, tr = 0;
  int idx[MAXB], nb = 0, a, b;
  size_t k;

  for (a = 0; a < SPMVD_WORK_TERMS; a++) {
    c[a] = 0;
    if (!on[a])
      continue;
    sc[nb] = 0;
    for (k = 0; k < n; k++)
      if (fabs(phi[k * SPMVD_WORK_TERMS + a]) > sc[nb])
        sc[nb] = fabs(phi[k * SPMVD_WORK_TERMS + a]);
    if (sc[nb] > 0)
      idx[nb++] = a;
  }
  if (nb == 0)
    return -1;
  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    w = 1.0 / (t[k] * t[k]);
    for (a = 0; a < nb; a++)
      v[a] = phi[k * SPMVD_WORK_TERMS + idx[a]] / sc[a];
    for (a = 0; a < nb; a++) {
      for (b = 0; b < nb; b++)
        M[a][b] += w * v[a] * v[b];
      r[a] += w * v[a] * t[k];
    }
  }
  for (a = 0; a < nb; a++)
    tr += M[a][a];
  for (a = 0; a < nb; a++)
    M[a][a] += 1e-10 * tr / nb;
  if (solve(M, r, nb, x) != 0)
    return -1;
  for (a = 0; a < nb; a++)
    c[idx[a]] = x[a] / sc[a];
  return 0;
}

/* A term that only some calibrations' points carry (csr-scalar's lanes
 * past the L1) enters a leaf only where GUARD_POINTS of its
 * points hold it at GUARD_SHARE of their entries or more.  A leaf of
 * random columns holds it at a few entries in 10^4 (x sectors shared by
 * chance); fitted to those, it took a coefficient 10^4 times too large
 * and predicted near-diagonal matrices 100x too slow (the H200's
 * calib-points-h200-v8, which has no near-diagonal points:
 * check_predict_replay.sh).  Four points instead of two dropped it from
 * an f32 leaf of the H100's plan that it helped (8.1 -> 8.6 %). */
#define GUARD_POINTS 2
#define GUARD_SHARE 0.1

/* A leaf's line over the samples idx[0 .. n) of the bases phi (times t):
 * least squares over the terms, dropping the most negative coefficient
 * until none is (a greedy non-negative fit: a time never falls as a count
 * grows), into c; its summed relative error into *esum.  Term guard (-1:
 * none) enters only as GUARD_POINTS says, its share taken of term ref.
 * sub is scratch of n bases.
 * Returns 0 or -1 when no non-negative line fits. */
static int leaf_fit(const double *phi, const double *t, const size_t *idx,
                    size_t n, int guard, int ref, double *sub, double *tsub,
                    double c[SPMVD_WORK_TERMS], double *esum)
{
  double cmax[SPMVD_WORK_TERMS] = { 0 }, p;
  int on[SPMVD_WORK_TERMS], j, worst, left = SPMVD_WORK_TERMS, held = 0;
  size_t k;

  for (k = 0; k < n; k++) {
    memcpy(&sub[k * SPMVD_WORK_TERMS], &phi[idx[k] * SPMVD_WORK_TERMS],
           SPMVD_WORK_TERMS * sizeof *sub);
    tsub[k] = t[idx[k]];
    for (j = 0; j < SPMVD_WORK_TERMS; j++)
      if (fabs(sub[k * SPMVD_WORK_TERMS + j]) > cmax[j])
        cmax[j] = fabs(sub[k * SPMVD_WORK_TERMS + j]);
  }
  for (j = 0; j < SPMVD_WORK_TERMS; j++)
    on[j] = 1;
  if (guard >= 0) {
    for (k = 0; k < n; k++)
      if (sub[k * SPMVD_WORK_TERMS + guard] >=
          GUARD_SHARE * sub[k * SPMVD_WORK_TERMS + ref] &&
          sub[k * SPMVD_WORK_TERMS + guard] > 0)
        held++;
    if (held < GUARD_POINTS) {
      on[guard] = 0;
      left--;
    }
  }
  for (;;) {
    if (left == 0 || work_lsq(sub, tsub, n, on, c) != 0)
      return -1;
    worst = -1;
    for (j = 0; j < SPMVD_WORK_TERMS; j++)
      if (c[j] < 0 && (worst < 0 || c[j] * cmax[j] < c[worst] * cmax[worst]))
        worst = j;
    if (worst < 0)
      break;
    on[worst] = 0;
    left--;
  }
  *esum = 0;
  for (k = 0; k < n; k++) {
    if (!(tsub[k] > 0))
      continue;
    for (p = 0, j = 0; j < SPMVD_WORK_TERMS; j++)
      p += c[j] * sub[k * SPMVD_WORK_TERMS + j];
    *esum += fabs(p - tsub[k]) / tsub[k];
  }
  return 0;
}

#define TREE_MIN_LEAF 100  /* points a side keeps: ~10 per coefficient */
#define TREE_GAIN 0.97     /* a split must cut the error to this share */
#define TREE_LOG2_MIN 2    /* thresholds 2^2 .. 2^23 */
#define TREE_LOG2_MAX 23

/* Scratch of a tree fit. */
struct tree_fit {
  const struct spmvd_pfeat *x;
  const double *t, *phi;
  double *sub, *tsub;
  size_t *left, *right;
  int guard;  /* the guarded term (leaf_fit), or -1 */
  int ref;    /* the term its share is taken of */
};

/* Splits the samples idx[0 .. n) by split s at `at` into w->left[0 ..
 * *nl) and w->right[0 .. *nr), each in idx's order. */
static void partition(struct tree_fit *w, const size_t *idx, size_t n,
                      int s, double at, size_t *nl, size_t *nr)
{
  size_t k;

  for (*nl = *nr = 0, k = 0; k < n; k++) {
    if (spmvd_split_value((enum spmvd_split)s, &w->x[idx[k]]) <= at)
      w->left[(*nl)++] = idx[k];
    else
      w->right[(*nr)++] = idx[k];
  }
}

/* Grows node i of tree tr over the samples idx[0 .. n) (reordered): a leaf, or,
 * where node i has children, the split whose two leaves cut the error
 * most.  Returns 0 or -1 when not even a leaf fits. */
static int grow(struct tree_fit *w, size_t *idx, size_t n, int i,
                struct spmvd_tree *tr)
{
  double c[SPMVD_WORK_TERMS], cl[SPMVD_WORK_TERMS], cr[SPMVD_WORK_TERMS];
  double e, el, er, best, thr = 0;
  size_t nl, nr;
  int s, q, bs = SPMVD_SPLIT_NONE;

  tr->split[i] = SPMVD_SPLIT_NONE;
  if (leaf_fit(w->phi, w->t, idx, n, w->guard, w->ref, w->sub, w->tsub, c,
               &e) != 0)
    return -1;
  memcpy(tr->wc[i], c, sizeof c);
  if (2 * i + 2 >= SPMVD_TREE_NODES || n < 2 * TREE_MIN_LEAF)
    return 0;
  best = TREE_GAIN * e;
  for (s = SPMVD_SPLIT_NONE + 1; s < SPMVD_SPLIT_COUNT; s++)
    for (q = TREE_LOG2_MIN; q <= TREE_LOG2_MAX; q++) {
      double at = ldexp(1.0, q);

      partition(w, idx, n, s, at, &nl, &nr);
      if (nl < TREE_MIN_LEAF || nr < TREE_MIN_LEAF)
        continue;
      if (leaf_fit(w->phi, w->t, w->left, nl, w->guard, w->ref, w->sub,
                   w->tsub, cl, &el) != 0 ||
          leaf_fit(w->phi, w->t, w->right, nr, w->guard, w->ref, w->sub,
                   w->tsub, cr, &er) != 0)
        continue;
      if (el + er < best) {
        best = el + er;
        bs = s;
        thr = at;
      }
    }
  if (bs == SPMVD_SPLIT_NONE)
    return 0;
  /* idx in place, the left side first; each side's leaf fitted above. */
  partition(w, idx, n, bs, thr, &nl, &nr);
  memcpy(idx, w->left, nl * sizeof *idx);
  memcpy(idx + nl, w->right, nr * sizeof *idx);
  if (grow(w, idx, nl, 2 * i + 1, tr) != 0 ||
      grow(w, idx + nl, nr, 2 * i + 2, tr) != 0)
    return -1;
  tr->split[i] = bs;
  tr->thr[i] = thr;
  return 0;
}

/* The next of a xorshift64 generator's numbers: the bootstrap trees'
 * resamples, the same on every run. */
static uint64_t bag_next(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Fits the work model's tree and its bootstrap trees. */
int spmvd_predict_fit_work(const struct spmv_config *cfg,
                           const struct spmvd_pfeat *x,
                           const double *t, size_t n, struct spmvd_fit *f,
                           struct spmv_error *err)
{
  struct tree_fit w;
  double *phi, s = 0;
  size_t *idx, k, m = 0;
  uint64_t state = 0x9e3779b97f4a7c15u;
  int b, rc;

  f->work_npoints = 0;
  memset(&f->tree, 0, sizeof f->tree);
  memset(f->bag, 0, sizeof f->bag);
  f->nbag = 0;
  if (n < SPMVD_WORK_TERMS)
    return spmv_error_set(err, SPMV_EINVAL,
                          "work fit of %s: %zu samples, %d needed",
                          spmv_format_name(cfg->format), n, SPMVD_WORK_TERMS);
  phi = malloc(2 * n * SPMVD_WORK_TERMS * sizeof *phi + n * sizeof *phi);
  idx = malloc(3 * n * sizeof *idx);
  if (phi == NULL || idx == NULL) {
    free(phi);
    free(idx);
    return spmv_error_set(err, SPMV_ENOMEM, "work fit: out of memory");
  }
  for (k = 0; k < n; k++) {
    fit_basis(f, cfg, &x[k], &phi[k * SPMVD_WORK_TERMS]);
    idx[k] = k;
  }
  w.x = x;
  w.t = t;
  w.phi = phi;
  w.sub = phi + n * SPMVD_WORK_TERMS;
  w.tsub = phi + 2 * n * SPMVD_WORK_TERMS;
  w.left = idx + n;
  w.right = idx + 2 * n;
  w.guard = guarded_term(cfg, &w.ref);
  rc = grow(&w, idx, n, 0, &f->tree);
  /* A resample that leaves no non-negative line (all its points of one
   * kind) is dropped; the others still average. */
  for (b = 0; rc == 0 && b < SPMVD_BAG_TREES; b++) {
    for (k = 0; k < n; k++)
      idx[k] = (size_t)(bag_next(&state) % n);
    if (grow(&w, idx, n, 0, &f->bag[f->nbag]) == 0)
      f->nbag++;
    else
      memset(&f->bag[f->nbag], 0, sizeof f->bag[0]);
  }
  free(phi);
  free(idx);
  if (rc != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "work fit of %s: no non-negative model",
                          spmv_format_name(cfg->format));
  f->work_npoints = (int)n;
  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    s += fabs(work_eval(f, &x[k]) - t[k]) / t[k];
    m++;
  }
  f->work_err = m ? s / (double)m : 0;
  return 0;
}

/* Evaluates a fit at (I, P). */
double spmvd_fit_eval(const struct spmvd_fit *f, double i, double p)
{
  switch (f->kind) {
  case SPMVD_FIT_VECTOR:
    return (f->m * p + f->c) / f->t0 * (f->p * i + f->q);
  case SPMVD_FIT_SADDLE:
    return (f->a * i + f->b) * p + (f->gc * i + f->gd);
  case SPMVD_FIT_NONE:
    break;
  }
  return NAN;
}

/* Predicts a matrix's time under fit f. */
double spmvd_predict_time(const struct spmvd_fit *f,
                          const struct spmv_profile *prof,
                          const struct spmvd_pfeat *feat)
{
  double i0, p0, t;

  if (f->kind == SPMVD_FIT_NONE || f->strip <= 0)
    return NAN;
  if (prof->rows <= 0)
    return PREDICT_FLOOR_US;
  if (feat != NULL && f->work_npoints > 0) {
    t = work_eval(f, feat);
    return t > PREDICT_FLOOR_US ? t : PREDICT_FLOOR_US;
  }
  /* I0 = rows / S, a real number of strips (the paper rounds it up: see
   * the grid above for why we do not). */
  i0 = (double)prof->rows / (double)f->strip;
  p0 = (double)prof->nnz / (double)prof->rows;
  t = spmvd_fit_eval(f, i0, p0);
  return t > PREDICT_FLOOR_US ? t : PREDICT_FLOOR_US;
}

/* Fits every format of the plan. */
int spmvd_predict_fit(const struct spmvd_calib_plan *plan,
                      const struct spmvd_device_info *dev,
                      struct spmvd_predictor *out, struct spmv_error *err)
{
  double *i = NULL, *p = NULL, *t = NULL;
  struct spmvd_pfeat *x = NULL;
  struct spmvd_fit *f;
  size_t k, n;
  int64_t strip;
  int fmt, nfit = 0, ret = 0;

  memset(out, 0, sizeof *out);
  i = malloc((plan->n ? plan->n : 1) * sizeof *i);
  p = malloc((plan->n ? plan->n : 1) * sizeof *p);
  t = malloc((plan->n ? plan->n : 1) * sizeof *t);
  x = malloc((plan->n ? plan->n : 1) * sizeof *x);
  if (i == NULL || p == NULL || t == NULL || x == NULL) {
    ret = spmv_error_set(err, SPMV_ENOMEM, "fit: out of memory");
    goto out;
  }
  for (fmt = 0; fmt < SPMV_FMT_COUNT; fmt++) {
    f = &out->fit[fmt];
    strip = spmvd_predict_strip((enum spmv_format)fmt, dev);
    n = 0;
    for (k = 0; k < plan->n; k++) {
      if ((int)plan->pt[k].cfg.format != fmt || !plan->pt[k].ok ||
          plan->pt[k].work)
        continue;
      if (n == 0)
        f->cfg = plan->pt[k].cfg;
      /* The strips it really has (rows were rounded). */
      i[n] = (double)plan->pt[k].rows / (double)strip;
      p[n] = plan->pt[k].p;
      t[n++] = plan->pt[k].time_us;
    }
    if (n == 0)
      continue;
    f->strip = strip;
    if (fmt == SPMV_FMT_CSR_VECTOR)
      ret = spmvd_predict_fit_vector(i, p, t, n, VEC_I_CAL, VEC_P_CAL, f,
                                     NULL);
    else
      ret = spmvd_predict_fit_saddle(i, p, t, n, f, NULL);
    if (ret != 0) {
      memset(f, 0, sizeof *f);
      ret = 0;
      continue;
    }
    nfit++;
    /* The work model over every point of the format, both parts. */
    n = 0;
    for (k = 0; k < plan->n; k++)
      if ((int)plan->pt[k].cfg.format == fmt && plan->pt[k].ok) {
        x[n] = plan->pt[k].feat;
        t[n++] = plan->pt[k].time_us;
      }
    f->l2_bytes = (double)dev->l2_bytes;
    f->threads = spmvd_predict_threads(dev);
    f->sms = dev->sms;
    f->value_bytes = (int)spmv_dtype_size(plan->dtype);
    spmvd_predict_fit_work(&f->cfg, x, t, n, f, NULL);
  }
out:
  free(i);
  free(p);
  free(t);
  free(x);
  return ret != 0 ? ret : nfit;
}

/* Whether a format has a prediction for a matrix. */
int spmvd_predict_applies(const struct spmvd_predictor *pred,
                          enum spmv_format f, const struct spmv_profile *prof)
{
  if (pred->fit[f].kind == SPMVD_FIT_NONE || f == SPMV_FMT_DIA)
    return 0;
  if (f == SPMV_FMT_ELL && prof->ell_fill > 3)
    return 0;
  /* And only where the calibration times the format (not ellr-t past
   * SPMVD_CALIB_MAX_FILL): its fit would extrapolate, e.g. ellr-t at
   * fill 214 on adder_dcop_05, f64 on an H100, predicted 157 us for a
   * measured 109, 17x the best configuration (eval-h100-v73). */
  return spmvd_calib_applies(&pred->fit[f].cfg, prof);
}

/* Ranks the calibrated formats for a matrix by predicted time. */
int spmvd_predict_rank(const struct spmvd_predictor *pred,
                       const struct spmv_profile *prof,
                       const struct spmvd_pfeat *feat,
                       struct spmv_config *cfgs, double *us, int max)
{
  double tm[SPMV_FMT_COUNT];
  int order[SPMV_FMT_COUNT], n = 0, f, a, b, tmp;

  for (f = 0; f < SPMV_FMT_COUNT; f++) {
    if (!spmvd_predict_applies(pred, (enum spmv_format)f, prof))
      continue;
    tm[f] = spmvd_predict_time(&pred->fit[f], prof, feat);
    if (!isfinite(tm[f]))
      continue;
    order[n++] = f;
  }
  for (a = 1; a < n; a++)
    for (b = a; b > 0 && tm[order[b]] < tm[order[b - 1]]; b--) {
      tmp = order[b];
      order[b] = order[b - 1];
      order[b - 1] = tmp;
    }
  if (n > max)
    n = max;
  for (a = 0; a < n; a++) {
    cfgs[a] = pred->fit[order[a]].cfg;
    if (us != NULL)
      us[a] = tm[order[a]];
  }
  return n;
}

/* Returns a new reference to the predictions for a matrix. */
json_t *spmvd_predict_report_json(const struct spmvd_predictor *pred,
                                  const struct spmv_profile *prof,
                                  const struct spmvd_pfeat *feat)
{
  struct spmv_config cfgs[SPMV_FMT_COUNT];
  double us[SPMV_FMT_COUNT];
  const struct spmvd_fit *f;
  json_t *arr = json_array(), *o;
  char text[64];
  int n, k;

  if (arr == NULL)
    return NULL;
  n = spmvd_predict_rank(pred, prof, feat, cfgs, us, SPMV_FMT_COUNT);
  for (k = 0; k < n; k++) {
    f = &pred->fit[cfgs[k].format];
    spmv_config_format(&cfgs[k], text, sizeof text);
    o = json_pack("{sssssssssIsfsfsfsfsf}", "format",
                  spmv_format_name(cfgs[k].format), "config", text, "model",
                  feat != NULL && f->work_npoints > 0 ? "work" : "paper",
                  "kind", f->kind == SPMVD_FIT_VECTOR ? "vector" : "saddle",
                  "strip", (json_int_t)f->strip, "i0",
                  prof->rows > 0 ? (double)prof->rows / (double)f->strip
                                 : 0.0,
                  "time_us", us[k], "paper_us",
                  spmvd_predict_time(f, prof, NULL), "err_mean", f->err_mean,
                  "work_err", f->work_err);
    if (o == NULL || json_array_append_new(arr, o) != 0) {
      json_decref(arr);
      return NULL;
    }
  }
  return json_pack("{sIsIsfso}", "rows", (json_int_t)prof->rows, "nnz",
                   (json_int_t)prof->nnz, "p0",
                   prof->rows > 0 ? (double)prof->nnz / (double)prof->rows
                                  : 0.0,
                   "predictions", arr);
}

/* Times A as cfg on a backend (the calibration's usual time callback):
 * one load, one timing. */
int spmvd_calib_backend_time(void *ctx, const struct spmv_csr *A,
                             enum spmv_dtype dt, const struct spmv_config *cfg,
                             double *us, struct spmv_error *err)
{
  return spmvd_calib_backend_time_rounds(ctx, A, dt, cfg, 1, NULL, us, err);
}

/* Times A as cfg: `rounds` loads, each timed once, their median.  Each
 * its own load: a 3.6-4.3 us product reads one of a few values a load
 * draws anew, 5 % apart (results/timing-small-h100.md), which timings of
 * one load would all repeat. */
int spmvd_calib_backend_time_rounds(struct spmvd_calib_backend *cb,
                                    const struct spmv_csr *A,
                                    enum spmv_dtype dt,
                                    const struct spmv_config *cfg, int rounds,
                                    double *each, double *us,
                                    struct spmv_error *err)
{
  struct spmvd_bmatrix *m = NULL;
  double t[SPMVD_CALIB_MAX_ROUNDS];
  int ret, k;

  if (rounds < 1 || rounds > SPMVD_CALIB_MAX_ROUNDS)
    return spmv_error_set(err, SPMV_EINVAL, "rounds %d out of [1, %d]",
                          rounds, SPMVD_CALIB_MAX_ROUNDS);
  for (k = 0; k < rounds; k++) {
    if ((ret = cb->ops->load(cb->be, A, dt, cfg, &m, err)) != 0)
      return ret;
    ret = cb->ops->time(cb->be, m, cb->warmup, cb->reps, &t[k], err);
    cb->ops->unload(cb->be, m);
    if (ret != 0)
      return ret;
  }
  if (each != NULL)
    memcpy(each, t, (size_t)rounds * sizeof *t);
  *us = spmv_median(t, (size_t)rounds);  /* sorts t */
  return 0;
}

/* Whether tree node i is reached: the root, or a child of a split. */
static int node_used(const struct spmvd_tree *t, int i)
{
  return i == 0 || (t->split[(i - 1) / 2] != SPMVD_SPLIT_NONE &&
                    node_used(t, (i - 1) / 2));
}

/* A work tree node as JSON: null where unused, a leaf's coefficients, or
 * {"split": NAME, "at": THRESHOLD}. */
static json_t *work_node_json(const struct spmvd_tree *t, int i)
{
  json_t *a;
  int j;

  if (!node_used(t, i))
    return json_null();
  if (t->split[i] != SPMVD_SPLIT_NONE)
    return json_pack("{sssf}", "split",
                     spmvd_split_name((enum spmvd_split)t->split[i]), "at",
                     t->thr[i]);
  a = json_array();
  for (j = 0; a != NULL && j < SPMVD_WORK_TERMS; j++)
    if (json_array_append_new(a, json_real(t->wc[i][j])) != 0) {
      json_decref(a);
      a = NULL;
    }
  return a;
}

/* Returns a new reference to tree t as an array of its nodes. */
static json_t *tree_json(const struct spmvd_tree *t)
{
  json_t *w = json_array();
  int j;

  for (j = 0; w != NULL && j < SPMVD_TREE_NODES; j++)
    if (json_array_append_new(w, work_node_json(t, j)) != 0) {
      json_decref(w);
      w = NULL;
    }
  return w;
}

/* Returns a new reference to one fit as JSON: its paper form and basis,
 * then its work model (tree, bootstrap trees and the device's figures it
 * was fitted with) when it has one. */
static json_t *fit_json(const struct spmvd_fit *f)
{
  json_t *o, *w, *bag;
  char text[64];
  int j;

  spmv_config_format(&f->cfg, text, sizeof text);
  if (f->kind == SPMVD_FIT_VECTOR)
    o = json_pack("{sssssIsfsfsfsfsfsfsfsisfsi}", "kind", "vector", "config",
                  text, "strip", (json_int_t)f->strip, "m", f->m, "c", f->c,
                  "p", f->p, "q", f->q, "t0", f->t0, "i_cal", f->i_cal,
                  "p_cal", f->p_cal, "npoints", f->npoints, "err_mean",
                  f->err_mean, "basis", SPMVD_WORK_BASIS);
  else
    o = json_pack("{sssssIsfsfsfsfsisfsi}", "kind", "saddle", "config", text,
                  "strip", (json_int_t)f->strip, "a", f->a, "b", f->b, "c",
                  f->gc, "d", f->gd, "npoints", f->npoints, "err_mean",
                  f->err_mean, "basis", SPMVD_WORK_BASIS);
  if (o == NULL || f->work_npoints <= 0)
    return o;
  w = tree_json(&f->tree);
  if (w == NULL || json_object_set_new(o, "work", w) != 0 ||
      json_object_set_new(o, "work_npoints",
                          json_integer(f->work_npoints)) != 0 ||
      json_object_set_new(o, "l2_bytes", json_real(f->l2_bytes)) != 0 ||
      json_object_set_new(o, "threads", json_real(f->threads)) != 0 ||
      json_object_set_new(o, "sms", json_real(f->sms)) != 0 ||
      json_object_set_new(o, "value_bytes", json_integer(f->value_bytes)) !=
          0 ||
      json_object_set_new(o, "work_err", json_real(f->work_err)) != 0) {
    json_decref(o);
    return NULL;
  }
  bag = json_array();
  for (j = 0; bag != NULL && j < f->nbag; j++)
    if (json_array_append_new(bag, tree_json(&f->bag[j])) != 0) {
      json_decref(bag);
      bag = NULL;
    }
  if (bag == NULL || json_object_set_new(o, "bag", bag) != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Returns a new reference to the fits as JSON. */
json_t *spmvd_predict_to_json(const struct spmvd_predictor *pred)
{
  json_t *o = json_object(), *fj;
  int f;

  for (f = 0; o != NULL && f < SPMV_FMT_COUNT; f++) {
    if (pred->fit[f].kind == SPMVD_FIT_NONE)
      continue;
    fj = fit_json(&pred->fit[f]);
    if (fj == NULL ||
        json_object_set_new(o, spmv_format_name((enum spmv_format)f), fj)) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

/* Reads one number member of a fit. */
static int num(json_t *o, const char *fmt, const char *key, double *v,
               struct spmv_error *err)
{
  json_t *j = json_object_get(o, key);

  if (!json_is_number(j) || !isfinite(json_number_value(j)))
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"%s\" missing or not a number", fmt,
                          key);
  *v = json_number_value(j);
  return 0;
}

/* Reads a non-negative number member of a fit. */
static int count(json_t *o, const char *fmt, const char *key, double *v,
                 struct spmv_error *err)
{
  if (num(o, fmt, key, v, err) != 0 || *v < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"%s\" missing or not a non-negative "
                          "number", fmt, key);
  return 0;
}

/* Reads work tree node i (nodes before it read already): null exactly
 * where unused, else a leaf of SPMVD_WORK_TERMS non-negative numbers or a
 * split with children. */
static int work_node_from_json(json_t *v, const char *name, const char *what,
                               int i, struct spmvd_tree *t,
                               struct spmv_error *err)
{
  enum spmvd_split s;
  json_t *c;
  size_t j;

  if (!node_used(t, i)) {
    if (!json_is_null(v))
      return spmv_error_set(err, SPMV_EINVAL,
                            "fit of %s: %s[%d] is under a leaf and must "
                            "be null", name, what, i);
    return 0;
  }
  if (json_is_array(v)) {
    if (json_array_size(v) != SPMVD_WORK_TERMS)
      return spmv_error_set(err, SPMV_EINVAL,
                            "fit of %s: %s[%d] must hold %d numbers", name,
                            what, i, SPMVD_WORK_TERMS);
    json_array_foreach(v, j, c) {
      if (!json_is_number(c) || !isfinite(json_number_value(c)) ||
          json_number_value(c) < 0)
        return spmv_error_set(err, SPMV_EINVAL,
                              "fit of %s: %s[%d][%zu] is not a "
                              "non-negative number", name, what, i, j);
      t->wc[i][j] = json_number_value(c);
    }
    t->split[i] = SPMVD_SPLIT_NONE;
    return 0;
  }
  if (!json_is_object(v) || 2 * i + 2 >= SPMVD_TREE_NODES ||
      spmvd_split_parse(json_string_value(json_object_get(v, "split")),
                        &s) != 0 ||
      s == SPMVD_SPLIT_NONE ||
      !json_is_number(json_object_get(v, "at")) ||
      !isfinite(json_number_value(json_object_get(v, "at"))))
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: %s[%d] is neither a leaf nor a split "
                          "{\"split\": rows|work|rl_max|mean, \"at\": N} "
                          "above two more nodes", name, what, i);
  t->split[i] = s;
  t->thr[i] = json_number_value(json_object_get(v, "at"));
  return 0;
}

/* Reads a tree (an array of SPMVD_TREE_NODES nodes, v) into t; what names
 * it in errors. */
static int tree_from_json(json_t *v, const char *name, const char *what,
                          struct spmvd_tree *t, struct spmv_error *err)
{
  int i, ret;

  memset(t, 0, sizeof *t);
  if (!json_is_array(v) || json_array_size(v) != SPMVD_TREE_NODES)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: %s must be an array of %d tree nodes",
                          name, what, SPMVD_TREE_NODES);
  for (i = 0; i < SPMVD_TREE_NODES; i++)
    if ((ret = work_node_from_json(json_array_get(v, (size_t)i), name, what,
                                   i, t, err)) != 0)
      return ret;
  return 0;
}

/* Reads a fit's work model, when it has one: its tree, its bootstrap
 * trees and every figure of the device it was fitted with. */
static int work_from_json(json_t *o, const char *name, struct spmvd_fit *f,
                          struct spmv_error *err)
{
  json_t *bag;
  double np = 0, vb = 0;
  int i, ret;

  if (json_object_get(o, "work") == NULL)
    return 0;
  if ((ret = tree_from_json(json_object_get(o, "work"), name, "work",
                            &f->tree, err)) != 0)
    return ret;
  bag = json_object_get(o, "bag");
  if (!json_is_array(bag) || json_array_size(bag) > SPMVD_BAG_TREES)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"bag\" must be an array of at most %d "
                          "trees", name, SPMVD_BAG_TREES);
  for (i = 0; i < (int)json_array_size(bag); i++) {
    char what[32];

    snprintf(what, sizeof what, "bag[%d]", i);
    if ((ret = tree_from_json(json_array_get(bag, (size_t)i), name, what,
                              &f->bag[i], err)) != 0)
      return ret;
    f->nbag = i + 1;
  }
  if (num(o, name, "work_npoints", &np, err) != 0 || np < 1)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"work_npoints\" missing or < 1",
                          name);
  f->work_npoints = (int)np;
  if ((ret = count(o, name, "work_err", &f->work_err, err)) != 0 ||
      (ret = count(o, name, "l2_bytes", &f->l2_bytes, err)) != 0 ||
      (ret = count(o, name, "threads", &f->threads, err)) != 0 ||
      (ret = count(o, name, "sms", &f->sms, err)) != 0 ||
      (ret = count(o, name, "value_bytes", &vb, err)) != 0)
    return ret;
  if (vb != 0 && vb != 4 && vb != 8)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"value_bytes\" not 0, 4 or 8", name);
  f->value_bytes = (int)vb;
  return 0;
}

/* Refuses a fit of another basis than SPMVD_WORK_BASIS (or of none: from
 * before fits named theirs), telling the operator to run redo, the
 * calibration that replaces it. */
static int basis_check(json_t *o, const char *name, const char *redo,
                       struct spmv_error *err)
{
  json_t *b = json_object_get(o, "basis");
  double v;

  if (b == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration fit of %s has no basis: it is from an "
                          "older spmvd; run `%s`", name, redo);
  v = json_number_value(b);
  if (!json_is_number(b) || v != floor(v) || v < 1 || v > INT32_MAX)
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"basis\" is not a positive integer",
                          name);
  if (v < SPMVD_WORK_BASIS)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration fit of %s, basis %d, is from an older "
                          "spmvd; run `%s`", name, (int)v, redo);
  if (v > SPMVD_WORK_BASIS)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration fit of %s, basis %d, is from a newer "
                          "spmvd (this one reads basis %d); run `%s`", name,
                          (int)v, SPMVD_WORK_BASIS, redo);
  return 0;
}

/* Reads one format's fit. */
static int fit_from_json(json_t *o, const char *name, const char *redo,
                         struct spmvd_fit *f, struct spmv_error *err)
{
  const char *kind = json_string_value(json_object_get(o, "kind"));
  const char *cfg = json_string_value(json_object_get(o, "config"));
  double strip = 0, np = 0;
  int ret;

  memset(f, 0, sizeof *f);
  if (!json_is_object(o))
    return spmv_error_set(err, SPMV_EINVAL, "fit of %s: not an object", name);
  if ((ret = basis_check(o, name, redo, err)) != 0)
    return ret;
  if (cfg == NULL || spmv_config_parse(cfg, &f->cfg, NULL) != 0)
    return spmv_error_set(err, SPMV_EINVAL, "fit of %s: bad \"config\"",
                          name);
  if ((ret = num(o, name, "strip", &strip, err)) != 0 || strip < 1)
    return ret != 0 ? ret
                    : spmv_error_set(err, SPMV_EINVAL,
                                     "fit of %s: strip must be >= 1", name);
  f->strip = (int64_t)strip;
  if ((ret = count(o, name, "npoints", &np, err)) != 0 ||
      (ret = count(o, name, "err_mean", &f->err_mean, err)) != 0)
    return ret;
  f->npoints = (int)np;
  if (kind != NULL && strcmp(kind, "vector") == 0) {
    if ((ret = num(o, name, "m", &f->m, err)) != 0 ||
        (ret = num(o, name, "c", &f->c, err)) != 0 ||
        (ret = num(o, name, "p", &f->p, err)) != 0 ||
        (ret = num(o, name, "q", &f->q, err)) != 0 ||
        (ret = num(o, name, "t0", &f->t0, err)) != 0 ||
        (ret = num(o, name, "i_cal", &f->i_cal, err)) != 0 ||
        (ret = num(o, name, "p_cal", &f->p_cal, err)) != 0)
      return ret;
    if (!(f->t0 > 0))
      return spmv_error_set(err, SPMV_EINVAL, "fit of %s: t0 must be > 0",
                            name);
    f->kind = SPMVD_FIT_VECTOR;
  } else if (kind != NULL && strcmp(kind, "saddle") == 0) {
    if ((ret = num(o, name, "a", &f->a, err)) != 0 ||
        (ret = num(o, name, "b", &f->b, err)) != 0 ||
        (ret = num(o, name, "c", &f->gc, err)) != 0 ||
        (ret = num(o, name, "d", &f->gd, err)) != 0)
      return ret;
    f->kind = SPMVD_FIT_SADDLE;
  } else {
    return spmv_error_set(err, SPMV_EINVAL,
                          "fit of %s: \"kind\" must be \"vector\" or "
                          "\"saddle\"", name);
  }
  return work_from_json(o, name, f, err);
}

/* Reads the fits of spmvd_predict_to_json(); redo names the calibration
 * that replaces a fit of another basis. */
static int fits_from_json(json_t *doc, const char *redo,
                          struct spmvd_predictor *out, struct spmv_error *err)
{
  const char *key;
  json_t *val;
  enum spmv_format f;
  int ret;

  memset(out, 0, sizeof *out);
  if (!json_is_object(doc))
    return spmv_error_set(err, SPMV_EINVAL, "fits: expected an object");
  json_object_foreach(doc, key, val) {
    if (spmv_format_parse(key, &f) != 0)
      ret = spmv_error_set(err, SPMV_EINVAL, "fits: unknown format \"%s\"",
                           key);
    else if ((ret = fit_from_json(val, key, redo, &out->fit[f], err)) == 0 &&
             out->fit[f].cfg.format != f)
      ret = spmv_error_set(err, SPMV_EINVAL,
                           "fit of %s: its config is of another format", key);
    if (ret != 0) {
      memset(out, 0, sizeof *out);
      return ret;
    }
  }
  return 0;
}

int spmvd_predict_from_json(json_t *doc, struct spmvd_predictor *out,
                            struct spmv_error *err)
{
  return fits_from_json(doc, "spmvctl calibrate", out, err);
}

/* Stores the calibrated fits in the cache. */
int spmvd_predict_save(struct spmvd_cache *c,
                       const struct spmvd_device_info *dev,
                       enum spmv_dtype dt, const struct spmvd_predictor *pred,
                       struct spmv_error *err)
{
  json_t *fj;
  int f, ret = 0;

  for (f = 0; ret == 0 && f < SPMV_FMT_COUNT; f++) {
    if (pred->fit[f].kind == SPMVD_FIT_NONE)
      continue;
    fj = fit_json(&pred->fit[f]);
    if (fj == NULL)
      return spmv_error_set(err, SPMV_ENOMEM, "out of memory saving fits");
    ret = spmvd_cache_calibration_put(c, dev->device_key, dev->software_key,
                                      dt, (enum spmv_format)f, fj, err);
    json_decref(fj);
  }
  return ret;
}

/* Loads a device's fits from the cache. */
int spmvd_predict_load(struct spmvd_cache *c,
                       const struct spmvd_device_info *dev,
                       enum spmv_dtype dt, struct spmvd_predictor *out,
                       struct spmv_error *err)
{
  json_t *doc = NULL;
  int ret;

  memset(out, 0, sizeof *out);
  ret = spmvd_cache_calibration_get(c, dev->device_key, dev->software_key, dt,
                                    &doc, err);
  if (ret <= 0)
    return ret;
  ret = fits_from_json(doc, dt == SPMV_F32 ? "spmvctl calibrate --dtype f32"
                                           : "spmvctl calibrate",
                       out, err);
  json_decref(doc);
  return ret == 0 ? 1 : ret;
}
