/* spmv_inplace.c: libspmvclient's in-place products over a shared memfd. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spmv_client_int.h"

/* Records a failure of the call named by what on c; returns code. */
static int fail(struct spmv_client *c, int code, const char *what,
                const char *why)
{
  struct spmv_error err;

  spmv_error_set(&err, code, "%s: %s", what, why);
  return spmvc_fail(c, &err);
}

/* Unmaps and closes m's in-place vectors, if any (no request is made). */
void spmvc_vectors_release(struct spmv_matrix *m)
{
  if (m->vmap != NULL && m->vsize > 0)
    munmap(m->vmap, m->vsize);
  if (m->vfd >= 0)
    close(m->vfd);
  m->vmap = NULL;
  m->vsize = 0;
  m->vfd = -1;
  m->vk = 0;
}

/* Creates a sealed memfd of size bytes mapped read-write at *map. */
static int vectors_create(size_t size, int *fd, void **map,
                          struct spmv_error *err)
{
  *map = NULL;
  *fd = memfd_create("spmv-vectors", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (*fd < 0)
    return spmv_error_set(err, SPMV_EIO, "memfd_create: %s", strerror(errno));
  if (ftruncate(*fd, (off_t)size) < 0) {
    spmv_error_set(err, SPMV_ENOMEM, "cannot size the vector memfd to %zu "
                   "bytes: %s", size, strerror(errno));
    goto fail;
  }
  /* The daemon refuses a memfd that could shrink under it. */
  if (fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
    spmv_error_set(err, SPMV_EIO, "sealing the vector memfd: %s",
                   strerror(errno));
    goto fail;
  }
  if (size > 0) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED) {
      spmv_error_set(err, SPMV_ENOMEM, "cannot map %zu bytes of vectors: %s",
                     size, strerror(errno));
      goto fail;
    }
    *map = p;
  }
  return 0;
fail:
  close(*fd);
  *fd = -1;
  return err->code;
}

/* Creates, maps and attaches m's in-place vectors; see spmv.h. */
int spmv_matrix_vectors(struct spmv_matrix *m, int k, void **x, void **y)
{
  struct spmv_client *c;
  struct spmv_error err;
  json_t *req = NULL, *reply = NULL;
  size_t vsz, xb, size;
  void *map = NULL;
  int fd = -1, rc;

  if (m == NULL || x == NULL || y == NULL)
    return fail(m != NULL ? m->client : NULL, SPMV_EINVAL,
                "spmv_matrix_vectors", "m, x and y must not be NULL");
  c = m->client;
  if (k < 1 || k > 4096)
    return fail(c, SPMV_EINVAL, "spmv_matrix_vectors",
                "k must be in [1, 4096]");
  vsz = spmv_dtype_size(m->dtype);
  xb = (size_t)k * (size_t)m->cols * vsz;
  size = xb + (size_t)k * (size_t)m->rows * vsz;
  spmv_error_clear(&err);
  if ((rc = vectors_create(size, &fd, &map, &err)) < 0)
    return spmvc_fail(c, &err);
  req = json_pack("{s:s, s:I, s:i}", "op", "attach-vectors", "handle",
                  (json_int_t)m->handle, "k", k);
  if (req == NULL) {
    rc = spmv_error_set(&err, SPMV_ENOMEM, "out of memory");
    goto fail;
  }
  spmvc_lock(c);
  rc = spmvc_call_fd(c, req, fd, NULL, &reply, &err);
  if (rc == 0) {
    spmvc_vectors_release(m);
    m->vfd = fd;
    m->vmap = map;
    m->vsize = size;
    m->vk = k;
  }
  spmvc_unlock(c);
  if (rc < 0)
    goto fail;
  json_decref(req);
  json_decref(reply);
  *x = map;
  *y = map != NULL ? (char *)map + xb : NULL;
  return 0;
fail:
  json_decref(req);
  json_decref(reply);
  if (map != NULL)
    munmap(map, size);
  close(fd);
  return spmvc_fail(c, &err);
}

/* y = alpha*A*x + beta*y in m's attached vectors; see spmv.h. */
int spmv_multiply_inplace(struct spmv_matrix *m, double alpha, double beta)
{
  struct spmv_client *c;
  json_t *req, *reply = NULL;
  int rc;

  if (m == NULL)
    return fail(NULL, SPMV_EINVAL, "spmv_multiply_inplace", "m is NULL");
  c = m->client;
  if (!isfinite(alpha) || !isfinite(beta))
    return fail(c, SPMV_EINVAL, "spmv_multiply_inplace",
                "alpha and beta must be finite");
  spmvc_lock(c);
  int k = m->vk;
  spmvc_unlock(c);
  if (k < 1)
    return fail(c, SPMV_EINVAL, "spmv_multiply_inplace",
                "the matrix has no vectors (call spmv_matrix_vectors first)");
  if (k > 1)
    req = json_pack("{s:s, s:I, s:f, s:f, s:i, s:b}", "op", "multiply-batch",
                    "handle", (json_int_t)m->handle, "alpha", alpha, "beta",
                    beta, "k", k, "inplace", 1);
  else
    req = json_pack("{s:s, s:I, s:f, s:f, s:b}", "op", "multiply", "handle",
                    (json_int_t)m->handle, "alpha", alpha, "beta", beta,
                    "inplace", 1);
  if (req == NULL)
    return fail(c, SPMV_ENOMEM, "spmv_multiply_inplace", "out of memory");
  rc = spmvc_simple_call(c, req, &reply);
  json_decref(reply);
  return rc;
}
