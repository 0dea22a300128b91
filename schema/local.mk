# schema/local.mk: SQLite migrations and the wire protocol reference.
include schema/sql.mk
include schema/proto.mk
