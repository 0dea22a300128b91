/* spmv_gen.h: deterministic matrix generators for tests and benchmarks. */
#ifndef SPMV_GEN_H
#define SPMV_GEN_H

#include <stdint.h>

#include "spmv_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every generator is a pure function of its arguments and seed (its own
 * xoshiro256** stream, never rand()), so the same call gives the same
 * matrix, bit for bit, on every machine.  Each returns a new CSR owned by
 * the caller (free it with spmv_csr_free()), valid for spmv_csr_validate(),
 * with the columns of every row sorted ascending and distinct; or NULL with
 * err set to SPMV_EINVAL (bad argument, named in the message), SPMV_ETOOBIG
 * (more than 2^31 - 1 rows or columns) or SPMV_ENOMEM.  Values are uniform
 * in [-1, 1) and never exactly 0, except where a function says otherwise.
 * Work is O(rows + nnz) and memory little more than the result's arrays
 * (R-MAT stores no edge list: it draws its edges twice from one stream).
 */

/*
 * 2D grid nx x ny, rows ordered x fastest, points = 5 or 9: the Laplacian
 * with Dirichlet boundary (diagonal points - 1, neighbours -1).
 */
struct spmv_csr *spmv_gen_stencil2d(int64_t nx, int64_t ny, int points,
                                    struct spmv_error *err);

/* 3D grid nx x ny x nz, points = 7 or 27: the Laplacian as above. */
struct spmv_csr *spmv_gen_stencil3d(int64_t nx, int64_t ny, int64_t nz,
                                    int points, struct spmv_error *err);

/*
 * n x n banded: row i holds min(w, window) distinct random columns of the
 * window [i - b, i + b] clipped to [0, n); needs 1 <= w <= 2b + 1.
 */
struct spmv_csr *spmv_gen_banded(int64_t n, int64_t w, int64_t b,
                                 uint64_t seed, struct spmv_error *err);

/* rows x cols with k distinct uniformly random columns in every row. */
struct spmv_csr *spmv_gen_random(int64_t rows, int64_t cols, int64_t k,
                                 uint64_t seed, struct spmv_error *err);

/*
 * rows x cols whose rows all hold the same k random columns: a dense
 * rows x k block scattered over the columns (k = cols: a dense matrix).
 */
struct spmv_csr *spmv_gen_dense(int64_t rows, int64_t cols, int64_t k,
                                uint64_t seed, struct spmv_error *err);

/* The Graph500 Kronecker initiator (A, B, C; D = 1 - A - B - C). */
#define SPMV_GEN_RMAT_A 0.57
#define SPMV_GEN_RMAT_B 0.19
#define SPMV_GEN_RMAT_C 0.19

/*
 * R-MAT / Kronecker graph as Graph500 generates it: 2^scale vertices,
 * edgefactor * 2^scale edges, each placed bit by bit in quadrant A, B, C or
 * D, then vertex labels permuted at random (by a seeded bijection).
 * Duplicate edges are merged (so nnz <= edgefactor * 2^scale, twice that
 * when symmetric); self loops are kept.  symmetric != 0 stores every edge
 * both ways, as Graph500's undirected graph.
 * 1 <= scale <= 30; a, b, c >= 0 with a + b + c <= 1.
 */
struct spmv_csr *spmv_gen_rmat(int scale, int64_t edgefactor, double a,
                               double b, double c, int symmetric,
                               uint64_t seed, struct spmv_error *err);

/*
 * Power-law row lengths: rows x cols, row length floor(xmin * U^(-1/alpha))
 * (Pareto with shape alpha > 0, minimum xmin >= 1) capped at cols, columns
 * uniformly random.
 */
struct spmv_csr *spmv_gen_pareto(int64_t rows, int64_t cols, double xmin,
                                 double alpha, uint64_t seed,
                                 struct spmv_error *err);

/* The matrix ibm dc1 (Gropp & Guo): 116835 rows of 6.6 on average with two
 * rows of 47193 and 114190 entries.  With these, spmv_gen_dc1like() gives
 * matrices of the same statistics. */
#define SPMV_GEN_DC1_ROWS 116835
#define SPMV_GEN_DC1_LAMBDA 4.22
#define SPMV_GEN_DC1_NLONG 2
#define SPMV_GEN_DC1_LONG { 47193, 114190 }

/*
 * n x n with short rows of 1 + Poisson(lambda) entries (the diagonal plus
 * random columns) and nlong extremely long rows of long_len[0 .. nlong)
 * entries (each <= n) at random positions.  Borrows long_len.
 */
