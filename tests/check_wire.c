/* check_wire.c: tests of the frame code: header, JSON part, I/O over sockets. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <check.h>

#include "spmv_wire.h"

/* A header that passes every check. */
static void good_header(struct spmv_wire_header *h)
{
  h->magic = SPMV_WIRE_MAGIC;
  h->version = SPMV_PROTO_VERSION;
  h->flags = 0;
  h->json_len = 2;
  h->reserved = 0;
  h->payload_len = 0;
}

/* Encodes h, decodes it with the default limits; returns the decode's code. */
static int decode_roundtrip(const struct spmv_wire_header *h,
                            struct spmv_wire_header *out,
                            struct spmv_error *err)
{
  struct spmv_wire_limits lim;
  uint8_t buf[SPMV_WIRE_HEADER_SIZE];

  spmv_wire_limits_default(&lim);
  spmv_wire_header_encode(h, buf);
  return spmv_wire_header_decode(buf, &lim, out, err);
}

START_TEST(test_limits_default)
{
  struct spmv_wire_limits lim;

  spmv_wire_limits_default(&lim);
  ck_assert_uint_eq(lim.max_json, 1u << 20);
  ck_assert_uint_eq(lim.max_payload, (uint64_t)4 << 30);
  ck_assert_int_eq(lim.max_depth, 16);
}
END_TEST

START_TEST(test_header_bytes)
{
  /* The byte layout is fixed, whatever the host's order. */
  static const uint8_t expect[SPMV_WIRE_HEADER_SIZE] = {
    'S', 'P', 'M', 'V', 0x01, 0x00, 0x00, 0x00,
    0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01
  };
  struct spmv_wire_header h;
  uint8_t buf[SPMV_WIRE_HEADER_SIZE];

  good_header(&h);
  h.json_len = 0x01020304u;
  h.payload_len = UINT64_C(0x0102030405060708);
  spmv_wire_header_encode(&h, buf);
  ck_assert_mem_eq(buf, expect, sizeof expect);
}
END_TEST

START_TEST(test_header_roundtrip)
{
  struct spmv_wire_header h, out;
  struct spmv_error err;

  good_header(&h);
  h.json_len = 1u << 20;
  h.payload_len = (uint64_t)4 << 30;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), 0);
  ck_assert_uint_eq(out.magic, SPMV_WIRE_MAGIC);
  ck_assert_uint_eq(out.version, SPMV_PROTO_VERSION);
  ck_assert_uint_eq(out.json_len, 1u << 20);
  ck_assert_uint_eq(out.payload_len, (uint64_t)4 << 30);

  /* Decoding leaves the version to spmv_wire_header_check_version. */
  h.version = 7;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), 0);
  ck_assert_uint_eq(out.version, 7);
  ck_assert_int_eq(spmv_wire_header_check_version(&out, "spmvd", &err),
                   SPMV_EVERSION);
  ck_assert_str_eq(err.msg, "frame of protocol version 7, spmvd speaks 1");
  out.version = SPMV_PROTO_VERSION;
  ck_assert_int_eq(spmv_wire_header_check_version(&out, "spmvd", &err), 0);
}
END_TEST

START_TEST(test_header_bad_magic)
{
  struct spmv_wire_header h, out;
  struct spmv_error err;

  good_header(&h);
  h.magic = 0x50545448u; /* "HTTP" */
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), SPMV_EPROTO);
  ck_assert_int_eq(err.code, SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "magic"));
}
END_TEST

START_TEST(test_header_bad_flags)
{
  struct spmv_wire_header h, out;
  struct spmv_error err;

  good_header(&h);
  h.flags = 0x8000;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "flags"));
}
END_TEST

START_TEST(test_header_bad_reserved)
{
  struct spmv_wire_header h, out;
  struct spmv_error err;

  good_header(&h);
  h.reserved = 1;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "reserved"));
}
END_TEST

START_TEST(test_header_zero_json)
{
  struct spmv_wire_header h, out;
  struct spmv_error err;

  good_header(&h);
  h.json_len = 0;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "json_len"));
}
END_TEST

