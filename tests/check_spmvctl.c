/* check_spmvctl.c: tests of spmvctl: command line, exit statuses, profile,
 * --json output, and every command against a private spmvd. */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>

#include "itest.h"
#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "spmvd_model.h"
#include "spmvctl_exec.h"
#include "testdata.h"

/* Parses r's stdout as one JSON object, failing the test if it is not. */
static json_t *out_json(const struct spmvctl_run *r)
{
  json_error_t jerr;
  json_t *o = json_loads(r->out, 0, &jerr);

  ck_assert_msg(o != NULL, "--json output does not parse (%s): %s", jerr.text,
                r->out);
  ck_assert(json_is_object(o));
  return o;
}

/* The path of a matrix of the test data (testdata.h). */
static const char *matrix(const char *name)
{
  static char path[4][4096];
  static int k;

  k = (k + 1) % 4;
  ck_assert_msg(testdata_path(name, path[k], sizeof path[k]) == 0, "%s: not found",
                path[k]);
  return path[k];
}

START_TEST(test_usage)
{
  struct spmvctl_run r;

  spmvctl_exec(&r, NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "Usage:"));
  spmvctl_exec(&r, "frobnicate", NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "unknown command 'frobnicate'"));
  spmvctl_exec(&r, "--bogus", "status", NULL);
  ck_assert_int_eq(r.status, 2);
  spmvctl_exec(&r, "profile", NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "usage: spmvctl profile FILE"));
  spmvctl_exec(&r, "profile", "a", "b", NULL);
  ck_assert_int_eq(r.status, 2);
  spmvctl_exec(&r, "list", "--strategy", "trial", NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "--strategy does not apply to 'list'"));
  spmvctl_exec(&r, "tune", "--dtype", "f16", "x.mtx", NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "f16"));
}
END_TEST

START_TEST(test_help_version)
{
  static const char *cmds[] = { "status", "list", "show", "profile", "tune",
                                "bench", "calibrate", "predict", "model",
                                "forget", "export", "import", "--max-seconds",
                                "--sms", "--warp-size", "--max-threads-per-sm",
                                "--max-blocks-per-sm", "--max-threads-per-block",
                                "H100/H200, 132 SMs" };
  struct spmvctl_run r;
  size_t i;

  spmvctl_exec(&r, "--help", NULL);
  ck_assert_int_eq(r.status, 0);
  for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    ck_assert_msg(strstr(r.out, cmds[i]) != NULL, "help lacks %s", cmds[i]);
  ck_assert_ptr_nonnull(strstr(r.out, "Exit status"));
  spmvctl_exec(&r, "--version", NULL);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, PACKAGE_VERSION));
}
END_TEST

START_TEST(test_profile)
{
  static const char *names[] = { "west0479.mtx", "karate.mtx", "bcsstk16.mtx" };
  size_t i;

  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    struct spmv_csr *A = NULL;
    struct spmv_profile p;
    struct spmv_fingerprint fp;
    struct spmv_error err;
    struct spmvctl_run r;
    char hex[33];
    json_t *o;

    ck_assert_int_eq(spmv_mmio_read(matrix(names[i]), &A, NULL, &err), 0);
    ck_assert_int_eq(spmv_profile_compute(A, &p, &err), 0);
    spmv_fingerprint_compute(A, &fp);
    spmv_fingerprint_hex(&fp, hex);

    spmvctl_exec(&r, "profile", "--json", matrix(names[i]), NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    o = out_json(&r);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "rows")), A->rows);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "cols")), A->cols);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "nnz")), A->nnz);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "rl_min")), p.rl_min);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "rl_max")), p.rl_max);
    ck_assert(json_real_value(json_object_get(o, "rl_mean")) == p.rl_mean);
    ck_assert(json_real_value(json_object_get(o, "rl_sigma")) == p.rl_sigma);
    ck_assert_str_eq(json_string_value(json_object_get(o, "fingerprint")), hex);
    json_decref(o);

    spmvctl_exec(&r, "profile", matrix(names[i]), NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, hex));
    ck_assert_ptr_nonnull(strstr(r.out, "row length"));
    spmv_csr_free(A);
  }
}
END_TEST

START_TEST(test_profile_errors)
{
  char path[4096];
  struct spmvctl_run r;
  int fd;

  testdata_tmp(path, sizeof path, "spmvctl-bad.XXXXXX");
  spmvctl_exec(&r, "profile", "/nonexistent/m.mtx", NULL);
  ck_assert_int_eq(r.status, 4);
  ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/m.mtx"));
  fd = mkstemp(path);
  {
    static const char bad[] =
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n";

    ck_assert(write(fd, bad, sizeof bad - 1) == (ssize_t)sizeof bad - 1);
  }
  close(fd);
  spmvctl_exec(&r, "profile", path, NULL);
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, path));
  unlink(path);
}
END_TEST

