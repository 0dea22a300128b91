/* spmvd_shm.c: shared memory (memfd) between the front end and a worker. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spmvd_shm.h"

/* Marks s as closed (fd -1, not mapped). */
void spmvd_shm_init(struct spmvd_shm *s)
{
  s->fd = -1;
  s->addr = NULL;
  s->size = 0;
  s->readonly = 0;
}

static int map_fd(struct spmvd_shm *s, size_t size, int prot,
                  struct spmv_error *err)
{
  s->size = size;
  s->addr = NULL;
  if (size == 0)
    return 0;
  /* Populated at once: faulting a fresh memfd in page by page made a
   * load's copy into it and the first pass over it several times slower
   * than the memory's speed. */
  void *p = mmap(NULL, size, prot, MAP_SHARED | MAP_POPULATE, s->fd, 0);
  if (p == MAP_FAILED)
    return spmv_error_set(err, errno == ENOMEM ? SPMV_ENOMEM : SPMV_EIO,
                          "cannot map %zu bytes of shared memory: %s", size,
                          strerror(errno));
  s->addr = p;
  s->readonly = !(prot & PROT_WRITE);
  return 0;
}

/* Creates a memfd of size bytes and maps it read-write. */
int spmvd_shm_open(struct spmvd_shm *s, const char *name, size_t size,
                   struct spmv_error *err)
{
  int rc;

  spmvd_shm_init(s);
  s->fd = memfd_create(name, MFD_CLOEXEC);
  if (s->fd < 0)
    return spmv_error_set(err, SPMV_EIO, "memfd_create: %s", strerror(errno));
  if (ftruncate(s->fd, (off_t)size) < 0) {
    rc = spmv_error_set(err, SPMV_ENOMEM,
                        "cannot size shared memory to %zu bytes: %s", size,
                        strerror(errno));
    goto fail;
  }
  rc = map_fd(s, size, PROT_READ | PROT_WRITE, err);
  if (rc < 0)
    goto fail;
  return 0;
fail:
  close(s->fd);
  spmvd_shm_init(s);
  return rc;
}

/* Maps a memfd received from the peer (fd stolen) of at least size bytes
 * with protection prot. */
static int map_peer(struct spmvd_shm *s, int fd, size_t size, int prot,
                    struct spmv_error *err)
{
  struct stat st;
  int rc;

  spmvd_shm_init(s);
  s->fd = fd;
  if (fstat(fd, &st) < 0) {
    rc = spmv_error_set(err, SPMV_EIO, "fstat of shared memory: %s",
                        strerror(errno));
    goto fail;
  }
  if (st.st_size < 0 || (size_t)st.st_size < size) {
    rc = spmv_error_set(err, SPMV_EPROTO,
                        "shared memory holds %lld bytes, %zu expected",
                        (long long)st.st_size, size);
    goto fail;
  }
  rc = map_fd(s, size, prot, err);
  if (rc < 0)
    goto fail;
  return 0;
fail:
  close(fd);
  spmvd_shm_init(s);
  return rc;
}

/* Maps a memfd received from the peer (fd stolen) read-write. */
int spmvd_shm_map(struct spmvd_shm *s, int fd, size_t size,
                  struct spmv_error *err)
{
  return map_peer(s, fd, size, PROT_READ | PROT_WRITE, err);
}

/* Maps a memfd received from the peer (fd stolen) read-only. */
int spmvd_shm_map_ro(struct spmvd_shm *s, int fd, size_t size,
                     struct spmv_error *err)
{
  return map_peer(s, fd, size, PROT_READ, err);
}

/* Whether fd is a memfd sealed against writing. */
int spmvd_shm_write_sealed(int fd)
{
  int seals = fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_WRITE);
}

/* Unmaps the region but keeps the memfd. */
void spmvd_shm_unmap(struct spmvd_shm *s)
{
  if (s->addr)
    munmap(s->addr, s->size);
  s->addr = NULL;
}

/* Unmaps and closes the region; a closed one is a no-op. */
void spmvd_shm_close(struct spmvd_shm *s)
{
  spmvd_shm_unmap(s);
  if (s->fd >= 0)
    close(s->fd);
  spmvd_shm_init(s);
}

/* Fills A as a view of a host copy mapped at base. */
void spmvd_shm_csr_view(void *base, int64_t rows, int64_t cols, int64_t nnz,
                        struct spmv_csr *A)
{
  struct spmv_wire_csr_layout l;

  spmv_wire_csr_layout(rows, nnz, &l);
  A->rows = rows;
  A->cols = cols;
  A->nnz = nnz;
  A->row_ptr = (int64_t *)((char *)base + l.off_row);
  A->col_idx = (int32_t *)((char *)base + l.off_col);
  A->val = (double *)((char *)base + l.off_val);
}
