/* spmvd_worker_main.c: spmvd-worker, the process that owns one device. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "spmv_profile.h"
#include "spmvd_backend.h"
#include "spmvd_calib_bound.h"
#include "spmvd_ipc.h"
#include "spmvd_log.h"
#include "spmvd_predict.h"
#include "spmvd_shm.h"
#include "spmvd_tuner.h"

/*
 * The worker serves the front end one message at a time over fd 3 (a
 * SOCK_SEQPACKET socketpair; see spmvd_ipc.h).  It blocks: all slow work
 * (conversion, profiling, tuning, products) happens here so that the front
 * end's loop never does.  Operations, each answered {seq, ok, ...} or
 * {seq, ok:false, error:{code, message}}:
 *
 *   load     {handle, dtype, index, rows, cols, nnz} fds [raw, host]:
 *            the client's payload (raw) is validated and converted into
 *            the host copy (host, see spmvd_shm_csr_layout); replies
 *            {fingerprint, profile}.  Nothing is resident yet.
 *   adopt    {handle, dtype, rows, cols, nnz, config} fds [host]: after a
 *            respawn, maps a host copy already converted and makes config
 *            resident.
 *   prepare  {handle, config, check}: makes config resident; with check,
 *            compares one product on a random vector with spmv_csr_ref and
 *            replies {verified, residual}.
 *   tune     {handle, strategy, exclude:[text], exclude_formats?:[name],
 *            predictor:{fits}}: runs the tuner without the quarantined
 *            configurations and the operator's excluded formats (with the
 *            device's calibration fits when given, see
 *            spmvd_predict_to_json), sending
 *            {seq, event:"candidate", candidate} before building each
 *            candidate and {seq, event:"progress", done, total, candidate,
 *            time_us} after timing it; makes the winner resident; replies
 *            {decision}.
 *   bench    {handle, configs?:[text], rounds?, exclude_formats?:[name]}:
 *            times every exhaustive candidate not of those formats, or
 *            only configs (the front end refuses excluded ones), each as a
 *            calibration point is timed, in the given order
 *            (bench_configs()); replies {trials}.
 *   calibrate {dtype, max_seconds, points?}: the predictor's calibration,
 *            bounded in time, sending {seq, event:"progress",
 *            stage:"calibration", done, total, candidate, time_us}, then
 *            with points the timed points in {seq, event:"points", ...};
 *            replies {fits, ...} (spmvd_calib_bounded(), in
 *            spmvd_calib_bound.c).
 *   multiply {handle, alpha, beta, nvec, buf?, buf_size?} fds [vectors]:
 *            x_1..x_k then y_1..y_k in the memfd; y is overwritten in
 *            place.  With buf (a connection's vector buffer, reused across
 *            requests) the memfd comes once, is mapped whole (buf_size
 *            bytes) and kept under that id; later requests name buf only.
 *   release  {buf}: unmaps a vector buffer (its connection closed or it grew).
 *   unload   {handle}: frees the matrix.
 *
 * Between a calibration's points and a tune's (or bench's) candidates the
 * worker serves the multiply and unload requests for other matrices, and
 * buffer releases, that came meanwhile (replies out of order); the other
 * requests wait for the operation's end (serve_between()).
 *
 * A second after the last request that may free device memory the worker
 * lets the backend give back what it kept for reuse (trim, TRIM_IDLE_MS).
 *
 * When the backend reports a sticky error the worker exits with status 3:
 * the front end respawns it.
 */

/* Time after the last request that may free device memory (anything but
 * products and buffer releases) before the backend gives what its pool
 * keeps back to the driver (backend trim), whether the worker then idles
 * or serves products: never while a tune's, bench's or calibration's
 * loads and timings follow one another, and memory the device no longer
 * uses goes back soon after. */
#define TRIM_IDLE_MS 1000

struct wmatrix {
  int64_t handle;
  enum spmv_dtype dtype;
  struct spmvd_shm host;       /* the host copy, mapped */
  struct spmv_csr A;           /* a view of host */
  struct spmv_profile prof;
  int have_prof;
  struct spmvd_bmatrix *bm;    /* the resident configuration, or NULL */
  struct spmv_config cfg;
  int pins;                    /* pin_host() calls not yet undone */
  int pinned;                  /* host registered with the backend */
  struct wmatrix *next;
};

/* A connection's vector buffer, mapped once for all its products. */
struct wbuf {
  int64_t id;
  struct spmvd_shm shm;
  struct wbuf *next;
};

/* A request that arrived during a long operation and waits for its end. */
struct deferred {
  json_t *req;                    /* owned */
  int fds[SPMVD_IPC_MAX_FDS];     /* owned */
  int nfds;
  struct deferred *next;
};

struct worker {
  int fd;
  const struct spmvd_backend_ops *ops;
  struct spmvd_backend *be;
  struct spmvd_device_info dev;
  struct wmatrix *mats;
  struct wbuf *bufs;
  struct deferred *later, **later_tail;  /* FIFO, see serve_between() */
  int trim_due;                          /* a request since the last trim
                                            may have freed device memory */
  double trim_from;                      /* when the last such request was
                                            served (now_s) */
};

/* Monotonic seconds. */
static double now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Unmaps vector buffer id (if known). */
static void buf_release(struct worker *w, int64_t id)
{
  for (struct wbuf **p = &w->bufs; *p; p = &(*p)->next) {
    struct wbuf *b = *p;
    if (b->id != id)
      continue;
    *p = b->next;
    spmvd_shm_close(&b->shm);
    free(b);
    return;
  }
}

