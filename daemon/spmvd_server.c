/* spmvd_server.c: the front end: listening socket, connections, worker, cache. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "spmvd_bio.h"
#include "spmvd_cache.h"
#include "spmvd_cachejob.h"
#include "spmvd_conn.h"
#include "spmvd_log.h"
#include "spmvd_ops.h"
#include "spmvd_server.h"
#include "spmvd_spin.h"
#include "spmvd_worker.h"

#ifndef SPMV_LIBEXECDIR
#define SPMV_LIBEXECDIR "/usr/local/libexec"
#endif

static void lock_path(const struct spmvd_config *cfg, char *out, size_t n)
{
  if (*cfg->lock_path)
    snprintf(out, n, "%s", cfg->lock_path);
  else
    snprintf(out, n, "%s.lock", cfg->socket_path);
}

/* Takes the lock file so that a second daemon refuses to start. */
static int take_lock(struct spmvd_server *srv, struct spmv_error *err)
{
  char path[600], buf[32];
  int fd;

  lock_path(&srv->cfg, path, sizeof path);
  fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return spmv_error_set(err, SPMV_EIO, "cannot open the lock file %s: %s",
                          path, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    close(fd);
    return spmv_error_set(err, SPMV_EBUSY,
                          "another spmvd (pid %s) is already serving %s "
                          "(lock %s held); stop it first",
                          *buf ? buf : "?", srv->cfg.socket_path, path);
  }
  if (ftruncate(fd, 0) == 0) {
    int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (pwrite(fd, buf, (size_t)len, 0) < 0)
      spmvd_log_warn("cannot write the pid to %s", path);
  }
  srv->lock_fd = fd;
  return 0;
}

/* Is somebody listening on path?  1 yes, 0 stale or absent. */
static int socket_live(const char *path)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t len = strlen(path);
  int fd, live;

  if (len >= sizeof sa.sun_path)  /* no socket can be there */
    return 0;
  if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
    return 0;
  memcpy(sa.sun_path, path, len + 1);
  live = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
  close(fd);
  return live;
}

static void on_connection(uv_stream_t *listener, int status);

static int listen_socket(struct spmvd_server *srv, struct spmv_error *err)
{
  const char *path = srv->cfg.socket_path;
  const char *pid = getenv("LISTEN_PID"), *nfds = getenv("LISTEN_FDS");
  struct stat st;
  char dir[512];
  int rc;

  uv_pipe_init(srv->loop, &srv->listener, 0);
  srv->listener.data = srv;
  srv->listening = 1;
  if (pid && nfds && atol(pid) == (long)getpid() && atoi(nfds) >= 1) {
    rc = uv_pipe_open(&srv->listener, 3);
    if (rc < 0)
      return spmv_error_set(err, SPMV_EIO, "socket from systemd: %s",
                            uv_strerror(rc));
    srv->activated = 1;
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    spmvd_log_info("using the socket passed by systemd");
  } else {
    if (strlen(path) >= sizeof((struct sockaddr_un *)0)->sun_path)
      return spmv_error_set(err, SPMV_ECONFIG, "socket path too long: %s", path);
    snprintf(dir, sizeof dir, "%s", path);
    char *d = dirname(dir);
    if (mkdir(d, 0755) < 0 && errno != EEXIST)
      return spmv_error_set(err, SPMV_EIO, "cannot create %s: %s", d,
                            strerror(errno));
    if (lstat(path, &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        return spmv_error_set(err, SPMV_EIO,
                              "%s exists and is not a socket: remove it or "
                              "choose another --socket", path);
      if (socket_live(path))
        return spmv_error_set(err, SPMV_EBUSY,
                              "%s is in use by another process; stop it first",
                              path);
      spmvd_log_info("reclaiming the stale socket %s", path);
      unlink(path);
    }
    rc = uv_pipe_bind(&srv->listener, path);
    if (rc < 0)
      return spmv_error_set(err, SPMV_EIO, "cannot bind %s: %s", path,
                            uv_strerror(rc));
    srv->bound = 1;
    chmod(path, (mode_t)srv->cfg.socket_mode);
  }
  rc = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection);
  if (rc < 0)
    return spmv_error_set(err, SPMV_EIO, "cannot listen on %s: %s", path,
                          uv_strerror(rc));
  return 0;
}

