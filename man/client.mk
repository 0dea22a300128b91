# man/client.mk: libspmvclient(3) and spmvctl(1).
