# daemon/daemon.mk: spmvd front end, workers, config, units, and their tests.