static int count_uid(const struct spmvd_server *srv, uid_t uid)
{
  int n = 0;
  for (const struct spmvd_conn *c = srv->conns; c; c = c->next)
    n += c->uid == uid;
  return n;
}

static void on_connection(uv_stream_t *listener, int status)
{
  struct spmvd_server *srv = listener->data;
  struct spmvd_conn *c;
  struct spmv_error err;
  int rc;

  if (status < 0) {
    spmvd_log_warn("accept: %s", uv_strerror(status));
    return;
  }
  rc = spmvd_conn_accept(srv, listener, &c);
  if (rc < 0) {
    spmvd_log_warn("accept: %s", uv_strerror(rc));
    return;
  }
  c->next = srv->conns;
  if (srv->conns)
    srv->conns->prev = c;
  srv->conns = c;
  srv->nconns++;
  spmvd_log_debug("connection from pid %ld, uid %ld", (long)c->pid,
                  (long)c->uid);
  if (srv->nconns > srv->cfg.max_conns)
    spmv_error_set(&err, SPMV_ELIMIT, "max_connections (%d) reached",
                   srv->cfg.max_conns);
  else if (count_uid(srv, c->uid) > srv->cfg.max_conns_per_uid)
    spmv_error_set(&err, SPMV_ELIMIT,
                   "max_connections_per_user (%d) reached for uid %ld",
                   srv->cfg.max_conns_per_uid, (long)c->uid);
  else {
    c->wk = spmvd_server_place(srv);
    spmvd_conn_start(c);
    return;
  }
  spmvd_log_info("refusing pid %ld: %s", (long)c->pid, err.msg);
  c->close_after_write = 1;
  c->rstate = SPMVD_READ_BUSY;
  spmvd_conn_send_error(c, -1, &err);
}

/* Called by a connection as it closes: frees its matrices, unlists it. */
void spmvd_server_conn_closed(struct spmvd_server *srv, struct spmvd_conn *c)
{
  struct spmvd_matrix *m, *next;

  for (m = srv->reg.head; m; m = next) {
    next = m->next;
    if (m->owner == c)
      spmvd_server_matrix_free(srv, m);
  }
  spmvd_ops_vectors_release(c);
  if (c->prev)
    c->prev->next = c->next;
  else
    srv->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
  srv->nconns--;
  spmvd_log_debug("connection of pid %ld closed", (long)c->pid);
  spmvd_server_maybe_finish(srv);
}

/* Removes matrix m: the worker unloads it and its owner's memory shrinks. */
void spmvd_server_matrix_free(struct spmvd_server *srv, struct spmvd_matrix *m)
{
  if (m->owner && m->bytes) {
    m->owner->mem -= m->bytes;
    m->owner->nmatrices--;
  }
  /* A split matrix is unloaded from each of its blocks' workers. */
  for (int b = 0; b < (m->nblocks > 1 ? m->nblocks : 1); b++) {
    struct spmvd_worker *w =
        spmvd_server_worker(srv, m->nblocks > 1 ? m->block_wk[b] : m->wk);
    if (w)
      spmvd_worker_post(w, json_pack("{ss sI}", "op", "unload", "handle",
                                     (json_int_t)m->handle));
  }
  spmvd_registry_remove(&srv->reg, m);
}

/* The frame limits of the configuration in force. */
void spmvd_server_wire_limits(const struct spmvd_server *srv,
                              struct spmv_wire_limits *lim)
{
  spmv_wire_limits_default(lim);
  lim->max_json = srv->cfg.max_json;
  lim->max_payload = srv->cfg.max_payload;
}

static void find_worker(const struct spmvd_config *cfg, char *out, size_t n)
{
  char exe[PATH_MAX];
  ssize_t len;

  if (*cfg->worker_path) {
    snprintf(out, n, "%s", cfg->worker_path);
    return;
  }
  len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = '\0';
    snprintf(out, n, "%s/spmvd-worker", dirname(exe));
    if (access(out, X_OK) == 0)
      return;
  }
  snprintf(out, n, "%s/spmvd-worker", SPMV_LIBEXECDIR);
}

struct spmvd_worker *spmvd_server_worker(const struct spmvd_server *srv, int i)
{
  return i >= 0 && i < srv->nworkers ? srv->workers[i] : NULL;
}

