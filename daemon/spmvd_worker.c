/* spmvd_worker.c: the front end's side of a device worker: spawn, respawn, calls. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_config.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_watch.h"
#include "spmvd_worker.h"
#include "spmvd_spin.h"

/*
 * A worker goes through incarnations: each is one process with its end of
 * a socketpair, watched by a uv_poll_t (replies wake the loop) and a
 * uv_process_t (its exit).  When an incarnation dies, every call is failed
 * with SPMV_EWORKER and, unless stopping, a new one is spawned after a
 * delay that doubles while deaths come quickly.  Messages are sent at once
 * when the socket has room, else queued and flushed when it is writable.
 *
 * The device timeout (spmvd_watch): while calls are on the worker or it is
 * starting (a device may hang its first call), some message must come within
 * timeout_s, whichever call it is about: the
 * worker serves one request at a time, so a reply, an event or a heartbeat
 * (SPMVD_IPC_HEARTBEAT_MS, during long operations) proves it is working
 * through its queue.  A silent one is killed, its calls answered at once as
 * after a crash, and respawned once it is gone.
 */

_Static_assert(SPMVD_CONFIG_MIN_DEVICE_TIMEOUT_S * 1000 >=
                   2 * SPMVD_IPC_HEARTBEAT_MS,
               "a device timeout spans two heartbeats");

struct call {
  int64_t seq;
  json_t *msg;                      /* owned */
  int fds[SPMVD_IPC_MAX_FDS];       /* owned duplicates until sent */
  int nfds;
  int undelivered;                  /* its send failed */
  spmvd_worker_reply_cb *cb;        /* NULL for posts */
  spmvd_worker_event_cb *ev;
  void *ctx;
  char who[64];                     /* its client, for the log */
  struct call *next;
};

struct incarnation {
  uv_process_t proc;
  uv_poll_t poll;
  int fd;                 /* our end of the socketpair */
  int open_handles;       /* handles not yet closed */
  int events;             /* what poll watches now (0: stopped) */
  int exited;
  int faulted;            /* died of a fault (crash, sticky device error,
                             device timeout) */
  int timed_out;          /* killed by the device timeout */
  int detached;           /* its calls were answered (inc_detach) */
  struct spmvd_worker *w;
};

enum state { STARTING, READY, DEAD, STOPPING, STOPPED };

struct spmvd_worker {
  uv_loop_t *loop;
  char path[512], backend[16], level[16], spin[16];
  int device, syslog;
  struct spmvd_worker_hooks hooks;
  void *ctx;
  struct incarnation *inc;          /* the live one, or NULL */
  struct incarnation *dying;        /* detached, its process not yet gone */
  uv_timer_t timer;                 /* respawn delay */
  struct spmvd_watch watch;         /* the device timeout */
  int open_timers;                  /* timer and watch not yet closed */
  int timeouts;                     /* workers the timeout killed */
  uint64_t free_bytes, total_bytes; /* device memory, as last reported */
  int have_mem;
  enum state state;
  int restarts;
  uint64_t last_start_ms;
  unsigned delay_ms;
  int64_t next_seq;
  struct call *queue, **queue_tail; /* not yet sent */
  struct call *sent, **sent_tail;   /* sent, awaiting replies, in order */
  struct spmvd_device_info dev;
  int have_dev;
  int polling_write;
};

static void call_free(struct call *c)
{
  for (int i = 0; i < c->nfds; i++)
    if (c->fds[i] >= 0)
      close(c->fds[i]);
  json_decref(c->msg);
  free(c);
}

static void push(struct call ***tail, struct call *c)
{
  c->next = NULL;
  **tail = c;
  *tail = &c->next;
}

static struct call *pop(struct call **head, struct call ***tail)
{
  struct call *c = *head;
  if (c) {
    *head = c->next;
    if (!*head)
      *tail = head;
  }
  return c;
}

