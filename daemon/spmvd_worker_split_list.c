/* spmvd_worker_split_list.c: a list of operations on vectors split by a
 * split matrix's rows, run by the blocks' workers together in one call
 * each (issue 54): they meet at a barrier in the memfd they share after
 * each block has published its rows of a product's x there, and sum each
 * dot or norm over the blocks in block order through its slots, so that
 * every block goes on with the whole vectors' results. */
#include "config.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "spmvd_split_shm.h"
#include "spmvd_worker_impl.h"

int spmvd_wk_split_barrier(struct worker *w, struct spmvd_split_ctl *ctl, int nb)
{
  unsigned g = atomic_load(&ctl->gen);

  if (atomic_fetch_add(&ctl->count, 1) == (unsigned)nb - 1) {
    atomic_store(&ctl->count, 0);
    atomic_fetch_add(&ctl->gen, 1);
    return 0;
  }
  for (long spins = 0; atomic_load(&ctl->gen) == g; spins++) {
    if (atomic_load(&ctl->abort))
      return -1;
    spmvd_wk_heartbeat(w);  /* a slow peer is no hang of this worker */
    if (spins > 1000)
      usleep(20);
    else
      sched_yield();
  }
  return 0;
}

int spmvd_wk_list_sync_init(struct spmvd_wk_list_sync *s, struct worker *w,
                            json_t *req, void *shared, size_t size,
                            struct spmv_error *err)
{
  json_int_t nb = 0, k = -1, n = 0;

  memset(s, 0, sizeof *s);
  if (json_unpack(json_object_get(req, "sync"), "{sI sI sI}", "blocks", &nb,
                  "block", &k, "rows", &n) < 0 ||
      nb < 2 || nb > SPMV_SPLIT_MAX || k < 0 || k >= nb || n < 0 ||
      size < spmvd_split_list_bytes((size_t)n))
    return spmv_error_set(err, SPMV_EPROTO, "bad sync of an ops message");
  s->w = w;
  s->ctl = shared;
  s->nb = (int)nb;
  s->k = (int)k;
  return 0;
}

void spmvd_wk_list_sync_fail(struct spmvd_wk_list_sync *s)
{
  if (s->ctl)
    atomic_store(&s->ctl->abort, 1);
}

/* The blocks' values v in block order, once all have given theirs (slots
 * alternate by parity, as a split solve's); NULL when another block
 * failed. */
static const double *gather(struct spmvd_wk_list_sync *s, double v)
{
  double *slot = s->ctl->slot[s->seq++ % 2];

  slot[s->k] = v;
  return spmvd_wk_split_barrier(s->w, s->ctl, s->nb) < 0 ? NULL : slot;
}

static int aborted(struct spmv_error *err)
{
  return spmv_error_set(err, SPMV_EWORKER, "the split list was "
                        SPMVD_SPLIT_ABORTED);
}

int spmvd_wk_list_sync_step(struct spmvd_wk_list_sync *s, json_t *st,
                            double *res, int nres, struct spmv_error *err)
{
  const char *k = json_string_value(json_object_get(st, "k"));
  int publish = json_is_true(json_object_get(st, "publish"));
  int dot = strcmp(k, "dot") == 0, nrm2 = strcmp(k, "nrm2") == 0;
  int rc;

  if (!publish && !dot && !nrm2)
    return 0;
  /* The block's rows of x in the shared memory, or its part of the sum. */
  if ((rc = s->w->ops->finish(s->w->be, res, nres, err)) < 0)
    return rc;
  if (publish)
    return spmvd_wk_split_barrier(s->w, s->ctl, s->nb) < 0 ? aborted(err) : 0;
  int slot = (int)json_integer_value(json_object_get(st, "slot"));
  if (slot < 0 || slot >= nres)
    return spmv_error_set(err, SPMV_EPROTO, "bad '%s' step", k);
  const double *all = gather(s, nrm2 ? res[slot] * res[slot] : res[slot]);
  if (!all)
    return aborted(err);
  double sum = 0;
  for (int b = 0; b < s->nb; b++)
    sum += all[b];
  res[slot] = nrm2 ? sqrt(sum) : sum;
  /* The steps after read the whole vectors' results. */
  return s->w->ops->res_set(s->w->be, res, nres, err);
}
