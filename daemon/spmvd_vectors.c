/* spmvd_vectors.c: the front end's record of a connection's device vectors. */
#include "config.h"

#include <stdlib.h>

#include "spmvd_vectors.h"

/* Ids are never reused, so a stale number can never name a new vector. */
static int64_t next_id = 1;

void spmvd_vectors_init(struct spmvd_vectors *t)
{
  t->head = NULL;
  t->count = 0;
  t->bytes = 0;
}

struct spmvd_vector *spmvd_vectors_add(struct spmvd_vectors *t,
                                       enum spmv_dtype dt, int64_t n)
{
  struct spmvd_vector *v = calloc(1, sizeof *v);

  if (!v)
    return NULL;
  v->id = next_id++;
  v->dtype = dt;
  v->n = n;
  v->next = t->head;
  t->head = v;
  t->count++;
  t->bytes += (uint64_t)n * spmv_dtype_size(dt);
  return v;
}

struct spmvd_vector *spmvd_vectors_find(const struct spmvd_vectors *t,
                                        int64_t id)
{
  for (struct spmvd_vector *v = t->head; v; v = v->next)
    if (v->id == id)
      return v;
  return NULL;
}

int spmvd_vectors_remove(struct spmvd_vectors *t, int64_t id)
{
  for (struct spmvd_vector **p = &t->head; *p; p = &(*p)->next) {
    struct spmvd_vector *v = *p;
    if (v->id != id)
      continue;
    *p = v->next;
    t->count--;
    t->bytes -= (uint64_t)v->n * spmv_dtype_size(v->dtype);
    free(v);
    return 0;
  }
  return -1;
}

void spmvd_vectors_lose(struct spmvd_vectors *t, int conn_wk, int wk)
{
  for (struct spmvd_vector *v = t->head; v; v = v->next) {
    if (v->split.n <= 1) {
      v->lost |= conn_wk == wk;
      continue;
    }
    for (int p = 0; p < v->split.n; p++)
      v->lost |= v->split.wk[p] == wk;
  }
}

int spmvd_split_layout_same(const struct spmvd_split_layout *a,
                            const struct spmvd_split_layout *b)
{
  int n = a->n > 1 ? a->n : 1;

  if ((a->n > 1) != (b->n > 1))
    return 0;
  if (n == 1)
    return 1;
  if (a->n != b->n)
    return 0;
  for (int p = 0; p < n; p++)
    if (a->wk[p] != b->wk[p] || a->r0[p + 1] != b->r0[p + 1])
      return 0;
  return 1;
}

void spmvd_vectors_fini(struct spmvd_vectors *t)
{
  while (t->head) {
    struct spmvd_vector *v = t->head;
    t->head = v->next;
    free(v);
  }
  spmvd_vectors_init(t);
}
