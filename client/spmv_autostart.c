/* spmv_autostart.c: libspmvclient starts a user spmvd on demand
 * (SPMV_CONNECT_AUTOSTART): its program and paths, a detached start, the
 * wait until it answers. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spmv_client_int.h"

#ifndef SPMV_SBINDIR
#define SPMV_SBINDIR "/usr/local/sbin"
#endif
#ifndef SPMV_RUNSTATEDIR
#define SPMV_RUNSTATEDIR "/run"
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif

/* The longest a connect waits for a daemon it starts (or another caller
 * starts meanwhile) to answer. */
#define WAIT_MS 10000
/* --exit-idle of a started daemon when SPMV_AUTOSTART_IDLE_S is unset. */
#define IDLE_DEFAULT_S 600
/* A log longer than this is emptied at the next start, so that it stays
 * small without a rotation of its own. */
#define LOG_MAX ((off_t)1 << 20)
/* spmvd's exit status when another daemon already serves the socket. */
#define EXIT_BUSY 3

/* What a start runs, every path absolute since the daemon runs in "/". */
struct plan {
  char program[PATH_MAX];
  char sock[sizeof ((struct spmv_client *)0)->path];
  char db[PATH_MAX];
  char log[PATH_MAX];
  char conf[PATH_MAX];  /* the user's spmvd.conf, "" when there is none */
  char idle[16];        /* --exit-idle's seconds */
};

/* Milliseconds of a monotonic clock. */
static int64_t now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps ms milliseconds, signals or not. */
static void sleep_ms(int ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* Writes path made absolute against the working directory into buf;
 * returns 0, or -1 when it does not fit or the directory is unknown. */
static int absolute(const char *path, char *buf, size_t n)
{
  char cwd[PATH_MAX];
  int k;

  if (path[0] == '/')
    k = snprintf(buf, n, "%s", path);
  else if (getcwd(cwd, sizeof cwd) != NULL)
    k = snprintf(buf, n, "%s/%s", cwd, path);
  else
    return -1;
  return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* Makes dir and its missing parents (mode for each); 0 or -1 (errno). */
static int make_dirs(const char *dir, mode_t mode)
{
  char p[PATH_MAX];
  size_t i;

  snprintf(p, sizeof p, "%s", dir);
  for (i = 1; p[i] != '\0'; i++) {
    if (p[i] != '/')
      continue;
    p[i] = '\0';
    if (mkdir(p, mode) < 0 && errno != EEXIST)
      return -1;
    p[i] = '/';
  }
  return mkdir(p, mode) < 0 && errno != EEXIST ? -1 : 0;
}

/* Where a user instance keeps its cache and log: spmvd's own user default
 * ($XDG_STATE_HOME/spmvd, else ~/.local/state/spmvd), so that a started
 * daemon and one started by hand share a cache. */
static void state_dir(char *buf, size_t n)
{
  const char *state = getenv("XDG_STATE_HOME");
  const char *home = getenv("HOME");

  if (state != NULL && *state != '\0')
    snprintf(buf, n, "%s/spmvd", state);
  else
    snprintf(buf, n, "%s/.local/state/spmvd",
             home != NULL && *home != '\0' ? home : "/tmp");
}

/* The user's spmvd.conf ($XDG_CONFIG_HOME/spmvd, else ~/.config/spmvd)
 * into buf when it exists, else "". */
static void user_config(char *buf, size_t n)
{
  const char *cfg = getenv("XDG_CONFIG_HOME");
  const char *home = getenv("HOME");
  struct stat st;

  buf[0] = '\0';
  if (cfg != NULL && *cfg != '\0')
    snprintf(buf, n, "%s/spmvd/spmvd.conf", cfg);
  else if (home != NULL && *home != '\0')
    snprintf(buf, n, "%s/.config/spmvd/spmvd.conf", home);
  if (buf[0] != '\0' && (stat(buf, &st) < 0 || !S_ISREG(st.st_mode)))
    buf[0] = '\0';
}

/* The socket to start on: path, but never the system service's, whose
 * place a user instance takes at spmvd's user default. */
static void target_socket(const char *path, char *buf, size_t n)
{
  const char *run = getenv("XDG_RUNTIME_DIR");

  if (strcmp(path, SPMV_RUNSTATEDIR "/spmvd/spmvd.sock") != 0)
    snprintf(buf, n, "%s", path);
  else if (run != NULL && *run != '\0')
    snprintf(buf, n, "%s/spmvd.sock", run);
  else
    snprintf(buf, n, "/tmp/spmvd-%ld.sock", (long)geteuid());
}

/* Fills p for a connection that found nobody at path; 0 or a code. */
static int make_plan(const char *path, struct plan *p, struct spmv_error *err)
{
  /* Not from the environment of a setuid caller, which would run it. */
  const char *prog = secure_getenv("SPMVD_PROGRAM");
  const char *idle = getenv("SPMV_AUTOSTART_IDLE_S");
  char dir[PATH_MAX], rel[PATH_MAX + 16], *end;
  long secs = IDLE_DEFAULT_S;

  if (prog == NULL || *prog == '\0')
    prog = SPMV_SBINDIR "/spmvd";
  if (absolute(prog, p->program, sizeof p->program) < 0 ||
      access(p->program, X_OK) < 0)
    return spmv_error_set(err, SPMV_ECONNECT,
                          "spmvd is not running at %s and cannot be started: "
                          "%s is not an executable program (%s; set "
                          "SPMVD_PROGRAM)", path, prog, strerror(errno));
  if (idle != NULL && *idle != '\0') {
    errno = 0;
    secs = strtol(idle, &end, 10);
    if (errno != 0 || end == idle || *end != '\0' || secs < 0 || secs > 31536000)
      return spmv_error_set(err, SPMV_EINVAL,
                            "SPMV_AUTOSTART_IDLE_S is '%.32s', not a whole "
                            "number of seconds in [0, 31536000]", idle);
  }
  snprintf(p->idle, sizeof p->idle, "%ld", secs);
  target_socket(path, rel, sizeof rel);
  if (absolute(rel, p->sock, sizeof p->sock) < 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "cannot start spmvd on %.64s: the absolute path is "
                          "longer than %zu bytes", rel, sizeof p->sock - 1);
  state_dir(rel, sizeof rel);
  if (absolute(rel, dir, sizeof dir) < 0 ||
      snprintf(p->db, sizeof p->db, "%s/cache.db", dir) >= (int)sizeof p->db ||
      snprintf(p->log, sizeof p->log, "%s/spmvd.log", dir) >= (int)sizeof p->log)
    return spmv_error_set(err, SPMV_EINVAL,
                          "cannot start spmvd: the state directory %.64s is "
                          "too long", rel);
  user_config(rel, sizeof rel);
  if (rel[0] == '\0' || absolute(rel, p->conf, sizeof p->conf) < 0)
    p->conf[0] = '\0';
  /* The daemon makes its cache's directory; the log opened here needs it. */
  if (make_dirs(dir, 0700) < 0)
    snprintf(p->log, sizeof p->log, "/dev/null");
  return 0;
}

/* Returns fd moved to 3 or above (closing the old one), so that the
 * child's dup2 onto 0, 1 and 2 cannot overwrite it; -1 on failure. */
static int above_stdio(int fd)
{
  int hi;

  if (fd < 0 || fd > 2)
    return fd;
  hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return hi;
}

/* Opens the daemon's log for appending (emptied when over LOG_MAX); *start
 * is its size before the start. */
static int open_log(const char *path, off_t *start)
{
  struct stat st;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

  if (fd < 0)
    fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  *start = 0;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    if (st.st_size > LOG_MAX && ftruncate(fd, 0) == 0)
      st.st_size = 0;
    *start = st.st_size;
  }
  return above_stdio(fd);
}

/*
 * The child between fork and exec, with async-signal-safe calls only
 * (the caller may have threads): default signal dispositions and an empty
 * mask, so that the daemon inherits none of the client's; /dev/null and
 * the log as its standard files; no other descriptor; "/" as its
 * directory; then spmvd, which detaches itself (setsid and a second fork).
 */
static void child(char *const argv[], int null, int log, int report, int maxfd)
{
  struct sigaction dfl;
  sigset_t none;
  int s, e;

  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (s = 1; s < NSIG; s++)
    sigaction(s, &dfl, NULL);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log, 2) < 0 ||
      chdir("/") < 0)
    goto fail;
