/* spmvctl_daemon.c: the commands that ask spmvd: status, tune, bench,
 * forget, import, calibrate. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvctl.h"

/* Prints the status reply as a table. */
static void print_status(const json_t *s)
{
  const json_t *workers = json_object_get(s, "workers");
  double up = spmvctl_num(s, "uptime_s");
  size_t i;

  printf("server        %s (protocol %lld), pid %lld, up %.0fh %02.0fm %02.0fs\n",
         spmvctl_str(s, "server"), (long long)json_integer_value(json_object_get(s, "version")),
         (long long)json_integer_value(json_object_get(s, "pid")),
         (double)(long long)(up / 3600), (double)((long long)(up / 60) % 60),
         (double)((long long)up % 60));
  printf("backend       %s, device %s\n", spmvctl_str(s, "backend"),
         spmvctl_str(s, "device"));
  printf("device key    %s\n", spmvctl_str(s, "device_key"));
  printf("software key  %s\n", spmvctl_str(s, "software_key"));
  printf("socket        %s\n", spmvctl_str(s, "socket_path"));
  printf("cache         %s (%s)\n", spmvctl_str(s, "cache_path"),
         json_is_string(json_object_get(s, "cache_state"))
             ? spmvctl_str(s, "cache_state") : "read-write");
  printf("connections   %lld\n", (long long)json_integer_value(json_object_get(s, "connections")));
  printf("matrices      %lld\n", (long long)json_integer_value(json_object_get(s, "matrices")));
  if (json_object_get(s, "vectors"))
    printf("vectors       %lld (%lld bytes)\n",
           (long long)json_integer_value(json_object_get(s, "vectors")),
           (long long)json_integer_value(json_object_get(s, "vector_bytes")));
  if (strcmp(spmvctl_str(s, "exclude_formats"), "-") != 0)
    printf("excluded      %s (exclude_formats)\n", spmvctl_str(s, "exclude_formats"));
  if (json_array_size(workers) == 0)
    return;
  printf("\n%-3s %-24.24s %8s %8s %8s %8s %10s  %s\n", "W", "DEVICE", "PID",
         "MATRICES", "RESTARTS", "TIMEOUTS", "FREE MiB", "STATE");
  for (i = 0; i < json_array_size(workers); i++) {
    const json_t *w = json_array_get(workers, i);
    const json_t *f = json_object_get(w, "device_free_bytes");
    char free_mib[24] = "-";

    if (json_is_integer(f))
      snprintf(free_mib, sizeof free_mib, "%lld",
               (long long)(json_integer_value(f) >> 20));
    printf("%-3lld %-24.24s %8lld %8lld %8lld %8lld %10s  %s\n",
           (long long)json_integer_value(json_object_get(w, "worker")),
           spmvctl_str(w, "device"),
           (long long)json_integer_value(json_object_get(w, "pid")),
           (long long)json_integer_value(json_object_get(w, "matrices")),
           (long long)json_integer_value(json_object_get(w, "restarts")),
           (long long)json_integer_value(json_object_get(w, "timeouts")),
           free_mib, spmvctl_str(w, "state"));
  }
}

/*
 * Connects, runs call (which makes one request and fills *text with its
 * JSON reply, a new string) and prints the reply as JSON or with table.
 * call returns 0, a library code (reported here), or an exit status above
 * 0 after reporting a failure of its own.
 */
static int json_command(struct spmvctl *ctl,
                        int (*call)(struct spmvctl *ctl, struct spmv_client *c,
                                    char **text),
                        void (*table)(const json_t *obj))
{
  struct spmv_client *c = NULL;
  char *text = NULL;
  json_t *r = NULL;
  int rc, status;

  status = spmvctl_connect(ctl, &c);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  rc = call(ctl, c, &text);
  if (rc != 0) {
    status = rc > 0 ? rc : spmvctl_call_failed(ctl, c, rc);
    goto out;
  }
  r = spmvctl_parse_json(ctl, text);
  status = spmvctl_output(ctl, r, table);
out:
  json_decref(r);
  free(text);
  spmv_disconnect(c);
  return status;
}

