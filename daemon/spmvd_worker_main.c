/* spmvd_worker_main.c: spmvd-worker, the process that owns one device:
 * its options, the backend, the loop, the dispatch of requests and the
 * trim. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_backend.h"
#ifdef SPMVD_FAULT_INJECTION
#include "spmvd_fault.h"
#endif
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_worker_impl.h"
#include "spmv_wire.h"

/*
 * The worker serves the front end one message at a time over fd 3 (a
 * SOCK_SEQPACKET socketpair; see spmvd_ipc.h).  It blocks: all slow work
 * (conversion, profiling, tuning, products) happens here so that the front
 * end's loop never does.  Operations, each answered {seq, ok, ...} or
 * {seq, ok:false, error:{code, message}}:
 *
 *   load     {handle, dtype, index, rows, cols, nnz} fds [raw, host]:
 *            the client's payload (raw) is converted into the host copy
 *            (host, see spmv_wire_csr_layout) and validated; replies
 *            {fingerprint, steps}.  Nothing is resident yet, and nothing
 *            profiled: a cache hit takes the profile from the cache, a
 *            tune computes it.
 *            With inplace:true (a memfd load) fds [host] only: the
 *            client's write-sealed memfd, already the host copy, is
 *            mapped read-only and validated in place.
 *   adopt    {handle, dtype, rows, cols, nnz, config} fds [host]: after a
 *            respawn, maps a host copy already converted (read-only when
 *            write-sealed) and makes config resident.
 *   prepare  {handle, config, check}: makes config resident; with check,
 *            compares one product on a random vector with spmv_csr_ref and
 *            replies {verified, residual}.
 *   tune     {handle, strategy, exclude:[text], exclude_formats?:[name],
 *            predictor:{fits}}: runs the tuner without the quarantined
 *            configurations and the operator's excluded formats (with the
 *            device's calibration fits when given, see
 *            spmvd_predict_to_json), sending
 *            {seq, event:"candidate", candidate} before building each
 *            candidate and {seq, event:"progress", done, total, candidate,
 *            time_us} after timing it; makes the winner resident; replies
 *            {decision, profile, steps}.
 *   bench    {handle, configs?:[text], rounds?, exclude_formats?:[name]}:
 *            times every exhaustive candidate not of those formats, or
 *            only configs (the front end refuses excluded ones), each as a
 *            calibration point is timed, in the given order
 *            (bench_configs(), in spmvd_worker_long.c); replies {trials}.
 *   calibrate {dtype, max_seconds, points?}: the predictor's calibration,
 *            bounded in time, sending {seq, event:"progress",
 *            stage:"calibration", done, total, candidate, time_us}, then
 *            with points the timed points in {seq, event:"points", ...};
 *            replies {fits, ...} (spmvd_calib_bounded(), in
 *            spmvd_calib_bound.c).
 *   multiply {handle, alpha, beta, nvec, buf?, buf_size?} fds [vectors]:
 *            x_1..x_k then y_1..y_k in the memfd; y is overwritten in
 *            place.  With buf (a connection's vector buffer, reused across
 *            requests) the memfd comes once, is mapped whole (buf_size
 *            bytes) and kept under that id; later requests name buf only.
 *   release  {buf}: unmaps a vector buffer (its connection closed or it grew).
 *   vnew     {vectors:[{id, dtype, n}]}: allocates device vectors.
 *   vfree    {ids:[id]}: frees them.
 *   ops      {vectors, bufs, payload_buf, down_base, steps, nres} fds [the
 *            bufs sent]: runs a list of operations (spmvd_worker_vec.c);
 *            replies {results}.
 *   unload   {handle}: frees the matrix.
 *   solve    {handle, method, ...} fds [payload buffer]: a whole iterative
 *            method (spmvd_solve.c), sending {seq, event:"progress",
 *            stage:"solve", ...}; replies {iterations, reason, ...}.
 *   cancel   {target}: stops solve target between its iterations (it then
 *            fails with ECLOSED); one already over is not an error.
 *
 * Between a calibration's points and a tune's (or bench's) candidates the
 * worker serves the multiply and unload requests for other matrices, and
 * buffer releases, that came meanwhile (replies out of order); the other
 * requests wait for the operation's end (serve_between(), in
 * spmvd_worker_long.c).
 *
 * A second after the last request that may free device memory the worker
 * lets the backend give back what it kept for reuse (trim, TRIM_IDLE_MS).
 *
 * Unprompted, the worker sends {event:"ready", device} once started,
 * {event:"memory", free_bytes, total_bytes} then and after each trim (the
 * backends that know it), and {event:"alive"} during a long operation
 * whenever it sent nothing for SPMVD_IPC_HEARTBEAT_MS (spmvd_wk_heartbeat),
 * so that the front end's device timeout sees it working.
 *
 * When the backend reports a sticky error the worker exits with status 3:
 * the front end respawns it.
 */

