/* spmvd_ops.h: the protocol's operations (PROTOCOL.md), served for a connection. */
#ifndef SPMVD_OPS_H
#define SPMVD_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spmv_error.h"
#include "spmvd_shm.h"

struct spmvd_conn;
struct spmvd_server;

/*
 * Checks a request (borrowed) once its JSON is read and before its payload
 * is: the op, hello first, the fields that size the payload, the exact
 * payload length and the limits.  On success *shm_size is the shared memory
 * to read the payload into (>= payload_len; 0 when none).  Returns 0 or a
 * negative SPMV_E* code with the message for the error reply.
 */
int spmvd_ops_begin(struct spmvd_conn *c, json_t *req, uint64_t payload_len,
                    size_t *shm_size, struct spmv_error *err);

/*
 * Serves a complete request (req borrowed; payload borrowed, an op may take
 * its contents).  Every path ends in one reply and spmvd_conn_done(), now
 * or when the worker answers.
 */
void spmvd_ops_run(struct spmvd_conn *c, json_t *req, int64_t id,
                   struct spmvd_shm *payload);

/* After a worker respawn: re-creates every resident matrix from its host copy. */
void spmvd_ops_readopt(struct spmvd_server *srv, int wk);

/* Frees a closing connection's device vectors (the worker's too). */
void spmvd_ops_vectors_release(struct spmvd_conn *c);

/* After a worker death: quarantines the configuration it was running. */
void spmvd_ops_worker_died(struct spmvd_server *srv, json_t *msg);

#endif /* SPMVD_OPS_H */
