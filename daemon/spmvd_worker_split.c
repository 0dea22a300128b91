/* spmvd_worker_split.c: one row block of a matrix split over several
 * workers (issue 54): its local and remote parts resident, and its rows of
 * a product computed from the shared host vectors, the halo gathered from
 * them (the exchange over shared memory of the cpu backend). */
#include "config.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmv_split.h"
#include "spmvd_split_shm.h"
#include "spmvd_worker_impl.h"

/* What a worker keeps of its block; owned by its wmatrix. */
struct wblock {
  int64_t r0, r1;
  int64_t nhalo;
  int32_t *halo;                /* global columns of x it reads (owned) */
  struct spmvd_bmatrix *remote; /* NULL when the block has no remote entry */
  void *gathered;               /* nhalo values of the matrix's dtype */
};

void spmvd_wk_block_free(struct worker *w, struct wblock *b)
{
  if (!b)
    return;
  if (b->remote)
    w->ops->unload(w->be, b->remote);
  free(b->halo);
  free(b->gathered);
  free(b);
}

/* Keeps block sb (its halo taken) in m: the local part as m's resident
 * configuration cfg, the remote part beside it in csr-scalar (with cfg's
 * launch), as small as it is. */
static int keep_block(struct worker *w, struct wmatrix *m,
                      struct spmv_split_block *sb,
                      const struct spmv_config *cfg, struct spmv_error *err)
{
  struct wblock *b = calloc(1, sizeof *b);
  struct spmvd_bmatrix *local = NULL;
  int rc;

  if (!b)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  b->r0 = sb->r0;
  b->r1 = sb->r1;
  b->nhalo = sb->nhalo;
  b->halo = sb->halo;
  sb->halo = NULL;
  b->gathered = malloc((size_t)(b->nhalo + 1) * spmv_dtype_size(m->dtype));
  if (!b->gathered) {
    spmvd_wk_block_free(w, b);
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  }
  if (sb->local->rows > 0 &&
      (rc = w->ops->load(w->be, sb->local, m->dtype, cfg, &local, err)) < 0) {
    spmvd_wk_block_free(w, b);
    return rc;
  }
  if (sb->remote->nnz > 0) {
    struct spmv_config scalar = *cfg;
    scalar.format = SPMV_FMT_CSR_SCALAR;
    if ((rc = w->ops->load(w->be, sb->remote, m->dtype, &scalar, &b->remote,
                           err)) < 0) {
      if (local)
        w->ops->unload(w->be, local);
      spmvd_wk_block_free(w, b);
      return rc;
    }
  }
  if (local)
    spmvd_wk_take_resident(w, m, local, cfg);
  m->block = b;
  return 0;
}

int spmvd_wk_op_adopt_block(struct worker *w, json_t *req, int *fds, int nfds,
                            json_t **rep, struct spmv_error *err)
{
  json_int_t h, rows, cols, nnz;
  int blocks, k, rc;
  const char *dts, *text;
  struct spmv_config cfg;
  enum spmv_dtype dt = SPMV_F64;
  struct spmv_split_block sb;
  struct wmatrix *m;

  if (json_unpack(req, "{sI ss sI sI sI ss si si}", "handle", &h, "dtype",
                  &dts, "rows", &rows, "cols", &cols, "nnz", &nnz, "config",
                  &text, "blocks", &blocks, "block", &k) < 0 ||
      nfds != 1 || k < 0 || k >= blocks)
    return spmv_error_set(err, SPMV_EPROTO, "bad adopt-block message");
  if ((rc = spmvd_wk_parse_dtype(dts, &dt, err)) < 0 ||
      (rc = spmv_config_parse(text, &cfg, err)) < 0)
    return rc;
  if (!(m = spmvd_wk_adopt_host(w, h, dt, rows, cols, nnz, &fds[0], err)))
    return err->code;
  /* Every worker cuts the same bounds from the same host copy, and builds
   * only its own block. */
  if ((rc = spmv_split_one(&m->A, blocks, k, &sb, err)) < 0)
    goto fail;
  rc = keep_block(w, m, &sb, &cfg, err);
  spmv_split_block_fini(&sb);
  if (rc < 0)
    goto fail;
  *rep = json_pack("{sI sI sI}", "r0", (json_int_t)m->block->r0, "r1",
                   (json_int_t)m->block->r1, "halo", (json_int_t)m->block->nhalo);
  return 0;
fail:
  spmvd_wk_drop(w, h);
  return rc;
}