int spmvd_server_worker_started(const struct spmvd_server *srv, int i)
{
  struct spmvd_worker *w = spmvd_server_worker(srv, i);
  return w && spmvd_worker_device(w) != NULL;
}

int spmvd_server_place(const struct spmvd_server *srv)
{
  uint64_t bytes[SPMVD_MAX_WORKERS] = {0};
  int conns[SPMVD_MAX_WORKERS] = {0}, best = 0;

  /* A split matrix weighs on each of its blocks' workers, and a
   * connection's device vectors on its worker, as matrices do. */
  for (const struct spmvd_matrix *m = srv->reg.head; m; m = m->next) {
    int nb = m->nblocks > 1 ? m->nblocks : 1;
    for (int b = 0; b < nb; b++) {
      int wk = nb > 1 ? m->block_wk[b] : m->wk;
      if (wk >= 0 && wk < srv->nworkers)
        bytes[wk] += m->bytes / (uint64_t)nb;
    }
  }
  for (const struct spmvd_conn *c = srv->conns; c; c = c->next)
    if (c->wk >= 0 && c->wk < srv->nworkers) {
      conns[c->wk]++;
      bytes[c->wk] += c->vecs.bytes;
    }
  for (int i = 1; i < srv->nworkers; i++)
    if (spmvd_server_worker_started(srv, i) &&
        (bytes[i] < bytes[best] ||
         (bytes[i] == bytes[best] && conns[i] < conns[best])))
      best = i;
  return best;
}

/* The index of w among the server's workers. */
static int worker_index(const struct spmvd_server *srv,
                        const struct spmvd_worker *w)
{
  for (int i = 0; i < srv->nworkers; i++)
    if (srv->workers[i] == w)
      return i;
  return -1;
}

static int start_worker(struct spmvd_server *srv, int device,
                        struct spmv_error *err);

/* After the first worker's first start, the others: the rest of the
 * devices listed (all the host has, for "all") on a GPU, cpu_workers on
 * the cpu backend, as the first worker's backend turned out to be. */
static void start_others(struct spmvd_server *srv,
                         const struct spmvd_device_info *dev)
{
  const struct spmvd_config *c = &srv->cfg;
  int cpu = strcmp(dev->backend, "cpu") == 0;
  int n = cpu ? c->cpu_workers
          : c->ndevices < 0 ? dev->devices
          : c->ndevices > 0 ? c->ndevices : 1;
  struct spmv_error err;

  if (n > SPMVD_MAX_WORKERS)
    n = SPMVD_MAX_WORKERS;
  while (srv->nworkers < n && !srv->stopping) {
    int i = srv->nworkers;
    int device = cpu ? 0 : c->ndevices > 0 ? c->devices[i] : i;
    if (start_worker(srv, device, &err) < 0) {
      spmvd_log_error("worker %d (device %d) could not start: %s", i, device,
                      err.msg);
      break;
    }
  }
  if (srv->nworkers > 1)
    spmvd_log_info("%d workers on the %s backend", srv->nworkers,
                   dev->backend);
}

static void on_ready(void *ctx, struct spmvd_worker *w, int respawned)
{
  struct spmvd_server *srv = ctx;
  struct spmvd_cachejob *j = spmvd_cachejob_new(SPMVD_CJ_DEVICE);
  int wk = worker_index(srv, w);

  if (j && srv->bio) {
    j->dev = *spmvd_worker_device(w);
    spmvd_cachejob_post(srv->bio, j, NULL, NULL);
  } else {
    spmvd_cachejob_free(j);
  }
  if (respawned)
    spmvd_ops_readopt(srv, wk);
  else if (wk == 0 && srv->nworkers == 1)
    start_others(srv, spmvd_worker_device(w));
}

static void on_died(void *ctx, struct spmvd_worker *w, json_t *msg)
{
  struct spmvd_server *srv = ctx;
  int wk = worker_index(srv, w);

  /* Before any request meets the new worker, which holds no values. */
  for (struct spmvd_conn *c = srv->conns; c; c = c->next)
    spmvd_vectors_lose(&c->vecs, c->wk, wk);
  spmvd_ops_worker_died(ctx, msg);
}

