/* spmvd_ops_matrix.c: the matrix ops: load (up to its fingerprint),
 * multiply, info, list, free, attach-vectors, and the matrices' re-creation
 * on a new worker. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spmvd_cache.h"
#include "spmvd_conn.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_worker.h"

/* The most vectors in one product (multiply-batch's k). */
#define MAX_BATCH 4096

/* Refuses what would take the connection past max_connection_bytes. */
int spmvd_ops_check_mem(struct spmvd_conn *c, uint64_t more,
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

/* --- memfds passed by clients --- */

/* Reads the size and seals of fd, refusing what is not a memfd. */
static int memfd_inspect(int fd, uint64_t *size, int *seals,
                         struct spmv_error *err)
{
  struct stat st;

  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      (*seals = fcntl(fd, F_GET_SEALS)) < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "the file descriptor passed is not a memfd");
  *size = (uint64_t)st.st_size;
  return 0;
}

/* The seals a matrix memfd needs: fixed in size, and write-sealed so that
 * no column can change after validation (one out of range could fault the
 * GPU for every client). */
static int matrix_memfd_sealed(int seals, struct spmv_error *err)
{
  static const struct {
    int seal;
    const char *what;
  } need[] = {
      {F_SEAL_WRITE, "writing (F_SEAL_WRITE): it could change after validation"},
      {F_SEAL_SHRINK, "shrinking (F_SEAL_SHRINK): its size could change after validation"},
      {F_SEAL_GROW, "growing (F_SEAL_GROW): its size could change after validation"},
  };

  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (!(seals & need[i].seal))
      return spmv_error_set(err, SPMV_EINVAL,
                            "the matrix memfd is not sealed against %s",
                            need[i].what);
  return 0;
}

/* A load with "memfd": true: no payload, one sealed memfd holding the
 * host copy of rows x nnz; *bytes receives its size. */
static int begin_load_memfd(struct spmvd_conn *c, uint64_t plen, int64_t rows,
                            int64_t nnz, uint64_t *bytes,
                            struct spmv_error *err)
{
  struct spmv_wire_csr_layout l;
  int seals, rc;

  if (plen)
    return spmv_error_set(err, SPMV_EPROTO,
                          "a load with \"memfd\": true takes no payload, got "
                          "%llu bytes", (unsigned long long)plen);
  if (c->nfds != 1 || c->nkept != 1)
    return spmv_error_set(err, SPMV_EPROTO,
                          "a load with \"memfd\": true takes exactly one file "
                          "descriptor (SCM_RIGHTS on the frame's first byte), "
                          "got %d", c->nfds);
  if ((rc = memfd_inspect(c->fds[0], bytes, &seals, err)) < 0 ||
      (rc = matrix_memfd_sealed(seals, err)) < 0)
    return rc;
  spmv_wire_csr_layout(rows, nnz, &l);
  if (*bytes < l.size)
    return spmv_error_set(err, SPMV_EINVAL,
                          "the matrix memfd holds %llu bytes, but %lld rows "
                          "and %lld entries need %zu",
                          (unsigned long long)*bytes, (long long)rows,
                          (long long)nnz, l.size);
  return 0;
}

/* A payload load: its length follows from the dimensions and types. */
static int begin_load_payload(struct spmvd_conn *c, uint64_t plen,
                              int64_t rows, int64_t nnz, enum spmv_dtype dt,
                              const char *index, struct spmv_error *err)
{
  if (c->nfds > 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "'load' came with %d file descriptor%s: a load takes "
                          "one only with \"memfd\": true", c->nfds,
                          c->nfds == 1 ? "" : "s");
  if (!index || (strcmp(index, "i32") && strcmp(index, "i64")))
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"index\" must be \"i32\" or \"i64\"");
  uint64_t iw = strcmp(index, "i32") == 0 ? 4 : 8;
  uint64_t want = (uint64_t)(rows + 1) * iw + (uint64_t)nnz * 4 +
                  (uint64_t)nnz * spmv_dtype_size(dt);
  if (plen != want)
    return spmv_error_set(err, SPMV_EPROTO,
                          "payload is %llu bytes, but %lld rows, %lld "
                          "nonzeros (%s, %s) need %llu",
                          (unsigned long long)plen, (long long)rows,
                          (long long)nnz, index, spmv_dtype_name(dt),
                          (unsigned long long)want);
  return 0;
}

/* --- begin: fields that size the payload, limits before allocation --- */

/* load: rows, cols, nnz, dtype and index size its payload, or the
 * client's memfd holds the host copy ("memfd": true). */
