/* spmv_wire.c: frames of the spmvd protocol: header, JSON part, blocking I/O. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "spmv_wire.h"

/* Default bounds: 1 MiB of JSON, 4 GiB of payload, nesting depth 16. */
#define WIRE_DEFAULT_MAX_JSON (1u << 20)
#define WIRE_DEFAULT_MAX_PAYLOAD (UINT64_C(4) << 30)
#define WIRE_DEFAULT_MAX_DEPTH 16

/* Largest single read() or write(): keeps every count within ssize_t. */
#define WIRE_IO_CHUNK ((size_t)1 << 30)

/* Fills lim with the default limits. */
void spmv_wire_limits_default(struct spmv_wire_limits *lim)
{
  lim->max_json = WIRE_DEFAULT_MAX_JSON;
  lim->max_payload = WIRE_DEFAULT_MAX_PAYLOAD;
  lim->max_depth = WIRE_DEFAULT_MAX_DEPTH;
}

static void put_u16(uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
  put_u16(p, (uint16_t)v);
  put_u16(p + 2, (uint16_t)(v >> 16));
}

static void put_u64(uint8_t *p, uint64_t v)
{
  put_u32(p, (uint32_t)v);
  put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get_u16(const uint8_t *p)
{
  return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static uint32_t get_u32(const uint8_t *p)
{
  return (uint32_t)get_u16(p) | (uint32_t)get_u16(p + 2) << 16;
}

static uint64_t get_u64(const uint8_t *p)
{
  return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* Writes h into out in little-endian order, whatever the host order. */
void spmv_wire_header_encode(const struct spmv_wire_header *h,
                             uint8_t out[SPMV_WIRE_HEADER_SIZE])
{
  put_u32(out + 0, h->magic);
  put_u16(out + 4, h->version);
  put_u16(out + 6, h->flags);
  put_u32(out + 8, h->json_len);
  put_u32(out + 12, h->reserved);
  put_u64(out + 16, h->payload_len);
}

/* Decodes a header and checks every field against the protocol and lim. */
int spmv_wire_header_decode(const uint8_t in[SPMV_WIRE_HEADER_SIZE],
                            const struct spmv_wire_limits *lim,
                            struct spmv_wire_header *h,
                            struct spmv_error *err)
{
  h->magic = get_u32(in + 0);
  h->version = get_u16(in + 4);
  h->flags = get_u16(in + 6);
  h->json_len = get_u32(in + 8);
  h->reserved = get_u32(in + 12);
  h->payload_len = get_u64(in + 16);

  if (h->magic != SPMV_WIRE_MAGIC)
    return spmv_error_set(err, SPMV_EPROTO,
                          "bad frame magic 0x%08x (expected 0x%08x, \"SPMV\")",
                          (unsigned)h->magic, (unsigned)SPMV_WIRE_MAGIC);
  if (h->flags != 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "frame header flags 0x%04x must be 0",
                          (unsigned)h->flags);
  if (h->reserved != 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "frame header reserved field 0x%08x must be 0",
                          (unsigned)h->reserved);
  if (h->json_len == 0)
    return spmv_error_set(err, SPMV_EPROTO,
                          "frame json_len is 0: a frame needs a JSON object");
  if (h->json_len > lim->max_json)
    return spmv_error_set(err, SPMV_ELIMIT,
                          "frame json_len %u exceeds the limit max_json = %u bytes",
                          (unsigned)h->json_len, (unsigned)lim->max_json);
  if (h->payload_len > lim->max_payload)
    return spmv_error_set(err, SPMV_ELIMIT,
                          "frame payload_len %llu exceeds the limit max_payload = %llu bytes",
                          (unsigned long long)h->payload_len,
                          (unsigned long long)lim->max_payload);
  return 0;
}

int spmv_wire_header_check_version(const struct spmv_wire_header *h,
                                   const char *who, struct spmv_error *err)
{
  if (h->version == SPMV_PROTO_VERSION)
    return 0;
  return spmv_error_set(err, SPMV_EVERSION,
                        "frame of protocol version %u, %s speaks %d",
                        (unsigned)h->version, who, SPMV_PROTO_VERSION);
}

/*
 * Returns the deepest nesting of objects and arrays in the text, stopping
 * as soon as it passes max (so a hostile text costs one linear scan and
 * never reaches the recursive parser).  Brackets inside strings do not count.
 */
static int json_text_depth(const char *buf, size_t len, int max)
{
  int depth = 0, deepest = 0, in_string = 0;
  size_t i;

  for (i = 0; i < len; i++) {
    char c = buf[i];

    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = 0;
      continue;
    }
    if (c == '"') {
      in_string = 1;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > max)
          break;
      }
    } else if (c == '}' || c == ']') {
      depth--;
    }
  }
  return deepest;
}

