/* itest.c: helpers of the integration tests: a private spmvd and raw clients. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "spmv_mmio.h"
#include "../testdata.h"

struct itest_daemon itest_d;

/* Checked fixture: a fresh daemon in itest_d for each test. */
void itest_setup(void)
{
  itest_daemon_init(&itest_d);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
}

/* Checked fixture: stops the daemon and removes its directory. */
void itest_teardown(void)
{
  itest_daemon_fini(&itest_d);
}

/* Runs suite s and returns the exit status for main. */
int itest_run(Suite *s)
{
  SRunner *sr = srunner_create(s);
  itest_ops_begin();
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Makes the temporary directory and the paths. */
void itest_daemon_init(struct itest_daemon *d)
{
  const char *tmp = getenv("TMPDIR");

  memset(d, 0, sizeof *d);
  snprintf(d->dir, sizeof d->dir, "%s/spmvd-test.XXXXXX", tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(d->dir));
  snprintf(d->sock, sizeof d->sock, "%s/spmvd.sock", d->dir);
  snprintf(d->db, sizeof d->db, "%s/cache.db", d->dir);
  snprintf(d->log, sizeof d->log, "%s/spmvd.log", d->dir);
}

/* Writes text as d->conf, then SPMV_ITEST_EXTRA_CONF's settings, which
 * thus win (e.g. a worker wrapper and no device timeout for a run under
 * compute-sanitizer, see tests/integration/gpu-sanitize.sh). */
void itest_daemon_config(struct itest_daemon *d, const char *text)
{
  const char *extra = getenv("SPMV_ITEST_EXTRA_CONF");

  snprintf(d->conf, sizeof d->conf, "%s/spmvd.conf", d->dir);
  FILE *f = fopen(d->conf, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  if (extra && *extra)
    fprintf(f, "\n%s\n", extra);
  fclose(f);
}

static const char *spmvd_path(void)
{
  static char path[1024];
  const char *b = getenv("SPMV_TOP_BUILDDIR");
  snprintf(path, sizeof path, "%s/daemon/spmvd", b ? b : ".");
  return path;
}

static pid_t spawn_daemon(struct itest_daemon *d, const char *extra)
{
  const char *conf = getenv("SPMV_ITEST_EXTRA_CONF");

  if (!*d->conf && conf && *conf)
    itest_daemon_config(d, "");
  pid_t parent = getpid();
  pid_t pid = fork();

  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    const char *argv[16];
    int n = 0;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      _exit(99);
    int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 2);
      close(fd);
    }
    setenv("SPMVD_CPU_THREADS", "2", 0);
    argv[n++] = spmvd_path();
    argv[n++] = "--foreground";
    argv[n++] = "--socket";
    argv[n++] = d->sock;
    argv[n++] = "--db";
    argv[n++] = d->db;
    argv[n++] = "--backend";
    /* The GPU suite runs the same daemon on the cuda backend. */
    argv[n++] = getenv("SPMV_ITEST_BACKEND") ? getenv("SPMV_ITEST_BACKEND") : "cpu";
    argv[n++] = "--log-level";
    argv[n++] = "debug";
    if (*d->conf) {
      argv[n++] = "--config";
      argv[n++] = d->conf;
    }
    if (extra)
      argv[n++] = extra;
    argv[n] = NULL;
    execv(argv[0], (char **)argv);
    _exit(127);
  }
  return pid;
}

