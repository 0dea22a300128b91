/* spmv_client_int.h: what the files of libspmvclient share (not installed). */
#ifndef SPMV_CLIENT_INT_H
#define SPMV_CLIENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spmv.h"
#include "spmv_error.h"
#include "spmv_wire.h"

/*
 * Library-internal names use the prefix spmvc_: the shared library exports
 * only names matching ^spmv_, so these stay local to it.
 */

/* One connection.  lock serialises requests and guards every field but
 * path and fd's lifetime (fixed between connect and disconnect). */
struct spmv_client {
  pthread_mutex_t lock;
  int fd;                       /* connected Unix socket, -1 once broken */
  char path[108];               /* the socket path (sun_path size) */
  int64_t next_id;              /* id of the next request */
  struct spmv_wire_limits lim;  /* bounds on the replies we accept */
  struct spmv_error last;       /* the last failure, by any thread */
  struct spmv_matrix *matrices; /* loaded through this client (list) */
  struct spmv_vector *vectors;  /* device vectors created here (list) */
  atomic_int cancel_asked;      /* spmv_solve_cancel() was called */
  int64_t cancel_id;            /* a cancel sent, its reply not yet read
                                   (0: none), under lock */
};

/* A loaded matrix; fields fixed after load except the list links. */
struct spmv_matrix {
  struct spmv_client *client;
  int64_t handle;               /* the daemon's handle */
  enum spmv_dtype dtype;
  int64_t rows, cols, nnz;
  json_t *decision;             /* the load or last tune reply, under lock */
  int vfd;                      /* in-place vectors' memfd, -1 = none */
  void *vmap;                   /* its mapping: x_1..x_k then y_1..y_k */
  size_t vsize;                 /* bytes mapped */
  int vk;                       /* vectors of each kind */
  struct spmv_matrix *prev, *next; /* in client->matrices, under lock */
};

/* A device vector; fields fixed after creation except the list links. */
struct spmv_vector {
  struct spmv_client *client;
  int64_t id;                   /* the daemon's vector number */
  enum spmv_dtype dtype;
  int64_t n;                    /* values */
  struct spmv_vector *prev, *next; /* in client->vectors, under lock */
};

/* The kinds of step of an operation list (PROTOCOL.md, "ops"). */
enum spmvc_op {
  SPMVC_OP_SPMV, SPMVC_OP_COPY, SPMVC_OP_FILL, SPMVC_OP_SCALE,
  SPMVC_OP_AXPBY, SPMVC_OP_MUL, SPMVC_OP_DOT, SPMVC_OP_NRM2,
  SPMVC_OP_UPLOAD, SPMVC_OP_DOWNLOAD
};

/* A step as a caller describes it: the operands it names (NULL where the
 * kind has none), all borrowed; spmvc_op_add() checks and records it. */
struct spmvc_op_args {
  enum spmvc_op op;
  struct spmv_matrix *m;          /* spmv */
  struct spmv_vector *x, *y, *z;
  double alpha, beta;             /* spmv's numbers */
  struct spmv_scalar a, b;        /* fill's value, scale's alpha, axpby's */
  const void *src;                /* upload */
  void *dst;                      /* download */
};

/*
 * Records one step in l on behalf of the public function fn (named in
 * messages).  Returns 0, the index of the result of a dot or nrm2, or
 * SPMV_EINVAL / SPMV_ELIMIT / SPMV_ENOMEM, recorded on l's client.
 */
int spmvc_op_add(struct spmv_oplist *l, const char *fn,
                 const struct spmvc_op_args *a);

/* Frees c's vectors here only (spmv_disconnect: the daemon frees its
 * copies with the connection). */
void spmvc_vectors_forget(struct spmv_client *c);

/* A request's progress callback. */
struct spmvc_progress_cb {
  spmv_progress_fn fn;
  void *arg;
  spmv_points_fn points;  /* NULL, or called for each points event */
  int cancellable;        /* a solve: spmv_solve_cancel() may stop it */
};

/* Waits until c's socket has a frame to read, sending a cancel of request
 * id once spmv_solve_cancel() asks for one; 0, or the write's failure.
 * The caller holds c->lock. */
int spmvc_cancel_wait(struct spmv_client *c, int64_t id, struct spmv_error *err);

/* A request's payload, up to two pieces sent back to back. */
struct spmvc_payload {
  const void *p1;
  size_t n1;
  const void *p2;
  size_t n2;
};

/*
 * Sends one request (req borrowed; "id" is set here) with payload pl (may be
 * NULL), passes progress events to cb (may be NULL), and waits for the
 * reply.  The caller holds c->lock.  On success *reply is a new reference
 * and *rpayload (may be NULL if no payload is expected: one is then refused)
 * a malloc'd buffer of *rlen bytes, both owned by the caller.  A reply with
 * "ok": false returns its code with its message in err.  An I/O or protocol
 * failure breaks the connection: later requests fail with SPMV_ECLOSED.
 */
