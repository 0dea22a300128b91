/* spmvd_ops_vec_life.c: a device vector's life: vector-create (on c's
 * worker, or in parts on a split matrix's blocks' workers), vector-free
 * and the vectors of a closing connection. */
#include "config.h"

#include <stdint.h>

#include "spmvd_conn.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_vectors.h"
#include "spmvd_worker.h"

/* The bytes uid holds on the device: its connections' vectors and its
 * matrices' CSR. */
static uint64_t uid_device_bytes(struct spmvd_server *srv, uid_t uid)
{
  uint64_t b = 0;

  for (struct spmvd_conn *c = srv->conns; c; c = c->next)
    if (c->uid == uid)
      b += c->vecs.bytes;
  for (struct spmvd_matrix *m = srv->reg.head; m; m = m->next)
    if (m->uid == uid)
      b += m->bytes;
  return b;
}

/* The worker allocated the vector. */
static void on_created(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  struct spmvd_vector *v = spmvd_vectors_find(&o->c->vecs, o->handle);

  (void)rep;
  if (o->c->closing || !v) {
    spmvd_op_end(o);
    return;
  }
  if (err) {
    spmvd_vectors_remove(&o->c->vecs, o->handle);
    spmvd_worker_post(spmvd_op_worker(o),
                      json_pack("{ss s[I]}", "op", "vfree", "ids",
                                (json_int_t)o->handle));
    spmvd_op_fail(o, err);
    return;
  }
  spmvd_op_reply(o->c, o->id,
                 json_pack("{sI ss sI}", "vector", (json_int_t)v->id, "dtype",
                           spmv_dtype_name(v->dtype), "n", (json_int_t)v->n));
  spmvd_op_end(o);
}

/* vector-create's "like": a ready matrix of the caller's with n rows,
 * whose split (if any) the vector takes. */
static int get_like(struct spmvd_conn *c, json_t *req, int64_t n,
                    struct spmvd_matrix **out, struct spmv_error *err)
{
  json_t *h = json_object_get(req, "like");
  json_t *q = json_is_integer(h) ? json_pack("{sO}", "handle", h) : NULL;
  int rc;

  if (!json_is_integer(h))
    return spmv_error_set(err, SPMV_EPROTO, "field \"like\" is not a matrix "
                          "handle (an integer)");
  if (!q)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = spmvd_op_get_ready_matrix(c, q, out, err);
  json_decref(q);
  if (rc == 0 && (*out)->rows != n)
    rc = spmv_error_set(err, SPMV_EINVAL, "n is %lld, but matrix %lld has "
                        "%lld rows: a vector like it holds a value a row",
                        (long long)n, (long long)(*out)->handle,
                        (long long)(*out)->rows);
  return rc;
}

void spmvd_ops_run_vector_create(struct spmvd_conn *c, json_t *req,
                                 int64_t id)
{
  struct spmvd_server *srv = c->srv;
  const char *dts = json_string_value(json_object_get(req, "dtype"));
  struct spmv_error err;
  enum spmv_dtype dt;
  int64_t n = 0;
  int rc;

  struct spmvd_matrix *like = NULL;
  spmv_error_clear(&err);
  if ((rc = spmvd_op_only_keys(req, "vector-create: ", "id dtype n like", &err)) < 0)
    ;
  else if ((rc = spmvd_op_get_int(req, "n", &n, &err)) < 0)
    ;
  else if (spmv_dtype_parse(dts, &dt) < 0)
    rc = spmv_error_set(&err, SPMV_EPROTO,
                        "field \"dtype\" must be \"f32\" or \"f64\"");
  else if (n < 0 || n > INT32_MAX)
    rc = spmv_error_set(&err, SPMV_EINVAL, "n is %lld, must be in [0, 2^31)",
                        (long long)n);
  else if (c->vecs.count >= srv->cfg.max_vectors_per_conn)
    rc = spmv_error_set(&err, SPMV_ELIMIT,
                        "max_vectors_per_connection (%d) reached",
                        srv->cfg.max_vectors_per_conn);
  else if (json_object_get(req, "like"))
    rc = get_like(c, req, n, &like, &err);
  if (rc == 0) {
    uint64_t need = (uint64_t)n * spmv_dtype_size(dt);
    uint64_t held = uid_device_bytes(srv, c->uid);
    uint64_t lim = srv->cfg.max_device_bytes_per_uid;
    if (need > lim || held > lim - need)
      rc = spmv_error_set(&err, SPMV_ELIMIT,
                          "max_device_bytes_per_user (%llu) exceeded: uid %ld "
                          "holds %llu bytes and needs %llu more",
                          (unsigned long long)lim, (long)c->uid,
                          (unsigned long long)held, (unsigned long long)need);
  }
  struct spmvd_vector *v = NULL;
  struct spmvd_op *o = NULL;
  if (rc == 0 && (!(v = spmvd_vectors_add(&c->vecs, dt, n)) ||
                  !(o = spmvd_op_new(c, id, "vector-create")))) {
    if (v)
      spmvd_vectors_remove(&c->vecs, v->id);
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  }
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  o->handle = v->id;
  if (like && like->nblocks > 1) {
    spmvd_ops_split_layout(like, &v->split);
    spmvd_ops_split_vector_create(o, v);
    return;
  }
  json_t *msg = json_pack("{ss s[{sI ss sI}]}", "op", "vnew", "vectors", "id",
                          (json_int_t)v->id, "dtype", spmv_dtype_name(dt), "n",
                          (json_int_t)n);
  if (spmvd_op_worker_call(o, msg, NULL, 0, on_created, NULL, o,
                        &err) < 0) {
    spmvd_vectors_remove(&c->vecs, v->id);
    spmvd_op_fail(o, &err);
  }
}

json_t *spmvd_ops_vector_free(struct spmvd_conn *c, json_t *req,
                              struct spmv_error *err)
{
  int64_t id = 0;

  if (spmvd_op_only_keys(req, "vector-free: ", "id vector", err) < 0)
    return NULL;
  if (spmvd_op_get_int(req, "vector", &id, err) < 0)
    return NULL;
  struct spmvd_vector *v = spmvd_vectors_find(&c->vecs, id);
  if (!v) {
    spmv_error_set(err, SPMV_ENOENT, "no vector %lld on this connection",
                   (long long)id);
    return NULL;
  }
  if (v->split.n > 1)
    spmvd_ops_split_vector_free(c->srv, v);
  else
    spmvd_worker_post(spmvd_conn_worker(c), json_pack("{ss s[I]}", "op", "vfree",
                                                "ids", (json_int_t)id));
  spmvd_vectors_remove(&c->vecs, id);
  return json_object();
}

/* A closing connection's vectors: the worker frees them after the requests
 * it was sent before. */
void spmvd_ops_vectors_release(struct spmvd_conn *c)
{
  json_t *ids = json_array();

  for (struct spmvd_vector *v = c->vecs.head; v; v = v->next)
    if (v->split.n > 1)
      spmvd_ops_split_vector_free(c->srv, v);
    else
      json_array_append_new(ids, json_integer(v->id));
  if (json_array_size(ids) > 0 && spmvd_conn_worker(c))
    spmvd_worker_post(spmvd_conn_worker(c),
                      json_pack("{ss so}", "op", "vfree", "ids", ids));
  else
    json_decref(ids);
  spmvd_vectors_fini(&c->vecs);
}
