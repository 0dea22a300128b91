/* spmv_load_memfd.c: libspmvclient writes a matrix into a sealed memfd in
 * the daemon's host layout, so that a load sends no byte of it and the
 * daemon copies nothing (a load with "memfd": true, schema/PROTOCOL.md). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spmv_client_int.h"
#include "spmv_par.h"
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
 * Writes the three arrays at their offsets of layout l from one thread.
 * pwrite(), not a writable mapping: the kernel then fills the file's new
 * pages as it allocates them, where one thread's stores through a mapping
 * fault on every page first.  The column padding is never written: the
 * file's holes read as zeros.
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

/* A copy into the file's mapping, split over threads (spmv_par_range):
 * part [r0, r1) of each array, f32 values widened on the way. */
struct map_copy {
  char *map;
  const struct spmv_wire_csr_layout *l;
  enum spmv_dtype dtype;
  int64_t rows, nnz;
  const int64_t *row_ptr;
  const int32_t *col_idx;
  const void *values;
};

static void copy_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct map_copy *c = ctx;

  (void)t;
  memcpy(c->map + c->l->off_row + (size_t)r0 * 8, c->row_ptr + r0,
         (size_t)(r1 - r0) * 8);
}

static void copy_entries(void *ctx, int t, int64_t k0, int64_t k1)
{
  struct map_copy *c = ctx;
  double *v = (double *)(c->map + c->l->off_val);

  (void)t;
  memcpy(c->map + c->l->off_col + (size_t)k0 * 4, c->col_idx + k0,
         (size_t)(k1 - k0) * 4);
  if (c->dtype == SPMV_F64) {
    memcpy(v + k0, (const double *)c->values + k0, (size_t)(k1 - k0) * 8);
    return;
  }
  for (int64_t k = k0; k < k1; k++)
    v[k] = ((const float *)c->values)[k];
}

/*
 * Writes the layout through a shared mapping of fd, from n threads: the
 * threads' faults and copies proceed side by side where one pwrite()
 * allocates, clears and copies one page after another under the file's
 * lock.
 * The mapping is gone on return (the write seal needs that).  0, or -1
 * when fd cannot be mapped or its pages allocated.
 */
static int write_mapped(int fd, const struct spmv_wire_csr_layout *l,
                        enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                        const int64_t *row_ptr, const int32_t *col_idx,
                        const void *values, int n)
{
  struct map_copy c = {NULL, l, dtype, rows, nnz, row_ptr, col_idx, values};
  void *p;

  /* The pages allocated first, in one call: running out of memory is then
   * this error (as pwrite() would give) rather than a store's fault that
   * kills the process; the threads' faults only map and clear them. */
  if (fallocate(fd, 0, 0, (off_t)l->size) < 0 && errno != EOPNOTSUPP && errno != ENOSYS)
    return -1;
  p = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return -1;
  c.map = p;
  spmv_par_range(rows + 1, n, copy_rows, &c);
  spmv_par_range(nnz, n, copy_entries, &c);
  return munmap(p, l->size);
}

int spmvc_csr_memfd(enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                    const int64_t *row_ptr, const int32_t *col_idx,
                    const void *values)
{
  struct spmv_wire_csr_layout l;
  int fd, n = spmv_par_threads(nnz);

  spmv_wire_csr_layout(rows, nnz, &l);
  fd = memfd_create("spmv-matrix", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return -1;
  /* Write-sealed, so that the matrix cannot change after the daemon
   * validated it; fixed in size, so that no access to it faults.  No
   * writable mapping of it is left for F_SEAL_WRITE to refuse. */
  if (ftruncate(fd, (off_t)l.size) < 0 ||
      ((n < 2 || write_mapped(fd, &l, dtype, rows, nnz, row_ptr, col_idx,
                              values, n) < 0) &&
       write_layout(fd, &l, dtype, rows, nnz, row_ptr, col_idx, values) < 0) ||
      fcntl(fd, F_ADD_SEALS,
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}