/* The block sizes the ELLR-T model may use (Vázquez et al.): multiples of
 * the warp size up to the per-block limit that fill the SM. */
static int expected_bs(const struct spmvd_model_gpu *g, int *bs)
{
  int n = 0;

  for (int b = g->warp_size; b <= g->max_threads_per_block; b += g->warp_size) {
    int blocks = g->max_threads_per_sm / b;

    if (blocks > g->max_blocks_per_sm)
      blocks = g->max_blocks_per_sm;
    if (blocks * b == g->max_threads_per_sm)
      bs[n++] = b;
  }
  return n;
}

/* model --json: every (BS, T) of the grid against spmvd_model_cost() and
 * the pick against spmvd_model_pick() on the grid computed here. */
START_TEST(test_model)
{
  static const struct {
    const char *file;
    struct spmvd_model_gpu g;
  } cases[] = {
    { "bcsstk13.mtx", { 40, 32, 1536, 16, 1024 } },
    { "west0479.mtx", { 132, 32, 2048, 32, 1024 } },
    { "karate.mtx", { 8, 16, 1024, 8, 512 } },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const struct spmvd_model_gpu *g = &cases[c].g;
    struct spmvd_model_grid grid;
    struct spmv_config pick;
    struct spmv_csr *A = NULL;
    struct spmv_error err;
    struct spmvctl_run r;
    char a[5][16];
    int bs[64], nbs = expected_bs(g, bs), nt = 0;
    json_t *o, *m, *jp;

    ck_assert_int_eq(spmv_mmio_read(matrix(cases[c].file), &A, NULL, &err), 0);
    ck_assert_int_eq(spmvd_model_grid_compute(A, g, &grid, &err), 0);
    spmvd_model_pick(&grid, &pick);
    snprintf(a[0], sizeof a[0], "%d", g->sms);
    snprintf(a[1], sizeof a[1], "%d", g->warp_size);
    snprintf(a[2], sizeof a[2], "%d", g->max_threads_per_sm);
    snprintf(a[3], sizeof a[3], "%d", g->max_blocks_per_sm);
    snprintf(a[4], sizeof a[4], "%d", g->max_threads_per_block);
    spmvctl_exec(&r, "model", "--json", "--sms", a[0], "--warp-size", a[1],
        "--max-threads-per-sm", a[2], "--max-blocks-per-sm", a[3],
        "--max-threads-per-block", a[4], matrix(cases[c].file), NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    o = out_json(&r);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "gpu"), "sms")),
                     g->sms);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "rows")), A->rows);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "nnz")), A->nnz);
    ck_assert_int_ge(nbs, 1);
    ck_assert_int_eq((int)json_array_size(json_object_get(o, "bs")), nbs);
    for (int i = 0; i < nbs; i++)
      ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(o, "bs"), i)),
                       bs[i]);
    for (int t = 1; t <= 32 && t <= g->warp_size; t *= 2, nt++)
      ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(o, "t"), nt)), t);
    ck_assert_int_eq((int)json_array_size(json_object_get(o, "t")), nt);
    m = json_object_get(o, "m");
    ck_assert_int_eq((int)json_array_size(m), nbs);
    for (int i = 0; i < nbs; i++)
      for (int j = 0; j < nt; j++) {
        int64_t want = spmvd_model_cost(A->row_ptr, A->rows, g, bs[i], 1 << j, &err);

        ck_assert_int_ge(want, 0);
        ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(m, i), j)), want);
      }
    jp = json_object_get(o, "pick");
    ck_assert_int_eq(json_integer_value(json_object_get(jp, "bs")), pick.bs);
    ck_assert_int_eq(json_integer_value(json_object_get(jp, "t")), pick.tpr);
    ck_assert_int_eq(json_integer_value(json_object_get(jp, "m")),
                     grid.m[grid.best_i][grid.best_j]);
    for (int i = 0; i < nbs; i++)
      for (int j = 0; j < nt; j++)
        ck_assert_int_le(json_integer_value(json_object_get(jp, "m")),
                         json_integer_value(json_array_get(json_array_get(m, i), j)));
    json_decref(o);
    spmv_csr_free(A);
  }
}
END_TEST

