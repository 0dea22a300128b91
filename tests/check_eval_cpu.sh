#!/bin/sh
# check_eval_cpu.sh: the tuner's evaluation and its probe run whole on the
# cpu backend, on two small matrices of tests/data/matrices (or of
# SPMV_MATRICES): the report's sections, the TSV's fields, and the probe's
# options; then the held-out suite of issue 55, drawn tiny: the same
# matrices on two runs (fixed seeds), a fit and an unseen part that each
# hold every family, --part keeping one of them, and a whole evaluation
# whose report has the held-out section and whose TSV names each matrix's
# family and part.  No timed assertion: the cpu backend's times say
# nothing of a GPU's.
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

# The held-out suite: the quick draw's 40 matrices, at most about 3000
# nonzeros each (a few 6000-9000): a whole evaluation of both types takes
# seconds here.
tiny="--suite heldout --quick --heldout-nnz 3000 --matrices $SPMV_MATRICES"

# Two draws give the same matrices, to the structure's fingerprint.
for k in 1 2; do
  "$eval_tuner" $tiny --list >"$tmp/list$k.tsv" 2>"$tmp/list$k.err" ||
    { echo "eval_tuner --list failed"; cat "$tmp/list$k.err"; status=1; }
done
cmp -s "$tmp/list1.tsv" "$tmp/list2.tsv" ||
  { echo "two draws of the held-out suite differ"; diff "$tmp/list1.tsv" "$tmp/list2.tsv"; status=1; }

# 40 matrices of 9 families or more, a third or so fit, and every family
# in both parts.
awk -F'\t' '/^#/ { next }
             { n++; if (!($3 in fam)) { fam[$3] = 1; nf++ }
               part[$4]++; both[$3 SUBSEP $4] = 1 }
             END { for (f in fam)
                     if (!((f SUBSEP "fit") in both) || !((f SUBSEP "unseen") in both)) {
                       print "family " f " is not in both parts"; bad = 1 }
                   if (n != 40 || nf < 9 || 4 * part["fit"] < n || 5 * part["fit"] > 2 * n ||
                       part["fit"] + part["unseen"] != n) {
                     print n " matrices, " nf " families, " part["fit"] " fit, " part["unseen"] " unseen"
                     bad = 1 }
                   exit bad }' "$tmp/list1.tsv" ||
  { echo "the held-out split is not as it should be"; status=1; }

# A later draw (--heldout-draw 1): 40 matrices of the same families, the
# same on two runs, named ho1_, every one unseen, and other matrices than
# draw 0's but where a family drawn this small has few to choose from (a
# 2x2x2 stencil, a file tiled twice): 36 of the 40 or more differ from
# every one of draw 0 in structure.  A negative draw is refused.
for k in 1 2; do
  "$eval_tuner" $tiny --heldout-draw 1 --list >"$tmp/draw1-$k.tsv" 2>"$tmp/draw1.err" ||
    { echo "eval_tuner --heldout-draw 1 --list failed"; cat "$tmp/draw1.err"; status=1; }
done
cmp -s "$tmp/draw1-1.tsv" "$tmp/draw1-2.tsv" ||
  { echo "two runs of the held-out suite's draw 1 differ"; status=1; }
awk -F'\t' 'FNR == 1 { f++ } /^#/ { next }
             f == 1 { fp[$8] = 1; fam0[$3] = 1; next }
             { n++; same += $8 in fp; if ($1 !~ /^ho1_/ || $4 != "unseen" || !($3 in fam0)) bad = 1 }
             END { exit bad || n != 40 || same > 4 }' "$tmp/list1.tsv" "$tmp/draw1-1.tsv" ||
  { echo "--heldout-draw 1: not 40 new unseen matrices of draw 0's families"
    head -5 "$tmp/draw1-1.tsv"; status=1; }
if "$eval_tuner" $tiny --heldout-draw -1 --list >/dev/null 2>"$tmp/draw.err" ||
   ! grep -q "heldout-draw -1" "$tmp/draw.err"; then
  echo "eval_tuner --heldout-draw -1: not refused"; cat "$tmp/draw.err"; status=1
fi

# --part unseen keeps the unseen matrices, every one of them; without the
# held-out suite it is refused.
"$eval_tuner" $tiny --part unseen --list >"$tmp/unseen.tsv" 2>"$tmp/unseen.err" ||
  { echo "eval_tuner --part unseen --list failed"; cat "$tmp/unseen.err"; status=1; }
awk -F'\t' '!/^#/ && $4 == "unseen"' "$tmp/list1.tsv" >"$tmp/want.tsv"
grep -v '^#' "$tmp/unseen.tsv" | cmp -s - "$tmp/want.tsv" ||
  { echo "eval_tuner --part unseen: not the unseen matrices of the draw"; status=1; }
if "$eval_tuner" --suite real --part fit --list >/dev/null 2>"$tmp/part.err" ||
   ! grep -q "needs the held-out suite" "$tmp/part.err"; then
  echo "eval_tuner --part without --suite heldout: not refused"; cat "$tmp/part.err"; status=1
fi

# The whole evaluation, both types: the held-out section of each, with its
# targets, its parts, every family left out in turn and the noise; in the
# TSV every matrix with its family, part and the best's pass medians.
"$eval_tuner" --backend cpu $tiny --dtype both --calib-nnz 200000 --tsv "$tmp/eval.tsv" \
  >"$tmp/eval.md" 2>"$tmp/eval.err" ||
  { echo "eval_tuner on the held-out suite failed"; cat "$tmp/eval.err"; status=1; }
for dt in f64 f32; do
  sed -n "/^## $dt: held-out suite (issue 55)/,/^## /p" "$tmp/eval.md" >"$tmp/section.md"
  for want in "| auto on the unseen part, geometric mean of best/pick |" \
              "| every held-out matrix: >= 93 % of the best or within 0.3 us of it |" \
              "The split: within each family" "What \"fit\" means" \
              "| unseen | " "| fit | " "| both | 40 |" \
              "### $dt: held-out, leaving one family out" \
              "### $dt: held-out per matrix, beside the ground truth's noise" \
              "The noise: the spread (most - least)"; do
    grep -qF "$want" "$tmp/section.md" || { echo "$dt: the held-out section lacks '$want'"; status=1; }
  done
  for fam in $(awk -F'\t' '!/^#/ { print $3 }' "$tmp/list1.tsv" | sort -u); do
    grep -q "^| $fam | " "$tmp/section.md" || { echo "$dt: no line for family $fam"; status=1; }
  done
done
awk -F'\t' 'NR == FNR { if (!/^#/) { fam[$1] = $3; part[$1] = $4 } next }
             /^#/ { next }
             { n++; f = p = ""; noise = 0
               for (i = 1; i <= NF; i++) {
                 if ($i ~ /^family:/) f = substr($i, 8)
                 if ($i ~ /^part:/) p = substr($i, 6)
                 if ($i ~ /^noise:/) { split(substr($i, 7), t, "/"); noise = t[3] > 0 && t[2] >= t[1] } }
               if ($2 != "heldout" || f != fam[$1] || p != part[$1] || !noise) { print; bad = 1 } }
             END { exit bad || n != 80 }' "$tmp/list1.tsv" "$tmp/eval.tsv" ||
  { echo "eval_tuner --tsv: not 80 held-out lines with their family, part and noise"; status=1; }
exit $status
