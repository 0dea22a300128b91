/* spmvd_conn.h: one client connection: credentials, frames in, replies out. */
#ifndef SPMVD_CONN_H
#define SPMVD_CONN_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>
#include <uv.h>

#include "spmv_error.h"
#include "spmv_wire.h"
#include "spmvd_shm.h"
#include "spmvd_vectors.h"

struct spmvd_server;

/* File descriptors kept of one frame, and in-place vector memfds kept. */
#define SPMVD_CONN_MAX_FDS 4
#define SPMVD_CONN_MAX_ATTACH 16

/* A client's vector memfd attached to one of its matrices (attach-vectors):
 * x_1..x_k at 0, then y_1..y_k; the worker maps it once under buf_id. */
struct spmvd_attach {
  int64_t handle;               /* the matrix; 0 = a free slot */
  int fd;                       /* the client's memfd (sealed, validated) */
  size_t size;                  /* the bytes the worker maps (in mem) */
  int k;                        /* vectors of each kind */
  int64_t buf_id;               /* its name for the worker */
  int gen;                      /* the worker incarnation holding it, -1 none */
  int wk;                       /* the worker: its matrix's */
};

/* Where the reader is in the current frame. */
enum spmvd_conn_read {
  SPMVD_READ_HEADER,
  SPMVD_READ_JSON,
  SPMVD_READ_PAYLOAD,
  SPMVD_READ_DISCARD,  /* skipping a refused request's payload */
  SPMVD_READ_BUSY      /* a request is being served: reading paused */
};

/*
 * A connection.  The pipe is embedded (libuv style) and the struct is freed
 * in the close callback once no request holds a reference.  Requests are
 * served one at a time: reading pauses from a complete frame until its
 * reply (spmvd_conn_done).
 */
struct spmvd_conn {
  uv_pipe_t pipe;
  struct spmvd_server *srv;     /* borrowed */
  uid_t uid;                    /* peer credentials read on accept */
  gid_t gid;
  pid_t pid;
  int hello;                    /* hello answered */
  int refs;                     /* 1 while open + 1 per request in flight */
  int closing;
  int close_after_write;        /* a fatal frame error: close once flushed */
  int writes;                   /* writes in flight */
  int write_blocked;            /* reading paused: replies not being read */
  enum spmvd_conn_read rstate;
  uint8_t hdr[SPMV_WIRE_HEADER_SIZE];
  uint64_t got;                 /* bytes of the current part read */
  uint64_t frame_ns;            /* when the frame's header was in (uv_hrtime) */
  uint64_t frame_start_ms;      /* when its first byte came (uv_now) */
  uint64_t idle_since_ms;       /* when it last had nothing in flight */
  uint64_t fatal_ms;            /* when a frame error's reply was queued */
  struct spmv_wire_header h;
  char *json;                   /* h.json_len bytes */
  json_t *req;                  /* the parsed request being read */
  int64_t req_id;
  struct spmvd_shm payload;     /* the request's payload, mapped */
  uint64_t discard_left;
  uint64_t mem;                 /* host copies of its matrices + payload */
  uint64_t payload_mem;         /* the current request's share of mem */
  struct spmvd_shm vec;         /* multiply vectors, kept across requests
                                   and grown only (counted in mem) */
  int64_t vec_id;               /* vec's name for the worker, 0 = none */
  int vec_gen;                  /* the worker incarnation (restarts) that
                                   has vec's memfd, -1 = none */
  int vec_users;                /* the request and the replies using vec */
  int payload_vec;              /* the current payload is read into vec */
  int nmatrices;
  int wk;                       /* its worker: its vectors, its loads */
  int fds[SPMVD_CONN_MAX_FDS];   /* descriptors received with this frame */
  int nkept;                    /* of which in fds */
  int nfds;                     /* received with this frame, all counted */
  int nlate;                    /* came after the frame's first byte: closed
                                   unused, and the request refused */
  struct spmvd_attach att[SPMVD_CONN_MAX_ATTACH];
  struct spmvd_vectors vecs;    /* its device vectors */
  struct spmvd_conn *prev, *next; /* the server's list */
};

