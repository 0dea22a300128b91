/* spmvd_ipc.h: messages between the front end and a worker (SOCK_SEQPACKET). */
#ifndef SPMVD_IPC_H
#define SPMVD_IPC_H

#include <jansson.h>

#include "spmv_error.h"
#include "spmv_profile.h"
#include "spmvd_tuner.h"

/*
 * One message is one datagram of a SOCK_SEQPACKET socketpair: a JSON
 * object, with up to SPMVD_IPC_MAX_FDS memfds attached (SCM_RIGHTS).  Bulk
 * data never travels here: it lies in the memfds.  Requests carry "op" and
 * "seq"; replies echo "seq" with "ok"; progress events carry "seq" and
 * "event".  The operations are listed in spmvd_worker_main.c.
 */
#define SPMVD_IPC_MAX_BYTES (256 * 1024)
#define SPMVD_IPC_MAX_FDS 4

/*
 * During a long operation (tune, bench, calibrate, solve) the worker sends
 * {event:"alive"} whenever it has sent nothing else for this long, so
 * that the front end's device timeout (spmvd.conf device_timeout_s, at
 * least twice this) counts only the time a worker is stuck.
 */
#define SPMVD_IPC_HEARTBEAT_MS 1000

/* The fd the front end hands the worker its end of the socketpair on. */
#define SPMVD_IPC_WORKER_FD 3

/*
 * Creates a socketpair for a worker: sv[0] for the front end (non-blocking,
 * close-on-exec), sv[1] for the worker.  Returns 0 or SPMV_EIO.
 */
int spmvd_ipc_pair(int sv[2], struct spmv_error *err);

/*
 * Sends msg (borrowed) with nfds fds (borrowed: the caller still closes
 * them).  Returns 0, SPMV_EBUSY when a non-blocking socket is full,
 * SPMV_ECLOSED when the peer is gone, or SPMV_ETOOBIG / SPMV_EIO.
 */
int spmvd_ipc_send(int fd, const json_t *msg, const int *fds, int nfds,
                   struct spmv_error *err);

/*
 * Receives one message: *msg is a new reference, fds[0..*nfds) are new fds
 * owned by the caller (at most maxfds; extra ones are closed).  Returns 0,
 * SPMV_EBUSY when nothing is waiting on a non-blocking socket,
 * SPMV_ECLOSED at end of stream, or SPMV_EPROTO / SPMV_EIO.
 */
int spmvd_ipc_recv(int fd, json_t **msg, int *fds, int *nfds, int maxfds,
                   struct spmv_error *err);

/*
 * Returns a new reference to p as JSON: {rows, cols, nnz, rl_min, rl_max,
 * rl_mean, rl_sigma, rl_cv, empty_rows, ell_fill, hyb_k, ndiags, dia_fill,
 * col_locality, hist:[...]} (also the "profile" of the info reply).
 */
json_t *spmvd_ipc_profile_pack(const struct spmv_profile *p);
/* Reads what spmvd_ipc_profile_pack() wrote (j borrowed); 0 or SPMV_EPROTO. */
int spmvd_ipc_profile_unpack(const json_t *j, struct spmv_profile *p);

/* Returns a new reference to a decision d (borrowed) with its trials. */
json_t *spmvd_ipc_decision_pack(const struct spmvd_decision *d);
/*
 * Reads what spmvd_ipc_decision_pack() wrote (j borrowed) into d, which is
 * initialised here and owns its trials (spmvd_decision_fini()).  Returns 0,
 * SPMV_EPROTO or SPMV_ENOMEM.
 */
int spmvd_ipc_decision_unpack(const json_t *j, struct spmvd_decision *d);

/* A new reference to d as JSON: a number, or for what JSON cannot hold
 * the string "NaN", "Infinity" or "-Infinity" (a list's results). */
json_t *spmvd_ipc_real(double d);
/* The value of such a JSON real (a string other than those: NaN). */
double spmvd_ipc_real_value(const json_t *j);

/* Returns a new reference to a trial's JSON {config, status, time_us, ...}. */
json_t *spmvd_ipc_trial_pack(const struct spmvd_trial *t);

#endif /* SPMVD_IPC_H */
