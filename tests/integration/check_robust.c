/* check_robust.c: a real spmvd under bad frames, disconnects, crowds, kills. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"


static void hello_answers(void)
{
  int fd = itest_open(&itest_d);
  close(fd);
}

static void header(uint8_t out[24], uint32_t magic, uint32_t jlen,
                   uint32_t reserved, uint64_t plen)
{
  struct spmv_wire_header h = {magic, 1, 0, jlen, reserved, plen};
  spmv_wire_header_encode(&h, out);
}

/* The message of error reply r (borrowed). */
static const char *frame_msg(const json_t *r)
{
  return json_string_value(json_object_get(json_object_get(r, "error"),
                                           "message"));
}

/* Reads the reply to a broken frame and checks its code and id; then the
 * connection must be closed (fatal) or still answer (not fatal). */
static void expect(int fd, const char *code, int64_t id, int fatal)
{
  json_t *r = itest_recv_reply(fd, NULL, NULL, NULL);
  ck_assert_msg(r != NULL, "no reply, expected %s", code);
  ck_assert_str_eq(itest_error_code(r), code);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), id);
  ck_assert_ptr_nonnull(json_string_value(
      json_object_get(json_object_get(r, "error"), "message")));
  json_decref(r);
  if (fatal) {
    char c;
    ck_assert_int_le(recv(fd, &c, 1, 0), 0);
  } else {
    r = itest_call(fd, json_pack("{ss si si ss}", "op", "hello", "id", 99,
                                 "version", 1, "client", "again"),
                   NULL, 0, NULL, NULL);
    ck_assert(r && json_is_true(json_object_get(r, "ok")));
    json_decref(r);
  }
  close(fd);
  hello_answers();
}

/* Connects and sends a bare header with the given fields. */
static int send_header(uint32_t magic, uint32_t jlen, uint32_t reserved,
                       uint64_t plen)
{
  uint8_t h[24];
  int fd = itest_connect(itest_d.sock);
  ck_assert_int_ge(fd, 0);
  header(h, magic, jlen, reserved, plen);
  itest_write_raw(fd, h, 24);
  return fd;
}

START_TEST(bad_magic)
{
  int fd = send_header(0x12345678u, 2, 0, 0);
  itest_write_raw(fd, "{}", 2);
  expect(fd, "EPROTO", -1, 1);
}
END_TEST

START_TEST(bad_reserved)
{
  expect(send_header(SPMV_WIRE_MAGIC, 2, 7, 0), "EPROTO", -1, 1);
}
END_TEST

START_TEST(oversized_json)
{
  expect(send_header(SPMV_WIRE_MAGIC, 64u << 20, 0, 0), "ELIMIT", -1, 1);
}
END_TEST

START_TEST(oversized_payload)
{
  expect(send_header(SPMV_WIRE_MAGIC, 2, 0, (uint64_t)1 << 50), "ELIMIT", -1, 1);
}
END_TEST

START_TEST(invalid_json)
{
  int fd = send_header(SPMV_WIRE_MAGIC, 9, 0, 0);
  itest_write_raw(fd, "{\"op\":hel", 9);
  expect(fd, "EPROTO", -1, 1);
}
END_TEST

START_TEST(truncated_frame)
{
  int fd = send_header(SPMV_WIRE_MAGIC, 100, 0, 0);
  uint8_t h[24];
  itest_write_raw(fd, "{\"op\":", 6);
  close(fd);
  fd = itest_connect(itest_d.sock);
  header(h, SPMV_WIRE_MAGIC, 100, 0, 0);
  itest_write_raw(fd, h, 10);
  close(fd);
  hello_answers();
}
END_TEST

/* Sends a hello inside a header of protocol version v. */
static int hello_of_version(uint16_t v)
{
  const char *js = "{\"op\":\"hello\",\"id\":1,\"version\":1}";
  struct spmv_wire_header h = {SPMV_WIRE_MAGIC, v, 0, (uint32_t)strlen(js),
                               0, 0};
  uint8_t hdr[24];
  int fd = itest_connect(itest_d.sock);

  ck_assert_int_ge(fd, 0);
  spmv_wire_header_encode(&h, hdr);
  itest_write_raw(fd, hdr, 24);
  itest_write_raw(fd, js, strlen(js));
  return fd;
}