/* Time after the last request that may free device memory (anything but
 * products and buffer releases) before the backend gives what its pool
 * keeps back to the driver (backend trim), whether the worker then idles
 * or serves products: never while a tune's, bench's or calibration's
 * loads and timings follow one another, and memory the device no longer
 * uses goes back soon after. */
#define TRIM_IDLE_MS 1000

/* Monotonic seconds, on the clock of the loads' steps. */
static double now_s(void)
{
  return spmvd_wk_now_ms() * 1e-3;
}

void spmvd_wk_die_if_sticky(int rc)
{
  if (rc == SPMV_EGPU_STICKY) {
    spmvd_log_error("sticky device error: exiting so that spmvd respawns "
                    "the worker");
    exit(3);
  }
}

void spmvd_wk_shutdown(struct worker *w)
{
  static int once;

  if (once++)
    return;  /* a message sent on the way out failed: exiting already */
  while (w->mats)
    spmvd_wk_drop(w, w->mats->handle);
  spmvd_wk_vec_free_all(w);
  while (w->bufs)
    spmvd_wk_buf_release(w, w->bufs->id);
#ifdef SPMVD_FAULT_INJECTION
  spmvd_fault_close();
#endif
  w->ops->close(w->be);
  w->be = NULL;
}

void spmvd_wk_send_msg(struct worker *w, json_t *msg)
{
  struct spmv_error err;

  int rc = spmvd_ipc_send(w->fd, msg, NULL, 0, &err);
  if (rc == SPMV_ECLOSED) {
    /* The front end is gone (stopping): nobody to answer. */
    json_decref(msg);
    spmvd_wk_shutdown(w);
    exit(0);
  }
  if (rc < 0) {
    spmvd_log_error("cannot answer the front end: %s", err.msg);
    exit(2);
  }
  json_decref(msg);
  w->sent_s = now_s();
}

void spmvd_wk_heartbeat(struct worker *w)
{
  if (1e3 * (now_s() - w->sent_s) >= SPMVD_IPC_HEARTBEAT_MS)
    spmvd_wk_send_msg(w, json_pack("{ss}", "event", "alive"));
}

/* Tells the front end the device's free memory, for its status (backends
 * that know it). */
static void report_memory(struct worker *w)
{
  struct spmv_error err;
  uint64_t free_b = 0, total_b = 0;

  if (w->ops->mem_info == NULL)
    return;
  if (w->ops->mem_info(w->be, &free_b, &total_b, &err) < 0) {
    spmvd_log_debug("device memory unknown: %s", err.msg);
    return;
  }
  spmvd_wk_send_msg(w, json_pack("{ss sI sI}", "event", "memory", "free_bytes",
                                 (json_int_t)free_b, "total_bytes",
                                 (json_int_t)total_b));
}

static void reply_error(struct worker *w, json_int_t seq,
                        const struct spmv_error *err)
{
  spmvd_wk_send_msg(w, json_pack("{sI sb s{ss ss}}", "seq", seq, "ok", 0,
                                 "error", "code", spmv_err_name(err->code),
                                 "message", err->msg));
}

