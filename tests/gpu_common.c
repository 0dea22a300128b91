/* gpu_common.c: device probe, tuner configurations and the matrix list for the GPU tests and benchmarks. */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_common.h"
#include "testdata.h"
#include "spmv_error.h"
#include "spmv_kernels.h"

/* Probes for a CUDA device in a child process. */
int gpu_present(void)
{
  int status = 0;
  pid_t pid = fork();

  if (pid < 0)
    return 0;
  if (pid == 0) {
    int n = 0;
    _exit(cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? 0 : 1);
  }
  if (waitpid(pid, &status, 0) != pid)
    return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void put(struct spmv_config *out, int cap, int *n,
                enum spmv_format f, int bs, int tpr, int param, int param2)
{
  if (*n < cap)
    out[*n] = (struct spmv_config){f, bs, tpr, param, param2};
  (*n)++;
}

/* The tuner's candidate configurations; see gpu_common.h. */
int gpu_configs(struct spmv_config *out, int cap, unsigned bs_mask)
{
  static const int all_bs[] = {64, 128, 256, 512};
  static const int tprs[] = {1, 2, 4, 8, 16, 32};
  static const int sell[][2] = {{32, 1}, {32, 256}, {8, 64}};
  int n = 0;

  for (int b = 0; b < 4; b++) {
    int bs = all_bs[b];
    if (bs_mask != 0 && !(bs_mask & (1u << b)))
      continue;
    put(out, cap, &n, SPMV_FMT_CSR_SCALAR, bs, 0, 0, 0);
    for (int t = 0; t < 6; t++)
      put(out, cap, &n, SPMV_FMT_CSR_VECTOR, bs, tprs[t], 0, 0);
    put(out, cap, &n, SPMV_FMT_CSR_ADAPTIVE, bs, 4, 2, 0);
    put(out, cap, &n, SPMV_FMT_CSR_ADAPTIVE, bs, 32, 0, 0);
    put(out, cap, &n, SPMV_FMT_CSR_ADAPTIVE, bs, bs, 0, 0);
    put(out, cap, &n, SPMV_FMT_CSR_ADAPTIVE, bs, bs, 2, 0);
    put(out, cap, &n, SPMV_FMT_ELL, bs, 0, 0, 0);
    for (int t = 0; t < 6; t++)
      put(out, cap, &n, SPMV_FMT_ELLR_T, bs, tprs[t], 0, 0);
    put(out, cap, &n, SPMV_FMT_COO, bs, 0, 0, 0);
    put(out, cap, &n, SPMV_FMT_HYB, bs, 0, 0, 0);
    put(out, cap, &n, SPMV_FMT_HYB, bs, 0, 2, 0);
    put(out, cap, &n, SPMV_FMT_DIA, bs, 0, 0, 0);
    put(out, cap, &n, SPMV_FMT_JAD, bs, 0, 0, 0);
    for (int s = 0; s < 3; s++)
      put(out, cap, &n, SPMV_FMT_SELL, bs, 0, sell[s][0], sell[s][1]);
    for (int s = 0; s < 3; s++)
      put(out, cap, &n, SPMV_FMT_SELL16, bs, 0, sell[s][0], sell[s][1]);
    for (int t = 0; t < 6; t++)
      put(out, cap, &n, SPMV_FMT_CSR16, bs, tprs[t], 0, 0);
    put(out, cap, &n, SPMV_FMT_CSR_MERGE, bs, 0, 0, 0);
    /* k up to 16 where BS*k doubles and row ends fit 48 KB of shared memory */
    for (int k = 1; k <= 16 && bs * k <= 4096; k *= 2) {
      put(out, cap, &n, SPMV_FMT_CSR_STREAM, bs, 0, k, 0);
      put(out, cap, &n, SPMV_FMT_CSR_STREAM16, bs, 0, k, 0);
    }
    /* csr-panel from its narrowest panel up to one that takes over 48 KB
     * of shared memory (the opt-in launch) in both types, TPR 1..8, and
     * TPR 16 and 32 once each */
    for (int t = 0; t < 4; t++)
      for (int w = 1024; w <= 16384; w *= 4)
        put(out, cap, &n, SPMV_FMT_CSR_PANEL, bs, tprs[t], w, 0);
    put(out, cap, &n, SPMV_FMT_CSR_PANEL, bs, 32, 8192, 0);
    put(out, cap, &n, SPMV_FMT_CSR_PANEL, bs, 16, 2048, 0);
    /* and its largest blocks once, with the 512 ones */
    if (bs == 512)
      put(out, cap, &n, SPMV_FMT_CSR_PANEL, 1024, 4, 16384, 0);
  }
  for (int alg = 1; alg <= SPMV_CUSPARSE_NALGS; alg++)
    put(out, cap, &n, SPMV_FMT_CUSPARSE, 256, 0, alg, 0);
  return n;
}

/* One configuration per format; see gpu_common.h. */
int gpu_format_samples(const struct spmv_config **out)
{
  static const struct spmv_config samples[] = {
    {SPMV_FMT_CSR_SCALAR, 256, 0, 0, 0},  {SPMV_FMT_CSR_VECTOR, 256, 8, 0, 0},
    {SPMV_FMT_CSR_ADAPTIVE, 256, 32, 0, 0}, {SPMV_FMT_CSR_MERGE, 256, 0, 0, 0},
    {SPMV_FMT_CSR_STREAM, 128, 0, 4, 0},  {SPMV_FMT_CSR_STREAM16, 128, 0, 8, 0},
    {SPMV_FMT_CSR16, 128, 8, 0, 0},       {SPMV_FMT_ELL, 256, 0, 0, 0},
    {SPMV_FMT_ELLR_T, 256, 4, 0, 0},      {SPMV_FMT_SELL, 256, 0, 32, 256},
    {SPMV_FMT_SELL16, 128, 0, 32, 256},   {SPMV_FMT_COO, 256, 0, 0, 0},
    {SPMV_FMT_HYB, 256, 0, 0, 0},         {SPMV_FMT_JAD, 256, 0, 0, 0},
    {SPMV_FMT_DIA, 256, 0, 0, 0},         {SPMV_FMT_CUSPARSE, 256, 0, 1, 0},
    {SPMV_FMT_CUSPARSE, 256, 0, 2, 0},    {SPMV_FMT_CSR_PANEL, 256, 4, 16384, 0},
    {SPMV_FMT_CUSPARSE, 256, 0, 3, 0},    {SPMV_FMT_CUSPARSE, 256, 0, 4, 0},
  };

  *out = samples;
  return (int)(sizeof samples / sizeof samples[0]);
}

static int has_suffix(const char *s, const char *suf)
{
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the real matrices; see gpu_common.h. */
int gpu_matrix_paths(char ***paths)
{
  const char *dir = testdata_dir();
  char **v = NULL;
  int n = 0, cap = 0;
  struct dirent *e;
  DIR *d;

  *paths = NULL;
  d = opendir(dir);
  if (!d)
    return -1;
  while ((e = readdir(d)) != NULL) {
    if (!has_suffix(e->d_name, ".mtx") && !has_suffix(e->d_name, ".mtx.gz"))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nv = realloc(v, sizeof *v * (size_t)cap);
      if (!nv)
        break;
      v = nv;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    v[n] = malloc(len);
    if (!v[n])
      break;
    strcpy(v[n], dir);
    strcat(v[n], "/");
    strcat(v[n], e->d_name);
    n++;
  }
  closedir(d);
  qsort(v, (size_t)n, sizeof *v, cmp_str);
  *paths = v;
  return n;
}

void gpu_paths_free(char **paths, int n)
{
  for (int i = 0; i < n; i++)
    free(paths[i]);
  free(paths);
}

/* Random +-[0.5, 1.5) values with 20 significant bits (exact in float). */
void gpu_random_vector(double *x, int64_t n, uint64_t seed)
{
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;

  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    double v = 0.5 + (double)((s >> 20) & 0xfffff) / 1048576.0;
    x[i] = (s >> 63) ? -v : v;
  }
}

/* The tolerance of one row; see gpu_common.h. */
double gpu_row_tol(enum spmv_dtype dt, int64_t len, double mag)
{
  double eps = dt == SPMV_F32 ? 0x1p-24 : 0x1p-53;
  double tiny = dt == SPMV_F32 ? 0x1p-149 : 0x1p-1074;

  return 4 * eps * (double)(len + 4) * mag + 2 * (double)(len + 2) * tiny;
}

/* The double reference and each row's magnitude. */
void gpu_reference(const struct spmv_csr *A, const double *x, double *ref,
                   double *mag)
{
  for (int64_t i = 0; i < A->rows; i++) {
    double s = 0, m = 0;

    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      double t = A->val[k] * x[A->col_idx[k]];
      s += t;
      m += fabs(t);
    }
    ref[i] = s;
    mag[i] = m;
  }
}