/* y (this block's rows) = alpha A x + beta y, x the whole vector in the
 * matrix's type: the local part on x's own rows, then the remote part on
 * the halo gathered from x. */
static int block_multiply(struct worker *w, struct wmatrix *m, double alpha,
                          const void *x, double beta, void *y,
                          struct spmv_error *err)
{
  struct wblock *b = m->block;
  size_t es = spmv_dtype_size(m->dtype);
  int rc = 0;

  for (int64_t i = 0; i < b->nhalo; i++)
    memcpy((char *)b->gathered + (size_t)i * es,
           (const char *)x + (size_t)b->halo[i] * es, es);
  if (m->bm)
    rc = w->ops->multiply(w->be, m->bm, alpha, (const char *)x + (size_t)b->r0 * es,
                          beta, y, 1, err);
  if (rc == 0 && b->remote)
    rc = w->ops->multiply(w->be, b->remote, alpha, b->gathered, 1.0, y, 1, err);
  return rc;
}

int spmvd_wk_op_multiply_block(struct worker *w, json_t *req, int *fds,
                               int nfds, json_t **rep, struct spmv_error *err)
{
  json_int_t h;
  double alpha, beta;
  struct spmvd_shm vec;
  struct wmatrix *m;
  int rc = 0, nvec = 1;

  if (json_unpack(req, "{sI sF sF s?i}", "handle", &h, "alpha", &alpha, "beta",
                  &beta, "nvec", &nvec) < 0 || nfds != 1 || nvec < 1)
    return spmv_error_set(err, SPMV_EPROTO, "bad multiply-block message");
  int fd = fds[0];
  fds[0] = -1;
  if (!(m = spmvd_wk_find(w, h)) || !m->block) {
    close(fd);
    return spmv_error_set(err, SPMV_ENOENT, "no block of matrix %lld",
                          (long long)h);
  }
  struct wblock *b = m->block;
  size_t es = spmv_dtype_size(m->dtype);
  size_t xb = (size_t)m->A.cols * es, yb = (size_t)m->A.rows * es;
  spmvd_shm_init(&vec);
  if (spmvd_shm_map(&vec, fd, (size_t)nvec * (xb + yb), err) < 0)
    return err->code;
  /* k vectors: the k x's, then the k y's, as a batch's payload lays them. */
  for (int j = 0; j < nvec && rc == 0; j++) {
    const char *x = (const char *)vec.addr + (size_t)j * xb;
    char *y = (char *)vec.addr + (size_t)nvec * xb + (size_t)j * yb +
              (size_t)b->r0 * es;
    rc = block_multiply(w, m, alpha, x, beta, y, err);
  }
  spmvd_shm_close(&vec);
  spmvd_wk_die_if_sticky(rc);
  if (rc < 0)
    return rc;
  *rep = json_object();
  return 0;
}

/* --- CG over the blocks (solve-block) --- */

struct split_run {
  struct worker *w;             /* heartbeats while it waits and works */
  struct spmvd_split_ctl *ctl;
  int nb, k;
  unsigned seq;                 /* reductions so far */
  int stop;                     /* a block had seen cancel at the last one */
};

static int barrier(struct split_run *s)
{
  unsigned g = atomic_load(&s->ctl->gen);

  if (atomic_fetch_add(&s->ctl->count, 1) == (unsigned)s->nb - 1) {
    atomic_store(&s->ctl->count, 0);
    atomic_fetch_add(&s->ctl->gen, 1);
    return 0;
  }
  for (long spins = 0; atomic_load(&s->ctl->gen) == g; spins++) {
    if (atomic_load(&s->ctl->abort))
      return -1;
    spmvd_wk_heartbeat(s->w);  /* a slow peer is no hang of this worker */
    if (spins > 1000)
      usleep(20);
    else
      sched_yield();
  }
  return 0;
}

/* Every block's v, in block order, once all have given theirs (slots
 * alternate, so that a fast block's next value cannot overwrite one that
 * a slow block still reads); NULL when the solve was aborted. */
static const double *gather(struct split_run *s, double v)
{
  unsigned parity = s->seq++ % 2;
  double *slot = s->ctl->slot[parity];

  slot[s->k] = v;
  s->ctl->stop[parity][s->k] = atomic_load(&s->ctl->cancel) != 0;
  if (barrier(s) < 0)
    return NULL;
  s->stop = 0;
  for (int i = 0; i < s->nb; i++)
    s->stop |= s->ctl->stop[parity][i];
  return slot;
}

