/* spmvd_worker_long.c: spmvd-worker's long operations (tune, bench,
 * calibrate) and the requests that arrive meanwhile, served between their
 * steps or deferred to their end. */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmv_par.h"
#include "spmvd_backend.h"
#include "spmvd_calib_bound.h"
#ifdef SPMVD_FAULT_INJECTION
#include "spmvd_fault.h"
#endif
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"
#include "spmvd_worker_impl.h"

/* Serves a request taken off the socket and frees it. */
void spmvd_wk_serve_deferred(struct worker *w, struct deferred *d)
{
  spmvd_wk_serve_one(w, d->req, d->fds, d->nfds);
  json_decref(d->req);
  free(d);
}

/* The handle a request names (-1 when none). */
static json_int_t req_handle(const json_t *req)
{
  const json_t *h = json_object_get(req, "handle");

  return json_is_integer(h) ? json_integer_value(h) : -1;
}

/* Whether a deferred request names handle h (or, h < 0, any multiply). */
static int deferred_names(const struct worker *w, json_int_t h)
{
  for (const struct deferred *d = w->later; d; d = d->next) {
    const char *op = json_string_value(json_object_get(d->req, "op"));
    if (h >= 0 ? req_handle(d->req) == h
               : op != NULL && strcmp(op, "multiply") == 0)
      return 1;
  }
  return 0;
}

/* Whether a list (ops) names matrix h. */
static int list_names(const json_t *req, json_int_t h)
{
  const json_t *hs = json_object_get(req, "handles"), *j;
  size_t i;

  json_array_foreach(hs, i, j)
    if (json_integer_value(j) == h)
      return 1;
  return 0;
}

/* Answers deferred request d with ECLOSED and frees it. */
static void drop_cancelled(struct worker *w, struct deferred *d)
{
  json_int_t seq = json_integer_value(json_object_get(d->req, "seq"));

  spmvd_wk_send_msg(w, json_pack("{sI sb s{ss ss}}", "seq", seq, "ok", 0,
                                 "error", "code", spmv_err_name(SPMV_ECLOSED),
                                 "message", "cancelled: the client closed its "
                                 "connection"));
  for (int i = 0; i < d->nfds; i++)
    if (d->fds[i] >= 0)
      close(d->fds[i]);
  json_decref(d->req);
  free(d);
}

int spmvd_wk_cancel_how(const json_t *msg)
{
  return json_is_false(json_object_get(msg, "drop")) ? SPMVD_WK_STOP
                                                      : SPMVD_WK_DROP;
}

void spmvd_wk_cancel_deferred(struct worker *w, json_int_t target, int drop)
{
  for (struct deferred **p = &w->later; *p; p = &(*p)->next) {
    struct deferred *d = *p;
    if (json_integer_value(json_object_get(d->req, "seq")) != target)
      continue;
    if (!drop) {
      json_object_set_new(d->req, "cancelled", json_true());
      return;
    }
    *p = d->next;
    if (w->later_tail == &d->next)
      w->later_tail = p;
    drop_cancelled(w, d);
    return;
  }
}

/* A cancel {target} (d, freed here): of the solve running, or of one that
 * waits in w->later; answered at once, as every request is, so that the
 * front end's device timeout never waits on it. */
static void take_cancel(struct worker *w, struct deferred *d)
{
  json_int_t target = json_integer_value(json_object_get(d->req, "target"));
  int how = spmvd_wk_cancel_how(d->req);
  json_int_t seq = json_integer_value(json_object_get(d->req, "seq"));

  if (w->solving && target == w->solving)
    w->cancelled = how;
  else
    spmvd_wk_cancel_deferred(w, target, how == SPMVD_WK_DROP);
  spmvd_wk_send_msg(w, json_pack("{sI sb}", "seq", seq, "ok", 1));
  json_decref(d->req);
  free(d);
}

/*
 * Serves what the front end sent while a long operation runs (a
 * calibration, up to minutes; a tune or bench of matrix busy, seconds):
 * products and unloads of other matrices, buffer releases, and lists of
 * operations that name no busy matrix while nothing waits, at once, so
 * that the device's other clients keep multiplying (the front end matches
 * replies by seq, not order).  The rest waits in w->later, in its order,
 * until the operation ends: requests on the busy matrix, loads, tunes, a
 * product or unload of a matrix that an earlier waiting request names, and
 * a release while any product waits (it may use that buffer).  busy < 0:
 * none.
 */
