/* spmvd_model.c: the ELLR-T analytical model (Vázquez et al., Eq. 1-4). */
#include <stdlib.h>
#include <string.h>

#include "spmvd_model.h"

/* Copies the model's numbers from a device description. */
void spmvd_model_gpu_from_device(struct spmvd_model_gpu *g,
                                 const struct spmvd_device_info *dev)
{
  g->sms = dev->sms;
  g->warp_size = dev->warp_size;
  g->max_threads_per_sm = dev->max_threads_per_sm;
  g->max_blocks_per_sm = dev->max_blocks_per_sm;
  g->max_threads_per_block = dev->max_threads_per_block;
}

/* Checks the GPU description. */
int spmvd_model_gpu_check(const struct spmvd_model_gpu *g,
                          struct spmv_error *err)
{
  if (g->sms < 1 || g->sms > 1 << 20)
    return spmv_error_set(err, SPMV_EINVAL,
                          "model: SM count %d out of range [1, %d]", g->sms,
                          1 << 20);
  if (g->warp_size < 2 || g->warp_size % 2 != 0 || g->warp_size > 1024)
    return spmv_error_set(err, SPMV_EINVAL,
                          "model: warp size %d is not an even number in "
                          "[2, 1024] (the model needs a GPU)", g->warp_size);
  if (g->max_threads_per_block < g->warp_size ||
      g->max_threads_per_block / g->warp_size > SPMVD_MODEL_MAX_BS)
    return spmv_error_set(err, SPMV_EINVAL,
                          "model: max threads per block %d must be in "
                          "[warp size %d, %d]", g->max_threads_per_block,
                          g->warp_size, g->warp_size * SPMVD_MODEL_MAX_BS);
  if (g->max_threads_per_sm < g->warp_size)
    return spmv_error_set(err, SPMV_EINVAL,
                          "model: max threads per SM %d below the warp "
                          "size %d", g->max_threads_per_sm, g->warp_size);
  if (g->max_blocks_per_sm < 1)
    return spmv_error_set(err, SPMV_EINVAL,
                          "model: max blocks per SM %d must be >= 1",
                          g->max_blocks_per_sm);
  return 0;
}

/* Checks T and BS against g (already checked). */
static int check_bs_t(const struct spmvd_model_gpu *g, int bs, int t,
                      struct spmv_error *err)
{
  int ws = g->warp_size;

  if (t < 1 || (t & (t - 1)) != 0 || t > ws || ws % t != 0)
    return spmv_error_set(err, SPMV_EINVAL,
                          "model: T = %d is not a power of two dividing the "
                          "warp size %d", t, ws);
  if (bs < ws || bs % ws != 0 || bs > g->max_threads_per_block)
    return spmv_error_set(err, SPMV_EINVAL,
                          "model: BS = %d is not a multiple of the warp size "
                          "%d up to %d", bs, ws, g->max_threads_per_block);
  return 0;
}

/* Longest row among rows [r0, r1) (r0 < r1). */
static inline int64_t longest(const int64_t *row_ptr, int64_t r0, int64_t r1)
{
  int64_t mx = 0, len, r;

  for (r = r0; r < r1; r++) {
    len = row_ptr[r + 1] - row_ptr[r];
    if (len > mx)
      mx = len;
  }
  return mx;
}

/*
 * One T column of the grid: m[i] = M(rl, bs[i], t) for the nbs block
 * sizes, in one pass over the rows.  A warp's cost does not depend on BS,
 * only its SM does: each warp is costed once, then added to the running
 * block of every BS.  ceil() is monotone, so a half-warp's MAX is
 * ceil(longest row / T): one division per half-warp.
 */
static int model_column(const int64_t *row_ptr, int64_t rows,
                        const struct spmvd_model_gpu *g, const int *bs,
                        int nbs, int t, int64_t *m, struct spmv_error *err)
{
  int64_t *sm_cost, nwarps, w, r0, rph, cost, len;
  int ws = g->warp_size, half = ws / 2, n = g->sms, i, s;
  int wpb[SPMVD_MODEL_MAX_BS], cnt[SPMVD_MODEL_MAX_BS];
  int cur[SPMVD_MODEL_MAX_BS];

  sm_cost = calloc((size_t)n * (size_t)nbs, sizeof *sm_cost);
  if (sm_cost == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "model: out of memory");
  for (i = 0; i < nbs; i++) {
    wpb[i] = bs[i] / ws;
    cnt[i] = 0;
    cur[i] = 0;
  }
  /* Rows per half-warp; 0 when a row spans both halves (T > ws/2, so
   * T = ws: warp w is row w and each half pays its iterations). */
  rph = t <= half ? half / t : 0;
  nwarps = (rows * t + ws - 1) / ws;
  for (w = 0; w < nwarps; w++) {
    if (rph == 0) {
      len = row_ptr[w + 1] - row_ptr[w];
      cost = 2 * ((len + t - 1) / t);
    } else {
      r0 = w * 2 * rph;
      cost = (longest(row_ptr, r0, r0 + rph < rows ? r0 + rph : rows) + t -
              1) / t;
      if (r0 + rph < rows)
        cost += (longest(row_ptr, r0 + rph,
                         r0 + 2 * rph < rows ? r0 + 2 * rph : rows) + t -
                 1) / t;
    }
    /* Block w / wpb runs on SM (w / wpb) mod n. */
    for (i = 0; i < nbs; i++) {
      sm_cost[(size_t)i * (size_t)n + (size_t)cur[i]] += cost;
      if (++cnt[i] == wpb[i]) {
        cnt[i] = 0;
        if (++cur[i] == n)
          cur[i] = 0;
      }
    }
  }
  for (i = 0; i < nbs; i++) {
    m[i] = 0;
    for (s = 0; s < n; s++)
      if (sm_cost[(size_t)i * (size_t)n + (size_t)s] > m[i])
        m[i] = sm_cost[(size_t)i * (size_t)n + (size_t)s];
  }
  free(sm_cost);
  return 0;
}