/* Parses the JSON part of a frame; returns a new reference or NULL. */
json_t *spmv_wire_json_parse(const char *buf, size_t len,
                             const struct spmv_wire_limits *lim,
                             struct spmv_error *err)
{
  json_error_t jerr;
  json_t *obj;
  int depth;

  if (len > lim->max_json) {
    spmv_error_set(err, SPMV_ELIMIT,
                   "JSON of %zu bytes exceeds the limit max_json = %u bytes",
                   len, (unsigned)lim->max_json);
    return NULL;
  }
  depth = json_text_depth(buf, len, lim->max_depth);
  if (depth > lim->max_depth) {
    spmv_error_set(err, SPMV_EPROTO,
                   "JSON nested deeper than the limit max_depth = %d",
                   lim->max_depth);
    return NULL;
  }
  obj = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
  if (obj == NULL) {
    spmv_error_set(err, SPMV_EPROTO, "invalid JSON at byte %d: %s",
                   jerr.position, jerr.text);
    return NULL;
  }
  if (!json_is_object(obj)) {
    spmv_error_set(err, SPMV_EPROTO, "the JSON of a frame must be an object");
    json_decref(obj);
    return NULL;
  }
  return obj;
}

/* Serialises obj compactly into a new malloc'd buffer owned by the caller. */
char *spmv_wire_json_dump(const json_t *obj, size_t *len)
{
  size_t need, got;
  char *buf;

  need = json_dumpb(obj, NULL, 0, JSON_COMPACT);
  if (need == 0)
    return NULL;
  buf = malloc(need + 1);
  if (buf == NULL)
    return NULL;
  got = json_dumpb(obj, buf, need, JSON_COMPACT);
  if (got != need) {
    free(buf);
    return NULL;
  }
  buf[need] = '\0';
  *len = need;
  return buf;
}

/*
 * Writes the iovecs wholly, resuming after short writes and EINTR.  Sockets
 * get MSG_NOSIGNAL so that a vanished peer is an error, not a SIGPIPE; other
 * descriptors (pipes) fall back to writev().  Returns 0 or -errno.
 */
static int write_all(int fd, struct iovec *iov, int iovcnt)
{
  int use_send = 1;

  while (iovcnt > 0) {
    struct iovec chunk[4];
    size_t total = 0;
    ssize_t n;
    int k;

    /* Cap the bytes of one call so the count fits in ssize_t. */
    for (k = 0; k < iovcnt && k < 4 && total < WIRE_IO_CHUNK; k++) {
      chunk[k] = iov[k];
      if (chunk[k].iov_len > WIRE_IO_CHUNK - total)
        chunk[k].iov_len = WIRE_IO_CHUNK - total;
      total += chunk[k].iov_len;
    }
    if (use_send) {
      struct msghdr msg;

      memset(&msg, 0, sizeof msg);
      msg.msg_iov = chunk;
      msg.msg_iovlen = (size_t)k;
      n = sendmsg(fd, &msg, MSG_NOSIGNAL);
      if (n < 0 && errno == ENOTSOCK) {
        use_send = 0;
        continue;
      }
    } else {
      n = writev(fd, chunk, k);
    }
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    /* Drop what was written from the front of iov. */
    while (n > 0 && iovcnt > 0) {
      if ((size_t)n >= iov->iov_len) {
        n -= (ssize_t)iov->iov_len;
        iov++;
        iovcnt--;
      } else {
        iov->iov_base = (char *)iov->iov_base + n;
        iov->iov_len -= (size_t)n;
        n = 0;
      }
    }
    while (iovcnt > 0 && iov->iov_len == 0) {
      iov++;
      iovcnt--;
    }
  }
  return 0;
}

