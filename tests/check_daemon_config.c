/* check_daemon_config.c: spmvd.conf parsing, defaults, sizes and errors. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmv_formats.h"
#include "spmvd_config.h"

static char path[64];

static void write_conf(const char *text)
{
  snprintf(path, sizeof path, "/tmp/spmvd-conf-test.%ld", (long)getpid());
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

START_TEST(defaults_user_paths)
{
  struct spmvd_config c;
  /* Root gets the service paths: as root (CI), this test's own process
   * (check forks one per test) becomes an ordinary user first; without
   * fork mode that would change the other tests' process too. */
  const char *fork_mode = getenv("CK_FORK");
  if (geteuid() == 0 && fork_mode && strcmp(fork_mode, "no") == 0)
    return;
  if (geteuid() == 0 && setuid(65534) < 0)
    ck_abort_msg("cannot drop root to test a user's defaults: %s", strerror(errno));
  ck_assert_int_ne(geteuid(), 0);
  setenv("XDG_RUNTIME_DIR", "/run/user/77", 1);
  setenv("XDG_STATE_HOME", "/home/u/.st", 1);
  spmvd_config_defaults(&c);
  ck_assert_str_eq(c.socket_path, "/run/user/77/spmvd.sock");
  ck_assert_str_eq(c.db_path, "/home/u/.st/spmvd/cache.db");
  ck_assert_int_eq(c.socket_mode, 0600);  /* the user's alone */
  unsetenv("XDG_STATE_HOME");
  setenv("HOME", "/home/u", 1);
  spmvd_config_defaults(&c);
  ck_assert_str_eq(c.db_path, "/home/u/.local/state/spmvd/cache.db");
}
END_TEST

START_TEST(defaults_values)
{
  struct spmvd_config c;
  spmvd_config_defaults(&c);
  ck_assert_str_eq(c.backend, "auto");
  ck_assert_str_eq(c.strategy, "auto");
  ck_assert_uint_eq(c.max_json, 1u << 20);
  ck_assert(c.max_payload == (uint64_t)4 << 30);
  ck_assert_int_gt(c.max_matrices_per_uid, 0);
  ck_assert_uint_eq(c.exclude_formats, 0);
  if (geteuid() == 0)
    ck_assert_ptr_nonnull(strstr(c.socket_path, "spmvd/spmvd.sock"));
}
END_TEST

START_TEST(sizes)
{
  uint64_t v;
  ck_assert_int_eq(spmvd_config_parse_size("4096", &v), 0);
  ck_assert(v == 4096);
  ck_assert_int_eq(spmvd_config_parse_size("64K", &v), 0);
  ck_assert(v == 65536);
  ck_assert_int_eq(spmvd_config_parse_size("16MiB", &v), 0);
  ck_assert(v == 16u << 20);
  ck_assert_int_eq(spmvd_config_parse_size("4G", &v), 0);
  ck_assert(v == (uint64_t)4 << 30);
  ck_assert_int_eq(spmvd_config_parse_size("-1", &v), -1);
  ck_assert_int_eq(spmvd_config_parse_size("12Q", &v), -1);
  ck_assert_int_eq(spmvd_config_parse_size("", &v), -1);
  ck_assert_int_eq(spmvd_config_parse_size("99999999999T", &v), -1);
}
END_TEST

START_TEST(file_ok)
{
  struct spmvd_config c;
  struct spmv_error err;
  spmvd_config_defaults(&c);
  write_conf("# a comment\n\nsocket = /tmp/x.sock  # trailing\n"
             "db = \"/tmp/c.db\"\nmax_payload_bytes = 1G\n"
             "max_matrices_per_user=7\nstrategy = trial\nbackend = cpu\n"
             "log_level = debug\nsocket_mode = 0660\nadmin_group = spmv\n"
             "exclude_formats = cusparse,csr-scalar\n");
  ck_assert_int_eq(spmvd_config_load(&c, path, &err), 0);
  ck_assert_str_eq(c.socket_path, "/tmp/x.sock");
  ck_assert_str_eq(c.db_path, "/tmp/c.db");
  ck_assert(c.max_payload == (uint64_t)1 << 30);
  ck_assert_int_eq(c.max_matrices_per_uid, 7);
  ck_assert_str_eq(c.strategy, "trial");
  ck_assert_str_eq(c.backend, "cpu");
  ck_assert_int_eq(c.log_level, SPMVD_LOG_DEBUG);
  ck_assert_int_eq(c.socket_mode, 0660);
  ck_assert_str_eq(c.admin_group, "spmv");
  ck_assert_uint_eq(c.exclude_formats, (1u << SPMV_FMT_CUSPARSE) |
                                           (1u << SPMV_FMT_CSR_SCALAR));
  unlink(path);
}
END_TEST