int spmvd_ops_begin_load(struct spmvd_conn *c, json_t *req, uint64_t plen,
                         size_t *shm, struct spmv_error *err)
{
  struct spmvd_server *srv = c->srv;
  int64_t rows = 0, cols = 0, nnz = 0;
  const char *dts = json_string_value(json_object_get(req, "dtype"));
  json_t *index = json_object_get(req, "index");
  json_t *name = json_object_get(req, "name");
  json_t *memfd = json_object_get(req, "memfd");
  enum spmv_dtype dt;
  enum spmvd_strategy s;
  struct spmv_wire_csr_layout l;
  uint64_t held = 0;
  int rc;

  if ((rc = spmvd_op_get_int(req, "rows", &rows, err)) < 0 ||
      (rc = spmvd_op_get_int(req, "cols", &cols, err)) < 0 ||
      (rc = spmvd_op_get_int(req, "nnz", &nnz, err)) < 0 ||
      (rc = spmvd_op_strategy(srv, req, &s, err)) < 0)
    return rc;
  if (spmv_dtype_parse(dts, &dt) < 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"dtype\" must be \"f32\" or \"f64\"");
  if (name && !json_is_string(name))
    return spmv_error_set(err, SPMV_EPROTO, "field \"name\" is not a string");
  if (memfd && !json_is_boolean(memfd))
    return spmv_error_set(err, SPMV_EPROTO, "field \"memfd\" is not a boolean");
  if (index && !json_is_string(index))
    return spmv_error_set(err, SPMV_EPROTO,
                          "field \"index\" must be \"i32\" or \"i64\"");
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
  if ((rc = spmvd_ops_split_check(srv, req, rows, cols, err)) < 0)
    return rc;
  rc = json_is_true(memfd)
           ? begin_load_memfd(c, plen, rows, nnz, &held, err)
           : begin_load_payload(c, plen, rows, nnz, dt,
                                json_string_value(index), err);
  if (rc < 0)
    return rc;
  if (spmvd_registry_count_uid(&srv->reg, c->uid) >=
      srv->cfg.max_matrices_per_uid)
    return spmv_error_set(err, SPMV_ELIMIT,
                          "max_matrices_per_user (%d) reached for uid %ld",
                          srv->cfg.max_matrices_per_uid, (long)c->uid);
  /* A payload load holds the payload and the host copy made from it; a
   * memfd load holds the client's whole memfd as the host copy. */
  spmv_wire_csr_layout(rows, nnz, &l);
  if ((rc = spmvd_ops_check_mem(c, held ? held : plen + l.size, err)) < 0)
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

/* multiply and multiply-batch: the matrix and k size the vectors. */
int spmvd_ops_begin_multiply(struct spmvd_conn *c, json_t *req, int batch,
                             uint64_t plen, size_t *shm,
                             struct spmv_error *err)
{
  struct spmvd_matrix *m;
  double alpha = 0, beta = 0;
  int64_t k = 1;
  int rc;

  if ((rc = spmvd_op_get_ready_matrix(c, req, &m, err)) < 0 ||
      (rc = spmvd_op_get_number(req, "alpha", &alpha, err)) < 0 ||
      (rc = spmvd_op_get_number(req, "beta", &beta, err)) < 0 ||
      (batch && (rc = spmvd_op_get_int(req, "k", &k, err)) < 0))
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
  if ((rc = spmvd_ops_check_mem(c, spmvd_conn_vec_growth(c, (size_t)(xb + yb)), err)) < 0)
    return rc;
  *shm = (size_t)(xb + yb);
  c->payload_vec = 1;  /* read into the connection's kept buffer */
  return 0;
}


/* --- load --- */

/* The worker loaded the matrix: its fingerprint known, the tuning flow
 * decides its configuration (and finds its profile: the cache's on a hit,
 * the tune's on a miss). */
static void on_loaded(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);
  const char *fp = json_string_value(json_object_get(rep, "fingerprint"));
  struct spmv_error e;

  if (!m) {
    spmvd_op_end(o);
    return;
  }
  if (err) {
    spmvd_op_load_fail(o, err);
    return;
  }
  if (!fp) {
    spmv_error_set(&e, SPMV_EIO, "bad load reply from the device worker");
    spmvd_op_load_fail(o, &e);
    return;
  }
  snprintf(m->fingerprint, sizeof m->fingerprint, "%s", fp);
  spmvd_op_steps_merge(o, rep);
  spmvd_ops_decide(o, m);
}

