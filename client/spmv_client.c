/* spmv_client.c: libspmvclient's connection: connect, hello, requests, errors. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "spmv_client_int.h"

#ifndef SPMV_RUNSTATEDIR
#define SPMV_RUNSTATEDIR "/run"
#endif

/* What a client says in hello. */
#define CLIENT_NAME "libspmvclient " PACKAGE_VERSION

/* The last failure of this thread: on which client (NULL: connect) and why. */
static __thread const struct spmv_client *tls_client;
static __thread char tls_msg[sizeof ((struct spmv_error *)0)->msg];
static __thread char tls_out[sizeof ((struct spmv_error *)0)->msg];

/* Records err as the last failure on c (and of this thread); the caller
 * does not hold c's lock. */
int spmvc_fail(struct spmv_client *c, const struct spmv_error *err)
{
  tls_client = c;
  snprintf(tls_msg, sizeof tls_msg, "%s", err->msg);
  if (c != NULL) {
    spmvc_lock(c);
    c->last = *err;
    spmvc_unlock(c);
  }
  return err->code;
}

/* Records an error found here with a formatted message. */
int spmvc_failf(struct spmv_client *c, int code, const char *fmt, ...)
{
  struct spmv_error err;
  va_list ap;

  err.code = code;
  va_start(ap, fmt);
  vsnprintf(err.msg, sizeof err.msg, fmt, ap);
  va_end(ap);
  return spmvc_fail(c, &err);
}

/* Returns this thread's last message on c, else c's last message. */
const char *spmv_client_errmsg(const struct spmv_client *c)
{
  if (tls_client == c && tls_msg[0] != '\0')
    return tls_msg;
  if (c == NULL)
    return "";
  spmvc_lock((struct spmv_client *)c);
  snprintf(tls_out, sizeof tls_out, "%s", c->last.msg);
  spmvc_unlock((struct spmv_client *)c);
  return tls_out;
}

/* Returns the socket path of c (borrowed). */
const char *spmv_client_path(const struct spmv_client *c)
{
  return c->path;
}

/* Locks c. */
void spmvc_lock(struct spmv_client *c)
{
  pthread_mutex_lock(&c->lock);
}

/* Unlocks c. */
void spmvc_unlock(struct spmv_client *c)
{
  pthread_mutex_unlock(&c->lock);
}

/* Copies n values of size sz, swapping bytes on a big-endian host. */
void spmvc_le_copy(void *dst, const void *src, size_t n, size_t sz)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  const unsigned char *s = src;
  unsigned char *d = dst;
  size_t i, b;

  for (i = 0; i < n; i++)
    for (b = 0; b < sz; b++)
      d[i * sz + b] = s[i * sz + sz - 1 - b];
#else
  if (n > 0 && dst != src)
    memcpy(dst, src, n * sz);
#endif
}

