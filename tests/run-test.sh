#!/bin/sh
# run-test.sh: make check's wrapper of every test: the test runs with a
# TMPDIR of its own, removed afterwards whether it passed or not, so that
# no run leaves anything in /tmp, and with SPMV_AUTOSTART=0.
base=${TMPDIR:-/tmp}
dir=$(mktemp -d "$base/spmvd-check.XXXXXX") || { echo "run-test.sh: cannot create a directory in $base" >&2; exit 99; }
# Open to all, as /tmp is: tests that drop privileges reach their sockets.
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM
TMPDIR=$dir
# No test starts a daemon from the installed spmvd (nor writes its log in
# $HOME) by accident: spmvctl's autostart is off unless a test asks.
SPMV_AUTOSTART=0
export TMPDIR SPMV_AUTOSTART
# The tests SPMV_SERIAL_TESTS names (those sharing the GPU) take turns: each
# holds a lock in the build tree while it runs (the test itself, and any
# daemon it leaves behind, do not inherit the lock's descriptor).
for test_name; do test_name=${test_name##*/}; done
case " ${SPMV_SERIAL_TESTS:-} " in
  *" $test_name "*)
    if command -v flock >/dev/null 2>&1; then
      exec 9>"${SPMV_TOP_BUILDDIR:-.}/tests/serial-tests.lock" && flock 9
    fi ;;
esac
"$@" 9>&-
