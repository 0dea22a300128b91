#!/bin/sh
# check_gpu_split.sh: the split matrices' tests (check_split_client) again
# with the daemon on the cuda backend and a worker per GPU (spmvd
# --devices all): products and every solver on blocks that live on
# different GPUs, against the same double-precision references; exits 77
# (skipped) with fewer than two GPUs.
top_build=${SPMV_TOP_BUILDDIR:-.}
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "check_gpu_split: no GPU; skipped"
  exit 77
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -lt 2 ]; then
  echo "check_gpu_split: $gpus GPU, two or more needed; skipped"
  exit 77
fi
SPMV_ITEST_BACKEND=cuda
# The same program runs on the cpu backend at the same time under make -j:
# its schema-coverage records stay its own.
SPMV_ITEST_RERUN=1
export SPMV_ITEST_BACKEND SPMV_ITEST_RERUN
echo "== check_split_client on $gpus GPUs"
exec "$top_build/tests/integration/check_split_client"