/* Reads a frame error reply and returns its message (static). */
static const char *frame_error(int fd, const char *code)
{
  static char msg[256];
  json_t *r = itest_recv_reply(fd, NULL, NULL, NULL);

  ck_assert_msg(r != NULL, "no reply, expected %s", code);
  ck_assert_str_eq(itest_error_code(r), code);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), -1);
  snprintf(msg, sizeof msg, "%s", frame_msg(r));
  json_decref(r);
  return msg;
}

/* A v0 or v2 header is refused naming both versions, then closed. */
START_TEST(header_version)
{
  for (uint16_t v = 0; v <= 2; v += 2) {
    char want[64];
    int fd = hello_of_version(v);
    snprintf(want, sizeof want, "frame of protocol version %u, spmvd speaks 1",
             (unsigned)v);
    ck_assert_str_eq(frame_error(fd, "EVERSION"), want);
    char c;
    ck_assert_int_le(recv(fd, &c, 1, 0), 0);
    close(fd);
  }
  hello_answers();
}
END_TEST

/* Writes len bytes of a frame on fd, shuts the writing side and expects
 * the truncation error naming n of m bytes of part, then the close. */
static void truncated_at(int fd, const void *frame, size_t len,
                         const char *want)
{
  char c;

  itest_write_raw(fd, frame, len);
  ck_assert_int_eq(shutdown(fd, SHUT_WR), 0);
  const char *msg = frame_error(fd, "EPROTO");
  ck_assert_msg(strstr(msg, want) != NULL, "'%s' does not say '%s'", msg, want);
  ck_assert_int_le(recv(fd, &c, 1, 0), 0);
  close(fd);
}

/* A frame cut in its header, JSON or payload, then shutdown(SHUT_WR), is
 * answered before the close. */
START_TEST(truncated_answered)
{
  const char *js = "{\"op\":\"status\",\"id\":1}";
  uint8_t frame[24 + 64];

  header(frame, SPMV_WIRE_MAGIC, (uint32_t)strlen(js), 0, 0);
  memcpy(frame + 24, js, strlen(js));
  truncated_at(itest_connect(itest_d.sock), frame, 1,
               "truncated frame: the stream ended after 1 of 24 bytes of the header");
  truncated_at(itest_connect(itest_d.sock), frame, 23,
               "after 23 of 24 bytes of the header");
  char want[96];
  snprintf(want, sizeof want, "after 6 of %zu bytes of the JSON", strlen(js));
  truncated_at(itest_connect(itest_d.sock), frame, 30, want);

  struct spmv_csr *A = itest_random_csr(300, 4, 2, 2);
  uint64_t len;
  void *p = itest_csr_payload(A, 0, 0, &len);
  char *req = NULL;
  ck_assert_int_gt(asprintf(&req, "{\"op\":\"load\",\"id\":2,\"dtype\":"
                            "\"f64\",\"rows\":300,\"cols\":300,\"nnz\":%lld,"
                            "\"index\":\"i32\"}", (long long)A->nnz), 0);
  int fd = itest_open(&itest_d);
  header(frame, SPMV_WIRE_MAGIC, (uint32_t)strlen(req), 0, len);
  itest_write_raw(fd, frame, 24);
  itest_write_raw(fd, req, strlen(req));
  snprintf(want, sizeof want, "after 100 of %llu bytes of the payload",
           (unsigned long long)len);
  truncated_at(fd, p, 100, want);
  free(req);
  free(p);
  spmv_csr_free(A);
  hello_answers();
}
END_TEST

START_TEST(unknown_op)
{
  int fd = itest_open(&itest_d);
  itest_send(fd, json_pack("{ss si}", "op", "frobnicate", "id", 5), NULL, 0);
  json_t *r = itest_recv_reply(fd, NULL, NULL, NULL);
  ck_assert_str_eq(frame_msg(r), "unknown operation 'frobnicate'");
  json_decref(r);
  itest_send(fd, json_pack("{ss si}", "op", "frobnicate", "id", 6), NULL, 0);
  expect(fd, "EPROTO", 6, 0);
}
END_TEST

START_TEST(hello_first)
{
  int fd = itest_connect(itest_d.sock);
  itest_send(fd, json_pack("{ss si}", "op", "status", "id", 3), NULL, 0);
  expect(fd, "EPROTO", 3, 0);
}
END_TEST

START_TEST(missing_id)
{
  int fd = itest_open(&itest_d);
  itest_send(fd, json_pack("{ss}", "op", "status"), NULL, 0);
  expect(fd, "EPROTO", -1, 0);
}
END_TEST

