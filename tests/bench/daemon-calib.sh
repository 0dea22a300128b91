#!/bin/bash
# daemon-calib.sh: the predictor as the daemon calibrates it, judged.  From
# a built tree on a GPU machine (device-run.sh leaves one in /tmp): starts
# spmvd on a private socket and cache, runs `spmvctl calibrate` for DTYPE
# with the daemon's default time bound, stops it, then runs eval_tuner on
# the quick paper and real matrices with --calib-db on that cache, so that
# the predictor's error is the one users get.
#   usage: tests/bench/daemon-calib.sh f64|f32 OUTDIR [EVAL_BUDGET_S]
# Writes OUTDIR/calibrate-DTYPE.json (the daemon's reply), its progress
# and log, the points its fits were computed from (calib-points-DTYPE.tsv,
# for calib_points --replay) and OUTDIR/eval-calib-DTYPE.{md,tsv}.  BACKEND=cpu tries it here;
# BOUND=S passes --max-seconds S instead of the daemon's default.
# KEEP_DB=1 copies the calibrated cache to OUTDIR/cache-DTYPE.db; CALIB_DB=F
# skips the calibration and judges the one in cache F (an A/B of tuner code
# on one calibration).  After the calibration, while the daemon still runs,
# `spmvctl predict --measure` sets each prediction against the daemon's own
# timing on every real matrix ($SPMV_MATRICES): OUTDIR/measure-DTYPE/*.json
# and the per-format mean in OUTDIR/measure-DTYPE.txt (MEASURE=0 skips it).
# EVAL_ARGS adds options to eval_tuner (e.g. --gt-tsv FILE; --suite heldout
# judges the held-out suite of issue 55 instead, its quick draw).
# Where nvidia-smi runs, the GPU's SM and memory clocks, temperature and
# power are sampled every second into OUTDIR/clocks-DTYPE.csv, and each
# phase (calibrate, measure, eval) is summarised from them at the end
# (OUTDIR/clocks-DTYPE.txt): the evaluation has measured the same
# configurations 0.97-1.03x the daemon's measure minutes before
# (results/predict-drift-h100.md), at clocks that did not move (v74).
set -u
dt=$1 out=$2 budget=${3:-150}
dir=$(mktemp -d /tmp/spmvd-calib.XXXXXX)
mkdir -p "$out"
phases=$dir/phases
: >"$phases"
# phase NAME start|end: a phase's bounds, in nvidia-smi's timestamp form.
phase() { echo "$1 $2 $(date +'%Y/%m/%d %H:%M:%S')" >>"$phases"; }
sampler= pid=
# Neither the sampler nor the daemon outlives the script, timed out
# (timeout's TERM) or not.
cleanup() {
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
if [ "${BACKEND:-cuda}" != cpu ] && command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv,noheader,nounits -lms 1000 >"$out/clocks-$dt.csv" 2>/dev/null &
  sampler=$!
fi
# Per phase: samples, mean and least SM clock (MHz), mean memory clock,
# temperature (C) and power (W).
clocks_summary() {
  awk -F', ' 'NR == FNR { split($0, f, " "); t = f[3] " " f[4];
                          if (f[2] == "start") { s[f[1]] = t; order[++n] = f[1] } else e[f[1]] = t; next }
    { t = substr($1, 1, 19);  # to the second, as the bounds are
      for (i = 1; i <= n; i++) { p = order[i];
        if (t >= s[p] && (!(p in e) || t <= e[p])) {
          c[p]++; sm[p] += $2; mem[p] += $3; tc[p] += $4; w[p] += $5;
          if (!(p in lo) || $2 < lo[p]) lo[p] = $2 } } }
    END { printf "%-10s %7s %8s %8s %8s %6s %7s\n", "phase", "samples", "sm_mean", "sm_min", "mem", "temp", "power";
      for (i = 1; i <= n; i++) { p = order[i]; if (c[p] == 0) continue;
        printf "%-10s %7d %8.0f %8.0f %8.0f %6.1f %7.1f\n", p, c[p], sm[p] / c[p], lo[p],
               mem[p] / c[p], tc[p] / c[p], w[p] / c[p] } }' "$phases" "$out/clocks-$dt.csv"
}
if [ -n "${CALIB_DB:-}" ]; then
  cp "$CALIB_DB" "$dir/cache.db" || exit 1
  echo "calibration taken from $CALIB_DB"
