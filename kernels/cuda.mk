# kernels/cuda.mk: the CUDA kernels, a static library built with nvcc.
# Device code stays out of libtool: a plain archive, linked only by the
# cuda worker, the GPU tests and the GPU benchmarks.
SPMV_CUDA_SRC = \
	kernels/spmv_dev_pool.cu kernels/spmv_device.cu \
	kernels/spmv_timer.cu kernels/spmv_graph.cu \
	kernels/cusparse.cu \
	kernels/csr_scalar_gpu.cu kernels/csr_vector_gpu.cu \
	kernels/csr_adaptive_gpu.cu kernels/csr_merge_gpu.cu kernels/ell_gpu.cu \
	kernels/ellr_t_gpu.cu kernels/coo_gpu.cu kernels/hyb_gpu.cu \
	kernels/dia_gpu.cu kernels/jad_gpu.cu kernels/sell_gpu.cu \
	kernels/csr16_gpu.cu kernels/csr_stream_gpu.cu kernels/csr_panel_gpu.cu \
	kernels/csr_dev.cu kernels/ell_dev.cu kernels/coo_dev.cu \
	kernels/hyb_dev.cu kernels/dia_dev.cu kernels/jad_dev.cu \
	kernels/sell_dev.cu kernels/cusparse_dev.cu kernels/spmv_blas1.cu
SPMV_CUDA_HDR = kernels/spmv_kernels.h kernels/spmv_cuda.cuh \
	kernels/spmv_segreduce.cuh kernels/spmv_longrow.cuh \
	kernels/spmv_dev_arrays.cuh
EXTRA_DIST += $(SPMV_CUDA_SRC) $(SPMV_CUDA_HDR) kernels/spmv_fault.cu kernels/spmv_fault.h

if HAVE_CUDA
noinst_LIBRARIES += kernels/libspmvkernels_cuda.a
kernels_libspmvkernels_cuda_a_SOURCES = $(SPMV_CUDA_SRC)
# The faults of the fault-injection build's tests, in no other build.
if FAULT_INJECTION
kernels_libspmvkernels_cuda_a_SOURCES += kernels/spmv_fault.cu
endif
# nvcc does not track headers: rebuild every kernel when one changes.
$(kernels_libspmvkernels_cuda_a_OBJECTS): $(SPMV_CUDA_HDR) kernels/spmv_fault.h \
	kernels/spmv_formats.h kernels/spmv_csr.h kernels/spmv_error.h kernels/spmv_types.h

SUFFIXES = .cu
.cu.o:
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(NVCC) -O3 $(CUDA_ARCH_FLAGS) $(NVCCFLAGS) -Xcompiler -fPIC -I$(top_srcdir)/kernels \
		-I$(top_builddir) -c -o $@ $<
endif
