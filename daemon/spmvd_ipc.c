/* spmvd_ipc.c: messages between the front end and a worker (SOCK_SEQPACKET). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spmvd_cache.h"
#include "spmvd_ipc.h"
#include "spmv_wire.h"

/* Creates the front end's and the worker's ends of a socketpair. */
int spmvd_ipc_pair(int sv[2], struct spmv_error *err)
{
  int size = 4 * SPMVD_IPC_MAX_BYTES;

  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return spmv_error_set(err, SPMV_EIO, "socketpair: %s", strerror(errno));
  for (int i = 0; i < 2; i++) {
    setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
  return 0;
}

/* Sends one message with fds attached. */
int spmvd_ipc_send(int fd, const json_t *msg, const int *fds, int nfds,
                   struct spmv_error *err)
{
  struct iovec iov;
  char *text;
  ssize_t n;
  int rc = 0;

  if (nfds > SPMVD_IPC_MAX_FDS)
    return spmv_error_set(err, SPMV_EINVAL, "%d fds in one message", nfds);
  text = json_dumps(msg, JSON_COMPACT);
  if (!text)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  if (strlen(text) > SPMVD_IPC_MAX_BYTES) {
    rc = spmv_error_set(err, SPMV_ETOOBIG, "worker message of %zu bytes",
                        strlen(text));
    goto out;
  }
  iov.iov_base = text;
  iov.iov_len = strlen(text);
  n = spmv_wire_sendmsg(fd, &iov, 1, fds, nfds);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      rc = spmv_error_set(err, SPMV_EBUSY, "worker socket full");
    else if (errno == EPIPE || errno == ECONNRESET)
      rc = spmv_error_set(err, SPMV_ECLOSED, "worker socket closed");
    else
      rc = spmv_error_set(err, SPMV_EIO, "sendmsg: %s", strerror(errno));
  }
out:
  free(text);
  return rc;
}

/* Receives one message and the fds attached to it. */
int spmvd_ipc_recv(int fd, json_t **msg, int *fds, int *nfds, int maxfds,
                   struct spmv_error *err)
{
  union {
    struct cmsghdr hdr;
    char buf[CMSG_SPACE(sizeof(int) * SPMVD_IPC_MAX_FDS * 2)];
  } ctl;
  struct msghdr mh = {0};
  struct iovec iov;
  json_error_t jerr;
  char *buf = malloc(SPMVD_IPC_MAX_BYTES + 1);
  ssize_t n;
  int rc = 0, got = 0;

  *msg = NULL;
  *nfds = 0;
  if (!buf)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  iov.iov_base = buf;
  iov.iov_len = SPMVD_IPC_MAX_BYTES + 1;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.buf;
  mh.msg_controllen = sizeof ctl.buf;
  do
    n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      rc = spmv_error_set(err, SPMV_EBUSY, "no message waiting");
    else if (errno == ECONNRESET)
      rc = spmv_error_set(err, SPMV_ECLOSED, "worker socket closed");
    else
      rc = spmv_error_set(err, SPMV_EIO, "recvmsg: %s", strerror(errno));
    goto out;
  }
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int *in = (int *)CMSG_DATA(c);
    for (size_t i = 0; i < k; i++) {
      if (got < maxfds)
        fds[got++] = in[i];
      else
        close(in[i]);
    }
  }
  *nfds = got;
  if (n == 0) {
    rc = spmv_error_set(err, SPMV_ECLOSED, "worker socket closed");
    goto out;
  }
  if (n > SPMVD_IPC_MAX_BYTES || (mh.msg_flags & MSG_TRUNC)) {
    rc = spmv_error_set(err, SPMV_EPROTO, "worker message over %d bytes",
                        SPMVD_IPC_MAX_BYTES);
    goto out;
  }
  *msg = json_loadb(buf, (size_t)n, 0, &jerr);
  if (!*msg || !json_is_object(*msg)) {
    json_decref(*msg);
    *msg = NULL;
    rc = spmv_error_set(err, SPMV_EPROTO, "bad worker message: %s", jerr.text);
  }
out:
  if (rc < 0) {
    for (int i = 0; i < got; i++)
      close(fds[i]);
    *nfds = 0;
  }
  free(buf);
  return rc;
}

/* Returns a new reference to p as JSON: the cache's own form of a profile. */
json_t *spmvd_ipc_profile_pack(const struct spmv_profile *p)
{
  return spmvd_cache_profile_json(p);
}

