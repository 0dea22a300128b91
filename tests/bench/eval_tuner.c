/* eval_tuner.c: how good and how cheap the tuner's choices are (issue 5):
 * exhaustive ground truth, each strategy's pick, the predictor's error and
 * the cache hit, on the benchmark suite, as a markdown report. */
#include "config.h"

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "eval_store.h"
#include "eval_tuner_impl.h"
#include "spmv_profile.h"
#include "suite.h"
#include "suite_heldout.h"
#include "bench_clock.h"

/*
 * For each value type: one calibration of the predictor on the device
 * (spmvd_calib_plan_new / spmvd_calib_run / spmvd_predict_fit).  Then for
 * each matrix of the suite, in one process:
 *  - the ground truth: every exhaustive candidate raced so that each gets
 *    a real time (2 warm-up runs, rounds of 10 until two round medians
 *    agree within 2 %, at most 4 rounds); one 10 times slower than the
 *    leader stops after its first round (its median of 10 stands: on
 *    skewed matrices such candidates take milliseconds a run); the best
 *    few and the strategies' picks are then timed again (confirm());
 *  - model, predict, trial and auto as the worker runs them
 *    (spmvd_tuner_run, default race parameters): the pick's time is looked
 *    up in the ground-truth table (timed there first when missing), its
 *    matching percentage is best / pick, its cost the decision's cost in
 *    SpMV-equivalents of the chosen kernel;
 *  - the predictor's |predicted - measured| / measured for each calibrated
 *    format, measured = the time of the configuration the fit was
 *    calibrated with, taken as the calibration took its points (through
 *    the backend, as the worker: eval_store_worker_time, the median of
 *    MEAS_ROUNDS loads, MEAS_ROUNDS_SMALL on small products); the error
 *    against the ground-truth race's time
 *    of the same configuration is reported beside it;
 *  - a cache hit of the best configuration through the backend: load
 *    (conversion and upload), the first product, as multiples of the
 *    kernel's steady time.
 * The report (stdout) starts with the device, date, versions and the
 * targets of issue 5; --tsv writes every number, a line per matrix as it
 * is done.
 */

/*
 * The files: eval_tuner.c the options, the deadline and main;
 * eval_tuner_live.c the calibration, the ground-truth race, the
 * strategies' runs and the predictor's measurements, matrix by matrix;
 * eval_tuner_confirm.c the confirm passes; eval_tuner_report.c the report
 * and the TSV; eval_tuner_heldout.c the report's held-out section;
 * eval_tuner_replay.c --replay; eval_tuner_probe.c --probe.
 */