/* model's table with the default GPU, and its bad GPU parameters. */
START_TEST(test_model_table_errors)
{
  struct spmvctl_run r;

  spmvctl_exec(&r, "model", matrix("west0479.mtx"), NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "132 SMs, warp 32, 2048 threads/SM"));
  ck_assert_ptr_nonnull(strstr(r.out, "pick: ellr-t bs="));
  spmvctl_exec(&r, "model", "--warp-size", "3", matrix("west0479.mtx"), NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "warp size 3"));
  spmvctl_exec(&r, "model", "--sms", "0", matrix("west0479.mtx"), NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "--sms"));
  spmvctl_exec(&r, "model", "--max-threads-per-block", "4096", matrix("west0479.mtx"), NULL);
  ck_assert_int_eq(r.status, 2);
  spmvctl_exec(&r, "status", "--sms", "4", NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "--sms does not apply to 'status'"));
  spmvctl_exec(&r, "calibrate", "--max-seconds", "0", NULL);
  ck_assert_int_eq(r.status, 2);
  spmvctl_exec(&r, "model", "/nonexistent/m.mtx", NULL);
  ck_assert_int_eq(r.status, 4);
  spmvctl_exec(&r, "-s", "/nonexistent/spmvd.sock", "predict", matrix("karate.mtx"), NULL);
  ck_assert_int_eq(r.status, 3);
}
END_TEST

START_TEST(test_no_daemon)
{
  struct spmvctl_run r;

  spmvctl_exec(&r, "--socket", "/nonexistent/spmvd.sock", "status", NULL);
  ck_assert_int_eq(r.status, 3);
  ck_assert_ptr_nonnull(strstr(r.err, "spmvd is not running at /nonexistent/spmvd.sock"));
  spmvctl_exec(&r, "-s", "/nonexistent/spmvd.sock", "tune", matrix("karate.mtx"), NULL);
  ck_assert_int_eq(r.status, 3);
  spmvctl_exec(&r, "-s", "/nonexistent/spmvd.sock", "tune", "/nonexistent/m.mtx", NULL);
  ck_assert_int_eq(r.status, 4);
  spmvctl_exec(&r, "--db", "/nonexistent/cache.db", "list", NULL);
  ck_assert_int_eq(r.status, 4);
  ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/cache.db"));
}
END_TEST

