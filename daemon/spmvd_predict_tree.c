/* spmvd_predict_tree.c: the work model's trees: grown by non-negative
 * least squares over a calibration's points, bagged, and evaluated. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spmvd_predict.h"
#include "spmvd_predict_impl.h"

/* The value a split compares. */
double spmvd_split_value(enum spmvd_split s, const struct spmvd_pfeat *x)
{
  switch (s) {
  case SPMVD_SPLIT_ROWS:
    return x->rows;
  case SPMVD_SPLIT_WORK:
    return x->rows + x->nnz;
  case SPMVD_SPLIT_RLMAX:
    return x->rl_max;
  case SPMVD_SPLIT_MEAN:
    return x->rows > 0 ? x->nnz / x->rows : 0;
  default:
    return 0;
  }
}

static const char *const split_names[SPMVD_SPLIT_COUNT] = {
  "leaf", "rows", "work", "rl_max", "mean"
};

const char *spmvd_split_name(enum spmvd_split s)
{
  return s >= 0 && s < SPMVD_SPLIT_COUNT ? split_names[s] : "?";
}

int spmvd_split_parse(const char *name, enum spmvd_split *out)
{
  int s;

  for (s = 0; name != NULL && s < SPMVD_SPLIT_COUNT; s++)
    if (strcmp(name, split_names[s]) == 0) {
      *out = (enum spmvd_split)s;
      return 0;
    }
  return -1;
}

/* The tree's leaf for features x. */
static int tree_leaf(const struct spmvd_tree *w, const struct spmvd_pfeat *x)
{
  int i = 0;

  while (i < SPMVD_TREE_NODES && w->split[i] != SPMVD_SPLIT_NONE &&
         2 * i + 2 < SPMVD_TREE_NODES)
    i = spmvd_split_value((enum spmvd_split)w->split[i], x) <= w->thr[i]
            ? 2 * i + 1
            : 2 * i + 2;
  return i;
}

/* Tree w's time for terms phi of features x. */
static double tree_eval(const struct spmvd_tree *w, const struct spmvd_pfeat *x,
                        const double phi[SPMVD_WORK_TERMS])
{
  double t = 0;
  int j, i = tree_leaf(w, x);

  for (j = 0; j < SPMVD_WORK_TERMS; j++)
    t += w->wc[i][j] * phi[j];
  return t;
}

/* The work model at features x: its tree's time alone, or with its
 * bootstrap trees the mean of their and its times but the least and the
 * greatest: a resample can leave a leaf to extrapolate wildly, and one
 * such tree would move a plain mean far. */
double spmvd_predict_work_eval(const struct spmvd_fit *f,
                               const struct spmvd_pfeat *x)
{
  double phi[SPMVD_WORK_TERMS], t, lo, hi, sum;
  int b;

  spmvd_predict_fit_terms(f, &f->cfg, x, phi);
  t = tree_eval(&f->tree, x, phi);
  if (f->nbag < 2)
    return f->nbag == 0 ? t : (t + tree_eval(&f->bag[0], x, phi)) / 2;
  lo = hi = sum = t;
  for (b = 0; b < f->nbag; b++) {
    double tb = tree_eval(&f->bag[b], x, phi);

    sum += tb;
    lo = tb < lo ? tb : lo;
    hi = tb > hi ? tb : hi;
  }
  return (sum - lo - hi) / (f->nbag - 1);
}

/*
 * Weighted least squares (weights 1/t^2) of t over the terms on[] of the
 * samples' bases phi (n x SPMVD_WORK_TERMS, row-major) into c (0 off the
 * terms).  Columns are scaled to 1 (the counts span twelve orders of
 * magnitude) and a trace-relative ridge of 1e-10 keeps collinear terms
 * (equal-length rows make w_warp equal nnz) solvable.  Returns 0 or -1.
 */
