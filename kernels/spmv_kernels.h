/* spmv_kernels.h: the C interface of the CUDA kernels (the .cu files of kernels/). */
#ifndef SPMV_KERNELS_H
#define SPMV_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "spmv_error.h"
#include "spmv_formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A matrix resident on the GPU: the layout of spmv_layout_new() with every
 * array pointer replaced by a device pointer, a scratch area for the
 * formats that sum in two steps (csr-adaptive, coo, hyb, csr-merge,
 * csr-stream, csr-panel), and
 * the cuSPARSE state of the cusparse format.  Owned by the caller of
 * spmv_dev_matrix_new() and freed by spmv_dev_matrix_free().
 */
#define SPMV_DEV_MAX_ARRAYS 12
struct spmv_dev_matrix {
  struct spmv_layout L;   /* the layout; arrays in device memory */
  void *work;             /* scratch of work_bytes, or NULL */
  size_t work_bytes;
  size_t bytes;           /* device bytes held: arrays + scratch + cuSPARSE */
  struct spmv_cusparse *cs; /* cusparse format only, else NULL */
  int narrays;            /* L's device arrays (views of L's fields) */
  const void *array[SPMV_DEV_MAX_ARRAYS];
  size_t array_bytes[SPMV_DEV_MAX_ARRAYS];
  size_t l2_bytes;        /* the device's L2 at upload */
  /* The device's facts a launch shape needs, read once at upload (0 where
   * the runtime did not answer): its id, SMs, shared memory per SM and
   * the most a block may opt into. */
  int device, sms, smem_per_sm, smem_optin;
};

/* cuSPARSE's library handle with its stream; opaque. */
struct spmv_cusparse_handle;

/*
 * Maps a CUDA error to SPMV_EGPU_STICKY when it leaves the context unusable
 * (illegal address, launch failure, device assert, ...) and SPMV_EGPU
 * otherwise, recording "what: cudaErrorName: description" in err.
 * Returns 0 for cudaSuccess.
 */
int spmv_cuda_error(cudaError_t e, const char *what, struct spmv_error *err);

/*
 * Allocates bytes (at least 1) of device memory into *p, from the current
 * device's default memory pool where it has one (else cudaMalloc); usable
 * from any stream on return.  Running out of GPU memory (after giving the
 * pool's idle memory back once) is SPMV_ENOMEM, "GPU out of memory
 * allocating N bytes for WHAT", with the error cleared so that the context
 * keeps serving; other failures as spmv_cuda_error().  *p is NULL on
 * failure.  Free with spmv_dev_free().
 */
int spmv_dev_alloc(void **p, size_t bytes, const char *what,
                   struct spmv_error *err);

/* Frees p from spmv_dev_alloc() (NULL is a no-op) once the device's work
 * is done, as cudaFree() does; into the pool where there is one. */
void spmv_dev_free(void *p);

/*
 * Copies bytes from host src to device dst and waits until they have
 * landed, so that work on any stream, non-blocking ones included, reads
 * them: a cudaMemcpy from pageable memory may return with its DMA in
 * flight, and non-blocking streams do not wait for the legacy stream it
 * ran on.  0 or spmv_cuda_error() naming what.
 */
int spmv_dev_upload(void *dst, const void *src, size_t bytes, const char *what,
                    struct spmv_error *err);

/*
 * Makes the current device's pool keep what is freed rather than give it
 * back to the driver, which scrubs returned memory in the background and
 * so slows the kernels timed meanwhile (spmv_dev_pool.cu).  0 where the
 * device has no pool; else 0 or spmv_cuda_error().
 */
int spmv_dev_pool_keep(struct spmv_error *err);

/* Bytes the pool keeps that no allocation uses (0 without a pool). */
size_t spmv_dev_pool_idle(void);

/* Gives the pool's idle memory back to the driver once the device's work is
 * done; returns the bytes given back. */
size_t spmv_dev_pool_trim(void);

/* cudaMemGetInfo(), with the pool's idle memory counted as free. */
int spmv_dev_mem_info(size_t *free_b, size_t *total_b, struct spmv_error *err);