/* A bad file names the line and the key and leaves the old values. */
START_TEST(file_errors)
{
  static const struct {
    const char *text, *expect;
  } cases[] = {
    {"max_matrices_per_user = 3\nfrobnicate = 1\n", ":2: unknown key 'frobnicate'"},
    {"backend = gpu\n", "backend: 'gpu' is not auto, cpu or cuda"},
    {"strategy = fastest\n", "strategy: 'fastest'"},
    {"max_payload_bytes = lots\n", "max_payload_bytes: 'lots' is not a size"},
    {"max_connections = 0\n", "max_connections: '0'"},
    {"socket_mode = 999\n", "socket_mode: '999' is not an octal number"},
    {"just words\n", ":1: expected 'key = value'"},
    {"log = journal\n", "log: 'journal' is not stderr or syslog"},
    {"exclude_formats = cusparse, magic\n",
     "exclude_formats: 'magic' is not a format"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct spmvd_config c, before;
    struct spmv_error err;
    spmvd_config_defaults(&c);
    before = c;
    write_conf(cases[i].text);
    ck_assert_int_eq(spmvd_config_load(&c, path, &err), SPMV_ECONFIG);
    ck_assert_msg(strstr(err.msg, cases[i].expect) != NULL, "case %zu: '%s'",
                  i, err.msg);
    ck_assert(memcmp(&c, &before, sizeof c) == 0);
  }
  struct spmvd_config c;
  struct spmv_error err;
  spmvd_config_defaults(&c);
  ck_assert_int_eq(spmvd_config_load(&c, "/nonexistent/spmvd.conf", &err),
                   SPMV_ECONFIG);
  ck_assert_ptr_nonnull(strstr(err.msg, "cannot open /nonexistent/spmvd.conf"));
  unlink(path);
}
END_TEST

/* exclude_formats: names to bits and back; a bad list leaves the mask. */
START_TEST(exclude_formats)
{
  struct spmv_error err;
  uint32_t m = 0;
  char names[128];

  ck_assert_int_eq(spmvd_config_parse_formats(" cusparse ,coo", &m, &err), 0);
  ck_assert_uint_eq(m, (1u << SPMV_FMT_CUSPARSE) | (1u << SPMV_FMT_COO));
  spmvd_config_format_names(m, names, sizeof names);
  ck_assert_str_eq(names, "coo,cusparse");
  ck_assert_int_eq(spmvd_config_parse_formats("csr16", &m, &err), 0);
  ck_assert_uint_eq(m, 1u << SPMV_FMT_CSR16);
  ck_assert_int_eq(spmvd_config_parse_formats("coo,,dia", &m, &err),
                   SPMV_ECONFIG);
  ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
  ck_assert_int_eq(spmvd_config_parse_formats("ell, csr_vector", &m, &err),
                   SPMV_ECONFIG);
  ck_assert_ptr_nonnull(strstr(err.msg, "'csr_vector' is not a format"));
  ck_assert_uint_eq(m, 1u << SPMV_FMT_CSR16);
  ck_assert_int_eq(spmvd_config_parse_formats("none", &m, &err), 0);
  ck_assert_uint_eq(m, 0);
  m = 1;
  ck_assert_int_eq(spmvd_config_parse_formats("", &m, &err), 0);
  ck_assert_uint_eq(m, 0);
  spmvd_config_format_names(0, names, sizeof names);
  ck_assert_str_eq(names, "");
  /* A buffer too small for every name keeps the names that fit. */
  spmvd_config_format_names((1u << SPMV_FMT_COO) | (1u << SPMV_FMT_CUSPARSE),
                            names, 6);
  ck_assert_str_eq(names, "coo");
}
END_TEST

/* devices: all, a list, and what is not one; cpu_workers' range. */
START_TEST(devices)
{
  struct spmvd_config c;
  struct spmv_error err;

  spmvd_config_defaults(&c);
  ck_assert_int_eq(c.ndevices, 0);
  ck_assert_int_eq(c.cpu_workers, 1);
  ck_assert_int_eq(spmvd_config_set(&c, "devices", "all", &err), 0);
  ck_assert_int_eq(c.ndevices, -1);
  ck_assert_int_eq(spmvd_config_set(&c, "devices", "2,0,5", &err), 0);
  ck_assert_int_eq(c.ndevices, 3);
  ck_assert_int_eq(c.devices[0], 2);
  ck_assert_int_eq(c.devices[1], 0);
  ck_assert_int_eq(c.devices[2], 5);
  /* A device listed twice is two workers on it. */
  ck_assert_int_eq(spmvd_config_set(&c, "devices", "1,1", &err), 0);
  ck_assert_int_eq(c.ndevices, 2);
  ck_assert_int_eq(c.devices[0], 1);
  ck_assert_int_eq(c.devices[1], 1);
  ck_assert_int_eq(spmvd_config_set(&c, "devices", "2,0,5", &err), 0);
  static const char *const bad[][2] = {
    {"0,", "ends in a comma"}, {"", "empty"},
    {"x", "not 'all' or a list"}, {"0,,1", "not 'all' or a list"},
    {"-1", "not 'all' or a list"}, {"1024", "not 'all' or a list"},
    {"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "more than 16"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(spmvd_config_set(&c, "devices", bad[i][0], &err), SPMV_ECONFIG);
    ck_assert_msg(strstr(err.msg, bad[i][1]), "devices '%s': %s", bad[i][0], err.msg);
    ck_assert_int_eq(c.ndevices, 3);  /* the setting in force stays */
    ck_assert_int_eq(c.devices[0], 2);
  }
  ck_assert_int_eq(spmvd_config_set(&c, "cpu_workers", "16", &err), 0);
  ck_assert_int_eq(c.cpu_workers, 16);
  ck_assert_int_eq(spmvd_config_set(&c, "cpu_workers", "17", &err), SPMV_ECONFIG);
  ck_assert_int_eq(spmvd_config_set(&c, "cpu_workers", "0", &err), SPMV_ECONFIG);
}
END_TEST

static Suite *daemon_config_suite(void)
{
  Suite *s = suite_create("daemon_config");
  TCase *tc = tcase_create("config");
  tcase_add_test(tc, defaults_user_paths);
  tcase_add_test(tc, defaults_values);
  tcase_add_test(tc, sizes);
  tcase_add_test(tc, file_ok);
  tcase_add_test(tc, file_errors);
  tcase_add_test(tc, exclude_formats);
  tcase_add_test(tc, devices);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(daemon_config_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