/*
 * The vectors of a multiply: vector buffer id, mapped from fd (stolen, -1
 * when not sent) when given, else the one mapped before.  Returns it
 * (owned by w->bufs) holding at least need bytes, or NULL with err set.
 */
static struct spmvd_shm *buf_get(struct worker *w, int64_t id, int fd,
                                 size_t size, size_t need,
                                 struct spmv_error *err)
{
  struct wbuf *b;

  if (fd >= 0) {
    buf_release(w, id);
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

static struct wmatrix *find(struct worker *w, int64_t h)
{
  for (struct wmatrix *m = w->mats; m; m = m->next)
    if (m->handle == h)
      return m;
  return NULL;
}

/* Registers m's host copy with the backend for the loads of an
 * operation (nested calls count); unpin_host() undoes it. */
static void pin_host(struct worker *w, struct wmatrix *m)
{
  if (m->pins++ == 0 && w->ops->pin != NULL) {
    m->pinned = w->ops->pin(w->be, m->host.addr, m->host.size);
    spmvd_log_debug("matrix %lld: host copy (%zu bytes) %s for its loads",
                    (long long)m->handle, m->host.size,
                    m->pinned ? "registered" : "not registered (pageable copies)");
  }
}

static void unpin_host(struct worker *w, struct wmatrix *m)
{
  if (m->pins > 0 && --m->pins == 0 && m->pinned) {
    w->ops->unpin(w->be, m->host.addr);
    m->pinned = 0;
  }
}

static void drop(struct worker *w, int64_t h)
{
  for (struct wmatrix **p = &w->mats; *p; p = &(*p)->next) {
    struct wmatrix *m = *p;
    if (m->handle != h)
      continue;
    *p = m->next;
    if (m->bm)
      w->ops->unload(w->be, m->bm);
    if (m->pinned)  /* before its memory is unmapped */
      w->ops->unpin(w->be, m->host.addr);
    spmvd_shm_close(&m->host);
    free(m);
    return;
  }
}

static void die_if_sticky(int rc)
{
  if (rc == SPMV_EGPU_STICKY) {
    spmvd_log_error("sticky device error: exiting so that spmvd respawns "
                    "the worker");
    exit(3);
  }
}

static void send_msg(struct worker *w, json_t *msg)
{
  struct spmv_error err;

  int rc = spmvd_ipc_send(w->fd, msg, NULL, 0, &err);
  if (rc == SPMV_ECLOSED)
    exit(0);  /* the front end is gone (stopping): nobody to answer */
  if (rc < 0) {
    spmvd_log_error("cannot answer the front end: %s", err.msg);
    exit(2);
  }
  json_decref(msg);
}

static void reply_error(struct worker *w, json_int_t seq,
                        const struct spmv_error *err)
{
  send_msg(w, json_pack("{sI sb s{ss ss}}", "seq", seq, "ok", 0, "error",
                        "code", spmv_err_name(err->code), "message",
                        err->msg));
}

static size_t vsize(enum spmv_dtype dt)
{
  return spmv_dtype_size(dt);
}

static int parse_dtype(const char *s, enum spmv_dtype *dt,
                       struct spmv_error *err)
{
  if (strcmp(s, "f32") == 0)
    *dt = SPMV_F32;
  else if (strcmp(s, "f64") == 0)
    *dt = SPMV_F64;
  else
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

static struct wmatrix *wmatrix_new(struct worker *w, int64_t h,
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

static int op_load(struct worker *w, json_t *req, int *fds, int nfds,
                   json_t **rep, struct spmv_error *err)
{
  json_int_t h, rows, cols, nnz;
  const char *dts, *index;
  enum spmv_dtype dt = SPMV_F64;
  struct spmvd_shm raw;
  struct spmvd_shm_csr l;
  struct wmatrix *m;
  char hex[33];
  struct spmv_fingerprint fp;
  int rc, iw;

  if (json_unpack(req, "{sI ss ss sI sI sI}", "handle", &h, "dtype", &dts,
                  "index", &index, "rows", &rows, "cols", &cols, "nnz",
                  &nnz) < 0 || nfds != 2)
    return spmv_error_set(err, SPMV_EPROTO, "bad load message");
  rc = parse_dtype(dts, &dt, err);
  if (rc < 0)
    return rc;
  iw = strcmp(index, "i32") == 0 ? 4 : 8;
  m = wmatrix_new(w, h, dt);
  if (!m)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  spmvd_shm_csr_layout(rows, nnz, &l);
  size_t rawsz = (size_t)(rows + 1) * (size_t)iw + (size_t)nnz * 4 +
                 (size_t)nnz * vsize(dt);
  rc = spmvd_shm_map(&raw, fds[0], rawsz, err);
  fds[0] = -1;
  if (rc < 0)
    goto fail;
  rc = spmvd_shm_map(&m->host, fds[1], l.size, err);
  fds[1] = -1;
  if (rc < 0) {
    spmvd_shm_close(&raw);
    goto fail;
  }
  spmvd_shm_csr_view(m->host.addr, rows, cols, nnz, &m->A);
  if (rawsz)
    convert(raw.addr, iw, dt, &m->A);
  else
    m->A.row_ptr[0] = 0;
  spmvd_shm_close(&raw);
  rc = spmv_csr_validate(&m->A, 0, err);
  if (rc < 0)
    goto fail;
  rc = spmv_profile_compute(&m->A, &m->prof, err);
  if (rc < 0)
    goto fail;
  m->have_prof = 1;
  spmv_fingerprint_compute(&m->A, &fp);
  spmv_fingerprint_hex(&fp, hex);
  *rep = json_pack("{ss so}", "fingerprint", hex, "profile",
                   spmvd_ipc_profile_pack(&m->prof));
  return 0;
fail:
  drop(w, h);
  return rc;
}

static void maybe_crash(const struct spmv_config *cfg);

/* Replaces m's resident configuration by cfg. */
static int make_resident(struct worker *w, struct wmatrix *m,
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
  maybe_crash(cfg);
  pin_host(w, m);
  int rc = w->ops->load(w->be, &m->A, m->dtype, cfg, &bm, err);
  unpin_host(w, m);
  if (rc < 0)
    return rc;
  m->bm = bm;
  m->cfg = *cfg;
  return 0;
}

static int op_adopt(struct worker *w, json_t *req, int *fds, int nfds,
                    json_t **rep, struct spmv_error *err)
{
  json_int_t h, rows, cols, nnz;
  const char *dts, *text;
  struct spmv_config cfg;
  struct spmvd_shm_csr l;
  enum spmv_dtype dt = SPMV_F64;
  struct wmatrix *m;
  int rc;

  if (json_unpack(req, "{sI ss sI sI sI ss}", "handle", &h, "dtype", &dts,
                  "rows", &rows, "cols", &cols, "nnz", &nnz, "config",
                  &text) < 0 || nfds != 1)
    return spmv_error_set(err, SPMV_EPROTO, "bad adopt message");
  if ((rc = parse_dtype(dts, &dt, err)) < 0 ||
      (rc = spmv_config_parse(text, &cfg, err)) < 0)
    return rc;
  drop(w, h);
  m = wmatrix_new(w, h, dt);
  if (!m)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  spmvd_shm_csr_layout(rows, nnz, &l);
  rc = spmvd_shm_map(&m->host, fds[0], l.size, err);
  fds[0] = -1;
  if (rc < 0)
    goto fail;
  spmvd_shm_csr_view(m->host.addr, rows, cols, nnz, &m->A);
  rc = make_resident(w, m, &cfg, err);
  if (rc < 0)
    goto fail;
  *rep = json_object();
  return 0;
fail:
  drop(w, h);
  return rc;
}

static void fill_random(double *x, int64_t n, uint64_t seed)
{
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x[i] = ((double)(s >> 11) / 9007199254740992.0) * 2.0 - 1.0;
  }
}

static void to_typed(const double *in, int64_t n, enum spmv_dtype dt, void *out)
{
  for (int64_t i = 0; i < n; i++) {
    if (dt == SPMV_F32)
      ((float *)out)[i] = (float)in[i];
    else
      ((double *)out)[i] = in[i];
  }
}

static double typed_get(const void *v, int64_t i, enum spmv_dtype dt)
{
  return dt == SPMV_F32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

/*
 * One product on a random x against spmv_csr_ref: the scaled residual
 * |y - y_ref|_inf / (|A|_inf |x|_inf + |y_ref|_inf), compared with
 * 16 eps max_row_len.
 */
static int check_product(struct worker *w, struct wmatrix *m, int *ok,
                         double *resid, struct spmv_error *err)
{
  int64_t rows = m->A.rows, cols = m->A.cols;
  size_t es = vsize(m->dtype);
  double *x = malloc(sizeof *x * (size_t)(cols + 1));
  double *yref = malloc(sizeof *yref * (size_t)(rows + 1));
  void *xt = malloc(es * (size_t)(cols + 1));
  void *yt = malloc(es * (size_t)(rows + 1));
  int rc = 0;

  if (!x || !yref || !xt || !yt) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory for the check");
    goto out;
  }
  fill_random(x, cols, (uint64_t)m->handle);
  to_typed(x, cols, m->dtype, xt);
  for (int64_t j = 0; j < cols; j++)
    x[j] = typed_get(xt, j, m->dtype);
  spmv_csr_ref(&m->A, 1.0, x, 0.0, yref);
  rc = w->ops->multiply(w->be, m->bm, 1.0, xt, 0.0, yt, 1, err);
  if (rc < 0)
    goto out;
  double anorm = 0, xnorm = 0, ynorm = 0, diff = 0;
  int64_t maxlen = 1;
  for (int64_t i = 0; i < rows; i++) {
    double s = 0;
    for (int64_t k = m->A.row_ptr[i]; k < m->A.row_ptr[i + 1]; k++)
      s += fabs(m->A.val[k]);
    anorm = fmax(anorm, s);
    maxlen = m->A.row_ptr[i + 1] - m->A.row_ptr[i] > maxlen
                 ? m->A.row_ptr[i + 1] - m->A.row_ptr[i] : maxlen;
    ynorm = fmax(ynorm, fabs(yref[i]));
    double d = fabs(typed_get(yt, i, m->dtype) - yref[i]);
    diff = (d > diff || isnan(d)) ? d : diff;
  }
  for (int64_t j = 0; j < cols; j++)
    xnorm = fmax(xnorm, fabs(x[j]));
  double eps = m->dtype == SPMV_F32 ? 1.1920929e-7 : 2.220446049250313e-16;
  double scale = anorm * xnorm + ynorm;
  *resid = scale > 0 ? diff / scale : diff;
  *ok = !isnan(*resid) && *resid <= 16.0 * eps * (double)maxlen;
out:
  free(x);
  free(yref);
  free(xt);
  free(yt);
  return rc;
}

static int op_prepare(struct worker *w, json_t *req, json_t **rep,
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
  if (!(m = find(w, h)))
    return spmv_error_set(err, SPMV_ENOENT, "no matrix %lld", (long long)h);
  if ((rc = spmv_config_parse(text, &cfg, err)) < 0 ||
      (rc = make_resident(w, m, &cfg, err)) < 0)
    return rc;
  if (check && (rc = check_product(w, m, &ok, &resid, err)) < 0)
    return rc;
  *rep = json_pack("{sb sf}", "verified", ok, "residual",
                   isfinite(resid) ? resid : 1e300);
  return 0;
}

/* The race's view of one matrix: a candidate loaded beside the resident one. */
struct race {
  struct worker *w;
  struct wmatrix *m;
  struct spmvd_bmatrix *cand;
  json_int_t seq;
  const char *stage;
};

/*
 * A testing aid: SPMVD_TEST_CRASH_CONFIG=TEXT makes the worker abort when
 * it builds a configuration whose text starts with TEXT, as a faulting
 * kernel would, so that the tests can prove the quarantine.
 */
static void maybe_crash(const struct spmv_config *cfg)
{
  const char *bad = getenv("SPMVD_TEST_CRASH_CONFIG");
  char text[64];

  if (!bad || !*bad)
    return;
  spmv_config_format(cfg, text, sizeof text);
  if (strncmp(text, bad, strlen(bad)) == 0) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    abort();
  }
}

static void serve_one(struct worker *w, json_t *req, int *fds, int nfds);

/* Serves a request taken off the socket and frees it. */
static void serve_deferred(struct worker *w, struct deferred *d)
{
  serve_one(w, d->req, d->fds, d->nfds);
  json_decref(d->req);
  free(d);
}

/* The handle a request names (-1 when none). */
static json_int_t req_handle(const json_t *req)
{
  const json_t *h = json_object_get(req, "handle");

  return json_is_integer(h) ? json_integer_value(h) : -1;
}

/* Whether a deferred request names handle h (or, h < 0, any multiply). */
static int deferred_names(const struct worker *w, json_int_t h)
{
  for (const struct deferred *d = w->later; d; d = d->next) {
    const char *op = json_string_value(json_object_get(d->req, "op"));
    if (h >= 0 ? req_handle(d->req) == h
               : op != NULL && strcmp(op, "multiply") == 0)
      return 1;
  }
  return 0;
}

/*
 * Serves what the front end sent while a long operation runs (a
 * calibration, up to minutes; a tune or bench of matrix busy, seconds):
 * products and unloads of other matrices, and buffer releases, at once, so
 * that the device's other clients keep multiplying (the front end matches
 * replies by seq, not order).  The rest waits in w->later, in its order,
 * until the operation ends: requests on the busy matrix, loads, tunes, a
 * product or unload of a matrix that an earlier waiting request names, and
 * a release while any product waits (it may use that buffer).  busy < 0:
 * none.
 */
static void serve_between(struct worker *w, json_int_t busy)
{
  struct pollfd pfd = { w->fd, POLLIN, 0 };
  struct spmv_error err;

  while (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLIN | POLLHUP))) {
    struct deferred *d = calloc(1, sizeof *d);
    const char *op;
    json_int_t h;
    int rc, now;

    if (d == NULL) {
      spmvd_log_error("out of memory");
      exit(2);
    }
    rc = spmvd_ipc_recv(w->fd, &d->req, d->fds, &d->nfds, SPMVD_IPC_MAX_FDS,
                        &err);
    if (rc < 0) {
      /* The front end is gone (or broke the protocol): as in main(). */
      if (rc != SPMV_ECLOSED)
        spmvd_log_error("%s", err.msg);
      exit(rc == SPMV_ECLOSED ? 0 : 2);
    }
    op = json_string_value(json_object_get(d->req, "op"));
    h = req_handle(d->req);
    if (op == NULL)
      now = 0;
    else if (strcmp(op, "multiply") == 0 || strcmp(op, "unload") == 0)
      now = h != busy && !deferred_names(w, h);
    else
      now = strcmp(op, "release") == 0 && !deferred_names(w, -1);
    if (now) {
      serve_deferred(w, d);
      continue;
    }
    *w->later_tail = d;
    w->later_tail = &d->next;
  }
}

