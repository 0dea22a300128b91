/* itest_fd.c: helpers of the integration tests over descriptors and
 * processes: frames with a descriptor, the daemon's memfds, the worker. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"

/* Sends req with descriptor pass on the frame's first byte; reads the reply. */
json_t *itest_call_fd(int s, json_t *req, int pass, const void *payload,
                      uint64_t plen)
{
  struct spmv_wire_header h = {SPMV_WIRE_MAGIC, SPMV_PROTO_VERSION, 0, 0, 0, 0};
  struct spmv_wire_limits lim;
  struct spmv_error err;
  uint8_t hdr[SPMV_WIRE_HEADER_SIZE];
  char op[32];
  size_t jlen;
  char *text = spmv_wire_json_dump(req, &jlen);
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } ctl;
  struct msghdr mh;

  ck_assert_ptr_nonnull(text);
  snprintf(op, sizeof op, "%s", json_string_value(json_object_get(req, "op")));
  itest_ops_note("sent", op);
  h.json_len = (uint32_t)jlen;
  h.payload_len = plen;
  spmv_wire_header_encode(&h, hdr);
  struct iovec iov[3] = {{hdr, sizeof hdr}, {text, jlen},
                         {(void *)payload, plen}};
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = iov;
  mh.msg_iovlen = plen ? 3 : 2;
  if (pass >= 0) {
    memset(&ctl, 0, sizeof ctl);
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof ctl.buf;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &pass, sizeof(int));
  }
  ck_assert_int_eq(sendmsg(s, &mh, MSG_NOSIGNAL),
                   (ssize_t)(sizeof hdr + jlen + plen));
  free(text);
  json_decref(req);
  spmv_wire_limits_default(&lim);
  for (;;) {
    json_t *j = NULL;
    void *p = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(spmv_wire_read_frame(s, &lim, &j, &p, &n, &err), 0);
    free(p);
    itest_schema_check(op, j);
    if (json_object_get(j, "ok"))
      return j;
    json_decref(j);
  }
}

/* Whether t, from "memfd:" on, names memfd name ("memfd:NAME (deleted)"). */
static int is_memfd(const char *t, const char *name)
{
  size_t n = strlen(name);
  return strncmp(t, "memfd:", 6) == 0 && strncmp(t + 6, name, n) == 0 &&
         (t[6 + n] == 0 || t[6 + n] == ' ');
}

int itest_count_memfds(pid_t pid, const char *name)
{
  char path[300], target[256];
  int n = 0;

  snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
  DIR *d = opendir(path);
  ck_assert_ptr_nonnull(d);
  for (struct dirent *e; (e = readdir(d));) {
    snprintf(path, sizeof path, "/proc/%ld/fd/%s", (long)pid, e->d_name);
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len <= 0)
      continue;
    target[len] = 0;
    const char *t = strstr(target, "memfd:");  /* "/memfd:NAME (deleted)" */
    n += t && is_memfd(t, name);
  }
  closedir(d);
  return n;
}

void itest_memfd_perms(pid_t pid, const char *name, char perms[8])
{
  char path[64], line[512], p[8];

  perms[0] = 0;
  snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f)) {
    char *t = strstr(line, "memfd:");
    line[strcspn(line, "\n")] = 0;
    if (t && is_memfd(t, name) && sscanf(line, "%*s %7s", p) == 1)
      snprintf(perms, 8, "%s", p);
  }
  fclose(f);
}

/* Whether process pid runs spmvd-worker (libtool's lt- wrapper too). */
static int is_worker(pid_t pid)
{
  char path[64], comm[32] = "";
  FILE *f;

  snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
  if (!(f = fopen(path, "r")))
    return 0;
  if (!fgets(comm, sizeof comm, f))
    comm[0] = '\0';
  fclose(f);
  return strncmp(comm, "spmvd-worker", 12) == 0 ||
         strncmp(comm, "lt-spmvd-worker", 15) == 0;
}

/* The spmvd-worker at or under pid, depth levels down, or 0. */
static pid_t find_worker(pid_t pid, int depth)
{
  char path[64];
  long child;
  pid_t found = 0;
  FILE *f;

  if (is_worker(pid))
    return pid;
  snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)pid,
           (long)pid);
  if (depth == 0 || !(f = fopen(path, "r")))
    return 0;
  while (!found && fscanf(f, "%ld", &child) == 1)
    found = find_worker((pid_t)child, depth - 1);
  fclose(f);
  return found;
}

pid_t itest_worker_pid(int s)
{
  pid_t pid = 0;

  /* A slow start (a sanitizer's) reports no pid until the worker runs. */
  for (int i = 0; i < 600 && pid <= 0; i++) {
    json_t *r = itest_call(s, json_pack("{ss si}", "op", "status", "id", 90),
                           NULL, 0, NULL, NULL);
    pid = (pid_t)json_integer_value(json_object_get(
        json_array_get(json_object_get(r, "workers"), 0), "pid"));
    json_decref(r);
    if (pid <= 0)
      usleep(100000);
  }
  ck_assert_int_gt(pid, 0);
  /* Under a wrapper (spmvd.conf's worker: compute-sanitizer) the worker
   * is the wrapper's child, whose maps and descriptors the tests read. */
  pid_t w = find_worker(pid, 3);
  return w > 0 ? w : pid;
}

void itest_refused(int s, json_t *r, const char *code, const char *want,
                   int64_t handle, const struct spmv_csr *A)
{
  const char *msg = json_string_value(
      json_object_get(json_object_get(r, "error"), "message"));
  ck_assert_msg(strcmp(itest_error_code(r), code) == 0, "%s, not %s: %s",
                itest_error_code(r), code, msg ? msg : "");
  ck_assert_msg(!want || (msg && strstr(msg, want)),
                "message '%s' does not name '%s'", msg ? msg : "", want);
  json_decref(r);
  itest_multiply_ok(s, handle, A, 0, 3);
}

void itest_multiply_after_restart(int s, int64_t handle,
                                  const struct spmv_csr *A)
{
  char code[32];

  for (int i = 0; i < 300; i++) {
    double q = itest_multiply_check(s, handle, A, 0, 2, code);
    if (q >= 0) {
      ck_assert(q <= 1.0);
      return;
    }
    ck_assert_str_eq(code, "EWORKER");
    usleep(20000);
  }
  ck_abort_msg("matrix %lld did not multiply within 6 s of the worker's "
               "restart", (long long)handle);
}

size_t itest_csr_layout_size(const struct spmv_csr *A)
{
  struct spmv_wire_csr_layout l;

  spmv_wire_csr_layout(A->rows, A->nnz, &l);
  return l.size;
}

int itest_csr_memfd(const struct spmv_csr *A, const char *name, size_t size,
                    int seals)
{
  struct spmv_wire_csr_layout l;
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
  spmv_wire_csr_layout(A->rows, A->nnz, &l);
  if (size >= l.size && size > 0) {
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert(p != MAP_FAILED);
    memcpy(p + l.off_row, A->row_ptr, sizeof *A->row_ptr * (size_t)(A->rows + 1));
    memcpy(p + l.off_col, A->col_idx, sizeof *A->col_idx * (size_t)A->nnz);
    memcpy(p + l.off_val, A->val, sizeof *A->val * (size_t)A->nnz);
    munmap(p, size);  /* a writable mapping would block F_SEAL_WRITE */
  }
  ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, seals), 0);
  return fd;
}
