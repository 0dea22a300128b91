/* spmvd_backend.h: what a device worker needs of a backend (cpu, cuda). */
#ifndef SPMVD_BACKEND_H
#define SPMVD_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "spmv_csr.h"
#include "spmv_formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The device a backend drives, as the tuner, the models and the cache see
 * it.  device_key and software_key decide whether a cached tuning applies:
 * a decision holds only for the device and the software that took it.
 */
struct spmvd_device_info {
  char backend[16];          /* "cpu" or "cuda" */
  char name[128];            /* GPU name, or the CPU model */
  int cc_major, cc_minor;    /* compute capability; 0 on the cpu */
  int sms;                   /* SMs, or CPU threads used */
  int warp_size;             /* 32 on NVIDIA GPUs, 1 on the cpu */
  int max_threads_per_sm;
  int max_blocks_per_sm;
  int max_threads_per_block;
  uint64_t mem_bytes;        /* device memory, or host memory */
  uint64_t l2_bytes;
  int devices;               /* devices of its kind on the host (1 on the cpu) */
  char device_key[256];      /* name, cc, SMs, memory size (CPU model on cpu) */
  char software_key[256];    /* driver, runtime, cuSPARSE, SPMV_KERNEL_VERSION */
};

/* Bumped whenever any kernel or layout changes, so cached tunings expire. */
#define SPMV_KERNEL_VERSION 17  /* bumped with every kernel change: NEWS lists them */

struct spmvd_backend;   /* a backend's state, owned by the worker */
struct spmvd_bmatrix;   /* one matrix converted and resident on the device */
struct spmvd_bvector;   /* one vector resident on the device */

/*
 * The scalars of a vector operation: c * res[mul[0]] * ... / (res[div[0]]
 * * ...), where res are the results (dots, norms) that the operations of
 * the same list computed before it, so that a Krylov iteration's
 * coefficients never leave the device.  IEEE arithmetic in double: a zero
 * divisor gives an infinity or NaN, as the client's own code would;
 * with finite set (the solvers' own lists, never a client's) a value that
 * is not finite counts as 0, so that a breakdown the host sees only at
 * the list's end leaves a vector as it was.
 */
#define SPMVD_SCALAR_MAX_TERMS 4
#define SPMVD_MAX_RESULTS 64      /* results of one list */
struct spmvd_scalar {
  double c;
  int nmul, ndiv;
  int mul[SPMVD_SCALAR_MAX_TERMS], div[SPMVD_SCALAR_MAX_TERMS];
  int finite;
};

/* The vector operations of a list (PROTOCOL.md, "ops"). */
enum spmvd_vop {
  SPMVD_VOP_FILL,   /* x = a */
  SPMVD_VOP_COPY,   /* y = x */
  SPMVD_VOP_SCALE,  /* x = a*x */
  SPMVD_VOP_AXPBY,  /* y = a*x + b*y (y not read when b is the constant 0) */
  SPMVD_VOP_MUL,    /* z = x .* y (z may be x or y) */
  SPMVD_VOP_DOT,    /* res[slot] = x . y */
  SPMVD_VOP_NRM2,   /* res[slot] = ||x||_2 */
  SPMVD_VOP_ASUM    /* res[slot] = ||x||_1 */
};

/* One vector operation; the vectors are borrowed, of one dtype and length
 * (the worker checked), NULL where the operation has none. */
struct spmvd_vop_args {
  enum spmvd_vop op;
  struct spmvd_bvector *x, *y, *z;
  struct spmvd_scalar a, b;
  int slot;         /* DOT, NRM2, ASUM: where the result goes, < SPMVD_MAX_RESULTS */
};

/*
 * A backend.  Every function returns 0 or a negative SPMV_E* code with a
 * message in err; SPMV_EGPU_STICKY means the device context is lost and
 * the worker must exit so that the front end respawns it.
 */
struct spmvd_backend_ops {
  const char *name;

