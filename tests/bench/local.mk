# tests/bench/local.mk: benchmarks (never run by make check).
include tests/bench/mmio.mk
include tests/bench/gpu.mk
include tests/bench/eval.mk
include tests/bench/roundtrip.mk
EXTRA_DIST += tests/bench/bench_clock.h
