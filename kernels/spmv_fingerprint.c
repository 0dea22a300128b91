/* spmv_fingerprint.c: XXH3-128 of a CSR's structure, and its hex form. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack: no allocation */
#include <xxhash.h>

#include "spmv_profile.h"

/* Elements converted per chunk on big-endian hosts. */
#define LE_CHUNK 1024

/* Returns 1 when the host stores integers little-endian. */
static int host_is_le(void)
{
  const uint16_t one = 1;

  return *(const unsigned char *)&one == 1;
}

/* Feeds n integers of width bytes to the hash as little-endian bytes. */
static void update_le(XXH3_state_t *st, const void *a, int64_t n, int width)
{
  const unsigned char *p = a;
  unsigned char buf[LE_CHUNK * 8];
  int64_t i, m;
  int b;

  if (host_is_le()) {
    if (n > 0)
      XXH3_128bits_update(st, p, (size_t)n * (size_t)width);
    return;
  }
  for (; n > 0; n -= m, p += m * width) {
    m = n < LE_CHUNK ? n : LE_CHUNK;
    for (i = 0; i < m; i++)
      for (b = 0; b < width; b++)
        buf[i * width + b] = p[i * width + width - 1 - b];
    XXH3_128bits_update(st, buf, (size_t)m * (size_t)width);
  }
}

/*
 * Hashes rows, cols, nnz (int64 LE), row_ptr (int64 LE), then col_idx
 * (int32 LE) of A; values never enter.  A must be valid.
 */
void spmv_fingerprint_compute(const struct spmv_csr *A,
                              struct spmv_fingerprint *fp)
{
  XXH3_state_t st;
  XXH128_hash_t h;
  int64_t dims[3];

  dims[0] = A->rows;
  dims[1] = A->cols;
  dims[2] = A->nnz;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  update_le(&st, dims, 3, 8);
  update_le(&st, A->row_ptr, A->rows + 1, 8);
  update_le(&st, A->col_idx, A->nnz, 4);
  h = XXH3_128bits_digest(&st);
  fp->hi = h.high64;
  fp->lo = h.low64;
}

/* Writes 32 lower-case hex digits (hi, then lo) and a NUL into out. */
void spmv_fingerprint_hex(const struct spmv_fingerprint *fp, char out[33])
{
  snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, fp->hi, fp->lo);
}

/* Returns the value of hex digit c, or -1. */
static int hex_digit(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Parses exactly 32 hex digits into fp; returns 0 or SPMV_EINVAL. */
int spmv_fingerprint_parse(const char *hex, struct spmv_fingerprint *fp)
{
  uint64_t w[2] = { 0, 0 };
  int i, d;

  if (hex == NULL || strlen(hex) != 32)
    return SPMV_EINVAL;
  for (i = 0; i < 32; i++) {
    d = hex_digit(hex[i]);
    if (d < 0)
      return SPMV_EINVAL;
    w[i / 16] = (w[i / 16] << 4) | (uint64_t)d;
  }
  fp->hi = w[0];
  fp->lo = w[1];
  return 0;
}