static void usage(FILE *f)
{
  fprintf(f,
          "usage: eval_tuner [--backend cpu|cuda|ref] [--quick] [--matrices DIR]\n"
          "                  [--suite large,paper,real,heldout] [--only NAME] [--dtype f64|f32|both]\n"
          "                  [--heldout-nnz N] [--heldout-draw D] [--part fit|unseen] [--list]\n"
          "                  [--budget SECONDS] [--deadline SECONDS] [--calib-nnz N]\n"
          "                  [--max-nnz N] [--tsv FILE] [--gt-tsv FILE] [--replay TSV[,TSV]]\n"
          "  --backend   cuda when built with it, else cpu; ref: the reference layouts as a small GPU\n"
          "  --quick     the quick subset of the suite      --matrices  folder ($SPMV_MATRICES)\n"
          "  --suite     parts of the suite (large,paper,real; heldout: issue 55's held-out suite)\n"
          "  --only      names containing NAME[,NAME]\n"
          "  --heldout-nnz the held-out draw's largest usual nonzeros (4000000 with --quick,\n"
          "              else 16000000; a few matrices of each draw get 2-3 times it)\n"
          "  --heldout-draw D: 0 the suite's draw (default); D >= 1 new matrices of the same\n"
          "              families (named hoD_*), all unseen: to judge a rule written from draw 0\n"
          "  --part      the held-out part fit or unseen only\n"
          "  --list      no device: build the suite's matrices, print name, set, family, part,\n"
          "              rows, nnz, structural fingerprint and how each is made\n"
          "  --dtype     value types (f64)                  --budget    start no matrix after SECONDS\n"
          "  --deadline  at SECONDS, print the report of what is done and exit\n"
          "  --calib-nnz nonzeros of the calibration in all (the daemon's default)\n"
          "  --max-nnz   skip larger matrices               --tsv       every number, a line per matrix\n"
          "  --gt-tsv    the ground truth of every matrix, in bench_spmv's table form\n"
          "              (the exhaustive race's times, before confirm())\n"
          "  --replay    no device: replay the strategies on bench_spmv's (or --gt-tsv's)\n"
          "              tables (plain or gzipped), of the first --dtype\n"
          "  --probe     'CFG;CFG...': no evaluation; time each configuration as the race\n"
          "              does and as confirm() does, in turns (why they disagree)\n"
          "  --probe-idle MS: sleep MS ms before each of --probe's loads (an idle GPU)\n"
          "  --probe-busy MS: keep the host busy MS ms before each of them instead\n"
          "  --probe-turns N: turns over the configurations (3)\n"
          "  --probe-long N: after each load's columns, N more timings of 30 runs (0)\n"
          "  --probe-pads B,B..: each load once after each pad of B bytes held on the\n"
          "              device, every resident layout freed first (does the time move\n"
          "              with where the arrays lie?)\n"
          "  --calib-db  the daemon's cache: judge the calibration `spmvctl calibrate`\n"
          "              stored there for this device rather than calibrating here\n"
          "The markdown report goes to stdout, progress to stderr.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
  static const struct option lo[] = {
    {"backend", 1, 0, 'b'}, {"quick", 0, 0, 'q'}, {"matrices", 1, 0, 'm'},
    {"suite", 1, 0, 's'}, {"only", 1, 0, 'o'}, {"dtype", 1, 0, 't'},
    {"budget", 1, 0, 'B'}, {"calib-nnz", 1, 0, 'c'}, {"max-nnz", 1, 0, 'n'},
    {"tsv", 1, 0, 'w'}, {"deadline", 1, 0, 'D'}, {"help", 0, 0, 'h'},
    {"replay", 1, 0, 'R'}, {"gt-tsv", 1, 0, 'G'}, {"probe", 1, 0, 'P'},
    {"probe-idle", 1, 0, 'I'}, {"calib-db", 1, 0, 'C'},
    {"probe-busy", 1, 0, 'U'}, {"probe-turns", 1, 0, 'T'},
    {"probe-long", 1, 0, 'L'}, {"probe-pads", 1, 0, 'A'},
    {"heldout-nnz", 1, 0, 'H'}, {"part", 1, 0, 'p'}, {"list", 0, 0, 'l'},
    {"heldout-draw", 1, 0, 'W'}, {0, 0, 0, 0},
  };
  int c;
  char *end;

  memset(o, 0, sizeof o[0]);
#ifdef HAVE_CUDA
  o->mode = "cuda";
#else
  o->mode = "cpu";
#endif
  o->sets = BENCH_SUITE_LARGE | BENCH_SUITE_PAPER | BENCH_SUITE_REAL;
  o->dts = 2;
  o->probe_turns = 3;
  while ((c = getopt_long(argc, argv, "b:qm:s:o:t:B:D:c:n:w:hR:G:P:I:C:U:T:L:A:H:p:l", lo, NULL)) != -1) {
    switch (c) {
    case 'b': o->mode = optarg; break;
    case 'q': o->quick = 1; break;
    case 'm': o->dir = optarg; break;
    case 'o': o->only = optarg; break;
    case 'w': o->tsv = optarg; break;
    case 'R': o->replay = optarg; break;
    case 'G': o->gt_tsv = optarg; break;
    case 'P': o->probe = optarg; break;
    case 'I': o->probe_idle_ms = atoi(optarg); break;
    case 'U': o->probe_busy_ms = atoi(optarg); break;
    case 'T':
      o->probe_turns = atoi(optarg);
      if (o->probe_turns < 1) {
        fprintf(stderr, "eval_tuner: --probe-turns %s: at least 1\n", optarg);
        return -1;
      }
      break;
    case 'L':
      o->probe_long = atoi(optarg);
      if (o->probe_long < 0) {
        fprintf(stderr, "eval_tuner: --probe-long %s: not negative\n", optarg);
        return -1;
      }
      break;
    case 'A': o->probe_pads = optarg; break;
    case 'C': o->calib_db = optarg; break;
    case 'l': o->list = 1; break;
    case 'W': {
      long v = strtol(optarg, &end, 10);
      if (*end != '\0' || v < 0 || v > 999) {
        fprintf(stderr, "eval_tuner: --heldout-draw %s: expected a draw number, 0 to 999\n",
                optarg);
        return -1;
      }
      o->heldout_draw = (int)v;
      break;
    }
    case 'p':
      o->part = bench_heldout_part_parse(optarg);
      if (o->part == BENCH_HELDOUT_NONE) {
        fprintf(stderr, "eval_tuner: --part %s: expected fit or unseen\n", optarg);
        return -1;
      }
      break;
    case 's':
      o->sets = (strstr(optarg, "large") ? BENCH_SUITE_LARGE : 0) |
                (strstr(optarg, "paper") ? BENCH_SUITE_PAPER : 0) |
                (strstr(optarg, "real") ? BENCH_SUITE_REAL : 0) |
                (strstr(optarg, "heldout") ? BENCH_SUITE_HELDOUT : 0);
      if (o->sets == 0) {
        fprintf(stderr, "eval_tuner: --suite %s names no part (large, paper, real, heldout)\n",
                optarg);
        return -1;
      }
      break;
    case 't':
      if (strcmp(optarg, "f64") == 0) o->dts = 2;
      else if (strcmp(optarg, "f32") == 0) o->dts = 1;
      else if (strcmp(optarg, "both") == 0) o->dts = 3;
      else {
        fprintf(stderr, "eval_tuner: --dtype %s: expected f64, f32 or both\n", optarg);
        return -1;
      }
      break;
    case 'B':
    case 'D':
    case 'c':
    case 'H':
    case 'n': {
      double v = strtod(optarg, &end);
      if (*end != '\0' || !(v > 0)) {
        fprintf(stderr, "eval_tuner: -%c %s: expected a positive number\n", c, optarg);
        return -1;
      }
      if (c == 'B') o->budget = v;
      else if (c == 'D') o->deadline = v;
      else if (c == 'c') o->calib_nnz = (int64_t)v;
      else if (c == 'H') o->heldout_nnz = (int64_t)v;
      else o->max_nnz = (int64_t)v;
      break;
    }
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); return -1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "eval_tuner: unexpected argument '%s'\n", argv[optind]);
    return -1;
  }
  if (o->part != BENCH_HELDOUT_NONE && !(o->sets & BENCH_SUITE_HELDOUT)) {
    fprintf(stderr, "eval_tuner: --part needs the held-out suite (--suite heldout)\n");
    return -1;
  }
  return 0;
}

