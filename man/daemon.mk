# man/daemon.mk: spmvd(8) and spmvd.conf(5).
