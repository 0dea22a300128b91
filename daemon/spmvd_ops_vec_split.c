/* spmvd_ops_vec_split.c: device vectors split by a split matrix's rows
 * (issue 54), and the lists of operations on them.  Each block's worker
 * holds its rows of every such vector.  A list goes to every block's
 * worker in one call, its steps on the block's rows; the workers run it
 * together through a memfd they share (spmvd_worker_split_list.c): before
 * each product every block publishes its rows of x there and waits for
 * the others, then gathers its halo from it, and each dot or norm is
 * summed over the blocks in block order, so that the results and the
 * scalars that read them are the whole vectors'. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_conn.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_ops_impl.h"
#include "spmvd_server.h"
#include "spmvd_split_shm.h"
#include "spmvd_vectors.h"
#include "spmvd_worker.h"

void spmvd_ops_split_layout(const struct spmvd_matrix *m,
                            struct spmvd_split_layout *l)
{
  memset(l, 0, sizeof *l);
  l->n = m->nblocks;
  for (int b = 0; b < m->nblocks; b++) {
    l->wk[b] = m->block_wk[b];
    l->r0[b + 1] = m->block_r0[b + 1];
  }
}

/* --- vector-create, vector-free --- */

static void on_part_created(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct spmvd_op *o = ctx;
  struct spmvd_vector *v = spmvd_vectors_find(&o->c->vecs, o->handle);

  (void)rep;
  if (err && o->block_err.code == 0)
    o->block_err = *err;
  if (--o->pending > 0)
    return;
  if (o->c->closing || !v) {
    spmvd_op_end(o);
    return;
  }
  if (o->block_err.code != 0) {
    struct spmv_error e = o->block_err;
    spmvd_ops_split_vector_free(o->srv, v);
    spmvd_vectors_remove(&o->c->vecs, o->handle);
    spmvd_op_fail(o, &e);
    return;
  }
  spmvd_op_reply(o->c, o->id,
                 json_pack("{sI ss sI si}", "vector", (json_int_t)v->id, "dtype",
                           spmv_dtype_name(v->dtype), "n", (json_int_t)v->n,
                           "blocks", v->split.n));
  spmvd_op_end(o);
}

void spmvd_ops_split_vector_create(struct spmvd_op *o, struct spmvd_vector *v)
{
  const struct spmvd_split_layout *l = &v->split;
  struct spmv_error err;

  o->pending = l->n;
  spmv_error_clear(&o->block_err);
  for (int p = 0; p < l->n; p++) {
    struct spmvd_worker *w = spmvd_server_worker(o->srv, l->wk[p]);
    json_t *msg = json_pack("{ss s[{sI ss sI}]}", "op", "vnew", "vectors", "id",
                            (json_int_t)v->id, "dtype", spmv_dtype_name(v->dtype),
                            "n", (json_int_t)(l->r0[p + 1] - l->r0[p]));
    if (!w || !msg) {
      json_decref(msg);
      if (!w)
        spmv_error_set(&err, SPMV_EWORKER, "worker %d has stopped", l->wk[p]);
      else
        spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
      on_part_created(o, NULL, &err);
    } else if (spmvd_worker_call(w, msg, NULL, 0, on_part_created, NULL, o,
                                 &err) < 0) {
      on_part_created(o, NULL, &err);
    }
  }
}

void spmvd_ops_split_vector_free(struct spmvd_server *srv,
                                 const struct spmvd_vector *v)
{
  for (int p = 0; p < v->split.n; p++) {
    struct spmvd_worker *w = spmvd_server_worker(srv, v->split.wk[p]);
    if (w)
      spmvd_worker_post(w, json_pack("{ss s[I]}", "op", "vfree", "ids",
                                     (json_int_t)v->id));
  }
}

/* --- a list --- */

struct slist;

/* One block's call. */
struct bcall {
  struct slist *s;
  int b;
};

/* A list being run over the blocks; owned by itself, freed at its end. */
struct slist {
  struct spmvd_op *o;
  struct spmvd_split_layout l;
  json_t *steps;                /* the steps as for one worker, on whole
                                   vectors, each product after the download
                                   that publishes its x */
  json_t *dtypes;               /* {"id": dtype} of the vectors named */
  int nres;
  json_t *results;              /* block 0's: every block's alike */
  size_t pending;
  struct spmv_error err;
  int64_t pbuf, xbuf;           /* buffer ids: the payload's, the shared */
  int pfd;
  size_t psize;
  uint64_t down_base;
  struct spmvd_shm xchg;        /* spmvd_split_shm.h: the blocks' control
                                   block and the x they publish */
  int sent;                     /* the buffers went to the workers */
  struct bcall bc[SPMVD_CONFIG_MAX_WORKERS];
};

