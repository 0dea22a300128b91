/* spmv_split.c: row blocks balanced by nonzeros, their local and remote
 * parts, halos and send lists (spmv_split.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "spmv_split.h"

void spmv_split_bounds(const struct spmv_csr *A, int n, int64_t *bounds)
{
  bounds[0] = 0;
  for (int k = 1; k < n; k++) {
    int64_t lo = bounds[k - 1], hi = A->rows, r;
    if (A->nnz == 0) {
      /* Nothing to balance: equal rows. */
      r = A->rows * k / n;
    } else {
      int64_t target = (int64_t)((double)A->nnz * k / n);
      /* The first row boundary at or past target, or the one before it
       * when that is nearer. */
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->row_ptr[mid] < target)
          lo = mid + 1;
        else
          hi = mid;
      }
      r = lo;
      if (r > bounds[k - 1] &&
          target - A->row_ptr[r - 1] < A->row_ptr[r] - target)
        r--;
    }
    bounds[k] = r < bounds[k - 1] ? bounds[k - 1] : r;
  }
  bounds[n] = A->rows;
}

static int cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The block that owns column c (bounds ascending, n blocks). */
static int owner(const int64_t *bounds, int n, int64_t c)
{
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (bounds[mid] <= c)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/*
 * Fills block b (rows [r0, r1) of A): local and remote parts and the halo.
 * mark holds A->cols entries, all -1 on entry and on return.
 */
/*
 * Counts the local and remote entries of rows [r0, r1) and the distinct
 * remote columns, which it leaves marked 0 in mark (all -1 on entry).
 */
static void count_block(const struct spmv_csr *A, int64_t r0, int64_t r1,
                        int32_t *mark, int64_t *nl, int64_t *nr, int64_t *nh)
{
  *nl = *nr = *nh = 0;
  for (int64_t k = A->row_ptr[r0]; k < A->row_ptr[r1]; k++) {
    int32_t c = A->col_idx[k];
    if (c >= r0 && c < r1) {
      (*nl)++;
    } else {
      (*nr)++;
      if (mark[c] < 0) {
        mark[c] = 0;
        (*nh)++;
      }
    }
  }
}

/* Sets mark back to -1 for the columns of rows [r0, r1). */
static void unmark(const struct spmv_csr *A, int64_t r0, int64_t r1,
                   int32_t *mark)
{
  for (int64_t k = A->row_ptr[r0]; k < A->row_ptr[r1]; k++)
    mark[A->col_idx[k]] = -1;
}

static int fill_block(const struct spmv_csr *A, struct spmv_split_block *b,
                      int32_t *mark)
{
  int64_t rows = b->r1 - b->r0, nl, nr, nh;
  const int64_t *rp = A->row_ptr;

  count_block(A, b->r0, b->r1, mark, &nl, &nr, &nh);
  b->local = spmv_csr_new(rows, rows, nl);
  b->remote = spmv_csr_new(rows, nh, nr);
  b->halo = malloc((size_t)(nh ? nh : 1) * sizeof *b->halo);
  if (!b->local || !b->remote || !b->halo) {
    unmark(A, b->r0, b->r1, mark);
    return SPMV_ENOMEM;
  }
  b->nhalo = nh;
  nh = 0;
  for (int64_t k = rp[b->r0]; k < rp[b->r1]; k++) {
    int32_t c = A->col_idx[k];
    if ((c < b->r0 || c >= b->r1) && mark[c] == 0) {
      mark[c] = 1;
      b->halo[nh++] = c;
    }
  }
  qsort(b->halo, (size_t)nh, sizeof *b->halo, cmp_i32);
  for (int64_t h = 0; h < nh; h++)
    mark[b->halo[h]] = (int32_t)h;
  nl = nr = 0;
  for (int64_t i = 0; i < rows; i++) {
    for (int64_t k = rp[b->r0 + i]; k < rp[b->r0 + i + 1]; k++) {
      int32_t c = A->col_idx[k];
      if (c >= b->r0 && c < b->r1) {
        b->local->col_idx[nl] = (int32_t)(c - b->r0);
        b->local->val[nl++] = A->val[k];
      } else {
        b->remote->col_idx[nr] = mark[c];
        b->remote->val[nr++] = A->val[k];
      }
    }
    b->local->row_ptr[i + 1] = nl;
    b->remote->row_ptr[i + 1] = nr;
  }
  for (int64_t h = 0; h < nh; h++)
    mark[b->halo[h]] = -1;
  return 0;
}

/* Every block's send lists, from the receivers' halos. */
static int fill_sends(struct spmv_split *s, const int64_t *bounds)
{
  int n = s->nblocks;

  for (int p = 0; p < n; p++) {
    struct spmv_split_block *b = &s->block[p];
    b->send_off = calloc((size_t)n + 1, sizeof *b->send_off);
    if (!b->send_off)
      return SPMV_ENOMEM;
  }
  /* A receiver's halo is ascending, so each sender's part of it is one
   * run, and the senders come in block order. */
  for (int q = 0; q < n; q++) {
    const struct spmv_split_block *r = &s->block[q];
    for (int64_t h = 0; h < r->nhalo; h++)
      s->block[owner(bounds, n, r->halo[h])].send_off[q + 1]++;
  }
  for (int p = 0; p < n; p++) {
    struct spmv_split_block *b = &s->block[p];
    for (int q = 0; q < n; q++)
      b->send_off[q + 1] += b->send_off[q];
    b->send_idx = malloc((size_t)(b->send_off[n] ? b->send_off[n] : 1) *
                         sizeof *b->send_idx);
    if (!b->send_idx)
      return SPMV_ENOMEM;
  }
  for (int q = 0; q < n; q++) {
    const struct spmv_split_block *r = &s->block[q];
    for (int64_t h = 0; h < r->nhalo; h++) {
      int p = owner(bounds, n, r->halo[h]);
      struct spmv_split_block *b = &s->block[p];
      int64_t at = b->send_off[q]++;
      b->send_idx[at] = (int32_t)(r->halo[h] - b->r0);
    }
  }
  /* The fill advanced each offset to the next one's start: shift back. */
  for (int p = 0; p < n; p++) {
    struct spmv_split_block *b = &s->block[p];
    memmove(b->send_off + 1, b->send_off, (size_t)n * sizeof *b->send_off);
    b->send_off[0] = 0;
  }
  return 0;
}

/* spmv_split_new's refusals. */
static int check_args(const struct spmv_csr *A, int n, struct spmv_error *err)
{
  if (A->rows != A->cols)
    return spmv_error_set(err, SPMV_EINVAL, "only a square matrix is split "
                          "(this one is %lld x %lld)", (long long)A->rows,
                          (long long)A->cols);
  if (n < 1 || n > SPMV_SPLIT_MAX || (A->rows > 0 && n > A->rows))
    return spmv_error_set(err, SPMV_EINVAL, "cannot split %lld rows into %d "
                          "blocks (1 to %d, at most one a row)",
                          (long long)A->rows, n, SPMV_SPLIT_MAX);
  return 0;
}

int spmv_split_new(const struct spmv_csr *A, int n, struct spmv_split **out,
                   struct spmv_error *err)
{
  int64_t bounds[SPMV_SPLIT_MAX + 1];
  struct spmv_split *s;
  int32_t *mark;
  int rc = 0;

  *out = NULL;
  if ((rc = check_args(A, n, err)) < 0)
    return rc;
  s = calloc(1, sizeof *s);
  mark = malloc((size_t)(A->cols ? A->cols : 1) * sizeof *mark);
  if (s)
    s->block = calloc((size_t)n, sizeof *s->block);
  if (!s || !mark || !s->block) {
    free(mark);
    spmv_split_free(s);
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory splitting a "
                          "matrix into %d blocks", n);
  }
  s->rows = A->rows;
  s->nnz = A->nnz;
  s->nblocks = n;
  for (int64_t c = 0; c < A->cols; c++)
    mark[c] = -1;
  spmv_split_bounds(A, n, bounds);
  for (int p = 0; p < n && rc == 0; p++) {
    s->block[p].r0 = bounds[p];
    s->block[p].r1 = bounds[p + 1];
    rc = fill_block(A, &s->block[p], mark);
  }
  free(mark);
  if (rc == 0)
    rc = fill_sends(s, bounds);
  if (rc < 0) {
    spmv_split_free(s);
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory splitting a "
                          "matrix into %d blocks", n);
  }
  *out = s;
  return 0;
}

