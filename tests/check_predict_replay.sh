#!/bin/sh
# check_predict_replay.sh: the predictor's work model against measurements
# on a GPU, with no GPU.  calib_points --replay fits the model of every
# calibrated configuration on a fixed table of calibration points (a live
# H200 calibration, tests/data/replay) and predicts the 55 generated and
# real matrices of an evaluation whose measured times the eval table
# holds: every format's mean error must stay within 5 %.  A change to the
# features, the terms or the fit that predicts worse fails here first.
# The tables name the 45 real matrices of the larger set: without them
# (SPMV_MATRICES) the test is skipped.
top_srcdir=${SPMV_TOP_SRCDIR:-${srcdir:-.}/..}
top_builddir=${SPMV_TOP_BUILDDIR:-.}
tool=$top_builddir/tests/bench/calib_points
tables=$top_srcdir/tests/data/replay

[ -x "$tool" ] || { echo "no $tool (make bench builds it): skipped"; exit 77; }
[ -f "${SPMV_MATRICES:-}/raefsky1.mtx.gz" ] ||
  { echo "the larger matrix set is not in SPMV_MATRICES: skipped"; exit 77; }

status=0
for dt in f64 f32; do
  echo "calib-points-h200-v107-$dt against eval-h200-v107-$dt:"
  "$tool" --replay "$tables/calib-points-h200-v107-$dt.tsv.gz" \
    --measured "$tables/eval-h200-v107-$dt.tsv.gz" --bound 0.05 --l2-mib 60 ||
    { echo "$dt: a format's mean error above 5 % (or a matrix missing)"; status=1; }
done
# The in-sample view: one line per calibration point of the table (points
# of a configuration the fit left out would print none; there are none).
pts=$tables/calib-points-h200-v107-f32.tsv.gz
want=$(gzip -dc "$pts" | grep -vc '^#')
got=$("$tool" --replay "$pts" --measured "$tables/eval-h200-v107-f32.tsv.gz" \
        --l2-mib 60 --each-point | grep -c '^point')
echo "--each-point: $got lines for $want points"
[ "$got" -eq "$want" ] || { echo "--each-point: $got lines, $want points"; status=1; }
exit $status
