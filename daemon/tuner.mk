# daemon/tuner.mk: the tuning library, the tuner, and their tests.
# The tuning library that spmvd and spmvctl share: the cache, the
# decisions it stores, the analytic model and the statistical predictor
# with its calibration.  spmvctl takes nothing else from daemon/.
noinst_LTLIBRARIES += daemon/libspmvtuning.la
daemon_libspmvtuning_la_SOURCES = \
	daemon/spmvd_cache.c daemon/spmvd_cache.h daemon/spmvd_cache_impl.h \
	daemon/spmvd_cache_store.c daemon/spmvd_cache_json.c \
	daemon/spmvd_cache_split.c \
	daemon/spmvd_schema.h \
	daemon/spmvd_decision.c daemon/spmvd_decision.h \
	daemon/spmvd_model.c daemon/spmvd_model.h \
	daemon/spmvd_calib.c daemon/spmvd_calib.h \
	daemon/spmvd_predict_feat.c daemon/spmvd_predict_feat.h \
	daemon/spmvd_predict_fit.c \
	daemon/spmvd_predict_basis.c \
	daemon/spmvd_predict_tree.c \
	daemon/spmvd_predict.c daemon/spmvd_predict.h \
	daemon/spmvd_predict_json.c \
	daemon/spmvd_predict_impl.h
nodist_daemon_libspmvtuning_la_SOURCES = daemon/spmvd_schema.c
daemon_libspmvtuning_la_CPPFLAGS = $(DAEMON_CPPFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
daemon_libspmvtuning_la_LIBADD = kernels/libspmvcore.la $(SQLITE_LIBS) $(JANSSON_LIBS) -lm

# The tuner: strategies, their candidates and the race (the daemon's).
noinst_LTLIBRARIES += daemon/libspmvdtuner.la
daemon_libspmvdtuner_la_SOURCES = \
	daemon/spmvd_tuner.c daemon/spmvd_tuner.h daemon/spmvd_tuner_impl.h \
	daemon/spmvd_tuner_rules.c daemon/spmvd_tuner_race.c
daemon_libspmvdtuner_la_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS)
daemon_libspmvdtuner_la_LIBADD = daemon/libspmvtuning.la

TUNER_TEST_CPPFLAGS = $(DAEMON_CPPFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
TUNER_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
TUNER_TEST_LDADD = daemon/libspmvdtuner.la $(CHECK_LIBS)

check_PROGRAMS += tests/check_model tests/check_cache \
	tests/check_tuner tests/check_tuner_auto tests/check_tuner_race \
	tests/check_tuner_cover \
	tests/check_predict tests/check_predict_feat tests/check_predict_calib \
	tests/check_predict_store
TESTS += tests/check_model tests/check_cache \
	tests/check_tuner tests/check_tuner_auto tests/check_tuner_race \
	tests/check_tuner_cover \
	tests/check_predict tests/check_predict_feat tests/check_predict_calib \
	tests/check_predict_store
tests_check_model_SOURCES = tests/check_model.c
tests_check_model_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_model_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_model_LDADD = $(TUNER_TEST_LDADD)
tests_check_cache_SOURCES = tests/check_cache.c
tests_check_cache_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_cache_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_cache_LDADD = $(TUNER_TEST_LDADD)
tests_check_tuner_SOURCES = tests/check_tuner.c tests/tuner_test.h
tests_check_tuner_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_tuner_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_tuner_LDADD = $(TUNER_TEST_LDADD)
tests_check_tuner_auto_SOURCES = tests/check_tuner_auto.c tests/tuner_test.h
tests_check_tuner_auto_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_tuner_auto_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_tuner_auto_LDADD = $(TUNER_TEST_LDADD)
tests_check_tuner_cover_SOURCES = tests/check_tuner_cover.c tests/tuner_test.h
tests_check_tuner_cover_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_tuner_cover_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_tuner_cover_LDADD = $(TUNER_TEST_LDADD)
tests_check_tuner_race_SOURCES = tests/check_tuner_race.c tests/tuner_test.h
tests_check_tuner_race_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_tuner_race_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_tuner_race_LDADD = $(TUNER_TEST_LDADD)
tests_check_predict_SOURCES = tests/check_predict.c tests/predict_test.h
tests_check_predict_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_predict_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_predict_LDADD = $(TUNER_TEST_LDADD)
tests_check_predict_feat_SOURCES = tests/check_predict_feat.c
tests_check_predict_feat_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_predict_feat_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_predict_feat_LDADD = $(TUNER_TEST_LDADD)
tests_check_predict_calib_SOURCES = tests/check_predict_calib.c tests/predict_test.h
tests_check_predict_calib_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_predict_calib_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_predict_calib_LDADD = $(TUNER_TEST_LDADD)
tests_check_predict_store_SOURCES = tests/check_predict_store.c tests/predict_test.h
tests_check_predict_store_CPPFLAGS = $(TUNER_TEST_CPPFLAGS)
tests_check_predict_store_CFLAGS = $(TUNER_TEST_CFLAGS)
tests_check_predict_store_LDADD = $(TUNER_TEST_LDADD)