START_TEST(test_with_daemon)
{
  struct itest_daemon d;
  struct spmvctl_run r;
  const char *karate = matrix("karate.mtx");
  char fp[33], exp_path[400];
  json_t *o, *trials, *list;
  size_t i;
  int found = 0;

  itest_daemon_init(&d);
  ck_assert_int_eq(itest_daemon_start(&d, NULL), 0);

  spmvctl_exec(&r, "--socket", d.sock, "status", NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "backend"));
  spmvctl_exec(&r, "--socket", d.sock, "--json", "status", NULL);
  ck_assert_int_eq(r.status, 0);
  o = out_json(&r);
  ck_assert_str_eq(json_string_value(json_object_get(o, "backend")), "cpu");
  ck_assert_str_eq(json_string_value(json_object_get(o, "cache_path")), d.db);
  json_decref(o);

  /* First sight: tuned, with progress on stderr. */
  spmvctl_exec(&r, "--socket", d.sock, "tune", "--json", karate, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  o = out_json(&r);
  ck_assert_str_eq(json_string_value(json_object_get(o, "source")), "tuned");
  ck_assert_int_eq(json_string_length(json_object_get(o, "fingerprint")), 32);
  snprintf(fp, sizeof fp, "%s", json_string_value(json_object_get(o, "fingerprint")));
  ck_assert_ptr_nonnull(json_string_value(json_object_get(o, "format")));
  ck_assert(json_is_object(json_object_get(o, "parameters")));
  ck_assert(json_number_value(json_object_get(o, "time_us")) > 0);
  ck_assert(json_number_value(json_object_get(o, "gflops")) > 0);
  ck_assert_int_eq(json_integer_value(json_object_get(o, "nnz")), 156);
  json_decref(o);
  ck_assert_ptr_nonnull(strstr(r.err, "tuning"));

  /* Second sight: from the cache, same decision; --quiet, table output. */
  spmvctl_exec(&r, "--socket", d.sock, "tune", "--quiet", karate, NULL);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "cache"));
  ck_assert_ptr_nonnull(strstr(r.out, fp));
  ck_assert_str_eq(r.err, "");

  /* --force tunes again with the strategy asked for. */
  spmvctl_exec(&r, "--socket", d.sock, "tune", "--json", "--force", "--strategy",
      "trial", "--dtype", "f32", karate, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  o = out_json(&r);
  ck_assert_str_eq(json_string_value(json_object_get(o, "source")), "tuned");
  ck_assert_str_eq(json_string_value(json_object_get(o, "strategy")), "trial");
  ck_assert_str_eq(json_string_value(json_object_get(o, "dtype")), "f32");
  json_decref(o);
  spmvctl_exec(&r, "--socket", d.sock, "tune", "--strategy", "guesswork", karate, NULL);
  ck_assert_int_eq(r.status, 1);

  /* bench: every candidate, fastest first. */
  spmvctl_exec(&r, "--socket", d.sock, "bench", "--json", "--quiet", karate, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  o = out_json(&r);
  trials = json_object_get(o, "trials");
  ck_assert(json_array_size(trials) >= 2);
  for (i = 1; i < json_array_size(trials); i++)
    ck_assert(json_number_value(json_object_get(json_array_get(trials, i - 1), "time_us")) <=
              json_number_value(json_object_get(json_array_get(trials, i), "time_us")));
  json_decref(o);
  spmvctl_exec(&r, "--socket", d.sock, "bench", "--quiet", karate, NULL);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "1.00x"));

  /* The cache, read-only: the database is found through the daemon. */
  spmvctl_exec(&r, "--socket", d.sock, "list", "--json", NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  o = out_json(&r);
  list = json_object_get(o, "tunings");
  for (i = 0; i < json_array_size(list); i++)
    if (strcmp(json_string_value(json_object_get(json_array_get(list, i), "fingerprint")), fp) == 0)
      found++;
  ck_assert_int_eq(found, 2);  /* f64 and f32 */
  json_decref(o);
  spmvctl_exec(&r, "--db", d.db, "list", NULL);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, fp));
  spmvctl_exec(&r, "--db", d.db, "show", "--json", fp, NULL);
  ck_assert_int_eq(r.status, 0);
  o = out_json(&r);
  ck_assert_int_eq(json_array_size(json_object_get(o, "tunings")), 2);
  json_decref(o);
  spmvctl_exec(&r, "--db", d.db, "show", fp, NULL);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "TRIAL"));
  spmvctl_exec(&r, "--db", d.db, "show", "00000000000000000000000000000000", NULL);
  ck_assert_int_eq(r.status, 4);

  /* export, forget, import: back where we were. */
  snprintf(exp_path, sizeof exp_path, "%s/export.json", d.dir);
  spmvctl_exec(&r, "--db", d.db, "export", "-o", exp_path, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  spmvctl_exec(&r, "--db", d.db, "export", NULL);
  ck_assert_int_eq(r.status, 0);
  o = out_json(&r);
  ck_assert_int_eq(json_array_size(json_object_get(o, "tunings")), 2);
  json_decref(o);
  spmvctl_exec(&r, "--socket", d.sock, "--json", "forget", fp, NULL);
  if (r.status == 5) {
    /* Not root nor in the admin group: refused, and said so. */
    ck_assert_ptr_nonnull(strstr(r.err, "ermission"));
  } else {
    ck_assert_msg(r.status == 0, "%s", r.err);
    o = out_json(&r);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "forgotten")), 2);
    json_decref(o);
    spmvctl_exec(&r, "--db", d.db, "show", fp, NULL);
    ck_assert_int_eq(r.status, 4);
    spmvctl_exec(&r, "--socket", d.sock, "--json", "import", exp_path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    o = out_json(&r);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "imported")), 2);
    json_decref(o);
    spmvctl_exec(&r, "--db", d.db, "show", fp, NULL);
    ck_assert_int_eq(r.status, 0);
  }
  spmvctl_exec(&r, "--socket", d.sock, "import", "/nonexistent/export.json", NULL);
  ck_assert_int_eq(r.status, 4);

  ck_assert_int_eq(itest_daemon_stop(&d, SIGTERM), 0);
  itest_daemon_fini(&d);
}
END_TEST

/* The suite of spmvctl. */
static Suite *spmvctl_suite(void)
{
  Suite *s = suite_create("spmvctl");
  TCase *tc = tcase_create("local");

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_usage);
  tcase_add_test(tc, test_help_version);
  tcase_add_test(tc, test_profile);
  tcase_add_test(tc, test_profile_errors);
  tcase_add_test(tc, test_no_daemon);
  tcase_add_test(tc, test_model);
  tcase_add_test(tc, test_model_table_errors);
  suite_add_tcase(s, tc);

  tc = tcase_create("daemon");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_with_daemon);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(spmvctl_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
