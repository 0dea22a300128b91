/* itest_split.c: the daemon of the split tests (check_split_client,
 * check_split_vectors): cpu workers, or cuda workers where
 * check_gpu_split.sh asks (itest.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

int itest_split_on_gpus(void)
{
  const char *b = getenv("SPMV_ITEST_BACKEND");
  return b && strcmp(b, "cuda") == 0;
}

const char *itest_split_workers_arg(int cpu_workers)
{
  static char arg[128];
  const char *list = getenv("SPMV_ITEST_DEVICES");

  if (!itest_split_on_gpus())
    snprintf(arg, sizeof arg, "--cpu-workers=%d", cpu_workers);
  else
    snprintf(arg, sizeof arg, "--devices=%s", list && *list ? list : "all");
  return arg;
}

int itest_split_wait(const struct itest_daemon *d, int cpu_workers)
{
  int s = itest_open(d), nw = cpu_workers, gpus = itest_split_on_gpus();
  double t0 = itest_now_s();

  for (;;) {
    json_t *r = itest_call(s, json_pack("{ss si}", "op", "status", "id", 1),
                           NULL, 0, NULL, NULL);
    json_t *w = json_object_get(r, "workers");
    size_t n = 0, listed = json_array_size(w);
    for (size_t i = 0; i < listed; i++) {
      const char *st = json_string_value(json_object_get(json_array_get(w, i), "state"));
      n += st && strcmp(st, "ready") == 0;
    }
    json_decref(r);
    if (gpus)
      nw = (int)listed;
    if (n == (size_t)nw && nw >= 2)
      break;
    ck_assert_msg(itest_now_s() - t0 < (gpus ? 60 : 10),
                  "%zu of %d workers ready (log %s)", n, nw, d->log);
    usleep(20000);
  }
  close(s);
  return nw;
}
