/*
 * calib_points.c: the predictor's raw material as tables, for studying its
 * model off the device (a benchmark tool, never in make check).
 *
 *   calib_points --points [--dtype f64|f32|both] [--work-nnz N] [--mid-nnz N]
 *                [--budget S] [--worker]
 *     runs the daemon's calibration plan on the device (the cuda store of
 *     eval_tuner, or the cpu backend) and prints a line per timed point:
 *     the matrix's shape, every feature of spmvd_predict_features, the
 *     configuration and its time; --worker times each point as the
 *     daemon's worker does (load, time, unload through the backend)
 *     rather than among the store's resident layouts; --rounds R times
 *     each such load R times (2 warm-up runs, the median of 10, each
 *     time), the median in the table and every round, in the order
 *     timed, in FILE;
 *   calib_points --features [--suite S] [--only N] [--dtype ...]
 *     prints the same features and the CSR footprint in bytes for the
 *     benchmark suite's matrices (no device), to set beside eval_tuner's
 *     measured times;
 *   calib_points --twins [--suite S] [--only N] [--dtype ...] [--max-nnz N]
 *     times real matrices beside their permuted and generated twins
 *     (run_twins says how; matrices under N entries, 1M by default), to
 *     tell the calibration's matrices from real ones;
 *   calib_points --replay POINTS --measured EVAL_TSV [--bound B] [--l2-mib M]
 *                [--each] [--each-point] [--refeature FILE [--rewrite OUT]]
 *     no device: fits the work model of every configuration in a
 *     --points table (plain or gzip), predicts each matrix of an
 *     eval_tuner --tsv table (any part of the suite, built here) and
 *     prints the mean error per format against the table's measured
 *     times, and the error of the same model fitted to those matrices
 *     themselves (the best its terms allow); exits 1 when a format's mean
 *     error exceeds B (0.2).  M is the L2 of the device the points were
 *     timed on (its DRAM term).  --each first prints a line per matrix
 *     and format: matrix, type, format, predicted and measured us, error;
 *     --each-point also a line per calibration point, the fit against its
 *     own data: type, configuration, the point's place among that
 *     configuration's lines of the table, rows, nnz, predicted and
 *     measured us, error.
 *     A table that spmvctl calibrate --points wrote names the L2 and the
 *     resident threads of its device: its L2 serves when --l2-mib is not
 *     given, its threads in place of an H100's.  --fits prints, in place of the errors against a
 *     measured table, each configuration's fit against its own points
 *     (points, work_points, work_err), as the daemon's calibration
 *     reports its fits: what it fitted on the device, replayed here.
 *     --refeature computes every feature of the plan's matrices here (an
 *     H100's or H200's plan), for tables from before a feature, and keeps
 *     them in FILE for the next replay; --rewrite OUT writes the table
 *     again there with those features (plain text).
 */

