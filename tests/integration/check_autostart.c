/* check_autostart.c: libspmvclient and spmvctl start a user spmvd on demand
 * (SPMV_CONNECT_AUTOSTART, SPMV_AUTOSTART): one daemon for racing clients,
 * detached, gone after its idle time with its cache kept. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "itest.h"
#include "../spmvctl_exec.h"
#include "spmv.h"

/* The directory of every test's, made by main, which stops whatever a
 * failed test (whose teardown check does not run) left there. */
static char base[256];
/* The test's private directories: XDG_RUNTIME_DIR, XDG_STATE_HOME and
 * XDG_CONFIG_HOME under one temporary directory in base. */
static char top[300], run_dir[310], state_dir[310], sock[330], lock_file[340],
    log_file[330], db_file[330];

/* Waits up to ms for child pid (the daemon is ours: this process is a
 * subreaper) to exit; its exit status, 128 + signal, or -1 meanwhile. */
static int wait_exit(pid_t pid, int ms)
{
  int st;

  for (int i = 0; i < ms / 10; i++) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (w < 0)
      return -2;
    usleep(10000);
  }
  return -1;
}

/* The pid in lock file path, 0 when there is none. */
static pid_t read_pid(const char *path)
{
  FILE *f = fopen(path, "r");
  long pid = 0;

  if (f == NULL)
    return 0;
  if (fscanf(f, "%ld", &pid) != 1)
    pid = 0;
  fclose(f);
  return (pid_t)pid;
}

/* The pid in the daemon's lock file, 0 when there is none. */
static pid_t lock_pid(void)
{
  return read_pid(lock_file);
}

/* Stops the daemon of lock file path if one runs, and reaps every exited
 * child. */
