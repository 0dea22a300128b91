/* spmv_load_memfd.c: libspmvclient writes a matrix into a sealed memfd in
 * the daemon's host layout, so that a load sends no byte of it and the
 * daemon copies nothing (a load with "memfd": true, schema/PROTOCOL.md). */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spmv_client_int.h"
#include "spmv_wire.h"

/* Writes the three arrays into the mapping base of layout l. */
static void fill_layout(void *base, const struct spmv_wire_csr_layout *l,
                        enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                        const int64_t *row_ptr, const int32_t *col_idx,
                        const void *values)
{
  char *p = base;
  double *val = (double *)(p + l->off_val);

  memcpy(p + l->off_row, row_ptr, (size_t)(rows + 1) * sizeof *row_ptr);
  if (nnz > 0)
    memcpy(p + l->off_col, col_idx, (size_t)nnz * sizeof *col_idx);
  if (nnz > 0 && dtype == SPMV_F64) {
    memcpy(val, values, (size_t)nnz * sizeof *val);
  } else {
    const float *f = values;
    for (int64_t k = 0; k < nnz; k++)  /* the host copy holds doubles */
      val[k] = f[k];
  }
}

/* Maps fd (size bytes), fills it and unmaps it; 0 or -1. */
static int write_layout(int fd, const struct spmv_wire_csr_layout *l,
                        enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                        const int64_t *row_ptr, const int32_t *col_idx,
                        const void *values)
{
  void *p = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

  if (p == MAP_FAILED)
    return -1;
  fill_layout(p, l, dtype, rows, nnz, row_ptr, col_idx, values);
  /* F_SEAL_WRITE is refused while a writable shared mapping exists. */
  munmap(p, l->size);
  return 0;
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
   * validated it; fixed in size, so that no access to it faults. */
  if (ftruncate(fd, (off_t)l.size) < 0 ||
      write_layout(fd, &l, dtype, rows, nnz, row_ptr, col_idx, values) < 0 ||
      fcntl(fd, F_ADD_SEALS,
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}