/* Returns the integer member key of obj, or def. */
int64_t spmvc_get_int(const json_t *obj, const char *key, int64_t def)
{
  json_t *v = json_object_get(obj, key);

  return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

/* Returns the number member key of obj (integer or real), or def. */
double spmvc_get_num(const json_t *obj, const char *key, double def)
{
  json_t *v = json_object_get(obj, key);

  return json_is_number(v) ? json_number_value(v) : def;
}

/* Copies the string member key of obj into buf, "" when absent. */
void spmvc_get_str(const json_t *obj, const char *key, char *buf, size_t n)
{
  json_t *v = json_object_get(obj, key);

  snprintf(buf, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

/* Dumps a reply without "id" and "ok" as a new malloc'd string (indented). */
char *spmvc_dump_reply(json_t *obj)
{
  json_t *copy = json_copy(obj);
  char *s;

  if (copy == NULL)
    return NULL;
  json_object_del(copy, "id");
  json_object_del(copy, "ok");
  s = json_dumps(copy, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  json_decref(copy);
  return s;
}

/* Marks the connection broken after an I/O or protocol failure. */
static void break_connection(struct spmv_client *c)
{
  if (c->fd >= 0) {
    close(c->fd);
    c->fd = -1;
  }
}

/* Passes a calibration's points event to cb's points callback as its
 * JSON text. */
static void deliver_points(const json_t *ev, const struct spmvc_progress_cb *cb)
{
  char *text;

  if (cb == NULL || cb->points == NULL)
    return;
  text = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(17));
  if (text != NULL)
    cb->points(text, cb->arg);
  free(text);
}

/* Passes one event to cb: progress, or a calibration's points. */
static void deliver_progress(const json_t *ev, const struct spmvc_progress_cb *cb)
{
  const char *kind = json_string_value(json_object_get(ev, "event"));
  struct spmv_progress p;
  json_t *v;

  if (kind != NULL && strcmp(kind, "points") == 0) {
    deliver_points(ev, cb);
    return;
  }
  if (cb == NULL || cb->fn == NULL)
    return;
  v = json_object_get(ev, "stage");
  p.stage = json_is_string(v) ? json_string_value(v) : "";
  p.done = spmvc_get_int(ev, "done", 0);
  p.total = spmvc_get_int(ev, "total", 0);
  v = json_object_get(ev, "candidate");
  p.candidate = json_is_string(v) ? json_string_value(v) : "";
  p.time_us = spmvc_get_num(ev, "time_us", 0);
  p.residual = spmvc_get_num(ev, "residual", 0);
  cb->fn(&p, cb->arg);
}

/* Turns an error reply into a code and message in err. */
static int reply_error(const json_t *reply, const char *op,
                       struct spmv_error *err)
{
  json_t *e = json_object_get(reply, "error");
  const char *name = json_string_value(json_object_get(e, "code"));
  const char *msg = json_string_value(json_object_get(e, "message"));
  int code;

  if (name == NULL)
    return spmv_error_set(err, SPMV_EPROTO,
                          "spmvd refused '%s' without an error code", op);
  code = spmv_err_from_name(name);
  if (code == SPMV_OK || (code == SPMV_EINVAL && strcmp(name, "EINVAL") != 0))
    return spmv_error_set(err, SPMV_EPROTO,
                          "spmvd refused '%s' with unknown error code '%s': %s",
                          op, name, msg ? msg : "");
  return spmv_error_set(err, code, "%s", msg != NULL && *msg ? msg : spmv_strerror(code));
}

/* Where a reply's payload goes: a new buffer (buf NULL), or buf when it
 * is exactly len bytes (a product's y, read in place). */
struct dest {
  void *buf;
  size_t len;
  int filled;   /* the reply's payload went there */
};

/* How long a call polls for its reply before it sleeps:
 * $SPMV_BUSY_POLL_US, else spmv_wire_spin_default().  Read once; threads
 * that race here store the same value. */
static int client_spin_us(void)
{
  static int us = -1;

  if (us < 0) {
    const char *e = getenv("SPMV_BUSY_POLL_US");
    us = e && *e ? atoi(e) : spmv_wire_spin_default();
    if (us < 0)
      us = 0;
  }
  return us;
}

/* Reads len bytes of a frame's part (what) from a blocking fd: 0, or
 * SPMV_ECLOSED (the stream ended before its first byte and eof_ok),
 * SPMV_EPROTO (it ended later) or SPMV_EIO. */
static int read_part(int fd, void *buf, size_t len, const char *what,
                     int eof_ok, struct spmv_error *err)
{
  size_t got = 0;

  if (eof_ok)
    spmv_wire_spin(fd, client_spin_us());
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got,
                     len - got < ((size_t)1 << 30) ? len - got : (size_t)1 << 30);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return spmv_error_set(err, errno == ECONNRESET ? SPMV_ECLOSED : SPMV_EIO,
                            "reading a frame: %s", strerror(errno));
    if (n == 0 && got == 0 && eof_ok)
      return spmv_error_set(err, SPMV_ECLOSED, "connection closed by the peer");
    if (n == 0)
      return spmv_error_set(err, SPMV_EPROTO,
                            "truncated frame: the stream ended after %zu of "
                            "%zu bytes of the %s", got, len, what);
    got += (size_t)n;
  }
  return 0;
}

/*
 * Reads one frame as spmv_wire_read_frame() does, except that the payload
 * of an "ok" reply of exactly d->len bytes goes into d->buf (*in_dest 1)
 * rather than into a new buffer: one copy of y less.
 */
static int read_frame(struct spmv_client *c, const struct dest *d,
                      json_t **msg, void **payload, uint64_t *plen,
                      int *in_dest, struct spmv_error *err)
{
  uint8_t hdr[SPMV_WIRE_HEADER_SIZE];
  struct spmv_wire_header h;
  char *text;
  int rc;

  *in_dest = 0;
  if (d == NULL || d->buf == NULL)
    return spmv_wire_read_frame(c->fd, &c->lim, msg, payload, plen, err);
  *msg = NULL;
  *payload = NULL;
  *plen = 0;
  if ((rc = read_part(c->fd, hdr, sizeof hdr, "header", 1, err)) < 0 ||
      (rc = spmv_wire_header_decode(hdr, &c->lim, &h, err)) < 0)
    return rc;
  if ((text = malloc(h.json_len)) == NULL)
    return spmv_error_set(err, SPMV_ENOMEM,
                          "cannot allocate %u bytes for a frame's JSON",
                          (unsigned)h.json_len);
  rc = read_part(c->fd, text, h.json_len, "JSON", 0, err);
  if (rc == 0 && (*msg = spmv_wire_json_parse(text, h.json_len, &c->lim,
                                               err)) == NULL)
    rc = err != NULL ? err->code : SPMV_EPROTO;
  free(text);
  if (rc < 0 || h.payload_len == 0)
    return rc;
  *in_dest = h.payload_len == d->len &&
             json_is_true(json_object_get(*msg, "ok"));
  if (!*in_dest && (h.payload_len > SIZE_MAX ||
                    (*payload = malloc((size_t)h.payload_len)) == NULL))
    rc = spmv_error_set(err, SPMV_ENOMEM,
                        "cannot allocate %llu bytes for a frame's payload",
                        (unsigned long long)h.payload_len);
  if (rc == 0)
    rc = read_part(c->fd, *in_dest ? d->buf : *payload,
                   (size_t)h.payload_len, "payload", 0, err);
  if (rc < 0) {
    json_decref(*msg);
    free(*payload);
    *msg = NULL;
    *payload = NULL;
    return rc;
  }
  *plen = h.payload_len;
  return 0;
}

/* Reads frames until the reply to id, delivering progress events.  When
 * the daemon refused, *refused is 1 (an answer to id) or 2 (id -1: it could
 * not read our frame and closes); otherwise 0. */
static int await_reply(struct spmv_client *c, int64_t id, const char *op,
                       const struct spmvc_progress_cb *cb,
                       struct dest *d, json_t **reply,
                       void **rpayload, uint64_t *rlen, int *refused,
                       struct spmv_error *err)
{
  *refused = 0;
  for (;;) {
    json_t *msg;
    void *payload;
    uint64_t plen;
    int64_t rid;
    json_t *ok;
    int rc, in_dest;

    if (cb != NULL && cb->cancellable &&
        (rc = spmvc_cancel_wait(c, id, err)) < 0)
      return rc;
    rc = read_frame(c, d, &msg, &payload, &plen, &in_dest, err);
    if (rc == SPMV_ECLOSED)
      return spmv_error_set(err, SPMV_ECLOSED,
                            "spmvd at %s closed the connection during '%s'",
                            c->path, op);
    if (rc < 0)
      return rc;
    rid = spmvc_get_int(msg, "id", INT64_MIN);
    ok = json_object_get(msg, "ok");
    if (json_is_boolean(ok) && c->cancel_id > 0 && rid == c->cancel_id) {
      /* A cancel's answer, before its solve's reply or after it. */
      c->cancel_id = 0;
      json_decref(msg);
      free(payload);
      continue;
    }
    if (ok == NULL && json_is_string(json_object_get(msg, "event"))) {
      if (rid == id)
        deliver_progress(msg, cb);
      json_decref(msg);
      free(payload);
      continue;
    }
    if (!json_is_boolean(ok) || (rid != id && rid != -1)) {
      json_decref(msg);
      free(payload);
      return spmv_error_set(err, SPMV_EPROTO,
                            "unexpected message from spmvd while waiting for '%s' (id %lld)",
                            op, (long long)id);
    }
    if (json_is_false(ok)) {
      rc = reply_error(msg, op, err);
      json_decref(msg);
      free(payload);
      /* id -1: the daemon could not read our frame and closes. */
      *refused = rid == id ? 1 : 2;
      return rc;
    }
    if (rid != id) {
      json_decref(msg);
      free(payload);
      return spmv_error_set(err, SPMV_EPROTO,
                            "spmvd answered '%s' with id %lld, expected %lld",
                            op, (long long)rid, (long long)id);
    }
    if (plen > 0 && rpayload == NULL && !in_dest) {
      json_decref(msg);
      free(payload);
      return spmv_error_set(err, SPMV_EPROTO,
                            "spmvd answered '%s' with an unexpected payload of %llu bytes",
                            op, (unsigned long long)plen);
    }
    *reply = msg;
    if (rpayload != NULL) {
      *rpayload = payload;
      *rlen = plen;
    }
    if (d != NULL)
      d->filled = in_dest;
    return 0;
  }
}

/* Writes a frame whose payload is pl's two pieces back to back, from
 * where they lie (no joined copy), with descriptor sendfd (-1: none) on
 * its first byte.  Errors as spmv_wire_write_frame(). */
static int write_frame2(int fd, json_t *req, const struct spmvc_payload *pl,
                        int sendfd, struct spmv_error *err)
{
  struct spmv_wire_header h = {SPMV_WIRE_MAGIC, SPMV_PROTO_VERSION, 0, 0, 0, 0};
  uint8_t hdr[SPMV_WIRE_HEADER_SIZE];
  struct iovec iov[4], *v = iov;
  size_t jlen;
  char *text = spmv_wire_json_dump(req, &jlen);
  int n = 4, rc = 0;

  if (text == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "cannot serialise the JSON");
  h.json_len = (uint32_t)jlen;
  h.payload_len = (uint64_t)pl->n1 + pl->n2;
  spmv_wire_header_encode(&h, hdr);
  iov[0] = (struct iovec){hdr, sizeof hdr};
  iov[1] = (struct iovec){text, jlen};
  iov[2] = (struct iovec){(void *)pl->p1, pl->n1};
  iov[3] = (struct iovec){(void *)pl->p2, pl->n2};
  while (n > 0) {
    ssize_t k = spmv_wire_sendmsg(fd, v, n, &sendfd, sendfd >= 0 ? 1 : 0);
    if (k < 0) {
      rc = errno == EPIPE || errno == ECONNRESET
               ? spmv_error_set(err, SPMV_ECLOSED, "connection closed by the "
                                "peer while writing a frame")
               : spmv_error_set(err, SPMV_EIO, "writing a frame: %s",
                                strerror(errno));
      break;
    }
    sendfd = -1;  /* sent with the first byte */
    for (; n > 0 && (size_t)k >= v->iov_len; v++, n--)
      k -= (ssize_t)v->iov_len;
    if (n > 0) {
      v->iov_base = (char *)v->iov_base + k;
      v->iov_len -= (size_t)k;
    }
  }
  free(text);
  return rc;
}

/* Sends a request and waits for its reply, a payload going to d. */
static int call(struct spmv_client *c, json_t *req,
                const struct spmvc_payload *pl, int sendfd,
                const struct spmvc_progress_cb *cb, struct dest *d,
                json_t **reply, void **rpayload, uint64_t *rlen,
                struct spmv_error *err)
{
  const char *op = json_string_value(json_object_get(req, "op"));
  char opname[32];
  int64_t id;
  int rc, refused = 0;

  *reply = NULL;
  if (rpayload != NULL) {
    *rpayload = NULL;
    *rlen = 0;
  }
  snprintf(opname, sizeof opname, "%s", op != NULL ? op : "?");
  if (c->fd < 0)
    return spmv_error_set(err, SPMV_ECLOSED,
                          "the connection to spmvd at %s was lost earlier: reconnect",
                          c->path);
  id = c->next_id++;
  if (json_object_set_new(req, "id", json_integer(id)) < 0)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory building '%s'", opname);
  if ((pl != NULL && pl->n2 > 0) || sendfd >= 0) {
    struct spmvc_payload none = {NULL, 0, NULL, 0};
    rc = write_frame2(c->fd, req, pl != NULL ? pl : &none, sendfd, err);
  }
  else
    rc = spmv_wire_write_frame(c->fd, req, pl != NULL ? pl->p1 : NULL,
                               pl != NULL ? pl->n1 : 0, err);
  if (rc == SPMV_ECLOSED) {
    /* The daemon may have refused the frame (e.g. over a limit) and
     * closed: its error reply is then waiting to be read. */
    struct spmv_error why;
    json_t *r = NULL;

    if (err != NULL &&
        await_reply(c, id, opname, NULL, NULL, &r, NULL, NULL, &refused,
                    &why) < 0 &&
        refused != 0)
      *err = why;
    json_decref(r);
    break_connection(c);
    return err != NULL ? err->code : SPMV_ECLOSED;
  }
  if (rc == SPMV_EIO) {
    break_connection(c);
    return rc;
  }
  if (rc < 0)
    return rc;  /* refused before a byte was written */
  rc = await_reply(c, id, opname, cb, d, reply, rpayload, rlen, &refused,
                   err);
  /* Anything but the daemon's answer to this request leaves the stream
   * in an unknown state. */
  if (rc < 0 && refused != 1)
    break_connection(c);
  return rc;
}

/* Sends a request and waits for its reply; the caller holds c->lock. */
int spmvc_call(struct spmv_client *c, json_t *req,
               const struct spmvc_payload *pl,
               const struct spmvc_progress_cb *cb, json_t **reply,
               void **rpayload, uint64_t *rlen, struct spmv_error *err)
{
  return call(c, req, pl, -1, cb, NULL, reply, rpayload, rlen, err);
}

/* As spmvc_call(), passing descriptor fd with the frame. */
int spmvc_call_fd(struct spmv_client *c, json_t *req, int fd,
                  const struct spmvc_progress_cb *cb, json_t **reply,
                  struct spmv_error *err)
{
  return call(c, req, NULL, fd, cb, NULL, reply, NULL, NULL, err);
}

/* As spmvc_call(), the reply's payload of ylen bytes read into y. */
int spmvc_call_into(struct spmv_client *c, json_t *req,
                    const struct spmvc_payload *pl, json_t **reply, void *y,
                    size_t ylen, struct spmv_error *err)
{
  return spmvc_call_into_cb(c, req, pl, NULL, reply, y, ylen, err);
}

/* As spmvc_call_into(), progress events passed to cb. */
int spmvc_call_into_cb(struct spmv_client *c, json_t *req,
                       const struct spmvc_payload *pl,
                       const struct spmvc_progress_cb *cb, json_t **reply,
                       void *y, size_t ylen, struct spmv_error *err)
{
  struct dest d = {y, ylen, 0};
  int rc = call(c, req, pl, -1, cb, &d, reply, NULL, NULL, err);

  if (rc == 0 && ylen > 0 && !d.filled)
    rc = spmv_error_set(err, SPMV_EPROTO,
                        "spmvd answered '%s' without its %zu bytes of result",
                        json_string_value(json_object_get(req, "op")) != NULL
                            ? json_string_value(json_object_get(req, "op")) : "?",
                        ylen);
  return rc;
}

/* Chooses the socket path when the caller gave none. */
static void default_path(char *buf, size_t n)
{
  const char *env = getenv("SPMVD_SOCKET");
  const char *run = getenv("XDG_RUNTIME_DIR");
  struct stat st;

  if (env != NULL && *env != '\0') {
    snprintf(buf, n, "%s", env);
    return;
  }
  if (run != NULL && *run != '\0') {
    snprintf(buf, n, "%s/spmvd.sock", run);
    if (stat(buf, &st) == 0 && S_ISSOCK(st.st_mode))
      return;
  } else {
    /* A user instance without XDG_RUNTIME_DIR listens here. */
    snprintf(buf, n, "/tmp/spmvd-%ld.sock", (long)geteuid());
    if (stat(buf, &st) == 0 && S_ISSOCK(st.st_mode))
      return;
  }
  snprintf(buf, n, "%s/spmvd/spmvd.sock", SPMV_RUNSTATEDIR);
}

/* Opens the Unix socket at c->path; a clear message when nobody listens
 * (*absent then 1). */
static int open_socket(struct spmv_client *c, int *absent,
                       struct spmv_error *err)
{
  struct sockaddr_un addr;
  int fd, e;

  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, c->path, strlen(c->path) + 1);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return spmv_error_set(err, SPMV_ECONNECT, "cannot create a socket: %s",
                          strerror(errno));
  while (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
    if (errno == EINTR)
      continue;
    e = errno;
    close(fd);
    *absent = e == ENOENT || e == ECONNREFUSED;
    if (*absent)
      return spmv_error_set(err, SPMV_ECONNECT,
                            "spmvd is not running at %s: start it with "
                            "`spmvd --socket %s` or `systemctl start spmvd`",
                            c->path, c->path);
    if (e == EACCES || e == EPERM)
      return spmv_error_set(err, SPMV_ECONNECT,
                            "permission denied connecting to spmvd at %s: "
                            "ask for access to its socket (e.g. the spmv group)",
                            c->path);
    return spmv_error_set(err, SPMV_ECONNECT,
                          "cannot connect to spmvd at %s: %s", c->path,
                          strerror(e));
  }
  /* Vectors leave in one go rather than in steps of the default send
   * buffer, each a wake-up of both sides (the kernel caps this). */
  e = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &e, sizeof e);
  c->fd = fd;
  return 0;
}

