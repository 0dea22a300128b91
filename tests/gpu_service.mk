# tests/gpu_service.mk: the service end to end on the cuda backend, and
# its faults (skipped, exit 77, where no GPU is present).
EXTRA_DIST += tests/integration/check_gpu_service.c \
	tests/integration/check_gpu_vectors.sh \
	tests/integration/check_gpu_faults.c tests/integration/gpu-sanitize.sh \
	tests/integration/check_gpu_split.sh
if HAVE_CUDA
check_PROGRAMS += tests/integration/check_gpu_service
TESTS += tests/integration/check_gpu_service
tests_integration_check_gpu_service_SOURCES = tests/integration/check_gpu_service.c \
	tests/gpu_common.c tests/gpu_common.h
tests_integration_check_gpu_service_CPPFLAGS = $(ITEST_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/tests
tests_integration_check_gpu_service_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_gpu_service_LDADD = $(ITEST_LDADD) $(GPU_LDADD)
$(tests_integration_check_gpu_service_OBJECTS): daemon/spmvd daemon/spmvd-worker
# The vector tests of tests/local.mk, run again on the cuda backend.
TESTS += tests/integration/check_gpu_vectors.sh
# The split matrices' tests, on a worker per GPU (two GPUs or more).
TESTS += tests/integration/check_gpu_split.sh
# GPU faults on cue (a fault-injection build; skipped, 77, in any other).
check_PROGRAMS += tests/integration/check_gpu_faults
TESTS += tests/integration/check_gpu_faults
tests_integration_check_gpu_faults_SOURCES = tests/integration/check_gpu_faults.c \
	tests/gpu_common.c tests/gpu_common.h
tests_integration_check_gpu_faults_CPPFLAGS = $(ITEST_CPPFLAGS) $(CUDA_CPPFLAGS) \
	$(SQLITE_CFLAGS) -I$(top_srcdir)/tests
tests_integration_check_gpu_faults_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_integration_check_gpu_faults_LDADD = $(ITEST_LDADD) $(GPU_LDADD) $(SQLITE_LIBS) -lm
$(tests_integration_check_gpu_faults_OBJECTS): daemon/spmvd daemon/spmvd-worker
# The GPU tests share one device, and some read its free memory as a whole
# (the pool's test in check_gpu_device, the faults' ballast): under make -j
# they run one at a time, each holding a lock that tests/run-test.sh takes,
# so that any one of them still runs alone when TESTS names it.
TESTS_ENVIRONMENT += SPMV_SERIAL_TESTS='check_gpu_formats check_gpu_device check_gpu_blas \
	check_gpu_service check_gpu_vectors.sh check_gpu_faults check_gpu_split.sh'; \
	export SPMV_SERIAL_TESTS;
endif

EXTRA_DIST += tests/check_nccl.c
if HAVE_NCCL
# NCCL as configure found it (issue 54's engine): it links, and its library
# agrees with its header.
check_PROGRAMS += tests/check_nccl
TESTS += tests/check_nccl
tests_check_nccl_SOURCES = tests/check_nccl.c
tests_check_nccl_CPPFLAGS = $(NCCL_CPPFLAGS) $(CUDA_CPPFLAGS)
tests_check_nccl_LDADD = $(NCCL_LIBS)
endif
