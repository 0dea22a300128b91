/* spmv_fault.h: GPU faults on purpose, for the fault-injection build's
 * tests: an illegal address, a kernel that never ends, memory taken. */
#ifndef SPMV_FAULT_H
#define SPMV_FAULT_H

#include <stddef.h>

#include "spmv_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Launches a kernel on the current device that writes through an address
 * no allocation holds, and waits for it: returns the error the device
 * gives (cudaErrorIllegalAddress, which leaves the context unusable, as
 * SPMV_EGPU_STICKY through spmv_cuda_error()).
 */
int spmv_fault_illegal_address(struct spmv_error *err);

/*
 * Launches a kernel on the current device that spins on a flag nobody
 * sets, and waits for it: returns only when the launch itself fails (a
 * negative code); the process must be killed.
 */
int spmv_fault_hang(struct spmv_error *err);

/*
 * Allocates device memory on the current device so that only about leave
 * bytes stay free (cudaMemGetInfo, to the driver's 2 MiB granularity):
 * *out receives the allocation (NULL when no more than leave were free),
 * to free with spmv_fault_ballast_free(), and *bytes its size.  Returns 0
 * or spmv_cuda_error()'s code.
 */
int spmv_fault_ballast_new(size_t leave, void **out, size_t *bytes,
                           struct spmv_error *err);
/* Frees a ballast (NULL is a no-op). */
void spmv_fault_ballast_free(void *ballast);

#ifdef __cplusplus
}
#endif

#endif /* SPMV_FAULT_H */
