/* spmvd_ops_tune.c: the tuning ops: a loaded matrix's decision (the
 * cache's lookup, its check on first use, the quarantine of what fails,
 * the tuning and its store), tune and bench. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_cache.h"
#include "spmvd_cachejob.h"
#include "spmvd_conn.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_predict.h"
#include "spmvd_server.h"
#include "spmvd_worker.h"

/* --- replies describing a decision --- */

/* A load's or tune's reply: m's decision. */
static json_t *decision_reply(const struct spmvd_matrix *m)
{
  /* Numbers through spmvd_cache_number_json: a non-finite one must not
   * fail the whole reply. */
  json_t *r = json_pack("{sI ss ss so so so so ss so}", "handle",
                        (json_int_t)m->handle, "fingerprint", m->fingerprint,
                        "source", m->source, "config",
                        spmvd_cache_config_json(&m->cfg, m->cfg_text), "time_us",
                        spmvd_cache_number_json(m->time_us), "gflops",
                        spmvd_cache_number_json(m->gflops), "gbps",
                        spmvd_cache_number_json(m->gbps),
                        "strategy", spmvd_strategy_name(m->strategy),
                        "tuning_cost_spmv",
                        spmvd_cache_number_json(m->cost_spmv));
  if (r && strcmp(m->source, "tuned") == 0)
    json_object_set_new(r, "reason", json_string(m->reason));
  return r;
}

/* Sets m's configuration and its text. */
static void set_config(struct spmvd_matrix *m, const struct spmv_config *cfg)
{
  m->cfg = *cfg;
  spmv_config_format(cfg, m->cfg_text, sizeof m->cfg_text);
}

/* The load (or tune) is done: the matrix is ready, the reply its decision. */
static void load_finish(struct spmvd_op *o, struct spmvd_matrix *m)
{
  spmvd_log_info("uid %ld: matrix %lld (%s, %lld x %lld, %lld nnz, %s): %s "
                 "from %s, %.2f us, %.2f GFLOP/s", (long)m->uid,
                 (long long)m->handle, m->name, (long long)m->rows,
                 (long long)m->cols, (long long)m->nnz,
                 spmv_dtype_name(m->dtype), m->cfg_text, m->source,
                 m->time_us, m->gflops);
  json_t *r = decision_reply(m);
  /* A tuned decision says whether it was kept: if not, the next load of
   * the matrix tunes again. */
  if (r && strcmp(m->source, "tuned") == 0)
    json_object_set_new(r, "stored", json_boolean(!o->store_failed));
  if (r && o->store_failed)
    json_object_set_new(r, "store_error", json_string(o->store_error));
  if (r && o->t0_ns) {
    spmvd_op_step(o, "total_ms", spmvd_op_since_ms(o->t0_ns));
    if (o->steps)
      json_object_set(r, "steps", o->steps);
  }
  spmvd_ops_split_load(o, m, r);  /* ready once its blocks are, if split */
}

static void on_verified(void *ctx, json_t *rep, const struct spmv_error *err);
static void start_tune(struct spmvd_op *o, struct spmvd_matrix *m);
static void quarantine_trying(struct spmvd_op *o, const struct spmv_error *err);

int spmvd_ops_take_candidate(json_t *ev, char *trying, size_t n)
{
  const char *kind = json_string_value(json_object_get(ev, "event"));
  const char *cand = json_string_value(json_object_get(ev, "candidate"));

  if (!kind || strcmp(kind, "candidate") != 0)
    return 0;
  snprintf(trying, n, "%s", cand ? cand : "");
  return 1;
}

/* A worker's event during a tune, bench or calibrate: the candidate being
 * built is remembered (to quarantine it should the worker crash), the rest
 * relayed to the client. */
