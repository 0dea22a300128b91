/* spmvctl_exec.h: what the tests that run spmvctl share: one run, its
 * exit status and what it printed.  Static inline, as testdata.h. */
#ifndef SPMV_SPMVCTL_EXEC_H
#define SPMV_SPMVCTL_EXEC_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "testdata.h"

/* What one spmvctl run printed. */
struct spmvctl_run {
  int status;       /* exit status, or 128 + signal */
  char out[65536];  /* stdout */
  char err[8192];   /* stderr */
};

/* Reads at most n-1 bytes of fd from the start into buf. */
static inline void spmvctl_slurp(int fd, char *buf, size_t n)
{
  ssize_t got;
  size_t len = 0;

  lseek(fd, 0, SEEK_SET);
  while (len + 1 < n && (got = read(fd, buf + len, n - 1 - len)) > 0)
    len += (size_t)got;
  buf[len] = '\0';
}

/* Runs the build tree's spmvctl ($SPMV_TOP_BUILDDIR) with the
 * NULL-terminated arguments; fills r. */
static inline void spmvctl_exec(struct spmvctl_run *r, const char *arg, ...)
{
  const char *b = getenv("SPMV_TOP_BUILDDIR");
  char prog[512], tout[4096], terr[4096];
  const char *argv[32];
  int fo, fe, n = 1, st;
  va_list ap;
  pid_t pid;

  snprintf(prog, sizeof prog, "%s/client/spmvctl", b != NULL ? b : ".");
  argv[0] = prog;
  va_start(ap, arg);
  for (; arg != NULL && n < 31; arg = va_arg(ap, const char *))
    argv[n++] = arg;
  va_end(ap);
  argv[n] = NULL;
  testdata_tmp(tout, sizeof tout, "spmvctl.out.XXXXXX");
  testdata_tmp(terr, sizeof terr, "spmvctl.err.XXXXXX");
  fo = mkstemp(tout);
  fe = mkstemp(terr);
  ck_assert(fo >= 0 && fe >= 0);
  pid = fork();
  ck_assert(pid >= 0);
  if (pid == 0) {
    dup2(fo, 1);
    dup2(fe, 2);
    execv(prog, (char **)argv);
    _exit(127);
  }
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  spmvctl_slurp(fo, r->out, sizeof r->out);
  spmvctl_slurp(fe, r->err, sizeof r->err);
  close(fo);
  close(fe);
  unlink(tout);
  unlink(terr);
}

#endif
