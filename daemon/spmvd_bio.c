/* spmvd_bio.c: background I/O: the cache's own thread, so SQLite never blocks the loop. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include <jansson.h>

#include "spmvd_bio.h"
#include "spmvd_log.h"

/*
 * Two FIFO lists under one mutex: todo (posted, for the thread) and done
 * (worked, for the loop).  The thread sleeps on a condition variable while
 * todo is empty; the loop is woken by uv_async_send() and runs the done
 * callbacks of everything finished so far.  pending counts jobs between
 * post and done on the loop side only, so a stop knows when nothing is
 * left: then the thread is told to quit, joined (it is idle, so at once)
 * and the async handle closed.
 */

struct job {
  spmvd_bio_work_fn *work;
  spmvd_bio_done_fn *done;
  void *arg;
  struct job *next;
};

struct spmvd_bio {
  uv_loop_t *loop;                  /* borrowed */
  struct spmvd_cache *cache;        /* borrowed; the thread's while it runs */
  uv_async_t async;                 /* wakes the loop: jobs are done */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct job *todo, **todo_tail;    /* under mu */
  struct job *done, **done_tail;    /* under mu */
  int quit;                         /* under mu: the thread ends */
  int pending;                      /* loop only: posted, done not yet run */
  int stopping;                     /* loop only: stop requested */
  int closed;                       /* loop only: the thread was joined */
  void (*stopped)(void *ctx);
  void *stopped_ctx;
};

static void push(struct job ***tail, struct job *j)
{
  j->next = NULL;
  **tail = j;
  *tail = &j->next;
}

static void *bio_main(void *arg)
{
  struct spmvd_bio *b = arg;
  struct job *j;

  pthread_mutex_lock(&b->mu);
  for (;;) {
    while (!b->todo && !b->quit)
      pthread_cond_wait(&b->cv, &b->mu);
    if (!b->todo)
      break;
    j = b->todo;
    b->todo = j->next;
    if (!b->todo)
      b->todo_tail = &b->todo;
    pthread_mutex_unlock(&b->mu);
    j->work(b->cache, j->arg);
    pthread_mutex_lock(&b->mu);
    push(&b->done_tail, j);
    uv_async_send(&b->async);
  }
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

static void on_closed(uv_handle_t *h)
{
  struct spmvd_bio *b = h->data;

  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->mu);
  if (b->stopped)
    b->stopped(b->stopped_ctx);
  free(b);
}

/* Nothing is left: the thread ends and the handle closes. */
static void finish(struct spmvd_bio *b)
{
  pthread_mutex_lock(&b->mu);
  b->quit = 1;
  pthread_cond_signal(&b->cv);
  pthread_mutex_unlock(&b->mu);
  pthread_join(b->thread, NULL);
  b->closed = 1;
  uv_close((uv_handle_t *)&b->async, on_closed);
}

static void on_async(uv_async_t *h)
{
  struct spmvd_bio *b = h->data;
  struct job *list, *j;

  pthread_mutex_lock(&b->mu);
  list = b->done;
  b->done = NULL;
  b->done_tail = &b->done;
  pthread_mutex_unlock(&b->mu);
  while ((j = list)) {
    list = j->next;
    b->pending--;
    if (j->done)
      j->done(j->arg);
    free(j);
  }
  if (b->stopping && !b->closed && b->pending == 0)
    finish(b);
}

/* Starts the cache thread. */
int spmvd_bio_open(uv_loop_t *loop, struct spmvd_cache *cache,
                   struct spmvd_bio **out, struct spmv_error *err)
{
  struct spmvd_bio *b = calloc(1, sizeof *b);

  if (!b)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  /* jansson seeds its hash function on first use: do it here, before the
   * thread builds any JSON. */
  json_object_seed(0);
  b->loop = loop;
  b->cache = cache;
  b->todo_tail = &b->todo;
  b->done_tail = &b->done;
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->cv, NULL);
  if (uv_async_init(loop, &b->async, on_async) < 0) {
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
    return spmv_error_set(err, SPMV_ENOMEM, "cannot create the cache's wake-up");
  }
  b->async.data = b;
  if (pthread_create(&b->thread, NULL, bio_main, b) != 0) {
    b->closed = 1;
    uv_close((uv_handle_t *)&b->async, on_closed);
    return spmv_error_set(err, SPMV_ENOMEM, "cannot start the cache thread");
  }
  *out = b;
  return 0;
}

/* Queues a job: work on the thread, then done on the loop. */
int spmvd_bio_post(struct spmvd_bio *b, spmvd_bio_work_fn *work,
                   spmvd_bio_done_fn *done, void *arg,
                   struct spmv_error *err)
{
  struct job *j;

  if (b->closed)
    return spmv_error_set(err, SPMV_ECLOSED, "the cache thread has stopped");
  j = malloc(sizeof *j);
  if (!j)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory queueing a cache job");
  j->work = work;
  j->done = done;
  j->arg = arg;
  b->pending++;
  pthread_mutex_lock(&b->mu);
  push(&b->todo_tail, j);
  pthread_cond_signal(&b->cv);
  pthread_mutex_unlock(&b->mu);
  return 0;
}

/* Jobs posted whose done callback has not run yet. */
int spmvd_bio_pending(const struct spmvd_bio *b)
{
  return b->pending;
}

/* Ends the thread once every job is done, then calls stopped(ctx). */
void spmvd_bio_stop(struct spmvd_bio *b, void (*stopped)(void *ctx),
                    void *ctx)
{
  if (b->stopping)
    return;
  b->stopping = 1;
  b->stopped = stopped;
  b->stopped_ctx = ctx;
  if (b->pending)
    spmvd_log_info("finishing %d cache request(s) before exiting", b->pending);
  else
    finish(b);
}
