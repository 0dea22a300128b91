/*
 * check_nccl: the NCCL that configure found links and answers, and its
 * library is the release its header describes (a wheel's libnccl.so.2 found
 * beside another toolkit's nccl.h would not be).  Built only where configure
 * found NCCL; needs no GPU.
 */
#include <nccl.h>
#include <stdio.h>

int main(void)
{
  int v = 0;
  ncclResult_t r = ncclGetVersion(&v);
  if (r != ncclSuccess) {
    fprintf(stderr, "check_nccl: ncclGetVersion failed: %s\n", ncclGetErrorString(r));
    return 1;
  }
  /* NCCL_VERSION_CODE is major*10000 + minor*100 + patch since 2.9. */
  int lib_major = v / 10000, lib_minor = v / 100 % 100;
  int hdr_major = NCCL_VERSION_CODE / 10000, hdr_minor = NCCL_VERSION_CODE / 100 % 100;
  printf("check_nccl: library %d (%d.%d), header %d (%d.%d)\n", v, lib_major, lib_minor,
         NCCL_VERSION_CODE, hdr_major, hdr_minor);
  if (lib_major != hdr_major || lib_minor < hdr_minor) {
    fprintf(stderr, "check_nccl: library %d.%d is older than its header %d.%d\n", lib_major,
            lib_minor, hdr_major, hdr_minor);
    return 1;
  }
  return 0;
}
