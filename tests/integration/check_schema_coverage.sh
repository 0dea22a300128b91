#!/bin/sh
# check_schema_coverage.sh: fails when a schema/proto/<op>.json was never
# exercised by the integration tests.
#
# Every integration test program records the ops it exercised in
# $SPMV_TOP_BUILDDIR/tests/integration/ops/<program>.ops, one "<kind> <op>"
# line each (kinds: sent, reply, error, event; see itest_ops.c).  An op
# counts as exercised when at least one reply to it, ok or error, was
# validated against its schema.  Ops named in
# tests/integration/ops-unexercised.txt are tolerated.  Runs last in
# `make check` (tests/local.mk orders it after the other integration tests);
# exits 77 (skipped) when no integration test has recorded anything.

top_src=${SPMV_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${SPMV_TOP_BUILDDIR:-.}
proto="$top_src/schema/proto"
ops_dir="$top_build/tests/integration/ops"
allow="$top_src/tests/integration/ops-unexercised.txt"

if [ ! -d "$proto" ]; then
  echo "check_schema_coverage: no $proto" >&2
  exit 99
fi
set -- "$ops_dir"/*.ops
if [ ! -f "$1" ]; then
  echo "check_schema_coverage: no integration test recorded its ops in $ops_dir; skipped"
  exit 77
fi

# The ops of the protocol: every schema but the shared definitions.
ops=
for f in "$proto"/*.json; do
  op=$(basename "$f" .json)
  [ "$op" = common ] || ops="$ops $op"
done
if [ -z "$ops" ]; then
  echo "check_schema_coverage: no schema in $proto" >&2
  exit 99
fi

# The allowlist: one op a line, '#' starts a comment.
allowed=
if [ -f "$allow" ]; then
  allowed=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$allow")
fi

echo "records: $*"
missing=
tolerated=0
for op in $ops; do
  kinds=$(cat "$@" | awk -v op="$op" '$2 == op { print $1 }' | sort -u | tr '\n' ' ')
  who=$(grep -l -E "^(reply|error) $op\$" "$@" 2>/dev/null | sed 's,.*/,,; s,\.ops$,,' | tr '\n' ' ')
  case " $kinds" in
  *" reply "*|*" error "*)
    printf '%-16s %s(%s)\n' "$op" "$kinds" "${who% }"
    case " $(echo $allowed) " in
    *" $op "*) echo "  note: $op is exercised now; remove it from ops-unexercised.txt" ;;
    esac
    continue
    ;;
  esac
  case " $(echo $allowed) " in
  *" $op "*)
    printf '%-16s never exercised (allowed by ops-unexercised.txt)\n' "$op"
    tolerated=$((tolerated + 1))
    continue
    ;;
  esac
  if [ -n "$kinds" ]; then
    printf '%-16s FAIL: %sbut no reply validated\n' "$op" "$kinds"
  else
    printf '%-16s FAIL: never exercised\n' "$op"
  fi
  missing="$missing $op"
done

for op in $allowed; do
  [ -f "$proto/$op.json" ] || echo "note: ops-unexercised.txt names $op, which has no schema"
done

if [ -n "$missing" ]; then
  echo "check_schema_coverage: no integration test validated a reply to:$missing" >&2
  echo "  (add a test that sends these ops through itest_call/itest_recv_reply)" >&2
  exit 1
fi
n=$(echo $ops | wc -w)
if [ "$tolerated" -gt 0 ]; then
  echo "check_schema_coverage: $((n - tolerated)) of $n ops of schema/proto exercised, $tolerated tolerated by ops-unexercised.txt"
else
  echo "check_schema_coverage: all $n ops of schema/proto exercised"
fi
exit 0