static int work_lsq(const double *phi, const double *t, size_t n,
                    const int on[SPMVD_WORK_TERMS], double c[SPMVD_WORK_TERMS])
{
  double M[SPMVD_LSQ_MAX][SPMVD_LSQ_MAX] = { { 0 } };
  double r[SPMVD_LSQ_MAX] = { 0 }, x[SPMVD_LSQ_MAX], sc[SPMVD_LSQ_MAX];
  double v[SPMVD_LSQ_MAX], w, tr = 0;
  int idx[SPMVD_LSQ_MAX], nb = 0, a, b;
  size_t k;

  for (a = 0; a < SPMVD_WORK_TERMS; a++) {
    c[a] = 0;
    if (!on[a])
      continue;
    sc[nb] = 0;
    for (k = 0; k < n; k++)
      if (fabs(phi[k * SPMVD_WORK_TERMS + a]) > sc[nb])
        sc[nb] = fabs(phi[k * SPMVD_WORK_TERMS + a]);
    if (sc[nb] > 0)
      idx[nb++] = a;
  }
  if (nb == 0)
    return -1;
  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    w = 1.0 / (t[k] * t[k]);
    for (a = 0; a < nb; a++)
      v[a] = phi[k * SPMVD_WORK_TERMS + idx[a]] / sc[a];
    for (a = 0; a < nb; a++) {
      for (b = 0; b < nb; b++)
        M[a][b] += w * v[a] * v[b];
      r[a] += w * v[a] * t[k];
    }
  }
  for (a = 0; a < nb; a++)
    tr += M[a][a];
  for (a = 0; a < nb; a++)
    M[a][a] += 1e-10 * tr / nb;
  if (spmvd_predict_solve(M, r, nb, x) != 0)
    return -1;
  for (a = 0; a < nb; a++)
    c[idx[a]] = x[a] / sc[a];
  return 0;
}

/* A term that only some calibrations' points carry (csr-scalar's lanes
 * past the L1) enters a leaf only where GUARD_POINTS of its points hold
 * it at GUARD_SHARE of their entries or more.  A leaf of random columns
 * holds it at a few entries in 10^4 (x sectors shared by chance); fitted
 * to those, it takes a coefficient 10^4 times too large and predicts
 * near-diagonal matrices 100x too slow.  More points than two would drop
 * it from leaves it helps. */
#define GUARD_POINTS 2
#define GUARD_SHARE 0.1

/* A leaf's line over the samples idx[0 .. n) of the bases phi (times t):
 * least squares over the terms, dropping the most negative coefficient
 * until none is (a greedy non-negative fit: a time never falls as a count
 * grows), into c; its summed relative error into *esum.  Term guard (-1:
 * none) enters only as GUARD_POINTS says, its share taken of term ref.
 * sub is scratch of n bases.
 * Returns 0 or -1 when no non-negative line fits. */
