#!/usr/bin/env python3
"""How auto's race timed its candidates against the ground truth: for each
candidate auto raced (the evaluation table's auto_race field: its median
and its probe, the timed warm-up run), the ratio to the exhaustive race's
time of the same configuration (the ground-truth table, gt-...tsv[.gz]),
split by the matrix's best time (under 6 us, 6 us up).

    usage: race_bias.py EVAL.tsv GT.tsv[.gz] [EVAL.tsv GT.tsv[.gz] ...]
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
                                float(m.group(5))))
    return out


def quantiles(v):
    v = sorted(v)
    return f'{st.median(v):.3f} | {v[len(v) // 10]:.3f} | {v[9 * len(v) // 10]:.3f}'


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    print(f'| evaluation | best under {SMALL_US:g} us: candidates | race / truth: median | p10 | p90 '
          f'| probe / truth: median | p10 | p90 | best {SMALL_US:g} us up: candidates | race / truth: median |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for ev, gt in zip(args[::2], args[1::2]):
        g = ground_truth(gt)
        rows = [x for x in raced(ev) if (x[0], x[2]) in g]
        small = [x for x in rows if x[1] < SMALL_US]
        big = [x for x in rows if x[1] >= SMALL_US]
        if not small or not big:
            continue
        print(f'| {ev.split("/")[-1]} | {len(small)} '
              f'| {quantiles([x[3] / g[(x[0], x[2])] for x in small])} '
              f'| {quantiles([x[4] / g[(x[0], x[2])] for x in small])} '
              f'| {len(big)} | {st.median([x[3] / g[(x[0], x[2])] for x in big]):.3f} |')


if __name__ == '__main__':
    main()