static void stop_daemon(const char *path)
{
  pid_t pid = read_pid(path);

  if (pid > 0 && kill(pid, SIGTERM) == 0 && wait_exit(pid, 20000) == -1) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
  while (waitpid(-1, NULL, WNOHANG) > 0)
    ;
}

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");

  ck_assert_msg(f != NULL, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Stops the daemon and removes the test's directories. */
static void teardown(void)
{
  stop_daemon(lock_file);
  nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* After all tests: stops a daemon that a failed test left in base (ours
 * to reap: main is a subreaper too) and removes base. */
static int stop_left(const char *path, const struct stat *sb, int flag,
                     struct FTW *ftw)
{
  size_t n = strlen(path);

  (void)sb;
  (void)flag;
  (void)ftw;
  if (n > 16 && strcmp(path + n - 16, "/spmvd.sock.lock") == 0)
    stop_daemon(path);
  return 0;
}

static void setup(void)
{
  const char *b = getenv("SPMV_TOP_BUILDDIR");
  const char *backend = getenv("SPMV_ITEST_BACKEND");
  char path[400], text[128];

  /* The started daemon leaves its starter: it becomes ours, to reap. */
  ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  snprintf(top, sizeof top, "%s/t.XXXXXX", base);
  ck_assert_ptr_nonnull(mkdtemp(top));
  snprintf(run_dir, sizeof run_dir, "%s/run", top);
  snprintf(state_dir, sizeof state_dir, "%s/state", top);
  ck_assert_int_eq(mkdir(run_dir, 0700), 0);
  snprintf(sock, sizeof sock, "%s/spmvd.sock", run_dir);
  snprintf(lock_file, sizeof lock_file, "%s.lock", sock);
  snprintf(log_file, sizeof log_file, "%s/spmvd/spmvd.log", state_dir);
  snprintf(db_file, sizeof db_file, "%s/spmvd/cache.db", state_dir);
  /* The user's spmvd.conf picks the backend the other tests use. */
  snprintf(path, sizeof path, "%s/config", top);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/config/spmvd", top);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/config/spmvd/spmvd.conf", top);
  snprintf(text, sizeof text, "backend = %s\nthreads = 2\nlog_level = debug\n",
           backend != NULL ? backend : "cpu");
  write_file(path, text);
  setenv("XDG_RUNTIME_DIR", run_dir, 1);
  setenv("XDG_STATE_HOME", state_dir, 1);
  snprintf(path, sizeof path, "%s/config", top);
  setenv("XDG_CONFIG_HOME", path, 1);
  snprintf(path, sizeof path, "%s/daemon/spmvd", b != NULL ? b : ".");
  setenv("SPMVD_PROGRAM", path, 1);
  /* Long enough for a test's steps; a crashed test's daemon still goes. */
  setenv("SPMV_AUTOSTART_IDLE_S", "30", 1);
  unsetenv("SPMVD_SOCKET");
  unsetenv("SPMV_AUTOSTART");
}


/* The pid that the daemon behind c reports. */
static pid_t daemon_pid(struct spmv_client *c)
{
  char *text = NULL;
  json_t *s;
  pid_t pid;

  ck_assert_msg(spmv_status_json(c, &text) == 0, "%s", spmv_client_errmsg(c));
  s = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(s);
  pid = (pid_t)json_integer_value(json_object_get(s, "pid"));
  json_decref(s);
  free(text);
  ck_assert_int_gt(pid, 0);
  return pid;
}

/* Field k of /proc/pid/stat, counted from 1 as proc(5) does (4: the
 * parent, 6: the session, 7: the terminal); the state (3) as its character; -1 when the
 * process is gone. */
static long proc_stat(pid_t pid, int k)
{
  char path[64], buf[1024], *p;
  FILE *f;
  size_t n;
  long v = -1;

  snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  if ((f = fopen(path, "r")) == NULL)
    return -1;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  if ((p = strrchr(buf, ')')) == NULL)
    return -1;
  p += 2;  /* field 3 */
  if (k == 3)
    return *p;
  for (int i = 3; i < k && p != NULL; i++) {
    p = strchr(p, ' ');
    if (p != NULL)
      p++;
  }
  if (p != NULL)
    v = strtol(p, NULL, 10);
  return v;
}

/* Live processes (not zombies) whose command line names our socket. */
static int count_daemons(void)
{
  DIR *d = opendir("/proc");
  struct dirent *e;
  int n = 0;

  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    char path[300], cmd[4096];
    long pid = strtol(e->d_name, NULL, 10);
    size_t len;
    FILE *f;

    if (pid <= 0 || proc_stat((pid_t)pid, 3) == 'Z')
      continue;
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    if ((f = fopen(path, "r")) == NULL)
      continue;
    len = fread(cmd, 1, sizeof cmd - 1, f);
    fclose(f);
    for (size_t i = 0; i < len; i++)
      if (cmd[i] == '\0')
        cmd[i] = ' ';
    cmd[len] = '\0';
    n += strstr(cmd, "--socket") != NULL && strstr(cmd, sock) != NULL;
  }
  closedir(d);
  return n;
}

/* Whether process pid holds the file of our descriptor fd. */
static int holds(pid_t pid, int fd)
{
  char path[300], mine[256], theirs[256];
  struct dirent *e;
  ssize_t k;
  DIR *d;
  int found = 0;

  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  k = readlink(path, mine, sizeof mine - 1);
  ck_assert_int_gt(k, 0);
  mine[k] = '\0';
  snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
  ck_assert_ptr_nonnull(d = opendir(path));
  while ((e = readdir(d)) != NULL) {
    snprintf(path, sizeof path, "/proc/%ld/fd/%s", (long)pid, e->d_name);
    k = readlink(path, theirs, sizeof theirs - 1);
    if (k > 0) {
      theirs[k] = '\0';
      found |= strcmp(theirs, mine) == 0;
    }
  }
  closedir(d);
  return found;
}

/* Whether the file at path holds text. */
static int file_has(const char *path, const char *text)
{
  char buf[65536];
  size_t n;
  FILE *f = fopen(path, "r");

  if (f == NULL)
    return 0;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, text) != NULL;
}

