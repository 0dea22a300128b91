/* spmv_load_memfd.c: libspmvclient writes a matrix into a sealed memfd in
 * the daemon's host layout, so that a load sends no byte of it and the
 * daemon copies nothing (a load with "memfd": true, schema/PROTOCOL.md). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spmv_client_int.h"
#include "spmv_wire.h"

/* The most bytes one pwrite() takes, and the size of the buffer f32
 * values are widened in on their way. */
#define WRITE_CHUNK ((size_t)1 << 20)

/* Writes n bytes of p at offset off of fd; 0 or -1. */
static int write_at(int fd, const void *p, size_t n, size_t off)
{
  const char *c = p;

  while (n > 0) {
    ssize_t w = pwrite(fd, c, n < WRITE_CHUNK ? n : WRITE_CHUNK, (off_t)off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    c += w;
    n -= (size_t)w;
    off += (size_t)w;
  }
  return 0;
}

/*
 * Writes the three arrays at their offsets of layout l.  pwrite(), not a
 * writable mapping: the kernel then fills the file's new pages as it
 * allocates them, where stores through a mapping fault on every page
 * first, which made the write the largest step of a large cache hit.
 * The column padding is never written: the file's holes read as zeros.
 */
static int write_layout(int fd, const struct spmv_wire_csr_layout *l,
                        enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                        const int64_t *row_ptr, const int32_t *col_idx,
                        const void *values)
{
  size_t vn = WRITE_CHUNK / sizeof(double);
  double *buf;
  int rc = 0;

  if (write_at(fd, row_ptr, (size_t)(rows + 1) * sizeof *row_ptr,
               l->off_row) < 0 ||
      write_at(fd, col_idx, (size_t)nnz * sizeof *col_idx, l->off_col) < 0)
    return -1;
  if (dtype == SPMV_F64)
    return write_at(fd, values, (size_t)nnz * sizeof(double), l->off_val);
  /* The host copy holds doubles: f32 values widened a chunk at a time. */
  if (!(buf = malloc(WRITE_CHUNK)))
    return -1;
  for (int64_t k = 0; k < nnz && rc == 0; k += (int64_t)vn) {
    size_t n = (size_t)(nnz - k) < vn ? (size_t)(nnz - k) : vn;
    const float *f = (const float *)values + k;
    for (size_t i = 0; i < n; i++)
      buf[i] = f[i];
    rc = write_at(fd, buf, n * sizeof *buf,
                  l->off_val + (size_t)k * sizeof *buf);
  }
  free(buf);
  return rc;
}

int spmvc_csr_memfd(enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                    const int64_t *row_ptr, const int32_t *col_idx,
                    const void *values)
{
  struct spmv_wire_csr_layout l;
  int fd;

  spmv_wire_csr_layout(rows, nnz, &l);
  fd = memfd_create("spmv-matrix", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return -1;
  /* Write-sealed, so that the matrix cannot change after the daemon
   * validated it; fixed in size, so that no access to it faults.  No
   * writable mapping of it is left for F_SEAL_WRITE to refuse. */
  if (ftruncate(fd, (off_t)l.size) < 0 ||
      write_layout(fd, &l, dtype, rows, nnz, row_ptr, col_idx, values) < 0 ||
      fcntl(fd, F_ADD_SEALS,
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}