START_TEST(test_header_json_over_limit)
{
  struct spmv_wire_header h, out;
  struct spmv_error err;

  good_header(&h);
  h.json_len = (1u << 20) + 1;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), SPMV_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "max_json"));
  ck_assert_ptr_nonnull(strstr(err.msg, "1048577"));
}
END_TEST

START_TEST(test_header_payload_over_limit)
{
  struct spmv_wire_header h, out;
  struct spmv_error err;

  good_header(&h);
  h.payload_len = ((uint64_t)4 << 30) + 1;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), SPMV_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "max_payload"));
  h.payload_len = UINT64_MAX;
  ck_assert_int_eq(decode_roundtrip(&h, &out, &err), SPMV_ELIMIT);
}
END_TEST

START_TEST(test_header_custom_limits)
{
  struct spmv_wire_limits lim = { 100, 1000, 4 };
  struct spmv_wire_header h, out;
  struct spmv_error err;
  uint8_t buf[SPMV_WIRE_HEADER_SIZE];

  good_header(&h);
  h.json_len = 100;
  h.payload_len = 1000;
  spmv_wire_header_encode(&h, buf);
  ck_assert_int_eq(spmv_wire_header_decode(buf, &lim, &out, &err), 0);
  h.json_len = 101;
  spmv_wire_header_encode(&h, buf);
  ck_assert_int_eq(spmv_wire_header_decode(buf, &lim, &out, &err), SPMV_ELIMIT);
  h.json_len = 100;
  h.payload_len = 1001;
  spmv_wire_header_encode(&h, buf);
  ck_assert_int_eq(spmv_wire_header_decode(buf, &lim, &out, &err), SPMV_ELIMIT);
}
END_TEST

/* Parses text with the default limits (or max_depth = depth when > 0). */
static json_t *parse(const char *text, int depth, struct spmv_error *err)
{
  struct spmv_wire_limits lim;

  spmv_wire_limits_default(&lim);
  if (depth > 0)
    lim.max_depth = depth;
  spmv_error_clear(err);
  return spmv_wire_json_parse(text, strlen(text), &lim, err);
}

START_TEST(test_json_object)
{
  struct spmv_error err;
  json_t *obj;

  obj = parse("{\"op\":\"hello\",\"id\":3}", 0, &err);
  ck_assert_ptr_nonnull(obj);
  ck_assert_str_eq(json_string_value(json_object_get(obj, "op")), "hello");
  ck_assert_int_eq(json_integer_value(json_object_get(obj, "id")), 3);
  json_decref(obj);
}
END_TEST

START_TEST(test_json_not_object)
{
  static const char *bad[] = { "[1,2]", "3", "\"op\"", "null", "true" };
  struct spmv_error err;
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_ptr_null(parse(bad[i], 0, &err));
    ck_assert_int_eq(err.code, SPMV_EPROTO);
  }
  parse(bad[0], 0, &err);
  ck_assert_ptr_nonnull(strstr(err.msg, "must be an object"));
}
END_TEST

START_TEST(test_json_invalid)
{
  static const char *bad[] = {
    "{", "{\"op\":}", "{\"op\":\"a\"} trailing", "{'op':1}",
    "{\"op\":\"a\",\"op\":\"b\"}", "{\"s\":\"\xff\xfe\"}", ""
  };
  struct spmv_error err;
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_ptr_null(parse(bad[i], 0, &err));
    ck_assert_int_eq(err.code, SPMV_EPROTO);
    ck_assert_ptr_nonnull(strstr(err.msg, "invalid JSON"));
  }
}
END_TEST

START_TEST(test_json_embedded_nul)
{
  static const char text[] = "{\"a\":\"x\0y\"}";
  struct spmv_wire_limits lim;
  struct spmv_error err;

  spmv_wire_limits_default(&lim);
  ck_assert_ptr_null(spmv_wire_json_parse(text, sizeof text - 1, &lim, &err));
  ck_assert_int_eq(err.code, SPMV_EPROTO);
}
END_TEST

/* Builds {"a":{"a":...{}...}} with depth levels of objects. */
static char *nested(int depth)
{
  char *s = malloc((size_t)depth * 6 + 1);
  int i, n = 0;

  for (i = 0; i < depth - 1; i++)
    n += sprintf(s + n, "{\"a\":");
  n += sprintf(s + n, "{}");
  for (i = 0; i < depth - 1; i++)
    s[n++] = '}';
  s[n] = '\0';
  return s;
}

