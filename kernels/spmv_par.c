/* spmv_par.c: passes over a whole matrix, split over threads. */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "spmv_par.h"

/*
 * A load reads the whole CSR several times on the host (validation, the
 * profile, the check of a cached configuration's first product against
 * the reference); one core reads far below the memory's speed, and a
 * large matrix's load spent most of its time there.  Threads are made per
 * pass: a pass over a million entries costs far more than starting them.
 */

#define PAR_MIN_NNZ 1000000

/* The CPUs this process may run on: its affinity mask's (a taskset or
 * a cgroup's cpuset), else the online ones. */
static long usable_cpus(void)
{
#ifdef CPU_COUNT
  cpu_set_t set;

  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
#endif
  return sysconf(_SC_NPROCESSORS_ONLN);
}

int spmv_par_threads(int64_t nnz)
{
  long n = usable_cpus();

  if (nnz < PAR_MIN_NNZ || n < 2)
    return 1;
  return n > SPMV_PAR_MAX ? SPMV_PAR_MAX : (int)n;
}

struct part {
  spmv_par_fn *fn;
  void *ctx;
  int t;
  int64_t r0, r1;
};

static void *run_part(void *arg)
{
  struct part *p = arg;

  p->fn(p->ctx, p->t, p->r0, p->r1);
  return NULL;
}

/* The first row whose entries start at or after entry k. */
static int64_t row_at(const struct spmv_csr *A, int64_t k)
{
  int64_t lo = 0, hi = A->rows;

  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (A->row_ptr[mid] < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Runs p[0..n) (their bounds set), p[0] on the calling thread. */
static void run_parts(struct part *p, int n)
{
  pthread_t tid[SPMV_PAR_MAX];
  int started[SPMV_PAR_MAX] = {0};

  for (int t = 1; t < n; t++)
    started[t] = pthread_create(&tid[t], NULL, run_part, &p[t]) == 0;
  run_part(&p[0]);
  for (int t = 1; t < n; t++) {
    if (started[t])
      pthread_join(tid[t], NULL);
    else
      run_part(&p[t]);  /* no thread: its block runs here */
  }
}

/* n clamped to [1, SPMV_PAR_MAX], fn and ctx set in each part. */
static int parts_init(struct part *p, int n, spmv_par_fn *fn, void *ctx)
{
  if (n < 1)
    n = 1;
  if (n > SPMV_PAR_MAX)
    n = SPMV_PAR_MAX;
  for (int t = 0; t < n; t++) {
    p[t].fn = fn;
    p[t].ctx = ctx;
    p[t].t = t;
  }
  return n;
}

void spmv_par_rows(const struct spmv_csr *A, int n, spmv_par_fn *fn,
                   void *ctx)
{
  struct part p[SPMV_PAR_MAX];

  n = parts_init(p, n, fn, ctx);
  for (int t = 0; t < n; t++) {
    p[t].r0 = t == 0 ? 0 : p[t - 1].r1;
    p[t].r1 = t == n - 1 ? A->rows : row_at(A, A->nnz / n * (t + 1));
    if (p[t].r1 < p[t].r0)
      p[t].r1 = p[t].r0;
  }
  run_parts(p, n);
}

void spmv_par_range(int64_t len, int n, spmv_par_fn *fn, void *ctx)
{
  struct part p[SPMV_PAR_MAX];

  n = parts_init(p, n, fn, ctx);
  for (int t = 0; t < n; t++) {
    p[t].r0 = len / n * t;
    p[t].r1 = t == n - 1 ? len : len / n * (t + 1);
  }
  run_parts(p, n);
}

/* Each part's count of rows of at least k entries. */
struct at_least {
  const struct spmv_csr *A;
  int64_t k;
  int64_t n[SPMV_PAR_MAX];
};

static void at_least_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct at_least *c = ctx;
  const int64_t *rp = c->A->row_ptr;
  int64_t n = 0;

  for (int64_t i = r0; i < r1; i++)
    n += rp[i + 1] - rp[i] >= c->k;
  c->n[t] = n;
}

int64_t spmv_par_rows_at_least(const struct spmv_csr *A, int64_t k, int n)
{
  struct at_least c = {.A = A, .k = k};
  int64_t total = 0;

  spmv_par_range(A->rows, n, at_least_block, &c);
  for (int t = 0; t < SPMV_PAR_MAX; t++)  /* the parts not run hold 0 */
    total += c.n[t];
  return total;
}

/* One block's validation: its result and message. */
struct val_ctx {
  const struct spmv_csr *A;
  unsigned flags;
  int rc[SPMV_PAR_MAX];
  struct spmv_error err[SPMV_PAR_MAX];
};

static void validate_block(void *ctx, int t, int64_t r0, int64_t r1)
{
  struct val_ctx *v = ctx;

  v->rc[t] = spmv_csr_validate_rows(v->A, v->flags, r0, r1, &v->err[t]);
}

int spmv_par_validate(const struct spmv_csr *A, unsigned flags, int n,
                      struct spmv_error *err)
{
  struct val_ctx v = {.A = A, .flags = flags};
  int rc = spmv_csr_validate_offsets(A, err);

  if (rc != 0)
    return rc;
  if (n < 1)
    n = 1;
  if (n > SPMV_PAR_MAX)
    n = SPMV_PAR_MAX;
  spmv_par_rows(A, n, validate_block, &v);
  for (int t = 0; t < n; t++)
    if (v.rc[t] != 0) {
      *err = v.err[t];  /* the lowest rows' first: as one pass finds it */
      return v.rc[t];
    }
  spmv_error_clear(err);
  return 0;
}