static void fail_all(struct spmvd_worker *w, const char *why)
{
  struct spmv_error err;
  struct call *c;

  spmv_error_set(&err, SPMV_EWORKER, "device worker %s; retry the request",
                 why);
  spmvd_watch_stop(&w->watch);
  /* Detach both lists first: callbacks may queue new calls. */
  struct call *lists[2] = {w->sent, w->queue};
  w->sent = NULL;
  w->sent_tail = &w->sent;
  w->queue = NULL;
  w->queue_tail = &w->queue;
  for (int l = 0; l < 2; l++) {
    while ((c = lists[l])) {
      lists[l] = c->next;
      if (c->cb)
        c->cb(c->ctx, NULL, &err);
      call_free(c);
    }
  }
}

static void update_poll(struct spmvd_worker *w);
static void spawn(struct spmvd_worker *w);

static void on_respawn_timer(uv_timer_t *t)
{
  spawn(t->data);
}

static void timer_closed(uv_handle_t *h)
{
  struct spmvd_worker *w = h->data;
  if (--w->open_timers > 0)
    return;
  if (w->hooks.stopped)
    w->hooks.stopped(w->ctx, w);
  free(w);
}

static void watch_closed(uv_handle_t *h)
{
  struct spmvd_watch *wt = h->data;
  h->data = wt->ctx;
  timer_closed(h);
}

/* The last step of a stop: fail what is left, then free w. */
static void finish_stop(struct spmvd_worker *w)
{
  fail_all(w, "stopped");
  w->state = STOPPED;
  uv_close((uv_handle_t *)&w->timer, timer_closed);
  spmvd_watch_close(&w->watch, watch_closed);
}

static void inc_closed(uv_handle_t *h)
{
  struct incarnation *inc = h->data;
  if (--inc->open_handles == 0)
    free(inc);
}

/* The call the worker is serving: the first one delivered, or NULL. */
static struct call *serving(struct spmvd_worker *w)
{
  for (struct call *c = w->sent; c; c = c->next)
    if (!c->undelivered)
      return c;
  return NULL;
}

/*
 * Ends inc's service (once): its socket closes, the died hook hears of it
 * with the request it was serving when it faulted, and every call is
 * answered with SPMV_EWORKER saying why.  Its process may still be going.
 */
static void inc_detach(struct spmvd_worker *w, struct incarnation *inc,
                       const char *why)
{
  struct call *c;
  json_t *head;

  if (inc->detached)
    return;
  inc->detached = 1;
  c = inc->faulted ? serving(w) : NULL;
  head = c ? json_incref(c->msg) : NULL;
  if (w->inc == inc)
    w->inc = NULL;
  if (inc->fd >= 0) {
    uv_poll_stop(&inc->poll);
    uv_close((uv_handle_t *)&inc->poll, inc_closed);
    close(inc->fd);
    inc->fd = -1;
  }
  if (w->state == STOPPING) {
    json_decref(head);
    return;  /* finish_stop() answers the calls */
  }
  w->state = DEAD;
  w->restarts++;
  if (w->hooks.died)
    w->hooks.died(w->ctx, w, head);
  json_decref(head);
  fail_all(w, why);
}

/* Tears an incarnation down once its process has exited. */
static void inc_end(struct spmvd_worker *w, struct incarnation *inc)
{
  inc_detach(w, inc, inc->faulted ? "crashed" : "died");
  if (w->dying == inc)
    w->dying = NULL;
  uv_close((uv_handle_t *)&inc->proc, inc_closed);
  if (w->state == STOPPING) {
    finish_stop(w);
    return;
  }
  uint64_t up = uv_now(w->loop) - w->last_start_ms;
  w->delay_ms = up > 30000 ? 100 : (w->delay_ms ? w->delay_ms * 2 : 100);
  if (w->delay_ms > 5000)
    w->delay_ms = 5000;
  spmvd_log_info("respawning the device worker in %u ms", w->delay_ms);
  uv_timer_start(&w->timer, on_respawn_timer, w->delay_ms, 0);
}