START_TEST(test_json_depth)
{
  struct spmv_error err;
  char *s;
  json_t *obj;

  s = nested(16);
  obj = parse(s, 0, &err);
  ck_assert_ptr_nonnull(obj);
  json_decref(obj);
  free(s);

  s = nested(17);
  ck_assert_ptr_null(parse(s, 0, &err));
  ck_assert_int_eq(err.code, SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "max_depth = 16"));
  free(s);

  /* A hostile depth fails fast, long before the parser's own limit. */
  s = nested(100000);
  ck_assert_ptr_null(parse(s, 0, &err));
  ck_assert_ptr_nonnull(strstr(err.msg, "max_depth"));
  free(s);

  /* Arrays count too. */
  ck_assert_ptr_null(parse("{\"a\":[[[1]]]}", 3, &err));
  obj = parse("{\"a\":[[1]]}", 3, &err);
  ck_assert_ptr_nonnull(obj);
  json_decref(obj);
}
END_TEST

START_TEST(test_json_depth_strings)
{
  struct spmv_error err;
  json_t *obj;

  /* Brackets and escaped quotes inside strings are not nesting. */
  obj = parse("{\"a\":\"[[[[{{{{\\\"[[[[\"}", 2, &err);
  ck_assert_ptr_nonnull(obj);
  ck_assert_str_eq(json_string_value(json_object_get(obj, "a")),
                   "[[[[{{{{\"[[[[");
  json_decref(obj);
}
END_TEST

START_TEST(test_json_parse_over_limit)
{
  struct spmv_wire_limits lim = { 8, 0, 16 };
  struct spmv_error err;
  const char *text = "{\"op\":\"hello\"}";

  ck_assert_ptr_null(spmv_wire_json_parse(text, strlen(text), &lim, &err));
  ck_assert_int_eq(err.code, SPMV_ELIMIT);
}
END_TEST

START_TEST(test_json_dump)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;
  json_t *obj, *back;
  size_t len;
  char *text;

  spmv_wire_limits_default(&lim);
  obj = json_pack("{s:s, s:I, s:f, s:[i,i]}", "op", "multiply", "id",
                  (json_int_t)1 << 40, "alpha", 0.1, "v", 1, 2);
  text = spmv_wire_json_dump(obj, &len);
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(len, strlen(text));
  ck_assert_ptr_null(strchr(text, ' '));
  ck_assert_ptr_null(strchr(text, '\n'));
  back = spmv_wire_json_parse(text, len, &lim, &err);
  ck_assert_ptr_nonnull(back);
  ck_assert(json_equal(obj, back));
  /* Reals survive exactly. */
  ck_assert(json_real_value(json_object_get(back, "alpha")) == 0.1);
  json_decref(back);
  json_decref(obj);
  free(text);
}
END_TEST

/* A connected pair of stream sockets. */
static void pair(int sv[2])
{
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

START_TEST(test_frame_roundtrip)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;
  json_t *obj, *got;
  double x[5] = { 1.5, -2.0, 0.0, 1e300, -1e-300 };
  void *payload;
  uint64_t plen;
  int sv[2];

  spmv_wire_limits_default(&lim);
  pair(sv);
  obj = json_pack("{s:s, s:i}", "op", "multiply", "id", 9);
  ck_assert_int_eq(spmv_wire_write_frame(sv[0], obj, x, sizeof x, &err), 0);
  ck_assert_int_eq(spmv_wire_write_frame(sv[0], obj, NULL, 0, &err), 0);
  ck_assert_int_eq(spmv_wire_read_frame(sv[1], &lim, &got, &payload, &plen,
                                        &err), 0);
  ck_assert(json_equal(obj, got));
  ck_assert_uint_eq(plen, sizeof x);
  ck_assert_mem_eq(payload, x, sizeof x);
  json_decref(got);
  free(payload);
  ck_assert_int_eq(spmv_wire_read_frame(sv[1], &lim, &got, &payload, &plen,
                                        &err), 0);
  ck_assert(json_equal(obj, got));
  ck_assert_uint_eq(plen, 0);
  ck_assert_ptr_null(payload);
  json_decref(got);
  /* A clean end of stream between frames. */
  close(sv[0]);
  ck_assert_int_eq(spmv_wire_read_frame(sv[1], &lim, &got, &payload, &plen,
                                        &err), SPMV_ECLOSED);
  ck_assert_ptr_null(got);
  ck_assert_ptr_null(payload);
  json_decref(obj);
  close(sv[1]);
}
END_TEST

