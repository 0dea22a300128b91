/* demo_client.c: the README's main job, seen from an application. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spmv.h"
#include "spmv_csr.h"
#include "spmv_mmio.h"

static void on_progress(const struct spmv_progress *p, void *arg)
{
  (void)arg;
  if (p->candidate != NULL && p->candidate[0] != '\0')
    printf("  %s %lld/%lld  %-36s %10.2f us\n", p->stage, (long long)p->done,
           (long long)p->total, p->candidate, p->time_us);
}

static double now_s(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  struct spmv_client *c = NULL;
  struct spmv_matrix *m = NULL;
  struct spmv_csr *A = NULL;
  struct spmv_error err;
  struct spmv_load_options opt;
  struct spmv_info info;
  double *x = NULL, *y = NULL, *ref = NULL, num = 0, den = 0, t0, dt;
  int rc, status = 1, reps = 20, i;
  int64_t r;

  if (argc != 3) {
    fprintf(stderr, "usage: demo_client SOCKET MATRIX.mtx\n");
    return 2;
  }
  rc = spmv_mmio_read(argv[2], &A, NULL, &err);
  if (rc != 0) {
    fprintf(stderr, "demo_client: %s\n", err.msg);
    return 1;
  }
  if ((rc = spmv_connect(argv[1], &c)) != 0) {
    fprintf(stderr, "demo_client: %s\n", spmv_client_errmsg(NULL));
    goto out;
  }
  spmv_load_options_init(&opt);
  opt.progress = on_progress;
  opt.name = "demo";
  t0 = now_s();
  rc = spmv_load_csr(c, SPMV_F64, A->rows, A->cols, A->nnz, A->row_ptr,
                     A->col_idx, A->val, &opt, &m);
  dt = now_s() - t0;
  if (rc != 0) {
    fprintf(stderr, "demo_client: load: %s\n", spmv_client_errmsg(c));
    goto out;
  }
  if ((rc = spmv_info(m, &info)) != 0) {
    fprintf(stderr, "demo_client: info: %s\n", spmv_client_errmsg(c));
    goto out;
  }
  printf("matrix %s: %lld x %lld, %lld nonzeros, rows of %lld..%lld (mean %.1f, sigma/mean %.0f%%)\n",
         argv[2], (long long)info.rows, (long long)info.cols,
         (long long)info.nnz, (long long)info.rl_min, (long long)info.rl_max,
         info.rl_mean, 100 * info.rl_cv);
  printf("fingerprint %s\n", info.fingerprint);
  printf("decision: %s  (from the %s, strategy %s, load took %.2f s)\n",
         info.config, strcmp(info.source, "cache") == 0 ? "cache" : "tuner",
         info.strategy, dt);
  printf("kernel time %.2f us per product, %.2f GFLOP/s\n", info.time_us,
         info.gflops);

  x = malloc(A->cols * sizeof *x + 1);
  y = malloc(A->rows * sizeof *y + 1);
  ref = malloc(A->rows * sizeof *ref + 1);
  if (x == NULL || y == NULL || ref == NULL)
    goto out;
  srand(12345);
  for (r = 0; r < A->cols; r++)
    x[r] = 0.5 + (double)rand() / RAND_MAX;
  for (r = 0; r < A->rows; r++)
    y[r] = ref[r] = (double)rand() / RAND_MAX - 0.5;
  /* y = 2*A*x - 0.5*y, checked against the plain CSR loop. */
  t0 = now_s();
  for (i = 0; i < reps && rc == 0; i++) {
    memcpy(y, ref, A->rows * sizeof *y);
    rc = spmv_multiply(m, 2.0, x, -0.5, y);
  }
  dt = (now_s() - t0) / reps;
  if (rc != 0) {
    fprintf(stderr, "demo_client: multiply: %s\n", spmv_client_errmsg(c));
    goto out;
  }
  spmv_csr_ref(A, 2.0, x, -0.5, ref);
  for (r = 0; r < A->rows; r++) {
    num = fmax(num, fabs(y[r] - ref[r]));
    den = fmax(den, fabs(ref[r]));
  }
  printf("multiply through spmvd: %.1f us per call round trip; "
         "max |y - y_ref| / max |y_ref| = %.2e\n", dt * 1e6, num / den);
  if (!(num <= 1e-12 * den)) {
    fprintf(stderr, "demo_client: result differs from the reference\n");
    goto out;
  }
  printf("result matches the reference product\n");
  status = 0;
out:
  m = spmv_matrix_free(m);
  spmv_disconnect(c);
  spmv_csr_free(A);
  free(x);
  free(y);
  free(ref);
  return status;
}