/* Tests: sleeps the milliseconds environment variable var names, if any.
 * SPMVD_TEST_SLOW_MS makes calibration points and tuning candidates as
 * slow as a large device's, so that on the cpu backend they last long
 * enough to overlap other requests; SPMVD_TEST_START_MS makes the worker
 * as slow to start as a GPU's, so that requests arrive before it is
 * ready. */
static void test_sleep(const char *var)
{
  const char *ms = getenv(var);

  if (ms && atoi(ms) > 0)
    usleep((useconds_t)atoi(ms) * 1000);
}

static int race_load(void *ctx, const struct spmv_config *cfg,
                     struct spmv_error *err)
{
  struct race *r = ctx;
  char text[64];

  /* Other matrices' products go on between candidates. */
  serve_between(r->w, r->m->handle);
  test_sleep("SPMVD_TEST_SLOW_MS");
  /* Said before trying it: if it brings the worker down, the front end
   * knows which configuration to quarantine. */
  spmv_config_format(cfg, text, sizeof text);
  send_msg(r->w, json_pack("{sI ss ss}", "seq", r->seq, "event", "candidate",
                           "candidate", text));
  maybe_crash(cfg);
  int rc = r->w->ops->load(r->w->be, &r->m->A, r->m->dtype, cfg, &r->cand, err);
  die_if_sticky(rc);
  return rc;
}

