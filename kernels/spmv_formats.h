/* spmv_formats.h: storage formats, launch configurations and their layouts. */
#ifndef SPMV_FORMATS_H
#define SPMV_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The storage formats and their launch configurations.  The
 * numbers are stored in the cache: append, never renumber.
 */
enum spmv_format {
  SPMV_FMT_CSR_SCALAR = 0,   /* one thread per row */
  SPMV_FMT_CSR_VECTOR = 1,   /* TPR threads per row */
  SPMV_FMT_CSR_ADAPTIVE = 2, /* rows binned by length, TPR = 2^k per bin */
  SPMV_FMT_ELL = 3,          /* ELLPACK, column-major, padded */
  SPMV_FMT_ELLR_T = 4,       /* ELLPACK-R with T threads per row */
  SPMV_FMT_COO = 5,          /* segmented reduction over entries */
  SPMV_FMT_HYB = 6,          /* ELL up to K + COO for the rest */
  SPMV_FMT_DIA = 7,          /* stored diagonals */
  SPMV_FMT_JAD = 8,          /* jagged diagonals */
  SPMV_FMT_SELL = 9,         /* sliced ELL, SELL-C-sigma */
  SPMV_FMT_CSR_MERGE = 10,   /* merge-path CSR */
  SPMV_FMT_CUSPARSE = 11,    /* the vendor's cusparseSpMV (CSR, sliced ELL, BSR) */
  SPMV_FMT_SELL16 = 12,      /* sell with 16-bit column offsets from a row base */
  SPMV_FMT_CSR16 = 13,       /* csr-vector with 16-bit column offsets from a row base */
  SPMV_FMT_CSR_STREAM = 14,  /* CSR in row blocks of equal entry counts, staged in shared memory */
  SPMV_FMT_CSR_STREAM16 = 15, /* csr-stream with 16-bit column offsets from a block base */
  SPMV_FMT_CSR_PANEL = 16,   /* CSR cut into column panels, each panel's x in shared memory */
  SPMV_FMT_COUNT
};

/* Returns the format's name as users write it ("ellr-t"), or NULL. */
const char *spmv_format_name(enum spmv_format f);
/* Parses a name from spmv_format_name(); returns 0 or SPMV_EFORMAT. */
int spmv_format_parse(const char *name, enum spmv_format *out);

/*
 * A launch configuration.  Fields a format does not use are 0.  The CPU
 * reference ignores bs and tpr except where they shape the layout (ellr-t's
 * T, sell's C and sigma, csr-adaptive's bins).
 */
struct spmv_config {
  enum spmv_format format;
  int bs;     /* threads per block (GPU) */
  int tpr;    /* threads per row: csr-vector, csr16 and csr-panel TPR,
                 ellr-t T, csr-adaptive max TPR */
  int param;  /* hyb: K (0 = from the histogram); sell, sell16: C; csr-adaptive: base
                 length (0 = 8); cusparse: algorithm (enum
                 spmv_cusparse_alg); csr-stream: entries per thread (0 = 4);
                 csr-panel: columns per panel (0 = SPMV_PANEL_WIDTH) */
  int param2; /* sell, sell16: sigma, the sorting window in rows (1 = no sorting) */
};

/* The cusparse format's algorithms, its configuration's param ("cusparse
 * alg=3"): each a cuSPARSE matrix format and cusparseSpMV algorithm. */
enum spmv_cusparse_alg {
  SPMV_CUSPARSE_CSR_ALG1 = 1, /* CSR, CUSPARSE_SPMV_CSR_ALG1 after preprocessing */
  SPMV_CUSPARSE_CSR_ALG2 = 2, /* CSR, CUSPARSE_SPMV_CSR_ALG2 (merge-based) */
  SPMV_CUSPARSE_SELL = 3,     /* sliced ELL, CUSPARSE_SPMV_SELL_ALG1 */
  SPMV_CUSPARSE_BSR = 4,      /* BSR, CUSPARSE_SPMV_BSR_ALG1 (cuSPARSE 12.6) */
  SPMV_CUSPARSE_NALGS = 4
};

/* Whether cusparse algorithm alg runs on the typed CSR: ALG1 and ALG2, and
 * the numbers that are none of the four (refused when the GPU prepares
 * them, so that a layout never is of an unknown shape). */
static inline int spmv_cusparse_alg_csr(int alg)
{
  return alg != SPMV_CUSPARSE_SELL && alg != SPMV_CUSPARSE_BSR;
}

