#!/bin/bash
# device-run.sh: one batch on a GPU machine, from the project root of a
# checkout that carries .device/ (see ../shared/device/prepare) and a
# `make dist` tarball in .device/: build, the whole test suite (GPU tests
# included), compute-sanitizer memcheck on the quick GPU subset, and the
# tuner evaluation.  Logs and tables go to $OUT.
#   usage: bash tests/bench/device-run.sh [EVAL_BUDGET_S]
# Environment: CHECK_TESTS limits make check to those tests (e.g. only the
# GPU ones); MEMCHECK_S bounds compute-sanitizer (0 skips it); EVAL_ARGS
# adds options to eval_tuner.
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
budget=${1:-200}
. .device/env.sh
top=$PWD
cd /tmp && rm -rf spmvd-[0-9]* && tar xf "$top"/.device/spmvd-*.tar.gz && cd spmvd-[0-9]* || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
t0=$(date +%s)
( ./configure -q && make -j16 >"$OUT/build.log" 2>&1 && make -j16 tests/bench/eval_tuner >>"$OUT/build.log" 2>&1 ) ||
  { tail -50 "$OUT/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 ))s"

t0=$(date +%s)
timeout 300 make -j8 check ${CHECK_TESTS:+TESTS="$CHECK_TESTS"} >"$OUT/check.log" 2>&1
echo "make check rc=$? in $(( $(date +%s) - t0 ))s"
grep -E "^(PASS|FAIL|SKIP|ERROR|XFAIL)|^# " "$OUT/check.log"
cat tests/check_gpu_formats.log tests/integration/check_gpu_service.log >"$OUT/gpu-tests.log" 2>/dev/null
grep -E "Checks|FAIL" "$OUT/gpu-tests.log" | head -20

t0=$(date +%s)
[ "${MEMCHECK_S:-150}" -gt 0 ] && CK_FORK=no SPMV_GPU_QUICK=1 timeout "${MEMCHECK_S:-150}" compute-sanitizer --tool memcheck \
  --target-processes all --error-exitcode 9 tests/check_gpu_formats >"$OUT/memcheck.log" 2>&1
echo "memcheck rc=$? in $(( $(date +%s) - t0 ))s"
grep -E "ERROR SUMMARY|Checks" "$OUT/memcheck.log" | head -5

t0=$(date +%s)
timeout $((budget + 90)) tests/bench/eval_tuner --backend cuda --quick --budget "$budget" \
  --deadline $((budget + 60)) ${EVAL_ARGS:-} --tsv "$OUT/eval.tsv" >"$OUT/eval.md" 2>"$OUT/eval.err"
echo "eval rc=$? in $(( $(date +%s) - t0 ))s"
head -60 "$OUT/eval.md"
