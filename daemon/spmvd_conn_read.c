/* spmvd_conn_read.c: a connection's frames in: header, JSON, payload, fds. */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <unistd.h>

#include "spmvd_conn.h"
#include "spmvd_conn_impl.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_server.h"
#include "spmvd_spin.h"

/*
 * Frames are read part by part straight into their final place: the
 * header into hdr, the JSON into a buffer of exactly json_len bytes, the
 * payload into shared memory that the worker maps.  alloc_cb never offers
 * more than what is left of the current part, so no byte of the next frame
 * is ever read early and lengths are exact.  Every length is checked
 * against the limits before its buffer exists.
 *
 * The pipe is opened in libuv's IPC mode so that descriptors a client
 * passes (SCM_RIGHTS) are received; on_read takes them as they come and
 * they belong to the frame being read (the ops refuse them on any op but
 * attach-vectors).  Those no op took are closed when the frame ends.
 */

/* Where a refused request's payload goes (read and dropped). */
static char discard_buf[65536];

static void free_handle(uv_handle_t *h)
{
  free(h);
}

/* Takes the descriptors libuv received with the last read: into c->fds
 * when that read carried the frame's first byte (first), else closed and
 * counted in c->nlate, as PROTOCOL.md says of later ones. */
static void take_fds(struct spmvd_conn *c, int first)
{
  for (int i = 0; i < 256 && uv_pipe_pending_count(&c->pipe) > 0; i++) {
    uv_pipe_t *tmp = malloc(sizeof *tmp);
    uv_os_fd_t ufd;
    int fd = -1;

    if (!tmp)
      break;
    uv_pipe_init(c->pipe.loop, tmp, 0);
    if (uv_accept((uv_stream_t *)&c->pipe, (uv_stream_t *)tmp) == 0 &&
        uv_fileno((uv_handle_t *)tmp, &ufd) == 0)
      fd = fcntl(ufd, F_DUPFD_CLOEXEC, 3);
    uv_close((uv_handle_t *)tmp, free_handle);
    if (!first) {
      c->nlate++;
      if (fd >= 0)
        close(fd);
      continue;
    }
    c->nfds++;
    if (fd >= 0 && c->nkept < SPMVD_CONN_MAX_FDS)
      c->fds[c->nkept++] = fd;
    else if (fd >= 0)
      close(fd);
  }
}

/* A frame the stream cannot continue after: answer, then close. */
static void fatal(struct spmvd_conn *c, const struct spmv_error *err)
{
  spmvd_spin_kick();
  uv_read_stop((uv_stream_t *)&c->pipe);
  c->rstate = SPMVD_READ_BUSY;
  c->close_after_write = 1;
  c->fatal_ms = uv_now(c->pipe.loop);
  spmvd_conn_send_error(c, -1, err);
  if (c->writes == 0 && !c->closing)
    spmvd_conn_close(c);
}

static void next_frame(struct spmvd_conn *c)
{
  spmvd_conn_drop_fds(c);
  c->rstate = SPMVD_READ_HEADER;
  c->got = 0;
  c->idle_since_ms = uv_now(c->pipe.loop);
  free(c->json);
  c->json = NULL;
  json_decref(c->req);
  c->req = NULL;
}

/* Ends the current request: reading resumes with the next frame. */
void spmvd_conn_done(struct spmvd_conn *c)
{
  if (c->closing)
    return;
  c->mem -= c->payload_mem;
  c->payload_mem = 0;
  spmvd_conn_shm_close(c, &c->payload);
  c->payload_vec = 0;
  next_frame(c);
  if (c->close_after_write)
    return;
  /* A client that does not read its replies is not read either (Redis's
   * output buffer limit, as back-pressure). */
  if (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) > SPMVD_CONN_MAX_QUEUED) {
    c->write_blocked = 1;
    return;
  }
  spmvd_conn_start(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
  struct spmvd_conn *c = h->data;
  uint64_t left;

  switch (c->rstate) {
  case SPMVD_READ_HEADER:
    *buf = uv_buf_init((char *)c->hdr + c->got,
                       (unsigned)(SPMV_WIRE_HEADER_SIZE - c->got));
    return;
  case SPMVD_READ_JSON:
    *buf = uv_buf_init(c->json + c->got, (unsigned)(c->h.json_len - c->got));
    return;
  case SPMVD_READ_PAYLOAD:
    left = c->h.payload_len - c->got;
    *buf = uv_buf_init((char *)(c->payload_vec ? c->vec.addr
                                               : c->payload.addr) + c->got,
                       (unsigned)(left > (1u << 30) ? (1u << 30) : left));
    return;
  case SPMVD_READ_DISCARD:
    left = c->discard_left;
    *buf = uv_buf_init(discard_buf, (unsigned)(left > sizeof discard_buf
                                                    ? sizeof discard_buf : left));
    return;
  default:
    *buf = uv_buf_init(NULL, 0);
  }
}

