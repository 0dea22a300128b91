/* eval_store.h: timing for the tuner evaluation: a backend's own ops, or
 * resident layouts shared by the configurations that differ only in launch
 * shape, converted ahead on host threads. */
#ifndef EVAL_STORE_H
#define EVAL_STORE_H

#include <stddef.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmvd_backend.h"
#include "spmvd_predict.h"
#include "spmvd_tuner.h"

/*
 * Modes:
 *  - "cpu": the cpu backend's load / time / unload, exactly as the worker
 *    runs them (every candidate converted at its load);
 *  - "cuda": the kernels of the cuda backend (spmv_dev_matrix_new,
 *    spmv_dev_spmv, timed with CUDA events like the backend's time()), but
 *    each layout is converted once, ahead, on host threads, kept resident
 *    while device memory allows, and retargeted (bs, csr-vector's TPR) for
 *    every configuration that shares it; the cuda backend itself serves
 *    the cache-hit measurement;
 *  - "ref": the "cuda" mode's logic over the CPU reference products of the
 *    layouts (spmv_layout_spmv), so that it is tested without a GPU.
 */
struct eval_store;

/* Opens a store of mode "cpu", "cuda" or "ref"; *out is owned by the
 * caller (eval_store_close).  SPMV_ENODEV without CUDA for "cuda". */
int eval_store_open(const char *mode, struct eval_store **out,
                    struct spmv_error *err);

/* Releases everything the store holds (NULL is a no-op). */
void eval_store_close(struct eval_store *s);

/* The device as the tuner sees it (borrowed, valid until close). */
const struct spmvd_device_info *eval_store_info(const struct eval_store *s);

/* Makes A (borrowed until the next call or close) with values dt the
 * matrix the race ops time; frees what was resident for the previous one.
 * A NULL releases everything. */
int eval_store_matrix(struct eval_store *s, const struct spmv_csr *A,
                      enum spmv_dtype dt, struct spmv_error *err);

/* Announces the loads to come, in order (c borrowed): their layouts are
 * converted ahead.  A no-op in "cpu" mode. */
void eval_store_prefetch(struct eval_store *s,
                         const struct spmvd_candidates *c);

/* Reorders c so that the configurations sharing a layout are adjacent
 * (each layout is then converted and uploaded once). */
void eval_store_group(struct spmvd_candidates *c);

/* The race callbacks; ctx is the store. */
extern const struct spmvd_race_ops eval_store_race_ops;

/* A spmvd_calib_ops.time callback (ctx is the store): loads A as cfg,
 * times it (2 warm-up runs, median of 10) and leaves it; the points of
 * plan (borrowed, set with eval_store_calib_plan) are prefetched per
 * matrix. */
int eval_store_calib_time(void *ctx, const struct spmv_csr *A,
                          enum spmv_dtype dt, const struct spmv_config *cfg,
                          double *us, struct spmv_error *err);

/* The time of A as cfg as the daemon's worker takes it (and its
 * calibration took every point): loaded through the backend, rounds
 * timings of 2 warm-up runs and the median of 10, unloaded; each round's
 * time in each[0 .. rounds) unless each is NULL, *us their median (at
 * most 9 rounds).  Returns 0 or a negative code. */
int eval_store_worker_time(struct eval_store *s, const struct spmv_csr *A,
                           enum spmv_dtype dt, const struct spmv_config *cfg,
                           int rounds, double *each, double *us,
                           struct spmv_error *err);

/* Tells the store the calibration plan that eval_store_calib_time follows
 * (borrowed until the calibration ends; NULL to forget it). */
void eval_store_calib_plan(struct eval_store *s,
                           const struct spmvd_calib_plan *plan);

/* With on set, eval_store_calib_time times each point as the daemon's
 * worker does: a load, the backend's timer and an unload per point
 * (spmvd_calib_backend_time), no resident layouts and no prefetch. */
void eval_store_calib_direct(struct eval_store *s, int on);

/* Frees every resident layout and holds a device allocation of bytes (0:
 * none) ahead of the next loads, so that their arrays land elsewhere:
 * eval_tuner --probe-pads asks whether a layout's time depends on where
 * its arrays lie.  Returns 0 or an error code. */
int eval_store_probe_pad(struct eval_store *s, size_t bytes,
                         struct spmv_error *err);

/* A cache hit as the worker serves it, in microseconds. */
struct eval_cache_hit {
  double load_us;          /* conversion and upload of the configuration */
  double first_kernel_us;  /* the first product after the upload, on the
                              device (backend time, no warm-up, one run) */
  double next_kernel_us[2]; /* the second and third such single runs: how
                               fast the first-run excess decays */
  double first_product_us; /* the first product with host vectors (x in,
                              y out), what the worker's check runs */
  double product_us;       /* the next product with host vectors */
  double kernel_us;        /* steady product on the device: median of 10
                              after 2 warm-up runs */
  int verified;            /* 1 when the first product matched spmv_csr_ref */
  double resid;            /* its scaled residual */
};

/*
 * Loads the current matrix as cfg through the backend (as a cache hit
 * does: conversion, upload), runs the products of struct eval_cache_hit in
 * that order, checks the first against spmv_csr_ref and unloads.  Frees
 * the resident layouts first.  Returns 0 or a negative SPMV_E* code.
 */
int eval_store_cache_hit(struct eval_store *s, const struct spmv_config *cfg,
                         struct eval_cache_hit *out, struct spmv_error *err);

#endif /* EVAL_STORE_H */