/* A payload whose length disagrees with the JSON is skipped: in sync. */
START_TEST(wrong_payload_length)
{
  int fd = itest_open(&itest_d);
  char junk[100] = {0};
  itest_send(fd, json_pack("{ss si ss si si si ss}", "op", "load", "id", 4,
                           "dtype", "f64", "rows", 10, "cols", 10, "nnz", 10,
                           "index", "i32"), junk, sizeof junk);
  expect(fd, "EPROTO", 4, 0);
  fd = itest_open(&itest_d);
  itest_send(fd, json_pack("{ss si}", "op", "status", "id", 5), junk, 7);
  expect(fd, "EPROTO", 5, 0);
}
END_TEST

START_TEST(invalid_csr)
{
  struct spmv_csr *A = itest_random_csr(50, 3, 9, 9);
  int fd = itest_open(&itest_d);
  json_t *r;

  A->col_idx[40] = 70;
  r = itest_load(fd, 8, A, 0, "trial");
  ck_assert_str_eq(itest_error_code(r), "ECSR");
  ck_assert_ptr_nonnull(strstr(frame_msg(r), "70"));
  json_decref(r);
  A->col_idx[40] = 1;
  A->row_ptr[20] = A->row_ptr[22];
  r = itest_load(fd, 9, A, 0, "trial");
  ck_assert_str_eq(itest_error_code(r), "ECSR");
  json_decref(r);
  A->row_ptr[20] = 60;
  A->val[3] = 0.0 / 0.0;
  r = itest_load(fd, 10, A, 0, "trial");
  ck_assert_str_eq(itest_error_code(r), "ECSR");
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 11), NULL, 0,
                 NULL, NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "matrices")), 0);
  json_decref(r);
  r = itest_call(fd, json_pack("{ss si si sf sf}", "op", "multiply", "id", 12,
                               "handle", 12345, "alpha", 1.0, "beta", 0.0),
                 NULL, 0, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "ENOENT");
  json_decref(r);
  close(fd);
  spmv_csr_free(A);
  hello_answers();
}
END_TEST

/* A client leaving halfway through an upload disturbs nobody. */
START_TEST(disconnect_mid_upload)
{
  struct spmv_csr *A = itest_random_csr(20000, 20, 3, 3);
  struct spmv_csr *B = itest_random_csr(400, 5, 4, 4);
  uint64_t len;
  void *p = itest_csr_payload(A, 0, 0, &len);
  int fb = itest_open(&itest_d), fa = itest_open(&itest_d);
  json_t *r = itest_load(fb, 1, B, 0, "trial");
  int64_t hb = json_integer_value(json_object_get(r, "handle"));

  json_decref(r);
  json_t *req = json_pack("{ss si ss sI sI sI ss}", "op", "load", "id", 2,
                          "dtype", "f64", "rows", (json_int_t)A->rows, "cols",
                          (json_int_t)A->cols, "nnz", (json_int_t)A->nnz,
                          "index", "i32");
  char *js = json_dumps(req, JSON_COMPACT);
  uint8_t h[24];
  header(h, SPMV_WIRE_MAGIC, (uint32_t)strlen(js), 0, len);
  itest_write_raw(fa, h, 24);
  itest_write_raw(fa, js, strlen(js));
  itest_write_raw(fa, p, len / 2);
  for (int i = 0; i < 3; i++)
    itest_multiply_ok(fb, hb, B, 0, (unsigned)i);
  close(fa);
  for (int i = 0; i < 3; i++)
    itest_multiply_ok(fb, hb, B, 0, (unsigned)i + 10);
  r = itest_call(fb, json_pack("{ss si}", "op", "status", "id", 3), NULL, 0,
                 NULL, NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "matrices")), 1);
  json_decref(r);
  free(js);
  json_decref(req);
  free(p);
  close(fb);
  spmv_csr_free(A);
  spmv_csr_free(B);
}
END_TEST

/* Descriptors open in process pid. */
static int count_fds(pid_t pid)
{
  char path[64];
  struct dirent *e;
  int n = 0;

  snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
  DIR *d = opendir(path);
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)))
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* Sends len bytes of buf on s with descriptor pass (SCM_RIGHTS). */
static void send_with_fd(int s, const void *buf, size_t len, int pass)
{
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } ctl = {0};
  struct iovec iov = {(void *)buf, len};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
                      .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};

  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &pass, sizeof(int));
  ck_assert_int_eq(sendmsg(s, &mh, MSG_NOSIGNAL), (ssize_t)len);
}

