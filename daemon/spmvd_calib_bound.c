/* spmvd_calib_bound.c: a calibration bounded in time, as the device worker
 * runs it: probe, plan, trim, run, fit, and the reply. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "spmvd_calib_bound.h"
#include "spmvd_log.h"
#include "spmvd_predict.h"

/* Share of the time left after the probe that the plan may fill: the
 * estimate is rough, and the deadline below is the hard bound. */
#define CALIB_SAFETY 0.7
/* Configurations probed at most (the plan's distinct ones). */
#define CALIB_MAX_CFGS 16
/* The time bound when the request gives none, in seconds (the cpu
 * backend's is small: its fits only serve tests and small hosts).  Five
 * minutes, once per device and software key: a GPU's bound of a few
 * minutes trims the plan, and a trimmed plan fits worse. */
#define CALIB_DEFAULT_S 300.0
#define CALIB_DEFAULT_CPU_S 10.0

/* One calibration: the backend adapter, the deadline, progress. */
struct calib {
  const struct spmvd_calib_host *h;
  struct spmvd_calib_backend be;  /* spmvd_calib_backend_time()'s context */
  json_int_t seq;
  double deadline;                /* monotonic seconds */
  double last_event;              /* when progress was last sent */
  double work_t0;                 /* when the work part's first point was
                                     timed (0 before) */
};

/* Seconds as a + b * nnz: generating one matrix, timing one point. */
struct calib_rates {
  double gen_a, gen_b;
  double pt_a, pt_b;
  /* The work part's shapes cost more than the grid's matrices of their
   * size (skewed rows pad some layouts): what each shape's probe matrix
   * took over what the lines above predict for it (1 or more). */
  double shape_factor[SPMVD_CALIB_SHAPES];
};

/* Monotonic seconds. */
static double now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* spmvd_calib_ops.time: the backend adapter; nothing once past the
 * deadline (the point stays untimed and the fit skips it).  The host
 * serves what came meanwhile first. */
static int calib_time(void *ctx, const struct spmv_csr *A, enum spmv_dtype dt,
                      const struct spmv_config *cfg, double *us,
                      struct spmv_error *err)
{
  struct calib *k = ctx;

  if (now_s() > k->deadline) {
    return spmv_error_set(err, SPMV_ETIMEDOUT,
                          "past the calibration's time bound");
  }
  if (k->h->between != NULL)
    k->h->between(k->h->ctx, 1);
  return spmvd_calib_backend_time(&k->be, A, dt, cfg, us, err);
}

/* spmvd_calib_ops.progress: an event at most every quarter of a second,
 * and always the last one. */
static void calib_progress(void *ctx, int done, int total,
                           const struct spmvd_calib_point *pt)
{
  struct calib *k = ctx;
  char cfg[64], text[128];
  double t = now_s();

  if (pt->work && k->work_t0 == 0)
    k->work_t0 = t;
  if (done < total && t - k->last_event < 0.25)
    return;
  k->last_event = t;
  spmv_config_format(&pt->cfg, cfg, sizeof cfg);
  /* The paper's grid by its whole strips; the work part's shapes by the
   * fraction of a strip, their skew and placement. */
  if (pt->work)
    snprintf(text, sizeof text, "%s I=%g P=%d %s cv=%g %s", cfg, pt->strips,
             pt->p, spmv_gen_dist_name(pt->dist), pt->cv,
             spmv_gen_place_name(pt->place));
  else
    snprintf(text, sizeof text, "%s I=%d P=%d %s", cfg, pt->i, pt->p,
             spmv_gen_dist_name(pt->dist));
  k->h->send(k->h->ctx,
             json_pack("{sI ss ss si si ss sf}", "seq", k->seq, "event",
                       "progress", "stage", "calibration", "done", done,
                       "total", total, "candidate", text, "time_us",
                       pt->time_us));
}

/* Times generating point pt's matrix and running each of the n
 * configurations on it (after an untimed pass when warm): *gen and
 * *per_point receive seconds. */
