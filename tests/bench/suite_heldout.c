/* suite_heldout.c: the held-out suite of issue 55: matrices drawn at random
 * from parametrised families with fixed seeds, the split into the parts
 * "fit" and "unseen", and the two generators spmv_gen lacks (a road-like
 * graph, R-MAT with another initiator). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "spmv_gen.h"
#include "spmv_gen_impl.h"
#include "spmv_mmio.h"
#include "suite.h"
#include "suite_heldout.h"

/*
 * The tuner's rules were written from the main suite's matrices, so their
 * score there says little about matrices they never saw.  These are drawn
 * instead: each matrix from its own stream (the suite's seed, its family's
 * number, its index), so that adding a matrix or a family changes no
 * other; its nonzeros log-uniformly between max_nnz / 256 and max_nnz, the
 * last `big` of a family's between 2 and 3 times max_nnz (beyond a GPU's
 * L2 of tens of MB once max_nnz is a few million); its other parameters
 * from the family's ranges.  Sizes are targets: a family's generator
 * lands near them, not on them.
 */
#define HELDOUT_SEED 55u
/* Draw d >= 1 seeds its streams HELDOUT_SEED + d * this. */
#define HELDOUT_DRAW_STEP 7919u

/* The held-out suite's tree folder of real matrices, beside --matrices. */
#define TREE_MATRICES "tests/data/matrices"

/* A real file the tiled family may tile. */
struct hfile {
  char path[256];
  char base[64];          /* its name without .mtx / .mtx.gz */
  int64_t rows;           /* as its header says */
  int64_t nnz;            /* as its header says, mirrored */
};

/* One matrix being drawn. */
struct draw {
  struct spmv_rng g;
  double nnz;             /* its target */
  int index;              /* within its family */
  const struct hfile *files;
  size_t nfiles;
  char key[80];           /* the name's parameters, written by the family */
};

/* A family: its name, its counts and how a matrix of it is drawn (into
 * e->gen or e->file, and d->key). */
struct family {
  const char *name;
  int quick, full;        /* matrices in the quick and in the whole draw */
  int big_quick, big_full;  /* of them, drawn beyond max_nnz (the last) */
  int kind;               /* enum bench_suite_kind */
  void (*draw)(struct draw *d, struct bench_suite_entry *e);
};

static double uni(struct spmv_rng *g, double a, double b)
{
  return a + (b - a) * spmv_rng_unit(g);
}

/* Log-uniform on [a, b]. */
static double logu(struct spmv_rng *g, double a, double b)
{
  return exp(uni(g, log(a), log(b)));
}

/* x rounded, at least lo. */
static int64_t atleast(double x, int64_t lo)
{
  int64_t v = (int64_t)llround(x);
  return v < lo ? lo : v;
}

/* A count as the names spell it: 950, 12k, 3.4M. */
static const char *count(int64_t x, char buf[16])
{
  if (x < 10000)
    snprintf(buf, 16, "%lld", (long long)x);
  else if (x < 1000000)
    snprintf(buf, 16, "%lldk", (long long)((x + 500) / 1000));
  else
    snprintf(buf, 16, "%.1fM", x / 1e6);
  return buf;
}

/* Row lengths normal (cv up to 0.5) or log-normal (skewed), columns
 * random or near the diagonal: spmv_gen_matching. */
static void draw_matching(struct draw *d, struct bench_suite_entry *e,
                          int lognormal)
{
  double m = lognormal ? logu(&d->g, 2, 80) : logu(&d->g, 3, 150);
  double cv = lognormal ? uni(&d->g, 0.3, 2.5) : uni(&d->g, 0.02, 0.5);
  int diag = (int)spmv_rng_below(&d->g, 2);
  char b[16];

  m = fmin(m, sqrt(d->nnz / 4));  /* rows >= 2 * mean */
  int64_t rows = atleast(d->nnz / m, 16);
  snprintf(e->gen, sizeof e->gen, "matching rows=%lld mean=%.2f cv=%.2f dist=%s place=%s",
           (long long)rows, m, cv, lognormal ? "lognormal" : "normal",
           diag ? "diagonal" : "random");
  snprintf(d->key, sizeof d->key, "r%s_m%.1f_cv%.2f_%s", count(rows, b), m, cv,
           diag ? "diag" : "rand");
}

