# client/mmio.mk: the Matrix Market reader and its tests.