/*
 * Gives m its host copy: the client's memfd (inplace), taken from the
 * frame's descriptors so that m->host owns it from now on and the
 * registry closes it with the matrix, or a new memfd that the worker
 * fills from the payload.  m->bytes is what the copy holds.
 */
static int host_copy(struct spmvd_conn *c, struct spmvd_matrix *m, int inplace,
                     struct spmv_error *err)
{
  struct spmv_wire_csr_layout l;
  struct stat st;

  spmv_wire_csr_layout(m->rows, m->nnz, &l);
  if (!inplace) {
    if (spmvd_shm_open(&m->host, "spmvd-matrix", l.size, err) < 0)
      return err->code;
    spmvd_shm_unmap(&m->host);
    m->bytes = l.size;
    return 0;
  }
  spmvd_shm_init(&m->host);
  m->host.fd = c->fds[0];
  c->fds[0] = -1;
  m->host.size = l.size;
  if (fstat(m->host.fd, &st) < 0)
    return spmv_error_set(err, SPMV_EIO, "fstat of the matrix memfd: %s",
                          strerror(errno));
  m->bytes = (uint64_t)st.st_size;  /* sealed: it cannot change */
  return 0;
}

/* load: the matrix registered, its host copy made, the worker loads it. */
void spmvd_ops_run_load(struct spmvd_conn *c, json_t *req, int64_t id,
                        struct spmvd_shm *payload)
{
  struct spmvd_server *srv = c->srv;
  struct spmv_error err;
  struct spmvd_matrix *m;
  struct spmvd_op *o = spmvd_op_new(c, id, "load");
  const char *name = json_string_value(json_object_get(req, "name"));
  int inplace = json_is_true(json_object_get(req, "memfd"));
  int64_t rows = 0, cols = 0, nnz = 0;

  if (!o) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  o->t0_ns = c->frame_ns;
  spmvd_op_step(o, "receive_ms", spmvd_op_since_ms(c->frame_ns));
  spmvd_op_get_int(req, "rows", &rows, NULL);
  spmvd_op_get_int(req, "cols", &cols, NULL);
  spmvd_op_get_int(req, "nnz", &nnz, NULL);
  spmvd_op_strategy(srv, req, &o->strategy, NULL);
  o->verify = json_is_true(json_object_get(req, "verify"));
  m = spmvd_registry_add(&srv->reg, c->uid, c);
  if (!m) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    spmvd_op_fail(o, &err);
    return;
  }
  o->handle = m->handle;
  m->wk = c->wk;
  if (json_is_integer(json_object_get(req, "split")))
    o->split = (int)json_integer_value(json_object_get(req, "split"));
  snprintf(m->name, sizeof m->name, "%s", name ? name : "");
  spmv_dtype_parse(json_string_value(json_object_get(req, "dtype")),
                       &m->dtype);
  m->rows = rows;
  m->cols = cols;
  m->nnz = nnz;
  if (host_copy(c, m, inplace, &err) < 0) {
    spmvd_op_load_fail(o, &err);
    return;
  }
  c->mem += m->bytes;
  c->nmatrices++;
  json_t *msg = json_pack("{ss sI sO sI sI sI}", "op", "load", "handle",
                          (json_int_t)m->handle, "dtype",
                          json_object_get(req, "dtype"), "rows",
                          (json_int_t)rows, "cols", (json_int_t)cols, "nnz",
                          (json_int_t)nnz);
  if (inplace) {
    /* The worker validates the client's memfd in place: no raw payload. */
    json_object_set_new(msg, "inplace", json_true());
    spmvd_op_call(o, msg, &m->host.fd, 1, on_loaded, NULL);
    return;
  }
  json_object_set(msg, "index", json_object_get(req, "index"));
  int fds[2] = {payload->fd, m->host.fd};
  spmvd_op_call(o, msg, fds, 2, on_loaded, NULL);
}

/* --- multiply --- */

