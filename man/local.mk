# man/local.mk: the manual pages.
