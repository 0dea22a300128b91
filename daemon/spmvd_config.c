/* spmvd_config.c: spmvd.conf(5), "key = value" lines, and the defaults. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_config.h"
#include "spmv_formats.h"

#ifndef SPMV_RUNSTATEDIR
#define SPMV_RUNSTATEDIR "/run"
#endif
#ifndef SPMV_LOCALSTATEDIR
#define SPMV_LOCALSTATEDIR "/var"
#endif

/* Sets c's socket and cache to the system service's, from the configured
 * directories. */
void spmvd_config_system_paths(struct spmvd_config *c)
{
  snprintf(c->socket_path, sizeof c->socket_path, "%s/spmvd/spmvd.sock",
           SPMV_RUNSTATEDIR);
  snprintf(c->db_path, sizeof c->db_path, "%s/lib/spmvd/cache.db",
           SPMV_LOCALSTATEDIR);
}

/* Fills c with the defaults for root (service) or a user instance. */
void spmvd_config_defaults(struct spmvd_config *c)
{
  const char *run = getenv("XDG_RUNTIME_DIR");
  const char *state = getenv("XDG_STATE_HOME");
  const char *home = getenv("HOME");

  memset(c, 0, sizeof *c);
  if (geteuid() == 0) {
    spmvd_config_system_paths(c);
  } else {
    if (run && *run)
      snprintf(c->socket_path, sizeof c->socket_path, "%s/spmvd.sock", run);
    else
      snprintf(c->socket_path, sizeof c->socket_path, "/tmp/spmvd-%ld.sock",
               (long)geteuid());
    if (state && *state)
      snprintf(c->db_path, sizeof c->db_path, "%s/spmvd/cache.db", state);
    else
      snprintf(c->db_path, sizeof c->db_path, "%s/.local/state/spmvd/cache.db",
               home && *home ? home : "/tmp");
  }
  snprintf(c->backend, sizeof c->backend, "auto");
  c->cpu_workers = 1;
  snprintf(c->strategy, sizeof c->strategy, "auto");
  c->log_sink = SPMVD_LOG_STDERR;
  c->log_level = SPMVD_LOG_INFO;
  c->max_json = 1u << 20;
  c->max_payload = (uint64_t)4 << 30;
  c->max_conn_bytes = (uint64_t)8 << 30;
  c->max_matrices_per_uid = 256;
  c->max_device_bytes_per_uid = (uint64_t)64 << 30;
  c->max_vectors_per_conn = 1024;
  c->max_conns_per_uid = 64;
  c->max_conns = 1024;
  c->busy_poll_us = -1;
  /* A user's own instance serves that user alone, even on a socket in
   * /tmp (no XDG_RUNTIME_DIR), where the directory does not guard it. */
  c->socket_mode = geteuid() == 0 ? 0666 : 0600;
  c->frame_timeout_s = 10;
  /* Never by default, as Redis's timeout and PostgreSQL's
   * idle_session_timeout: closing a connection frees its matrices and
   * vectors, which an application that multiplies now and then still
   * needs. */
  c->idle_timeout_s = 0;
  /* A service stays; an instance started on demand asks for an exit. */
  c->exit_idle_s = 0;
  /* Long enough for the longest single step a worker takes without a
   * word (a product, a load's validation, one candidate's timing on a
   * large matrix), short enough that clients hear of a stuck kernel. */
  c->device_timeout_s = 60;
}

_Static_assert(SPMV_FMT_COUNT <= 32, "exclude_formats is a 32-bit mask");

int spmvd_config_parse_formats(const char *list, uint32_t *mask,
                               struct spmv_error *err)
{
  uint32_t m = 0;
  const char *p = list, *end;
  char word[32];
  enum spmv_format f;
  size_t n;

