#!/bin/sh
# installcheck.sh: the installed tree works on its own (make installcheck,
# which make distcheck runs): the installed spmvd finds its installed
# worker and serves a product, and the example of the installed
# libspmvclient(3) compiles with the installed libspmvclient.pc and runs.
#   usage: installcheck.sh SBINDIR BINDIR LIBDIR MANDIR MATRIX
set -eu
sbindir=$1 bindir=$2 libdir=$3 mandir=$4 matrix=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/spmvd-installcheck.XXXXXX")
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

# The daemon from sbin, so that its worker can only be the one in libexec.
"$sbindir/spmvd" --foreground --socket "$tmp/s.sock" --db "$tmp/cache.db" \
  --backend cpu >"$tmp/spmvd.log" 2>&1 &
pid=$!
i=0
until "$bindir/spmvctl" --socket "$tmp/s.sock" status >"$tmp/status" 2>/dev/null &&
      grep -q ' ready$' "$tmp/status"; do
  i=$((i + 1))
  if [ $i -gt 100 ]; then
    echo "installcheck: the installed spmvd has no ready worker after 10 s:"
    cat "$tmp/status" "$tmp/spmvd.log" 2>/dev/null
    exit 1
  fi
  sleep 0.1
done
echo "installcheck: the installed spmvd started its worker"

# The manual's example, as a user would take it from the installed page.
sed -n '/^\.SH EXAMPLE/,/^\.SH /p' "$mandir/man3/libspmvclient.3" |
  sed -e '1,/^\.nf/d' -e '/^\.fi/,$d' -e 's/\\e/\\/g' -e 's/\\-/-/g' >"$tmp/example.c"
[ -s "$tmp/example.c" ] || { echo "installcheck: no example in libspmvclient(3)"; exit 1; }
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
        pkg-config --cflags --libs libspmvclient)
${CC:-cc} -o "$tmp/example" "$tmp/example.c" $flags -Wl,-rpath,"$libdir" ||
  { echo "installcheck: the example does not compile with: $flags"; exit 1; }
SPMVD_SOCKET=$tmp/s.sock "$tmp/example" "$matrix" >"$tmp/example.out" ||
  { echo "installcheck: the example failed"; cat "$tmp/example.out" "$tmp/spmvd.log"; exit 1; }
cat "$tmp/example.out"
grep -q 'GFLOP/s' "$tmp/example.out" ||
  { echo "installcheck: the example printed no decision"; exit 1; }
echo "installcheck: the example of libspmvclient(3) built with pkg-config and ran"
