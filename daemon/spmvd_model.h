/* spmvd_model.h: the ELLR-T analytical model (Vázquez et al., Eq. 1-4). */
#ifndef SPMVD_MODEL_H
#define SPMVD_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmvd_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The model needs only the row lengths and five numbers of the GPU, so it
 * answers for any GPU, including ones we do not have (the ELLR-T model
 * of Vázquez, Fernández and Garzón):
 *  - ceil(N*T/BS) blocks of BS/T consecutive rows, block b on SM b mod n;
 *  - a warp covers ws/T rows and costs MAX1 + MAX2, the largest
 *    ceil(rl/T) among the rows of its first and of its second half-warp
 *    (a row of T > ws/2 threads spans both halves and costs each of them);
 *  - M(rl, BS, T) = max over SMs of the sum of its warps' costs;
 *  - BS ranges over the multiples of ws up to the per-block limit that
 *    reach full occupancy: min(max_blocks_per_sm, floor(max_threads_per_sm
 *    / BS)) * BS == max_threads_per_sm; T over 1, 2, 4, ... up to
 *    min(32, ws); the pick minimises M, ties to the smaller BS, then to
 *    the smaller T.
 */

/* The GPU as the model sees it. */
struct spmvd_model_gpu {
  int sms;                    /* n */
  int warp_size;              /* ws, even, >= 2 */
  int max_threads_per_sm;
  int max_blocks_per_sm;
  int max_threads_per_block;
};

/* Copies the model's five numbers from a device description. */
void spmvd_model_gpu_from_device(struct spmvd_model_gpu *g,
                                 const struct spmvd_device_info *dev);

/* Checks g; returns 0 or SPMV_EINVAL naming the bad field. */
int spmvd_model_gpu_check(const struct spmvd_model_gpu *g,
                          struct spmv_error *err);

#define SPMVD_MODEL_MAX_BS 64  /* BS values at most (1024 / 32 = 32 today) */
#define SPMVD_MODEL_MAX_T 8    /* T = 1 .. 32: six values */

/* The whole M(BS, T) grid and its minimum.  Caller's storage. */
struct spmvd_model_grid {
  struct spmvd_model_gpu gpu;
  int64_t rows, nnz;
  int nbs, nt;
  int bs[SPMVD_MODEL_MAX_BS];            /* ascending */
  int t[SPMVD_MODEL_MAX_T];              /* ascending */
  int64_t m[SPMVD_MODEL_MAX_BS][SPMVD_MODEL_MAX_T]; /* M(rl, bs[i], t[j]) */
  int best_i, best_j;                    /* the pick: bs[best_i], t[best_j] */
};

/*
 * M(rl, BS, T) for rows row lengths given as CSR row offsets (row_ptr,
 * rows + 1 entries, borrowed).  O(rows + n) time.  Returns M >= 0, or a
 * negative SPMV_E* code (SPMV_EINVAL for a bad BS, T or GPU; SPMV_ENOMEM).
 */
int64_t spmvd_model_cost(const int64_t *row_ptr, int64_t rows,
                         const struct spmvd_model_gpu *g, int bs, int t,
                         struct spmv_error *err);

/*
 * Fills the whole grid (out, caller's storage) for A's row lengths (A
 * borrowed; only row_ptr is read) on GPU g, and its pick.  One pass over
 * the rows per T (a warp's cost does not depend on BS), every BS at once:
 * O(rows * (1 + nbs * T / ws)) in all.  Returns 0 or a negative SPMV_E* code.
 */
int spmvd_model_grid_compute(const struct spmv_csr *A,
                             const struct spmvd_model_gpu *g,
                             struct spmvd_model_grid *out,
                             struct spmv_error *err);

/* Writes the grid's pick as an ellr-t configuration into cfg. */
void spmvd_model_pick(const struct spmvd_model_grid *grid,
                      struct spmv_config *cfg);

/*
 * Ranks the grid: for each T its best BS, then these pairs ordered by M
 * (ties: smaller BS, then smaller T); writes at most max ellr-t
 * configurations to out (caller's storage) and returns how many.  out[0]
 * is the pick.
 */
int spmvd_model_ranked(const struct spmvd_model_grid *grid,
                       struct spmv_config *out, int max);

/*
 * The grid as JSON for `spmvctl model --json`: a new reference to
 * {gpu:{sms, warp_size, max_threads_per_sm, max_blocks_per_sm,
 *  max_threads_per_block}, rows, nnz, bs:[...], t:[...],
 *  m:[[M for each t] for each bs], pick:{bs, t, m, config:"ellr-t bs=256 t=4"}},
 * or NULL when out of memory.
 */
json_t *spmvd_model_report_json(const struct spmvd_model_grid *grid);

/* Prints the grid as a table (BS down, T across, the pick marked) to f. */
void spmvd_model_report_print(const struct spmvd_model_grid *grid, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_MODEL_H */