void spmvd_wk_serve_one(struct worker *w, json_t *req, int *fds, int nfds)
{
  struct spmv_error err;
  json_int_t seq = -1, h;
  const char *op = "";
  json_t *rep = NULL;
  int rc;

  spmv_error_clear(&err);
  if (json_unpack(req, "{ss sI}", "op", &op, "seq", &seq) < 0) {
    spmvd_log_error("bad message from the front end");
    exit(2);
  }
  if (strcmp(op, "load") == 0)
    rc = spmvd_wk_op_load(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "adopt") == 0)
    rc = spmvd_wk_op_adopt(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "adopt-block") == 0)
    rc = spmvd_wk_op_adopt_block(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "solve-block") == 0)
    rc = spmvd_wk_op_solve_block(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "multiply-block") == 0)
    rc = spmvd_wk_op_multiply_block(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "prepare") == 0)
    rc = spmvd_wk_op_prepare(w, req, &rep, &err);
  else if (strcmp(op, "tune") == 0)
    rc = spmvd_wk_op_tune(w, req, seq, &rep, &err);
  else if (strcmp(op, "bench") == 0)
    rc = spmvd_wk_op_bench(w, req, seq, &rep, &err);
  else if (strcmp(op, "calibrate") == 0)
    rc = spmvd_wk_op_calibrate(w, req, seq, &rep, &err);
  else if (strcmp(op, "solve") == 0)
    rc = spmvd_wk_op_solve(w, req, fds, nfds, seq, &rep, &err);
  else if (strcmp(op, "cancel") == 0 &&
           json_unpack(req, "{sI}", "target", &h) == 0) {
    /* a solve already over: nothing */
    spmvd_wk_cancel_deferred(w, h, spmvd_wk_cancel_how(req) == SPMVD_WK_DROP);
    rc = 0;
  } else if (strcmp(op, "multiply") == 0)
    rc = spmvd_wk_op_multiply(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "ops") == 0)
    rc = spmvd_wk_op_ops(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "vnew") == 0)
    rc = spmvd_wk_op_vnew(w, req, &rep, &err);
  else if (strcmp(op, "vfree") == 0) {
    spmvd_wk_op_vfree(w, req);
    rc = 0;
  }
  else if (strcmp(op, "unload") == 0 &&
           json_unpack(req, "{sI}", "handle", &h) == 0) {
    spmvd_wk_drop(w, h);
    rep = json_object();
    rc = 0;
  } else if (strcmp(op, "release") == 0 &&
             json_unpack(req, "{sI}", "buf", &h) == 0) {
    spmvd_wk_buf_release(w, h);
    rep = json_object();
    rc = 0;
  } else
    rc = spmv_error_set(&err, SPMV_EPROTO, "unknown worker operation '%s'", op);
  spmvd_wk_die_if_sticky(rc);
  for (int i = 0; i < nfds; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  if (rc < 0) {
    if (err.code == 0)
      spmv_error_set(&err, rc, "%s", spmv_strerror(rc));
    reply_error(w, seq, &err);
    return;
  }
  if (!rep)
    rep = json_object();
  json_object_set_new(rep, "seq", json_integer(seq));
  json_object_set_new(rep, "ok", json_true());
  spmvd_wk_send_msg(w, rep);
}

/* Whether request req (served) may have freed device memory. */
static int may_free(json_t *req)
{
  const char *op = json_string_value(json_object_get(req, "op"));

  return op == NULL || (strcmp(op, "multiply") != 0 &&
                        strcmp(op, "multiply-block") != 0 && strcmp(op, "release") != 0 &&
                        strcmp(op, "ops") != 0);
}

/* Milliseconds until w's trim is due (0: due now). */
static int trim_wait_ms(const struct worker *w)
{
  double left = TRIM_IDLE_MS - 1e3 * (now_s() - w->trim_from);

  return left > 0 ? (int)ceil(left) : 0;
}

/* Lets the backend give back the device memory its pool keeps, then
 * reports what is free. */
static void trim(struct worker *w)
{
  size_t n = w->ops->trim(w->be);

  if (n > 0)
    spmvd_log_debug("gave %zu bytes of device memory back", n);
  w->trim_due = 0;
  report_memory(w);
}

/* 1 when nothing arrives on fd within ms (or poll fails: a trim early is
 * harmless), 0 when a message is waiting. */
static int idle_for(int fd, int ms)
{
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int n;

  do
    n = poll(&p, 1, ms);
  while (n < 0 && errno == EINTR);
  return n <= 0;
}

static const struct spmvd_backend_ops *pick_backend(const char *name)
{
#ifdef HAVE_CUDA
  if (strcmp(name, "cuda") == 0 || strcmp(name, "auto") == 0)
    return &spmvd_backend_cuda;
#endif
  if (strcmp(name, "cpu") == 0 || strcmp(name, "auto") == 0)
    return &spmvd_backend_cpu;
  return NULL;
}

static int open_backend(struct worker *w, const char *name, int dev,
                        struct spmv_error *err)
{
  w->ops = pick_backend(name);
  if (!w->ops)
    return spmv_error_set(err, SPMV_EUNSUPPORTED,
                          "backend '%s' is not built into this spmvd-worker",
                          name);
  int rc = w->ops->open(dev, &w->be, err);
  if (rc < 0 && strcmp(name, "auto") == 0 && w->ops != &spmvd_backend_cpu) {
    spmvd_log_info("no usable GPU (%s): using the cpu backend", err->msg);
    w->ops = &spmvd_backend_cpu;
    rc = w->ops->open(dev, &w->be, err);
  }
  if (rc < 0)
    return rc;
  return w->ops->info(w->be, &w->dev);
}

