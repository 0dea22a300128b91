/* gpu_common.h: what the GPU tests and benchmarks share: device probe, configurations, matrix list. */
#ifndef GPU_COMMON_H
#define GPU_COMMON_H

#include "spmv_formats.h"

/*
 * Returns 1 when a CUDA device is present.  The probe runs in a child
 * process, so that the caller has not initialized CUDA before check forks
 * its tests.
 */
int gpu_present(void);

/*
 * Fills out[0 .. cap) with the configurations the tuner would try: every
 * format, BS in {64, 128, 256, 512}, TPR / T in {1, 2, 4, 8, 16, 32} where
 * the format has one, csr-adaptive's (max TPR, base) pairs, sell's
 * (C, sigma) and hyb's K choices, csr-panel's (TPR, width) pairs (and BS
 * 1024 once, with the BS 512 ones),
 * cusparse ALG1 and ALG2.  bs_mask keeps
 * the block sizes whose bit is set (1 = 64, 2 = 128, 4 = 256, 8 = 512;
 * 0 = all).  Returns the count.
 */
int gpu_configs(struct spmv_config *out, int cap, unsigned bs_mask);

/*
 * One configuration per format (cusparse with both algorithms), as the
 * large GPU test and bench_load take them: *out points at a static
 * array; returns its length.
 */
int gpu_format_samples(const struct spmv_config **out);

/*
 * Lists the .mtx and .mtx.gz files of $SPMV_MATRICES (default
 * ../shared/matrices), sorted by name.  *paths is a new array of new
 * strings, freed by gpu_paths_free().  Returns the count, or -1 when the
 * folder cannot be read.
 */
int gpu_matrix_paths(char ***paths);
void gpu_paths_free(char **paths, int n);

/* Fills x[0 .. n) with values in +-[0.5, 1.5), never 0, exact in float. */
void gpu_random_vector(double *x, int64_t n, uint64_t seed);

#endif /* GPU_COMMON_H */
