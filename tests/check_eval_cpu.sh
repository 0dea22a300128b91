#!/bin/sh
# check_eval_cpu.sh: the tuner's evaluation and its probe run whole on the
# cpu backend, on two small matrices of tests/data/matrices (or of
# SPMV_MATRICES): the report's sections, the TSV's fields, and the probe's
# options.
top_builddir=${SPMV_TOP_BUILDDIR:-.}
eval_tuner=$top_builddir/tests/bench/eval_tuner

[ -x "$eval_tuner" ] || { echo "no $eval_tuner (make bench builds it): skipped"; exit 77; }
[ -d "${SPMV_MATRICES:-}" ] || { echo "no matrix folder (SPMV_MATRICES): skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_eval_cpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
# A whole evaluation on the cpu backend, two small matrices and a small
# calibration: the targets, the reading one product at a time and the
# predictor's table in the report, and in the TSV each matrix's race and
# single-product times.
"$eval_tuner" --backend cpu --matrices "$SPMV_MATRICES" --suite real --only karate,lp_afiro \
  --dtype f32 --calib-nnz 200000 --tsv "$tmp/eval.tsv" >"$tmp/eval.md" 2>"$tmp/eval.err" ||
  { echo "eval_tuner on the cpu backend failed"; cat "$tmp/eval.err"; status=1; }
for want in "12 interleaved passes" "| auto, every matrix |" \
            "One product at a time (each of 30 timed alone" \
            "| work model vs the race's time |"; do
  grep -qF "$want" "$tmp/eval.md" || { echo "eval_tuner's report lacks '$want'"; status=1; }
done
awk -F'\t' '/^#/ { next }
             { n++; raced = single = 0
               for (i = 1; i <= NF; i++) {
                 if ($i ~ /^raced_best_us:/) raced = substr($i, 15) + 0 > 0
                 if ($i ~ /^single:/) { k = split($i, t, "/"); single = t[k - 1] > 0 && t[k] > 0 } }
               if (!raced || !single) bad = 1 }
             END { exit bad || n != 2 }' "$tmp/eval.tsv" ||
  { echo "eval_tuner --tsv: not two matrices with race and single-product times"
    cat "$tmp/eval.tsv"; status=1; }
# eval_tuner --probe on the cpu backend: each configuration's load is timed
# once per --probe-pads size (a column for it), with --probe-long's extra
# timings after the nine of the plan; a pad that is not a byte count is
# refused by name.
"$eval_tuner" --backend cpu --matrices "$SPMV_MATRICES" --suite real --only karate \
  --probe "csr-vector bs=128 tpr=16;csr-scalar bs=128" --probe-turns 1 \
  --probe-pads 0,4096 --probe-long 2 >"$tmp/probe.tsv" 2>"$tmp/probe.err" ||
  { echo "eval_tuner --probe failed"; cat "$tmp/probe.err"; status=1; }
awk -F'\t' 'NR == 1 { if ($5 != "pad" || NF != 14) bad = 1; next }
             { n++; if (NF != 16 || ($5 != 0 && $5 != 4096)) bad = 1
               for (i = 6; i <= NF; i++) if (!($i > 0)) bad = 1 }
             END { exit bad || n != 4 }' "$tmp/probe.tsv" ||
  { echo "eval_tuner --probe: not one row per configuration and pad with 11 times"
    cat "$tmp/probe.tsv"; status=1; }
if "$eval_tuner" --backend cpu --matrices "$SPMV_MATRICES" --suite real --only karate \
     --probe "csr-vector bs=128 tpr=16" --probe-pads 12x >/dev/null 2>"$tmp/pad.err" ||
   ! grep -q "probe-pads '12x'" "$tmp/pad.err"; then
  echo "eval_tuner --probe-pads 12x: not refused by name"; cat "$tmp/pad.err"; status=1
fi
exit $status
