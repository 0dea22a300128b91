# tests/bench/eval.mk: the tuner evaluation (issue 5), a benchmark, never in make check.
