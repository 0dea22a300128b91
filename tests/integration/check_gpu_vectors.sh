#!/bin/sh
# check_gpu_vectors.sh: the tests of products on device vectors
# (check_vectors, check_vectors_proto), on host vectors in place, one and
# three at a time (check_inplace), and the server-side solvers (check_solve,
# check_solve_client), again with the daemon on the cuda backend, so that
# its vectors, lists, pinned and overlapped transfers and solves are checked
# against the same double-precision references as the cpu backend's; exits
# 77 (skipped) where no GPU is present.
top_build=${SPMV_TOP_BUILDDIR:-.}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "check_gpu_vectors: no GPU; skipped"
  exit 77
fi
SPMV_ITEST_BACKEND=cuda
# The same programs run on the cpu backend at the same time under make -j:
# their schema-coverage records stay theirs.
SPMV_ITEST_RERUN=1
export SPMV_ITEST_BACKEND SPMV_ITEST_RERUN
status=0
for t in check_vectors check_vectors_proto check_inplace check_solve check_solve_client; do
  echo "== $t on the cuda backend"
  "$top_build/tests/integration/$t" || status=1
done
exit $status
