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

/* csr-scalar's L1 term: the share of a full SM's lanes whose two lines
 * fit the L1, and the mean row length from which a lane's row spans a
 * line of its 4-byte columns (and so of its values, in either type).
 * Replayed on calib-points-h100-v59-f64 against eval-h100-v57..v59,
 * csr-scalar's f64 error fell from 7.0-7.4 to 6.2-6.6 % with rows of 32
 * against 16 (6.4-6.8 at 20, 7.2-7.5 at 48); f32's moved by 0.1 at most
 * (calib-points-h100-v52).  On the live calibrations' points of two H200
 * evaluations (calib-points-h200-v93, v94) and the H100's v77, v81 and
 * v87, csr-scalar's replayed error fell 0.1-0.3 points on every one of
 * the nine tables with the share from 0.32 against 0.4 (v94 f64 4.6 ->
 * 4.5 %, f32 7.9 -> 7.7; v93 f64 5.3 -> 5.1); from 0.25 or 0.2 the
 * H100's f64 rose (eval-h200-v93-v95.md). */
#define SCALAR_L1_OCC 0.32
#define SCALAR_LINE_ROW 32

/* A thread's longest row read from DRAM (ellr-t, jad): rl_max times the
 * share of a layout of lb bytes beyond what the L2 keeps of data it only
 * reads (about half of it: probe-l2-h200.md); 0 without an L2. */
static double dram_path(double lb, double l2_bytes, double rl_max)
{
  double kept = l2_bytes / 2;

  return l2_bytes > 0 && lb > kept ? (1 - kept / lb) * rl_max : 0;
}

