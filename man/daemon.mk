# man/daemon.mk: spmvd(8) and spmvd.conf(5).
man_MANS += man/spmvd.8 man/spmvd.conf.5
EXTRA_DIST += man/spmvd.8.in man/spmvd.conf.5.in
CLEANFILES += man/spmvd.8 man/spmvd.conf.5