/* Whether the device timeout watches the worker (see the top). */
static int watch_busy(void *ctx)
{
  struct spmvd_worker *w = ctx;
  return w->inc != NULL && (w->sent != NULL || w->state == STARTING);
}

/*
 * The device timeout: the worker was silent for silent_s while serving a
 * call (see the top of this file).  Kills it, logs why and answers every
 * call now; the respawn waits for its exit.
 */
static void watch_silent(void *ctx, double silent_s)
{
  struct spmvd_worker *w = ctx;
  struct incarnation *inc = w->inc;
  const struct call *c = serving(w);
  const char *op = c ? json_string_value(json_object_get(c->msg, "op")) : NULL;
  char why[128];

  if (w->state == STARTING)
    spmvd_log_error("device worker %d did not start within %.1f s "
                    "(device_timeout_s %d): killing it",
                    inc->proc.pid, silent_s, w->watch.timeout_s);
  else
    spmvd_log_error("device worker %d sent nothing for %.1f s "
                    "(device_timeout_s %d) serving '%s' (worker request "
                    "%lld) for %s: killing it",
                    inc->proc.pid, silent_s, w->watch.timeout_s,
                    op ? op : "?", c ? (long long)c->seq : -1LL,
                    c && *c->who ? c->who : "the daemon");
  snprintf(why, sizeof why, "%s (nothing for %d s, device_timeout_s)",
           w->state == STARTING ? "did not start" : "timed out",
           w->watch.timeout_s);
  inc->faulted = 1;
  inc->timed_out = 1;
  w->timeouts++;
  uv_process_kill(&inc->proc, SIGKILL);
  w->dying = inc;
  inc_detach(w, inc, why);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
  struct incarnation *inc = p->data;
  struct spmvd_worker *w = inc->w;

  inc->exited = 1;
  inc->faulted = inc->timed_out || status == 3 || sig == SIGSEGV ||
                 sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
                 sig == SIGABRT;
  if (inc->timed_out)
    spmvd_log_info("device worker %d, killed by the device timeout, is gone",
                   p->pid);
  else if (w->state == STOPPING)
    spmvd_log_debug("device worker %d exited (status %lld)", p->pid,
                    (long long)status);
  else if (sig)
    spmvd_log_error("device worker %d killed by signal %d", p->pid, sig);
  else
    spmvd_log_error("device worker %d exited with status %lld", p->pid,
                    (long long)status);
  inc_end(w, inc);
}

static int send_call(struct spmvd_worker *w, struct call *c)
{
  struct spmv_error err;
  int rc;

  json_object_set_new(c->msg, "seq", json_integer(c->seq));
  rc = spmvd_ipc_send(w->inc->fd, c->msg, c->fds, c->nfds, &err);
  if (rc == SPMV_EBUSY)
    return rc;
  if (rc < 0) {
    spmvd_log_warn("cannot send to the device worker: %s", err.msg);
    return rc;
  }
  for (int i = 0; i < c->nfds; i++) {
    close(c->fds[i]);
    c->fds[i] = -1;
  }
  c->nfds = 0;
  return 0;
}

static void flush(struct spmvd_worker *w)
{
  int was_idle = w->sent == NULL;

  while (w->state == READY && w->queue && w->inc) {
    int rc = send_call(w, w->queue);
    if (rc == SPMV_EBUSY)
      break;
    struct call *c = pop(&w->queue, &w->queue_tail);
    if (rc < 0) {
      /* The socket is broken: the exit callback fails the rest. */
      c->undelivered = 1;
      push(&w->sent_tail, c);
      kill(w->inc->proc.pid, SIGKILL);
      break;
    }
    push(&w->sent_tail, c);  /* posts too: their reply is dropped */
  }
  spmvd_watch_sent(&w->watch, was_idle);
  update_poll(w);
}

