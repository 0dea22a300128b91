/* spmv_error.h: error codes carried with a message that names the problem. */
#ifndef SPMV_ERROR_H
#define SPMV_ERROR_H

#include "spmv_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An error: a code from SPMV_ERRNO_MAP and a message naming what was wrong. */
struct spmv_error {
  int code;       /* 0 or a negative SPMV_E* code */
  char msg[256];  /* e.g. "column index 70001 out of range [0, 70000) in row 12" */
};

/*
 * Records code and a printf-style message in err (which may be NULL) and
 * returns code, so that callers can write "return spmv_error_set(...)".
 */
int spmv_error_set(struct spmv_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Resets err (which may be NULL) to no error. */
void spmv_error_clear(struct spmv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_ERROR_H */
