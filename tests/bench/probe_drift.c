/*
 * probe_drift.c: how a small product's timed speed moves from one
 * millisecond to the next.  Replayed as graphs, a race candidate's
 * rounds on a product of a few microseconds read alike, but its 2 + 10
 * median moves between repetitions a few milliseconds apart, and
 * candidates timed one after the other move together (probe_rounds).
 * Whether that is one state of the GPU that every product shares, at
 * which time scale, and whether launching directly escapes it, is what a
 * race needs to know to compare its candidates.
 *
 * Products of a few f32 matrices of the suite, all resident at once (a
 * graph each, one launched directly), are timed in steps: each step times
 * every product in a fixed order as spmv_dev_time does (one warm-up, the
 * median of four runs held behind the timer's hold).  Two series: steps
 * back to back, and steps 2 ms apart.  Every product is checked once
 * against a double-precision CSR product.
 *
 *   usage: probe_drift [STEPS] > RAW.tsv     (default 200 steps a series)
 *
 * RAW.tsv: series, step, product (matrix and configuration, "direct" when
 * launched directly), its median in microseconds.
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

/* Small f32 products of matrices whose races have missed the best, and
 * a longer one to compare. */
static const struct {
  const char *matrix, *cfg;
  int direct;
} products[] = {
    {"gr_30_30", "csr-vector bs=512 tpr=16", 0},
    {"gr_30_30", "csr16 bs=512 tpr=32", 0},
    {"gr_30_30", "csr-vector bs=256 tpr=16", 0},
    {"gr_30_30", "csr-vector bs=512 tpr=16", 1},
    {"mhd3200b", "csr-vector bs=512 tpr=16", 0},
    {"mhd3200b", "ellr-t bs=256 t=16", 0},
    {"Pd", "csr-vector bs=512 tpr=16", 0},
    {"Pd", "csr-scalar bs=256", 0},
    {"cop20k_A", "csr16 bs=128 tpr=8", 0},
};
#define NPROD (sizeof products / sizeof products[0])

struct prod {
  struct spmv_csr *A;  /* owned by the first product of its matrix */
  struct spmv_dev_matrix *d;
  struct spmv_dev_graph *g;  /* NULL: launched directly */
  void *dx, *dy;
};

static void die(const struct spmv_error *e, const char *what)
{
  fprintf(stderr, "probe_drift: %s: %s\n", what, e->msg);
  exit(1);
}

/* Loads product i into p (sharing the matrix of an earlier product of the
 * same name) and checks one product against the double reference. */
static void load(size_t i, struct prod *p, struct spmv_cusparse_handle *cs,
                 cudaStream_t s)
{
  struct spmv_error e = {0};
  struct spmv_config cfg;
  struct spmv_layout *L = NULL;
  const struct spmv_csr *A = NULL;

  for (size_t j = 0; j < i && A == NULL; j++)
    if (strcmp(products[j].matrix, products[i].matrix) == 0)
      A = p[j].A;  /* NULL but at its owner */
  if (A == NULL &&
      (A = p[i].A = bench_suite_make_named(products[i].matrix, &e)) == NULL)
    die(&e, products[i].matrix);
  if (spmv_config_parse(products[i].cfg, &cfg, &e) < 0 ||
      spmv_layout_new(A, SPMV_F32, &cfg, NULL, &L, &e) < 0 ||
      spmv_dev_matrix_new(L, cs, &p[i].d, &e) < 0)
    die(&e, products[i].cfg);
  spmv_layout_free(L);
  if (!products[i].direct && (p[i].g = spmv_dev_graph_new()) == NULL)
    exit(1);

  float *hx = malloc(sizeof *hx * (size_t)A->cols);
  float *hy = malloc(sizeof *hy * (size_t)(A->rows > 0 ? A->rows : 1));
  double *x = malloc(sizeof *x * (size_t)A->cols);
  double *ref = malloc(sizeof *ref * (size_t)(A->rows > 0 ? A->rows : 1));
  double *mag = malloc(sizeof *mag * (size_t)(A->rows > 0 ? A->rows : 1));
  int64_t row;
  if (hx == NULL || hy == NULL || x == NULL || ref == NULL || mag == NULL)
    exit(1);
  gpu_random_vector(x, A->cols, 7919);  /* exact in float */
  for (int64_t j = 0; j < A->cols; j++)
    hx[j] = (float)x[j];
  gpu_reference(A, x, ref, mag);
  if (spmv_dev_alloc(&p[i].dx, sizeof *hx * (size_t)A->cols, "x", &e) < 0 ||
      spmv_dev_alloc(&p[i].dy, sizeof *hy * (size_t)A->rows, "y", &e) < 0 ||
      spmv_dev_upload(p[i].dx, hx, sizeof *hx * (size_t)A->cols, "x", &e) < 0)
    die(&e, products[i].cfg);
  int64_t bad = gpu_product_check(A, SPMV_F32, p[i].g, p[i].d, p[i].dx, p[i].dy, hy, s,
                                  ref, mag, &row, &e);
  if (bad < 0)
    die(&e, products[i].cfg);
  if (bad > 0) {
    fprintf(stderr, "probe_drift: %s %s: wrong product at row %lld: %g, not %g\n",
            products[i].matrix, products[i].cfg, (long long)row, hy[row], ref[row]);
    exit(1);
  }
  free(hx);
  free(hy);
  free(x);
  free(ref);
  free(mag);
}

int main(int argc, char **argv)
{
  int steps = argc > 1 ? atoi(argv[1]) : 200;
  struct spmv_error e = {0};
  struct spmv_dev_timer *tm = NULL;
  struct spmv_cusparse_handle *cs = NULL;
  char devname[256];
  void *sv = NULL;
  int rc;
  struct prod p[NPROD];
  cudaStream_t s;

  if (steps < 1 || steps > 100000 || argc > 2) {
    fprintf(stderr, "usage: probe_drift [STEPS]\n");
    return 2;
  }
  if ((rc = gpu_probe_setup("probe_drift", devname, sizeof devname, &sv, &tm,
                             &cs)) != 0)
    return rc;
  s = (cudaStream_t)sv;
  memset(p, 0, sizeof p);
  for (size_t i = 0; i < NPROD; i++)
    load(i, p, cs, s);
  printf("# probe_drift: %s, f32, %d steps a series\n", devname, steps);
  printf("series\tstep\tproduct\tmedian_us\n");
  for (int series = 0; series < 2; series++)
    for (int k = 0; k < steps; k++) {
      for (size_t i = 0; i < NPROD; i++) {
        double us[4];
        if (spmv_dev_time(tm, p[i].g, p[i].d, p[i].dx, p[i].dy, s, 1, 4, us, &e) < 0)
          die(&e, "timing");
        printf("%s\t%d\t%s %s%s\t%.3f\n", series ? "2ms" : "back-to-back", k,
               products[i].matrix, products[i].cfg,
               products[i].direct ? " direct" : "", spmv_median(us, 4));
      }
      if (series == 1)
        usleep(2000);
    }
  for (size_t i = 0; i < NPROD; i++) {
    spmv_dev_graph_free(p[i].g);
    spmv_dev_matrix_free(p[i].d);
    spmv_dev_free(p[i].dx);
    spmv_dev_free(p[i].dy);
    spmv_csr_free(p[i].A);
  }
  spmv_dev_timer_free(tm);
  spmv_cusparse_handle_free(cs);
  return 0;
}
