/* spmvd_ops.c: the protocol's operations (PROTOCOL.md), served for a connection. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spmvd_cache.h"
#include "spmvd_cachejob.h"
#include "spmvd_conn.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_predict.h"
#include "spmvd_server.h"
#include "spmvd_worker.h"

/*
 * Slow work goes to the worker: every op that needs it sends one worker
 * request whose callback continues the op, holding a reference on the
 * connection.  A callback first looks its matrix up again by handle: the
 * connection may have closed (freeing its matrices) meanwhile.
 *
 * A load runs:  worker load (validate, convert, profile, fingerprint)
 *   -> cache lookup -> hit:  worker prepare with a check against the
 *                            reference (first use after load);
 *                            a wrong result quarantines it and retunes
 *                   -> miss: worker tune (progress events relayed)
 *   -> reply.
 */

#define MAX_BATCH 4096

struct op {
  struct spmvd_conn *c;        /* referenced */
  struct spmvd_server *srv;
  int64_t id;
  int64_t handle;
  char name[16];               /* "load", "tune", ... */
  enum spmvd_strategy strategy;
  int verify;
  struct spmvd_shm vec;        /* multiply: the vectors, taken from the conn */
  int conn_vec;                /* multiply: the vectors are in c->vec */
  int inplace;                 /* multiply: in the attached memfd, no payload */
  size_t y_off, y_len;
  int nvec;
  char reason[256];
  char trying[64];             /* tune, bench: the candidate being built */
  int listed;                  /* bench: the request named its configs */
  enum spmv_dtype dtype;       /* calibrate: the value type */
  double max_s;                /* calibrate: the time bound in seconds */
  json_t *result;              /* calibrate: the reply while fits are stored */
};

static struct op *op_new(struct spmvd_conn *c, int64_t id, const char *name)
{
  struct op *o = calloc(1, sizeof *o);
  if (!o)
    return NULL;
  o->c = c;
  o->srv = c->srv;
  o->id = id;
  snprintf(o->name, sizeof o->name, "%s", name);
  spmvd_shm_init(&o->vec);
  spmvd_conn_ref(c);
  return o;
}

/* Ends an op: the connection reads its next request. */
static void op_end(struct op *o)
{
  struct spmvd_server *srv = o->srv;
  spmvd_conn_shm_close(o->c, &o->vec);
  if (o->conn_vec)
    o->c->vec_users--;
  spmvd_conn_done(o->c);
  spmvd_conn_unref(o->c);
  free(o);
  spmvd_server_maybe_finish(srv);
}

static void op_fail(struct op *o, const struct spmv_error *err)
{
  if (!o->c->closing)
    spmvd_conn_send_error(o->c, o->id, err);
  op_end(o);
}

static void reply(struct spmvd_conn *c, int64_t id, json_t *msg)
{
  if (!msg) {
    struct spmv_error err;
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory building the reply");
    spmvd_conn_send_error(c, id, &err);
    return;
  }
  json_object_set_new(msg, "id", json_integer(id));
  json_object_set_new(msg, "ok", json_true());
  spmvd_conn_send(c, msg, NULL, 0, 0);
  json_decref(msg);
}

static int parse_dtype(const char *s, enum spmv_dtype *dt)
{
  if (s && strcmp(s, "f32") == 0)
    *dt = SPMV_F32;
  else if (s && strcmp(s, "f64") == 0)
    *dt = SPMV_F64;
  else
    return -1;
  return 0;
}

/* Reads a number field: an integer when integer is set. */
static int get_field(json_t *req, const char *key, int integer, json_t **out,
                     struct spmv_error *err)
{
  json_t *v = json_object_get(req, key);
  if (integer ? !json_is_integer(v) : !json_is_number(v))
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"%s\" is missing or not %s", key,
                          integer ? "an integer" : "a number");
  *out = v;
  return 0;
}

static int get_int(json_t *req, const char *key, int64_t *out,
                   struct spmv_error *err)
{
  json_t *v = NULL;
  int rc = get_field(req, key, 1, &v, err);
  if (rc == 0)
    *out = json_integer_value(v);
  return rc;
}

static int get_number(json_t *req, const char *key, double *out,
                      struct spmv_error *err)
{
  json_t *v = NULL;
  int rc = get_field(req, key, 0, &v, err);
  if (rc == 0)
    *out = json_number_value(v);
  return rc;
}

static int get_matrix(struct spmvd_conn *c, json_t *req,
                      struct spmvd_matrix **out, struct spmv_error *err)
{
  int64_t h = 0;
  int rc = get_int(req, "handle", &h, err);
  if (rc < 0)
    return rc;
  *out = spmvd_registry_get(&c->srv->reg, h, c->uid);
  if (!*out)
    return spmv_error_set(err, SPMV_ENOENT, "no matrix with handle %lld",
                          (long long)h);
  return 0;
}

/* get_matrix() for the ops that need a matrix fully loaded. */
static int get_ready_matrix(struct spmvd_conn *c, json_t *req,
                            struct spmvd_matrix **out, struct spmv_error *err)
{
  int rc = get_matrix(c, req, out, err);
  if (rc == 0 && (*out)->state != SPMVD_MATRIX_READY)
    rc = spmv_error_set(err, SPMV_EBUSY, "matrix %lld is still being loaded",
                        (long long)(*out)->handle);
  return rc;
}

static int check_mem(struct spmvd_conn *c, uint64_t more,
                     struct spmv_error *err)
{
  uint64_t lim = c->srv->cfg.max_conn_bytes;
  if (more > lim || c->mem > lim - more)
    return spmv_error_set(err, SPMV_ELIMIT,
                          "max_connection_bytes (%llu) exceeded: this "
                          "connection holds %llu bytes and needs %llu more",
                          (unsigned long long)lim,
                          (unsigned long long)c->mem,
                          (unsigned long long)more);
  return 0;
}

static int strategy_of(struct spmvd_server *srv, json_t *req,
                       enum spmvd_strategy *s, struct spmv_error *err)
{
  json_t *v = json_object_get(req, "strategy");
  const char *name = srv->cfg.strategy;

  if (v && !json_is_string(v))
    return spmv_error_set(err, SPMV_EPROTO, "field \"strategy\" is not a string");
  if (v)
    name = json_string_value(v);
  if (spmvd_strategy_parse(name, s, NULL) < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "unknown strategy '%s' (auto, model, predict, "
                          "trial, exhaustive)", name);
  return 0;
}

/* --- begin: fields that size the payload, limits before allocation --- */