/* Reads what spmvd_ipc_profile_pack() wrote; 0 or SPMV_EPROTO. */
int spmvd_ipc_profile_unpack(const json_t *j, struct spmv_profile *p)
{
  json_int_t rows, cols, nnz, rl_min, rl_max, empty, hyb_k, ndiags;
  json_t *hist;
  size_t i;
  json_t *v;

  memset(p, 0, sizeof *p);
  if (json_unpack((json_t *)j,
                  "{sI sI sI sI sI sF sF sF sI sF sI sI sF sF so}", "rows",
                  &rows, "cols", &cols, "nnz", &nnz, "rl_min", &rl_min,
                  "rl_max", &rl_max, "rl_mean", &p->rl_mean, "rl_sigma",
                  &p->rl_sigma, "rl_cv", &p->rl_cv, "empty_rows", &empty,
                  "ell_fill", &p->ell_fill, "hyb_k", &hyb_k, "ndiags", &ndiags,
                  "dia_fill", &p->dia_fill, "col_locality", &p->col_locality,
                  "hist", &hist) < 0 ||
      !json_is_array(hist) || json_array_size(hist) > SPMV_PROFILE_BINS)
    return SPMV_EPROTO;
  p->rows = rows;
  p->cols = cols;
  p->nnz = nnz;
  p->rl_min = rl_min;
  p->rl_max = rl_max;
  p->empty_rows = empty;
  p->hyb_k = hyb_k;
  p->ndiags = ndiags;
  json_array_foreach(hist, i, v) p->hist[i] = json_integer_value(v);
  return 0;
}

/* Returns a new reference to a trial's JSON. */
json_t *spmvd_ipc_trial_pack(const struct spmvd_trial *t)
{
  char text[64];

  spmv_config_format(&t->cfg, text, sizeof text);
  return json_pack("{ss ss sf sf si si si ss}", "config", text, "status",
                   spmvd_trial_status_name(t->status), "time_us", t->time_us,
                   "best_us", t->best_us, "rounds", t->rounds, "runs", t->runs,
                   "code", t->code, "message", t->msg);
}

/* Returns a new reference to a decision d with its trials. */
json_t *spmvd_ipc_decision_pack(const struct spmvd_decision *d)
{
  json_t *trials = json_array();

  for (size_t i = 0; i < d->ntrials; i++)
    json_array_append_new(trials, spmvd_ipc_trial_pack(&d->trials[i]));
  return json_pack("{ss ss sf sf sf sf so}", "config", d->text, "strategy",
                   spmvd_strategy_name(d->strategy), "time_us", d->time_us,
                   "gflops", d->gflops, "gbps", d->gbps, "cost_spmv",
                   d->cost_spmv, "trials", trials);
}

static int trial_unpack(const json_t *j, struct spmvd_trial *t)
{
  const char *cfg, *status, *msg;

  memset(t, 0, sizeof *t);
  if (json_unpack((json_t *)j, "{ss ss sF sF si si si ss}", "config", &cfg,
                  "status", &status, "time_us", &t->time_us, "best_us",
                  &t->best_us, "rounds", &t->rounds, "runs", &t->runs, "code",
                  &t->code, "message", &msg) < 0 ||
      spmv_config_parse(cfg, &t->cfg, NULL) < 0 ||
      spmvd_trial_status_parse(status, &t->status) < 0)
    return SPMV_EPROTO;
  snprintf(t->msg, sizeof t->msg, "%s", msg);
  return 0;
}

/* Reads what spmvd_ipc_decision_pack() wrote into d (owning its trials). */
int spmvd_ipc_decision_unpack(const json_t *j, struct spmvd_decision *d)
{
  const char *cfg, *strategy;
  json_t *trials;

  spmvd_decision_init(d);
  if (json_unpack((json_t *)j, "{ss ss sF sF sF sF so}", "config", &cfg,
                  "strategy", &strategy, "time_us", &d->time_us, "gflops",
                  &d->gflops, "gbps", &d->gbps, "cost_spmv", &d->cost_spmv,
                  "trials", &trials) < 0 ||
      !json_is_array(trials) || spmv_config_parse(cfg, &d->cfg, NULL) < 0 ||
      spmvd_strategy_parse(strategy, &d->strategy, NULL) < 0)
    return SPMV_EPROTO;
  spmv_config_format(&d->cfg, d->text, sizeof d->text);
  size_t n = json_array_size(trials);
  if (n) {
    d->trials = calloc(n, sizeof *d->trials);
    if (!d->trials)
      return SPMV_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    if (trial_unpack(json_array_get(trials, i), &d->trials[i]) < 0) {
      spmvd_decision_fini(d);
      return SPMV_EPROTO;
    }
    d->ntrials = i + 1;
  }
  return 0;
}

json_t *spmvd_ipc_real(double d)
{
  if (isnan(d))
    return json_string("NaN");
  if (isinf(d))
    return json_string(d > 0 ? "Infinity" : "-Infinity");
  return json_real(d);
}

double spmvd_ipc_real_value(const json_t *j)
{
  const char *s = json_string_value(j);

  if (!s)
    return json_number_value(j);
  if (strcmp(s, "Infinity") == 0)
    return INFINITY;
  if (strcmp(s, "-Infinity") == 0)
    return -INFINITY;
  return NAN;
}
