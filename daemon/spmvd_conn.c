/* spmvd_conn.c: one client connection: credentials, frames in, replies out. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spmvd_bio.h"
#include "spmvd_conn.h"
#include "spmvd_conn_impl.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_server.h"
#include "spmvd_worker.h"

/* Reading frames is spmvd_conn_read.c's; this file owns the connection's
 * life, its vector buffers and descriptors, and what it writes. */

struct write_req {
  uv_write_t req;
  uint8_t hdr[SPMV_WIRE_HEADER_SIZE];
  char *json;
  struct spmvd_shm shm;         /* a payload owned by the write */
  int vec;                      /* the payload is in conn->vec */
  struct spmvd_conn *conn;
};

/* Names of vector buffers for the worker, unique for the daemon's life. */
static int64_t vec_ids;

#define CHUNK ((size_t)1 << 30)
#define MAX_CHUNKS 64          /* 64 GiB: more than max_payload allows */
#define SNDBUF (4 << 20)              /* the socket's send buffer */
/* Regions this large are unmapped and closed on the background thread:
 * the kernel takes a while to free gigabytes of pages (Redis's lazy free). */
#define LAZY_CLOSE_MIN ((size_t)16 << 20)

static void on_closed(uv_handle_t *h)
{
  struct spmvd_conn *c = h->data;
  spmvd_conn_unref(c);
}

static void close_work(struct spmvd_cache *cache, void *arg)
{
  struct spmvd_shm *s = arg;

  (void)cache;
  spmvd_shm_close(s);
  free(s);
}

/* Closes s now, or on the background thread when it is large. */
void spmvd_conn_shm_close(struct spmvd_conn *c, struct spmvd_shm *s)
{
  struct spmvd_shm *copy;
  struct spmv_error err;

  if (s->fd >= 0 && s->size >= LAZY_CLOSE_MIN && c->srv->bio &&
      (copy = malloc(sizeof *copy))) {
    *copy = *s;
    if (spmvd_bio_post(c->srv->bio, close_work, NULL, copy, &err) == 0) {
      spmvd_shm_init(s);
      return;
    }
    free(copy);
  }
  spmvd_shm_close(s);
}

/* Takes a reference. */
void spmvd_conn_ref(struct spmvd_conn *c)
{
  c->refs++;
}

/* Drops a reference; the last one frees the connection. */
void spmvd_conn_unref(struct spmvd_conn *c)
{
  if (--c->refs > 0)
    return;
  free(c->json);
  json_decref(c->req);
  spmvd_shm_close(&c->payload);
  spmvd_shm_close(&c->vec);
  for (int i = 0; i < c->nkept; i++)
    if (c->fds[i] >= 0)
      close(c->fds[i]);
  free(c);
}

/* Lets the kept vector buffer go (the worker unmaps its copy). */
static void vec_drop(struct spmvd_conn *c)
{
  struct spmvd_worker *w = spmvd_conn_worker(c);

  if (c->vec.fd < 0)
    return;
  if (w && c->vec_gen >= 0)
    spmvd_worker_post(w, json_pack("{ss sI}", "op", "release", "buf",
                                   (json_int_t)c->vec_id));
  c->mem -= c->vec.size;
  spmvd_conn_shm_close(c, &c->vec);
  c->vec_id = 0;
  c->vec_gen = -1;
}

/* Makes c->vec hold size bytes for the request being read: 0, 1 when it is
 * in use (the request takes a buffer of its own), or a negative code. */
int spmvd_conn_vec_reserve(struct spmvd_conn *c, size_t size,
                       struct spmv_error *err)
{
  if (c->vec_users > 0) {
    spmvd_log_debug("pid %ld: its vectors are still being written back: "
                    "this request gets a buffer of its own", (long)c->pid);
    return 1;
  }
  if (c->vec.fd >= 0 && c->vec.size >= size)
    return 0;
  vec_drop(c);
  int rc = spmvd_shm_open(&c->vec, "spmvd-vectors", size, err);
  if (rc < 0)
    return rc;
  c->vec_id = ++vec_ids;
  c->mem += size;
  return 0;
}

int64_t spmvd_conn_new_buf_id(void)
{
  return ++vec_ids;
}

/* The bytes a request with size bytes of vectors adds to c->mem. */
uint64_t spmvd_conn_vec_growth(const struct spmvd_conn *c, size_t size)
{
  if (c->vec_users > 0)
    return size;
  return c->vec.fd >= 0 && c->vec.size >= size ? 0 : size;
}

