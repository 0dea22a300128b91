/* spmv_split_plan.c: the planner's model of a product on one device and
 * on row blocks over several, and the choice of a split that pays
 * (spmv_split.h). */
#include "config.h"

#include "spmv_split.h"

/* Microseconds to move bytes whose working set is footprint bytes. */
static double move_us(double bytes, double footprint,
                      const struct spmv_split_costs *c)
{
  double gbs = footprint <= 0.9 * (double)c->l2_bytes ? c->l2_gbs : c->dram_gbs;
  return bytes / (gbs * 1e3);
}

/* The bytes of a CSR product over rows, nnz entries and xcols of x read:
 * values and 32-bit columns, offsets, y written, x read once. */
static double csr_bytes(double rows, double nnz, double xcols, int vb)
{
  return nnz * (vb + 4) + (rows + 1) * 4 + rows * vb + xcols * vb;
}

double spmv_split_predict_one(const struct spmv_csr *A,
                              const struct spmv_split_costs *c)
{
  double b = csr_bytes((double)A->rows, (double)A->nnz, (double)A->cols,
                       c->value_bytes);
  return move_us(b, b, c) + c->launch_us;
}

double spmv_split_predict(const struct spmv_split_shape *shape, int n,
                          const struct spmv_split_costs *c)
{
  int vb = c->value_bytes;
  double worst = 0.0;

  for (int p = 0; p < n; p++) {
    const struct spmv_split_shape *s = &shape[p];
    double rows = (double)s->rows, h = (double)s->halo;
    double local = csr_bytes(rows, (double)s->local_nnz, rows, vb);
    /* The remote part reads y back to add to it, and the halo. */
    double remote = s->remote_nnz
                        ? csr_bytes(rows, (double)s->remote_nnz, h, vb) + rows * vb
                        : 0.0;
    double footprint = local + remote;
    double t_local = move_us(local, footprint, c) + c->launch_us;
    double t_remote = s->remote_nnz ? move_us(remote, footprint, c) + c->launch_us : 0.0;
    /* What others need from this block is packed too; its size is about
     * the halo's on a balanced split, which the receiver's side stands for. */
    double t_comm = h > 0 ? c->exchange_us + h * vb / (c->link_gbs * 1e3) +
                                move_us(2 * h * vb, footprint, c) + c->launch_us
                          : 0.0;
    double t = (t_local > t_comm ? t_local : t_comm) + t_remote;
    if (t > worst)
      worst = t;
  }
  return worst;
}

int spmv_split_choose(const struct spmv_csr *A, int max_blocks,
                      const struct spmv_split_costs *c, double min_gain,
                      double *gain, struct spmv_error *err)
{
  struct spmv_split_shape shape[SPMV_SPLIT_MAX];
  double one, best_gain = 1.0;
  int best = 1;

  if (gain)
    *gain = 1.0;
  if (A->rows != A->cols || max_blocks < 2)
    return 1;
  if (max_blocks > SPMV_SPLIT_MAX)
    max_blocks = SPMV_SPLIT_MAX;
  if (A->rows > 0 && max_blocks > A->rows)
    max_blocks = (int)A->rows;
  one = spmv_split_predict_one(A, c);
  for (int n = 2; n <= max_blocks; n++) {
    int rc = spmv_split_measure(A, n, shape, err);
    if (rc < 0)
      return rc;
    double g = one / spmv_split_predict(shape, n, c);
    if (g > best_gain) {
      best_gain = g;
      best = n;
    }
  }
  if (best_gain < min_gain)
    return 1;
  if (gain)
    *gain = best_gain;
  return best;
}
