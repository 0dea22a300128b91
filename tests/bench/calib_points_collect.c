/* calib_points_collect.c: calib_points --points: the daemon's calibration
 * plan run on the device, a line per timed point (its matrix's shape, its
 * features, the configuration and its time). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "calib_points_impl.h"
#include "eval_store.h"
#include "spmv_profile.h"
#include "spmvd_predict.h"
#include "bench_clock.h"

struct ctx {
  struct eval_store *s;
  int matrix;
  struct spmvd_pfeat f;
  struct spmvd_calib_plan *plan;
  size_t next;               /* the plan point being timed */
  double t0, budget;
  int stopped;
  int rounds;                /* --rounds: each round of a load kept */
  FILE *rfile;               /* where they go */
};

/* The calibration's time callback: features once per matrix, a line per
 * point.  Past the budget every point is skipped (not timed). */
static int point_time(void *vctx, const struct spmv_csr *A, enum spmv_dtype dt,
                      const struct spmv_config *cfg, double *us,
                      struct spmv_error *err)
{
  struct ctx *c = vctx;
  /* The point is found from its configuration, not counted: the run
   * skips the points that spmvd_calib_applies() refuses without a call. */
  const struct spmvd_calib_point *pt = spmvd_calib_point_of(c->plan, cfg);
  struct spmv_profile prof;
  char text[64];
  int rc;

  if (pt == NULL)
    return spmv_error_set(err, SPMV_EINVAL,
                          "calib_points: a configuration outside the plan");
  c->next = (size_t)(pt - c->plan->pt);
  if (c->budget > 0 && bench_now_s() - c->t0 > c->budget) {
    /* Past the budget: the plan ends here (the run reads n as it goes, so
     * it generates no further matrix), and the store lets go of A, which
     * the run frees next, its prefetch stopped. */
    c->stopped = 1;
    c->plan->n = c->next;
    eval_store_matrix(c->s, NULL, dt, NULL);
    return spmv_error_set(err, SPMV_EINVAL, "past the budget");
  }
  /* Features once per plan matrix (a freed matrix's address may be
   * reused by the next one, so the pointer cannot tell them apart). */
  if (pt->matrix != c->matrix) {
    if (spmv_profile_compute(A, &prof, err) != 0)
      return err->code;
    spmvd_predict_features(A, &prof, dt, &c->f);
    c->matrix = pt->matrix;
  }
  spmv_config_format(cfg, text, sizeof text);
  if (c->rounds > 1) {
    double each[9];

    rc = eval_store_worker_time(c->s, A, dt, cfg, c->rounds, each, us, err);
    if (rc == 0) {
      fprintf(c->rfile, "%s\t%d\t%.0f\t%.0f\t%s", spmv_dtype_name(dt),
              pt->matrix, c->f.rows, c->f.nnz, text);
      for (int k = 0; k < c->rounds; k++)
        fprintf(c->rfile, "\t%.4f", each[k]);
      fprintf(c->rfile, "\n");
    }
  } else {
    rc = eval_store_calib_time(c->s, A, dt, cfg, us, err);
  }
  printf("%s\t%d\t%d\t%d\t%.3f\t%d\t%g\t%d\t", spmv_dtype_name(dt), pt->matrix,
         pt->work, (int)pt->dist, pt->cv, (int)pt->place, pt->strips, pt->p);
  calib_points_print_feat(stdout, &c->f);
  printf("\t%s\t%.4f\n", text, rc == 0 ? *us : -1.0);
  fflush(stdout);
  return rc;
}

int calib_points_run_points(const char *mode, int dts, int64_t work_nnz,
                            int64_t mid_nnz, double budget, int worker, int rounds,
                            const char *rounds_tsv)
{
  struct spmvd_calib_ops ops = { point_time, NULL };
  struct spmvd_calib_params prm;
  struct spmvd_calib_plan *plan = NULL;
  struct spmv_error e;
  struct ctx c;
  int d, rc = 0;

  memset(&c, 0, sizeof c);
  spmv_error_clear(&e);
  if (rounds > 1 &&
      (rounds > SPMVD_CALIB_MAX_ROUNDS || !worker || rounds_tsv == NULL)) {
    fprintf(stderr, "calib_points: --rounds takes 2 to %d, with --worker and "
                    "--rounds-tsv\n", SPMVD_CALIB_MAX_ROUNDS);
    return 2;
  }
  if (rounds > 1 && (c.rfile = fopen(rounds_tsv, "w")) == NULL) {
    perror(rounds_tsv);
    return 1;
  }
  c.rounds = rounds;
  if (eval_store_open(mode, &c.s, &e) != 0) {
    fprintf(stderr, "calib_points: %s\n", e.msg);
    if (c.rfile)
      fclose(c.rfile);
    return 1;
  }
  eval_store_calib_direct(c.s, worker);
  if (c.rfile)
    fprintf(c.rfile, "# dtype\tmatrix\trows\tnnz\tconfig\teach round's us, "
                     "in the order timed after one load\n");
  printf("# device: %s (%d SMs)\n# dtype\tmatrix\twork\tdist\tcv\tplace\tstrips\tp\t",
         eval_store_info(c.s)->name, eval_store_info(c.s)->sms);
  calib_points_print_feat_header(stdout);
  printf("\tconfig\tus\n");
  for (d = 0; d < 2 && rc == 0; d++) {
    enum spmv_dtype dt = d == 0 ? SPMV_F64 : SPMV_F32;

    if (!(dts & (d == 0 ? 2 : 1)))
      continue;
    spmvd_calib_params_default(&prm);
    if (work_nnz > 0)
      prm.work_nnz = work_nnz;
    if (mid_nnz >= 0)
      prm.mid_nnz = mid_nnz;
    if (prm.max_nnz_total < 2 * prm.work_nnz)
      prm.max_nnz_total = 2 * prm.work_nnz;
    rc = spmvd_calib_plan_new(eval_store_info(c.s), dt, &prm, &plan, &e);
    if (rc != 0)
      break;
    fprintf(stderr, "%s: %zu points, %d matrices, %lld nnz\n",
            spmv_dtype_name(dt), plan->n, plan->nmatrices,
            (long long)plan->total_nnz);
    c.plan = plan;
    c.next = 0;
    c.matrix = -1;
    c.t0 = bench_now_s();
    c.budget = budget;
    c.stopped = 0;
    eval_store_calib_plan(c.s, plan);
    rc = spmvd_calib_run(plan, &prm, &ops, &c, &e);
    eval_store_calib_plan(c.s, NULL);
    fprintf(stderr, "%s: %.1f s%s\n", spmv_dtype_name(dt), bench_now_s() - c.t0,
            c.stopped ? " (budget reached)" : "");
    plan = spmvd_calib_plan_free(plan);
    eval_store_matrix(c.s, NULL, dt, NULL);
  }
  if (rc != 0)
    fprintf(stderr, "calib_points: %s\n", e.msg);
  eval_store_close(c.s);
  if (c.rfile)
    fclose(c.rfile);
  return rc != 0;
}