/* An attach-vectors memfd sent with byte 30 of the frame is closed unused:
 * the request is refused, nothing is attached, no descriptor is kept. */
START_TEST(late_descriptor_unused)
{
  struct spmv_csr *A = itest_random_csr(200, 3, 8, 8);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  int64_t h = itest_handle(r);
  int mfd = itest_csr_memfd(A, "itest-late", 400 * sizeof(double),
                            F_SEAL_SHRINK);
  char *js = NULL;
  uint8_t frame[24 + 128];

  json_decref(r);
  int before = count_fds(itest_d.pid);
  int len = asprintf(&js, "{\"op\":\"attach-vectors\",\"id\":2,"
                     "\"handle\":%lld}", (long long)h);
  ck_assert_int_gt(len, 6);
  header(frame, SPMV_WIRE_MAGIC, (uint32_t)len, 0, 0);
  memcpy(frame + 24, js, (size_t)len);
  itest_write_raw(fd, frame, 30);
  send_with_fd(fd, frame + 30, (size_t)len - 6, mfd);
  r = itest_recv_reply(fd, NULL, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "EPROTO");
  ck_assert_ptr_nonnull(strstr(frame_msg(r), "after the frame's first byte"));
  json_decref(r);
  /* At most as many: the load's own payload may close meanwhile (large
   * regions are closed on the background thread). */
  ck_assert_int_le(count_fds(itest_d.pid), before);
  ck_assert_int_eq(itest_count_memfds(itest_d.pid, "itest-late"), 0);
  r = itest_call(fd, json_pack("{ss si sI sf sf sb}", "op", "multiply", "id", 3,
                               "handle", (json_int_t)h, "alpha", 1.0, "beta",
                               0.0, "inplace", 1), NULL, 0, NULL, NULL);
  ck_assert_str_ne(itest_error_code(r), "");
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 4);
  free(js);
  close(mfd);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* Restarts the fixture's daemon with the configuration text. */
static void restart_with(const char *conf)
{
  itest_daemon_stop(&itest_d, SIGTERM);
  itest_daemon_config(&itest_d, conf);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
}

/* A status call on fd answers ok. */
static void served(int fd)
{
  json_t *r = itest_call(fd, json_pack("{ss si}", "op", "status", "id", 7),
                         NULL, 0, NULL, NULL);
  ck_assert(r && json_is_true(json_object_get(r, "ok")));
  json_decref(r);
}

/* A connection trickling its header is answered ETIMEDOUT naming
 * frame_timeout_s and closed; another is served meanwhile. */
START_TEST(frame_timeout)
{
  uint8_t h[24];
  char c;

  restart_with("frame_timeout_s = 1\n");
  header(h, SPMV_WIRE_MAGIC, 2, 0, 0);
  int t = itest_connect(itest_d.sock), fd = itest_open(&itest_d);
  ck_assert_int_ge(t, 0);
  for (int i = 0; i < 20; i++) {
    struct pollfd p = {t, POLLIN, 0};
    if (poll(&p, 1, 0) == 1 || itest_write_raw(t, h + i, 1) < 0)
      break;
    served(fd);
    usleep(100000);
  }
  const char *msg = frame_error(t, "ETIMEDOUT");
  ck_assert_msg(strstr(msg, "frame_timeout_s (1 s)") != NULL, "%s", msg);
  ck_assert_int_le(recv(t, &c, 1, 0), 0);
  served(fd);
  close(t);
  close(fd);
}
END_TEST

/* An idle connection is closed after idle_timeout_s; one whose request
 * is being served (a long tune) is not, and is answered. */
START_TEST(idle_timeout)
{
  struct spmv_csr *A = itest_random_csr(100000, 8, 14, 14);
  char c;

  restart_with("idle_timeout_s = 1\nframe_timeout_s = 1\n");
  int idle = itest_open(&itest_d), fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "exhaustive");
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  served(fd);
  ck_assert_int_eq(recv(idle, &c, 1, 0), 0);
  close(idle);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* Sixteen clients at once, each with its own matrix, all correct. */
