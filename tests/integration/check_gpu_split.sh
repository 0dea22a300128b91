#!/bin/sh
# check_gpu_split.sh: the split matrices' tests (check_split_client,
# check_split_vectors) again
# with the daemon on the cuda backend: a worker per GPU (spmvd --devices
# all), or on a host of one GPU two workers on it (--devices 0,0), which
# runs the cuda workers' split path but not a halo between GPUs: products
# and every solver on blocks in different workers, against the same
# double-precision references; exits 77 (skipped) without a GPU.
top_build=${SPMV_TOP_BUILDDIR:-.}
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "check_gpu_split: no GPU; skipped"
  exit 77
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -lt 1 ]; then
  echo "check_gpu_split: no GPU listed by nvidia-smi; skipped"
  exit 77
fi
SPMV_ITEST_BACKEND=cuda
if [ "$gpus" -eq 1 ]; then
  SPMV_ITEST_DEVICES=0,0
  echo "== check_split_client: one GPU, two workers on it"
else
  SPMV_ITEST_DEVICES=all
  echo "== check_split_client on $gpus GPUs"
fi
# The same program runs on the cpu backend at the same time under make -j:
# its schema-coverage records stay its own.
SPMV_ITEST_RERUN=1
export SPMV_ITEST_BACKEND SPMV_ITEST_DEVICES SPMV_ITEST_RERUN
"$top_build/tests/integration/check_split_client" || exit $?
echo "== check_split_vectors: vectors split as the blocks, lists on them"
exec "$top_build/tests/integration/check_split_vectors"
