# man/daemon.mk: spmvd(8) and spmvd.conf(5).
dist_man_MANS += man/spmvd.8 man/spmvd.conf.5
