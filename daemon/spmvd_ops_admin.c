/* spmvd_ops_admin.c: the admin ops: hello, status, and the cache's
 * forget and import. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_cachejob.h"
#include "spmvd_conn.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_worker.h"

/* hello: the protocol version agreed, the server and its device named. */
json_t *spmvd_ops_hello(struct spmvd_conn *c, json_t *req,
                        struct spmv_error *err)
{
  const struct spmvd_device_info *dev = spmvd_worker_device(spmvd_conn_worker(c));
  int64_t version = 0;

  if (spmvd_op_get_int(req, "version", &version, err) < 0)
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

/* One worker of status's list: its device, process and matrices. */
static json_t *worker_json(const struct spmvd_server *srv, int i)
{
  struct spmvd_worker *w = srv->workers[i];
  const struct spmvd_device_info *dev = w ? spmvd_worker_device(w) : NULL;
  int nmat = 0, nconn = 0;

  for (const struct spmvd_matrix *m = srv->reg.head; m; m = m->next)
    nmat += m->wk == i;
  for (const struct spmvd_conn *k = srv->conns; k; k = k->next)
    nconn += k->wk == i;
  json_t *wk = json_pack("{si ss si ss sI si ss si si si si si}", "worker", i,
                         "device", dev ? dev->name : "(starting)", "index",
                         w ? spmvd_worker_device_index(w) : 0, "backend",
                         dev ? dev->backend : srv->cfg.backend, "pid",
                         (json_int_t)(w ? spmvd_worker_pid(w) : 0), "restarts",
                         w ? spmvd_worker_restarts(w) : 0, "state",
                         w ? spmvd_worker_state(w) : "stopped",
                         "device_timeout_s", w ? spmvd_worker_timeout(w) : 0,
                         "timeouts", w ? spmvd_worker_timeouts(w) : 0,
                         "matrices", nmat, "connections", nconn, "pending",
                         w ? spmvd_worker_pending(w) : 0);
  uint64_t free_b, total_b;
  if (wk && w && spmvd_worker_device_memory(w, &free_b, &total_b)) {
    json_object_set_new(wk, "device_free_bytes", json_integer((json_int_t)free_b));
    json_object_set_new(wk, "device_total_bytes",
                        json_integer((json_int_t)total_b));
  }
  return wk;
}

/* status: the server, its workers, its paths and excluded formats. */
json_t *spmvd_ops_status(struct spmvd_conn *c)
{
  struct spmvd_server *srv = c->srv;
  const struct spmvd_device_info *dev = spmvd_worker_device(spmvd_conn_worker(c));
  json_t *workers = json_array(), *st;
  char excluded[256];

  for (int i = 0; i < srv->nworkers; i++)
    json_array_append_new(workers, worker_json(srv, i));
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
  if (st) {
    json_object_set_new(st, "exclude_formats", json_string(excluded));
    json_object_set_new(st, "worker", json_integer(c->wk));
    json_object_set_new(st, "cache_state", json_string(srv->cache_state
                                                       ? srv->cache_state
                                                       : "none"));
  }
  json_int_t nvec = 0, vbytes = 0;
  for (struct spmvd_conn *k = srv->conns; k; k = k->next) {
    nvec += k->vecs.count;
    vbytes += (json_int_t)k->vecs.bytes;
  }
  if (st) {
    json_object_set_new(st, "vectors", json_integer(nvec));
    json_object_set_new(st, "vector_bytes", json_integer(vbytes));
  }
  return st;
}

/* The cache thread forgot or imported: the counts answer. */
static void on_admin_done(struct spmvd_cachejob *j)
{
  struct spmvd_op *o = j->ctx;

  if (j->rc < 0) {
    spmvd_op_fail(o, &j->err);
    return;
  }
  if (j->kind == SPMVD_CJ_EXPORT) {
    if (!o->c->closing)
      spmvd_op_reply(o->c, o->id, json_pack("{sO}", "export", j->json));
  } else if (j->kind == SPMVD_CJ_FORGET) {
    spmvd_log_info("uid %ld forgot %d tuning(s) of %s", (long)o->c->uid, j->n,
                   j->fp);
    if (!o->c->closing)
      spmvd_op_reply(o->c, o->id, json_pack("{si}", "forgotten", j->n));
  } else {
    spmvd_log_info("uid %ld imported %d tuning(s), skipped %d",
                   (long)o->c->uid, j->n, j->skipped);
    if (!o->c->closing)
      spmvd_op_reply(o->c, o->id, json_pack("{si si}", "imported", j->n, "skipped",
                                   j->skipped));
  }
  spmvd_op_end(o);
}

/* forget and import: root or the admin group (user databases may be slow:
 * checked on the cache thread, before the request's own errors). */
void spmvd_ops_run_admin(struct spmvd_conn *c, const char *op, json_t *req,
                         int64_t id)
{
  struct spmvd_server *srv = c->srv;
  const struct spmvd_device_info *dev = spmvd_worker_device(spmvd_conn_worker(c));
  int forget = strcmp(op, "forget") == 0, exp = strcmp(op, "export") == 0;
  struct spmvd_cachejob *j = spmvd_cachejob_new(
      forget ? SPMVD_CJ_FORGET : exp ? SPMVD_CJ_EXPORT : SPMVD_CJ_IMPORT);
  struct spmvd_op *o = j ? spmvd_op_new(c, id, op) : NULL;
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
  if (exp) {
    const char *fp = json_string_value(json_object_get(req, "fingerprint"));
    struct spmv_fingerprint f;
    if (fp && strcmp(fp, "all") != 0 && spmv_fingerprint_parse(fp, &f) < 0)
      spmv_error_set(&j->invalid, SPMV_EPROTO,
                     "field \"fingerprint\" must be 32 hex digits or \"all\"");
    else
      snprintf(j->fp, sizeof j->fp, "%s", fp ? fp : "all");
    j->max_json = srv->cfg.max_json;
  } else if (forget) {
    const char *fp = json_string_value(json_object_get(req, "fingerprint"));
    struct spmv_fingerprint f;
    if (!fp || (strcmp(fp, "all") != 0 && spmv_fingerprint_parse(fp, &f) < 0))
      spmv_error_set(&j->invalid, SPMV_EPROTO,
                     "field \"fingerprint\" must be 32 hex digits or \"all\"");
    else
      snprintf(j->fp, sizeof j->fp, "%s", fp);
  } else {
    json_t *tunings = json_object_get(req, "tunings");
    json_t *splits = json_object_get(req, "splits");
    if (!json_is_array(tunings)) {
      spmv_error_set(&j->invalid, SPMV_EPROTO,
                     "field \"tunings\" is not an array");
    } else if (splits && !json_is_array(splits)) {
      spmv_error_set(&j->invalid, SPMV_EPROTO,
                     "field \"splits\" is not an array");
    } else if (!(j->json = json_pack("{sO}", "tunings", tunings)) ||
               (splits && json_object_set(j->json, "splits", splits) != 0)) {
      spmv_error_set(&j->invalid, SPMV_ENOMEM, "out of memory");
    } else {
      /* Taken out of the request: the thread must be their only user. */
      json_object_del(req, "tunings");
      json_object_del(req, "splits");
    }
    if (dev)
      j->dev = *dev;
  }
  spmvd_cachejob_post(srv->bio, j, on_admin_done, o);
}

/* shutdown: root or the daemon's own user (a user instance's owner) only,
 * decided from the peer's uid alone: no user database is asked, so that
 * the loop never waits on one.  The reply goes first; the daemon then
 * finishes what is in flight, as on SIGTERM. */
void spmvd_ops_shutdown(struct spmvd_conn *c, int64_t id)
{
  struct spmvd_server *srv = c->srv;
  struct spmv_error err;

  if (c->uid != 0 && c->uid != geteuid()) {
    spmv_error_set(&err, SPMV_EPERM, "shutdown needs root or the daemon's "
                   "own user (uid %ld)", (long)geteuid());
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  spmvd_log_info("uid %ld asked it to stop: finishing in-flight requests, "
                 "then exiting", (long)c->uid);
  spmvd_op_reply(c, id, json_pack("{sb}", "stopping", 1));
  spmvd_conn_done(c);
  spmvd_server_stop(srv);
}