void spmvd_op_on_progress(void *ctx, json_t *ev)
{
  struct spmvd_op *o = ctx;
  const char *kind = json_string_value(json_object_get(ev, "event"));
  json_t *e;

  if (spmvd_ops_take_candidate(ev, o->trying, sizeof o->trying))
    return;
  if (o->c->closing)
    return;
  /* A calibration's points (asked for): relayed whole, under the
   * client's id. */
  if (kind && strcmp(kind, "points") == 0) {
    if ((e = json_copy(ev)) != NULL) {
      json_object_del(e, "seq");
      json_object_set_new(e, "id", json_integer((json_int_t)o->id));
      spmvd_conn_send(o->c, e, NULL, 0, 0);
    }
    json_decref(e);
    return;
  }
  e = json_pack("{sI ss sO sO sO sO sO}", "id", (json_int_t)o->id, "event",
                "progress", "stage", json_object_get(ev, "stage"), "done",
                json_object_get(ev, "done"), "total",
                json_object_get(ev, "total"), "candidate",
                json_object_get(ev, "candidate"), "time_us",
                json_object_get(ev, "time_us"));
  if (e)
    spmvd_conn_send(o->c, e, NULL, 0, 0);
  json_decref(e);
}

/* After the store: check the new configuration, or answer. */
static void after_store(struct spmvd_op *o, struct spmvd_matrix *m)
{
  spmvd_op_step(o, "store_ms", spmvd_op_since_ms(o->mark_ns));
  m->checked = 0;
  if (o->verify) {
    spmvd_op_call(o,
                  json_pack("{ss sI ss sb}", "op", "prepare", "handle",
                            (json_int_t)m->handle, "config", m->cfg_text,
                            "check", 1),
                  NULL, 0, on_verified, NULL);
    return;
  }
  load_finish(o, m);
}

/* The decision is stored (or could not be: logged, the op goes on). */
static void on_stored(struct spmvd_cachejob *j)
{
  struct spmvd_op *o = j->ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);

  if (j->rc < 0 && j->rc != SPMV_EPERM)
    spmvd_log_warn("cannot store the tuning of %s: %s", j->t.fingerprint,
                   j->err.msg);
  o->store_failed = j->rc < 0;
  snprintf(o->store_error, sizeof o->store_error, "%s", j->err.msg);
  if (!m) {
    spmvd_op_end(o);
    return;
  }
  m->tuning_id = j->rc < 0 ? 0 : j->id;
  after_store(o, m);
}

/* Stores the decision d (its trials taken) on the cache thread; the op
 * goes on when it is written. */
static void store_decision(struct spmvd_op *o, struct spmvd_matrix *m,
                           struct spmvd_decision *d)
{
  const struct spmvd_device_info *dev = spmvd_worker_device(spmvd_op_worker(o));
  struct spmvd_cachejob *j = spmvd_cachejob_new(SPMVD_CJ_STORE);

  m->tuning_id = 0;
  if (!j || !dev) {
    o->store_failed = 1;
    snprintf(o->store_error, sizeof o->store_error, "%s",
             j ? "no device" : "out of memory");
    spmvd_log_warn("cannot store the tuning of %s: %s", m->fingerprint,
                   o->store_error);
    spmvd_cachejob_free(j);
    after_store(o, m);
    return;
  }
  spmvd_tuning_from_decision(&j->t, d, m->fingerprint, dev, m->dtype);
  j->prof = m->prof;
  j->trials = d->trials;
  j->ntrials = d->ntrials;
  d->trials = NULL;
  d->ntrials = 0;
  spmvd_cachejob_post(o->srv->bio, j, on_stored, o);
}

