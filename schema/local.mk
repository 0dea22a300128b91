# schema/local.mk: SQLite migrations and the wire protocol reference.
