/* gpu_common.h: what the GPU tests and benchmarks share: device probe, configurations, matrix list. */
#ifndef GPU_COMMON_H
#define GPU_COMMON_H

#include "spmv_csr.h"
#include "spmv_formats.h"

/*
 * Returns 1 when a CUDA device is present.  The probe runs in a child
 * process, so that the caller has not initialized CUDA before check forks
 * its tests.
 */
int gpu_present(void);

/*
 * A GPU probe's set-up on device 0: its name into name (cap bytes), a
 * non-blocking stream, freed device memory kept for reuse
 * (spmv_dev_pool_keep), a timer and a cuSPARSE handle on the stream.
 * Returns 0, 77 when there is no CUDA device, or 1 after naming the
 * failure on stderr after prog.  The stream, timer and handle are the
 * caller's.
 */
struct spmv_dev_timer;
struct spmv_cusparse_handle;
int gpu_probe_setup(const char *prog, char *name, size_t cap, void **stream,
                    struct spmv_dev_timer **tm, struct spmv_cusparse_handle **cs);

/*
 * Fills out[0 .. cap) with the configurations the tuner would try: every
 * format, BS in {64, 128, 256, 512}, TPR / T in {1, 2, 4, 8, 16, 32} where
 * the format has one, csr-adaptive's (max TPR, base) pairs, sell's
 * (C, sigma) and hyb's K choices, csr-panel's (TPR, width) pairs (and BS
 * 1024 once, with the BS 512 ones),
 * cusparse ALG1 and ALG2, its sliced ELL and its BSR (which refuses a
 * matrix without blocks that fit).  bs_mask keeps
 * the block sizes whose bit is set (1 = 64, 2 = 128, 4 = 256, 8 = 512;
 * 0 = all).  Returns the count.
 */
int gpu_configs(struct spmv_config *out, int cap, unsigned bs_mask);

/*
 * One configuration per format (cusparse with its four algorithms), as the
 * large GPU test and bench_load take them: *out points at a static
 * array; returns its length.
 */
int gpu_format_samples(const struct spmv_config **out);

/*
 * Lists the .mtx and .mtx.gz files of the matrix folder (tests/testdata.h:
 * $SPMV_MATRICES, else tests/data/matrices), sorted by name.  *paths is a new array of new
 * strings, freed by gpu_paths_free().  Returns the count, or -1 when the
 * folder cannot be read.
 */
int gpu_matrix_paths(char ***paths);
void gpu_paths_free(char **paths, int n);

/* Fills x[0 .. n) with values in +-[0.5, 1.5), never 0, exact in float. */
void gpu_random_vector(double *x, int64_t n, uint64_t seed);

/*
 * How far a row of len entries computed in type dt may lie from its
 * double reference: 4 eps (len + 4) times mag, the sum of the magnitudes
 * of the terms the product adds (|alpha| sum |a_ij x_j| + |beta y_i|),
 * plus 2 (len + 2) of the type's smallest subnormal, the most a rounding
 * below the normal range loses whatever the sum's size.
 */
double gpu_row_tol(enum spmv_dtype dt, int64_t len, double mag);

/*
 * The double reference of y = A x: ref[i] and mag[i] = sum |a_ij x_j|
 * (both rows long, owned by the caller).
 */
void gpu_reference(const struct spmv_csr *A, const double *x, double *ref,
                   double *mag);

/*
 * Checks y (rows of type dt) against ref within gpu_row_tol of mag: the
 * rows i = phase (mod stride), every row when stride is 1.  Returns how
 * many are out (NaN included); *first the first of them, or -1.
 */
int64_t gpu_check_rows(const struct spmv_csr *A, enum spmv_dtype dt,
                       const void *y, const double *ref, const double *mag,
                       int64_t stride, int64_t phase, int64_t *first);

/*
 * One product y = A x of d (values of type dt) on stream, through graph
 * g (NULL: launched directly), into dy, which is poisoned first so that
 * a product that writes nothing fails; y copied into hy (rows values)
 * and checked as gpu_check_rows() checks every row against ref and mag
 * (gpu_reference of A and the x in dx).  Returns the rows out of
 * tolerance (*first the first, or -1), or -1 with err set when the
 * product could not run.
 */
struct spmv_dev_graph;
struct spmv_dev_matrix;
struct spmv_error;
int64_t gpu_product_check(const struct spmv_csr *A, enum spmv_dtype dt,
                          struct spmv_dev_graph *g, const struct spmv_dev_matrix *d,
                          const void *dx, void *dy, void *hy, void *stream,
                          const double *ref, const double *mag, int64_t *first,
                          struct spmv_error *err);

#endif /* GPU_COMMON_H */