/* Arguments of a thread that writes a buffer and closes its end. */
struct writer {
  int fd;
  const void *buf;
  size_t len;
  unsigned delay_us;
  json_t *frame;        /* when set, written as a frame with buf as payload */
};

static void *writer_main(void *arg)
{
  struct writer *w = arg;
  struct spmv_error err;

  if (w->delay_us > 0)
    usleep(w->delay_us);
  if (w->frame != NULL)
    spmv_wire_write_frame(w->fd, w->frame, w->buf, w->len, &err);
  else if (w->len > 0 && write(w->fd, w->buf, w->len) != (ssize_t)w->len)
    abort();
  close(w->fd);
  return NULL;
}

START_TEST(test_frame_large)
{
  /* Larger than any socket buffer: both sides must loop on short I/O. */
  size_t n = (size_t)6 << 20, i;
  struct spmv_wire_limits lim;
  struct spmv_error err;
  struct writer w;
  pthread_t t;
  json_t *got;
  void *payload;
  uint64_t plen;
  uint32_t *buf;
  int sv[2];

  spmv_wire_limits_default(&lim);
  buf = malloc(n * sizeof *buf);
  for (i = 0; i < n; i++)
    buf[i] = (uint32_t)(i * 2654435761u);
  pair(sv);
  w.fd = sv[0];
  w.buf = buf;
  w.len = n * sizeof *buf;
  w.delay_us = 0;
  w.frame = json_pack("{s:s}", "op", "load");
  ck_assert_int_eq(pthread_create(&t, NULL, writer_main, &w), 0);
  ck_assert_int_eq(spmv_wire_read_frame(sv[1], &lim, &got, &payload, &plen,
                                        &err), 0);
  pthread_join(t, NULL);
  ck_assert_uint_eq(plen, n * sizeof *buf);
  ck_assert_int_eq(memcmp(payload, buf, n * sizeof *buf), 0);
  json_decref(got);
  json_decref(w.frame);
  free(payload);
  free(buf);
  close(sv[1]);
}
END_TEST

/* Writes raw bytes into a fresh socket pair, closes the writing end, and
 * returns the code of reading one frame from the other. */
static int read_raw(const void *bytes, size_t len,
                    const struct spmv_wire_limits *lim,
                    struct spmv_error *err)
{
  json_t *got = NULL;
  void *payload = NULL;
  uint64_t plen = 0;
  int sv[2], rc;

  pair(sv);
  ck_assert_int_eq(write(sv[0], bytes, len), (ssize_t)len);
  close(sv[0]);
  spmv_error_clear(err);
  rc = spmv_wire_read_frame(sv[1], lim, &got, &payload, &plen, err);
  close(sv[1]);
  if (rc < 0) {
    ck_assert_ptr_null(got);
    ck_assert_ptr_null(payload);
    ck_assert_uint_eq(plen, 0);
  }
  json_decref(got);
  free(payload);
  return rc;
}

/* Builds a frame of JSON text and a payload of plen bytes in out. */
static size_t make_frame(uint8_t *out, const char *json, uint64_t plen,
                         uint64_t claim_plen)
{
  struct spmv_wire_header h;
  size_t jl = strlen(json);

  good_header(&h);
  h.json_len = (uint32_t)jl;
  h.payload_len = claim_plen;
  spmv_wire_header_encode(&h, out);
  memcpy(out + SPMV_WIRE_HEADER_SIZE, json, jl);
  memset(out + SPMV_WIRE_HEADER_SIZE + jl, 0xab, (size_t)plen);
  return SPMV_WIRE_HEADER_SIZE + jl + (size_t)plen;
}