static int race_time(void *ctx, int warmup, int reps, double *median_us,
                     struct spmv_error *err)
{
  struct race *r = ctx;
  int rc = r->w->ops->time(r->w->be, r->cand, warmup, reps, median_us, err);
  die_if_sticky(rc);
  return rc;
}

static void race_unload(void *ctx)
{
  struct race *r = ctx;
  if (r->cand)
    r->w->ops->unload(r->w->be, r->cand);
  r->cand = NULL;
}

static void race_progress(void *ctx, int done, int total,
                          const struct spmvd_trial *t)
{
  struct race *r = ctx;
  char text[64];

  spmv_config_format(&t->cfg, text, sizeof text);
  send_msg(r->w, json_pack("{sI ss ss si si ss sf ss}", "seq", r->seq,
                           "event", "progress", "stage", r->stage, "done",
                           done, "total", total, "candidate", text, "time_us",
                           t->time_us, "status",
                           spmvd_trial_status_name(t->status)));
}

static const struct spmvd_race_ops race_ops = {
  race_load, race_time, race_unload, race_progress,
};

/* The tuner's input for m: req's quarantined configurations (exclude, at
 * most max into ex) and the operator's formats (exclude_formats). */
static int tune_input(struct wmatrix *m, struct worker *w, json_t *req,
                      struct spmv_config *ex, size_t max,
                      struct spmvd_tune_input *in, struct spmv_error *err)
{
  json_t *exclude = json_object_get(req, "exclude");
  json_t *formats = json_object_get(req, "exclude_formats");
  enum spmv_format f;
  size_t i;
  json_t *v;