/*
 * The files: calib_points.c the options and main; calib_points_collect.c
 * --points; calib_points_features.c the features' columns and --features;
 * calib_points_twins.c --twins; calib_points_replay.c --replay (and
 * --fits, --each, --each-point); calib_points_refeat.c --refeature and
 * --rewrite.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_points_impl.h"
#include "suite.h"

int main(int argc, char **argv)
{
  static const struct option lo[] = {
    {"points", 0, 0, 'p'}, {"features", 0, 0, 'f'}, {"backend", 1, 0, 'b'},
    {"dtype", 1, 0, 't'}, {"work-nnz", 1, 0, 'w'}, {"mid-nnz", 1, 0, 'M'},
    {"budget", 1, 0, 'B'},
    {"suite", 1, 0, 's'}, {"only", 1, 0, 'o'}, {"replay", 1, 0, 'r'}, {"refeature", 1, 0, 'F'},
    {"measured", 1, 0, 'm'}, {"bound", 1, 0, 'x'}, {"l2-mib", 1, 0, 'l'},
    {"each", 0, 0, 'e'}, {"each-point", 0, 0, 'E'}, {"worker", 0, 0, 'W'},
    {"twins", 0, 0, 'T'}, {"max-nnz", 1, 0, 'N'},
    {"rounds", 1, 0, 'R'}, {"rounds-tsv", 1, 0, 'O'}, {"rewrite", 1, 0, 'Z'},
    {"fits", 0, 0, 'i'},
    {0, 0, 0, 0},
  };
#ifdef HAVE_CUDA
  const char *mode = "cuda";
#else
  const char *mode = "cpu";
#endif
  const char *only = NULL, *points = NULL, *measured = NULL, *refile = NULL;
  double bound = 0.2, l2_bytes = 0;
  int c, what = 0, dts = 2, each = 0, worker = 0, rounds = 0, fits = 0;
  const char *rounds_tsv = NULL, *rewrite_path = NULL;
  int sets = BENCH_SUITE_PAPER | BENCH_SUITE_REAL;
  int64_t work_nnz = 0, mid_nnz = -1, twin_max = 0;
  double budget = 0;

  while ((c = getopt_long(argc, argv, "pfiTN:b:t:w:M:B:s:o:r:m:x:l:eWF:R:O:Z:", lo, NULL)) != -1) {
    switch (c) {
    case 'e': each = each > 1 ? each : 1; break;
    case 'E': each = 2; break;
    case 'W': worker = 1; break;
    case 'R': rounds = atoi(optarg); break;
    case 'O': rounds_tsv = optarg; break;
    case 'Z': rewrite_path = optarg; break;
    case 'r': what = 'r'; points = optarg; break;
    case 'm': measured = optarg; break;
    case 'i': fits = 1; break;
    case 'F': refile = optarg; break;
    case 'x': bound = strtod(optarg, NULL); break;
    case 'l': l2_bytes = strtod(optarg, NULL) * 1048576.0; break;
    case 'p': what = 'p'; break;
    case 'T': what = 'T'; break;
    case 'N': twin_max = strtoll(optarg, NULL, 10); break;
    case 'f': what = 'f'; break;
    case 'b': mode = optarg; break;
    case 'o': only = optarg; break;
    case 'w': work_nnz = strtoll(optarg, NULL, 10); break;
    case 'M': mid_nnz = strtoll(optarg, NULL, 10); break;
    case 'B': budget = strtod(optarg, NULL); break;
    case 't':
      dts = strcmp(optarg, "f32") == 0 ? 1 : strcmp(optarg, "both") == 0 ? 3 : 2;
      break;
    case 's':
      sets = (strstr(optarg, "large") ? BENCH_SUITE_LARGE : 0) |
             (strstr(optarg, "paper") ? BENCH_SUITE_PAPER : 0) |
             (strstr(optarg, "real") ? BENCH_SUITE_REAL : 0);
      break;
    default:
      fprintf(stderr, "usage: calib_points --points [--backend cuda|cpu] "
                      "[--dtype f64|f32|both] [--work-nnz N] [--mid-nnz N] "
                      "[--budget S] [--worker [--rounds R --rounds-tsv FILE]]\n"
                      "       calib_points --features [--suite S] [--only N] "
                      "[--dtype ...]\n"
                      "       calib_points --twins [--suite S] [--only N] "
                      "[--dtype ...] [--max-nnz N]\n"
                      "       calib_points --replay POINTS --measured EVAL_TSV "
                      "[--bound B] [--l2-mib M] [--each] [--each-point]\n"
                      "       calib_points --replay POINTS --fits [--l2-mib M]\n"
                      "                    [--refeature FILE [--rewrite OUT]]\n");
      return 2;
    }
  }
  if (what == 'p')
    return calib_points_run_points(mode, dts, work_nnz, mid_nnz, budget, worker, rounds, rounds_tsv);
  if (what == 'f')
    return calib_points_run_features(sets, only, dts);
  if (what == 'T')
    return calib_points_run_twins(mode, sets, only, dts, twin_max > 0 ? twin_max : 1000000);
  if (what == 'r' && refile != NULL && calib_points_refeat_load(refile, l2_bytes) != 0)
    return 1;
  if (what == 'r' && rewrite_path != NULL) {
    if (refile == NULL) {
      fprintf(stderr, "calib_points: --rewrite needs --refeature\n");
      return 2;
    }
    if ((calib_points_rewrite = fopen(rewrite_path, "w")) == NULL) {
      perror(rewrite_path);
      return 1;
    }
    fprintf(calib_points_rewrite, "# %s, its features computed again (calib_points "
                     "--refeature)\n# dtype\tmatrix\twork\tdist\tcv\tplace\t"
                     "strips\tp\t", points);
    calib_points_print_feat_header(calib_points_rewrite);
    fprintf(calib_points_rewrite, "\tconfig\tus\n");
  }
  if (what == 'r' && (measured != NULL || fits)) {
    int rc = calib_points_run_replay(points, fits ? NULL : measured, bound, l2_bytes, each);

    if (calib_points_rewrite != NULL && fclose(calib_points_rewrite) != 0) {
      perror(rewrite_path);
      return 1;
    }
    return rc;
  }
  fprintf(stderr, "calib_points: --points, --features or --replay with "
                  "--measured or --fits\n");
  return 2;
}
