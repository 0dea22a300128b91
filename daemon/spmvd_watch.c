/* spmvd_watch.c: a silence watch: a libuv timer that calls back when a
 * peer sent nothing for a time while work was out with it. */
#include "config.h"

#include "spmvd_watch.h"

/*
 * Messages only note the time (no timer call on the hot path): the timer,
 * armed for the whole timeout when work goes out, looks at the last
 * message when it fires and sleeps again for what is left, or calls back.
 */

static void on_timer(uv_timer_t *t)
{
  struct spmvd_watch *wt = t->data;
  uint64_t now = uv_now(t->loop), limit = (uint64_t)wt->timeout_s * 1000;

  if (wt->timeout_s <= 0 || !wt->busy(wt->ctx))
    return;
  if (now - wt->heard_ms < limit) {
    uv_timer_start(&wt->timer, on_timer, limit - (now - wt->heard_ms), 0);
    return;
  }
  wt->silent(wt->ctx, (double)(now - wt->heard_ms) / 1e3);
}

void spmvd_watch_init(uv_loop_t *loop, struct spmvd_watch *wt, int timeout_s,
                      int (*busy)(void *ctx),
                      void (*silent)(void *ctx, double silent_s), void *ctx)
{
  uv_timer_init(loop, &wt->timer);
  wt->timer.data = wt;
  wt->heard_ms = uv_now(loop);
  wt->timeout_s = timeout_s;
  wt->busy = busy;
  wt->silent = silent;
  wt->ctx = ctx;
}

void spmvd_watch_sent(struct spmvd_watch *wt, int was_idle)
{
  uint64_t now = uv_now(wt->timer.loop), limit = (uint64_t)wt->timeout_s * 1000;

  if (was_idle)
    wt->heard_ms = now;
  if (wt->timeout_s <= 0 || uv_is_active((uv_handle_t *)&wt->timer) ||
      !wt->busy(wt->ctx))
    return;
  uv_timer_start(&wt->timer, on_timer,
                 now - wt->heard_ms < limit ? limit - (now - wt->heard_ms) : 0, 0);
}

void spmvd_watch_heard(struct spmvd_watch *wt)
{
  wt->heard_ms = uv_now(wt->timer.loop);
}

void spmvd_watch_stop(struct spmvd_watch *wt)
{
  uv_timer_stop(&wt->timer);
}

void spmvd_watch_set(struct spmvd_watch *wt, int timeout_s)
{
  wt->timeout_s = timeout_s;
  uv_timer_stop(&wt->timer);
  spmvd_watch_sent(wt, 1);
}

void spmvd_watch_close(struct spmvd_watch *wt, uv_close_cb cb)
{
  uv_close((uv_handle_t *)&wt->timer, cb);
}