static json_t *device_json(const struct spmvd_device_info *d)
{
  return json_pack("{ss ss si si si si si sI ss ss}", "backend", d->backend,
                   "name", d->name, "cc_major", d->cc_major, "cc_minor",
                   d->cc_minor, "sms", d->sms, "warp_size", d->warp_size,
                   "devices", d->devices,
                   "mem_bytes", (json_int_t)d->mem_bytes, "device_key",
                   d->device_key, "software_key", d->software_key);
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: spmvd-worker [--backend auto|cpu|cuda] [--device N]\n"
          "                    [--log-level LEVEL] [--syslog] [--busy-poll-us US]\n"
          "                    [--help] [--version]\n"
          "The device worker of spmvd(8); spmvd starts it with its socket on fd %d.\n",
          SPMVD_IPC_WORKER_FD);
}

/* spmvd-worker: opens the backend, announces the device, serves requests. */
int main(int argc, char **argv)
{
  static const struct option lopts[] = {
    {"backend", required_argument, NULL, 'b'},
    {"device", required_argument, NULL, 'd'},
    {"log-level", required_argument, NULL, 'l'},
    {"syslog", no_argument, NULL, 's'},
    {"busy-poll-us", required_argument, NULL, 'p'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
  };
  const char *backend = "auto";
  enum spmvd_log_level level = SPMVD_LOG_INFO;
  enum spmvd_log_sink sink = SPMVD_LOG_STDERR;
  struct worker w = {.fd = SPMVD_IPC_WORKER_FD};
  struct spmv_error err;
  int dev = 0, c;

  while ((c = getopt_long(argc, argv, "b:d:l:sp:hV", lopts, NULL)) != -1) {
    switch (c) {
    case 'b': backend = optarg; break;
    case 'd': dev = atoi(optarg); break;
    case 'l':
      if (spmvd_log_level_parse(optarg, &level) < 0) {
        fprintf(stderr, "spmvd-worker: unknown log level '%s'\n", optarg);
        return 1;
      }
      break;
    case 's': sink = SPMVD_LOG_SYSLOG; break;
    case 'p': w.spin_us = atoi(optarg); break;
    case 'h': usage(stdout); return 0;
    case 'V': printf("spmvd-worker %s\n", PACKAGE_VERSION); return 0;
    default: usage(stderr); return 1;
    }
  }
  spmvd_log_open("spmvd-worker", sink, level);
  signal(SIGPIPE, SIG_IGN);
  if (open_backend(&w, backend, dev, &err) < 0) {
    spmvd_log_error("cannot open the %s backend on device %d: %s", backend,
                    dev, err.msg);
    spmvd_wk_send_msg(&w, json_pack("{ss s{ss ss}}", "event", "failed",
                                    "error", "code", spmv_err_name(err.code),
                                    "message", err.msg));
    return 1;
  }
#ifdef SPMVD_FAULT_INJECTION
  if (spmvd_fault_open(w.dev.backend, &err) < 0) {
    spmvd_log_error("%s", err.msg);
    spmvd_wk_send_msg(&w, json_pack("{ss s{ss ss}}", "event", "failed",
                                    "error", "code", spmv_err_name(err.code),
                                    "message", err.msg));
    return 1;
  }
#endif
  SPMVD_WK_SLOW(START);
  spmvd_wk_send_msg(&w, json_pack("{ss so}", "event", "ready", "device",
                                  device_json(&w.dev)));
  report_memory(&w);
  spmvd_log_debug("ready: %s backend, %s", w.dev.backend, w.dev.name);
  w.later_tail = &w.later;
  for (;;) {
    json_t *req;
    int fds[SPMVD_IPC_MAX_FDS], nfds, rc;
    /* What waited for a long operation goes first. */
    if (w.later) {
      struct deferred *d = w.later;
      w.later = d->next;
      if (!w.later)
        w.later_tail = &w.later;
      spmvd_wk_serve_deferred(&w, d);
      continue;
    }
    spmv_wire_spin(w.fd, w.spin_us);
    if (w.trim_due && idle_for(w.fd, trim_wait_ms(&w)))
      trim(&w);
    rc = spmvd_ipc_recv(w.fd, &req, fds, &nfds, SPMVD_IPC_MAX_FDS, &err);
    if (rc == SPMV_ECLOSED)
      break;
    if (rc < 0) {
      spmvd_log_error("%s", err.msg);
      return 2;
    }
    spmvd_wk_serve_one(&w, req, fds, nfds);
    if (w.ops->trim != NULL && may_free(req)) {
      w.trim_due = 1;
      w.trim_from = now_s();
    } else if (w.trim_due && trim_wait_ms(&w) == 0) {
      trim(&w);
    }
    json_decref(req);
  }
  spmvd_wk_shutdown(&w);
  return 0;
}
