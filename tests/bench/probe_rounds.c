/*
 * probe_rounds.c: why does a race's first round read slow?  auto's race
 * times a candidate right after its load with one probe run and rounds of
 * two runs (spmvd_tuner_race.c: time_rounds), each round held behind the
 * timer's spinning kernel (spmv_dev_time); on small f32 products the
 * first round reads above the exhaustive race's 2 warm-ups + 10.  This
 * times the same sequence run by run, and variants of it, on the
 * candidates of such races.
 *
 * Per candidate, in the order the race loads them, each sequence starts
 * as the evaluation's load does (layout resident, spmv_dev_matrix_warm_l2)
 * and then, by variant:
 *   race   probe (0 warm-up, 1 run), three rounds (0 + 2), then 2 + 10;
 *   wake   the same, each round with one untimed run first (1 + 2; the
 *          timer takes the matrix into the L2 before any warm-up run);
 *   idle   the race's, after a 3 ms host pause before the probe;
 *   long   one hold of 12 runs (0 + 12) after the load, then 2 + 10;
 *   cold   the race's, the first candidate after a 300 ms host pause (as
 *          a race's first candidate follows an idle GPU);
 *   direct the race's, every product launched directly, not as a graph;
 *   fresh  the race's, its graph captured anew in the probe's timing;
 *   reload the race's on the candidate loaded anew (its device copy
 *          freed and made again from the layout) and captured anew in
 *          the probe's timing, as auto's race loads each candidate;
 *   primed reload's, with one untimed graph launch, waited for, after
 *          the capture and before the probe.
 * The race, wake, idle, long and cold variants reuse one graph per
 * candidate, captured in its first sequence.  RACES runs one more timing
 * per repetition and candidate after the first: the two in turns
 * (spmv_dev_time_turns: one warm-up round, six timed).
 * Every run's time is kept; the table gives, per candidate and variant,
 * the median over the repetitions of each run position and of the
 * 2 + 10 median, and the first round's mean over it.  Every product is
 * checked against a double-precision CSR product once per candidate.
 *
 *   usage: probe_rounds [REPS] > table.md     (default 9 repetitions)
 *          probe_rounds REPS RACES RAW.tsv [f32|f64]   (f32 by default)
 *
 * The second form reads the races from RACES, a line per matrix: its
 * suite name, a tab, its candidates' configurations separated by ';' (one
 * marked '*' is timed but was not raced: the exhaustive best), runs the
 * race, direct, fresh, reload and primed variants and writes every run's
 * time to RAW.tsv (matrix, candidate, variant, repetition, p, r1a .. r3b,
 * the 2 + 10 median), for replaying estimators of a round offline; rows
 * of variant turns hold the candidate's six runs in turns with the first
 * candidate in r1a .. r3b and the first's median of its six in 2+10.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "spmv_csr.h"
#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmv_kernels.h"
#include "spmv_stats.h"
#include "gpu_common.h"
#include "suite.h"

#define MAXREP 32
#define NPOS 20   /* run positions a sequence records */
#define NCAND 6
#define MAXRACES 128

/* Candidates of auto's f32 races on these matrices: the races run
 * unless RACES names others. */
struct race {
  const char *name;
  const char *cfg[NCAND];
};
static const struct race builtin[] = {
  {"cop20k_A", {"csr16 bs=128 tpr=8", "csr-stream16 bs=128 k=8",
                "csr16 bs=128 tpr=4", "csr-adaptive bs=256 maxtpr=0 base=0"}},
  {"pdb1HYS", {"csr16 bs=128 tpr=32", "csr16 bs=128 tpr=16",
               "csr16 bs=128 tpr=8", NULL}},
  {"raefsky1", {"csr-vector bs=512 tpr=32", "csr-vector bs=512 tpr=16",
                "csr-vector bs=512 tpr=8", "csr-adaptive bs=256 maxtpr=0 base=2"}},
  {"cant", {"csr16 bs=128 tpr=16", "csr16 bs=128 tpr=8", NULL, NULL}},
  {"mac_econ", {"csr16 bs=128 tpr=4", "csr-stream16 bs=128 k=8",
                "csr16 bs=128 tpr=2", NULL}},
};

