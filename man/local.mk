# man/local.mk: the manual pages.
include man/client.mk
include man/daemon.mk

# Each page from its .in, with the configured directories.
man/spmvd.8: $(top_srcdir)/man/spmvd.8.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(SPMV_SUBST) $(top_srcdir)/man/spmvd.8.in > $@
man/spmvd.conf.5: $(top_srcdir)/man/spmvd.conf.5.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(SPMV_SUBST) $(top_srcdir)/man/spmvd.conf.5.in > $@
man/spmvctl.1: $(top_srcdir)/man/spmvctl.1.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(SPMV_SUBST) $(top_srcdir)/man/spmvctl.1.in > $@
man/libspmvclient.3: $(top_srcdir)/man/libspmvclient.3.in Makefile
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(SPMV_SUBST) $(top_srcdir)/man/libspmvclient.3.in > $@
