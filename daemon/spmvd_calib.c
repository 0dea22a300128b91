/* spmvd_calib.c: the predictor's calibration: its plan of synthetic
 * matrices and configurations, and the run that times them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_stats.h"
#include "spmvd_predict.h"
#include "spmvd_predict_impl.h"

/*
 * The calibration grid of Wang, Gu and Li, cut by the nnz bounds.  Where we
 * deviate from the paper: I is a real number of strips, I = R / S, and the
 * grid starts below one strip.  On a large GPU a strip is big (an H200:
 * 132 x 2048 = 270336 rows), most matrices are a fraction of one and the
 * largest are tens of strips; the paper's I = ceil(rows / S) in 1..10
 * would count a matrix of a fifth of a strip as a whole one and
 * extrapolate one of tens of strips far past its data.  So the
 * thread-per-row formats take I in {0.1, 0.25, 0.5, 1} over every P first
 * (small matrices: cheap in nonzeros, and the span of P matters most to
 * the saddle), then I in {2, 4, 8, 16} while the budget lasts;
 * csr-vector's I sweep runs from 0.1 to 32 strips.
 */
static const double grid_i1[] = { 0.1, 0.25, 0.5, 1 };
static const double grid_i2[] = { 2, 4, 8, 16 };
static const int grid_p[] = { 4, 8, 16, 32, 64, 128, 256, 512, 1024 };
/* csr-vector: the P sweep at I = SPMVD_VEC_I_CAL, the I sweep at
 * P = SPMVD_VEC_P_CAL. */
static const double vec_i[] = { 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32 };
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
 * device's) whose matrix lies on either side of the L2's cliff, at mid_l2
 * times the device's L2: the rest of the plan has few points of a few
 * warps there, where the ELLR-T paper's matrices lie (pdb1HYS, consph,
 * rma10).  The FEM shape and its log-normal twin, near the diagonal as
 * the paper's.  Only csr-scalar: the other formats' fits have no term for
 * the cliff, and these points would only move them about.
 */
static const size_t mid_shapes[] = { WORK_FEM_SHAPE, 4 };
static const double mid_i[] = { 0.02, 0.06, 0.2 };
static const double mid_l2[] = { 0.5, 0.7, 0.9, 1.2 };
static const struct spmv_config scalar_cfg = { SPMV_FMT_CSR_SCALAR, 256, 0,
                                               0, 0 };

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
 * cache sets, and run far slower than rows of the same mean and some
 * spread, which real matrices' rows of varied or odd lengths do not show;
 * the fits would bend to them. */
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
  /* csr-vector: P sweep at I = SPMVD_VEC_I_CAL, then I sweep at P =
   * SPMVD_VEC_P_CAL, within a quarter of the budget (its whole sweeps
   * take about a fifth of the default on an H200): admitted first, they
   * would take a trimmed budget whole and leave the thread-per-row
   * formats without the two P and two I their fits need.  The two
   * smallest of each sweep come first, what its fit needs. */
  vp = *p;
  vp.max_nnz_total = p->max_nnz_total / 4;
  for (pass = 0; pass < 2; pass++) {
    for (a = 0; a < NELEM(grid_p); a++)
      if ((a < 2) == (pass == 0))
        add_vector_matrices(plan, &vp, sv, SPMVD_VEC_I_CAL, grid_p[a]);
    for (b = 0, k = 0; b < NELEM(vec_i); b++) {
      if (vec_i[b] == SPMVD_VEC_I_CAL)
        continue;
      if ((k++ < 2) == (pass == 0))
        add_vector_matrices(plan, &vp, sv, vec_i[b], SPMVD_VEC_P_CAL);
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

/* Times A as cfg on a backend (the calibration's usual time callback):
 * one load, one timing. */
int spmvd_calib_backend_time(void *ctx, const struct spmv_csr *A,
                             enum spmv_dtype dt, const struct spmv_config *cfg,
                             double *us, struct spmv_error *err)
{
  return spmvd_calib_backend_time_rounds(ctx, A, dt, cfg, 1, NULL, us, err);
}

/* Times A as cfg: `rounds` loads, each timed once, their median.  Each
 * its own load: a short product reads one of a few values that a load
 * draws anew, a few percent apart, which timings of one load would all
 * repeat. */
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
