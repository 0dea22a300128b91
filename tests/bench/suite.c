/* suite.c: the benchmark suite of issue 4 as data, and its matrices (the
 * held-out suite's come from suite_heldout.c). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_gen.h"
#include "spmv_mmio.h"
#include "suite.h"
#include "suite_heldout.h"

/* Matching statistics: normal row lengths below cv 0.5, log-normal above;
 * columns near the diagonal, as in the paper's FEM matrices. */
#define MATCH(r, m, cv) "matching rows=" #r " mean=" #m " cv=" #cv \
                        " place=diagonal dist="

/* A generated or tiled entry. */
struct spec {
  const char *name, *gen, *file;
  int64_t tile_k, tile_block;
  int set, kind, quick;
};

#define L BENCH_SUITE_LARGE
#define P BENCH_SUITE_PAPER
#define REG BENCH_SUITE_REGULAR
#define SKW BENCH_SUITE_SKEWED
static const struct spec specs[] = {
  {"lap2d_5pt_4096", "stencil2d nx=4096 ny=4096", NULL, 0, 0, L, REG, 1},
  {"stencil3d_27pt_128", "stencil3d nx=128 ny=128 nz=128 points=27", NULL, 0, 0, L, REG, 0},
  {"banded_2M_x32", "banded n=2000000 w=32 b=64", NULL, 0, 0, L, REG, 0},
  {"random_2M_x32", "random rows=2000000 k=32", NULL, 0, 0, L, 0, 1},
  {"powerlaw_1M", "pareto rows=1000000 alpha=0.8", NULL, 0, 0, L, SKW, 1},
  {"dc1like_4M", "dc1like n=4000000 lambda=6 long=400000,900000", NULL, 0, 0, L, SKW, 1},
  {"denserows_20k_x2000", "random rows=20000 cols=2000000 k=2000", NULL, 0, 0, L, 0, 0},
  {"maceconlike_x16", MATCH(3304000, 6.166, 0.72) "lognormal", NULL, 0, 0, L, 0, 0},
  {"rma10_x16", MATCH(749360, 50.69, 0.56) "lognormal", NULL, 0, 0, L, 0, 0},
  {"cop20k_A_x16", MATCH(1939072, 21.65, 0.64) "lognormal", NULL, 0, 0, L, 0, 1},
  {"cant_x16", MATCH(999216, 64.17, 0.22) "normal", NULL, 0, 0, L, 0, 0},
  {"pdb1HYS_x8", MATCH(291336, 119.3, 0.27) "normal", NULL, 0, 0, L, 0, 0},
  {"consph_x16", MATCH(1333344, 72.12, 0.26) "normal", NULL, 0, 0, L, 0, 0},
  {"shipsec1_x8", MATCH(1126992, 55.46, 0.20) "normal", NULL, 0, 0, L, 0, 1},
  {"pwtk_x8", MATCH(1743344, 53.39, 0.09) "normal", NULL, 0, 0, L, 0, 0},
  {"wbp256_x2", MATCH(131072, 479.3, 0.15) "normal", NULL, 0, 0, L, 0, 0},
  {"mc2depi_x8", MATCH(4206600, 3.994, 0.02) "normal", NULL, 0, 0, L, 0, 0},
  {"bcsstk16_tiled_x256", NULL, "bcsstk16.mtx", 256, 0, L, 0, 0},
  {"ca-HepPh_tiled_x128", NULL, "ca-HepPh_snap_rawids.mtx", 128, 1024, L, 0, 0},
  {"mac_econ", MATCH(206500, 6.166, 0.72) "lognormal", NULL, 0, 0, P, 0, 1},
  {"rma10", MATCH(46835, 50.69, 0.56) "lognormal", NULL, 0, 0, P, 0, 1},
  {"cop20k_A", MATCH(121192, 21.65, 0.64) "lognormal", NULL, 0, 0, P, 0, 1},
  {"cant", MATCH(62451, 64.17, 0.22) "normal", NULL, 0, 0, P, 0, 1},
  {"pdb1HYS", MATCH(36417, 119.3, 0.27) "normal", NULL, 0, 0, P, 0, 1},
  {"consph", MATCH(83334, 72.12, 0.26) "normal", NULL, 0, 0, P, 0, 1},
  {"shipsec1", MATCH(140874, 55.46, 0.20) "normal", NULL, 0, 0, P, 0, 1},
  {"pwtk", MATCH(217918, 53.39, 0.09) "normal", NULL, 0, 0, P, 0, 1},
  {"wbp256", MATCH(65536, 479.3, 0.15) "normal", NULL, 0, 0, P, 0, 1},
  {"mc2depi", MATCH(525825, 3.994, 0.02) "normal", NULL, 0, 0, P, 0, 1},
};
#undef L
#undef P
#undef REG
#undef SKW
#define NSPECS (sizeof specs / sizeof specs[0])

