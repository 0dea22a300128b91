/* spmv_error.c: error names, descriptions and messages. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spmv_error.h"

const char *spmv_strerror(int code)
{
  switch (code) {
  case SPMV_OK:
    return "success";
#define XX(name, num, msg) case SPMV_##name: return msg;
    SPMV_ERRNO_MAP(XX)
#undef XX
  }
  return "unknown error";
}

const char *spmv_err_name(int code)
{
  switch (code) {
  case SPMV_OK:
    return "OK";
#define XX(name, num, msg) case SPMV_##name: return #name;
    SPMV_ERRNO_MAP(XX)
#undef XX
  }
  return "EUNKNOWN";
}

int spmv_err_from_name(const char *name)
{
  if (name == NULL)
    return SPMV_EINVAL;
  if (strcmp(name, "OK") == 0)
    return SPMV_OK;
#define XX(ename, num, msg) if (strcmp(name, #ename) == 0) return SPMV_##ename;
  SPMV_ERRNO_MAP(XX)
#undef XX
  return SPMV_EINVAL;
}

const char *spmv_dtype_name(enum spmv_dtype dt)
{
  switch (dt) {
  case SPMV_F32: return "f32";
  case SPMV_F64: return "f64";
  }
  return NULL;
}

size_t spmv_dtype_size(enum spmv_dtype dt)
{
  switch (dt) {
  case SPMV_F32: return sizeof(float);
  case SPMV_F64: return sizeof(double);
  }
  return 0;
}

int spmv_dtype_parse(const char *s, enum spmv_dtype *dt)
{
  if (s != NULL && strcmp(s, "f32") == 0)
    *dt = SPMV_F32;
  else if (s != NULL && strcmp(s, "f64") == 0)
    *dt = SPMV_F64;
  else
    return SPMV_EINVAL;
  return 0;
}

int spmv_error_set(struct spmv_error *err, int code, const char *fmt, ...)
{
  va_list ap;

  if (err == NULL)
    return code;
  err->code = code;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return code;
}

void spmv_error_clear(struct spmv_error *err)
{
  if (err == NULL)
    return;
  err->code = 0;
  err->msg[0] = '\0';
}
