# tests/demo.mk: `make demo`, the README's main job.
EXTRA_DIST += tests/demo.sh
demo: all
	$(SHELL) $(srcdir)/tests/demo.sh "$(abs_top_builddir)" "$(abs_top_srcdir)"
.PHONY: demo
