/* bench_roundtrip.c: client-observed multiply round trips against the kernel time. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spmv.h"
#include "spmv_csr.h"
#include "spmv_mmio.h"
#include "spmv_stats.h"
#include "bench_clock.h"
#include "bench_daemon.h"

/*
 * For each matrix: load it through libspmvclient (strategy trial), then
 * time many spmv_multiply() calls as the client sees them (beta = 0 and
 * beta != 0), then spmv_multiply_inplace() over the matrix's memfd
 * (spmv_matrix_vectors, beta = 0), and print their medians beside the
 * worker's kernel time (the tuned configuration's median, from info).  The
 * difference is what a round trip costs: frames, shared memory, the
 * worker's wake-up.  First, the hops alone: a request the front end
 * answers itself (status) and one that crosses to the worker (a dot of ten
 * values on device vectors), above the machine's floor: a bare socket
 * pair's round trip on one CPU, across two CPUs, and across two polling.
 *
 *   bench_roundtrip [-n REPS] [-s SOCKET] [MATRIX...]
 *
 * MATRIX is a file of $SPMV_MATRICES (or a path), or rand:N:K for an N x N
 * random matrix with K entries per row.  Without -s a private spmvd
 * (cpu backend, SPMVD_CPU_THREADS as set) is started from this build.
 */

static struct spmv_csr *random_csr(int64_t n, int k)
{
  struct spmv_csr *A = spmv_csr_new(n, n, n * k);
  uint64_t s = 88172645463325252ull;

  if (!A)
    return NULL;
  for (int64_t i = 0; i < n; i++) {
    A->row_ptr[i + 1] = A->row_ptr[i] + k;
    for (int j = 0; j < k; j++) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      A->col_idx[i * k + j] = (int32_t)(s % (uint64_t)n);
      A->val[i * k + j] = (double)(s >> 40) / (double)(1 << 24) + 0.5;
    }
  }
  return A;
}

static struct spmv_csr *read_matrix(const char *name)
{
  const char *dir = getenv("SPMV_MATRICES");
  struct spmv_csr *A = NULL;
  struct spmv_error err;
  char path[PATH_MAX];
  long long n;
  int k;

  if (sscanf(name, "rand:%lld:%d", &n, &k) == 2)
    return random_csr(n, k);
  if (strchr(name, '/'))
    snprintf(path, sizeof path, "%s", name);
  else
    snprintf(path, sizeof path, "%s/%s", dir ? dir : SPMV_BENCH_MATRICES, name);
  if (spmv_mmio_read(path, &A, NULL, &err) < 0) {
    fprintf(stderr, "bench_roundtrip: %s: %s\n", path, err.msg);
    return NULL;
  }
  return A;
}

