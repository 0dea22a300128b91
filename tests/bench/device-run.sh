#!/bin/bash
# device-run.sh: one batch on a GPU machine, from the project root of a
# checkout that carries .device/ (see ../shared/device/prepare) and a
# `make dist` tarball in .device/: build, the test suite (GPU tests
# included), compute-sanitizer memcheck on the quick GPU subset, the tuner
# evaluation and bench_spmv.  The device tool brings back at most 8 files:
# the reports and tables land in $OUT, every log in $OUT/logs.tgz.
#   usage: bash tests/bench/device-run.sh [EVAL_BUDGET_S]
# Environment: CHECK_TESTS limits make check to those tests (e.g. only the
# GPU ones), CHECK_S bounds it (300 s by default); MEMCHECK_S bounds
# compute-sanitizer (0 skips it); EVAL_ARGS
# adds options to eval_tuner (budget 0 skips it); EVAL2_ARGS, when set,
# runs a second evaluation (eval2.*, gt-eval2.tsv) bounded by EVAL2_BUDGET,
# on the whole suite rather than its quick subset when EVAL2_FULL=1;
# BENCH_MATRICES names large-suite matrices for bench_spmv, whose tables
# land in $OUT/bench.tsv; BENCH_SUITES (e.g. paper,real) runs bench_spmv
# on those suites in one process, tables in $OUT/bench-suites.tsv (cut at
# BENCH_SUITES_S seconds, the rows done kept);
# BENCH_FORMATS (e.g. csr-stream,csr-vector) limits both to those formats,
# BENCH_BS (128,256 by default) to those block sizes;
# PROFILE="MATRIX:f64|f32:FORMATS ..." runs bench_spmv once per
# configuration (BS 128) under Nsight Compute, every kernel's sections and
# DRAM bytes in $OUT/profile.csv; CALIB_POINTS_S=S times the predictor's
# calibration plan with its whole work part, S seconds per value type at
# most, every point in $OUT/calib-points.tsv; SPLIT_S=S (two GPUs or more,
# issue 54) records `nvidia-smi topo -m` in $OUT/topo.txt, runs
# check_gpu_split.sh and bench_split over every GPU for S seconds at most
# (SPLIT_ARGS adds options: -g, -m, -t), its table in $OUT/split.tsv.
set -u
OUT=${OUT:-$PWD/out}
LOG=/tmp/devrun-logs
rm -rf "$LOG" && mkdir -p "$OUT" "$LOG"
budget=${1:-200}
pack() { tar czf "$OUT/logs.tgz" -C "$LOG" . 2>/dev/null; }
trap pack EXIT
. .device/env.sh
top=$PWD
cd /tmp && rm -rf spmvd-[0-9]* && tar xf "$top"/.device/spmvd-*.tar.gz && cd spmvd-[0-9]* || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$LOG/gpu.txt"
t0=$(date +%s)
( ./configure -q && make -j16 >"$LOG/build.log" 2>&1 &&
  make -j16 tests/bench/eval_tuner tests/bench/bench_spmv tests/bench/calib_points \
    tests/check_gpu_formats tests/check_gpu_device tests/bench/bench_split \
    >>"$LOG/build.log" 2>&1 ) ||
  { tail -50 "$LOG/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 ))s"

if [ "${CHECK_TESTS:-all}" != none ]; then
  t0=$(date +%s)
  timeout "${CHECK_S:-300}" make -j8 check ${CHECK_TESTS:+TESTS="$CHECK_TESTS"} >"$LOG/check.log" 2>&1
  echo "make check rc=$? in $(( $(date +%s) - t0 ))s"
  grep -E "^(PASS|FAIL|SKIP|ERROR|XFAIL)|^# " "$LOG/check.log"
  cat tests/check_gpu_formats.log tests/check_gpu_device.log tests/integration/check_gpu_service.log >"$LOG/gpu-tests.log" 2>/dev/null
  grep -E "Checks|FAIL" "$LOG/gpu-tests.log" | head -20
fi

if [ "${MEMCHECK_S:-150}" -gt 0 ]; then
  t0=$(date +%s)
  CK_FORK=no SPMV_GPU_QUICK=1 timeout "${MEMCHECK_S:-150}" compute-sanitizer --tool memcheck \
    --target-processes all --error-exitcode 9 tests/check_gpu_formats >"$LOG/memcheck.log" 2>&1
  echo "memcheck rc=$? in $(( $(date +%s) - t0 ))s"
  grep -E "ERROR SUMMARY|Checks" "$LOG/memcheck.log" | head -5
fi

if [ "${SPLIT_S:-0}" -gt 0 ]; then
  ngpu=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  nvidia-smi topo -m >"$OUT/topo.txt" 2>&1
  cat "$OUT/topo.txt"
  t0=$(date +%s)
  timeout 600 make check TESTS=tests/integration/check_gpu_split.sh >"$LOG/split-check.log" 2>&1
  echo "check_gpu_split rc=$? in $(( $(date +%s) - t0 ))s"
  grep -E "^(PASS|FAIL|SKIP)|Checks" tests/integration/check_gpu_split.log | head -5
  t0=$(date +%s)
  timeout "$SPLIT_S" tests/bench/bench_split -b cuda -k "$ngpu" -t both ${SPLIT_ARGS:-} \
    -o "$OUT/split.tsv" >"$OUT/split.txt" 2>"$LOG/split.err"
  echo "bench_split -k $ngpu rc=$? in $(( $(date +%s) - t0 ))s"
  cat "$OUT/split.txt"
fi

if [ "${CALIB_POINTS_S:-0}" -gt 0 ]; then
  t0=$(date +%s)
  timeout $((2 * CALIB_POINTS_S + 120)) tests/bench/calib_points --points --dtype both \
    --work-nnz 800000000 --budget "$CALIB_POINTS_S" >"$OUT/calib-points.tsv" 2>"$LOG/calib-points.err"
  echo "calib_points rc=$? in $(( $(date +%s) - t0 ))s"
  cat "$LOG/calib-points.err"
fi

# eval NAME BUDGET ARGS...: one evaluation, its report and tables to $OUT.
eval_run() {
  local name=$1 b=$2 q=--quick
  shift 2
  [ "$name" = eval2 ] && [ "${EVAL2_FULL:-0}" = 1 ] && q=
  t0=$(date +%s)
  timeout $((b + 90)) tests/bench/eval_tuner --backend cuda $q --budget "$b" \
    --deadline $((b + 60)) "$@" --tsv "$OUT/$name.tsv" --gt-tsv "$OUT/gt-$name.tsv" \
    >"$OUT/$name.md" 2>"$LOG/$name.err"
  echo "$name rc=$? in $(( $(date +%s) - t0 ))s"
  sed -n '/targets (issue 5)/,/^### .*strategies/p' "$OUT/$name.md"
}
[ "$budget" -gt 0 ] && eval_run eval "$budget" ${EVAL_ARGS:-}
[ -n "${EVAL2_ARGS:-}" ] && eval_run eval2 "${EVAL2_BUDGET:-200}" $EVAL2_ARGS

for m in ${BENCH_MATRICES:-}; do
  t0=$(date +%s)
  mkdir -p "$LOG/bench-$m"
  tests/bench/bench_spmv -s large -m "$m" -b "${BENCH_BS:-128,256}" ${BENCH_FORMATS:+-f "$BENCH_FORMATS"} -o "$LOG/bench-$m" >"$LOG/bench-$m.log" 2>&1
  echo "bench_spmv $m rc=$? in $(( $(date +%s) - t0 ))s"
  grep -E "^$m " "$LOG/bench-$m.log"
  cat "$LOG/bench-$m/bench_full.tsv" >>"$OUT/bench.tsv"
done

for p in ${PROFILE:-}; do
  IFS=: read -r m dt f <<<"$p"
  t0=$(date +%s)
  mkdir -p "$LOG/prof-$m-$dt"
  timeout "${PROFILE_S:-120}" ncu --clock-control none --cache-control all \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section LaunchStats \
    --launch-count "${PROFILE_N:-100}" --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    -f -o "$LOG/prof-$m-$dt" tests/bench/bench_spmv -s large -m "$m" -t "$dt" -r 1 -b 128 \
    -f "$f" -o "$LOG/prof-$m-$dt" >"$LOG/prof-$m-$dt.log" 2>&1
  echo "profile $m $dt rc=$? in $(( $(date +%s) - t0 ))s"
  ncu --import "$LOG/prof-$m-$dt.ncu-rep" --csv --page details >>"$OUT/profile.csv" 2>>"$LOG/prof-$m-$dt.log"
done

if [ -n "${BENCH_SUITES:-}" ]; then
  t0=$(date +%s)
  mkdir -p "$LOG/bench-suites"
  timeout "${BENCH_SUITES_S:-3600}" tests/bench/bench_spmv -s "$BENCH_SUITES" -b "${BENCH_BS:-128,256}" \
    ${BENCH_FORMATS:+-f "$BENCH_FORMATS"} -o "$LOG/bench-suites" >"$LOG/bench-suites.log" 2>&1
  echo "bench_spmv $BENCH_SUITES rc=$? in $(( $(date +%s) - t0 ))s"
  grep -E "geomean|worst" "$LOG/bench-suites.log" | head -12
  cp "$LOG/bench-suites/bench_full.tsv" "$OUT/bench-suites.tsv"
  cp "$LOG/bench-suites.log" "$OUT/bench-suites.log"
fi
