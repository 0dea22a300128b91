/* spmvd_watch.h: a silence watch: a libuv timer that calls back when a
 * peer sent nothing for a time while work was out with it. */
#ifndef SPMVD_WATCH_H
#define SPMVD_WATCH_H

#include <stdint.h>

#include <uv.h>

/* Embedded in its owner (libuv style); its fields are the watch's own. */
struct spmvd_watch {
  uv_timer_t timer;          /* data: the watch */
  uint64_t heard_ms;         /* the peer's last message, or when work went
                                out to it while it had none (uv_now) */
  int timeout_s;             /* 0: never */
  int (*busy)(void *ctx);    /* whether work is out with the peer now */
  void (*silent)(void *ctx, double silent_s); /* it said nothing for too
                                long while busy; the watch stops */
  void *ctx;
};

/* Initialises wt on loop; busy, silent and ctx are borrowed for its life.
 * Nothing is timed until spmvd_watch_sent(). */
void spmvd_watch_init(uv_loop_t *loop, struct spmvd_watch *wt, int timeout_s,
                      int (*busy)(void *ctx),
                      void (*silent)(void *ctx, double silent_s), void *ctx);

/* Work went out to the peer; was_idle: it had none, so the silence counts
 * from now. */
void spmvd_watch_sent(struct spmvd_watch *wt, int was_idle);

/* The peer sent a message. */
void spmvd_watch_heard(struct spmvd_watch *wt);

/* Stops timing until work goes out again. */
void spmvd_watch_stop(struct spmvd_watch *wt);

/* Sets the timeout (0: never), counted from now for the work already out. */
void spmvd_watch_set(struct spmvd_watch *wt, int timeout_s);

/* Closes the timer: cb gets its handle, whose data is wt. */
void spmvd_watch_close(struct spmvd_watch *wt, uv_close_cb cb);

#endif /* SPMVD_WATCH_H */