enum variant {
  V_RACE, V_WAKE, V_IDLE, V_LONG, V_COLD,
  V_DIRECT, V_FRESH, V_RELOAD, V_PRIMED, V_COUNT
};
static const char *const vnames[V_COUNT] = {
    "race", "wake", "idle", "long", "cold", "direct", "fresh", "reload", "primed"};
/* The variants of each form (see the usage). */
static const enum variant builtin_variants[] = {V_RACE, V_WAKE, V_IDLE, V_LONG,
                                                V_COLD};
static const enum variant file_variants[] = {V_RACE, V_DIRECT, V_FRESH,
                                             V_RELOAD, V_PRIMED};

struct cand {
  const char *name;  /* as the race lists it */
  struct spmv_config cfg;
  struct spmv_layout *L;     /* host layout, for reloads */
  struct spmv_dev_matrix *d;
  struct spmv_dev_graph *g;  /* its products as the worker runs them */
  /* t[v][rep][pos]: positions 0-6 probe and the rounds' runs (long: runs
   * 0-11), 19 the 2 + 10 median. */
  double t[V_COUNT][MAXREP][NPOS];
};

static void die(const struct spmv_error *e, const char *what)
{
  fprintf(stderr, "probe_rounds: %s: %s\n", what, e->msg);
  exit(1);
}

/* Times reps runs after warmup, appending each to row at *pos; g NULL
 * launches directly. */
static void timed(struct spmv_dev_timer *tm, struct cand *c,
                  struct spmv_dev_graph *g, const void *x, void *y,
                  cudaStream_t s, int warmup, int reps, double *row, int *pos)
{
  struct spmv_error e = {0};
  double us[16];

  if (spmv_dev_time(tm, g, c->d, x, y, s, warmup, reps, us, &e) < 0)
    die(&e, "timing");
  for (int i = 0; i < reps && *pos < NPOS - 1; i++)
    row[(*pos)++] = us[i];
}

/* One sequence of variant v on candidate c; cs makes reloads. */
static void sequence(struct spmv_dev_timer *tm, struct cand *c,
                     struct spmv_cusparse_handle *cs, const void *x, void *y,
                     cudaStream_t s, enum variant v, int first, double *row)
{
  struct spmv_error e = {0};
  struct spmv_dev_graph *g = v == V_DIRECT ? NULL : c->g;
  double ex[10];
  int pos = 0;

  for (int i = 0; i < NPOS; i++)
    row[i] = NAN;
  if (v == V_RELOAD || v == V_PRIMED) {
    spmv_dev_graph_reset(c->g);  /* before the arrays it points at */
    c->d = spmv_dev_matrix_free(c->d);
    if (spmv_dev_matrix_new(c->L, cs, &c->d, &e) < 0)
      die(&e, "reload");
  }
  if (v == V_FRESH)
    spmv_dev_graph_reset(c->g);
  if (spmv_dev_matrix_warm_l2(c->d, s, &e) < 0)
    die(&e, "warm-up");
  if (v == V_PRIMED &&
      (spmv_dev_graph_prepare(c->g, c->d, 1.0, x, 0.0, y, s, &e) < 0 ||
       spmv_dev_graph_spmv(c->g, c->d, 1.0, x, 0.0, y, s, &e) < 0 ||
       cudaStreamSynchronize(s) != cudaSuccess))
    die(&e, "priming");
  if (v == V_IDLE || (v == V_COLD && first)) {
    cudaStreamSynchronize(s);
    usleep(v == V_IDLE ? 3000 : 300000);
  }
  if (v == V_LONG) {
    timed(tm, c, g, x, y, s, 0, 12, row, &pos);
  } else {
    timed(tm, c, g, x, y, s, 0, 1, row, &pos);
    for (int r = 0; r < 3; r++)
      timed(tm, c, g, x, y, s, v == V_WAKE ? 1 : 0, 2, row, &pos);
  }
  if (spmv_dev_time(tm, g, c->d, x, y, s, 2, 10, ex, &e) < 0)
    die(&e, "timing");
  row[NPOS - 1] = spmv_median(ex, 10);
}