static void bio_stopped(void *ctx)
{
  struct spmvd_server *srv = ctx;
  srv->bio = NULL;
}

/* The last step of a stop: the cache thread finishes what is queued. */
static void stop_bio(struct spmvd_server *srv)
{
  if (srv->bio)
    spmvd_bio_stop(srv->bio, bio_stopped, srv);
}

static void on_stopped(void *ctx, struct spmvd_worker *w)
{
  struct spmvd_server *srv = ctx;
  int wk = worker_index(srv, w), left = 0;

  if (wk >= 0)
    srv->workers[wk] = NULL;
  for (int i = 0; i < srv->nworkers; i++)
    left += srv->workers[i] != NULL;
  if (srv->stopping && left == 0)
    stop_bio(srv);
}

static const struct spmvd_worker_hooks worker_hooks = {on_ready, on_died,
                                                       on_stopped};

/* The spin window in force (busy_poll_us, or the host's default). */
static int spmvd_server_spin_us(const struct spmvd_server *srv)
{
  return srv->cfg.busy_poll_us >= 0 ? srv->cfg.busy_poll_us
                                    : spmv_wire_spin_default();
}

/* Starts worker srv->nworkers on device. */
static int start_worker(struct spmvd_server *srv, int device,
                        struct spmv_error *err)
{
  static const char *const levels[] = {"error", "warn", "info", "debug"};
  struct spmvd_worker_opts o;
  char path[PATH_MAX];
  int threads = srv->cfg.threads, rc;

  find_worker(&srv->cfg, path, sizeof path);
  if (threads <= 0 && srv->cfg.cpu_workers > 1) {
    /* Several cpu workers share the cores rather than each taking all. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cores > srv->cfg.cpu_workers ? (int)(cores / srv->cfg.cpu_workers)
                                           : 1;
  }
  if (threads > 0) {
    char n[16];
    snprintf(n, sizeof n, "%d", threads);
    setenv("SPMVD_CPU_THREADS", n, 1);  /* inherited by the worker */
  }
  o.path = path;
  o.backend = srv->cfg.backend;
  o.device = device;
  o.log_level = levels[srv->cfg.log_level];
  o.syslog = srv->cfg.log_sink == SPMVD_LOG_SYSLOG;
  o.busy_poll_us = spmvd_server_spin_us(srv);
  o.timeout_s = srv->cfg.device_timeout_s;
  rc = spmvd_worker_new(srv->loop, &o, &worker_hooks, srv,
                        &srv->workers[srv->nworkers], err);
  if (rc == 0)
    srv->nworkers++;
  return rc;
}

static void on_signal(uv_signal_t *h, int signum)
{
  struct spmvd_server *srv = h->data;

  if (signum == SIGHUP) {
    spmvd_server_reload(srv);
    return;
  }
  if (srv->stopping) {
    spmvd_log_info("signal %d again: stopping now", signum);
    srv->exit_code = 1;
  } else {
    spmvd_log_info("signal %d: finishing in-flight requests, then exiting",
                   signum);
  }
  spmvd_server_stop(srv);
}

/* The cache's warnings (a corrupt row) go to the log. */
static void cache_warn(const char *msg)
{
  spmvd_log_warn("%s", msg);
}

/* Opens the cache read-write; where the system refuses writing it, opens
 * it read-only, and where even that fails, serves without one: a cache
 * that cannot be written is no reason to refuse products.  Any other
 * failure (a damaged or newer database) stops the start as before. */
static int open_cache(struct spmvd_server *srv, struct spmv_error *err)
{
  const char *path = srv->cfg.db_path;
  struct spmv_error ro;
  int rc = spmvd_cache_open(path, 0, &srv->cache, err);

  srv->cache_state = "read-write";
  if (rc < 0 && !spmvd_cache_denied(path))
    return rc;
  if (rc < 0 &&
      spmvd_cache_open(path, SPMVD_CACHE_READONLY, &srv->cache, &ro) == 0) {
    srv->cache_state = "read-only";
    spmvd_log_warn("the cache %s is read-only: decisions are looked up but "
                   "not stored (%s)", path, err->msg);
  } else if (rc < 0) {
    srv->cache_state = "none";
    spmvd_log_warn("the cache %s cannot be written (%s) nor read (%s): "
                   "serving without a cache, every load is tuned", path,
                   err->msg, ro.msg);
  }
  spmv_error_clear(err);
  if (srv->cache)
    spmvd_cache_set_warn(srv->cache, cache_warn);
  return 0;
}