/* The worker tuned: its decision becomes m's, then is stored. */
static void on_tuned(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);
  struct spmvd_decision d;
  struct spmv_error e;

  if (!m) {
    spmvd_op_end(o);
    return;
  }
  if (err) {
    quarantine_trying(o, err);
    spmvd_op_load_fail(o, err);
    return;
  }
  spmvd_op_step(o, "tune_ms", spmvd_op_since_ms(o->mark_ns));
  spmvd_op_steps_merge(o, rep);
  o->mark_ns = uv_hrtime();
  if (spmvd_ipc_decision_unpack(json_object_get(rep, "decision"), &d) < 0 ||
      spmvd_ipc_profile_unpack(json_object_get(rep, "profile"), &m->prof) < 0) {
    spmv_error_set(&e, SPMV_EIO, "bad decision from the device worker");
    spmvd_op_load_fail(o, &e);
    return;
  }
  set_config(m, &d.cfg);
  snprintf(m->source, sizeof m->source, "tuned");
  snprintf(m->reason, sizeof m->reason, "%s", o->reason);
  m->strategy = d.strategy;
  m->time_us = d.time_us;
  m->gflops = d.gflops;
  m->gbps = d.gbps;
  m->cost_spmv = d.cost_spmv;
  json_decref(m->trials);
  m->trials = json_array();
  for (size_t i = 0; i < d.ntrials; i++) {
    char text[64];
    spmv_config_format(&d.trials[i].cfg, text, sizeof text);
    json_array_append_new(m->trials,
                          json_pack("{ss sf ss}", "config", text, "time_us",
                                    d.trials[i].time_us, "status",
                                    spmvd_trial_status_name(d.trials[i].status)));
  }
  store_decision(o, m, &d);
  spmvd_decision_fini(&d);
}

void spmvd_ops_add_exclude_formats(struct spmvd_server *srv, json_t *msg)
{
  json_t *names;

  if (msg == NULL || srv->cfg.exclude_formats == 0 ||
      (names = json_array()) == NULL)
    return;
  for (int f = 0; f < SPMV_FMT_COUNT; f++)
    if (srv->cfg.exclude_formats & (1u << f))
      json_array_append_new(
          names, json_string(spmv_format_name((enum spmv_format)f)));
  json_object_set_new(msg, "exclude_formats", names);
}

json_t *spmvd_ops_excluded(const struct spmvd_cachejob *j)
{
  json_t *exclude = json_array();

  if (j->rc < 0 && j->rc != SPMV_ECACHE)
    spmvd_log_warn("cache: %s", j->err.msg);
  for (int i = 0; exclude && i < j->nex; i++) {
    char text[64];
    spmv_config_format(&j->ex[i], text, sizeof text);
    json_array_append_new(exclude, json_string(text));
  }
  return exclude;
}

int spmvd_ops_post_exclude(struct spmvd_server *srv,
                           const struct spmvd_matrix *m, int wk,
                           void (*then)(struct spmvd_cachejob *j), void *ctx)
{
  const struct spmvd_device_info *dev =
      spmvd_worker_device(spmvd_server_worker(srv, wk));
  struct spmvd_cachejob *j = spmvd_cachejob_new(SPMVD_CJ_EXCLUDE);

  if (!j)
    return SPMV_ENOMEM;
  snprintf(j->fp, sizeof j->fp, "%s", m->fingerprint);
  if (dev)
    j->dev = *dev;
  j->dtype = m->dtype;
  spmvd_cachejob_post(dev ? srv->bio : NULL, j, then, ctx);
  return 0;
}

/* The cache said what to leave out (and the device's calibration fits,
 * for the predictor): the worker tunes. */
static void on_excluded(struct spmvd_cachejob *j)
{
  struct spmvd_op *o = j->ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);
  json_t *exclude;

  if (!m) {
    spmvd_op_end(o);
    return;
  }
  exclude = spmvd_ops_excluded(j);
  spmvd_log_debug("matrix %lld: tuning (%s): %s", (long long)m->handle,
                  spmvd_strategy_name(o->strategy), o->reason);
  json_t *msg = json_pack("{ss sI ss so}", "op", "tune", "handle",
                          (json_int_t)m->handle, "strategy",
                          spmvd_strategy_name(o->strategy), "exclude", exclude);
  if (msg && j->json)
    json_object_set(msg, "predictor", j->json);
  spmvd_ops_add_exclude_formats(o->srv, msg);
  spmvd_op_call(o, msg, NULL, 0, on_tuned, spmvd_op_on_progress);
}

/* Tunes m: first the quarantined configurations from the cache. */
static void start_tune(struct spmvd_op *o, struct spmvd_matrix *m)
{
  struct spmv_error err;

  o->mark_ns = uv_hrtime();
  if (spmvd_ops_post_exclude(o->srv, m, o->wk, on_excluded, o) < 0) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    spmvd_op_load_fail(o, &err);
  }
}