int spmv_split_one(const struct spmv_csr *A, int n, int k,
                   struct spmv_split_block *b, struct spmv_error *err)
{
  int64_t bounds[SPMV_SPLIT_MAX + 1];
  int32_t *mark;
  int rc;

  memset(b, 0, sizeof *b);
  if ((rc = check_args(A, n, err)) < 0)
    return rc;
  if (k < 0 || k >= n)
    return spmv_error_set(err, SPMV_EINVAL, "no block %d of %d", k, n);
  mark = malloc((size_t)(A->cols ? A->cols : 1) * sizeof *mark);
  if (!mark)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory cutting a block");
  for (int64_t c = 0; c < A->cols; c++)
    mark[c] = -1;
  spmv_split_bounds(A, n, bounds);
  b->r0 = bounds[k];
  b->r1 = bounds[k + 1];
  rc = fill_block(A, b, mark);
  free(mark);
  if (rc < 0) {
    spmv_split_block_fini(b);
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory cutting a block");
  }
  return 0;
}

int spmv_split_measure(const struct spmv_csr *A, int n,
                       struct spmv_split_shape *shape, struct spmv_error *err)
{
  int64_t bounds[SPMV_SPLIT_MAX + 1];
  int32_t *mark;
  int rc = check_args(A, n, err);

