/* spmvctl_cache.c: the commands that read the cache database read-only:
 * list, show, export. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spmvctl.h"
#include "spmvd_cache.h"

#ifndef SPMV_LOCALSTATEDIR
#define SPMV_LOCALSTATEDIR "/var"
#endif

/* Returns the integer member key of obj, or 0. */
static long long integer(const json_t *obj, const char *key)
{
  return (long long)json_integer_value(json_object_get(obj, key));
}

/* Asks a running spmvd which database it uses (never starting one: the
 * database is there without it); 0 when it answered. */
static int daemon_db(const struct spmvctl *ctl, char *buf, size_t n)
{
  struct spmv_client *c = NULL;
  char *text = NULL;
  json_t *s;
  int found = 0;

  if (spmv_connect_opts(ctl->socket, 0, &c) < 0)
    return -1;
  if (spmv_status_json(c, &text) == 0) {
    s = json_loads(text, 0, NULL);
    if (json_is_string(json_object_get(s, "cache_path"))) {
      snprintf(buf, n, "%s", json_string_value(json_object_get(s, "cache_path")));
      found = 1;
    }
    json_decref(s);
  }
  free(text);
  spmv_disconnect(c);
  return found ? 0 : -1;
}

/* The default database: the user instance's when it exists (or for a
 * non-root user), else the service's. */
static void default_db(char *buf, size_t n)
{
  const char *state = getenv("XDG_STATE_HOME");
  const char *home = getenv("HOME");
  struct stat sb;

  if (geteuid() != 0) {
    if (state != NULL && *state != '\0')
      snprintf(buf, n, "%s/spmvd/cache.db", state);
    else
      snprintf(buf, n, "%s/.local/state/spmvd/cache.db",
               home != NULL && *home != '\0' ? home : "/tmp");
    if (stat(buf, &sb) == 0)
      return;
  }
  snprintf(buf, n, "%s/lib/spmvd/cache.db", SPMV_LOCALSTATEDIR);
}

/* Opens the cache read-only: --db, else the daemon's, else the default. */
int spmvctl_open_cache(const struct spmvctl *ctl, struct spmvd_cache **out)
{
  struct spmv_error err;
  char path[4096];
  int rc;

  if (ctl->db != NULL)
    snprintf(path, sizeof path, "%s", ctl->db);
  else if (daemon_db(ctl, path, sizeof path) < 0)
    default_db(path, sizeof path);
  spmv_error_clear(&err);
  rc = spmvd_cache_open(path, SPMVD_CACHE_READONLY, out, &err);
  if (rc == SPMV_ENOENT)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_NOTFOUND,
                        "%s (spmvd creates it when it starts; name another with --db)",
                        err.msg);
  if (rc < 0)
    return spmvctl_fail(ctl, spmvctl_exit_status(rc), "%s", err.msg);
  return SPMVCTL_EXIT_OK;
}

/* Prints the tunings of list as a table. */
static void print_list(const json_t *r)
{
  const json_t *tunings = json_object_get(r, "tunings");
  size_t i;

  if (json_array_size(tunings) == 0) {
    printf("no cached tunings\n");
    return;
  }
  printf("%-32s %-4s %10s %12s  %-26s %11s %9s %-10s %6s  %s\n", "FINGERPRINT",
         "TYPE", "ROWS", "NNZ", "CONFIGURATION", "TIME_US", "GFLOP/S",
         "STRATEGY", "HITS", "LAST USED");
  for (i = 0; i < json_array_size(tunings); i++) {
    const json_t *t = json_array_get(tunings, i);
    char when[32];

    const char *bad = json_string_value(json_object_get(t, "corrupt"));

    printf("%-32s %-4s %10lld %12lld  %-26s %11.3f %9.2f %-10s %6lld  %s%s%s%s\n",
           spmvctl_str(t, "fingerprint"), spmvctl_str(t, "dtype"), integer(t, "rows"),
           integer(t, "nnz"), spmvctl_str(t, "config"), spmvctl_num(t, "time_us"),
           spmvctl_num(t, "gflops"), spmvctl_str(t, "strategy"), integer(t, "hits"),
           spmvctl_time(integer(t, "last_used"), when, sizeof when),
           integer(t, "quarantined") ? "  (quarantined)" : "",
           bad ? "  corrupt: " : "", bad ? bad : "");
  }
}

/* spmvctl list: every cached tuning. */
int spmvctl_list(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmvd_cache *cache = NULL;
  struct spmv_error err;
  json_t *list = NULL, *r = NULL;
  int rc, status;

  status = spmvctl_open_cache(ctl, &cache);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  rc = spmvd_cache_list(cache, &list, &err);
  if (rc < 0) {
    status = spmvctl_fail(ctl, spmvctl_exit_status(rc), "%s", err.msg);
  } else {
    r = json_pack("{s:O}", "tunings", list);
    status = spmvctl_output(ctl, r, print_list);
  }
  json_decref(r);
  json_decref(list);
  spmvd_cache_close(cache);
  return status;
}