START_TEST(sixteen_clients)
{
  pid_t kids[16];

  for (int k = 0; k < 16; k++) {
    kids[k] = fork();
    ck_assert_int_ge(kids[k], 0);
    if (kids[k] == 0) {
      struct spmv_csr *A = itest_random_csr(1000 + 37 * k, 3 + k % 5,
                                            (unsigned)k, (unsigned)k);
      int fd = itest_open(&itest_d), ok = 1;
      json_t *r = itest_load(fd, 1, A, k % 2, "trial");
      int64_t h = json_integer_value(json_object_get(r, "handle"));
      ok = r && json_is_true(json_object_get(r, "ok"));
      json_decref(r);
      for (int i = 0; ok && i < 10; i++) {
        double q = itest_multiply_check(fd, h, A, k % 2, (unsigned)(k * 100 + i), NULL);
        ok = q >= 0 && q <= 1.0;
      }
      _exit(ok ? 0 : 1);
    }
  }
  for (int k = 0; k < 16; k++) {
    int status;
    ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "client %d failed", k);
  }
}
END_TEST

/* A second daemon on the same socket refuses to start, saying why, with
 * the exit status that tells it from other failures. */
START_TEST(second_daemon_refused)
{
  struct itest_daemon d2 = itest_d;
  d2.pid = 0;
  snprintf(d2.log, sizeof d2.log, "%s/second.log", itest_d.dir);
  snprintf(d2.db, sizeof d2.db, "%s/other.db", itest_d.dir);
  ck_assert_int_eq(itest_daemon_run(&d2, NULL), 3);
  ck_assert_msg(itest_log_wait(&d2, "already serving", 0),
                "no 'already serving' message in %s", d2.log);
  hello_answers();
}
END_TEST

/* A stale socket file (nobody listening) is reclaimed. */
START_TEST(stale_socket_reclaimed)
{
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGKILL), 128 + SIGKILL);
  ck_assert_int_eq(access(itest_d.sock, F_OK), 0);
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  hello_answers();
}
END_TEST

static json_t *status(int fd)
{
  return itest_call(fd, json_pack("{ss si}", "op", "status", "id", 50), NULL,
                    0, NULL, NULL);
}

/* SIGKILL the worker: it is respawned and the matrix still multiplies. */
START_TEST(worker_killed)
{
  struct spmv_csr *A = itest_matrix("bcsstk13.mtx");
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  int64_t h = json_integer_value(json_object_get(r, "handle"));
  json_decref(r);
  itest_multiply_ok(fd, h, A, 0, 1);

  r = status(fd);
  pid_t wpid = (pid_t)json_integer_value(json_object_get(
      json_array_get(json_object_get(r, "workers"), 0), "pid"));
  json_decref(r);
  ck_assert_int_gt(wpid, 0);
  ck_assert_int_eq(kill(wpid, SIGKILL), 0);
  itest_multiply_after_restart(fd, h, A);
  r = status(fd);
  json_t *w = json_array_get(json_object_get(r, "workers"), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(w, "restarts")), 1);
  ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "ready");
  ck_assert_int_ne(json_integer_value(json_object_get(w, "pid")), wpid);
  json_decref(r);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

/* SIGHUP with a bad file keeps the old configuration; SIGTERM exits 0. */
START_TEST(signals)
{
  itest_daemon_stop(&itest_d, SIGTERM);
  itest_daemon_config(&itest_d, "max_matrices_per_user = 1\n");
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  itest_daemon_config(&itest_d, "max_matrices_per_user = lots\n");
  kill(itest_d.pid, SIGHUP);
  usleep(200000);
  struct spmv_csr *A = itest_random_csr(100, 2, 5, 5);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  json_decref(r);
  r = itest_load(fd, 2, A, 0, "trial");
  ck_assert_str_eq(itest_error_code(r), "ELIMIT");
  ck_assert_ptr_nonnull(strstr(frame_msg(r), "max_matrices_per_user (1)"));
  json_decref(r);
  itest_daemon_config(&itest_d, "max_matrices_per_user = 3\n");
  kill(itest_d.pid, SIGHUP);
  usleep(200000);
  r = itest_load(fd, 3, A, 0, "trial");
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, SIGTERM), 0);
  spmv_csr_free(A);
}
END_TEST

