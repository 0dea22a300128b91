/* spmvctl_model.c: the tuner's two models from the command line: spmvctl
 * model FILE (the ELLR-T model, no daemon) and spmvctl predict FILE (the
 * statistical predictor, with the fits spmvd's calibration stored). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "spmvctl.h"
#include "spmvd_cache.h"
#include "spmvd_model.h"
#include "spmvd_predict.h"

/* Reads the Matrix Market file path into *A (new, owned by the caller);
 * returns an exit status after saying what is wrong. */
static int read_matrix(const struct spmvctl *ctl, const char *path,
                       struct spmv_csr **A)
{
  struct spmv_error err;
  int status = spmvctl_check_file(ctl, path);

  if (status != SPMVCTL_EXIT_OK)
    return status;
  spmv_error_clear(&err);
  if (spmv_mmio_read(path, A, NULL, &err) < 0)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "%s", err.msg);
  return SPMVCTL_EXIT_OK;
}

/* spmvctl model FILE: the ELLR-T model's whole M(BS, T) grid and its pick
 * for the GPU of the options, computed here. */
int spmvctl_model(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmvd_model_grid *grid = NULL;
  struct spmvd_model_gpu g;
  struct spmv_error err;
  struct spmv_csr *A = NULL;
  json_t *r = NULL;
  int status;

  (void)argc;
  g.sms = ctl->gpu.sms;
  g.warp_size = ctl->gpu.warp_size;
  g.max_threads_per_sm = ctl->gpu.max_threads_per_sm;
  g.max_blocks_per_sm = ctl->gpu.max_blocks_per_sm;
  g.max_threads_per_block = ctl->gpu.max_threads_per_block;
  spmv_error_clear(&err);
  if (spmvd_model_gpu_check(&g, &err) < 0)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_USAGE, "%s", err.msg);
  status = read_matrix(ctl, argv[0], &A);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  grid = malloc(sizeof *grid);
  if (grid == NULL) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory");
    goto out;
  }
  if (spmvd_model_grid_compute(A, &g, grid, &err) < 0) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "%s: %s", argv[0], err.msg);
    goto out;
  }
  if (!ctl->json) {
    printf("file  %s\n", argv[0]);
    spmvd_model_report_print(grid, stdout);
    goto out;
  }
  r = spmvd_model_report_json(grid);
  if (r != NULL && json_object_set_new(r, "file", json_string(argv[0])) < 0) {
    json_decref(r);
    r = NULL;
  }
  if (r == NULL)
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory");
  else
    status = spmvctl_print_json(r);
out:
  json_decref(r);
  free(grid);
  spmv_csr_free(A);
  return status;
}

/* What predict needs of the running daemon: its device and cache. */
struct daemon_device {
  struct spmvd_device_info dev;  /* name, backend and the two keys */
  char db[4096];                 /* the cache spmvd uses */
};

/* Asks spmvd (status, on c) for its device and cache; returns an exit
 * status. */
static int daemon_device(const struct spmvctl *ctl, struct spmv_client *c,
                         struct daemon_device *d)
{
  char *text = NULL;
  json_t *s = NULL;
  int rc, status = SPMVCTL_EXIT_OK;

  memset(d, 0, sizeof *d);
  rc = spmv_status_json(c, &text);
  if (rc < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
    goto out;
  }
  s = spmvctl_parse_json(ctl, text);
  if (s == NULL) {
    status = SPMVCTL_EXIT_ERROR;
    goto out;
  }
  snprintf(d->dev.name, sizeof d->dev.name, "%s", spmvctl_str(s, "device"));
  snprintf(d->dev.backend, sizeof d->dev.backend, "%s", spmvctl_str(s, "backend"));
  snprintf(d->dev.device_key, sizeof d->dev.device_key, "%s",
           spmvctl_str(s, "device_key"));
  snprintf(d->dev.software_key, sizeof d->dev.software_key, "%s",
           spmvctl_str(s, "software_key"));
  snprintf(d->db, sizeof d->db, "%s", spmvctl_str(s, "cache_path"));
out:
  json_decref(s);
  free(text);
  return status;
}

