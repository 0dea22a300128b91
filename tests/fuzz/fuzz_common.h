/* fuzz_common.h: what every fuzz target and the replay driver share. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The one entry point of a target: must neither crash nor leak on any
 * input; returns 0 (libFuzzer's convention). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional set-up before the first input (a target that opens a cache
 * once); weak, so that a target without it links. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#endif /* FUZZ_COMMON_H */