/* Computes M(rl, BS, T): the largest per-SM sum of warp costs. */
int64_t spmvd_model_cost(const int64_t *row_ptr, int64_t rows,
                         const struct spmvd_model_gpu *g, int bs, int t,
                         struct spmv_error *err)
{
  int64_t m;
  int ret;

  ret = spmvd_model_gpu_check(g, err);
  if (ret == 0)
    ret = check_bs_t(g, bs, t, err);
  if (ret != 0)
    return ret;
  if (rows < 0 || (rows > 0 && row_ptr == NULL))
    return spmv_error_set(err, SPMV_EINVAL, "model: no row lengths");
  ret = model_column(row_ptr, rows, g, &bs, 1, t, &m, err);
  return ret != 0 ? ret : m;
}

/* Resident threads per SM with blocks of bs threads. */
static int resident(const struct spmvd_model_gpu *g, int bs)
{
  int blocks = g->max_threads_per_sm / bs;

  if (blocks > g->max_blocks_per_sm)
    blocks = g->max_blocks_per_sm;
  return blocks * bs;
}

/* Fills the valid BS values (full occupancy, else the best reachable). */
static void valid_bs(const struct spmvd_model_gpu *g,
                     struct spmvd_model_grid *out)
{
  int bs, best = 0;

  for (bs = g->warp_size; bs <= g->max_threads_per_block; bs += g->warp_size)
    if (resident(g, bs) > best)
      best = resident(g, bs);
  out->nbs = 0;
  for (bs = g->warp_size; bs <= g->max_threads_per_block; bs += g->warp_size)
    if (resident(g, bs) == best && out->nbs < SPMVD_MODEL_MAX_BS)
      out->bs[out->nbs++] = bs;
}

/* Orders (M, BS, T) triples: smaller M, then smaller BS, then smaller T. */
static int better(int64_t m1, int bs1, int t1, int64_t m2, int bs2, int t2)
{
  if (m1 != m2)
    return m1 < m2;
  if (bs1 != bs2)
    return bs1 < bs2;
  return t1 < t2;
}

/* Computes the whole M(BS, T) grid and its pick. */
int spmvd_model_grid_compute(const struct spmv_csr *A,
                             const struct spmvd_model_gpu *g,
                             struct spmvd_model_grid *out,
                             struct spmv_error *err)
{
  int64_t col[SPMVD_MODEL_MAX_BS];
  int i, j, t, ret;

  memset(out, 0, sizeof *out);
  ret = spmvd_model_gpu_check(g, err);
  if (ret != 0)
    return ret;
  out->gpu = *g;
  out->rows = A->rows;
  out->nnz = A->nnz;
  valid_bs(g, out);
  for (t = 1; t <= 32 && t <= g->warp_size && g->warp_size % t == 0; t *= 2)
    out->t[out->nt++] = t;
  if (A->rows < 0 || (A->rows > 0 && A->row_ptr == NULL))
    return spmv_error_set(err, SPMV_EINVAL, "model: no row lengths");
  /* One pass over the rows per T, every BS at once. */
  for (j = 0; j < out->nt; j++) {
    ret = model_column(A->row_ptr, A->rows, g, out->bs, out->nbs, out->t[j],
                       col, err);
    if (ret != 0)
      return ret;
    for (i = 0; i < out->nbs; i++)
      out->m[i][j] = col[i];
  }
  for (i = 0; i < out->nbs; i++)
    for (j = 0; j < out->nt; j++)
      if ((i == 0 && j == 0) ||
          better(out->m[i][j], out->bs[i], out->t[j],
                 out->m[out->best_i][out->best_j], out->bs[out->best_i],
                 out->t[out->best_j])) {
        out->best_i = i;
        out->best_j = j;
      }
  return 0;
}

/* Sets cfg to an ellr-t configuration. */
static void ellr(struct spmv_config *cfg, int bs, int t)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->format = SPMV_FMT_ELLR_T;
  cfg->bs = bs;
  cfg->tpr = t;
}

