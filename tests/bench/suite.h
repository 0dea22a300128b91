/* suite.h: the benchmark suite of issue 4 (generated families, the ELLR-T
 * paper's statistics, tiled and plain shared real matrices) and the
 * held-out suite of issue 55 (suite_heldout.h) as data. */
#ifndef BENCH_SUITE_H
#define BENCH_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_error.h"

/* Parts of the suite (bits). */
enum bench_suite_set {
  BENCH_SUITE_LARGE = 1,  /* generated and tiled, sized >= 4x a GPU's L2 */
  BENCH_SUITE_PAPER = 2,  /* the ELLR-T paper's matrices at their real size */
  BENCH_SUITE_REAL = 4,   /* every shared real matrix as it is */
  BENCH_SUITE_HELDOUT = 8 /* drawn from families with fixed seeds, split
                             into a fit and an unseen part (suite_heldout.h) */
};

/* What a matrix stresses, for the bandwidth targets of issue 4. */
enum bench_suite_kind {
  BENCH_SUITE_OTHER = 0,
  BENCH_SUITE_REGULAR = 1, /* stencils, banded */
  BENCH_SUITE_SKEWED = 2   /* power-law, dc1-like */
};

/* One matrix of the suite. */
struct bench_suite_entry {
  char name[96];
  char gen[160];        /* spmv_gen_from_text() line, "" for a file */
  char file[256];       /* a file of the matrix folder, "" when generated */
  int64_t tile_k;       /* > 1: the file tiled k times (spmv_gen_tile) */
  int64_t tile_block;   /* its block rows (0: whole copies) */
  int set;              /* one enum bench_suite_set bit */
  int kind;             /* enum bench_suite_kind */
  int quick;            /* 1: in the --quick subset (6 large matrices, the
                           paper's and every real one) */
  /* Held-out entries only (empty or 0 elsewhere): */
  char family[16];      /* the family it was drawn from */
  int part;             /* enum bench_heldout_part */
  uint64_t seed;        /* the generator's (or the tiling's) seed */
};

/* A list of entries.  Owns its array: release with bench_suite_fini(). */
struct bench_suite {
  struct bench_suite_entry *e;
  size_t n;
};

/* The matrix folder: dir when not NULL or empty, else $SPMV_MATRICES, else
 * "tests/data/matrices" (the tree's own).  Returns a borrowed string. */
const char *bench_suite_dir(const char *dir);

/*
 * Fills s (caller's struct, initialised here) with the entries of the sets
 * (a mask of enum bench_suite_set): the generated ones in a fixed order,
 * then, for BENCH_SUITE_REAL, every .mtx / .mtx.gz file of dir sorted by
 * name, then, for BENCH_SUITE_HELDOUT, the held-out suite of its default
 * size.  quick keeps the --quick subset only (of the held-out suite: its
 * quick draw).  only, when not NULL, keeps the names that contain one of
 * its comma-separated parts.  Returns 0 or a negative SPMV_E* code (an
 * unreadable folder is SPMV_EIO when the real set was asked for).
 */
int bench_suite_init(struct bench_suite *s, int sets, int quick,
                     const char *only, const char *dir,
                     struct spmv_error *err);

/* bench_suite_init() with the held-out suite's size parameter heldout_nnz
 * (0: its default) and draw heldout_draw (0: the suite's; see
 * bench_heldout_init()). */
int bench_suite_init_nnz(struct bench_suite *s, int sets, int quick,
                         int64_t heldout_nnz, int heldout_draw, const char *only,
                         const char *dir, struct spmv_error *err);

/* Whether name contains one of the comma-separated parts of only (NULL:
 * every name matches), as bench_suite_init() keeps its entries. */
int bench_suite_name_matches(const char *name, const char *only);

/* The word of one enum bench_suite_set bit ("large", "paper", "real",
 * "heldout"; "?" for another value), a borrowed string. */
const char *bench_suite_set_name(int set);

/* Frees s's array and zeroes s. */
void bench_suite_fini(struct bench_suite *s);

/*
 * Builds entry e's matrix (generated with a fixed seed, or read from the
 * folder dir and tiled): a new CSR owned by the caller, or NULL with err
 * set.
 */
struct spmv_csr *bench_suite_make(const struct bench_suite_entry *e,
                                  const char *dir, struct spmv_error *err);

/* The paper or real matrix named name (its file name without .mtx or
 * .mtx.gz, or a paper entry's name) from $SPMV_MATRICES or its default;
 * NULL with err set when there is none or it cannot be made.  The caller
 * frees it. */
struct spmv_csr *bench_suite_make_named(const char *name, struct spmv_error *err);

#endif /* BENCH_SUITE_H */