/*
 * Device bytes that spmv_dev_matrix_new() will allocate for host layout L
 * (arrays and scratch; cuSPARSE's buffer is asked for at creation).  Used to
 * admit a matrix against spmv_dev_mem_info() before allocating.
 */
size_t spmv_dev_matrix_bytes(const struct spmv_layout *L);

/*
 * Copies the host layout L (borrowed) to the device and prepares it: the
 * scratch area, and for the cusparse format its descriptors, buffer and
 * (ALG1) cusparseSpMV_preprocess, made with handle h (borrowed; needed only
 * for cusparse, else may be NULL).  *out is new, owned by the caller, and
 * whole on the device for work on any stream once this returns.
 */
int spmv_dev_matrix_new(const struct spmv_layout *L,
                        struct spmv_cusparse_handle *h,
                        struct spmv_dev_matrix **out, struct spmv_error *err);

/*
 * The same for a shell (spmv_layout_new_shell) of A: the typed CSR's
 * columns and values are copied from A (borrowed) and, in f32, narrowed on
 * the device; for the other formats of spmv_layout_shell_ok(), A is staged
 * on the device and a kernel places each entry and pad; no host copy of
 * the layout's entries is made.  A must be the CSR the shell
 * was made from.  The device bytes are spmv_dev_matrix_bytes(L)'s, plus
 * spmv_dev_shell_staging(L, 0) for the time of the call.
 */
/* f32 values of a typed CSR are narrowed through this many bytes. */
#define SPMV_DEV_CONVERT_STAGING ((size_t)32 << 20)
int spmv_dev_matrix_new_csr(const struct spmv_layout *L, const struct spmv_csr *A,
                            struct spmv_cusparse_handle *h,
                            struct spmv_dev_matrix **out, struct spmv_error *err);

/*
 * A CSR staged on the device for several loads of one matrix (a tuner's
 * candidates): row offsets, columns and double values as spmv_csr holds
 * them, copied once.  Owned by the caller of spmv_dev_csr_new(), freed by
 * spmv_dev_csr_free(); spmv_dev_csr_bytes(A) device bytes.
 */
struct spmv_dev_csr {
  int64_t rows, cols, nnz;
  int64_t *row_ptr;
  int32_t *col_idx;
  double *val;
};
int spmv_dev_csr_new(const struct spmv_csr *A, struct spmv_dev_csr **out,
                     struct spmv_error *err);
struct spmv_dev_csr *spmv_dev_csr_free(struct spmv_dev_csr *S);
size_t spmv_dev_csr_bytes(const struct spmv_csr *A);

/* spmv_dev_matrix_new_csr() with A's entries read from S, A staged on the
 * device (borrowed; NULL: copied from A for the call as there), so that
 * the load copies nothing of them from the host. */
int spmv_dev_matrix_new_staged(const struct spmv_layout *L, const struct spmv_csr *A,
                               const struct spmv_dev_csr *S,
                               struct spmv_cusparse_handle *h,
                               struct spmv_dev_matrix **out, struct spmv_error *err);

/* Device bytes spmv_dev_matrix_new_staged() stages while it completes
 * shell L (0 for a layout that is not a shell): hyb's COO positions (8
 * bytes a row) and, unless A is staged already (staged set),
 * SPMV_DEV_CONVERT_STAGING for a typed CSR in f32 and A's whole CSR (12
 * bytes an entry, 8 a row) for the others. */
size_t spmv_dev_shell_staging(const struct spmv_layout *L, int staged);

/* Frees the device arrays and the struct (NULL is a no-op); returns NULL. */
struct spmv_dev_matrix *spmv_dev_matrix_free(struct spmv_dev_matrix *m);

/*
 * y = alpha*A*x + beta*y on stream s, with x (cols values) and y (rows
 * values) device arrays of the matrix's dtype; x and y must not overlap.
 * When beta == 0, y is not read.  Asynchronous; every launch is checked
 * with cudaGetLastError().  Returns 0, SPMV_EGPU, SPMV_EGPU_STICKY or
 * SPMV_EINVAL (a launch configuration out of its valid range).
 */
int spmv_dev_spmv(const struct spmv_dev_matrix *m, double alpha,
                  const void *x, double beta, void *y, cudaStream_t s,
                  struct spmv_error *err);