/* Maps -errno from a write or read to a protocol error code. */
static int io_error(struct spmv_error *err, int neg_errno, const char *what)
{
  if (neg_errno == -EPIPE || neg_errno == -ECONNRESET)
    return spmv_error_set(err, SPMV_ECLOSED,
                          "connection closed by the peer while %s", what);
  return spmv_error_set(err, SPMV_EIO, "%s: %s", what, strerror(-neg_errno));
}

/* Writes one whole frame (header, JSON, payload) to a blocking fd. */
int spmv_wire_write_frame(int fd, const json_t *json, const void *payload,
                          uint64_t payload_len, struct spmv_error *err)
{
  uint8_t hdr[SPMV_WIRE_HEADER_SIZE];
  struct spmv_wire_header h;
  struct iovec iov[3];
  size_t json_len;
  char *text;
  int rc;

  if (json == NULL || !json_is_object(json))
    return spmv_error_set(err, SPMV_EINVAL,
                          "a frame needs a JSON object");
  if (payload_len > 0 && payload == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "payload_len %llu with no payload",
                          (unsigned long long)payload_len);
  if (payload_len > SIZE_MAX)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "payload of %llu bytes is too large for this host",
                          (unsigned long long)payload_len);
  text = spmv_wire_json_dump(json, &json_len);
  if (text == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "cannot serialise the JSON");
  if (json_len > UINT32_MAX) {
    free(text);
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "JSON of %zu bytes does not fit a frame", json_len);
  }
  h.magic = SPMV_WIRE_MAGIC;
  h.version = SPMV_PROTO_VERSION;
  h.flags = 0;
  h.json_len = (uint32_t)json_len;
  h.reserved = 0;
  h.payload_len = payload_len;
  spmv_wire_header_encode(&h, hdr);

  iov[0].iov_base = hdr;
  iov[0].iov_len = sizeof hdr;
  iov[1].iov_base = text;
  iov[1].iov_len = json_len;
  iov[2].iov_base = (void *)payload;
  iov[2].iov_len = (size_t)payload_len;
  rc = write_all(fd, iov, payload_len > 0 ? 3 : 2);
  free(text);
  if (rc < 0)
    return io_error(err, rc, "writing a frame");
  return 0;
}

/*
 * Reads exactly len bytes, resuming after short reads and EINTR.  Returns
 * the bytes read (less than len only at end of stream) or -errno.
 */
