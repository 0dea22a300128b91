/* bench_svc.h: what the benchmarks of the service path (bench_service,
 * bench_solve) share on the client's side: a connection to a given spmvd
 * or to a private one, timed loads, and values narrowed to a type. */
#ifndef BENCH_SVC_H
#define BENCH_SVC_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "spmv.h"
#include "spmv_csr.h"

/* A connection and, when the benchmark started it, its daemon. */
struct bench_svc {
  struct spmv_client *c;
  pid_t pid;            /* the private daemon, or -1 */
  char dir[PATH_MAX];   /* its socket, cache and log, "" when none */
  char sock[PATH_MAX];
};

/*
 * Connects s (caller's struct) to the daemon at sock or, when sock is
 * NULL, starts spmvd (the program at path spmvd) with backend and an empty
 * cache in a new folder $TMPDIR/PROG.XXXXXX (/tmp without TMPDIR) and
 * connects to it (waiting up to 30 s).  Returns 0, or -1 after a message
 * on stderr after prog; close s either way.
 */
int bench_svc_open(struct bench_svc *s, const char *prog, const char *spmvd,
                   const char *backend, const char *sock);

/* The same, the private daemon started with the options extra as well
 * (NULL-terminated, at most 8; NULL: none). */
int bench_svc_open_with(struct bench_svc *s, const char *prog, const char *spmvd,
                        const char *backend, const char *const *extra,
                        const char *sock);

/* Disconnects, stops the private daemon and removes its folder. */
void bench_svc_close(struct bench_svc *s);

/*
 * One load of A with the values val (nnz of dt, borrowed) and label name,
 * the daemon's default strategy: *m a new matrix owned by the caller, *ms
 * the client-observed milliseconds.  0, or -1 after a message.
 */
int bench_load(struct spmv_client *c, const struct spmv_csr *A,
               enum spmv_dtype dt, const void *val, const char *name,
               const char *prog, struct spmv_matrix **m, double *ms);

/* The same with the options o (borrowed; its name labels the messages). */
int bench_load_opt(struct spmv_client *c, const struct spmv_csr *A,
                   enum spmv_dtype dt, const void *val,
                   const struct spmv_load_options *o, const char *prog,
                   struct spmv_matrix **m, double *ms);

/* The same as a first sight: a load the daemon answered from its cache is
 * forgotten (spmv_forget) and loaded again; *ms is NAN when the daemon
 * would not forget it (*m is then the cached load). */
int bench_load_fresh(struct spmv_client *c, const struct spmv_csr *A,
                     enum spmv_dtype dt, const void *val, const char *name,
                     const char *prog, struct spmv_matrix **m, double *ms);

/* The same as a cache hit: says so on stderr when the daemon tuned it. */
int bench_load_hit(struct spmv_client *c, const struct spmv_csr *A,
                   enum spmv_dtype dt, const void *val, const char *name,
                   const char *prog, struct spmv_matrix **m, double *ms);

/* The options the service benchmarks share, as getopt gives them; each
 * benchmark sets its defaults first. */
struct bench_svc_args {
  const char *only;     /* -m NAMES: the names that contain one of them */
  const char *sock;     /* -s SOCKET: a running spmvd, or NULL */
  const char *out;      /* -o FILE: the TSV, or NULL */
  const char *dir;      /* -d DIR: the matrix folder, or NULL */
  int dts;              /* -t f32|f64|both, as bench_dtypes() */
  int reps;             /* -r REPS */
};

/* Takes getopt's option opt with its argument arg (borrowed) into a when
 * it is one of the shared options: 1, else 0. */
int bench_svc_arg(struct bench_svc_args *a, int opt, const char *arg);

/* The -t argument's value types as a mask: 1 f32, 2 f64, 3 both ("f32",
 * "f64", "both"), 0 for anything else. */
int bench_dtypes(const char *arg);

/* Prints v in a field of width w with prec decimals, "-" when not
 * measured (not finite). */
void bench_cell(double v, int w, int prec);

/* Writes the header cols (NULL-terminated) as one TSV line to f. */
void bench_tsv_head(FILE *f, const char *const *cols);

/* x (n doubles) narrowed to dt, a new host array (malloc), or NULL. */
void *bench_typed(const double *x, int64_t n, enum spmv_dtype dt);

#endif /* BENCH_SVC_H */
