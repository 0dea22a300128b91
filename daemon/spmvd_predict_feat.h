/* spmvd_predict_feat.h: what the work model sees of a matrix: its
 * features, and their columns in a table of calibration points. */
#ifndef SPMVD_PREDICT_FEAT_H
#define SPMVD_PREDICT_FEAT_H

#include <stddef.h>

#include "spmv_csr.h"
#include "spmv_formats.h"
#include "spmv_profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPMVD_FEAT_BLOCK 256   /* rows of a block in w_block: the calibrated
                                  csr-scalar's */

/*
 * What the work model sees of a matrix beyond the paper's two numbers,
 * from its row lengths and columns (O(nnz), no allocation); entries are
 * counted as a kernel of each kind steps through them.
 */
struct spmvd_pfeat {
  double rows, nnz;
  double rl_max;     /* the longest row: a thread-per-row kernel's path */
  double w_warp;     /* sum over 32-row groups of 32 x their longest row:
                        the entries a thread per row steps through */
  double w_sell;     /* the same after sorting rows by length in windows
                        of 256 (sell's sigma) */
  double w_ell;      /* rows x rl_max: ELL's padded entries */
  double w_vec;      /* sum over warps of 32 x the most 16-entry steps of
                        its two rows: csr-vector at TPR 16 */
  double hyb_k;      /* HYB's ELL width: its ELL kernel's path */
  double w_hyb;      /* rows x hyb_k: HYB's ELL part, padded */
  double hyb_coo;    /* entries beyond HYB's ELL width (its COO part) */
  double sectors;    /* sum over rows of the 32-byte sectors of x a row's
                        columns fall in (dt's width): x's gather traffic */
  double sectors_jad; /* x's sectors along jad's warps: rows sorted by
                        length (ties in row order), 32 to a warp; at each
                        step a new one for each lane whose sector differs
                        from the lane before it */
  double path_x;     /* x's sectors along the longest warp of rows in row
                        order, counted as sectors_jad counts a warp: what
                        a thread-per-row launch of few warps waits on */
  double path_x_jad; /* the same along jad's first (longest) warp */
  double path_m;     /* the sectors of the entries that path_x's warp
                        loads, counted the same way */
  double x_warp;     /* x's distinct sectors per warp of 32 rows in row
                        order, summed over the warps: the x a warp of a
                        thread per row keeps in its SM's L1 at once */
  double x_warp_jad; /* the same along jad's warps (rows by length) */
  double w_stream;   /* csr-stream's sums (bs 128, k 4): over its row
                        blocks, the steps of each block's slowest warp */
  double path_stream; /* the most such steps of one block */
  double path_rounds; /* the most rounds of sums of one such block: its
                        rows over the groups of lanes that sum them */
  double w_block;    /* the most of w_warp one block of SPMVD_FEAT_BLOCK
                        rows holds: csr-scalar's heaviest block */
  double empty;      /* empty rows */
  double bytes;      /* the CSR's footprint with dt's values: values and
                        columns, row offsets, x and y */
};

/* The footprint of a rows x cols CSR of nnz entries with dt's values, as
 * spmvd_pfeat.bytes counts it: values and 32-bit columns, 64-bit row
 * offsets, x and y. */
double spmvd_predict_footprint(double rows, double cols, double nnz,
                               enum spmv_dtype dt);

/* A feature's column in a table of calibration points: its name and its
 * place in struct spmvd_pfeat. */
struct spmvd_pfeat_column {
  const char *name;
  size_t offset;
};

/* The features a table of calibration points lists, in its column order
 * (calib_points, and the calibrate op's points events that spmvctl
 * calibrate --points writes): every feature but bytes and hyb_k, which
 * a replay derives (spmvd_predict_footprint, w_hyb / rows). */
#define SPMVD_PFEAT_NCOLUMNS 21
extern const struct spmvd_pfeat_column spmvd_pfeat_columns[SPMVD_PFEAT_NCOLUMNS];

/* Feature i of spmvd_pfeat_columns in f. */
double spmvd_pfeat_value(const struct spmvd_pfeat *f, int i);

/* Sets feature i of spmvd_pfeat_columns in f to v. */
void spmvd_pfeat_set(struct spmvd_pfeat *f, int i, double v);

/* Computes the features of A (borrowed; its profile prof) for values dt
 * into out. */
void spmvd_predict_features(const struct spmv_csr *A,
                            const struct spmv_profile *prof,
                            enum spmv_dtype dt, struct spmvd_pfeat *out);

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_PREDICT_FEAT_H */