  while (isspace((unsigned char)*p))
    p++;
  if (strcmp(p, "none") == 0) {
    *mask = 0;
    return 0;
  }
  while (*p != '\0') {
    while (isspace((unsigned char)*p))
      p++;
    end = strchr(p, ',');
    n = end ? (size_t)(end - p) : strlen(p);
    while (n > 0 && isspace((unsigned char)p[n - 1]))
      n--;
    if (n == 0 && end == NULL)
      break;  /* trailing spaces */
    if (n == 0 || n >= sizeof word)
      return spmv_error_set(err, SPMV_ECONFIG,
                            "exclude_formats: '%s' has an empty or overlong "
                            "name", list);
    memcpy(word, p, n);
    word[n] = '\0';
    if (spmv_format_parse(word, &f) != 0)
      return spmv_error_set(err, SPMV_ECONFIG,
                            "exclude_formats: '%s' is not a format (spmvctl(1) "
                            "lists them, e.g. csr-vector, cusparse)", word);
    m |= 1u << f;
    if (end == NULL)
      break;
    p = end + 1;
  }
  *mask = m;
  return 0;
}

void spmvd_config_format_names(uint32_t mask, char *buf, size_t size)
{
  size_t used = 0;
  int f, k;

  if (size > 0)
    buf[0] = '\0';
  for (f = 0; f < SPMV_FMT_COUNT && size > 0; f++) {
    if (!(mask & (1u << f)))
      continue;
    k = snprintf(buf + used, size - used, "%s%s", used ? "," : "",
                 spmv_format_name((enum spmv_format)f));
    if (k < 0 || (size_t)k >= size - used) {
      buf[used] = '\0';  /* no half names */
      break;
    }
    used += (size_t)k;
  }
}

/* Parses "123", "64K", "16M", "4G" into bytes; returns 0 or -1. */
int spmvd_config_parse_size(const char *s, uint64_t *out)
{
  char *end;
  unsigned long long v;

  if (!isdigit((unsigned char)*s))
    return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno)
    return -1;
  int shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K': shift = 10; end++; break;
  case 'M': shift = 20; end++; break;
  case 'G': shift = 30; end++; break;
  case 'T': shift = 40; end++; break;
  default: break;
  }
  if (*end == 'i' || *end == 'B')
    end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
  if (*end != '\0' || (shift && v > (UINT64_MAX >> shift)))
    return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