void spmvd_ops_quarantine(struct spmvd_server *srv, struct spmvd_matrix *m,
                          int wk, const struct spmv_config *cfg,
                          const char *why)
{
  const struct spmvd_device_info *dev =
      spmvd_worker_device(spmvd_server_worker(srv, wk));
  struct spmvd_cachejob *j;

  if (!srv->bio || !dev || !(j = spmvd_cachejob_new(SPMVD_CJ_QUARANTINE))) {
    if (srv->bio && dev)
      spmvd_log_warn("cannot quarantine a configuration of %s: out of memory",
                     m->fingerprint);
    return;
  }
  snprintf(j->fp, sizeof j->fp, "%s", m->fingerprint);
  j->dev = *dev;
  j->dtype = m->dtype;
  j->cfg = *cfg;
  snprintf(j->why, sizeof j->why, "%s", why ? why : "");
  spmvd_cachejob_post(srv->bio, j, NULL, NULL);
}

/* Quarantines cfg of m on m's own worker's device. */
static void quarantine_cfg(struct spmvd_server *srv, struct spmvd_matrix *m,
                           const struct spmv_config *cfg, const char *why)
{
  spmvd_ops_quarantine(srv, m, m->wk, cfg, why);
}

/* Quarantines m's own configuration. */
static void quarantine(struct spmvd_server *srv, struct spmvd_matrix *m,
                       const char *why)
{
  quarantine_cfg(srv, m, &m->cfg, why);
}

void spmvd_ops_quarantine_trying(struct spmvd_server *srv,
                                 struct spmvd_matrix *m, int wk, int block,
                                 const char *trying,
                                 const struct spmv_error *err)
{
  struct spmv_config cfg;

  if (!*trying || !spmvd_worker_fault_error(err) ||
      spmv_config_parse(trying, &cfg, NULL) < 0)
    return;
  if (block < 0) {
    spmvd_log_warn("matrix %lld: the device worker crashed or timed out "
                   "running candidate '%s': quarantined", (long long)m->handle,
                   trying);
    spmvd_ops_quarantine(srv, m, wk, &cfg,
                         "the device worker crashed or timed out running it");
  } else {
    spmvd_log_warn("matrix %lld: the device worker of block %d crashed or "
                   "timed out running candidate '%s': quarantined",
                   (long long)m->handle, block, trying);
    spmvd_ops_quarantine(srv, m, wk, &cfg,
                         "the device worker crashed or timed out running it "
                         "on a block of the matrix");
  }
}

/* The worker crashed or timed out while building or timing o->trying:
 * quarantine it so that the retry tunes without it. */
static void quarantine_trying(struct spmvd_op *o, const struct spmv_error *err)
{
  struct spmvd_matrix *m = spmvd_registry_find(&o->srv->reg, o->handle);

  if (m)
    spmvd_ops_quarantine_trying(o->srv, m, m->wk, -1, o->trying, err);
}

/* The worker checked m's configuration against the reference: a cached
 * one that fails is quarantined and m tuned again; a fresh one that fails
 * (verify) fails the op. */