static void draw_normal(struct draw *d, struct bench_suite_entry *e)
{
  draw_matching(d, e, 0);
}

static void draw_lognormal(struct draw *d, struct bench_suite_entry *e)
{
  draw_matching(d, e, 1);
}

/* k uniformly random columns in every row, square or not. */
static void draw_uniform(struct draw *d, struct bench_suite_entry *e)
{
  int64_t k = atleast(fmin(logu(&d->g, 1, 96), sqrt(d->nnz / 4)), 1);
  int64_t rows = atleast(d->nnz / (double)k, 16);
  int64_t cols = atleast(rows * exp2(uni(&d->g, -1.5, 1.5)), k);
  char b[2][16];

  snprintf(e->gen, sizeof e->gen, "random rows=%lld cols=%lld k=%lld", (long long)rows,
           (long long)cols, (long long)k);
  snprintf(d->key, sizeof d->key, "r%s_c%s_k%lld", count(rows, b[0]), count(cols, b[1]),
           (long long)k);
}

/* w random columns of a band of half-width b around the diagonal. */
static void draw_banded(struct draw *d, struct bench_suite_entry *e)
{
  int64_t w = atleast(fmin(logu(&d->g, 3, 128), sqrt(d->nnz / 4)), 1);
  int64_t hw = atleast(ceil(w / 2.0 * uni(&d->g, 1, 6)), 1);
  int64_t n = atleast(d->nnz / (double)w, 2 * hw + 1);
  char b[16];

  snprintf(e->gen, sizeof e->gen, "banded n=%lld w=%lld b=%lld", (long long)n, (long long)w,
           (long long)hw);
  snprintf(d->key, sizeof d->key, "n%s_w%lld_b%lld", count(n, b), (long long)w,
           (long long)hw);
}

/* 2D and 3D Laplacians in turn (5, 9, 7, 27 points), grids of drawn
 * aspect. */
static void draw_stencil(struct draw *d, struct bench_suite_entry *e)
{
  static const int points[4] = { 5, 9, 7, 27 };
  int p = points[d->index % 4];
  double cells = d->nnz / p;

  if (d->index % 4 < 2) {
    int64_t nx = atleast(sqrt(cells * exp2(uni(&d->g, -2, 2))), 2);
    int64_t ny = atleast(cells / nx, 2);
    snprintf(e->gen, sizeof e->gen, "stencil2d nx=%lld ny=%lld points=%d", (long long)nx,
             (long long)ny, p);
    snprintf(d->key, sizeof d->key, "2d%d_%lldx%lld", p, (long long)nx, (long long)ny);
  } else {
    double side = cbrt(cells);
    int64_t nx = atleast(side * exp2(uni(&d->g, -1, 1)), 2);
    int64_t ny = atleast(side * exp2(uni(&d->g, -1, 1)), 2);
    int64_t nz = atleast(cells / ((double)nx * ny), 2);
    snprintf(e->gen, sizeof e->gen, "stencil3d nx=%lld ny=%lld nz=%lld points=%d",
             (long long)nx, (long long)ny, (long long)nz, p);
    snprintf(d->key, sizeof d->key, "3d%d_%lldx%lldx%lld", p, (long long)nx, (long long)ny,
             (long long)nz);
  }
}

/* The mean of floor(xmin U^(-1/alpha)) capped at c: the Pareto's mean
 * below the cap, less half for the floor. */
static double pareto_mean(double xmin, double alpha, double c)
{
  double m;

  if (xmin >= c)
    return c;
  if (fabs(alpha - 1) < 1e-6)
    m = xmin * (1 + log(c / xmin));
  else
    m = xmin + pow(xmin, alpha) * (pow(c, 1 - alpha) - pow(xmin, 1 - alpha)) / (1 - alpha);
  return fmax(xmin, m - 0.5);
}

/* Power-law row lengths (Pareto), square, random columns; the rows found
 * by bisection, as a heavy tail's mean grows with the cap. */