/* Closes the descriptors received with the current frame. */
void spmvd_conn_drop_fds(struct spmvd_conn *c)
{
  for (int i = 0; i < c->nkept; i++)
    if (c->fds[i] >= 0)
      close(c->fds[i]);
  c->nkept = 0;
  c->nfds = 0;
  c->nlate = 0;
}

/* The vectors attached to matrix handle on c, or NULL. */
struct spmvd_attach *spmvd_conn_attached(struct spmvd_conn *c, int64_t handle)
{
  for (int i = 0; i < SPMVD_CONN_MAX_ATTACH; i++)
    if (c->att[i].handle != 0 && c->att[i].handle == handle)
      return &c->att[i];
  return NULL;
}

/* Releases the vectors attached to matrix handle on c, if any. */
void spmvd_conn_detach(struct spmvd_conn *c, int64_t handle)
{
  struct spmvd_attach *a = spmvd_conn_attached(c, handle);

  if (!a)
    return;
  struct spmvd_worker *w = spmvd_server_worker(c->srv, a->wk);
  if (w && a->gen >= 0)
    spmvd_worker_post(w, json_pack("{ss sI}", "op", "release", "buf",
                                   (json_int_t)a->buf_id));
  close(a->fd);
  c->mem -= a->size;
  memset(a, 0, sizeof *a);
  a->fd = -1;
}

/* Attaches the frame's first descriptor to matrix handle. */
int spmvd_conn_attach(struct spmvd_conn *c, int64_t handle, int wk, size_t size, int k,
                      struct spmv_error *err)
{
  struct spmvd_attach *a = NULL;

  spmvd_conn_detach(c, handle);
  for (int i = 0; !a && i < SPMVD_CONN_MAX_ATTACH; i++)
    if (c->att[i].handle == 0)
      a = &c->att[i];
  if (!a)
    return spmv_error_set(err, SPMV_ELIMIT,
                          "a connection may attach vectors to at most %d "
                          "matrices", SPMVD_CONN_MAX_ATTACH);
  if (c->nkept < 1)
    return spmv_error_set(err, SPMV_EPROTO, "no file descriptor was received");
  a->handle = handle;
  a->fd = c->fds[0];
  c->fds[0] = -1;
  a->size = size;
  c->mem += size;
  a->k = k;
  a->buf_id = ++vec_ids;
  a->gen = -1;
  a->wk = wk;
  return 0;
}

struct spmvd_worker *spmvd_conn_worker(const struct spmvd_conn *c)
{
  return spmvd_server_worker(c->srv, c->wk);
}

