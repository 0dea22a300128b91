/* spmvd_ops.c: the protocol's operations (PROTOCOL.md) for a connection:
 * each request checked and dispatched, and what every op shares (its life,
 * its reply, the request's fields). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_conn.h"
#include "spmvd_fields.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_worker.h"

/* A new op for request id on c; see spmvd_ops_impl.h. */
struct spmvd_op *spmvd_op_new(struct spmvd_conn *c, int64_t id,
                              const char *name)
{
  struct spmvd_op *o = calloc(1, sizeof *o);
  if (!o)
    return NULL;
  o->c = c;
  o->srv = c->srv;
  o->id = id;
  o->wk = c->wk;
  snprintf(o->name, sizeof o->name, "%s", name);
  spmvd_shm_init(&o->vec);
  spmvd_conn_ref(c);
  return o;
}

struct spmvd_worker *spmvd_op_worker(const struct spmvd_op *o)
{
  return spmvd_server_worker(o->srv, o->wk);
}

/* Ends an op: the connection reads its next request. */
void spmvd_op_end(struct spmvd_op *o)
{
  struct spmvd_server *srv = o->srv;
  if (o->buf_private > 0 && spmvd_op_worker(o))
    spmvd_worker_post(spmvd_op_worker(o),
                      json_pack("{ss sI}", "op", "release", "buf",
                                (json_int_t)o->buf_private));
  spmvd_conn_shm_close(o->c, &o->vec);
  json_decref(o->written);
  json_decref(o->steps);
  json_decref(o->held);
  if (o->conn_vec)
    o->c->vec_users--;
  spmvd_conn_done(o->c);
  spmvd_conn_unref(o->c);
  free(o);
  spmvd_server_maybe_finish(srv);
}

/* Answers the op with err, unless its client has gone, and ends it. */
void spmvd_op_fail(struct spmvd_op *o, const struct spmv_error *err)
{
  if (!o->c->closing)
    spmvd_conn_send_error(o->c, o->id, err);
  spmvd_op_end(o);
}

/* Sends msg as the reply to id; see spmvd_ops_impl.h. */
void spmvd_op_reply(struct spmvd_conn *c, int64_t id, json_t *msg)
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

double spmvd_op_since_ms(uint64_t ns)
{
  return (double)(uv_hrtime() - ns) * 1e-6;
}

void spmvd_op_step(struct spmvd_op *o, const char *name, double ms)
{
  if (!o->steps && !(o->steps = json_object()))
    return;
  json_t *v = json_object_get(o->steps, name);
  json_object_set_new(o->steps, name,
                      json_real((v ? json_number_value(v) : 0) + ms));
}

void spmvd_op_steps_merge(struct spmvd_op *o, json_t *rep)
{
  const char *k;
  json_t *v;

  json_object_foreach(json_object_get(rep, "steps"), k, v)
    spmvd_op_step(o, k, json_number_value(v));
}

int spmvd_op_buffers_answered(struct spmvd_op *o, const struct spmv_error *err)
{
  struct spmvd_conn *c = o->c;

  if (c->closing) {
    spmvd_op_end(o);
    return 1;
  }
  if (!err)
    return 0;
  if (o->conn_vec)
    c->vec_gen = -1;  /* the worker may not hold the buffer: resend it */
  for (int i = 0; i < SPMVD_CONN_MAX_ATTACH; i++)
    if (c->att[i].handle != 0)
      c->att[i].gen = -1;
  spmvd_op_fail(o, err);
  return 1;
}

