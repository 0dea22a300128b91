/* spmvd_shm.h: shared memory (memfd) between the front end and a worker. */
#ifndef SPMVD_SHM_H
#define SPMVD_SHM_H

#include <stddef.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "spmv_wire.h"

/*
 * A region of anonymous shared memory: a memfd and, while mapped, its
 * mapping.  Embedded by its owner (libuv style): _open/_map fill it and
 * _close releases it.  A zeroed struct with fd = -1 is closed.
 */
struct spmvd_shm {
  int fd;        /* the memfd, or -1 */
  void *addr;    /* the mapping, or NULL when not mapped */
  size_t size;   /* bytes of the region */
  int readonly;  /* mapped without write access (spmvd_shm_map_ro) */
};

/* Marks s as closed (fd -1, not mapped). */
void spmvd_shm_init(struct spmvd_shm *s);

/*
 * Creates a memfd of size bytes named name (for /proc/PID/fd) and maps it
 * read-write.  Pages are allocated only when touched.  Returns 0 or
 * SPMV_ENOMEM / SPMV_EIO with a message.
 */
int spmvd_shm_open(struct spmvd_shm *s, const char *name, size_t size,
                   struct spmv_error *err);

/*
 * Maps a memfd received from the peer (fd is stolen: closed by
 * spmvd_shm_close, or at once on failure) after checking that it holds at
 * least size bytes.  Returns 0 or SPMV_EIO / SPMV_EPROTO.
 */
int spmvd_shm_map(struct spmvd_shm *s, int fd, size_t size,
                  struct spmv_error *err);

/*
 * As spmvd_shm_map(), mapped read-only: a memfd sealed against writing
 * (F_SEAL_WRITE, a client's matrix) cannot be mapped shared and writable.
 */
int spmvd_shm_map_ro(struct spmvd_shm *s, int fd, size_t size,
                     struct spmv_error *err);

/* Whether fd is a memfd sealed against writing (F_GET_SEALS shows
 * F_SEAL_WRITE): such a one must be mapped with spmvd_shm_map_ro(). */
int spmvd_shm_write_sealed(int fd);

/* Unmaps the region but keeps the memfd (e.g. a host copy held for respawn). */
void spmvd_shm_unmap(struct spmvd_shm *s);

/* Unmaps and closes the region; a closed one is a no-op. */
void spmvd_shm_close(struct spmvd_shm *s);

/* The host copy of a matrix is laid out as spmv_wire_csr_layout() says
 * (client/spmv_wire.h): the client may write it itself (a memfd load). */

/* Fills A as a view (not to be freed) of a host copy mapped at base. */
void spmvd_shm_csr_view(void *base, int64_t rows, int64_t cols, int64_t nnz,
                        struct spmv_csr *A);

#endif /* SPMVD_SHM_H */