/* Whether a and b are the same configuration, field by field. */
int spmv_config_equal(const struct spmv_config *a, const struct spmv_config *b);
/* Writes "ellr-t bs=256 t=4" style text; returns what snprintf returns. */
int spmv_config_format(const struct spmv_config *c, char *buf, size_t n);
/* Parses the text of spmv_config_format(); returns 0 or SPMV_EINVAL. */
int spmv_config_parse(const char *text, struct spmv_config *c,
                      struct spmv_error *err);

/*
 * What the layout of c depends on: c with its launch-only fields set to
 * fixed values (BS 256 except for csr-stream(16), whose blocks are cut for
 * its BS; csr-vector as csr-scalar), so that configurations with the same
 * key can share one converted layout.
 */
struct spmv_config spmv_config_layout_key(const struct spmv_config *c);

/* Bounds that a conversion must respect instead of allocating without limit. */
struct spmv_limits {
  size_t max_bytes;      /* the layout's arrays together; 0 = no bound */
  int64_t max_diags;     /* DIA: stored diagonals; 0 = no bound */
  double max_fill;       /* ELL, DIA: stored / real entries; 0 = no bound */
};

/*
 * Layouts.  Every value array ("val") holds values of the layout's dtype
 * (float or double).  Padding entries have column -1 and value 0.  "pitch"
 * is a row count rounded up to a multiple of 32 so that warps read aligned,
 * coalesced addresses.
 */

/* csr-scalar, csr-vector, csr-merge, cusparse ALG1 and ALG2: CSR with typed
 * values.
 * Exactly one of row_ptr32 / row_ptr64 is set: 32-bit when nnz < 2^31.
 * csr16 stores no col: the column of entry k of row i is base[i] +
 * col16[k], 2 bytes per entry instead of 4, where every row spans at most
 * SPMV_SELL16_MAX_SPAN columns. */
struct spmv_csr_layout {
  int32_t *row_ptr32;
  int64_t *row_ptr64;
  int32_t *col;
  void *val;
  int32_t *base;     /* csr16: rows: the row's smallest column (0 when empty) */
  uint16_t *col16;   /* csr16: nnz */
};

/* Entry offset i of C (row i starts there), from whichever of row_ptr32
 * and row_ptr64 is set; inline, for the references' and the cpu backend's
 * row loops. */
static inline int64_t spmv_csr_layout_offset(const struct spmv_csr_layout *C,
                                             int64_t i)
{
  return C->row_ptr32 != NULL ? C->row_ptr32[i] : C->row_ptr64[i];
}

/*
 * csr-adaptive (Gropp & Guo TPR_A, I and II), on the CSR above.  Bin k
 * (k = 0 .. nbins-1) holds the rows with length in (base*2^(k-1), base*2^k]
 * (bin 0: [0, base]) and is processed with TPR = 2^k threads per row.  Rows
 * longer than base*2^(nbins-1) are split in chunks of at most chunk_len
 * entries; each chunk is summed on its own into partial[c] and a second step
 * adds the chunks of each long row (the reference in chunk order, the GPU
 * a warp per row: both in an order fixed by the layout).
 */
#define SPMV_ADAPTIVE_MAX_BINS 16
struct spmv_adaptive_layout {
  struct spmv_csr_layout csr;
  int base;                        /* bin 0's longest row, 8 by default */
  int nbins;                       /* log2(max TPR) + 1 */
  int64_t bin_start[SPMV_ADAPTIVE_MAX_BINS + 1]; /* bin k: rows[bin_start[k] .. bin_start[k+1]) */
  int32_t *rows;                   /* short rows grouped by bin, ascending within a bin */
  int64_t nlong;                   /* rows split over chunks */
  int32_t *long_rows;              /* nlong row indices */
  int64_t *long_chunk;             /* nlong + 1: chunks of long row r are long_chunk[r] .. long_chunk[r+1] */
  int64_t chunk_len;               /* entries per chunk */
  int64_t nchunks;
};

/*
 * csr-stream, on the CSR above: rows cut, in order, into blocks of at most
 * cap = BS*k entries and cap rows, one thread block each, which stages the
 * products of its entries in shared memory with coalesced loads and then
 * sums each row there (nonzero-balanced like csr-merge, with the cut made
 * once at conversion instead of searched at every product).  Rows longer
 * than cap are long rows, in no block: split in chunks of chunk_len
 * entries summed on their own and added by a second step (as
 * csr-adaptive's).  Block b covers rows blk_row[2b] .. blk_row[2b+1]-1
 * and entries blk_ent[2b] .. blk_ent[2b+1]-1, stored so that a block
 * starts its loads after one step instead of three.
 * csr-stream16 stores no col: the column of an entry of block b is
 * blk_base[b] + col16[entry], of chunk c chunk_base[c] + col16[entry],
 * where every block and chunk spans at most SPMV_SELL16_MAX_SPAN columns.
 */
