/* spmvd_vectors.h: the front end's record of a connection's device vectors. */
#ifndef SPMVD_VECTORS_H
#define SPMVD_VECTORS_H

#include <stdint.h>

#include "spmv_formats.h"
#include "spmvd_config.h"

/* How a split matrix's rows, and the vectors split like it, lie over the
 * workers: part p holds rows r0[p] .. r0[p + 1] on worker wk[p]. */
struct spmvd_split_layout {
  int n;
  int64_t r0[SPMVD_CONFIG_MAX_WORKERS + 1];
  int wk[SPMVD_CONFIG_MAX_WORKERS];
};

/* Whether a and b are one layout (n <= 1 is no split: all alike). */
int spmvd_split_layout_same(const struct spmvd_split_layout *a,
                            const struct spmvd_split_layout *b);

/*
 * A device vector as the front end knows it: its owner, shape and whether
 * the worker still holds its contents.  The contents live in the worker,
 * which allocates a vector when a request first names it (after a respawn
 * too) and frees it on "vfree".
 */
struct spmvd_vector {
  int64_t id;                   /* unique for the daemon's life, from 1 */
  enum spmv_dtype dtype;
  int64_t n;
  int lost;                     /* a worker that held its values died */
  struct spmvd_split_layout split; /* n > 1: split as a matrix's rows (its
                                  parts on those workers), else on its
                                  connection's worker */
  struct spmvd_vector *next;
};

/* A connection's vectors (embedded in the connection). */
struct spmvd_vectors {
  struct spmvd_vector *head;
  int count;
  uint64_t bytes;               /* n * value size, summed */
};

void spmvd_vectors_init(struct spmvd_vectors *t);
/* Adds a vector with a fresh id; NULL when out of memory. */
struct spmvd_vector *spmvd_vectors_add(struct spmvd_vectors *t,
                                       enum spmv_dtype dt, int64_t n);
/* The vector id of t (borrowed), or NULL. */
struct spmvd_vector *spmvd_vectors_find(const struct spmvd_vectors *t,
                                        int64_t id);
/* Removes and frees vector id; 0, or -1 when t has none. */
int spmvd_vectors_remove(struct spmvd_vectors *t, int64_t id);
/* Marks lost every vector of t with values on worker wk, conn_wk being
 * the connection's (where the vectors that are not split are). */
void spmvd_vectors_lose(struct spmvd_vectors *t, int conn_wk, int wk);
/* Frees every vector of t. */
void spmvd_vectors_fini(struct spmvd_vectors *t);

#endif /* SPMVD_VECTORS_H */