/* Returns the matrix folder. */
const char *bench_suite_dir(const char *dir)
{
  const char *env = getenv("SPMV_MATRICES");

  if (dir != NULL && *dir != '\0')
    return dir;
  return env != NULL && *env != '\0' ? env : "tests/data/matrices";
}

static int has_suffix(const char *s, const char *suf)
{
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmp_entry(const void *a, const void *b)
{
  return strcmp(((const struct bench_suite_entry *)a)->file,
                ((const struct bench_suite_entry *)b)->file);
}

/* Appends an entry, growing the array; returns 0 or SPMV_ENOMEM. */
static int push(struct bench_suite *s, size_t *cap,
                const struct bench_suite_entry *e)
{
  if (s->n == *cap) {
    size_t nc = *cap ? 2 * *cap : 64;
    struct bench_suite_entry *ne = realloc(s->e, nc * sizeof *ne);
    if (ne == NULL)
      return SPMV_ENOMEM;
    s->e = ne;
    *cap = nc;
  }
  s->e[s->n++] = *e;
  return 0;
}

/* Whether name contains one of only's parts. */
int bench_suite_name_matches(const char *name, const char *only)
{
  const char *p = only, *end;
  char part[128];

  if (only == NULL)
    return 1;
  while (*p != '\0') {
    end = strchr(p, ',');
    if (end == NULL)
      end = p + strlen(p);
    if (end > p && (size_t)(end - p) < sizeof part) {
      memcpy(part, p, (size_t)(end - p));
      part[end - p] = '\0';
      if (strstr(name, part) != NULL)
        return 1;
    }
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

/* The suite's entries, the held-out ones of their default size. */
int bench_suite_init(struct bench_suite *s, int sets, int quick,
                     const char *only, const char *dir,
                     struct spmv_error *err)
{
  return bench_suite_init_nnz(s, sets, quick, 0, 0, only, dir, err);
}

/* Appends the held-out entries whose names only keeps. */
static int push_heldout(struct bench_suite *s, size_t *cap, int quick,
                        int64_t nnz, int draw, const char *only, const char *dir,
                        struct spmv_error *err)
{
  struct bench_suite h;
  int rc;

  if ((rc = bench_heldout_init(&h, quick, nnz, draw, dir, err)) < 0)
    return rc;
  for (size_t k = 0; k < h.n && rc == 0; k++)
    if (bench_suite_name_matches(h.e[k].name, only))
      rc = push(s, cap, &h.e[k]);
  bench_suite_fini(&h);
  return rc;
}

/* Fills the suite's entries. */
int bench_suite_init_nnz(struct bench_suite *s, int sets, int quick,
                         int64_t heldout_nnz, int heldout_draw, const char *only,
                         const char *dir, struct spmv_error *err)
{
  struct bench_suite_entry e;
  struct dirent *de;
  DIR *d = NULL;
  size_t cap = 0, first_real;
  int rc = 0;

  s->e = NULL;
  s->n = 0;
  for (size_t k = 0; k < NSPECS; k++) {
    const struct spec *p = &specs[k];
    if (!(p->set & sets) || (quick && !p->quick) ||
        !bench_suite_name_matches(p->name, only))
      continue;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "%s", p->name);
    snprintf(e.gen, sizeof e.gen, "%s", p->gen ? p->gen : "");
    snprintf(e.file, sizeof e.file, "%s", p->file ? p->file : "");
    e.tile_k = p->tile_k;
    e.tile_block = p->tile_block;
    e.set = p->set;
    e.kind = p->kind;
    e.quick = p->quick;
    if ((rc = push(s, &cap, &e)) < 0)
      goto fail;
  }
  if (!(sets & BENCH_SUITE_REAL))
    goto heldout;
  d = opendir(bench_suite_dir(dir));
  if (d == NULL) {
    rc = spmv_error_set(err, SPMV_EIO, "matrix folder %s: %s",
                        bench_suite_dir(dir), strerror(errno));
    goto fail;
  }
  first_real = s->n;
  while ((de = readdir(d)) != NULL) {
    const char *f = de->d_name;
    if (!has_suffix(f, ".mtx") && !has_suffix(f, ".mtx.gz"))
      continue;
    if (strlen(f) >= sizeof e.file || !bench_suite_name_matches(f, only))
      continue;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "%.*s", (int)(sizeof e.name - 1), f);
    snprintf(e.file, sizeof e.file, "%s", f);
    e.set = BENCH_SUITE_REAL;
    e.quick = 1;  /* small: all of them stay in the quick subset */
    if ((rc = push(s, &cap, &e)) < 0)
      goto fail;
  }
  closedir(d);
  d = NULL;
  qsort(s->e + first_real, s->n - first_real, sizeof *s->e, cmp_entry);
heldout:
  if ((sets & BENCH_SUITE_HELDOUT) &&
      (rc = push_heldout(s, &cap, quick, heldout_nnz, heldout_draw, only, dir, err)) < 0)
    goto fail;
  return 0;
fail:
  if (d != NULL)
    closedir(d);
  bench_suite_fini(s);
  if (rc == SPMV_ENOMEM)
    spmv_error_set(err, rc, "suite: out of memory");
  return rc;
}

/* The word of a set. */
const char *bench_suite_set_name(int set)
{
  return set == BENCH_SUITE_LARGE     ? "large"
         : set == BENCH_SUITE_PAPER   ? "paper"
         : set == BENCH_SUITE_REAL    ? "real"
         : set == BENCH_SUITE_HELDOUT ? "heldout"
                                      : "?";
}

/* Frees the suite's array. */
void bench_suite_fini(struct bench_suite *s)
{
  free(s->e);
  s->e = NULL;
  s->n = 0;
}

/* Builds an entry's matrix. */
struct spmv_csr *bench_suite_make(const struct bench_suite_entry *e,
                                  const char *dir, struct spmv_error *err)
{
  struct spmv_csr *A = NULL, *T;
  char path[4096];

  if (e->set == BENCH_SUITE_HELDOUT)
    return bench_heldout_make(e, err);
  if (e->gen[0] != '\0')
    return spmv_gen_from_text(e->gen, 2026, err);
  snprintf(path, sizeof path, "%s/%s", bench_suite_dir(dir), e->file);
  if (spmv_mmio_read(path, &A, NULL, err) < 0)
    return NULL;
  if (e->tile_k <= 1)
    return A;
  T = spmv_gen_tile(A, e->tile_k, e->tile_block, 7, err);
  spmv_csr_free(A);
  return T;
}

/* Builds a paper or real matrix by name. */
struct spmv_csr *bench_suite_make_named(const char *name, struct spmv_error *err)
{
  struct bench_suite suite;
  struct spmv_csr *A = NULL;

  if (bench_suite_init(&suite, BENCH_SUITE_PAPER | BENCH_SUITE_REAL, 0, name,
                       NULL, err) < 0)
    return NULL;
  for (size_t i = 0; i < suite.n && A == NULL; i++) {
    size_t len = strcspn(suite.e[i].name, ".");
    if (len == strlen(name) && strncmp(suite.e[i].name, name, len) == 0)
      A = bench_suite_make(&suite.e[i], NULL, err);
  }
  if (A == NULL && err->msg[0] == '\0')
    spmv_error_set(err, SPMV_EINVAL, "no matrix %s in the suite", name);
  bench_suite_fini(&suite);
  return A;
}
