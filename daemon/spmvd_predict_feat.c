/* spmvd_predict_feat.c: what the work model sees of a matrix: its
 * features (struct spmvd_pfeat), in one pass over its rows and a few
 * sampled ones. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_layout.h"
#include "spmvd_predict_feat.h"

/* Descending order of row lengths (sell's sort within a window). */
static int len_desc(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

  return x < y ? 1 : x > y ? -1 : 0;
}

#define FEAT_GROUP 32     /* a warp of rows */
_Static_assert(SPMVD_FEAT_BLOCK % FEAT_GROUP == 0,
               "w_block's blocks are whole warps of rows");
#define FEAT_WINDOW 256   /* sell's sigma in the calibrated configuration */
#define FEAT_VEC_TPR 16   /* csr-vector's TPR in the calibrated configuration */
#define FEAT_STREAM_BS 128 /* csr-stream's calibrated configuration */
#define FEAT_STREAM_K 4
#define PATH_WARPS 8      /* warps of the longest rows path_x looks at */

/* The footprint of spmvd_pfeat.bytes. */
double spmvd_predict_footprint(double rows, double cols, double nnz,
                               enum spmv_dtype dt)
{
  double vs = (double)spmv_dtype_size(dt);

  return nnz * (vs + 4) + (rows + 1) * 8 + (rows + cols) * vs;
}

/* Warps jad_sectors() and warp_x_sectors() visit at most: beyond, every
 * k-th, scaled up by the entries; a full pass over a large matrix's warps
 * would take most of the features' time, and the sample comes within a
 * fraction of a percent of it. */
#define JAD_SAMPLE_WARPS 8192

/* A row and its length, for jad_order's sort. */
struct len_row {
  int64_t len, row;
};