static void on_ready(struct spmvd_worker *w, json_t *msg)
{
  json_t *d = json_object_get(msg, "device");
  const char *s;
  json_int_t mem = 0;

  memset(&w->dev, 0, sizeof w->dev);
#define COPY(field, key)                                                    \
  if ((s = json_string_value(json_object_get(d, key))))                    \
    snprintf(w->dev.field, sizeof w->dev.field, "%s", s);
  COPY(backend, "backend");
  COPY(name, "name");
  COPY(device_key, "device_key");
  COPY(software_key, "software_key");
#undef COPY
  w->dev.devices = 1;
  json_unpack(d, "{s?i s?i s?i s?i s?i s?I}", "cc_major", &w->dev.cc_major,
              "cc_minor", &w->dev.cc_minor, "sms", &w->dev.sms, "warp_size",
              &w->dev.warp_size, "devices", &w->dev.devices, "mem_bytes", &mem);
  w->dev.mem_bytes = (uint64_t)mem;
  w->have_dev = 1;
  spmvd_log_info("device worker %d ready: %s backend, %s", w->inc->proc.pid,
                 w->dev.backend, w->dev.name);
  /* Calls made by the hook go before those queued while starting. */
  struct call *waiting = w->queue;
  struct call **waiting_tail = w->queue_tail;
  w->queue = NULL;
  w->queue_tail = &w->queue;
  w->state = READY;
  if (w->hooks.ready)
    w->hooks.ready(w->ctx, w, w->restarts);
  if (waiting) {
    *w->queue_tail = waiting;
    w->queue_tail = waiting_tail;
  }
  flush(w);
}

/* The worker's report of the device's memory. */
static void on_memory(struct spmvd_worker *w, json_t *msg)
{
  json_int_t f = 0, t = 0;

  if (json_unpack(msg, "{sI sI}", "free_bytes", &f, "total_bytes", &t) < 0 ||
      f < 0 || t < 0)
    return;
  w->free_bytes = (uint64_t)f;
  w->total_bytes = (uint64_t)t;
  w->have_mem = 1;
}

static void on_message(struct spmvd_worker *w, json_t *msg)
{
  const char *event = json_string_value(json_object_get(msg, "event"));
  json_int_t seq = json_integer_value(json_object_get(msg, "seq"));
  struct spmv_error err;
  struct call *c;

  spmvd_watch_heard(&w->watch);
  if (event && !json_object_get(msg, "seq")) {
    if (strcmp(event, "ready") == 0)
      on_ready(w, msg);
    else if (strcmp(event, "memory") == 0)
      on_memory(w, msg);
    else if (strcmp(event, "failed") == 0)
      spmvd_log_error("device worker failed to start: %s",
                      json_string_value(json_object_get(
                          json_object_get(msg, "error"), "message")));
    return;
  }
  for (c = w->sent; c && c->seq != seq; c = c->next)
    ;
  if (!c) {
    spmvd_log_warn("device worker answered unknown request %lld",
                   (long long)seq);
    return;
  }
  if (event) {
    if (c->ev)
      c->ev(c->ctx, msg);
    return;
  }
  /* Unlink c from the sent list. */
  struct call **pp = &w->sent;
  while (*pp != c)
    pp = &(*pp)->next;
  *pp = c->next;
  if (!*pp)
    w->sent_tail = pp;
  if (!c->cb) {
    if (!json_is_true(json_object_get(msg, "ok")))
      spmvd_log_debug("device worker: %s failed",
                      json_string_value(json_object_get(c->msg, "op")));
  } else if (json_is_true(json_object_get(msg, "ok"))) {
    c->cb(c->ctx, msg, NULL);
  } else {
    const char *code = NULL, *m = NULL;
    json_unpack(msg, "{s{s?s s?s}}", "error", "code", &code, "message", &m);
    spmv_error_set(&err, code ? spmv_err_from_name(code) : SPMV_EIO, "%s",
                   m ? m : "device worker error");
    c->cb(c->ctx, NULL, &err);
  }
  call_free(c);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
  struct incarnation *inc = h->data;
  struct spmvd_worker *w = inc->w;
  struct spmv_error err;

  if (status < 0 || (events & UV_DISCONNECT)) {
    events |= UV_READABLE;
  }
  if (events & UV_WRITABLE)
    flush(w);
  while ((events & UV_READABLE) && w->inc == inc && inc->fd >= 0) {
    json_t *msg;
    int fds[SPMVD_IPC_MAX_FDS], nfds;
    int rc = spmvd_ipc_recv(inc->fd, &msg, fds, &nfds, 0, &err);
    if (rc == SPMV_EBUSY)
      break;
    spmvd_spin_kick();
    if (rc < 0) {
      /* End of stream or garbage: stop reading; make sure it exits. */
      if (rc != SPMV_ECLOSED)
        spmvd_log_error("device worker: %s", err.msg);
      uv_poll_stop(&inc->poll);
      inc->events = 0;
      if (!inc->exited)
        kill(inc->proc.pid, SIGKILL);
      break;
    }
    on_message(w, msg);
    json_decref(msg);
  }
}