/* Accepts a connection on listener into a new conn owned by srv's list;
 * returns 0 or a negative libuv code. */
int spmvd_conn_accept(struct spmvd_server *srv, uv_stream_t *listener,
                      struct spmvd_conn **out);

/* Starts reading frames. */
void spmvd_conn_start(struct spmvd_conn *c);

/*
 * Sends a frame: msg borrowed; payload (may be NULL) is stolen, and the
 * len bytes at off within it are sent after the JSON.
 */
void spmvd_conn_send(struct spmvd_conn *c, const json_t *msg,
                     struct spmvd_shm *payload, size_t off, size_t len);

/* Sends a frame whose payload is the len bytes at off in c->vec (held
 * until written); msg borrowed. */
void spmvd_conn_send_vec(struct spmvd_conn *c, const json_t *msg, size_t off,
                         size_t len);

/* The bytes a request with size bytes of vectors adds to c->mem: 0 when
 * c->vec is free and large enough (it is then reused). */
uint64_t spmvd_conn_vec_growth(const struct spmvd_conn *c, size_t size);

/* A new name for a worker buffer (vector memfds share one sequence). */
int64_t spmvd_conn_new_buf_id(void);

/* Sends {id, ok:false, error:{code, message}}. */
void spmvd_conn_send_error(struct spmvd_conn *c, int64_t id,
                           const struct spmv_error *err);

/* Ends the current request: reading resumes with the next frame.  The
 * request's payload (in c->payload unless an op took it) is released. */
void spmvd_conn_done(struct spmvd_conn *c);

/* Closes s (a region of c's requests): at once, or when it is large on
 * the server's background thread, where freeing its pages stalls nobody. */
void spmvd_conn_shm_close(struct spmvd_conn *c, struct spmvd_shm *s);

/* Takes a reference (a request in flight keeps the struct alive). */
void spmvd_conn_ref(struct spmvd_conn *c);
/* Drops a reference; the last one after close frees the connection. */
void spmvd_conn_unref(struct spmvd_conn *c);

/* Attaches the frame's first descriptor (taken from c->fds) to matrix
 * handle as its in-place vectors of size bytes (counted in c->mem), k of
 * each kind, replacing an earlier one; 0, or SPMV_ELIMIT when
 * SPMVD_CONN_MAX_ATTACH are held. */
int spmvd_conn_attach(struct spmvd_conn *c, int64_t handle, int wk, size_t size, int k,
                      struct spmv_error *err);

/* The vectors attached to matrix handle on c (borrowed), or NULL. */
struct spmvd_attach *spmvd_conn_attached(struct spmvd_conn *c, int64_t handle);

/* Releases the vectors attached to matrix handle on c, if any (the worker
 * unmaps its copy). */
void spmvd_conn_detach(struct spmvd_conn *c, int64_t handle);

/* Whether the client has hung up (a poll of the socket, reading nothing):
 * for a request that runs long while the connection is not read. */
int spmvd_conn_peer_gone(struct spmvd_conn *c);

/* Whether the client's next frame is a cancel of request target, which is
 * then taken off the socket (*cancel_id: its id); any other frame is left
 * unread.  For a solve, whose connection is not read while it runs. */
int spmvd_conn_take_cancel(struct spmvd_conn *c, int64_t target,
                           int64_t *cancel_id);

/* Applies frame_timeout_s and idle_timeout_s to c at now_ms (uv_now):
 * called by the server's sweep; a request in flight is never timed out. */
void spmvd_conn_sweep(struct spmvd_conn *c, uint64_t now_ms);

/* Closes the connection (its matrices are freed by the server). */
void spmvd_conn_close(struct spmvd_conn *c);

/* The connection's worker (borrowed), NULL once it stopped. */
struct spmvd_worker *spmvd_conn_worker(const struct spmvd_conn *c);

#endif /* SPMVD_CONN_H */
