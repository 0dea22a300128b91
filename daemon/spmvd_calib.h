/* spmvd_calib.h: the predictor's calibration: the plan of synthetic
 * matrices and configurations, the run that times them through a
 * backend, and the fits made of them (spmvd_predict.h). */
#ifndef SPMVD_CALIB_H
#define SPMVD_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmv_gen.h"
#include "spmv_profile.h"
#include "spmvd_backend.h"
#include "spmvd_predict_feat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds of a calibration, so it ends in a few minutes on a GPU. */
struct spmvd_calib_params {
  int64_t max_nnz_matrix;  /* nnz of one calibration matrix (32M) */
  int64_t max_nnz_total;   /* sum of the matrices' nnz (480M) */
  double cv;               /* sigma / mean of the row lengths (0.25) */
  uint64_t seed;           /* generator seed (1) */
  int64_t work_nnz;        /* nnz of the work part's every shape (240M;
                              at most half of max_nnz_total), and half
                              as much again for its FEM shape's larger
                              matrices */
  int64_t mid_nnz;         /* nnz of the mid part (160M; spmvd_calib.c),
                              after the work part, at most a third of
                              max_nnz_total; 0: none */
};

/* Fills p with the defaults written above. */
void spmvd_calib_params_default(struct spmvd_calib_params *p);

/* One timing of the plan: a configuration on a synthetic matrix. */
struct spmvd_calib_point {
  struct spmv_config cfg;
  int64_t rows;            /* R = S * I, rounded */
  double strips;           /* I, a real number of strips (0.1 .. 32) */
  int i;                   /* I rounded up: the paper's whole strips */
  int p;                   /* P, the mean row length */
  enum spmv_gen_dist dist; /* SPMV_GEN_NORMAL, _UNIFORM or _LOGNORMAL */
  double cv;               /* sigma / mean of the row lengths */
  enum spmv_gen_place place; /* where a row's columns lie */
  int work;                /* 1: of the work part (not the paper's grid) */
  int shape;               /* the work part's shape, 0 .. SPMVD_CALIB_SHAPES
                              - 1; -1 on the paper's grid */
  struct spmvd_pfeat feat; /* the matrix's features, filled by the run */
  int matrix;              /* points of one matrix share this index */
  double time_us;          /* filled by the calibration; 0 = not timed */
  int ok;                  /* 1 once timed successfully */
};

/*
 * The plan.  csr-vector (tpr 16) first, within a quarter of
 * max_nnz_total: the P sweep (4..1024) at I = 1 and the I sweep (0.1..32)
 * at P = 16.  Then the thread-per-row formats (csr-scalar, ell, ellr-t
 * t=1, jad, coo, hyb, sell, csr-adaptive, csr-merge, csr-stream bs=128
 * k=4, and cusparse ALG2 on cuda), which share each matrix: I in {0.1,
 * 0.25, 0.5, 1} over P in {4, 8, ..., 1024}, then I in {2, 4, 8, 16}.
 * Each part admits first the least its fit needs (csr-vector P 4 and 8,
 * I 0.1 and 0.25; the others I 0.1 and 0.25 at P 4 and 8), so that a
 * plan cut to 3M nonzeros or more still fits every format.  I is a real
 * number of strips (R = S * I rounded).  Both distributions everywhere.
 * A matrix over max_nnz_matrix is left out, and so is every matrix that
 * would pass max_nnz_total.
 * On an H100/H200 (132 SMs, 2048 threads per SM) this paper part gives 98
 * matrices, 491M nnz: csr-vector P 4..1024 at I = 1 and I 0.1..32 at
 * P = 16; the others P 4..1024 at I = 0.1, up to 256 at 0.25, 128 at 0.5,
 * 64 at 1, then I = 2, 4, 8, 16 at P = 4 and (2, 8).  Then the work part
 * (spmvd_calib.c: eight shapes of row lengths and columns, 0.0001 to 4
 * strips, P 2 to 1024, smallest first) under every configuration, within
 * work_nnz and half of max_nnz_total, then half as much again for the
 * FEM shape's larger matrices: 448 matrices and 5376 timings of the 6114
 * there.  Only the work model uses the work part.
 */
struct spmvd_calib_plan {
  size_t n;
  struct spmvd_calib_point *pt;  /* n points, grouped by matrix; owned */
  int nmatrices;
  int64_t total_nnz;             /* sum over matrices */
  enum spmv_dtype dtype;
  size_t skipped;                /* points a time bound left untimed (run) */
};

/*
 * Makes the plan for device dev and value type dt (p may be NULL:
 * defaults).  On success *out is a new plan owned by the caller, freed
 * with spmvd_calib_plan_free().  Returns 0 or a negative SPMV_E* code.
 */
int spmvd_calib_plan_new(const struct spmvd_device_info *dev,
                         enum spmv_dtype dt,
                         const struct spmvd_calib_params *p,
                         struct spmvd_calib_plan **out,
                         struct spmv_error *err);

/* Frees a plan (NULL is a no-op); returns NULL. */
struct spmvd_calib_plan *spmvd_calib_plan_free(struct spmvd_calib_plan *plan);

