/* spmvd_predict_basis.c: the work model's terms: what each format's
 * time is linear in, from a matrix's features and the device. */
#include <math.h>

#include "spmvd_predict.h"
#include "spmvd_predict_impl.h"

/* Whether format f runs a thread per row through whole rows (path_x is
 * its longest path; not hyb, whose ELL part stops at its width K and
 * whose long rows' rest goes to the COO part). */
static int per_row_thread(enum spmv_format f)
{
  return f == SPMV_FMT_CSR_SCALAR || f == SPMV_FMT_ELLR_T ||
         f == SPMV_FMT_ELL || f == SPMV_FMT_SELL;
}

/* csr-scalar's L1 term: the share of a full SM's lanes past which their
 * lines (a lane keeps one of values and one of columns) overflow the L1,
 * a little below the 0.4 that the L1's size gives (0.4 x 2048 lanes x 2 x
 * 128 bytes is 210 KB) where the calibrations fit it best; and the mean
 * row length from which a lane's row spans a line of its 4-byte columns,
 * and so of its values in either type. */
#define SCALAR_L1_OCC 0.32
#define SCALAR_LINE_ROW 32

/* A thread's longest row read from DRAM (ellr-t, jad): rl_max times the
 * share of a layout of lb bytes beyond what the L2 keeps of data it only
 * reads, about half of it; 0 without an L2. */
static double dram_path(double lb, double l2_bytes, double rl_max)
{
  double kept = l2_bytes / 2;

  return l2_bytes > 0 && lb > kept ? (1 - kept / lb) * rl_max : 0;
}

/* csr-scalar's L2 cliff: 0 for a layout of lb bytes up to
 * SCALAR_CLIFF_LO of the L2, 1 from SCALAR_CLIFF_HI of it, linear
 * between; 0 without an L2.  A ramp, not a step at the L2's size: the
 * matrix's lines leave the L2 for DRAM over a range of sizes short of
 * it. */
#define SCALAR_CLIFF_LO 0.65
#define SCALAR_CLIFF_HI 0.85
static double scalar_cliff(double lb, double l2_bytes)
{
  double r;

  if (l2_bytes <= 0)
    return 0;
  r = (lb - SCALAR_CLIFF_LO * l2_bytes) /
      ((SCALAR_CLIFF_HI - SCALAR_CLIFF_LO) * l2_bytes);
  return r < 0 ? 0 : r > 1 ? 1 : r;
}