static int leaf_fit(const double *phi, const double *t, const size_t *idx,
                    size_t n, int guard, int ref, double *sub, double *tsub,
                    double c[SPMVD_WORK_TERMS], double *esum)
{
  double cmax[SPMVD_WORK_TERMS] = { 0 }, p;
  int on[SPMVD_WORK_TERMS], j, worst, left = SPMVD_WORK_TERMS, held = 0;
  size_t k;

  for (k = 0; k < n; k++) {
    memcpy(&sub[k * SPMVD_WORK_TERMS], &phi[idx[k] * SPMVD_WORK_TERMS],
           SPMVD_WORK_TERMS * sizeof *sub);
    tsub[k] = t[idx[k]];
    for (j = 0; j < SPMVD_WORK_TERMS; j++)
      if (fabs(sub[k * SPMVD_WORK_TERMS + j]) > cmax[j])
        cmax[j] = fabs(sub[k * SPMVD_WORK_TERMS + j]);
  }
  for (j = 0; j < SPMVD_WORK_TERMS; j++)
    on[j] = 1;
  if (guard >= 0) {
    for (k = 0; k < n; k++)
      if (sub[k * SPMVD_WORK_TERMS + guard] >=
          GUARD_SHARE * sub[k * SPMVD_WORK_TERMS + ref] &&
          sub[k * SPMVD_WORK_TERMS + guard] > 0)
        held++;
    if (held < GUARD_POINTS) {
      on[guard] = 0;
      left--;
    }
  }
  for (;;) {
    if (left == 0 || work_lsq(sub, tsub, n, on, c) != 0)
      return -1;
    worst = -1;
    for (j = 0; j < SPMVD_WORK_TERMS; j++)
      if (c[j] < 0 && (worst < 0 || c[j] * cmax[j] < c[worst] * cmax[worst]))
        worst = j;
    if (worst < 0)
      break;
    on[worst] = 0;
    left--;
  }
  *esum = 0;
  for (k = 0; k < n; k++) {
    if (!(tsub[k] > 0))
      continue;
    for (p = 0, j = 0; j < SPMVD_WORK_TERMS; j++)
      p += c[j] * sub[k * SPMVD_WORK_TERMS + j];
    *esum += fabs(p - tsub[k]) / tsub[k];
  }
  return 0;
}

#define TREE_MIN_LEAF 100  /* points a side keeps: ~10 per coefficient */
#define TREE_GAIN 0.97     /* a split must cut the error to this share */
#define TREE_LOG2_MIN 2    /* thresholds 2^2 .. 2^23 */
#define TREE_LOG2_MAX 23

/* Scratch of a tree fit. */
struct tree_fit {
  const struct spmvd_pfeat *x;
  const double *t, *phi;
  double *sub, *tsub;
  size_t *left, *right;
  int guard;  /* the guarded term (leaf_fit), or -1 */
  int ref;    /* the term its share is taken of */
};

/* Splits the samples idx[0 .. n) by split s at `at` into w->left[0 ..
 * *nl) and w->right[0 .. *nr), each in idx's order. */
static void partition(struct tree_fit *w, const size_t *idx, size_t n,
                      int s, double at, size_t *nl, size_t *nr)
{
  size_t k;

  for (*nl = *nr = 0, k = 0; k < n; k++) {
    if (spmvd_split_value((enum spmvd_split)s, &w->x[idx[k]]) <= at)
      w->left[(*nl)++] = idx[k];
    else
      w->right[(*nr)++] = idx[k];
  }
}

/* Grows node i of tree tr over the samples idx[0 .. n) (reordered): a leaf, or,
 * where node i has children, the split whose two leaves cut the error
 * most.  Returns 0 or -1 when not even a leaf fits. */
static int grow(struct tree_fit *w, size_t *idx, size_t n, int i,
                struct spmvd_tree *tr)
{
  double c[SPMVD_WORK_TERMS], cl[SPMVD_WORK_TERMS], cr[SPMVD_WORK_TERMS];
  double e, el, er, best, thr = 0;
  size_t nl, nr;
  int s, q, bs = SPMVD_SPLIT_NONE;