/* csr-scalar's L2 cliff: 0 for a layout of lb bytes up to
 * SCALAR_CLIFF_LO of the L2, 1 from SCALAR_CLIFF_HI of it, linear
 * between; 0 without an L2.  On the H100's points of a few warps a SM
 * the step began past 0.6 of the L2 (2703 rows, f64: half way at 0.6),
 * was not yet taken at 0.7 (16220 rows), and was whole by 0.79 and 0.9
 * (calib-points-h100-v79, v81); of the ramps 0.6-0.8, 0.65-0.85 and
 * 0.7-0.9, 0.65-0.85 fitted v79's csr-scalar points best (6.5 against
 * 6.9 and 7.0 %; eval-h100-v79-v81.md). */
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
   * its own threads (replayed on the committed H200 calibration points:
   * csr-adaptive 5.0-5.2 to 4.3-4.7 %, ell f32 -0.5, hyb f64 -0.5 points,
   * no format worse by more than 0.2; eval-h100-v38-v45.md). */
  if (threads > 0 &&
      (per_row_thread(cfg->format) || cfg->format == SPMV_FMT_HYB ||
       cfg->format == SPMV_FMT_CSR_ADAPTIVE))
    phi[1] = x->rows > threads ? x->rows - threads : 0;
  phi[2] = x->nnz;
  phi[3] = w;
  /* A thread of HYB's ELL kernel steps through hyb_k entries at most. */
  phi[4] = cfg->format == SPMV_FMT_HYB ? x->hyb_k : x->rl_max;
  /* csr-adaptive gives a row of length L 2^k lanes, the fewest
   * that leave each lane 8 entries (kernels/csr_adaptive.c), so its
   * longest row's path grows with the reduction's log2 steps, not with L:
   * karate (17 entries a row at most) and dwt_992 (18) ran 9-10 % faster
   * than rl_max predicted, rdb3200l (6) and crack (9) 6-7 % slower.
   * Replayed on the 13 committed H200 tables of kernels 17 with the
   * bootstrap trees, csr-adaptive's mean error was 4.9 % with rl_max and
   * 4.5 % with this (bagging-h200.md); the reduction's steps themselves,
   * ceil(L / 2^k) + k, fitted worse than rl_max. */
  if (cfg->format == SPMV_FMT_CSR_ADAPTIVE)
    phi[4] = log2(1 + x->rl_max);
  phi[5] = sect;
  /* A second kernel: HYB's COO part when there is one; csr-stream's sum of
   * the chunks of rows longer than a block holds. */
  phi[6] = 0;
  /* hyb's COO part, past its two launches, costs more with its
   * entries long before their count does: about 3.8 us over the ELL part
   * for crack's one entry, 5.5 for a calibration point's thousand, 6.5
   * for ten thousand (H200, f32).  A fit with one step for all of them
   * took the points' 5.5-7 us and put crack 25 % over its time, mhd3200b
   * (1584 entries) 16 %.  The step grows by 5 % of itself for each
   * doubling of the entries; replayed on the 13 committed H200 tables of
   * kernels 17 (with the bootstrap trees) hyb's mean error fell from 4.4
   * to 3.8 %, its worst f32 table from 5.2 to 4.7 (bagging-h200.md; 2,
   * 3 and 10 % a doubling left 4.0, 3.9 and 4.1 %, 20 and 40 % 4.4 and
   * 4.8, the log as a term of its own in the sectors' place 4.0). */
  if (cfg->format == SPMV_FMT_HYB && x->hyb_coo > 0)
    phi[6] = 1 + 0.05 * log2(1 + x->hyb_coo);
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16) {
    cap = (double)(cfg->bs > 0 ? cfg->bs : SPMV_STREAM_BS) *
          (double)(cfg->param > 0 ? cfg->param : SPMV_STREAM_K);
    phi[6] = x->rl_max > cap ? 1 : 0;
  }
  /* csr-scalar's lanes past the L1.  A lane keeps a line of its
   * row's values and one of its columns while it walks them (the kernel
   * reads them through the L1: spmv_keep_entries); once a row spans a
   * line (16 f64 values) and the resident lanes' lines overflow the L1
   * (about 0.4 of a full SM: 0.4 x 2048 x 2 x 128 bytes is 210 KB), a
   * line is gone before its lane comes back, and a near-diagonal matrix
   * loses what its few x sectors saved.  On the H100 calibration points
   * (calib-points-h100-v46), rows of 270336 near the diagonal ran 5.5 ps
   * an entry at a mean length of 8, 16 ps from 15 up, as fast as random
   * columns; the share of the lanes beyond the L1 times the entries x
   * does not cost (nnz - sectors) took csr-scalar's replayed error from
   * 10.1 to 8.9 % (f64); eval-h100-v46-v49.md. */
  if (cfg->format == SPMV_FMT_CSR_SCALAR &&
      x->nnz >= SCALAR_LINE_ROW * x->rows && share > SCALAR_L1_OCC &&
      x->nnz > x->sectors)
    phi[6] = (1 - SCALAR_L1_OCC / share) * (x->nnz - x->sectors);
  /* ellr-t's longest row from DRAM.  A thread walks its row
   * alone, one step after another, through an interleaved layout padded
   * to the longest row (as ELL's, rows x rl_max slots, about the CSR's
   * bytes times w_ell / nnz); once that layout outgrows what the L2 keeps
   * of data it only reads (dram_path), a growing share of the steps waits
   * on DRAM.  Skewed matrices with a few long
   * rows ran 35-45 % slower than predicted without it (rajat01: 1442
   * steps in 221 us).  Replayed on calib-points-h100-v46 against
   * eval-h100-v46..v48, ellr-t's error fell from 6.0-7.1 to 4.8-5.5 %
   * in all six; against the whole L2 it fell in f64 only, against a third
   * of it f32 rose to 9 % (eval-h100-v46-v49.md). */
  if (cfg->format == SPMV_FMT_ELLR_T && x->nnz > 0)
    phi[6] = dram_path(x->bytes * x->w_ell / x->nnz, l2_bytes, x->rl_max);
  /* jad's longest row from DRAM, as ellr-t's; its
   * layout has no padding, so it is the CSR's bytes.  Four diagonals at a
   * time (the kernel since SPMV_KERNEL_VERSION 11), a thread still waits
   * on its entries once for each four.  On the H100's points of that
   * kernel (calib-points-h100-v50) jad's fit error fell from 3.5 to 3.0 %
   * (f64) and 2.9 to 2.4 % (f32); replayed against eval-h100-v50, timed
   * on another H100, f64 went 4.0 to 4.7 % and f32 5.0 to 4.3; the old
   * kernel's replays fell 10.5 to 9.3 and 10.0 to 8.9 % (eval-h100-v50.md). */
  if (cfg->format == SPMV_FMT_JAD)
    phi[6] = dram_path(x->bytes, l2_bytes, x->rl_max);
  phi[7] = cfg->format == SPMV_FMT_HYB ? x->hyb_coo : 0;
  /* A thread per row, or csr-adaptive's blocks of rows in row order: each
   * warp keeps the x of its 32 rows in the L1, and the more warps share an
   * SM the less of it stays.  Near-diagonal columns keep few sectors a
   * warp; FEM matrices' rows of far-apart nodes keep many, however few
   * each row touches (csr-scalar took pwtk and shipsec1 for near-diagonal
   * ones and ran them 2.2-2.5x slower than predicted; csr-stream's
   * replays did not move: predictor-anchor-h200.md). */
  if (per_row_thread(cfg->format) || cfg->format == SPMV_FMT_CSR_ADAPTIVE)
    phi[7] = share * x->x_warp;
  /* csr-stream's blocks and coo's threads walk rows in order
   * over entries laid side by side, so neighbouring rows' x comes from
   * the sectors a group of them shares, whatever the device's occupancy:
   * x_warp as it is.  Replayed on the H100's points against their
   * evaluations (calib-points-h100-v51 against eval-h100-v51, v52
   * against v52), csr-stream's error fell from 7.0-7.1 to 5.4 and 6.0 %
   * (f64) and from 6.9-7.0 to 5.1 and 5.6 % (f32), its worst matrix from
   * 27-29 to 15-19 %; coo's from 5.9 and 7.7 to 3.4 and 7.6 % (f64), 2.7
   * and 7.5 to 2.2 and 7.2 % (f32).  For csr-vector and csr-merge the
   * same term was mixed (eval-h100-v52.md). */
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16 || cfg->format == SPMV_FMT_COO)
    phi[7] = x->x_warp;
  /* jad's warps, of rows by length: x once a warp, as it would come were
   * it kept for the warp's life (replayed, the occupancy weight fitted
   * f32 worse and f64 no better). */
  if (cfg->format == SPMV_FMT_JAD)
    phi[7] = x->x_warp_jad;
  /* Beyond the L2, a growing share of x's sectors comes from DRAM. */
  phi[8] = l2_bytes > 0 && x->bytes > l2_bytes
               ? (1 - l2_bytes / x->bytes) * sect
               : 0;
  /* The longest warp of a launch with few warps: its steps wait on the
   * sectors its lanes load, one step after another: x's, or csr-scalar's
   * own entries, a row apart for each lane (which fit it better,
   * eval-h200-v25.md). */
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
  /* csr-scalar past the L2's cliff.  Its lanes walk their rows
   * side by side, so a product sweeps the whole matrix before it reads
   * any line again, and once the matrix outgrows what the L2 keeps of
   * it the lines all come from DRAM: on the H100 the time per step of
   * the longest row doubled between 32 and 45 MB and stayed there to
   * 300 MB, where the share of the matrix beyond half the L2 grows
   * smoothly (calib-points-h100-v79).  Its warp work and its
   * longest row, each times that step (scalar_cliff), in place of x's
   * sectors from DRAM and the occupancy-weighted sectors. */
  if (cfg->format == SPMV_FMT_CSR_SCALAR) {
    double r = scalar_cliff(x->bytes, l2_bytes);

    phi[8] = r * x->w_warp;
    phi[10] = r * x->rl_max;
  }
  /* csr-stream's sums.  A row block's rows are summed by groups
   * of lanes in rounds, so one long row among many short ones holds its
   * warp for ceil(len / TPR) steps at a TPR of 1 or 2: the blocks' steps
   * in all (w_stream) and along the slowest block, which a launch of one
   * wave waits for (path_stream).  Without them the work model had no
   * term that sees a block's shape, and ran 9-17 % slow or fast on small
   * irregular matrices (watt_2, rajat19, tols4000, Groebner_id2003_aug).
   * Replayed on the plan's points timed on an H100 against
   * eval-h100-v86, csr-stream's error fell from 5.3 to 4.7 % (f64) and
   * 5.4 to 4.6 % (f32), no other format moved (basis10-replay-h100.md). */
  if (cfg->format == SPMV_FMT_CSR_STREAM ||
      cfg->format == SPMV_FMT_CSR_STREAM16) {
    phi[3] = x->w_stream;
    phi[9] = x->path_stream;
    /* A block of more rows than its groups of lanes sums
     * them in rounds, each a pass of every lane over the staged
     * products, so a block of 512 one-entry rows takes four (Pd,
     * tols4000, zenios, hep-th ran 7-13 % slower than predicted, while
     * blocks of one round ran 5-8 % faster).  The block with the most
     * rounds (path_rounds) takes the slot of x's sectors, which stay in
     * the occupancy-weighted term (phi[10], the same count once the
     * rows fill the device).  Replayed on the 11 committed tables of
     * live and plan calibrations (H200 v93-v95, H100 v77, v81, v87),
     * csr-stream's error fell from 3.9-5.8 to 2.9-4.7 %, on every one;
     * in a twelfth slot of its own it fell as far but fitted a leaf
     * with zenios 107 % high (basis13-replay.md). */
    phi[5] = x->path_rounds;
  }
  /* hyb's ELL part is a thread per row as ell's is, each warp
   * keeping the x of its 32 rows in the L1, so it gets their term, x_warp
   * times the share of the device's threads the rows occupy, in its path
   * slot (its own slot of that term holds the COO part's entries).
   * Replayed on calib-points-h100-v87 against eval-h100-v86..v88, hyb's
   * error fell from 4.0-4.2 to 3.5-3.7 % (f64) and 5.7-6.1 to 4.8-5.1 %
   * (f32), its fit on its own points from 4.1 to 3.7 and 5.1 to 4.5 %
   * (basis10-replay-h100.md). */
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
 * The terms of fit f at features x.  csr-scalar's lanes walk a
 * row each, so every load of a warp asks its SM's L1 for 32 sectors, and
 * a launch of f32 values waits for its busiest SM: on an H200 the paper's
 * FEM twins and the calibration's FEM points of 13517 to 270336 rows ran
 * 380-470 ps a lane-step of the busiest SM's blocks (w_warp x ceil(B /
 * 132) / B), pdb1HYS's 143 blocks, two on 11 SMs, as long as 264 would
 * take, where the device's totals read it 26 % fast.  Its throughput
 * terms times the block share took csr-scalar's replayed error down on
 * all nine f32 tables (H200 v93-v98, v100 6.4 -> 5.4 %, v98 5.7 -> 5.3;
 * H100 v77, v87), and up on six of the eight f64 ones (H100 v77 4.1 ->
 * 6.0 %), so fits of 8-byte values keep the totals
 * (block-share-h200.md).  The past-the-cliff warp work stays a total:
 * DRAM is the device's.
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
  /* With no SM holding two blocks the launch waits for the
   * heaviest one, which an even share misses where blocks differ:
   * Groebner_id2003_aug holds 46 % of its entries in one of its 20
   * blocks.  Replayed on the nine H200 f32 tables (points refeatured),
   * csr-scalar's error fell on eight and held on v94 (v98 5.3 -> 4.6 %,
   * v100 5.4 -> 5.0, v102 4.6 -> 4.3, v104 5.6 -> 5.2; v95 6.4 -> 5.2);
   * Groebner -23.6 -> -9.7 % on v104 (block-share-h200.md). */
  if (cfg->bs == SPMVD_FEAT_BLOCK && x->w_block > 0 &&
      x->w_warp > 0 && ceil(x->rows / cfg->bs) <= f->sms)
    q = f->sms * x->w_block / x->w_warp;
  phi[2] *= q;
  phi[3] *= q;
  phi[5] *= q;
  phi[6] *= q;
  phi[7] *= q;
}
