# client/python/python.mk: the Python module spmvd, libspmvclient through ctypes.
# It is installed into the configured Python's site-packages when
# configure found one; its test skips without Python, numpy or scipy.
SPMVD_PY_SOURCES = client/python/spmvd/__init__.py client/python/spmvd/_lib.py \
	client/python/spmvd/_client.py client/python/spmvd/_matrix.py \
	client/python/spmvd/_vector.py client/python/spmvd/_solve.py
EXTRA_DIST += $(SPMVD_PY_SOURCES) client/python/spmvd/_config.py.in client/python/README

if HAVE_PYTHON
spmvdpythondir = $(pythondir)/spmvd
spmvdpython_PYTHON = $(SPMVD_PY_SOURCES)
nodist_spmvdpython_PYTHON = client/python/spmvd/_config.py
endif

# The installed module loads the installed library by its absolute path:
# libtool names it libspmvclient.so.(current - age) on GNU/Linux.
client/python/spmvd/_config.py: $(srcdir)/client/python/spmvd/_config.py.in Makefile
	$(AM_V_GEN)$(MKDIR_P) client/python/spmvd && v='$(SPMV_LT_VERSION)' && \
	major=$$(( $${v%%:*} - $${v##*:} )) && \
	sed -e "s|@LIBSPMVCLIENT[@]|$(libdir)/libspmvclient.so.$$major|" \
		$(srcdir)/client/python/spmvd/_config.py.in >$@-t && mv $@-t $@
CLEANFILES += client/python/spmvd/_config.py

# The module against a private spmvd, with the configured Python.
TESTS += tests/python/check_python.sh
EXTRA_DIST += tests/python/check_python.sh tests/python/test_spmvd.py \
	tests/python/test_spmvd_solve.py tests/python/spmvd_testing.py
TESTS_ENVIRONMENT += SPMV_PYTHON='$(PYTHON)'; export SPMV_PYTHON;

# make installcheck (tests/local.mk runs it): the installed module finds
# the installed library by itself; only without DESTDIR, where the
# configured path is the real one, and with numpy, which it imports.
installcheck-python:
	@if test "x$(PYTHON)" = "x:" || test -n "$(DESTDIR)" || \
	    ! $(PYTHON) -c 'import numpy' 2>/dev/null; then \
	  echo "installcheck-python: no Python, no numpy, or DESTDIR set: skipped"; exit 0; fi; \
	v='$(SPMV_LT_VERSION)'; lib="$(libdir)/libspmvclient.so.$$(( $${v%%:*} - $${v##*:} ))"; \
	cd / && env -u SPMVD_LIBSPMVCLIENT PYTHONPATH='$(pythondir)' PYTHONDONTWRITEBYTECODE=1 \
	  $(PYTHON) -c 'import sys, spmvd; p = spmvd.library_path(); \
	    ok = p == sys.argv[1] and spmvd.__file__.startswith(sys.argv[2]); \
	    print("installcheck-python:", spmvd.__file__, "loads", p); sys.exit(0 if ok else 1)' \
	  "$$lib" "$(spmvdpythondir)/"
.PHONY: installcheck-python