/* Says hello; checks the daemon speaks our version. */
static int say_hello(struct spmv_client *c, struct spmv_error *err)
{
  json_t *req, *reply = NULL;
  int rc;

  req = json_pack("{s:s, s:i, s:s}", "op", "hello", "version",
                  SPMV_PROTO_VERSION, "client", CLIENT_NAME);
  if (req == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = spmvc_call(c, req, NULL, NULL, &reply, NULL, NULL, err);
  json_decref(req);
  if (rc == 0 && spmvc_get_int(reply, "version", -1) != SPMV_PROTO_VERSION)
    rc = spmv_error_set(err, SPMV_EVERSION,
                        "client speaks %d, spmvd at %s speaks %lld",
                        SPMV_PROTO_VERSION, c->path,
                        (long long)spmvc_get_int(reply, "version", -1));
  json_decref(reply);
  return rc;
}

/* See spmv_client_int.h. */
int spmvc_connect_path(const char *path, struct spmv_client **out,
                       int *absent, struct spmv_error *err)
{
  struct spmv_client *c;
  int rc;

  *out = NULL;
  *absent = 0;
  if (*path == '\0' || strlen(path) >= sizeof c->path)
    return spmv_error_set(err, SPMV_EINVAL,
                          "socket path '%.64s%s' is %s (at most %zu bytes)",
                          path, strlen(path) > 64 ? "..." : "",
                          *path ? "too long" : "empty", sizeof c->path - 1);
  c = calloc(1, sizeof *c);
  if (c == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  c->fd = -1;
  snprintf(c->path, sizeof c->path, "%s", path);
  c->next_id = 1;
  spmv_wire_limits_default(&c->lim);
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return spmv_error_set(err, SPMV_ENOMEM, "cannot create a mutex");
  }
  rc = open_socket(c, absent, err);
  if (rc == 0) {
    rc = say_hello(c, err);
    *absent = rc == SPMV_ECLOSED;
  }
  if (rc < 0) {
    spmv_disconnect(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* Connects to spmvd at path (or the default), starting one when flags
 * ask for it, and says hello. */
int spmv_connect_opts(const char *path, unsigned flags,
                      struct spmv_client **out)
{
  struct spmv_error err;
  char where[sizeof ((struct spmv_client *)0)->path + 64];
  int rc, absent;

  spmv_error_clear(&err);
  if (out == NULL) {
    spmv_error_set(&err, SPMV_EINVAL, "spmv_connect: out is NULL");
    return spmvc_fail(NULL, &err);
  }
  *out = NULL;
  if ((flags & ~SPMV_CONNECT_AUTOSTART) != 0) {
    spmv_error_set(&err, SPMV_EINVAL, "spmv_connect_opts: unknown flags 0x%x",
                   flags & ~SPMV_CONNECT_AUTOSTART);
    return spmvc_fail(NULL, &err);
  }
  if (path == NULL) {
    default_path(where, sizeof where);
    path = where;
  }
  rc = spmvc_connect_path(path, out, &absent, &err);
  if (rc < 0 && absent && (flags & SPMV_CONNECT_AUTOSTART))
    rc = spmvc_autostart(path, out, &err);
  if (rc < 0)
    return spmvc_fail(NULL, &err);
  return 0;
}

/* spmv_connect_opts() with the flags that SPMV_AUTOSTART asks for. */
int spmv_connect(const char *path, struct spmv_client **out)
{
  const char *e = getenv("SPMV_AUTOSTART");

  return spmv_connect_opts(path,
                           e != NULL && strcmp(e, "1") == 0
                               ? SPMV_CONNECT_AUTOSTART : 0,
                           out);
}

/* Closes c and frees it and every matrix and vector still made through it. */
void spmv_disconnect(struct spmv_client *c)
{
  struct spmv_matrix *m, *next;

  if (c == NULL)
    return;
  for (m = c->matrices; m != NULL; m = next) {
    next = m->next;
    spmvc_vectors_release(m);
    json_decref(m->decision);
    free(m);
  }
  spmvc_vectors_forget(c);
  if (c->fd >= 0)
    close(c->fd);
  pthread_mutex_destroy(&c->lock);
  if (tls_client == c)
    tls_client = NULL;
  free(c);
}

/* See spmv_client_int.h. */
int spmvc_simple_call(struct spmv_client *c, json_t *req, json_t **reply)
{
  struct spmv_error err;
  int rc;

  spmv_error_clear(&err);
  if (req == NULL) {
    spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    return spmvc_fail(c, &err);
  }
  spmvc_lock(c);
  rc = spmvc_call(c, req, NULL, NULL, reply, NULL, NULL, &err);
  spmvc_unlock(c);
  if (rc < 0)
    spmvc_fail(c, &err);
  json_decref(req);
  return rc;
}
