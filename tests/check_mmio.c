/* check_mmio.c: tests of the Matrix Market reader: files with their
 * expectations in comments, gzip, I/O errors, and every shared matrix
 * against figures from scipy.  Its scanners and random matrices are tested
 * in check_mmio_scan.c. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <check.h>

#include "spmv_mmio.h"
#include "testdata.h"
#include "mmio_common.h"

#ifndef SPMV_TEST_SRCDIR
#define SPMV_TEST_SRCDIR "."
#endif

/* A pointer the reader must leave in *out when it fails. */
static struct spmv_csr sentinel;

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

/* Returns the top source directory (the tests' data live below it). */
static const char *srcdir(void)
{
  const char *s = getenv("SPMV_TOP_SRCDIR");

  return s != NULL && *s != '\0' ? s : SPMV_TEST_SRCDIR;
}

/* Returns the matrix folder (testdata.h). */
static const char *matrices_dir(void)
{
  return testdata_dir();
}

/* Reads a whole file into a new NUL-terminated buffer (caller frees). */
static char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  char *b = NULL;
  long n;

  ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  ck_assert_int_ge(n, 0);
  rewind(f);
  b = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(b);
  ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
  b[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Writes len bytes to path. */
static void spit(const char *path, const void *buf, size_t len)
{
  FILE *f = fopen(path, "wb");

  ck_assert_msg(f != NULL, "cannot create %s: %s", path, strerror(errno));
  ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
}

/* Lists the .mtx files of dir, sorted; returns their number. */
static int list_mtx(const char *dir, char ***names)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char **v = NULL;
  int n = 0, i, j;

  ck_assert_msg(d != NULL, "cannot open %s: %s", dir, strerror(errno));
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (!(l > 4 && strcmp(e->d_name + l - 4, ".mtx") == 0) &&
        !(l > 7 && strcmp(e->d_name + l - 7, ".mtx.gz") == 0))
      continue;
    v = realloc(v, (size_t)(n + 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    v[n++] = strdup(e->d_name);
  }
  closedir(d);
  for (i = 1; i < n; i++)
    for (j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
      char *t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  *names = v;
  return n;
}

/* Frees a list from list_mtx(). */
static void free_list(char **v, int n)
{
  int i;

  for (i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/*
 * Finds the comment "% KEY: rest" in text and copies rest (without the
 * line end) into out.  Returns 1 if found.
 */
static int expectation(const char *text, const char *key, char *out, size_t cap)
{
  char pat[64];
  const char *p, *e;
  size_t n;

  snprintf(pat, sizeof pat, "%% %s:", key);
  p = strstr(text, pat);
  if (p == NULL)
    return 0;
  p += strlen(pat);
  while (*p == ' ')
    p++;
  e = p;
  while (*e != '\0' && *e != '\n' && *e != '\r')
    e++;
  n = (size_t)(e - p) < cap - 1 ? (size_t)(e - p) : cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
  return 1;
}

/* Parses the numbers of s into v (at most cap); returns how many. */
static int numbers(const char *s, double *v, int cap)
{
  int n = 0;
  char *end;

  for (;;) {
    double x = strtod(s, &end);
    if (end == s)
      break;
    ck_assert_int_lt(n, cap);
    v[n++] = x;
    s = end;
  }
  return n;
}


/* Whether two CSRs are identical (values bitwise, NaN equal to NaN). */
static int same_csr(const struct spmv_csr *A, const struct spmv_csr *B)
{
  int64_t k;

  if (A->rows != B->rows || A->cols != B->cols || A->nnz != B->nnz)
    return 0;
  if (memcmp(A->row_ptr, B->row_ptr, (size_t)(A->rows + 1) * sizeof *A->row_ptr) != 0)
    return 0;
  for (k = 0; k < A->nnz; k++)
    if (A->col_idx[k] != B->col_idx[k] || !same_double(A->val[k], B->val[k]))
      return 0;
  return 1;
}

/* ------------------------------------------------------------------ */
/* Files with their expectations in comments                          */
/* ------------------------------------------------------------------ */

/* Checks one valid file against its "% expect-*" comments. */
static void check_valid_file(const char *dir, const char *name)
{
  char path[8192], line[4096];
  double size[4], ptr[64], col[64], val[64];
  struct spmv_error err = { 0, "" };
  struct spmv_mmio_info info;
  struct spmv_csr *A = NULL, *B = NULL;
  size_t len;
  char *text;
  int np, nc, nv, k;

  snprintf(path, sizeof path, "%s/%s", dir, name);
  text = slurp(path, &len);
  ck_assert_msg(expectation(text, "expect-size", line, sizeof line), "%s: no expect-size", name);
  ck_assert_int_eq(numbers(line, size, 4), 4);
  ck_assert(expectation(text, "expect-ptr", line, sizeof line));
  np = numbers(line, ptr, 64);
  ck_assert(expectation(text, "expect-col", line, sizeof line));
  nc = numbers(line, col, 64);
  ck_assert(expectation(text, "expect-val", line, sizeof line));
  nv = numbers(line, val, 64);

  ck_assert_msg(spmv_mmio_read(path, &A, &info, &err) == 0, "%s: %s", name, err.msg);
  check_sorted(A, name);
  ck_assert_msg(A->rows == (int64_t)size[0] && A->cols == (int64_t)size[1] &&
                A->nnz == (int64_t)size[2] && info.duplicates == (int64_t)size[3],
                "%s: got %lld x %lld, nnz %lld, dups %lld", name, (long long)A->rows,
                (long long)A->cols, (long long)A->nnz, (long long)info.duplicates);
  ck_assert_int_eq(info.rows, A->rows);
  ck_assert_int_eq(info.cols, A->cols);
  ck_assert_int_eq(np, A->rows + 1);
  ck_assert_int_eq(nc, A->nnz);
  ck_assert_int_eq(nv, A->nnz);
  for (k = 0; k < np; k++)
    ck_assert_msg(A->row_ptr[k] == (int64_t)ptr[k], "%s: row_ptr[%d]", name, k);
  for (k = 0; k < nc; k++) {
    ck_assert_msg(A->col_idx[k] == (int32_t)col[k], "%s: col_idx[%d] = %d", name, k,
                  A->col_idx[k]);
    ck_assert_msg(same_double(A->val[k], val[k]), "%s: val[%d] = %.17g, expected %.17g",
                  name, k, A->val[k], val[k]);
  }
  /* The same from memory. */
  ck_assert_msg(spmv_mmio_parse(text, len, name, &B, NULL, &err) == 0, "%s: %s", name,
                err.msg);
  ck_assert_msg(same_csr(A, B), "%s: parse and read differ", name);
  spmv_csr_free(B);
  spmv_csr_free(A);
  free(text);
}

START_TEST(test_valid_files)
{
  char dir[4096], **names;
  int n, i;

  snprintf(dir, sizeof dir, "%s/tests/data/mmio/valid", srcdir());
  n = list_mtx(dir, &names);
  ck_assert_int_ge(n, 20);
  for (i = 0; i < n; i++)
    check_valid_file(dir, names[i]);
  free_list(names, n);
}
END_TEST

/*
 * Checks that reading path (shown as name) fails with code, a message
 * naming the file and line, and holding want; *out must stay untouched.
 */
static void check_failure(const char *path, int code, long line, const char *want)
{
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = &sentinel;
  char where[4200];
  const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
  int rc = spmv_mmio_read(path, &A, NULL, &err);

  ck_assert_msg(rc == code, "%s: got %s (%s), expected %s", path, spmv_err_name(rc),
                err.msg, spmv_err_name(code));
  ck_assert_int_eq(err.code, code);
  ck_assert_msg(A == &sentinel, "%s: *out changed on failure", path);
  /* Long paths are shortened from the left ("...dir/f.mtx:4: "), so the
   * message must name the file by at least its base name and the line. */
  snprintf(where, sizeof where, "%s:%ld: ", base, line);
  ck_assert_msg(strstr(err.msg, where) != NULL,
                "%s: message '%s' does not name '%s'", path, err.msg, where);
  ck_assert_msg(strstr(err.msg, want) != NULL, "%s: message '%s' lacks '%s'", path,
                err.msg, want);
}

START_TEST(test_invalid_files)
{
  char dir[4096], path[4200], line[4096], **names;
  int n, i;

  snprintf(dir, sizeof dir, "%s/tests/data/mmio/invalid", srcdir());
  n = list_mtx(dir, &names);
  ck_assert_int_ge(n, 50);
  for (i = 0; i < n; i++) {
    char cname[32], *text;
    long lineno;
    int off = 0, code;
    size_t len;
    struct spmv_error err = { 0, "" };
    struct spmv_csr *A = &sentinel;

    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    text = slurp(path, &len);
    ck_assert_msg(expectation(text, "expect", line, sizeof line), "%s: no expect", path);
    ck_assert_msg(sscanf(line, "%31s %ld %n", cname, &lineno, &off) == 2 && off > 0,
                  "%s: bad expect line", path);
    code = spmv_err_from_name(cname);
    check_failure(path, code, lineno, line + off);
    /* From memory: the same code and message with the given name. */
    ck_assert_int_eq(spmv_mmio_parse(text, len, path, &A, NULL, &err), code);
    ck_assert_ptr_eq(A, &sentinel);
    ck_assert_msg(strstr(err.msg, line + off) != NULL, "%s: %s", path, err.msg);
    free(text);
  }
  free_list(names, n);
}
END_TEST

/*
 * Parses buf[0, len) from an exact-size copy (so that a sanitizer sees any
 * read past the end) and checks the outcome: success, or a parse or
 * unsupported error naming the line.  Returns the code.
 */
static int parse_exact(const char *buf, size_t len)
{
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = &sentinel;
  char *copy = malloc(len > 0 ? len : 1);
  int rc;

  ck_assert_ptr_nonnull(copy);
  memcpy(copy, buf, len);
  rc = spmv_mmio_parse(copy, len, "m", &A, NULL, &err);
  free(copy);
  if (rc == 0) {
    check_sorted(A, "mutant");
    spmv_csr_free(A);
    return rc;
  }
  if ((rc != SPMV_EPARSE && rc != SPMV_EUNSUPPORTED) || A != &sentinel ||
      strncmp(err.msg, "m:", 2) != 0 || err.msg[2] < '1' || err.msg[2] > '9')
    ck_abort_msg("bad failure: rc %d, message '%s'", rc, err.msg);
  return rc;
}

START_TEST(test_mutations)
{
  static const char *const files[] = {
    "valid/crlf_comments_dups.mtx", "valid/coord_real_symmetric.mtx",
    "valid/array_real_skew.mtx", "valid/long_numbers.mtx", "valid/nonfinite.mtx",
    "valid/coord_pattern_general.mtx",
  };
  static const char subst[] = { 'x', ' ', '\n', '0', '9', '-', '%', '.', 'e', '\0' };
  size_t f, i, j;

  for (f = 0; f < sizeof files / sizeof *files; f++) {
    char path[4200];
    size_t len;
    char *text;

    snprintf(path, sizeof path, "%s/tests/data/mmio/%s", srcdir(), files[f]);
    text = slurp(path, &len);
    /* Every prefix: either a whole matrix or an error naming a line. */
    for (i = 0; i < len; i++)
      parse_exact(text, i);
    ck_assert_int_eq(parse_exact(text, len), 0);
    /* Every byte replaced by characters that matter to the grammar. */
    for (i = 0; i < len; i++) {
      char keep = text[i];
      for (j = 0; j < sizeof subst; j++) {
        text[i] = subst[j];
        parse_exact(text, len);
      }
      text[i] = keep;
    }
    free(text);
  }
}
END_TEST

/* ------------------------------------------------------------------ */
/* gzip, I/O errors, info, arguments                                  */
/* ------------------------------------------------------------------ */

/* Makes a private temporary directory; the caller removes it. */
static void make_tmpdir(char *dir, size_t cap)
{
  const char *t = getenv("TMPDIR");

  snprintf(dir, cap, "%s/check_mmio.XXXXXX", t != NULL && *t != '\0' ? t : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Writes text as gzip to path, split into `members` gzip members. */
static void write_gz(const char *path, const char *text, size_t len, int members)
{
  size_t done = 0;
  int m;

  for (m = 0; m < members; m++) {
    size_t part = m == members - 1 ? len - done : len / (size_t)members;
    gzFile gz = gzopen(path, m == 0 ? "wb9" : "ab9");

    ck_assert_ptr_nonnull(gz);
    if (part > 0)
      ck_assert_int_eq(gzwrite(gz, text + done, (unsigned)part), (int)part);
    ck_assert_int_eq(gzclose(gz), Z_OK);
    done += part;
  }
}

START_TEST(test_gzip)
{
  char dir[512], src[4096], gz[600], bad[600];
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = NULL, *B = NULL;
  struct spmv_mmio_info info;
  char *text, *packed;
  size_t len, plen;
  int members;

  make_tmpdir(dir, sizeof dir);
  snprintf(src, sizeof src, "%s/tests/data/mmio/valid/crlf_comments_dups.mtx", srcdir());
  snprintf(gz, sizeof gz, "%s/m.mtx.gz", dir);
  text = slurp(src, &len);
  ck_assert_int_eq(spmv_mmio_read(src, &A, NULL, &err), 0);

  /* One member, then several (as concatenated .gz files are). */
  for (members = 1; members <= 3; members++) {
    write_gz(gz, text, len, members);
    ck_assert_msg(spmv_mmio_read(gz, &B, &info, &err) == 0, "%s", err.msg);
    ck_assert(same_csr(A, B));
    ck_assert_int_eq(info.duplicates, 1);
    B = spmv_csr_free(B);
  }

  /* Truncated compressed data. */
  write_gz(gz, text, len, 1);
  packed = slurp(gz, &plen);
  snprintf(bad, sizeof bad, "%s/cut.mtx.gz", dir);
  spit(bad, packed, plen / 2);
  B = &sentinel;
  ck_assert_int_eq(spmv_mmio_read(bad, &B, NULL, &err), SPMV_EPARSE);
  ck_assert_ptr_eq(B, &sentinel);
  ck_assert_msg(strstr(err.msg, "truncated") != NULL && strstr(err.msg, bad) != NULL,
                "%s", err.msg);

  /* Corrupt compressed data: a broken CRC or a broken stream. */
  packed[plen - 6] ^= 0x55;
  spit(bad, packed, plen);
  ck_assert_int_eq(spmv_mmio_read(bad, &B, NULL, &err), SPMV_EPARSE);
  ck_assert_msg(strstr(err.msg, "corrupt gzip") != NULL, "%s", err.msg);
  ck_assert_ptr_eq(B, &sentinel);
  free(packed);
  free(text);

  /* A malformed file behind gzip still names its line. */
  snprintf(src, sizeof src, "%s/tests/data/mmio/invalid/index_row_zero.mtx", srcdir());
  text = slurp(src, &len);
  write_gz(gz, text, len, 1);
  check_failure(gz, SPMV_EPARSE, 5, "row index 0 out of range [1, 3]");
  free(text);

  unlink(bad);
  unlink(gz);
  ck_assert_int_eq(rmdir(dir), 0);
  spmv_csr_free(A);
}
END_TEST

START_TEST(test_io_errors)
{
  char dir[512], path[600];
  struct spmv_error err = { 0, "" };
  struct spmv_csr *A = &sentinel;

  make_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/missing.mtx", dir);
  ck_assert_int_eq(spmv_mmio_read(path, &A, NULL, &err), SPMV_EIO);
  ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, "cannot open"), "%s",
                err.msg);
  ck_assert_int_eq(spmv_mmio_read(dir, &A, NULL, &err), SPMV_EIO);
  ck_assert_msg(strstr(err.msg, "directory") != NULL, "%s", err.msg);
  spit(path, "", 0);
  check_failure(path, SPMV_EPARSE, 1, "missing '%%MatrixMarket' banner");
  spit(path, "%%MatrixMarket matrix coordinate real general", 45);
  check_failure(path, SPMV_EPARSE, 1, "missing size line");
  ck_assert_ptr_eq(A, &sentinel);
  unlink(path);
  ck_assert_int_eq(rmdir(dir), 0);

  ck_assert_int_eq(spmv_mmio_read(NULL, &A, NULL, &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_mmio_parse("x", 1, "x", NULL, NULL, &err), SPMV_EINVAL);
  ck_assert_int_eq(spmv_mmio_parse(NULL, 0, NULL, &A, NULL, &err), SPMV_EPARSE);
  ck_assert_msg(strncmp(err.msg, "<buffer>:1: ", 12) == 0, "%s", err.msg);
  ck_assert_ptr_eq(A, &sentinel);
}
END_TEST

START_TEST(test_info)
{
  static const char text[] =
      "%%MatrixMarket MATRIX Array Integer Skew-Symmetric\n% c\n4 4\n"
      "1\n2\n3\n4\n5\n6\n";
  struct spmv_error err = { 0, "" };
  struct spmv_mmio_info info;
  struct spmv_csr *A = NULL;

  ck_assert_int_eq(spmv_mmio_parse(text, sizeof text - 1, "t", &A, &info, &err), 0);
  ck_assert_str_eq(info.format, "array");
  ck_assert_str_eq(info.field, "integer");
  ck_assert_str_eq(info.symmetry, "skew-symmetric");
  ck_assert_int_eq(info.rows, 4);
  ck_assert_int_eq(info.cols, 4);
  ck_assert_int_eq(info.entries, 6);
  ck_assert_int_eq(info.duplicates, 0);
  ck_assert_int_eq(A->nnz, 12);
  /* Column 0 holds 1, 2, 3 below the diagonal; row 0 their negatives. */
  ck_assert_int_eq(A->row_ptr[1], 3);
  ck_assert(A->val[0] == -1 && A->val[1] == -2 && A->val[2] == -3);
  /* Row 3: (3,0) = 3, (3,1) = 5, (3,2) = 6. */
  ck_assert(A->val[9] == 3 && A->val[10] == 5 && A->val[11] == 6);
  spmv_csr_free(A);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Every shared matrix against figures from scipy (matrices.tsv)       */
/* ------------------------------------------------------------------ */

/* Compares one matrix with its TSV line's figures. */
static void check_figures(const char *dir, const char *file, long long rows,
                          long long cols, long long nnz, long long dups,
                          long long rowsum, long long colsum, double valsum,
                          double abssum)
{
  char path[8192];
  struct spmv_error err = { 0, "" };
  struct spmv_mmio_info info;
  struct spmv_csr *A = NULL;
  long long rs = 0, cs = 0;
  double vs = 0, as = 0;
  int64_t i, k;

  snprintf(path, sizeof path, "%s/%s", dir, file);
  ck_assert_msg(spmv_mmio_read(path, &A, &info, &err) == 0, "%s", err.msg);
  check_sorted(A, file);
  for (i = 0; i < A->rows; i++) {
    rs += (long long)i * (long long)(A->row_ptr[i + 1] - A->row_ptr[i]);
    for (k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      cs += A->col_idx[k];
      vs += A->val[k];
      as += fabs(A->val[k]);
    }
  }
  ck_assert_msg(A->rows == rows && A->cols == cols && A->nnz == nnz &&
                info.duplicates == dups,
                "%s: %lld x %lld nnz %lld dups %lld; scipy: %lld x %lld nnz %lld dups %lld",
                file, (long long)A->rows, (long long)A->cols, (long long)A->nnz,
                (long long)info.duplicates, rows, cols, nnz, dups);
  ck_assert_msg(rs == rowsum, "%s: row checksum %lld, scipy %lld", file, rs, rowsum);
  ck_assert_msg(cs == colsum, "%s: column checksum %lld, scipy %lld", file, cs, colsum);
  /* Relative to the sum of magnitudes, the scale of the rounding errors. */
  ck_assert_msg(fabs(as - abssum) <= 1e-12 * abssum, "%s: sum |v| %.17g, scipy %.17g",
                file, as, abssum);
  ck_assert_msg(fabs(vs - valsum) <= 1e-12 * abssum, "%s: sum v %.17g, scipy %.17g",
                file, vs, valsum);
  spmv_csr_free(A);
}

START_TEST(test_shared_matrices)
{
  const char *dir = matrices_dir();
  char tsv[4096], line[1024], **names;
  FILE *f;
  int n, i, seen = 0, *found;

  snprintf(tsv, sizeof tsv, "%s/tests/data/matrices.tsv", srcdir());
  n = list_mtx(dir, &names);
  ck_assert_msg(n > 0, "no matrices in %s", dir);
  found = calloc((size_t)n, sizeof *found);
  f = fopen(tsv, "r");
  ck_assert_msg(f != NULL, "cannot open %s", tsv);
  while (fgets(line, sizeof line, f) != NULL) {
    char file[256];
    long long rows, cols, nnz, dups, rowsum, colsum;
    double valsum, abssum;

    if (line[0] == '#' || strncmp(line, "file\t", 5) == 0)
      continue;
    ck_assert_msg(sscanf(line, "%255s %lld %lld %lld %lld %lld %lld %lf %lf", file, &rows,
                         &cols, &nnz, &dups, &rowsum, &colsum, &valsum, &abssum) == 9,
                  "bad line in %s: %s", tsv, line);
    /* The folder holds some of the table's matrices, plain or gzipped. */
    for (i = 0; i < n; i++)
      if (testdata_same(names[i], file)) {
        found[i] = 1;
        check_figures(dir, names[i], rows, cols, nnz, dups, rowsum, colsum, valsum,
                      abssum);
        seen++;
      }
  }
  fclose(f);
  for (i = 0; i < n; i++)
    ck_assert_msg(found[i], "%s/%s has no figures in %s: run tests/data/mkfigures.py",
                  dir, names[i], tsv);
  ck_assert_int_eq(seen, n);
  free(found);
  free_list(names, n);
}
END_TEST

/* The reader's test suite; the shared matrices only where they exist. */
static Suite *mmio_suite(int with_shared)
{
  Suite *s = suite_create("mmio");
  TCase *tc = tcase_create("files");

  tcase_add_test(tc, test_valid_files);
  tcase_add_test(tc, test_invalid_files);
  tcase_add_test(tc, test_gzip);
  tcase_add_test(tc, test_io_errors);
  tcase_add_test(tc, test_info);
  tcase_add_test(tc, test_mutations);
  suite_add_tcase(s, tc);

  if (with_shared) {
    tc = tcase_create("shared");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_shared_matrices);
    suite_add_tcase(s, tc);
  }
  return s;
}

/* Runs the suite; the shared matrices' case only where they exist. */
int main(void)
{
  struct stat st;
  const char *dir = matrices_dir();
  int with_shared = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
  SRunner *sr;
  int failed;

  if (!with_shared)
    fprintf(stderr, "check_mmio: no matrix folder at %s; "
            "its comparison with matrices.tsv is skipped\n", dir);
  sr = srunner_create(mmio_suite(with_shared));
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