/* What the calibration needs from the device worker; ctx passed back. */
struct spmvd_calib_ops {
  /* Loads A (borrowed) as cfg with values dt, times it (warm-up, then the
   * median of repeated runs) into *us, and unloads it.  cfg is the plan
   * point's own (&pt->cfg: spmvd_calib_point_of finds the point). */
  int (*time)(void *ctx, const struct spmv_csr *A, enum spmv_dtype dt,
              const struct spmv_config *cfg, double *us,
              struct spmv_error *err);
  /* Called after each point (done of total); may be NULL.  pt borrowed. */
  void (*progress)(void *ctx, int done, int total,
                   const struct spmvd_calib_point *pt);
};

/* The work part's shapes of row lengths and column placement. */
#define SPMVD_CALIB_SHAPES 8

/* A work-part point of shape (0 .. SPMVD_CALIB_SHAPES - 1) with rows rows
 * of mean length p, configuration and matrix index zeroed: what a
 * calibration's probe times to learn what each shape costs. */
void spmvd_calib_shape_point(int shape, int64_t rows, int p,
                             struct spmvd_calib_point *out);

/* The matrix of point pt (p may be NULL: defaults), the same on every
 * machine; a new CSR owned by the caller, or NULL with err set. */
struct spmv_csr *spmvd_calib_matrix(const struct spmvd_calib_point *pt,
                                    const struct spmvd_calib_params *p,
                                    struct spmv_error *err);

/*
 * The fill (rows x longest row / nonzeros) past which ell and ellr-t are
 * not timed in a calibration.  The few points past it hold most of ell's
 * padded entries and most of the time spent converting the work part's
 * layouts, and the fits do as well without them; the tuner never takes
 * ell past fill 3.
 */
#define SPMVD_CALIB_MAX_FILL 50.0

/* Whether a calibration times configuration cfg on a matrix of profile
 * prof: not ell or ellr-t past SPMVD_CALIB_MAX_FILL. */
int spmvd_calib_applies(const struct spmv_config *cfg,
                        const struct spmv_profile *prof);

/* The same for plan point pt once spmvd_calib_run() has filled its
 * features (pt->feat): whether the run will time it. */
int spmvd_calib_point_applies(const struct spmvd_calib_point *pt);

/* The point of plan (borrowed) whose configuration cfg is, as the run
 * hands it to spmvd_calib_ops.time, or NULL when cfg is none of them. */
const struct spmvd_calib_point *
spmvd_calib_point_of(const struct spmvd_calib_plan *plan,
                     const struct spmv_config *cfg);

/*
 * Runs the plan: generates each matrix (spmvd_calib_matrix) and times its
 * points through ops, writing time_us and ok into the plan; a point that
 * spmvd_calib_applies() refuses is left untimed and not ok.  A point whose
 * timing fails is left not ok (the fit skips it) unless the failure is
 * SPMV_EGPU_STICKY, which stops the run and is returned, or SPMV_ETIMEDOUT
 * (the caller's time bound), which ends it: that point and every later
 * one stay untimed, counted in plan->skipped, and no further matrix is
 * generated (a bound of minutes would otherwise be overrun by generating
 * matrices nobody times).  Returns 0 or a negative SPMV_E* code.
 */
int spmvd_calib_run(struct spmvd_calib_plan *plan,
                    const struct spmvd_calib_params *p,
                    const struct spmvd_calib_ops *ops, void *ctx,
                    struct spmv_error *err);

/*
 * A ready-made spmvd_calib_ops.time over a backend: ctx must point to a
 * struct spmvd_calib_backend.  Loads A as cfg, runs be_ops->time(warmup,
 * reps) and unloads.
 */
struct spmvd_calib_backend {
  const struct spmvd_backend_ops *ops;  /* borrowed */
  struct spmvd_backend *be;             /* borrowed */
  int warmup, reps;                     /* e.g. SPMVD_CALIB_WARMUP and
                                           SPMVD_CALIB_REPS */
};

/* The warm-up runs and the timed runs (their median) of a calibration
 * point as the daemon's worker times it, and of bench's named
 * configurations, which are set beside it. */
#define SPMVD_CALIB_WARMUP 2
#define SPMVD_CALIB_REPS 10

int spmvd_calib_backend_time(void *ctx, const struct spmv_csr *A,
                             enum spmv_dtype dt, const struct spmv_config *cfg,
                             double *us, struct spmv_error *err);

/* Loads that spmvd_calib_backend_time_rounds (and bench's named
 * configurations) time at most. */
#define SPMVD_CALIB_MAX_ROUNDS 9

/* The same `rounds` times (1 to SPMVD_CALIB_MAX_ROUNDS), each of its own
 * load: each round's time into each[0 .. rounds) in the order timed when
 * each is not NULL, their median into *us. */
int spmvd_calib_backend_time_rounds(struct spmvd_calib_backend *cb,
                                    const struct spmv_csr *A,
                                    enum spmv_dtype dt,
                                    const struct spmv_config *cfg, int rounds,
                                    double *each, double *us,
                                    struct spmv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_CALIB_H */