/* The sum of every block's v, in block order; -1 when aborted. */
static int allreduce(struct split_run *s, double v, double *sum)
{
  const double *all = gather(s, v);

  if (!all)
    return -1;
  *sum = 0;
  for (int i = 0; i < s->nb; i++)
    *sum += all[i];
  return 0;
}

/* The least of every block's v; -1 when aborted. */
static int allmin(struct split_run *s, double v, double *min)
{
  const double *all = gather(s, v);

  if (!all)
    return -1;
  *min = all[0];
  for (int i = 1; i < s->nb; i++)
    *min = all[i] < *min ? all[i] : *min;
  return 0;
}

/* inv[0 .. r1 - r0) = 1 / A's diagonal on rows r0 .. r1; returns the first
 * of those rows whose diagonal entry is zero, missing or not finite, or
 * -1 when there is none. */
static int64_t inverse_diagonal(const struct spmv_csr *A, int64_t r0,
                                int64_t r1, double *inv)
{
  int64_t bad = -1;

  for (int64_t i = r0; i < r1; i++) {
    double a = 0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
      if (A->col_idx[k] == i)
        a += ((const double *)A->val)[k];
    if ((a == 0 || !isfinite(a)) && bad < 0)
      bad = i;
    inv[i - r0] = 1.0 / a;
  }
  return bad;
}