static void update_poll(struct spmvd_worker *w)
{
  if (!w->inc || w->inc->fd < 0)
    return;
  int want = UV_READABLE | UV_DISCONNECT;
  if (w->queue && w->state == READY)
    want |= UV_WRITABLE;
  /* Restarting an unchanged poll costs two epoll_ctl calls per request. */
  if (want != w->inc->events)
    uv_poll_start(&w->inc->poll, want, on_poll);
  w->inc->events = want;
}

static void spawn(struct spmvd_worker *w)
{
  struct incarnation *inc = calloc(1, sizeof *inc);
  uv_process_options_t o = {0};
  uv_stdio_container_t stdio[4];
  struct spmv_error err;
  char dev[16];
  char *args[12];
  int sv[2], n = 0, rc;

  if (!inc) {
    spmvd_log_error("out of memory spawning the device worker");
    goto retry;
  }
  if (spmvd_ipc_pair(sv, &err) < 0) {
    spmvd_log_error("%s", err.msg);
    free(inc);
    goto retry;
  }
  snprintf(dev, sizeof dev, "%d", w->device);
  args[n++] = w->path;
  args[n++] = "--backend";
  args[n++] = w->backend;
  args[n++] = "--device";
  args[n++] = dev;
  args[n++] = "--log-level";
  args[n++] = w->level;
  args[n++] = "--busy-poll-us";
  args[n++] = w->spin;
  if (w->syslog)
    args[n++] = "--syslog";
  args[n] = NULL;
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_INHERIT_FD;
  stdio[1].data.fd = 1;
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  stdio[3].flags = UV_INHERIT_FD;
  stdio[3].data.fd = sv[1];
  o.file = w->path;
  o.args = args;
  o.stdio = stdio;
  o.stdio_count = 4;
  o.exit_cb = on_exit_cb;
  inc->w = w;
  inc->fd = sv[0];
  inc->proc.data = inc;
  inc->poll.data = inc;
  rc = uv_spawn(w->loop, &inc->proc, &o);
  close(sv[1]);
  if (rc < 0) {
    spmvd_log_error("cannot start %s: %s", w->path, uv_strerror(rc));
    close(sv[0]);
    uv_close((uv_handle_t *)&inc->proc, (uv_close_cb)free);
    goto retry;
  }
  inc->open_handles = 2;
  uv_poll_init(w->loop, &inc->poll, inc->fd);
  w->inc = inc;
  w->state = STARTING;
  w->last_start_ms = uv_now(w->loop);
  spmvd_watch_sent(&w->watch, 1);
  update_poll(w);
  spmvd_log_debug("device worker %d started: %s --backend %s --device %d",
                  inc->proc.pid, w->path, w->backend, w->device);
  return;
retry:
  w->state = DEAD;
  w->delay_ms = w->delay_ms ? w->delay_ms * 2 : 100;
  if (w->delay_ms > 5000)
    w->delay_ms = 5000;
  uv_timer_start(&w->timer, on_respawn_timer, w->delay_ms, 0);
}

