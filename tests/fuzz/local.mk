# tests/fuzz/local.mk: libFuzzer targets, one per input spmvd and its
# tools parse from outside, and their corpora (tests/fuzz/README).
#
# Every build replays each corpus (the committed inputs and every crash
# input found so far) through its target with a plain main(),
# tests/fuzz/replay.c: make check needs no clang and takes seconds.  With
# ./configure CC=clang --enable-fuzzing the targets are also built as
# libFuzzer binaries with ASan and UBSan, and
#     make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="wire csr"]
# runs each on a scratch copy of its corpus (tests/fuzz/work/<name>, in the
# build tree) for FUZZ_SECONDS, then names any crash file it left there.

FUZZ_ALL = wire mmio csr tuning import config
FUZZ_TARGETS = $(FUZZ_ALL)
FUZZ_SECONDS = 60
# Per input: a hang is a finding after 10 s, memory beyond 2 GiB too.
FUZZ_FLAGS = -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

FUZZ_CORPUS = $(top_srcdir)/tests/fuzz/corpus
EXTRA_DIST += tests/fuzz/README tests/fuzz/corpus

# What each target links, shared by its replay and libFuzzer builds.
FUZZ_CPPFLAGS = $(DAEMON_CPPFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS) \
	$(ZLIB_CFLAGS) -I$(top_srcdir)/tests/fuzz
FUZZ_WIRE_SOURCES = tests/fuzz/fuzz_wire.c tests/fuzz/fuzz_common.h \
	daemon/spmvd_fields.c daemon/spmvd_fields.h
FUZZ_WIRE_LIBS = client/libspmvwire.la $(JANSSON_LIBS)
FUZZ_MMIO_SOURCES = tests/fuzz/fuzz_mmio.c tests/fuzz/fuzz_common.h
FUZZ_MMIO_LIBS = client/libspmvmmio.la $(ZLIB_LIBS) -lm
FUZZ_CSR_SOURCES = tests/fuzz/fuzz_csr.c tests/fuzz/fuzz_common.h
FUZZ_CSR_LIBS = kernels/libspmvcore.la $(XXHASH_LIBS) -lm
FUZZ_TUNING_SOURCES = tests/fuzz/fuzz_tuning.c tests/fuzz/fuzz_common.h
FUZZ_TUNING_LIBS = daemon/libspmvtuning.la $(SQLITE_LIBS) $(JANSSON_LIBS) -lm
FUZZ_IMPORT_SOURCES = tests/fuzz/fuzz_import.c tests/fuzz/fuzz_common.h
FUZZ_IMPORT_LIBS = $(FUZZ_TUNING_LIBS)
FUZZ_CONFIG_SOURCES = tests/fuzz/fuzz_config.c tests/fuzz/fuzz_common.h
FUZZ_CONFIG_LIBS = $(FUZZ_TUNING_LIBS)

# The replays, as ordinary tests.
check_PROGRAMS += tests/fuzz/replay_wire tests/fuzz/replay_mmio \
	tests/fuzz/replay_csr tests/fuzz/replay_tuning tests/fuzz/replay_import \
	tests/fuzz/replay_config
TESTS += tests/fuzz/replay_wire tests/fuzz/replay_mmio \
	tests/fuzz/replay_csr tests/fuzz/replay_tuning tests/fuzz/replay_import \
	tests/fuzz/replay_config