static int bench_one(struct spmv_client *c, const char *name, int reps)
{
  struct spmv_csr *A = read_matrix(name);
  struct spmv_load_options o;
  struct spmv_matrix *m = NULL;
  struct spmv_info info;
  double *x = NULL, *y = NULL, *t = NULL, t0, med[3], best[3];
  void *xv = NULL, *yv = NULL;
  int rc = -1;

  if (!A)
    return -1;
  spmv_load_options_init(&o);
  o.strategy = "trial";
  o.name = name;
  if (spmv_load_csr(c, SPMV_F64, A->rows, A->cols, A->nnz, A->row_ptr,
                    A->col_idx, A->val, &o, &m) < 0 ||
      spmv_info(m, &info) < 0) {
    fprintf(stderr, "bench_roundtrip: %s: %s\n", name, spmv_client_errmsg(c));
    goto out;
  }
  x = malloc(sizeof *x * (size_t)(A->cols + 1));
  y = calloc((size_t)A->rows + 1, sizeof *y);
  t = malloc(sizeof *t * (size_t)reps);
  if (!x || !y || !t)
    goto out;
  for (int64_t j = 0; j < A->cols; j++)
    x[j] = 1.0 + (double)(j % 13) / 13.0;
  for (int b = 0; b < 2; b++) {
    double beta = b ? 0.5 : 0.0;
    for (int i = 0; i < 5; i++)
      spmv_multiply(m, 1.0, x, beta, y);
    for (int i = 0; i < reps; i++) {
      t0 = bench_now_us();
      if (spmv_multiply(m, 1.0, x, beta, y) < 0) {
        fprintf(stderr, "bench_roundtrip: %s: %s\n", name,
                spmv_client_errmsg(c));
        goto out;
      }
      t[i] = bench_now_us() - t0;
    }
    med[b] = spmv_median(t, (size_t)reps);
    best[b] = t[0];
  }
  /* In place: the same product, x and y in the shared mapping. */
  if (spmv_matrix_vectors(m, 1, &xv, &yv) < 0 ||
      spmv_multiply(m, 1.0, x, 0.0, y) < 0) {
    fprintf(stderr, "bench_roundtrip: %s: %s\n", name, spmv_client_errmsg(c));
    goto out;
  }
  memcpy(xv, x, sizeof *x * (size_t)A->cols);
  for (int i = 0; i < reps + 5; i++) {
    t0 = bench_now_us();
    if (spmv_multiply_inplace(m, 1.0, 0.0) < 0) {
      fprintf(stderr, "bench_roundtrip: %s: %s\n", name,
              spmv_client_errmsg(c));
      goto out;
    }
    if (i >= 5)
      t[i - 5] = bench_now_us() - t0;
  }
  med[2] = spmv_median(t, (size_t)reps);
  best[2] = t[0];
  for (int64_t i = 0; i < A->rows; i++)
    if (((double *)yv)[i] != y[i]) {
      fprintf(stderr, "bench_roundtrip: %s: in-place y[%lld] = %g, by "
              "payload %g\n", name, (long long)i, ((double *)yv)[i], y[i]);
      goto out;
    }
  printf("%-24s %9lld %9lld %-28s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
         name, (long long)A->rows, (long long)A->nnz, info.config,
         info.time_us, med[0], best[0], med[1], med[2], best[2],
         med[0] - info.time_us);
  rc = 0;
out:
  spmv_matrix_free(m);
  spmv_csr_free(A);
  free(x);
  free(y);
  free(t);
  return rc;
}

/* Reads n bytes from fd, first polling for up to spin_us without
 * sleeping; 0, or -1. */
static int floor_read(int fd, char *buf, size_t n, int spin_us)
{
  double t0 = bench_now_us();
  ssize_t k;

  while ((k = recv(fd, buf, n, spin_us > 0 ? MSG_DONTWAIT : 0)) < 0 &&
         (errno == EAGAIN || errno == EINTR))
    if (bench_now_us() - t0 > spin_us)
      spin_us = 0;
  return k == (ssize_t)n ? 0 : -1;
}

/* Pins the calling process to CPU cpu (no-op where it cannot). */
static void floor_pin(int cpu)
{
  cpu_set_t set;

  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

/*
 * The machine's floor under every hop: a 64-byte message to a child
 * process over a Unix socket pair and back, median of reps.  The two
 * processes on one CPU (cpu1 < 0: where the scheduler puts them) or on
 * CPUs 0 and cpu1, sleeping in read or first polling for spin_us (as
 * busy_poll_us does).  NAN on failure.
 */
static double socket_floor(int reps, int cpu1, int spin_us)
{
  int sv[2];
  char buf[64] = {0};
  double *t = malloc(sizeof *t * (size_t)reps), med = NAN;
  pid_t pid;

  if (!t || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
    free(t);
    return NAN;
  }
  if ((pid = fork()) == 0) {
    close(sv[0]);
    if (cpu1 >= 0)
      floor_pin(cpu1);
    while (floor_read(sv[1], buf, sizeof buf, spin_us) == 0 &&
           write(sv[1], buf, sizeof buf) == (ssize_t)sizeof buf)
      ;
    _exit(0);
  }
  close(sv[1]);
  if (cpu1 >= 0)
    floor_pin(0);
  for (int i = -50; pid > 0 && i < reps; i++) {
    double t0 = bench_now_us();
    if (write(sv[0], buf, sizeof buf) != (ssize_t)sizeof buf ||
        floor_read(sv[0], buf, sizeof buf, spin_us) < 0)
      break;
    if (i >= 0)
      t[i] = bench_now_us() - t0;
    if (i + 1 == reps)
      med = spmv_median(t, (size_t)reps);
  }
  close(sv[0]);
  if (pid > 0)
    waitpid(pid, NULL, 0);
  if (cpu1 >= 0) {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++)
      CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
  }
  free(t);
  return med;
}