static void on_verified(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);
  struct spmv_error e;
  double resid = 0;

  if (!m) {
    spmvd_op_end(o);
    return;
  }
  if (err && err->code != SPMV_EWORKER && strcmp(m->source, "cache") == 0) {
    /* A cached configuration that cannot even be built here is as wrong
     * as one that computes wrong numbers. */
    spmvd_log_warn("matrix %lld: cached configuration '%s' failed: %s; "
                   "quarantined, tuning again", (long long)m->handle,
                   m->cfg_text, err->msg);
    quarantine(o->srv, m, err->msg);
    snprintf(o->reason, sizeof o->reason,
             "cached configuration '%s' failed (%.120s), tuning again",
             m->cfg_text, err->msg);
    start_tune(o, m);
    return;
  }
  if (err) {
    spmvd_op_load_fail(o, err);
    return;
  }
  spmvd_op_steps_merge(o, rep);
  json_unpack(rep, "{s?F}", "residual", &resid);
  if (json_is_true(json_object_get(rep, "verified"))) {
    m->checked = 1;
    struct spmvd_cachejob *j;
    if (strcmp(m->source, "cache") == 0 && o->srv->bio &&
        (j = spmvd_cachejob_new(SPMVD_CJ_HIT))) {
      j->id = m->tuning_id;
      spmvd_cachejob_post(o->srv->bio, j, NULL, NULL);
    }
    load_finish(o, m);
    return;
  }
  if (strcmp(m->source, "cache") == 0) {
    spmvd_log_warn("matrix %lld: cached configuration '%s' gave a wrong "
                   "result (scaled residual %.3g): quarantined, tuning again",
                   (long long)m->handle, m->cfg_text, resid);
    quarantine(o->srv, m, "wrong result on its first use");
    snprintf(o->reason, sizeof o->reason,
             "cached configuration '%s' gave a wrong result (scaled residual "
             "%.3g), tuning again", m->cfg_text, resid);
    start_tune(o, m);
    return;
  }
  spmv_error_set(&e, SPMV_EVERIFY,
                 "configuration '%s' gave a wrong result (scaled residual %.3g)",
                 m->cfg_text, resid);
  quarantine(o->srv, m, "wrong result under verify");
  spmvd_op_load_fail(o, &e);
}

/* Whether a hit's cached profile was read and is of m's dimensions: the
 * profile is the structure's, as the fingerprint is, so a hit need not
 * compute it again. */
static int cached_profile_fits(const struct spmvd_cachejob *j,
                               const struct spmvd_matrix *m)
{
  return j->have_prof && j->prof.rows == m->rows && j->prof.cols == m->cols &&
         j->prof.nnz == m->nnz;
}

/* The cache answered the lookup: a hit is checked on its first use, a
 * miss is tuned. */
static void on_looked_up(struct spmvd_cachejob *j)
{
  struct spmvd_op *o = j->ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);
  const struct spmvd_tuning *t = &j->t;

  if (!m) {
    spmvd_op_end(o);
    return;
  }
  spmvd_op_step(o, "lookup_ms", spmvd_op_since_ms(o->mark_ns));
  if (j->rc < 0) {
    spmvd_log_warn("cache lookup of %s: %s", m->fingerprint, j->err.msg);
    snprintf(o->reason, sizeof o->reason, "the cache failed: %.200s",
             j->err.msg);
  } else if (!j->hit) {
    snprintf(o->reason, sizeof o->reason, "%s", j->reason);
  } else if (o->srv->cfg.exclude_formats & (1u << t->cfg.format)) {
    /* Cached before the operator excluded its format: not used. */
    snprintf(o->reason, sizeof o->reason,
             "the cached decision's format %s is in exclude_formats",
             spmv_format_name(t->cfg.format));
    start_tune(o, m);
    return;
  }
  if (j->rc == 0 && j->hit && !cached_profile_fits(j, m)) {
    snprintf(o->reason, sizeof o->reason,
             "the cached profile of the matrix cannot be read or is not its "
             "own, tuning again");
    start_tune(o, m);
    return;
  }
  if (j->rc < 0 || !j->hit) {
    start_tune(o, m);
    return;
  }
  m->prof = j->prof;
  set_config(m, &t->cfg);
  snprintf(m->source, sizeof m->source, "cache");
  m->strategy = t->strategy;
  m->time_us = t->time_us;
  m->gflops = t->gflops;
  m->gbps = t->gbps;
  m->cost_spmv = t->cost_spmv;
  m->tuning_id = t->id;
  json_decref(m->trials);
  m->trials = j->json ? json_incref(j->json) : json_array();
  spmvd_op_call(o,
                json_pack("{ss sI ss sb}", "op", "prepare", "handle",
                          (json_int_t)m->handle, "config", m->cfg_text,
                          "check", 1),
                NULL, 0, on_verified, NULL);
}

