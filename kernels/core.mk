# kernels/core.mk: the host sparse core (CSR, profile, fingerprint,
# generators) and its tests.  Formats add their files in kernels/formats.mk.
noinst_LTLIBRARIES += kernels/libspmvcore.la
kernels_libspmvcore_la_SOURCES = \
	kernels/spmv_error.c kernels/spmv_error.h kernels/spmv_types.h \
	kernels/spmv_csr.c kernels/spmv_csr.h \
	kernels/spmv_config.c kernels/spmv_stats.c kernels/spmv_stats.h \
	kernels/spmv_profile.c kernels/spmv_fingerprint.c \
	kernels/spmv_par.c kernels/spmv_par.h kernels/spmv_mix.h \
	kernels/spmv_split.c kernels/spmv_split_plan.c kernels/spmv_split.h \
	kernels/spmv_gen.h kernels/spmv_gen_impl.h kernels/spmv_gen_util.c \
	kernels/spmv_gen.c kernels/spmv_gen_rmat.c kernels/spmv_gen_tile.c \
	kernels/spmv_gen_text.c \
	kernels/spmv_formats.h kernels/spmv_profile.h
kernels_libspmvcore_la_CPPFLAGS = $(AM_CPPFLAGS) $(XXHASH_CFLAGS)
kernels_libspmvcore_la_LIBADD = $(XXHASH_LIBS) -lm

# Tests of the core: one check program per module.
CORE_TEST_LDADD = kernels/libspmvcore.la $(XXHASH_LIBS) $(CHECK_LIBS) -lm
check_PROGRAMS += tests/check_csr
TESTS += tests/check_csr
tests_check_csr_SOURCES = tests/check_csr.c
tests_check_csr_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_csr_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_csr_LDADD = $(CORE_TEST_LDADD)
check_PROGRAMS += tests/check_split
TESTS += tests/check_split
tests_check_split_SOURCES = tests/check_split.c
tests_check_split_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_split_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_split_LDADD = $(CORE_TEST_LDADD)
check_PROGRAMS += tests/check_par
TESTS += tests/check_par
tests_check_par_SOURCES = tests/check_par.c
tests_check_par_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_par_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_par_LDADD = $(CORE_TEST_LDADD)
check_PROGRAMS += tests/check_stats
TESTS += tests/check_stats
tests_check_stats_SOURCES = tests/check_stats.c
tests_check_stats_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_stats_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_stats_LDADD = $(CORE_TEST_LDADD)
check_PROGRAMS += tests/check_config
TESTS += tests/check_config
tests_check_config_SOURCES = tests/check_config.c
tests_check_config_CPPFLAGS = $(DAEMON_CPPFLAGS)
tests_check_config_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_config_LDADD = $(CORE_TEST_LDADD)
check_PROGRAMS += tests/check_profile
TESTS += tests/check_profile
tests_check_profile_SOURCES = tests/check_profile.c
tests_check_profile_CPPFLAGS = $(DAEMON_CPPFLAGS) $(XXHASH_CFLAGS)
tests_check_profile_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_profile_LDADD = $(CORE_TEST_LDADD)
check_PROGRAMS += tests/check_gen
TESTS += tests/check_gen
tests_check_gen_SOURCES = tests/check_gen.c
tests_check_gen_CPPFLAGS = $(DAEMON_CPPFLAGS) $(XXHASH_CFLAGS)
tests_check_gen_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_gen_LDADD = client/libspmvmmio.la $(ZLIB_LIBS) $(CORE_TEST_LDADD)