/*
 * --measure: loads the file into spmvd and has it time each prediction's
 * configuration as the calibration timed its points; each prediction gains
 * measured_us and error (|predicted - measured| / measured), or
 * measure_error when that configuration could not run, and r gains
 * mean_error over those measured.  Returns an exit status.
 */
static int measure(struct spmvctl *ctl, struct spmv_client *c,
                   const char *path, json_t *r)
{
  json_t *preds = json_object_get(r, "predictions"), *b = NULL, *trials;
  const char *configs[SPMV_BENCH_MAX_CONFIGS];
  struct spmv_matrix *m = NULL;
  char *text = NULL;
  size_t i, n = json_array_size(preds), nerr = 0;
  double sum = 0;
  int rc, status;

  if (n > SPMV_BENCH_MAX_CONFIGS)
    n = SPMV_BENCH_MAX_CONFIGS;
  for (i = 0; i < n; i++)
    configs[i] = spmvctl_str(json_array_get(preds, i), "config");
  status = spmvctl_load_file(ctl, c, path, NULL, &m);
  if (status != SPMVCTL_EXIT_OK)
    goto out;
  rc = spmv_bench_configs_json(m, configs, n, 3, spmvctl_progress, ctl, &text);
  if (rc < 0) {
    status = spmvctl_call_failed(ctl, c, rc);
    goto out;
  }
  if ((b = spmvctl_parse_json(ctl, text)) == NULL) {
    status = SPMVCTL_EXIT_ERROR;
    goto out;
  }
  trials = json_object_get(b, "trials");
  if (json_array_size(trials) != n) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR,
                          "spmvd timed %zu of the %zu configurations asked",
                          json_array_size(trials), n);
    goto out;
  }
  for (i = 0; i < n; i++) {
    json_t *p = json_array_get(preds, i);
    const json_t *t = json_array_get(trials, i);
    double us = spmvctl_num(t, "time_us"), pred = spmvctl_num(p, "time_us");

    if (strcmp(spmvctl_str(t, "status"), "ok") != 0 || !(us > 0)) {
      json_object_set_new(p, "measure_error",
                          json_string(spmvctl_str(json_object_get(t, "error"), "message")));
      continue;
    }
    json_object_set_new(p, "measured_us", json_real(us));
    json_object_set_new(p, "error", json_real(fabs(pred - us) / us));
    sum += fabs(pred - us) / us;
    nerr++;
  }
  if (nerr > 0)
    json_object_set_new(r, "mean_error", json_real(sum / (double)nerr));
out:
  json_decref(b);
  free(text);
  spmv_matrix_free(m);
  return status;
}

/* Prints predict's report as a table, fastest first. */
static void print_predict(const json_t *r)
{
  const json_t *preds = json_object_get(r, "predictions");
  const json_t *best = json_object_get(r, "best");
  int measured = json_object_get(r, "mean_error") != NULL;
  size_t i;

  printf("file         %s\n", spmvctl_str(r, "file"));
  printf("matrix       %.0f rows, %.0f nonzeros, %.4g per row\n",
         spmvctl_num(r, "rows"), spmvctl_num(r, "nnz"), spmvctl_num(r, "p0"));
  printf("device       %s (calibrated for %s)\n", spmvctl_str(r, "device"),
         spmvctl_str(r, "dtype"));
  printf("\n%-14s %-36s %-6s %14s %10s %8s %6s", "FORMAT", "CONFIGURATION",
         "MODEL", "PREDICTED_US", "PAPER_US", "FIT_ERR", "I0");
  if (measured)
    printf(" %12s %7s", "MEASURED_US", "ERROR");
  putchar('\n');
  for (i = 0; i < json_array_size(preds); i++) {
    const json_t *p = json_array_get(preds, i);
    int work = strcmp(spmvctl_str(p, "model"), "work") == 0;

    printf("%-14s %-36s %-6s %14.3f %10.3f %7.1f%% %6.2g",
           spmvctl_str(p, "format"), spmvctl_str(p, "config"),
           spmvctl_str(p, "model"), spmvctl_num(p, "time_us"),
           spmvctl_num(p, "paper_us"),
           100.0 * spmvctl_num(p, work ? "work_err" : "err_mean"),
           spmvctl_num(p, "i0"));
    if (measured && json_object_get(p, "measured_us"))
      printf(" %12.3f %6.1f%%", spmvctl_num(p, "measured_us"),
             100.0 * spmvctl_num(p, "error"));
    else if (measured)
      printf(" %12s %7s  (%s)", "-", "-", spmvctl_str(p, "measure_error"));
    putchar('\n');
  }
  printf("\nbest         %s (%.3f us predicted)\n", spmvctl_str(best, "config"),
         spmvctl_num(best, "time_us"));
  if (measured)
    printf("mean error   %.1f %% of the measured times (timed in spmvd as its "
           "calibration timed its points)\n", 100.0 * spmvctl_num(r, "mean_error"));
}