  /* Opens device number dev (ignored by cpu); *out is owned by the caller. */
  int (*open)(int dev, struct spmvd_backend **out, struct spmv_error *err);
  /* Closes the backend and frees every matrix still loaded. */
  void (*close)(struct spmvd_backend *b);
  /* Fills info (borrowed pointer, caller's storage). */
  int (*info)(struct spmvd_backend *b, struct spmvd_device_info *info);

  /*
   * Converts A (borrowed: the backend keeps no pointer into it) to cfg's
   * layout with values of type dt and makes it resident.  A must be valid
   * (spmv_csr_validate): the worker validates a matrix once, when it is
   * loaded, and its conversions do not check it again.  Memory is
   * admitted before allocating: too little gives SPMV_ENOMEM and the
   * backend stays usable.  *out is owned by the backend until unload.
   */
  int (*load)(struct spmvd_backend *b, const struct spmv_csr *A,
              enum spmv_dtype dt, const struct spmv_config *cfg,
              struct spmvd_bmatrix **out, struct spmv_error *err);

  /*
   * y_j = alpha*A*x_j + beta*y_j for nvec vectors, x and y host arrays of the
   * matrix's dtype (vector j at x + j*cols, y + j*rows), borrowed.
   */
  int (*multiply)(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                  double alpha, const void *x, double beta, void *y,
                  int nvec, struct spmv_error *err);

  /*
   * Times the product on device-resident vectors (random x, never zeros)
   * after `warmup` runs: the median of `reps` runs in microseconds.
   */
  int (*time)(struct spmvd_backend *b, struct spmvd_bmatrix *m, int warmup,
              int reps, double *median_us, struct spmv_error *err);

  /* Frees the matrix's device memory. */
  void (*unload)(struct spmvd_backend *b, struct spmvd_bmatrix *m);

  /*
   * Optional (NULL: nothing to gain).  pin registers size bytes of host
   * memory at addr (borrowed until unpin) so that the loads made from it
   * meanwhile copy faster; returns 1 when registered, 0 when not (loads
   * then copy as before: not an error).  unpin undoes a pin that
   * returned 1.  Pins serve products' vectors too: the worker pins its
   * vector mappings for their life, so that multiply's and the vector
   * copies run asynchronously.  readonly says that addr is mapped
   * without write access (a client's write-sealed matrix memfd): the
   * device may then only read it.
   */
  int (*pin)(struct spmvd_backend *b, void *addr, size_t size, int readonly);
  void (*unpin)(struct spmvd_backend *b, void *addr);

  /*
   * Optional (NULL: loads copy from the host each time).  stage copies A
   * (borrowed until unstage or the next stage) to the device for the
   * loads of A that follow, a race's candidates, so that each converts
   * from that copy rather than copying A again; returns 1 when staged, 0
   * when there is no room (loads copy from the host, not an error).  A
   * load that finds no room beside the copy drops it.  unstage frees it
   * (nothing staged is a no-op).
   */
  int (*stage)(struct spmvd_backend *b, const struct spmv_csr *A,
               struct spmv_error *err);
  void (*unstage)(struct spmvd_backend *b);

  /*
   * Optional (NULL: keeps nothing).  Device memory freed by unload (and by
   * a load's conversion) is kept for the backend's next loads, not given
   * back to the driver, whose scrub of it would slow the products timed
   * meanwhile; trim gives it back, for the worker to call once loads and
   * unloads have stopped a while.  Returns the bytes given back.
   */
  size_t (*trim)(struct spmvd_backend *b);

  /*
   * Optional (NULL: not known).  The device memory free for new layouts
   * and vectors (what is admitted against, the pool's idle memory
   * counted) and its total, for the daemon's status.
   */
  int (*mem_info)(struct spmvd_backend *b, uint64_t *free_bytes,
                  uint64_t *total_bytes, struct spmv_error *err);

