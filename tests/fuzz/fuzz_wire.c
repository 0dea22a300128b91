/* fuzz_wire.c: a frame from a client, as spmvd decodes it: the 24-byte
 * header, the JSON under the limits, and the daemon's check of the
 * request's fields against its op's schema; the same bytes also go through
 * spmv_wire_read_frame() on a socket, which reads header, JSON and payload
 * together. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "spmv_wire.h"
#include "spmvd_fields.h"

/* Limits small enough that the fuzzer reaches them, as spmvd.conf may set. */
static void small_limits(struct spmv_wire_limits *lim)
{
  spmv_wire_limits_default(lim);
  lim->max_json = 4096;
  lim->max_payload = 65536;
  lim->max_depth = 8;
}

/* What spmvd does with a parsed request before any op sees it: the op
 * named, its fields checked; then the JSON written back as a reply is. */
static void check_request(json_t *req)
{
  struct spmv_error err;
  const char *op = json_string_value(json_object_get(req, "op"));
  char *text;
  size_t len;

  spmv_error_clear(&err);
  if (op != NULL)
    spmvd_fields_check(op, req, &err);
  text = spmv_wire_json_dump(req, &len);
  free(text);
}

/* The header and JSON decoded from memory, as the daemon's reader does. */
static void decode_memory(const uint8_t *data, size_t size,
                          const struct spmv_wire_limits *lim)
{
  struct spmv_wire_header h;
  struct spmv_error err;
  const char *json = (const char *)data;
  size_t len = size;
  json_t *req;

  spmv_error_clear(&err);
  if (size >= SPMV_WIRE_HEADER_SIZE) {
    if (spmv_wire_header_decode(data, lim, &h, &err) == 0)
      spmv_wire_header_check_version(&h, "spmvd", &err);
    json += SPMV_WIRE_HEADER_SIZE;
    len -= SPMV_WIRE_HEADER_SIZE;
    /* The JSON part is json_len bytes of what follows, when it fits. */
    if (h.json_len <= len)
      len = h.json_len;
  }
  req = spmv_wire_json_parse(json, len, lim, &err);
  if (req != NULL) {
    check_request(req);
    json_decref(req);
  }
}

/* The whole frame read from a socket, cut wherever the input ends. */
static void decode_socket(const uint8_t *data, size_t size,
                          const struct spmv_wire_limits *lim)
{
  struct spmv_error err;
  json_t *req = NULL;
  void *payload = NULL;
  uint64_t plen = 0;
  int sv[2];

  /* A socket's buffer holds far more than libFuzzer's inputs; larger ones
   * are left to the memory path rather than risking a blocked write. */
  if (size > 65536 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    return;
  if (size > 0 && write(sv[1], data, size) != (ssize_t)size) {
    close(sv[0]);
    close(sv[1]);
    return;
  }
  close(sv[1]);
  spmv_error_clear(&err);
  if (spmv_wire_read_frame(sv[0], lim, &req, &payload, &plen, &err) == 0) {
    check_request(req);
    json_decref(req);
    free(payload);
  }
  close(sv[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spmv_wire_limits lim;

  small_limits(&lim);
  decode_memory(data, size, &lim);
  decode_socket(data, size, &lim);
  return 0;
}