/* Stops the server once it has had no connection and no worker call for
 * exit_idle_s, so that an instance started on demand goes by itself. */
static void exit_when_idle(struct spmvd_server *srv, uint64_t now)
{
  int secs = srv->cfg.exit_idle_s;

  int pending = 0;

  for (int i = 0; i < srv->nworkers; i++)
    if (srv->workers[i])
      pending += spmvd_worker_pending(srv->workers[i]);
  if (srv->nconns > 0 || pending > 0) {
    srv->busy_ms = now;
    return;
  }
  if (secs <= 0 || srv->stopping || now - srv->busy_ms < (uint64_t)secs * 1000)
    return;
  spmvd_log_info("no client for %d s (exit_idle_s): exiting", secs);
  spmvd_server_stop(srv);
}

/* Once a second: the connections' frame and idle timeouts, and the
 * daemon's own.  One timer for all is cheaper than one a connection,
 * re-armed at every frame. */
static void on_sweep(uv_timer_t *t)
{
  struct spmvd_server *srv = t->data;
  uint64_t now = uv_now(srv->loop);

  for (struct spmvd_conn *c = srv->conns, *next; c; c = next) {
    next = c->next;
    spmvd_conn_sweep(c, now);
  }
  exit_when_idle(srv, now);
}

/* Starts the server on loop with srv->cfg already filled. */
int spmvd_server_open(struct spmvd_server *srv, uv_loop_t *loop,
                      struct spmv_error *err)
{
  int rc;

  srv->loop = loop;
  srv->lock_fd = -1;
  srv->start_ms = uv_now(loop);
  srv->busy_ms = srv->start_ms;
  spmvd_registry_init(&srv->reg);
  /* Signals first: a client may signal as soon as the socket answers. */
  spmvd_spin_init(loop, spmvd_server_spin_us(srv));
  uv_signal_init(loop, &srv->sig_term);
  uv_signal_init(loop, &srv->sig_int);
  uv_signal_init(loop, &srv->sig_hup);
  srv->sig_term.data = srv->sig_int.data = srv->sig_hup.data = srv;
  uv_signal_start(&srv->sig_term, on_signal, SIGTERM);
  uv_signal_start(&srv->sig_int, on_signal, SIGINT);
  uv_signal_start(&srv->sig_hup, on_signal, SIGHUP);
  uv_timer_init(loop, &srv->sweep);
  srv->sweep.data = srv;
  uv_timer_start(&srv->sweep, on_sweep, 1000, 1000);
  uv_unref((uv_handle_t *)&srv->sweep);  /* it alone keeps no loop running */
  srv->signals = 1;
  if ((rc = take_lock(srv, err)) < 0)
    return rc;
  if ((rc = open_cache(srv, err)) < 0)
    return rc;
  if (srv->cache &&
      (rc = spmvd_bio_open(loop, srv->cache, &srv->bio, err)) < 0)
    return rc;
  if ((rc = listen_socket(srv, err)) < 0)
    return rc;
  if ((rc = start_worker(srv, srv->cfg.ndevices > 0 ? srv->cfg.devices[0]
                                 : srv->cfg.ndevices < 0 ? 0 : srv->cfg.device,
                          err)) < 0)
    return rc;
  spmvd_log_info("spmvd %s listening on %s, cache %s", PACKAGE_VERSION,
                 srv->cfg.socket_path, srv->cfg.db_path);
  return 0;
}

static int busy(const struct spmvd_server *srv)
{
  for (const struct spmvd_conn *c = srv->conns; c; c = c->next)
    if (c->rstate == SPMVD_READ_BUSY && !c->close_after_write)
      return 1;
  return 0;
}

