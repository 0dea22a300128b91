/* check_ipc.c: worker messages with memfds attached, and what they carry. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_ipc.h"
#include "spmvd_shm.h"

START_TEST(message_with_fds)
{
  int sv[2];
  struct spmv_error err;
  struct spmvd_shm a, b;

  ck_assert_int_eq(spmvd_ipc_pair(sv, &err), 0);
  ck_assert_int_eq(spmvd_shm_open(&a, "t", 4096, &err), 0);
  memcpy(a.addr, "hello", 6);
  json_t *m = json_pack("{ss si}", "op", "x", "seq", 5);
  ck_assert_int_eq(spmvd_ipc_send(sv[0], m, &a.fd, 1, &err), 0);
  json_decref(m);

  json_t *got;
  int fds[SPMVD_IPC_MAX_FDS], n;
  ck_assert_int_eq(spmvd_ipc_recv(sv[1], &got, fds, &n, SPMVD_IPC_MAX_FDS, &err), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(json_integer_value(json_object_get(got, "seq")), 5);
  json_decref(got);
  ck_assert_int_eq(spmvd_shm_map(&b, fds[0], 4096, &err), 0);
  ck_assert_str_eq(b.addr, "hello");           /* the same pages */
  memcpy(b.addr, "world", 6);
  ck_assert_str_eq(a.addr, "world");
  spmvd_shm_close(&b);
  /* Mapping more than the memfd holds is refused. */
  int dup_fd = dup(a.fd);
  ck_assert_int_eq(spmvd_shm_map(&b, dup_fd, 8192, &err), SPMV_EPROTO);
  spmvd_shm_close(&a);

  /* Nothing waiting on the non-blocking end; end of stream after close. */
  ck_assert_int_eq(spmvd_ipc_recv(sv[0], &got, fds, &n, 4, &err), SPMV_EBUSY);
  close(sv[1]);
  ck_assert_int_eq(spmvd_ipc_recv(sv[0], &got, fds, &n, 4, &err), SPMV_ECLOSED);
  close(sv[0]);
}
END_TEST

START_TEST(csr_layout)
{
  struct spmv_wire_csr_layout l;
  spmv_wire_csr_layout(10, 3, &l);
  ck_assert_uint_eq(l.off_col, 88);
  ck_assert_uint_eq(l.off_val, 88 + 16);   /* 12 bytes padded to 16 */
  ck_assert_uint_eq(l.size, 88 + 16 + 24);
  ck_assert_uint_eq(l.off_val % 8, 0);
}
END_TEST

START_TEST(profile_round_trip)
{
  struct spmv_profile p, q;
  memset(&p, 0, sizeof p);
  p.rows = 10; p.cols = 12; p.nnz = 30; p.rl_min = 1; p.rl_max = 7;
  p.rl_mean = 3; p.rl_sigma = 1.5; p.rl_cv = 0.5; p.empty_rows = 0;
  p.ell_fill = 2.33; p.hyb_k = 3; p.ndiags = 9; p.dia_fill = 3; p.col_locality = 0.25;
  p.hist[1] = 2; p.hist[2] = 5; p.hist[3] = 3;
  json_t *j = spmvd_ipc_profile_pack(&p);
  ck_assert_int_eq(json_array_size(json_object_get(j, "hist")), 4);
  ck_assert_int_eq(spmvd_ipc_profile_unpack(j, &q), 0);
  ck_assert(memcmp(&p, &q, sizeof p) == 0);
  json_object_del(j, "rl_max");
  ck_assert_int_eq(spmvd_ipc_profile_unpack(j, &q), SPMV_EPROTO);
  json_decref(j);
}
END_TEST

START_TEST(decision_round_trip)
{
  struct spmvd_decision d, e;
  spmvd_decision_init(&d);
  ck_assert_int_eq(spmv_config_parse("ellr-t bs=256 t=4", &d.cfg, NULL), 0);
  spmv_config_format(&d.cfg, d.text, sizeof d.text);
  d.strategy = SPMVD_STRATEGY_TRIAL;
  d.time_us = 12.5; d.gflops = 3; d.gbps = 20; d.cost_spmv = 14;
  d.ntrials = 2;
  d.trials = calloc(2, sizeof *d.trials);
  d.trials[0].cfg = d.cfg;
  d.trials[0].time_us = 12.5;
  d.trials[0].rounds = 3;
  ck_assert_int_eq(spmv_config_parse("csr-scalar bs=128", &d.trials[1].cfg, NULL), 0);
  d.trials[1].status = SPMVD_TRIAL_FAILED;
  d.trials[1].code = SPMV_ETOOBIG;
  strcpy(d.trials[1].msg, "too big");
  json_t *j = spmvd_ipc_decision_pack(&d);
  ck_assert_int_eq(spmvd_ipc_decision_unpack(j, &e), 0);
  ck_assert_str_eq(e.text, d.text);
  ck_assert_int_eq(e.strategy, SPMVD_STRATEGY_TRIAL);
  ck_assert_double_eq(e.time_us, 12.5);
  ck_assert_uint_eq(e.ntrials, 2);
  ck_assert_int_eq(e.trials[0].rounds, 3);
  ck_assert_int_eq(e.trials[1].status, SPMVD_TRIAL_FAILED);
  ck_assert_int_eq(e.trials[1].code, SPMV_ETOOBIG);
  ck_assert_str_eq(e.trials[1].msg, "too big");
  json_decref(j);
  spmvd_decision_fini(&d);
  spmvd_decision_fini(&e);
}
END_TEST

static Suite *ipc_suite(void)
{
  Suite *s = suite_create("ipc");
  TCase *tc = tcase_create("ipc");
  tcase_add_test(tc, message_with_fds);
  tcase_add_test(tc, csr_layout);
  tcase_add_test(tc, profile_round_trip);
  tcase_add_test(tc, decision_round_trip);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(ipc_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
