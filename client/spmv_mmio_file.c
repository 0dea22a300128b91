/* spmv_mmio_file.c: reads a Matrix Market file, gunzipping it if needed. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "spmv_mmio.h"

/* Growth unit of the buffers when the final size is unknown. */
#define CHUNK ((size_t)1 << 20)

/*
 * Reads all of fd into a new buffer (*buf, owned by the caller, *len
 * bytes).  size_hint is the size from fstat (0 if unknown); the read goes
 * on past it, for files that grow or do not report a size.
 */
static int slurp(int fd, size_t size_hint, const char *path, char **buf,
                 size_t *len, struct spmv_error *err)
{
  size_t cap = size_hint + 1, n = 0;
  char *b = malloc(cap), *nb;
  int rc;

  if (b == NULL)
    goto nomem;
  for (;;) {
    ssize_t got;

    if (n == cap) {
      cap = cap + (cap > CHUNK ? cap : CHUNK);
      if ((nb = realloc(b, cap)) == NULL)
        goto nomem;
      b = nb;
    }
    got = read(fd, b + n, cap - n > INT_MAX ? INT_MAX : cap - n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      rc = spmv_error_set(err, SPMV_EIO, "%s: cannot read: %s", path, strerror(errno));
      goto fail;
    }
    if (got == 0)
      break;
    n += (size_t)got;
  }
  *buf = b;
  *len = n;
  return 0;

nomem:
  rc = spmv_error_set(err, SPMV_ENOMEM, "%s: out of memory reading %zu bytes",
                      path, cap);
fail:
  free(b);
  return rc;
}

/*
 * Decompresses the gzip data in, which may hold several members, into a
 * new buffer (*out, owned by the caller, *outlen bytes).  Bytes after the
 * last member that do not start another one are ignored, as gzip does.
 */
static int gunzip(const unsigned char *in, size_t inlen, const char *path,
                  char **out, size_t *outlen, struct spmv_error *err)
{
  z_stream zs;
  size_t cap = inlen * 4 + CHUNK, n = 0;
  char *b = malloc(cap), *nb;
  int zrc, rc;

  memset(&zs, 0, sizeof zs);
  if (b == NULL || inflateInit2(&zs, 15 + 16) != Z_OK) {
    free(b);
    return spmv_error_set(err, SPMV_ENOMEM, "%s: out of memory for gzip", path);
  }
  zs.next_in = (unsigned char *)in;
  for (;;) {
    if (zs.avail_in == 0) {
      size_t left = inlen - (size_t)(zs.next_in - in);
      zs.avail_in = left > UINT_MAX ? UINT_MAX : (unsigned)left;
    }
    if (n == cap) {
      cap += cap;
      if ((nb = realloc(b, cap)) == NULL) {
        rc = spmv_error_set(err, SPMV_ENOMEM, "%s: out of memory decompressing "
                            "(%zu bytes so far)", path, n);
        goto fail;
      }
      b = nb;
    }
    zs.next_out = (unsigned char *)b + n;
    zs.avail_out = cap - n > UINT_MAX ? UINT_MAX : (unsigned)(cap - n);
    zrc = inflate(&zs, Z_NO_FLUSH);
    n = (size_t)((char *)zs.next_out - b);
    if (zrc == Z_STREAM_END) {
      size_t left = inlen - (size_t)(zs.next_in - in);
      if (left >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (zrc == Z_MEM_ERROR) {
      rc = spmv_error_set(err, SPMV_ENOMEM, "%s: out of memory in zlib", path);
      goto fail;
    }
    if (zrc == Z_BUF_ERROR && zs.avail_out > 0) {
      rc = spmv_error_set(err, SPMV_EPARSE, "%s: gzip data truncated after %zu "
                          "bytes of text", path, n);
      goto fail;
    }
    if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
      rc = spmv_error_set(err, SPMV_EPARSE, "%s: corrupt gzip data after %zu bytes "
                          "of text: %s", path, n, zs.msg ? zs.msg : "unknown error");
      goto fail;
    }
  }
  inflateEnd(&zs);
  *out = b;
  *outlen = n;
  return 0;

fail:
  inflateEnd(&zs);
  free(b);
  return rc;
}

/* Reads a Matrix Market file, plain or gzip; see spmv_mmio.h. */
int spmv_mmio_read(const char *path, struct spmv_csr **out,
                   struct spmv_mmio_info *info, struct spmv_error *err)
{
  struct stat st;
  char *raw = NULL, *text = NULL;
  size_t rawlen = 0, textlen = 0;
  int fd = -1, rc;

  if (path == NULL || out == NULL)
    return spmv_error_set(err, SPMV_EINVAL, "spmv_mmio_read: no path or no output");
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return spmv_error_set(err, SPMV_EIO, "%s: cannot open: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0) {
    rc = spmv_error_set(err, SPMV_EIO, "%s: cannot stat: %s", path, strerror(errno));
    goto out;
  }
  if (S_ISDIR(st.st_mode)) {
    rc = spmv_error_set(err, SPMV_EIO, "%s: is a directory", path);
    goto out;
  }
  rc = slurp(fd, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0, path, &raw, &rawlen, err);
  if (rc != 0)
    goto out;
  if (rawlen >= 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b) {
    rc = gunzip((const unsigned char *)raw, rawlen, path, &text, &textlen, err);
    if (rc != 0)
      goto out;
    free(raw);
    raw = NULL;
    rc = spmv_mmio_parse(text, textlen, path, out, info, err);
  } else {
    rc = spmv_mmio_parse(raw, rawlen, path, out, info, err);
  }

out:
  free(text);
  free(raw);
  close(fd);
  return rc;
}
