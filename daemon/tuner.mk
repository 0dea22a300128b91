# daemon/tuner.mk: the cache and the tuner, and their tests.