static int parse_int(const char *s, long lo, long hi, int base, long *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, base);
  if (errno || end == s || *end != '\0' || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

static int set_string(char *dst, size_t n, const char *key, const char *value,
                      struct spmv_error *err)
{
  if (strlen(value) >= n)
    return spmv_error_set(err, SPMV_ECONFIG, "%s: value longer than %zu bytes",
                          key, n - 1);
  memcpy(dst, value, strlen(value) + 1);
  return 0;
}

static int one_of(const char *value, const char *const *set)
{
  for (; *set; set++)
    if (strcmp(value, *set) == 0)
      return 1;
  return 0;
}

/* devices: "all" or a comma-separated list of device numbers; one listed
 * twice gets two workers, which share that GPU (a split's cuda path on one
 * GPU, or one client's long solve beside another's products). */
static int parse_devices(struct spmvd_config *c, const char *value,
                         struct spmv_error *err)
{
  const char *p = value;
  int n = 0, list[SPMVD_CONFIG_MAX_WORKERS];

  if (strcmp(value, "all") == 0) {
    c->ndevices = -1;
    return 0;
  }
  while (*p) {
    char *end;
    errno = 0;
    long d = strtol(p, &end, 10);
    if (end == p || errno || d < 0 || d > 1023 || (*end && *end != ','))
      return spmv_error_set(err, SPMV_ECONFIG, "devices: '%s' is not 'all' or "
                            "a list of device numbers such as 0,1", value);
    if (n == SPMVD_CONFIG_MAX_WORKERS)
      return spmv_error_set(err, SPMV_ECONFIG, "devices: '%s' lists more than "
                            "%d devices", value, SPMVD_CONFIG_MAX_WORKERS);
    list[n++] = (int)d;
    p = *end ? end + 1 : end;
    if (*end && !*p)
      return spmv_error_set(err, SPMV_ECONFIG, "devices: '%s' ends in a comma",
                            value);
  }
  if (n == 0)
    return spmv_error_set(err, SPMV_ECONFIG, "devices: the list is empty");
  memcpy(c->devices, list, sizeof list[0] * (size_t)n);
  c->ndevices = n;
  return 0;
}

/* Applies one "key = value" setting to c; returns 0 or SPMV_ECONFIG. */
int spmvd_config_set(struct spmvd_config *c, const char *key,
                     const char *value, struct spmv_error *err)
{
  static const char *const backends[] = {"auto", "cpu", "cuda", NULL};
  static const char *const strategies[] = {"auto", "model", "predict", "trial",
                                           "exhaustive", NULL};
  uint64_t size;
  long v;

  if (strcmp(key, "socket") == 0)
    return set_string(c->socket_path, sizeof c->socket_path, key, value, err);
  if (strcmp(key, "db") == 0)
    return set_string(c->db_path, sizeof c->db_path, key, value, err);
  if (strcmp(key, "lock") == 0)
    return set_string(c->lock_path, sizeof c->lock_path, key, value, err);
  if (strcmp(key, "worker") == 0)
    return set_string(c->worker_path, sizeof c->worker_path, key, value, err);
  if (strcmp(key, "admin_group") == 0)
    return set_string(c->admin_group, sizeof c->admin_group, key, value, err);
  if (strcmp(key, "backend") == 0) {
    if (!one_of(value, backends))
      return spmv_error_set(err, SPMV_ECONFIG,
                            "backend: '%s' is not auto, cpu or cuda", value);
    return set_string(c->backend, sizeof c->backend, key, value, err);
  }
  if (strcmp(key, "strategy") == 0) {
    if (!one_of(value, strategies))
      return spmv_error_set(err, SPMV_ECONFIG,
                            "strategy: '%s' is not auto, model, predict, "
                            "trial or exhaustive", value);
    return set_string(c->strategy, sizeof c->strategy, key, value, err);
  }
  if (strcmp(key, "devices") == 0)
    return parse_devices(c, value, err);
  if (strcmp(key, "exclude_formats") == 0)
    return spmvd_config_parse_formats(value, &c->exclude_formats, err);
  if (strcmp(key, "log") == 0) {
    if (spmvd_log_sink_parse(value, &c->log_sink) < 0)
      return spmv_error_set(err, SPMV_ECONFIG,
                            "log: '%s' is not stderr or syslog", value);
    return 0;
  }
  if (strcmp(key, "log_level") == 0) {
    if (spmvd_log_level_parse(value, &c->log_level) < 0)
      return spmv_error_set(err, SPMV_ECONFIG,
                            "log_level: '%s' is not error, warn, info or debug",
                            value);
    return 0;
  }
  if (strcmp(key, "max_json_bytes") == 0 ||
      strcmp(key, "max_payload_bytes") == 0 ||
      strcmp(key, "max_connection_bytes") == 0 ||
      strcmp(key, "max_device_bytes_per_user") == 0) {
    if (spmvd_config_parse_size(value, &size) < 0 || size == 0)
      return spmv_error_set(err, SPMV_ECONFIG,
                            "%s: '%s' is not a size (e.g. 4096, 64K, 16M, 4G)",
                            key, value);
    if (key[4] == 'j') {
      if (size > UINT32_MAX)
        return spmv_error_set(err, SPMV_ECONFIG,
                              "max_json_bytes: %s is over 4G", value);
      c->max_json = (uint32_t)size;
    } else if (key[4] == 'p') {
      c->max_payload = size;
    } else if (key[4] == 'd') {
      c->max_device_bytes_per_uid = size;
    } else {
      c->max_conn_bytes = size;
    }
    return 0;
  }
  if (strcmp(key, "device_timeout_s") == 0) {
    if (parse_int(value, 0, 86400, 10, &v) < 0 ||
        (v > 0 && v < SPMVD_CONFIG_MIN_DEVICE_TIMEOUT_S))
      return spmv_error_set(err, SPMV_ECONFIG,
                            "device_timeout_s: '%s' is not 0 or an integer in "
                            "[%d, 86400]", value,
                            SPMVD_CONFIG_MIN_DEVICE_TIMEOUT_S);
    c->device_timeout_s = (int)v;
    return 0;
  }
  struct {
    const char *key;
    int *dst;
    long lo, hi;
    int base;
  } ints[] = {
    {"device", &c->device, 0, 1023, 10},
    {"threads", &c->threads, 0, 4096, 10},
    {"cpu_workers", &c->cpu_workers, 1, SPMVD_CONFIG_MAX_WORKERS, 10},
    {"busy_poll_us", &c->busy_poll_us, -1, 100000, 10},
    {"max_matrices_per_user", &c->max_matrices_per_uid, 1, INT_MAX, 10},
    {"max_connections_per_user", &c->max_conns_per_uid, 1, INT_MAX, 10},
    {"max_vectors_per_connection", &c->max_vectors_per_conn, 1, INT_MAX, 10},
    {"max_connections", &c->max_conns, 1, INT_MAX, 10},
    {"socket_mode", &c->socket_mode, 0, 0777, 8},
    {"frame_timeout_s", &c->frame_timeout_s, 0, 86400, 10},
    {"idle_timeout_s", &c->idle_timeout_s, 0, 31536000, 10},
    {"exit_idle_s", &c->exit_idle_s, 0, 31536000, 10},
  };
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    if (strcmp(key, ints[i].key) != 0)
      continue;
    if (parse_int(value, ints[i].lo, ints[i].hi, ints[i].base, &v) < 0)
      return spmv_error_set(err, SPMV_ECONFIG,
                            "%s: '%s' is not %s in [%ld, %ld]", key, value,
                            ints[i].base == 8 ? "an octal number" : "an integer",
                            ints[i].lo, ints[i].hi);
    *ints[i].dst = (int)v;
    return 0;
  }
  return spmv_error_set(err, SPMV_ECONFIG, "unknown key '%s'", key);
}

