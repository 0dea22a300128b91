#!/usr/bin/env python3
"""How auto's race timed its candidates against the ground truth: for each
candidate auto raced (the evaluation table's auto_race field: its median
and its probe, the timed warm-up run), the ratio to the exhaustive race's
time of the same configuration (the ground-truth table, gt-...tsv[.gz]),
split by the matrix's best time (under 6 us, 6 us up); then the race's
ratio by the matrix's CSR footprint as a share of the L2 (--l2-mib, 50 by
default: an H100's), and by format for the matrices that fit in 0.04-0.6
of it, where the race read its candidates slow in v86-v88
(results/race-mid-h100.md).

    usage: race_bias.py [--l2-mib M] EVAL.tsv GT.tsv[.gz] [EVAL.tsv GT.tsv[.gz] ...]
"""
import gzip
import re
import statistics as st
import sys

ITEM = re.compile(r'(.*)=([\d.]+) (\S+) (\d+) probe ([\d.]+)$')
SMALL_US = 6.0


def opener(path):
    return gzip.open(path, 'rt') if path.endswith('.gz') else open(path)


def ground_truth(path):
    """(matrix, configuration) -> the exhaustive race's time (us)."""
    d = {}
    with opener(path) as f:
        for line in f:
            r = line.rstrip('\n').split('\t')
            if line.startswith('#') or r[0] == 'matrix' or len(r) < 5 or r[3] != 'ok':
                continue
            d[(r[0], r[2])] = float(r[4])
    return d


def raced(path):
    """(matrix, best us, configuration, race median us, probe us) of every
    candidate auto raced."""
    out = []
    with opener(path) as f:
        for line in f:
            if line.startswith('#'):
                continue
            r = line.rstrip('\n').split('\t')
            field = r[-1]
            if not field.startswith('auto_race:'):
                continue
            for item in field[len('auto_race:'):].split(';'):
                m = ITEM.match(item.strip())
                if m:
                    out.append((r[0], float(r[7]), m.group(1), float(m.group(2)),
                                float(m.group(5)), footprint(r)))
    return out


def footprint(r):
    """The CSR's bytes of an evaluation row: values and columns, row
    offsets, x and y (square matrices: x as long as y)."""
    vb = 8 if r[2] == 'f64' else 4
    rows, nnz = int(r[3]), int(r[4])
    return nnz * (vb + 4) + (rows + 1) * 4 + 2 * rows * vb


SHARES = ((0, 0.04), (0.04, 0.6), (0.6, 1.2), (1.2, float('inf')))


def quantiles(v):
    v = sorted(v)
    return f'{st.median(v):.3f} | {v[len(v) // 10]:.3f} | {v[9 * len(v) // 10]:.3f}'


def main():
    args = sys.argv[1:]
    l2 = 50.0 * 2**20
    if args[:1] == ['--l2-mib'] and len(args) > 1:
        l2 = float(args[1]) * 2**20
        args = args[2:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    print(f'| evaluation | best under {SMALL_US:g} us: candidates | race / truth: median | p10 | p90 '
          f'| probe / truth: median | p10 | p90 | best {SMALL_US:g} us up: candidates | race / truth: median |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    pooled = []
    for ev, gt in zip(args[::2], args[1::2]):
        g = ground_truth(gt)
        rows = [x for x in raced(ev) if (x[0], x[2]) in g]
        pooled += [(x, x[3] / g[(x[0], x[2])]) for x in rows]
        small = [x for x in rows if x[1] < SMALL_US]
        big = [x for x in rows if x[1] >= SMALL_US]
        if not small or not big:
            continue
        print(f'| {ev.split("/")[-1]} | {len(small)} '
              f'| {quantiles([x[3] / g[(x[0], x[2])] for x in small])} '
              f'| {quantiles([x[4] / g[(x[0], x[2])] for x in small])} '
              f'| {len(big)} | {st.median([x[3] / g[(x[0], x[2])] for x in big]):.3f} |')
    print()
    print('| footprint / L2 | candidates | race / truth: median | p10 | p90 |')
    print('|---|---|---|---|---|')
    for lo, hi in SHARES:
        v = [q for x, q in pooled if lo <= x[5] / l2 < hi]
        if v:
            print(f'| {lo:g}-{hi:g} | {len(v)} | {quantiles(v)} |')
    print()
    lo, hi = SHARES[1]
    print(f'| format (footprint {lo:g}-{hi:g} of the L2) | candidates | race / truth: median | p10 | p90 |')
    print('|---|---|---|---|---|')
    by = {}
    for x, q in pooled:
        if lo <= x[5] / l2 < hi:
            by.setdefault(x[2].split()[0], []).append(q)
    for f in sorted(by):
        print(f'| {f} | {len(by[f])} | {quantiles(by[f])} |')


if __name__ == '__main__':
    main()
