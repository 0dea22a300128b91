# kernels/cuda.mk: the CUDA kernels, a static library built with nvcc.