else
  daemon/spmvd --foreground --socket "$dir/sock" --db "$dir/cache.db" \
    --log-level info 2>"$out/daemon-$dt.log" &
  pid=$!
  for _ in $(seq 100); do [ -S "$dir/sock" ] && break; sleep 0.1; done
  t0=$(date +%s)
  phase calibrate start
  client/spmvctl --socket "$dir/sock" calibrate --dtype "$dt" --json \
    --points "$out/calib-points-$dt.tsv" ${BOUND:+--max-seconds "$BOUND"} \
    >"$out/calibrate-$dt.json" 2>"$out/calibrate-$dt.progress"
  echo "spmvctl calibrate --dtype $dt rc=$? in $(( $(date +%s) - t0 ))s"
  phase calibrate end
  if [ "${MEASURE:-1}" = 1 ]; then
    t0=$(date +%s)
    mkdir -p "$out/measure-$dt"
    phase measure start
    for f in "${SPMV_MATRICES:-tests/data/matrices}"/*.mtx*; do
      client/spmvctl --socket "$dir/sock" -q predict --measure --json --dtype "$dt" "$f" \
        >"$out/measure-$dt/$(basename "$f" | sed 's/\.mtx.*//').json" 2>>"$out/measure-$dt.err"
    done
    # spmvctl's JSON has a key a line, indented 2 a level: a prediction's
    # keys (format before error) at 6, best's copy of the first at 4.
    cat "$out/measure-$dt"/*.json | awk '
      /^      "format":/ { gsub(/[",]/, "", $2); f = $2 }
      /^      "error": / { gsub(/,/, "", $2); s[f] += $2; n[f]++ }
      END { for (f in s) printf "%-14s %3d matrices  mean error %5.1f %%\n", f, n[f], 100 * s[f] / n[f] }' |
      sort >"$out/measure-$dt.txt"
    echo "predict --measure on $(ls "$out/measure-$dt" | wc -l) matrices in $(( $(date +%s) - t0 ))s:"
    cat "$out/measure-$dt.txt"
    phase measure end
  fi
  kill -TERM "$pid" && wait "$pid"
  echo "spmvd exited with $?"
  pid=
fi
[ "${KEEP_DB:-0}" = 1 ] && cp "$dir/cache.db" "$out/cache-$dt.db"
t0=$(date +%s)
phase eval start
timeout $((budget + 90)) tests/bench/eval_tuner --backend "${BACKEND:-cuda}" --quick \
  --suite paper,real --dtype "$dt" --calib-db "$dir/cache.db" \
  --budget "$budget" --deadline $((budget + 60)) --tsv "$out/eval-calib-$dt.tsv" \
  ${EVAL_ARGS:-} >"$out/eval-calib-$dt.md" 2>"$out/eval-calib-$dt.err"
echo "eval_tuner --calib-db rc=$? in $(( $(date +%s) - t0 ))s"
phase eval end
sed -n '/targets (issue 5)/,/^### .*strategies/p' "$out/eval-calib-$dt.md"
sed -n '/predictor error/,/^### .*per matrix/p' "$out/eval-calib-$dt.md"
# With EVAL_ARGS="--suite heldout": the held-out targets and parts.
sed -n '/^## .*held-out suite (issue 55)/,/^### .*leaving one family out/p' "$out/eval-calib-$dt.md"
if [ -n "$sampler" ]; then
  kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null
  sampler=
  clocks_summary >"$out/clocks-$dt.txt"
  echo "GPU clocks by phase ($out/clocks-$dt.csv):"
  cat "$out/clocks-$dt.txt"
fi
