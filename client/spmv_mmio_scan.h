/* spmv_mmio_scan.h: the number scanners of the Matrix Market reader. */
#ifndef SPMV_MMIO_SCAN_H
#define SPMV_MMIO_SCAN_H

/*
 * These scanners read one token from [*pp, end) without needing a NUL
 * terminator.  They are static inline so that the reader's hot loop can
 * inline them; the tests include this header to check them directly.
 *
 * Design of the float scanner: a decimal token whose significand fits in
 * 53 bits and whose power of ten lies within [-22, 22] is computed as one
 * multiplication or division of two exactly representable doubles, which
 * IEEE 754 rounds correctly (Clinger's fast path).  Everything else (long
 * significands, large exponents, nan, inf) is handed to strtod_l in the C
 * locale, so the result always equals strtod's.
 */

#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Outcomes of a scanner. */
enum {
  MMIO_SCAN_OK = 0,     /* a number was read, *pp is after it */
  MMIO_SCAN_NONE = 1,   /* the token is not a number of the wanted kind */
  MMIO_SCAN_RANGE = 2,  /* an integer does not fit in int64 */
  MMIO_SCAN_LONG = 3    /* a token longer than MMIO_SCAN_MAXTOK characters */
};

#define MMIO_SCAN_MAXTOK 511

/* Character classes: blanks within a line, and the line end. */
#define MMIO_BLANK 1
#define MMIO_EOL 2
static const unsigned char mmio_class[256] = {
  [' '] = MMIO_BLANK, ['\t'] = MMIO_BLANK, ['\r'] = MMIO_BLANK, ['\n'] = MMIO_EOL
};

/* Whether c ends a token: blank, carriage return or newline. */
static inline int mmio_is_delim(char c)
{
  return mmio_class[(unsigned char)c] != 0;
}

/* Returns the end of the token starting at s (the first delimiter or end). */
static inline const char *mmio_token_end(const char *s, const char *end)
{
  while (s < end && !mmio_is_delim(*s))
    s++;
  return s;
}

/*
 * Eight digits at once (SWAR), on little-endian hosts: whether the eight
 * bytes at s are all ASCII digits, and their value.  Adding 6 carries a
 * byte past '9' into the high nibble; digits alone leave 0x3 in both.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MMIO_SWAR 1
static inline uint64_t mmio_load8(const char *s)
{
  uint64_t v;

  memcpy(&v, s, sizeof v);
  return v;
}

static inline int mmio_all_digits8(uint64_t v)
{
  return ((v & 0xF0F0F0F0F0F0F0F0ULL) |
          (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
         0x3333333333333333ULL;
}

/* The value of eight digit bytes, the first byte most significant. */
static inline uint64_t mmio_value8(uint64_t v)
{
  v -= 0x3030303030303030ULL;
  v = v * 10 + (v >> 8);  /* byte pairs: 2-digit numbers in bytes 0, 2, 4, 6 */
  v = ((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)) +
       ((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32))) >> 32;
  return v;
}
/*
 * How many of the eight bytes of v, from the first, are digits: a byte
 * that is not a digit leaves a nonzero high nibble in m.  A carry out of a
 * byte above 0xF9 only disturbs the bytes after it.
 */