void spmvd_wk_serve_between(struct worker *w, json_int_t busy)
{
  struct pollfd pfd = { w->fd, POLLIN, 0 };
  struct spmv_error err;

  spmvd_wk_heartbeat(w);
  while (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLIN | POLLHUP))) {
    struct deferred *d = calloc(1, sizeof *d);
    const char *op;
    json_int_t h;
    int rc, now;

    if (d == NULL) {
      spmvd_log_error("out of memory");
      exit(2);
    }
    rc = spmvd_ipc_recv(w->fd, &d->req, d->fds, &d->nfds, SPMVD_IPC_MAX_FDS,
                        &err);
    if (rc < 0) {
      /* The front end is gone (or broke the protocol): as in main(). */
      if (rc != SPMV_ECLOSED)
        spmvd_log_error("%s", err.msg);
      free(d);
      spmvd_wk_shutdown(w);
      exit(rc == SPMV_ECLOSED ? 0 : 2);
    }
    op = json_string_value(json_object_get(d->req, "op"));
    h = req_handle(d->req);
    if (op != NULL && strcmp(op, "cancel") == 0) {
      take_cancel(w, d);
      continue;
    }
    if (op == NULL)
      now = 0;
    else if (strcmp(op, "multiply") == 0 || strcmp(op, "multiply-block") == 0 ||
             strcmp(op, "unload") == 0)
      now = h != busy && !deferred_names(w, h);
    else if (strcmp(op, "ops") == 0 || strcmp(op, "vnew") == 0 ||
             strcmp(op, "vfree") == 0)
      /* A solve's vectors are in use until it ends: no vfree meanwhile.  A
       * list run with other blocks' workers waits for them, and they may
       * wait in the split solve running here for this one: it is served
       * after that solve, in the order the front end sent both. */
      now = w->later == NULL && !list_names(d->req, busy) &&
            !(w->solving && strcmp(op, "vfree") == 0) &&
            !(w->split_solving && json_object_get(d->req, "sync"));
    else
      now = strcmp(op, "release") == 0 && !deferred_names(w, -1);
    if (now) {
      spmvd_wk_serve_deferred(w, d);
      continue;
    }
    *w->later_tail = d;
    w->later_tail = &d->next;
  }
}

/* The race's view of one matrix: a candidate loaded beside the resident
 * one and, for a tune, the leader kept (race_keep). */
struct race {
  struct worker *w;
  struct wmatrix *m;
  struct spmvd_bmatrix *cand;
  json_int_t seq;
  const char *stage;
  struct spmv_config cand_cfg;   /* cand's configuration */
  struct spmvd_bmatrix *best;    /* the leader so far, or NULL */
  struct spmv_config best_cfg;
  double load_ms, time_ms;       /* the candidates' loads (and frees, and
                                    their CSR staged on the device) and
                                    timing runs */
};

/* Releases the leader kept, if any. */
static void race_drop_best(struct race *r)
{
  if (r->best)
    r->w->ops->unload(r->w->be, r->best);
  r->best = NULL;
}

static int race_load(void *ctx, const struct spmv_config *cfg,
                     struct spmv_error *err)
{
  struct race *r = ctx;
  char text[64];

  /* Other matrices' products go on between candidates. */
  spmvd_wk_serve_between(r->w, r->m->handle);
  SPMVD_WK_SLOW(STEP);
  /* Said before trying it: if it brings the worker down, the front end
   * knows which configuration to quarantine. */
  spmv_config_format(cfg, text, sizeof text);
  spmvd_wk_send_msg(r->w, json_pack("{sI ss ss}", "seq", r->seq, "event",
                                    "candidate", "candidate", text));
  int rc = 0;
#ifdef SPMVD_FAULT_INJECTION
  rc = spmvd_fault_run(cfg, err);
#endif
  double t0 = spmvd_wk_now_ms();
  if (rc == 0)
    rc = r->w->ops->load(r->w->be, &r->m->A, r->m->dtype, cfg, &r->cand, err);
  if (rc == SPMV_ENOMEM && r->best) {
    /* The leader kept takes the room: it goes (to be built again after
     * the race, should it win), and the candidate is tried as before. */
    race_drop_best(r);
    rc = r->w->ops->load(r->w->be, &r->m->A, r->m->dtype, cfg, &r->cand, err);
  }
  r->load_ms += spmvd_wk_now_ms() - t0;
  spmvd_wk_die_if_sticky(rc);
  r->cand_cfg = *cfg;
  return rc;
}