/* SIGTERM lets a request in flight (a tuning) finish, then exits 0. */
START_TEST(sigterm_finishes_inflight)
{
  struct spmv_csr *A = itest_random_csr(200000, 8, 12, 12);
  struct spmv_wire_limits lim;
  struct spmv_error err;
  uint64_t len, plen;
  void *p = itest_csr_payload(A, 0, 0, &len), *pl = NULL;
  int fd = itest_open(&itest_d);
  json_t *ev = NULL;

  itest_send(fd, json_pack("{ss si ss sI sI sI ss ss}", "op", "load", "id", 1,
                           "dtype", "f64", "rows", (json_int_t)A->rows, "cols",
                           (json_int_t)A->cols, "nnz", (json_int_t)A->nnz,
                           "index", "i32", "strategy", "exhaustive"), p, len);
  spmv_wire_limits_default(&lim);
  ck_assert_int_eq(spmv_wire_read_frame(fd, &lim, &ev, &pl, &plen, &err), 0);
  ck_assert_str_eq(json_string_value(json_object_get(ev, "event")), "progress");
  json_decref(ev);
  kill(itest_d.pid, SIGTERM);
  json_t *r = itest_recv_reply(fd, NULL, NULL, NULL);
  ck_assert_ptr_nonnull(r);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, 0), 0);
  close(fd);
  free(p);
  spmv_csr_free(A);
}
END_TEST

/* Limits from the configuration: payload bytes, memory per connection. */
START_TEST(limits)
{
  itest_daemon_stop(&itest_d, SIGTERM);
  itest_daemon_config(&itest_d, "max_payload_bytes = 64K\nmax_connection_bytes = 200K\n"
                          "max_connections_per_user = 3\n");
  ck_assert_int_eq(itest_daemon_start(&itest_d, NULL), 0);
  struct spmv_csr *big = itest_random_csr(5000, 3, 6, 6);
  struct spmv_csr *mid = itest_random_csr(2000, 2, 6, 6);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, big, 0, "trial");
  ck_assert(r == NULL || strcmp(itest_error_code(r), "ELIMIT") == 0);
  json_decref(r);
  close(fd);
  fd = itest_open(&itest_d);
  for (int i = 0; i < 3; i++) {
    r = itest_load(fd, 2 + i, mid, 0, "trial");
    if (i < 2)
      ck_assert_msg(json_is_true(json_object_get(r, "ok")), "load %d", i);
    else
      ck_assert_str_eq(itest_error_code(r), "ELIMIT");
    json_decref(r);
  }
  int f2 = itest_open(&itest_d), f3 = itest_open(&itest_d), f4 = itest_connect(itest_d.sock);
  r = itest_recv_reply(f4, NULL, NULL, NULL);
  ck_assert_str_eq(itest_error_code(r), "ELIMIT");
  json_decref(r);
  close(f2);
  close(f3);
  close(f4);
  close(fd);
  spmv_csr_free(big);
  spmv_csr_free(mid);
}
END_TEST

/* shutdown by the daemon's own user: the reply says it stops; a solve in
 * flight on another connection (its first progress event seen) is answered
 * whole, the daemon then exits 0, and its socket is gone. */
START_TEST(shutdown_finishes_in_flight)
{
  struct spmv_csr *A = itest_random_csr(20000, 9, 5, 61);
  size_t n = (size_t)A->rows;
  double *b = malloc(n * 8);
  int fd = itest_open(&itest_d), events = 0;
  json_t *r = itest_load(fd, 1, A, 0, "auto");
  int64_t h = itest_handle(r);

  ck_assert_ptr_nonnull(b);
  for (size_t i = 0; i < n; i++)
    b[i] = 1.0 + (double)(i % 7);
  json_decref(r);
  ck_assert_int_eq(itest_send(fd, json_pack("{ss si sI ss sI sf sI}", "op", "solve",
                                            "id", 2, "handle", (json_int_t)h,
                                            "method", "gmres", "maxiter",
                                            (json_int_t)4000, "rtol", 1e-30,
                                            "progress", (json_int_t)10),
                              b, n * 8), 0);
  while (events == 0) {
    r = itest_recv_ready(fd, &events);
    ck_assert_msg(r == NULL, "the solve ended before its first progress event");
    usleep(5000);
  }
  int f2 = itest_open(&itest_d);
  r = itest_call(f2, json_pack("{ss si}", "op", "shutdown", "id", 3), NULL, 0,
                 NULL, NULL);
  ck_assert_msg(json_is_true(json_object_get(r, "stopping")), "shutdown refused");
  json_decref(r);
  r = itest_recv_reply(fd, NULL, NULL, NULL);
  ck_assert_msg(r && json_is_true(json_object_get(r, "ok")), "the solve in flight "
                "was not answered");
  ck_assert_int_eq(json_integer_value(json_object_get(r, "iterations")), 4000);
  json_decref(r);
  close(f2);
  close(fd);
  ck_assert_int_eq(itest_daemon_stop(&itest_d, 0), 0);
  ck_assert_int_eq(access(itest_d.sock, F_OK), -1);
  free(b);
  spmv_csr_free(A);
}
END_TEST