/* status's request. */
static int status_call(struct spmvctl *ctl, struct spmv_client *c,
                       char **text)
{
  (void)ctl;
  return spmv_status_json(c, text);
}

/* spmvctl status: the daemon's state; it never starts one, whose state
 * would say nothing of the daemon asked about. */
int spmvctl_status(struct spmvctl *ctl, int argc, char **argv)
{
  ctl->autostart = 0;
  return json_command(ctl, status_call, print_status);
}

/* Loads FILE into spmvd with the run's options; *m is new on success. */
int spmvctl_load_file(struct spmvctl *ctl, struct spmv_client *c,
                      const char *path, const char *strategy,
                      struct spmv_matrix **m)
{
  struct spmv_load_options o;
  int rc;

  spmv_load_options_init(&o);
  o.strategy = strategy;
  o.progress = spmvctl_progress;
  o.progress_arg = ctl;
  o.split = ctl->split;
  rc = spmv_load_mtx(c, path, ctl->dtype, &o, m);
  if (rc < 0)
    return spmvctl_call_failed(ctl, c, rc);
  return SPMVCTL_EXIT_OK;
}

/* A load's wall time as its caller waited for it: the client's whole call
 * where the decision has it (a load), else the daemon's total (a tune). */
static double load_ms(const json_t *steps)
{
  return json_object_get(steps, "client_total_ms")
             ? spmvctl_num(steps, "client_total_ms")
             : spmvctl_num(steps, "total_ms");
}

/* Builds tune's output: the decision plus the file and the matrix. */
static json_t *tune_result(const char *path, const json_t *decision,
                           const struct spmv_info *info)
{
  const json_t *cfg = json_object_get(decision, "config");
  json_t *r = json_pack("{s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:s,"
                        " s:{s:I, s:I, s:I, s:I}, s:s, s:s, s:f, s:f, s:f, s:f}",
                        "file", path, "rows", (json_int_t)info->rows,
                        "cols", (json_int_t)info->cols,
                        "nnz", (json_int_t)info->nnz,
                        "dtype", spmv_dtype_name(info->dtype),
                        "fingerprint", spmvctl_str(decision, "fingerprint"),
                        "format", spmvctl_str(cfg, "format"), "config", spmvctl_str(cfg, "text"),
                        "parameters",
                        "bs", json_integer_value(json_object_get(cfg, "bs")),
                        "tpr", json_integer_value(json_object_get(cfg, "tpr")),
                        "param", json_integer_value(json_object_get(cfg, "param")),
                        "param2", json_integer_value(json_object_get(cfg, "param2")),
                        "source", spmvctl_str(decision, "source"),
                        "strategy", spmvctl_str(decision, "strategy"),
                        "time_us", spmvctl_num(decision, "time_us"),
                        "gflops", spmvctl_num(decision, "gflops"),
                        "gbps", spmvctl_num(decision, "gbps"),
                        "tuning_cost_spmv", spmvctl_num(decision, "tuning_cost_spmv"));

  if (r != NULL && json_is_string(json_object_get(decision, "reason")))
    json_object_set(r, "reason", json_object_get(decision, "reason"));
  json_t *steps = json_object_get(decision, "steps");
  if (r != NULL && json_is_object(steps)) {
    json_object_set(r, "steps", steps);
    /* What the load cost, from its request to the decision, in products
     * of the kernel it chose: the unit a tune pays back in. */
    double t = spmvctl_num(decision, "time_us");
    if (t > 0)
      json_object_set_new(r, "load_cost_spmv",
                          json_real(load_ms(steps) * 1e3 / t));
  }
  return r;
}

/* Prints the steps of the load or tune (milliseconds each), "load" first
 * with its wall time, in the order they were taken; "daemon" is the
 * daemon's part, from the request's header to the reply. */