static int race_time(void *ctx, int warmup, int reps, double *median_us,
                     struct spmv_error *err)
{
  struct race *r = ctx;
  double t0 = spmvd_wk_now_ms();
  int rc = r->w->ops->time(r->w->be, r->cand, warmup, reps, median_us, err);
  r->time_ms += spmvd_wk_now_ms() - t0;
  spmvd_wk_die_if_sticky(rc);
  return rc;
}

static void race_unload(void *ctx)
{
  struct race *r = ctx;
  double t0 = spmvd_wk_now_ms();

  if (r->cand)
    r->w->ops->unload(r->w->be, r->cand);
  r->cand = NULL;
  r->load_ms += spmvd_wk_now_ms() - t0;  /* freeing is part of a load's cost */
}

/* A tune's race keeps its leader: the pick is then made resident as it
 * was timed, not converted and uploaded again. */
static void race_keep(void *ctx)
{
  struct race *r = ctx;

  race_drop_best(r);
  r->best = r->cand;
  r->best_cfg = r->cand_cfg;
  r->cand = NULL;
}

static void race_progress(void *ctx, int done, int total,
                          const struct spmvd_trial *t)
{
  struct race *r = ctx;
  char text[64];

  spmv_config_format(&t->cfg, text, sizeof text);
  spmvd_wk_send_msg(r->w, json_pack("{sI ss ss si si ss sf ss}", "seq",
                                    r->seq, "event", "progress", "stage",
                                    r->stage, "done", done, "total", total,
                                    "candidate", text, "time_us", t->time_us,
                                    "status",
                                    spmvd_trial_status_name(t->status)));
}

static const struct spmvd_race_ops race_ops = {
  race_load, race_time, race_unload, race_progress, NULL,
};

/* The leader the race kept when it is the pick cfg (taken from r), else
 * NULL: the pick is then to be built anew. */
static struct spmvd_bmatrix *race_take_leader(struct race *r,
                                              const struct spmv_config *cfg)
{
  struct spmvd_bmatrix *bm = NULL;

  if (r->best && memcmp(&r->best_cfg, cfg, sizeof *cfg) == 0) {
    bm = r->best;
    r->best = NULL;
  }
  return bm;
}

/* A tune's: the leader kept. */
static const struct spmvd_race_ops tune_race_ops = {
  race_load, race_time, race_unload, race_progress, race_keep,
};

/* The tuner's input for m: req's quarantined configurations (exclude, at
 * most max into ex) and the operator's formats (exclude_formats); m's
 * profile computed first if the worker has none (*profile_ms, may be
 * NULL, what that took, else 0). */
static int tune_input(struct wmatrix *m, struct worker *w, json_t *req,
                      struct spmv_config *ex, size_t max,
                      struct spmvd_tune_input *in, double *profile_ms,
                      struct spmv_error *err)
{
  json_t *exclude = json_object_get(req, "exclude");
  json_t *formats = json_object_get(req, "exclude_formats");
  enum spmv_format f;
  size_t i;
  json_t *v;

  memset(in, 0, sizeof *in);
  if (profile_ms)
    *profile_ms = 0;
  if (!m->have_prof) {
    double t0 = spmvd_wk_now_ms();
    int rc = spmv_profile_compute_threads(&m->A, &m->prof,
                                          spmv_par_threads(m->A.nnz), err);
    if (rc < 0)
      return rc;
    m->have_prof = 1;
    if (profile_ms)
      *profile_ms = spmvd_wk_now_ms() - t0;
  }
  in->A = &m->A;
  in->prof = &m->prof;
  in->dtype = m->dtype;
  in->dev = &w->dev;
  in->exclude = ex;
  json_array_foreach(exclude, i, v) {
    if (in->nexclude < max && json_is_string(v) &&
        spmv_config_parse(json_string_value(v), &ex[in->nexclude], NULL) == 0)
      in->nexclude++;
  }
  if (formats != NULL && !json_is_array(formats))
    return spmv_error_set(err, SPMV_EPROTO, "exclude_formats is not an array");
  json_array_foreach(formats, i, v) {
    if (spmv_format_parse(json_string_value(v), &f) != 0)
      return spmv_error_set(err, SPMV_EPROTO,
                            "exclude_formats[%zu] is not a format", i);
    in->exclude_formats |= 1u << f;
  }
  return 0;
}

