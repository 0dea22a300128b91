/* spmv_types.h: the error codes and value types that spmvd's core, its
 * daemon and libspmvclient share; public, included by spmv.h. */
#ifndef SPMV_TYPES_H
#define SPMV_TYPES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Error codes.  Every function that can fail returns 0 or one of these
 * negative codes.  The numbers are part of the ABI and never change; the
 * wire protocol carries the names ("ECSR"), never the numbers.
 */
#define SPMV_ERRNO_MAP(XX)                                                   \
  XX(EINVAL,      -1, "invalid argument")                                    \
  XX(ENOMEM,      -2, "out of memory")                                       \
  XX(EIO,         -3, "input/output error")                                  \
  XX(EPARSE,      -4, "malformed Matrix Market input")                       \
  XX(EUNSUPPORTED,-5, "not supported")                                       \
  XX(ECSR,        -6, "invalid CSR matrix")                                  \
  XX(ETOOBIG,     -7, "too large for this format or limit")                  \
  XX(EPROTO,      -8, "protocol error")                                      \
  XX(EVERSION,    -9, "protocol version mismatch")                           \
  XX(ELIMIT,     -10, "limit exceeded")                                      \
  XX(ENOENT,     -11, "no such matrix")                                      \
  XX(EPERM,      -12, "permission denied")                                   \
  XX(ECONNECT,   -13, "cannot connect to spmvd")                             \
  XX(ECLOSED,    -14, "connection closed")                                   \
  XX(EBUSY,      -15, "busy")                                                \
  XX(ECACHE,     -16, "tuning cache error")                                  \
  XX(EGPU,       -17, "GPU error")                                           \
  XX(EGPU_STICKY,-18, "unrecoverable GPU error")                             \
  XX(ENODEV,     -19, "no such device")                                      \
  XX(EWORKER,    -20, "device worker restarted; retry the request")          \
  XX(ETIMEDOUT,  -21, "timed out")                                           \
  XX(ECONFIG,    -22, "invalid configuration")                               \
  XX(EVERIFY,    -23, "result verification failed")                          \
  XX(EFORMAT,    -24, "unknown or inapplicable storage format")              \

enum spmv_errno {
  SPMV_OK = 0,
#define SPMV_XX_(name, num, msg) SPMV_##name = (num),
  SPMV_ERRNO_MAP(SPMV_XX_)
#undef SPMV_XX_
};

/* Returns a static English description of an error code. */
const char *spmv_strerror(int code);
/* Returns the static name of an error code ("ECSR"), or "EUNKNOWN". */
const char *spmv_err_name(int code);
/* Maps a name from spmv_err_name() back to its code; SPMV_EINVAL if unknown. */
int spmv_err_from_name(const char *name);

/* Value types of a matrix and its vectors. */
enum spmv_dtype {
  SPMV_F32 = 1,
  SPMV_F64 = 2
};

/* Returns "f32" / "f64", or NULL for an unknown type. */
const char *spmv_dtype_name(enum spmv_dtype dt);
/* Returns the size in bytes of one value of dt, or 0 for an unknown type. */
size_t spmv_dtype_size(enum spmv_dtype dt);
/* Sets *dt from "f32" or "f64"; returns 0, or SPMV_EINVAL for anything else
 * (NULL included), leaving *dt alone. */
int spmv_dtype_parse(const char *s, enum spmv_dtype *dt);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_TYPES_H */