START_TEST(test_frame_truncated)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;
  uint8_t buf[256];
  size_t full, cut;

  spmv_wire_limits_default(&lim);
  full = make_frame(buf, "{\"op\":\"status\",\"id\":1}", 16, 16);
  ck_assert_int_eq(read_raw(buf, full, &lim, &err), 0);
  /* Every proper prefix but the empty one is a truncated frame. */
  for (cut = 1; cut < full; cut++) {
    ck_assert_int_eq(read_raw(buf, cut, &lim, &err), SPMV_EPROTO);
    ck_assert_ptr_nonnull(strstr(err.msg, "truncated"));
    if (cut < SPMV_WIRE_HEADER_SIZE)
      ck_assert_ptr_nonnull(strstr(err.msg, "header"));
    else if (cut < full - 16)
      ck_assert_ptr_nonnull(strstr(err.msg, "JSON"));
    else
      ck_assert_ptr_nonnull(strstr(err.msg, "payload"));
  }
  ck_assert_int_eq(read_raw(buf, 0, &lim, &err), SPMV_ECLOSED);
}
END_TEST

START_TEST(test_frame_bad_header_on_wire)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;
  uint8_t buf[256];
  size_t full;

  spmv_wire_limits_default(&lim);
  full = make_frame(buf, "{\"op\":\"status\"}", 0, 0);
  buf[0] = 'X';
  ck_assert_int_eq(read_raw(buf, full, &lim, &err), SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "magic"));

  /* Oversized lengths are refused from the header alone, with nothing
   * else sent: the reader does not wait for (or allocate) the body. */
  full = make_frame(buf, "{}", 0, (uint64_t)1 << 40);
  ck_assert_int_eq(read_raw(buf, SPMV_WIRE_HEADER_SIZE, &lim, &err),
                   SPMV_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "max_payload"));
  make_frame(buf, "{}", 0, 0);
  buf[8] = 0xff; buf[9] = 0xff; buf[10] = 0xff; buf[11] = 0xff;
  ck_assert_int_eq(read_raw(buf, SPMV_WIRE_HEADER_SIZE, &lim, &err),
                   SPMV_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "max_json"));
}
END_TEST

START_TEST(test_frame_bad_json_on_wire)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;
  uint8_t buf[256];
  size_t full;

  spmv_wire_limits_default(&lim);
  full = make_frame(buf, "{\"op\":", 4, 4);
  ck_assert_int_eq(read_raw(buf, full, &lim, &err), SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "invalid JSON"));
  full = make_frame(buf, "[1]", 0, 0);
  ck_assert_int_eq(read_raw(buf, full, &lim, &err), SPMV_EPROTO);
  lim.max_depth = 2;
  full = make_frame(buf, "{\"a\":{\"b\":{}}}", 0, 0);
  ck_assert_int_eq(read_raw(buf, full, &lim, &err), SPMV_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "max_depth"));
}
END_TEST

START_TEST(test_write_bad_args)
{
  struct spmv_error err;
  json_t *arr = json_array();
  json_t *obj = json_object();
  int sv[2];

  pair(sv);
  ck_assert_int_eq(spmv_wire_write_frame(sv[0], arr, NULL, 0, &err),
                   SPMV_EINVAL);
  ck_assert_int_eq(spmv_wire_write_frame(sv[0], NULL, NULL, 0, &err),
                   SPMV_EINVAL);
  ck_assert_int_eq(spmv_wire_write_frame(sv[0], obj, NULL, 8, &err),
                   SPMV_EINVAL);
  json_decref(arr);
  json_decref(obj);
  close(sv[0]);
  close(sv[1]);
}
END_TEST

START_TEST(test_write_peer_gone)
{
  /* No SIGPIPE: the test process would die of it (CK_FORK reports that). */
  struct spmv_error err;
  json_t *obj = json_pack("{s:s}", "op", "status");
  static char big[1 << 20];
  int sv[2], rc;

  pair(sv);
  close(sv[1]);
  rc = spmv_wire_write_frame(sv[0], obj, big, sizeof big, &err);
  ck_assert_int_eq(rc, SPMV_ECLOSED);
  ck_assert_ptr_nonnull(strstr(err.msg, "closed"));
  json_decref(obj);
  close(sv[0]);
}
END_TEST