  memset(in, 0, sizeof *in);
  if (!m->have_prof) {
    int rc = spmv_profile_compute(&m->A, &m->prof, err);
    if (rc < 0)
      return rc;
    m->have_prof = 1;
  }
  in->A = &m->A;
  in->prof = &m->prof;
  in->dtype = m->dtype;
  in->dev = &w->dev;
  in->exclude = ex;
  json_array_foreach(exclude, i, v) {
    if (in->nexclude < max && json_is_string(v) &&
        spmv_config_parse(json_string_value(v), &ex[in->nexclude], NULL) == 0)
      in->nexclude++;
  }
  if (formats != NULL && !json_is_array(formats))
    return spmv_error_set(err, SPMV_EPROTO, "exclude_formats is not an array");
  json_array_foreach(formats, i, v) {
    if (spmv_format_parse(json_string_value(v), &f) != 0)
      return spmv_error_set(err, SPMV_EPROTO,
                            "exclude_formats[%zu] is not a format", i);
    in->exclude_formats |= 1u << f;
  }
  return 0;
}

static int op_tune(struct worker *w, json_t *req, json_int_t seq,
                   json_t **rep, struct spmv_error *err)
{
  json_int_t h;
  const char *sname;
  json_t *exclude = NULL, *fits = NULL;
  struct spmv_config ex[64];
  struct spmvd_predictor pred;
  struct spmvd_tune_input in;
  struct spmvd_decision d;
  enum spmvd_strategy s;
  struct wmatrix *m;
  int rc;

  spmvd_decision_init(&d);
  if (json_unpack(req, "{sI ss s?o s?o}", "handle", &h, "strategy", &sname,
                  "exclude", &exclude, "predictor", &fits) < 0 ||
      (exclude && !json_is_array(exclude)))
    return spmv_error_set(err, SPMV_EPROTO, "bad tune message");
  if (!(m = find(w, h)))
    return spmv_error_set(err, SPMV_ENOENT, "no matrix %lld", (long long)h);
  if ((rc = spmvd_strategy_parse(sname, &s, err)) < 0 ||
      (rc = tune_input(m, w, req, ex, 64, &in, err)) < 0)
    return rc;
  /* The device's calibration fits, when the front end has them. */
  if (fits && (rc = spmvd_predict_from_json(fits, &pred, err)) < 0)
    return rc;
  if (fits)
    in.pred = &pred;
  struct race r = {w, m, NULL, seq, "tuning"};
  pin_host(w, m);  /* every candidate loads from it */
  rc = spmvd_tuner_run(s, &in, &race_ops, &r, NULL, &d, err);
  race_unload(&r);
  if (rc >= 0) {
    d.strategy = s;
    if (d.gflops == 0 && d.time_us > 0)
      spmvd_decision_rates(&d, &m->prof, m->dtype);
    rc = make_resident(w, m, &d.cfg, err);
  }
  unpin_host(w, m);
  die_if_sticky(rc);
  if (rc < 0)
    goto out;
  *rep = json_pack("{so}", "decision", spmvd_ipc_decision_pack(&d));
out:
  spmvd_decision_fini(&d);
  return rc;
}

static int cmp_trial(const void *a, const void *b)
{
  const struct spmvd_trial *x = a, *y = b;
  int fx = x->status == SPMVD_TRIAL_FAILED, fy = y->status == SPMVD_TRIAL_FAILED;
  if (fx != fy)
    return fx - fy;
  return (x->time_us > y->time_us) - (x->time_us < y->time_us);
}