#ifdef SYS_close_range
  /* Marked rather than closed: report must stay open until the exec. */
  if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
#endif
    for (s = 3; s < maxfd; s++)
      if (s != report)
        close(s);
  execv(argv[0], argv);
fail:
  e = errno;
  if (write(report, &e, sizeof e) < 0)
    _exit(126);
  _exit(127);
}

/* Copies the last line that the start wrote to the log (from offset
 * start) into buf, "" when there is none. */
static void log_tail(const char *path, off_t start, char *buf, size_t n)
{
  char text[1024], *nl;
  struct stat st;
  off_t from;
  ssize_t k;
  int fd;

  buf[0] = '\0';
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
    return;
  if (fstat(fd, &st) == 0 && st.st_size > start) {
    from = st.st_size - start > (off_t)sizeof text - 1
               ? st.st_size - (off_t)sizeof text + 1 : start;
    k = pread(fd, text, sizeof text - 1, from);
    if (k > 0) {
      text[k] = '\0';
      while (k > 0 && (text[k - 1] == '\n' || text[k - 1] == '\r'))
        text[--k] = '\0';
      nl = strrchr(text, '\n');
      snprintf(buf, n, "%.*s", (int)n - 1, nl != NULL ? nl + 1 : text);
    }
  }
  close(fd);
}

/* Waits until the started process pid exits, at most until deadline:
 * its wait status in *st, 1 when it is gone unseen (the caller's SIGCHLD
 * handling reaped it), -1 when the deadline came first (it is killed). */
static int wait_started(pid_t pid, int64_t deadline, int *st)
{
  for (;;) {
    pid_t w = waitpid(pid, st, WNOHANG);

    if (w == pid)
      return 0;
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return 1;
    if (now_ms() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, st, 0);
      return -1;
    }
    sleep_ms(5);
  }
}