/* Runs spmvd expecting it to exit within 5 s; returns its exit status. */
int itest_daemon_run(struct itest_daemon *d, const char *extra)
{
  pid_t pid = spawn_daemon(d, extra);
  int status;

  for (int i = 0; i < 500; i++) {
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

/* Starts spmvd on d's socket and database; 0 once it answers. */
/* A hello request of this protocol version (new reference). */
static json_t *hello_request(void)
{
  return json_pack("{ss si si ss}", "op", "hello", "id", 0, "version", 1,
                   "client", "itest");
}

/*
 * Is the daemon at path up: does it answer hello?  A bare connect is not
 * enough: once (1 run in about 40 under a loaded make -j check) the first
 * hello after a restart over a stale socket got no reply, so readiness is
 * a whole round trip (the cause is not found yet; see the daemon's log,
 * which itest_open prints when a hello goes unanswered).
 */
static int answers_hello(const char *path)
{
  int fd = itest_connect(path);
  json_t *r;
  int ok;

  if (fd < 0)
    return 0;
  r = itest_call(fd, hello_request(), NULL, 0, NULL, NULL);
  ok = json_is_true(json_object_get(r, "ok"));
  json_decref(r);
  close(fd);
  return ok;
}

int itest_daemon_start(struct itest_daemon *d, const char *extra)
{
  pid_t pid = spawn_daemon(d, extra);

  for (int i = 0; i < 500; i++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (answers_hello(d->sock)) {
      d->pid = pid;
      return 0;
    }
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  ck_abort_msg("spmvd did not start within 5 s (log %s)", d->log);
  return -1;
}

/* Sends sig and waits for the exit. */
int itest_daemon_stop(struct itest_daemon *d, int sig)
{
  int status = 0;

  if (d->pid <= 0)
    return -1;
  kill(d->pid, sig);
  for (int i = 0; i < 1000; i++) {
    if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
      d->pid = 0;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(10000);
  }
  kill(d->pid, SIGKILL);
  waitpid(d->pid, &status, 0);
  d->pid = 0;
  return 128 + SIGKILL;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
  return remove(path);
}

/* Stops the daemon if running and removes the temporary directory. */
void itest_daemon_fini(struct itest_daemon *d)
{
  if (d->pid > 0)
    itest_daemon_stop(d, SIGTERM);
  if (*d->dir && !getenv("ITEST_KEEP"))
    nftw(d->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Connects to path; returns the fd, or -1. */
int itest_connect(const char *path)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
    return fd;
  if (fd >= 0)
    close(fd);
  return -1;
}

/* Writes all of buf. */
int itest_write_raw(int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* The last ops sent on each fd with their ids, to check each reply and
 * event against the schema of the request of its id (a cancel's reply
 * comes while its solve's events still do); the last one when the id is
 * none of them. */
#define SENT_KEPT 4
static struct sent {
  json_int_t id;
  char op[32];
} sent_ops[1024][SENT_KEPT];
static unsigned sent_n[1024];

static const char *op_of(int fd, const json_t *frame)
{
  const json_t *id = json_object_get(frame, "id");
  unsigned n = sent_n[fd];

  for (unsigned k = 0; k < SENT_KEPT && k < n; k++) {
    const struct sent *s = &sent_ops[fd][(n - 1 - k) % SENT_KEPT];
    if (json_is_integer(id) && json_integer_value(id) == s->id)
      return s->op;
  }
  return n > 0 ? sent_ops[fd][(n - 1) % SENT_KEPT].op : "";
}

/* Sends a frame. */
int itest_send(int fd, json_t *json, const void *payload, uint64_t len)
{
  struct spmv_error err;
  const char *op = json_string_value(json_object_get(json, "op"));
  const json_t *id = json_object_get(json, "id");
  if (fd >= 0 && fd < 1024) {
    struct sent *s = &sent_ops[fd][sent_n[fd]++ % SENT_KEPT];
    s->id = json_is_integer(id) ? json_integer_value(id) : -2;
    snprintf(s->op, sizeof s->op, "%s", op ? op : "");
  }
  itest_ops_note("sent", op);
  int rc = spmv_wire_write_frame(fd, json, payload, len, &err) < 0 ? -1 : 0;
  json_decref(json);
  return rc;
}

/* Reads one frame: 0 after counting it when it is an event, 1 with the
 * reply in *out (its payload in *payload and *plen when they are not NULL,
 * else freed), -1 when the read failed. */
static int recv_reply_or_event(int fd, json_t **out, void **payload,
                               uint64_t *plen, int *events)
{
  struct spmv_wire_limits lim;
  struct spmv_error err;
  json_t *j = NULL;
  void *p = NULL;
  uint64_t n = 0;

  spmv_wire_limits_default(&lim);
  lim.max_payload = (uint64_t)1 << 40;
  if (spmv_wire_read_frame(fd, &lim, &j, &p, &n, &err) < 0)
    return -1;
  if (fd >= 0 && fd < 1024)
    itest_schema_check(op_of(fd, j), j);
  if (json_object_get(j, "event") && !json_object_get(j, "ok")) {
    if (events)
      (*events)++;
    json_decref(j);
    free(p);
    return 0;
  }
  if (payload)
    *payload = p;
  else
    free(p);
  if (plen)
    *plen = n;
  *out = j;
  return 1;
}

/* Reads frames until the reply. */
json_t *itest_recv_reply(int fd, void **payload, uint64_t *plen, int *events)
{
  json_t *j = NULL;
  int rc;

  while ((rc = recv_reply_or_event(fd, &j, payload, plen, events)) == 0)
    ;
  return rc > 0 ? j : NULL;
}

/* Sends a request and reads its reply. */
json_t *itest_call(int fd, json_t *req, const void *payload, uint64_t len,
                   void **reply_payload, uint64_t *reply_len)
{
  int rc = itest_send(fd, req, payload, len);
  if (rc < 0)
    return NULL;
  return itest_recv_reply(fd, reply_payload, reply_len, NULL);
}

/* See itest.h. */
int64_t itest_status_int(int fd, const char *key)
{
  json_t *r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 99),
                         NULL, 0, NULL, NULL);
  ck_assert_msg(r && json_is_true(json_object_get(r, "ok")), "no status");
  int64_t n = json_integer_value(json_object_get(r, key));
  json_decref(r);
  return n;
}

int64_t itest_resident(int fd)
{
  return itest_status_int(fd, "matrices");
}

/* See itest.h. */
json_t *itest_recv_ready(int fd, int *events)
{
  struct pollfd p = {fd, POLLIN, 0};

  while (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP))) {
    json_t *j = NULL;
    int rc = recv_reply_or_event(fd, &j, NULL, NULL, events);
    ck_assert_msg(rc >= 0, "the connection failed while its events were read");
    if (rc == 1)
      return j;
  }
  return NULL;
}

/* See itest.h. */
int itest_log_wait(const struct itest_daemon *d, const char *text, int ms)
{
  for (int waited = 0;; waited += 10) {
    FILE *f = fopen(d->log, "r");
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
      found = strstr(line, text) != NULL;
    if (f)
      fclose(f);
    if (found)
      return 1;
    if (waited >= ms)
      return 0;
    usleep(10000);
  }
}

/* Copies the daemon's log to stderr, so that a failure in CI shows why. */
static void dump_log(const struct itest_daemon *d)
{
  char line[512];
  FILE *f = fopen(d->log, "r");

  if (f == NULL)
    return;
  fprintf(stderr, "---- %s ----\n", d->log);
  while (fgets(line, sizeof line, f) != NULL)
    fputs(line, stderr);
  fprintf(stderr, "---- end of %s ----\n", d->log);
  fclose(f);
}

/* Connects and says hello. */
int itest_open(const struct itest_daemon *d)
{
  int fd = itest_connect(d->sock);
  ck_assert_int_ge(fd, 0);
  json_t *r = itest_call(fd, hello_request(), NULL, 0, NULL, NULL);
  if (r == NULL)
    dump_log(d);
  ck_assert_msg(r != NULL, "no reply to hello from the spmvd at %s (its log is above)",
                d->sock);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "hello failed");
  json_decref(r);
  return fd;
}

/* The error code name of a reply, or "" when ok. */
const char *itest_error_code(const json_t *reply)
{
  const char *s = json_string_value(
      json_object_get(json_object_get(reply, "error"), "code"));
  return s ? s : "";
}

/* Builds the payload of a load of A. */
void *itest_csr_payload(const struct spmv_csr *A, int index64, int f32,
                        uint64_t *len)
{
  size_t iw = index64 ? 8 : 4, vw = f32 ? 4 : 8;
  size_t n = (size_t)(A->rows + 1) * iw + (size_t)A->nnz * (4 + vw);
  char *buf = malloc(n ? n : 1), *p = buf;

  ck_assert_ptr_nonnull(buf);
  for (int64_t i = 0; i <= A->rows; i++) {
    if (index64) {
      memcpy(p, &A->row_ptr[i], 8);
    } else {
      int32_t v = (int32_t)A->row_ptr[i];
      memcpy(p, &v, 4);
    }
    p += iw;
  }
  memcpy(p, A->col_idx, (size_t)A->nnz * 4);
  p += (size_t)A->nnz * 4;
  for (int64_t k = 0; k < A->nnz; k++) {
    if (f32) {
      float f = (float)A->val[k];
      memcpy(p, &f, 4);
    } else {
      memcpy(p, &A->val[k], 8);
    }
    p += vw;
  }
  *len = n;
  return buf;
}

/* The handle of a load's reply, asserting that it succeeded. */
int64_t itest_handle(json_t *r)
{
  ck_assert_ptr_nonnull(r);
  ck_assert_msg(json_is_true(json_object_get(r, "ok")), "load failed: %s",
                json_string_value(json_object_get(json_object_get(r, "error"),
                                                  "message")));
  return json_integer_value(json_object_get(r, "handle"));
}

json_t *itest_load_as(int fd, int64_t id, const struct spmv_csr *A, int f32,
                       const char *strategy, int split)
{
  uint64_t len;
  void *p = itest_csr_payload(A, 0, f32, &len);
  json_t *req = json_pack("{ss sI ss sI sI sI ss}", "op", "load", "id",
                          (json_int_t)id, "dtype", f32 ? "f32" : "f64", "rows",
                          (json_int_t)A->rows, "cols", (json_int_t)A->cols,
                          "nnz", (json_int_t)A->nnz, "index", "i32");
  if (strategy)
    json_object_set_new(req, "strategy", json_string(strategy));
  if (split > 1)
    json_object_set_new(req, "split", json_integer(split));
  json_t *r = itest_call(fd, req, p, len, NULL, NULL);
  free(p);
  return r;
}

json_t *itest_load(int fd, int64_t id, const struct spmv_csr *A, int f32,
                   const char *strategy)
{
  return itest_load_as(fd, id, A, f32, strategy, 1);
}

json_t *itest_load_split(int fd, int64_t id, const struct spmv_csr *A, int f32,
                         int n)
{
  json_t *r = itest_load_as(fd, id, A, f32, "auto", n);

  ck_assert_ptr_nonnull(r);
  return r;
}

/* Seconds on the monotonic clock. */
double itest_now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Multiplies through the daemon and compares with spmv_csr_ref. */
void itest_multiply_ok(int fd, int64_t handle, const struct spmv_csr *A,
                       int f32, unsigned seed)
{
  char code[32] = "";
  double q = itest_multiply_check(fd, handle, A, f32, seed, code);

  ck_assert_msg(q >= 0 && q <= 1.0, "matrix %lld: %s (residual %g of its bound)",
                (long long)handle, q < 0 ? code : "wrong product", q);
}

double itest_multiply_check(int fd, int64_t handle, const struct spmv_csr *A,
                            int f32, unsigned seed, char code[32])
{
  size_t vw = f32 ? 4 : 8;
  double *x = malloc(sizeof *x * (size_t)(A->cols + 1));
  double *yref = malloc(sizeof *yref * (size_t)(A->rows + 1));
  double *y0 = malloc(sizeof *y0 * (size_t)(A->rows + 1));
  char *payload = malloc(vw * (size_t)(A->cols + A->rows + 1));
  void *out = NULL;
  uint64_t outlen = 0;
  double alpha = 1.5, beta = -0.5, result = -1;

  ck_assert(x && yref && y0 && payload);
  srand(seed);
  for (int64_t j = 0; j < A->cols; j++) {
    x[j] = (double)rand() / RAND_MAX * 2 - 1;
    if (f32)
      x[j] = (float)x[j];
  }
  for (int64_t i = 0; i < A->rows; i++) {
    y0[i] = (double)rand() / RAND_MAX;
    if (f32)
      y0[i] = (float)y0[i];
    yref[i] = y0[i];
  }
  for (int64_t j = 0; j < A->cols; j++) {
    float f = (float)x[j];
    memcpy(payload + (size_t)j * vw, f32 ? (void *)&f : (void *)&x[j], vw);
  }
  for (int64_t i = 0; i < A->rows; i++) {
    float f = (float)y0[i];
    memcpy(payload + (size_t)(A->cols + i) * vw,
           f32 ? (void *)&f : (void *)&y0[i], vw);
  }
  json_t *r = itest_call(fd,
                         json_pack("{ss si sI sf sf}", "op", "multiply", "id",
                                   7, "handle", (json_int_t)handle, "alpha",
                                   alpha, "beta", beta),
                         payload, vw * (size_t)(A->cols + A->rows), &out,
                         &outlen);
  if (code)
    snprintf(code, 32, "%s", r ? itest_error_code(r) : "ECLOSED");
  if (!r) {
    result = -2;
    goto out;
  }
  if (!json_is_true(json_object_get(r, "ok")))
    goto out;
  ck_assert_uint_eq(outlen, vw * (size_t)A->rows);
  spmv_csr_ref(A, alpha, x, beta, yref);
  double anorm = 0, xnorm = 0, ynorm = 0, diff = 0;
  int64_t maxlen = 1;
  for (int64_t i = 0; i < A->rows; i++) {
    double s = 0, yi;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      s += fabs(A->val[k]);
    anorm = fmax(anorm, s);
    if (A->row_ptr[i + 1] - A->row_ptr[i] > maxlen)
      maxlen = A->row_ptr[i + 1] - A->row_ptr[i];
    if (f32) {
      float f;
      memcpy(&f, (char *)out + (size_t)i * 4, 4);
      yi = f;
    } else {
      memcpy(&yi, (char *)out + (size_t)i * 8, 8);
    }
    ynorm = fmax(ynorm, fabs(yref[i]));
    double d = fabs(yi - yref[i]);
    if (!(d <= diff))
      diff = d;
  }
  for (int64_t j = 0; j < A->cols; j++)
    xnorm = fmax(xnorm, fabs(x[j]));
  double eps = f32 ? 1.1920929e-7 : 2.220446049250313e-16;
  double scale = fabs(alpha) * anorm * xnorm + fabs(beta) * ynorm + ynorm;
  double bound = 8.0 * eps * (double)(maxlen + 2);
  result = (scale > 0 ? diff / scale : diff) / bound;
  if (isnan(result))
    result = INFINITY;
out:
  json_decref(r);
  free(out);
  free(x);
  free(yref);
  free(y0);
  free(payload);
  return result;
}

/* Reads a matrix of the test data by file name (testdata.h). */
struct spmv_csr *itest_matrix(const char *name)
{
  char path[4096];
  struct spmv_csr *A = NULL;
  struct spmv_error err;

  itest_matrix_path(name, path, sizeof path);
  ck_assert_msg(spmv_mmio_read(path, &A, NULL, &err) == 0, "%s: %s", path,
                err.msg);
  return A;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The path of a matrix of the test data, asserted to exist. */
void itest_matrix_path(const char *name, char *path, size_t n)
{
  ck_assert_msg(testdata_path(name, path, n) == 0, "%s: not found", path);
}

/* Lists the .mtx / .mtx.gz files of the matrix folder (testdata.h). */
char **itest_matrix_names(void)
{
  const char *dir = testdata_dir();
  DIR *d = opendir(dir);
  char **names = calloc(1024, sizeof *names);
  struct dirent *e;
  size_t n = 0;

  ck_assert_msg(d != NULL, "cannot open the matrix folder %s", dir);
  while ((e = readdir(d)) && n < 1023) {
    size_t l = strlen(e->d_name);
    if ((l > 4 && strcmp(e->d_name + l - 4, ".mtx") == 0) ||
        (l > 7 && strcmp(e->d_name + l - 7, ".mtx.gz") == 0))
      names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  return names;
}

/* Frees a list from itest_matrix_names(). */
void itest_names_free(char **names)
{
  for (char **p = names; p && *p; p++)
    free(*p);
  free(names);
}

/* A small random square matrix. */
struct spmv_csr *itest_random_csr(int64_t n, int per_row, unsigned sseed,
                                  unsigned vseed)
{
  struct spmv_csr *A = spmv_csr_new(n, n, n * per_row);
  unsigned s = sseed * 2654435761u + 1, v = vseed * 2246822519u + 7;

  ck_assert_ptr_nonnull(A);
  for (int64_t i = 0; i < n; i++) {
    A->row_ptr[i + 1] = A->row_ptr[i] + per_row;
    for (int k = 0; k < per_row; k++) {
      s = s * 1103515245u + 12345u;
      v = v * 1103515245u + 12345u;
      A->col_idx[i * per_row + k] = (int32_t)((s >> 8) % (unsigned)n);
      A->val[i * per_row + k] = (double)(v >> 8 & 0xffff) / 65536.0 + 0.5;
    }
  }
  return A;
}