/*
 * bench with configs: each configuration timed as a calibration point is
 * (loaded, SPMVD_CALIB_WARMUP runs and the median of SPMVD_CALIB_REPS,
 * the median of rounds such loads), in the given order, so that the
 * predictor's time can be set against the measure it was fitted to, in
 * this process.  One that cannot run is a failed trial with its message;
 * the others go on.
 */
static int bench_configs(struct worker *w, struct wmatrix *m,
                         const json_t *configs, int rounds, json_int_t seq,
                         json_t **rep, struct spmv_error *err)
{
  struct spmvd_calib_backend cb = { w->ops, w->be, SPMVD_CALIB_WARMUP,
                                    SPMVD_CALIB_REPS };
  size_t i, n = json_array_size(configs);
  json_t *trials = json_array(), *v;

  if (!trials)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  pin_host(w, m);
  json_array_foreach(configs, i, v) {
    struct spmv_config cfg;
    struct spmv_error e;
    char text[64];
    double us = 0;
    int rc;

    serve_between(w, m->handle);
    spmv_error_clear(&e);
    snprintf(text, sizeof text, "%s", json_string_value(v) ? json_string_value(v) : "");
    rc = spmv_config_parse(text, &cfg, &e);
    if (rc == 0) {
      spmv_config_format(&cfg, text, sizeof text);
      send_msg(w, json_pack("{sI ss ss}", "seq", seq, "event", "candidate",
                            "candidate", text));
      maybe_crash(&cfg);
      rc = spmvd_calib_backend_time_rounds(&cb, &m->A, m->dtype, &cfg, rounds,
                                           NULL, &us, &e);
      die_if_sticky(rc);
      if (rc == 0 && !(us > 0))
        rc = spmv_error_set(&e, SPMV_EINVAL, "the backend timed %g us", us);
    }
    int ok = rc == 0;
    json_array_append_new(
        trials, json_pack("{ss ss sf sf si ss}", "config", text, "status",
                          ok ? "ok" : "failed", "time_us", ok ? us : 0.0,
                          "gflops", ok ? 2.0 * (double)m->A.nnz / us / 1e3 : 0.0,
                          "code", ok ? 0 : e.code, "message", ok ? "" : e.msg));
    send_msg(w, json_pack("{sI ss ss si si ss sf ss}", "seq", seq, "event",
                          "progress", "stage", "bench", "done", (int)i + 1,
                          "total", (int)n, "candidate", text, "time_us",
                          ok ? us : 0.0, "status", ok ? "ok" : "failed"));
  }
  unpin_host(w, m);
  *rep = json_pack("{so}", "trials", trials);
  return *rep ? 0 : spmv_error_set(err, SPMV_ENOMEM, "out of memory");
}

static int op_bench(struct worker *w, json_t *req, json_int_t seq,
                    json_t **rep, struct spmv_error *err)
{
  json_int_t h;
  json_t *configs = NULL;
  int rounds = 3;
  struct spmv_config ex[1];
  struct spmvd_candidates *c = NULL;
  struct spmvd_race_params p;
  struct spmvd_tune_input in;
  struct spmvd_decision d;
  struct wmatrix *m;
  int rc;

  spmvd_decision_init(&d);
  if (json_unpack(req, "{sI s?o s?i}", "handle", &h, "configs", &configs,
                  "rounds", &rounds) < 0 ||
      (configs && !json_is_array(configs)) || rounds < 1 ||
      rounds > SPMVD_CALIB_MAX_ROUNDS)
    return spmv_error_set(err, SPMV_EPROTO, "bad bench message");
  if (!(m = find(w, h)))
    return spmv_error_set(err, SPMV_ENOENT, "no matrix %lld", (long long)h);
  if (configs)
    return bench_configs(w, m, configs, rounds, seq, rep, err);
  if ((rc = tune_input(m, w, req, ex, 0, &in, err)) < 0)
    return rc;
  c = malloc(sizeof *c);
  if (!c)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  rc = spmvd_tuner_candidates(SPMVD_STRATEGY_EXHAUSTIVE, &in, c, err);
  if (rc < 0)
    goto out;
  spmvd_race_params_default(&p);
  p.drop_ratio = 0;
  struct race r = {w, m, NULL, seq, "bench"};
  pin_host(w, m);
  rc = spmvd_tuner_race(c, &race_ops, &r, &p, &in, &d, err);
  race_unload(&r);
  unpin_host(w, m);
  if (rc < 0)
    goto out;
  qsort(d.trials, d.ntrials, sizeof *d.trials, cmp_trial);
  json_t *trials = json_array();
  for (size_t i = 0; i < d.ntrials; i++) {
    const struct spmvd_trial *t = &d.trials[i];
    json_t *j = spmvd_ipc_trial_pack(t);
    json_object_set_new(j, "gflops",
                        json_real(t->time_us > 0
                                      ? 2.0 * (double)m->A.nnz / t->time_us / 1e3
                                      : 0.0));
    json_array_append_new(trials, j);
  }
  *rep = json_pack("{so}", "trials", trials);
out:
  free(c);
  spmvd_decision_fini(&d);
  return rc;
}

