/* spmvd_main.c: spmvd(8): options, configuration, daemonising, the loop. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "spmvd_config.h"
#include "spmvd_log.h"
#include "spmvd_server.h"

#ifndef SPMV_SYSCONFDIR
#define SPMV_SYSCONFDIR "/etc"
#endif
#ifndef SPMV_LIBEXECDIR
#define SPMV_LIBEXECDIR "/usr/local/libexec"
#endif

static void usage(FILE *f)
{
  struct spmvd_config sys;

  memset(&sys, 0, sizeof sys);
  spmvd_config_system_paths(&sys);
  fprintf(f,
          "usage: spmvd [--foreground] [--socket PATH] [--db PATH] [--config FILE]\n"
          "             [--log stderr|syslog] [--log-level LEVEL]\n"
          "             [--backend auto|cpu|cuda] [--device N] [--devices all|N,...]\n"
          "             [--cpu-workers N] [--exit-idle SECONDS] [--help] [--version]\n"
          "\n"
          "The sparse matrix-vector product service; see spmvd(8).\n"
          "  -f, --foreground     stay in the foreground (logs to stderr)\n"
          "  -s, --socket PATH    listen on PATH\n"
          "  -d, --db PATH        the tuning cache (SQLite)\n"
          "  -c, --config FILE    read spmvd.conf(5) FILE\n"
          "  -l, --log SINK       stderr or syslog\n"
          "  -L, --log-level LEVEL  error, warn, info or debug\n"
          "  -b, --backend NAME   auto, cpu or cuda\n"
          "  -D, --device N       the device the worker drives\n"
          "      --devices all|N,...  a worker for each of these devices\n"
          "      --cpu-workers N  workers of the cpu backend (default 1)\n"
          "      --exit-idle SECONDS  exit after SECONDS with no client (0: never)\n"
          "  -h, --help           this help\n"
          "  -V, --version        the version\n"
          "\n"
          "Defaults of the system service (root):\n"
          "  socket  %s\n"
          "  db      %s\n"
          "  config  %s/spmvd.conf\n"
          "  worker  next to spmvd, else %s/spmvd-worker\n"
          "Other users: $XDG_RUNTIME_DIR/spmvd.sock (else /tmp/spmvd-UID.sock) and\n"
          "$XDG_STATE_HOME/spmvd/cache.db (else ~/.local/state/spmvd/cache.db).\n"
          "Exit status: 0 stopped, 1 start-up failed, 2 usage, 3 another spmvd\n"
          "serves the socket.\n",
          sys.socket_path, sys.db_path, SPMV_SYSCONFDIR, SPMV_LIBEXECDIR);
}

/* Exit status of a start refused because another daemon serves the
 * socket, which libspmvclient's autostart tells from other failures. */
#define EXIT_BUSY 3

/* Detaches; the parent waits on a pipe for the child's start-up verdict
 * ('+' started, '!' another daemon serves the socket, '-' failed). */
static int daemonize(int *report_fd)
{
  int p[2];
  pid_t pid;
  char buf[512];
  ssize_t n;

  if (pipe(p) < 0)
    return -1;
  pid = fork();
  if (pid < 0)
    return -1;
  if (pid > 0) {
    close(p[1]);
    n = read(p[0], buf, sizeof buf - 1);
    /* The middle child has exited by now: reaped here, it is nobody's
     * zombie where the reaper of orphans does not reap. */
    waitpid(pid, NULL, 0);
    if (n > 0 && buf[0] == '+')
      _exit(0);
    buf[n > 0 ? n : 0] = '\0';
    fprintf(stderr, "spmvd: %s\n", n > 0 ? buf + 1 : "failed to start");
    _exit(n > 0 && buf[0] == '!' ? EXIT_BUSY : 1);
  }
  close(p[0]);
  setsid();
  /* The middle child always exits (1 when it cannot fork: the parent then
   * reads no verdict), so that the parent's wait for it returns. */
  pid = fork();
  if (pid != 0)
    _exit(pid > 0 ? 0 : 1);
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    if (null > 2)
      close(null);
  }
  *report_fd = p[1];
  return 0;
}

/* Sends the start-up verdict: msg NULL for started, else the failure of
 * code rc. */
static void report(int fd, int rc, const char *msg)
{
  char buf[512];
  int n;

  if (fd < 0)
    return;
  n = snprintf(buf, sizeof buf, "%c%s",
               msg == NULL ? '+' : rc == SPMV_EBUSY ? '!' : '-',
               msg ? msg : "");
  if (write(fd, buf, (size_t)n) < 0)
    spmvd_log_warn("cannot report the start-up to the parent");
  close(fd);
}

