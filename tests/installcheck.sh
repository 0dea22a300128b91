#!/bin/sh
# installcheck.sh: the installed tree works on its own (make installcheck,
# which make distcheck runs): the installed spmvd finds its installed
# worker and serves a product, and the example of the installed
# libspmvclient(3) compiles with the installed libspmvclient.pc and runs,
# and spmvctl starts the installed spmvd on demand.
#   usage: installcheck.sh SBINDIR BINDIR LIBDIR MANDIR MATRIX
set -eu
sbindir=$1 bindir=$2 libdir=$3 mandir=$4 matrix=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/spmvd-installcheck.XXXXXX")
pid=
# The daemon of the autostart check below, by its lock file's pid.
stop_auto() {
  [ -f "$tmp/run/spmvd.sock.lock" ] && kill "$(cat "$tmp/run/spmvd.sock.lock")" 2>/dev/null
  return 0
}
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; stop_auto; rm -rf "$tmp"' EXIT INT TERM

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

# spmvctl with no daemon starts the installed spmvd (the program configured
# at build time, no SPMVD_PROGRAM) as a user instance, which exits when idle.
mkdir -p "$tmp/run" "$tmp/state" "$tmp/config"
env -u SPMVD_PROGRAM -u SPMVD_SOCKET -u SPMV_AUTOSTART XDG_RUNTIME_DIR="$tmp/run" \
  XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" SPMV_AUTOSTART_IDLE_S=1 \
  "$bindir/spmvctl" --quiet tune "$matrix" >"$tmp/auto.out" 2>&1 ||
  { echo "installcheck: spmvctl did not start the installed spmvd:"; cat "$tmp/auto.out"
    cat "$tmp/state/spmvd/spmvd.log" 2>/dev/null; exit 1; }
i=0
while [ -e "$tmp/run/spmvd.sock" ]; do
  i=$((i + 1))
  if [ $i -gt 300 ]; then
    echo "installcheck: the autostarted spmvd did not exit within 30 s of idleness"
    cat "$tmp/state/spmvd/spmvd.log"; exit 1
  fi
  sleep 0.1
done
[ -f "$tmp/state/spmvd/cache.db" ] ||
  { echo "installcheck: the autostarted spmvd left no cache"; exit 1; }
echo "installcheck: spmvctl started the installed spmvd on demand, which exited when idle"