/* Starts a worker on loop. */
int spmvd_worker_new(uv_loop_t *loop, const struct spmvd_worker_opts *opts,
                     const struct spmvd_worker_hooks *hooks, void *ctx,
                     struct spmvd_worker **out, struct spmv_error *err)
{
  struct spmvd_worker *w = calloc(1, sizeof *w);

  if (!w)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if (access(opts->path, X_OK) < 0) {
    int e = errno;
    free(w);
    return spmv_error_set(err, SPMV_EIO, "cannot run the worker %s: %s",
                          opts->path, strerror(e));
  }
  w->loop = loop;
  snprintf(w->path, sizeof w->path, "%s", opts->path);
  snprintf(w->backend, sizeof w->backend, "%s", opts->backend);
  snprintf(w->level, sizeof w->level, "%s",
           opts->log_level ? opts->log_level : "info");
  w->device = opts->device;
  w->syslog = opts->syslog;
  snprintf(w->spin, sizeof w->spin, "%d", opts->busy_poll_us);
  w->hooks = *hooks;
  w->ctx = ctx;
  w->queue_tail = &w->queue;
  w->sent_tail = &w->sent;
  w->next_seq = 1;
  uv_timer_init(loop, &w->timer);
  w->timer.data = w;
  spmvd_watch_init(loop, &w->watch, opts->timeout_s, watch_busy, watch_silent,
                   w);
  w->open_timers = 2;
  spawn(w);
  *out = w;
  return 0;
}

static struct call *call_new(struct spmvd_worker *w, json_t *msg,
                             const int *fds, int nfds)
{
  struct call *c = calloc(1, sizeof *c);

  if (!c || nfds > SPMVD_IPC_MAX_FDS)
    goto fail;
  c->msg = msg;
  c->seq = w->next_seq++;
  for (int i = 0; i < nfds; i++) {
    c->fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
    if (c->fds[i] < 0) {
      c->nfds = i;
      c->msg = NULL;
      call_free(c);
      goto fail;
    }
  }
  c->nfds = nfds;
  return c;
fail:
  free(c);
  json_decref(msg);
  return NULL;
}

/* Sends a request; msg stolen, fds borrowed; cb called exactly once. */
int spmvd_worker_call(struct spmvd_worker *w, json_t *msg, const int *fds,
                      int nfds, spmvd_worker_reply_cb *cb,
                      spmvd_worker_event_cb *ev, void *ctx,
                      struct spmv_error *err)
{
  if (w->state == STOPPING || w->state == STOPPED) {
    json_decref(msg);
    return spmv_error_set(err, SPMV_EWORKER, "the device worker is stopping");
  }
  struct call *c = call_new(w, msg, fds, nfds);
  if (!c)
    return spmv_error_set(err, SPMV_ENOMEM, "cannot queue a worker request");
  c->cb = cb;
  c->ev = ev;
  c->ctx = ctx;
  push(&w->queue_tail, c);
  flush(w);
  return 0;
}

/* Sends a request whose answer nobody waits for; msg stolen. */
void spmvd_worker_post(struct spmvd_worker *w, json_t *msg)
{
  if (w->state == DEAD || w->state == STOPPING || w->state == STOPPED) {
    json_decref(msg);  /* a new incarnation starts empty anyway */
    return;
  }
  struct call *c = call_new(w, msg, NULL, 0);
  if (!c)
    return;
  push(&w->queue_tail, c);
  flush(w);
}