struct spmv_stream_layout {
  struct spmv_csr_layout csr;
  int k;                 /* entries per thread */
  int bs;                /* threads per block the cut was made for */
  int64_t cap;           /* bs * k */
  int64_t nblocks;
  int32_t *blk_row;      /* 2 * nblocks: first row, row past the last */
  int64_t *blk_ent;      /* 2 * nblocks: first entry, entry past the last */
  int64_t nlong;
  int32_t *long_rows;    /* nlong */
  int64_t *long_chunk;   /* nlong + 1, as in spmv_adaptive_layout */
  int64_t chunk_len;
  int64_t nchunks;
  int32_t *blk_base;     /* csr-stream16: nblocks, the block's smallest column */
  int32_t *chunk_base;   /* csr-stream16: nchunks, the chunk's smallest column */
  int sparse;            /* at least SPMV_STREAM_SPARSE of the rows empty */
};

/* csr-stream's defaults and bounds: k when the configuration leaves it 0,
 * BS when it leaves that 0 (the CPU backend), and the shared memory a
 * block's cap of values and row ends (4 bytes each) may take: the default
 * per-block limit. */
#define SPMV_STREAM_K 4
#define SPMV_STREAM_BS 256
#define SPMV_STREAM_MAX_K 16
#define SPMV_STREAM_SHMEM (48 * 1024)
/* Whether csr-stream's GPU kernel stages whole aligned 4-entry vectors of
 * products: f32 at k 16, and at k 8 with 16-bit columns (narrow,
 * csr-stream16), where that pays for its cost (csr_stream_gpu.cu).  A
 * block's first entry then sits up to 3 slots in. */
#define SPMV_STREAM_WHOLE(k, dsize, narrow) \
  ((dsize) == 4 && ((k) >= 16 || ((k) == 8 && (narrow))))
/* The shared memory of one csr-stream block: bs * k values and row ends,
 * and one vector (16 bytes) more where it stages whole vectors. */
static inline size_t spmv_stream_shmem(int bs, int k, size_t dsize, int narrow)
{
  return (size_t)bs * (size_t)k * (dsize + 4) +
         (SPMV_STREAM_WHOLE(k, dsize, narrow) ? 16 : 0);
}
/* The share of empty rows from which the GPU kernel lists a block's
 * nonempty rows before summing them (csr_stream_gpu.cu). */
#define SPMV_STREAM_SPARSE 0.125

/*
 * csr-panel: the columns cut into panels of `width` (a power of two);
 * a GPU block copies one panel's slice of x into shared memory and
 * gathers from there, so that x's random reads leave the L2 (a row of
 * thousands of entries over millions of columns otherwise reads a 32-byte
 * sector of x per entry).  csr holds a CSR of npanels * rows row slots,
 * panel-major: slot p * rows + i has row i's entries in columns
 * [p * width, (p + 1) * width), as 16-bit offsets col16 from p * width,
 * in the row's order (col stays NULL).  A row's result is the sum of its
 * panels' sums (the GPU keeps them in scratch when there are several
 * panels, then adds them).  Refused where the panels would hold under
 * half an entry per slot (SPMV_ETOOBIG).
 */
struct spmv_panel_layout {
  struct spmv_csr_layout csr;
  int64_t width;
  int64_t npanels;
};
#define SPMV_PANEL_WIDTH 8192
#define SPMV_PANEL_MIN_WIDTH 1024
#define SPMV_PANEL_MAX_WIDTH 65536
/* The most shared memory a panel's x may take: what an H100's or H200's
 * block can opt into (227 KB) holds it with room to spare. */
#define SPMV_PANEL_SHMEM (128 * 1024)

/* The most row slots per entry csr-panel takes with several panels (it
 * refuses sparser panels, SPMV_ETOOBIG: they would read more offsets
 * than entries). */
#define SPMV_PANEL_MAX_SLOTS_PER_ENTRY 2

/* Panels of width columns over cols columns (1 when there are none). */
static inline int64_t spmv_panel_count(int64_t cols, int64_t width)
{
  return cols > 0 ? (cols + width - 1) / width : 1;
}

