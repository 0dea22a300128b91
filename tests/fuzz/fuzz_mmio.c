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

/* The largest dimension read.  A two-line file may declare 10^9 rows, and
 * building their offsets is the format's cost, not a bug: the fuzzer would
 * only time out on it.  Plain text is screened below; gzip input is held
 * to the same by ASan refusing allocations past 128 MiB, which the reader
 * must then answer as ENOMEM. */
#define MAX_DECLARED (1LL << 22)

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
  return "allocator_may_return_null=1:max_allocation_size_mb=128";
}
#endif
#endif

/* Whether the size line of a plain file (the first line after the banner
 * and comments) declares a dimension past MAX_DECLARED. */
static int too_large(const uint8_t *data, size_t size)
{
  const char *p = (const char *)data, *end = p + size;
  char line[128], *q, *next;
  long long v;

  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

    /* The input is not NUL-terminated: look only at a bounded copy. */
    snprintf(line, sizeof line, "%.*s", (int)(n < 127 ? n : 127), p);
    if (line[0] != '%' && line[strspn(line, " \t\r")] != '\0') {
      for (q = line; *q != '\0'; q = next) {
        v = strtoll(q, &next, 10);
        if (next == q)
          break;
        if (v > MAX_DECLARED)
          return 1;
      }
      return 0;
    }
    p += n + 1;
  }
  return 0;
}

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

  if (too_large(data, size))
    return 0;
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