/*
 * Runs spmvd per p and waits for its first process, which exits once the
 * daemon listens (0) or failed (spmvd's start-up verdict).  Returns 0
 * when it started or may have, 1 when another daemon serves the socket,
 * else an error code naming the program, the socket and the log.
 */
static int spawn(const struct plan *p, int64_t deadline, struct spmv_error *err)
{
  char *argv[16], why[160];
  int null, log, pipefd[2], n = 0, st = 0, code, rc;
  long maxfd = sysconf(_SC_OPEN_MAX);
  sigset_t all, old;
  ssize_t k;
  off_t start;
  pid_t pid;

  argv[n++] = (char *)p->program;
  argv[n++] = (char *)"--socket";
  argv[n++] = (char *)p->sock;
  argv[n++] = (char *)"--db";
  argv[n++] = (char *)p->db;
  argv[n++] = (char *)"--log";
  argv[n++] = (char *)"stderr";
  argv[n++] = (char *)"--exit-idle";
  argv[n++] = (char *)p->idle;
  if (p->conf[0] != '\0') {
    argv[n++] = (char *)"--config";
    argv[n++] = (char *)p->conf;
  }
  argv[n] = NULL;
  if (maxfd < 0 || maxfd > 65536)
    maxfd = 65536;
  null = above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC));
  log = open_log(p->log, &start);
  if (pipe2(pipefd, O_CLOEXEC) < 0)
    pipefd[0] = pipefd[1] = -1;
  pipefd[0] = above_stdio(pipefd[0]);
  pipefd[1] = above_stdio(pipefd[1]);
  if (null < 0 || log < 0 || pipefd[0] < 0 || pipefd[1] < 0) {
    rc = spmv_error_set(err, SPMV_ECONNECT,
                        "cannot start spmvd on %s: cannot open descriptors: %s",
                        p->sock, strerror(errno));
    goto out;
  }
  /* Blocked across the fork: no handler of the caller runs in the child. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid = fork();
  if (pid == 0)
    child(argv, null, log, pipefd[1], (int)maxfd);
  code = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(pipefd[1]);
  pipefd[1] = -1;
  if (pid < 0) {
    rc = spmv_error_set(err, SPMV_ECONNECT, "cannot start spmvd on %s: fork: %s",
                        p->sock, strerror(code));
    goto out;
  }
  /* The child writes errno here when it cannot exec; the exec closes it. */
  while ((k = read(pipefd[0], &code, sizeof code)) < 0 && errno == EINTR)
    ;
  if (k == (ssize_t)sizeof code) {
    waitpid(pid, NULL, 0);
    rc = spmv_error_set(err, SPMV_ECONNECT, "cannot start spmvd on %s: %s: %s",
                        p->sock, p->program, strerror(code));
    goto out;
  }
  rc = wait_started(pid, deadline, &st);
  if (rc < 0) {
    rc = spmv_error_set(err, SPMV_ECONNECT,
                        "%s did not finish starting on %s within %d s (its "
                        "log: %s)", p->program, p->sock, WAIT_MS / 1000, p->log);
  } else if (rc == 1 || (WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
    rc = 0;
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_BUSY) {
    rc = 1;
  } else {
    log_tail(p->log, start, why, sizeof why);
    rc = spmv_error_set(err, SPMV_ECONNECT,
                        "%s did not start on %s (%s %d; its log: %s): %s",
                        p->program, p->sock,
                        WIFEXITED(st) ? "exit status" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), p->log,
                        why[0] != '\0' ? why : "no message");
  }
out:
  if (null >= 0)
    close(null);
  if (log >= 0)
    close(log);
  if (pipefd[0] >= 0)
    close(pipefd[0]);
  if (pipefd[1] >= 0)
    close(pipefd[1]);
  return rc;
}

/* See spmv_client_int.h. */
int spmvc_autostart(const char *path, struct spmv_client **out,
                    struct spmv_error *err)
{
  struct plan p;
  int64_t deadline;
  int rc, absent, spawns = 0, pause = 10;

  if ((rc = make_plan(path, &p, err)) < 0)
    return rc;
  deadline = now_ms() + WAIT_MS;
  for (;;) {
    /* Another caller's daemon, or the one started here, may answer now. */
    rc = spmvc_connect_path(p.sock, out, &absent, err);
    if (rc == 0 || !absent)
      return rc;
    if (now_ms() >= deadline)
      return spmv_error_set(err, SPMV_ECONNECT,
                            "spmvd (%s) did not answer on %s within %d s of "
                            "its start (its log: %s)", p.program, p.sock,
                            WAIT_MS / 1000, p.log);
    /* A daemon that holds the socket's lock is starting or stopping:
     * give it time before the next try, a little more each time. */
    if (spawns++ > 0) {
      sleep_ms(pause);
      pause = pause < 200 ? pause * 2 : 200;
    }
    rc = spawn(&p, deadline, err);
    if (rc < 0)
      return rc;
  }
}
