/* fuzz_mmio.c: a Matrix Market file, as spmvctl and libspmvclient read
 * one: parsed from memory, then read from a file (where gzip is detected
 * from the content, so a compressed input reaches the decompressor) both
 * as a matrix and as a dense vector. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "spmv_mmio.h"

/* One scratch file for the whole run, rewritten per input. */
static char scratch[4096];

/* Makes the scratch file once; returns 0, or -1 (the file paths are then
 * skipped, the memory one still runs). */
static int scratch_open(void)
{
  const char *tmp = getenv("TMPDIR");
  int fd;

  if (scratch[0] != '\0')
    return 0;
  snprintf(scratch, sizeof scratch, "%s/fuzz_mmio.XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  fd = mkstemp(scratch);
  if (fd < 0) {
    scratch[0] = '\0';
    return -1;
  }
  close(fd);
  return 0;
}

/* Writes the input to the scratch file; returns 0 or -1. */
static int scratch_write(const uint8_t *data, size_t size)
{
  FILE *f;
  int ok;

  if (scratch_open() != 0 || (f = fopen(scratch, "wb")) == NULL)
    return -1;
  ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spmv_mmio_info info;
  struct spmv_error err;
  struct spmv_csr *A = NULL;
  double *x = NULL;
  int64_t n = 0;

  spmv_error_clear(&err);
  if (spmv_mmio_parse((const char *)data, size, "fuzz", &A, &info, &err) == 0)
    A = spmv_csr_free(A);
  if (scratch_write(data, size) != 0)
    return 0;
  if (spmv_mmio_read(scratch, &A, &info, &err) == 0)
    A = spmv_csr_free(A);
  if (spmv_mmio_read_vector(scratch, &x, &n, &err) == 0)
    free(x);
  return 0;
}
