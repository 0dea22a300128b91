/* spmvd_spin.c: the front end's loop polls without sleeping for a moment
 * after each message. */
#include "config.h"

#include <stdint.h>

#include "spmvd_spin.h"

/*
 * A request crosses the client, the front end and the worker and back;
 * each process woken from its sleep costs tens of microseconds, as much
 * as a whole product of a matrix that fits the L2.  While an idle handle
 * is active, libuv polls for events with a zero timeout instead of
 * sleeping, so the worker's reply and the client's next request are read
 * as they arrive.  The window is short: a quiet daemon sleeps.
 */

static uv_idle_t spin;
static int ready, active;
static uint64_t window_ns, last_ns;

static void on_idle(uv_idle_t *h)
{
  if (uv_hrtime() - last_ns > window_ns) {
    uv_idle_stop(h);
    active = 0;
  }
}

int spmvd_spin_init(uv_loop_t *loop, int us)
{
  int rc;

  if (us <= 0)
    return 0;
  if ((rc = uv_idle_init(loop, &spin)) < 0)
    return rc;
  uv_unref((uv_handle_t *)&spin);  /* never what keeps the loop alive */
  window_ns = (uint64_t)us * 1000u;
  ready = 1;
  return 0;
}

void spmvd_spin_kick(void)
{
  if (!ready)
    return;
  last_ns = uv_hrtime();
  if (!active) {
    uv_idle_start(&spin, on_idle);
    active = 1;
  }
}

void spmvd_spin_close(void)
{
  if (ready && !uv_is_closing((uv_handle_t *)&spin))
    uv_close((uv_handle_t *)&spin, NULL);
  ready = active = 0;
}
