# tests/bench/eval.mk: the tuner's evaluation and the predictor's replay.
# Both are run by hand as benchmarks (tests/bench/eval_tuner --help) and by
# make check on fixed tables and small matrices, so make check builds them.
check_PROGRAMS += tests/bench/eval_tuner
tests_bench_eval_tuner_SOURCES = tests/bench/eval_tuner.c \
	tests/bench/eval_tuner_live.c tests/bench/eval_tuner_confirm.c \
	tests/bench/eval_tuner_report.c tests/bench/eval_tuner_replay.c \
	tests/bench/eval_tuner_probe.c tests/bench/eval_tuner_heldout.c \
	tests/bench/eval_tuner_impl.h \
	tests/bench/eval_store.c tests/bench/eval_store.h \
	tests/bench/suite.c tests/bench/suite.h \
	tests/bench/suite_heldout.c tests/bench/suite_heldout.h \
	daemon/spmvd_backend_cpu.c daemon/spmvd_backend_cpu_vec.c daemon/spmvd_log.c
tests_bench_eval_tuner_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) \
	$(SQLITE_CFLAGS) $(ZLIB_CFLAGS)
EVAL_LDADD = daemon/libspmvdtuner.la kernels/libspmvcore.la \
	client/libspmvmmio.la $(JANSSON_LIBS) $(ZLIB_LIBS) -lpthread -lm
if HAVE_CUDA
tests_bench_eval_tuner_SOURCES += daemon/spmvd_backend_cuda.c daemon/spmvd_backend_cuda_vec.c daemon/spmvd_cuda_pipe.c
tests_bench_eval_tuner_CPPFLAGS += $(CUDA_CPPFLAGS)
tests_bench_eval_tuner_LDADD = kernels/libspmvkernels_cuda.a $(EVAL_LDADD) \
	kernels/libspmvkernels_cuda.a $(CUDA_LIBS)
else
tests_bench_eval_tuner_LDADD = $(EVAL_LDADD)
endif
EXTRA_DIST += tests/bench/device-run.sh tests/bench/daemon-calib.sh

# The predictor's calibration points and the suite's features as tables.
check_PROGRAMS += tests/bench/calib_points
tests_bench_calib_points_SOURCES = tests/bench/calib_points.c \
	tests/bench/calib_points_collect.c tests/bench/calib_points_features.c \
	tests/bench/calib_points_twins.c tests/bench/calib_points_refeat.c \
	tests/bench/calib_points_replay.c tests/bench/calib_points_impl.h \
	tests/bench/eval_store.c tests/bench/eval_store.h \
	tests/bench/suite.c tests/bench/suite.h \
	tests/bench/suite_heldout.c tests/bench/suite_heldout.h \
	daemon/spmvd_backend_cpu.c daemon/spmvd_backend_cpu_vec.c daemon/spmvd_log.c
tests_bench_calib_points_CPPFLAGS = $(tests_bench_eval_tuner_CPPFLAGS)
tests_bench_calib_points_LDADD = $(tests_bench_eval_tuner_LDADD)
if HAVE_CUDA
tests_bench_calib_points_SOURCES += daemon/spmvd_backend_cuda.c daemon/spmvd_backend_cuda_vec.c daemon/spmvd_cuda_pipe.c
endif

# The tuner's rules and the predictor replayed on measured tables
# (tests/data/replay, no GPU), and the evaluation run whole on the cpu
# backend, on the suite's matrices and on the held-out suite.
TESTS += tests/check_replay.sh tests/check_predict_replay.sh tests/check_eval_cpu.sh
EXTRA_DIST += tests/check_predict_replay.sh tests/check_replay.sh tests/check_eval_cpu.sh