/* spmvctl predict FILE: each calibrated format's predicted time for FILE
 * on spmvd's device, read from spmvd's cache (read-only). */
int spmvctl_predict(struct spmvctl *ctl, int argc, char **argv)
{
  struct daemon_device d;
  struct spmvd_predictor pred;
  struct spmvd_cache *cache = NULL;
  struct spmv_profile prof;
  struct spmvd_pfeat feat;
  struct spmv_error err;
  struct spmv_csr *A = NULL;
  struct spmv_client *c = NULL;
  struct spmvctl at = *ctl;
  const char *dt = spmv_dtype_name(ctl->dtype);
  json_t *r = NULL, *preds;
  int rc, status;

  (void)argc;
  /* One connection serves the status query and --measure. */
  status = spmvctl_check_file(ctl, argv[0]);
  if (status == SPMVCTL_EXIT_OK)
    status = spmvctl_connect(ctl, &c);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  if ((status = daemon_device(ctl, c, &d)) != SPMVCTL_EXIT_OK)
    goto out;
  if (at.db == NULL)
    at.db = d.db;
  status = spmvctl_open_cache(&at, &cache);
  if (status != SPMVCTL_EXIT_OK)
    goto out;
  spmv_error_clear(&err);
  rc = spmvd_predict_load(cache, &d.dev, ctl->dtype, &pred, &err);
  if (rc < 0) {
    status = spmvctl_fail(ctl, spmvctl_exit_status(rc), "%s", err.msg);
    goto out;
  }
  if (rc == 0) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_NOTFOUND,
                          "spmvd has no %s calibration for %s: run `spmvctl "
                          "calibrate%s`", dt, d.dev.name,
                          ctl->dtype == SPMV_F32 ? " --dtype f32" : "");
    goto out;
  }
  status = read_matrix(ctl, argv[0], &A);
  if (status != SPMVCTL_EXIT_OK)
    goto out;
  if (spmv_profile_compute(A, &prof, &err) < 0) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "%s: %s", argv[0], err.msg);
    goto out;
  }
  spmvd_predict_features(A, &prof, ctl->dtype, &feat);
  r = spmvd_predict_report_json(&pred, &prof, &feat);
  preds = json_object_get(r, "predictions");
  if (r != NULL && json_array_size(preds) == 0) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR,
                          "no calibrated format applies to %s", argv[0]);
    goto out;
  }
  if (r == NULL || json_object_set_new(r, "file", json_string(argv[0])) < 0 ||
      json_object_set_new(r, "device", json_string(d.dev.name)) < 0 ||
      json_object_set_new(r, "device_key", json_string(d.dev.device_key)) < 0 ||
      json_object_set_new(r, "dtype", json_string(dt)) < 0 ||
      json_object_set(r, "best", json_array_get(preds, 0)) < 0) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory");
    goto out;
  }
  /* The cache is not needed past the fits: closed before a measure that
   * may take a while. */
  spmvd_cache_close(cache);
  cache = NULL;
  if (ctl->measure &&
      (status = measure(ctl, c, argv[0], r)) != SPMVCTL_EXIT_OK)
    goto out;
  status = spmvctl_output(ctl, r, print_predict);
out:
  json_decref(r);
  spmv_csr_free(A);
  spmvd_cache_close(cache);
  spmv_disconnect(c);
  return status;
}