/* Rows out of tolerance; see gpu_common.h. */
int64_t gpu_check_rows(const struct spmv_csr *A, enum spmv_dtype dt,
                       const void *y, const double *ref, const double *mag,
                       int64_t stride, int64_t phase, int64_t *first)
{
  int64_t bad = 0;

  *first = -1;
  if (stride < 1)
    stride = 1;
  for (int64_t i = phase % stride; i < A->rows; i += stride) {
    double v = dt == SPMV_F32 ? (double)((const float *)y)[i]
                              : ((const double *)y)[i];
    int64_t len = A->row_ptr[i + 1] - A->row_ptr[i];

    if (!(fabs(v - ref[i]) <= gpu_row_tol(dt, len, mag[i]))) {
      if (bad++ == 0)
        *first = i;
    }
  }
  return bad;
}

int gpu_probe_setup(const char *prog, char *name, size_t cap, void **stream,
                    struct spmv_dev_timer **tm, struct spmv_cusparse_handle **cs)
{
  struct spmv_error e = {0};
  struct cudaDeviceProp prop;
  cudaStream_t s;
  int ndev = 0;

  *tm = NULL;
  *cs = NULL;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    fprintf(stderr, "%s: no CUDA device\n", prog);
    return 77;
  }
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "%s: no stream on device 0\n", prog);
    return 1;
  }
  *stream = s;
  snprintf(name, cap, "%s", prop.name);
  if (spmv_dev_pool_keep(&e) < 0 || spmv_dev_timer_new(tm, &e) < 0 ||
      spmv_cusparse_handle_new(s, cs, &e) < 0) {
    fprintf(stderr, "%s: set-up: %s\n", prog, e.msg);
    return 1;
  }
  return 0;
}

int64_t gpu_product_check(const struct spmv_csr *A, enum spmv_dtype dt,
                          struct spmv_dev_graph *g, const struct spmv_dev_matrix *d,
                          const void *dx, void *dy, void *hy, void *stream,
                          const double *ref, const double *mag, int64_t *first,
                          struct spmv_error *err)
{
  cudaStream_t s = stream;
  size_t yb = (size_t)A->rows * spmv_dtype_size(dt);
  cudaError_t ce;

  *first = -1;
  if ((ce = cudaMemsetAsync(dy, 0xff, yb, s)) != cudaSuccess) {
    spmv_error_set(err, SPMV_EGPU, "poisoning y: %s", cudaGetErrorString(ce));
    return -1;
  }
  if (spmv_dev_graph_spmv(g, d, 1.0, dx, 0.0, dy, s, err) < 0)
    return -1;
  if ((ce = cudaMemcpyAsync(hy, dy, yb, cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
      (ce = cudaStreamSynchronize(s)) != cudaSuccess) {
    spmv_error_set(err, SPMV_EGPU, "the product: %s", cudaGetErrorString(ce));
    return -1;
  }
  return gpu_check_rows(A, dt, hy, ref, mag, 1, 0, first);
}
