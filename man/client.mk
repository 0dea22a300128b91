# man/client.mk: libspmvclient(3) and spmvctl(1).
man_MANS += man/spmvctl.1 man/libspmvclient.3
EXTRA_DIST += man/spmvctl.1.in man/libspmvclient.3.in
CLEANFILES += man/spmvctl.1 man/libspmvclient.3

# Every option and command of `spmvctl --help` is in spmvctl(1), every
# function of spmv.h in libspmvclient(3).
TESTS += tests/check_man_spmvctl.sh
EXTRA_DIST += tests/check_man_spmvctl.sh