static void print_steps(const json_t *steps)
{
  static const char *const order[] = {
    "client_write", "receive", "copy", "validate", "fingerprint", "lookup",
    "tune", "profile", "race", "resident", "store", "convert", "check",
    "total", NULL};
  char key[32];

  if (!json_is_object(steps))
    return;
  printf("load         %.3f ms:", load_ms(steps));
  for (const char *const *k = order; *k; k++) {
    snprintf(key, sizeof key, "%s_ms", *k);
    if (json_object_get(steps, key))
      printf(" %s %.3f", strcmp(*k, "total") ? *k : "daemon",
             spmvctl_num(steps, key));
  }
  printf("\n");
}

/* Prints tune's output as a table. */
static void print_tune(const json_t *r)
{
  printf("file         %s\n", spmvctl_str(r, "file"));
  printf("matrix       %lld x %lld, %lld nonzeros, %s\n",
         (long long)json_integer_value(json_object_get(r, "rows")),
         (long long)json_integer_value(json_object_get(r, "cols")),
         (long long)json_integer_value(json_object_get(r, "nnz")), spmvctl_str(r, "dtype"));
  printf("fingerprint  %s\n", spmvctl_str(r, "fingerprint"));
  printf("decision     %s\n", spmvctl_str(r, "config"));
  printf("source       %s (strategy %s)%s%s\n", spmvctl_str(r, "source"),
         spmvctl_str(r, "strategy"), json_object_get(r, "reason") ? ": " : "",
         json_object_get(r, "reason") ? spmvctl_str(r, "reason") : "");
  printf("time         %.3f us per product, %.2f GFLOP/s, %.2f GB/s\n",
         spmvctl_num(r, "time_us"), spmvctl_num(r, "gflops"), spmvctl_num(r, "gbps"));
  if (strcmp(spmvctl_str(r, "source"), "tuned") == 0)
    printf("tuning cost  %.1f SpMV-equivalents\n", spmvctl_num(r, "tuning_cost_spmv"));
  print_steps(json_object_get(r, "steps"));
  if (json_object_get(r, "load_cost_spmv"))
    printf("load cost    %.0f products of the chosen kernel\n",
           spmvctl_num(r, "load_cost_spmv"));
}

/* spmvctl tune FILE: load (tuning unless cached, or always with --force). */
int spmvctl_tune(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  struct spmv_info info;
  char *text = NULL;
  json_t *decision = NULL, *r = NULL;
  int rc, status;

  status = spmvctl_check_file(ctl, argv[0]);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  status = spmvctl_connect(ctl, &c);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  status = spmvctl_load_file(ctl, c, argv[0], ctl->strategy, &m);
  if (status != SPMVCTL_EXIT_OK)
    goto out;
  /* --force: a decision the load found in the cache is tuned again now (a
   * fresh one was just tuned with this strategy). */
  rc = spmv_matrix_decision_json(m, &text);
  if (rc == 0 && (decision = spmvctl_parse_json(ctl, text)) == NULL) {
    status = SPMVCTL_EXIT_ERROR;
    goto out;
  }
  if (rc == 0 && ctl->force && strcmp(spmvctl_str(decision, "source"), "cache") == 0) {
    json_decref(decision);
    decision = NULL;
    free(text);
    text = NULL;
    rc = spmv_tune(m, ctl->strategy, spmvctl_progress, ctl);
    if (rc == 0)
      rc = spmv_matrix_decision_json(m, &text);
    if (rc == 0 && (decision = spmvctl_parse_json(ctl, text)) == NULL) {
      status = SPMVCTL_EXIT_ERROR;
      goto out;
    }
  }
  if (rc == 0)
    rc = spmv_info(m, &info);
  if (rc < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
    goto out;
  }
  r = decision != NULL ? tune_result(argv[0], decision, &info) : NULL;
  status = spmvctl_output(ctl, r, print_tune);
out:
  json_decref(r);
  json_decref(decision);
  free(text);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  return status;
}