/* The median over n repetitions of position p. */
static double pos_median(double t[][NPOS], int n, int p)
{
  double v[MAXREP];
  int k = 0;

  for (int i = 0; i < n; i++)
    if (!isnan(t[i][p]))
      v[k++] = t[i][p];
  return k > 0 ? spmv_median(v, (size_t)k) : NAN;
}

/* Checks c's product, launched directly, against ref (gpu_reference of
 * A and x): 0, or -1 with the first row out of gpu_row_tol named on
 * stderr; exits when it cannot run. */
static int verify(const struct spmv_csr *A, enum spmv_dtype dt, struct cand *c,
                  const double *ref, const double *mag, const void *dx,
                  void *dy, cudaStream_t s, const char *what)
{
  struct spmv_error e = {0};
  double *hy = malloc(sizeof *hy * (size_t)(A->rows > 0 ? A->rows : 1));
  int64_t bad, row;

  if (hy == NULL ||
      (bad = gpu_product_check(A, dt, NULL, c->d, dx, dy, hy, s, ref, mag, &row,
                               &e)) < 0) {
    fprintf(stderr, "probe_rounds: %s: product failed: %s\n", what, e.msg);
    exit(1);
  }
  if (bad > 0)
    fprintf(stderr, "probe_rounds: %s: wrong product: %lld rows of %lld, the "
            "first %lld: %g, not %g\n", what, (long long)bad,
            (long long)A->rows, (long long)row,
            dt == SPMV_F32 ? ((float *)hy)[row] : hy[row], ref[row]);
  free(hy);
  return bad > 0 ? -1 : 0;
}

/* Reads RACES (see the usage) into r[0..*n); the strings are owned by
 * the process.  Returns 0, or -1 with a message. */
static int read_races(const char *path, struct race *r, size_t *n)
{
  char line[2048];
  FILE *f = fopen(path, "r");

  *n = 0;
  if (f == NULL) {
    perror(path);
    return -1;
  }
  while (fgets(line, sizeof line, f) != NULL && *n < MAXRACES) {
    char *tab = strchr(line, '\t'), *tok, *save = NULL;
    int k = 0;
    line[strcspn(line, "\n")] = '\0';
    if (tab == NULL)
      continue;
    *tab = '\0';
    memset(&r[*n], 0, sizeof r[*n]);
    r[*n].name = strdup(line);
    for (tok = strtok_r(tab + 1, ";", &save); tok != NULL && k < NCAND;
         tok = strtok_r(NULL, ";", &save))
      r[*n].cfg[k++] = strdup(tok);
    (*n)++;
  }
  fclose(f);
  return 0;
}