/* The work model's terms of format f. */
void spmvd_predict_work_basis(const struct spmv_config *cfg, double l2_bytes,
                              double threads, const struct spmvd_pfeat *x,
                              double phi[SPMVD_WORK_TERMS])
{
  double w = 0, cap, lanes, occ;
  double sect = cfg->format == SPMV_FMT_JAD ? x->sectors_jad : x->sectors;
  /* The share of the device's threads the rows occupy, at most 1 (0 when
   * the threads are unknown). */
  double share = threads > 0 ? fmin(x->rows / threads, 1) : 0;

  switch (cfg->format) {
  case SPMV_FMT_CSR_SCALAR:
  case SPMV_FMT_ELLR_T:
    w = x->w_warp;
    break;
  case SPMV_FMT_CSR_VECTOR:
    w = x->w_vec;
    break;
  case SPMV_FMT_ELL:
    w = x->w_ell;
    break;
  case SPMV_FMT_SELL:
    w = x->w_sell;
    break;
  case SPMV_FMT_HYB:
    w = x->w_hyb;
    break;
  default:
    break;
  }
  phi[0] = 1;
  phi[1] = x->rows;
  /* Up to one wave of the device's threads more rows are more threads
   * running side by side, not more time, for the kernels that give a row
   * its own threads. */
  if (threads > 0 &&
      (per_row_thread(cfg->format) || cfg->format == SPMV_FMT_HYB ||
       cfg->format == SPMV_FMT_CSR_ADAPTIVE))
    phi[1] = x->rows > threads ? x->rows - threads : 0;
  phi[2] = x->nnz;
  phi[3] = w;
  /* A thread of HYB's ELL kernel steps through hyb_k entries at most. */
  phi[4] = cfg->format == SPMV_FMT_HYB ? x->hyb_k : x->rl_max;
  /* csr-adaptive gives a row of length L 2^k lanes, the fewest that
   * leave each lane 8 entries (kernels/csr_adaptive.c), so its longest
   * row's path grows with the reduction's log2 steps, not with L (the
   * steps themselves, ceil(L / 2^k) + k, fit worse than either). */
  if (cfg->format == SPMV_FMT_CSR_ADAPTIVE)
    phi[4] = log2(1 + x->rl_max);
  phi[5] = sect;
  /* A second kernel: HYB's COO part when there is one; csr-stream's sum of
   * the chunks of rows longer than a block holds. */
  phi[6] = 0;
  /* hyb's COO part, past its two launches, costs more with its entries
   * long before their count shows in the entries' term: a step that grows
   * by a twentieth of itself for each doubling of them, where one step
   * for all took the calibration's thousands of entries and put matrices
   * of a few far over their time. */
  if (cfg->format == SPMV_FMT_HYB && x->hyb_coo > 0)
    phi[6] = 1 + 0.05 * log2(1 + x->hyb_coo);
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16) {
    cap = (double)(cfg->bs > 0 ? cfg->bs : SPMV_STREAM_BS) *
          (double)(cfg->param > 0 ? cfg->param : SPMV_STREAM_K);
    phi[6] = x->rl_max > cap ? 1 : 0;
  }
  /* csr-scalar's lanes past the L1.  A lane keeps a line of its row's
   * values and one of its columns while it walks them (the kernel reads
   * them through the L1: spmv_keep_entries); once a row spans a line and
   * the resident lanes' lines overflow the L1, a line is gone before its
   * lane comes back, and a near-diagonal matrix loses what its few x
   * sectors saved: the entries whose x costs nothing (nnz - sectors),
   * times the share of the lanes beyond the L1. */
  if (cfg->format == SPMV_FMT_CSR_SCALAR &&
      x->nnz >= SCALAR_LINE_ROW * x->rows && share > SCALAR_L1_OCC &&
      x->nnz > x->sectors)
    phi[6] = (1 - SCALAR_L1_OCC / share) * (x->nnz - x->sectors);
  /* ellr-t's longest row from DRAM.  A thread walks its row alone, one
   * step after another, through an interleaved layout padded to the
   * longest row (as ELL's, rows x rl_max slots, about the CSR's bytes
   * times w_ell / nnz); once that layout outgrows what the L2 keeps of
   * data it only reads (dram_path), a growing share of the steps waits on
   * DRAM, which a skewed matrix's few long rows make it wait for. */
  if (cfg->format == SPMV_FMT_ELLR_T && x->nnz > 0)
    phi[6] = dram_path(x->bytes * x->w_ell / x->nnz, l2_bytes, x->rl_max);
  /* jad's longest row from DRAM, as ellr-t's; its layout has no padding,
   * so it is the CSR's bytes.  Four diagonals at a time (the kernel since
   * SPMV_KERNEL_VERSION 11), a thread still waits on its entries once for
   * each four. */
  if (cfg->format == SPMV_FMT_JAD)
    phi[6] = dram_path(x->bytes, l2_bytes, x->rl_max);
  phi[7] = cfg->format == SPMV_FMT_HYB ? x->hyb_coo : 0;
  /* A thread per row, or csr-adaptive's blocks of rows in row order: each
   * warp keeps the x of its 32 rows in the L1, and the more warps share an
   * SM the less of it stays.  Near-diagonal columns keep few sectors a
   * warp; FEM matrices' rows of far-apart nodes keep many, however few
   * each row touches, which the per-row count cannot see. */
  if (per_row_thread(cfg->format) || cfg->format == SPMV_FMT_CSR_ADAPTIVE)
    phi[7] = share * x->x_warp;
  /* csr-stream's blocks and coo's threads walk rows in order over entries
   * laid side by side, so neighbouring rows' x comes from the sectors a
   * group of them shares, whatever the device's occupancy: x_warp as it
   * is. */
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16 || cfg->format == SPMV_FMT_COO)
    phi[7] = x->x_warp;
  /* jad's warps, of rows by length: x once a warp, as it would come were
   * it kept for the warp's life; the occupancy weight of the thread per
   * row does not fit jad. */
  if (cfg->format == SPMV_FMT_JAD)
    phi[7] = x->x_warp_jad;
  /* Beyond the L2, a growing share of x's sectors comes from DRAM. */
  phi[8] = l2_bytes > 0 && x->bytes > l2_bytes
               ? (1 - l2_bytes / x->bytes) * sect
               : 0;
  /* The longest warp of a launch with few warps: its steps wait on the
   * sectors its lanes load, one step after another: x's, or for
   * csr-scalar, whose lanes' entries lie a row apart, its own entries. */
  phi[9] = 0;
  if (cfg->format == SPMV_FMT_JAD)
    phi[9] = x->path_x_jad;
  else if (cfg->format == SPMV_FMT_CSR_SCALAR)
    phi[9] = x->path_m;
  else if (per_row_thread(cfg->format))
    phi[9] = x->path_x;
  /* The more of the device's threads the rows occupy, the more warps share
   * an SM's L1 and the less a gathered sector stays there for the next
   * step: x's sectors weighted by that occupancy (1 at a full device). */
  lanes = cfg->format == SPMV_FMT_CSR_VECTOR && cfg->tpr > 0 ? cfg->tpr : 1;
  occ = threads > 0 ? x->rows * lanes / threads : 0;
  phi[10] = (occ < 1 ? occ : 1) * sect;
  /* csr-scalar past the L2's cliff.  Its lanes walk their rows side by
   * side, so a product sweeps the whole matrix before it reads any line
   * again, and once the matrix outgrows what the L2 keeps of it the lines
   * all come from DRAM: the time of a step jumps, where the share of the
   * matrix beyond the L2 grows smoothly.  Its warp work and its longest
   * row, each times that step (scalar_cliff), in place of x's sectors
   * from DRAM and the occupancy-weighted sectors. */
  if (cfg->format == SPMV_FMT_CSR_SCALAR) {
    double r = scalar_cliff(x->bytes, l2_bytes);

    phi[8] = r * x->w_warp;
    phi[10] = r * x->rl_max;
  }
  /* csr-stream's sums.  A row block's rows are summed by groups of lanes
   * in rounds, so one long row among many short ones holds its warp for
   * ceil(len / TPR) steps at a TPR of 1 or 2: the blocks' steps in all
   * (w_stream) and along the slowest block, which a launch of one wave
   * waits for (path_stream).  No other term sees a block's shape. */
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16) {
    phi[3] = x->w_stream;
    phi[9] = x->path_stream;
    /* A block of more rows than its groups of lanes sums them in rounds,
     * each a pass of every lane over the staged products, so a block of
     * 512 one-entry rows takes four.  The block with the most rounds
     * (path_rounds) takes the slot of x's sectors, which stay in the
     * occupancy-weighted term (phi[10], the same count once the rows fill
     * the device); a term of its own fits as well but lets a leaf's line
     * swing wide. */
    phi[5] = x->path_rounds;
  }
  /* hyb's ELL part is a thread per row as ell's is, each warp keeping the
   * x of its 32 rows in the L1, so it gets their term, x_warp times the
   * share of the device's threads the rows occupy, in its path slot (its
   * own slot of that term holds the COO part's entries). */
  if (cfg->format == SPMV_FMT_HYB)
    phi[9] = share * x->x_warp;
}

