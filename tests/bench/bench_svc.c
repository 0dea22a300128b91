/* bench_svc.c: the client's side that bench_service and bench_solve
 * share: the daemon, timed loads, narrowed values. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_daemon.h"
#include "bench_svc.h"

int bench_svc_open(struct bench_svc *s, const char *prog, const char *spmvd,
                   const char *backend, const char *sock)
{
  return bench_svc_open_with(s, prog, spmvd, backend, NULL, sock);
}

int bench_svc_open_with(struct bench_svc *s, const char *prog, const char *spmvd,
                        const char *backend, const char *const *extra,
                        const char *sock)
{
  memset(s, 0, sizeof *s);
  s->pid = -1;
  if (sock) {
    if (spmv_connect(sock, &s->c) < 0)
      s->c = NULL;
    snprintf(s->sock, sizeof s->sock, "%s", sock);
  } else {
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", prog);
    if (!mkdtemp(s->dir)) {
      fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
      s->dir[0] = '\0';
      return -1;
    }
    s->pid = bench_start_daemon(spmvd, backend, extra, s->dir, s->sock, sizeof s->sock);
    /* The daemon listens once it has probed its backend. */
    for (int i = 0; i < 3000 && spmv_connect(s->sock, &s->c) < 0; i++)
      usleep(10000);
  }
  if (!s->c) {
    s->c = NULL;
    fprintf(stderr, "%s: cannot connect to %s: %s\n", prog, s->sock,
            spmv_client_errmsg(NULL));
    return -1;
  }
  return 0;
}

void bench_svc_close(struct bench_svc *s)
{
  spmv_disconnect(s->c);
  s->c = NULL;
  if (s->pid > 0) {
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
    s->pid = -1;
  }
  if (s->dir[0])
    bench_rm_tree(s->dir);
  s->dir[0] = '\0';
}

int bench_load_opt(struct spmv_client *c, const struct spmv_csr *A,
                   enum spmv_dtype dt, const void *val,
                   const struct spmv_load_options *o, const char *prog,
                   struct spmv_matrix **m, double *ms)
{
  double t0 = bench_now_s();

  if (spmv_load_csr(c, dt, A->rows, A->cols, A->nnz, A->row_ptr, A->col_idx,
                    val, o, m) < 0) {
    fprintf(stderr, "%s: %s %s: load: %s\n", prog, o->name ? o->name : "",
            spmv_dtype_name(dt), spmv_client_errmsg(c));
    return -1;
  }
  *ms = 1e3 * (bench_now_s() - t0);
  return 0;
}

int bench_load(struct spmv_client *c, const struct spmv_csr *A,
               enum spmv_dtype dt, const void *val, const char *name,
               const char *prog, struct spmv_matrix **m, double *ms)
{
  struct spmv_load_options o;

  spmv_load_options_init(&o);
  o.name = name;
  return bench_load_opt(c, A, dt, val, &o, prog, m, ms);
}

/* Whether m's configuration came from the daemon's cache; -1 on error. */
static int cached(struct spmv_matrix *m, char *fp, size_t n)
{
  struct spmv_info info;

  if (spmv_info(m, &info) < 0)
    return -1;
  snprintf(fp, n, "%s", info.fingerprint);
  return strcmp(info.source, "cache") == 0;
}

int bench_load_fresh(struct spmv_client *c, const struct spmv_csr *A,
                     enum spmv_dtype dt, const void *val, const char *name,
                     const char *prog, struct spmv_matrix **m, double *ms)
{
  char fp[64];
  int forgotten = 0, k;

  if (bench_load(c, A, dt, val, name, prog, m, ms) < 0 ||
      (k = cached(*m, fp, sizeof fp)) < 0)
    return -1;
  if (k == 0)
    return 0;
  /* Not a first sight (a daemon that knew it): forget, reload. */
  if (spmv_forget(c, fp, &forgotten) < 0) {
    fprintf(stderr, "%s: %s: cached and not forgettable (%s): no first-sight "
            "load\n", prog, name, spmv_client_errmsg(c));
    *ms = NAN;
    return 0;
  }
  *m = spmv_matrix_free(*m);
  return bench_load(c, A, dt, val, name, prog, m, ms);
}

int bench_load_hit(struct spmv_client *c, const struct spmv_csr *A,
                   enum spmv_dtype dt, const void *val, const char *name,
                   const char *prog, struct spmv_matrix **m, double *ms)
{
  char fp[64];
  int k;

  if (bench_load(c, A, dt, val, name, prog, m, ms) < 0 ||
      (k = cached(*m, fp, sizeof fp)) < 0)
    return -1;
  if (k == 0)
    fprintf(stderr, "%s: %s: the second load was not a cache hit\n", prog,
            name);
  return 0;
}

void *bench_typed(const double *x, int64_t n, enum spmv_dtype dt)
{
  size_t es = spmv_dtype_size(dt);
  void *t = malloc((size_t)(n > 0 ? n : 1) * es);

  for (int64_t i = 0; t && i < n; i++) {
    if (dt == SPMV_F32)
      ((float *)t)[i] = (float)x[i];
    else
      ((double *)t)[i] = x[i];
  }
  return t;
}

void bench_cell(double v, int w, int prec)
{
  if (isfinite(v))
    printf(" %*.*f", w, prec, v);
  else
    printf(" %*s", w, "-");
}

void bench_tsv_head(FILE *f, const char *const *cols)
{
  for (int i = 0; cols[i]; i++)
    fprintf(f, "%s%s", i ? "\t" : "", cols[i]);
  fputc('\n', f);
}

int bench_dtypes(const char *arg)
{
  return strcmp(arg, "f32") == 0 ? 1 : strcmp(arg, "f64") == 0 ? 2
         : strcmp(arg, "both") == 0 ? 3 : 0;
}

int bench_svc_arg(struct bench_svc_args *a, int opt, const char *arg)
{
  switch (opt) {
  case 'm': a->only = arg; return 1;
  case 's': a->sock = arg; return 1;
  case 'o': a->out = arg; return 1;
  case 'd': a->dir = arg; return 1;
  case 't': a->dts = bench_dtypes(arg); return 1;
  case 'r': a->reps = atoi(arg); return 1;
  default: return 0;
  }
}
