/* spmv_fault.cu: GPU faults on purpose (spmv_fault.h), built only with
 * --enable-fault-injection. */
/*
 * Work decomposition: one thread each.  spmv_fault_poke_kernel stores
 * through the pointer it is given, which the host sets to an address in
 * the first page, never mapped on the device: the store faults, the
 * device reports cudaErrorIllegalAddress and the context is lost, as
 * after a kernel's out-of-bounds store.  spmv_fault_spin_kernel reads a
 * flag in device memory until it is set, which nothing does: the kernel
 * never ends, as a kernel stuck in a wrong loop bound.  Both take their
 * pointer as a parameter so that the compiler cannot see the fault.
 * Valid parameters: none; the current device.
 */
#include <stdint.h>

#include "spmv_cuda.cuh"
#include "spmv_fault.h"

__global__ void spmv_fault_poke_kernel(int *p, int v) {
  p[threadIdx.x] = v;
}

__global__ void spmv_fault_spin_kernel(const volatile int *flag) {
  while (*flag == 0) {
  }
}

/* See spmv_fault.h. */
extern "C" int spmv_fault_illegal_address(struct spmv_error *err) {
  int *bad = reinterpret_cast<int *>(static_cast<uintptr_t>(64));

  spmv_fault_poke_kernel<<<1, 1>>>(bad, 1);
  SPMV_CHECK_LAUNCH("the illegal-address fault kernel");
  return spmv_cuda_error(cudaDeviceSynchronize(), "the illegal-address fault kernel",
                         err);
}

/* See spmv_fault.h. */
extern "C" int spmv_fault_hang(struct spmv_error *err) {
  int *flag = NULL;
  int rc = spmv_cuda_error(cudaMalloc(&flag, sizeof *flag), "the hang fault's flag", err);

  if (rc < 0) return rc;
  if ((rc = spmv_cuda_error(cudaMemset(flag, 0, sizeof *flag), "the hang fault's flag",
                            err)) < 0) {
    cudaFree(flag);
    return rc;
  }
  spmv_fault_spin_kernel<<<1, 1>>>(flag);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  rc = spmv_cuda_error(e, "the hang fault kernel", err);
  cudaFree(flag);
  return rc;
}

/* See spmv_fault.h. */
extern "C" int spmv_fault_ballast_new(size_t leave, void **out, size_t *bytes,
                                      struct spmv_error *err) {
  const size_t step = (size_t)32 << 20;
  size_t free_b = 0, total_b = 0, want;
  int rc;

  *out = NULL;
  *bytes = 0;
  if ((rc = spmv_cuda_error(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", err)) < 0)
    return rc;
  if (free_b <= leave) return 0;
  /* The driver may refuse the exact difference (its own bookkeeping takes
   * some): a step less each time, up to 16 times. */
  want = free_b - leave;
  for (int i = 0; i < 16 && want > 0; i++) {
    cudaError_t e = cudaMalloc(out, want);
    if (e == cudaSuccess) {
      *bytes = want;
      return 0;
    }
    *out = NULL;
    if (e != cudaErrorMemoryAllocation)
      return spmv_cuda_error(e, "the memory ballast", err);
    cudaGetLastError(); /* not sticky */
    want = want > step ? want - step : 0;
  }
  return spmv_error_set(err, SPMV_ENOMEM,
                        "cannot allocate a ballast leaving %zu of %zu free bytes", leave,
                        free_b);
}

/* See spmv_fault.h. */
extern "C" void spmv_fault_ballast_free(void *ballast) {
  if (ballast != NULL) cudaFree(ballast);
}
