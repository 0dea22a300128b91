# tests/bench/mmio.mk: Matrix Market parsing speed.