static int probe_one(struct calib *k, const struct spmvd_calib_params *prm,
                     enum spmv_dtype dt, const struct spmvd_calib_point *pt,
                     const struct spmv_config *cfgs, int n, int warm,
                     double *gen, double *per_point, struct spmv_error *err)
{
  struct spmv_error e;
  struct spmv_profile prof;
  struct spmv_csr *A;
  double t0, t1, us;
  int rc;

  if (k->h->between != NULL)
    k->h->between(k->h->ctx, 0);
  t0 = now_s();
  A = spmvd_calib_matrix(pt, prm, err);
  if (!A)
    return err && err->code ? err->code : SPMV_ENOMEM;
  /* The profile is the run's work too (spmvd_calib_run), and tells which
   * points it skips. */
  if ((rc = spmv_profile_compute(A, &prof, err)) != 0) {
    spmv_csr_free(A);
    return rc;
  }
  *gen = now_s() - t0;
  t1 = now_s();
  for (int i = 0; i < (warm ? 2 * n : n); i++) {
    /* With warm, a first pass launches what this matrix needs (a skewed
     * one reaches kernels the grid's never do), untimed. */
    if (warm && i == n)
      t1 = now_s();
    if (!spmvd_calib_applies(&cfgs[i % n], &prof))
      continue;
    rc = spmvd_calib_backend_time(&k->be, A, dt, &cfgs[i % n], &us, &e);
    if (rc == SPMV_EGPU_STICKY) {
      spmv_csr_free(A);
      return spmv_error_set(err, rc, "%s", e.msg);
    }
  }
  *per_point = n > 0 ? (now_s() - t1) / n : 0;
  spmv_csr_free(A);
  return 0;
}

/* A probe matrix of the paper's grid: rows of mean length p, normal. */
static struct spmvd_calib_point grid_point(const struct spmvd_calib_params *prm,
                                           int64_t rows, int p)
{
  struct spmvd_calib_point pt;

  memset(&pt, 0, sizeof pt);
  pt.rows = rows;
  pt.p = p;
  pt.dist = SPMV_GEN_NORMAL;
  pt.cv = prm->cv;
  pt.place = SPMV_GEN_RANDOM;
  pt.shape = -1;
  pt.matrix = 7919;  /* a seed of its own */
  return pt;
}

/*
 * Measures what a plan costs on this device: a tiny matrix (a few dozen
 * rows) and a larger one (a strip of rows), each generated and timed
 * under the plan's configurations; the rates are the lines through the
 * two.  A pass over a small one comes first, untimed: a configuration's
 * first launch loads its kernels (and cuSPARSE its handle), tens of
 * milliseconds that no later point pays, which would make the estimate
 * many times too high and the bound's trim cut the plan far too short.
 */
static int calib_probe(struct calib *k, const struct spmvd_calib_plan *plan,
                       const struct spmvd_calib_params *prm,
                       struct calib_rates *r, struct spmv_error *err)
{
  struct spmv_config cfgs[CALIB_MAX_CFGS];
  int64_t st = spmvd_predict_strip(SPMV_FMT_CSR_SCALAR, k->h->dev);
  /* The larger probe matrix near the plan's large ones (17.3M nonzeros
   * on an H200 from a bound of 180 s or more), since rates from smaller
   * ones come out low for them; a short bound gets a smaller one (2.2M
   * at 20 s), lest the probe take most of the bound and leave a plan
   * that fits no format. */
  double left_s = k->deadline - now_s();
  int64_t cap = (int64_t)fmax(0.0, left_s * 1e5);
  if (cap > prm->max_nnz_matrix)
    cap = prm->max_nnz_matrix;
  struct spmvd_calib_point pt;
  double g[2], c[2], nnz[2];
  int n = 0, p1 = 8, rc;

