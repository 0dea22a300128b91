/* spmvd_config.h: spmvd.conf(5), "key = value" lines, and the defaults. */
#ifndef SPMVD_CONFIG_H
#define SPMVD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_error.h"
#include "spmvd_log.h"

/* The most workers of one daemon (devices, or cpu workers). */
#define SPMVD_CONFIG_MAX_WORKERS 16

/* Everything spmvd can be told; see spmvd.conf(5) for each key. */
struct spmvd_config {
  char socket_path[256];     /* socket: the listening Unix socket */
  char db_path[512];         /* db: the SQLite tuning cache */
  char lock_path[512];       /* lock: the lock file (default: socket + ".lock") */
  char worker_path[512];     /* worker: the spmvd-worker program ("" = found) */
  char backend[16];          /* backend: auto, cpu or cuda */
  int device;                /* device: the device number of the worker */
  int devices[SPMVD_CONFIG_MAX_WORKERS]; /* devices: a worker for each */
  int ndevices;              /* how many: 0 = device's alone, -1 = all */
  int cpu_workers;           /* cpu_workers: workers of the cpu backend */
  int threads;               /* threads: cpu backend threads, 0 = all cores */
  int busy_poll_us;          /* busy_poll_us: spin window, -1 = by host size */
  char strategy[16];         /* strategy: default tuning strategy */
  enum spmvd_log_sink log_sink;   /* log: stderr or syslog */
  enum spmvd_log_level log_level; /* log_level: error, warn, info, debug */
  uint32_t max_json;         /* max_json_bytes */
  uint64_t max_payload;      /* max_payload_bytes */
  uint64_t max_conn_bytes;   /* max_connection_bytes: matrices + request of one connection */
  int max_matrices_per_uid;  /* max_matrices_per_user */
  uint64_t max_device_bytes_per_uid; /* max_device_bytes_per_user: device
                                        vectors + matrices' CSR bytes */
  int max_vectors_per_conn;  /* max_vectors_per_connection */
  int max_conns_per_uid;     /* max_connections_per_user */
  int max_conns;             /* max_connections: all users together */
  char admin_group[64];      /* admin_group: may forget and import ("" = root only) */
  int socket_mode;           /* socket_mode: permissions of the socket (octal) */
  int frame_timeout_s;       /* frame_timeout_s: a begun frame must be
                                complete within it (0 = never) */
  int idle_timeout_s;        /* idle_timeout_s: a connection with nothing
                                in flight is closed after it (0 = never) */
  int exit_idle_s;           /* exit_idle_s: the daemon exits after this
                                long with no connection and no work in
                                flight (0 = never) */
  uint32_t exclude_formats;  /* exclude_formats: bit 1 << f for each format
                                the tuner must never choose */
  int device_timeout_s;      /* device_timeout_s: a device worker silent
                                this long while serving is replaced (0 =
                                never) */
};

/* The least device_timeout_s but 0: twice the worker's heartbeat
 * (SPMVD_IPC_HEARTBEAT_MS), so that a working worker is never taken for
 * a stuck one. */
#define SPMVD_CONFIG_MIN_DEVICE_TIMEOUT_S 2

/*
 * Fills c with the defaults: the service paths under runstatedir and
 * localstatedir for root, the user paths ($XDG_RUNTIME_DIR/spmvd.sock,
 * $XDG_STATE_HOME/spmvd/cache.db) for anyone else.
 */
void spmvd_config_defaults(struct spmvd_config *c);
/* Sets c's socket_path and db_path to the system service's defaults. */
void spmvd_config_system_paths(struct spmvd_config *c);

/*
 * Reads path into c, whose current values are kept for keys the file does
 * not set.  On error c is unchanged and err names the file, line and key.
 * Returns 0 or SPMV_ECONFIG.
 */
int spmvd_config_load(struct spmvd_config *c, const char *path,
                      struct spmv_error *err);

/*
 * Applies one "key = value" setting to c (used by the file reader and by
 * command-line options).  Returns 0 or SPMV_ECONFIG with a message.
 */
int spmvd_config_set(struct spmvd_config *c, const char *key,
                     const char *value, struct spmv_error *err);

/* Parses "123", "64K", "16M", "4G" into bytes; returns 0 or -1. */
int spmvd_config_parse_size(const char *s, uint64_t *out);

/*
 * Parses a list of format names ("cusparse, coo"; separated by commas,
 * spaces around a name ignored, "" or "none" for none) into *mask, bit
 * 1 << f for format f.  Returns 0, or SPMV_ECONFIG naming the word that
 * is no format (*mask unchanged).
 */
int spmvd_config_parse_formats(const char *list, uint32_t *mask,
                               struct spmv_error *err);

/* Writes mask's format names, comma-separated, into buf ("" for none);
 * names that do not fit are left out whole. */
void spmvd_config_format_names(uint32_t mask, char *buf, size_t size);

#endif /* SPMVD_CONFIG_H */