  /*
   * Device vectors and the operations of a list.  Everything below is
   * ordered on the backend's one stream and may run asynchronously until
   * finish(), which waits for it all once and returns the results; the
   * host memory a copy names must stay valid and untouched until then.
   * Reductions are deterministic: the same inputs give the same bits on
   * every run (a fixed partition and order of the sums, in double for
   * either value type).
   */
  /* A new vector of n values of dt, zero-filled; *out owned by the caller
   * (vec_free).  Device memory is admitted: SPMV_ENOMEM, the backend
   * usable. */
  int (*vec_new)(struct spmvd_backend *b, enum spmv_dtype dt, size_t n,
                 struct spmvd_bvector **out, struct spmv_error *err);
  /* Frees v (NULL is a no-op) once the work queued on it is done. */
  void (*vec_free)(struct spmvd_backend *b, struct spmvd_bvector *v);
  /* v = host (n values of v's dtype) / host = v. */
  int (*vec_upload)(struct spmvd_backend *b, struct spmvd_bvector *v,
                    const void *host, struct spmv_error *err);
  int (*vec_download)(struct spmvd_backend *b, struct spmvd_bvector *v,
                      void *host, struct spmv_error *err);
  /* y = alpha*A*x + beta*y with device vectors (x, y distinct, of m's
   * dtype, cols and rows values); y is not read when beta == 0. */
  int (*vec_spmv)(struct spmvd_backend *b, struct spmvd_bmatrix *m,
                  double alpha, struct spmvd_bvector *x, double beta,
                  struct spmvd_bvector *y, struct spmv_error *err);
  /* One BLAS-1 operation (its scalars read the results so far). */
  int (*vec_op)(struct spmvd_backend *b, const struct spmvd_vop_args *a,
                struct spmv_error *err);
  /* Sets results 0 .. nres to res, queued: a list run in parts over the
   * blocks of a split matrix starts each part with the results reduced
   * over the blocks so far. */
  int (*res_set)(struct spmvd_backend *b, const double *res, int nres,
                 struct spmv_error *err);
  /* Waits for everything queued, then copies res[0..nres) to res. */
  int (*finish)(struct spmvd_backend *b, double *res, int nres,
                struct spmv_error *err);
};

/*
 * Where a backend that converts on the device makes a layout resident:
 * bytes is what the layout holds there (arrays, scratch, vectors),
 * staging what its device conversion stages beside it for the time of
 * the load, avail what may be allocated.  On the device when both fit (a
 * shell: shell set), on the host when only the layout fits (the host's
 * conversion stages nothing), else not at all.
 */
enum spmvd_load_path {
  SPMVD_LOAD_DEVICE,
  SPMVD_LOAD_HOST,
  SPMVD_LOAD_NONE,
  SPMVD_LOAD_UNSTAGE  /* spmvd_load_path_beside: the staged copy must go first */
};
static inline enum spmvd_load_path spmvd_load_path(int shell, size_t bytes,
                                                   size_t staging, size_t avail)
{
  if (bytes > avail)
    return SPMVD_LOAD_NONE;
  return shell && staging <= avail - bytes ? SPMVD_LOAD_DEVICE : SPMVD_LOAD_HOST;
}

/*
 * The same beside a staged copy of the matrix's CSR of staged bytes (0:
 * none), which avail leaves out: where the layout would need the host's
 * conversion (a shell) or does not fit at all, but fits once the copy is
 * freed, SPMVD_LOAD_UNSTAGE; where it would not fit even then, NONE, and
 * the copy stays for the loads that follow.
 */
static inline enum spmvd_load_path spmvd_load_path_beside(int shell, size_t bytes,
                                                          size_t staging, size_t avail,
                                                          size_t staged)
{
  enum spmvd_load_path p = spmvd_load_path(shell, bytes, staging, avail);

  if (staged == 0 || p == SPMVD_LOAD_DEVICE || (p == SPMVD_LOAD_HOST && !shell))
    return p;
  return bytes <= avail || bytes - avail <= staged ? SPMVD_LOAD_UNSTAGE
                                                   : SPMVD_LOAD_NONE;
}

/* The backends built into this worker; cuda is NULL without CUDA. */
extern const struct spmvd_backend_ops spmvd_backend_cpu;
#ifdef HAVE_CUDA
extern const struct spmvd_backend_ops spmvd_backend_cuda;
#endif

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_BACKEND_H */
