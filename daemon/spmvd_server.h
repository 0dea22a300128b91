/* spmvd_server.h: the front end: listening socket, connections, worker, cache. */
#ifndef SPMVD_SERVER_H
#define SPMVD_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include <uv.h>

#include "spmv_error.h"
#include "spmv_wire.h"
#include "spmvd_config.h"
#include "spmvd_registry.h"

struct spmvd_conn;
struct spmvd_worker;
struct spmvd_cache;
struct spmvd_bio;

/* The most workers of one daemon: one per device (or cpu worker). */
#define SPMVD_MAX_WORKERS SPMVD_CONFIG_MAX_WORKERS

/* The front end (embedded by main; one per process). */
struct spmvd_server {
  uv_loop_t *loop;                 /* borrowed */
  struct spmvd_config cfg;         /* the configuration in force */
  char config_path[512];           /* --config, "" when none */
  struct spmvd_config overrides;   /* command-line values, reapplied on reload */
  unsigned override_mask;          /* which of them were given */
  uv_pipe_t listener;
  int listening;                   /* listener initialised (to be closed) */
  int bound;                       /* we bound the socket file (to unlink) */
  int signals;                     /* signal handles initialised */
  int activated;                   /* the socket came from systemd */
  uv_signal_t sig_term, sig_int, sig_hup;
  uv_timer_t sweep;                /* the connections' timeouts, each second */
  struct spmvd_conn *conns;        /* every open connection */
  int nconns;
  struct spmvd_registry reg;
  /* One worker per device; a connection's requests go to the one it was
   * placed on (spmvd_server_place), a matrix's to the one it was loaded on. */
  struct spmvd_worker *workers[SPMVD_MAX_WORKERS];
  int nworkers;
  struct spmvd_cache *cache;       /* NULL when the cache could not open;
                                      only the cache thread touches it */
  struct spmvd_bio *bio;           /* the cache thread, NULL once stopped
                                      (or never, without a cache) */
  const char *cache_state;         /* "read-write", "read-only" or "none"
                                      (status's cache_state) */
  uint64_t start_ms;
  uint64_t busy_ms;                /* when a connection or work was last
                                      seen (exit_idle_s counts from it) */
  int stopping;                    /* SIGTERM: finishing in-flight work */
  int lock_fd;
  int exit_code;
};

/* Bits of override_mask: command-line options win over the file. */
#define SPMVD_OVR_SOCKET 0x1u
#define SPMVD_OVR_DB 0x2u
#define SPMVD_OVR_LOG 0x4u
#define SPMVD_OVR_BACKEND 0x8u
#define SPMVD_OVR_DEVICE 0x10u
#define SPMVD_OVR_EXIT_IDLE 0x20u

/*
 * Starts the server on loop with srv->cfg already filled: takes the lock,
 * opens the cache, listens (reclaiming a stale socket, or using a socket
 * passed by systemd), spawns the worker and installs the signal handlers.
 * Returns 0 or a negative SPMV_E* code with a message for the operator.
 */
int spmvd_server_open(struct spmvd_server *srv, uv_loop_t *loop,
                      struct spmv_error *err);

/* Begins a clean stop: no new requests; in-flight ones finish, then the
 * worker stops and every handle closes so that the loop ends. */
void spmvd_server_stop(struct spmvd_server *srv);

/* Releases what is left after the loop ended (cache, lock, socket file). */
void spmvd_server_close(struct spmvd_server *srv);

/* Rereads the configuration file; a bad one keeps the old configuration. */
void spmvd_server_reload(struct spmvd_server *srv);

/* The frame limits of the configuration in force. */
void spmvd_server_wire_limits(const struct spmvd_server *srv,
                              struct spmv_wire_limits *lim);

/* Called by a connection as it closes: frees its matrices, unlists it. */
void spmvd_server_conn_closed(struct spmvd_server *srv, struct spmvd_conn *c);

/* Removes matrix m: the worker unloads it and its owner's memory shrinks. */
void spmvd_server_matrix_free(struct spmvd_server *srv, struct spmvd_matrix *m);

/* A request finished: lets a stopping server end once nothing is left. */
void spmvd_server_maybe_finish(struct spmvd_server *srv);

/* Worker i (borrowed), or NULL once it stopped or for an i out of range. */
struct spmvd_worker *spmvd_server_worker(const struct spmvd_server *srv, int i);
/* Whether worker i has said ready once (a device that never starts is
 * given no connection and no block). */
int spmvd_server_worker_started(const struct spmvd_server *srv, int i);

/* The worker for a new connection: the one holding the fewest bytes of
 * matrices (a split one's shared among its blocks' workers) and device
 * vectors, then the fewest connections. */
int spmvd_server_place(const struct spmvd_server *srv);

#endif /* SPMVD_SERVER_H */
