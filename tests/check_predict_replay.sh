#!/bin/sh
# check_predict_replay.sh: the predictor's work model against measurements
# on the GPU, with no GPU.  calib_points --replay fits the model of every
# calibrated configuration on committed calibration points and predicts
# the 55 paper-size and real matrices of an evaluation whose measured
# times the eval tables hold:
# - the H200's calib-points-h200-v8 (kernels v8) against eval-h200-v15:
#   every format's mean error within 17 % (14.7 % at worst when committed,
#   3.4 % at best; the paper's form alone was at 17-61 %);
# - the H100's calib-points-h100-v52 (kernels v14; v15 changed only
#   csr-scalar's f64 walk, whose points it predates)
#   against eval-h100-v52, each timed on a fresh H100: within 10 %
#   (csr-scalar 9.1 % at worst when committed, the others at 4.2-7.7 %);
# - the H100's f64 calib-points-h100-v59-f64 (kernels v15, csr-scalar's
#   f64 walk in chunks) against eval-h100-v59, f64: within 10 % (csr-scalar
#   7.4 % at worst when committed in basis 7, 7.7 % in basis 6; the others
#   at 2.6-6.7 %);
# - the H100's calib-points-h100-v77 (kernels v15, the daemon's default
#   plan timed as the worker times it) against eval-h100-v77, timed on the
#   same H100 right after: within 8 % (csr-scalar 7.2 % f32 at worst, and
#   4.3 % f64 since basis 9, 6.1 % before; the others at 2.6-5.9 %); and
#   --each-point sets the fit against every one of its points;
# - the H100's f64 calib-points-h100-v81-f64 (the plan with csr-scalar's
#   mid part on the L2's cliff) against eval-h100-v80, on another H100
#   minutes before: within 6 % (ellr-t 5.6 % at worst when committed;
#   csr-scalar 5.2 % in basis 9, 6.3 % in basis 8);
# - the H100's calib-points-h100-v87 (the plan as the daemon's worker
#   times it, with the features of basis 10) against eval-h100-v86, on
#   another H100 hours before: within 8 % (csr-scalar 7.5 % f32 at worst;
#   csr-stream 4.7 % f64 and 4.6 % f32 in basis 10, 5.3 and 5.4 before).
# - the H200's calib-points-h200-v93, v94 and v95 (tables from live
#   calibrations, spmvctl calibrate --points; the L2 and threads in their
#   headers) against eval-h200-v93..v95, the evaluations of those
#   calibrations' caches minutes later: within 8 % (csr-scalar f32 at
#   worst: 7.3 and 7.9 % in basis 11, the evaluations' own figures to the
#   tenth; 7.1, 7.7 and 6.9 % in basis 12, v95's own; the others at
#   3.0-6.3 %).
# Basis 13 gives csr-stream the rounds of sums of its block of the most
# rounds (path_rounds), added to the tables of v87 and v93..v95 by
# calib_points --refeature: there csr-stream's error fell from 4.6-5.8 to
# 3.0-4.7 %.  The tables before it have no such column and fit
# csr-stream without that term or x's sectors (v8's f64 7.2 -> 12.0 %,
# the others within 0.4 points).
# - the H200's calib-points-h200-v96 and v97 (basis 13 live, path_rounds
#   in the daemon's points) against eval-h200-v96 and v97: the
#   evaluations' own figures to the tenth (csr-scalar f32 7.2 and 6.8 %
#   at worst; csr-stream 3.8-4.3 %).
# - the H200's calib-points-h200-v98 and v100, f32 only: csr-scalar's f32
#   walk of kernels 17 (whole chunks and one predicated tail; v98 from the
#   switch that tried it, v100 as landed) against eval-h200-v98 and v100:
#   within 6 % (csr-scalar 5.3 and 5.4 % in basis 14, 4.7 and 5.0 in
#   basis 15, 5.7 and 6.4 % before: block-share-h200.md; the others at
#   3.0-5.1 %).
# - the H200's calib-points-h200-v102-f32 (basis 14 live) against
#   eval-h200-v102-f32: within 5 %, the evaluation's own figures to the
#   tenth in basis 14 (hyb 4.8 % at worst, csr-scalar 4.6 %, 4.2 in
#   basis 15; block-share-h200.md).
# - the H200's calib-points-h200-v105-f32 (basis 15 live, w_block in the
#   daemon's points) against eval-h200-v105-f32: within 6 %, the
#   evaluation's own figures to the tenth (ell and hyb 5.2 % at worst,
#   csr-scalar 4.3 %).  The tables before v105 have no w_block: their
#   points are fitted at the even share and the matrices predicted at
#   their heaviest block's (csr-scalar f32 v98 4.7 %, v100 5.0, v102
#   4.2, within 0.2 points of the points refeatured).
# - the H200's calib-points-h200-v107 (basis 16 and the bootstrap trees
#   live) against eval-h200-v107, both types: within 5 %, the
#   evaluations' own figures to the tenth (csr-scalar 4.7 % at worst in
#   each).
# Basis 16 and the bootstrap trees (the mean of the tree's and its 8
# resampled trees' times but the least and the greatest): on the 13
# tables of kernels 17 (f32 v98..v106, f64 v93..v104) every format's mean
# over them fell or held, the worst format of each table 5.3 -> 4.9 %
# in the mean (6.3 -> 5.2 at worst: v95 f64's csr-scalar); v102 f32's
# hyb 4.8 -> 4.1 (bagging-h200.md).
# Basis 14 multiplies csr-scalar's throughput terms by the block share
# in fits of f32 values, from the table's SMs ("# sms:", else its
# threads over 2048): csr-scalar f32 fell on all nine f32 tables (v77
# 7.0 -> 6.8, v87 7.2 -> 6.5, v93..v97 by 0.2-0.6 points); f64 as before.
# A change to the features, the terms or the fit that predicts worse
# fails here first.
top_srcdir=${SPMV_TOP_SRCDIR:-${srcdir:-.}/..}
top_builddir=${SPMV_TOP_BUILDDIR:-.}
tool=$top_builddir/tests/bench/calib_points
results=$top_srcdir/tests/bench/results