static void slist_free(struct slist *s)
{
  for (int b = 0; b < s->l.n; b++) {
    struct spmvd_worker *w = spmvd_server_worker(s->o->srv, s->l.wk[b]);
    if (!w || !s->sent)
      continue;
    if (s->pbuf)
      spmvd_worker_post(w, json_pack("{ss sI}", "op", "release", "buf",
                                     (json_int_t)s->pbuf));
    spmvd_worker_post(w, json_pack("{ss sI}", "op", "release", "buf",
                                   (json_int_t)s->xbuf));
  }
  spmvd_shm_close(&s->xchg);
  json_decref(s->steps);
  json_decref(s->dtypes);
  json_decref(s->results);
  free(s);
}

static size_t vsize(const struct slist *s, json_t *id)
{
  char key[24];
  enum spmv_dtype dt = SPMV_F64;

  snprintf(key, sizeof key, "%lld", (long long)json_integer_value(id));
  spmv_dtype_parse(json_string_value(json_object_get(s->dtypes, key)), &dt);
  return spmv_dtype_size(dt);
}

/* The steps with each product's x published first; NULL when out of
 * memory. */
static json_t *expand(json_t *steps, int64_t xbuf, size_t n)
{
  json_t *out = json_array(), *st;
  size_t i;
  int q = 0;

  json_array_foreach(steps, i, st) {
    if (strcmp(json_string_value(json_object_get(st, "k")), "spmv") != 0) {
      json_array_append(out, st);
      continue;
    }
    json_int_t off = (json_int_t)spmvd_split_list_x_off(n, q++);
    json_array_append_new(out, json_pack("{ss sO sI sI sb}", "k", "download",
                                         "x", json_object_get(st, "x"), "buf",
                                         (json_int_t)xbuf, "off", off,
                                         "publish", 1));
    json_t *b = json_deep_copy(st);
    json_object_set_new(b, "k", json_string("bspmv"));
    json_object_set_new(b, "buf", json_integer(xbuf));
    json_object_set_new(b, "off", json_integer(off));
    json_array_append_new(out, b);
  }
  return out;
}

/* The steps for block b: each transfer and each vector takes the block's
 * rows. */
static json_t *block_steps(struct slist *s, int b)
{
  json_t *steps = json_array(), *st;
  int64_t r0 = s->l.r0[b], nl = s->l.r0[b + 1] - r0;
  size_t i;

  json_array_foreach(s->steps, i, st) {
    const char *k = json_string_value(json_object_get(st, "k"));
    json_t *t = json_deep_copy(st);
    if (strcmp(k, "upload") == 0 || strcmp(k, "download") == 0) {
      size_t es = vsize(s, json_object_get(st, "x"));
      json_int_t off = json_integer_value(json_object_get(st, "off"));
      json_object_set_new(t, "off", json_integer(off + (json_int_t)((size_t)r0 * es)));
      json_object_set_new(t, "bytes", json_integer((json_int_t)((size_t)nl * es)));
    }
    json_array_append_new(steps, t);
  }
  return steps;
}

/* The list is done, or failed (err): its reply. */
static void finish(struct slist *s, const struct spmv_error *err)
{
  struct spmvd_op *o = s->o;
  struct spmvd_conn *c = o->c;

  if (c->closing) {
    slist_free(s);
    spmvd_op_end(o);
    return;
  }
  if (err) {
    struct spmv_error e = *err;
    if (e.code == SPMV_ENOENT)
      spmv_error_set(&e, SPMV_EWORKER, "a block of the split went while the "
                     "list ran: %s", err->msg);
    slist_free(s);
    spmvd_op_fail(o, &e);
    return;
  }
  size_t i;
  json_t *id;
  json_array_foreach(o->written, i, id) {
    struct spmvd_vector *v = spmvd_vectors_find(&c->vecs, json_integer_value(id));
    if (v)
      v->lost = 0;
  }
  json_t *r = json_array();
  for (int k = 0; k < s->nres; k++)
    json_array_append_new(r, spmvd_ipc_real(spmvd_ipc_real_value(
                                 json_array_get(s->results, (size_t)k))));
  json_t *msg = json_pack("{sI sb so}", "id", (json_int_t)o->id, "ok", 1,
                          "results", r);
  slist_free(s);
  spmvd_op_send_buffer(o, msg, o->y_off, o->y_len);
  json_decref(msg);
  spmvd_op_end(o);
}

/* A block's answer; the first failure lets the other blocks go, and is
 * what the client is told unless it was only another's. */