/* Prints the floors: scheduler's choice, two CPUs asleep, two polling. */
static void floors(int reps)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  int far = n > 2 ? (int)(n / 2) : 1;

  printf("# a bare Unix socket pair between two processes, median round "
         "trip: %.1f us as scheduled; %.1f us on CPUs 0 and %d sleeping in "
         "read; %.1f us there polling 200 us first\n",
         socket_floor(reps, -1, 0), socket_floor(reps, far, 0), far,
         socket_floor(reps, far, 200));
}

/* The hops of a round trip: a request the front end answers itself
 * (status), and one that crosses to the worker and back (a dot of ten
 * values on device vectors); -1 on failure. */
static int hops(struct spmv_client *c, int reps)
{
  struct spmv_vector *x = NULL;
  double *t = malloc(sizeof *t * (size_t)reps), d, med[2];
  int rc = -1;

  if (!t || spmv_vector_new(c, SPMV_F64, 10, &x) < 0 ||
      spmv_vector_fill(x, 1.0) < 0)
    goto out;
  for (int k = 0; k < 2; k++) {
    for (int i = -5; i < reps; i++) {
      char *json = NULL;
      double t0 = bench_now_us();
      if ((k == 0 ? spmv_status_json(c, &json) : spmv_vector_dot(x, x, &d)) < 0)
        goto out;
      if (i >= 0)
        t[i] = bench_now_us() - t0;
      free(json);
    }
    med[k] = spmv_median(t, (size_t)reps);
  }
  floors(reps);
  printf("# round trip, median: front end only (status) %.1f us; front end "
         "and worker (a 10-value dot) %.1f us\n", med[0], med[1]);
  rc = 0;
out:
  if (rc < 0)
    fprintf(stderr, "bench_roundtrip: hops: %s\n", spmv_client_errmsg(c));
  spmv_vector_free(x);
  free(t);
  return rc;
}

/* bench_roundtrip: times multiply round trips through spmvd. */
int main(int argc, char **argv)
{
  static const char *const defaults[] = {"karate.mtx", "bcsstk13.mtx",
                                         "raefsky1.mtx.gz", "rand:200000:8",
                                         NULL};
  char dir[] = "/tmp/bench-roundtrip.XXXXXX", sock[PATH_MAX];
  const char *path = NULL;
  struct spmv_client *c = NULL;
  pid_t pid = -1;
  int reps = 200, opt, rc = 0;

  while ((opt = getopt(argc, argv, "n:s:")) != -1) {
    if (opt == 'n')
      reps = atoi(optarg);
    else if (opt == 's')
      path = optarg;
    else {
      fprintf(stderr, "usage: bench_roundtrip [-n REPS] [-s SOCKET] "
                      "[MATRIX|rand:N:K...]\n");
      return 2;
    }
  }
  if (reps < 1)
    reps = 1;
  if (!path) {
    if (!mkdtemp(dir)) {
      perror("mkdtemp");
      return 1;
    }
    pid = bench_start_daemon(SPMV_BENCH_SPMVD, "cpu", NULL, dir, sock, sizeof sock);
    path = sock;
    for (int i = 0; i < 500 && spmv_connect(path, &c) < 0; i++)
      usleep(10000);
  } else if (spmv_connect(path, &c) < 0) {
    c = NULL;
  }
  if (!c) {
    fprintf(stderr, "bench_roundtrip: cannot connect to %s\n", path);
    rc = 1;
    goto out;
  }
  rc |= hops(c, reps) < 0;
  printf("# median of %d round trips per matrix, microseconds; kernel = the "
         "worker's own timing of the tuned configuration\n", reps);
  printf("%-24s %9s %9s %-28s %9s %9s %9s %9s %9s %9s %9s\n", "matrix",
         "rows", "nnz", "config", "kernel", "rt_beta0", "rt_min", "rt_beta",
         "rt_inpl", "inpl_min", "overhead");
  if (optind < argc) {
    for (int i = optind; i < argc; i++)
      rc |= bench_one(c, argv[i], reps) < 0;
  } else {
    for (const char *const *n = defaults; *n; n++)
      rc |= bench_one(c, *n, reps) < 0;
  }
out:
  spmv_disconnect(c);
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    bench_rm_tree(dir);
  }
  return rc;
}