/* Looks m's tuning up on the cache thread; without a cache, tunes. */
void spmvd_ops_decide(struct spmvd_op *o, struct spmvd_matrix *m)
{
  const struct spmvd_device_info *dev = spmvd_worker_device(spmvd_op_worker(o));
  struct spmvd_cachejob *j;

  snprintf(o->reason, sizeof o->reason, "%s",
           o->srv->bio ? "no cached tuning" : "no cache is open");
  if (!o->srv->bio || !dev || !(j = spmvd_cachejob_new(SPMVD_CJ_LOOKUP))) {
    start_tune(o, m);
    return;
  }
  snprintf(j->fp, sizeof j->fp, "%s", m->fingerprint);
  j->dev = *dev;
  j->dtype = m->dtype;
  o->mark_ns = uv_hrtime();
  spmvd_cachejob_post(o->srv->bio, j, on_looked_up, o);
}

/* --- tune --- */

/* tune: a ready matrix tuned again, with the request's strategy. */
void spmvd_ops_run_tune(struct spmvd_conn *c, json_t *req, int64_t id)
{
  struct spmv_error err;
  struct spmvd_matrix *m;
  struct spmvd_op *o = NULL;
  enum spmvd_strategy s;
  int rc;


  rc = spmvd_op_get_ready_matrix(c, req, &m, &err);
  if (rc == 0)
    rc = spmvd_ops_split_refuse(m, "a tune", &err);
  if (rc == 0)
    rc = spmvd_op_strategy(c->srv, req, &s, &err);
  if (rc == 0 && !(o = spmvd_op_new(c, id, "tune")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  o->handle = m->handle;
  o->wk = m->wk;
  o->strategy = s;
  o->t0_ns = uv_hrtime();
  snprintf(o->reason, sizeof o->reason, "tuning requested (%s)",
           spmvd_strategy_name(o->strategy));
  start_tune(o, m);
}

/* --- bench --- */

/* The worker's trials, as bench answers them. */
static void on_bench(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;

  if (o->c->closing) {
    spmvd_op_end(o);
    return;
  }
  if (err) {
    quarantine_trying(o, err);
    spmvd_op_fail(o, err);
    return;
  }
  json_t *trials = json_array(), *t;
  size_t i;
  json_array_foreach(json_object_get(rep, "trials"), i, t) {
    int failed = strcmp(json_string_value(json_object_get(t, "status")), "failed") == 0;
    json_t *j;

    /* Every candidate's search lists those that ran; named configs are
     * all answered, a failed one with its error. */
    if (failed && !o->listed)
      continue;
    j = json_pack("{sO sO sO}", "config", json_object_get(t, "config"),
                  "time_us", json_object_get(t, "time_us"), "gflops",
                  json_object_get(t, "gflops"));
    if (j && o->listed)
      json_object_set_new(j, "status", json_string(failed ? "failed" : "ok"));
    if (j && failed)
      json_object_set_new(
          j, "error",
          json_pack("{ss sO}", "code",
                    spmv_err_name((int)json_integer_value(json_object_get(t, "code"))),
                    "message", json_object_get(t, "message")));
    json_array_append_new(trials, j);
  }
  spmvd_op_reply(o->c, o->id, json_pack("{so}", "trials", trials));
  spmvd_op_end(o);
}

/* bench's optional configs (1..SPMVD_BENCH_MAX_CONFIGS configuration
 * texts, each parsed here so that a typo is named before any work) and
 * rounds (1..SPMVD_CALIB_MAX_ROUNDS, only with configs). */
#define SPMVD_BENCH_MAX_CONFIGS 64
static int bench_args(json_t *req, uint32_t excluded, json_t **configs,
                      int *rounds, struct spmv_error *err)
{
  json_t *cf = json_object_get(req, "configs"), *r = json_object_get(req, "rounds"), *v;
  size_t i;

  *configs = NULL;
  *rounds = 3;
  if (r && !cf)
    return spmv_error_set(err, SPMV_EPROTO, "field \"rounds\" needs \"configs\"");
  if (r && (!json_is_integer(r) || json_integer_value(r) < 1 ||
            json_integer_value(r) > SPMVD_CALIB_MAX_ROUNDS))
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"rounds\" is not an integer in [1, %d]",
                          SPMVD_CALIB_MAX_ROUNDS);
  if (r)
    *rounds = (int)json_integer_value(r);
  if (!cf)
    return 0;
  if (!json_is_array(cf) || json_array_size(cf) < 1 ||
      json_array_size(cf) > SPMVD_BENCH_MAX_CONFIGS)
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"configs\" is not an array of 1 to %d "
                          "configurations", SPMVD_BENCH_MAX_CONFIGS);
  json_array_foreach(cf, i, v) {
    struct spmv_config cfg;
    struct spmv_error e;

    if (!json_is_string(v))
      return spmv_error_set(err, SPMV_EPROTO, "configs[%zu] is not a string", i);
    if (spmv_config_parse(json_string_value(v), &cfg, &e) < 0)
      return spmv_error_set(err, SPMV_EINVAL, "configs[%zu] '%.64s': %s", i,
                            json_string_value(v), e.msg);
    if (excluded & (1u << cfg.format))
      return spmv_error_set(err, SPMV_EINVAL,
                            "configs[%zu] '%.64s': format %s is excluded "
                            "(exclude_formats in spmvd.conf)", i,
                            json_string_value(v), spmv_format_name(cfg.format));
  }
  *configs = cf;
  return 0;
}

