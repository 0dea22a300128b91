/* spmvd_worker_matrix.c: spmvd-worker's matrices: their load and
 * adoption, the host copy and the vector buffers, prepare and its check,
 * and the products. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spmv_profile.h"
#include "spmvd_backend.h"
#ifdef SPMVD_FAULT_INJECTION
#include "spmvd_fault.h"
#endif
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_shm.h"
#include "spmv_par.h"
#include "spmvd_worker_impl.h"

/* Unmaps vector buffer id (if known). */
void spmvd_wk_buf_release(struct worker *w, int64_t id)
{
  for (struct wbuf **p = &w->bufs; *p; p = &(*p)->next) {
    struct wbuf *b = *p;
    if (b->id != id)
      continue;
    *p = b->next;
    if (b->pinned)
      w->ops->unpin(w->be, b->shm.addr);
    spmvd_shm_close(&b->shm);
    free(b);
    return;
  }
}

/*
 * The vectors of a multiply or a list: vector buffer id, mapped from fd
 * (stolen, -1 when not sent) when given, else the one mapped before.
 * Returns it (owned by w->bufs) holding at least need bytes, or NULL with
 * err set.  A buffer is registered with the device (pinned) once, when it
 * is mapped, so that every product's copies run at the pinned speed and
 * asynchronously; it stays registered until it is released.
 */
struct spmvd_shm *spmvd_wk_buf_get(struct worker *w, int64_t id, int fd,
                                 size_t size, size_t need,
                                 struct spmv_error *err)
{
  struct wbuf *b;

  if (fd >= 0) {
    spmvd_wk_buf_release(w, id);
    if (size < need) {
      close(fd);
      spmv_error_set(err, SPMV_EPROTO, "vector buffer of %zu bytes, %zu needed",
                     size, need);
      return NULL;
    }
    if (!(b = calloc(1, sizeof *b))) {
      close(fd);
      spmv_error_set(err, SPMV_ENOMEM, "out of memory");
      return NULL;
    }
    if (spmvd_shm_map(&b->shm, fd, size, err) < 0) {
      free(b);
      return NULL;
    }
    b->id = id;
    if (w->ops->pin != NULL)
      b->pinned = w->ops->pin(w->be, b->shm.addr, b->shm.size, 0);
    b->next = w->bufs;
    w->bufs = b;
    return &b->shm;
  }
  for (b = w->bufs; b && b->id != id; b = b->next)
    ;
  if (!b) {
    spmv_error_set(err, SPMV_EPROTO, "unknown vector buffer %lld",
                   (long long)id);
    return NULL;
  }
  if (b->shm.size < need) {
    spmv_error_set(err, SPMV_EPROTO, "vector buffer %lld holds %zu bytes, "
                   "%zu needed", (long long)id, b->shm.size, need);
    return NULL;
  }
  return &b->shm;
}

double spmvd_wk_now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

struct wmatrix *spmvd_wk_find(struct worker *w, int64_t h)
{
  for (struct wmatrix *m = w->mats; m; m = m->next)
    if (m->handle == h)
      return m;
  return NULL;
}

/* Registers m's host copy with the backend for the loads of an
 * operation (nested calls count); spmvd_wk_unpin_host() undoes it. */
void spmvd_wk_pin_host(struct worker *w, struct wmatrix *m)
{
  if (m->pins++ == 0 && w->ops->pin != NULL) {
    double t0 = spmvd_wk_now_ms();
    m->pinned = w->ops->pin(w->be, m->host.addr, m->host.size,
                           m->host.readonly);
    m->pin_ms += spmvd_wk_now_ms() - t0;
    spmvd_log_debug("matrix %lld: host copy (%zu bytes) %s for its loads",
                    (long long)m->handle, m->host.size,
                    m->pinned ? "registered" : "not registered (pageable copies)");
  }
}

void spmvd_wk_unpin_host(struct worker *w, struct wmatrix *m)
{
  if (m->pins > 0 && --m->pins == 0 && m->pinned) {
    double t0 = spmvd_wk_now_ms();
    w->ops->unpin(w->be, m->host.addr);
    m->pinned = 0;
    m->pin_ms += spmvd_wk_now_ms() - t0;
  }
}