/* The term of format cfg's basis that only some calibrations' points
 * carry, and the term its share is taken of (leaf_fit's guard), or -1:
 * csr-scalar's L1 term of the entries, ellr-t's and jad's DRAM paths of
 * the longest row. */
int spmvd_predict_guarded_term(const struct spmv_config *cfg, int *ref)
{
  *ref = 2;
  if (cfg->format == SPMV_FMT_CSR_SCALAR)
    return 6;
  if (cfg->format == SPMV_FMT_ELLR_T || cfg->format == SPMV_FMT_JAD) {
    *ref = 4;
    return 6;
  }
  return -1;
}

/* The busiest SM's blocks against an even spread (spmvd_predict.h). */
double spmvd_predict_block_share(const struct spmv_config *cfg, double rows,
                                 double sms)
{
  double b;

  if (cfg->bs <= 0 || !(sms > 0) || !(rows > 0))
    return 1;
  b = ceil(rows / cfg->bs);
  return ceil(b / sms) * sms / b;
}

/*
 * The terms of fit f at features x.  csr-scalar's lanes walk a row each,
 * so every load of a warp asks its SM's L1 for 32 sectors, and a launch
 * of f32 values waits for its busiest SM: its throughput terms (entries,
 * warp work, sectors, the L1 term, x per warp) are the busiest SM's,
 * the device's totals times the block share.  Over 8-byte values the
 * totals fit better, and they stay.  The past-the-cliff warp work stays
 * a total in either: DRAM is the device's.
 */
void spmvd_predict_fit_terms(const struct spmvd_fit *f,
                             const struct spmv_config *cfg,
                             const struct spmvd_pfeat *x,
                             double phi[SPMVD_WORK_TERMS])
{
  double q;

  spmvd_predict_work_basis(cfg, f->l2_bytes, f->threads, x, phi);
  if (cfg->format != SPMV_FMT_CSR_SCALAR || f->value_bytes != 4)
    return;
  q = spmvd_predict_block_share(cfg, x->rows, f->sms);
  /* With no SM holding two blocks the launch waits for the heaviest one,
   * which an even share misses where the blocks differ: one block of a
   * matrix may hold nearly half its entries. */
  if (cfg->bs == SPMVD_FEAT_BLOCK && x->w_block > 0 &&
      x->w_warp > 0 && ceil(x->rows / cfg->bs) <= f->sms)
    q = f->sms * x->w_block / x->w_warp;
  phi[2] *= q;
  phi[3] *= q;
  phi[5] *= q;
  phi[6] *= q;
  phi[7] *= q;
}
