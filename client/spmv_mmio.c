/* spmv_mmio.c: the Matrix Market parser (banner, size line, entries). */
#include "config.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spmv_mmio.h"
#include "spmv_mmio_build.h"
#include "spmv_mmio_scan.h"

/* Longest file name quoted in a message (longer ones keep their tail). */
#define NAME_MAX_SHOWN 96
/* Longest piece of a bad token quoted in a message. */
#define TOKEN_MAX_SHOWN 24

/* The matrix kinds a banner can declare. */
enum mm_format { MM_COORDINATE, MM_ARRAY };
enum mm_field { MM_REAL, MM_INTEGER, MM_PATTERN };

/* The state of one parse. */
struct parser {
  const char *p;               /* the next unread byte */
  const char *end;             /* one past the last byte */
  int64_t line;                /* 1-based number of the line holding p */
  char name[NAME_MAX_SHOWN + 4];  /* the file name as shown in messages */
  locale_t loc;                /* the C locale for strtod_l */
  struct spmv_error *err;      /* where failures are described */
};

/* Records "name:line: message" in the parser's error and returns code. */
static int fail_at(struct parser *ps, int64_t line, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(struct parser *ps, int64_t line, int code, const char *fmt, ...)
{
  char msg[200];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return spmv_error_set(ps->err, code, "%s:%lld: %s", ps->name, (long long)line,
                        msg);
}

/* Copies the token at s into buf (at most TOKEN_MAX_SHOWN printable chars). */
static const char *show_token(const char *s, const char *end, char *buf)
{
  size_t n = 0;

  while (s < end && !mmio_is_delim(*s) && n < TOKEN_MAX_SHOWN) {
    unsigned char c = (unsigned char)*s++;
    buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  if (s < end && !mmio_is_delim(*s) && n >= 3)
    memcpy(buf + n - 3, "...", 3);
  buf[n] = '\0';
  return buf;
}

/* The number of the input's last line (for errors at the end of input). */
static int64_t last_line(const struct parser *ps)
{
  return ps->line - (ps->line > 1 && ps->p == ps->end && ps->end[-1] == '\n');
}

/* Skips blanks (space, tab, carriage return) within the current line. */
static inline const char *skip_blanks(const char *p, const char *end)
{
  while (p < end && mmio_class[(unsigned char)*p] == MMIO_BLANK)
    p++;
  return p;
}

/*
 * Moves ps->p to the first token of the next line holding data, past
 * blank lines and comment lines.  Returns 0 at the end of the input.
 */
static inline int next_data_line(struct parser *ps)
{
  const char *p = ps->p, *end = ps->end;

  for (;;) {
    p = skip_blanks(p, end);
    if (p == end) {
      ps->p = p;
      return 0;
    }
    if (*p == '\n') {
      p++;
      ps->line++;
    } else if (*p == '%') {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl != NULL ? nl : end;
    } else {
      ps->p = p;
      return 1;
    }
  }
}

/*
 * Ends the current line after its last token: only blanks may follow.
 * what names the last token read (for the message).
 */
static inline int end_line(struct parser *ps, const char *what)
{
  const char *p = skip_blanks(ps->p, ps->end);
  char tok[TOKEN_MAX_SHOWN + 1];

  if (p < ps->end && *p != '\n')
    return fail_at(ps, ps->line, SPMV_EPARSE, "unexpected '%s' after the %s",
                   show_token(p, ps->end, tok), what);
  if (p < ps->end)
    p++;
  ps->p = p;
  ps->line++;
  return 0;
}

/*
 * Moves ps->p to the next token of the current line, which must exist:
 * otherwise reports that the line ends before `wanted`.
 */
static inline int next_token(struct parser *ps, const char *wanted)
{
  const char *p = skip_blanks(ps->p, ps->end);

  if (p == ps->end || *p == '\n')
    return fail_at(ps, ps->line, SPMV_EPARSE, "line ends before the %s", wanted);
  ps->p = p;
  return 0;
}

/* Describes a failed integer scan of `what` at ps->p. */
static int bad_int(struct parser *ps, int rc, const char *what, int signed_ok)
{
  char tok[TOKEN_MAX_SHOWN + 1];

  show_token(ps->p, ps->end, tok);
  if (rc == MMIO_SCAN_RANGE)
    return fail_at(ps, ps->line, SPMV_EPARSE, "%s '%s' overflows a 64-bit integer",
                   what, tok);
  return fail_at(ps, ps->line, SPMV_EPARSE, "%s '%s' is not %s", what, tok,
                 signed_ok ? "an integer" : "a non-negative integer");
}

/* Reads a 1-based index in [1, limit] into *out (0-based). */
static inline int read_index(struct parser *ps, int64_t limit, const char *what,
                             int32_t *out)
{
  int64_t v;
  int rc = mmio_scan_int(&ps->p, ps->end, 0, &v);

  if (rc != MMIO_SCAN_OK)
    return bad_int(ps, rc, what, 0);
  if (v < 1 || v > limit)
    return fail_at(ps, ps->line, SPMV_EPARSE, "%s %lld out of range [1, %lld]",
                   what, (long long)v, (long long)limit);
  *out = (int32_t)(v - 1);
  return 0;
}

/* Reads one value of the given field into *out. */
static inline int read_value(struct parser *ps, enum mm_field field, double *out)
{
  char tok[TOKEN_MAX_SHOWN + 1];
  int rc;

  if (field == MM_INTEGER) {
    int64_t v;

    rc = mmio_scan_int(&ps->p, ps->end, 1, &v);
    if (rc != MMIO_SCAN_OK)
      return bad_int(ps, rc, "integer value", 1);
    *out = (double)v;
    return 0;
  }
  rc = mmio_scan_double(&ps->p, ps->end, ps->loc, out);
  if (rc == MMIO_SCAN_LONG)
    return fail_at(ps, ps->line, SPMV_EPARSE, "value '%s' is longer than %d characters",
                   show_token(ps->p, ps->end, tok), MMIO_SCAN_MAXTOK);
  if (rc != MMIO_SCAN_OK)
    return fail_at(ps, ps->line, SPMV_EPARSE, "value '%s' is not a number",
                   show_token(ps->p, ps->end, tok));
  return 0;
}

/* Copies the banner word at s, of length n, lower-cased into out[16]. */
static void lower_word(const char *s, size_t n, char out[16])
{
  size_t i;

  if (n > 15)
    n = 15;
  for (i = 0; i < n; i++)
    out[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
  out[n] = '\0';
}

/* Returns the index of word in the NULL-terminated list names, or -1. */
static int keyword(const char *word, const char *const *names)
{
  int i;

  for (i = 0; names[i] != NULL; i++)
    if (strcmp(word, names[i]) == 0)
      return i;
  return -1;
}

/*
 * Parses the banner line "%%MatrixMarket matrix FORMAT FIELD SYMMETRY"
 * (keywords in any case) into info and the three enums.
 */
static int parse_banner(struct parser *ps, struct spmv_mmio_info *info,
                        enum mm_format *format, enum mm_field *field,
                        enum spmv_mmio_sym *sym)
{
  static const char *const what[5] = {
    "'%%MatrixMarket'", "object", "format", "field", "symmetry"
  };
  /* In the order of enum mm_format, mm_field and spmv_mmio_sym; the
   * fourth field and symmetry are recognised only to be refused. */
  static const char *const formats[] = { "coordinate", "array", NULL };
  static const char *const fields[] = { "real", "integer", "pattern", "complex", NULL };
  static const char *const symmetries[] = {
    "general", "symmetric", "skew-symmetric", "hermitian", NULL
  };
  const char *eol = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
  const char *p = ps->p, *tok[5];
  char word[5][16];
  size_t len[5];
  int n = 0, k;

  if (eol == NULL)
    eol = ps->end;
  if (ps->end - ps->p < 14 || strncasecmp(ps->p, "%%MatrixMarket", 14) != 0)
    return fail_at(ps, 1, SPMV_EPARSE,
                   "missing '%%%%MatrixMarket' banner on the first line");
  for (;;) {
    p = skip_blanks(p, eol);
    if (p == eol)
      break;
    if (n == 5) {
      char t[TOKEN_MAX_SHOWN + 1];
      return fail_at(ps, 1, SPMV_EPARSE, "unexpected '%s' after the symmetry in "
                     "the banner", show_token(p, eol, t));
    }
    tok[n] = p;
    p = mmio_token_end(p, eol);
    len[n] = (size_t)(p - tok[n]);
    lower_word(tok[n], len[n], word[n]);
    n++;
  }
  if (n < 5)
    return fail_at(ps, 1, SPMV_EPARSE, "incomplete banner: no %s (expected "
                   "'%%%%MatrixMarket matrix FORMAT FIELD SYMMETRY')", what[n]);
  if (len[0] != 14)
    return fail_at(ps, 1, SPMV_EPARSE,
                   "missing '%%%%MatrixMarket' banner on the first line");
  /* A word is cut at 15 characters, longer than any keyword, so a
   * truncated word never matches. */
  if (strcmp(word[1], "matrix") != 0)
    return fail_at(ps, 1, strcmp(word[1], "vector") == 0 ? SPMV_EUNSUPPORTED : SPMV_EPARSE,
                   "object '%s' is not supported (only 'matrix')", word[1]);
  if ((k = keyword(word[2], formats)) < 0)
    return fail_at(ps, 1, SPMV_EPARSE, "unknown format '%s' in the banner "
                   "(expected 'coordinate' or 'array')", word[2]);
  *format = (enum mm_format)k;
  if ((k = keyword(word[3], fields)) == 3)
    return fail_at(ps, 1, SPMV_EUNSUPPORTED, "complex matrices are not supported "
                   "(only real, integer and pattern)");
  if (k < 0)
    return fail_at(ps, 1, SPMV_EPARSE, "unknown field '%s' in the banner "
                   "(expected 'real', 'integer' or 'pattern')", word[3]);
  *field = (enum mm_field)k;
  if ((k = keyword(word[4], symmetries)) == 3)
    return fail_at(ps, 1, SPMV_EUNSUPPORTED, "hermitian matrices are not supported "
                   "(only general, symmetric and skew-symmetric)");
  if (k < 0)
    return fail_at(ps, 1, SPMV_EPARSE, "unknown symmetry '%s' in the banner "
                   "(expected 'general', 'symmetric' or 'skew-symmetric')", word[4]);
  *sym = (enum spmv_mmio_sym)k;

  if (*format == MM_ARRAY && *field == MM_PATTERN)
    return fail_at(ps, 1, SPMV_EPARSE, "an array matrix cannot be 'pattern'");
  if (*field == MM_PATTERN && *sym == SPMV_MMIO_SKEW)
    return fail_at(ps, 1, SPMV_EPARSE, "a pattern matrix cannot be skew-symmetric");

  memcpy(info->format, word[2], sizeof info->format);
  memcpy(info->field, word[3], sizeof info->field);
  memcpy(info->symmetry, word[4], sizeof info->symmetry);
  ps->p = eol < ps->end ? eol + 1 : eol;
  ps->line = eol < ps->end ? 2 : 1;
  return 0;
}

/*
 * Parses the size line: "ROWS COLS ENTRIES" (coordinate) or "ROWS COLS"
 * (array), and checks the sizes against the reader's limits.
 */
static int parse_size(struct parser *ps, enum mm_format format,
                      enum spmv_mmio_sym sym, struct spmv_mmio_info *info)
{
  static const char *const what[3] = { "row count", "column count", "entry count" };
  int64_t v[3] = { 0, 0, 0 };
  int n = format == MM_COORDINATE ? 3 : 2;
  int i, rc;

  if (!next_data_line(ps))
    return fail_at(ps, last_line(ps), SPMV_EPARSE, "missing size line (expected '%s')",
                   format == MM_COORDINATE ? "ROWS COLS ENTRIES" : "ROWS COLS");
  for (i = 0; i < n; i++) {
    if (i > 0 && (rc = next_token(ps, what[i])) != 0)
      return rc;
    rc = mmio_scan_int(&ps->p, ps->end, 0, &v[i]);
    if (rc != MMIO_SCAN_OK)
      return bad_int(ps, rc, what[i], 0);
  }
  if (v[1] > INT32_MAX)
    return fail_at(ps, ps->line, SPMV_EPARSE, "column count %lld exceeds the 32-bit "
                   "column index range (at most %d)", (long long)v[1], INT32_MAX);
  if (v[0] > INT32_MAX)
    return fail_at(ps, ps->line, SPMV_EUNSUPPORTED, "row count %lld exceeds this "
                   "reader's limit of %d", (long long)v[0], INT32_MAX);
  if (sym != SPMV_MMIO_GENERAL && v[0] != v[1])
    return fail_at(ps, ps->line, SPMV_EPARSE, "a %s matrix must be square, not "
                   "%lld x %lld", info->symmetry, (long long)v[0], (long long)v[1]);
  if ((rc = end_line(ps, what[n - 1])) != 0)
    return rc;
  info->rows = v[0];
  info->cols = v[1];
  if (format == MM_COORDINATE)
    info->entries = v[2];
  else if (sym == SPMV_MMIO_GENERAL)
    info->entries = v[0] * v[1];
  else if (sym == SPMV_MMIO_SYMMETRIC)
    info->entries = v[0] * (v[0] + 1) / 2;
  else
    info->entries = v[0] * (v[0] - 1) / 2;
  return 0;
}

/*
 * Returns how many entries the rest of the input can hold at most, each
 * taking at least min_bytes (its newline included, except on the last
 * line), capped at the declared count.  The arrays get one slot more than
 * this bound, so a bad size line never makes us allocate beyond the file's
 * size, and the parse still fails at the very line where entries run out.
 */
static int64_t room_for(const struct parser *ps, int64_t entries, int64_t min_bytes)
{
  int64_t fit = ((int64_t)(ps->end - ps->p) + 1) / min_bytes;

  return entries < fit ? entries : fit;
}

/* Reports the input ending after `got` of `want` entries. */
static int too_few(struct parser *ps, int64_t got, int64_t want)
{
  return fail_at(ps, last_line(ps), SPMV_EPARSE, "file ends after %lld of the %lld "
                 "entries declared on the size line", (long long)got,
                 (long long)want);
}

/* Reads the coordinate entries "I J [VALUE]" into t. */
static int parse_coordinate(struct parser *ps, enum mm_field field,
                            const struct spmv_mmio_info *info, int64_t cap,
                            struct spmv_mmio_triplets *t)
{
  int64_t k;
  int rc;

  for (k = 0; k < info->entries && k <= cap; k++) {
    if (!next_data_line(ps))
      return too_few(ps, k, info->entries);
    if ((rc = read_index(ps, info->rows, "row index", &t->row[k])) != 0 ||
        (rc = next_token(ps, "column index")) != 0 ||
        (rc = read_index(ps, info->cols, "column index", &t->col[k])) != 0)
      return rc;
    if (field == MM_PATTERN) {
      t->val[k] = 1.0;
      if ((rc = end_line(ps, "column index (pattern entries have no value)")) != 0)
        return rc;
    } else {
      if ((rc = next_token(ps, "value")) != 0 ||
          (rc = read_value(ps, field, &t->val[k])) != 0 ||
          (rc = end_line(ps, "value")) != 0)
        return rc;
    }
  }
  t->n = k;
  if (k < info->entries)  /* cannot happen: the input holds fewer than cap + 1 */
    return too_few(ps, k, info->entries);
  return 0;
}

/*
 * Reads the array values, one per line, column by column: every row of a
 * general matrix, rows j..n-1 of column j for a symmetric one, rows
 * j+1..n-1 for a skew-symmetric one (whose diagonal is zero and not stored).
 */
static int parse_array(struct parser *ps, enum mm_field field, enum spmv_mmio_sym sym,
                       const struct spmv_mmio_info *info, int64_t cap,
                       struct spmv_mmio_triplets *t)
{
  int64_t k, i = sym == SPMV_MMIO_SKEW ? 1 : 0, j = 0;
  int rc;

  for (k = 0; k < info->entries && k <= cap; k++) {
    if (!next_data_line(ps))
      return too_few(ps, k, info->entries);
    t->row[k] = (int32_t)i;
    t->col[k] = (int32_t)j;
    if ((rc = read_value(ps, field, &t->val[k])) != 0 ||
        (rc = end_line(ps, "value (array files hold one value per line)")) != 0)
      return rc;
    if (++i == info->rows) {
      j++;
      i = sym == SPMV_MMIO_GENERAL ? 0 : sym == SPMV_MMIO_SYMMETRIC ? j : j + 1;
    }
  }
  t->n = k;
  if (k < info->entries)  /* cannot happen: the input holds fewer than cap + 1 */
    return too_few(ps, k, info->entries);
  return 0;
}

/* Refuses anything but blanks and comments after the last entry. */
static int parse_tail(struct parser *ps, int64_t entries)
{
  if (next_data_line(ps))
    return fail_at(ps, ps->line, SPMV_EPARSE, "more entries than the %lld declared "
                   "on the size line", (long long)entries);
  return 0;
}

/* Stores the name shown in messages: its last NAME_MAX_SHOWN characters. */
static void set_name(struct parser *ps, const char *name)
{
  size_t n;

  if (name == NULL)
    name = "<buffer>";
  n = strlen(name);
  if (n > NAME_MAX_SHOWN)
    snprintf(ps->name, sizeof ps->name, "...%s", name + n - (NAME_MAX_SHOWN - 3));
  else
    snprintf(ps->name, sizeof ps->name, "%s", name);
}

/* Parses a Matrix Market text buffer; see spmv_mmio.h. */
int spmv_mmio_parse(const char *buf, size_t len, const char *name,
                    struct spmv_csr **out, struct spmv_mmio_info *info,
                    struct spmv_error *err)
{
  struct parser ps;
  struct spmv_mmio_info inf;
  struct spmv_mmio_triplets t = { 0, NULL, NULL, NULL };
  enum mm_format format = MM_COORDINATE;
  enum mm_field field = MM_REAL;
  enum spmv_mmio_sym sym = SPMV_MMIO_GENERAL;
  int64_t cap;
  int rc;

  memset(&inf, 0, sizeof inf);
  memset(&ps, 0, sizeof ps);
  set_name(&ps, name);
  ps.err = err;
  ps.line = 1;
  if (out == NULL || (buf == NULL && len > 0))
    return spmv_error_set(err, SPMV_EINVAL, "%s: no buffer or no output", ps.name);
  /* An empty buffer may be NULL; the parser's memchr and arithmetic need
   * a real pointer even for zero bytes. */
  ps.p = buf != NULL ? buf : "";
  ps.end = ps.p + len;
  ps.loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  if (ps.loc == (locale_t)0)
    return spmv_error_set(err, SPMV_ENOMEM, "%s: cannot create the C locale",
                          ps.name);

  if ((rc = parse_banner(&ps, &inf, &format, &field, &sym)) != 0 ||
      (rc = parse_size(&ps, format, sym, &inf)) != 0)
    goto out;

  cap = room_for(&ps, inf.entries, format == MM_ARRAY ? 2 : field == MM_PATTERN ? 4 : 6);
  t.row = malloc(((size_t)cap + 1) * sizeof *t.row);
  t.col = malloc(((size_t)cap + 1) * sizeof *t.col);
  t.val = malloc(((size_t)cap + 1) * sizeof *t.val);
  if (t.row == NULL || t.col == NULL || t.val == NULL) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "%s: out of memory for %lld entries",
                        ps.name, (long long)cap);
    goto out;
  }
  if (format == MM_COORDINATE)
    rc = parse_coordinate(&ps, field, &inf, cap, &t);
  else
    rc = parse_array(&ps, field, sym, &inf, cap, &t);
  if (rc != 0 || (rc = parse_tail(&ps, inf.entries)) != 0)
    goto out;
  rc = spmv_mmio_build_csr(&t, inf.rows, inf.cols, sym, ps.name, out,
                           &inf.duplicates, err);
  if (rc == 0 && info != NULL)
    *info = inf;

out:
  free(t.val);
  free(t.col);
  free(t.row);
  freelocale(ps.loc);
  return rc;
}