/* Prints bench's trials as a table, fastest first. */
static void print_bench(const json_t *b)
{
  const json_t *trials = json_object_get(b, "trials");
  double best = 0;
  size_t i;

  printf("%s: %zu candidates\n\n", spmvctl_str(b, "file"), json_array_size(trials));
  printf("%4s  %-32s %12s %10s %8s\n", "RANK", "CONFIGURATION", "TIME_US",
         "GFLOP/S", "VS_BEST");
  for (i = 0; i < json_array_size(trials); i++) {
    const json_t *t = json_array_get(trials, i);
    double us = spmvctl_num(t, "time_us");

    if (i == 0)
      best = us;
    printf("%4zu  %-32s %12.3f %10.2f %7.2fx\n", i + 1, spmvctl_str(t, "config"), us,
           spmvctl_num(t, "gflops"), best > 0 ? us / best : 0.0);
  }
}

/* spmvctl bench FILE: every candidate's time through spmvd. */
int spmvctl_bench(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  char *text = NULL;
  json_t *b = NULL;
  int rc, status;

  status = spmvctl_check_file(ctl, argv[0]);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  status = spmvctl_connect(ctl, &c);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  status = spmvctl_load_file(ctl, c, argv[0], NULL, &m);
  if (status != SPMVCTL_EXIT_OK)
    goto out;
  rc = spmv_bench_json(m, spmvctl_progress, ctl, &text);
  if (rc < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
    goto out;
  }
  b = spmvctl_parse_json(ctl, text);
  if (b != NULL && json_object_set_new(b, "file", json_string(argv[0])) < 0) {
    json_decref(b);
    b = NULL;
  }
  status = spmvctl_output(ctl, b, print_bench);
out:
  json_decref(b);
  free(text);
  spmv_matrix_free(m);
  spmv_disconnect(c);
  return status;
}

/* spmvctl forget FINGERPRINT|all. */
int spmvctl_forget(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmv_client *c = NULL;
  int rc, status, n = 0;

  status = spmvctl_connect(ctl, &c);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  rc = spmv_forget(c, argv[0], &n);
  if (rc < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
  } else if (ctl->json) {
    json_t *r = json_pack("{s:i}", "forgotten", n);

    status = spmvctl_print_json(r);
    json_decref(r);
  } else {
    printf("forgot %d tuning%s\n", n, n == 1 ? "" : "s");
  }
  spmv_disconnect(c);
  return status;
}

/* stop: the daemon finishes its requests and exits; spmvctl returns once
 * it has closed the connection.  It never starts a daemon to stop it. */
int spmvctl_stop(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmvctl quiet = *ctl;
  struct spmv_client *c = NULL;
  int rc, status;

  (void)argc;
  (void)argv;
  quiet.autostart = 0;
  status = spmvctl_connect(&quiet, &c);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  rc = spmv_shutdown(c, 1);
  if (rc < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
  } else if (ctl->json) {
    json_t *r = json_pack("{s:b}", "stopped", 1);

    status = spmvctl_print_json(r);
    json_decref(r);
  } else if (!ctl->quiet) {
    printf("spmvd on %s has finished its requests and stopped\n",
           ctl->socket ? ctl->socket : "the default socket");
  }
  spmv_disconnect(c);
  return status;
}

/* Reads a whole file ("-": stdin) into a new NUL-terminated string. */
static char *read_text(const char *path, struct spmvctl *ctl, int *status)
{
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  size_t len = 0, cap = 0;
  char *buf = NULL;

  if (f == NULL) {
    *status = spmvctl_fail(ctl, errno == ENOENT ? SPMVCTL_EXIT_NOTFOUND
                                                : SPMVCTL_EXIT_ERROR,
                           "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  for (;;) {
    size_t n;

    if (cap - len < 65536) {
      char *nb = realloc(buf, cap + 65536 + 1);

      if (nb == NULL) {
        *status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory reading %s", path);
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap += 65536;
    }
    n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) {
      if (ferror(f)) {
        *status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "cannot read %s", path);
        free(buf);
        buf = NULL;
      } else {
        buf[len] = '\0';
      }
      break;
    }
  }
  if (f != stdin)
    fclose(f);
  return buf;
}