double spmvd_wk_stage(struct worker *w, const struct spmv_csr *A)
{
  struct spmv_error err;
  double t0 = spmvd_wk_now_ms();
  int rc;

  if (w->ops->stage == NULL)
    return 0;
  spmv_error_clear(&err);
  rc = w->ops->stage(w->be, A, &err);
  spmvd_wk_die_if_sticky(rc);
  if (rc < 0)
    spmvd_log_warn("staging the CSR for the race's loads: %s", err.msg);
  spmvd_log_debug("CSR of %lld entries %s for the race's loads", (long long)A->nnz,
                  rc > 0 ? "staged on the device" : "not staged (loads copy it)");
  return spmvd_wk_now_ms() - t0;
}

void spmvd_wk_unstage(struct worker *w)
{
  if (w->ops->unstage != NULL)
    w->ops->unstage(w->be);
}

void spmvd_wk_drop(struct worker *w, int64_t h)
{
  for (struct wmatrix **p = &w->mats; *p; p = &(*p)->next) {
    struct wmatrix *m = *p;
    if (m->handle != h)
      continue;
    *p = m->next;
    if (m->bm)
      w->ops->unload(w->be, m->bm);
    spmvd_wk_block_free(w, m->block);
    if (m->pinned)  /* before its memory is unmapped */
      w->ops->unpin(w->be, m->host.addr);
    spmvd_shm_close(&m->host);
    free(m->pr_wt);
    free(m);
    return;
  }
}

static size_t vsize(enum spmv_dtype dt)
{
  return spmv_dtype_size(dt);
}

int spmvd_wk_parse_dtype(const char *s, enum spmv_dtype *dt,
                         struct spmv_error *err)
{
  if (spmv_dtype_parse(s, dt) != 0)
    return spmv_error_set(err, SPMV_EPROTO, "unknown dtype '%s'", s);
  return 0;
}

/* Converts the client's payload into the host copy. */
static void convert(const unsigned char *raw, int iw, enum spmv_dtype dt,
                    struct spmv_csr *A)
{
  size_t rp = (size_t)(A->rows + 1) * (size_t)iw;
  const unsigned char *col = raw + rp;
  const unsigned char *val = col + (size_t)A->nnz * 4;

  for (int64_t i = 0; i <= A->rows; i++) {
    if (iw == 4) {
      int32_t v;
      memcpy(&v, raw + (size_t)i * 4, 4);
      A->row_ptr[i] = v;
    } else {
      memcpy(&A->row_ptr[i], raw + (size_t)i * 8, 8);
    }
  }
  memcpy(A->col_idx, col, (size_t)A->nnz * 4);
  if (dt == SPMV_F64) {
    memcpy(A->val, val, (size_t)A->nnz * 8);
  } else {
    for (int64_t k = 0; k < A->nnz; k++) {
      float f;
      memcpy(&f, val + (size_t)k * 4, 4);
      A->val[k] = f;
    }
  }
}

struct wmatrix *spmvd_wk_matrix_new(struct worker *w, int64_t h,
                                    enum spmv_dtype dt)
{
  struct wmatrix *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->handle = h;
  m->dtype = dt;
  spmvd_shm_init(&m->host);
  m->next = w->mats;
  w->mats = m;
  return m;
}

/*
 * The host copy of a payload load: the raw payload (fds[0]) converted
 * into the daemon's memfd (fds[1]); each is stolen (set to -1) once
 * mapped; *copy_ms receives the time the copy took.
 */
static int load_copy(struct wmatrix *m, const char *index, int64_t rows,
                     int64_t cols, int64_t nnz, int *fds, double *copy_ms,
                     struct spmv_error *err)
{
  struct spmv_wire_csr_layout l;
  struct spmvd_shm raw;
  int iw = index && strcmp(index, "i32") == 0 ? 4 : 8;
  int rc;