static void dispatch(struct spmvd_conn *c)
{
  json_t *req = c->req;

  spmvd_spin_kick();
  uv_read_stop((uv_stream_t *)&c->pipe);
  c->rstate = SPMVD_READ_BUSY;
  c->req = NULL;
  free(c->json);
  c->json = NULL;
  spmvd_ops_run(c, req, c->req_id, &c->payload);
  json_decref(req);
}

/* A request that came with descriptors after its frame's first byte is
 * refused: those were closed, and it would run without what it was sent. */
static int late_fds_error(const struct spmvd_conn *c, struct spmv_error *err)
{
  const char *op = json_string_value(json_object_get(c->req, "op"));

  return spmv_error_set(err, SPMV_EPROTO,
                        "'%s' came with %d file descriptor%s after the "
                        "frame's first byte, closed unused: descriptors "
                        "count only with the first byte (SCM_RIGHTS)",
                        op ? op : "the request", c->nlate,
                        c->nlate == 1 ? "" : "s");
}

static void json_done(struct spmvd_conn *c)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;
  size_t shm_size = 0;
  json_t *id;

  spmvd_server_wire_limits(c->srv, &lim);
  c->req = spmv_wire_json_parse(c->json, c->h.json_len, &lim, &err);
  if (!c->req) {
    fatal(c, &err);
    return;
  }
  id = json_object_get(c->req, "id");
  c->req_id = json_is_integer(id) && json_integer_value(id) >= 0
                  ? json_integer_value(id) : -1;
  int rc = c->req_id < 0
               ? spmv_error_set(&err, SPMV_EPROTO,
                                "request has no \"id\" (an integer >= 0)")
           : c->nlate > 0 ? late_fds_error(c, &err)
               : spmvd_ops_begin(c, c->req, c->h.payload_len, &shm_size, &err);
  if (rc < 0) {
    c->payload_vec = 0;
    spmvd_conn_send_error(c, c->req_id, &err);
    json_decref(c->req);
    c->req = NULL;
    if (c->h.payload_len) {
      c->rstate = SPMVD_READ_DISCARD;
      c->discard_left = c->h.payload_len;
    } else {
      next_frame(c);
    }
    return;
  }
  if (c->h.payload_len == 0 && shm_size == 0) {
    c->payload_vec = 0;
    dispatch(c);
    return;
  }
  /* Vectors go to the connection's kept buffer when it is free. */
  rc = c->payload_vec ? spmvd_conn_vec_reserve(c, shm_size, &err) : 1;
  if (rc > 0) {
    c->payload_vec = 0;
    rc = spmvd_shm_open(&c->payload, "spmvd-payload", shm_size, &err);
    if (rc == 0) {
      c->mem += shm_size;
      c->payload_mem = shm_size;
    }
  }
  if (rc < 0) {
    c->payload_vec = 0;
    spmvd_conn_send_error(c, c->req_id, &err);
    json_decref(c->req);
    c->req = NULL;
    c->rstate = SPMVD_READ_DISCARD;
    c->discard_left = c->h.payload_len;
    if (!c->discard_left)
      next_frame(c);
    return;
  }
  c->got = 0;
  c->rstate = SPMVD_READ_PAYLOAD;
  if (c->h.payload_len == 0)
    dispatch(c);
}

/* Decodes c->hdr into c->h.  Another version is refused before the other
 * fields are judged: that version need not lay them out as ours. */