  for (size_t i = 0; i < plan->n && n < CALIB_MAX_CFGS; i++) {
    int seen = 0;
    for (int j = 0; j < n && !seen; j++)
      seen = memcmp(&cfgs[j], &plan->pt[i].cfg, sizeof cfgs[j]) == 0;
    if (!seen)
      cfgs[n++] = plan->pt[i].cfg;
  }
  while (p1 < 1024 && st * p1 * 2 <= cap)
    p1 *= 2;
  /* Untimed: every configuration's first launch. */
  pt = grid_point(prm, st, 4);
  rc = probe_one(k, prm, plan->dtype, &pt, cfgs, n, 0, &g[0], &c[0], err);
  if (rc < 0)
    return rc;
  /* The fixed costs from a matrix as small as the work part's smallest,
   * where most of its points are (a line through two larger ones misses
   * them, low or high by device); the costs per nonzero from the larger
   * one. */
  for (int s = 0; s < 2; s++) {
    int64_t rows = s == 0 ? (st / 10000 > 1 ? st / 10000 : 1) : st;
    int p = s == 0 ? 16 : p1;
    nnz[s] = (double)(rows * p);
    pt = grid_point(prm, rows, p);
    rc = probe_one(k, prm, plan->dtype, &pt, cfgs, n, s == 0, &g[s], &c[s],
                   err);
    if (rc < 0)
      return rc;
  }
  r->gen_a = g[0];
  r->gen_b = fmax(0.0, (g[1] - g[0]) / (nnz[1] - nnz[0]));
  r->pt_a = c[0];
  r->pt_b = fmax(0.0, (c[1] - c[0]) / (nnz[1] - nnz[0]));
  /* One matrix of each work-part shape, a twentieth of a strip of rows of
   * 16 (216k nonzeros on an H200): the work part costs more than the
   * grid's lines predict for matrices of its sizes. */
  for (int sh = 0; sh < SPMVD_CALIB_SHAPES; sh++) {
    double gs, cs, nz, want;
    int64_t rows = st / 20 > 1 ? st / 20 : 1;

    spmvd_calib_shape_point(sh, rows, 16, &pt);
    pt.matrix = 7919 + 1 + sh;
    rc = probe_one(k, prm, plan->dtype, &pt, cfgs, n, 1, &gs, &cs, err);
    if (rc < 0)
      return rc;
    nz = (double)rows * 16;
    want = r->gen_a + r->gen_b * nz + n * (r->pt_a + r->pt_b * nz);
    r->shape_factor[sh] = want > 0 ? fmin(20, fmax(1, (gs + n * cs) / want)) : 1;
  }
  return 0;
}

/* The seconds plan's points of one part are expected to take at rates r
 * (work: 0 the paper's grid, 1 the work part, -1 both). */
static double calib_estimate_part(const struct spmvd_calib_plan *plan,
                                  const struct calib_rates *r, int work)
{
  double s = 0;
  int m = -1;

  for (size_t i = 0; i < plan->n; i++) {
    double nnz = (double)plan->pt[i].rows * plan->pt[i].p;
    int sh = plan->pt[i].shape;
    double f = sh >= 0 && sh < SPMVD_CALIB_SHAPES ? r->shape_factor[sh] : 1;
    if (work >= 0 && plan->pt[i].work != work)
      continue;
    if (plan->pt[i].matrix != m) {
      m = plan->pt[i].matrix;
      s += f * (r->gen_a + r->gen_b * nnz);
    }
    s += f * (r->pt_a + r->pt_b * nnz);
  }
  return s;
}

/* The seconds the whole plan is expected to take at rates r. */
static double calib_estimate(const struct spmvd_calib_plan *plan,
                             const struct calib_rates *r)
{
  return calib_estimate_part(plan, r, -1);
}

/*
 * Trims the plan to budget seconds: the largest nnz budget of
 * spmvd_calib_params whose plan's estimate fits (the plan admits small
 * matrices first, so the large-P corner goes first).  *plan is replaced;
 * prm->max_nnz_total records the bound used.
 */
static int calib_trim(const struct spmvd_device_info *dev, enum spmv_dtype dt,
                      struct spmvd_calib_params *prm,
                      const struct calib_rates *r, double budget,
                      struct spmvd_calib_plan **plan, struct spmv_error *err)
{
  int64_t lo = 0, hi = prm->max_nnz_total;
  struct spmvd_calib_plan *best = NULL, *p = NULL;
  int rc = 0;

  while (hi - lo > 1 && rc == 0) {
    int64_t mid = lo + (hi - lo) / 2;
    prm->max_nnz_total = mid;
    rc = spmvd_calib_plan_new(dev, dt, prm, &p, err);
    if (rc < 0)
      break;
    if (calib_estimate(p, r) <= budget) {
      spmvd_calib_plan_free(best);
      best = p;
      lo = mid;
    } else {
      spmvd_calib_plan_free(p);
      hi = mid;
    }
    p = NULL;
  }
  prm->max_nnz_total = lo;
  if (rc == 0 && !best)
    rc = spmvd_calib_plan_new(dev, dt, prm, &best, err);
  if (rc < 0) {
    spmvd_calib_plan_free(best);
    return rc;
  }
  spmvd_calib_plan_free(*plan);
  *plan = best;
  return 0;
}

/* Logs the plan about to run: its share of the whole, its estimate, and
 * how much dearer than the grid the probe found the work part's shapes. */