/* The suite of the options, held-out part kept as --part says. */
int eval_tuner_suite_init(const struct opts *o, struct bench_suite *s,
                          struct spmv_error *err)
{
  int rc = bench_suite_init_nnz(s, o->sets, o->quick, o->heldout_nnz, o->heldout_draw,
                                o->only, o->dir, err);

  if (rc == 0 && o->part != BENCH_HELDOUT_NONE)
    bench_heldout_keep_part(s, o->part);
  return rc;
}

/* --list: every matrix of the suite built, a line each; 0 or 1 when one
 * cannot be made. */
static int list_suite(const struct opts *o, const struct bench_suite *suite)
{
  struct spmv_error err;
  int rc = 0;

  if (o->sets & BENCH_SUITE_HELDOUT)
    printf("# held-out split: %s\n", BENCH_HELDOUT_SPLIT_RULE);
  printf("# matrix\tset\tfamily\tpart\trows\tnnz\trow length min/mean/max/cv\tfingerprint"
         "\tmade by\n");
  for (size_t k = 0; k < suite->n; k++) {
    const struct bench_suite_entry *e = &suite->e[k];
    struct spmv_fingerprint fp;
    struct spmv_profile prof;
    struct spmv_csr *A;
    char hex[33], how[300];

    spmv_error_clear(&err);
    if ((A = bench_suite_make(e, o->dir, &err)) == NULL ||
        spmv_profile_compute(A, &prof, &err) < 0) {
      fprintf(stderr, "eval_tuner: %s: %s\n", e->name, err.msg);
      spmv_csr_free(A);
      rc = 1;
      continue;
    }
    spmv_fingerprint_compute(A, &fp);
    spmv_fingerprint_hex(&fp, hex);
    if (e->gen[0] != '\0')
      snprintf(how, sizeof how, "%s", e->gen);
    else
      snprintf(how, sizeof how, "%s x%lld blocks %lld", e->file, (long long)e->tile_k,
               (long long)e->tile_block);
    printf("%s\t%s\t%s\t%s\t%lld\t%lld\t%lld/%.2f/%lld/%.2f\t%s\t%s\n", e->name,
           bench_suite_set_name(e->set), e->family[0] ? e->family : "-",
           bench_heldout_part_name(e->part), (long long)A->rows, (long long)A->nnz,
           (long long)prof.rl_min, prof.rl_mean, (long long)prof.rl_max, prof.rl_cv, hex, how);
    fflush(stdout);
    spmv_csr_free(A);
  }
  return rc;
}