static int begin_load(struct spmvd_conn *c, json_t *req, uint64_t plen,
                      size_t *shm, struct spmv_error *err)
{
  struct spmvd_server *srv = c->srv;
  int64_t rows = 0, cols = 0, nnz = 0;
  const char *dts = json_string_value(json_object_get(req, "dtype"));
  const char *index = json_string_value(json_object_get(req, "index"));
  json_t *name = json_object_get(req, "name");
  enum spmv_dtype dt;
  enum spmvd_strategy s;
  struct spmvd_shm_csr l;
  int rc;

  if ((rc = get_int(req, "rows", &rows, err)) < 0 ||
      (rc = get_int(req, "cols", &cols, err)) < 0 ||
      (rc = get_int(req, "nnz", &nnz, err)) < 0 ||
      (rc = strategy_of(srv, req, &s, err)) < 0)
    return rc;
  if (parse_dtype(dts, &dt) < 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"dtype\" must be \"f32\" or \"f64\"");
  if (!index || (strcmp(index, "i32") && strcmp(index, "i64")))
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"index\" must be \"i32\" or \"i64\"");
  if (name && !json_is_string(name))
    return spmv_error_set(err, SPMV_EPROTO, "field \"name\" is not a string");
  if (rows < 0 || cols < 0 || nnz < 0)
    return spmv_error_set(err, SPMV_ECSR,
                          "negative dimension: rows %lld, cols %lld, nnz %lld",
                          (long long)rows, (long long)cols, (long long)nnz);
  if (rows > INT32_MAX || cols > INT32_MAX)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "%lld x %lld: rows and cols must be below 2^31",
                          (long long)rows, (long long)cols);
  if (nnz > ((int64_t)1 << 40))
    return spmv_error_set(err, SPMV_ETOOBIG, "nnz %lld is over 2^40",
                          (long long)nnz);
  uint64_t iw = strcmp(index, "i32") == 0 ? 4 : 8;
  uint64_t want = (uint64_t)(rows + 1) * iw + (uint64_t)nnz * 4 +
                  (uint64_t)nnz * spmv_dtype_size(dt);
  if (plen != want)
    return spmv_error_set(err, SPMV_EPROTO,
                          "payload is %llu bytes, but %lld rows, %lld "
                          "nonzeros (%s, %s) need %llu",
                          (unsigned long long)plen, (long long)rows,
                          (long long)nnz, index, dts, (unsigned long long)want);
  if (spmvd_registry_count_uid(&srv->reg, c->uid) >=
      srv->cfg.max_matrices_per_uid)
    return spmv_error_set(err, SPMV_ELIMIT,
                          "max_matrices_per_user (%d) reached for uid %ld",
                          srv->cfg.max_matrices_per_uid, (long)c->uid);
  spmvd_shm_csr_layout(rows, nnz, &l);
  if ((rc = check_mem(c, plen + l.size, err)) < 0)
    return rc;
  *shm = (size_t)plen;
  return 0;
}

/* An in-place product: the vectors lie in the memfd attached to m. */
static int begin_inplace(struct spmvd_conn *c, struct spmvd_matrix *m,
                         int64_t k, uint64_t plen, size_t *shm,
                         struct spmv_error *err)
{
  struct spmvd_attach *a = spmvd_conn_attached(c, m->handle);

  if (plen)
    return spmv_error_set(err, SPMV_EPROTO,
                          "an in-place multiply takes no payload, got %llu "
                          "bytes", (unsigned long long)plen);
  if (!a)
    return spmv_error_set(err, SPMV_EINVAL,
                          "matrix %lld has no vectors attached on this "
                          "connection (send attach-vectors first)",
                          (long long)m->handle);
  if (a->k != k)
    return spmv_error_set(err, SPMV_EINVAL,
                          "in-place product of k = %lld vectors, but the "
                          "memfd attached to matrix %lld holds k = %d",
                          (long long)k, (long long)m->handle, a->k);
  *shm = 0;
  c->payload_vec = 0;
  return 0;
}

static int begin_multiply(struct spmvd_conn *c, json_t *req, int batch,
                          uint64_t plen, size_t *shm, struct spmv_error *err)
{
  struct spmvd_matrix *m;
  double alpha = 0, beta = 0;
  int64_t k = 1;
  int rc;

  if ((rc = get_ready_matrix(c, req, &m, err)) < 0 ||
      (rc = get_number(req, "alpha", &alpha, err)) < 0 ||
      (rc = get_number(req, "beta", &beta, err)) < 0 ||
      (batch && (rc = get_int(req, "k", &k, err)) < 0))
    return rc;
  if (k < 1 || k > MAX_BATCH)
    return spmv_error_set(err, SPMV_EINVAL, "k is %lld, must be in [1, %d]",
                          (long long)k, MAX_BATCH);
  json_t *ip = json_object_get(req, "inplace");
  if (ip && !json_is_boolean(ip))
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"inplace\" is not a boolean");
  if (json_is_true(ip))
    return begin_inplace(c, m, k, plen, shm, err);
  uint64_t es = spmv_dtype_size(m->dtype);
  uint64_t xb = (uint64_t)k * (uint64_t)m->cols * es;
  uint64_t yb = (uint64_t)k * (uint64_t)m->rows * es;
  uint64_t want = xb + (beta != 0 ? yb : 0);
  if (plen != want)
    return spmv_error_set(err, SPMV_EPROTO,
                          "payload is %llu bytes, but %lld x (%lld cols%s) "
                          "of %s need %llu",
                          (unsigned long long)plen, (long long)k,
                          (long long)m->cols, beta != 0 ? " + rows" : "",
                          spmv_dtype_name(m->dtype), (unsigned long long)want);
  if ((rc = check_mem(c, spmvd_conn_vec_growth(c, (size_t)(xb + yb)), err)) < 0)
    return rc;
  *shm = (size_t)(xb + yb);
  c->payload_vec = 1;  /* read into the connection's kept buffer */
  return 0;
}

/* Checks a request before its payload is read. */
int spmvd_ops_begin(struct spmvd_conn *c, json_t *req, uint64_t payload_len,
                    size_t *shm_size, struct spmv_error *err)
{
  const char *op = json_string_value(json_object_get(req, "op"));

  *shm_size = 0;
  if (!op)
    return spmv_error_set(err, SPMV_EPROTO,
                          "request has no \"op\" (a string)");
  if (!c->hello && strcmp(op, "hello") != 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "'%s' before 'hello': hello must be the first "
                          "request", op);
  if (c->nfds > 0 && strcmp(op, "attach-vectors") != 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "'%s' came with %d file descriptor%s: only "
                          "'attach-vectors' takes one", op, c->nfds,
                          c->nfds == 1 ? "" : "s");
  if (c->srv->stopping)
    return spmv_error_set(err, SPMV_EBUSY, "spmvd is shutting down");
  if (strcmp(op, "load") == 0)
    return begin_load(c, req, payload_len, shm_size, err);
  if (strcmp(op, "multiply") == 0)
    return begin_multiply(c, req, 0, payload_len, shm_size, err);
  if (strcmp(op, "multiply-batch") == 0)
    return begin_multiply(c, req, 1, payload_len, shm_size, err);
  static const char *const known[] = {"hello", "info", "list", "free", "tune",
                                      "bench", "status", "forget", "import",
                                      "calibrate", "attach-vectors", NULL};
  for (const char *const *k = known; *k; k++) {
    if (strcmp(op, *k) != 0)
      continue;
    if (payload_len)
      return spmv_error_set(err, SPMV_EPROTO,
                            "'%s' takes no payload, got %llu bytes", op,
                            (unsigned long long)payload_len);
    return 0;
  }
  return spmv_error_set(err, SPMV_EPROTO, "unknown operation '%s'", op);
}