/* spmvd: reads options and configuration, then serves until SIGTERM. */
int main(int argc, char **argv)
{
  static const struct option lopts[] = {
    {"foreground", no_argument, NULL, 'f'},
    {"socket", required_argument, NULL, 's'},
    {"db", required_argument, NULL, 'd'},
    {"config", required_argument, NULL, 'c'},
    {"log", required_argument, NULL, 'l'},
    {"log-level", required_argument, NULL, 'L'},
    {"backend", required_argument, NULL, 'b'},
    {"device", required_argument, NULL, 'D'},
    {"devices", required_argument, NULL, 'G'},
    {"cpu-workers", required_argument, NULL, 'W'},
    {"exit-idle", required_argument, NULL, 'E'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
  };
  static struct spmvd_server srv;
  struct spmvd_config ovr;
  struct spmv_error err;
  const char *keys[12], *vals[12];
  int nset = 0, foreground = 0, log_given = 0, report_fd = -1, c, rc;
  uv_loop_t loop;

  spmvd_config_defaults(&srv.cfg);
  memset(&ovr, 0, sizeof ovr);
  while ((c = getopt_long(argc, argv, "fs:d:c:l:L:b:D:hV", lopts, NULL)) != -1) {
    switch (c) {
    case 'f': foreground = 1; break;
    case 's': keys[nset] = "socket"; vals[nset++] = optarg; break;
    case 'd': keys[nset] = "db"; vals[nset++] = optarg; break;
    case 'c':
      snprintf(srv.config_path, sizeof srv.config_path, "%s", optarg);
      break;
    case 'l': keys[nset] = "log"; vals[nset++] = optarg; log_given = 1; break;
    case 'L': keys[nset] = "log_level"; vals[nset++] = optarg; break;
    case 'b': keys[nset] = "backend"; vals[nset++] = optarg; break;
    case 'D': keys[nset] = "device"; vals[nset++] = optarg; break;
    case 'G': keys[nset] = "devices"; vals[nset++] = optarg; break;
    case 'W': keys[nset] = "cpu_workers"; vals[nset++] = optarg; break;
    case 'E':
      keys[nset] = "exit_idle_s";
      vals[nset++] = optarg;
      srv.override_mask |= SPMVD_OVR_EXIT_IDLE;
      break;
    case 'h': usage(stdout); return 0;
    case 'V': printf("spmvd %s (protocol 1)\n", PACKAGE_VERSION); return 0;
    default: usage(stderr); return 2;
    }
    if (nset == 12) {
      fprintf(stderr, "spmvd: too many options\n");
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "spmvd: unexpected argument '%s'\n", argv[optind]);
    usage(stderr);
    return 2;
  }
  if (!*srv.config_path && geteuid() == 0) {
    struct stat st;
    snprintf(srv.config_path, sizeof srv.config_path, "%s/spmvd.conf",
             SPMV_SYSCONFDIR);
    if (stat(srv.config_path, &st) < 0)
      srv.config_path[0] = '\0';
  }
  if (*srv.config_path && spmvd_config_load(&srv.cfg, srv.config_path, &err) < 0) {
    fprintf(stderr, "spmvd: %s\n", err.msg);
    return 1;
  }
  if (!foreground && !log_given)
    srv.cfg.log_sink = SPMVD_LOG_SYSLOG;
  for (int i = 0; i < nset; i++) {
    if (spmvd_config_set(&srv.cfg, keys[i], vals[i], &err) < 0) {
      fprintf(stderr, "spmvd: --%s: %s\n", keys[i], err.msg);
      return 2;
    }
  }
  if (log_given)
    srv.override_mask |= SPMVD_OVR_LOG;
  if (!foreground && daemonize(&report_fd) < 0) {
    fprintf(stderr, "spmvd: cannot detach: %s\n", strerror(errno));
    return 1;
  }
  spmvd_log_open("spmvd", srv.cfg.log_sink, srv.cfg.log_level);
  signal(SIGPIPE, SIG_IGN);
  /* Every connection and every queued worker request holds descriptors. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  uv_loop_init(&loop);
  rc = spmvd_server_open(&srv, &loop, &err);
  if (rc < 0) {
    spmvd_log_error("%s", err.msg);
    if (srv.cfg.log_sink != SPMVD_LOG_STDERR)
      fprintf(stderr, "spmvd: %s\n", err.msg);
    report(report_fd, rc, err.msg);
    spmvd_server_stop(&srv);
    uv_run(&loop, UV_RUN_DEFAULT);
    spmvd_server_close(&srv);
    uv_loop_close(&loop);
    return rc == SPMV_EBUSY ? EXIT_BUSY : 1;
  }
  report(report_fd, 0, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  spmvd_server_close(&srv);
  rc = uv_loop_close(&loop);
  if (rc != 0)
    spmvd_log_warn("the loop closed with handles left: %s", uv_strerror(rc));
  spmvd_log_info("stopped");
  spmvd_log_close();
  return srv.exit_code;
}
