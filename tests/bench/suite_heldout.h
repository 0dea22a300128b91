/* suite_heldout.h: the held-out suite of issue 55: matrices drawn at
 * random from parametrised families with fixed seeds, each in the part
 * "fit" or "unseen". */
#ifndef BENCH_SUITE_HELDOUT_H
#define BENCH_SUITE_HELDOUT_H

#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "suite.h"

/* The part of the held-out suite an entry is in (its field part). */
enum bench_heldout_part {
  BENCH_HELDOUT_NONE = 0,    /* not a held-out entry */
  BENCH_HELDOUT_FIT = 1,     /* rules and the predictor may be written from it */
  BENCH_HELDOUT_UNSEEN = 2   /* never looked at when writing rules */
};

/* The size parameter's defaults: the largest nonzero count of the usual
 * draws (a few are drawn between 2 and 3 times it). */
#define BENCH_HELDOUT_QUICK_NNZ 4000000
#define BENCH_HELDOUT_FULL_NNZ 16000000

/* The split rule, in the words the report and --list print. */
#define BENCH_HELDOUT_SPLIT_RULE                                              \
  "within each family, the matrices are ordered by the 64-bit FNV-1a hash " \
  "of their names; the first third (rounded, at least one and at most all " \
  "but one) are \"fit\", the others \"unseen\""

/*
 * Fills h (caller's struct, initialised here) with every held-out entry,
 * family by family, each in its part: 40 matrices when quick, else 90.
 * max_nnz is the size parameter (0: BENCH_HELDOUT_QUICK_NNZ when quick,
 * else BENCH_HELDOUT_FULL_NNZ).  draw 0 is the suite's draw, split into
 * its parts; draw d >= 1 the same families' matrices from other streams
 * (named "hoD_..."), every one unseen: new matrices to judge a rule on
 * that was written from draw 0's.  The tiled family tiles the .mtx / .mtx.gz
 * files of bench_suite_dir(dir) and of the tree's tests/data/matrices (the
 * first of two files of one name), so the same folders give the same
 * matrices.  Returns 0 or a negative SPMV_E* code with err set.
 */
int bench_heldout_init(struct bench_suite *h, int quick, int64_t max_nnz,
                       int draw, const char *dir, struct spmv_error *err);

/* Builds a held-out entry's matrix: a new CSR owned by the caller, or NULL
 * with err set. */
struct spmv_csr *bench_heldout_make(const struct bench_suite_entry *e,
                                    struct spmv_error *err);

/* The families, in the suite's order: their count and the name of the
 * i-th (a borrowed string, NULL past the last). */
int bench_heldout_nfamilies(void);
const char *bench_heldout_family(int i);

/* "fit", "unseen" or "-" (a borrowed string). */
const char *bench_heldout_part_name(int part);

/* The part named name (BENCH_HELDOUT_NONE when it names none). */
int bench_heldout_part_parse(const char *name);

/* Keeps the entries of s in part (enum bench_heldout_part), in order. */
void bench_heldout_keep_part(struct bench_suite *s, int part);

#endif /* BENCH_SUITE_HELDOUT_H */
