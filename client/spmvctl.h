/* spmvctl.h: what the files of spmvctl share: options, commands, output. */
#ifndef SPMVCTL_H
#define SPMVCTL_H

#include <getopt.h>
#include <stdio.h>

#include <jansson.h>

#include "spmv.h"

/* Exit statuses (documented in spmvctl(1)). */
#define SPMVCTL_EXIT_OK 0        /* success */
#define SPMVCTL_EXIT_ERROR 1     /* any other failure */
#define SPMVCTL_EXIT_USAGE 2     /* bad command line */
#define SPMVCTL_EXIT_NODAEMON 3  /* spmvd is not running or not reachable */
#define SPMVCTL_EXIT_NOTFOUND 4  /* no such file, fingerprint or cache */
#define SPMVCTL_EXIT_PERM 5      /* permission denied (forget, import, cache) */
#define SPMVCTL_EXIT_NOTCONVERGED 6 /* solve: the method stopped without converging */

/* The options of one run, common and per command. */
struct spmvctl {
  const char *prog;      /* argv[0]'s base name */
  const char *socket;    /* --socket, or NULL for libspmvclient's default */
  const char *db;        /* --db, or NULL: ask spmvd, else the default */
  int json;              /* --json: machine-readable output */
  int quiet;             /* --quiet: no progress */
  int autostart;         /* start spmvd when none runs (--no-autostart,
                            SPMV_AUTOSTART=0 and status turn it off) */
  const char *strategy;  /* --strategy (tune) */
  enum spmv_dtype dtype; /* --dtype (tune, bench) */
  int force;             /* --force (tune): tune again even when cached */
  const char *output;    /* --output (export) */
  double max_seconds;    /* --max-seconds (calibrate), 0: spmvd's default */
  const char *points;    /* --points FILE (calibrate): the timed points */
  int measure;           /* --measure (predict): time each prediction too */
  const char *rhs;       /* --rhs (solve): FILE, "ones" (NULL) or "random" */
  const char *method;    /* --method (solve), NULL: cg */
  double rtol;           /* --rtol (solve), 0: the daemon's default */
  long long maxiter;     /* --maxiter (solve), 0: the daemon's default */
  double damping;        /* --damping (solve, pagerank), 0: the default */
  int split;             /* --split N (solve): row blocks over N workers */
  struct {               /* the GPU of model: --sms and the others */
    int sms, warp_size, max_threads_per_sm, max_blocks_per_sm,
        max_threads_per_block;
  } gpu;
};

/* The GPU that model assumes by default: an H100 / H200 (SXM). */
#define SPMVCTL_GPU_SMS 132
#define SPMVCTL_GPU_WARP_SIZE 32
#define SPMVCTL_GPU_THREADS_PER_SM 2048
#define SPMVCTL_GPU_BLOCKS_PER_SM 32
#define SPMVCTL_GPU_THREADS_PER_BLOCK 1024

/* A command: its name, its arguments' synopsis, a line of help, which of
 * the command options it takes (their short letters), and its body, which
 * gets the positional arguments and returns an exit status. */
struct spmvctl_command {
  const char *name;
  const char *synopsis;
  const char *help;
  const char *options;
  int min_args, max_args;
  int (*run)(struct spmvctl *ctl, int argc, char **argv);
};

/* The commands, in spmvctl_daemon.c, spmvctl_cache.c, spmvctl_profile.c,
 * spmvctl_model.c, spmvctl_solve.c. */
int spmvctl_status(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_tune(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_bench(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_forget(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_stop(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_import(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_list(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_show(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_export(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_profile(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_calibrate(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_predict(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_model(struct spmvctl *ctl, int argc, char **argv);
int spmvctl_solve(struct spmvctl *ctl, int argc, char **argv);

/* Prints "spmvctl: message" on stderr; returns status. */
int spmvctl_fail(const struct spmvctl *ctl, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Maps an SPMV_E* code to an exit status. */
int spmvctl_exit_status(int code);

/* Reports a failed library call on c (its code rc) with the library's
 * message and returns its exit status. */
int spmvctl_call_failed(const struct spmvctl *ctl, struct spmv_client *c,
                        int rc);

/* Connects to spmvd, starting one when ctl->autostart says so; on failure
 * prints the library's message and returns the exit status
 * (SPMVCTL_EXIT_NODAEMON when nobody listens). */
int spmvctl_connect(const struct spmvctl *ctl, struct spmv_client **out);

/* Checks that the file a command reads exists and is readable; returns
 * an exit status after printing why not (SPMVCTL_EXIT_NOTFOUND: missing). */
int spmvctl_check_file(const struct spmvctl *ctl, const char *path);

/* Loads the Matrix Market file path into spmvd (strategy NULL: the
 * daemon's default), progress on stderr unless --quiet; *m is new on
 * success, else the error is printed and its exit status returned. */
int spmvctl_load_file(struct spmvctl *ctl, struct spmv_client *c,
                      const char *path, const char *strategy,
                      struct spmv_matrix **m);

struct spmvd_cache;
/* Opens spmvd's cache read-only (--db, else the daemon's, else the default
 * path) into *out, closed with spmvd_cache_close(); on failure prints why
 * and returns the exit status (SPMVCTL_EXIT_NOTFOUND: no such database). */
int spmvctl_open_cache(const struct spmvctl *ctl, struct spmvd_cache **out);

/* Prints obj (borrowed) on stdout as indented JSON; returns an exit status. */
int spmvctl_print_json(const json_t *obj);

/* Prints obj (borrowed) as JSON with --json, else as table() prints it;
 * obj NULL (a failure already reported) gives SPMVCTL_EXIT_ERROR. */
int spmvctl_output(const struct spmvctl *ctl, const json_t *obj,
                   void (*table)(const json_t *obj));

/* Parses JSON text that spmvd or the library produced; a new reference,
 * or NULL after printing an error. */
json_t *spmvctl_parse_json(const struct spmvctl *ctl, const char *text);

/* Prints progress events on stderr (arg: the struct spmvctl). */
void spmvctl_progress(const struct spmv_progress *p, void *arg);

/* The string member key of obj (borrowed), or "-" when absent or empty. */
const char *spmvctl_str(const json_t *obj, const char *key);

/* The number member key of obj, or 0 when absent. */
double spmvctl_num(const json_t *obj, const char *key);

/* Formats unix seconds as local "YYYY-MM-DD HH:MM" ("never" for 0). */
const char *spmvctl_time(long long t, char *buf, size_t n);

#endif /* SPMVCTL_H */
