/* spmvd_bio.h: background I/O: the cache's own thread, so SQLite never blocks the loop. */
#ifndef SPMVD_BIO_H
#define SPMVD_BIO_H

#include <uv.h>

#include "spmv_error.h"

struct spmvd_cache;

/*
 * One thread owns the cache (Redis bio.c) and takes other slow chores off
 * the loop too (e.g. freeing large shared memory).  The loop posts jobs;
 * the thread runs them one at a time in the order posted (so every request
 * about one matrix sees the writes posted before it), and each job's done
 * callback then runs on the loop, in the same order, woken by a
 * uv_async_t.  A job owns nothing of the loop's: it carries copies of what
 * it needs, and its done callback looks its matrix up again.  The cache
 * may be touched only by jobs while the thread runs.
 */
struct spmvd_bio;

/* Runs on the cache thread: cache (borrowed, never NULL) and the job's arg. */
typedef void spmvd_bio_work_fn(struct spmvd_cache *cache, void *arg);
/* Runs on the loop once the job's work is done, with the same arg. */
typedef void spmvd_bio_done_fn(void *arg);

/*
 * Starts the cache thread for cache (borrowed: the caller closes it after
 * the stopped callback) on loop.  *out is owned by the thread's machinery
 * and freed after spmvd_bio_stop() completes.  Returns 0 or SPMV_ENOMEM.
 */
int spmvd_bio_open(uv_loop_t *loop, struct spmvd_cache *cache,
                   struct spmvd_bio **out, struct spmv_error *err);

/*
 * Queues a job: work (not NULL) on the thread, then done (may be NULL) on
 * the loop; arg belongs to the job until done runs (with done NULL, work
 * frees it).  Returns 0, or SPMV_ENOMEM / SPMV_ECLOSED (after the stop
 * completed), in which case nothing runs and the caller keeps arg.
 */
int spmvd_bio_post(struct spmvd_bio *b, spmvd_bio_work_fn *work,
                   spmvd_bio_done_fn *done, void *arg,
                   struct spmv_error *err);

/* Jobs posted whose done callback has not run yet. */
int spmvd_bio_pending(const struct spmvd_bio *b);

/*
 * Ends the thread once every job is done, those posted meanwhile by done
 * callbacks included (pending cache writes are never dropped); then closes
 * its handle and calls stopped(ctx) on the loop, after which b is freed
 * and the cache may be closed.  A second call is a no-op.
 */
void spmvd_bio_stop(struct spmvd_bio *b, void (*stopped)(void *ctx),
                    void *ctx);

#endif /* SPMVD_BIO_H */