/* log2 of a panel width (a power of two): column c is in panel
 * c >> shift. */
static inline int spmv_panel_shift(int64_t width)
{
  int shift = 0;

  while (((int64_t)1 << shift) < width)
    shift++;
  return shift;
}

/* ell: entry k of row i at col[k * pitch + i]; width = longest row. */
struct spmv_ell_layout {
  int64_t width;
  int64_t pitch;
  int32_t *col;  /* width * pitch */
  void *val;     /* width * pitch */
};

/*
 * ellr-t (ELLPACK-R, Vázquez et al.): T threads per row.  Entry j of row i
 * lies at (j / T) * (pitch * T) + i * T + (j % T), so that at every
 * iteration a warp reads consecutive addresses.  Thread t of row i walks
 * j = t, t+T, ... below rl[i]: padding is never read.
 */
struct spmv_ellr_layout {
  int t;          /* threads per row: 1, 2, 4, 8, 16, 32 */
  int64_t iters;  /* ceil(longest row / T) */
  int64_t pitch;
  int32_t *rl;    /* rows: the true length of each row */
  int32_t *col;   /* iters * pitch * T */
  void *val;      /* iters * pitch * T */
};

/* coo: entries in row-major order, rows ascending. */
struct spmv_coo_layout {
  int32_t *row;
  int32_t *col;
  void *val;
};

/* hyb: the first K entries of each row in ELL, the rest in COO. */
struct spmv_hyb_layout {
  int64_t k;
  struct spmv_ell_layout ell;    /* width = k */
  int64_t coo_nnz;
  struct spmv_coo_layout coo;
};

/* dia: diagonal d (column - row = offsets[d], ascending) at val[d * pitch + i]
 * for row i; positions outside the matrix hold 0. */
struct spmv_dia_layout {
  int64_t ndiags;
  int64_t pitch;
  int32_t *offsets;  /* ndiags */
  void *val;         /* ndiags * pitch */
};

/*
 * jad: rows sorted by decreasing length (stable); perm[k] is the original
 * row of the k-th longest.  Jagged diagonal d holds entry d of rows
 * perm[0 .. n_d), at jd_ptr[d] + k.
 */
struct spmv_jad_layout {
  int64_t njd;       /* longest row */
  int32_t *perm;     /* rows */
  int64_t *jd_ptr;   /* njd + 1 */
  int32_t *col;      /* nnz */
  void *val;         /* nnz */
};

/*
 * sell (SELL-C-sigma): within windows of sigma rows, rows are sorted by
 * decreasing length; then slices of C consecutive (sorted) rows are stored
 * column-major: entry k of lane l of slice s at slice_ptr[s] + k * C + l.
 * perm[s * C + l] is the original row (-1 past the last row).
 */
struct spmv_sell_layout {
  int c;
  int sigma;
  int64_t nslices;
  int32_t *perm;        /* nslices * C */
  int64_t *slice_ptr;   /* nslices + 1 */
  int32_t *slice_width; /* nslices */
  int32_t *col;         /* sell only (NULL in sell16) */
  void *val;
  /* sell16 only (NULL in sell): the column of entry k of lane l is
   * base[s * C + l] + col16[...]; padding holds SPMV_SELL16_PAD.  Two bytes
   * per entry instead of four, for rows that span few columns. */
  int32_t *base;        /* nslices * C: the lane's smallest column */
  uint16_t *col16;
};

/* sell16's padding offset, and the widest column span (largest minus
 * smallest column) of a row that sell16 and csr16 can store (of a block or
 * chunk in csr-stream16). */
#define SPMV_SELL16_PAD 0xFFFFu
#define SPMV_SELL16_MAX_SPAN 65534

/* The widest column span of A's rows (0 for empty rows); sell16 and csr16
 * take A when it is at most SPMV_SELL16_MAX_SPAN. */
int64_t spmv_csr_max_row_span(const struct spmv_csr *A);

/*
 * cusparse alg=3, cuSPARSE's sliced ELL as its storage-formats page
 * defines it: the rows in their own order in slices of
 * SPMV_CUSPARSE_SLICE, slice s of rows s*C .. s*C+C-1 padded to its
 * longest row and stored column-major from slice_ptr[s]: entry k of row
 * s*C + l at slice_ptr[s] + k*C + l.  Pads, past a row's length and in
 * the last slice's lanes past the last row, hold cuSPARSE's sentinel
 * column -1 and value 0.  A matrix of rows but no entries keeps slices one
 * pad wide, so that cuSPARSE is never given empty arrays.  32-bit offsets
 * and columns, as cuSPARSE takes them alike (the layout refuses more than
 * 2^31 - 1 slots).
 */