int spmvd_wk_tune_part(struct worker *w, struct wmatrix *part, json_t *req,
                       json_int_t seq, struct spmv_config *cfg,
                       struct spmvd_bmatrix **out, struct spmv_error *err)
{
  const char *sname = json_string_value(json_object_get(req, "strategy"));
  struct spmv_config ex[64];
  struct spmvd_tune_input in;
  struct spmvd_decision d;
  enum spmvd_strategy s;
  int rc;

  spmvd_decision_init(&d);
  if (!sname || (rc = spmvd_strategy_parse(sname, &s, err)) < 0 ||
      (rc = tune_input(part, w, req, ex, 64, &in, NULL, err)) < 0)
    return sname ? rc : spmv_error_set(err, SPMV_EPROTO, "no strategy");
  /* A part gets no calibration fits: predict, which needs them, races as
   * auto does without them. */
  if (s == SPMVD_STRATEGY_PREDICT)
    s = SPMVD_STRATEGY_AUTO;
  struct race r = {.w = w, .m = part, .seq = seq, .stage = "tuning"};
  r.load_ms = spmvd_wk_stage(w, &part->A);
  rc = spmvd_tuner_run(s, &in, &tune_race_ops, &r, NULL, &d, err);
  race_unload(&r);
  if (rc >= 0) {
    *cfg = d.cfg;
    if (!(*out = race_take_leader(&r, &d.cfg)))
      rc = w->ops->load(w->be, &part->A, part->dtype, &d.cfg, out, err);
  }
  race_drop_best(&r);
  spmvd_wk_unstage(w);
  spmvd_wk_die_if_sticky(rc);
  return rc < 0 ? rc : 0;
}

int spmvd_wk_op_tune(struct worker *w, json_t *req, json_int_t seq,
                     json_t **rep, struct spmv_error *err)
{
  json_int_t h;
  const char *sname;
  json_t *exclude = NULL, *fits = NULL;
  struct spmv_config ex[64];
  struct spmvd_predictor pred;
  struct spmvd_tune_input in;
  struct spmvd_decision d;
  enum spmvd_strategy s;
  struct wmatrix *m;
  double profile_ms = 0;
  int rc;

  spmvd_decision_init(&d);
  if (json_unpack(req, "{sI ss s?o s?o}", "handle", &h, "strategy", &sname,
                  "exclude", &exclude, "predictor", &fits) < 0 ||
      (exclude && !json_is_array(exclude)))
    return spmv_error_set(err, SPMV_EPROTO, "bad tune message");
  if (!(m = spmvd_wk_find(w, h)))
    return spmv_error_set(err, SPMV_ENOENT, "no matrix %lld", (long long)h);
  if ((rc = spmvd_strategy_parse(sname, &s, err)) < 0 ||
      (rc = tune_input(m, w, req, ex, 64, &in, &profile_ms, err)) < 0)
    return rc;
  /* The device's calibration fits, when the front end has them. */
  if (fits && (rc = spmvd_predict_from_json(fits, &pred, err)) < 0)
    return rc;
  if (fits)
    in.pred = &pred;
  struct race r = {.w = w, .m = m, .seq = seq, .stage = "tuning"};
  double t0 = spmvd_wk_now_ms(), t1, pin0 = m->pin_ms;
  spmvd_wk_pin_host(w, m);  /* every candidate loads from it */
  r.load_ms = spmvd_wk_stage(w, &m->A);
  rc = spmvd_tuner_run(s, &in, &tune_race_ops, &r, NULL, &d, err);
  race_unload(&r);
  t1 = spmvd_wk_now_ms();
  if (rc >= 0) {
    d.strategy = s;
    if (d.gflops == 0 && d.time_us > 0)
      spmvd_decision_rates(&d, &m->prof, m->dtype);
    struct spmvd_bmatrix *leader = race_take_leader(&r, &d.cfg);
    if (leader)
      spmvd_wk_take_resident(w, m, leader, &d.cfg);
    else
      rc = spmvd_wk_make_resident(w, m, &d.cfg, err);
  }
  race_drop_best(&r);
  spmvd_wk_unstage(w);
  spmvd_wk_unpin_host(w, m);
  spmvd_wk_die_if_sticky(rc);
  if (rc < 0)
    goto out;
  /* The profile (when it was made here), the race (the host copy's pin,
   * the candidates' loads and their timing runs included) and the pick
   * made resident. */
  *rep = json_pack("{so so s{sf sf sf sf sf}}", "decision",
                   spmvd_ipc_decision_pack(&d), "profile",
                   spmvd_ipc_profile_pack(&m->prof), "steps", "race_ms",
                   t1 - t0, "resident_ms", spmvd_wk_now_ms() - t1, "pin_ms",
                   m->pin_ms - pin0, "race_load_ms", r.load_ms, "race_time_ms",
                   r.time_ms);
  if (*rep && profile_ms > 0)
    json_object_set_new(json_object_get(*rep, "steps"), "profile_ms",
                        json_real(profile_ms));
out:
  spmvd_decision_fini(&d);
  return rc;
}