static void draw_powerlaw(struct draw *d, struct bench_suite_entry *e)
{
  double alpha = uni(&d->g, 0.7, 2.5);
  int64_t xmin = atleast(logu(&d->g, 1, 8), 1);
  double lo = 16, hi = fmax(16, d->nnz);
  char b[16];

  for (int k = 0; k < 60; k++) {
    double mid = sqrt(lo * hi);
    if (mid * pareto_mean((double)xmin, alpha, mid) < d->nnz)
      lo = mid;
    else
      hi = mid;
  }
  int64_t rows = atleast(lo, 16);
  snprintf(e->gen, sizeof e->gen, "pareto rows=%lld xmin=%lld alpha=%.3f", (long long)rows,
           (long long)xmin, alpha);
  snprintf(d->key, sizeof d->key, "r%s_a%.2f_x%lld", count(rows, b), alpha, (long long)xmin);
}

/* Graphs of three degree distributions in turn: Graph500's Kronecker
 * (heavy power law), a milder initiator, and Poisson degrees with a few
 * hubs (dc1like). */
static void draw_graph(struct draw *d, struct bench_suite_entry *e)
{
  int64_t ef = atleast(logu(&d->g, 4, 32), 1);
  int sym = (int)spmv_rng_below(&d->g, 2);
  int scale = (int)lround(log2(fmax(16, d->nnz / (ef * (1.0 + sym)))));
  char b[16];

  scale = scale < 4 ? 4 : scale > 28 ? 28 : scale;
  if (d->index % 3 == 0) {
    snprintf(e->gen, sizeof e->gen, "rmat scale=%d ef=%lld sym=%d", scale, (long long)ef, sym);
    snprintf(d->key, sizeof d->key, "kron_s%d_ef%lld%s", scale, (long long)ef,
             sym ? "_sym" : "");
  } else if (d->index % 3 == 1) {
    double a = uni(&d->g, 0.3, 0.5), bc = (1 - a) * uni(&d->g, 0.25, 0.4);
    snprintf(e->gen, sizeof e->gen, "rmat scale=%d ef=%lld a=%.3f b=%.3f c=%.3f sym=%d",
             scale, (long long)ef, a, bc, bc, sym);
    snprintf(d->key, sizeof d->key, "kronmild_s%d_ef%lld_a%.2f%s", scale, (long long)ef, a,
             sym ? "_sym" : "");
  } else {
    double lambda = uni(&d->g, 2, 10), frac[4], sum = 0;
    int nlong = 1 + (int)spmv_rng_below(&d->g, 4);
    for (int k = 0; k < nlong; k++)
      sum += frac[k] = uni(&d->g, 0.05, 0.8);
    int64_t n = atleast(d->nnz / (1 + lambda + sum), 16);
    size_t off = (size_t)snprintf(e->gen, sizeof e->gen, "dc1like n=%lld lambda=%.2f long=",
                                  (long long)n, lambda);
    for (int k = 0; k < nlong && off < sizeof e->gen; k++)
      off += (size_t)snprintf(e->gen + off, sizeof e->gen - off, "%s%lld", k ? "," : "",
                              (long long)atleast(frac[k] * n, 1));
    snprintf(d->key, sizeof d->key, "hubs_n%s_l%.1f_h%d", count(n, b), lambda, nlong);
  }
}

/* A road-like graph: rows of 1-6 entries, mean degree 2-3, numbered in
 * grid order or in shuffled blocks (road_make). */
static void draw_road(struct draw *d, struct bench_suite_entry *e)
{
  double p = uni(&d->g, 0.45, 0.7), sh = uni(&d->g, 0, 0.08);
  int64_t reach = atleast(logu(&d->g, 2, 32), 2);
  int64_t block = spmv_rng_below(&d->g, 2) ? 0 : (int64_t)1 << (5 + spmv_rng_below(&d->g, 8));
  double deg = 4 * p + 2 * sh, cells = d->nnz / deg;
  int64_t nx = atleast(sqrt(cells * exp2(uni(&d->g, -1, 1))), 4);
  int64_t ny = atleast(cells / nx, 4);
  char b[16];

  snprintf(e->gen, sizeof e->gen, "road nx=%lld ny=%lld p=%.3f short=%.3f reach=%lld block=%lld",
           (long long)nx, (long long)ny, p, sh, (long long)reach, (long long)block);
  snprintf(d->key, sizeof d->key, "r%s_d%.1f_b%lld", count(nx * ny, b), deg,
           (long long)block);
}

