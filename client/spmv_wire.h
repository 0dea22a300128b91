/* spmv_wire.h: frames of the spmvd protocol, written once for both sides. */
#ifndef SPMV_WIRE_H
#define SPMV_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <jansson.h>

#include "spmv_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A frame is a fixed 24-byte little-endian header, then json_len bytes of
 * one JSON object (UTF-8, no NUL), then payload_len bytes of raw
 * little-endian arrays that the JSON describes.
 *
 *   offset 0  u32 magic        SPMV_WIRE_MAGIC ("SPMV" as bytes 53 50 4d 56)
 *   offset 4  u16 version      SPMV_PROTO_VERSION of the sender
 *   offset 6  u16 flags        0 (reserved, must be 0)
 *   offset 8  u32 json_len     1 .. limits.max_json
 *   offset 12 u32 reserved     0
 *   offset 16 u64 payload_len  0 .. limits.max_payload
 *
 * Bump SPMV_PROTO_VERSION if the header or any message in schema/proto
 * changes incompatibly.
 */
#define SPMV_WIRE_MAGIC 0x564d5053u
#define SPMV_PROTO_VERSION 1
#define SPMV_WIRE_HEADER_SIZE 24

struct spmv_wire_header {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;
  uint32_t json_len;
  uint32_t reserved;
  uint64_t payload_len;
};

/* Bounds checked on every header before anything is allocated. */
struct spmv_wire_limits {
  uint32_t max_json;     /* bytes of the JSON part */
  uint64_t max_payload;  /* bytes of the payload */
  int max_depth;         /* JSON nesting */
};

/* Default limits: 1 MiB of JSON, 4 GiB of payload, depth 16. */
void spmv_wire_limits_default(struct spmv_wire_limits *lim);

/* Writes h into out[SPMV_WIRE_HEADER_SIZE] in little-endian order. */
void spmv_wire_header_encode(const struct spmv_wire_header *h,
                             uint8_t out[SPMV_WIRE_HEADER_SIZE]);

/*
 * Decodes and checks a header: magic, flags, reserved, lengths against lim.
 * Returns 0, SPMV_EPROTO (bad magic, bad reserved bits, zero JSON length)
 * or SPMV_ELIMIT (a length over its limit), with a message naming the field.
 * The version is not checked here: spmv_wire_header_check_version() does,
 * for the side that refuses another version's frames.
 */
int spmv_wire_header_decode(const uint8_t in[SPMV_WIRE_HEADER_SIZE],
                            const struct spmv_wire_limits *lim,
                            struct spmv_wire_header *h,
                            struct spmv_error *err);

/*
 * Checks that h is of protocol version SPMV_PROTO_VERSION; who names this
 * side ("spmvd").  Returns 0, or SPMV_EVERSION naming both versions
 * ("frame of protocol version 2, spmvd speaks 1").
 */
int spmv_wire_header_check_version(const struct spmv_wire_header *h,
                                   const char *who, struct spmv_error *err);

/*
 * Parses the JSON part of a frame: it must be one object within the depth
 * limit.  Returns a new reference, or NULL with SPMV_EPROTO in err.
 */
json_t *spmv_wire_json_parse(const char *buf, size_t len,
                             const struct spmv_wire_limits *lim,
                             struct spmv_error *err);

/*
 * Serialises obj (borrowed) compactly into a new malloc'd buffer owned by
 * the caller; returns it and its length in *len, or NULL when out of memory.
 */
char *spmv_wire_json_dump(const json_t *obj, size_t *len);

/*
 * Waits up to us microseconds for fd to become readable by polling it
 * without sleeping; returns 1 when it is, 0 when the time ran out (the
 * caller then blocks as usual).  Why: a request of the service crosses
 * three processes and back, and each process woken from sleep costs tens
 * of microseconds, several times a short product; a peer that answers
 * within the window is read without that wake-up.
 */
int spmv_wire_spin(int fd, int us);
/* The window when none is configured: 200 us on a host of 4 or more online
 * CPUs, 0 (never spin) on a smaller one, where the spinning processes
 * would take each other's CPU. */
int spmv_wire_spin_default(void);

/*
 * The host layout of a CSR matrix, shared by the daemon (its host copy of
 * every matrix) and the client (a matrix loaded through a memfd, written
 * straight into that copy), so that the two cannot disagree:
 *
 *   off_row  0                         row_ptr: rows + 1 int64
 *   off_col  (rows + 1) * 8            col_idx: nnz int32, padded to 8 bytes
 *   off_val  off_col + pad8(nnz * 4)   val:     nnz double, whatever dtype
 *   size     off_val + nnz * 8         the whole region
 *
 * All in the host's byte order: both ends share the machine.
 */
struct spmv_wire_csr_layout {
  size_t off_row, off_col, off_val;
  size_t size;
};

/* Computes the host layout of a matrix of rows rows and nnz entries. */
void spmv_wire_csr_layout(int64_t rows, int64_t nnz,
                          struct spmv_wire_csr_layout *l);

/* The most descriptors spmv_wire_sendmsg() attaches to one message. */
#define SPMV_WIRE_MAX_FDS 8

/* Sends the n pieces of iov on socket fd in one sendmsg, with nfds
 * descriptors (at most SPMV_WIRE_MAX_FDS) attached to its first byte
 * (SCM_RIGHTS); never raises SIGPIPE and retries on EINTR.  Returns the
 * bytes sent, or -1 with errno set (EINVAL for too many fds). */
ssize_t spmv_wire_sendmsg(int fd, const struct iovec *iov, int n, const int *fds,
                          int nfds);

/* Writes a whole frame to a blocking fd (json borrowed, payload may be
 * NULL when payload_len is 0).  Returns 0 or a negative SPMV_E* code. */
int spmv_wire_write_frame(int fd, const json_t *json, const void *payload,
                          uint64_t payload_len, struct spmv_error *err);

/*
 * Reads one whole frame from a blocking fd, enforcing lim before allocating.
 * On success *json is a new reference and *payload a malloc'd buffer of
 * *payload_len bytes (NULL when 0), both owned by the caller.  Returns 0,
 * SPMV_ECLOSED at a clean end of stream, or another negative code.
 */
int spmv_wire_read_frame(int fd, const struct spmv_wire_limits *lim,
                         json_t **json, void **payload,
                         uint64_t *payload_len, struct spmv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_WIRE_H */