/*
 * A product replayed as a CUDA graph (spmv_graph.cu): m's launches for
 * one (alpha, x, beta, y) and configuration, captured and relaunched as
 * one graph, which saves the GPU the gap between each two of its
 * kernels.  A capture costs the host many launches' worth, so a product
 * is captured when it comes twice in a row: the first product of other
 * arguments, or after m's configuration changed (m->L.cfg of the same
 * arrays), runs directly, and a caller that changes alpha or beta every
 * product never captures.  spmv_dev_graph_prepare() captures at once.
 * Launches that cannot be captured run directly, as spmv_dev_spmv()
 * runs them.
 * A graph serves one matrix at a time and must be freed before the
 * matrices it served (it holds their arrays' addresses); owned by its
 * creator, not shared between threads; NULL means direct launches.
 */
struct spmv_dev_graph;
/* A new, empty graph, or NULL when out of host memory. */
struct spmv_dev_graph *spmv_dev_graph_new(void);
/* Frees g (NULL is a no-op); returns NULL. */
struct spmv_dev_graph *spmv_dev_graph_free(struct spmv_dev_graph *g);
/* Drops g's graph: it serves no matrix until its next product (call it
 * before freeing the matrix it served, to keep g). */
void spmv_dev_graph_reset(struct spmv_dev_graph *g);
/* spmv_dev_spmv() through g: same arguments, contract and errors, plus
 * SPMV_EGPU when the graph cannot be instantiated or launched. */
int spmv_dev_graph_spmv(struct spmv_dev_graph *g,
                        const struct spmv_dev_matrix *m, double alpha,
                        const void *x, double beta, void *y, cudaStream_t s,
                        struct spmv_error *err);
/* Captures the product (unless g already replays it), launching nothing,
 * so that spmv_dev_graph_spmv() replays it from its first call; 0 or an
 * error as spmv_dev_graph_spmv(). */
int spmv_dev_graph_prepare(struct spmv_dev_graph *g,
                           const struct spmv_dev_matrix *m, double alpha,
                           const void *x, double beta, void *y,
                           cudaStream_t s, struct spmv_error *err);
/* How many times g captured a product; whether its matrix's launches run
 * directly (g NULL, or they could not be captured). */
long spmv_dev_graph_captures(const struct spmv_dev_graph *g);
int spmv_dev_graph_plain(const struct spmv_dev_graph *g);

/*
 * Takes m's arrays into the L2 at normal priority as spmv_l2_warm_mode
 * says for them, x (cols values) and y (rows values): read where they
 * fit half of it, read and written back unchanged up to 90 %; else does
 * nothing.  Why: the kernels stream the matrix with evict-first loads (x
 * keeps the L2), so a matrix of about the L2's size that is not resident
 * stays out of it however often it is multiplied, while one just uploaded
 * stays in, and the same kernel's time depends on what ran before.
 * Called before a run of products (timing warm-ups; a matrix reused
 * after another's, spmv_l2_warm_now), it makes their speed the resident
 * one whatever ran before.  Asynchronous on s.
 */
int spmv_dev_matrix_warm_l2(const struct spmv_dev_matrix *m, cudaStream_t s,
                            struct spmv_error *err);
/* m's warm-up mode: spmv_l2_warm_mode of its arrays, x and y. */
enum spmv_l2_warm spmv_dev_matrix_warm_mode(const struct spmv_dev_matrix *m);

/*
 * A timer of products on one device: events and a host-mapped flag, made
 * once (spmv_dev_timer_new) and used by spmv_dev_time.  Owned by its
 * creator; not shared between threads.
 */
struct spmv_dev_timer;
#define SPMV_DEV_TIME_MAX_REPS 256
int spmv_dev_timer_new(struct spmv_dev_timer **out, struct spmv_error *err);
/* Frees t (NULL is a no-op); returns NULL. */
struct spmv_dev_timer *spmv_dev_timer_free(struct spmv_dev_timer *t);