int main(int argc, char **argv)
{
  int nrep = argc > 1 ? atoi(argv[1]) : 9;
  enum spmv_dtype dt = argc > 4 && strcmp(argv[4], "f64") == 0 ? SPMV_F64 : SPMV_F32;
  size_t vs = spmv_dtype_size(dt);
  struct spmv_error e = {0};
  struct spmv_dev_timer *tm = NULL;
  struct spmv_cusparse_handle *cs = NULL;
  char devname[256];
  void *sv = NULL;
  int rc;
  cudaStream_t s;

  static struct race from_file[MAXRACES];
  const struct race *races = builtin;
  size_t nraces = sizeof builtin / sizeof builtin[0];
  FILE *raw = NULL;
  const enum variant *vars = builtin_variants;
  int nvar = (int)(sizeof builtin_variants / sizeof builtin_variants[0]);

  if (nrep < 1 || nrep > MAXREP || argc == 3 || argc > 5 ||
      (argc == 5 && strcmp(argv[4], "f64") != 0 && strcmp(argv[4], "f32") != 0)) {
    fprintf(stderr, "usage: probe_rounds [REPS 1..%d [RACES RAW.tsv [f32|f64]]]\n",
            MAXREP);
    return 2;
  }
  if (argc >= 4) {
    if (read_races(argv[2], from_file, &nraces) < 0)
      return 1;
    races = from_file;
    vars = file_variants;
    nvar = (int)(sizeof file_variants / sizeof file_variants[0]);
    if ((raw = fopen(argv[3], "w")) == NULL) {
      perror(argv[3]);
      return 1;
    }
    fprintf(raw, "matrix\tcandidate\tvariant\trep\tp\tr1a\tr1b\tr2a\tr2b\tr3a\tr3b\t2+10\n");
  }
  if ((rc = gpu_probe_setup("probe_rounds", devname, sizeof devname, &sv, &tm,
                             &cs)) != 0)
    return rc;
  s = (cudaStream_t)sv;
  printf("# First rounds, run by run (%s, %s, %d repetitions)\n\n", devname,
         spmv_dtype_name(dt), nrep);
  printf("Microseconds, medians over the repetitions of each run position.\n"
         "race/idle/wake: p = probe run, r1a r1b = round 1's two runs, ...;\n"
         "long: runs 1-12 of one hold.  2+10 = the exhaustive race's median;\n"
         "r1/2+10 = round 1's mean over it (long: runs 2-3's).\n\n");
  printf("| matrix | candidate | variant | p | r1a | r1b | r2a | r2b | r3a | r3b "
         "| 2+10 | r1/2+10 |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t m = 0; m < nraces; m++) {
    struct spmv_csr *A;
    struct cand *c = calloc(NCAND, sizeof *c);
    int nc = 0;
    void *hx;
    double *x, *ref, *mag;
    void *dx = NULL, *dy = NULL;

    if (c == NULL)
      return 1;
    spmv_error_clear(&e);
    if ((A = bench_suite_make_named(races[m].name, &e)) == NULL)
      die(&e, races[m].name);
    hx = malloc(vs * (size_t)A->cols);
    x = malloc(sizeof *x * (size_t)A->cols);
    ref = malloc(sizeof *ref * (size_t)(A->rows > 0 ? A->rows : 1));
    mag = malloc(sizeof *mag * (size_t)(A->rows > 0 ? A->rows : 1));
    if (hx == NULL || x == NULL || ref == NULL || mag == NULL)
      return 1;
    for (int64_t j = 0; j < A->cols; j++) {
      float v = (float)(0.5 + (double)((j * 7919) % 1000) / 1000.0) *
                ((j & 1) ? -1.0f : 1.0f);

      x[j] = v;  /* the same x in both types: f32's values exactly */
      if (dt == SPMV_F32)
        ((float *)hx)[j] = v;
      else
        ((double *)hx)[j] = v;
    }
    gpu_reference(A, x, ref, mag);
    if (spmv_dev_alloc(&dx, vs * (size_t)A->cols, "x", &e) < 0 ||
        spmv_dev_alloc(&dy, vs * (size_t)A->rows, "y", &e) < 0)
      die(&e, "vectors");
    if (spmv_dev_upload(dx, hx, vs * (size_t)A->cols, "x", &e) < 0)
      die(&e, "x");
    for (int k = 0; k < NCAND && races[m].cfg[k] != NULL; k++) {
      struct spmv_layout *L = NULL;
      const char *text = races[m].cfg[k] + (races[m].cfg[k][0] == '*');
      if (spmv_config_parse(text, &c[nc].cfg, &e) < 0 ||
          spmv_layout_new(A, dt, &c[nc].cfg, NULL, &L, &e) < 0 ||
          spmv_dev_matrix_new(L, cs, &c[nc].d, &e) < 0)
        die(&e, races[m].cfg[k]);
      if ((c[nc].g = spmv_dev_graph_new()) == NULL)
        return 1;
      c[nc].L = L;
      c[nc].name = races[m].cfg[k];
      if (verify(A, dt, &c[nc], ref, mag, dx, dy, s, races[m].cfg[k]) < 0) {
        c[nc].g = spmv_dev_graph_free(c[nc].g);
        c[nc].d = spmv_dev_matrix_free(c[nc].d);
        spmv_layout_free(c[nc].L);
        continue;  /* named on stderr, left out of the tables */
      }
      nc++;
    }
    /* Repetitions of the race's order, variants interleaved. */
    for (int r = 0; r < nrep; r++)
      for (int i = 0; i < nvar; i++)
        for (int k = 0; k < nc; k++)
          sequence(tm, &c[k], cs, dx, dy, s, vars[i], k == 0, c[k].t[vars[i]][r]);
    for (int r = 0; raw != NULL && r < nrep; r++)
      for (int k = 1; k < nc; k++) {
        double us[2][6];
        struct spmv_dev_timed p[2] = {{c[k].g, c[k].d, dx, dy, us[0]},
                                      {c[0].g, c[0].d, dx, dy, us[1]}};
        if (spmv_dev_time_turns(tm, p, 2, s, 1, 6, &e) < 0)
          die(&e, "timing in turns");
        fprintf(raw, "%s\t%s\tturns\t%d\tnan", races[m].name, c[k].name, r);
        for (int j = 0; j < 6; j++)
          fprintf(raw, "\t%.3f", us[0][j]);
        fprintf(raw, "\t%.3f\n", spmv_median(us[1], 6));
      }
    for (int k = 0; raw != NULL && k < nc; k++)
      for (int i = 0; i < nvar; i++)
        for (int r = 0; r < nrep; r++) {
          fprintf(raw, "%s\t%s\t%s\t%d", races[m].name, c[k].name,
                  vnames[vars[i]], r);
          for (int p = 0; p < 7; p++)
            fprintf(raw, "\t%.3f", c[k].t[vars[i]][r][p]);
          fprintf(raw, "\t%.3f\n", c[k].t[vars[i]][r][NPOS - 1]);
        }
    for (int k = 0; k < nc; k++)
      for (int i = 0; i < nvar; i++) {
        enum variant v = vars[i];
        double q[NPOS];
        for (int p = 0; p < NPOS; p++)
          q[p] = pos_median(c[k].t[v], nrep, p);
        double r1 = (q[1] + q[2]) / 2;  /* long: its runs 2-3 */
            printf("| %s | %s | %s |", races[m].name, c[k].name, vnames[v]);
        for (int p = 0; p < 7; p++)
          printf(" %.3f |", q[p]);
        printf(" %.3f | %.3f |\n", q[NPOS - 1], r1 / q[NPOS - 1]);
        if (v == V_LONG) {
          printf("| | | long runs 8-12 |");
          for (int p = 7; p < 12; p++)
            printf(" %.3f |", q[p]);
          printf(" | | | |\n");
        }
      }
    for (int k = 0; k < nc; k++) {
      spmv_dev_graph_free(c[k].g);
      spmv_dev_matrix_free(c[k].d);
      spmv_layout_free(c[k].L);
    }
    spmv_dev_free(dx);
    spmv_dev_free(dy);
    free(hx);
    free(x);
    free(ref);
    free(mag);
    free(c);
    spmv_csr_free(A);
  }
  spmv_dev_timer_free(tm);
  spmv_cusparse_handle_free(cs);
  if (raw != NULL && fclose(raw) != 0) {
    perror(argv[3]);
    return 1;
  }
  return 0;
}
