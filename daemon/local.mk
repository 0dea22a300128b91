# daemon/local.mk: spmvd, its workers, the cache and the tuner.
include daemon/daemon.mk
include daemon/tuner.mk