tests_fuzz_replay_wire_SOURCES = $(FUZZ_WIRE_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_wire_CPPFLAGS = $(FUZZ_CPPFLAGS) -DFUZZ_NAME='"wire"'
tests_fuzz_replay_wire_LDADD = $(FUZZ_WIRE_LIBS)
tests_fuzz_replay_mmio_SOURCES = $(FUZZ_MMIO_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_mmio_CPPFLAGS = $(FUZZ_CPPFLAGS) -DFUZZ_NAME='"mmio"'
tests_fuzz_replay_mmio_LDADD = $(FUZZ_MMIO_LIBS)
tests_fuzz_replay_csr_SOURCES = $(FUZZ_CSR_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_csr_CPPFLAGS = $(FUZZ_CPPFLAGS) -DFUZZ_NAME='"csr"'
tests_fuzz_replay_csr_LDADD = $(FUZZ_CSR_LIBS)
tests_fuzz_replay_tuning_SOURCES = $(FUZZ_TUNING_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_tuning_CPPFLAGS = $(FUZZ_CPPFLAGS) -DFUZZ_NAME='"tuning"'
tests_fuzz_replay_tuning_LDADD = $(FUZZ_TUNING_LIBS)
tests_fuzz_replay_import_SOURCES = $(FUZZ_IMPORT_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_import_CPPFLAGS = $(FUZZ_CPPFLAGS) -DFUZZ_NAME='"import"'
tests_fuzz_replay_import_LDADD = $(FUZZ_IMPORT_LIBS)
tests_fuzz_replay_config_SOURCES = $(FUZZ_CONFIG_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_config_CPPFLAGS = $(FUZZ_CPPFLAGS) -DFUZZ_NAME='"config"'
tests_fuzz_replay_config_LDADD = $(FUZZ_CONFIG_LIBS)

if ENABLE_FUZZING
# The same targets with libFuzzer's main, built with every make.
noinst_PROGRAMS += tests/fuzz/fuzz_wire tests/fuzz/fuzz_mmio \
	tests/fuzz/fuzz_csr tests/fuzz/fuzz_tuning tests/fuzz/fuzz_import \
	tests/fuzz/fuzz_config
tests_fuzz_fuzz_wire_SOURCES = $(FUZZ_WIRE_SOURCES)
tests_fuzz_fuzz_wire_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_wire_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_wire_LDADD = $(FUZZ_WIRE_LIBS)
tests_fuzz_fuzz_mmio_SOURCES = $(FUZZ_MMIO_SOURCES)
tests_fuzz_fuzz_mmio_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_mmio_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_mmio_LDADD = $(FUZZ_MMIO_LIBS)
tests_fuzz_fuzz_csr_SOURCES = $(FUZZ_CSR_SOURCES)
tests_fuzz_fuzz_csr_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_csr_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_csr_LDADD = $(FUZZ_CSR_LIBS)
tests_fuzz_fuzz_tuning_SOURCES = $(FUZZ_TUNING_SOURCES)
tests_fuzz_fuzz_tuning_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_tuning_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_tuning_LDADD = $(FUZZ_TUNING_LIBS)
tests_fuzz_fuzz_import_SOURCES = $(FUZZ_IMPORT_SOURCES)
tests_fuzz_fuzz_import_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_import_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_import_LDADD = $(FUZZ_IMPORT_LIBS)
tests_fuzz_fuzz_config_SOURCES = $(FUZZ_CONFIG_SOURCES)
tests_fuzz_fuzz_config_CPPFLAGS = $(FUZZ_CPPFLAGS)
tests_fuzz_fuzz_config_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_config_LDADD = $(FUZZ_CONFIG_LIBS)

# New inputs go to the scratch copy, never to the tree's corpus; a crash
# stops that target, is named, and fails make fuzz once all have run.
fuzz: $(FUZZ_ALL:%=tests/fuzz/fuzz_%)
	@fail=0; for t in $(FUZZ_TARGETS); do \
	  w=tests/fuzz/work/$$t; rm -rf $$w; $(MKDIR_P) $$w/corpus $$w/crashes; \
	  cp $(FUZZ_CORPUS)/$$t/* $$w/corpus/; \
	  echo "fuzz $$t: $(FUZZ_SECONDS) s, log in $$w/log"; \
	  ./tests/fuzz/fuzz_$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$$w/crashes/ $$w/corpus > $$w/log 2>&1; \
	  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' $$w/log; \
	  for f in $$w/crashes/*; do \
	    test -f "$$f" || continue; fail=1; \
	    echo "fuzz $$t: FOUND $$f (copy it to $(FUZZ_CORPUS)/$$t once fixed)"; \
	  done; \
	done; exit $$fail
else
fuzz:
	@echo "make fuzz: configure with CC=clang --enable-fuzzing first" >&2; exit 1
endif
.PHONY: fuzz

clean-local: fuzz-clean
fuzz-clean:
	-rm -rf tests/fuzz/work
.PHONY: fuzz-clean