/* Without SPMV_AUTOSTART, or with flags 0, nothing is started. */
START_TEST(no_autostart)
{
  struct spmv_client *c = (struct spmv_client *)0x1;

  ck_assert_int_eq(spmv_connect_opts(sock, 0, &c), SPMV_ECONNECT);
  ck_assert_ptr_null(c);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "is not running at"));
  ck_assert_int_eq(spmv_connect(sock, &c), SPMV_ECONNECT);
  setenv("SPMV_AUTOSTART", "0", 1);
  ck_assert_int_eq(spmv_connect(sock, &c), SPMV_ECONNECT);
  ck_assert_int_eq(access(sock, F_OK), -1);
  ck_assert_int_eq(access(log_file, F_OK), -1);
  ck_assert_int_eq(spmv_connect_opts(sock, 2, &c), SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "unknown flags"));
  ck_assert_int_eq(spmv_connect_opts(sock, SPMV_CONNECT_AUTOSTART, NULL),
                   SPMV_EINVAL);
}
END_TEST

/* A client with no daemon gets one on the user socket: detached (its own
 * session, not the client's child), none of the client's descriptors or
 * signal settings, its log and the user cache; it multiplies. */
START_TEST(starts_one)
{
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  char path[64], link[512], mtx[4096], line[256];
  int leak[2];
  sigset_t block, old;
  FILE *f;
  pid_t pid;
  int n = 0;

  /* What a client might have: a descriptor without O_CLOEXEC, a blocked
   * and an ignored signal. */
  ck_assert_int_eq(pipe(leak), 0);
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  signal(SIGHUP, SIG_IGN);
  setenv("SPMV_AUTOSTART", "1", 1);
  ck_assert_msg(spmv_connect(NULL, &c) == 0, "%s", spmv_client_errmsg(NULL));
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  ck_assert_str_eq(spmv_client_path(c), sock);
  pid = daemon_pid(c);
  ck_assert_int_eq(lock_pid(), pid);
  ck_assert_int_eq(proc_stat(pid, 4), getpid());  /* reparented to us */
  ck_assert_int_ne(proc_stat(pid, 6), getsid(0)); /* a session of its own */
  ck_assert_int_eq(proc_stat(pid, 7), 0);          /* no terminal */
  /* Its descriptors: /dev/null, the log, and its own (never our pipe). */
  for (int fd = 0; fd < 3; fd++) {
    ssize_t k;

    snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)pid, fd);
    k = readlink(path, link, sizeof link - 1);
    ck_assert_int_gt(k, 0);
    link[k] = '\0';
    ck_assert_str_eq(link, fd < 2 ? "/dev/null" : log_file);
  }
  ck_assert_msg(!holds(pid, leak[1]), "the daemon holds the client's pipe");
  snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
  ck_assert_ptr_nonnull(f = fopen(path, "r"));
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long long bits;

    if (sscanf(line, "SigBlk: %llx", &bits) == 1) {
      ck_assert_msg(!(bits & (1ull << (SIGTERM - 1))), "SIGTERM blocked");
      n++;
    }
    if (sscanf(line, "SigIgn: %llx", &bits) == 1) {
      ck_assert_msg(!(bits & (1ull << (SIGHUP - 1))), "SIGHUP ignored");
      n++;
    }
  }
  fclose(f);
  ck_assert_int_eq(n, 2);
  itest_matrix_path("karate.mtx", mtx, sizeof mtx);
  ck_assert_msg(spmv_load_mtx(c, mtx, SPMV_F64, NULL, &m) == 0, "%s",
                spmv_client_errmsg(c));
  spmv_matrix_free(m);
  spmv_disconnect(c);
  ck_assert_int_eq(access(db_file, F_OK), 0);
  close(leak[0]);
  close(leak[1]);
  signal(SIGHUP, SIG_DFL);
}
END_TEST

#define RACERS 8

/* Clients racing to start the daemon end on one: every one connects to
 * the same pid, and one daemon process runs. */
