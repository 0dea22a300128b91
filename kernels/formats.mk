# kernels/formats.mk: CSR -> layout conversions and CPU references, and their tests.