/* A real file tiled k times (spmv_gen_tile), whole copies or blocks of a
 * half to a 32nd of its rows in shuffled order: the files of at most half
 * the target, else the smallest. */
static void draw_tiled(struct draw *d, struct bench_suite_entry *e)
{
  size_t fit = 0, smallest = 0, pick, k;
  int cut;

  for (k = 0; k < d->nfiles; k++) {
    fit += d->files[k].nnz * 2 <= d->nnz;
    if (d->files[k].nnz < d->files[smallest].nnz)
      smallest = k;
  }
  pick = fit ? spmv_rng_below(&d->g, fit) : 0;
  for (k = 0; fit && k < d->nfiles; k++)
    if (d->files[k].nnz * 2 <= d->nnz && pick-- == 0)
      break;
  const struct hfile *f = &d->files[fit ? k : smallest];
  e->tile_k = atleast(d->nnz / (double)(f->nnz > 0 ? f->nnz : 1), 2);
  cut = (int)spmv_rng_below(&d->g, 4);
  e->tile_block = cut == 0 ? 0 : atleast((double)(f->rows >> (2 * cut - 1)), 1);
  snprintf(e->file, sizeof e->file, "%s", f->path);
  snprintf(d->key, sizeof d->key, "%.36s_x%lld_b%lld", f->base, (long long)e->tile_k,
           (long long)e->tile_block);
}

#define REG BENCH_SUITE_REGULAR
#define SKW BENCH_SUITE_SKEWED
static const struct family families[] = {
  {"normal", 5, 10, 0, 2, 0, draw_normal},
  {"lognormal", 5, 10, 1, 2, 0, draw_lognormal},
  {"uniform", 4, 10, 0, 2, 0, draw_uniform},
  {"banded", 4, 10, 0, 2, REG, draw_banded},
  {"stencil", 4, 10, 1, 2, REG, draw_stencil},
  {"powerlaw", 4, 10, 0, 2, SKW, draw_powerlaw},
  {"graph", 5, 10, 1, 2, SKW, draw_graph},
  {"road", 4, 10, 1, 2, 0, draw_road},
  {"tiled", 5, 10, 0, 2, 0, draw_tiled},
};
#undef REG
#undef SKW
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

/* The number of families. */
int bench_heldout_nfamilies(void)
{
  return NFAMILIES;
}

/* The i-th family's name. */
const char *bench_heldout_family(int i)
{
  return i >= 0 && i < NFAMILIES ? families[i].name : NULL;
}

/* The word of a part. */
const char *bench_heldout_part_name(int part)
{
  return part == BENCH_HELDOUT_FIT ? "fit" : part == BENCH_HELDOUT_UNSEEN ? "unseen" : "-";
}

/* The part of a word. */
int bench_heldout_part_parse(const char *name)
{
  return strcmp(name, "fit") == 0      ? BENCH_HELDOUT_FIT
         : strcmp(name, "unseen") == 0 ? BENCH_HELDOUT_UNSEEN
                                       : BENCH_HELDOUT_NONE;
}

/* The rows and nonzeros a Matrix Market file's header declares, twice its
 * entries when it is stored as one triangle; -1 when it cannot be read. */
static int64_t header_nnz(const char *path, int64_t *rows)
{
  char line[1024];
  long long r = 0, c, n;
  int tri = 0;
  gzFile f = gzopen(path, "rb");  /* plain or gzip-compressed */

  if (f == NULL)
    return -1;
  n = -1;
  while (gzgets(f, line, sizeof line) != NULL) {
    if (line[0] == '%') {
      tri |= strstr(line, "symmetric") != NULL || strstr(line, "hermitian") != NULL;
      continue;
    }
    if (sscanf(line, "%lld %lld %lld", &r, &c, &n) != 3)
      n = -1;
    break;
  }
  gzclose(f);
  *rows = r;
  return n < 0 ? -1 : tri ? 2 * n : n;
}