/* Writes the grid's pick as an ellr-t configuration. */
void spmvd_model_pick(const struct spmvd_model_grid *grid,
                      struct spmv_config *cfg)
{
  ellr(cfg, grid->bs[grid->best_i], grid->t[grid->best_j]);
}

/* Ranks the best BS of each T by M. */
int spmvd_model_ranked(const struct spmvd_model_grid *grid,
                       struct spmv_config *out, int max)
{
  int bi[SPMVD_MODEL_MAX_T], order[SPMVD_MODEL_MAX_T];
  int i, j, k, n = 0, tmp;

  for (j = 0; j < grid->nt; j++) {
    bi[j] = 0;
    for (i = 1; i < grid->nbs; i++)
      if (better(grid->m[i][j], grid->bs[i], grid->t[j], grid->m[bi[j]][j],
                 grid->bs[bi[j]], grid->t[j]))
        bi[j] = i;
    order[j] = j;
  }
  /* Insertion sort of the T columns by their best (M, BS, T). */
  for (j = 1; j < grid->nt; j++) {
    for (k = j; k > 0; k--) {
      int a = order[k], b = order[k - 1];

      if (!better(grid->m[bi[a]][a], grid->bs[bi[a]], grid->t[a],
                  grid->m[bi[b]][b], grid->bs[bi[b]], grid->t[b]))
        break;
      tmp = order[k];
      order[k] = order[k - 1];
      order[k - 1] = tmp;
    }
  }
  for (k = 0; k < grid->nt && n < max && grid->nbs > 0; k++) {
    j = order[k];
    ellr(&out[n++], grid->bs[bi[j]], grid->t[j]);
  }
  return n;
}

/* Returns a new reference to the grid as JSON. */
json_t *spmvd_model_report_json(const struct spmvd_model_grid *grid)
{
  json_t *doc = NULL, *bs = json_array(), *t = json_array(),
         *m = json_array(), *row;
  struct spmv_config cfg;
  char text[64];
  int i, j;

  if (bs == NULL || t == NULL || m == NULL)
    goto out;
  for (i = 0; i < grid->nbs; i++)
    if (json_array_append_new(bs, json_integer(grid->bs[i])) != 0)
      goto out;
  for (j = 0; j < grid->nt; j++)
    if (json_array_append_new(t, json_integer(grid->t[j])) != 0)
      goto out;
  for (i = 0; i < grid->nbs; i++) {
    row = json_array();
    if (row == NULL || json_array_append_new(m, row) != 0)
      goto out;
    for (j = 0; j < grid->nt; j++)
      if (json_array_append_new(row, json_integer(grid->m[i][j])) != 0)
        goto out;
  }
  spmvd_model_pick(grid, &cfg);
  spmv_config_format(&cfg, text, sizeof text);
  doc = json_pack(
      "{s{sisisisisi}sIsIsOsOsOs{sisisIss}}", "gpu", "sms", grid->gpu.sms,
      "warp_size", grid->gpu.warp_size, "max_threads_per_sm",
      grid->gpu.max_threads_per_sm, "max_blocks_per_sm",
      grid->gpu.max_blocks_per_sm, "max_threads_per_block",
      grid->gpu.max_threads_per_block, "rows", (json_int_t)grid->rows, "nnz",
      (json_int_t)grid->nnz, "bs", bs, "t", t, "m", m, "pick", "bs", cfg.bs,
      "t", cfg.tpr, "m", (json_int_t)grid->m[grid->best_i][grid->best_j],
      "config", text);
out:
  json_decref(bs);
  json_decref(t);
  json_decref(m);
  return doc;
}

/* Prints the grid as a table with the pick marked by '*'. */
void spmvd_model_report_print(const struct spmvd_model_grid *grid, FILE *f)
{
  int i, j;

  fprintf(f, "ELLR-T model: %lld rows, %lld nnz; %d SMs, warp %d, "
          "%d threads/SM, %d blocks/SM, %d threads/block\n",
          (long long)grid->rows, (long long)grid->nnz, grid->gpu.sms,
          grid->gpu.warp_size, grid->gpu.max_threads_per_sm,
          grid->gpu.max_blocks_per_sm, grid->gpu.max_threads_per_block);
  fprintf(f, "%6s", "BS\\T");
  for (j = 0; j < grid->nt; j++)
    fprintf(f, " %13d", grid->t[j]);
  fputc('\n', f);
  for (i = 0; i < grid->nbs; i++) {
    fprintf(f, "%6d", grid->bs[i]);
    for (j = 0; j < grid->nt; j++)
      fprintf(f, " %12lld%c", (long long)grid->m[i][j],
              i == grid->best_i && j == grid->best_j ? '*' : ' ');
    fputc('\n', f);
  }
  if (grid->nbs > 0)
    fprintf(f, "pick: ellr-t bs=%d t=%d (M = %lld)\n", grid->bs[grid->best_i],
            grid->t[grid->best_j],
            (long long)grid->m[grid->best_i][grid->best_j]);
}
