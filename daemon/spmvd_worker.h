/* spmvd_worker.h: the front end's side of a device worker: spawn, respawn, calls. */
#ifndef SPMVD_WORKER_H
#define SPMVD_WORKER_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>
#include <uv.h>

#include "spmv_error.h"
#include "spmvd_backend.h"

struct spmvd_worker;

/*
 * Called once per call with the worker's reply (borrowed, NULL on failure)
 * or with err set: the worker's own error, or SPMV_EWORKER when the worker
 * died before answering.  ctx is the call's.
 */
typedef void spmvd_worker_reply_cb(void *ctx, json_t *reply,
                                   const struct spmv_error *err);
/* Called for each event (borrowed) the worker sends about a call. */
typedef void spmvd_worker_event_cb(void *ctx, json_t *event);

/* What the owner of a worker hears about its life. */
struct spmvd_worker_hooks {
  /* The worker is up (respawned > 0 after a death): re-create state here;
   * calls made from this hook are sent before any call queued meanwhile. */
  void (*ready)(void *ctx, struct spmvd_worker *w, int respawned);
  /* The worker died; msg (borrowed) is the request it was serving when it
   * died of a fault (a crash signal, a sticky device error, exit status
   * 3, or the device timeout), for quarantine, else NULL (e.g. killed by
   * an operator).  Every call is then failed with SPMV_EWORKER. */
  void (*died)(void *ctx, struct spmvd_worker *w, json_t *msg);
  /* The worker stopped for good after spmvd_worker_stop(). */
  void (*stopped)(void *ctx, struct spmvd_worker *w);
};

/* How to start a worker. */
struct spmvd_worker_opts {
  const char *path;      /* the spmvd-worker program */
  const char *backend;   /* auto, cpu or cuda */
  int device;
  const char *log_level; /* passed on as --log-level */
  int syslog;            /* pass --syslog */
  int busy_poll_us;      /* passed on as --busy-poll-us */
  int timeout_s;         /* device_timeout_s: a worker silent this long
                            while serving is killed (0: never) */
};

/*
 * Starts a worker on loop (opts copied); hooks and ctx are borrowed for the
 * worker's life.  *out is owned by the caller until the stopped hook, after
 * which the worker frees itself.  Returns 0 or a negative SPMV_E* code.
 */
int spmvd_worker_new(uv_loop_t *loop, const struct spmvd_worker_opts *opts,
                     const struct spmvd_worker_hooks *hooks, void *ctx,
                     struct spmvd_worker **out, struct spmv_error *err);

/*
 * Sends a request: msg is stolen ("seq" is set here), fds are borrowed
 * (duplicated for as long as the call is queued).  cb is called exactly
 * once; ev (may be NULL) for each event.  Calls made while the worker
 * (re)starts are queued.  Returns 0 or SPMV_ENOMEM / SPMV_EIO (cb is then
 * not called).
 */
int spmvd_worker_call(struct spmvd_worker *w, json_t *msg, const int *fds,
                      int nfds, spmvd_worker_reply_cb *cb,
                      spmvd_worker_event_cb *ev, void *ctx,
                      struct spmv_error *err);

/* Sends a request whose answer nobody waits for (e.g. unload); msg stolen. */
void spmvd_worker_post(struct spmvd_worker *w, json_t *msg);

/* The seq of the last call made (its worker message's "seq"), for a
 * cancel of it. */
int64_t spmvd_worker_last_seq(const struct spmvd_worker *w);

/* Names who (copied, e.g. "pid 123 uid 1000") as the client of the call
 * last made, for the log should the device timeout end it. */
void spmvd_worker_tag_last(struct spmvd_worker *w, const char *who);

/* Sets the device timeout (0: none), counted for the calls on the worker
 * from now (a reload); the timeout in force; how many workers it killed. */
void spmvd_worker_set_timeout(struct spmvd_worker *w, int timeout_s);
int spmvd_worker_timeout(const struct spmvd_worker *w);
int spmvd_worker_timeouts(const struct spmvd_worker *w);

/* The device's free and total memory as the worker last reported them
 * (at its start and after each trim of its pool); returns 1, or 0 when
 * it never did (the cpu backend). */
int spmvd_worker_device_memory(const struct spmvd_worker *w,
                               uint64_t *free_bytes, uint64_t *total_bytes);

/* Whether err (borrowed) is the SPMV_EWORKER of a call whose worker
 * faulted (crashed or timed out), after which what it ran is suspect. */
int spmvd_worker_fault_error(const struct spmv_error *err);

/* The device (borrowed), or NULL until the worker first said ready. */
const struct spmvd_device_info *spmvd_worker_device(const struct spmvd_worker *w);

/* The worker's pid (0 when none is running), deaths so far, state name. */
pid_t spmvd_worker_pid(const struct spmvd_worker *w);
int spmvd_worker_restarts(const struct spmvd_worker *w);
const char *spmvd_worker_state(const struct spmvd_worker *w);
int spmvd_worker_device_index(const struct spmvd_worker *w);
/* Calls sent or queued and not yet answered. */
int spmvd_worker_pending(const struct spmvd_worker *w);

/* Ends the worker: closes its socket (it exits), then the stopped hook. */
void spmvd_worker_stop(struct spmvd_worker *w);

#endif /* SPMVD_WORKER_H */
