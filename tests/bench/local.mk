# tests/bench/local.mk: benchmarks (never run by make check).
