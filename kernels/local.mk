# kernels/local.mk: the sparse core (host) and the CUDA kernels (device).
include kernels/core.mk
include kernels/formats.mk
include kernels/cuda.mk