/* Prints one matrix of show: its profile, then each tuning and its trials. */
static void print_show(const json_t *m)
{
  const json_t *p = json_object_get(m, "profile");
  const json_t *tunings = json_object_get(m, "tunings");
  size_t i, j;

  printf("fingerprint   %s\n", spmvctl_str(m, "fingerprint"));
  printf("matrix        %lld x %lld, %lld nonzeros\n", integer(m, "rows"),
         integer(m, "cols"), integer(m, "nnz"));
  if (json_is_object(p)) {
    printf("row length    min %lld, max %lld, mean %.4g, sigma %.4g (cv %.4g)\n",
           integer(p, "rl_min"), integer(p, "rl_max"), spmvctl_num(p, "rl_mean"),
           spmvctl_num(p, "rl_sigma"), spmvctl_num(p, "rl_cv"));
    printf("empty rows    %lld; ELL fill %.4g; HYB K %lld; %lld diagonals, DIA fill %.4g\n",
           integer(p, "empty_rows"), spmvctl_num(p, "ell_fill"), integer(p, "hyb_k"),
           integer(p, "ndiags"), spmvctl_num(p, "dia_fill"));
  }
  for (i = 0; i < json_array_size(tunings); i++) {
    const json_t *t = json_array_get(tunings, i);
    const json_t *cfg = json_object_get(t, "config");
    const json_t *trials = json_object_get(t, "trials");
    const char *text = json_is_object(cfg) ? spmvctl_str(cfg, "text") : spmvctl_str(t, "config");
    char created[32], used[32];

    printf("\ntuning %lld: %s on %s\n", integer(t, "id"), spmvctl_str(t, "dtype"),
           spmvctl_str(t, "device_key"));
    printf("  software    %s\n", spmvctl_str(t, "software_key"));
    const char *bad = json_string_value(json_object_get(t, "corrupt"));

    printf("  decision    %s%s\n", text,
           integer(t, "quarantined") ? " (quarantined)" : "");
    if (bad)
      printf("  corrupt     %s: lookups miss it, a load retunes it\n", bad);
    printf("  time        %.3f us per product, %.2f GFLOP/s, %.2f GB/s\n",
           spmvctl_num(t, "time_us"), spmvctl_num(t, "gflops"), spmvctl_num(t, "gbps"));
    printf("  strategy    %s, cost %.1f SpMV-equivalents\n", spmvctl_str(t, "strategy"),
           spmvctl_num(t, "cost_spmv"));
    printf("  created     %s; %lld hits, last used %s\n",
           spmvctl_time(integer(t, "created"), created, sizeof created),
           integer(t, "hits"), spmvctl_time(integer(t, "last_used"), used, sizeof used));
    if (json_array_size(trials) == 0)
      continue;
    printf("  %-32s %11s %11s %6s %6s  %s\n", "TRIAL", "TIME_US", "BEST_US",
           "ROUNDS", "RUNS", "STATUS");
    for (j = 0; j < json_array_size(trials); j++) {
      const json_t *tr = json_array_get(trials, j);
      const char *msg = json_string_value(json_object_get(tr, "message"));

      printf("  %-32s %11.3f %11.3f %6lld %6lld  %s%s%s\n", spmvctl_str(tr, "config"),
             spmvctl_num(tr, "time_us"), spmvctl_num(tr, "best_us"), integer(tr, "rounds"),
             integer(tr, "runs"), spmvctl_str(tr, "status"),
             msg != NULL && *msg ? ": " : "", msg != NULL ? msg : "");
    }
  }
}

/* spmvctl show FINGERPRINT: one cached matrix. */
int spmvctl_show(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmvd_cache *cache = NULL;
  struct spmv_error err;
  json_t *m = NULL;
  int rc, status;

  status = spmvctl_open_cache(ctl, &cache);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  rc = spmvd_cache_show(cache, argv[0], &m, &err);
  if (rc < 0)
    status = spmvctl_fail(ctl, spmvctl_exit_status(rc), "%s", err.msg);
  else
    status = spmvctl_output(ctl, m, print_show);
  json_decref(m);
  spmvd_cache_close(cache);
  return status;
}

/* spmvctl export [FINGERPRINT|all]: cached tunings as JSON. */
int spmvctl_export(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmvd_cache *cache = NULL;
  struct spmv_error err;
  json_t *doc = NULL;
  int rc, status;

  status = spmvctl_open_cache(ctl, &cache);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  rc = spmvd_cache_export(cache, argc > 0 ? argv[0] : NULL, &doc, &err);
  if (rc < 0) {
    status = spmvctl_fail(ctl, spmvctl_exit_status(rc), "%s", err.msg);
  } else if (ctl->output != NULL && strcmp(ctl->output, "-") != 0) {
    if (json_dump_file(doc, ctl->output, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) < 0)
      status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "cannot write %s",
                            ctl->output);
    else if (!ctl->quiet)
      fprintf(stderr, "%s: exported %zu tunings to %s\n", ctl->prog,
              json_array_size(json_object_get(doc, "tunings")), ctl->output);
  } else {
    status = spmvctl_print_json(doc);
  }
  json_decref(doc);
  spmvd_cache_close(cache);
  return status;
}