  spmv_wire_csr_layout(rows, nnz, &l);
  size_t rawsz = (size_t)(rows + 1) * (size_t)iw + (size_t)nnz * 4 +
                 (size_t)nnz * vsize(m->dtype);
  rc = spmvd_shm_map(&raw, fds[0], rawsz, err);
  fds[0] = -1;
  if (rc < 0)
    return rc;  /* fds[1], not taken, is the caller's to close */
  rc = spmvd_shm_map(&m->host, fds[1], l.size, err);
  fds[1] = -1;
  if (rc < 0) {
    spmvd_shm_close(&raw);
    return rc;
  }
  double t0 = spmvd_wk_now_ms();
  spmvd_shm_csr_view(m->host.addr, rows, cols, nnz, &m->A);
  if (rawsz)
    convert(raw.addr, iw, m->dtype, &m->A);
  else
    m->A.row_ptr[0] = 0;
  spmvd_shm_close(&raw);
  *copy_ms = spmvd_wk_now_ms() - t0;
  return 0;
}

/* The host copy of a memfd load: the client's memfd (fds[0], stolen),
 * already in the host layout, mapped read-only as its write seal wants. */
static int load_inplace(struct wmatrix *m, int64_t rows, int64_t cols,
                        int64_t nnz, int *fds, struct spmv_error *err)
{
  struct spmv_wire_csr_layout l;
  int rc;

  spmv_wire_csr_layout(rows, nnz, &l);
  rc = spmvd_shm_map_ro(&m->host, fds[0], l.size, err);
  fds[0] = -1;
  if (rc < 0)
    return rc;
  spmvd_shm_csr_view(m->host.addr, rows, cols, nnz, &m->A);
  return 0;
}

/* The fingerprint of a host copy, hashed on a thread of its own. */
struct fp_job {
  const struct spmv_csr *A;
  struct spmv_fingerprint fp;
};

static void *fp_main(void *arg)
{
  struct fp_job *j = arg;

  spmv_fingerprint_compute(j->A, &j->fp);
  return NULL;
}

/*
 * Validates and fingerprints m's host copy (reading it only) into the
 * load's reply; steps receives their times.  No profile: a cache hit
 * takes the one stored with its tuning, a tune computes it.  The hash is
 * one thread's work (XXH3 is sequential), so on a host of three cores or
 * more it runs beside the validation, which the other cores share, rather
 * than after it; it reads only the bytes the mapping holds, so an invalid
 * matrix is safe to hash, and its hash is dropped.  fingerprint_ms is what
 * waiting for it added.
 */
static int load_inspect(struct wmatrix *m, json_t *steps, json_t **rep,
                        struct spmv_error *err)
{
  struct fp_job fj = {.A = &m->A};
  pthread_t tid;
  char hex[33];
  int n = spmv_par_threads(m->A.nnz), rc, beside;
  double t0 = spmvd_wk_now_ms(), t1, t2;

  beside = n > 2 && pthread_create(&tid, NULL, fp_main, &fj) == 0;
  rc = spmv_par_validate(&m->A, 0, beside ? n - 1 : n, err);
  t1 = spmvd_wk_now_ms();
  if (beside)
    pthread_join(tid, NULL);
  else if (rc == 0)
    fp_main(&fj);
  t2 = spmvd_wk_now_ms();
  if (rc < 0)
    return rc;
  spmv_fingerprint_hex(&fj.fp, hex);
  json_object_set_new(steps, "validate_ms", json_real(t1 - t0));
  json_object_set_new(steps, "fingerprint_ms", json_real(t2 - t1));
  *rep = json_pack("{ss sO}", "fingerprint", hex, "steps", steps);
  return 0;
}