static inline int mmio_digit_count8(uint64_t v)
{
  uint64_t m = ((v & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
               (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^
                0x3030303030303030ULL);

  m |= m >> 2;
  m |= m >> 1;
  m &= 0x1010101010101010ULL;
  return m != 0 ? __builtin_ctzll(m) / 8 : 8;
}

/* Powers of ten as integers, for appending n digits to w. */
static const uint64_t mmio_pow10u[9] = {
  1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000
};
#else
#define MMIO_SWAR 0
#endif

/*
 * Scans an integer token: digits, preceded by '+' or '-' when signed_ok.
 * The token must end at a delimiter or at end.  Stores it in *out and
 * moves *pp past it on MMIO_SCAN_OK.
 */
static inline int mmio_scan_int(const char **pp, const char *end, int signed_ok,
                                int64_t *out)
{
  const char *s = *pp;
  uint64_t v = 0;
  int neg = 0;
  int nd = 0;

  if (signed_ok && s < end && (*s == '-' || *s == '+')) {
    neg = *s == '-';
    s++;
  }
  /* 19 digits always fit in 64 bits; only longer tokens need care. */
  while (s < end && (unsigned char)(*s - '0') < 10 && nd < 19) {
    v = v * 10 + (uint64_t)(*s - '0');
    s++;
    nd++;
  }
  while (s < end && (unsigned char)(*s - '0') < 10) {
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      v = UINT64_MAX;  /* saturate: reported as out of range below */
    else
      v = v * 10 + d;
    s++;
    nd++;
  }
  if (nd == 0 || (s < end && !mmio_is_delim(*s)))
    return MMIO_SCAN_NONE;
  if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
    return MMIO_SCAN_RANGE;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  *pp = s;
  return MMIO_SCAN_OK;
}

/* Exact powers of ten representable in a double. */
static const double mmio_pow10[23] = {
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/*
 * The slow path: strtod_l over a NUL-terminated copy of the token
 * [s, e).  Hexadecimal floats are refused (Matrix Market is decimal).
 */
static __attribute__((noinline)) int
mmio_scan_double_slow(const char *s, const char *e, locale_t loc, double *out)
{
  char buf[MMIO_SCAN_MAXTOK + 1];
  size_t n = (size_t)(e - s);
  const char *t = s;
  char *stop;

  if (n == 0)
    return MMIO_SCAN_NONE;
  if (n > MMIO_SCAN_MAXTOK)
    return MMIO_SCAN_LONG;
  if (*t == '+' || *t == '-')
    t++;
  if (e - t >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))
    return MMIO_SCAN_NONE;
  memcpy(buf, s, n);
  buf[n] = '\0';
  *out = strtod_l(buf, &stop, loc);
  if (stop != buf + n)
    return MMIO_SCAN_NONE;
  return MMIO_SCAN_OK;
}

/*
 * Consumes a run of decimal digits, appending them to w while it holds
 * fewer than 19 significant digits (*nd), eight at a time where it can.
 * Returns how many were appended; *dropped counts the rest, and *lost
 * records whether one of those was nonzero.
 */
static inline int64_t mmio_digits(const char **sp, const char *end, uint64_t *wp,
                                  int *nd, int *lost, int64_t *dropped)
{
  const char *s = *sp;
  uint64_t w = *wp;
  int64_t kept = 0, extra = 0;

#if MMIO_SWAR
  /* Up to eight digits per step while they fit in w.  The caller skipped
   * leading zeros, so every digit here is significant. */
  while (end - s >= 8) {
    uint64_t x = mmio_load8(s);
    int n = mmio_digit_count8(x);

    if (n == 0 || *nd + n > 19)
      break;
    if (n < 8)  /* keep the n digits, as the last of eight, behind '0's */
      x = (x << (64 - 8 * n)) | (0x3030303030303030ULL >> (8 * n));
    w = w * mmio_pow10u[n] + mmio_value8(x);
    *nd += n;
    kept += n;
    s += n;
    if (n < 8)
      break;
  }
#endif
  while (s < end && (unsigned char)(*s - '0') < 10) {
    if (*nd < 19) {
      w = w * 10 + (uint64_t)(*s - '0');
      ++*nd;
      kept++;
    } else {
      extra++;
      *lost |= *s != '0';
    }
    s++;
  }
  *sp = s;
  *wp = w;
  *dropped = extra;
  return kept;
}

/*
 * Scans a floating-point token ending at a delimiter or at end, exactly as
 * strtod would round it.  Moves *pp past it on MMIO_SCAN_OK.
 */
static inline int mmio_scan_double(const char **pp, const char *end,
                                   locale_t loc, double *out)
{
  const uint64_t two53 = (uint64_t)1 << 53;
  const char *s = *pp;
  const char *start = s;
  uint64_t w = 0;      /* the first 19 significant digits */
  int nd = 0;          /* digits held in w (leading zeros excluded) */
  int any = 0;         /* at least one digit seen */
  int lost = 0;        /* a nonzero digit did not fit in w */
  int64_t e10 = 0;     /* value = w * 10^e10 */
  int64_t kept, dropped;
  int neg = 0;
  double d;
  int rc;

  if (s < end && (*s == '-' || *s == '+')) {
    neg = *s == '-';
    s++;
  }
  while (s < end && *s == '0') {
    s++;
    any = 1;
  }
  kept = mmio_digits(&s, end, &w, &nd, &lost, &dropped);
  any |= kept + dropped > 0;
  e10 += dropped;
  if (s < end && *s == '.') {
    s++;
    if (nd == 0) {
      while (s < end && *s == '0') {
        e10--;
        s++;
        any = 1;
      }
    }
    kept = mmio_digits(&s, end, &w, &nd, &lost, &dropped);
    any |= kept + dropped > 0;
    e10 -= kept;
  }
  if (!any)
    goto slow;
  if (s < end && (*s == 'e' || *s == 'E')) {
    int eneg = 0;
    int64_t x = 0;
    const char *digits;

    s++;
    if (s < end && (*s == '-' || *s == '+')) {
      eneg = *s == '-';
      s++;
    }
    digits = s;
    while (s < end && (unsigned char)(*s - '0') < 10) {
      if (x < 100000)
        x = x * 10 + (*s - '0');
      s++;
    }
    if (s == digits)
      goto slow;
    e10 += eneg ? -x : x;
  }
  if (s < end && !mmio_is_delim(*s))
    goto slow;
  if (lost)
    goto slow;
  if (w == 0) {
    d = 0.0;
    goto done;
  }
  while ((w > two53 || e10 < -22) && w % 10 == 0) {
    w /= 10;
    e10++;
  }
  if (w > two53)
    goto slow;
  if (e10 >= 0 && e10 <= 22) {
    d = (double)w * mmio_pow10[e10];
  } else if (e10 < 0 && e10 >= -22) {
    d = (double)w / mmio_pow10[-e10];
  } else if (e10 > 22 && e10 <= 22 + 15) {
    /* w * 10^(e10-22) may still be an exact integer below 2^53. */
    uint64_t m = w;
    int64_t k;
    for (k = 0; k < e10 - 22 && m <= two53 / 10; k++)
      m *= 10;
    if (k < e10 - 22)
      goto slow;
    d = (double)m * 1e22;
  } else {
    goto slow;
  }
done:
  *out = neg ? -d : d;
  *pp = s;
  return MMIO_SCAN_OK;
slow:
  s = mmio_token_end(start, end);
  rc = mmio_scan_double_slow(start, s, loc, out);
  if (rc == MMIO_SCAN_OK)
    *pp = s;
  return rc;
}

#endif /* SPMV_MMIO_SCAN_H */
