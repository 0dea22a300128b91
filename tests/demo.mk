# tests/demo.mk: `make demo`, the README's main job.
EXTRA_DIST += tests/demo.sh
demo: all
	$(SHELL) $(srcdir)/tests/demo.sh "$(abs_top_builddir)" "$(abs_top_srcdir)"
.PHONY: demo
noinst_PROGRAMS += tests/demo_client
tests_demo_client_SOURCES = tests/demo_client.c
tests_demo_client_CPPFLAGS = $(CLIENT_CPPFLAGS)
tests_demo_client_LDADD = client/libspmvclient.la client/libspmvmmio.la kernels/libspmvcore.la -lm