  tr->split[i] = SPMVD_SPLIT_NONE;
  if (leaf_fit(w->phi, w->t, idx, n, w->guard, w->ref, w->sub, w->tsub, c,
               &e) != 0)
    return -1;
  memcpy(tr->wc[i], c, sizeof c);
  if (2 * i + 2 >= SPMVD_TREE_NODES || n < 2 * TREE_MIN_LEAF)
    return 0;
  best = TREE_GAIN * e;
  for (s = SPMVD_SPLIT_NONE + 1; s < SPMVD_SPLIT_COUNT; s++)
    for (q = TREE_LOG2_MIN; q <= TREE_LOG2_MAX; q++) {
      double at = ldexp(1.0, q);

      partition(w, idx, n, s, at, &nl, &nr);
      if (nl < TREE_MIN_LEAF || nr < TREE_MIN_LEAF)
        continue;
      if (leaf_fit(w->phi, w->t, w->left, nl, w->guard, w->ref, w->sub,
                   w->tsub, cl, &el) != 0 ||
          leaf_fit(w->phi, w->t, w->right, nr, w->guard, w->ref, w->sub,
                   w->tsub, cr, &er) != 0)
        continue;
      if (el + er < best) {
        best = el + er;
        bs = s;
        thr = at;
      }
    }
  if (bs == SPMVD_SPLIT_NONE)
    return 0;
  /* idx in place, the left side first; each side's leaf fitted above. */
  partition(w, idx, n, bs, thr, &nl, &nr);
  memcpy(idx, w->left, nl * sizeof *idx);
  memcpy(idx + nl, w->right, nr * sizeof *idx);
  if (grow(w, idx, nl, 2 * i + 1, tr) != 0 ||
      grow(w, idx + nl, nr, 2 * i + 2, tr) != 0)
    return -1;
  tr->split[i] = bs;
  tr->thr[i] = thr;
  return 0;
}

/* The next of a xorshift64 generator's numbers: the bootstrap trees'
 * resamples, the same on every run. */
static uint64_t bag_next(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Fits the work model's tree and its bootstrap trees. */
int spmvd_predict_fit_work(const struct spmv_config *cfg,
                           const struct spmvd_pfeat *x,
                           const double *t, size_t n, struct spmvd_fit *f,
                           struct spmv_error *err)
{
  struct tree_fit w;
  double *phi, s = 0;
  size_t *idx, k, m = 0;
  uint64_t state = 0x9e3779b97f4a7c15u;
  int b, rc;

  f->work_npoints = 0;
  memset(&f->tree, 0, sizeof f->tree);
  memset(f->bag, 0, sizeof f->bag);
  f->nbag = 0;
  if (n < SPMVD_WORK_TERMS)
    return spmv_error_set(err, SPMV_EINVAL,
                          "work fit of %s: %zu samples, %d needed",
                          spmv_format_name(cfg->format), n, SPMVD_WORK_TERMS);
  phi = malloc(2 * n * SPMVD_WORK_TERMS * sizeof *phi + n * sizeof *phi);
  idx = malloc(3 * n * sizeof *idx);
  if (phi == NULL || idx == NULL) {
    free(phi);
    free(idx);
    return spmv_error_set(err, SPMV_ENOMEM, "work fit: out of memory");
  }
  for (k = 0; k < n; k++) {
    spmvd_predict_fit_terms(f, cfg, &x[k], &phi[k * SPMVD_WORK_TERMS]);
    idx[k] = k;
  }
  w.x = x;
  w.t = t;
  w.phi = phi;
  w.sub = phi + n * SPMVD_WORK_TERMS;
  w.tsub = phi + 2 * n * SPMVD_WORK_TERMS;
  w.left = idx + n;
  w.right = idx + 2 * n;
  w.guard = spmvd_predict_guarded_term(cfg, &w.ref);
  rc = grow(&w, idx, n, 0, &f->tree);
  /* A resample that leaves no non-negative line (all its points of one
   * kind) is dropped; the others still average. */
  for (b = 0; rc == 0 && b < SPMVD_BAG_TREES; b++) {
    for (k = 0; k < n; k++)
      idx[k] = (size_t)(bag_next(&state) % n);
    if (grow(&w, idx, n, 0, &f->bag[f->nbag]) == 0)
      f->nbag++;
    else
      memset(&f->bag[f->nbag], 0, sizeof f->bag[0]);
  }
  free(phi);
  free(idx);
  if (rc != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "work fit of %s: no non-negative model",
                          spmv_format_name(cfg->format));
  f->work_npoints = (int)n;
  for (k = 0; k < n; k++) {
    if (!(t[k] > 0))
      continue;
    s += fabs(spmvd_predict_work_eval(f, &x[k]) - t[k]) / t[k];
    m++;
  }
  f->work_err = m ? s / (double)m : 0;
  return 0;
}