static int cmp_trial(const void *a, const void *b)
{
  const struct spmvd_trial *x = a, *y = b;
  int fx = x->status == SPMVD_TRIAL_FAILED, fy = y->status == SPMVD_TRIAL_FAILED;
  if (fx != fy)
    return fx - fy;
  return (x->time_us > y->time_us) - (x->time_us < y->time_us);
}

/*
 * bench with configs: each configuration timed as a calibration point is
 * (loaded, SPMVD_CALIB_WARMUP runs and the median of SPMVD_CALIB_REPS,
 * the median of rounds such loads), in the given order, so that the
 * predictor's time can be set against the measure it was fitted to, in
 * this process.  One that cannot run is a failed trial with its message;
 * the others go on.
 */
static int bench_configs(struct worker *w, struct wmatrix *m,
                         const json_t *configs, int rounds, json_int_t seq,
                         json_t **rep, struct spmv_error *err)
{
  struct spmvd_calib_backend cb = { w->ops, w->be, SPMVD_CALIB_WARMUP,
                                    SPMVD_CALIB_REPS };
  size_t i, n = json_array_size(configs);
  json_t *trials = json_array(), *v;

  if (!trials)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  spmvd_wk_pin_host(w, m);
  spmvd_wk_stage(w, &m->A);
  json_array_foreach(configs, i, v) {
    struct spmv_config cfg;
    struct spmv_error e;
    char text[64];
    double us = 0;
    int rc;

    spmvd_wk_serve_between(w, m->handle);
    spmv_error_clear(&e);
    snprintf(text, sizeof text, "%s", json_string_value(v) ? json_string_value(v) : "");
    rc = spmv_config_parse(text, &cfg, &e);
    if (rc == 0) {
      spmv_config_format(&cfg, text, sizeof text);
      spmvd_wk_send_msg(w, json_pack("{sI ss ss}", "seq", seq, "event",
                                     "candidate", "candidate", text));
#ifdef SPMVD_FAULT_INJECTION
      rc = spmvd_fault_run(&cfg, &e);
#endif
      if (rc == 0)
        rc = spmvd_calib_backend_time_rounds(&cb, &m->A, m->dtype, &cfg,
                                             rounds, NULL, &us, &e);
      spmvd_wk_die_if_sticky(rc);
      if (rc == 0 && !(us > 0))
        rc = spmv_error_set(&e, SPMV_EINVAL, "the backend timed %g us", us);
    }
    int ok = rc == 0;
    json_array_append_new(
        trials, json_pack("{ss ss sf sf si ss}", "config", text, "status",
                          ok ? "ok" : "failed", "time_us", ok ? us : 0.0,
                          "gflops", ok ? 2.0 * (double)m->A.nnz / us / 1e3 : 0.0,
                          "code", ok ? 0 : e.code, "message", ok ? "" : e.msg));
    spmvd_wk_send_msg(w, json_pack("{sI ss ss si si ss sf ss}", "seq", seq,
                                   "event", "progress", "stage", "bench",
                                   "done", (int)i + 1, "total", (int)n,
                                   "candidate", text, "time_us",
                                   ok ? us : 0.0, "status",
                                   ok ? "ok" : "failed"));
  }
  spmvd_wk_unstage(w);
  spmvd_wk_unpin_host(w, m);
  *rep = json_pack("{so}", "trials", trials);
  return *rep ? 0 : spmv_error_set(err, SPMV_ENOMEM, "out of memory");
}

