# tests/bench/gpu.mk: SpMV kernels against cuSPARSE, and the tuner evaluation.
