# client/client.mk: the wire code, libspmvclient and spmvctl.
include_HEADERS += client/spmv.h