/* A request finished: lets a stopping server end once nothing is left. */
void spmvd_server_maybe_finish(struct spmvd_server *srv)
{
  if (!srv->stopping || (busy(srv) && srv->exit_code == 0))
    return;
  for (struct spmvd_conn *c = srv->conns, *next; c; c = next) {
    next = c->next;
    uv_read_stop((uv_stream_t *)&c->pipe);
    if (c->writes && srv->exit_code == 0)
      c->close_after_write = 1;
    else
      spmvd_conn_close(c);
  }
  if (srv->conns)
    return;  /* the last write's callback closes its connection */
  int running = 0;
  for (int i = 0; i < srv->nworkers; i++)
    if (srv->workers[i]) {
      running++;
      spmvd_worker_stop(srv->workers[i]);  /* the last stops the cache thread */
    }
  if (!running)
    stop_bio(srv);
  if (srv->signals) {
    srv->signals = 0;
    spmvd_spin_close();
    uv_close((uv_handle_t *)&srv->sig_term, NULL);
    uv_close((uv_handle_t *)&srv->sig_int, NULL);
    uv_close((uv_handle_t *)&srv->sig_hup, NULL);
    uv_close((uv_handle_t *)&srv->sweep, NULL);
  }
}

/* Begins a clean stop. */
void spmvd_server_stop(struct spmvd_server *srv)
{
  srv->stopping = 1;
  if (srv->listening) {
    srv->listening = 0;
    uv_close((uv_handle_t *)&srv->listener, NULL);
    if (srv->bound)
      unlink(srv->cfg.socket_path);
  }
  spmvd_server_maybe_finish(srv);
}

/* Releases what is left after the loop ended. */
void spmvd_server_close(struct spmvd_server *srv)
{
  char path[600];

  spmvd_registry_fini(&srv->reg);
  spmvd_cache_close(srv->cache);
  srv->cache = NULL;
  if (srv->lock_fd >= 0) {
    lock_path(&srv->cfg, path, sizeof path);
    unlink(path);
    close(srv->lock_fd);
    srv->lock_fd = -1;
  }
}

/* Rereads the configuration file; a bad one keeps the old configuration. */
void spmvd_server_reload(struct spmvd_server *srv)
{
  struct spmvd_config c;
  struct spmv_error err;

  if (!*srv->config_path) {
    spmvd_log_info("SIGHUP: no configuration file to reload");
    return;
  }
  spmvd_config_defaults(&c);
  if (spmvd_config_load(&c, srv->config_path, &err) < 0) {
    spmvd_log_error("SIGHUP: %s; keeping the configuration in force", err.msg);
    return;
  }
  /* Paths, the backend and the device stay until a restart. */
  if (strcmp(c.socket_path, srv->cfg.socket_path) ||
      strcmp(c.db_path, srv->cfg.db_path) || strcmp(c.backend, srv->cfg.backend) ||
      c.device != srv->cfg.device || strcmp(c.worker_path, srv->cfg.worker_path) ||
      c.ndevices != srv->cfg.ndevices ||
      memcmp(c.devices, srv->cfg.devices, sizeof c.devices) ||
      c.cpu_workers != srv->cfg.cpu_workers)
    spmvd_log_warn("SIGHUP: socket, db, backend, device, devices, cpu_workers "
                   "and worker changes take effect at the next start");
  memcpy(c.socket_path, srv->cfg.socket_path, sizeof c.socket_path);
  memcpy(c.db_path, srv->cfg.db_path, sizeof c.db_path);
  memcpy(c.lock_path, srv->cfg.lock_path, sizeof c.lock_path);
  memcpy(c.backend, srv->cfg.backend, sizeof c.backend);
  memcpy(c.worker_path, srv->cfg.worker_path, sizeof c.worker_path);
  c.device = srv->cfg.device;
  c.ndevices = srv->cfg.ndevices;
  memcpy(c.devices, srv->cfg.devices, sizeof c.devices);
  c.cpu_workers = srv->cfg.cpu_workers;
  if (srv->override_mask & SPMVD_OVR_LOG)
    c.log_sink = srv->cfg.log_sink;
  if (srv->override_mask & SPMVD_OVR_EXIT_IDLE)
    c.exit_idle_s = srv->cfg.exit_idle_s;
  srv->cfg = c;
  spmvd_log_set_level(c.log_level);
  for (int i = 0; i < srv->nworkers; i++)
    if (srv->workers[i] &&
        spmvd_worker_timeout(srv->workers[i]) != c.device_timeout_s)
      spmvd_worker_set_timeout(srv->workers[i], c.device_timeout_s);
  spmvd_log_info("SIGHUP: reloaded %s", srv->config_path);
}