#define SPMV_CUSPARSE_SLICE 32
struct spmv_csell_layout {
  int64_t nslices;
  int64_t slots;        /* slice_ptr[nslices], kept for the device copy */
  int32_t *slice_ptr;   /* nslices + 1 */
  int32_t *col;         /* slots */
  void *val;            /* slots */
};

/* The slots of A's cusparse alg=3 layout: each slice's longest row times
 * SPMV_CUSPARSE_SLICE, summed (0 for no rows). */
int64_t spmv_csell_slots(const struct spmv_csr *A);

/*
 * cusparse alg=4, block sparse rows (cusparseCreateBsr, CUSPARSE_ORDER_ROW)
 * of b x b blocks, b from spmv_bsr_dim(): block row R (rows R*b ..
 * R*b+b-1) holds blocks row_ptr[R] .. row_ptr[R+1]-1 with block columns
 * col[] ascending; entry (r, c) of block k (row R*b + r, column col[k]*b +
 * c) at val[k*b*b + r*b + c].  A's entries are summed into their slots
 * (duplicates in their order), the other slots hold 0.  32-bit offsets and
 * block columns (the layout refuses more than 2^31 - 1 values).
 */
struct spmv_bsr_layout {
  int b;
  int64_t brows, bcols, nblocks;
  int32_t *row_ptr;     /* brows + 1 */
  int32_t *col;         /* nblocks */
  void *val;            /* nblocks * b * b */
};

/* The block dimensions spmv_bsr_dim() weighs, and the most values it lets
 * a BSR store per entry of A: more and the blocks are mostly zeros, which
 * cost the product what they save of its column indices. */
#define SPMV_BSR_MIN_DIM 2
#define SPMV_BSR_MAX_DIM 8
#define SPMV_BSR_MAX_FILL 1.5

/*
 * The block dimension of A's BSR: among SPMV_BSR_MIN_DIM ..
 * SPMV_BSR_MAX_DIM dividing both rows and cols, the one whose blocks store
 * the fewest values (the larger on ties: fewer block columns), if those
 * are at most SPMV_BSR_MAX_FILL times nnz; else 0 (so also for a matrix
 * without entries); SPMV_ENOMEM when its scratch (4 bytes a column pair)
 * cannot be had.  *nblocks, when not NULL, receives the block count.
 * Reads row_ptr and col_idx only; O(nnz) a dimension, each stopping once
 * its count passes the bound.
 */
int spmv_bsr_dim(const struct spmv_csr *A, int64_t *nblocks);

/* A matrix converted to one configuration's layout. */
struct spmv_layout {
  struct spmv_config cfg;
  enum spmv_dtype dtype;
  int64_t rows, cols, nnz;
  size_t bytes;  /* the arrays together */
  int shell;     /* the entries' arrays are left for the GPU to fill
                    (spmv_layout_new_shell) */
  union {
    struct spmv_csr_layout csr;
    struct spmv_adaptive_layout adaptive;
    struct spmv_ell_layout ell;
    struct spmv_ellr_layout ellr;
    struct spmv_coo_layout coo;
    struct spmv_hyb_layout hyb;
    struct spmv_dia_layout dia;
    struct spmv_jad_layout jad;
    struct spmv_sell_layout sell;
    struct spmv_stream_layout stream;
    struct spmv_panel_layout panel;
    struct spmv_csell_layout csell;  /* cusparse alg=3 */
    struct spmv_bsr_layout bsr;      /* cusparse alg=4 */
  } u;
};

/*
 * Converts a valid CSR to the layout of cfg with values of type dt.  lim may
 * be NULL (no bounds).  A conversion refuses what would not fit with
 * SPMV_ETOOBIG and a message naming the bound (e.g. "DIA needs 5123
 * diagonals, limit 1024").  On success *out is a new layout owned by the
 * caller.
 */
int spmv_layout_new(const struct spmv_csr *A, enum spmv_dtype dt,
                    const struct spmv_config *cfg,
                    const struct spmv_limits *lim, struct spmv_layout **out,
                    struct spmv_error *err);

/*
 * spmv_layout_new() (shell 0) or spmv_layout_new_shell() (shell 1) for a
 * CSR that has passed spmv_csr_validate() (with any flags, or the same
 * check in parallel, spmv_par_validate) and not changed since: its entries
 * are not checked again, a pass over the whole matrix on one core that
 * every conversion of a load would otherwise repeat.
 */
