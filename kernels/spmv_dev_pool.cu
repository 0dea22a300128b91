/* spmv_dev_pool.cu: device memory: CUDA errors as codes, the stream-ordered
 * pool, allocation, upload, and the pool's idle memory kept and trimmed. */
/*
 * Host code only.  Every allocation of the kernels' host code
 * (spmv_device.cu's matrices, their scratch and staging) goes through
 * spmv_dev_alloc() and spmv_dev_free().
 */
#include <stdlib.h>
#include <string.h>

#include "spmv_cuda.cuh"

/* Maps a CUDA error to SPMV_EGPU or SPMV_EGPU_STICKY with a message. */
extern "C" int spmv_cuda_error(cudaError_t e, const char *what,
                               struct spmv_error *err) {
  if (e == cudaSuccess) return 0;
  int code = SPMV_EGPU;
  switch (e) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorLaunchTimeout:
  case cudaErrorECCUncorrectable:
  case cudaErrorContextIsDestroyed:
    code = SPMV_EGPU_STICKY;
    break;
  default:
    break;
  }
  return spmv_error_set(err, code, "%s: %s: %s", what, cudaGetErrorName(e),
                        cudaGetErrorString(e));
}

/*
 * Device memory comes from the device's default stream-ordered pool where
 * the device has one.  Memory given back to the driver is scrubbed by it
 * in the background, and the scrub takes HBM bandwidth from the kernels
 * that run meanwhile: a streaming read runs slower for many runs after a
 * large cudaFree, the longer the more was freed.  A tuner's candidates
 * load and unload layouts (and free their conversion staging) between
 * timings, so freed memory stays in the pool (spmv_dev_pool_keep) until
 * spmv_dev_pool_trim gives it back, when the device is idle.  Allocations and frees are on the legacy stream and
 * synchronous, as cudaMalloc's and cudaFree's: the products run on
 * non-blocking streams.
 */
static int pools = -1; /* the current device has pools: -1 not yet asked */

static int have_pools(void) {
  if (pools < 0) {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess) {
      cudaGetLastError();
      v = 0;
    }
    pools = v != 0;
  }
  return pools;
}

/* The current device's default pool, or NULL. */
static cudaMemPool_t default_pool(void) {
  cudaMemPool_t pool = NULL;
  int dev = 0;
  if (!have_pools() || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return pool;
}

static cudaError_t raw_alloc(void **p, size_t bytes) {
  if (!have_pools()) return cudaMalloc(p, bytes);
  cudaError_t e = cudaMallocAsync(p, bytes, 0);
  /* Usable from any stream once the call returns, as cudaMalloc's. */
  if (e == cudaSuccess) e = cudaStreamSynchronize(0);
  return e;
}

/* Device memory, running out as SPMV_ENOMEM; see spmv_kernels.h. */
extern "C" int spmv_dev_alloc(void **p, size_t bytes, const char *what,
                              struct spmv_error *err) {
  cudaError_t e = raw_alloc(p, bytes ? bytes : 1);
  if (e == cudaErrorMemoryAllocation && have_pools()) {
    /* The pool's free blocks may not fit: give them back and try once more. */
    cudaGetLastError();
    spmv_dev_pool_trim();
    e = raw_alloc(p, bytes ? bytes : 1);
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError(); /* not sticky: clear it so the next call is not blamed */
    *p = NULL;
    return spmv_error_set(err, SPMV_ENOMEM,
                          "GPU out of memory allocating %zu bytes for %s",
                          bytes, what);
  }
  if (e != cudaSuccess) *p = NULL;
  return spmv_cuda_error(e, what, err);
}

/* Frees what spmv_dev_alloc gave; see spmv_kernels.h. */
extern "C" void spmv_dev_free(void *p) {
  if (p == NULL) return;
  if (!have_pools()) {
    cudaFree(p);
    return;
  }
  /* Work on other streams may still read p: wait for it, as cudaFree does. */
  cudaDeviceSynchronize();
  cudaFreeAsync(p, 0);
  cudaStreamSynchronize(0);
}

/* See spmv_kernels.h. */
extern "C" int spmv_dev_upload(void *dst, const void *src, size_t bytes,
                               const char *what, struct spmv_error *err) {
  int rc = spmv_cuda_error(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), what, err);
  if (rc == 0) rc = spmv_cuda_error(cudaStreamSynchronize(0), what, err);
  return rc;
}

/* Bytes the pool holds that no allocation uses. */
static size_t pool_idle(cudaMemPool_t pool) {
  unsigned long long reserved = 0, used = 0; /* cuuint64_t */
  if (pool == NULL ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return reserved > used ? (size_t)(reserved - used) : 0;
}

/* See spmv_kernels.h. */
extern "C" int spmv_dev_pool_keep(struct spmv_error *err) {
  cudaMemPool_t pool = default_pool();
  unsigned long long all = ~0ULL;
  if (pool == NULL) return 0;
  return spmv_cuda_error(
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &all),
      "cudaMemPoolSetAttribute of the release threshold", err);
}

/* See spmv_kernels.h. */
extern "C" size_t spmv_dev_pool_idle(void) { return pool_idle(default_pool()); }

/* See spmv_kernels.h. */
extern "C" size_t spmv_dev_pool_trim(void) {
  cudaMemPool_t pool = default_pool();
  size_t idle = pool_idle(pool);
  if (idle == 0) return 0;
  cudaDeviceSynchronize();
  if (cudaMemPoolTrimTo(pool, 0) != cudaSuccess) cudaGetLastError();
  size_t left = pool_idle(pool);
  return idle > left ? idle - left : 0;
}

/* See spmv_kernels.h. */
extern "C" int spmv_dev_mem_info(size_t *free_b, size_t *total_b,
                                 struct spmv_error *err) {
  int rc = spmv_cuda_error(cudaMemGetInfo(free_b, total_b), "cudaMemGetInfo", err);
  if (rc == 0) *free_b += spmv_dev_pool_idle();
  return rc;
}