  if (rc < 0)
    return rc;
  mark = malloc((size_t)(A->cols ? A->cols : 1) * sizeof *mark);
  if (!mark)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory measuring a "
                          "split into %d blocks", n);
  for (int64_t c = 0; c < A->cols; c++)
    mark[c] = -1;
  spmv_split_bounds(A, n, bounds);
  for (int p = 0; p < n; p++) {
    struct spmv_split_shape *sh = &shape[p];
    sh->rows = bounds[p + 1] - bounds[p];
    count_block(A, bounds[p], bounds[p + 1], mark, &sh->local_nnz,
                &sh->remote_nnz, &sh->halo);
    unmark(A, bounds[p], bounds[p + 1], mark);
  }
  free(mark);
  return 0;
}

void spmv_split_block_fini(struct spmv_split_block *b)
{
  spmv_csr_free(b->local);
  spmv_csr_free(b->remote);
  free(b->halo);
  free(b->send_off);
  free(b->send_idx);
  memset(b, 0, sizeof *b);
}

struct spmv_split *spmv_split_free(struct spmv_split *s)
{
  if (!s)
    return NULL;
  for (int p = 0; s->block && p < s->nblocks; p++)
    spmv_split_block_fini(&s->block[p]);
  free(s->block);
  free(s);
  return NULL;
}

int64_t spmv_split_halo_total(const struct spmv_split *s)
{
  int64_t t = 0;
  for (int p = 0; p < s->nblocks; p++)
    t += s->block[p].nhalo;
  return t;
}

int64_t spmv_split_remote_nnz(const struct spmv_split *s)
{
  int64_t t = 0;
  for (int p = 0; p < s->nblocks; p++)
    t += s->block[p].remote->nnz;
  return t;
}

void spmv_split_ref(const struct spmv_split *s, const double *x, double *y,
                    double *scratch)
{
  for (int q = 0; q < s->nblocks; q++) {
    const struct spmv_split_block *r = &s->block[q];
    int64_t pos = 0;
    /* The halo as it arrives: sender by sender, each one's run. */
    for (int p = 0; p < s->nblocks; p++) {
      const struct spmv_split_block *b = &s->block[p];
      for (int64_t k = b->send_off[q]; k < b->send_off[q + 1]; k++)
        scratch[pos++] = x[b->r0 + b->send_idx[k]];
    }
    const double *own = x + r->r0;
    for (int64_t i = 0; i < r->r1 - r->r0; i++) {
      double acc = 0.0;
      for (int64_t k = r->local->row_ptr[i]; k < r->local->row_ptr[i + 1]; k++)
        acc += r->local->val[k] * own[r->local->col_idx[k]];
      for (int64_t k = r->remote->row_ptr[i]; k < r->remote->row_ptr[i + 1]; k++)
        acc += r->remote->val[k] * scratch[r->remote->col_idx[k]];
      y[r->r0 + i] = acc;
    }
  }
}
