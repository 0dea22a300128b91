# schema/sql.mk: numbered SQLite migrations, embedded into the daemon.
# Add a migration by appending it to SPMVD_MIGRATIONS (numbers 1, 2, ...).
SPMVD_MIGRATIONS = schema/001_init.sql schema/002_splits.sql
EXTRA_DIST += schema/embed.sh $(SPMVD_MIGRATIONS)

# Generated in the build tree, so it works in VPATH builds and distcheck.
daemon/spmvd_schema.c: $(SPMVD_MIGRATIONS) $(srcdir)/schema/embed.sh
	$(AM_V_GEN)$(MKDIR_P) daemon && \
	files=; for f in $(SPMVD_MIGRATIONS); do \
	  if test -f "$$f"; then files="$$files $$f"; \
	  else files="$$files $(srcdir)/$$f"; fi; \
	done; \
	$(SHELL) $(srcdir)/schema/embed.sh $$files > $@.tmp && mv -f $@.tmp $@
BUILT_SOURCES += daemon/spmvd_schema.c
CLEANFILES += daemon/spmvd_schema.c daemon/spmvd_schema.c.tmp