int spmvc_call(struct spmv_client *c, json_t *req,
               const struct spmvc_payload *pl,
               const struct spmvc_progress_cb *cb, json_t **reply,
               void **rpayload, uint64_t *rlen, struct spmv_error *err);

/* spmvc_call() of req (taken; NULL: out of memory) with no payloads under
 * c's lock, a failure recorded on c; *reply as spmvc_call's. */
int spmvc_simple_call(struct spmv_client *c, json_t *req, json_t **reply);

/*
 * As spmvc_call() without progress, for a product: the reply's payload,
 * when it is exactly ylen bytes, is read straight into y (borrowed; may
 * be left partly written when the connection breaks); any other payload
 * fails with SPMV_EPROTO.
 */
int spmvc_call_into(struct spmv_client *c, json_t *req,
                    const struct spmvc_payload *pl, json_t **reply, void *y,
                    size_t ylen, struct spmv_error *err);

/* As spmvc_call_into(), passing progress events to cb (may be NULL): a
 * solve's reply carries its solution the way a product's carries y. */
int spmvc_call_into_cb(struct spmv_client *c, json_t *req,
                       const struct spmvc_payload *pl,
                       const struct spmvc_progress_cb *cb, json_t **reply,
                       void *y, size_t ylen, struct spmv_error *err);

/*
 * As spmvc_call() without payload, passing descriptor fd (borrowed) with
 * the frame's first byte (SCM_RIGHTS); cb (may be NULL) gets progress.
 */
int spmvc_call_fd(struct spmv_client *c, json_t *req, int fd,
                  const struct spmvc_progress_cb *cb, json_t **reply,
                  struct spmv_error *err);

/* Host layouts this large are loaded through a memfd (spmvc_csr_memfd):
 * below it the payload's copies cost less than the memfd's set-up. */
#define SPMVC_MEMFD_MIN ((size_t)1 << 20)

/*
 * Writes a CSR matrix (values of dtype, widened to double) into a new
 * memfd in the host layout (spmv_wire_csr_layout) and seals it against
 * writing, shrinking and growing, for a load with "memfd": true.  Returns
 * the descriptor, owned by the caller, or -1 when any step failed (an old
 * kernel without memfd_create or sealing): the caller then sends the
 * matrix as a payload.
 */
int spmvc_csr_memfd(enum spmv_dtype dtype, int64_t rows, int64_t nnz,
                    const int64_t *row_ptr, const int32_t *col_idx,
                    const void *values);

/* Unmaps and closes m's in-place vectors, if any (no request is made). */
void spmvc_vectors_release(struct spmv_matrix *m);

/*
 * Connects to path and says hello: 0 with *out a new client, or a code with
 * err set and *absent 1 when nobody answers there (no socket, a stale one,
 * or a daemon that closed at once, as one does when it exits idle).
 */
int spmvc_connect_path(const char *path, struct spmv_client **out,
                       int *absent, struct spmv_error *err);

/*
 * Starts spmvd for a connection that found nobody at path (spmv_autostart.c)
 * and connects to it: 0 with *out a new client, else a code with err set.
 */
int spmvc_autostart(const char *path, struct spmv_client **out,
                    struct spmv_error *err);

/* Records err as the last failure on c (c may be NULL: this thread's
 * connect failure) for spmv_client_errmsg(); returns err->code.  The
 * caller must not hold c's lock (this takes it). */
int spmvc_fail(struct spmv_client *c, const struct spmv_error *err);

/* As spmvc_fail() for an error found here, not by the daemon: code and a
 * printf-style message. */
int spmvc_failf(struct spmv_client *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Locks and unlocks c. */
void spmvc_lock(struct spmv_client *c);
void spmvc_unlock(struct spmv_client *c);

/* Copies n values of size sz between host order and little-endian order
 * (the same operation both ways). */
void spmvc_le_copy(void *dst, const void *src, size_t n, size_t sz);

/* Dumps obj (borrowed) without its "id" and "ok" as a new malloc'd string. */
char *spmvc_dump_reply(json_t *obj);

/* Returns the integer member key of obj, or def when absent or not one. */
int64_t spmvc_get_int(const json_t *obj, const char *key, int64_t def);
/* Returns the number member key of obj, or def when absent or not one. */
double spmvc_get_num(const json_t *obj, const char *key, double def);
/* Copies the string member key of obj into buf (n bytes), "" when absent. */
void spmvc_get_str(const json_t *obj, const char *key, char *buf, size_t n);

#endif /* SPMV_CLIENT_INT_H */