static int op_multiply(struct worker *w, json_t *req, int *fds, int nfds,
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
  if (!(m = find(w, h)) || !m->bm) {
    if (buf > 0 && fd >= 0)
      buf_get(w, buf, fd, (size_t)bufsize, 0, err);
    else if (fd >= 0)
      close(fd);
    return spmv_error_set(err, SPMV_ENOENT, "no resident matrix %lld",
                          (long long)h);
  }
  size_t es = vsize(m->dtype);
  size_t xb = (size_t)nvec * (size_t)m->A.cols * es;
  size_t yb = (size_t)nvec * (size_t)m->A.rows * es;
  if (buf > 0)
    vec = buf_get(w, buf, fd, (size_t)bufsize, xb + yb, err);
  else if (spmvd_shm_map(&one, fd, xb + yb, err) < 0)
    vec = NULL;
  if (!vec)
    return err->code;
  rc = 0;
  if (xb + yb > 0)
    rc = w->ops->multiply(w->be, m->bm, alpha, vec->addr, beta,
                          (char *)vec->addr + xb, nvec, err);
  spmvd_shm_close(&one);
  die_if_sticky(rc);
  if (rc < 0)
    return rc;
  *rep = json_object();
  return 0;
}

/* --- calibrate --- */

/* spmvd_calib_host.between: the requests that came meanwhile, served
 * between a calibration's probe matrices and points (SPMVD_TEST_SLOW_MS
 * slows each point, as a large device's are). */
static void calib_between(void *ctx, int point)
{
  struct worker *w = ctx;

  serve_between(w, -1);
  if (point)
    test_sleep("SPMVD_TEST_SLOW_MS");
}

/* spmvd_calib_host.send. */
static void calib_send(void *ctx, json_t *ev)
{
  send_msg(ctx, ev);
}

/* calibrate {dtype, max_seconds, points}: spmvd_calib_bounded on this
 * worker's device. */
static int op_calibrate(struct worker *w, json_t *req, json_int_t seq,
                        json_t **rep, struct spmv_error *err)
{
  struct spmvd_calib_host h = { w->ops, w->be, &w->dev, calib_between,
                                calib_send, w };
  enum spmv_dtype dt = SPMV_F64;
  const char *dts;
  double max_s = 0;
  int rc, want_points = 0;

  if (json_unpack(req, "{ss s?F s?b}", "dtype", &dts, "max_seconds", &max_s,
                  "points", &want_points) < 0 ||
      !(max_s >= 0))
    return spmv_error_set(err, SPMV_EPROTO, "bad calibrate message");
  if ((rc = parse_dtype(dts, &dt, err)) < 0)
    return rc;
  return spmvd_calib_bounded(&h, seq, dt, max_s, want_points, rep, err);
}

static void serve_one(struct worker *w, json_t *req, int *fds, int nfds)
{
  struct spmv_error err;
  json_int_t seq = -1, h;
  const char *op = "";
  json_t *rep = NULL;
  int rc;

  spmv_error_clear(&err);
  if (json_unpack(req, "{ss sI}", "op", &op, "seq", &seq) < 0) {
    spmvd_log_error("bad message from the front end");
    exit(2);
  }
  if (strcmp(op, "load") == 0)
    rc = op_load(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "adopt") == 0)
    rc = op_adopt(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "prepare") == 0)
    rc = op_prepare(w, req, &rep, &err);
  else if (strcmp(op, "tune") == 0)
    rc = op_tune(w, req, seq, &rep, &err);
  else if (strcmp(op, "bench") == 0)
    rc = op_bench(w, req, seq, &rep, &err);
  else if (strcmp(op, "calibrate") == 0)
    rc = op_calibrate(w, req, seq, &rep, &err);
  else if (strcmp(op, "multiply") == 0)
    rc = op_multiply(w, req, fds, nfds, &rep, &err);
  else if (strcmp(op, "unload") == 0 &&
           json_unpack(req, "{sI}", "handle", &h) == 0) {
    drop(w, h);
    rep = json_object();
    rc = 0;
  } else if (strcmp(op, "release") == 0 &&
             json_unpack(req, "{sI}", "buf", &h) == 0) {
    buf_release(w, h);
    rep = json_object();
    rc = 0;
  } else
    rc = spmv_error_set(&err, SPMV_EPROTO, "unknown worker operation '%s'", op);
  die_if_sticky(rc);
  for (int i = 0; i < nfds; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  if (rc < 0) {
    if (err.code == 0)
      spmv_error_set(&err, rc, "%s", spmv_strerror(rc));
    reply_error(w, seq, &err);
    return;
  }
  if (!rep)
    rep = json_object();
  json_object_set_new(rep, "seq", json_integer(seq));
  json_object_set_new(rep, "ok", json_true());
  send_msg(w, rep);
}

/* Whether request req (served) may have freed device memory. */
static int may_free(json_t *req)
{
  const char *op = json_string_value(json_object_get(req, "op"));

  return op == NULL || (strcmp(op, "multiply") != 0 && strcmp(op, "release") != 0);
}

/* Milliseconds until w's trim is due (0: due now). */
static int trim_wait_ms(const struct worker *w)
{
  double left = TRIM_IDLE_MS - 1e3 * (now_s() - w->trim_from);

  return left > 0 ? (int)ceil(left) : 0;
}

/* Lets the backend give back the device memory its pool keeps. */
static void trim(struct worker *w)
{
  size_t n = w->ops->trim(w->be);

  if (n > 0)
    spmvd_log_debug("gave %zu bytes of device memory back", n);
  w->trim_due = 0;
}

/* 1 when nothing arrives on fd within ms (or poll fails: a trim early is
 * harmless), 0 when a message is waiting. */