START_TEST(test_write_pipe)
{
  /* Pipes are not sockets: the writer falls back to writev(). */
  struct spmv_wire_limits lim;
  struct spmv_error err;
  json_t *obj = json_pack("{s:s}", "op", "status"), *got;
  uint8_t data[3] = { 1, 2, 3 };
  void *payload;
  uint64_t plen;
  int p[2];

  spmv_wire_limits_default(&lim);
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(spmv_wire_write_frame(p[1], obj, data, 3, &err), 0);
  ck_assert_int_eq(spmv_wire_read_frame(p[0], &lim, &got, &payload, &plen,
                                        &err), 0);
  ck_assert(json_equal(obj, got));
  ck_assert_uint_eq(plen, 3);
  ck_assert_mem_eq(payload, data, 3);
  json_decref(got);
  free(payload);
  json_decref(obj);
  close(p[0]);
  close(p[1]);
}
END_TEST

static void on_alarm(int sig)
{
  (void)sig;
}

START_TEST(test_read_eintr)
{
  /* A signal handler installed without SA_RESTART interrupts read(); the
   * reader must resume, not fail. */
  struct spmv_wire_limits lim;
  struct spmv_error err;
  struct sigaction sa;
  struct itimerval it;
  struct writer w;
  pthread_t t;
  json_t *got;
  void *payload;
  uint64_t plen;
  int sv[2];
  char data[100];

  spmv_wire_limits_default(&lim);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 20000;
  it.it_interval.tv_usec = 20000;
  pair(sv);
  memset(data, 7, sizeof data);
  w.fd = sv[0];
  w.buf = data;
  w.len = sizeof data;
  w.delay_us = 250000;
  w.frame = json_pack("{s:s}", "op", "status");
  /* Only this thread may take the signal. */
  {
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    ck_assert_int_eq(pthread_create(&t, NULL, writer_main, &w), 0);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  }
  ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
  ck_assert_int_eq(spmv_wire_read_frame(sv[1], &lim, &got, &payload, &plen,
                                        &err), 0);
  memset(&it, 0, sizeof it);
  setitimer(ITIMER_REAL, &it, NULL);
  pthread_join(t, NULL);
  ck_assert_uint_eq(plen, sizeof data);
  ck_assert_mem_eq(payload, data, sizeof data);
  json_decref(got);
  json_decref(w.frame);
  free(payload);
  close(sv[1]);
}
END_TEST

/* The suite of the wire code. */
static Suite *wire_suite(void)
{
  Suite *s = suite_create("wire");
  TCase *tc = tcase_create("header");

  tcase_add_test(tc, test_limits_default);
  tcase_add_test(tc, test_header_bytes);
  tcase_add_test(tc, test_header_roundtrip);
  tcase_add_test(tc, test_header_bad_magic);
  tcase_add_test(tc, test_header_bad_flags);
  tcase_add_test(tc, test_header_bad_reserved);
  tcase_add_test(tc, test_header_zero_json);
  tcase_add_test(tc, test_header_json_over_limit);
  tcase_add_test(tc, test_header_payload_over_limit);
  tcase_add_test(tc, test_header_custom_limits);
  suite_add_tcase(s, tc);

  tc = tcase_create("json");
  tcase_add_test(tc, test_json_object);
  tcase_add_test(tc, test_json_not_object);
  tcase_add_test(tc, test_json_invalid);
  tcase_add_test(tc, test_json_embedded_nul);
  tcase_add_test(tc, test_json_depth);
  tcase_add_test(tc, test_json_depth_strings);
  tcase_add_test(tc, test_json_parse_over_limit);
  tcase_add_test(tc, test_json_dump);
  suite_add_tcase(s, tc);

  tc = tcase_create("io");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_frame_roundtrip);
  tcase_add_test(tc, test_frame_large);
  tcase_add_test(tc, test_frame_truncated);
  tcase_add_test(tc, test_frame_bad_header_on_wire);
  tcase_add_test(tc, test_frame_bad_json_on_wire);
  tcase_add_test(tc, test_write_bad_args);
  tcase_add_test(tc, test_write_peer_gone);
  tcase_add_test(tc, test_write_pipe);
  tcase_add_test(tc, test_read_eintr);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(wire_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
