#!/usr/bin/env python3
"""How much of the full evaluation's predictor error is the device's drift
between the daemon's calibration and the evaluation process: for each run
and type, the eval's measured time over the daemon's (predict --measure,
right after its calibration) for the same matrix and format, and each
format's mean error before and after dividing the eval's measured times by
that run's median ratio.  A second table splits the ratio by the daemon's
time of the product (under 10 us, 10-30 us, 30 us and more): where a run's
offset lives.

    usage: predict_drift.py RESULTS_DIR RUN...   (e.g. results v57 v60)
"""
import os
import statistics as st
import sys
from collections import defaultdict


def daemon(path):
    d = {}
    for line in open(path):
        if line.startswith('#'):
            continue
        m, f, _c, p, me, _e = line.rstrip('\n').split('\t')
        d[(m, f)] = (float(p), float(me))
    return d


def full(path, formats):
    """The evaluation's predicted and measured times of the named formats
    (its format:predicted/measured/... fields; the table's other fields,
    hit:, single:, auto_race: and the like, are not formats)."""
    d = {}
    for line in open(path):
        if line.startswith('#'):
            continue
        r = line.rstrip('\n').split('\t')
        m = r[0].replace('.mtx.gz', '').replace('.mtx', '')
        for field in r[11:]:
            fmt, sep, rest = field.partition(':')
            parts = rest.split('/')
            if not sep or fmt not in formats or len(parts) < 2:
                continue
            try:
                d[(m, fmt)] = (float(parts[0]), float(parts[1]))
            except ValueError:
                pass
    return d


# The daemon's times (us) that split the second table.
BANDS = ((0, 10), (10, 30), (30, float('inf')))


def runs(top, names):
    """(run, type, daemon table, evaluation table) of each run and type
    that has both."""
    for run in names:
        for dt in ('f64', 'f32'):
            path = os.path.join(top, f'predict-measure-h100-{run}-{dt}.tsv')
            if not os.path.exists(path):
                continue  # a run of one type only
            a = daemon(path)
            b = full(os.path.join(top, f'eval-h100-{run}-{dt}.tsv'),
                     {f for (_m, f) in a})
            yield run, dt, a, b


def by_size(top, names):
    print()
    print('| run | type | ' + ' | '.join(
        f'{lo:g}-{hi:g} us: n, median' if hi != float('inf') else f'{lo:g} us up: n, median'
        for lo, hi in BANDS) + ' |')
    print('|---|---|' + '---|' * len(BANDS))
    for run, dt, a, b in runs(top, names):
        cells = []
        for lo, hi in BANDS:
            q = [b[k][1] / a[k][1] for k in a if k in b and lo <= a[k][1] < hi]
            cells.append(f'{len(q)}, {st.median(q):.3f}' if q else '0, -')
        print(f'| {run} | {dt} | ' + ' | '.join(cells) + ' |')


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    top = sys.argv[1]
    print('| run | type | eval / daemon measured: median | p10 | p90 | formats over 5 % '
          '| over 5 % after scaling | worst format before -> after |')
    print('|---|---|---|---|---|---|---|---|')
    for run, dt, a, b in runs(top, sys.argv[2:]):
        q = sorted(b[k][1] / a[k][1] for k in a if k in b)
        s = st.median(q)
        e, e2 = defaultdict(list), defaultdict(list)
        for (_m, f), (p, me) in b.items():
            e[f].append(abs(p - me) / me)
            e2[f].append(abs(p - me / s) / (me / s))
        mean = {f: st.mean(v) for f, v in e.items()}
        mean2 = {f: st.mean(v) for f, v in e2.items()}
        w = max(mean, key=mean.get)
        print(f'| {run} | {dt} | {s:.3f} | {q[len(q) // 10]:.3f} | {q[9 * len(q) // 10]:.3f} '
              f'| {sum(v > .05 for v in mean.values())} of {len(mean)} '
              f'| {sum(v > .05 for v in mean2.values())} '
              f'| {w} {100 * mean[w]:.1f} -> {100 * mean2[w]:.1f} |')
    by_size(top, sys.argv[2:])


if __name__ == '__main__':
    main()
