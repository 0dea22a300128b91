# schema/sql.mk: numbered SQLite migrations, embedded into the daemon.