/* spmvctl import FILE|-: tunings written by export, into spmvd's cache. */
int spmvctl_import(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmv_client *c = NULL;
  int rc, status = SPMVCTL_EXIT_OK, imported = 0, skipped = 0;
  char *text;

  text = read_text(argv[0], ctl, &status);
  if (text == NULL)
    return status;
  status = spmvctl_connect(ctl, &c);
  if (status != SPMVCTL_EXIT_OK)
    goto out;
  rc = spmv_import_json(c, text, &imported, &skipped);
  if (rc < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
  } else if (ctl->json) {
    json_t *r = json_pack("{s:i, s:i}", "imported", imported, "skipped", skipped);

    status = spmvctl_print_json(r);
    json_decref(r);
  } else {
    printf("imported %d tuning%s, skipped %d (another device or software key)\n",
           imported, imported == 1 ? "" : "s", skipped);
  }
out:
  spmv_disconnect(c);
  free(text);
  return status;
}

/* Prints calibrate's reply as a table: the run, then each format's fit. */
static void print_calibrate(const json_t *r)
{
  const json_t *fits = json_object_get(r, "fits");
  const json_t *formats = json_object_get(r, "formats");
  size_t i;

  printf("device       %s (%s backend)\n", spmvctl_str(r, "device"),
         spmvctl_str(r, "backend"));
  printf("device key   %s\n", spmvctl_str(r, "device_key"));
  printf("value type   %s\n", spmvctl_str(r, "dtype"));
  printf("time         %.1f s of at most %.0f s (probe %.2f s)\n",
         spmvctl_num(r, "seconds"), spmvctl_num(r, "max_seconds"), spmvctl_num(r, "probe_seconds"));
  printf("plan         %.0f of %.0f points timed%s; %.0f matrices, %.0f nonzeros\n",
         spmvctl_num(r, "timed"), spmvctl_num(r, "planned_points"),
         json_is_true(json_object_get(r, "trimmed")) ? " (trimmed to the time)" : "",
         spmvctl_num(r, "matrices"), spmvctl_num(r, "nnz"));
  printf("\n%-14s %-30s %-7s %7s %9s %11s %9s\n", "FORMAT", "CONFIGURATION",
         "FIT", "POINTS", "FIT_ERR", "WORK_POINTS", "WORK_ERR");
  for (i = 0; i < json_array_size(formats); i++) {
    const char *name = json_string_value(json_array_get(formats, i));
    const json_t *f = json_object_get(fits, name != NULL ? name : "");

    printf("%-14s %-30s %-7s %7.0f %8.1f%% %11.0f %8.1f%%\n",
           name != NULL ? name : "-", spmvctl_str(f, "config"),
           spmvctl_str(f, "kind"), spmvctl_num(f, "npoints"),
           100.0 * spmvctl_num(f, "err_mean"), spmvctl_num(f, "work_npoints"),
           100.0 * spmvctl_num(f, "work_err"));
  }
  printf("\nstored in spmvd's cache: the predict strategy and `spmvctl predict` use them\n");
}

/* spmvctl calibrate --points: the table being written. */
struct points_out {
  struct spmvctl *ctl;
  FILE *fp;
  long long written;   /* rows written */
  long long total;     /* the points spmvd said it sends */
  int bad;             /* a malformed event or a failed write */
};

/* The progress callback of calibrate --points (its arg is the table). */
static void points_progress(const struct spmv_progress *p, void *arg)
{
  struct points_out *po = arg;

  spmvctl_progress(p, po->ctl);
}

/* Writes one table value: integers as they are, reals to 15 digits, the
 * configuration's text as it is. */