static void calib_log_plan(const char *dts, double max_s,
                           const struct spmvd_calib_plan *plan, size_t planned,
                           double est_s, const struct calib_rates *r)
{
  double lo = r->shape_factor[0], hi = r->shape_factor[0];

  for (int sh = 1; sh < SPMVD_CALIB_SHAPES; sh++) {
    lo = fmin(lo, r->shape_factor[sh]);
    hi = fmax(hi, r->shape_factor[sh]);
  }
  spmvd_log_info("calibration (%s, %.0f s at most): %zu of %zu points, %d "
                 "matrices, %lld nnz, about %.1f s (the work part's shapes "
                 "at %.1f-%.1fx the grid's rates)", dts, max_s, plan->n,
                 planned, plan->nmatrices, (long long)plan->total_nnz, est_s,
                 lo, hi);
}

/* Points in one points event: at most about 600 bytes of JSON each, so
 * an event stays well within SPMVD_IPC_MAX_BYTES. */
#define CALIB_POINTS_PER_EVENT 128

/* A table value: integral values as integers (features are counts),
 * others as reals. */
static json_t *point_value(double v)
{
  if (v == floor(v) && fabs(v) < 9e15)
    return json_integer((json_int_t)v);
  return json_real(v);
}

/* The plan's timed points as {seq, event:"points", dtype, device,
 * l2_bytes, threads, first, total, columns, points} events of at most
 * CALIB_POINTS_PER_EVENT rows, in the plan's order: what the fits were
 * computed from, for replaying them off the device (calib_points
 * --replay reads the table spmvctl calibrate --points writes). */
static int calib_send_points(const struct spmvd_calib_host *h, json_int_t seq,
                             enum spmv_dtype dt,
                             const struct spmvd_calib_plan *plan, size_t timed,
                             struct spmv_error *err)
{
  static const char *const head[] = {"matrix", "work", "dist", "cv", "place",
                                     "strips", "p"};
  json_t *cols = json_array(), *rows = NULL, *row, *ev;
  size_t sent = 0;
  char text[64];
  int i;

  for (i = 0; cols && i < (int)(sizeof head / sizeof head[0]); i++)
    json_array_append_new(cols, json_string(head[i]));
  for (i = 0; cols && i < SPMVD_PFEAT_NCOLUMNS; i++)
    json_array_append_new(cols, json_string(spmvd_pfeat_columns[i].name));
  if (cols) {
    json_array_append_new(cols, json_string("config"));
    json_array_append_new(cols, json_string("us"));
  }
  for (size_t k = 0; cols && k < plan->n; k++) {
    const struct spmvd_calib_point *pt = &plan->pt[k];

    if (!pt->ok)
      continue;
    if (!rows && !(rows = json_array()))
      break;
    spmv_config_format(&pt->cfg, text, sizeof text);
    row = json_pack("[i i i f i f i]", pt->matrix, pt->work, (int)pt->dist,
                    pt->cv, (int)pt->place, pt->strips, pt->p);
    for (i = 0; row && i < SPMVD_PFEAT_NCOLUMNS; i++)
      json_array_append_new(row, point_value(spmvd_pfeat_value(&pt->feat, i)));
    if (!row || json_array_append_new(row, json_string(text)) < 0 ||
        json_array_append_new(row, json_real(pt->time_us)) < 0 ||
        json_array_append_new(rows, row) < 0)
      break;
    if (json_array_size(rows) < CALIB_POINTS_PER_EVENT &&
        sent + json_array_size(rows) < timed)
      continue;
    ev = json_pack("{sI ss ss ss sf sf si sI sI sO sO}", "seq", seq, "event",
                   "points", "dtype", spmv_dtype_name(dt), "device",
                   h->dev->name, "l2_bytes", (double)h->dev->l2_bytes,
                   "threads", spmvd_predict_threads(h->dev),
                   "sms", h->dev->sms,
                   "first", (json_int_t)sent, "total", (json_int_t)timed,
                   "columns", cols, "points", rows);
    if (!ev)
      break;
    sent += json_array_size(rows);
    json_decref(rows);
    rows = NULL;
    h->send(h->ctx, ev);
  }
  json_decref(cols);
  json_decref(rows);
  if (sent < timed)
    return spmv_error_set(err, SPMV_ENOMEM,
                          "out of memory sending the calibration's points");
  return 0;
}

