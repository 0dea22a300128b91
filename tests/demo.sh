#!/bin/sh
# demo.sh: the README's main job.  Starts a private spmvd on a temporary
# socket and database, loads a real matrix through libspmvclient, lets the
# daemon tune it, multiplies, checks the product against the reference and
# prints the decision; then stops the daemon and says where everything went.
set -eu
build=${1:-.}
src=${2:-.}
matrices=${SPMV_MATRICES:-$src/tests/data/matrices}
work=$(mktemp -d "${TMPDIR:-/tmp}/spmvd-demo.XXXXXX")
sock=$work/spmvd.sock
db=$work/cache.db
log=$work/spmvd.log

"$build/daemon/spmvd" --foreground --socket "$sock" --db "$db" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT INT TERM
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$sock" ] || { echo "spmvd did not start; its log:" >&2; cat "$log" >&2; exit 1; }

matrix=$matrices/bcsstk16.mtx.gz
[ -f "$matrix" ] || matrix=$matrices/bcsstk16.mtx
echo "== first sight: tune and multiply $matrix"
"$build/tests/demo_client" "$sock" "$matrix"
echo "== spmvctl status"
"$build/client/spmvctl" --socket "$sock" status | tee "$work/status.txt"
backend=$(sed -n 's/^backend  *//p' "$work/status.txt")
echo "== same matrix again (answered from the cache)"
"$build/tests/demo_client" "$sock" "$matrix"
kill $pid; wait $pid 2>/dev/null || true
trap - EXIT INT TERM
echo "== done on the ${backend:-unknown} backend: daemon stopped; log in $log, tuning cache in $db"