static int put_value(FILE *fp, const json_t *v)
{
  if (json_is_integer(v))
    return fprintf(fp, "%lld", (long long)json_integer_value(v));
  if (json_is_real(v))
    return fprintf(fp, "%.15g", json_real_value(v));
  if (json_is_string(v) && strpbrk(json_string_value(v), "\t\n") == NULL)
    return fprintf(fp, "%s", json_string_value(v));
  return -1;
}

/* One points event: the header before the first, then a line a point:
 * the value type, then its values in the event's column order. */
static void points_event(const char *text, void *arg)
{
  struct points_out *po = arg;
  json_t *ev = json_loads(text, 0, NULL), *cols, *rows, *row, *v;
  const char *dt = json_string_value(json_object_get(ev, "dtype"));
  size_t i, j;

  cols = json_object_get(ev, "columns");
  rows = json_object_get(ev, "points");
  if (po->bad || !dt || json_array_size(cols) == 0 || !json_is_array(rows) ||
      json_integer_value(json_object_get(ev, "first")) != po->written) {
    po->bad = 1;
    json_decref(ev);
    return;
  }
  po->total = json_integer_value(json_object_get(ev, "total"));
  if (po->written == 0) {
    fprintf(po->fp, "# spmvd calibration points (spmvctl calibrate "
                    "--points), device %s\n# l2_bytes: %.0f\n# threads: "
                    "%.0f\n# sms: %.0f\n# dtype", spmvctl_str(ev, "device"),
            spmvctl_num(ev, "l2_bytes"), spmvctl_num(ev, "threads"),
            spmvctl_num(ev, "sms"));
    json_array_foreach(cols, i, v)
      fprintf(po->fp, "\t%s", json_string_value(v));
    fputc('\n', po->fp);
  }
  json_array_foreach(rows, i, row) {
    if (json_array_size(row) != json_array_size(cols)) {
      po->bad = 1;
      break;
    }
    fputs(dt, po->fp);
    json_array_foreach(row, j, v) {
      fputc('\t', po->fp);
      if (put_value(po->fp, v) < 0)
        po->bad = 1;
    }
    fputc('\n', po->fp);
    po->written++;
  }
  json_decref(ev);
}

/* calibrate's request, with progress on stderr (and the points into
 * ctl->points' table when asked for; a failed calibration leaves no table
 * behind). */
static int calibrate_call(struct spmvctl *ctl, struct spmv_client *c,
                          char **text)
{
  struct points_out po = { ctl, NULL, 0, 0, 0 };
  int rc, werr;

  if (ctl->points == NULL)
    return spmv_calibrate(c, ctl->dtype, ctl->max_seconds, spmvctl_progress,
                          ctl, text);
  if ((po.fp = fopen(ctl->points, "w")) == NULL)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "cannot write %s: %s",
                        ctl->points, strerror(errno));
  rc = spmv_calibrate_points(c, ctl->dtype, ctl->max_seconds, points_progress,
                             points_event, &po, text);
  errno = 0;
  werr = ferror(po.fp) | (fclose(po.fp) != 0);
  if (rc == 0 && werr)
    rc = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "cannot write %s%s%s",
                      ctl->points, errno ? ": " : "",
                      errno ? strerror(errno) : "");
  else if (rc == 0 && po.total == 0 && !po.bad)
    rc = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR,
                      "%s: spmvd sent no points (a daemon older than "
                      "calibrate's points?); the fits are stored", ctl->points);
  else if (rc == 0 && (po.bad || po.written != po.total))
    rc = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR,
                      "%s: spmvd's points were incomplete or malformed "
                      "(%lld of %lld written)", ctl->points, po.written,
                      po.total);
  if (rc != 0)
    unlink(ctl->points);
  return rc;
}

/* spmvctl calibrate: the predictor's calibration of spmvd's device. */
int spmvctl_calibrate(struct spmvctl *ctl, int argc, char **argv)
{
  return json_command(ctl, calibrate_call, print_calibrate);
}