START_TEST(race_one_daemon)
{
  pid_t kids[RACERS], pids[RACERS];
  int p[2], go[2];
  char ch = 'g';

  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(pipe(go), 0);
  for (int k = 0; k < RACERS; k++) {
    kids[k] = fork();
    ck_assert_int_ge(kids[k], 0);
    if (kids[k] == 0) {
      struct spmv_client *c = NULL;
      char *text = NULL;
      pid_t pid = 0;
      json_t *s;

      close(go[1]);
      if (read(go[0], &ch, 1) != 0)  /* all start together at EOF */
        _exit(2);
      if (spmv_connect_opts(NULL, SPMV_CONNECT_AUTOSTART, &c) != 0) {
        fprintf(stderr, "racer %d: %s\n", k, spmv_client_errmsg(NULL));
        _exit(1);
      }
      if (spmv_status_json(c, &text) == 0 &&
          (s = json_loads(text, 0, NULL)) != NULL) {
        pid = (pid_t)json_integer_value(json_object_get(s, "pid"));
        json_decref(s);
      }
      free(text);
      spmv_disconnect(c);
      _exit(write(p[1], &pid, sizeof pid) == (ssize_t)sizeof pid ? 0 : 1);
    }
  }
  close(go[0]);
  close(go[1]);  /* go */
  for (int k = 0; k < RACERS; k++) {
    int st;
    ck_assert_int_eq(waitpid(kids[k], &st, 0), kids[k]);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "racer %d failed", k);
    ck_assert_int_eq(read(p[0], &pids[k], sizeof pids[k]), sizeof pids[k]);
  }
  for (int k = 1; k < RACERS; k++)
    ck_assert_int_eq(pids[k], pids[0]);
  ck_assert_int_eq(lock_pid(), pids[0]);
  /* A refused daemon may still be exiting: a bounded wait for it. */
  for (int i = 0; i < 1000 && count_daemons() > 1; i++) {
    while (waitpid(-1, NULL, WNOHANG) > 0)
      ;
    usleep(10000);
  }
  ck_assert_int_eq(count_daemons(), 1);
  close(p[0]);
  close(p[1]);
}
END_TEST

/* Loads fname through a new autostarted connection; returns the daemon's
 * pid and the decision's source in src. */
static pid_t load_source(const char *fname, char *src, size_t n)
{
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  char mtx[4096], *text = NULL;
  json_t *d;
  pid_t pid;

  ck_assert_msg(spmv_connect_opts(NULL, SPMV_CONNECT_AUTOSTART, &c) == 0, "%s",
                spmv_client_errmsg(NULL));
  pid = daemon_pid(c);
  itest_matrix_path(fname, mtx, sizeof mtx);
  ck_assert_msg(spmv_load_mtx(c, mtx, SPMV_F64, NULL, &m) == 0, "%s",
                spmv_client_errmsg(c));
  ck_assert_int_eq(spmv_matrix_decision_json(m, &text), 0);
  ck_assert_ptr_nonnull(d = json_loads(text, 0, NULL));
  snprintf(src, n, "%s", json_string_value(json_object_get(d, "source")));
  json_decref(d);
  free(text);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  return pid;
}

/* The daemon exits after its idle time with no client, removing its
 * socket and keeping its cache: the next start answers from the cache. */
START_TEST(idle_exit_keeps_cache)
{
  char src[16];
  pid_t first, second;

  setenv("SPMV_AUTOSTART_IDLE_S", "1", 1);
  first = load_source("west0479.mtx", src, sizeof src);
  ck_assert_str_eq(src, "tuned");
  /* Bounded, not timed: it goes within a few seconds of the disconnect. */
  ck_assert_int_eq(wait_exit(first, 60000), 0);
  ck_assert_int_eq(access(sock, F_OK), -1);
  ck_assert_int_eq(access(lock_file, F_OK), -1);
  ck_assert_int_eq(access(db_file, F_OK), 0);
  ck_assert_msg(file_has(log_file, "no client for 1 s (exit_idle_s): exiting"),
                "no idle exit in %s", log_file);
  second = load_source("west0479.mtx", src, sizeof src);
  ck_assert_int_ne(second, first);
  ck_assert_str_eq(src, "cache");
  ck_assert_int_eq(wait_exit(second, 60000), 0);
}
END_TEST