static double dot(const double *a, const double *b, int64_t n)
{
  double s = 0;
  for (int64_t i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

/*
 * solve-block {handle, blocks, block, rtol, atol, maxiter, method} fds
 * [shared]: this block's part of CG (method "cg") or CG preconditioned by
 * A's diagonal ("pcg-jacobi") on the split matrix, x (the shared one,
 * holding x0) updated in place.  Every block returns the same outcome.
 */
int spmvd_wk_op_solve_block(struct worker *w, json_t *req, int *fds, int nfds,
                            json_t **rep, struct spmv_error *err)
{
  static const char *const reasons[] = {"converged-rtol", "converged-atol",
                                        "maxiter", "indefinite", "breakdown",
                                        "cancelled"};
  json_int_t h, maxiter;
  double rtol, atol;
  const char *method = "cg";
  int nb, k, rc = 0, why = 2;
  struct spmvd_shm shm;
  struct wmatrix *m;

  if (json_unpack(req, "{sI si si sF sF sI s?s}", "handle", &h, "blocks", &nb,
                  "block", &k, "rtol", &rtol, "atol", &atol, "maxiter",
                  &maxiter, "method", &method) < 0 || nfds != 1 || nb < 2 ||
      nb > SPMV_SPLIT_MAX || k < 0 || k >= nb ||
      (strcmp(method, "cg") != 0 && strcmp(method, "pcg-jacobi") != 0))
    return spmv_error_set(err, SPMV_EPROTO, "bad solve-block message");
  int jacobi = strcmp(method, "pcg-jacobi") == 0;
  int fd = fds[0];
  fds[0] = -1;
  if (!(m = spmvd_wk_find(w, h)) || !m->block || m->dtype != SPMV_F64) {
    close(fd);
    return spmv_error_set(err, SPMV_ENOENT, "no f64 block of matrix %lld",
                          (long long)h);
  }
  int64_t n = m->A.rows, r0 = m->block->r0, nl = m->block->r1 - r0;
  spmvd_shm_init(&shm);
  if (spmvd_shm_map(&shm, fd, SPMVD_SPLIT_CTL_BYTES + 3 * (size_t)n * sizeof(double),
                    err) < 0)
    return err->code;
  struct split_run s = {w, shm.addr, nb, k, 0, 0};
  const double *b = (const double *)((char *)shm.addr + SPMVD_SPLIT_CTL_BYTES);
  double *x = (double *)b + n, *p = x + n;
  double *r = malloc(sizeof *r * (size_t)(nl + 1));
  double *q = malloc(sizeof *q * (size_t)(nl + 1));
  /* z = D^-1 r with jacobi, else z is r. */
  double *inv = jacobi ? malloc(sizeof *inv * (size_t)(nl + 1)) : NULL;
  double *z = jacobi ? malloc(sizeof *z * (size_t)(nl + 1)) : r;
  double bb = 0, rr = 0, rz = 0, pq = 0, res2 = 0, t0 = spmvd_wk_now_ms();
  long long it = 0;

  if (!r || !q || !z || (jacobi && !inv)) {
    rc = spmv_error_set(err, SPMV_ENOMEM, "out of memory");
    atomic_store(&s.ctl->abort, 1);
    goto out;
  }
  if (jacobi) {
    /* Every block learns the first bad row of all, and names it. */
    int64_t bad = inverse_diagonal(&m->A, r0, r0 + nl, inv);
    double first;
    if (allmin(&s, bad >= 0 ? (double)bad : HUGE_VAL, &first) < 0)
      goto aborted;
    if (first < HUGE_VAL) {
      rc = spmv_error_set(err, SPMV_EINVAL, "pcg-jacobi: row %lld has a zero "
                          "or missing diagonal entry", (long long)first);
      goto out;
    }
  }
  /* r = b - A x0, p = z: every block's x0 is in place before the first
   * barrier, its p before the loop's. */
  if (barrier(&s) < 0 || (rc = block_multiply(w, m, 1.0, x, 0.0, q, err)) < 0)
    goto aborted;
  for (int64_t i = 0; i < nl; i++) {
    r[i] = b[r0 + i] - q[i];
    if (jacobi)
      z[i] = inv[i] * r[i];
    p[r0 + i] = z[i];
  }
  if (allreduce(&s, dot(b + r0, b + r0, nl), &bb) < 0 ||
      allreduce(&s, dot(r, r, nl), &rr) < 0 ||
      (jacobi && allreduce(&s, dot(r, z, nl), &rz) < 0))
    goto aborted;
  if (!jacobi)
    rz = rr;
  double tol = rtol * sqrt(bb) > atol ? rtol * sqrt(bb) : atol;
  why = sqrt(rr) <= tol ? (tol == atol && atol > 0 ? 1 : 0) : 2;
  while (why == 2 && it < maxiter) {
    spmvd_wk_heartbeat(w);
    /* Every p is written: the halo of p is read after this barrier, and
     * p is written again only after the next reduction's. */
    if (barrier(&s) < 0 || (rc = block_multiply(w, m, 1.0, p, 0.0, q, err)) < 0 ||
        allreduce(&s, dot(p + r0, q, nl), &pq) < 0)
      goto aborted;
    if (!(pq > 0)) {
      why = isfinite(pq) && pq <= 0 ? 3 : 4;
      break;
    }
    double alpha = rz / pq, rr1, rz1;
    for (int64_t i = 0; i < nl; i++) {
      x[r0 + i] += alpha * p[r0 + i];
      r[i] -= alpha * q[i];
    }
    if (allreduce(&s, dot(r, r, nl), &rr1) < 0)
      goto aborted;
    it++;
    if (sqrt(rr1) <= tol) {
      why = rtol * sqrt(bb) > atol ? 0 : 1;
      break;
    }
    if (s.stop) {
      why = 5;  /* every block saw the same stop flags: all stop here */
      break;
    }
    if (jacobi) {
      for (int64_t i = 0; i < nl; i++)
        z[i] = inv[i] * r[i];
      if (allreduce(&s, dot(r, z, nl), &rz1) < 0)
        goto aborted;
    } else {
      rz1 = rr1;
    }
    double beta = rz1 / rz;
    rz = rz1;
    for (int64_t i = 0; i < nl; i++)
      p[r0 + i] = z[i] + beta * p[r0 + i];
  }
  /* The true residual ||b - A x||, once every block's x is in place. */
  if (barrier(&s) < 0 || (rc = block_multiply(w, m, 1.0, x, 0.0, q, err)) < 0)
    goto aborted;
  for (int64_t i = 0; i < nl; i++)
    q[i] = b[r0 + i] - q[i];
  if (allreduce(&s, dot(q, q, nl), &res2) < 0)
    goto aborted;
  double secs = (spmvd_wk_now_ms() - t0) / 1e3, bn = sqrt(bb), res = sqrt(res2);
  *rep = json_pack("{ss sI sb ss so so so sf sf}", "method", method,
                   "iterations", (json_int_t)it,
                   "converged", why <= 1, "reason", reasons[why], "residual",
                   spmvd_ipc_real(res), "relative_residual",
                   spmvd_ipc_real(bn > 0 ? res / bn : res), "rhs_norm",
                   spmvd_ipc_real(bn), "seconds", secs, "us_per_iteration",
                   it > 0 ? secs * 1e6 / (double)it : 0.0);
  goto out;
aborted:
  if (rc == 0)
    rc = spmv_error_set(err, SPMV_EWORKER, "the split solve was aborted: the "
                        "worker of another block died or failed");
  else
    atomic_store(&s.ctl->abort, 1);  /* this block failed: free the others */
out:
  if (z != r)
    free(z);
  free(inv);
  free(r);
  free(q);
  spmvd_shm_close(&shm);
  spmvd_wk_die_if_sticky(rc);
  return rc;
}
