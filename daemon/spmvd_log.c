/* spmvd_log.c: the daemon's log, to stderr or syslog, with levels. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "spmvd_log.h"

static struct {
  char ident[32];
  enum spmvd_log_sink sink;
  enum spmvd_log_level level;
} log_state = {"spmvd", SPMVD_LOG_STDERR, SPMVD_LOG_INFO};

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* Opens the log: ident names the program ("spmvd", "spmvd-worker"). */
void spmvd_log_open(const char *ident, enum spmvd_log_sink sink,
                    enum spmvd_log_level level)
{
  snprintf(log_state.ident, sizeof log_state.ident, "%s", ident);
  if (log_state.sink == SPMVD_LOG_SYSLOG && sink != SPMVD_LOG_SYSLOG)
    closelog();
  log_state.sink = sink;
  log_state.level = level;
  if (sink == SPMVD_LOG_SYSLOG)
    openlog(log_state.ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* Changes the level (e.g. after a configuration reload). */
void spmvd_log_set_level(enum spmvd_log_level level)
{
  log_state.level = level;
}

/* Closes syslog if it was opened. */
void spmvd_log_close(void)
{
  if (log_state.sink == SPMVD_LOG_SYSLOG)
    closelog();
  log_state.sink = SPMVD_LOG_STDERR;
}

/* Parses "error", "warn", "info", "debug"; returns 0 or -1. */
int spmvd_log_level_parse(const char *s, enum spmvd_log_level *out)
{
  for (int i = 0; i < 4; i++) {
    if (strcmp(s, level_names[i]) == 0) {
      *out = (enum spmvd_log_level)i;
      return 0;
    }
  }
  return -1;
}

/* Parses "stderr" or "syslog"; returns 0 or -1. */
int spmvd_log_sink_parse(const char *s, enum spmvd_log_sink *out)
{
  if (strcmp(s, "stderr") == 0)
    *out = SPMVD_LOG_STDERR;
  else if (strcmp(s, "syslog") == 0)
    *out = SPMVD_LOG_SYSLOG;
  else
    return -1;
  return 0;
}

/* Logs a printf-style message at a level. */
void spmvd_log(enum spmvd_log_level level, const char *fmt, ...)
{
  static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
  char msg[1024];
  va_list ap;

  if (level > log_state.level)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (log_state.sink == SPMVD_LOG_SYSLOG) {
    syslog(prio[level], "%s", msg);
    return;
  }
  struct timespec ts;
  struct tm tm;
  char stamp[32];
  clock_gettime(CLOCK_REALTIME, &ts);
  localtime_r(&ts.tv_sec, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
  fprintf(stderr, "%s.%03ld %s[%ld] %s: %s\n", stamp, ts.tv_nsec / 1000000L,
          log_state.ident, (long)getpid(), level_names[level], msg);
}
