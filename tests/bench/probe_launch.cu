/* probe_launch.cu: what the GPU spends between the kernels of a product, launched one by one and as a graph. */
/*
 * A product of a small matrix is mostly its launches: its kernels queued
 * back to back still cost the GPU microseconds between them.  This times
 * chains of near-empty kernels as spmv_dev_time times a product (the
 * stream held by a spinning kernel until every run and its event is
 * queued; 2 warm-ups, the upper median of 50 runs): one kernel, three, three
 * that each touch 4 MB, and one and three captured as a CUDA graph and
 * relaunched; five rounds in one process, a line per round.  Run it in
 * several processes to see how the launch cost moves between them.
 *   usage: probe_launch [TAG]
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define REPS 50
#define ROUNDS 5

#define CK(call)                                                          \
  do {                                                                    \
    cudaError_t e_ = (call);                                              \
    if (e_ != cudaSuccess) {                                              \
      fprintf(stderr, "probe_launch: %s: %s\n", #call, cudaGetErrorString(e_)); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

__global__ void hold_kernel(const volatile int *flag) {
  long long t0 = clock64();
  while (*flag == 0 && clock64() - t0 < 40000000LL) {
  }
}

__global__ void tiny_kernel(float *y, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * y[i] + 1.0f;
}

static volatile int *flag;
static int *dflag;
static cudaEvent_t ev[REPS + 1];

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One run: the graph g, else nk kernels over n values of y. */
static void launch(cudaStream_t s, cudaGraphExec_t g, int nk, float *y, int n) {
  if (g != NULL) {
    CK(cudaGraphLaunch(g, s));
    return;
  }
  for (int k = 0; k < nk; k++) tiny_kernel<<<(n + 255) / 256, 256, 0, s>>>(y, n, 0.5f);
}

/* The median time of a run in microseconds, runs held and queued. */
static double timed(cudaStream_t s, cudaGraphExec_t g, int nk, float *y, int n) {
  double t[REPS];
  *flag = 0;
  __sync_synchronize();
  hold_kernel<<<1, 1, 0, s>>>(dflag);
  for (int w = 0; w < 2; w++) launch(s, g, nk, y, n);
  CK(cudaEventRecord(ev[0], s));
  for (int r = 0; r < REPS; r++) {
    launch(s, g, nk, y, n);
    CK(cudaEventRecord(ev[r + 1], s));
  }
  *flag = 1;
  __sync_synchronize();
  CK(cudaEventSynchronize(ev[REPS]));
  for (int r = 0; r < REPS; r++) {
    float ms;
    CK(cudaEventElapsedTime(&ms, ev[r], ev[r + 1]));
    t[r] = 1e3 * (double)ms;
  }
  qsort(t, REPS, sizeof *t, cmp_double);
  return t[REPS / 2]; /* the upper median */
}

/* nk kernels over 256 values of y captured as a graph. */
static cudaGraphExec_t capture(cudaStream_t s, int nk, float *y) {
  cudaGraph_t g;
  cudaGraphExec_t x;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  launch(s, NULL, nk, y, 256);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&x, g, 0));
  CK(cudaGraphDestroy(g));
  CK(cudaGraphUpload(x, s));
  return x;
}

int main(int argc, char **argv) {
  const char *tag = argc > 1 ? argv[1] : "probe";
  int n = 1 << 20;
  float *y;
  void *h;
  cudaStream_t s;

  CK(cudaHostAlloc(&h, sizeof(int), cudaHostAllocMapped));
  flag = (volatile int *)h;
  CK(cudaHostGetDevicePointer((void **)&dflag, h, 0));
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int r = 0; r <= REPS; r++) CK(cudaEventCreate(&ev[r]));
  CK(cudaMalloc((void **)&y, (size_t)n * sizeof *y));
  CK(cudaMemset(y, 0, (size_t)n * sizeof *y));
  cudaGraphExec_t g1 = capture(s, 1, y), g3 = capture(s, 3, y);
  CK(cudaStreamSynchronize(s));
  printf("# tag\tround\tk1_us\tk3_us\tk3_4MB_us\tgraph1_us\tgraph3_us\n");
  for (int round = 0; round < ROUNDS; round++) {
    double k1 = timed(s, NULL, 1, y, 256), k3 = timed(s, NULL, 3, y, 256);
    double k3big = timed(s, NULL, 3, y, n);
    double t1 = timed(s, g1, 1, y, 256), t3 = timed(s, g3, 3, y, 256);
    printf("%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", tag, round, k1, k3, k3big, t1, t3);
    fflush(stdout);
  }
  cudaGraphExecDestroy(g1);
  cudaGraphExecDestroy(g3);
  cudaFree(y);
  for (int r = 0; r <= REPS; r++) cudaEventDestroy(ev[r]);
  cudaStreamDestroy(s);
  cudaFreeHost(h);
  return 0;
}
