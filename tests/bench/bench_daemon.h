/* bench_daemon.h: a private spmvd for the benchmarks that talk to the
 * service (bench_roundtrip, bench_service, bench_split), header only. */
#ifndef BENCH_DAEMON_H
#define BENCH_DAEMON_H

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Starts spmvd (the program at path spmvd) in the foreground with backend
 * ("cpu", "cuda") and the options extra (NULL-terminated, at most 8; NULL:
 * none), its socket (written into sock, n bytes), cache and log (stderr)
 * in dir; the child dies with its parent.  Returns its pid.
 */
static inline pid_t bench_start_daemon(const char *spmvd, const char *backend,
                                       const char *const *extra,
                                       const char *dir, char *sock, size_t n)
{
  char db[PATH_MAX], log[PATH_MAX];
  const char *argv[18];
  int k = 0;
  pid_t pid;

  snprintf(sock, n, "%s/spmvd.sock", dir);
  snprintf(db, sizeof db, "%s/cache.db", dir);
  snprintf(log, sizeof log, "%s/spmvd.log", dir);
  argv[k++] = spmvd;
  argv[k++] = "--foreground";
  argv[k++] = "--socket";
  argv[k++] = sock;
  argv[k++] = "--db";
  argv[k++] = db;
  argv[k++] = "--backend";
  argv[k++] = backend;
  for (int i = 0; extra && extra[i] && i < 8; i++)
    argv[k++] = extra[i];
  argv[k] = NULL;
  pid = fork();
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (fd >= 0)
      dup2(fd, 2);
    execv(spmvd, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

static inline int bench_rm_entry(const char *path, const struct stat *st,
                                 int flag, struct FTW *ftw)
{
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* Removes dir and everything below it. */
static inline void bench_rm_tree(const char *dir)
{
  nftw(dir, bench_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* BENCH_DAEMON_H */
