#!/bin/sh
# check_bench_split.sh: bench_split run small on two workers of the cpu
# backend: a symmetric stencil (products and CG) and a random matrix
# (products), both value types.  It checks every product against the
# double CSR reference and the split's CG against the unsplit's, and exits
# non-zero on a wrong one; here its rows must be there, two blocks each.
# No timed assertion: the cpu backend's times say nothing of a GPU's.
top_builddir=${SPMV_TOP_BUILDDIR:-.}
bench=$top_builddir/tests/bench/bench_split

[ -x "$bench" ] || { echo "no $bench: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_bench_split.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
"$bench" -b cpu -k 2 -g "stencil2d nx=120 ny=90" -g "random rows=6000 k=7" \
  -t both -i 15 -r 2 -o "$tmp/split.tsv" >"$tmp/out" 2>"$tmp/err" ||
  { echo "bench_split on the cpu backend failed"; cat "$tmp/out" "$tmp/err"; status=1; }
grep -q '^FAIL' "$tmp/out" && { echo "bench_split found a wrong result"; status=1; }
# Four rows: CG on the stencil in both types (15 iterations each), none on
# the random matrix, whose halo is most of x; each with its products on
# device vectors, the stencil with its CG on them.
awk -F'\t' 'NR > 1 { n++
                     if (!($16 > 0 && $17 > 0)) bad = 1
                     if ($1 ~ /^stencil/ && !($18 > 0 && $19 > 0)) bad = 1
                     if ($1 ~ /^stencil/ && ($10 != "cg" || $11 != 15)) bad = 1
                     if ($1 ~ /^random/ && ($10 != "-" || $5 <= 0)) bad = 1 }
            END { exit bad || n != 4 }' "$tmp/split.tsv" ||
  { echo "bench_split -o: not the four rows expected"; cat "$tmp/split.tsv"; status=1; }
[ $status -eq 0 ] && cat "$tmp/out"
exit $status