static ssize_t read_all(int fd, void *buf, size_t len)
{
  size_t got = 0;

  while (got < len) {
    size_t want = len - got;
    ssize_t n;

    if (want > WIRE_IO_CHUNK)
      want = WIRE_IO_CHUNK;
    n = read(fd, (char *)buf + got, want);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n == 0)
      break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

/* Reads len bytes of a frame's part; a short read is a truncated frame. */
static int read_part(int fd, void *buf, size_t len, const char *part,
                     struct spmv_error *err)
{
  ssize_t n = read_all(fd, buf, len);

  if (n < 0)
    return io_error(err, (int)n, "reading a frame");
  if ((size_t)n < len)
    return spmv_error_set(err, SPMV_EPROTO,
                          "truncated frame: the stream ended after %zd of %zu bytes of the %s",
                          n, len, part);
  return 0;
}

/* Reads one whole frame, checking the header against lim before allocating. */
int spmv_wire_read_frame(int fd, const struct spmv_wire_limits *lim,
                         json_t **json, void **payload,
                         uint64_t *payload_len, struct spmv_error *err)
{
  uint8_t hdr[SPMV_WIRE_HEADER_SIZE];
  struct spmv_wire_header h;
  char *text = NULL;
  void *data = NULL;
  json_t *obj = NULL;
  ssize_t n;
  int rc;

  *json = NULL;
  *payload = NULL;
  *payload_len = 0;
  n = read_all(fd, hdr, sizeof hdr);
  if (n < 0)
    return io_error(err, (int)n, "reading a frame");
  if (n == 0)
    return spmv_error_set(err, SPMV_ECLOSED, "connection closed by the peer");
  if ((size_t)n < sizeof hdr)
    return spmv_error_set(err, SPMV_EPROTO,
                          "truncated frame: the stream ended after %zd of %d bytes of the header",
                          n, SPMV_WIRE_HEADER_SIZE);
  rc = spmv_wire_header_decode(hdr, lim, &h, err);
  if (rc < 0)
    return rc;
  if (h.payload_len > SIZE_MAX)
    return spmv_error_set(err, SPMV_ETOOBIG,
                          "payload of %llu bytes is too large for this host",
                          (unsigned long long)h.payload_len);

  text = malloc(h.json_len);
  if (text == NULL) {
    rc = spmv_error_set(err, SPMV_ENOMEM,
                        "cannot allocate %u bytes for a frame's JSON",
                        (unsigned)h.json_len);
    goto fail;
  }
  rc = read_part(fd, text, h.json_len, "JSON", err);
  if (rc < 0)
    goto fail;
  obj = spmv_wire_json_parse(text, h.json_len, lim, err);
  if (obj == NULL) {
    rc = err != NULL ? err->code : SPMV_EPROTO;
    goto fail;
  }
  if (h.payload_len > 0) {
    data = malloc((size_t)h.payload_len);
    if (data == NULL) {
      rc = spmv_error_set(err, SPMV_ENOMEM,
                          "cannot allocate %llu bytes for a frame's payload",
                          (unsigned long long)h.payload_len);
      goto fail;
    }
    rc = read_part(fd, data, (size_t)h.payload_len, "payload", err);
    if (rc < 0)
      goto fail;
  }
  free(text);
  *json = obj;
  *payload = data;
  *payload_len = h.payload_len;
  return 0;
fail:
  free(text);
  free(data);
  json_decref(obj);
  return rc;
}

ssize_t spmv_wire_sendmsg(int fd, const struct iovec *iov, int n, const int *fds,
                          int nfds)
{
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int) * SPMV_WIRE_MAX_FDS)];
  } ctl;
  struct msghdr mh;
  ssize_t k;

  if (nfds < 0 || nfds > SPMV_WIRE_MAX_FDS) {
    errno = EINVAL;
    return -1;
  }
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = (struct iovec *)iov;
  mh.msg_iovlen = (size_t)n;
  if (nfds > 0) {
    struct cmsghdr *cm;

    memset(&ctl, 0, sizeof ctl);
    mh.msg_control = ctl.buf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
  }
  do
    k = sendmsg(fd, &mh, MSG_NOSIGNAL);
  while (k < 0 && errno == EINTR);
  return k;
}

void spmv_wire_csr_layout(int64_t rows, int64_t nnz,
                          struct spmv_wire_csr_layout *l)
{
  l->off_row = 0;
  l->off_col = (size_t)(rows + 1) * sizeof(int64_t);
  l->off_val = l->off_col + ((size_t)nnz * sizeof(int32_t) + 7) / 8 * 8;
  l->size = l->off_val + (size_t)nnz * sizeof(double);
}

int spmv_wire_spin_default(void)
{
  return sysconf(_SC_NPROCESSORS_ONLN) >= 4 ? 200 : 0;
}

int spmv_wire_spin(int fd, int us)
{
  struct pollfd p = {.fd = fd, .events = POLLIN};
  struct timespec t0, t;

  if (us <= 0)
    return 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (poll(&p, 1, 0) > 0)
      return 1;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 >= us)
      return 0;
  }
}