/* A poll, not a read: the client's next frames stay in the socket. */
int spmvd_conn_peer_gone(struct spmvd_conn *c)
{
  uv_os_fd_t fd;

  if (c->closing || uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0)
    return 1;
  struct pollfd p = {fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Closes the connection. */
void spmvd_conn_close(struct spmvd_conn *c)
{
  if (c->closing)
    return;
  c->closing = 1;
  spmvd_server_conn_closed(c->srv, c);
  c->mem -= c->payload_mem;
  c->payload_mem = 0;
  spmvd_conn_shm_close(c, &c->payload);
  vec_drop(c);
  for (int i = 0; i < SPMVD_CONN_MAX_ATTACH; i++)
    if (c->att[i].handle != 0)
      spmvd_conn_detach(c, c->att[i].handle);
  spmvd_conn_drop_fds(c);
  uv_close((uv_handle_t *)&c->pipe, on_closed);
}

static void on_written(uv_write_t *req, int status)
{
  struct write_req *w = (struct write_req *)req;
  struct spmvd_conn *c = w->conn;

  free(w->json);
  spmvd_conn_shm_close(c, &w->shm);
  if (w->vec)
    c->vec_users--;
  free(w);
  c->writes--;
  if (c->write_blocked && !c->closing &&
      uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) < SPMVD_CONN_MAX_QUEUED / 2) {
    c->write_blocked = 0;
    spmvd_conn_start(c);
  }
  if (status < 0 && !c->closing)
    spmvd_log_debug("connection of pid %ld: write failed: %s", (long)c->pid,
                    uv_strerror(status));
  if ((status < 0 || (c->close_after_write && c->writes == 0)) && !c->closing)
    spmvd_conn_close(c);
  spmvd_conn_unref(c);
}

/* Sends a frame: msg borrowed, payload stolen, or (vec) c->vec borrowed. */
static void send_frame(struct spmvd_conn *c, const json_t *msg,
                       struct spmvd_shm *payload, int vec, size_t off,
                       size_t len)
{
  struct write_req *w = calloc(1, sizeof *w);
  struct spmv_wire_header h = {SPMV_WIRE_MAGIC, SPMV_PROTO_VERSION, 0, 0, 0, 0};
  size_t jlen = 0;
  uv_buf_t bufs[2 + MAX_CHUNKS];
  int n = 0;

  if (!w || c->closing || !(w->json = spmv_wire_json_dump(msg, &jlen))) {
    if (payload)
      spmvd_shm_close(payload);
    free(w);
    if (!c->closing) {
      spmvd_log_error("out of memory writing a reply; closing the connection");
      spmvd_conn_close(c);
    }
    return;
  }
  spmvd_shm_init(&w->shm);
  if (payload) {
    w->shm = *payload;
    spmvd_shm_init(payload);
  }
  char *base = vec ? c->vec.addr : w->shm.addr;
  w->vec = vec;
  if (vec)
    c->vec_users++;
  h.json_len = (uint32_t)jlen;
  h.payload_len = len;
  spmv_wire_header_encode(&h, w->hdr);
  w->conn = c;
  bufs[n++] = uv_buf_init((char *)w->hdr, SPMV_WIRE_HEADER_SIZE);
  bufs[n++] = uv_buf_init(w->json, (unsigned)jlen);
  /* uv_buf_t lengths are 32-bit: a large y goes out in chunks. */
  for (size_t done = 0; done < len && n < 2 + MAX_CHUNKS; done += CHUNK) {
    size_t part = len - done < CHUNK ? len - done : CHUNK;
    bufs[n++] = uv_buf_init(base + off + done, (unsigned)part);
  }
  spmvd_conn_ref(c);
  c->writes++;
  int rc = uv_write(&w->req, (uv_stream_t *)&c->pipe, bufs, (unsigned)n,
                    on_written);
  if (rc < 0) {
    c->writes--;
    if (vec)
      c->vec_users--;
    free(w->json);
    spmvd_shm_close(&w->shm);
    free(w);
    spmvd_conn_close(c);
    spmvd_conn_unref(c);
  }
}

/* Sends a frame: msg borrowed, payload stolen. */
void spmvd_conn_send(struct spmvd_conn *c, const json_t *msg,
                     struct spmvd_shm *payload, size_t off, size_t len)
{
  send_frame(c, msg, payload, 0, off, len);
}

/* Sends a frame whose payload lies in c->vec. */
void spmvd_conn_send_vec(struct spmvd_conn *c, const json_t *msg, size_t off,
                         size_t len)
{
  send_frame(c, msg, NULL, 1, off, len);
}

/* Sends {id, ok:false, error:{code, message}}. */
void spmvd_conn_send_error(struct spmvd_conn *c, int64_t id,
                           const struct spmv_error *err)
{
  json_t *msg = json_pack("{sI sb s{ss ss}}", "id", (json_int_t)id, "ok", 0,
                          "error", "code", spmv_err_name(err->code), "message",
                          err->msg);
  spmvd_log_debug("pid %ld request %lld: %s: %s", (long)c->pid, (long long)id,
                  spmv_err_name(err->code), err->msg);
  if (msg)
    spmvd_conn_send(c, msg, NULL, 0, 0);
  json_decref(msg);
}

/* Accepts a connection on listener and reads its peer's credentials. */
int spmvd_conn_accept(struct spmvd_server *srv, uv_stream_t *listener,
                      struct spmvd_conn **out)
{
  struct spmvd_conn *c = calloc(1, sizeof *c);
  struct ucred cred;
  socklen_t len = sizeof cred;
  uv_os_fd_t fd;
  int rc;

  if (!c)
    return UV_ENOMEM;
  uv_pipe_init(listener->loop, &c->pipe, 1);  /* IPC: receives fds */
  c->pipe.data = c;
  c->srv = srv;
  c->refs = 1;
  spmvd_shm_init(&c->payload);
  spmvd_shm_init(&c->vec);
  c->vec_gen = -1;
  c->idle_since_ms = uv_now(listener->loop);
  rc = uv_accept(listener, (uv_stream_t *)&c->pipe);
  if (rc == 0 && uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0 &&
      getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    rc = -errno;
  if (rc < 0) {
    c->closing = 1;
    uv_close((uv_handle_t *)&c->pipe, on_closed);
    return rc;
  }
  c->uid = cred.uid;
  c->gid = cred.gid;
  c->pid = cred.pid;
  /* A product's y leaves in one go instead of in 200 KiB steps, each a
   * wake-up of both sides (the kernel caps this at wmem_max). */
  int sndbuf = SNDBUF;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  *out = c;
  return 0;
}