[ -x "$tool" ] || { echo "no $tool: skipped"; exit 77; }
[ -d "${SPMV_MATRICES:-}" ] || { echo "no matrix folder (SPMV_MATRICES): skipped"; exit 77; }

# replay POINTS EVAL BOUND L2_MIB [TYPES]: one type's replay, for each
# type (f64 and f32 unless named).
replay() {
  for dt in ${5:-f64 f32}; do
    echo "$1 against $2, $dt:"
    SPMV_MATRICES=$SPMV_MATRICES "$tool" --replay "$results/$1.tsv.gz" \
      --measured "$results/$2-$dt.tsv" --bound "$3" --l2-mib "$4" ||
      { echo "$dt: a format's mean error above $3 (or a matrix missing)"; status=1; }
  done
}

status=0
replay calib-points-h200-v8 eval-h200-v15 0.17 60
replay calib-points-h100-v52 eval-h100-v52 0.10 50
replay calib-points-h100-v59-f64 eval-h100-v59 0.10 50 f64
for dt in f64 f32; do
  replay calib-points-h100-v77-$dt eval-h100-v77 0.08 50 $dt
done
replay calib-points-h100-v81-f64 eval-h100-v80 0.06 50 f64
for dt in f64 f32; do
  replay calib-points-h100-v87-$dt eval-h100-v86 0.08 50 $dt
done
for v in v93 v94 v95 v96 v97; do
  for dt in f64 f32; do
    replay calib-points-h200-$v-$dt eval-h200-$v 0.08 60 $dt
  done
done
for v in v98 v100; do
  replay calib-points-h200-$v-f32 eval-h200-$v 0.06 60 f32
done
replay calib-points-h200-v102-f32 eval-h200-v102 0.05 60 f32
replay calib-points-h200-v105-f32 eval-h200-v105 0.06 60 f32
for dt in f64 f32; do
  replay calib-points-h200-v107-$dt eval-h200-v107 0.05 60 $dt
done
# The in-sample view: a line per calibration point of the table.
pts=$results/calib-points-h100-v77-f32.tsv.gz
want=$(gzip -dc "$pts" | grep -vc '^#')
got=$(SPMV_MATRICES=$SPMV_MATRICES "$tool" --replay "$pts" \
        --measured "$results/eval-h100-v77-f32.tsv" --l2-mib 50 --each-point |
      grep -c '^point')
echo "--each-point: $got lines for $want points"
# Points of a configuration the fit left out (none in this table) print
# nothing; every other point prints one line.
[ "$got" -eq "$want" ] ||
  { echo "--each-point: $got lines, $want points"; status=1; }
exit $status
