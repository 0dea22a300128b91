/* spmvd_spin.h: the front end's loop polls without sleeping for a moment
 * after each message, so that a product's next hop is not a wake-up. */
#ifndef SPMVD_SPIN_H
#define SPMVD_SPIN_H

#include <uv.h>

/* Prepares the spin of loop (once, before any kick); us is the window
 * after the last message during which the loop does not sleep (0: never
 * spins).  Returns 0 or a negative libuv code. */
int spmvd_spin_init(uv_loop_t *loop, int us);
/* A message came or went: the loop spins for the window from now. */
void spmvd_spin_kick(void);
/* Closes the handle (the loop's end). */
void spmvd_spin_close(void);

#endif /* SPMVD_SPIN_H */