static int idle_for(int fd, int ms)
{
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int n;

  do
    n = poll(&p, 1, ms);
  while (n < 0 && errno == EINTR);
  return n <= 0;
}

static const struct spmvd_backend_ops *pick_backend(const char *name)
{
#ifdef HAVE_CUDA
  if (strcmp(name, "cuda") == 0 || strcmp(name, "auto") == 0)
    return &spmvd_backend_cuda;
#endif
  if (strcmp(name, "cpu") == 0 || strcmp(name, "auto") == 0)
    return &spmvd_backend_cpu;
  return NULL;
}

static int open_backend(struct worker *w, const char *name, int dev,
                        struct spmv_error *err)
{
  w->ops = pick_backend(name);
  if (!w->ops)
    return spmv_error_set(err, SPMV_EUNSUPPORTED,
                          "backend '%s' is not built into this spmvd-worker",
                          name);
  int rc = w->ops->open(dev, &w->be, err);
  if (rc < 0 && strcmp(name, "auto") == 0 && w->ops != &spmvd_backend_cpu) {
    spmvd_log_info("no usable GPU (%s): using the cpu backend", err->msg);
    w->ops = &spmvd_backend_cpu;
    rc = w->ops->open(dev, &w->be, err);
  }
  if (rc < 0)
    return rc;
  return w->ops->info(w->be, &w->dev);
}

static json_t *device_json(const struct spmvd_device_info *d)
{
  return json_pack("{ss ss si si si si sI ss ss}", "backend", d->backend,
                   "name", d->name, "cc_major", d->cc_major, "cc_minor",
                   d->cc_minor, "sms", d->sms, "warp_size", d->warp_size,
                   "mem_bytes", (json_int_t)d->mem_bytes, "device_key",
                   d->device_key, "software_key", d->software_key);
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: spmvd-worker [--backend auto|cpu|cuda] [--device N]\n"
          "                    [--log-level LEVEL] [--syslog] [--help] [--version]\n"
          "The device worker of spmvd(8); spmvd starts it with its socket on fd %d.\n",
          SPMVD_IPC_WORKER_FD);
}

/* spmvd-worker: opens the backend, announces the device, serves requests. */
int main(int argc, char **argv)
{
  static const struct option lopts[] = {
    {"backend", required_argument, NULL, 'b'},
    {"device", required_argument, NULL, 'd'},
    {"log-level", required_argument, NULL, 'l'},
    {"syslog", no_argument, NULL, 's'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
  };
  const char *backend = "auto";
  enum spmvd_log_level level = SPMVD_LOG_INFO;
  enum spmvd_log_sink sink = SPMVD_LOG_STDERR;
  struct worker w = {.fd = SPMVD_IPC_WORKER_FD};
  struct spmv_error err;
  int dev = 0, c;

  while ((c = getopt_long(argc, argv, "b:d:l:shV", lopts, NULL)) != -1) {
    switch (c) {
    case 'b': backend = optarg; break;
    case 'd': dev = atoi(optarg); break;
    case 'l':
      if (spmvd_log_level_parse(optarg, &level) < 0) {
        fprintf(stderr, "spmvd-worker: unknown log level '%s'\n", optarg);
        return 1;
      }
      break;
    case 's': sink = SPMVD_LOG_SYSLOG; break;
    case 'h': usage(stdout); return 0;
    case 'V': printf("spmvd-worker %s\n", PACKAGE_VERSION); return 0;
    default: usage(stderr); return 1;
    }
  }
  spmvd_log_open("spmvd-worker", sink, level);
  signal(SIGPIPE, SIG_IGN);
  if (open_backend(&w, backend, dev, &err) < 0) {
    spmvd_log_error("cannot open the %s backend on device %d: %s", backend,
                    dev, err.msg);
    send_msg(&w, json_pack("{ss s{ss ss}}", "event", "failed", "error", "code",
                           spmv_err_name(err.code), "message", err.msg));
    return 1;
  }
  test_sleep("SPMVD_TEST_START_MS");
  send_msg(&w, json_pack("{ss so}", "event", "ready", "device",
                         device_json(&w.dev)));
  spmvd_log_debug("ready: %s backend, %s", w.dev.backend, w.dev.name);
  w.later_tail = &w.later;
  for (;;) {
    json_t *req;
    int fds[SPMVD_IPC_MAX_FDS], nfds, rc;
    /* What waited for a long operation goes first. */
    if (w.later) {
      struct deferred *d = w.later;
      w.later = d->next;
      if (!w.later)
        w.later_tail = &w.later;
      serve_deferred(&w, d);
      continue;
    }
    if (w.trim_due && idle_for(w.fd, trim_wait_ms(&w)))
      trim(&w);
    rc = spmvd_ipc_recv(w.fd, &req, fds, &nfds, SPMVD_IPC_MAX_FDS, &err);
    if (rc == SPMV_ECLOSED)
      break;
    if (rc < 0) {
      spmvd_log_error("%s", err.msg);
      return 2;
    }
    serve_one(&w, req, fds, nfds);
    if (w.ops->trim != NULL && may_free(req)) {
      w.trim_due = 1;
      w.trim_from = now_s();
    } else if (w.trim_due && trim_wait_ms(&w) == 0) {
      trim(&w);
    }
    json_decref(req);
  }
  while (w.mats)
    drop(&w, w.mats->handle);
  while (w.bufs)
    buf_release(&w, w.bufs->id);
  w.ops->close(w.be);
  return 0;
}