/*
 * Times m's product y = A*x (alpha 1, beta 0) on stream s, through graph
 * g as spmv_dev_graph_spmv() launches it (NULL: launched directly):
 * warmup runs, then reps runs (1..SPMV_DEV_TIME_MAX_REPS) with an event
 * between each.
 * The stream is held by a spinning kernel until every launch is queued,
 * so the runs execute back to back: the times are the GPU's, not the
 * host's launch rate (a small product takes about as long to launch as
 * to run).
 * With warmup > 0 the warm-ups follow spmv_dev_matrix_warm_l2(), so that
 * the times are those of the matrix resident where it fits the L2.
 * us[k] receives run k's time in microseconds.  Returns 0 or the first
 * error.
 */
int spmv_dev_time(struct spmv_dev_timer *t, struct spmv_dev_graph *g,
                  const struct spmv_dev_matrix *m, const void *x, void *y,
                  cudaStream_t s, int warmup, int reps, double *us,
                  struct spmv_error *err);

/*
 * Products timed in turns: n of them (1..SPMV_DEV_TIME_TURNS_MAX), each
 * y = A*x through its graph (NULL: directly), reps rounds of one run of
 * each in order, after warmup rounds, all queued behind one hold as
 * spmv_dev_time() does (n x reps <= SPMV_DEV_TIME_MAX_REPS).  p[i].us[k]
 * receives round k's time of product i.  Returns 0 or the first error.
 * Not a way to rank products of a few microseconds: two such graphs in
 * turns read alike (often to the 32 ns tick) even where timed apart they
 * differ.
 */
#define SPMV_DEV_TIME_TURNS_MAX 4
struct spmv_dev_timed {
  struct spmv_dev_graph *g;
  const struct spmv_dev_matrix *m;
  const void *x;
  void *y;
  double *us; /* reps times, the caller's */
};
int spmv_dev_time_turns(struct spmv_dev_timer *t, const struct spmv_dev_timed *p,
                        int n, cudaStream_t s, int warmup, int reps,
                        struct spmv_error *err);

/* The per-format launchers behind spmv_dev_spmv(), same contract. */
#define SPMV_LAUNCH_PROTO(name)                                              \
  int spmv_launch_##name(const struct spmv_dev_matrix *m, double alpha,     \
                         const void *x, double beta, void *y,               \
                         cudaStream_t s, struct spmv_error *err)
SPMV_LAUNCH_PROTO(csr_scalar);
SPMV_LAUNCH_PROTO(csr_vector);
SPMV_LAUNCH_PROTO(csr_adaptive);
SPMV_LAUNCH_PROTO(ell);
SPMV_LAUNCH_PROTO(ellr_t);
SPMV_LAUNCH_PROTO(coo);
SPMV_LAUNCH_PROTO(hyb);
SPMV_LAUNCH_PROTO(dia);
SPMV_LAUNCH_PROTO(jad);
SPMV_LAUNCH_PROTO(sell);
SPMV_LAUNCH_PROTO(csr_merge);
SPMV_LAUNCH_PROTO(cusparse);
SPMV_LAUNCH_PROTO(csr16);
SPMV_LAUNCH_PROTO(csr_stream);
SPMV_LAUNCH_PROTO(csr_panel);

/*
 * cuSPARSE.  A handle bound to stream s (borrowed); *out is new, owned by
 * the caller.  The version string is "12.6.3" style.
 */
int spmv_cusparse_handle_new(cudaStream_t s, struct spmv_cusparse_handle **out,
                             struct spmv_error *err);
struct spmv_cusparse_handle *
spmv_cusparse_handle_free(struct spmv_cusparse_handle *h);
int spmv_cusparse_version(char *buf, size_t n);

/*
 * The cusparse format's per-matrix state: descriptors, buffer and, for
 * ALG1, cusparseSpMV_preprocess, built once for the resident layout of m
 * (its CSR, sliced ELL or BSR, by the configuration's algorithm).
 * Called by spmv_dev_matrix_new(); adds its buffer to m->bytes.
 */
int spmv_cusparse_prepare(struct spmv_dev_matrix *m,
                          struct spmv_cusparse_handle *h,
                          struct spmv_error *err);
void spmv_cusparse_release(struct spmv_dev_matrix *m);

