# client/local.mk: the Matrix Market reader, libspmvclient and spmvctl.
include client/mmio.mk
include client/client.mk