static void on_block(void *ctx, json_t *rep, const struct spmv_error *err)
{
  struct bcall *bc = ctx;
  struct slist *s = bc->s;

  if (err) {
    struct spmvd_split_ctl *ctl = s->xchg.addr;
    if (ctl)
      atomic_store(&ctl->abort, 1);
    if (s->err.code == 0 || strstr(s->err.msg, SPMVD_SPLIT_ABORTED))
      s->err = *err;
  } else if (bc->b == 0) {
    s->results = json_incref(json_object_get(rep, "results"));
  }
  if (--s->pending > 0)
    return;
  if (s->err.code == 0 && json_array_size(s->results) < (size_t)s->nres)
    spmv_error_set(&s->err, SPMV_EPROTO, "a block's reply lacks its results");
  finish(s, s->err.code != 0 ? &s->err : NULL);
}

/* Block b's message, with the buffers' fds into fds. */
static json_t *block_msg(struct slist *s, int b, int *fds, int *nfds)
{
  json_t *vecs = json_array(), *bufs = json_array(), *d;
  int64_t nl = s->l.r0[b + 1] - s->l.r0[b];
  const char *key;

  json_object_foreach(s->dtypes, key, d)
    json_array_append_new(vecs, json_pack("{sI sO sI}", "id",
                                          (json_int_t)strtoll(key, NULL, 10),
                                          "dtype", d, "n", (json_int_t)nl));
  *nfds = 0;
  if (s->pbuf) {
    json_array_append_new(bufs, json_pack("{sI sI sb}", "buf", (json_int_t)s->pbuf,
                                          "size", (json_int_t)s->psize, "fd", 1));
    fds[(*nfds)++] = s->pfd;
  }
  json_array_append_new(bufs, json_pack("{sI sI sb}", "buf", (json_int_t)s->xbuf,
                                        "size", (json_int_t)s->xchg.size, "fd", 1));
  fds[(*nfds)++] = s->xchg.fd;
  return json_pack("{ss so so so sI sI so si s{si si sI sI}}", "op", "ops",
                   "vectors", vecs, "bufs", bufs, "handles", json_array(),
                   "payload_buf", (json_int_t)s->pbuf, "down_base",
                   (json_int_t)s->down_base, "steps", block_steps(s, b), "nres",
                   s->nres, "sync", "blocks", s->l.n, "block", b, "rows",
                   (json_int_t)s->l.r0[s->l.n], "buf", (json_int_t)s->xbuf);
}

/* Every block's call at once, so that each worker has the lists of the
 * blocks it shares with others in the order the front end sent them; a
 * call that fails here is answered at once, the last ending the list. */
static void run_blocks(struct slist *s)
{
  struct spmv_error err;

  s->pending = (size_t)s->l.n;
  s->sent = 1;
  for (int b = 0; b < s->l.n; b++) {
    struct spmvd_worker *w = spmvd_server_worker(s->o->srv, s->l.wk[b]);
    int fds[2], nfds = 0;
    json_t *msg = block_msg(s, b, fds, &nfds);
    if (!w || !msg) {
      json_decref(msg);
      if (!w)
        spmv_error_set(&err, SPMV_EWORKER, "worker %d has stopped", s->l.wk[b]);
      else
        spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
      on_block(&s->bc[b], NULL, &err);
    } else if (spmvd_worker_call(w, msg, fds, nfds, on_block, NULL, &s->bc[b],
                                 &err) < 0) {
      on_block(&s->bc[b], NULL, &err);
    }
  }
}

void spmvd_ops_split_list(struct spmvd_op *o,
                          const struct spmvd_split_list_args *a)
{
  struct slist *s = calloc(1, sizeof *s);
  struct spmv_error err;
  size_t i, n = (size_t)a->split->r0[a->split->n];
  json_t *v;

  spmv_error_clear(&err);
  if (!s) {
    json_decref(a->steps);
    json_decref(a->vectors);
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    spmvd_op_fail(o, &err);
    return;
  }
  s->o = o;
  s->l = *a->split;
  s->nres = a->nres;
  s->down_base = a->down_base;
  s->pfd = a->payload_fd;
  s->psize = a->payload_size;
  spmvd_shm_init(&s->xchg);
  for (int b = 0; b < s->l.n; b++)
    s->bc[b] = (struct bcall){s, b};
  s->dtypes = json_object();
  json_array_foreach(a->vectors, i, v) {
    char key[24];
    snprintf(key, sizeof key, "%lld",
             (long long)json_integer_value(json_object_get(v, "id")));
    json_object_set(s->dtypes, key, json_object_get(v, "dtype"));
  }
  json_decref(a->vectors);
  if (s->pfd >= 0)
    s->pbuf = spmvd_conn_new_buf_id();
  s->xbuf = spmvd_conn_new_buf_id();
  int rc = spmvd_shm_open(&s->xchg, "spmvd-split-list", spmvd_split_list_bytes(n),
                          &err);
  s->steps = rc == 0 ? expand(a->steps, s->xbuf, n) : NULL;
  json_decref(a->steps);
  if (rc == 0 && !s->steps)
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
  if (rc < 0) {
    slist_free(s);
    spmvd_op_fail(o, &err);
    return;
  }
  run_blocks(s);
}
