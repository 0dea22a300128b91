/* bench_mmio.c: Matrix Market parsing speed in MB/s of text, per matrix. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "spmv_mmio.h"

#define MAX_RUNS 101

/* Where the shared matrices are when SPMV_MATRICES is not set. */
#ifndef SPMV_BENCH_MATRICES
#define SPMV_BENCH_MATRICES "tests/data/matrices"
#endif

/*
 * CPU time of this thread in seconds: the figure is MB/s on one core, and
 * CPU time keeps it meaningful on a loaded machine.
 */
static double now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Orders doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return (x > y) - (x < y);
}

/* Returns the median of n times (sorting t). */
static double median(double *t, int n)
{
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Reads path (plain or gzip) into a new buffer owned by the caller. */
static char *load_text(const char *path, size_t *len)
{
  gzFile gz = gzopen(path, "rb");
  size_t cap = 1 << 20, n = 0;
  char *b = NULL, *nb;
  int got;

  if (gz == NULL)
    return NULL;
  for (;;) {
    if (b == NULL || cap - n < (1 << 16)) {
      cap *= 2;
      if ((nb = realloc(b, cap)) == NULL)
        goto fail;
      b = nb;
    }
    got = gzread(gz, b + n, (unsigned)(cap - n));
    if (got < 0)
      goto fail;
    if (got == 0)
      break;
    n += (size_t)got;
  }
  gzclose(gz);
  *len = n;
  return b;
fail:
  gzclose(gz);
  free(b);
  return NULL;
}

/*
 * Times `runs` parses from memory and `runs` reads from the file; adds the
 * text size and the median times to the totals.  Returns 0 or -1.
 */
static int bench_one(const char *path, int runs, double *bytes, double *t_parse,
                     double *t_read)
{
  struct spmv_error err = { 0, "" };
  struct spmv_mmio_info info;
  struct spmv_csr *A = NULL;
  double tp[MAX_RUNS], tr[MAX_RUNS], mp, mr;
  size_t len = 0;
  char *text = load_text(path, &len);
  const char *base = strrchr(path, '/');
  int i;

  base = base ? base + 1 : path;
  if (text == NULL) {
    fprintf(stderr, "bench_mmio: %s: cannot load\n", path);
    return -1;
  }
  /* Correctness first (and warm-up): the CSR must be valid. */
  if (spmv_mmio_read(path, &A, &info, &err) != 0 ||
      spmv_csr_validate(A, SPMV_CSR_ALLOW_NONFINITE, &err) != 0) {
    fprintf(stderr, "bench_mmio: %s\n", err.msg);
    free(text);
    spmv_csr_free(A);
    return -1;
  }
  A = spmv_csr_free(A);
  for (i = 0; i < runs; i++) {
    double t0 = now();
    if (spmv_mmio_parse(text, len, path, &A, NULL, &err) != 0)
      goto fail;
    tp[i] = now() - t0;
    A = spmv_csr_free(A);
    t0 = now();
    if (spmv_mmio_read(path, &A, NULL, &err) != 0)
      goto fail;
    tr[i] = now() - t0;
    A = spmv_csr_free(A);
  }
  mp = median(tp, runs);
  mr = median(tr, runs);
  printf("%-28s %10zu %10lld %8.1f %8.1f %8.3f\n", base, len,
         (long long)info.entries, (double)len / mp * 1e-6, (double)len / mr * 1e-6,
         mr * 1e3);
  *bytes += (double)len;
  *t_parse += mp;
  *t_read += mr;
  free(text);
  return 0;
fail:
  fprintf(stderr, "bench_mmio: %s\n", err.msg);
  free(text);
  return -1;
}

/* Whether name ends in .mtx or .mtx.gz. */
static int is_mtx(const char *name)
{
  size_t n = strlen(name);

  return (n > 4 && strcmp(name + n - 4, ".mtx") == 0) ||
         (n > 7 && strcmp(name + n - 7, ".mtx.gz") == 0);
}

/* Orders strings for qsort. */
static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Benchmarks the files named, or every matrix of the shared directory. */
int main(int argc, char **argv)
{
  const char *dir = getenv("SPMV_MATRICES");
  double bytes = 0, t_parse = 0, t_read = 0;
  char **files = NULL;
  int nfiles = 0, runs = 7, i, argi = 1, bad = 0;

  if (argc > 2 && strcmp(argv[1], "-r") == 0) {
    runs = atoi(argv[2]);
    argi = 3;
  }
  if (runs < 1 || runs > MAX_RUNS || (argi < argc && argv[argi][0] == '-')) {
    fprintf(stderr, "usage: bench_mmio [-r runs] [file.mtx[.gz] ...]\n");
    return 2;
  }
  if (argi < argc) {
    files = argv + argi;
    nfiles = argc - argi;
  } else {
    DIR *d;
    struct dirent *e;

    if (dir == NULL || *dir == '\0')
      dir = SPMV_BENCH_MATRICES;
    if ((d = opendir(dir)) == NULL) {
      fprintf(stderr, "bench_mmio: cannot open %s (set SPMV_MATRICES)\n", dir);
      return 1;
    }
    while ((e = readdir(d)) != NULL) {
      char **nf;
      if (!is_mtx(e->d_name))
        continue;
      if ((nf = realloc(files, (size_t)(nfiles + 1) * sizeof *files)) == NULL)
        return 1;
      files = nf;
      if ((files[nfiles] = malloc(strlen(dir) + strlen(e->d_name) + 2)) == NULL)
        return 1;
      sprintf(files[nfiles++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(files, (size_t)nfiles, sizeof *files, cmp_str);
  }
  printf("# median of %d runs; MB/s of decompressed text per second of CPU time on one\n"
         "# core (1 MB = 1e6 bytes); parse: from memory, read: from the file\n", runs);
  printf("%-28s %10s %10s %8s %8s %8s\n", "# matrix", "bytes", "entries",
         "parse", "read", "read_ms");
  for (i = 0; i < nfiles; i++)
    bad |= bench_one(files[i], runs, &bytes, &t_parse, &t_read) != 0;
  if (t_parse > 0)
    printf("%-28s %10.0f %10s %8.1f %8.1f %8.3f\n", "TOTAL", bytes, "-",
           bytes / t_parse * 1e-6, bytes / t_read * 1e-6, t_read * 1e3);
  if (argi >= argc) {
    for (i = 0; i < nfiles; i++)
      free(files[i]);
    free(files);
  }
  return bad;
}
