/* spmvd_conn_impl.h: what spmvd_conn.c and spmvd_conn_read.c share. */
#ifndef SPMVD_CONN_IMPL_H
#define SPMVD_CONN_IMPL_H

#include <stddef.h>

#include "spmvd_conn.h"

/* Replies waiting for a slow reader before reading pauses. */
#define SPMVD_CONN_MAX_QUEUED ((size_t)64 << 20)

/* Makes c->vec hold size bytes for the request being read: 0, 1 when it is
 * in use (the request takes a buffer of its own), or a negative code. */
int spmvd_conn_vec_reserve(struct spmvd_conn *c, size_t size,
                           struct spmv_error *err);

/* Closes the descriptors received with the current frame. */
void spmvd_conn_drop_fds(struct spmvd_conn *c);

#endif /* SPMVD_CONN_IMPL_H */
