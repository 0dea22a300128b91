/* itest_ops.c: records which protocol ops an integration test exercised. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"

/*
 * Each test program appends "<kind> <op>" lines to
 * $SPMV_TOP_BUILDDIR/tests/integration/ops/<program>.ops (kinds: sent,
 * reply, error, event), which tests/integration/check_schema_coverage.sh
 * reads after all integration tests ran.  check's fork mode runs every test
 * in its own child: each child appends whole lines with O_APPEND, and
 * writes each distinct line once.  Without SPMV_TOP_BUILDDIR (a test run by
 * hand), or in a run that check narrows to some tests, nothing is recorded.
 */

#define SEEN_MAX 256
#define OP_CHARS "abcdefghijklmnopqrstuvwxyz0123456789-_"

static char ops_path[1024];
static const char *const partial[] = {"CK_RUN_SUITE", "CK_RUN_CASE",
                                      "CK_INCLUDE_TAGS", "CK_EXCLUDE_TAGS",
                                      "CK_EXCLUDE_CASE", "CK_EXCLUDE_SUITE",
                                      "SPMV_ITEST_RERUN"};
static char seen[SEEN_MAX][48];
static int nseen;

/* The program's name without libtool's "lt-" prefix, from /proc. */
static int program_name(char *buf, size_t n)
{
  FILE *f = fopen("/proc/self/comm", "r");
  char name[64] = "";
  size_t len;

  if (!f)
    return -1;
  if (!fgets(name, sizeof name, f))
    name[0] = '\0';
  fclose(f);
  len = strcspn(name, "\n");
  name[len] = '\0';
  if (!name[0])
    return -1;
  snprintf(buf, n, "%s", strncmp(name, "lt-", 3) == 0 ? name + 3 : name);
  return 0;
}

/* Starts this program's record afresh; called once before the tests run. */
void itest_ops_begin(void)
{
  const char *top = getenv("SPMV_TOP_BUILDDIR");
  char dir[900], name[64];
  int fd;

  ops_path[0] = '\0';
  nseen = 0;
  if (!top || !*top || program_name(name, sizeof name) < 0)
    return;
  /* A partial run (check's selection variables), or a program run again
   * on another backend (SPMV_ITEST_RERUN, beside its first run), keeps
   * the last full record. */
  for (size_t i = 0; i < sizeof partial / sizeof partial[0]; i++)
    if (getenv(partial[i]))
      return;
  snprintf(dir, sizeof dir, "%s/tests/integration", top);
  mkdir(dir, 0777);
  snprintf(dir, sizeof dir, "%s/tests/integration/ops", top);
  if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
    fprintf(stderr, "itest: cannot make %s: %s\n", dir, strerror(errno));
    return;
  }
  snprintf(ops_path, sizeof ops_path, "%s/%s.ops", dir, name);
  fd = open(ops_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    fprintf(stderr, "itest: cannot write %s: %s\n", ops_path, strerror(errno));
    ops_path[0] = '\0';
    return;
  }
  close(fd);
}

/* Records that op was exercised as kind (both borrowed); once per process. */
void itest_ops_note(const char *kind, const char *op)
{
  char line[48];
  int len, fd;

  if (!ops_path[0] || !op || !*op || op[strspn(op, OP_CHARS)] != '\0')
    return;
  len = snprintf(line, sizeof line, "%s %s\n", kind, op);
  if (len <= 0 || (size_t)len >= sizeof line)
    return;
  for (int i = 0; i < nseen; i++)
    if (strcmp(seen[i], line) == 0)
      return;
  if (nseen < SEEN_MAX)
    memcpy(seen[nseen++], line, (size_t)len + 1);
  fd = open(ops_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    return;
  if (write(fd, line, (size_t)len) != len)
    fprintf(stderr, "itest: short write to %s\n", ops_path);
  close(fd);
}
