/* spmvd_fault.h: spmvd-worker's faults on cue (SPMVD_FAULT), compiled
 * only into a fault-injection build (configure --enable-fault-injection)
 * for the tests of the failure paths. */
#ifndef SPMVD_FAULT_H
#define SPMVD_FAULT_H

#ifndef SPMVD_FAULT_INJECTION
#error "spmvd_fault.h belongs to the fault-injection build only"
#endif

#include "spmv_error.h"
#include "spmv_formats.h"

/*
 * SPMVD_FAULT names one or more faults, separated by commas:
 *
 *   abort:PREFIX            the worker aborts (SIGABRT, no core file);
 *   illegal-address:PREFIX  (cuda) a kernel stores through an unmapped
 *                           address: the sticky error goes the worker's
 *                           own way (SPMV_EGPU_STICKY, exit status 3);
 *   hang:PREFIX             the worker never returns: on cuda a kernel
 *                           spins for ever, on cpu a loop of pause();
 *
 * each when the worker builds a configuration whose text starts with
 * PREFIX (makes it resident, or loads it as a tuning or bench candidate);
 * and
 *
 *   leave-free:BYTES        (cuda) at start the worker allocates a ballast
 *                           that leaves only BYTES (K, M, G, T suffixes)
 *                           of device memory free;
 *   slow-start:MS           the worker stalls MS milliseconds before it
 *                           says ready (a device slow to answer, or hung);
 *   slow-step:MS            each tuning candidate and calibration point
 *                           takes MS more (a large device's, on the cpu);
 *   slow-solve:MS           each solver iteration takes MS more.
 */

/* Reads SPMVD_FAULT for a worker of backend ("cpu" or "cuda") and makes
 * the ballast; returns 0 or SPMV_ECONFIG naming the entry, or the
 * ballast's error. */
int spmvd_fault_open(const char *backend, struct spmv_error *err);

/* The faults of configuration cfg, before the worker builds it: returns 0
 * when none is named for it, else aborts, hangs, or returns the device's
 * error (illegal-address), which the caller treats as the build's. */
int spmvd_fault_run(const struct spmv_config *cfg, struct spmv_error *err);

/* Where the slow-* faults stall. */
enum spmvd_fault_slow { SPMVD_FAULT_START, SPMVD_FAULT_STEP, SPMVD_FAULT_SOLVE };

/* Stalls as the slow-* entry for where asks, if there is one. */
void spmvd_fault_slow(enum spmvd_fault_slow where);

/* Frees the ballast (the worker ends). */
void spmvd_fault_close(void);

#endif /* SPMVD_FAULT_H */