int spmvd_wk_op_bench(struct worker *w, json_t *req, json_int_t seq,
                      json_t **rep, struct spmv_error *err)
{
  json_int_t h;
  json_t *configs = NULL;
  int rounds = 3;
  struct spmv_config ex[1];
  struct spmvd_candidates *c = NULL;
  struct spmvd_race_params p;
  struct spmvd_tune_input in;
  struct spmvd_decision d;
  struct wmatrix *m;
  int rc;

  spmvd_decision_init(&d);
  if (json_unpack(req, "{sI s?o s?i}", "handle", &h, "configs", &configs,
                  "rounds", &rounds) < 0 ||
      (configs && !json_is_array(configs)) || rounds < 1 ||
      rounds > SPMVD_CALIB_MAX_ROUNDS)
    return spmv_error_set(err, SPMV_EPROTO, "bad bench message");
  if (!(m = spmvd_wk_find(w, h)))
    return spmv_error_set(err, SPMV_ENOENT, "no matrix %lld", (long long)h);
  if (configs)
    return bench_configs(w, m, configs, rounds, seq, rep, err);
  if ((rc = tune_input(m, w, req, ex, 0, &in, NULL, err)) < 0)
    return rc;
  c = malloc(sizeof *c);
  if (!c)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c, err);
  if (rc < 0)
    goto out;
  spmvd_race_params_default(&p);
  p.drop_ratio = 0;
  struct race r = {.w = w, .m = m, .seq = seq, .stage = "bench"};
  spmvd_wk_pin_host(w, m);
  spmvd_wk_stage(w, &m->A);
  rc = spmvd_tuner_race(c, &race_ops, &r, &p, &in, &d, err);
  race_unload(&r);
  spmvd_wk_unstage(w);
  spmvd_wk_unpin_host(w, m);
  if (rc < 0)
    goto out;
  qsort(d.trials, d.ntrials, sizeof *d.trials, cmp_trial);
  json_t *trials = json_array();
  for (size_t i = 0; i < d.ntrials; i++) {
    const struct spmvd_trial *t = &d.trials[i];
    json_t *j = spmvd_ipc_trial_pack(t);
    json_object_set_new(j, "gflops",
                        json_real(t->time_us > 0
                                      ? 2.0 * (double)m->A.nnz / t->time_us / 1e3
                                      : 0.0));
    json_array_append_new(trials, j);
  }
  *rep = json_pack("{so}", "trials", trials);
out:
  free(c);
  spmvd_decision_fini(&d);
  return rc;
}

/* --- calibrate --- */

/* spmvd_calib_host.between: the requests that came meanwhile, served
 * between a calibration's probe matrices and points (slow-step of the
 * fault-injection build slows each point, as a large device's are). */
static void calib_between(void *ctx, int point)
{
  struct worker *w = ctx;

  spmvd_wk_serve_between(w, -1);
  if (point)
    SPMVD_WK_SLOW(STEP);
}

/* spmvd_calib_host.send. */
static void calib_send(void *ctx, json_t *ev)
{
  spmvd_wk_send_msg(ctx, ev);
}

/* calibrate {dtype, max_seconds, points}: spmvd_calib_bounded on this
 * worker's device. */
int spmvd_wk_op_calibrate(struct worker *w, json_t *req, json_int_t seq,
                          json_t **rep, struct spmv_error *err)
{
  struct spmvd_calib_host h = { w->ops, w->be, &w->dev, calib_between,
                                calib_send, w };
  enum spmv_dtype dt = SPMV_F64;
  const char *dts;
  double max_s = 0;
  int rc, want_points = 0;

  if (json_unpack(req, "{ss s?F s?b}", "dtype", &dts, "max_seconds", &max_s,
                  "points", &want_points) < 0 ||
      !(max_s >= 0))
    return spmv_error_set(err, SPMV_EPROTO, "bad calibrate message");
  if ((rc = spmvd_wk_parse_dtype(dts, &dt, err)) < 0)
    return rc;
  return spmvd_calib_bounded(&h, seq, dt, max_s, want_points, rep, err);
}