/* Appends the real files of folder dir not yet in *fs (by base name). */
static int add_files(struct hfile **fs, size_t *n, const char *dir,
                     struct spmv_error *err)
{
  struct bench_suite real;
  int rc;

  if ((rc = bench_suite_init(&real, BENCH_SUITE_REAL, 0, NULL, dir, err)) < 0)
    return rc;
  for (size_t k = 0; k < real.n; k++) {
    struct hfile f;
    size_t j;
    snprintf(f.base, sizeof f.base, "%.*s", (int)strcspn(real.e[k].file, "."),
             real.e[k].file);
    for (j = 0; j < *n && strcmp((*fs)[j].base, f.base) != 0; j++)
      ;
    if (j < *n || (size_t)snprintf(f.path, sizeof f.path, "%s/%s", dir,
                                   real.e[k].file) >= sizeof f.path ||
        (f.nnz = header_nnz(f.path, &f.rows)) <= 0)
      continue;
    struct hfile *nf = realloc(*fs, (*n + 1) * sizeof *nf);
    if (nf == NULL) {
      rc = spmv_error_set(err, SPMV_ENOMEM, "held-out suite: out of memory");
      break;
    }
    *fs = nf;
    (*fs)[(*n)++] = f;
  }
  bench_suite_fini(&real);
  return rc;
}

static int cmp_file(const void *a, const void *b)
{
  return strcmp(((const struct hfile *)a)->base, ((const struct hfile *)b)->base);
}

/* 64-bit FNV-1a of s. */
static uint64_t fnv1a(const char *s)
{
  uint64_t h = 0xcbf29ce484222325ULL;

  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}

/* Sets the parts of one family's entries e[0 .. n) by the split rule. */
static void split(struct bench_suite_entry *e, size_t n)
{
  size_t nfit = (n + 1) / 3;

  if (n == 0)
    return;
  if (nfit < 1)
    nfit = 1;
  if (nfit > n - 1)
    nfit = n - 1;
  for (size_t i = 0; i < n; i++) {
    size_t below = 0;  /* entries hashed before this one */
    uint64_t h = fnv1a(e[i].name);
    for (size_t j = 0; j < n; j++) {
      uint64_t hj = fnv1a(e[j].name);
      below += hj < h || (hj == h && j < i);
    }
    e[i].part = below < nfit ? BENCH_HELDOUT_FIT : BENCH_HELDOUT_UNSEEN;
  }
}

/* Draws every held-out entry and splits each family. */
int bench_heldout_init(struct bench_suite *h, int quick, int64_t max_nnz,
                       int draw, const char *dir, struct spmv_error *err)
{
  struct hfile *files = NULL;
  size_t nfiles = 0, total = 0;
  int rc;

  h->e = NULL;
  h->n = 0;
  if (draw < 0)
    return spmv_error_set(err, SPMV_EINVAL, "held-out suite: draw %d is negative", draw);
  if (max_nnz <= 0)
    max_nnz = quick ? BENCH_HELDOUT_QUICK_NNZ : BENCH_HELDOUT_FULL_NNZ;
  if ((rc = add_files(&files, &nfiles, bench_suite_dir(dir), err)) < 0)
    goto out;
  if (strcmp(bench_suite_dir(dir), TREE_MATRICES) != 0) {
    struct spmv_error e2;  /* the tree's folder may be absent (VPATH) */
    spmv_error_clear(&e2);
    if (add_files(&files, &nfiles, TREE_MATRICES, &e2) == SPMV_ENOMEM) {
      rc = spmv_error_set(err, SPMV_ENOMEM, "held-out suite: out of memory");
      goto out;
    }
  }
  if (nfiles == 0) {
    rc = spmv_error_set(err, SPMV_EIO, "held-out suite: no real matrix to tile in %s",
                        bench_suite_dir(dir));
    goto out;
  }
  qsort(files, nfiles, sizeof *files, cmp_file);
  for (int f = 0; f < NFAMILIES; f++)
    total += (size_t)(quick ? families[f].quick : families[f].full);
  h->e = calloc(total, sizeof *h->e);
  if (h->e == NULL) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "held-out suite: out of memory");
    goto out;
  }
  for (int f = 0; f < NFAMILIES; f++) {
    const struct family *fm = &families[f];
    int n = quick ? fm->quick : fm->full, big = quick ? fm->big_quick : fm->big_full;
    struct bench_suite_entry *first = &h->e[h->n];
    for (int i = 0; i < n; i++) {
      struct bench_suite_entry *e = &h->e[h->n++];
      struct draw d;
      memset(&d, 0, sizeof d);
      /* Draw 0's streams are the suite's since it was written. */
      spmv_rng_seed(&d.g, (HELDOUT_SEED + (uint64_t)draw * HELDOUT_DRAW_STEP) * 1000003u +
                              (uint64_t)f, (uint64_t)i);
      d.index = i;
      d.files = files;
      d.nfiles = nfiles;
      d.nnz = i >= n - big ? uni(&d.g, 2.0 * max_nnz, 3.0 * max_nnz)
                           : logu(&d.g, fmax(1, max_nnz / 256.0), (double)max_nnz);
      fm->draw(&d, e);
      e->seed = spmv_rng_next(&d.g) | 1;
      if (draw == 0)
        snprintf(e->name, sizeof e->name, "ho_%s_%02d_%s", fm->name, i, d.key);
      else
        snprintf(e->name, sizeof e->name, "ho%d_%s_%02d_%.56s", draw % 1000, fm->name, i,
                 d.key);
      snprintf(e->family, sizeof e->family, "%s", fm->name);
      e->set = BENCH_SUITE_HELDOUT;
      e->kind = fm->kind;
      e->quick = quick;
    }
    if (draw == 0)
      split(first, (size_t)n);
    else  /* a later draw's matrices are new to every rule */
      for (int i = 0; i < n; i++)
        first[i].part = BENCH_HELDOUT_UNSEEN;
  }
  rc = 0;