/* Longer rows first, ties in row order. */
static int len_row_cmp(const void *a, const void *b)
{
  const struct len_row *x = a, *y = b;

  if (x->len != y->len)
    return x->len < y->len ? 1 : -1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* A's rows in jad's order into order[rows]: jad's own counting sort
 * (spmv_jad_perm) when the lengths are few against the rows, else a sort
 * of the rows in the same order (a row of 10^8 entries must not cost 800
 * MB of counters).  Returns 0 or -1 when out of memory. */
static int jad_order(const struct spmv_csr *A, int64_t rl_max, int32_t *order)
{
  int64_t r, *count;
  struct len_row *lr;

  if (rl_max <= 2 * A->rows + 64) {
    if ((count = malloc(((size_t)rl_max + 1) * sizeof *count)) == NULL)
      return -1;
    spmv_jad_perm(A, rl_max, count, order);
    free(count);
    return 0;
  }
  if ((lr = malloc((size_t)A->rows * sizeof *lr)) == NULL)
    return -1;
  for (r = 0; r < A->rows; r++) {
    lr[r].len = A->row_ptr[r + 1] - A->row_ptr[r];
    lr[r].row = r;
  }
  qsort(lr, (size_t)A->rows, sizeof *lr, len_row_cmp);
  for (r = 0; r < A->rows; r++)
    order[r] = (int32_t)lr[r].row;
  free(lr);
  return 0;
}

/* x's sectors that one warp of n <= FEAT_GROUP rows (row offsets b,
 * lengths l, borrowed) gathers over its steps: at each step one for the
 * first live lane and one for each live lane whose sector differs from
 * the live lane before it; *entries the same for the entries' own
 * sectors (a value's width, in CSR order).  The live lanes are kept in a
 * list, so a warp costs its entries, not 32 lanes for each step of its
 * longest row. */
static double warp_sectors(const struct spmv_csr *A, const int64_t *b,
                           const int64_t *l, int64_t n, int shift,
                           double *entries)
{
  int64_t live[FEAT_GROUP], d, j, m = 0, nl, prev, sec, pe, se;
  double total = 0;

  *entries = 0;
  for (j = 0; j < n; j++)
    if (l[j] > 0)
      live[m++] = j;
  for (d = 0; m > 0; d++) {
    prev = -1;
    pe = -1;
    for (nl = 0, j = 0; j < m; j++) {
      sec = A->col_idx[b[live[j]] + d] >> shift;
      total += sec != prev;
      prev = sec;
      se = (b[live[j]] + d) >> shift;
      *entries += se != pe;
      pe = se;
      if (l[live[j]] > d + 1)
        live[nl++] = live[j];
    }
    m = nl;
  }
  return total;
}

/* x_warp: the distinct sectors of x each warp of 32 rows touches, the rows
 * taken in order (NULL: row order), summed over the warps: over an even
 * sample of the warps, as jad_sectors samples, scaled to all entries; a
 * stamp per sector (the last warp that counted it) makes it one pass over
 * their entries.  Returns -1 when out of memory (the caller then uses the
 * per-row count). */
static double warp_x_sectors(const struct spmv_csr *A, const int32_t *order,
                             int shift)
{
  int64_t nsec = ((int64_t)A->cols >> shift) + 1, s, k, r, row, w, step;
  int32_t *stamp = malloc((size_t)nsec * sizeof *stamp), id;
  double total = 0, seen = 0;

  if (stamp == NULL)
    return -1;
  for (s = 0; s < nsec; s++)
    stamp[s] = -1;
  step = (A->rows / FEAT_GROUP + JAD_SAMPLE_WARPS - 1) / JAD_SAMPLE_WARPS;
  step = FEAT_GROUP * (step > 1 ? step : 1);
  for (w = 0; w < A->rows; w += step) {
    id = (int32_t)(w / FEAT_GROUP);
    for (r = w; r < w + FEAT_GROUP && r < A->rows; r++) {
      row = order != NULL ? order[r] : r;
      seen += (double)(A->row_ptr[row + 1] - A->row_ptr[row]);
      for (k = A->row_ptr[row]; k < A->row_ptr[row + 1]; k++) {
        s = A->col_idx[k] >> shift;
        if (stamp[s] != id) {
          stamp[s] = id;
          total += 1;
        }
      }
    }
  }
  free(stamp);
  return seen > 0 ? total * ((double)A->nnz / seen) : 0;
}

/*
 * x's sectors as jad's warps gather them: rows in descending length, ties
 * in row order (jad_order), 32 rows to a warp, and at each step one
 * sector for the first lane plus one for every lane whose sector differs
 * from the previous lane's.  Why: sorting by length scatters the rows of
 * a warp over the matrix, so neighbouring lanes no longer share the
 * sectors of x that neighbouring rows' columns share, which the per-row
 * count cannot see.  *x_warp the distinct sectors per warp in that order
 * (warp_x_sectors).  Returns -1 when out of memory (the caller then uses
 * the per-row counts).
 */
static double jad_sectors(const struct spmv_csr *A, int64_t rl_max, int shift,
                          double *first, double *x_warp)
{
  int32_t *order = malloc((size_t)(A->rows > 0 ? A->rows : 1) * sizeof *order);
  int64_t b[FEAT_GROUP], l[FEAT_GROUP], w, d, n, j, prev, sec, step;
  double total = 0, seen = 0, ent;

  if (order == NULL || jad_order(A, rl_max, order) != 0 ||
      (*x_warp = warp_x_sectors(A, order, shift)) < 0) {
    free(order);
    return -1;
  }
  step = (A->rows / FEAT_GROUP + JAD_SAMPLE_WARPS - 1) / JAD_SAMPLE_WARPS;
  step = FEAT_GROUP * (step > 1 ? step : 1);
  for (w = 0; w < A->rows; w += step) {
    n = A->rows - w < FEAT_GROUP ? A->rows - w : FEAT_GROUP;
    for (j = 0; j < n; j++) {
      b[j] = A->row_ptr[order[w + j]];
      l[j] = A->row_ptr[order[w + j] + 1] - b[j];
      seen += (double)l[j];
    }
    if (w == 0)
      *first = warp_sectors(A, b, l, n, shift, &ent);
    /* The lanes are in descending length: those live at step d are a
     * prefix, which shrinks to n. */
    for (d = 0; n > 0 && d < l[0]; d++) {
      while (l[n - 1] <= d)
        n--;
      prev = -1;
      for (j = 0; j < n; j++) {
        sec = A->col_idx[b[j] + d] >> shift;
        total += sec != prev;
        prev = sec;
      }
    }
  }
  free(order);
  return seen > 0 ? total * ((double)A->nnz / seen) : 0;
}

/* path_x: the most sectors of x along a warp of the longest rows (rl_max
 * set), over its first PATH_WARPS warps of that length; *path_m the
 * sectors of the entries that warp loads. */
static double path_sectors(const struct spmv_csr *A, int64_t rl_max,
                           int shift, double *path_m)
{
  int64_t b[FEAT_GROUP], l[FEAT_GROUP], r0, r, n, mx;
  double best = 0, s, ent;
  int seen = 0;

  for (r0 = 0; r0 < A->rows && seen < PATH_WARPS; r0 += FEAT_GROUP) {
    mx = 0;
    for (n = 0, r = r0; r < A->rows && r < r0 + FEAT_GROUP; r++, n++) {
      b[n] = A->row_ptr[r];
      l[n] = A->row_ptr[r + 1] - b[n];
      mx = l[n] > mx ? l[n] : mx;
    }
    if (mx != rl_max)
      continue;
    seen++;
    s = warp_sectors(A, b, l, n, shift, &ent);
    if (s > best || seen == 1) {
      best = s;
      *path_m = ent;
    }
  }
  return best;
}

/* The sum steps of the slowest warp of csr-stream's block of rows r0 ..
 * r0+nr (the kernel's spmv_stream_reduce: TPR the largest power of two up
 * to 32 with TPR * nr <= BS, rows taken by groups of TPR lanes in rounds,
 * a warp's round as long as its longest row's ceil(len / TPR)). */
static double stream_block_steps(const struct spmv_csr *A, int64_t r0,
                                 int64_t nr, double *rounds)
{
  int64_t tpr = 1, groups, first, g, w, len, steps, wmax = 0, per_warp;

  while (tpr < 32 && 2 * tpr * nr <= FEAT_STREAM_BS)
    tpr *= 2;
  groups = FEAT_STREAM_BS / tpr;
  per_warp = 32 / tpr;
  *rounds = (double)((nr + groups - 1) / groups);
  for (w = 0; w < groups; w += per_warp) {
    int64_t tot = 0;

    for (first = 0; first < nr; first += groups) {
      int64_t m = 0;

      for (g = w; g < w + per_warp && first + g < nr; g++) {
        len = A->row_ptr[r0 + first + g + 1] - A->row_ptr[r0 + first + g];
        steps = (len + tpr - 1) / tpr;
        m = steps > m ? steps : m;
      }
      tot += m;
    }
    wmax = tot > wmax ? tot : wmax;
  }
  return (double)wmax;
}

/* stream_steps' sums over the blocks of a cut. */
struct stream_sum {
  const struct spmv_csr *A;
  double w, path, rounds;
};

static void stream_sum_block(void *ctx, int64_t r0, int64_t r1)
{
  struct stream_sum *t = ctx;
  double r, s = stream_block_steps(t->A, r0, r1 - r0, &r);

  t->w += s;
  t->path = s > t->path ? s : t->path;
  t->rounds = r > t->rounds ? r : t->rounds;
}

/* csr-stream's sum steps over its cut at FEAT_STREAM_BS and FEAT_STREAM_K
 * (spmv_csr_stream_cut): *w the blocks' steps summed, *path the most,
 * *rounds the most rounds of one block. */
static void stream_steps(const struct spmv_csr *A, double *w, double *path,
                         double *rounds)
{
  struct stream_sum t = { A, 0, 0, 0 };

  spmv_csr_stream_cut(A, (int64_t)FEAT_STREAM_BS * FEAT_STREAM_K,
                      stream_sum_block, NULL, &t);
  *w = t.w;
  *path = t.path;
  *rounds = t.rounds;
}

#define PFEAT_COLUMN(m) { #m, offsetof(struct spmvd_pfeat, m) }
const struct spmvd_pfeat_column spmvd_pfeat_columns[SPMVD_PFEAT_NCOLUMNS] = {
  PFEAT_COLUMN(rows), PFEAT_COLUMN(nnz), PFEAT_COLUMN(rl_max),
  PFEAT_COLUMN(w_warp), PFEAT_COLUMN(w_sell), PFEAT_COLUMN(w_ell),
  PFEAT_COLUMN(w_vec), PFEAT_COLUMN(hyb_coo), PFEAT_COLUMN(sectors),
  PFEAT_COLUMN(empty), PFEAT_COLUMN(w_hyb), PFEAT_COLUMN(sectors_jad),
  PFEAT_COLUMN(path_x), PFEAT_COLUMN(path_x_jad), PFEAT_COLUMN(path_m),
  PFEAT_COLUMN(x_warp), PFEAT_COLUMN(x_warp_jad), PFEAT_COLUMN(w_stream),
  PFEAT_COLUMN(path_stream), PFEAT_COLUMN(path_rounds),
  PFEAT_COLUMN(w_block),
};

/* Feature i of spmvd_pfeat_columns in f. */
double spmvd_pfeat_value(const struct spmvd_pfeat *f, int i)
{
  double v;

  memcpy(&v, (const char *)f + spmvd_pfeat_columns[i].offset, sizeof v);
  return v;
}

/* Sets feature i of spmvd_pfeat_columns in f to v. */
void spmvd_pfeat_set(struct spmvd_pfeat *f, int i, double v)
{
  memcpy((char *)f + spmvd_pfeat_columns[i].offset, &v, sizeof v);
}

/* Computes the work model's features of A. */
void spmvd_predict_features(const struct spmv_csr *A,
                            const struct spmv_profile *prof,
                            enum spmv_dtype dt, struct spmvd_pfeat *out)
{
  int64_t win[FEAT_WINDOW], r, r0, k, len, mx, steps[2];
  int shift = spmv_dtype_size(dt) == 4 ? 3 : 2; /* columns per sector: 8/4 */
  double blk = 0;
  size_t n, j;

  memset(out, 0, sizeof *out);
  out->rows = (double)A->rows;
  out->nnz = (double)A->nnz;
  for (r0 = 0; r0 < A->rows; r0 += FEAT_GROUP) {
    mx = 0;
    for (r = r0; r < A->rows && r < r0 + FEAT_GROUP; r++) {
      len = A->row_ptr[r + 1] - A->row_ptr[r];
      mx = len > mx ? len : mx;
      if (len == 0)
        out->empty += 1;
      if (len > prof->hyb_k)
        out->hyb_coo += (double)(len - prof->hyb_k);
      /* Sectors: a new one wherever the sorted columns cross into one. */
      for (k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++)
        if (k == A->row_ptr[r] ||
            (A->col_idx[k] >> shift) != (A->col_idx[k - 1] >> shift))
          out->sectors += 1;
    }
    out->w_warp += (double)FEAT_GROUP * (double)mx;
    /* Its block's share of it (a block starts every SPMVD_FEAT_BLOCK
     * rows, a multiple of FEAT_GROUP). */
    blk = (r0 % SPMVD_FEAT_BLOCK == 0 ? 0 : blk) +
          (double)FEAT_GROUP * (double)mx;
    out->w_block = blk > out->w_block ? blk : out->w_block;
    out->rl_max = (double)mx > out->rl_max ? (double)mx : out->rl_max;
    /* csr-vector: two rows per warp at TPR 16, the warp as slow as the
     * longer of each pair. */
    for (r = r0; r < A->rows && r < r0 + FEAT_GROUP; r += 2) {
      for (j = 0; j < 2; j++) {
        len = r + (int64_t)j < A->rows
                  ? A->row_ptr[r + j + 1] - A->row_ptr[r + j]
                  : 0;
        steps[j] = (len + FEAT_VEC_TPR - 1) / FEAT_VEC_TPR;
      }
      out->w_vec += 32.0 * (double)(steps[0] > steps[1] ? steps[0] : steps[1]);
    }
  }
  out->w_ell = (double)A->rows * out->rl_max;
  stream_steps(A, &out->w_stream, &out->path_stream, &out->path_rounds);
  out->sectors_jad = jad_sectors(A, (int64_t)out->rl_max, shift,
                                 &out->path_x_jad, &out->x_warp_jad);
  out->path_x = path_sectors(A, (int64_t)out->rl_max, shift, &out->path_m);
  out->x_warp = warp_x_sectors(A, NULL, shift);
  if (out->sectors_jad < 0) {
    out->sectors_jad = out->sectors;
    out->path_x_jad = out->path_x;
    out->x_warp_jad = out->sectors;
  }
  if (out->x_warp < 0)
    out->x_warp = out->sectors;
  out->bytes = spmvd_predict_footprint((double)A->rows, (double)A->cols,
                                       (double)A->nnz, dt);
  out->hyb_k = (double)prof->hyb_k;
  out->w_hyb = (double)A->rows * (double)prof->hyb_k;
  for (r0 = 0; r0 < A->rows; r0 += FEAT_WINDOW) {
    n = 0;
    for (r = r0; r < A->rows && r < r0 + FEAT_WINDOW; r++)
      win[n++] = A->row_ptr[r + 1] - A->row_ptr[r];
    qsort(win, n, sizeof win[0], len_desc);
    for (j = 0; j < n; j += FEAT_GROUP)
      out->w_sell += (double)FEAT_GROUP * (double)win[j];
  }
}