/*
 * BLAS-1 on device vectors (spmv_blas1.cu), f32 or f64, n values each,
 * asynchronous on stream s; every launch is checked and n == 0 launches
 * nothing.  The scalars are expressions over a device array res of
 * SPMV_DEV_RESULTS doubles that earlier reductions filled, evaluated on
 * the device in IEEE double (then rounded to the value type):
 * c * res[mul[0]] * ... / (res[div[0]] * ...), so that a coefficient a
 * dot just computed never leaves the device; with finite set, a value
 * that is not finite counts as 0.  Returns 0, SPMV_EINVAL (a
 * type, slot or term out of range), SPMV_EGPU or SPMV_EGPU_STICKY.
 */
#define SPMV_DEV_SCALAR_TERMS 4
#define SPMV_DEV_RESULTS 64
struct spmv_dev_scalar {
  double c;
  int nmul, ndiv;
  int mul[SPMV_DEV_SCALAR_TERMS], div[SPMV_DEV_SCALAR_TERMS];
  int finite;
};
/* x = a. */
int spmv_blas_fill(enum spmv_dtype dt, size_t n, void *x, struct spmv_dev_scalar a,
                   const double *res, cudaStream_t s, struct spmv_error *err);
/* x[i] = +-[0.5, 1.5), never zero, a function of seed and i alone (a hash:
 * the same values on every GPU and grid): a timing vector made on the
 * device rather than on the host and copied over. */
int spmv_blas_random(enum spmv_dtype dt, size_t n, void *x, uint64_t seed,
                     cudaStream_t s, struct spmv_error *err);
/* y = x (x == y: nothing to do; otherwise they must not overlap). */
int spmv_blas_copy(enum spmv_dtype dt, size_t n, const void *x, void *y,
                   cudaStream_t s, struct spmv_error *err);
/* x = a*x. */
int spmv_blas_scale(enum spmv_dtype dt, size_t n, void *x, struct spmv_dev_scalar a,
                    const double *res, cudaStream_t s, struct spmv_error *err);
/* y = a*x + b*y (x may be y); when b is the constant 0 (c 0, no terms) y
 * is not read, so that NaN in it is overwritten. */
int spmv_blas_axpby(enum spmv_dtype dt, size_t n, struct spmv_dev_scalar a,
                    const void *x, struct spmv_dev_scalar b, void *y,
                    const double *res, cudaStream_t s, struct spmv_error *err);
/* z = x .* y; z may be x or y. */
int spmv_blas_mul(enum spmv_dtype dt, size_t n, const void *x, const void *y,
                  void *z, cudaStream_t s, struct spmv_error *err);
/*
 * res[slot] = x . y, or ||x||_2 = sqrt(x . x), summed in double for
 * either type.  Deterministic: spmv_blas_reduce_blocks(n) blocks (a
 * function of n alone) each sum a fixed part by a fixed tree into
 * scratch (SPMV_BLAS_MAX_PARTIALS doubles of device memory, the
 * caller's, used until the reduction is done on s), then one block sums
 * those in a fixed order: the same inputs give the same bits every run.
 * n == 0 writes +0.
 */
#define SPMV_BLAS_MAX_PARTIALS 1024
unsigned spmv_blas_reduce_blocks(size_t n);
int spmv_blas_dot(enum spmv_dtype dt, size_t n, const void *x, const void *y,
                  double *res, int slot, double *scratch, cudaStream_t s,
                  struct spmv_error *err);
int spmv_blas_nrm2(enum spmv_dtype dt, size_t n, const void *x, double *res,
                   int slot, double *scratch, cudaStream_t s,
                   struct spmv_error *err);
/* res[slot] = sum |x[i]| (the 1-norm), as deterministic as the others. */
int spmv_blas_asum(enum spmv_dtype dt, size_t n, const void *x, double *res,
                   int slot, double *scratch, cudaStream_t s,
                   struct spmv_error *err);

/* Threads-per-block values every kernel accepts: 32 .. 1024, multiple of 32. */
#define SPMV_BS_MIN 32
#define SPMV_BS_MAX 1024

#ifdef __cplusplus
}
#endif

#endif /* SPMV_KERNELS_H */
