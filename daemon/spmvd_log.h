/* spmvd_log.h: the daemon's log, to stderr or syslog, with levels. */
#ifndef SPMVD_LOG_H
#define SPMVD_LOG_H

/* Levels, most severe first; a message is kept when its level <= the set one. */
enum spmvd_log_level {
  SPMVD_LOG_ERROR = 0,
  SPMVD_LOG_WARN = 1,
  SPMVD_LOG_INFO = 2,
  SPMVD_LOG_DEBUG = 3
};

/* Where the log goes. */
enum spmvd_log_sink {
  SPMVD_LOG_STDERR = 0,
  SPMVD_LOG_SYSLOG = 1
};

/* Opens the log: ident names the program ("spmvd", "spmvd-worker"). */
void spmvd_log_open(const char *ident, enum spmvd_log_sink sink,
                    enum spmvd_log_level level);
/* Changes the level (e.g. after a configuration reload). */
void spmvd_log_set_level(enum spmvd_log_level level);
/* Closes syslog if it was opened. */
void spmvd_log_close(void);

/* Parses "error", "warn", "info", "debug"; returns 0 or -1. */
int spmvd_log_level_parse(const char *s, enum spmvd_log_level *out);
/* Parses "stderr" or "syslog"; returns 0 or -1. */
int spmvd_log_sink_parse(const char *s, enum spmvd_log_sink *out);

/* Logs a printf-style message at a level. */
void spmvd_log(enum spmvd_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define spmvd_log_error(...) spmvd_log(SPMVD_LOG_ERROR, __VA_ARGS__)
#define spmvd_log_warn(...) spmvd_log(SPMVD_LOG_WARN, __VA_ARGS__)
#define spmvd_log_info(...) spmvd_log(SPMVD_LOG_INFO, __VA_ARGS__)
#define spmvd_log_debug(...) spmvd_log(SPMVD_LOG_DEBUG, __VA_ARGS__)

#endif /* SPMVD_LOG_H */