int spmvd_wk_op_load(struct worker *w, json_t *req, int *fds, int nfds,
                     json_t **rep, struct spmv_error *err)
{
  json_int_t h, rows, cols, nnz;
  const char *dts, *index = NULL;
  enum spmv_dtype dt = SPMV_F64;
  int inplace = 0, rc;
  double copy_ms = 0;
  struct wmatrix *m;

  if (json_unpack(req, "{sI ss s?s sI sI sI s?b}", "handle", &h, "dtype", &dts,
                  "index", &index, "rows", &rows, "cols", &cols, "nnz", &nnz,
                  "inplace", &inplace) < 0 ||
      nfds != (inplace ? 1 : 2) || (!inplace && !index))
    return spmv_error_set(err, SPMV_EPROTO, "bad load message");
  rc = spmvd_wk_parse_dtype(dts, &dt, err);
  if (rc < 0)
    return rc;
  m = spmvd_wk_matrix_new(w, h, dt);
  if (!m)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = inplace ? load_inplace(m, rows, cols, nnz, fds, err)
               : load_copy(m, index, rows, cols, nnz, fds, &copy_ms, err);
  if (rc < 0)
    goto fail;
  /* A memfd load copies nothing: its steps have no copy. */
  json_t *steps = inplace ? json_object()
                          : json_pack("{sf}", "copy_ms", copy_ms);
  rc = load_inspect(m, steps, rep, err);
  json_decref(steps);
  if (rc < 0)
    goto fail;
  return 0;
fail:
  spmvd_wk_drop(w, h);
  return rc;
}

void spmvd_wk_take_resident(struct worker *w, struct wmatrix *m,
                            struct spmvd_bmatrix *bm,
                            const struct spmv_config *cfg)
{
  if (m->bm)
    w->ops->unload(w->be, m->bm);
  m->bm = bm;
  m->cfg = *cfg;
}

/* Replaces m's resident configuration by cfg. */
int spmvd_wk_make_resident(struct worker *w, struct wmatrix *m,
                           const struct spmv_config *cfg,
                           struct spmv_error *err)
{
  struct spmvd_bmatrix *bm = NULL;

  if (m->bm && memcmp(&m->cfg, cfg, sizeof *cfg) == 0)
    return 0;
  if (m->bm) {
    w->ops->unload(w->be, m->bm);
    m->bm = NULL;
  }
  int rc = 0;
#ifdef SPMVD_FAULT_INJECTION
  rc = spmvd_fault_run(cfg, err);
  if (rc < 0)
    return rc;
#endif
  spmvd_wk_pin_host(w, m);
  rc = w->ops->load(w->be, &m->A, m->dtype, cfg, &bm, err);
  spmvd_wk_unpin_host(w, m);
  if (rc < 0)
    return rc;
  spmvd_wk_take_resident(w, m, bm, cfg);
  return 0;
}

struct wmatrix *spmvd_wk_adopt_host(struct worker *w, int64_t h,
                                    enum spmv_dtype dt, int64_t rows,
                                    int64_t cols, int64_t nnz, int *fd,
                                    struct spmv_error *err)
{
  struct spmv_wire_csr_layout l;
  struct wmatrix *m;
  int rc;

  spmvd_wk_drop(w, h);
  m = spmvd_wk_matrix_new(w, h, dt);
  if (!m) {
    spmv_error_set(err, SPMV_ENOMEM, "out of memory");
    return NULL;
  }
  spmv_wire_csr_layout(rows, nnz, &l);
  /* A client's memfd (a memfd load) is write-sealed: mapped read-only. */
  rc = spmvd_shm_write_sealed(*fd) ? spmvd_shm_map_ro(&m->host, *fd, l.size, err)
                                   : spmvd_shm_map(&m->host, *fd, l.size, err);
  *fd = -1;
  if (rc < 0) {
    spmvd_wk_drop(w, h);
    return NULL;
  }
  spmvd_shm_csr_view(m->host.addr, rows, cols, nnz, &m->A);
  return m;
}

int spmvd_wk_op_adopt(struct worker *w, json_t *req, int *fds, int nfds,
                      json_t **rep, struct spmv_error *err)
{
  json_int_t h, rows, cols, nnz;
  const char *dts, *text;
  struct spmv_config cfg;
  enum spmv_dtype dt = SPMV_F64;
  struct wmatrix *m;
  int rc;

  if (json_unpack(req, "{sI ss sI sI sI ss}", "handle", &h, "dtype", &dts,
                  "rows", &rows, "cols", &cols, "nnz", &nnz, "config",
                  &text) < 0 || nfds != 1)
    return spmv_error_set(err, SPMV_EPROTO, "bad adopt message");
  if ((rc = spmvd_wk_parse_dtype(dts, &dt, err)) < 0 ||
      (rc = spmv_config_parse(text, &cfg, err)) < 0)
    return rc;
  if (!(m = spmvd_wk_adopt_host(w, h, dt, rows, cols, nnz, &fds[0], err)))
    return err->code;
  if ((rc = spmvd_wk_make_resident(w, m, &cfg, err)) < 0) {
    spmvd_wk_drop(w, h);
    return rc;
  }
  *rep = json_object();
  return 0;
}

