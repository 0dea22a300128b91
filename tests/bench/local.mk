# tests/bench/local.mk: benchmarks and probes, built by `make bench` (or by
# every make with ./configure --enable-bench), never run by make check.
include tests/bench/mmio.mk
include tests/bench/gpu.mk
include tests/bench/eval.mk
include tests/bench/roundtrip.mk
include tests/bench/service.mk
include tests/bench/solve.mk
include tests/bench/loadcost.mk
include tests/bench/split.mk
EXTRA_DIST += tests/bench/bench_clock.h

bench: $(EXTRA_PROGRAMS) tests/bench/eval_tuner$(EXEEXT) tests/bench/calib_points$(EXEEXT)
.PHONY: bench
if ENABLE_BENCH
all-local: bench
endif
EXTRA_DIST += tests/bench/RESULTS.md
