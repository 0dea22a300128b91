#!/bin/sh
# check_predict_replay.sh: the predictor's work model against the H200's
# measurements, with no GPU.  calib_points --replay fits the model of every
# calibrated configuration on the committed calibration points
# (calib-points-h200-v8.tsv.gz: synthetic matrices only, kernels v8) and
# predicts the 55 paper-size and real matrices of the v15 evaluation,
# whose measured times the eval tables hold; every format's mean error
# must stay within 17 % (14.7 % at worst when committed, 3.4 % at best;
# the paper's form alone was at 17-61 %).  A change to the features, the
# terms or the fit that predicts worse fails here first.
top_srcdir=${SPMV_TOP_SRCDIR:-${srcdir:-.}/..}
top_builddir=${SPMV_TOP_BUILDDIR:-.}
tool=$top_builddir/tests/bench/calib_points
results=$top_srcdir/tests/bench/results

[ -x "$tool" ] || { echo "no $tool: skipped"; exit 77; }
[ -d "${SPMV_MATRICES:-}" ] || { echo "no matrix folder (SPMV_MATRICES): skipped"; exit 77; }

status=0
for dt in f64 f32; do
  echo "$dt:"
  SPMV_MATRICES=$SPMV_MATRICES "$tool" --replay "$results/calib-points-h200-v8.tsv.gz" \
    --measured "$results/eval-h200-v15-$dt.tsv" --bound 0.17 --l2-mib 60 ||
    { echo "$dt: a format's mean error above 17 % (or a matrix missing)"; status=1; }
done
exit $status