int spmvd_wk_op_prepare(struct worker *w, json_t *req, json_t **rep,
                        struct spmv_error *err)
{
  json_int_t h;
  const char *text;
  int check = 0, ok = 1, rc;
  double resid = 0;
  struct spmv_config cfg;
  struct wmatrix *m;

  if (json_unpack(req, "{sI ss s?b}", "handle", &h, "config", &text, "check",
                  &check) < 0)
    return spmv_error_set(err, SPMV_EPROTO, "bad prepare message");
  if (!(m = spmvd_wk_find(w, h)))
    return spmv_error_set(err, SPMV_ENOENT, "no matrix %lld", (long long)h);
  double t0 = spmvd_wk_now_ms(), t1, pin0 = m->pin_ms;
  if ((rc = spmv_config_parse(text, &cfg, err)) < 0 ||
      (rc = spmvd_wk_make_resident(w, m, &cfg, err)) < 0)
    return rc;
  t1 = spmvd_wk_now_ms();
  if (check && (rc = spmvd_wk_check_product(w, m, &ok, &resid, err)) < 0)
    return rc;
  /* pin_ms: the part of convert_ms that page-locked the host copy. */
  *rep = json_pack("{sb sf s{sf sf sf}}", "verified", ok, "residual",
                   isfinite(resid) ? resid : 1e300, "steps", "convert_ms",
                   t1 - t0, "check_ms", spmvd_wk_now_ms() - t1, "pin_ms",
                   m->pin_ms - pin0);
  return 0;
}

int spmvd_wk_op_multiply(struct worker *w, json_t *req, int *fds, int nfds,
                         json_t **rep, struct spmv_error *err)
{
  json_int_t h, buf = 0, bufsize = 0;
  double alpha, beta;
  int nvec, rc;
  struct spmvd_shm one, *vec = &one;
  struct wmatrix *m;

  spmvd_shm_init(&one);
  if (json_unpack(req, "{sI sF sF si s?I s?I}", "handle", &h, "alpha", &alpha,
                  "beta", &beta, "nvec", &nvec, "buf", &buf, "buf_size",
                  &bufsize) < 0 || nfds > 1 || (nfds == 0 && buf <= 0) ||
      nvec < 1 || bufsize < 0)
    return spmv_error_set(err, SPMV_EPROTO, "bad multiply message");
  /* A buffer sent is kept even when this product fails. */
  int fd = nfds ? fds[0] : -1;
  if (nfds)
    fds[0] = -1;
  if (!(m = spmvd_wk_find(w, h)) || !m->bm) {
    if (buf > 0 && fd >= 0)
      spmvd_wk_buf_get(w, buf, fd, (size_t)bufsize, 0, err);
    else if (fd >= 0)
      close(fd);
    return spmv_error_set(err, SPMV_ENOENT, "no resident matrix %lld",
                          (long long)h);
  }
  size_t es = vsize(m->dtype);
  size_t xb = (size_t)nvec * (size_t)m->A.cols * es;
  size_t yb = (size_t)nvec * (size_t)m->A.rows * es;
  if (buf > 0)
    vec = spmvd_wk_buf_get(w, buf, fd, (size_t)bufsize, xb + yb, err);
  else if (spmvd_shm_map(&one, fd, xb + yb, err) < 0)
    vec = NULL;
  if (!vec)
    return err->code;
  rc = 0;
  if (xb + yb > 0)
    rc = w->ops->multiply(w->be, m->bm, alpha, vec->addr, beta,
                          (char *)vec->addr + xb, nvec, err);
  spmvd_shm_close(&one);
  spmvd_wk_die_if_sticky(rc);
  if (rc < 0)
    return rc;
  *rep = json_object();
  return 0;
}

