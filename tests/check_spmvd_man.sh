#!/bin/sh
# check_spmvd_man.sh: every option spmvd --help prints is documented in
# spmvd(8), and every key of spmvd.conf(5) is accepted by spmvd.
top_srcdir=${SPMV_TOP_SRCDIR:-${srcdir:-.}/..}
top_builddir=${SPMV_TOP_BUILDDIR:-.}
spmvd=$top_builddir/daemon/spmvd
man8=$top_builddir/man/spmvd.8
man5=$top_builddir/man/spmvd.conf.5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_spmvd_man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

"$spmvd" --help >"$tmp/help" || { echo "spmvd --help failed"; exit 1; }
opts=$(grep -o -- '--[a-z][a-z-]*' "$tmp/help" | sort -u)
[ -n "$opts" ] || { echo "no options in spmvd --help"; exit 1; }
for o in $opts; do
  pat=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
  if ! grep -q -- "$pat" "$man8"; then
    echo "spmvd(8) does not document $o"
    fail=1
  fi
done

# The compiled-in defaults that --help prints, the socket unit and the
# manual agree: all three come from the configured directories.
sock=$(sed -n 's/^  socket  //p' "$tmp/help")
db=$(sed -n 's/^  db      //p' "$tmp/help")
conf=$(sed -n 's/^  config  //p' "$tmp/help")
listen=$(sed -n 's/^ListenStream=//p' "$top_builddir/daemon/spmvd.socket")
if [ -z "$sock" ] || [ "$sock" != "$listen" ]; then
  echo "spmvd's default socket '$sock', spmvd.socket's ListenStream '$listen'"
  fail=1
fi
for p in "$sock" "$db" "$conf"; do
  if [ -z "$p" ] || ! grep -qF -- "$p" "$man8"; then
    echo "spmvd(8) does not name the default '$p'"
    fail=1
  fi
done

# Each ".B key" under KEYS in spmvd.conf(5) must be a key spmvd accepts.
# The file ends with an unknown key, so spmvd always stops at start-up:
# either at that last line or at the documented key, naming it.
keys=$(sed -n '/^\.SH KEYS/,/^\.SH EXAMPLE/p' "$man5" | grep -A1 '^\.TP' |
  sed -n 's/^\.B \([a-z_]*\)$/\1/p')
[ -n "$keys" ] || { echo "no keys found in spmvd.conf(5)"; exit 1; }
for k in $keys; do
  printf '%s = 1\nzz_not_a_key = 1\n' "$k" >"$tmp/conf"
  out=$("$spmvd" --foreground --config "$tmp/conf" --socket "$tmp/sock" \
    --db "$tmp/db" 2>&1 </dev/null)
  if printf '%s' "$out" | grep -q "unknown key '$k'"; then
    echo "spmvd.conf(5) documents '$k' but spmvd does not accept it"
    fail=1
  fi
done
exit $fail