void spmvd_op_send_buffer(struct spmvd_op *o, json_t *msg, size_t off,
                          size_t len)
{
  if (len == 0)
    spmvd_conn_send(o->c, msg, NULL, 0, 0);
  else if (o->conn_vec)
    spmvd_conn_send_vec(o->c, msg, off, len);
  else
    spmvd_conn_send(o->c, msg, &o->vec, off, len);
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

/* Reads an integer field. */
int spmvd_op_get_int(json_t *req, const char *key, int64_t *out,
                     struct spmv_error *err)
{
  json_t *v = NULL;
  int rc = get_field(req, key, 1, &v, err);
  if (rc == 0)
    *out = json_integer_value(v);
  return rc;
}

/* Reads a number field. */
int spmvd_op_get_number(json_t *req, const char *key, double *out,
                        struct spmv_error *err)
{
  json_t *v = NULL;
  int rc = get_field(req, key, 0, &v, err);
  if (rc == 0)
    *out = json_number_value(v);
  return rc;
}

/* Checks that object s has only the fields of keys (a space-separated
 * list, "op" implied); where ("ops[3] (axpby): ") prefixes the message. */
int spmvd_op_only_keys(json_t *s, const char *where, const char *keys,
                       struct spmv_error *err)
{
  const char *k;
  json_t *v;

  json_object_foreach(s, k, v) {
    size_t n = strlen(k);
    const char *p = keys;
    int ok = strcmp(k, "op") == 0;
    while (!ok && n > 0 && (p = strstr(p, k)) != NULL) {
      ok = (p == keys || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0');
      p += n;
    }
    if (!ok)
      return spmv_error_set(err, SPMV_EPROTO, "%sunknown field \"%s\"", where,
                            k);
  }
  return 0;
}

/* The request's matrix by "handle", if c's user owns it. */
static int get_matrix(struct spmvd_conn *c, json_t *req,
                      struct spmvd_matrix **out, struct spmv_error *err)
{
  int64_t h = 0;
  int rc = spmvd_op_get_int(req, "handle", &h, err);
  if (rc < 0)
    return rc;
  *out = spmvd_registry_get(&c->srv->reg, h, c->uid);
  if (!*out)
    return spmv_error_set(err, SPMV_ENOENT, "no matrix with handle %lld",
                          (long long)h);
  return 0;
}

/* get_matrix() for the ops that need a matrix fully loaded. */
int spmvd_op_get_ready_matrix(struct spmvd_conn *c, json_t *req,
                              struct spmvd_matrix **out,
                              struct spmv_error *err)
{
  int rc = get_matrix(c, req, out, err);
  if (rc == 0 && (*out)->state != SPMVD_MATRIX_READY)
    rc = spmv_error_set(err, SPMV_EBUSY, "matrix %lld is still being loaded",
                        (long long)(*out)->handle);
  return rc;
}

/* The request's strategy, or the configured one. */
int spmvd_op_strategy(struct spmvd_server *srv, json_t *req,
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
  /* Every field against the op's schema, before any is used. */
  int rc = spmvd_fields_check(op, req, err);
  if (rc < 0)
    return rc;
  /* load checks its own: it takes one only with "memfd": true. */
  if (c->nfds > 0 && strcmp(op, "attach-vectors") != 0 &&
      strcmp(op, "load") != 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "'%s' came with %d file descriptor%s: only "
                          "'attach-vectors' and 'load' (with \"memfd\": "
                          "true) take one", op, c->nfds,
                          c->nfds == 1 ? "" : "s");
  if (c->srv->stopping)
    return spmv_error_set(err, SPMV_EBUSY, "spmvd is shutting down");
  if (strcmp(op, "load") == 0)
    return spmvd_ops_begin_load(c, req, payload_len, shm_size, err);
  if (strcmp(op, "multiply") == 0)
    return spmvd_ops_begin_multiply(c, req, 0, payload_len, shm_size, err);
  if (strcmp(op, "multiply-batch") == 0)
    return spmvd_ops_begin_multiply(c, req, 1, payload_len, shm_size, err);
  if (strcmp(op, "ops") == 0)
    return spmvd_ops_begin_ops(c, req, payload_len, shm_size, err);
  if (strcmp(op, "solve") == 0)
    return spmvd_ops_begin_solve(c, req, payload_len, shm_size, err);
  static const char *const known[] = {"hello", "info", "list", "free", "tune",
                                      "bench", "status", "forget", "import",
                                      "calibrate", "attach-vectors",
                                      "vector-create", "vector-free",
                                      "cancel", "export", "shutdown", NULL};
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

/* Looks the op's matrix up again; NULL when it or its connection is gone. */
struct spmvd_matrix *spmvd_op_matrix(struct spmvd_op *o)
{
  if (o->c->closing)
    return NULL;
  return spmvd_registry_find(&o->srv->reg, o->handle);
}

/* Frees the op's matrix, if it is still there. */
static void drop_matrix(struct spmvd_op *o)
{
  struct spmvd_matrix *m = spmvd_registry_find(&o->srv->reg, o->handle);
  if (m)
    spmvd_server_matrix_free(o->srv, m);
}

/* Fails the op; a failed load frees its matrix. */
void spmvd_op_load_fail(struct spmvd_op *o, const struct spmv_error *err)
{
  if (strcmp(o->name, "load") == 0)
    drop_matrix(o);
  spmvd_op_fail(o, err);
}

/* Answers the op; a reply that could not be built is a failure, so that a
 * load told ENOMEM leaves no matrix behind. */
void spmvd_op_answer(struct spmvd_op *o, json_t *msg)
{
  struct spmv_error err;

  if (!msg) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory building the reply");
    spmvd_op_load_fail(o, &err);
    return;
  }
  spmvd_op_reply(o->c, o->id, msg);
  spmvd_op_end(o);
}

/* spmvd_worker_call() for the op, its client named for the log. */
int spmvd_op_worker_call(struct spmvd_op *o, json_t *msg, const int *fds,
                         int nfds, spmvd_worker_reply_cb *cb,
                         spmvd_worker_event_cb *ev, void *ctx,
                         struct spmv_error *err)
{
  char who[64];
  struct spmvd_worker *w = spmvd_op_worker(o);
  int rc;

  if (!w) {
    json_decref(msg);
    return spmv_error_set(err, SPMV_EWORKER, "the device worker has stopped");
  }
  rc = spmvd_worker_call(w, msg, fds, nfds, cb, ev, ctx, err);
  if (rc == 0) {
    snprintf(who, sizeof who, "pid %ld uid %ld, request %lld",
             (long)o->c->pid, (long)o->c->uid, (long long)o->id);
    spmvd_worker_tag_last(w, who);
  }
  return rc;
}

/* Sends msg to the worker for the op; a failure to send fails the op. */
int spmvd_op_call(struct spmvd_op *o, json_t *msg, const int *fds, int nfds,
                  spmvd_worker_reply_cb *cb, spmvd_worker_event_cb *ev)
{
  struct spmv_error err;
  if (spmvd_op_worker_call(o, msg, fds, nfds, cb, ev, o, &err) < 0) {
    spmvd_op_load_fail(o, &err);
    return -1;
  }
  return 0;
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
    spmvd_ops_run_load(c, req, id, payload);
    return;
  }
  if (strcmp(op, "multiply") == 0 || strcmp(op, "multiply-batch") == 0) {
    spmvd_ops_run_multiply(c, req, id, payload);
    return;
  }
  if (strcmp(op, "ops") == 0) {
    spmvd_ops_run_ops(c, req, id, payload);
    return;
  }
  if (strcmp(op, "solve") == 0) {
    spmvd_ops_run_solve(c, req, id, payload);
    return;
  }
  if (strcmp(op, "vector-create") == 0) {
    spmvd_ops_run_vector_create(c, req, id);
    return;
  }
  if (strcmp(op, "tune") == 0) {
    spmvd_ops_run_tune(c, req, id);
    return;
  }
  if (strcmp(op, "bench") == 0) {
    spmvd_ops_run_bench(c, req, id);
    return;
  }
  if (strcmp(op, "calibrate") == 0) {
    spmvd_ops_run_calibrate(c, req, id);
    return;
  }
  if (strcmp(op, "forget") == 0 || strcmp(op, "import") == 0 ||
      strcmp(op, "export") == 0) {
    spmvd_ops_run_admin(c, op, req, id);
    return;
  }
  if (strcmp(op, "shutdown") == 0) {
    spmvd_ops_shutdown(c, id);
    return;
  }
  if (strcmp(op, "hello") == 0)
    rep = spmvd_ops_hello(c, req, &err);
  else if (strcmp(op, "info") == 0)
    rep = spmvd_ops_info(c, req, &err);
  else if (strcmp(op, "list") == 0)
    rep = spmvd_ops_list(c);
  else if (strcmp(op, "free") == 0)
    rep = spmvd_ops_free(c, req, &err);
  else if (strcmp(op, "attach-vectors") == 0)
    rep = spmvd_ops_attach(c, req, &err);
  else if (strcmp(op, "vector-free") == 0)
    rep = spmvd_ops_vector_free(c, req, &err);
  else if (strcmp(op, "status") == 0)
    rep = spmvd_ops_status(c);
  else if (strcmp(op, "cancel") == 0)
    /* Read as a request, a cancel came after its solve's reply: nothing
     * runs to cancel (a solve's cancel is taken while it runs). */
    rep = json_pack("{sb}", "cancelled", 0);
  if (rep)
    spmvd_op_reply(c, id, rep);
  else
    spmvd_conn_send_error(c, id, &err);
  spmvd_conn_done(c);
}