int spmvd_calib_bounded(const struct spmvd_calib_host *h, json_int_t seq,
                        enum spmv_dtype dt, double max_s, int want_points,
                        json_t **rep, struct spmv_error *err)
{
  static const struct spmvd_calib_ops ops = {calib_time, calib_progress};
  const char *dts = spmv_dtype_name(dt);
  double start = now_s(), probe_s, est, run_t0;
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan = NULL;
  struct spmvd_predictor pred;
  struct calib_rates r;
  struct calib k;
  size_t planned, timed = 0;
  int rc, nfit, trimmed = 0;

  if (dts == NULL || !(max_s >= 0))
    return spmv_error_set(err, SPMV_EINVAL,
                          "calibration: bad value type or time bound");
  /* No bound given: this backend's default (the front end may not know
   * the backend yet when the request came while the worker started). */
  if (max_s == 0)
    max_s = strcmp(h->dev->backend, "cpu") == 0 ? CALIB_DEFAULT_CPU_S
                                                : CALIB_DEFAULT_S;
  memset(&k, 0, sizeof k);
  k.h = h;
  k.be.ops = h->ops;
  k.be.be = h->be;
  k.be.warmup = SPMVD_CALIB_WARMUP;
  k.be.reps = SPMVD_CALIB_REPS;
  k.seq = seq;
  k.deadline = start + max_s;
  spmvd_calib_params_default(&prm);
  if ((rc = spmvd_calib_plan_new(h->dev, dt, &prm, &plan, err)) < 0 ||
      (rc = calib_probe(&k, plan, &prm, &r, err)) < 0)
    goto out;
  planned = plan->n;
  probe_s = now_s() - start;
  est = calib_estimate(plan, &r);
  if (est > CALIB_SAFETY * (max_s - probe_s)) {
    trimmed = 1;
    rc = calib_trim(h->dev, dt, &prm, &r, CALIB_SAFETY * (max_s - probe_s),
                    &plan, err);
    if (rc < 0)
      goto out;
    est = calib_estimate(plan, &r);
  }
  calib_log_plan(dts, max_s, plan, planned, probe_s + est, &r);
  run_t0 = now_s();
  if ((rc = spmvd_calib_run(plan, &prm, &ops, &k, err)) < 0)
    goto out;
  /* What the estimate missed, part by part, for the operator (and for
   * tuning the probe: the trim rests on it). */
  spmvd_log_info("calibration (%s): the grid took %.1f s (estimated %.1f), "
                 "the work part %.1f s (estimated %.1f), %zu points skipped "
                 "at the bound", dts,
                 (k.work_t0 > 0 ? k.work_t0 : now_s()) - run_t0,
                 calib_estimate_part(plan, &r, 0),
                 k.work_t0 > 0 ? now_s() - k.work_t0 : 0.0,
                 calib_estimate_part(plan, &r, 1), plan->skipped);
  for (size_t i = 0; i < plan->n; i++)
    timed += plan->pt[i].ok != 0;
  if ((nfit = spmvd_predict_fit(plan, h->dev, &pred, err)) < 0) {
    rc = nfit;
    goto out;
  }
  if (nfit == 0) {
    rc = spmv_error_set(err, SPMV_ETIMEDOUT,
                        "max_seconds %g is too short to calibrate %s: %zu of "
                        "%zu points timed (the probe took %.1f s and left "
                        "%zu), no format could be fitted",
                        max_s, h->dev->name, timed, planned, probe_s, plan->n);
    goto out;
  }
  /* The points before the reply, which ends the request. */
  if (want_points &&
      (rc = calib_send_points(h, seq, dt, plan, timed, err)) < 0)
    goto out;
  *rep = json_pack("{so sI sI sI si si sI sb sf sf sf sf}", "fits",
                   spmvd_predict_to_json(&pred), "planned_points", (json_int_t)planned, "points",
                   (json_int_t)plan->n, "timed", (json_int_t)timed, "late",
                   (int)plan->skipped, "matrices", plan->nmatrices, "nnz",
                   (json_int_t)plan->total_nnz, "trimmed", trimmed,
                   "probe_seconds", probe_s, "estimate_seconds", probe_s + est,
                   "seconds", now_s() - start, "max_seconds", max_s);
  if (!*rep)
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory");
out:
  spmvd_calib_plan_free(plan);
  return rc;
}
