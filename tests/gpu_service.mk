# tests/gpu_service.mk: the service end to end on the cuda backend (skipped,
# exit 77, where no GPU is present).
EXTRA_DIST += tests/integration/check_gpu_service.c \
	tests/integration/check_gpu_vectors.sh tests/integration/gpu-sanitize.sh
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
endif
