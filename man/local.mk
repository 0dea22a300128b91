# man/local.mk: the manual pages.
include man/client.mk
include man/daemon.mk