out:
  free(files);
  if (rc < 0)
    bench_suite_fini(h);
  return rc;
}

/* Keeps one part's entries. */
void bench_heldout_keep_part(struct bench_suite *s, int part)
{
  size_t m = 0;

  for (size_t k = 0; k < s->n; k++)
    if (s->e[k].part == part)
      s->e[m++] = s->e[k];
  s->n = m;
}

/*
 * The road-like graph: the vertices of an nx x ny grid, each grid edge
 * kept with probability p, and with probability sh a vertex's shortcut to
 * one within reach cells each way (at most two a vertex, none where a grid
 * edge could be); symmetric, so rows hold 0-6 neighbours, and a row with
 * none holds its diagonal.  Numbered in grid order (block 0) or in blocks
 * of block vertices whose order is shuffled, as a road network's files
 * keep some locality and lose the rest.
 */
static struct spmv_csr *road_make(int64_t nx, int64_t ny, double p, double sh,
                                  int64_t reach, int64_t block, uint64_t seed,
                                  struct spmv_error *err)
{
  int64_t n = nx * ny, v, nb, *start = NULL;
  unsigned char *keep = NULL;  /* bit 0: edge to x + 1, bit 1: edge to y + 1 */
  int32_t *sc = NULL, *perm = NULL;  /* sc: two shortcut ends a vertex, -1 */
  struct spmv_csr *A = NULL;
  struct spmv_rng g;

