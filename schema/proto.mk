# schema/proto.mk: the wire protocol reference, one spec per message.
EXTRA_DIST += schema/PROTOCOL.md \
	schema/proto/common.json \
	schema/proto/hello.json \
	schema/proto/load.json \
	schema/proto/multiply.json \
	schema/proto/multiply-batch.json \
	schema/proto/attach-vectors.json \
	schema/proto/info.json \
	schema/proto/list.json \
	schema/proto/free.json \
	schema/proto/tune.json \
	schema/proto/bench.json \
	schema/proto/status.json \
	schema/proto/forget.json \
	schema/proto/import.json \
	schema/proto/calibrate.json \
	schema/proto/vector-create.json \
	schema/proto/vector-free.json \
	schema/proto/ops.json \
	schema/proto/solve.json \
	schema/proto/cancel.json \
	schema/proto/export.json \
	schema/proto/shutdown.json
