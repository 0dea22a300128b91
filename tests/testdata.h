/* testdata.h: where the tests find their real matrices.
 *
 * The folder is $SPMV_MATRICES where it is set (CI and benchmarks name the
 * larger set there), else the tree's own tests/data/matrices, found from
 * $SPMV_TOP_SRCDIR (make check sets it) or from the current directory.  A
 * matrix named "west0479.mtx" is found as that file or as its gzipped
 * copy, so that the two sets can differ in compression only. */
#ifndef SPMV_TESTDATA_H
#define SPMV_TESTDATA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The matrix folder (a static buffer). */
static inline const char *testdata_dir(void)
{
  static char buf[4096];
  const char *m = getenv("SPMV_MATRICES");
  const char *top = getenv("SPMV_TOP_SRCDIR");

  if (m != NULL && *m != '\0')
    return m;
  if ((size_t)snprintf(buf, sizeof buf, "%s/tests/data/matrices",
                       top != NULL && *top != '\0' ? top : ".") >= sizeof buf)
    return ".";
  return buf;
}

/* Writes the path of matrix name into buf: its gzipped copy (or, for a
 * ".gz" name, the plain one), else the file itself.  Returns 0 when the
 * file exists, -1 when neither does (buf then holds DIR/name, for a
 * message). */
static inline int testdata_path(const char *name, char *buf, size_t n)
{
  const char *dir = testdata_dir();
  size_t l = strlen(name);
  int w;

  w = l > 3 && strcmp(name + l - 3, ".gz") == 0
          ? snprintf(buf, n, "%s/%.*s", dir, (int)(l - 3), name)
          : snprintf(buf, n, "%s/%s.gz", dir, name);
  if (w >= 0 && (size_t)w < n && access(buf, R_OK) == 0)
    return 0;
  w = snprintf(buf, n, "%s/%s", dir, name);
  return w >= 0 && (size_t)w < n && access(buf, R_OK) == 0 ? 0 : -1;
}

/* Whether a directory entry is a Matrix Market file (.mtx or .mtx.gz). */
static inline int testdata_is_mtx(const char *f)
{
  size_t l = strlen(f);

  return (l > 4 && strcmp(f + l - 4, ".mtx") == 0) ||
         (l > 7 && strcmp(f + l - 7, ".mtx.gz") == 0);
}

/* Whether two matrix file names name the same matrix, ".gz" aside. */
static inline int testdata_same(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);

  if (la > 3 && strcmp(a + la - 3, ".gz") == 0)
    la -= 3;
  if (lb > 3 && strcmp(b + lb - 3, ".gz") == 0)
    lb -= 3;
  return la == lb && strncmp(a, b, la) == 0;
}

/* Writes "$TMPDIR/name" (or "/tmp/name") into buf, for mkdtemp or mkstemp:
 * make check gives each test a TMPDIR of its own and removes it after. */
static inline void testdata_tmp(char *buf, size_t n, const char *name)
{
  const char *t = getenv("TMPDIR");

  if ((size_t)snprintf(buf, n, "%s/%s", t != NULL && *t != '\0' ? t : "/tmp", name) >= n)
    snprintf(buf, n, "/tmp/%s", name);
}

#endif