int64_t spmvd_worker_last_seq(const struct spmvd_worker *w)
{
  return w->next_seq - 1;
}

/* Names who (copied) as the client of the call last made, for the log. */
void spmvd_worker_tag_last(struct spmvd_worker *w, const char *who)
{
  for (int l = 0; l < 2; l++)
    for (struct call *k = l ? w->queue : w->sent; k; k = k->next)
      if (k->seq == w->next_seq - 1)
        snprintf(k->who, sizeof k->who, "%s", who);
}

/* Sets the device timeout (0: none); calls on the worker now count it
 * from now. */
void spmvd_worker_set_timeout(struct spmvd_worker *w, int timeout_s)
{
  if (w->state == STOPPING || w->state == STOPPED)
    return;
  spmvd_watch_set(&w->watch, timeout_s);
}

/* The device timeout (0: none) and how many workers it killed. */
int spmvd_worker_timeout(const struct spmvd_worker *w)
{
  return w->watch.timeout_s;
}

int spmvd_worker_timeouts(const struct spmvd_worker *w)
{
  return w->timeouts;
}

/* The device's free and total memory as the worker last reported them;
 * 0 when it never did (a backend that does not know). */
int spmvd_worker_device_memory(const struct spmvd_worker *w,
                               uint64_t *free_bytes, uint64_t *total_bytes)
{
  if (!w->have_mem)
    return 0;
  *free_bytes = w->free_bytes;
  *total_bytes = w->total_bytes;
  return 1;
}

/* Whether err is the retriable error of calls whose worker faulted
 * (crashed or timed out), as fail_all() words it. */
int spmvd_worker_fault_error(const struct spmv_error *err)
{
  return err->code == SPMV_EWORKER &&
         (strstr(err->msg, "device worker crashed") != NULL ||
          strstr(err->msg, "device worker timed out") != NULL);
}

/* The device, or NULL until the worker first said ready. */
const struct spmvd_device_info *spmvd_worker_device(const struct spmvd_worker *w)
{
  return w->have_dev ? &w->dev : NULL;
}

/* The worker's pid, 0 when none is running. */
pid_t spmvd_worker_pid(const struct spmvd_worker *w)
{
  return w->inc && !w->inc->exited ? w->inc->proc.pid : 0;
}

/* How many times the worker died. */
int spmvd_worker_restarts(const struct spmvd_worker *w)
{
  return w->restarts;
}

/* The worker's state: starting, ready, dead, stopping or stopped. */
const char *spmvd_worker_state(const struct spmvd_worker *w)
{
  static const char *const names[] = {"starting", "ready", "dead", "stopping",
                                      "stopped"};
  return names[w->state];
}

/* The device number the worker drives. */
int spmvd_worker_device_index(const struct spmvd_worker *w)
{
  return w->device;
}

/* Calls sent or queued and not yet answered. */
int spmvd_worker_pending(const struct spmvd_worker *w)
{
  int n = 0;
  for (struct call *c = w->sent; c; c = c->next)
    n += c->cb != NULL;
  for (struct call *c = w->queue; c; c = c->next)
    n += c->cb != NULL;
  return n;
}

/* Ends the worker: closes its socket (it exits), then the stopped hook. */
void spmvd_worker_stop(struct spmvd_worker *w)
{
  if (w->state == STOPPING || w->state == STOPPED)
    return;
  uv_timer_stop(&w->timer);
  spmvd_watch_stop(&w->watch);
  if (!w->inc && !w->dying) {
    finish_stop(w);
    return;
  }
  w->state = STOPPING;
  if (!w->inc)
    return;  /* the dying one's exit finishes the stop */
  struct incarnation *inc = w->inc;
  if (inc->fd >= 0) {
    uv_poll_stop(&inc->poll);
    uv_close((uv_handle_t *)&inc->poll, inc_closed);
    close(inc->fd);
    inc->fd = -1;
  }
}