/* A start that fails says which program, socket and log. */
START_TEST(start_failures)
{
  struct spmv_client *c = NULL;
  const char *msg;

  setenv("SPMVD_PROGRAM", "/nonexistent/spmvd", 1);
  ck_assert_int_eq(spmv_connect_opts(NULL, SPMV_CONNECT_AUTOSTART, &c),
                   SPMV_ECONNECT);
  msg = spmv_client_errmsg(NULL);
  ck_assert_msg(strstr(msg, "/nonexistent/spmvd") != NULL &&
                strstr(msg, "SPMVD_PROGRAM") != NULL, "%s", msg);
  setenv("SPMVD_PROGRAM", "/bin/false", 1);
  ck_assert_int_eq(spmv_connect_opts(NULL, SPMV_CONNECT_AUTOSTART, &c),
                   SPMV_ECONNECT);
  msg = spmv_client_errmsg(NULL);
  ck_assert_msg(strstr(msg, "/bin/false did not start on ") != NULL &&
                strstr(msg, sock) != NULL && strstr(msg, "exit status 1") != NULL &&
                strstr(msg, "spmvd.log") != NULL, "%s", msg);
  setenv("SPMV_AUTOSTART_IDLE_S", "soon", 1);
  ck_assert_int_eq(spmv_connect_opts(NULL, SPMV_CONNECT_AUTOSTART, &c),
                   SPMV_EINVAL);
  ck_assert_ptr_nonnull(strstr(spmv_client_errmsg(NULL), "SPMV_AUTOSTART_IDLE_S"));
  ck_assert_ptr_null(c);
}
END_TEST

/* spmvctl starts a daemon for the commands that need one, unless told
 * not to; status never does and says none runs. */
START_TEST(spmvctl_autostart)
{
  struct spmvctl_run r;
  char mtx[4096];
  json_t *o;

  itest_matrix_path("karate.mtx", mtx, sizeof mtx);
  spmvctl_exec(&r, "status", NULL);
  ck_assert_int_eq(r.status, 3);
  ck_assert_msg(strstr(r.err, "spmvd is not running at") != NULL, "%s", r.err);
  spmvctl_exec(&r, "--no-autostart", "tune", mtx, NULL);
  ck_assert_int_eq(r.status, 3);
  setenv("SPMV_AUTOSTART", "0", 1);
  spmvctl_exec(&r, "tune", mtx, NULL);
  ck_assert_int_eq(r.status, 3);
  unsetenv("SPMV_AUTOSTART");
  ck_assert_int_eq(access(sock, F_OK), -1);
  spmvctl_exec(&r, "--quiet", "--json", "tune", mtx, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_int_eq(access(sock, F_OK), 0);
  spmvctl_exec(&r, "--json", "status", NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(o = json_loads(r.out, 0, NULL));
  ck_assert_int_eq(json_integer_value(json_object_get(o, "pid")), lock_pid());
  ck_assert_str_eq(json_string_value(json_object_get(o, "socket_path")), sock);
  json_decref(o);
}
END_TEST

static Suite *autostart_suite(void)
{
  Suite *s = suite_create("autostart");
  TCase *tc = tcase_create("autostart");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, no_autostart);
  tcase_add_test(tc, starts_one);
  tcase_add_test(tc, race_one_daemon);
  tcase_add_test(tc, idle_exit_keeps_cache);
  tcase_add_test(tc, start_failures);
  tcase_add_test(tc, spmvctl_autostart);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  const char *t = getenv("TMPDIR");
  int rc;

  snprintf(base, sizeof base, "%s/check_autostart.XXXXXX",
           t != NULL && *t != '\0' ? t : "/tmp");
  if (mkdtemp(base) == NULL || prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    perror("check_autostart: set-up");
    return 99;
  }
  rc = itest_run(autostart_suite());
  nftw(base, stop_left, 16, FTW_PHYS);
  nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return rc;
}