  if (nx < 2 || ny < 2 || n > SPMV_GEN_MAX_DIM || reach < 2 || block < 0) {
    spmv_error_set(err, SPMV_EINVAL, "road nx=%lld ny=%lld reach=%lld block=%lld: out of range",
                   (long long)nx, (long long)ny, (long long)reach, (long long)block);
    return NULL;
  }
  if (block == 0 || block > n)
    block = n;
  nb = (n + block - 1) / block;
  keep = malloc((size_t)n);
  sc = malloc((size_t)n * 2 * sizeof *sc);
  start = malloc((size_t)nb * sizeof *start);
  perm = spmv_gen_perm(nb, seed);
  if (keep == NULL || sc == NULL || start == NULL || perm == NULL) {
    spmv_error_set(err, SPMV_ENOMEM, "road: out of memory");
    goto out;
  }
  spmv_rng_seed(&g, seed, SPMV_STREAM_STRUCT);
  for (v = 0; v < n; v++) {
    int right = spmv_rng_unit(&g) < p, down = spmv_rng_unit(&g) < p;
    keep[v] = (unsigned char)((right && v % nx + 1 < nx) | (down && v / nx + 1 < ny) << 1);
    sc[2 * v] = sc[2 * v + 1] = -1;
  }
  for (v = 0; v < n; v++) {
    int64_t dx = (int64_t)spmv_rng_below(&g, 2 * reach + 1) - reach;
    int64_t dy = (int64_t)spmv_rng_below(&g, 2 * reach + 1) - reach;
    int64_t x = v % nx + dx, y = v / nx + dy, w = y * nx + x;
    if (!(spmv_rng_unit(&g) < sh) || x < 0 || x >= nx || y < 0 || y >= ny ||
        llabs(dx) + llabs(dy) < 2 || sc[2 * v + 1] >= 0 || sc[2 * w + 1] >= 0 ||
        sc[2 * v] == w)
      continue;
    sc[2 * v + (sc[2 * v] >= 0)] = (int32_t)w;
    sc[2 * w + (sc[2 * w] >= 0)] = (int32_t)v;
  }
  for (int64_t k = 0, at = 0; k < nb; k++) {
    start[perm[k]] = at;
    at += perm[k] == nb - 1 ? n - (nb - 1) * block : block;
  }
#define NEW(u) (start[(u) / block] + (u) % block)
  if ((A = spmv_gen_begin(n, n, err)) == NULL)
    goto out;
  for (int pass = 0; pass < 2; pass++) {
    for (v = 0; v < n; v++) {
      int32_t nbr[6];
      int m = 0;
      if (keep[v] & 1) nbr[m++] = (int32_t)NEW(v + 1);
      if (keep[v] & 2) nbr[m++] = (int32_t)NEW(v + nx);
      if (v % nx > 0 && (keep[v - 1] & 1)) nbr[m++] = (int32_t)NEW(v - 1);
      if (v >= nx && (keep[v - nx] & 2)) nbr[m++] = (int32_t)NEW(v - nx);
      for (int s = 0; s < 2; s++)
        if (sc[2 * v + s] >= 0)
          nbr[m++] = (int32_t)NEW(sc[2 * v + s]);
      if (m == 0)
        nbr[m++] = (int32_t)NEW(v);
      if (pass == 0) {
        A->row_ptr[NEW(v) + 1] = m;
        continue;
      }
      int32_t *col = A->col_idx + A->row_ptr[NEW(v)];
      memcpy(col, nbr, (size_t)m * sizeof *nbr);
      spmv_gen_sort(col, NULL, m);
    }
    if (pass == 0 && spmv_gen_commit(A, err) != 0) {
      A = spmv_csr_free(A);
      goto out;
    }
  }
#undef NEW
  if (spmv_gen_values(A, seed, err) != 0)
    A = spmv_csr_free(A);
out:
  free(keep);
  free(sc);
  free(start);
  free(perm);
  return A;
}

/* Builds a held-out entry's matrix: a tiled file, one of the two
 * generators here, or spmv_gen_from_text with the entry's seed. */
struct spmv_csr *bench_heldout_make(const struct bench_suite_entry *e,
                                    struct spmv_error *err)
{
  struct spmv_csr *A = NULL, *T;
  long long nx, ny, reach, block, ef;
  double p, sh, a, b, c;
  int scale, sym;

  if (e->file[0] != '\0') {
    if (spmv_mmio_read(e->file, &A, NULL, err) < 0)
      return NULL;
    T = spmv_gen_tile(A, e->tile_k, e->tile_block, e->seed, err);
    spmv_csr_free(A);
    return T;
  }
  if (sscanf(e->gen, "road nx=%lld ny=%lld p=%lf short=%lf reach=%lld block=%lld", &nx, &ny,
             &p, &sh, &reach, &block) == 6)
    return road_make(nx, ny, p, sh, reach, block, e->seed, err);
  if (sscanf(e->gen, "rmat scale=%d ef=%lld a=%lf b=%lf c=%lf sym=%d", &scale, &ef, &a, &b,
             &c, &sym) == 6)
    return spmv_gen_rmat(scale, ef, a, b, c, sym, e->seed, err);
  return spmv_gen_from_text(e->gen, e->seed, err);
}