/* --- replies describing a decision --- */

static json_t *config_json(const struct spmv_config *cfg, const char *text)
{
  return json_pack("{ss si si si si ss}", "format",
                   spmv_format_name(cfg->format), "bs", cfg->bs, "tpr",
                   cfg->tpr, "param", cfg->param, "param2", cfg->param2,
                   "text", text);
}

static json_t *decision_reply(const struct spmvd_matrix *m)
{
  json_t *r = json_pack("{sI ss ss so sf sf sf ss sf}", "handle",
                        (json_int_t)m->handle, "fingerprint", m->fingerprint,
                        "source", m->source, "config",
                        config_json(&m->cfg, m->cfg_text), "time_us",
                        m->time_us, "gflops", m->gflops, "gbps", m->gbps,
                        "strategy", spmvd_strategy_name(m->strategy),
                        "tuning_cost_spmv", m->cost_spmv);
  if (r && strcmp(m->source, "tuned") == 0)
    json_object_set_new(r, "reason", json_string(m->reason));
  return r;
}

static void set_config(struct spmvd_matrix *m, const struct spmv_config *cfg)
{
  m->cfg = *cfg;
  spmv_config_format(cfg, m->cfg_text, sizeof m->cfg_text);
}

/* Looks the op's matrix up again; NULL when it or its connection is gone. */
static struct spmvd_matrix *op_matrix(struct op *o)
{
  if (o->c->closing)
    return NULL;
  return spmvd_registry_find(&o->srv->reg, o->handle);
}

static void drop_matrix(struct op *o)
{
  struct spmvd_matrix *m = spmvd_registry_find(&o->srv->reg, o->handle);
  if (m)
    spmvd_server_matrix_free(o->srv, m);
}

static void load_fail(struct op *o, const struct spmv_error *err)
{
  if (strcmp(o->name, "load") == 0)
    drop_matrix(o);
  op_fail(o, err);
}

static void load_finish(struct op *o, struct spmvd_matrix *m)
{
  m->state = SPMVD_MATRIX_READY;
  spmvd_log_info("uid %ld: matrix %lld (%s, %lld x %lld, %lld nnz, %s): %s "
                 "from %s, %.2f us, %.2f GFLOP/s", (long)m->uid,
                 (long long)m->handle, m->name, (long long)m->rows,
                 (long long)m->cols, (long long)m->nnz,
                 spmv_dtype_name(m->dtype), m->cfg_text, m->source,
                 m->time_us, m->gflops);
  reply(o->c, o->id, decision_reply(m));
  op_end(o);
}

static int call(struct op *o, json_t *msg, const int *fds, int nfds,
                spmvd_worker_reply_cb *cb, spmvd_worker_event_cb *ev)
{
  struct spmv_error err;
  if (spmvd_worker_call(o->srv->worker, msg, fds, nfds, cb, ev, o, &err) < 0) {
    load_fail(o, &err);
    return -1;
  }
  return 0;
}

static void on_verified(void *ctx, json_t *rep, const struct spmv_error *err);
static void start_tune(struct op *o, struct spmvd_matrix *m);
static void quarantine_trying(struct op *o, const struct spmv_error *err);

