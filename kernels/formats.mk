# kernels/formats.mk: CSR -> layout conversions and CPU references, and their tests.
kernels_libspmvcore_la_SOURCES += \
	kernels/spmv_layout.c kernels/spmv_layout.h \
	kernels/csr.c kernels/csr_adaptive.c kernels/ell.c kernels/ellr_t.c \
	kernels/coo.c kernels/hyb.c kernels/dia.c kernels/jad.c kernels/sell.c