/* Another uid sees ENOENT, not the matrix (needs root to switch uid). */
START_TEST(ownership)
{
  if (geteuid() != 0)
    return;
  chmod(itest_d.dir, 0755);
  struct spmv_csr *A = itest_random_csr(100, 2, 7, 7);
  int fd = itest_open(&itest_d);
  json_t *r = itest_load(fd, 1, A, 0, "trial");
  int64_t h = json_integer_value(json_object_get(r, "handle"));
  json_decref(r);
  pid_t kid = fork();
  if (kid == 0) {
    if (setgid(65534) < 0 || setuid(65534) < 0)
      _exit(2);
    int f = itest_open(&itest_d);
    json_t *q = itest_call(f, json_pack("{ss si sI}", "op", "info", "id", 1,
                                        "handle", (json_int_t)h),
                           NULL, 0, NULL, NULL);
    int ok = strcmp(itest_error_code(q), "ENOENT") == 0;
    json_decref(q);
    q = itest_call(f, json_pack("{ss si}", "op", "list", "id", 2), NULL, 0,
                   NULL, NULL);
    ok &= json_array_size(json_object_get(q, "matrices")) == 0;
    json_decref(q);
    q = itest_call(f, json_pack("{ss si ss}", "op", "forget", "id", 3,
                                "fingerprint", "all"), NULL, 0, NULL, NULL);
    ok &= strcmp(itest_error_code(q), "EPERM") == 0;
    json_decref(q);
    q = itest_call(f, json_pack("{ss si}", "op", "shutdown", "id", 4), NULL, 0,
                   NULL, NULL);
    ok &= strcmp(itest_error_code(q), "EPERM") == 0;
    json_decref(q);
    _exit(ok ? 0 : 1);
  }
  int status;
  waitpid(kid, &status, 0);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  r = itest_call(fd, json_pack("{ss si sI}", "op", "info", "id", 2, "handle",
                               (json_int_t)h), NULL, 0, NULL, NULL);
  ck_assert(json_is_true(json_object_get(r, "ok")));
  json_decref(r);
  close(fd);
  spmv_csr_free(A);
}
END_TEST

static Suite *robust_suite(void)
{
  Suite *s = suite_create("robust");
  TCase *frames = tcase_create("frames");
  TCase *life = tcase_create("life");

  tcase_add_checked_fixture(frames, itest_setup, itest_teardown);
  tcase_add_checked_fixture(life, itest_setup, itest_teardown);
  tcase_set_timeout(frames, 30);
  tcase_set_timeout(life, 60);
  tcase_add_test(frames, bad_magic);
  tcase_add_test(frames, bad_reserved);
  tcase_add_test(frames, oversized_json);
  tcase_add_test(frames, oversized_payload);
  tcase_add_test(frames, invalid_json);
  tcase_add_test(frames, truncated_frame);
  tcase_add_test(frames, header_version);
  tcase_add_test(frames, truncated_answered);
  tcase_add_test(frames, unknown_op);
  tcase_add_test(frames, hello_first);
  tcase_add_test(frames, missing_id);
  tcase_add_test(frames, wrong_payload_length);
  tcase_add_test(frames, invalid_csr);
  tcase_add_test(life, shutdown_finishes_in_flight);
  tcase_add_test(life, disconnect_mid_upload);
  tcase_add_test(life, late_descriptor_unused);
  tcase_add_test(life, frame_timeout);
  tcase_add_test(life, idle_timeout);
  tcase_add_test(life, sixteen_clients);
  tcase_add_test(life, second_daemon_refused);
  tcase_add_test(life, stale_socket_reclaimed);
  tcase_add_test(life, worker_killed);
  tcase_add_test(life, signals);
  tcase_add_test(life, limits);
  tcase_add_test(life, sigterm_finishes_inflight);
  tcase_add_test(life, ownership);
  suite_add_tcase(s, frames);
  suite_add_tcase(s, life);
  return s;
}

int main(void)
{
  return itest_run(robust_suite());
}