static void on_progress(void *ctx, json_t *ev)
{
  struct op *o = ctx;
  const char *kind = json_string_value(json_object_get(ev, "event"));
  json_t *e;

  if (kind && strcmp(kind, "candidate") == 0) {
    const char *cand = json_string_value(json_object_get(ev, "candidate"));
    snprintf(o->trying, sizeof o->trying, "%s", cand ? cand : "");
    return;
  }
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
static void after_store(struct op *o, struct spmvd_matrix *m)
{
  m->checked = 0;
  if (o->verify) {
    call(o, json_pack("{ss sI ss sb}", "op", "prepare", "handle",
                      (json_int_t)m->handle, "config", m->cfg_text, "check", 1),
         NULL, 0, on_verified, NULL);
    return;
  }
  load_finish(o, m);
}

static void on_stored(struct spmvd_cachejob *j)
{
  struct op *o = j->ctx;
  struct spmvd_matrix *m = op_matrix(o);

  if (j->rc < 0)
    spmvd_log_warn("cannot store the tuning of %s: %s", j->t.fingerprint,
                   j->err.msg);
  if (!m) {
    op_end(o);
    return;
  }
  m->tuning_id = j->rc < 0 ? 0 : j->id;
  after_store(o, m);
}

/* Stores the decision d (its trials taken) on the cache thread; the op
 * goes on when it is written. */
static void store_decision(struct op *o, struct spmvd_matrix *m,
                           struct spmvd_decision *d)
{
  const struct spmvd_device_info *dev = spmvd_worker_device(o->srv->worker);
  struct spmvd_cachejob *j = spmvd_cachejob_new(SPMVD_CJ_STORE);

  m->tuning_id = 0;
  if (!j || !dev) {
    if (j)
      spmvd_log_warn("cannot store the tuning of %s: no device", m->fingerprint);
    else
      spmvd_log_warn("cannot store the tuning of %s: out of memory",
                     m->fingerprint);
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

static void on_tuned(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct op *o = ctx;
  struct spmvd_matrix *m = op_matrix(o);
  struct spmvd_decision d;
  struct spmv_error e;

  if (!m) {
    op_end(o);
    return;
  }
  if (err) {
    quarantine_trying(o, err);
    load_fail(o, err);
    return;
  }
  if (spmvd_ipc_decision_unpack(json_object_get(rep, "decision"), &d) < 0) {
    spmv_error_set(&e, SPMV_EIO, "bad decision from the device worker");
    load_fail(o, &e);
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

/* Adds the operator's excluded formats (spmvd.conf exclude_formats) to a
 * tune or bench message for the worker, when there are any. */
static void add_exclude_formats(struct spmvd_server *srv, json_t *msg)
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

/* The cache said what to leave out (and the device's calibration fits,
 * for the predictor): the worker tunes. */
static void on_excluded(struct spmvd_cachejob *j)
{
  struct op *o = j->ctx;
  struct spmvd_matrix *m = op_matrix(o);
  json_t *exclude = json_array();

  if (!m) {
    json_decref(exclude);
    op_end(o);
    return;
  }
  if (j->rc < 0 && j->rc != SPMV_ECACHE)
    spmvd_log_warn("cache: %s", j->err.msg);
  for (int i = 0; i < j->nex; i++) {
    char text[64];
    spmv_config_format(&j->ex[i], text, sizeof text);
    json_array_append_new(exclude, json_string(text));
  }
  spmvd_log_debug("matrix %lld: tuning (%s): %s", (long long)m->handle,
                  spmvd_strategy_name(o->strategy), o->reason);
  json_t *msg = json_pack("{ss sI ss so}", "op", "tune", "handle",
                          (json_int_t)m->handle, "strategy",
                          spmvd_strategy_name(o->strategy), "exclude", exclude);
  if (msg && j->json)
    json_object_set(msg, "predictor", j->json);
  add_exclude_formats(o->srv, msg);
  call(o, msg, NULL, 0, on_tuned, on_progress);
}

/* Tunes m: first the quarantined configurations from the cache. */
static void start_tune(struct op *o, struct spmvd_matrix *m)
{
  const struct spmvd_device_info *dev = spmvd_worker_device(o->srv->worker);
  struct spmvd_cachejob *j = spmvd_cachejob_new(SPMVD_CJ_EXCLUDE);
  struct spmv_error err;

  if (!j) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    load_fail(o, &err);
    return;
  }
  snprintf(j->fp, sizeof j->fp, "%s", m->fingerprint);
  if (dev)
    j->dev = *dev;
  j->dtype = m->dtype;
  spmvd_cachejob_post(dev ? o->srv->bio : NULL, j, on_excluded, o);
}

/* Quarantines cfg of m on the cache thread; nobody waits for it, but what
 * is posted later (e.g. the retune's exclusions) sees it. */
static void quarantine_cfg(struct spmvd_server *srv, struct spmvd_matrix *m,
                           const struct spmv_config *cfg, const char *why)
{
  const struct spmvd_device_info *dev = spmvd_worker_device(srv->worker);
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

static void quarantine(struct spmvd_server *srv, struct spmvd_matrix *m,
                       const char *why)
{
  quarantine_cfg(srv, m, &m->cfg, why);
}

/* The worker crashed while building or timing o->trying: quarantine it so
 * that the retry tunes without it. */
static void quarantine_trying(struct op *o, const struct spmv_error *err)
{
  struct spmvd_matrix *m = spmvd_registry_find(&o->srv->reg, o->handle);
  struct spmv_config cfg;

  if (!m || !*o->trying || err->code != SPMV_EWORKER ||
      !strstr(err->msg, "crashed") ||
      spmv_config_parse(o->trying, &cfg, NULL) < 0)
    return;
  spmvd_log_warn("matrix %lld: the device worker crashed running candidate "
                 "'%s': quarantined", (long long)o->handle, o->trying);
  quarantine_cfg(o->srv, m, &cfg, "the device worker crashed running it");
}

static void on_verified(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct op *o = ctx;
  struct spmvd_matrix *m = op_matrix(o);
  struct spmv_error e;
  double resid = 0;

  if (!m) {
    op_end(o);
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
    load_fail(o, err);
    return;
  }
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
  load_fail(o, &e);
}

/* The cache answered the lookup: a hit is checked on its first use, a
 * miss is tuned. */
static void on_looked_up(struct spmvd_cachejob *j)
{
  struct op *o = j->ctx;
  struct spmvd_matrix *m = op_matrix(o);
  const struct spmvd_tuning *t = &j->t;

  if (!m) {
    op_end(o);
    return;
  }
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
  if (j->rc < 0 || !j->hit) {
    start_tune(o, m);
    return;
  }
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
  call(o, json_pack("{ss sI ss sb}", "op", "prepare", "handle",
                    (json_int_t)m->handle, "config", m->cfg_text, "check", 1),
       NULL, 0, on_verified, NULL);
}

static void on_loaded(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct op *o = ctx;
  struct spmvd_matrix *m = op_matrix(o);
  const struct spmvd_device_info *dev = spmvd_worker_device(o->srv->worker);
  const char *fp = json_string_value(json_object_get(rep, "fingerprint"));
  struct spmvd_cachejob *j;
  struct spmv_error e;

  if (!m) {
    op_end(o);
    return;
  }
  if (err) {
    load_fail(o, err);
    return;
  }
  if (!fp || spmvd_ipc_profile_unpack(json_object_get(rep, "profile"),
                                      &m->prof) < 0) {
    spmv_error_set(&e, SPMV_EIO, "bad load reply from the device worker");
    load_fail(o, &e);
    return;
  }
  snprintf(m->fingerprint, sizeof m->fingerprint, "%s", fp);
  snprintf(o->reason, sizeof o->reason, "%s",
           o->srv->bio ? "no cached tuning" : "no cache is open");
  if (!o->srv->bio || !dev || !(j = spmvd_cachejob_new(SPMVD_CJ_LOOKUP))) {
    start_tune(o, m);
    return;
  }
  snprintf(j->fp, sizeof j->fp, "%s", fp);
  j->dev = *dev;
  j->dtype = m->dtype;
  spmvd_cachejob_post(o->srv->bio, j, on_looked_up, o);
}

static void run_load(struct spmvd_conn *c, json_t *req, int64_t id,
                     struct spmvd_shm *payload)
{
  struct spmvd_server *srv = c->srv;
  struct spmv_error err;
  struct spmvd_shm_csr l;
  struct spmvd_matrix *m;
  struct op *o = op_new(c, id, "load");
  const char *name = json_string_value(json_object_get(req, "name"));
  int64_t rows = 0, cols = 0, nnz = 0;

  if (!o) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  get_int(req, "rows", &rows, NULL);
  get_int(req, "cols", &cols, NULL);
  get_int(req, "nnz", &nnz, NULL);
  strategy_of(srv, req, &o->strategy, NULL);
  o->verify = json_is_true(json_object_get(req, "verify"));
  m = spmvd_registry_add(&srv->reg, c->uid, c);
  if (!m) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    op_fail(o, &err);
    return;
  }
  o->handle = m->handle;
  snprintf(m->name, sizeof m->name, "%s", name ? name : "");
  parse_dtype(json_string_value(json_object_get(req, "dtype")), &m->dtype);
  m->rows = rows;
  m->cols = cols;
  m->nnz = nnz;
  spmvd_shm_csr_layout(rows, nnz, &l);
  if (spmvd_shm_open(&m->host, "spmvd-matrix", l.size, &err) < 0) {
    load_fail(o, &err);
    return;
  }
  spmvd_shm_unmap(&m->host);
  m->bytes = l.size;
  c->mem += m->bytes;
  c->nmatrices++;
  int fds[2] = {payload->fd, m->host.fd};
  call(o, json_pack("{ss sI sO sO sI sI sI}", "op", "load", "handle",
                    (json_int_t)m->handle, "dtype",
                    json_object_get(req, "dtype"), "index",
                    json_object_get(req, "index"), "rows", (json_int_t)rows,
                    "cols", (json_int_t)cols, "nnz", (json_int_t)nnz),
       fds, 2, on_loaded, NULL);
}

static void run_tune(struct spmvd_conn *c, json_t *req, int64_t id)
{
  struct spmv_error err;
  struct spmvd_matrix *m;
  struct op *o = NULL;
  enum spmvd_strategy s;
  int rc;


  rc = get_ready_matrix(c, req, &m, &err);
  if (rc == 0)
    rc = strategy_of(c->srv, req, &s, &err);
  if (rc == 0 && !(o = op_new(c, id, "tune")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  o->handle = m->handle;
  o->strategy = s;
  snprintf(o->reason, sizeof o->reason, "tuning requested (%s)",
           spmvd_strategy_name(o->strategy));
  start_tune(o, m);
}

/* --- multiply --- */

static void on_multiplied(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct op *o = ctx;
  struct spmvd_matrix *m = op_matrix(o);

  if (o->c->closing) {
    op_end(o);
    return;
  }
  if (err) {
    struct spmvd_attach *a = spmvd_conn_attached(o->c, o->handle);
    if (o->conn_vec)
      o->c->vec_gen = -1;  /* the worker may not hold the buffer: resend it */
    if (o->inplace && a)
      a->gen = -1;
    op_fail(o, err);
    return;
  }
  if (m)
    m->multiplies += o->nvec;
  json_t *msg = json_pack("{sI sb}", "id", (json_int_t)o->id, "ok", 1);
  if (o->inplace)
    spmvd_conn_send(o->c, msg, NULL, 0, 0);  /* y is in the client's memfd */
  else if (o->conn_vec)
    spmvd_conn_send_vec(o->c, msg, o->y_off, o->y_len);
  else
    spmvd_conn_send(o->c, msg, &o->vec, o->y_off, o->y_len);
  json_decref(msg);
  op_end(o);
}

static void run_multiply(struct spmvd_conn *c, json_t *req, int64_t id,
                         struct spmvd_shm *payload)
{
  struct spmv_error err;
  struct spmvd_matrix *m;
  struct op *o = NULL;
  double alpha = 1, beta = 0;
  int64_t k = 1;
  int rc;

  rc = get_ready_matrix(c, req, &m, &err);
  if (rc == 0 && !(o = op_new(c, id, "multiply")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  get_number(req, "alpha", &alpha, NULL);
  get_number(req, "beta", &beta, NULL);
  if (json_object_get(req, "k"))
    get_int(req, "k", &k, NULL);
  size_t es = spmv_dtype_size(m->dtype);
  o->handle = m->handle;
  o->nvec = (int)k;
  o->y_off = (size_t)k * (size_t)m->cols * es;
  o->y_len = (size_t)k * (size_t)m->rows * es;
  json_t *msg = json_pack("{ss sI sf sf si}", "op", "multiply", "handle",
                          (json_int_t)m->handle, "alpha", alpha, "beta", beta,
                          "nvec", (int)k);
  int fd, nfds = 1, gen = spmvd_worker_restarts(c->srv->worker);
  struct spmvd_attach *a = json_is_true(json_object_get(req, "inplace"))
                               ? spmvd_conn_attached(c, m->handle) : NULL;
  if (a) {
    /* The client's memfd: sent to each incarnation of the worker once. */
    o->inplace = 1;
    fd = a->fd;
    nfds = a->gen != gen;
    json_object_set_new(msg, "buf", json_integer(a->buf_id));
    json_object_set_new(msg, "buf_size", json_integer((json_int_t)a->size));
  } else if (c->payload_vec) {
    /* The connection's kept buffer: its memfd goes to each incarnation of
     * the worker once, which keeps it mapped under its id. */
    o->conn_vec = 1;
    c->vec_users++;
    fd = c->vec.fd;
    nfds = c->vec_gen != gen;
    json_object_set_new(msg, "buf", json_integer(c->vec_id));
    json_object_set_new(msg, "buf_size", json_integer((json_int_t)c->vec.size));
  } else {
    o->vec = *payload;
    spmvd_shm_init(payload);
    fd = o->vec.fd;
    if (fd < 0) {
      /* No vectors at all (0 x 0, or rows = 0 with beta = 0): y is empty. */
      json_decref(msg);
      on_multiplied(o, NULL, NULL);
      return;
    }
  }
  if (spmvd_worker_call(c->srv->worker, msg, &fd, nfds, on_multiplied, NULL, o,
                        &err) < 0) {
    op_fail(o, &err);
    return;
  }
  if (o->conn_vec)
    c->vec_gen = gen;
  if (a)
    a->gen = gen;
}

/* --- bench --- */

static void on_bench(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct op *o = ctx;

  if (o->c->closing) {
    op_end(o);
    return;
  }
  if (err) {
    quarantine_trying(o, err);
    op_fail(o, err);
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
  reply(o->c, o->id, json_pack("{so}", "trials", trials));
  op_end(o);
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

static void run_bench(struct spmvd_conn *c, json_t *req, int64_t id)
{
  struct spmv_error err;
  struct spmvd_matrix *m;
  struct op *o = NULL;
  json_t *configs, *msg;
  int rounds;
  int rc = bench_args(req, c->srv->cfg.exclude_formats, &configs, &rounds,
                      &err);

  if (rc == 0)
    rc = get_ready_matrix(c, req, &m, &err);
  if (rc == 0 && !(o = op_new(c, id, "bench")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  o->handle = m->handle;
  o->listed = configs != NULL;
  msg = json_pack("{ss sI}", "op", "bench", "handle", (json_int_t)m->handle);
  if (msg && configs) {
    json_object_set(msg, "configs", configs);
    json_object_set_new(msg, "rounds", json_integer(rounds));
  }
  add_exclude_formats(c->srv, msg);
  if (spmvd_worker_call(c->srv->worker, msg, NULL, 0, on_bench, on_progress, o,
                        &err) < 0)
    op_fail(o, &err);
}

/* --- calibrate --- */

/* A calibration holds the device for minutes: one at a time.  The front
 * end is one per process, so this flag is the server's. */
static int calibrating;

/* The largest bound of a calibration in seconds (the worker has the
 * default, which depends on its backend). */
#define CALIB_MAX_S 3600.0

/* The fits are stored: the calibration's reply goes out. */
static void on_calibration_stored(struct spmvd_cachejob *j)
{
  struct op *o = j->ctx;
  json_t *r = o->result;

  o->result = NULL;
  calibrating = 0;
  if (j->rc < 0) {
    spmvd_log_error("calibration of %s not stored: %s", j->dev.name,
                    j->err.msg);
    json_decref(r);
    op_fail(o, &j->err);
    return;
  }
  spmvd_log_info("uid %ld calibrated %s (%s): %zu formats fitted in %.1f s",
                 (long)o->c->uid, j->dev.name, spmv_dtype_name(o->dtype),
                 json_object_size(j->json),
                 json_number_value(json_object_get(r, "seconds")));
  if (o->c->closing) {
    json_decref(r);
    op_end(o);
    return;
  }
  reply(o->c, o->id, r);
  op_end(o);
}

/* The worker calibrated: the reply is made, then the fits are stored (on
 * the cache thread), even when the client has gone meanwhile. */
static void on_calibrated(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct op *o = ctx;
  const struct spmvd_device_info *dev = spmvd_worker_device(o->srv->worker);
  json_t *fits = json_object_get(rep, "fits"), *names = json_array(), *v;
  struct spmvd_cachejob *j = NULL;
  struct spmv_error e;
  const char *key;

  if (!err && (!dev || !json_is_object(fits) ||
               !(json_number_value(json_object_get(rep, "max_seconds")) > 0))) {
    spmv_error_set(&e, SPMV_EIO, "bad calibrate reply from the device worker");
    err = &e;
  }
  if (!err && !(j = spmvd_cachejob_new(SPMVD_CJ_CALIBRATION))) {
    spmv_error_set(&e, SPMV_ENOMEM, "out of memory");
    err = &e;
  }
  if (err) {
    calibrating = 0;
    json_decref(names);
    op_fail(o, err);
    return;
  }
  json_object_foreach(fits, key, v)
    json_array_append_new(names, json_string(key));
  o->max_s = json_number_value(json_object_get(rep, "max_seconds"));
  o->result = json_copy(rep);
  if (o->result) {
    json_object_del(o->result, "seq");
    json_object_del(o->result, "ok");
    json_object_set_new(o->result, "device", json_string(dev->name));
    json_object_set_new(o->result, "backend", json_string(dev->backend));
    json_object_set_new(o->result, "device_key",
                        json_string(dev->device_key));
    json_object_set_new(o->result, "software_key",
                        json_string(dev->software_key));
    json_object_set_new(o->result, "dtype",
                        json_string(spmv_dtype_name(o->dtype)));
    json_object_set_new(o->result, "max_seconds", json_real(o->max_s));
    json_object_set(o->result, "formats", names);
  }
  json_decref(names);
  j->dev = *dev;
  j->dtype = o->dtype;
  j->json = json_incref(fits);
  spmvd_cachejob_post(o->srv->bio, j, on_calibration_stored, o);
}

/* calibrate {dtype, max_seconds}: the predictor's calibration of the
 * device, run by the worker, its fits stored in the cache. */
static void run_calibrate(struct spmvd_conn *c, json_t *req, int64_t id)
{
  struct spmvd_server *srv = c->srv;
  const struct spmvd_device_info *dev = spmvd_worker_device(srv->worker);
  const char *name = dev ? dev->name : "the device";  /* NULL: starting */
  json_t *dtv = json_object_get(req, "dtype");
  json_t *msv = json_object_get(req, "max_seconds");
  json_t *ptv = json_object_get(req, "points");
  char bound[48];
  enum spmv_dtype dt = SPMV_F64;
  struct spmv_error err;
  struct op *o = NULL;
  double max_s = 0;
  int rc = 0;

  if (dtv && parse_dtype(json_string_value(dtv), &dt) < 0)
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "field \"dtype\" must be \"f32\" or \"f64\"");
  else if (msv && get_number(req, "max_seconds", &max_s, &err) < 0)
    rc = err.code;
  else if (ptv && !json_is_boolean(ptv))
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "field \"points\" must be true or false");
  else if (msv && !(max_s > 0 && max_s <= CALIB_MAX_S))
    rc = spmv_error_set(&err, SPMV_EINVAL,
                        "max_seconds is %g, must be in (0, %g]", max_s,
                        CALIB_MAX_S);
  else if (calibrating)
    rc = spmv_error_set(&err, SPMV_EBUSY,
                        "a calibration of %s is already running: try again "
                        "when it ends", name);
  else if (!srv->bio)
    rc = spmv_error_set(&err, SPMV_ECACHE,
                        "no cache is open: the fits could not be stored");
  else if (!(o = op_new(c, id, "calibrate")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  /* Without a bound the worker applies its backend's default; while it
   * starts (dev still NULL) the call waits in its queue like any other. */
  o->dtype = dt;
  o->max_s = max_s;
  calibrating = 1;
  if (max_s > 0)
    snprintf(bound, sizeof bound, "%g s at most", max_s);
  else
    snprintf(bound, sizeof bound, "the default bound");
  spmvd_log_info("uid %ld: calibrating %s (%s), %s", (long)c->uid, name,
                 spmv_dtype_name(dt), bound);
  json_t *call = json_pack("{ss ss}", "op", "calibrate", "dtype",
                           spmv_dtype_name(dt));
  if (call && max_s > 0)
    json_object_set_new(call, "max_seconds", json_real(max_s));
  if (call && json_is_true(ptv))
    json_object_set_new(call, "points", json_true());
  if (!call || spmvd_worker_call(srv->worker, call, NULL, 0, on_calibrated,
                                 on_progress, o, &err) < 0) {
    if (!call)
      spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    calibrating = 0;
    op_fail(o, &err);
  }
}

/* --- the quick ops, answered on the loop --- */

static json_t *op_hello(struct spmvd_conn *c, json_t *req,
                        struct spmv_error *err)
{
  const struct spmvd_device_info *dev = spmvd_worker_device(c->srv->worker);
  int64_t version = 0;

  if (get_int(req, "version", &version, err) < 0)
    return NULL;
  if (version != SPMV_PROTO_VERSION) {
    spmv_error_set(err, SPMV_EVERSION, "client speaks %lld, spmvd speaks %d",
                   (long long)version, SPMV_PROTO_VERSION);
    return NULL;
  }
  c->hello = 1;
  const char *client = json_string_value(json_object_get(req, "client"));
  spmvd_log_debug("hello from %s (pid %ld, uid %ld)", client ? client : "?",
                  (long)c->pid, (long)c->uid);
  return json_pack("{si ss ss ss}", "version", SPMV_PROTO_VERSION, "server",
                   PACKAGE_NAME " " PACKAGE_VERSION, "backend",
                   dev ? dev->backend : c->srv->cfg.backend, "device",
                   dev ? dev->name : "(starting)");
}

static json_t *op_info(struct spmvd_conn *c, json_t *req,
                       struct spmv_error *err)
{
  struct spmvd_matrix *m;

  if (get_ready_matrix(c, req, &m, err) < 0)
    return NULL;
  return json_pack("{sI ss ss sI sI sI ss so so ss ss sf sf sf sO sI}",
                   "handle", (json_int_t)m->handle, "name", m->name, "dtype",
                   spmv_dtype_name(m->dtype), "rows", (json_int_t)m->rows,
                   "cols", (json_int_t)m->cols, "nnz", (json_int_t)m->nnz,
                   "fingerprint", m->fingerprint, "profile",
                   spmvd_ipc_profile_pack(&m->prof), "config",
                   config_json(&m->cfg, m->cfg_text), "source", m->source,
                   "strategy", spmvd_strategy_name(m->strategy), "time_us",
                   m->time_us, "gflops", m->gflops, "gbps", m->gbps, "trials",
                   m->trials ? m->trials : json_array(), "multiplies",
                   (json_int_t)m->multiplies);
}

static json_t *op_list(struct spmvd_conn *c)
{
  json_t *arr = json_array();

  for (struct spmvd_matrix *m = c->srv->reg.head; m; m = m->next) {
    if (m->uid != c->uid)
      continue;
    json_array_append_new(
        arr, json_pack("{sI ss sI sI sI ss ss ss}", "handle",
                       (json_int_t)m->handle, "name", m->name, "rows",
                       (json_int_t)m->rows, "cols", (json_int_t)m->cols, "nnz",
                       (json_int_t)m->nnz, "dtype", spmv_dtype_name(m->dtype),
                       "config", m->cfg_text, "state",
                       m->state == SPMVD_MATRIX_READY ? "ready" : "loading"));
  }
  return json_pack("{so}", "matrices", arr);
}

static json_t *op_free(struct spmvd_conn *c, json_t *req,
                       struct spmv_error *err)
{
  struct spmvd_matrix *m;

  if (get_ready_matrix(c, req, &m, err) < 0)
    return NULL;
  spmvd_conn_detach(c, m->handle);
  if (m->owner && m->owner != c)
    spmvd_conn_detach(m->owner, m->handle);
  spmvd_server_matrix_free(c->srv, m);
  return json_object();
}

/* attach-vectors: validates the client's memfd and keeps it for in-place
 * products of the matrix. */
static json_t *op_attach(struct spmvd_conn *c, json_t *req,
                         struct spmv_error *err)
{
  struct spmvd_matrix *m;
  struct spmv_wire_limits lim;
  struct stat st;
  int64_t k = 1;
  int seals;

  if (c->nfds != 1) {
    spmv_error_set(err, SPMV_EPROTO,
                   "'attach-vectors' takes exactly one file descriptor "
                   "(SCM_RIGHTS on the frame's first byte), got %d", c->nfds);
    return NULL;
  }
  if (get_ready_matrix(c, req, &m, err) < 0 ||
      (json_object_get(req, "k") && get_int(req, "k", &k, err) < 0))
    return NULL;
  if (k < 1 || k > MAX_BATCH) {
    spmv_error_set(err, SPMV_EINVAL, "k is %lld, must be in [1, %d]",
                   (long long)k, MAX_BATCH);
    return NULL;
  }
  uint64_t es = spmv_dtype_size(m->dtype);
  uint64_t xb = (uint64_t)k * (uint64_t)m->cols * es;
  uint64_t need = xb + (uint64_t)k * (uint64_t)m->rows * es;
  int fd = c->fds[0];
  spmvd_server_wire_limits(c->srv, &lim);
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      (seals = fcntl(fd, F_GET_SEALS)) < 0) {
    spmv_error_set(err, SPMV_EINVAL,
                   "the file descriptor passed is not a memfd");
    return NULL;
  }
  if (!(seals & F_SEAL_SHRINK)) {
    spmv_error_set(err, SPMV_EINVAL,
                   "the vector memfd is not sealed against shrinking "
                   "(F_SEAL_SHRINK): its size could change after validation");
    return NULL;
  }
  if ((uint64_t)st.st_size < need) {
    spmv_error_set(err, SPMV_EINVAL,
                   "the vector memfd holds %lld bytes, but k = %lld x (%lld "
                   "cols + %lld rows) of %s need %llu",
                   (long long)st.st_size, (long long)k, (long long)m->cols,
                   (long long)m->rows, spmv_dtype_name(m->dtype),
                   (unsigned long long)need);
    return NULL;
  }
  if (need > lim.max_payload) {
    spmv_error_set(err, SPMV_ELIMIT,
                   "in-place vectors of %llu bytes exceed max_payload_bytes "
                   "(%llu)", (unsigned long long)need,
                   (unsigned long long)lim.max_payload);
    return NULL;
  }
  /* The worker writes y into it: pages the client never touched become
   * the daemon's, so the memfd counts towards the connection's memory
   * (less the one it replaces). */
  struct spmvd_attach *old = spmvd_conn_attached(c, m->handle);
  uint64_t held = old ? old->size : 0;
  if (need > held && check_mem(c, need - held, err) < 0)
    return NULL;
  if (spmvd_conn_attach(c, m->handle, (size_t)need, (int)k, err) < 0)
    return NULL;
  return json_pack("{sI sI sI sI sI}", "handle", (json_int_t)m->handle, "k",
                   (json_int_t)k, "x_offset", (json_int_t)0, "y_offset",
                   (json_int_t)xb, "size", (json_int_t)need);
}

static json_t *op_status(struct spmvd_conn *c)
{
  struct spmvd_server *srv = c->srv;
  const struct spmvd_device_info *dev = spmvd_worker_device(srv->worker);
  json_t *workers = json_array(), *st;
  char excluded[256];

  json_array_append_new(
      workers, json_pack("{ss si ss sI si ss}", "device",
                         dev ? dev->name : "(starting)", "index",
                         spmvd_worker_device_index(srv->worker), "backend",
                         dev ? dev->backend : srv->cfg.backend, "pid",
                         (json_int_t)spmvd_worker_pid(srv->worker), "restarts",
                         spmvd_worker_restarts(srv->worker), "state",
                         spmvd_worker_state(srv->worker)));
  st = json_pack("{ss si sI sI ss ss ss ss so si si ss ss}", "server",
               PACKAGE_NAME " " PACKAGE_VERSION, "version",
               SPMV_PROTO_VERSION, "pid", (json_int_t)getpid(), "uptime_s",
               (json_int_t)((uv_now(srv->loop) - srv->start_ms) / 1000),
               "backend", dev ? dev->backend : srv->cfg.backend, "device",
               dev ? dev->name : "(starting)", "device_key",
               dev ? dev->device_key : "", "software_key",
               dev ? dev->software_key : "", "workers", workers,
               "connections", srv->nconns, "matrices", srv->reg.count,
               "cache_path", srv->cfg.db_path, "socket_path",
               srv->cfg.socket_path);
  spmvd_config_format_names(srv->cfg.exclude_formats, excluded,
                            sizeof excluded);
  if (st)
    json_object_set_new(st, "exclude_formats", json_string(excluded));
  return st;
}

static void on_admin_done(struct spmvd_cachejob *j)
{
  struct op *o = j->ctx;

  if (j->rc < 0) {
    op_fail(o, &j->err);
    return;
  }
  if (j->kind == SPMVD_CJ_FORGET) {
    spmvd_log_info("uid %ld forgot %d tuning(s) of %s", (long)o->c->uid, j->n,
                   j->fp);
    if (!o->c->closing)
      reply(o->c, o->id, json_pack("{si}", "forgotten", j->n));
  } else {
    spmvd_log_info("uid %ld imported %d tuning(s), skipped %d",
                   (long)o->c->uid, j->n, j->skipped);
    if (!o->c->closing)
      reply(o->c, o->id, json_pack("{si si}", "imported", j->n, "skipped",
                                   j->skipped));
  }
  op_end(o);
}

/* forget and import: root or the admin group (user databases may be slow:
 * checked on the cache thread, before the request's own errors). */
static void run_admin(struct spmvd_conn *c, const char *op, json_t *req,
                      int64_t id)
{
  struct spmvd_server *srv = c->srv;
  const struct spmvd_device_info *dev = spmvd_worker_device(srv->worker);
  int forget = strcmp(op, "forget") == 0;
  struct spmvd_cachejob *j =
      spmvd_cachejob_new(forget ? SPMVD_CJ_FORGET : SPMVD_CJ_IMPORT);
  struct op *o = j ? op_new(c, id, op) : NULL;
  struct spmv_error err;

  if (!o) {
    spmvd_cachejob_free(j);
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  j->uid = c->uid;
  j->gid = c->gid;
  snprintf(j->admin_group, sizeof j->admin_group, "%s", srv->cfg.admin_group);
  if (forget) {
    const char *fp = json_string_value(json_object_get(req, "fingerprint"));
    struct spmv_fingerprint f;
    if (!fp || (strcmp(fp, "all") != 0 && spmv_fingerprint_parse(fp, &f) < 0))
      spmv_error_set(&j->invalid, SPMV_EPROTO,
                     "field \"fingerprint\" must be 32 hex digits or \"all\"");
    else
      snprintf(j->fp, sizeof j->fp, "%s", fp);
  } else {
    json_t *tunings = json_object_get(req, "tunings");
    if (!json_is_array(tunings)) {
      spmv_error_set(&j->invalid, SPMV_EPROTO,
                     "field \"tunings\" is not an array");
    } else {
      /* Taken out of the request: the thread must be its only user. */
      j->json = json_incref(tunings);
      json_object_del(req, "tunings");
    }
    if (dev)
      j->dev = *dev;
  }
  spmvd_cachejob_post(srv->bio, j, on_admin_done, o);
}

/* Serves a complete request. */
void spmvd_ops_run(struct spmvd_conn *c, json_t *req, int64_t id,
                   struct spmvd_shm *payload)
{
  const char *op = json_string_value(json_object_get(req, "op"));
  struct spmv_error err;
  json_t *rep = NULL;

  spmv_error_clear(&err);
  if (strcmp(op, "load") == 0) {
    run_load(c, req, id, payload);
    return;
  }
  if (strcmp(op, "multiply") == 0 || strcmp(op, "multiply-batch") == 0) {
    run_multiply(c, req, id, payload);
    return;
  }
  if (strcmp(op, "tune") == 0) {
    run_tune(c, req, id);
    return;
  }
  if (strcmp(op, "bench") == 0) {
    run_bench(c, req, id);
    return;
  }
  if (strcmp(op, "calibrate") == 0) {
    run_calibrate(c, req, id);
    return;
  }
  if (strcmp(op, "forget") == 0 || strcmp(op, "import") == 0) {
    run_admin(c, op, req, id);
    return;
  }
  if (strcmp(op, "hello") == 0)
    rep = op_hello(c, req, &err);
  else if (strcmp(op, "info") == 0)
    rep = op_info(c, req, &err);
  else if (strcmp(op, "list") == 0)
    rep = op_list(c);
  else if (strcmp(op, "free") == 0)
    rep = op_free(c, req, &err);
  else if (strcmp(op, "attach-vectors") == 0)
    rep = op_attach(c, req, &err);
  else if (strcmp(op, "status") == 0)
    rep = op_status(c);
  if (rep)
    reply(c, id, rep);
  else
    spmvd_conn_send_error(c, id, &err);
  spmvd_conn_done(c);
}

static void on_adopted(void *ctx, json_t *rep, const struct spmv_error *err)
{
  int64_t *h = ctx;
  if (err)
    spmvd_log_error("matrix %lld could not be re-created on the new worker: "
                    "%s", (long long)*h, err->msg);
  free(h);
}

/* After a worker respawn: re-creates every resident matrix from its host copy. */
void spmvd_ops_readopt(struct spmvd_server *srv)
{
  struct spmv_error err;
  int n = 0;

  for (struct spmvd_matrix *m = srv->reg.head; m; m = m->next) {
    if (m->state != SPMVD_MATRIX_READY)
      continue;
    int64_t *h = malloc(sizeof *h);
    if (!h)
      break;
    *h = m->handle;
    if (spmvd_worker_call(srv->worker,
                          json_pack("{ss sI ss sI sI sI ss}", "op", "adopt",
                                    "handle", (json_int_t)m->handle, "dtype",
                                    spmv_dtype_name(m->dtype), "rows",
                                    (json_int_t)m->rows, "cols",
                                    (json_int_t)m->cols, "nnz",
                                    (json_int_t)m->nnz, "config", m->cfg_text),
                          &m->host.fd, 1, on_adopted, NULL, h, &err) < 0) {
      spmvd_log_error("cannot re-create matrix %lld: %s", (long long)m->handle,
                      err.msg);
      free(h);
      continue;
    }
    n++;
  }
  if (n)
    spmvd_log_info("re-creating %d matrices on the new device worker", n);
}

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
      strcmp(op, "adopt") != 0)
    return;
  m = spmvd_registry_find(&srv->reg, h);
  if (!m || m->state != SPMVD_MATRIX_READY)
    return;
  quarantine(srv, m, "the device worker died running it");
  const struct spmvd_device_info *dev = spmvd_worker_device(srv->worker);
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