/* Deadline watchdog: prints what is done and ends the process. */
static void *watchdog(void *arg)
{
  struct run *r = arg;
  char cur[96];

  while (bench_now_s() - r->t_start < r->o.deadline) {
    struct timespec ts = { 0, 200 * 1000 * 1000 };
    nanosleep(&ts, NULL);
  }
  pthread_mutex_lock(&r->mu);
  if (r->printed) {
    pthread_mutex_unlock(&r->mu);
    return NULL;
  }
  fprintf(stderr, "deadline of %.0f s reached during %s: reporting what is done\n",
          r->o.deadline, r->current[0] ? r->current : "the calibration");
  snprintf(cur, sizeof cur, "%s", r->current[0] ? r->current : "the calibration");
  eval_tuner_print_report(r, cur);
  _exit(r->nrec > 0 ? 0 : 1);
}

int main(int argc, char **argv)
{
  static struct run r;
  struct bench_suite suite = { NULL, 0 };
  struct spmv_error err;
  pthread_t wd;
  FILE *tsv = NULL, *gtf = NULL;
  int rc = 1;

  spmv_error_clear(&err);
  r.t_start = bench_now_s();
  pthread_mutex_init(&r.mu, NULL);
  if (parse_opts(argc, argv, &r.o) < 0)
    return 1;
  if (r.o.replay != NULL)
    return eval_tuner_replay_main(&r.o, r.o.replay);
  if (eval_tuner_suite_init(&r.o, &suite, &err) < 0) {
    fprintf(stderr, "eval_tuner: %s\n", err.msg);
    return 1;
  }
  if (r.o.list) {
    rc = list_suite(&r.o, &suite);
    bench_suite_fini(&suite);
    return rc;
  }
  if (eval_store_open(r.o.mode, &r.s, &err) < 0) {
    fprintf(stderr, "eval_tuner: backend %s: %s\n", r.o.mode, err.msg);
    rc = err.code == SPMV_ENODEV ? 77 : 1;
    goto out;
  }
  r.recs = calloc(suite.n * 2 + 1, sizeof *r.recs);
  if (r.recs == NULL) {
    fprintf(stderr, "eval_tuner: out of memory\n");
    goto out;
  }
  if (r.o.tsv != NULL) {
    tsv = fopen(r.o.tsv, "w");
    if (tsv == NULL) {
      perror(r.o.tsv);
      goto out;
    }
    fprintf(tsv, "# matrix\tset\tdtype\trows\tnnz\tcv\tbest\tbest_us\tcandidates\tgt_cost"
                 "\t{model,predict,trial,auto}: pick, pick_us, best/pick, cost, candidates, wall_ms"
                 "\tformat:predicted/measured/paper_form/race_us ...\thit:load_us/first_kernel_us/first_product_us/"
                 "product_us/kernel_us/verified/second_kernel_us/third_kernel_us"
                 "\traced_best_us:the exhaustive race's best before confirm()"
                 "\tsingle:best config/its us/auto's pick us, one product at a time"
                 "\tnoise:the best's least/most pass median us/passes (confirm())"
                 "\tfamily:held-out family (- elsewhere)\tpart:held-out part fit/unseen (-)"
                 "\tauto_race:auto's trials, config=median us, status, runs, "
                 "probe (its timed warm-up run) us\n");
  }
  if (r.o.gt_tsv != NULL) {
    gtf = fopen(r.o.gt_tsv, "w");
    if (gtf == NULL) {
      perror(r.o.gt_tsv);
      goto out;
    }
    fprintf(gtf, "# ground truth of eval_tuner on %s (backend time: median of back-to-back "
                 "runs, x resident; the exhaustive race's, before confirm())\n"
                 "matrix\tdtype\tconfig\tstatus\tus\truns\n",
            eval_store_info(r.s)->name);
  }
  if (r.o.probe != NULL) {
    rc = eval_tuner_probe_main(&r.o, r.s, &suite);
    goto out;
  }
  if (r.o.deadline > 0 && pthread_create(&wd, NULL, watchdog, &r) == 0)
    pthread_detach(wd);
  for (int dti = 2; dti >= 1; dti--)
    if (r.o.dts & dti)
      eval_tuner_run_dtype(&r, &suite, dti, tsv, gtf);
  pthread_mutex_lock(&r.mu);
  eval_tuner_print_report(&r, NULL);
  pthread_mutex_unlock(&r.mu);
  rc = r.nrec > 0 ? 0 : 1;
out:
  if (tsv)
    fclose(tsv);
  if (gtf)
    fclose(gtf);
  free(r.recs);
  eval_store_close(r.s);
  bench_suite_fini(&suite);
  return rc;
}