static int header_check(struct spmvd_conn *c,
                        const struct spmv_wire_limits *lim,
                        struct spmv_error *err)
{
  int rc = spmv_wire_header_decode(c->hdr, lim, &c->h, err);

  if (c->h.magic != SPMV_WIRE_MAGIC)
    return rc;
  int vrc = spmv_wire_header_check_version(&c->h, "spmvd", err);
  return vrc < 0 ? vrc : rc;
}

static void header_done(struct spmvd_conn *c)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;

  spmvd_server_wire_limits(c->srv, &lim);
  c->frame_ns = uv_hrtime();
  if (header_check(c, &lim, &err) < 0) {
    fatal(c, &err);
    return;
  }
  c->json = malloc(c->h.json_len + 1u);
  if (!c->json) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory for %u bytes of JSON",
                   c->h.json_len);
    fatal(c, &err);
    return;
  }
  c->got = 0;
  c->rstate = SPMVD_READ_JSON;
}

/* Whether c is within a frame; if so, *n of the *m bytes of its part
 * (named in *part) have come. */
static int frame_progress(const struct spmvd_conn *c, uint64_t *n,
                          uint64_t *m, const char **part)
{
  switch (c->rstate) {
  case SPMVD_READ_HEADER:
    *n = c->got, *m = SPMV_WIRE_HEADER_SIZE, *part = "header";
    return c->got > 0;
  case SPMVD_READ_JSON:
    *n = c->got, *m = c->h.json_len, *part = "JSON";
    return 1;
  case SPMVD_READ_PAYLOAD:
    *n = c->got, *m = c->h.payload_len, *part = "payload";
    return 1;
  case SPMVD_READ_DISCARD:
    *n = c->h.payload_len - c->discard_left, *m = c->h.payload_len;
    *part = "payload";
    return 1;
  default:
    return 0;
  }
}

/* The stream ended: between frames a plain close; within one the error
 * reply PROTOCOL.md promises, when the peer only shut its writing side. */
static void stream_ended(struct spmvd_conn *c, ssize_t status)
{
  struct spmv_error err;
  const char *part;
  uint64_t n, m;

  if (!frame_progress(c, &n, &m, &part)) {
    spmvd_conn_close(c);
    return;
  }
  spmv_error_set(&err, SPMV_EPROTO, "truncated frame: the stream ended "
                 "after %llu of %llu bytes of the %s", (unsigned long long)n,
                 (unsigned long long)m, part);
  spmvd_log_info("pid %ld (uid %ld): %s", (long)c->pid, (long)c->uid,
                 err.msg);
  if (status != UV_EOF) {
    spmvd_conn_close(c);  /* a reset: nothing can be written any more */
    return;
  }
  fatal(c, &err);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
  struct spmvd_conn *c = s->data;

  if (c->closing)
    return;
  int first = nread > 0 && c->rstate == SPMVD_READ_HEADER && c->got == 0;
  if (first)
    c->frame_start_ms = uv_now(c->pipe.loop);
  take_fds(c, first);
  if (nread == 0)
    return;
  if (nread < 0) {
    stream_ended(c, nread);
    return;
  }
  c->got += (uint64_t)nread;
  switch (c->rstate) {
  case SPMVD_READ_HEADER:
    if (c->got == SPMV_WIRE_HEADER_SIZE)
      header_done(c);
    break;
  case SPMVD_READ_JSON:
    if (c->got == c->h.json_len)
      json_done(c);
    break;
  case SPMVD_READ_PAYLOAD:
    if (c->got == c->h.payload_len)
      dispatch(c);
    break;
  case SPMVD_READ_DISCARD:
    c->got -= (uint64_t)nread;
    c->discard_left -= (uint64_t)nread;
    if (c->discard_left == 0)
      next_frame(c);
    break;
  default:
    break;
  }
}

/* Starts reading frames. */
void spmvd_conn_start(struct spmvd_conn *c)
{
  if (c->closing)
    return;
  if (c->rstate == SPMVD_READ_BUSY)
    next_frame(c);
  uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
}


