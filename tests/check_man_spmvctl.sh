#!/bin/sh
# check_man_spmvctl.sh: every command and option that `spmvctl --help`
# lists appears in spmvctl(1), and every function of spmv.h in
# libspmvclient(3).
top_srcdir=${SPMV_TOP_SRCDIR:-${srcdir:-.}/..}
top_builddir=${SPMV_TOP_BUILDDIR:-.}
spmvctl=$top_builddir/client/spmvctl
man1=$top_builddir/man/spmvctl.1
man3=$top_builddir/man/libspmvclient.3
header=$top_srcdir/client/spmv.h
types=$top_srcdir/kernels/spmv_types.h

[ -x "$spmvctl" ] || { echo "no $spmvctl: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

"$spmvctl" --help >"$tmp/help" || { echo "spmvctl --help failed"; exit 1; }
# The man source with roff escapes and fonts removed: \- -> -, \fB -> "".
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man1" >"$tmp/man1"
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man3" >"$tmp/man3"

status=0
# Options: every --long and -s in the help's option lines.
grep -oE -- '--[a-z][a-z-]*' "$tmp/help" | sort -u >"$tmp/long"
grep -oE -- '^ +-[a-zA-Z],' "$tmp/help" | tr -d ' ,' | sort -u >"$tmp/short"
[ -s "$tmp/long" ] || { echo "no options found in spmvctl --help"; exit 1; }
while read -r opt; do
  grep -qe "$opt\\b" "$tmp/man1" || { echo "spmvctl.1 lacks option $opt"; status=1; }
done <"$tmp/long"
while read -r opt; do
  grep -qE -- "^\\.BR $opt \"?, \"?" "$tmp/man1" ||
    { echo "spmvctl.1 lacks the short option $opt"; status=1; }
done <"$tmp/short"
# Commands: the first word of each line of the help's Commands section,
# each a .B/.BI/.BR item in the man page's COMMANDS section.
sed -n '/^Commands:/,/^$/p' "$tmp/help" | sed '1d;/^$/d' | awk '{ print $1 }' >"$tmp/cmds"
[ -s "$tmp/cmds" ] || { echo "no commands found in spmvctl --help"; exit 1; }
sed -n '/^\.SH COMMANDS/,/^\.SH OPTIONS/p' "$tmp/man1" >"$tmp/cmdsec"
while read -r cmd; do
  grep -qE "^\\.B[IR]? \"?$cmd( |\"|$)" "$tmp/cmdsec" ||
    { echo "spmvctl.1 does not document the command $cmd"; status=1; }
done <"$tmp/cmds"
# Exit statuses listed in the help appear in EXIT STATUS.
for code in 0 1 2 3 4 5 6; do
  sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$tmp/man1" | grep -q "^\\.B $code\$" ||
    { echo "spmvctl.1 does not document exit status $code"; status=1; }
done
# libspmvclient(3): every function the public header declares.
sed -e 's,/\*.*\*/,,g' "$header" "$types" | grep -v '^ *\*' |
  grep -oE '\bspmv_[a-z0-9_]+ *\(' | sed 's/ *($//' | sort -u >"$tmp/funcs"
while read -r f; do
  grep -q "$f *(" "$tmp/man3" || { echo "libspmvclient.3 lacks $f"; status=1; }
done <"$tmp/funcs"
[ $status -eq 0 ] && echo "spmvctl.1 documents $(wc -l <"$tmp/long") options and $(wc -l <"$tmp/cmds") commands; libspmvclient.3 documents $(wc -l <"$tmp/funcs") functions"
exit $status