/* The worker multiplied: y goes back where the vectors came from. */
void spmvd_ops_multiplied(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  struct spmvd_matrix *m = spmvd_op_matrix(o);

  if (o->c->closing) {
    spmvd_op_end(o);
    return;
  }
  if (err) {
    struct spmvd_attach *a = spmvd_conn_attached(o->c, o->handle);
    if (o->conn_vec && !o->buf_private)
      o->c->vec_gen = -1;  /* the worker may not hold the buffer: resend it */
    if (o->inplace && a)
      a->gen = -1;
    spmvd_op_fail(o, err);
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
  spmvd_op_end(o);
}

/* multiply and multiply-batch: the vectors from the payload, the
 * connection's kept buffer or the attached memfd. */
void spmvd_ops_run_multiply(struct spmvd_conn *c, json_t *req, int64_t id,
                            struct spmvd_shm *payload)
{
  struct spmv_error err;
  struct spmvd_matrix *m;
  struct spmvd_op *o = NULL;
  double alpha = 1, beta = 0;
  int64_t k = 1;
  int rc;

  rc = spmvd_op_get_ready_matrix(c, req, &m, &err);
  if (rc == 0 && !(o = spmvd_op_new(c, id, "multiply")))
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    spmvd_conn_send_error(c, id, &err);
    spmvd_conn_done(c);
    return;
  }
  spmvd_op_get_number(req, "alpha", &alpha, NULL);
  spmvd_op_get_number(req, "beta", &beta, NULL);
  if (json_object_get(req, "k"))
    spmvd_op_get_int(req, "k", &k, NULL);
  size_t es = spmv_dtype_size(m->dtype);
  o->handle = m->handle;
  o->nvec = (int)k;
  o->y_off = (size_t)k * (size_t)m->cols * es;
  o->y_len = (size_t)k * (size_t)m->rows * es;
  if (m->nblocks > 1) {
    /* Every block's worker maps the same vectors: the attached memfd, the
     * kept buffer or the payload's. */
    struct spmvd_attach *at = json_is_true(json_object_get(req, "inplace"))
                                  ? spmvd_conn_attached(c, m->handle) : NULL;
    int vfd;
    if (at) {
      o->inplace = 1;
      vfd = at->fd;
    } else if (c->payload_vec) {
      o->conn_vec = 1;
      c->vec_users++;
      vfd = c->vec.fd;
    } else {
      o->vec = *payload;
      spmvd_shm_init(payload);
      vfd = o->vec.fd;
    }
    if (vfd < 0)
      spmvd_ops_multiplied(o, NULL, NULL);
    else
      spmvd_ops_split_multiply(o, m, alpha, beta, vfd);
    return;
  }
  json_t *msg = json_pack("{ss sI sf sf si}", "op", "multiply", "handle",
                          (json_int_t)m->handle, "alpha", alpha, "beta", beta,
                          "nvec", (int)k);
  o->wk = m->wk;  /* another connection of the owner may use it */
  int fd, nfds = 1, gen = spmvd_worker_restarts(spmvd_op_worker(o));
  struct spmvd_attach *a = json_is_true(json_object_get(req, "inplace"))
                               ? spmvd_conn_attached(c, m->handle) : NULL;
  if (a) {
    /* The client's memfd: sent to each incarnation of the worker once. */
    o->inplace = 1;
    fd = a->fd;
    nfds = a->gen != gen;
    json_object_set_new(msg, "buf", json_integer(a->buf_id));
    json_object_set_new(msg, "buf_size", json_integer((json_int_t)a->size));
  } else if (c->payload_vec && o->wk != c->wk) {
    /* The kept buffer of a connection placed on another worker than the
     * matrix's: lent to this call only, under an id of its own. */
    o->conn_vec = 1;
    c->vec_users++;
    fd = c->vec.fd;
    o->buf_private = spmvd_conn_new_buf_id();
    json_object_set_new(msg, "buf", json_integer(o->buf_private));
    json_object_set_new(msg, "buf_size", json_integer((json_int_t)c->vec.size));
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
      spmvd_ops_multiplied(o, NULL, NULL);
      return;
    }
  }
  if (spmvd_op_worker_call(o, msg, &fd, nfds, spmvd_ops_multiplied, NULL, o,
                        &err) < 0) {
    spmvd_op_fail(o, &err);
    return;
  }
  if (o->conn_vec && !o->buf_private)
    c->vec_gen = gen;
  if (a)
    a->gen = gen;
}

/* --- the quick ops, answered on the loop --- */

/* info: a matrix, its profile and its decision. */
json_t *spmvd_ops_info(struct spmvd_conn *c, json_t *req,
                       struct spmv_error *err)
{
  struct spmvd_matrix *m;