/* A frame begun frame_timeout_s ago and not complete: answered, closed. */
static void frame_timed_out(struct spmvd_conn *c, uint64_t n, uint64_t m,
                            const char *part)
{
  struct spmv_error err;

  spmv_error_set(&err, SPMV_ETIMEDOUT, "frame not complete within "
                 "frame_timeout_s (%d s): %llu of %llu bytes of the %s came",
                 c->srv->cfg.frame_timeout_s, (unsigned long long)n,
                 (unsigned long long)m, part);
  spmvd_log_info("pid %ld (uid %ld): %s", (long)c->pid, (long)c->uid,
                 err.msg);
  fatal(c, &err);
}

/* Applies the frame and idle timeouts; a request in flight is exempt. */
void spmvd_conn_sweep(struct spmvd_conn *c, uint64_t now_ms)
{
  uint64_t frame_ms = (uint64_t)c->srv->cfg.frame_timeout_s * 1000;
  uint64_t idle_ms = (uint64_t)c->srv->cfg.idle_timeout_s * 1000;
  const char *part;
  uint64_t n, m;

  if (c->closing)
    return;
  if (c->close_after_write) {
    /* A frame error's reply the peer does not read must not hold it open. */
    if (c->fatal_ms && frame_ms && now_ms - c->fatal_ms >= frame_ms)
      spmvd_conn_close(c);
    return;
  }
  if (c->rstate == SPMVD_READ_BUSY)
    return;
  if (frame_progress(c, &n, &m, &part)) {
    if (frame_ms && now_ms - c->frame_start_ms >= frame_ms)
      frame_timed_out(c, n, m, part);
    return;
  }
  if (idle_ms && now_ms - c->idle_since_ms >= idle_ms) {
    spmvd_log_info("pid %ld (uid %ld): idle for idle_timeout_s (%d s): "
                   "closing its connection", (long)c->pid, (long)c->uid,
                   c->srv->cfg.idle_timeout_s);
    spmvd_conn_close(c);
  }
}

/* The longest cancel frame's JSON taken while a request is served. */
#define CANCEL_MAX_JSON 256

/*
 * While a solve is served the connection is not read; this looks (without
 * reading) at what the client sent meanwhile, and when the next frame is a
 * whole cancel of target, with no payload, takes it off the socket.  Any
 * other frame stays where it is, to be read after the reply.
 */
int spmvd_conn_take_cancel(struct spmvd_conn *c, int64_t target,
                           int64_t *cancel_id)
{
  uint8_t buf[SPMV_WIRE_HEADER_SIZE + CANCEL_MAX_JSON];
  struct spmv_wire_limits lim;
  struct spmv_wire_header h;
  struct spmv_error err;
  uv_os_fd_t fd;
  json_t *req;
  ssize_t n;
  int ok;

  if (c->closing || uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0)
    return 0;
  n = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  if (n < (ssize_t)SPMV_WIRE_HEADER_SIZE)
    return 0;
  spmvd_server_wire_limits(c->srv, &lim);
  if (spmv_wire_header_decode(buf, &lim, &h, &err) < 0 ||
      spmv_wire_header_check_version(&h, "spmvd", &err) < 0 ||
      h.payload_len != 0 || h.json_len > CANCEL_MAX_JSON ||
      (size_t)n < SPMV_WIRE_HEADER_SIZE + h.json_len)
    return 0;
  req = spmv_wire_json_parse((const char *)buf + SPMV_WIRE_HEADER_SIZE,
                             h.json_len, &lim, &err);
  const char *op = json_string_value(json_object_get(req, "op"));
  json_t *id = json_object_get(req, "id"), *t = json_object_get(req, "target");
  ok = op != NULL && strcmp(op, "cancel") == 0 && json_is_integer(id) &&
       json_is_integer(t) && json_integer_value(t) == target &&
       json_object_size(req) == 3;
  if (ok)
    *cancel_id = json_integer_value(id);
  json_decref(req);
  /* The frame's bytes were all there for the peek, so this takes it
   * whole; a stream cut inside it could not go on. */
  if (ok && recv(fd, buf, SPMV_WIRE_HEADER_SIZE + h.json_len, MSG_DONTWAIT) !=
                (ssize_t)(SPMV_WIRE_HEADER_SIZE + h.json_len)) {
    spmvd_conn_close(c);
    ok = 0;
  }
  return ok;
}