static char *trim(char *s)
{
  while (isspace((unsigned char)*s))
    s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1]))
    *--e = '\0';
  return s;
}

/* Reads path into c; on error c is unchanged.  Returns 0 or SPMV_ECONFIG. */
int spmvd_config_load(struct spmvd_config *c, const char *path,
                      struct spmv_error *err)
{
  struct spmvd_config tmp = *c;
  struct spmv_error e;
  char line[1024];
  int lineno = 0, rc = 0;
  FILE *f = fopen(path, "r");

  if (!f)
    return spmv_error_set(err, SPMV_ECONFIG, "cannot open %s: %s", path,
                          strerror(errno));
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (!strchr(line, '\n') && !feof(f)) {
      rc = spmv_error_set(err, SPMV_ECONFIG, "%s:%d: line longer than %zu bytes",
                          path, lineno, sizeof line - 2);
      goto out;
    }
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    char *s = trim(line);
    if (*s == '\0')
      continue;
    char *eq = strchr(s, '=');
    if (!eq) {
      rc = spmv_error_set(err, SPMV_ECONFIG, "%s:%d: expected 'key = value'",
                          path, lineno);
      goto out;
    }
    *eq = '\0';
    char *key = trim(s), *value = trim(eq + 1);
    if (*value == '"' && strlen(value) >= 2 && value[strlen(value) - 1] == '"') {
      value[strlen(value) - 1] = '\0';
      value++;
    }
    if (spmvd_config_set(&tmp, key, value, &e) < 0) {
      rc = spmv_error_set(err, SPMV_ECONFIG, "%s:%d: %s", path, lineno, e.msg);
      goto out;
    }
  }
  if (ferror(f)) {
    rc = spmv_error_set(err, SPMV_ECONFIG, "cannot read %s", path);
    goto out;
  }
  *c = tmp;
out:
  fclose(f);
  return rc;
}
