#!/bin/sh
# check_exports.sh: libspmvclient exports exactly the functions declared in
# client/spmv.h, and no other global symbol (jansson's check-exports idea).
top_srcdir=${SPMV_TOP_SRCDIR:-${srcdir:-.}/..}
top_builddir=${SPMV_TOP_BUILDDIR:-.}
lib=$top_builddir/client/.libs/libspmvclient.so
header=$top_srcdir/client/spmv.h
types=$top_srcdir/kernels/spmv_types.h

[ -f "$lib" ] || { echo "no $lib (shared libraries disabled?): skipped"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "no nm: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# Every defined dynamic symbol of the library (functions and data).
nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' |
  grep -v '^$' | sort -u >"$tmp/exported"
# Every function the public header declares: a name followed by "(" on a
# line that is a prototype, not a comment.
sed -e 's,/\*.*\*/,,g' "$header" "$types" | grep -v '^ *\*' |
  grep -o '\bspmv_[a-z0-9_]* *(' | sed 's/ *($//' | sort -u >"$tmp/declared"

status=0
bad=$(grep -v '^spmv_' "$tmp/exported")
if [ -n "$bad" ]; then
  echo "exported symbols without the spmv_ prefix:"; echo "$bad"; status=1
fi
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
  echo "exported but not declared in spmv.h (internal names leaking):"; echo "$extra"; status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
  echo "declared in spmv.h but not exported:"; echo "$missing"; status=1
fi
[ $status -eq 0 ] && echo "libspmvclient exports the $(wc -l <"$tmp/exported") functions of spmv.h, nothing else"
exit $status