/* bench: every candidate (or the named configurations) timed. */
void spmvd_ops_run_bench(struct spmvd_conn *c, json_t *req, int64_t id)
{
  struct spmv_error err;
  struct spmvd_matrix *m;
  struct spmvd_op *o = NULL;
  json_t *configs, *msg;
  int rounds;
  int rc = bench_args(req, c->srv->cfg.exclude_formats, &configs, &rounds,
                      &err);

  if (rc == 0)
    rc = spmvd_op_get_ready_matrix(c, req, &m, &err);
  if (rc == 0)
    rc = spmvd_ops_split_refuse(m, "a bench", &err);
  if (rc == 0 && !(o = spmvd_op_new(c, id, "bench")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  o->handle = m->handle;
  o->wk = m->wk;
  o->listed = configs != NULL;
  msg = json_pack("{ss sI}", "op", "bench", "handle", (json_int_t)m->handle);
  if (msg && configs) {
    json_object_set(msg, "configs", configs);
    json_object_set_new(msg, "rounds", json_integer(rounds));
  }
  spmvd_ops_add_exclude_formats(c->srv, msg);
  if (spmvd_op_worker_call(o, msg, NULL, 0, on_bench,
                        spmvd_op_on_progress, o,
                        &err) < 0)
    spmvd_op_fail(o, &err);
}

/* --- after a worker death --- */

/* After a worker death: quarantines the configuration it was running. */
void spmvd_ops_worker_died(struct spmvd_server *srv, json_t *msg)
{
  const char *op = json_string_value(json_object_get(msg, "op"));
  json_int_t h = json_integer_value(json_object_get(msg, "handle"));
  struct spmvd_matrix *m;

  if (!op)
    return;
  spmvd_log_warn("the device worker died serving '%s' of matrix %lld", op,
                 (long long)h);
  if (strcmp(op, "multiply") != 0 && strcmp(op, "prepare") != 0 &&
      strcmp(op, "adopt") != 0 && strcmp(op, "ops") != 0)
    return;
  m = spmvd_registry_find(&srv->reg, h);
  if (!m || m->state != SPMVD_MATRIX_READY)
    return;
  quarantine(srv, m, "the device worker died running it");
  const struct spmvd_device_info *dev =
      spmvd_worker_device(spmvd_server_worker(srv, m->wk));
  struct spmv_config safe = {SPMV_FMT_CSR_SCALAR,
                             dev && strcmp(dev->backend, "cuda") == 0 ? 256 : 0,
                             0, 0, 0};
  spmvd_log_warn("matrix %lld: configuration '%s' quarantined; it falls back "
                 "to csr-scalar", (long long)h, m->cfg_text);
  char old[64];
  snprintf(old, sizeof old, "%s", m->cfg_text);
  set_config(m, &safe);
  snprintf(m->source, sizeof m->source, "tuned");
  snprintf(m->reason, sizeof m->reason,
           "configuration '%s' crashed the device worker", old);
}