struct spmv_csr *spmv_gen_dc1like(int64_t n, double lambda, int64_t nlong,
                                  const int64_t *long_len, uint64_t seed,
                                  struct spmv_error *err);

/* Row-length distributions of spmv_gen_matching(). */
enum spmv_gen_dist {
  SPMV_GEN_NORMAL = 0,    /* normal(mean, cv * mean), rounded, clipped */
  SPMV_GEN_UNIFORM = 1,   /* uniform integers on mean +- sqrt(3) * cv * mean */
  SPMV_GEN_LOGNORMAL = 2  /* log-normal of that mean and cv: reaches any cv */
};

/* Where spmv_gen_matching() puts a row's columns. */
enum spmv_gen_place {
  SPMV_GEN_RANDOM = 0,   /* uniformly over all columns */
  SPMV_GEN_DIAGONAL = 1  /* in a window of about twice the row length around
                            the diagonal position i * cols / rows */
};

/* The words spmv_gen_from_text() reads for them: "normal", "uniform",
 * "lognormal"; "random", "diagonal" ("?" out of range). */
const char *spmv_gen_dist_name(enum spmv_gen_dist d);
const char *spmv_gen_place_name(enum spmv_gen_place p);

/* Statistics to match: e.g. a matrix of the ELLR-T paper's Table 1, or one
 * of the statistical predictor's calibration matrices (R rows of mean P). */
struct spmv_gen_spec {
  int64_t rows;
  int64_t cols;              /* 0: square */
  double mean;               /* mean row length, 0 <= mean <= cols */
  double cv;                 /* sigma / mean, >= 0 */
  enum spmv_gen_dist dist;
  enum spmv_gen_place place;
};

/*
 * A matrix with the given statistics.  The total nnz is exactly
 * round(rows * mean) (lengths are nudged by one where needed); sigma / mean
 * follows cv as far as the distribution and the bounds [0, cols] allow.
 * Borrows spec.
 */
struct spmv_csr *spmv_gen_matching(const struct spmv_gen_spec *spec,
                                   uint64_t seed, struct spmv_error *err);

/*
 * Grows a real matrix: k copies of A along the diagonal, cut into blocks of
 * block_rows rows (0: A's rows, i.e. whole copies) whose order is permuted
 * by the seed.  A block moved to row r keeps its values, and its columns
 * are shifted by the distance between its old and new diagonal positions
 * (modulo k * A->cols), so each row keeps its pattern relative to the
 * diagonal.  The result is (k * rows) x (k * cols).  Borrows A, which must
 * be valid.
 */
struct spmv_csr *spmv_gen_tile(const struct spmv_csr *A, int64_t k,
                               int64_t block_rows, uint64_t seed,
                               struct spmv_error *err);

/*
 * A block-structured matrix, as finite elements of b unknowns per node
 * make: each entry (i, j) of P a dense b x b block at rows i*b .. i*b+b-1
 * and columns j*b .. j*b+b-1, with values from seed (P's are not kept).
 * The result is (b * rows) x (b * cols), its rows' columns sorted.
 * Borrows P, which must be valid.
 */
struct spmv_csr *spmv_gen_blocks(const struct spmv_csr *P, int64_t b,
                                 uint64_t seed, struct spmv_error *err);

/*
 * Builds a matrix from a one-line description, for command lines and
 * benchmark lists; keys may come in any order, missing ones take the
 * defaults in brackets:
 *   stencil2d nx=N ny=N [points=5]        stencil3d nx=N ny=N nz=N [points=7]
 *   banded n=N w=N b=N                    random rows=N [cols=rows] k=N
 *   dense rows=N [cols=rows] k=N          rmat scale=N [ef=16] [sym=0]
 *   pareto rows=N [cols=rows] [xmin=1] alpha=X
 *   dc1like [n=116835] [lambda=4.22] [long=47193,114190]
 *   matching rows=N [cols=rows] mean=X [cv=0] [dist=normal|uniform|lognormal]
 *            [place=random|diagonal]
 * A bad token is named in err (SPMV_EINVAL).  Returns a new CSR or NULL.
 */
struct spmv_csr *spmv_gen_from_text(const char *text, uint64_t seed,
                                    struct spmv_error *err);

/* Overwrites A's values with uniform values in [-1, 1) \ {0} from seed. */
void spmv_gen_fill_values(struct spmv_csr *A, uint64_t seed);

/* Fills x[0 .. n) with uniform values in [-1, 1) \ {0} from seed. */
void spmv_gen_vector(double *x, int64_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_GEN_H */
