# schema/proto.mk: the wire protocol reference, one spec per message.
