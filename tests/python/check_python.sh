#!/bin/sh
# check_python.sh: the Python module spmvd (client/python/) against a private
# spmvd on the cpu backend, run by test_spmvd.py and test_spmvd_solve.py
# (their shared pieces in spmvd_testing.py) with the configured
# Python.  Skipped (77) without that Python, numpy and scipy, or without
# the shared libspmvclient.
top_srcdir=${SPMV_TOP_SRCDIR:-.}
top_builddir=${SPMV_TOP_BUILDDIR:-.}
py=${SPMV_PYTHON:-:}
lib=$top_builddir/client/.libs/libspmvclient.so

[ "$py" != : ] || { echo "configured without Python: skipped"; exit 77; }
[ -f "$lib" ] || { echo "no $lib (shared libraries disabled?): skipped"; exit 77; }
"$py" -c 'import numpy, scipy.io, scipy.sparse.linalg' 2>/dev/null ||
  { echo "$py has no numpy or scipy: skipped"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/spmvd-python.XXXXXX") || exit 99
pid=
trap '[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# Two workers, so that split matrices are tested too.
SPMVD_CPU_THREADS=2 "$top_builddir/daemon/spmvd" --foreground \
  --socket "$tmp/spmvd.sock" --db "$tmp/cache.db" --backend cpu --cpu-workers 2 \
  >"$tmp/spmvd.log" 2>&1 &
pid=$!
i=0
until "$top_builddir/client/spmvctl" --socket "$tmp/spmvd.sock" status \
      >"$tmp/status" 2>&1 && [ "$(grep -c ' ready$' "$tmp/status")" -eq 2 ]; do
  i=$((i + 1))
  if [ $i -gt 100 ]; then
    echo "spmvd has not two ready workers after 10 s:"; cat "$tmp/status" "$tmp/spmvd.log"
    exit 99
  fi
  sleep 0.1
done

# The module from the source tree, the library from the build tree; no
# bytecode is written into the (perhaps read-only) source tree.
PYTHONPATH=$top_srcdir/client/python:$top_srcdir/tests/python${PYTHONPATH:+:$PYTHONPATH} \
PYTHONDONTWRITEBYTECODE=1 SPMVD_LIBSPMVCLIENT=$lib \
SPMVD_SOCKET=$tmp/spmvd.sock SPMV_TEST_DB=$tmp/cache.db \
SPMV_TEST_DATA=$top_srcdir/tests/data/matrices \
SPMV_TEST_SPMVCTL=$top_builddir/client/spmvctl \
SPMV_TEST_SPMVD=$top_builddir/daemon/spmvd \
  "$py" -m unittest -v test_spmvd test_spmvd_solve
status=$?
[ $status -eq 0 ] || { echo "spmvd's log:"; tail -50 "$tmp/spmvd.log"; }
exit $status
