/* spmv_split.h: a square matrix's rows cut into contiguous blocks balanced
 * by nonzeros, for several devices: each block's local and remote parts and
 * the halo of x it needs from the other blocks. */
#ifndef SPMV_SPLIT_H
#define SPMV_SPLIT_H

#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most blocks of a split (the devices of one host). */
#define SPMV_SPLIT_MAX 64

/*
 * One block: rows [r0, r1) of A, and the same entries [r0, r1) of x and y,
 * which its device keeps.  A row's entries are parted by column: those in
 * [r0, r1) go to local, renumbered c - r0; the others to remote, renumbered
 * by their place in halo.  So y[r0 + i] = (local x_own)[i] + (remote
 * x_halo)[i], where x_own = x[r0 .. r1) and x_halo[k] = x[halo[k]].
 */
struct spmv_split_block {
  int64_t r0, r1;
  struct spmv_csr *local;   /* r1 - r0 rows and columns (owned) */
  struct spmv_csr *remote;  /* r1 - r0 rows, nhalo columns (owned) */
  int64_t nhalo;
  int32_t *halo;            /* nhalo global columns, ascending (owned) */
  /*
   * What this block sends: to block q, the entries x_own[send_idx[k]] for
   * k in [send_off[q], send_off[q + 1]), in the order q's halo lists them.
   * nblocks + 1 offsets (owned); send_off[self] = send_off[self + 1].
   */
  int64_t *send_off;
  int32_t *send_idx;        /* owned */
};

/* A split of a matrix into nblocks blocks.  Owns its blocks. */
struct spmv_split {
  int64_t rows, nnz;
  int nblocks;
  struct spmv_split_block *block;
};

/*
 * The row boundaries of n blocks holding about nnz / n entries each:
 * bounds[0] = 0, bounds[n] = A->rows, non-decreasing (a block may be empty
 * when a few rows hold most entries).  bounds has n + 1 entries.
 */
void spmv_split_bounds(const struct spmv_csr *A, int n, int64_t *bounds);

/*
 * Splits A (square, valid) into n blocks (1 .. SPMV_SPLIT_MAX, at most
 * A->rows when A has rows) at spmv_split_bounds().  Returns 0 and a new
 * split in *out (free with spmv_split_free()), or SPMV_EINVAL (not square,
 * n out of range) or SPMV_ENOMEM, with err set.
 */
int spmv_split_new(const struct spmv_csr *A, int n, struct spmv_split **out,
                   struct spmv_error *err);

/*
 * Block k alone of the split of A into n blocks, as spmv_split_new()
 * cuts it, without its send lists (send_off and send_idx NULL): what one
 * device builds of its own block.  Returns 0, or SPMV_EINVAL (as
 * spmv_split_new, or k not in [0, n)) or SPMV_ENOMEM with err set and *b
 * empty.  Free with spmv_split_block_fini().
 */
int spmv_split_one(const struct spmv_csr *A, int n, int k,
                   struct spmv_split_block *b, struct spmv_error *err);

/* Frees what b owns and zeroes it. */
void spmv_split_block_fini(struct spmv_split_block *b);

/* Frees s and its blocks; returns NULL.  NULL is a no-op. */
struct spmv_split *spmv_split_free(struct spmv_split *s);

/* What the split costs: the entries of x that move (the sum of the halos)
 * and the entries multiplied against a halo (the remote parts' nnz). */
int64_t spmv_split_halo_total(const struct spmv_split *s);
int64_t spmv_split_remote_nnz(const struct spmv_split *s);

/*
 * y = A x the way the devices do it, in double on the host: each block's
 * halo gathered from the senders' x entries through their send lists, then
 * y_own = local x_own + remote x_halo.  The reference of the split's tests
 * and of a backend that runs blocks on the host.  scratch holds at least
 * the largest nhalo doubles.
 */
void spmv_split_ref(const struct spmv_split *s, const double *x, double *y,
                    double *scratch);

/* --- the planner (spmv_split_plan.c) --- */

/* What one block of a split holds, counted without building it. */
struct spmv_split_shape {
  int64_t rows, local_nnz, remote_nnz, halo;
};

/*
 * Fills shape[0 .. n) for A (square, valid) cut at spmv_split_bounds(A, n).
 * Returns 0, SPMV_EINVAL (as spmv_split_new) or SPMV_ENOMEM, with err set.
 */
int spmv_split_measure(const struct spmv_csr *A, int n,
                       struct spmv_split_shape *shape,
                       struct spmv_error *err);

/* A device set's facts, as the planner's model reads them; the same for
 * every device of the set. */
struct spmv_split_costs {
  double dram_gbs;      /* a device's memory bandwidth (GB/s) */
  double l2_gbs;        /* its bandwidth on a working set within its L2 */
  uint64_t l2_bytes;
  double link_gbs;      /* what one device receives through its links */
  double exchange_us;   /* a halo exchange's fixed cost (the collective's
                           latency and synchronisation) */
  double launch_us;     /* a kernel launch's */
  int value_bytes;      /* 8 (f64) or 4 (f32) */
};

/*
 * The model's time of one product in microseconds: bytes moved over the
 * bandwidth their working set gets (the L2's within 90 % of it), plus the
 * launches.  Unsplit: A's CSR, x and y.  Split: each block's local product
 * overlapped with its halo's exchange (packing, the fixed cost, the halo's
 * bytes over the link), then its remote product; the slowest block.
 */
double spmv_split_predict_one(const struct spmv_csr *A,
                              const struct spmv_split_costs *c);
double spmv_split_predict(const struct spmv_split_shape *shape, int n,
                          const struct spmv_split_costs *c);

/*
 * The planner: the number of blocks in 2 .. max_blocks with the largest
 * predicted gain over one device, if that gain is at least min_gain, else
 * 1 (also for a matrix that is not square, or max_blocks < 2).  *gain, when
 * not NULL, gets the chosen split's predicted gain (1 for none).  Returns
 * the number of blocks, or SPMV_ENOMEM with err set.
 */
int spmv_split_choose(const struct spmv_csr *A, int max_blocks,
                      const struct spmv_split_costs *c, double min_gain,
                      double *gain, struct spmv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_SPLIT_H */