int spmv_layout_new_valid(const struct spmv_csr *A, enum spmv_dtype dt,
                          const struct spmv_config *cfg,
                          const struct spmv_limits *lim, int shell,
                          struct spmv_layout **out, struct spmv_error *err);

/* Whether format f's layout can be completed by a GPU from the CSR itself
 * (spmv_layout_new_shell): every format but csr-panel. */
int spmv_layout_shell_ok(enum spmv_format f);

/*
 * As spmv_layout_new(), for a layout the GPU completes: the entries' arrays
 * (columns, values, coo's rows) are left NULL, with L->shell set, for
 * spmv_dev_matrix_new_csr() to fill on the device from A; what needs a
 * look at the whole matrix is built: row offsets and tables, csr16's row
 * bases, sell's slices and sell16's lane bases, ell's width, ellr-t's row
 * lengths, hyb's K, jad's order, dia's offsets, csr-stream16's block
 * and chunk bases, and cusparse's sliced ELL slices and BSR blocks.  Why: converting on the host is most of a load's time.
 * spmv_layout_spmv() refuses a shell.  SPMV_EFORMAT for a format not of
 * spmv_layout_shell_ok().
 */
int spmv_layout_new_shell(const struct spmv_csr *A, enum spmv_dtype dt,
                          const struct spmv_config *cfg,
                          const struct spmv_limits *lim,
                          struct spmv_layout **out, struct spmv_error *err);

/* The typed CSR inside L for the typed-CSR formats of
 * spmv_layout_shell_ok() (cusparse with ALG1 or ALG2 only), else NULL. */
const struct spmv_csr_layout *spmv_layout_typed_csr(const struct spmv_layout *L);

/* Frees a layout and its arrays (NULL is a no-op); returns NULL. */
struct spmv_layout *spmv_layout_free(struct spmv_layout *L);

/*
 * How the GPU worker takes a matrix into the L2 before a run of products
 * (spmv_dev_matrix_warm_l2), by one product's working set: array_bytes of
 * matrix arrays, x of cols values and y of rows values of type dt, in an
 * L2 of l2_bytes (0: unknown, never).
 *  - READ within half the L2: one word of each 32-byte sector.
 *  - WRITE within SPMV_L2_WRITE_SHARE of it: every 16 bytes read and
 *    stored back unchanged.  A working set over half the L2 keeps none
 *    of what reads bring (each half of the L2 keeps its own copy of
 *    lines that far SMs read), while written lines stay.  The values never
 *    change, so a product reading them meanwhile reads the same numbers;
 *    the cost is the dirty lines' write-back, paid once by what follows.
 *  - NONE beyond: the kernels stream the matrix.
 */
enum spmv_l2_warm {
  SPMV_L2_WARM_NONE = 0,
  SPMV_L2_WARM_READ = 1,
  SPMV_L2_WARM_WRITE = 2
};
#define SPMV_L2_WRITE_SHARE 0.9
enum spmv_l2_warm spmv_l2_warm_mode(size_t array_bytes, int64_t rows,
                                    int64_t cols, enum spmv_dtype dt,
                                    size_t l2_bytes);

/*
 * Whether the worker takes a matrix of warm-up mode `mode` (READ or
 * WRITE) into the L2 before a request of nvec products, when `run`
 * products of it have run in a row just before (0: another matrix's ran
 * last): only once the matrix is reused (run + nvec >= 2).  A warm-up
 * costs more than a product and pays back only over several; before a
 * matrix's first product it slows a client that alternates matrices
 * product by product at every switch, while before the second its cost
 * is all but hidden and its gain kept.  Never for nvec <= 0.
 */
int spmv_l2_warm_now(enum spmv_l2_warm mode, int64_t run, int nvec);

/*
 * The CPU reference over that very layout: y = alpha*A*x + beta*y with x
 * and y of the layout's dtype, arithmetic in that dtype.  When beta == 0, y
 * is not read.  cusparse walks its CSR like csr-scalar, its sliced ELL and
 * BSR a row at a time in their slots' order.  Returns 0, or
 * SPMV_EFORMAT for a layout that was not made by spmv_layout_new() (a
 * shell included).
 */
int spmv_layout_spmv(const struct spmv_layout *L, double alpha,
                     const void *x, double beta, void *y);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_FORMATS_H */