  if (spmvd_op_get_ready_matrix(c, req, &m, err) < 0)
    return NULL;
  /* The numbers as the load's reply gives them: never a failing reply. */
  json_t *r = json_pack("{sI ss ss sI sI sI ss so so ss ss so so so sO sI}",
                   "handle", (json_int_t)m->handle, "name", m->name, "dtype",
                   spmv_dtype_name(m->dtype), "rows", (json_int_t)m->rows,
                   "cols", (json_int_t)m->cols, "nnz", (json_int_t)m->nnz,
                   "fingerprint", m->fingerprint, "profile",
                   spmvd_ipc_profile_pack(&m->prof), "config",
                   spmvd_cache_config_json(&m->cfg, m->cfg_text), "source",
                   m->source,
                   "strategy", spmvd_strategy_name(m->strategy), "time_us",
                   spmvd_cache_number_json(m->time_us), "gflops",
                   spmvd_cache_number_json(m->gflops), "gbps",
                   spmvd_cache_number_json(m->gbps), "trials",
                   m->trials ? m->trials : json_array(), "multiplies",
                   (json_int_t)m->multiplies);
  if (r && m->nblocks > 1) {
    json_object_set_new(r, "blocks", json_integer(m->nblocks));
    json_object_set_new(r, "workers", spmvd_ops_split_workers(m));
    json_object_set_new(r, "block_configs", spmvd_ops_split_configs(m));
  }
  return r;
}

/* list: the user's matrices. */
json_t *spmvd_ops_list(struct spmvd_conn *c)
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

/* free: the matrix and its attached vectors go. */
json_t *spmvd_ops_free(struct spmvd_conn *c, json_t *req,
                       struct spmv_error *err)
{
  struct spmvd_matrix *m;

  if (spmvd_op_get_ready_matrix(c, req, &m, err) < 0)
    return NULL;
  spmvd_conn_detach(c, m->handle);
  if (m->owner && m->owner != c)
    spmvd_conn_detach(m->owner, m->handle);
  spmvd_server_matrix_free(c->srv, m);
  return json_object();
}

/* attach-vectors: validates the client's memfd and keeps it for in-place
 * products of the matrix. */
json_t *spmvd_ops_attach(struct spmvd_conn *c, json_t *req,
                         struct spmv_error *err)
{
  struct spmvd_matrix *m;
  struct spmv_wire_limits lim;
  uint64_t size;
  int64_t k = 1;
  int seals;

  if (c->nfds != 1) {
    spmv_error_set(err, SPMV_EPROTO,
                   "'attach-vectors' takes exactly one file descriptor "
                   "(SCM_RIGHTS on the frame's first byte), got %d", c->nfds);
    return NULL;
  }
  if (spmvd_op_get_ready_matrix(c, req, &m, err) < 0 ||
      (json_object_get(req, "k") && spmvd_op_get_int(req, "k", &k, err) < 0))
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
  if (memfd_inspect(fd, &size, &seals, err) < 0)
    return NULL;
  if (!(seals & F_SEAL_SHRINK)) {
    spmv_error_set(err, SPMV_EINVAL,
                   "the vector memfd is not sealed against shrinking "
                   "(F_SEAL_SHRINK): its size could change after validation");
    return NULL;
  }
  if (size < need) {
    spmv_error_set(err, SPMV_EINVAL,
                   "the vector memfd holds %llu bytes, but k = %lld x (%lld "
                   "cols + %lld rows) of %s need %llu",
                   (unsigned long long)size, (long long)k, (long long)m->cols,
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
  if (need > held && spmvd_ops_check_mem(c, need - held, err) < 0)
    return NULL;
  if (spmvd_conn_attach(c, m->handle, m->wk, (size_t)need, (int)k, err) < 0)
    return NULL;
  return json_pack("{sI sI sI sI sI}", "handle", (json_int_t)m->handle, "k",
                   (json_int_t)k, "x_offset", (json_int_t)0, "y_offset",
                   (json_int_t)xb, "size", (json_int_t)need);
}

/* --- after a worker respawn --- */

/* The new worker re-created a matrix (or could not: logged). */
static void on_adopted(void *ctx, json_t *rep, const struct spmv_error *err)
{
  int64_t *h = ctx;
  if (err)
    spmvd_log_error("matrix %lld could not be re-created on the new worker: "
                    "%s", (long long)*h, err->msg);
  free(h);
}

/* After worker wk respawned: re-creates its resident matrices from their
 * host copies. */
void spmvd_ops_readopt(struct spmvd_server *srv, int wk)
{
  struct spmv_error err;
  int n = 0;

  for (struct spmvd_matrix *m = srv->reg.head; m; m = m->next) {
    if (m->state != SPMVD_MATRIX_READY)
      continue;
    if (m->nblocks > 1) {
      spmvd_ops_split_readopt(srv, m, wk);
      continue;
    }
    if (m->wk != wk)
      continue;
    int64_t *h = malloc(sizeof *h);
    if (!h)
      break;
    *h = m->handle;
    if (spmvd_worker_call(spmvd_server_worker(srv, wk),
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

